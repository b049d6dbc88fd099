/* SPDX-License-Identifier: ISC */
/*
 * The migration protocol as two pure state machines, one per role, with
 * no I/O: migrd feeds each event (a message received, a timer, a local
 * failure, the channel going down or up, an operator command) to
 * migfsm_step(), which gives the next state and the actions to carry out,
 * in the order of the enum.  Keeping the protocol here, apart from the
 * code that does the work, lets the unit tests drive both ends through
 * every interleaving of lost messages, timeouts, crashes and restarts and
 * check the invariant:
 *
 *   at any instant at most one host has the namespace live, and once
 *   the channel heals and the timers run, exactly one has it.
 *
 * The commit point is the destination persisting "committed" when it
 * accepts COMMIT.  Before it the destination may discard at any time
 * (and then answers ABORTED to any COMMIT); the source may roll back
 * only until it sends COMMIT, and after that only on the destination's
 * word (ABORTED) or an operator's.  COMMIT is idempotent, so a source in
 * doubt simply sends it again when the channel comes back.
 */
#ifndef MIGR_MIGFSM_H
#define MIGR_MIGFSM_H

enum mig_role { MIG_SOURCE, MIG_DEST };

enum mig_state {
	/* source */
	MS_RUNNING,		/* live here; no migration in progress */
	MS_PREPARING,		/* PREPARE sent, still live */
	MS_FROZEN,		/* frozen, locked, dumping; waiting READY */
	MS_COMMITTING,		/* COMMIT sent, waiting COMMITTED */
	MS_IN_DOUBT,		/* COMMIT sent, no answer: stays locked */
	MS_DONE,		/* moved away: tasks killed, ns deleted */
	/* destination */
	MD_IDLE,		/* holds nothing of this migration */
	MD_PREPARED,		/* ns built locked and detached; restoring */
	MD_READY,		/* every socket restored; waiting COMMIT */
	MD_LIVE,		/* committed: attached, unlocked, its sockets
				 * leaving repair; COMMITTED once all did */
	MIG_NSTATES
};

enum mig_event {
	ME_CMD_MIGRATE,		/* operator: migrate (source) */
	ME_CMD_CANCEL,		/* operator: cancel */
	ME_CMD_RESOLVE_BACK,	/* operator, in doubt: the peer never went live */
	ME_CMD_RESOLVE_DONE,	/* operator, in doubt: the peer has it */
	ME_RX_PREPARE,
	ME_RX_PREPARED,
	ME_RX_REFUSED,		/* destination cannot host it */
	ME_RX_DUMP_DONE,	/* the last socket record has been sent */
	ME_RX_READY,
	ME_RX_FAILED,		/* destination failed to restore */
	ME_RX_COMMIT,
	ME_RX_COMMITTED,
	ME_RX_ABORT,
	ME_RX_ABORTED,		/* destination discarded, or never knew it */
	ME_LOCAL_FAIL,		/* freeze/dump (source), build/restore (dest) */
	ME_TIMEOUT,
	ME_COMMIT_WAIT,		/* source: the commit timer, with the channel up
				 * and the destination not yet overdue */
	ME_CHANNEL_LOST,
	ME_CHANNEL_UP,
	ME_RESTART,		/* the daemon restarted: volatile state is gone */
	MIG_NEVENTS
};

/* Actions, carried out in this order. */
enum mig_action {
	MA_PERSIST	= 1 << 0,	/* write the new state before acting */
	MA_SEND_PREPARE	= 1 << 1,
	MA_FREEZE_DUMP	= 1 << 2,	/* freeze, lock, collect, stream, DUMP_DONE */
	MA_ROLLBACK	= 1 << 3,	/* repair off (no probe), unlock, thaw */
	MA_SEND_COMMIT	= 1 << 4,
	MA_KILL_DELETE	= 1 << 5,	/* kill tasks in repair, delete the ns */
	MA_SEND_ABORT	= 1 << 6,
	MA_BUILD	= 1 << 7,	/* build the ns locked and detached */
	MA_SEND_PREPARED = 1 << 8,
	MA_SEND_REFUSED	= 1 << 9,
	MA_SEND_READY	= 1 << 10,
	MA_SEND_FAILED	= 1 << 11,
	MA_DISCARD	= 1 << 12,	/* close restored sockets, delete the ns */
	MA_GO_LIVE	= 1 << 13,	/* attach, unlock, announce, resume, thaw */
	MA_SEND_COMMITTED = 1 << 14,
	MA_SEND_ABORTED	= 1 << 15,
	MA_REFUSE_CMD	= 1 << 16,	/* the command is refused in this state */
};

struct mig_step {
	enum mig_state	next;
	unsigned	actions;
	int		ignored;	/* the event means nothing here */
};

struct mig_step	migfsm_step(enum mig_role, enum mig_state, enum mig_event);

/* The state a role starts in, and the one it is left in after a restart
 * that found state S persisted. */
enum mig_state	migfsm_initial(enum mig_role);
/* 1 if the namespace is live (unlocked, running) on a host in this state */
int		migfsm_live(enum mig_state);
/* 1 if the role must persist state s, so a restart finds it */
int		migfsm_durable(enum mig_state);
/*
 * 1 if a step into state s must not act unless s was written: the
 * source's freeze (FROZEN) and its decision to commit (COMMITTING), the
 * destination's going live (LIVE).  A daemon that cannot write s (a full
 * disk, no fd left) takes migfsm_unsaved() instead, so that a crash can
 * never find a host acting on a decision it did not record.
 */
int		migfsm_vital(enum mig_role, enum mig_state s);
/* The step a role in cur takes instead when the vital state its step led
 * to could not be written: a local failure in cur. */
struct mig_step	migfsm_unsaved(enum mig_role, enum mig_state cur);

const char	*migfsm_state_name(enum mig_state);
const char	*migfsm_event_name(enum mig_event);
/* For migctl status and the state files: name -> state, or -1. */
int		 migfsm_state_parse(const char *);

#endif
