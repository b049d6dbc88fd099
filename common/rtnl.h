/*
 * rtnetlink through libmnl for what "ns create" does to links, addresses
 * and routes.  Each call opens a NETLINK_ROUTE socket in the wanted
 * network namespace (nsfd -1: migrd's own), sends one request with
 * NLM_F_ACK, and returns 0 or -1 with the kernel's errno and a one-line
 * reason in err.  Creating and removing the namespace itself (the
 * /run/netns bind mount) stays with "ip netns" (tool.c).
 */
#ifndef MIGRD_NETLINK_H
#define MIGRD_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include "nsarg.h"

int	rtnl_init(void);
/* veth pair: host_if in migrd's netns, peer_if moved into nsfd */
int	rtnl_veth_add(const char *host_if, const char *peer_if, int nsfd,
	    char *err, size_t errlen);
int	rtnl_link_del(const char *ifname, char *err, size_t errlen);
/* master (NULL: unchanged), mac (NULL: unchanged), and up */
int	rtnl_link_set(int nsfd, const char *ifname, const char *master,
	    const uint8_t *mac, char *err, size_t errlen);
int	rtnl_addr_add(int nsfd, const char *ifname, const struct nsarg_addr *a,
	    char *err, size_t errlen);
int	rtnl_route_add(int nsfd, const char *ifname, const struct nsarg_route *r,
	    char *err, size_t errlen);

#endif
