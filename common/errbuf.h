/* SPDX-License-Identifier: ISC */
/*
 * The libraries' error convention: a function that fails returns -1 and
 * says why in a buffer its caller passed (char *err, size_t errlen); it
 * never logs a failure and never exits.  The caller (the daemon, a tool)
 * decides what to log and what to tell the operator.
 *
 * errbuf() formats into err; errbuf_errno() does the same and appends
 * ": strerror(errno)".  Both accept err == NULL (the caller does not
 * care why) and leave errno as they found it.
 */
#ifndef MIGR_ERRBUF_H
#define MIGR_ERRBUF_H

#include <stddef.h>

void	errbuf(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	errbuf_errno(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
