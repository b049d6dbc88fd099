/* SPDX-License-Identifier: ISC */
/*
 * The pieces of an ARP request on an Ethernet LAN that announce.c (a
 * gratuitous ARP from a moved MAC) and probe.c (an RFC 5227 probe from
 * the bridge) both send: the frame, its broadcast destination for a
 * packet socket, and an interface's MAC.
 */
#ifndef MIGR_ARPFRAME_H
#define MIGR_ARPFRAME_H

#include <net/ethernet.h>
#include <net/if_arp.h>
#include <netpacket/packet.h>
#include <stddef.h>
#include <stdint.h>

struct arp_eth {
	struct arphdr	hdr;
	uint8_t		sha[ETH_ALEN];
	uint8_t		spa[4];
	uint8_t		tha[ETH_ALEN];
	uint8_t		tpa[4];
} __attribute__((packed));

/* A request for tpa from sha, spa (NULL: 0.0.0.0, a probe). */
void	arp_request(struct arp_eth *, const uint8_t sha[ETH_ALEN],
	    const void *spa, const void *tpa);
/* Where a packet socket (ETH_P_ARP) sends it: broadcast on ifindex. */
struct sockaddr_ll arp_broadcast(int ifindex);
/* ifname's MAC, through fd (any socket of the interface's namespace). */
int	if_mac(int fd, const char *ifname, uint8_t mac[ETH_ALEN], char *err,
	    size_t errlen);

#endif
