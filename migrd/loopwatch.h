/* SPDX-License-Identifier: ISC */
/* migrd's event loops: made without select(), and how long the
 * daemon's was held (loopwatch.c). */
#ifndef MIGRD_LOOPWATCH_H
#define MIGRD_LOOPWATCH_H

#include <jansson.h>

struct event_base;

/* migrd's and its TLS process's: an event base that never select()s */
struct event_base *loop_new(void);
int	 loopwatch_start(struct event_base *base);
void	 loopwatch_stop(void);
/* {"longest_hold_ms", "holds_over_1s", "interval_ms"} */
json_t	*loopwatch_json(void);

#endif
