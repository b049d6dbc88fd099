/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"

void
errbuf(char *err, size_t errlen, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

void
errbuf_errno(char *err, size_t errlen, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t n;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		n = strlen(err);
		snprintf(err + n, errlen - n, ": %s", strerror(saved));
	}
	errno = saved;
}
