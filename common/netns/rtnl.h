/* SPDX-License-Identifier: ISC */
/*
 * rtnetlink through libmnl for links, addresses and routes: what
 * "ns create" does, and what a migration's destination rebuilds.  Each
 * call opens a NETLINK_ROUTE socket in the wanted network namespace
 * (nsfd -1: the caller's own), sends one request with NLM_F_ACK, and
 * returns 0 or -1 with the kernel's errno and a one-line reason in err.
 */
#ifndef MIGR_RTNL_H
#define MIGR_RTNL_H

#include <stddef.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

#include "nsarg.h"

/*
 * veth pair: host_if in the caller's netns, peer_if made in nsfd, with
 * peer_mac (NULL: random) and mtu on both ends (0: the default)
 */
int	rtnl_veth_add(const char *host_if, const char *peer_if, int nsfd,
	    const uint8_t *peer_mac, uint32_t mtu, char *err, size_t errlen);
int	rtnl_link_del(const char *ifname, char *err, size_t errlen);
/* master (NULL: unchanged), mac (NULL: unchanged), and up */
int	rtnl_link_set(int nsfd, const char *ifname, const char *master,
	    const uint8_t *mac, char *err, size_t errlen);
int	rtnl_addr_add(int nsfd, const char *ifname, const struct nsarg_addr *a,
	    char *err, size_t errlen);
int	rtnl_route_add(int nsfd, const char *ifname, const struct nsarg_route *r,
	    char *err, size_t errlen);
/* Dump request of type (RTM_GETLINK, ...) for family; cb per message. */
int	rtnl_dump(int nsfd, uint16_t type, uint8_t family, size_t hdrlen,
	    mnl_cb_t cb, void *arg, char *err, size_t errlen);

#endif
