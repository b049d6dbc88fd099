/* SPDX-License-Identifier: ISC */
/*
 * Multicast groups joined inside a namespace beyond the ones the kernel
 * joins by itself (all-nodes, all-routers, solicited-node).  A socket's
 * memberships cannot be read back from the socket (IP_ADD_MEMBERSHIP
 * has no getsockopt), so they cannot be carried: a namespace that has
 * any is refused, with the groups named.
 *
 * mcast_joined() returns how many such groups there are (their names in
 * why, "224.1.2.3 on eth0, ff15::1 on eth0"), or -1 and the reason.
 */
#ifndef MIGR_MCAST_H
#define MIGR_MCAST_H

#include <stddef.h>

int	mcast_joined(const char *ns, char *why, size_t whylen);

#endif
