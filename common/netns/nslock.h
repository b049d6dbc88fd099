/* SPDX-License-Identifier: ISC */
/*
 * The traffic lock of a namespace during a migration: nftables tables
 * inside the namespace that drop every packet in and out except on
 * loopback (family inet), and every ARP packet (family arp), so no
 * segment reaches or leaves the sockets being moved and the locked
 * namespace says nothing that would draw its MAC's traffic back to it.
 * Made through libnftables.  The table is the lock's only state, so a
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

int	nslock_take(const char *ns, char *err, size_t errlen);
/* The same lock, but what comes in is queued for migrd (replay.h), not
 * dropped: its reader must be bound first. */
int	nslock_take_replay(const char *ns, char *err, size_t errlen);
/* lock and gate, whichever is there */
int	nslock_release(const char *ns, char *err, size_t errlen);
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
