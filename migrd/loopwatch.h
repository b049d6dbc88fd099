/* SPDX-License-Identifier: ISC */
/* How long the event loop was held (loopwatch.c). */
#ifndef MIGRD_LOOPWATCH_H
#define MIGRD_LOOPWATCH_H

#include <jansson.h>

struct event_base;

int	 loopwatch_start(struct event_base *base);
void	 loopwatch_stop(void);
/* {"longest_hold_ms", "holds_over_1s", "interval_ms"} */
json_t	*loopwatch_json(void);

#endif
