/* SPDX-License-Identifier: ISC */
/*
 * The traffic lock of a namespace during a migration: nftables tables
 * inside the namespace that drop every packet in and out except on
 * loopback (family inet), and ARP (family arp), so no segment reaches
 * or leaves the sockets being moved.  A source's lock still answers who
 * asks for its addresses until just before COMMIT; after that, and on a
 * destination, the locked namespace says nothing that would draw its
 * MAC's traffic to it.
 * Made through libnftables (lifted by netlink directly: nftbatch.h).  The
 * table is the lock's only state, so a
 * restarted daemon finds a lock it left (nslock_held).
 *
 * The lock sits at priority -400, before conntrack and before any table
 * of the workload's own.  Dropped segments are not lost to TCP: the
 * sender retransmits them once the namespace runs again, on whichever
 * host that is.
 */
#ifndef MIGR_NSLOCK_H
#define MIGR_NSLOCK_H

#include <stddef.h>

#define NSLOCK_TABLE	"migr_lock"
#define NSLOCK_GATE	"migr_gate"

/* silent: a destination's (nothing there owns the addresses yet) */
int	nslock_take(const char *ns, char *err, size_t errlen);
/*
 * A source's: the same lock, except that ARP requests and neighbour
 * solicitations are answered until nslock_mute(), which comes before
 * COMMIT.  With replay, what comes in is queued for migrd (replay.h),
 * not dropped: its reader must be bound first.
 */
int	nslock_take_source(const char *ns, int replay, char *err,
	    size_t errlen);
int	nslock_mute(const char *ns, char *err, size_t errlen);
/*
 * Let the packets of n connections through a source's lock, both ways:
 * orphans, connections a program closed while locked (light mode lets
 * the tasks run locked, nslock.c's callers), deliver their last bytes
 * that way, since nothing can move a socket without a file.  At most
 * NSLOCK_PASS_MAX at once; the rules go with the lock.
 */
#define NSLOCK_PASS_MAX	64
struct sockdiag_sock;
int	nslock_pass(const char *ns, const struct sockdiag_sock *, size_t n,
	    char *err, size_t errlen);
/* lock and gate, whichever is there, and CRIU's (checkpoint mode) */
int	nslock_release(const char *ns, char *err, size_t errlen);
/* lock and gate only, without listing the tables first: faster, for a
 * namespace CRIU's dump never locked (a destination's) */
int	nslock_unlock(const char *ns, char *err, size_t errlen);
/*
 * The gate, before the freeze: incoming SYNs are dropped, everything
 * else passes, so handshakes under way finish into their listener's
 * accept queue (the dump carries those) instead of being cut in
 * SYN_RECV, which no socket holds and nothing can move: the client would
 * think itself connected to a host that never heard of it.  The caller
 * counts the handshakes still under way by sock_diag (sockdiag.h).
 */
int	nslock_gate(const char *ns, char *err, size_t errlen);
/* 1 held, 0 not held, -1 cannot tell */
int	nslock_held(const char *ns, char *err, size_t errlen);

#endif
