/* SPDX-License-Identifier: ISC */
/*
 * The source side of a migration, as the protocol's actions (migfsm.h)
 * need it: check, freeze-and-dump, then commit or roll back.
 *
 *	migsrc_check(ns, cg, why)	 before any freeze: is every socket
 *					 movable?  How many there are, or
 *					 -1.  No side effect.
 *	migsrc_freeze(&s, ns, cg, ..)	 freeze the cgroup, lock the ns,
 *					 collect the sockets (frozen fd tables)
 *	migsrc_dump(&s, emit, arg)	 the ns records, then each socket
 *	(or migsrc_dump_next() per socket, to stream them)
 *					 paused (repair on) and saved; a
 *					 listener's waiting connections are
 *					 accepted and carried as established
 *	then either
 *	(migsrc_kill_start(&s), then	 ask the tasks to die while their
 *	 migsrc_killed(&s) polled)	 sockets are in repair, and wait
 *					 from an event loop
 *	migsrc_commit(&s, hostif)	 kill the tasks while the sockets are
 *					 in repair (no FIN, no RST), close
 *					 ours silently, delete the ns
 *	or
 *	migsrc_rollback(&s)		 repair off without window probe,
 *					 unlock, thaw: the service goes on
 *	migsrc_free(&s)			 memory only: a socket neither
 *					 committed nor rolled back stays in
 *					 the mode it is in
 *
 * Rollback cannot put connections accepted from a listener's queue back
 * in it: they are reset, so their clients learn at once and may retry.
 * It is the one documented loss of a rollback.
 *
 * Orphans (connections closed by their program while the kernel still
 * owes their peer bytes) have no file to dump: the caller waits for them
 * before the freeze (migsrc_orphans()), and a freeze that finds one fails.
 */
#ifndef MIGR_MIGSRC_H
#define MIGR_MIGSRC_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "collect.h"

struct sk_handle;
struct sk_state;
struct sockdiag_sock;

struct migsrc_item {
	struct sk_handle	*h;
	uint64_t		 id;
	int			 accepted;	/* taken from a listener's queue */
	int			 fd;		/* accepted ones: our fd */
	struct collect_sock	*cs;		/* collected ones */
};

struct migsrc_figures {
	double		lock_ms, settle_ms, freeze_ms, collect_ms, dump_ms;
	size_t		sockets, accepted;
	uint64_t	queued_bytes;		/* both queues, all sockets */
};

struct migsrc {
	char			 ns[64];
	char			 cgroup[PATH_MAX];
	struct collect_set	 set;
	struct migsrc_item	*items;
	size_t			 nitems;
	size_t			 capitems;	/* doubles as it fills */
	unsigned		 flags;		/* MIGSRC_* */
	int			 frozen, locked;
	int			 replay;	/* the replaying lock (its
						   queue's reader is bound) */
	double			 t_freeze;	/* the freeze was asked */
	size_t			 cursor;	/* migsrc_dump_next() */
	size_t			 child, nchild;	/* a listener's waiting
						   connections: items
						   [child, nchild) are paused,
						   not saved yet, one a step */
	uint64_t		 child_of;	/* their listener's id */
	uint32_t		 inline_max;	/* queue bytes inline in a
						   record; 0: all */
	struct sockdiag_sock	*diag;		/* the namespace's TCP sockets
						   as sock_diag sees them */
	size_t			 ndiag;
	struct sockdiag_sock	*passed;	/* orphans let through the
						   lock (nslock_pass) */
	size_t			 npassed;
	struct migsrc_figures	 fig;
};

/*
 * Records are handed over one at a time; emit takes the reference, and
 * owns st (sk_state_free() it), whatever it returns.  A socket record
 * comes with its state: the parts it announces as chunks (sk_json_split()
 * with inline_max) are the emitter's to send from it, when it likes.
 */
typedef int (*migsrc_emit_fn)(json_t *rec, struct sk_state *st, void *arg);

/*
 * MIGSRC_CKPT: the namespace's program moves by CRIU (checkpoint mode).
 * The engine takes its TCP sockets only: unix sockets are CRIU's (within
 * the tree; it refuses the rest), and UDP is refused.
 */
#define MIGSRC_CKPT	0x1
/* MIGSRC_NO_PATH: records leave out what connections knew of their path
 * (TCP_REPAIR_PATH): the peer did not announce "repair-path". */
#define MIGSRC_NO_PATH	0x2

/* Every reason the namespace cannot move, in why ("pid 7 fd 4: tcp:
 * urgent data pending cannot be moved; multicast groups ...") and, when
 * reasons is not NULL, one string each appended to it.  When there is
 * none, the sockets a dump would carry: those the tasks hold and the
 * connections waiting in their listeners' accept queues (the `sockets`
 * of PREPARE and MIG_CHECK); -1 otherwise (a failure to look is a
 * reason too). */
int	migsrc_check(const char *ns, const char *cgroup, unsigned flags,
	    char *why, size_t len, json_t *reasons);
/* Orphans that still owe their peer something: how many (described in
 * why), or -1 with the reason. */
int	migsrc_orphans(const char *ns, char *why, size_t len);
/* Handshakes under way (SYN_RECV requests, which nothing can dump): how
 * many (the first three described in why), or -1 with the reason. */
int	migsrc_handshakes(const char *ns, char *why, size_t len);
/* Listeners with connections waiting to be accepted: how many (the
 * first three described in why), or -1 with the reason. */
int	migsrc_accept_waiting(const char *ns, char *why, size_t len);
/* Lock, freeze and collect in one call (a tool's; migrd takes the
 * steps below from its loop). */
int	migsrc_freeze(struct migsrc *, const char *ns, const char *cgroup,
	    unsigned flags, int timeout_ms, char *err, size_t errlen);
/*
 * The same in steps, for an event loop that must not wait.  The lock
 * comes first: from then on nothing reaches the tasks from outside, so
 * they can finish what they hold while migsrc_at_rest() looks (taskrest.h:
 * 1 every task holding a socket waits for input, 0 not yet, why says who,
 * -1).  Then ask for the freeze, see whether it is done (1, 0 not yet,
 * -1), and collect.  A rollback undoes what was done: it unlocks, and
 * thaws once the freeze was asked; a failed collect has rolled back.
 */
int	migsrc_lock(struct migsrc *, const char *ns, const char *cgroup,
	    unsigned flags, int replay, char *err, size_t errlen);
int	migsrc_at_rest(const struct migsrc *, char *why, size_t len);
/* Connections closed since the lock that still owe their peers bytes:
 * how many (the first three described in why), or -1.  Each is let
 * through the lock the first time it is seen, to deliver them. */
int	migsrc_pass_orphans(struct migsrc *, char *why, size_t len);
int	migsrc_freeze_start(struct migsrc *, char *err, size_t errlen);
int	migsrc_frozen(const struct migsrc *);
int	migsrc_freeze_finish(struct migsrc *, char *err, size_t errlen);
int	migsrc_dump(struct migsrc *, migsrc_emit_fn, void *arg);
/* One collected socket (and a listener's waiting connections) at a
 * time, listeners first: 1 more to come, 0 done, -1 failed.  The
 * namespace records are the caller's (nsdump_emit). */
int	migsrc_dump_next(struct migsrc *, migsrc_emit_fn, void *arg);
/* After a restart: take back a frozen, locked namespace whose sockets
 * a dead migrd left in repair, so it can be committed or rolled back.
 * Connections it had taken from accept queues died with it. */
int	migsrc_reattach(struct migsrc *, const char *ns, const char *cgroup,
	    unsigned flags, char *err, size_t errlen);
/* The commit's kill, asked and not waited for: migsrc_killed() is 1
 * once every task is gone (0 while some run, -1 if the cgroup cannot be
 * read), and migsrc_commit() then finds nothing left to wait for. */
int	migsrc_kill_start(struct migsrc *, char *err, size_t errlen);
int	migsrc_killed(const struct migsrc *);
/* Both do all they can; -1 and the first failure in err if any step
 * failed.  migsrc_commit waits up to timeout_ms for the tasks to die (0:
 * looks once). */
int	migsrc_commit(struct migsrc *, const char *hostif, int timeout_ms,
	    char *err, size_t errlen);
int	migsrc_rollback(struct migsrc *, char *err, size_t errlen);
void	migsrc_free(struct migsrc *);

#endif
