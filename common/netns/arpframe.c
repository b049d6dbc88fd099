/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arpframe.h"
#include "errbuf.h"

void
arp_request(struct arp_eth *a, const uint8_t sha[ETH_ALEN], const void *spa,
    const void *tpa)
{
	memset(a, 0, sizeof(*a));
	a->hdr.ar_hrd = htons(ARPHRD_ETHER);
	a->hdr.ar_pro = htons(ETH_P_IP);
	a->hdr.ar_hln = ETH_ALEN;
	a->hdr.ar_pln = 4;
	a->hdr.ar_op = htons(ARPOP_REQUEST);
	memcpy(a->sha, sha, ETH_ALEN);
	if (spa != NULL)
		memcpy(a->spa, spa, 4);
	memcpy(a->tpa, tpa, 4);
}

struct sockaddr_ll
arp_broadcast(int ifindex)
{
	struct sockaddr_ll sl = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ARP),
		.sll_ifindex = ifindex,
		.sll_halen = ETH_ALEN,
		.sll_addr = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};

	return sl;
}

int
if_mac(int fd, const char *ifname, uint8_t mac[ETH_ALEN], char *err,
    size_t errlen)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		errbuf_errno(err, errlen, "MAC of %s", ifname);
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return 0;
}
