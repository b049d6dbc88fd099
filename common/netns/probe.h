/* SPDX-License-Identifier: ISC */
/*
 * Is an address a namespace brings here someone else's on the LAN?
 * Before a migration coming in is accepted, the destination asks on its
 * bridge: an ARP probe (RFC 5227: sender address 0.0.0.0) for each IPv4
 * address of the namespace's eth0, a neighbour solicitation for each of
 * its IPv6 addresses but the link-local ones.  The namespace's own copy,
 * still live on the source, answers with the namespace's MAC; an answer,
 * or an ARP packet sent from the address, with any other MAC is a
 * conflict: the address belongs to another host (the LAN's gateway, a
 * neighbour) and announcing it here would take that host's traffic.
 *
 *	probe_start(&p, bridge, nd, err)   send the probes; -1 and why if
 *					   none could be sent (no bridge)
 *	... PROBE_WAIT_MS in the caller's event loop ...
 *	probe_finish(&p, why)		   0: no conflict; 1: the first
 *					   conflict in why ("10.77.0.10 is
 *					   in use on br0 by 52:54:...")
 *	probe_free(&p)
 *
 * The answers wait in the sockets' buffers meanwhile: nothing blocks.
 * An IPv6 probe needs an IPv6 link-local address on the bridge (its
 * source); without one, the IPv6 addresses are not probed (logged by the
 * caller from p.skipped).
 */
#ifndef MIGR_PROBE_H
#define MIGR_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "nsdump.h"

#define PROBE_WAIT_MS	200
#define PROBE_MAX	64

struct probe {
	int		 arp_fd, nd_fd;
	uint8_t		 mac[6];		/* the namespace's eth0 */
	struct {
		int	 family;
		uint8_t	 addr[16];
	}		 addrs[PROBE_MAX];
	size_t		 naddrs;
	char		 bridge[16];
	char		 skipped[160];		/* what was not probed, why */
};

int	probe_start(struct probe *, const char *bridge, const struct nsdump *,
	    char *err, size_t errlen);
int	probe_finish(struct probe *, char *why, size_t len);
void	probe_free(struct probe *);

#endif
