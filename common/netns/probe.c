/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arpframe.h"
#include "errbuf.h"
#include "probe.h"

struct ns_pkt {
	struct nd_neighbor_solicit	ns;
	uint8_t				opt_type, opt_len;
	uint8_t				mac[ETH_ALEN];
} __attribute__((packed));

static int
arp_open(int ifindex, const uint8_t src[ETH_ALEN], struct probe *p,
    char *err, size_t errlen)
{
	struct sockaddr_ll sl = arp_broadcast(ifindex);
	struct arp_eth a;
	size_t i;

	p->arp_fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    htons(ETH_P_ARP));
	if (p->arp_fd < 0 ||
	    bind(p->arp_fd, (struct sockaddr *)&sl, sizeof(sl)) < 0) {
		errbuf_errno(err, errlen, "ARP socket on %s", p->bridge);
		return -1;
	}
	for (i = 0; i < p->naddrs; i++) {
		if (p->addrs[i].family != AF_INET)
			continue;
		/* sender address 0.0.0.0 */
		arp_request(&a, src, NULL, p->addrs[i].addr);
		if (sendto(p->arp_fd, &a, sizeof(a), 0, (struct sockaddr *)&sl,
		    sizeof(sl)) < 0) {
			errbuf_errno(err, errlen, "ARP probe on %s", p->bridge);
			return -1;
		}
	}
	return 0;
}

/* -1 with why in p->skipped when the IPv6 addresses cannot be probed. */
static int
nd_open(int ifindex, const uint8_t src[ETH_ALEN], struct probe *p)
{
	struct icmp6_filter filt;
	struct sockaddr_in6 to = {
		.sin6_family = AF_INET6,
		.sin6_scope_id = (uint32_t)ifindex,
	};
	struct ns_pkt m;
	unsigned idx = (unsigned)ifindex;
	int hops = 255;
	size_t i;

	p->nd_fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    IPPROTO_ICMPV6);
	ICMP6_FILTER_SETBLOCKALL(&filt);
	ICMP6_FILTER_SETPASS(ND_NEIGHBOR_ADVERT, &filt);
	if (p->nd_fd < 0 ||
	    setsockopt(p->nd_fd, SOL_SOCKET, SO_BINDTODEVICE, p->bridge,
	    (socklen_t)strlen(p->bridge)) < 0 ||
	    setsockopt(p->nd_fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filt,
	    sizeof(filt)) < 0 ||
	    /* RFC 4861 7.1.1: a receiver drops ND below hop limit 255 */
	    setsockopt(p->nd_fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops,
	    sizeof(hops)) < 0 ||
	    setsockopt(p->nd_fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx,
	    sizeof(idx)) < 0) {
		snprintf(p->skipped, sizeof(p->skipped), "IPv6 socket on %s: "
		    "%s", p->bridge, strerror(errno));
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.ns.nd_ns_type = ND_NEIGHBOR_SOLICIT;
	m.opt_type = ND_OPT_SOURCE_LINKADDR;
	m.opt_len = 1;			/* in units of 8 bytes */
	memcpy(m.mac, src, ETH_ALEN);
	for (i = 0; i < p->naddrs; i++) {
		const uint8_t *a = p->addrs[i].addr;

		if (p->addrs[i].family != AF_INET6)
			continue;
		memcpy(&m.ns.nd_ns_target, a, 16);
		/* the solicited-node group: ff02::1:ffXX:XXXX */
		memset(&to.sin6_addr, 0, 16);
		to.sin6_addr.s6_addr[0] = 0xff;
		to.sin6_addr.s6_addr[1] = 0x02;
		to.sin6_addr.s6_addr[11] = 0x01;
		to.sin6_addr.s6_addr[12] = 0xff;
		memcpy(&to.sin6_addr.s6_addr[13], a + 13, 3);
		if (sendto(p->nd_fd, &m, sizeof(m), 0, (struct sockaddr *)&to,
		    sizeof(to)) < 0) {
			snprintf(p->skipped, sizeof(p->skipped), "neighbour "
			    "solicitation on %s: %s (no IPv6 link-local "
			    "address there?)", p->bridge, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int
probe_start(struct probe *p, const char *bridge, const struct nsdump *nd,
    char *err, size_t errlen)
{
	uint8_t src[ETH_ALEN];
	size_t i;
	int ifindex, n4 = 0, n6 = 0;

	memset(p, 0, sizeof(*p));
	p->arp_fd = p->nd_fd = -1;
	snprintf(p->bridge, sizeof(p->bridge), "%s", bridge);
	for (i = 0; i < nd->nlinks; i++)
		if (strcmp(nd->links[i].name, "eth0") == 0)
			memcpy(p->mac, nd->links[i].mac, ETH_ALEN);
	for (i = 0; i < nd->naddrs && p->naddrs < PROBE_MAX; i++) {
		const struct sk_ifaddr *a = &nd->addrs[i];

		/* only what goes on the LAN, and is moved */
		if (strcmp(a->dev, "eth0") != 0 || (a->family == AF_INET6 &&
		    a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80))
			continue;
		p->addrs[p->naddrs].family = a->family;
		memcpy(p->addrs[p->naddrs].addr, a->addr, 16);
		p->naddrs++;
		n4 += a->family == AF_INET;
		n6 += a->family == AF_INET6;
	}
	if (p->naddrs == 0)
		return 0;
	if ((ifindex = (int)if_nametoindex(bridge)) == 0) {
		errbuf_errno(err, errlen, "bridge %s", bridge);
		return -1;
	}
	if ((p->arp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
	    if_mac(p->arp_fd, bridge, src, err, errlen) < 0) {
		if (p->arp_fd < 0)
			errbuf_errno(err, errlen, "socket");
		probe_free(p);
		return -1;
	}
	close(p->arp_fd);
	p->arp_fd = -1;
	if (n4 > 0 && arp_open(ifindex, src, p, err, errlen) < 0) {
		probe_free(p);
		return -1;
	}
	if (n6 > 0 && nd_open(ifindex, src, p) < 0 && p->nd_fd >= 0) {
		close(p->nd_fd);
		p->nd_fd = -1;
	}
	return 0;
}

/* Index of addr (family) in p, or -1. */
static int
ours(const struct probe *p, int family, const uint8_t *addr)
{
	size_t i;

	for (i = 0; i < p->naddrs; i++)
		if (p->addrs[i].family == family &&
		    memcmp(p->addrs[i].addr, addr, family == AF_INET ? 4 : 16)
		    == 0)
			return (int)i;
	return -1;
}

static void
conflict(const struct probe *p, int family, const uint8_t *addr,
    const uint8_t *mac, char *why, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, a, sizeof(a));
	snprintf(why, len, "%s is in use on %s by %02x:%02x:%02x:%02x:%02x:%02x,"
	    " not by the namespace's MAC %02x:%02x:%02x:%02x:%02x:%02x", a,
	    p->bridge, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
	    p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5]);
}

static int
arp_check(const struct probe *p, char *why, size_t len)
{
	struct arp_eth a;
	ssize_t n;

	while ((n = recv(p->arp_fd, &a, sizeof(a), 0)) >= 0) {
		if ((size_t)n < sizeof(a) || a.hdr.ar_hln != ETH_ALEN ||
		    a.hdr.ar_pln != 4 || a.hdr.ar_pro != htons(ETH_P_IP))
			continue;
		/* a reply to a probe, or anything sent from the address */
		if (ours(p, AF_INET, a.spa) >= 0 &&
		    memcmp(a.sha, p->mac, ETH_ALEN) != 0) {
			conflict(p, AF_INET, a.spa, a.sha, why, len);
			return 1;
		}
	}
	return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
}

static int
nd_check(const struct probe *p, char *why, size_t len)
{
	uint8_t buf[1280];
	const struct nd_neighbor_advert *na = (const void *)buf;
	size_t off;
	ssize_t n;

	while ((n = recv(p->nd_fd, buf, sizeof(buf), 0)) >= 0) {
		if ((size_t)n < sizeof(*na) ||
		    na->nd_na_type != ND_NEIGHBOR_ADVERT ||
		    ours(p, AF_INET6, na->nd_na_target.s6_addr) < 0)
			continue;
		/* its options, 8-byte units: the target's link-layer one */
		for (off = sizeof(*na); off + 8 <= (size_t)n &&
		    buf[off + 1] != 0; off += (size_t)buf[off + 1] * 8) {
			if (buf[off] != ND_OPT_TARGET_LINKADDR)
				continue;
			if (memcmp(buf + off + 2, p->mac, ETH_ALEN) != 0) {
				conflict(p, AF_INET6,
				    na->nd_na_target.s6_addr, buf + off + 2,
				    why, len);
				return 1;
			}
		}
	}
	return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
}

int
probe_finish(struct probe *p, char *why, size_t len)
{
	int rc;

	if (p->arp_fd >= 0 && (rc = arp_check(p, why, len)) != 0) {
		if (rc < 0)
			errbuf_errno(why, len, "reading ARP on %s", p->bridge);
		return rc;
	}
	if (p->nd_fd >= 0 && (rc = nd_check(p, why, len)) != 0) {
		if (rc < 0)
			errbuf_errno(why, len, "reading ND on %s", p->bridge);
		return rc;
	}
	return 0;
}

void
probe_free(struct probe *p)
{
	if (p->arp_fd >= 0)
		close(p->arp_fd);
	if (p->nd_fd >= 0)
		close(p->nd_fd);
	p->arp_fd = p->nd_fd = -1;
}
