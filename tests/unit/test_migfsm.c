/* SPDX-License-Identifier: ISC */
/*
 * The migration protocol, model-checked.  Both state machines of
 * migrd/migration/migfsm.c are wired to a model channel (two FIFOs that
 * lose everything when the channel drops) and to what mig.c keeps
 * beside them: the destination's committed list (an id from the commit
 * point until the source's FORGET), the source's FORGET once its move is
 * written down, the destination's replay of COMMITTED on every
 * channel-up, the entries each side frees once a migration ended, and
 * the operator's resolve (only while the peer is unreachable, as
 * migctl's guard has it).  Every reachable combination of states,
 * queued messages and channel status is explored breadth-first under
 * every event: message delivery, late duplicates, channel loss and
 * recovery, timeouts, local failures, daemon restarts (a restart finds
 * the state file, not memory), operator cancels and resolves, and steps
 * taken while the state file cannot be written (a full disk).
 *
 * For each reachable state: at most one host has the namespace live;
 * the committed list never names a namespace that is not live; the
 * source never acts on a decision its file does not hold.  Healing
 * (channel up, messages delivered, timers fired) ends with exactly one
 * host live and, once the source's file is clean, the destination's
 * committed list empty.  Each property is shown to catch a mutated
 * protocol (a destination that forgets early, an unguarded resolve).
 * Scripted scenarios check the action sequences of the common paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migfsm.h"

#define QMAX 3

/* FORGET is handled beside the machines (mig.c), not by them. */
#define EV_FORGET	((uint8_t)MIG_NEVENTS)

/*
 * A message is the event its receiver sees; 0 (ME_CMD_MIGRATE) is never
 * sent, so it marks an empty slot.  MS_RUNNING and MS_DONE on the source,
 * MD_IDLE on the destination, are "no entry": mig.c frees a migration
 * once it ended and answers what still comes for it from the committed
 * list (destination) or with FORGET (source).
 */
struct world {
	uint8_t	s, d;		/* states */
	uint8_t	fs;		/* the source's state file, as last written */
	uint8_t	sclean;		/* the source's last write succeeded */
	uint8_t	dc;		/* the destination's committed list has it */
	uint8_t	dlive;		/* live on the destination, entry freed */
	uint8_t	up;		/* channel up */
	uint8_t	started;	/* the operator said migrate */
	uint8_t	sd[QMAX], nsd;	/* source -> destination */
	uint8_t	ds[QMAX], nds;	/* destination -> source */
};

/* Protocol mutations, to show that the checker catches each. */
enum bug {
	BUG_NONE,
	BUG_FORGET_ON_ANSWER,	/* the destination drops the id once it
				 * answered COMMITTED (the old ring) */
	BUG_RESOLVE_UNGUARDED,	/* resolve rollback with the peer up */
	BUG_NO_REPLAY,		/* no COMMITTED replay on channel-up */
	BUG_EARLY_COMMITTED,	/* COMMITTED (an answer, a replay) while
				 * the sockets are still leaving repair */
};
static enum bug bug;

static int
push(uint8_t *q, uint8_t *n, uint8_t ev)
{
	if (*n == QMAX)
		return -1;
	q[(*n)++] = ev;
	return 0;
}

static uint8_t
pop(uint8_t *q, uint8_t *n)
{
	uint8_t ev = q[0];

	memmove(q, q + 1, --(*n));
	q[*n] = 0;
	return ev;
}

static int
send_sd(struct world *w, uint8_t ev)
{
	return w->up ? push(w->sd, &w->nsd, ev) : 0;
}

static int
send_ds(struct world *w, uint8_t ev)
{
	return w->up ? push(w->ds, &w->nds, ev) : 0;
}

/* Carry out a step's sends; -1 if a queue would overflow the model. */
static int
apply_sends(struct world *w, enum mig_role role, unsigned a)
{
	static const struct { unsigned act; enum mig_event ev; } sends[] = {
		{ MA_SEND_PREPARE, ME_RX_PREPARE },
		{ MA_FREEZE_DUMP, ME_RX_DUMP_DONE },
		{ MA_SEND_COMMIT, ME_RX_COMMIT },
		{ MA_SEND_ABORT, ME_RX_ABORT },
		{ MA_SEND_PREPARED, ME_RX_PREPARED },
		{ MA_SEND_REFUSED, ME_RX_REFUSED },
		{ MA_SEND_READY, ME_RX_READY },
		{ MA_SEND_FAILED, ME_RX_FAILED },
		{ MA_SEND_COMMITTED, ME_RX_COMMITTED },
		{ MA_SEND_ABORTED, ME_RX_ABORTED },
	};
	size_t i;

	for (i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
		if (!(a & sends[i].act))
			continue;
		if (role == MIG_SOURCE ? send_sd(w, (uint8_t)sends[i].ev) :
		    send_ds(w, (uint8_t)sends[i].ev))
			return -1;
	}
	return 0;
}

/*
 * One step of a role's machine.  saved: the state file can be written
 * (else a step into a vital state is not taken, migfsm_unsaved()
 * instead, and the file keeps what it had, as mig.c does).
 */
static int
step(struct world *w, enum mig_role role, enum mig_event ev, int saved)
{
	uint8_t *cur = role == MIG_SOURCE ? &w->s : &w->d, old = *cur;
	struct mig_step st = migfsm_step(role, *cur, ev);

	if (!saved && (st.actions & MA_PERSIST) &&
	    migfsm_vital(role, st.next))
		st = migfsm_unsaved(role, *cur);
	*cur = (uint8_t)st.next;
	/* going live undone (save_step()): the id leaves the list */
	if (role == MIG_DEST && old == MD_LIVE && st.next == MD_IDLE)
		w->dc = 0;
	if (role == MIG_SOURCE && (st.actions & MA_PERSIST)) {
		if (saved)
			w->fs = (uint8_t)st.next;
		w->sclean = (uint8_t)saved;
	}
	/*
	 * The id goes into the committed list in the commit point's write.
	 * Going live then takes slices of the loop until its end (event
	 * 19): messages and channel news reach the destination meanwhile,
	 * and COMMITTED, for the first COMMIT or a repeated one, leaves
	 * only at that end (mig_dst.c, committed_due).
	 */
	if (role == MIG_DEST && (st.actions & MA_PERSIST) &&
	    st.next == MD_LIVE)
		w->dc = 1;
	if (role == MIG_DEST && st.next == MD_LIVE &&
	    bug != BUG_EARLY_COMMITTED)
		st.actions &= ~(unsigned)MA_SEND_COMMITTED;
	if (apply_sends(w, role, st.actions) < 0)
		return -1;
	/* moved and written down: the source tells the destination */
	if (role == MIG_SOURCE && st.next == MS_DONE &&
	    (st.actions & MA_PERSIST) && w->sclean)
		return send_sd(w, EV_FORGET);
	return 0;
}

static int
feed(struct world *w, enum mig_role role, enum mig_event ev)
{
	return step(w, role, ev, 1);
}

/* A message reaches the destination (mig_rx()). */
static int
dest_rx(struct world *w, uint8_t ev, int saved)
{
	if (ev == EV_FORGET) {
		w->dc = 0;
		return 0;
	}
	if (w->d == MD_IDLE) {		/* no entry */
		if (ev == ME_RX_COMMIT) {
			uint8_t ans = w->dc ? ME_RX_COMMITTED : ME_RX_ABORTED;

			if (bug == BUG_FORGET_ON_ANSWER)
				w->dc = 0;
			return send_ds(w, ans);
		}
		/* its id is committed here, or its name taken */
		if (ev == ME_RX_PREPARE && (w->dc || w->dlive))
			return send_ds(w, ME_RX_REFUSED);
		if (ev != ME_RX_PREPARE)
			return 0;
	}
	return step(w, MIG_DEST, (enum mig_event)ev, saved);
}

/* A message reaches the source. */
static int
source_rx(struct world *w, uint8_t ev, int saved)
{
	if (w->s == MS_RUNNING || w->s == MS_DONE) {	/* no entry */
		if (ev == ME_RX_COMMITTED && w->sclean)
			return send_sd(w, EV_FORGET);
		return 0;
	}
	return step(w, MIG_SOURCE, (enum mig_event)ev, saved);
}

/* What is live on the destination: going live (the commit point is
 * written, the workload may run), or live with its entry freed. */
static int
dest_live(const struct world *w)
{
	return w->d == MD_LIVE || w->dlive;
}

/* The source's daemon restarts: what it finds is its file (mig.c,
 * recover()); with no migration there, the namespace is where it is
 * (deleted after DONE, here otherwise). */
static int
restart_source(struct world *w)
{
	if (w->fs == MS_FROZEN || w->fs == MS_COMMITTING ||
	    w->fs == MS_IN_DOUBT) {
		w->s = w->fs;
		return feed(w, MIG_SOURCE, ME_RESTART);
	}
	if (w->fs == MS_DONE)
		w->s = MS_DONE;		/* it finishes killing what is left */
	else if (w->s != MS_DONE)
		w->s = MS_RUNNING;
	return 0;
}

/* The destination's daemon restarts (recover()): a "live" entry means it
 * died between the commit point and the namespace being live, so the
 * sockets died with it: the id leaves the list and the source keeps the
 * namespace; a half-built one is discarded; the list is as written. */
static int
restart_dest(struct world *w)
{
	if (w->d == MD_LIVE) {
		w->d = MD_IDLE;
		w->dc = 0;
		return 0;
	}
	return feed(w, MIG_DEST, ME_RESTART);
}

static void
lose_channel(struct world *w)
{
	w->up = 0;
	w->nsd = w->nds = 0;
	memset(w->sd, 0, sizeof(w->sd));
	memset(w->ds, 0, sizeof(w->ds));
}

/* The channel comes up: the destination replays COMMITTED for what is in
 * its list and live (not still going live), then each side's entry
 * hears of it (mig_channel()). */
static int
channel_up(struct world *w)
{
	w->up = 1;
	if (w->dc && bug != BUG_NO_REPLAY &&
	    (w->d != MD_LIVE || bug == BUG_EARLY_COMMITTED) &&
	    send_ds(w, ME_RX_COMMITTED) < 0)
		return -1;
	if (feed(w, MIG_SOURCE, ME_CHANNEL_UP) < 0)
		return -1;
	return feed(w, MIG_DEST, ME_CHANNEL_UP);
}

enum { N_EVENTS = 23 };

/* Event k applied to w; 0 if applied, -1 if not enabled here. */
static int
event(struct world *w, int k)
{
	switch (k) {
	case 0:		/* the operator starts the (one) migration */
		if (w->started || !w->up)
			return -1;
		w->started = 1;
		return feed(w, MIG_SOURCE, ME_CMD_MIGRATE);
	case 1:
		if (w->nsd == 0)
			return -1;
		return dest_rx(w, pop(w->sd, &w->nsd), 1);
	case 2:
		if (w->nds == 0)
			return -1;
		return source_rx(w, pop(w->ds, &w->nds), 1);
	case 3:
		if (!w->up)
			return -1;
		lose_channel(w);
		if (feed(w, MIG_SOURCE, ME_CHANNEL_LOST) < 0)
			return -1;
		return feed(w, MIG_DEST, ME_CHANNEL_LOST);
	case 4:
		if (w->up)
			return -1;
		return channel_up(w);
	case 5:
		return feed(w, MIG_SOURCE, ME_TIMEOUT);
	case 6:
		return feed(w, MIG_DEST, ME_TIMEOUT);
	case 7:
		return feed(w, MIG_SOURCE, ME_LOCAL_FAIL);
	case 8:
		return feed(w, MIG_DEST, ME_LOCAL_FAIL);
	case 9:		/* a daemon restart drops its connection too */
		lose_channel(w);
		if (restart_source(w) < 0)
			return -1;
		return feed(w, MIG_DEST, ME_CHANNEL_LOST);
	case 10:
		lose_channel(w);
		if (restart_dest(w) < 0)
			return -1;
		return feed(w, MIG_SOURCE, ME_CHANNEL_LOST);
	case 11:
		return feed(w, MIG_SOURCE, ME_CMD_CANCEL);
	case 12:
		return feed(w, MIG_DEST, ME_CMD_CANCEL);
	case 13:	/* a late or repeated message, as from a slow network */
		if (!w->up || w->nsd == 0 || w->nsd == QMAX)
			return -1;
		return push(w->sd, &w->nsd, w->sd[w->nsd - 1]);
	case 14:
		if (!w->up || w->nds == 0 || w->nds == QMAX)
			return -1;
		return push(w->ds, &w->nds, w->ds[w->nds - 1]);
	/* the same, while the taker's state file cannot be written */
	case 15:
		if (w->nsd == 0)
			return -1;
		return dest_rx(w, pop(w->sd, &w->nsd), 0);
	case 16:
		if (w->nds == 0)
			return -1;
		return source_rx(w, pop(w->ds, &w->nds), 0);
	case 17:
		return step(w, MIG_SOURCE, ME_TIMEOUT, 0);
	case 18:
		return step(w, MIG_SOURCE, ME_LOCAL_FAIL, 0);
	case 19:	/* the destination is live: COMMITTED, entry freed */
		if (w->d != MD_LIVE)
			return -1;
		w->d = MD_IDLE;
		w->dlive = 1;
		return send_ds(w, ME_RX_COMMITTED);
	/*
	 * The operator resolves a source in doubt.  migctl refuses while
	 * the peer is reachable (it will answer the COMMIT); with the peer
	 * away the operator is taken to know where the namespace is live:
	 * rollback when it is not and will not be, done when it is.
	 */
	case 20:
		if (w->s != MS_IN_DOUBT ||
		    (bug == BUG_RESOLVE_UNGUARDED ? 0 :
		    w->up || dest_live(w) || w->d == MD_READY))
			return -1;
		return feed(w, MIG_SOURCE, ME_CMD_RESOLVE_BACK);
	case 21:
		if (w->s != MS_IN_DOUBT || w->up || !w->dlive)
			return -1;
		return feed(w, MIG_SOURCE, ME_CMD_RESOLVE_DONE);
	case 22:	/* the commit timer, the destination up, not overdue */
		if (!w->up)
			return -1;
		return feed(w, MIG_SOURCE, ME_COMMIT_WAIT);
	}
	return -1;
}

/* Each direction carries few kinds of message: number them densely so
 * that a world packs into a small key. */
static uint64_t
msg_code(uint8_t ev, const uint8_t *kinds, uint64_t nkinds)
{
	uint64_t i;

	for (i = 0; i < nkinds; i++)
		if (kinds[i] == ev)
			return i + 1;
	return 0;
}

static const uint8_t sd_kinds[] = {
	ME_RX_PREPARE, ME_RX_DUMP_DONE, ME_RX_COMMIT, ME_RX_ABORT, EV_FORGET,
};
static const uint8_t ds_kinds[] = {
	ME_RX_PREPARED, ME_RX_REFUSED, ME_RX_READY, ME_RX_FAILED,
	ME_RX_COMMITTED, ME_RX_ABORTED,
};
#define N_SD	(sizeof(sd_kinds) + 1)
#define N_DS	(sizeof(ds_kinds) + 1)

static uint64_t
key(const struct world *w)
{
	uint64_t k = w->s;
	int i;

	k = k * MIG_NSTATES + w->d;
	k = k * MIG_NSTATES + w->fs;
	k = k * 2 + w->sclean;
	k = k * 2 + w->dc;
	k = k * 2 + w->dlive;
	k = k * 2 + w->up;
	k = k * 2 + w->started;
	for (i = 0; i < QMAX; i++)
		k = k * N_SD + msg_code(w->sd[i], sd_kinds, N_SD - 1);
	for (i = 0; i < QMAX; i++)
		k = k * N_DS + msg_code(w->ds[i], ds_kinds, N_DS - 1);
	return k + 1;		/* 0 marks a free slot of the set */
}

/* The set of worlds seen: open addressing on the key. */
struct seen {
	uint64_t	*slot;
	size_t		 cap;
};

/* 1 if k was new (and is now in), 0 if seen, -1 if the set is full. */
static int
seen_add(struct seen *set, uint64_t k)
{
	size_t i = (size_t)(k * 0x9e3779b97f4a7c15ull) & (set->cap - 1), n;

	for (n = 0; n < set->cap; n++, i = (i + 1) & (set->cap - 1)) {
		if (set->slot[i] == k)
			return 0;
		if (set->slot[i] == 0) {
			set->slot[i] = k;
			return 1;
		}
	}
	return -1;
}

static int
quiescent(const struct world *w)
{
	return w->nsd == 0 && w->nds == 0 &&
	    (w->s == MS_RUNNING || w->s == MS_DONE) && w->d == MD_IDLE;
}

/* Heal: channel up, deliver everything, fire the timers a waiting side
 * would fire.  Returns the number of rounds, or -1 if it never settles. */
static int
heal(struct world *w)
{
	int round;

	for (round = 0; round < 64; round++) {
		if (w->d == MD_LIVE) {
			event(w, 19);
		} else if (!w->up) {
			event(w, 4);
		} else if (w->nsd) {
			event(w, 1);
		} else if (w->nds) {
			event(w, 2);
		} else if (quiescent(w)) {
			return round;
		} else if (w->s != MS_RUNNING && w->s != MS_DONE) {
			event(w, 5);	/* the source's timer */
		} else {
			event(w, 6);	/* the destination's */
		}
	}
	return -1;
}

static void
describe(const struct world *w, char *buf, size_t len)
{
	snprintf(buf, len, "source %s (file %s%s), destination %s%s%s, "
	    "channel %s, %d/%d queued", migfsm_state_name(w->s),
	    migfsm_state_name(w->fs), w->sclean ? "" : ", last write failed",
	    migfsm_state_name(w->d), w->dlive ? " (live, finished)" : "",
	    w->dc ? " (committed list has it)" : "", w->up ? "up" : "down",
	    w->nsd, w->nds);
}

struct explored {
	size_t	states;
	int	live_dest, rolled_back, in_doubt, stale_file, forgotten,
		resolved_back, resolved_done, replayed;
};

/*
 * Explore every world reachable from the start; NULL if every property
 * holds, else what broke and where (a static buffer).
 */
static const char *
explore(struct explored *ex)
{
	static char why[768];
	struct seen set = { NULL, 1 << 20 };
	size_t cap = 1 << 20, head = 0, tail = 0;
	struct world *queue = malloc(cap * sizeof(*queue));
	uint32_t *parent = malloc(cap * sizeof(*parent));
	uint8_t *via = malloc(cap);
	struct world w0 = { .s = MS_RUNNING, .d = MD_IDLE, .fs = MS_RUNNING,
	    .sclean = 1, .up = 1 };
	char desc[256];
	const char *res = NULL;

	memset(ex, 0, sizeof(*ex));
	set.slot = calloc(set.cap, sizeof(*set.slot));
	if (queue == NULL || set.slot == NULL || parent == NULL ||
	    via == NULL) {
		res = "out of memory";
		goto out;
	}
	parent[tail] = 0;
	via[tail] = 0xff;
	queue[tail++] = w0;
	(void)seen_add(&set, key(&w0));
	while (head < tail && res == NULL) {
		struct world cur = queue[head++];
		struct world healed = cur;
		int k, live;

		ex->states++;
		describe(&cur, desc, sizeof(desc));
		if (migfsm_live(cur.s) && dest_live(&cur)) {
			snprintf(why, sizeof(why), "both hosts live: %s", desc);
			res = why;
			break;
		}
		if (cur.dc && !dest_live(&cur)) {
			snprintf(why, sizeof(why), "committed list names a "
			    "namespace not live: %s", desc);
			res = why;
			break;
		}
		/* never acting on an unwritten decision */
		if ((cur.s == MS_FROZEN || cur.s == MS_COMMITTING) &&
		    cur.fs != cur.s) {
			snprintf(why, sizeof(why), "source acts on what its "
			    "file does not say: %s", desc);
			res = why;
			break;
		}
		if (heal(&healed) < 0) {
			snprintf(why, sizeof(why), "never settles from: %s",
			    desc);
			res = why;
			break;
		}
		live = migfsm_live(healed.s) + dest_live(&healed);
		if (live != 1 || (healed.s == MS_DONE && healed.sclean &&
		    healed.dc)) {
			char hd[256];

			describe(&healed, hd, sizeof(hd));
			snprintf(why, sizeof(why), "healing leaves %d live "
			    "host(s)%s: %s, from %s", live, live == 1 ?
			    " and the id in the committed list" : "", hd, desc);
			res = why;
			break;
		}
		ex->live_dest |= healed.dlive;
		ex->rolled_back |= cur.started && healed.s == MS_RUNNING;
		ex->in_doubt |= cur.s == MS_IN_DOUBT;
		/* memory ahead of the file, as only a failed write leaves it */
		ex->stale_file |= cur.fs == MS_FROZEN && cur.s == MS_RUNNING;
		ex->replayed |= !cur.up && cur.dc && cur.s == MS_IN_DOUBT;

		for (k = 0; k < N_EVENTS; k++) {
			struct world next = cur;
			int added;

			if (event(&next, k) < 0)
				continue;
			ex->forgotten |= cur.dc && !next.dc && k == 1;
			ex->resolved_back |= k == 20;
			ex->resolved_done |= k == 21;
			if ((added = seen_add(&set, key(&next))) == 0)
				continue;
			if (added < 0 || tail == cap) {
				res = "the model outgrew its tables";
				break;
			}
			parent[tail] = (uint32_t)(head - 1);
			via[tail] = (uint8_t)k;
			queue[tail++] = next;
		}
	}
	if (res != NULL && res != why)
		goto out;
	if (res != NULL) {
		/* the events that led there, last first */
		size_t at = head - 1, len = strlen(why);

		while (via[at] != 0xff && len + 8 < sizeof(why)) {
			len += (size_t)snprintf(why + len, sizeof(why) - len,
			    "%s%d", at == head - 1 ? "; events, last first: " :
			    " < ", via[at]);
			at = parent[at];
		}
	}
out:
	free(parent);
	free(via);
	free(queue);
	free(set.slot);
	return res;
}

static void
test_model_check_invariant(void **state)
{
	struct explored ex;
	const char *res;

	(void)state;
	bug = BUG_NONE;
	res = explore(&ex);
	print_message("# explored %zu protocol states\n", ex.states);
	if (res != NULL)
		fail_msg("%s", res);
	/* the search reached the interesting outcomes, so it could fail */
	assert_true(ex.states > 1500);
	assert_true(ex.live_dest);
	assert_true(ex.rolled_back);
	assert_true(ex.in_doubt);
	assert_true(ex.stale_file);
	assert_true(ex.forgotten);
	assert_true(ex.resolved_back);
	assert_true(ex.resolved_done);
	assert_true(ex.replayed);
}

/* Each mutation breaks a property the checker holds the protocol to. */
static void
test_model_check_catches_mutations(void **state)
{
	static const struct { enum bug bug; const char *want; } cases[] = {
		/* a source in doubt whose COMMITTED was lost gets ABORTED
		 * and rolls back */
		{ BUG_FORGET_ON_ANSWER, "healing leaves 2 live" },
		/* rolled back while the destination was about to commit */
		{ BUG_RESOLVE_UNGUARDED, "healing leaves 2 live" },
		/* a source in doubt waits for ever, or a lost FORGET
		 * leaves the id behind */
		{ BUG_NO_REPLAY, "healing leaves" },
		/* the source deletes its copy, then the destination dies
		 * with sockets still in repair */
		{ BUG_EARLY_COMMITTED, "healing leaves 0 live" },
	};
	struct explored ex;
	const char *res;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bug = cases[i].bug;
		res = explore(&ex);
		print_message("# mutation %d: %s\n", (int)bug,
		    res != NULL ? res : "(not caught)");
		assert_non_null(res);
		assert_non_null(strstr(res, cases[i].want));
	}
	bug = BUG_NONE;
}

/* Feed a script of events to a world and return the actions each step
 * produced for the role that took it. */
static unsigned
step_src(enum mig_state *s, enum mig_event ev)
{
	struct mig_step st = migfsm_step(MIG_SOURCE, *s, ev);

	*s = st.next;
	return st.actions;
}

static unsigned
step_dst(enum mig_state *d, enum mig_event ev)
{
	struct mig_step st = migfsm_step(MIG_DEST, *d, ev);

	*d = st.next;
	return st.actions;
}

static void
test_happy_path(void **state)
{
	enum mig_state s = MS_RUNNING, d = MD_IDLE;

	(void)state;
	assert_int_equal(step_src(&s, ME_CMD_MIGRATE), MA_SEND_PREPARE);
	assert_int_equal(step_dst(&d, ME_RX_PREPARE), MA_BUILD | MA_SEND_PREPARED);
	assert_int_equal(step_src(&s, ME_RX_PREPARED), MA_PERSIST | MA_FREEZE_DUMP);
	assert_int_equal(s, MS_FROZEN);
	assert_int_equal(step_dst(&d, ME_RX_DUMP_DONE), MA_SEND_READY);
	assert_int_equal(step_src(&s, ME_RX_READY), MA_PERSIST | MA_SEND_COMMIT);
	assert_int_equal(step_dst(&d, ME_RX_COMMIT),
	    MA_PERSIST | MA_GO_LIVE | MA_SEND_COMMITTED);
	assert_int_equal(step_src(&s, ME_RX_COMMITTED), MA_PERSIST | MA_KILL_DELETE);
	assert_int_equal(s, MS_DONE);
	assert_int_equal(d, MD_LIVE);
}

static void
test_lost_commit_is_sent_again(void **state)
{
	enum mig_state s = MS_FROZEN, d = MD_READY;

	(void)state;
	step_src(&s, ME_RX_READY);		/* COMMIT sent ... */
	step_src(&s, ME_CHANNEL_LOST);		/* ... and lost */
	assert_int_equal(s, MS_IN_DOUBT);
	assert_false(migfsm_live(s));
	assert_true(step_src(&s, ME_CHANNEL_UP) & MA_SEND_COMMIT);
	assert_true(step_dst(&d, ME_RX_COMMIT) & MA_GO_LIVE);
	assert_true(step_src(&s, ME_RX_COMMITTED) & MA_KILL_DELETE);
}

static void
test_destination_that_gave_up_makes_source_roll_back(void **state)
{
	enum mig_state s = MS_IN_DOUBT, d = MD_READY;

	(void)state;
	assert_int_equal(step_dst(&d, ME_TIMEOUT), MA_DISCARD);
	assert_int_equal(step_dst(&d, ME_RX_COMMIT), MA_SEND_ABORTED);
	assert_int_equal(d, MD_IDLE);
	assert_true(step_src(&s, ME_RX_ABORTED) & MA_ROLLBACK);
	assert_int_equal(s, MS_RUNNING);
}

/* Going live failed before any socket left repair: undone, and the
 * source, still committing, rolls back on the ABORTED. */
static void
test_go_live_failure_is_undone(void **state)
{
	enum mig_state s = MS_COMMITTING, d = MD_READY;

	(void)state;
	step_dst(&d, ME_RX_COMMIT);
	assert_int_equal(d, MD_LIVE);
	assert_int_equal(step_dst(&d, ME_LOCAL_FAIL),
	    MA_PERSIST | MA_DISCARD | MA_SEND_ABORTED);
	assert_int_equal(d, MD_IDLE);
	assert_int_equal(step_dst(&d, ME_RX_COMMIT), MA_SEND_ABORTED);
	assert_true(step_src(&s, ME_RX_ABORTED) & MA_ROLLBACK);
	assert_int_equal(s, MS_RUNNING);
}

/* A source whose destination is up waits out a long go-live without
 * doubt; the destination's answer to a repeated COMMIT is still
 * COMMITTED (mig_dst.c holds it until the sockets are live). */
static void
test_commit_waits_while_going_live(void **state)
{
	enum mig_state s = MS_COMMITTING, d = MD_LIVE;

	(void)state;
	assert_int_equal(step_src(&s, ME_COMMIT_WAIT), MA_SEND_COMMIT);
	assert_int_equal(s, MS_COMMITTING);
	assert_true(migfsm_vital(MIG_SOURCE, s));
	assert_int_equal(step_dst(&d, ME_RX_COMMIT), MA_SEND_COMMITTED);
	assert_int_equal(d, MD_LIVE);
	/* overdue: in doubt, asking again */
	assert_int_equal(step_src(&s, ME_TIMEOUT),
	    MA_PERSIST | MA_SEND_COMMIT);
	assert_int_equal(s, MS_IN_DOUBT);
	assert_int_equal(step_src(&s, ME_COMMIT_WAIT), MA_SEND_COMMIT);
	assert_int_equal(s, MS_IN_DOUBT);
	/* nothing else waits on it */
	d = MD_READY;
	assert_int_equal(step_dst(&d, ME_COMMIT_WAIT), 0);
	assert_int_equal(d, MD_READY);
}

static void
test_failures_before_commit_roll_back(void **state)
{
	static const enum mig_event evs[] = {
		ME_LOCAL_FAIL, ME_TIMEOUT, ME_CMD_CANCEL, ME_CHANNEL_LOST,
		ME_RX_FAILED, ME_RESTART,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		enum mig_state s = MS_FROZEN;

		assert_true(step_src(&s, evs[i]) & MA_ROLLBACK);
		assert_int_equal(s, MS_RUNNING);
	}
}

static void
test_cancel_after_commit_is_refused(void **state)
{
	enum mig_state s = MS_COMMITTING;

	(void)state;
	assert_int_equal(step_src(&s, ME_CMD_CANCEL), MA_REFUSE_CMD);
	assert_int_equal(s, MS_COMMITTING);
	/* resolve is only for a source in doubt */
	assert_int_equal(step_src(&s, ME_CMD_RESOLVE_BACK), MA_REFUSE_CMD);
	s = MS_IN_DOUBT;
	assert_true(step_src(&s, ME_CMD_RESOLVE_BACK) & MA_ROLLBACK);
}

static void
test_state_names_round_trip(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < MIG_NSTATES; i++)
		assert_int_equal(migfsm_state_parse(migfsm_state_name(i)), i);
	assert_int_equal(migfsm_state_parse("bogus"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_happy_path),
		cmocka_unit_test(test_lost_commit_is_sent_again),
		cmocka_unit_test(test_destination_that_gave_up_makes_source_roll_back),
		cmocka_unit_test(test_go_live_failure_is_undone),
		cmocka_unit_test(test_commit_waits_while_going_live),
		cmocka_unit_test(test_failures_before_commit_roll_back),
		cmocka_unit_test(test_cancel_after_commit_is_refused),
		cmocka_unit_test(test_state_names_round_trip),
		cmocka_unit_test(test_model_check_invariant),
		cmocka_unit_test(test_model_check_catches_mutations),
	};

	return cmocka_run_group_tests_name("migfsm", tests, NULL, NULL);
}
