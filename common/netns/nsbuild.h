/* SPDX-License-Identifier: ISC */
/*
 * Build a namespace's network from records (nsdump.h), on the host a
 * migration moves it to, through rtnetlink.
 *
 *	nsbuild_create(ns);		   /run/netns/NS, a new, empty netns
 *	nslock_take(ns);		   (nslock.h) before any link is up
 *	nsbuild_apply(ns, d, "vNS");	   the veth pair (its inner end with
 *					   the moved name, MAC and MTU; the
 *					   outer end vNS down, on no bridge),
 *					   links up inside, addresses, routes
 *	nsbuild_carrier("vNS");		   the outer end up, still on no
 *					   bridge: carrier now, not at commit
 *	... restore sockets ...
 *	nsbuild_attach("vNS", "br0");	   commit: the ns joins the LAN
 *	or nsbuild_delete(ns, "vNS");	   discard
 *
 * A namespace carries at most one veth (the one migrd gave it) plus lo;
 * a record of another kind is refused by name.  "ns create" builds a new
 * namespace the same way, from records made of its arguments (a link
 * record with an all-zero MAC lets the kernel pick one, an MTU of 0
 * keeps the default).  Each returns 0, or -1 with the reason in err.
 */
#ifndef MIGR_NSBUILD_H
#define MIGR_NSBUILD_H

#include "nsdump.h"

int	nsbuild_create(const char *ns, char *err, size_t errlen);
int	nsbuild_apply(const char *ns, const struct nsdump *, const char *hostif,
	    char *err, size_t errlen);
int	nsbuild_carrier(const char *hostif, char *err, size_t errlen);
/* The outer end on the bridge, then the wait until it forwards
 * (NSBUILD_FORWARD_MS at most): nsbuild_attach() at once, or its two
 * halves for a caller that polls from its loop. */
#define NSBUILD_FORWARD_MS	2000
#define NSBUILD_FORWARD_POLL_MS	2
int	nsbuild_enslave(const char *hostif, const char *bridge, char *err,
	    size_t errlen);
int	nsbuild_forwarding(const char *hostif);		/* 1 yes, 0 not yet */
/* Poll every NSBUILD_FORWARD_POLL_MS for up to ms until it forwards:
 * 0, or -1 with err (the rest of a wait migrd started as a timer). */
int	nsbuild_forwarding_wait(const char *hostif, const char *bridge, int ms,
	    char *err, size_t errlen);
int	nsbuild_attach(const char *hostif, const char *bridge, char *err,
	    size_t errlen);
int	nsbuild_delete(const char *ns, const char *hostif, char *err,
	    size_t errlen);

#endif
