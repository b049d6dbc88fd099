/* SPDX-License-Identifier: ISC */
/*
 * A rollback gives back to the namespace's own sockets what the
 * replaying lock kept during the freeze, in slices of the event loop,
 * as the destination injects going live: tens of thousands of packets
 * injected in one turn hold the loop for seconds in a slow guest, past
 * the peers' dead-time.  A give-back outlives the migration it came
 * from, which ends with the rollback, and frees itself.
 */
#ifndef MIGR_GIVEBACK_H
#define MIGR_GIVEBACK_H

#include <stddef.h>

#include <event2/event.h>

#include "replay.h"

/* what one slice may take, as a slice of going live */
#define GIVEBACK_SLICE_MS	20

/*
 * Take l's packets (its counters stay; l is left empty) and inject them
 * into ns through its host-side veth hostif: the first slice at once,
 * so a short queue is back before the caller reports its rollback, the
 * rest slice_ms of the loop at a time from base.  Log lines name
 * "migration WHO".  Without a timer everything goes at once.
 */
void	giveback_start(struct event_base *base, const char *who,
	    const char *ns, const char *hostif, struct replay_list *l,
	    double slice_ms);
/* packets still to give back, over all give-backs */
size_t	giveback_pending(void);
/* every give-back finished at once (migrd stops: nothing is dropped) */
void	giveback_finish_all(void);

#endif
