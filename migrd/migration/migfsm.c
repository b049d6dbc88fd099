/* SPDX-License-Identifier: ISC */
#include <string.h>

#include "migfsm.h"

static const char *state_names[MIG_NSTATES] = {
	[MS_RUNNING] = "running",
	[MS_PREPARING] = "preparing",
	[MS_FROZEN] = "frozen",
	[MS_COMMITTING] = "committing",
	[MS_IN_DOUBT] = "in-doubt",
	[MS_DONE] = "moved",
	[MD_IDLE] = "idle",
	[MD_PREPARED] = "prepared",
	[MD_READY] = "ready",
	[MD_LIVE] = "live",
};

static const char *event_names[MIG_NEVENTS] = {
	[ME_CMD_MIGRATE] = "cmd-migrate",
	[ME_CMD_CANCEL] = "cmd-cancel",
	[ME_CMD_RESOLVE_BACK] = "cmd-resolve-rollback",
	[ME_CMD_RESOLVE_DONE] = "cmd-resolve-done",
	[ME_RX_PREPARE] = "rx-prepare",
	[ME_RX_PREPARED] = "rx-prepared",
	[ME_RX_REFUSED] = "rx-refused",
	[ME_RX_DUMP_DONE] = "rx-dump-done",
	[ME_RX_READY] = "rx-ready",
	[ME_RX_FAILED] = "rx-failed",
	[ME_RX_COMMIT] = "rx-commit",
	[ME_RX_COMMITTED] = "rx-committed",
	[ME_RX_ABORT] = "rx-abort",
	[ME_RX_ABORTED] = "rx-aborted",
	[ME_LOCAL_FAIL] = "local-failure",
	[ME_TIMEOUT] = "timeout",
	[ME_COMMIT_WAIT] = "commit-wait",
	[ME_CHANNEL_LOST] = "channel-lost",
	[ME_CHANNEL_UP] = "channel-up",
	[ME_RESTART] = "restart",
};

const char *
migfsm_state_name(enum mig_state s)
{
	return (unsigned)s < MIG_NSTATES ? state_names[s] : "?";
}

const char *
migfsm_event_name(enum mig_event e)
{
	return (unsigned)e < MIG_NEVENTS ? event_names[e] : "?";
}

int
migfsm_state_parse(const char *name)
{
	int i;

	for (i = 0; i < MIG_NSTATES; i++)
		if (strcmp(state_names[i], name) == 0)
			return i;
	return -1;
}

enum mig_state
migfsm_initial(enum mig_role role)
{
	return role == MIG_SOURCE ? MS_RUNNING : MD_IDLE;
}

int
migfsm_live(enum mig_state s)
{
	return s == MS_RUNNING || s == MS_PREPARING || s == MD_LIVE;
}

int
migfsm_durable(enum mig_state s)
{
	/* what a restarted daemon must find to keep the invariant */
	return s == MS_FROZEN || s == MS_COMMITTING || s == MS_IN_DOUBT ||
	    s == MS_DONE || s == MD_LIVE;
}

int
migfsm_vital(enum mig_role role, enum mig_state s)
{
	if (role == MIG_SOURCE)
		return s == MS_FROZEN || s == MS_COMMITTING;
	return s == MD_LIVE;
}

#define GO(s, a)	do { st.next = (s); st.actions = (a); return st; } while (0)
#define REFUSE()	do { st.actions = MA_REFUSE_CMD; return st; } while (0)

static struct mig_step
source_step(enum mig_state cur, enum mig_event ev)
{
	struct mig_step st = { cur, 0, 0 };

	switch (cur) {
	case MS_RUNNING:
		if (ev == ME_CMD_MIGRATE)
			GO(MS_PREPARING, MA_SEND_PREPARE);
		if (ev == ME_CMD_CANCEL || ev == ME_CMD_RESOLVE_BACK ||
		    ev == ME_CMD_RESOLVE_DONE)
			REFUSE();
		break;
	case MS_PREPARING:
		switch (ev) {
		case ME_RX_PREPARED:
			GO(MS_FROZEN, MA_FREEZE_DUMP);
		case ME_RX_REFUSED:
		case ME_RX_FAILED:
		case ME_RX_ABORTED:
			GO(MS_RUNNING, 0);
		case ME_CMD_CANCEL:
		case ME_TIMEOUT:
		case ME_CHANNEL_LOST:
		case ME_LOCAL_FAIL:
			GO(MS_RUNNING, MA_SEND_ABORT);
		case ME_RESTART:
			/* nothing was persisted: the restarted daemon knows of
			 * no migration; the destination times out */
			GO(MS_RUNNING, 0);
		case ME_CMD_MIGRATE:
		case ME_CMD_RESOLVE_BACK:
		case ME_CMD_RESOLVE_DONE:
			REFUSE();
		default:
			break;
		}
		break;
	case MS_FROZEN:
		switch (ev) {
		case ME_RX_READY:
			/* the decision is written before COMMIT leaves */
			GO(MS_COMMITTING, MA_SEND_COMMIT);
		case ME_RX_FAILED:
		case ME_RX_REFUSED:
		case ME_RX_ABORTED:
			GO(MS_RUNNING, MA_ROLLBACK);
		case ME_LOCAL_FAIL:
		case ME_TIMEOUT:
		case ME_CMD_CANCEL:
		case ME_CHANNEL_LOST:
		case ME_RESTART:
			GO(MS_RUNNING, MA_ROLLBACK | MA_SEND_ABORT);
		case ME_CMD_MIGRATE:
		case ME_CMD_RESOLVE_BACK:
		case ME_CMD_RESOLVE_DONE:
			REFUSE();
		default:
			break;
		}
		break;
	case MS_COMMITTING:
	case MS_IN_DOUBT:
		switch (ev) {
		case ME_RX_COMMITTED:
			GO(MS_DONE, MA_KILL_DELETE);
		case ME_RX_ABORTED:
			GO(MS_RUNNING, MA_ROLLBACK);
		case ME_CHANNEL_LOST:
		case ME_RESTART:
			GO(MS_IN_DOUBT, 0);
		case ME_COMMIT_WAIT:
			/*
			 * No answer yet, but the channel is up and the
			 * destination not overdue: it is going live (ten
			 * thousand sockets take seconds).  Ask again and
			 * wait; only silence puts the source in doubt.
			 */
			GO(cur, MA_SEND_COMMIT);
		case ME_TIMEOUT:
		case ME_CHANNEL_UP:
			/* COMMIT is idempotent: ask again */
			GO(MS_IN_DOUBT, MA_SEND_COMMIT);
		case ME_CMD_RESOLVE_BACK:
			if (cur == MS_IN_DOUBT)
				GO(MS_RUNNING, MA_ROLLBACK);
			REFUSE();
		case ME_CMD_RESOLVE_DONE:
			if (cur == MS_IN_DOUBT)
				GO(MS_DONE, MA_KILL_DELETE);
			REFUSE();
		case ME_CMD_MIGRATE:
		case ME_CMD_CANCEL:
			REFUSE();
		default:
			break;
		}
		break;
	case MS_DONE:
		if (ev == ME_CMD_MIGRATE || ev == ME_CMD_CANCEL ||
		    ev == ME_CMD_RESOLVE_BACK || ev == ME_CMD_RESOLVE_DONE)
			REFUSE();
		break;
	default:
		break;
	}
	st.ignored = 1;
	return st;
}

static struct mig_step
dest_step(enum mig_state cur, enum mig_event ev)
{
	struct mig_step st = { cur, 0, 0 };

	switch (cur) {
	case MD_IDLE:
		if (ev == ME_RX_PREPARE)
			GO(MD_PREPARED, MA_BUILD | MA_SEND_PREPARED);
		if (ev == ME_RX_COMMIT)		/* discarded, or never known */
			GO(MD_IDLE, MA_SEND_ABORTED);
		break;
	case MD_PREPARED:
		switch (ev) {
		case ME_RX_DUMP_DONE:
			GO(MD_READY, MA_SEND_READY);
		case ME_LOCAL_FAIL:
			GO(MD_IDLE, MA_DISCARD | MA_SEND_FAILED);
		case ME_RX_COMMIT:		/* out of order: refuse it */
			GO(MD_IDLE, MA_DISCARD | MA_SEND_ABORTED);
		case ME_RX_ABORT:
		case ME_TIMEOUT:
		case ME_CMD_CANCEL:
		case ME_RESTART:
		case ME_CHANNEL_LOST:	/* the rest of the records are lost */
			GO(MD_IDLE, MA_DISCARD);
		default:
			break;
		}
		break;
	case MD_READY:
		switch (ev) {
		case ME_RX_COMMIT:
			/* the commit point: persisted before going live */
			GO(MD_LIVE, MA_GO_LIVE | MA_SEND_COMMITTED);
		case ME_LOCAL_FAIL:
			/* going live failed before it began (its state
			 * could not be written): the source learns at once */
			GO(MD_IDLE, MA_DISCARD | MA_SEND_ABORTED);
		case ME_RX_ABORT:
		case ME_TIMEOUT:
		case ME_CMD_CANCEL:
		case ME_RESTART:
			GO(MD_IDLE, MA_DISCARD);
		default:
			break;
		}
		break;
	case MD_LIVE:
		if (ev == ME_RX_COMMIT)		/* a repeated COMMIT */
			GO(MD_LIVE, MA_SEND_COMMITTED);
		/* going live failed before any socket left repair and before
		 * COMMITTED left (the veth, the lock): undone, the source
		 * still has every connection and rolls back */
		if (ev == ME_LOCAL_FAIL)
			GO(MD_IDLE, MA_DISCARD | MA_SEND_ABORTED);
		if (ev == ME_CMD_CANCEL)
			REFUSE();
		break;
	default:
		break;
	}
	st.ignored = 1;
	return st;
}

struct mig_step
migfsm_step(enum mig_role role, enum mig_state cur, enum mig_event ev)
{
	struct mig_step st;

	st = role == MIG_SOURCE ? source_step(cur, ev) : dest_step(cur, ev);
	if (st.next != cur && (migfsm_durable(st.next) || migfsm_durable(cur)))
		st.actions |= MA_PERSIST;
	return st;
}

struct mig_step
migfsm_unsaved(enum mig_role role, enum mig_state cur)
{
	return migfsm_step(role, cur, ME_LOCAL_FAIL);
}
