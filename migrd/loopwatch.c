/* SPDX-License-Identifier: ISC */
/*
 * migrd's event loops: how they are made (loop_new), and how long the
 * daemon's was kept from running.  A timer asks to run
 * every LOOPWATCH_MS; when it runs later than that by more than
 * LOOPWATCH_LOG_MS, something held the loop (a wait, a slow system
 * call, a host that did not schedule migrd), and the peer channel's
 * heartbeats were held with it.  Each such stall is logged, and the
 * longest is in "migctl status".
 */
#include <stdint.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "loopwatch.h"

#define LOOPWATCH_MS		250
#define LOOPWATCH_LOG_MS	1000

static struct event	*tick;
static uint64_t		 last_ms, max_ms, stalls;

static void
loopwatch_tick(evutil_socket_t fd, short what, void *arg)
{
	uint64_t now = (uint64_t)mono_ms(), late;

	(void)fd;
	(void)what;
	(void)arg;
	late = now - last_ms > LOOPWATCH_MS ? now - last_ms - LOOPWATCH_MS : 0;
	last_ms = now;
	if (late > max_ms)
		max_ms = late;
	if (late > LOOPWATCH_LOG_MS) {
		stalls++;
		log_warnx("event loop held for %llu ms (peers hear no "
		    "heartbeat meanwhile)", (unsigned long long)late);
	}
}

/* Never select(), which stops at FD_SETSIZE, and a namespace's sockets
 * go above it. */
struct event_base *
loop_new(void)
{
	struct event_config *cfg = event_config_new();
	struct event_base *base;

	if (cfg == NULL)
		return NULL;
	event_config_avoid_method(cfg, "select");
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

int
loopwatch_start(struct event_base *base)
{
	struct timeval tv = { 0, LOOPWATCH_MS * 1000 };

	last_ms = (uint64_t)mono_ms();
	if ((tick = event_new(base, -1, EV_PERSIST, loopwatch_tick, NULL)) ==
	    NULL || event_add(tick, &tv) == -1) {
		log_warnx("%s: cannot add timer", __func__);
		return -1;
	}
	return 0;
}

void
loopwatch_stop(void)
{
	if (tick != NULL)
		event_free(tick);
	tick = NULL;
}

json_t *
loopwatch_json(void)
{
	return json_pack("{s:I,s:I,s:i}", "longest_hold_ms", (json_int_t)max_ms,
	    "holds_over_1s", (json_int_t)stalls, "interval_ms", LOOPWATCH_MS);
}
