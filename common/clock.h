/* SPDX-License-Identifier: ISC */
/* Monotonic time in milliseconds, for timing phases and deadlines. */
#ifndef MIGR_CLOCK_H
#define MIGR_CLOCK_H

#include <time.h>

static inline double
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
