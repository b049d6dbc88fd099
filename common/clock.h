/* SPDX-License-Identifier: ISC */
/* Monotonic time in milliseconds, for timing phases and deadlines; and
 * milliseconds as the timeval an event timer takes. */
#ifndef MIGR_CLOCK_H
#define MIGR_CLOCK_H

#include <sys/time.h>
#include <time.h>

static inline double
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline struct timeval
ms_timeval(long ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return tv;
}

#endif
