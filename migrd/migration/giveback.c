/* SPDX-License-Identifier: ISC */
/* The packets a rolled-back lock kept, given back in slices (giveback.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/queue.h>

#include "clock.h"
#include "giveback.h"
#include "log.h"

struct giveback {
	LIST_ENTRY(giveback)	 entry;
	struct replay_list	 l;
	struct replay_out	 out;	/* one packet socket for them all */
	struct event		*ev;
	double			 slice_ms;
	double			 longest_ms;	/* the longest slice */
	unsigned		 slices;
	size_t			 given;
	char			 who[128];
	char			 ns[64];
	char			 err[256];
};
static LIST_HEAD(, giveback) givebacks = LIST_HEAD_INITIALIZER(givebacks);

static void
giveback_end(struct giveback *g)
{
	if (g->l.inject_failed > 0 || g->l.npkts > 0)
		log_warnx("migration %s: packets kept during the freeze: %zu "
		    "could not be given back (%s); their senders retransmit",
		    g->who, g->l.inject_failed + g->l.npkts, g->err);
	if (g->given > 0)
		log_info("migration %s: %zu packets kept during the freeze "
		    "given back to %s in %u slices (the longest %.1f ms)",
		    g->who, g->given, g->ns, g->slices, g->longest_ms);
	LIST_REMOVE(g, entry);
	replay_out_close(&g->out);
	replay_list_free(&g->l);
	if (g->ev != NULL)
		event_free(g->ev);
	free(g);
}

/* One slice (all that is left when budget_ms < 0), then the next slice
 * from the loop, or the end. */
static void
giveback_slice(struct giveback *g, double budget_ms)
{
	struct timeval now = { 0, 0 };
	double t0 = mono_ms();

	do
		g->given += replay_out_send(&g->out, &g->l, budget_ms < 0 ?
		    (size_t)-1 : REPLAY_INJECT_BATCH, g->err, sizeof(g->err));
	while (g->l.head != NULL && (budget_ms < 0 ||
	    mono_ms() - t0 < budget_ms));
	g->slices++;
	if (mono_ms() - t0 > g->longest_ms)
		g->longest_ms = mono_ms() - t0;
	if (g->l.head == NULL || g->ev == NULL ||
	    evtimer_add(g->ev, &now) < 0)
		giveback_end(g);
}

static void
giveback_cb(evutil_socket_t fd, short what, void *arg)
{
	struct giveback *g = arg;

	(void)fd;
	(void)what;
	giveback_slice(g, g->slice_ms);
}

void
giveback_start(struct event_base *base, const char *who, const char *ns,
    const char *hostif, struct replay_list *l, double slice_ms)
{
	struct giveback *g;

	if (l->head == NULL)
		return;
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		log_warnx("migration %s: out of memory: the %zu packets kept "
		    "during the freeze are dropped; their senders "
		    "retransmit", who, l->npkts);
		replay_list_free(l);
		return;
	}
	/* the packets move, the counters stay */
	replay_list_init(&g->l, l->max_pkts, l->max_bytes);
	replay_list_move(&g->l, l);
	g->slice_ms = slice_ms;
	snprintf(g->who, sizeof(g->who), "%s", who);
	snprintf(g->ns, sizeof(g->ns), "%s", ns);
	LIST_INSERT_HEAD(&givebacks, g, entry);
	/* nowhere to send them (the namespace is gone): dropped, counted */
	if (replay_out_open(&g->out, ns, hostif, g->err, sizeof(g->err)) < 0) {
		replay_list_drop(&g->l);
		giveback_end(g);
		return;
	}
	g->ev = evtimer_new(base, giveback_cb, g);
	giveback_slice(g, g->ev != NULL ? slice_ms : -1);
}

size_t
giveback_pending(void)
{
	struct giveback *g;
	size_t n = 0;

	LIST_FOREACH(g, &givebacks, entry)
		n += g->l.npkts;
	return n;
}

void
giveback_finish_all(void)
{
	while (!LIST_EMPTY(&givebacks))
		giveback_slice(LIST_FIRST(&givebacks), -1);
}
