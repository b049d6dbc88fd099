/* SPDX-License-Identifier: ISC */
/*
 * The destination side of a migration, as the protocol's actions
 * (migfsm.h) need it.
 *
 *	migdst_build(&d, ns, hostif, dump)  create the ns, lock it, build its
 *					    links, addresses and routes; the
 *					    outer veth end stays detached
 *	migdst_restore(&d, st)		    each socket record, as it comes:
 *					    rebuilt inside the ns, in repair
 *	then either
 *	migdst_workload_fds(&d, fds, names) the sockets in the order the
 *					    workload takes them (listeners
 *					    first), still ours, any time after
 *					    the last restore
 *	migdst_attach_start(&d, bridge)	    the outer end on the bridge
 *	migdst_attach_poll(&d, ...)	    until it forwards (1), from the
 *					    caller's loop, or -1 after
 *					    NSBUILD_FORWARD_MS
 *	migdst_attach_finish(&d, ...)	    unlock, announce
 *	(or migdst_attach(&d, bridge, ...)  the three at once)
 *	migdst_resume_some(&d, ms, n)	    take sockets out of repair
 *					    (window probes), at most n or for
 *					    about ms at a time, until it
 *					    returns 1: a loop calls it again
 *					    from its next turn, so that ten
 *					    thousand sockets do not hold it;
 *					    migdst_resume_all(&d) the rest at
 *					    once
 *	migdst_release(&d)		    close our copies once the workload
 *					    holds its own; the ns is its now
 *	MIGDST_REANNOUNCE_MS later:	    announce again (announce.h): the
 *					    first can be lost while the new
 *					    bridge port settles; the caller
 *					    times it, so a daemon's loop is
 *					    never put to sleep
 *	or
 *	migdst_discard(&d)		    close the sockets silently and
 *					    delete the ns
 *	migdst_free(&d)
 */
#ifndef MIGR_MIGDST_H
#define MIGR_MIGDST_H

#include <stddef.h>
#include <stdint.h>

#include "nsdump.h"
#include "sk_engine.h"

#define MIGDST_NAME_MAX	160
#define MIGDST_REANNOUNCE_MS	150

struct sk_handle;

struct migdst_item {
	struct sk_handle	*h;
	uint64_t		 id;
	int			 listener;
	char			 name[MIGDST_NAME_MAX];	/* LISTEN_FDNAMES entry */
};

struct migdst_figures {
	double		build_ms, restore_ms, live_ms;
	/* going live, before the first socket leaves repair */
	double		attach_ms, unlock_ms, announce_ms;
	size_t		sockets;
	size_t		reset;		/* could not resume: reset */
};

struct migdst {
	char			 ns[64];
	char			 hostif[16];
	struct migdst_item	*items;
	size_t			 nitems;
	size_t			 capitems;	/* doubles as it fills */
	int			 built;
	size_t			 resumed;	/* items out of repair */
	double			 t_attach;	/* mono_ms() going live began */
	double			 t_forward;	/* the port forwarded */
	const char		*bridge;	/* attached to (the caller's) */
	struct migdst_figures	 fig;
};

/* Each returns 0, or -1 with the reason in err. */
int	migdst_build(struct migdst *, const char *ns, const char *hostif,
	    const struct nsdump *, char *err, size_t errlen);
int	migdst_restore(struct migdst *, const struct sk_state *, char *err,
	    size_t errlen);
int	migdst_attach_start(struct migdst *, const char *bridge, char *err,
	    size_t errlen);
/* 1: the port forwards; 0: not yet; -1: not after NSBUILD_FORWARD_MS
 * (err says so).  held: a fault that makes the port seem not to forward
 * for that many ms more (0: none). */
int	migdst_attach_poll(struct migdst *, double held, char *err,
	    size_t errlen);
int	migdst_attach_finish(struct migdst *, char *err, size_t errlen);
/* After migdst_attach_start(): the wait, then finish, at once (a caller
 * with no loop to go back to). */
int	migdst_attach_rest(struct migdst *, char *err, size_t errlen);
/* All three at once. */
int	migdst_attach(struct migdst *, const char *bridge, char *err,
	    size_t errlen);
/* 1 once every socket is out of repair (or reset), 0 if some wait. */
int	migdst_resume_some(struct migdst *, double budget_ms, size_t most);
/* The rest of them, at once (no loop to go back to). */
void	migdst_resume_all(struct migdst *);
/*
 * fds and names have room for nitems; they get the sockets' descriptors
 * and LISTEN_FDNAMES entries, borrowed from d, listeners first.  Returns
 * how many.
 */
size_t	migdst_workload_fds(const struct migdst *, int *fds, char **names);
void	migdst_release(struct migdst *);
void	migdst_discard(struct migdst *);
void	migdst_free(struct migdst *);

#endif
