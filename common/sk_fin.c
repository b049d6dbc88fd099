/*
 * Replay what the peer had sent that the repair API cannot restore:
 * its FIN (CLOSE_WAIT, LAST_ACK, CLOSING), and its acknowledgement of
 * our FIN (FIN_WAIT2: without it the restored socket would retransmit
 * the FIN to a peer that may have closed since, and get a RST).  As
 * CRIU does for the FIN, the segment is rebuilt as a packet from the
 * peer's address and given to the local stack.  Here that is a raw IPPROTO_RAW socket
 * (header included, both families) in the socket's own namespace:
 * the destination is a local address, so the route sends it through
 * lo and the packet keeps that route on input (no reverse-path check,
 * and a lock that passes lo lets it in).  It carries no TCP options:
 * Linux 6.1 does not require timestamps on every segment.  The ACK the
 * restored socket answers with goes to the peer (dropped by the lock,
 * or a harmless duplicate).
 */
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_priv.h"

static uint32_t
sk_csum_add(uint32_t sum, const void *data, size_t len)
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
sk_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static void
sk_fin_tcp(struct tcphdr *th, uint16_t sport, uint16_t dport, uint32_t seq,
    uint32_t ack, uint16_t win, int fin)
{
	memset(th, 0, sizeof(*th));
	th->source = sport;
	th->dest = dport;
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = sizeof(*th) / 4;
	th->fin = fin != 0;
	th->ack = 1;
	th->window = htons(win);
}

static bool
sk_v4mapped(const struct sockaddr_storage *ss)
{
	return IN6_IS_ADDR_V4MAPPED(
	    &((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static void
sk_unmap(const struct sockaddr_storage *in, struct sockaddr_storage *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)in;
	struct sockaddr_in *s4 = (struct sockaddr_in *)out;

	memset(out, 0, sizeof(*out));
	s4->sin_family = AF_INET;
	s4->sin_port = s6->sin6_port;
	memcpy(&s4->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
}

/* A dual-stack socket talking to an IPv4 peer gets an IPv4 FIN. */
static int
sk_fin_inject_mapped(const struct sk_state *st, uint32_t seq, uint32_t ack,
    uint16_t win, int fin)
{
	struct sk_state *v4;
	int rc;

	if ((v4 = sk_state_new()) == NULL) {
		sk_log_errno("%s: sk_state_new", __func__);
		return -1;
	}
	v4->family = AF_INET;
	sk_unmap(&st->local, &v4->local);
	sk_unmap(&st->remote, &v4->remote);
	rc = sk_peer_inject(v4, seq, ack, win, fin);
	sk_state_free(v4);
	return rc;
}

int
sk_peer_inject(const struct sk_state *st, uint32_t seq, uint32_t ack,
    uint16_t win, int fin)
{
	union {
		struct { struct ip ip; struct tcphdr th; } v4;
		struct { struct ip6_hdr ip6; struct tcphdr th; } v6;
	} pkt;
	struct sockaddr_storage dst;
	uint8_t proto_len[4];
	uint32_t sum;
	size_t len;
	int fd, rc = -1;

	memset(&pkt, 0, sizeof(pkt));
	memset(&dst, 0, sizeof(dst));
	if (st->family == AF_INET6 && sk_v4mapped(&st->local) &&
	    sk_v4mapped(&st->remote))
		return sk_fin_inject_mapped(st, seq, ack, win, fin);
	if (st->family == AF_INET) {
		const struct sockaddr_in *l = (const void *)&st->local;
		const struct sockaddr_in *r = (const void *)&st->remote;
		struct sockaddr_in *d = (struct sockaddr_in *)&dst;

		len = sizeof(pkt.v4);
		pkt.v4.ip.ip_v = 4;
		pkt.v4.ip.ip_hl = sizeof(struct ip) / 4;
		pkt.v4.ip.ip_len = htons((uint16_t)len);
		pkt.v4.ip.ip_ttl = 64;
		pkt.v4.ip.ip_p = IPPROTO_TCP;
		pkt.v4.ip.ip_src = r->sin_addr;
		pkt.v4.ip.ip_dst = l->sin_addr;
		sk_fin_tcp(&pkt.v4.th, r->sin_port, l->sin_port, seq, ack, win,
		    fin);
		sum = sk_csum_add(0, &r->sin_addr, 4);
		sum = sk_csum_add(sum, &l->sin_addr, 4);
		proto_len[0] = 0;
		proto_len[1] = IPPROTO_TCP;
		proto_len[2] = 0;
		proto_len[3] = sizeof(struct tcphdr);
		sum = sk_csum_add(sum, proto_len, 4);
		sum = sk_csum_add(sum, &pkt.v4.th, sizeof(struct tcphdr));
		pkt.v4.th.check = sk_csum_fold(sum);
		d->sin_family = AF_INET;
		d->sin_addr = l->sin_addr;
	} else {
		const struct sockaddr_in6 *l = (const void *)&st->local;
		const struct sockaddr_in6 *r = (const void *)&st->remote;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)&dst;
		uint8_t pseudo_tail[8] = { 0, 0, 0, sizeof(struct tcphdr),
		    0, 0, 0, IPPROTO_TCP };

		len = sizeof(pkt.v6);
		pkt.v6.ip6.ip6_flow = htonl(6u << 28);
		pkt.v6.ip6.ip6_plen = htons(sizeof(struct tcphdr));
		pkt.v6.ip6.ip6_nxt = IPPROTO_TCP;
		pkt.v6.ip6.ip6_hlim = 64;
		pkt.v6.ip6.ip6_src = r->sin6_addr;
		pkt.v6.ip6.ip6_dst = l->sin6_addr;
		sk_fin_tcp(&pkt.v6.th, r->sin6_port, l->sin6_port, seq, ack,
		    win, fin);
		sum = sk_csum_add(0, &r->sin6_addr, 16);
		sum = sk_csum_add(sum, &l->sin6_addr, 16);
		sum = sk_csum_add(sum, pseudo_tail, sizeof(pseudo_tail));
		sum = sk_csum_add(sum, &pkt.v6.th, sizeof(struct tcphdr));
		pkt.v6.th.check = sk_csum_fold(sum);
		d->sin6_family = AF_INET6;
		d->sin6_addr = l->sin6_addr;
		d->sin6_scope_id = l->sin6_scope_id;
	}

	if ((fd = socket(st->family, SOCK_RAW | SOCK_CLOEXEC,
	    IPPROTO_RAW)) < 0) {
		sk_log_errno("%s: raw socket", __func__);
		return -1;
	}
	if (sendto(fd, &pkt, len, 0, (struct sockaddr *)&dst,
	    st->family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6)) != (ssize_t)len) {
		sk_log_errno("%s: sendto", __func__);
		goto out_close;
	}
	rc = 0;

out_close:
	close(fd);
	return rc;
}
