/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <ifaddrs.h>
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

#include "announce.h"
#include "arpframe.h"
#include "errbuf.h"
#include "netns.h"

struct unsol_na {
	struct nd_neighbor_advert	na;
	uint8_t				opt_type, opt_len;
	uint8_t				mac[ETH_ALEN];
} __attribute__((packed));

static int
send_garp(int ifindex, const uint8_t mac[ETH_ALEN], const struct in_addr *a,
    char *err, size_t errlen)
{
	struct sockaddr_ll to = arp_broadcast(ifindex);
	struct arp_eth g;
	int fd, rc;

	arp_request(&g, mac, a, a);
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ARP));
	if (fd < 0) {
		errbuf_errno(err, errlen, "packet socket");
		return -1;
	}
	rc = (int)sendto(fd, &g, sizeof(g), 0, (struct sockaddr *)&to, sizeof(to));
	if (rc < 0)
		errbuf_errno(err, errlen, "gratuitous ARP: sendto");
	close(fd);
	return rc < 0 ? -1 : 0;
}

static int
send_na(int ifindex, const uint8_t mac[ETH_ALEN], const struct in6_addr *a,
    char *err, size_t errlen)
{
	struct sockaddr_in6 to = {
		.sin6_family = AF_INET6,
		.sin6_scope_id = (uint32_t)ifindex,
	}, from = {
		.sin6_family = AF_INET6,
		.sin6_addr = *a,
	};
	struct unsol_na m;
	int fd, hops = 255, rc;
	unsigned idx = (unsigned)ifindex;

	inet_pton(AF_INET6, "ff02::1", &to.sin6_addr);
	memset(&m, 0, sizeof(m));
	m.na.nd_na_type = ND_NEIGHBOR_ADVERT;
	m.na.nd_na_flags_reserved = ND_NA_FLAG_OVERRIDE;
	m.na.nd_na_target = *a;
	m.opt_type = ND_OPT_TARGET_LINKADDR;
	m.opt_len = 1;			/* in units of 8 bytes */
	memcpy(m.mac, mac, ETH_ALEN);

	fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	if (fd < 0) {
		errbuf_errno(err, errlen, "raw ICMPv6 socket");
		return -1;
	}
	/* RFC 4861 7.1.2: a receiver drops ND with a hop limit below 255 */
	setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
	setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof(idx));
	/* the source is the address itself where the kernel lets us */
	(void)bind(fd, (struct sockaddr *)&from, sizeof(from));
	rc = (int)sendto(fd, &m, sizeof(m), 0, (struct sockaddr *)&to, sizeof(to));
	if (rc < 0)
		errbuf_errno(err, errlen, "neighbour advertisement: sendto");
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* "addr: why" of the first failure, kept in err. */
static void
note_failure(int family, const void *addr, const char *why, char *err,
    size_t errlen, int *failed)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, a, sizeof(a));
	if (*failed == 0)
		errbuf(err, errlen, "%s: %s", a, why);
	(*failed)++;
}

int
announce_addrs(const char *ns, const char *ifname, char *err, size_t errlen)
{
	struct ifaddrs *ifa, *i;
	uint8_t mac[ETH_ALEN];
	char why[256];
	int saved, fd, ifindex, sent = 0, failed = 0;

	saved = netns_enter(ns, err, errlen);
	if (saved < 0)
		return -1;
	ifindex = (int)if_nametoindex(ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ifindex == 0 || fd < 0) {
		errbuf_errno(err, errlen, "%s in %s", ifname, ns);
		failed = 1;
		goto out_leave;
	}
	if (if_mac(fd, ifname, mac, err, errlen) < 0) {
		failed = 1;
		goto out_close;
	}
	if (getifaddrs(&ifa) < 0) {
		errbuf_errno(err, errlen, "getifaddrs");
		failed = 1;
		goto out_close;
	}
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || strcmp(i->ifa_name, ifname) != 0)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			const struct in_addr *a =
			    &((struct sockaddr_in *)i->ifa_addr)->sin_addr;

			if (send_garp(ifindex, mac, a, why, sizeof(why)) < 0)
				note_failure(AF_INET, a, why, err, errlen,
				    &failed);
			else
				sent++;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *a =
			    &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;

			/*
			 * Not a moved address: the kernel makes it anew from
			 * the MAC, and while its DAD runs it is tentative and
			 * cannot be the source of anything.  The switches
			 * learn the MAC from the other announcements.
			 */
			if (IN6_IS_ADDR_LINKLOCAL(a))
				continue;
			if (send_na(ifindex, mac, a, why, sizeof(why)) < 0)
				note_failure(AF_INET6, a, why, err, errlen,
				    &failed);
			else
				sent++;
		}
	}
	freeifaddrs(ifa);
out_close:
	if (fd >= 0)
		close(fd);
out_leave:
	if (netns_leave(saved, failed ? NULL : err, errlen) < 0)
		failed++;
	return failed ? -1 : sent;
}
