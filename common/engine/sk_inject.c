/* SPDX-License-Identifier: ISC */
/*
 * Replay what a peer sent that the repair API cannot put back:
 *
 *  - TCP: its FIN (CLOSE_WAIT, LAST_ACK, CLOSING), its acknowledgement of
 *    our FIN (FIN_WAIT2: without it the restored socket would retransmit
 *    the FIN to a peer that may have closed since, and get a RST), and
 *    the end of a connection its owner still holds (ENDED: the FIN
 *    exchange completed, or a RST);
 *  - UDP: every datagram that sat unread, from its sender to the address
 *    it was sent to.
 *
 * As CRIU does for the FIN, the packet is rebuilt as one from the peer's
 * address and given to the local stack: a raw IPPROTO_RAW socket (header
 * included, both families) in the socket's own namespace.  The
 * destination is a local address, so the route sends it through lo and
 * the packet keeps that route on input (no reverse-path check, and a
 * lock that passes lo lets it in).  TCP segments carry no options: Linux
 * does not require timestamps on every segment.  Whatever the restored
 * socket answers goes to the peer (dropped by the lock, or a harmless
 * duplicate).
 */
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_priv.h"


static uint32_t
csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len > 1) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static bool
v4mapped(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(
	    &((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* An IPv4-mapped IPv6 address as the IPv4 one it stands for. */
static void
unmap(const struct sockaddr_storage *in, struct sockaddr_storage *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)in;
	struct sockaddr_in *s4 = (struct sockaddr_in *)out;

	if (!v4mapped(in)) {
		*out = *in;
		return;
	}
	memset(out, 0, sizeof(*out));
	s4->sin_family = AF_INET;
	s4->sin_port = s6->sin6_port;
	memcpy(&s4->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
}

/*
 * Send the L4 segment l4 (l4len bytes, checksum field at csum_off zero)
 * of protocol proto from src to dst through a raw socket, with the
 * pseudo-header checksum filled in.
 */
static int
inject(const struct sockaddr_storage *src0, const struct sockaddr_storage *dst0,
    int proto, uint8_t *l4, size_t l4len, size_t csum_off)
{
	struct sockaddr_storage src, dst, to;
	uint8_t *pkt, pseudo[40];
	size_t hlen, plen;
	uint32_t sum;
	int fd, rc = -1;
	uint16_t c;

	unmap(src0, &src);
	unmap(dst0, &dst);
	/* an IPv4 packet counts its header in its 16-bit length */
	if (src.ss_family != dst.ss_family ||
	    l4len > (src.ss_family == AF_INET ? 65535 - 20 : 65535)) {
		sk_log(LOG_WARNING, "sk_inject: %zu bytes between families %d "
		    "and %d", l4len, src.ss_family, dst.ss_family);
		return -1;
	}
	hlen = src.ss_family == AF_INET ? sizeof(struct ip) :
	    sizeof(struct ip6_hdr);
	if ((pkt = calloc(1, hlen + l4len)) == NULL) {
		sk_log_errno("sk_inject: calloc");
		return -1;
	}
	memset(&to, 0, sizeof(to));
	if (src.ss_family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&src;
		struct sockaddr_in *d = (struct sockaddr_in *)&dst;
		struct ip *ip = (struct ip *)pkt;

		ip->ip_v = 4;
		ip->ip_hl = sizeof(struct ip) / 4;
		ip->ip_len = htons((uint16_t)(hlen + l4len));
		ip->ip_ttl = 64;
		ip->ip_p = (uint8_t)proto;
		ip->ip_src = s->sin_addr;
		ip->ip_dst = d->sin_addr;
		memcpy(pseudo, &s->sin_addr, 4);
		memcpy(pseudo + 4, &d->sin_addr, 4);
		pseudo[8] = 0;
		pseudo[9] = (uint8_t)proto;
		pseudo[10] = (uint8_t)(l4len >> 8);
		pseudo[11] = (uint8_t)l4len;
		plen = 12;
		((struct sockaddr_in *)&to)->sin_family = AF_INET;
		((struct sockaddr_in *)&to)->sin_addr = d->sin_addr;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)&dst;
		struct ip6_hdr *ip6 = (struct ip6_hdr *)pkt;

		ip6->ip6_flow = htonl(6u << 28);
		ip6->ip6_plen = htons((uint16_t)l4len);
		ip6->ip6_nxt = (uint8_t)proto;
		ip6->ip6_hlim = 64;
		ip6->ip6_src = s->sin6_addr;
		ip6->ip6_dst = d->sin6_addr;
		memcpy(pseudo, &s->sin6_addr, 16);
		memcpy(pseudo + 16, &d->sin6_addr, 16);
		pseudo[32] = (uint8_t)(l4len >> 24);
		pseudo[33] = (uint8_t)(l4len >> 16);
		pseudo[34] = (uint8_t)(l4len >> 8);
		pseudo[35] = (uint8_t)l4len;
		pseudo[36] = pseudo[37] = pseudo[38] = 0;
		pseudo[39] = (uint8_t)proto;
		plen = 40;
		((struct sockaddr_in6 *)&to)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&to)->sin6_addr = d->sin6_addr;
		((struct sockaddr_in6 *)&to)->sin6_scope_id = d->sin6_scope_id;
	}
	sum = csum_add(csum_add(0, pseudo, plen), l4, l4len);
	c = csum_fold(sum);
	if (proto == IPPROTO_UDP && c == 0)
		c = 0xffff;		/* 0 would mean "no checksum" */
	memcpy(l4 + csum_off, &c, sizeof(c));
	memcpy(pkt + hlen, l4, l4len);

	if ((fd = socket(src.ss_family, SOCK_RAW | SOCK_CLOEXEC,
	    IPPROTO_RAW)) < 0) {
		sk_log_errno("sk_inject: raw socket");
		goto out_free;
	}
	if (sendto(fd, pkt, hlen + l4len, 0, (struct sockaddr *)&to,
	    src.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6)) != (ssize_t)(hlen + l4len)) {
		sk_log_errno("sk_inject: sendto");
		goto out_close;
	}
	rc = 0;
out_close:
	close(fd);
out_free:
	free(pkt);
	return rc;
}

int
sk_inject_tcp(const struct sk_state *st, uint32_t seq, uint32_t ack,
    uint16_t win, int flags)
{
	struct tcphdr th;

	memset(&th, 0, sizeof(th));
	th.source = htons(sk_addr_port(&st->remote));
	th.dest = htons(sk_addr_port(&st->local));
	th.seq = htonl(seq);
	th.ack_seq = htonl(ack);
	th.doff = sizeof(th) / 4;
	th.fin = (flags & SK_INJ_FIN) != 0;
	th.rst = (flags & SK_INJ_RST) != 0;
	th.ack = (flags & SK_INJ_ACK) != 0;
	th.window = htons(win);
	return inject(&st->remote, &st->local, IPPROTO_TCP, (uint8_t *)&th,
	    sizeof(th), offsetof(struct tcphdr, check));
}

int
sk_inject_udp(const struct sk_dgram *dg)
{
	struct udphdr *uh;
	uint8_t *l4;
	size_t len = sizeof(*uh) + dg->len;
	int rc;

	if ((l4 = calloc(1, len)) == NULL) {
		sk_log_errno("sk_inject_udp: calloc");
		return -1;
	}
	uh = (struct udphdr *)l4;
	uh->source = htons(sk_addr_port(&dg->from));
	uh->dest = htons(sk_addr_port(&dg->to));
	uh->len = htons((uint16_t)len);
	if (dg->len > 0)
		memcpy(l4 + sizeof(*uh), dg->data, dg->len);
	rc = inject(&dg->from, &dg->to, IPPROTO_UDP, l4, len,
	    offsetof(struct udphdr, check));
	free(l4);
	return rc;
}
