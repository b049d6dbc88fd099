/* SPDX-License-Identifier: ISC */
/*
 * The migration protocol, model-checked.  Both state machines of
 * migrd/migration/migfsm.c are wired to a model channel (two FIFOs that lose
 * everything when the channel drops), and every reachable combination of
 * states, queued messages and channel status is explored breadth-first
 * under every event: message delivery, channel loss and recovery,
 * timeouts, local failures, daemon restarts, operator cancels, and
 * steps taken while the state file cannot be written (a full disk): a
 * restart finds what the source last wrote, not what it had in memory.
 * For each
 * reachable state we check that at most one host has the namespace live,
 * and that healing (channel up, messages delivered, timers fired) ends
 * with exactly one host having it.  Scripted scenarios check the action
 * sequences of the common paths.
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

/* A message is the event its receiver sees; 0 (ME_CMD_MIGRATE) is never
 * sent, so it marks an empty slot. */
struct world {
	uint8_t	s, d;		/* states */
	uint8_t	fs;		/* the source's state file, as last written */
	uint8_t	fd;		/* the destination's: FD_* */
	uint8_t	up;		/* channel up */
	uint8_t	started;	/* the operator said migrate */
	uint8_t	sd[QMAX], nsd;	/* source -> destination */
	uint8_t	ds[QMAX], nds;	/* destination -> source */
};

/* What the destination's file holds of the migration, and a namespace
 * live there that its restarted migrd does not know of (it answers a
 * COMMIT with ABORTED: the source rolls back, two live copies). */
enum { FD_NONE, FD_LIVE, FD_GHOST, FD_N };

static int
push(uint8_t *q, uint8_t *n, enum mig_event ev)
{
	if (*n == QMAX)
		return -1;
	q[(*n)++] = (uint8_t)ev;
	return 0;
}

static enum mig_event
pop(uint8_t *q, uint8_t *n)
{
	enum mig_event ev = q[0];

	memmove(q, q + 1, --(*n));
	q[*n] = 0;
	return ev;
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
		if (!(a & sends[i].act) || !w->up)
			continue;
		if (role == MIG_SOURCE ? push(w->sd, &w->nsd, sends[i].ev) :
		    push(w->ds, &w->nds, sends[i].ev))
			return -1;
	}
	return 0;
}

static int
feed(struct world *w, enum mig_role role, enum mig_event ev)
{
	uint8_t *cur = role == MIG_SOURCE ? &w->s : &w->d;
	struct mig_step st = migfsm_step(role, *cur, ev);

	*cur = (uint8_t)st.next;
	if (role == MIG_SOURCE && (st.actions & MA_PERSIST))
		w->fs = (uint8_t)st.next;
	if (role == MIG_DEST && (st.actions & MA_PERSIST) &&
	    st.next == MD_LIVE)
		w->fd = FD_LIVE;
	return apply_sends(w, role, st.actions);
}

/* What is live on the destination: its machine's state, or a namespace
 * its migrd forgot. */
static int
dest_live(const struct world *w)
{
	return migfsm_live(w->d) || w->fd == FD_GHOST;
}

/* As feed(), while every write of the state file fails: a step into a
 * vital state is not taken (migfsm_unsaved() instead), others are, and
 * the file keeps what it had (as mig.c does). */
static int
feed_unsaved(struct world *w, enum mig_role role, enum mig_event ev)
{
	uint8_t *cur = role == MIG_SOURCE ? &w->s : &w->d;
	struct mig_step st = migfsm_step(role, *cur, ev);

	if ((st.actions & MA_PERSIST) && migfsm_vital(role, st.next))
		st = migfsm_unsaved(role, *cur);
	*cur = (uint8_t)st.next;
	return apply_sends(w, role, st.actions);
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
	if (w->s != MS_DONE)
		w->s = MS_RUNNING;
	return 0;
}

static void
lose_channel(struct world *w)
{
	w->up = 0;
	w->nsd = w->nds = 0;
	memset(w->sd, 0, sizeof(w->sd));
	memset(w->ds, 0, sizeof(w->ds));
}

enum { N_EVENTS = 19 };

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
		return feed(w, MIG_DEST, pop(w->sd, &w->nsd));
	case 2:
		if (w->nds == 0)
			return -1;
		return feed(w, MIG_SOURCE, pop(w->ds, &w->nds));
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
		w->up = 1;
		if (feed(w, MIG_SOURCE, ME_CHANNEL_UP) < 0)
			return -1;
		return feed(w, MIG_DEST, ME_CHANNEL_UP);
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
		if (w->d == MD_LIVE && w->fd != FD_LIVE) {
			/* live, and never written down */
			w->d = MD_IDLE;
			w->fd = FD_GHOST;
		} else if (feed(w, MIG_DEST, ME_RESTART) < 0)
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
		return feed_unsaved(w, MIG_DEST, pop(w->sd, &w->nsd));
	case 16:
		if (w->nds == 0)
			return -1;
		return feed_unsaved(w, MIG_SOURCE, pop(w->ds, &w->nds));
	case 17:
		return feed_unsaved(w, MIG_SOURCE, ME_TIMEOUT);
	case 18:
		return feed_unsaved(w, MIG_SOURCE, ME_LOCAL_FAIL);
	}
	return -1;
}

/* Each direction carries few kinds of message: number them densely so
 * that a world packs into a small key. */
static uint32_t
msg_code(uint8_t ev, const enum mig_event *kinds, uint32_t nkinds)
{
	uint32_t i;

	for (i = 0; i < nkinds; i++)
		if (kinds[i] == ev)
			return i + 1;
	return 0;
}

static const enum mig_event sd_kinds[] = {
	ME_RX_PREPARE, ME_RX_DUMP_DONE, ME_RX_COMMIT, ME_RX_ABORT,
};
static const enum mig_event ds_kinds[] = {
	ME_RX_PREPARED, ME_RX_REFUSED, ME_RX_READY, ME_RX_FAILED,
	ME_RX_COMMITTED, ME_RX_ABORTED,
};
#define N_SD	(sizeof(sd_kinds) / sizeof(sd_kinds[0]) + 1)
#define N_DS	(sizeof(ds_kinds) / sizeof(ds_kinds[0]) + 1)
#define KEY_MAX	((uint64_t)MIG_NSTATES * MIG_NSTATES * MIG_NSTATES * \
		 FD_N * 4 * N_SD * N_SD * N_SD * N_DS * N_DS * N_DS)

static uint32_t
key(const struct world *w)
{
	uint32_t k = w->s;
	int i;

	k = k * MIG_NSTATES + w->d;
	k = k * MIG_NSTATES + w->fs;
	k = k * FD_N + w->fd;
	k = k * 2 + w->up;
	k = k * 2 + w->started;
	for (i = 0; i < QMAX; i++)
		k = k * N_SD + msg_code(w->sd[i], sd_kinds, N_SD - 1);
	for (i = 0; i < QMAX; i++)
		k = k * N_DS + msg_code(w->ds[i], ds_kinds, N_DS - 1);
	return k;
}

static int
quiescent(const struct world *w)
{
	return w->nsd == 0 && w->nds == 0 &&
	    (w->s == MS_RUNNING || w->s == MS_DONE) &&
	    (w->d == MD_IDLE || w->d == MD_LIVE);
}

/* Heal: channel up, deliver everything, fire the timers a waiting side
 * would fire.  Returns the number of rounds, or -1 if it never settles. */
static int
heal(struct world *w)
{
	int round;

	if (!w->up)
		event(w, 4);
	for (round = 0; round < 64; round++) {
		if (w->nsd) {
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
	snprintf(buf, len, "source %s, destination %s, channel %s, %d/%d queued",
	    migfsm_state_name(w->s), migfsm_state_name(w->d),
	    w->up ? "up" : "down", w->nsd, w->nds);
}

static void
test_model_check_invariant(void **state)
{
	size_t cap = 1 << 22, head = 0, tail = 0, explored = 0;
	struct world *queue = malloc(cap * sizeof(*queue));
	uint8_t *seen = calloc(KEY_MAX / 8 + 1, 1);	/* a bit per key */
	struct world w0 = { MS_RUNNING, MD_IDLE, MS_RUNNING, FD_NONE, 1, 0,
	    {0}, 0, {0}, 0 };
	int live_dest_seen = 0, rolled_back_seen = 0, in_doubt_seen = 0;
	int stale_file_seen = 0;
	char desc[160];

	(void)state;
	assert_non_null(queue);
	assert_non_null(seen);
	queue[tail++] = w0;
	seen[key(&w0) >> 3] |= 1 << (key(&w0) & 7);
	while (head < tail) {
		struct world cur = queue[head++];
		struct world healed = cur;
		int k;

		explored++;
		describe(&cur, desc, sizeof(desc));
		assert_true(key(&cur) < KEY_MAX);
		if (migfsm_live(cur.s) && dest_live(&cur))
			fail_msg("both hosts live: %s", desc);
		if (heal(&healed) < 0)
			fail_msg("never settles from: %s", desc);
		if (migfsm_live(healed.s) + dest_live(&healed) != 1) {
			describe(&healed, desc, sizeof(desc));
			fail_msg("healing leaves %d live hosts: %s",
			    migfsm_live(healed.s) + dest_live(&healed), desc);
		}
		live_dest_seen |= healed.d == MD_LIVE;
		rolled_back_seen |= cur.started && healed.s == MS_RUNNING;
		in_doubt_seen |= cur.s == MS_IN_DOUBT;
		/* memory ahead of the file, as only a failed write leaves it */
		stale_file_seen |= cur.fs == MS_FROZEN && cur.s == MS_RUNNING;
		/* never acting on an unwritten decision */
		if ((cur.s == MS_FROZEN || cur.s == MS_COMMITTING) &&
		    cur.fs != cur.s)
			fail_msg("source in %s, its file says %s: %s",
			    migfsm_state_name(cur.s),
			    migfsm_state_name(cur.fs), desc);

		for (k = 0; k < N_EVENTS; k++) {
			struct world next = cur;
			uint32_t kk;

			if (event(&next, k) < 0)
				continue;
			kk = key(&next);
			if (seen[kk >> 3] & (1 << (kk & 7)))
				continue;
			seen[kk >> 3] |= 1 << (kk & 7);
			assert_true(tail < cap);
			queue[tail++] = next;
		}
	}
	/* the search reached the interesting outcomes, so it could fail */
	print_message("# explored %zu protocol states\n", explored);
	assert_true(explored > 500);
	assert_true(live_dest_seen);
	assert_true(rolled_back_seen);
	assert_true(in_doubt_seen);
	assert_true(stale_file_seen);
	free(queue);
	free(seen);
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
		cmocka_unit_test(test_failures_before_commit_roll_back),
		cmocka_unit_test(test_cancel_after_commit_is_refused),
		cmocka_unit_test(test_state_names_round_trip),
		cmocka_unit_test(test_model_check_invariant),
	};

	return cmocka_run_group_tests_name("migfsm", tests, NULL, NULL);
}
