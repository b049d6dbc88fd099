/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

#include "arpframe.h"
#include "errbuf.h"
#include "netns.h"
#include "replay.h"

void
replay_list_init(struct replay_list *l, size_t max_pkts, size_t max_bytes)
{
	memset(l, 0, sizeof(*l));
	l->tail = &l->head;
	l->max_pkts = max_pkts;
	l->max_bytes = max_bytes;
}

int
replay_list_add(struct replay_list *l, const void *pkt, size_t len)
{
	struct replay_pkt *p;

	if (len == 0 || len > REPLAY_PKT_MAX || l->npkts >= l->max_pkts ||
	    len > l->max_bytes - l->bytes || l->bytes > l->max_bytes ||
	    (p = malloc(sizeof(*p) + len)) == NULL) {
		l->overflow++;
		return -1;
	}
	p->next = NULL;
	p->len = len;
	p->count = 1;
	memcpy(p->data, pkt, len);
	*l->tail = p;
	l->tail = &p->next;
	l->npkts++;
	l->bytes += len;
	l->kept++;
	return 0;
}

struct replay_pkt *
replay_list_take(struct replay_list *l, size_t max_bytes)
{
	struct replay_pkt *first = l->head, **pp = &l->head;
	size_t n = 0;

	/* at least one, however large */
	while (*pp != NULL && (pp == &l->head || n + (*pp)->len <= max_bytes)) {
		n += (*pp)->len;
		l->npkts--;
		l->bytes -= (*pp)->len;
		pp = &(*pp)->next;
	}
	l->head = *pp;
	*pp = NULL;
	if (l->head == NULL)
		l->tail = &l->head;
	return first;
}

/* The first n packets off the list (at least one). */
static struct replay_pkt *
take_pkts(struct replay_list *l, size_t n)
{
	struct replay_pkt *first = l->head, **pp = &l->head;

	while (*pp != NULL && (pp == &l->head || n > 0)) {
		l->npkts--;
		l->bytes -= (*pp)->len;
		pp = &(*pp)->next;
		if (n > 0)
			n--;
	}
	l->head = *pp;
	*pp = NULL;
	if (l->head == NULL)
		l->tail = &l->head;
	return first;
}

void
replay_pkt_free_chain(struct replay_pkt *p)
{
	struct replay_pkt *next;

	for (; p != NULL; p = next) {
		next = p->next;
		free(p);
	}
}

void
replay_list_free(struct replay_list *l)
{
	replay_pkt_free_chain(l->head);
	l->head = NULL;
	l->tail = &l->head;
	l->npkts = 0;
	l->bytes = 0;
}

/* --- the queue's reader (nfnetlink_queue through libmnl) --- */

static struct nlmsghdr *
nfq_header(char *buf, int type, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(REPLAY_QUEUE_NUM);
	return nlh;
}

/* Send one request and wait for its acknowledgement (blocking fd). */
static int
nfq_request(int fd, struct nlmsghdr *nlh, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	ssize_t n;
	int rc;

	nlh->nlmsg_seq = (unsigned)time(NULL);
	if (send(fd, nlh, nlh->nlmsg_len, 0) < 0) {
		errbuf_errno(err, errlen, "nfqueue: send");
		return -1;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		errbuf_errno(err, errlen, "nfqueue: recv");
		return -1;
	}
	rc = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, 0, NULL, NULL);
	if (rc < 0) {
		errbuf_errno(err, errlen, "nfqueue: configuration refused");
		return -1;
	}
	return 0;
}

int
replay_open(const char *ns, size_t max_pkts, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nfqnl_msg_config_cmd cmd = { .command = NFQNL_CFG_CMD_BIND };
	struct nfqnl_msg_config_params params = {
		.copy_range = htonl(REPLAY_PKT_MAX),
		.copy_mode = NFQNL_COPY_PACKET,
	};
	struct timeval tv = { 2, 0 };
	struct nlmsghdr *nlh;
	int saved, fd, size = 8 * 1024 * 1024;

	if ((saved = netns_enter(ns, err, errlen)) < 0)
		return -1;
	/* the socket belongs to the namespace it was made in */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		errbuf_errno(err, errlen, "nfqueue: socket");
	if (netns_leave(saved, err, errlen) < 0 || fd < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		errbuf_errno(err, errlen, "nfqueue: bind");
		goto fail;
	}
	/* room for a burst: what overflows it is counted, not kept */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	nlh = nfq_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK);
	mnl_attr_put(nlh, NFQA_CFG_CMD, sizeof(cmd), &cmd);
	if (nfq_request(fd, nlh, err, errlen) < 0)
		goto fail;
	nlh = nfq_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK);
	mnl_attr_put(nlh, NFQA_CFG_PARAMS, sizeof(params), &params);
	mnl_attr_put_u32(nlh, NFQA_CFG_QUEUE_MAXLEN,
	    htonl(max_pkts > 0 && max_pkts < 65536 ? (uint32_t)max_pkts :
	    65536));
	if (nfq_request(fd, nlh, err, errlen) < 0)
		goto fail;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		errbuf_errno(err, errlen, "nfqueue: O_NONBLOCK");
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

struct nfq_read_ctx {
	struct replay_list	*list;
	uint32_t		 last_id;
	int			 n;
};

static int
nfq_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, NFQA_MAX) > 0)
		tb[type] = a;
	return MNL_CB_OK;
}

static int
nfq_packet_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[NFQA_MAX + 1] = { NULL };
	struct nfq_read_ctx *c = data;
	const struct nfqnl_msg_packet_hdr *ph;
	size_t len;

	if ((nlh->nlmsg_type & 0xff) != NFQNL_MSG_PACKET)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(struct nfgenmsg), nfq_attr_cb, tb) < 0 ||
	    tb[NFQA_PACKET_HDR] == NULL ||
	    mnl_attr_get_payload_len(tb[NFQA_PACKET_HDR]) < sizeof(*ph))
		return MNL_CB_OK;
	ph = mnl_attr_get_payload(tb[NFQA_PACKET_HDR]);
	c->last_id = ntohl(ph->packet_id);
	c->n++;
	if (tb[NFQA_PAYLOAD] == NULL) {
		c->list->overflow++;
		return MNL_CB_OK;
	}
	len = mnl_attr_get_payload_len(tb[NFQA_PAYLOAD]);
	/* a packet cut to the copy range is not kept: it would be wrong */
	if (tb[NFQA_CAP_LEN] != NULL &&
	    ntohl(mnl_attr_get_u32(tb[NFQA_CAP_LEN])) != len) {
		c->list->overflow++;
		return MNL_CB_OK;
	}
	(void)replay_list_add(c->list, mnl_attr_get_payload(tb[NFQA_PAYLOAD]),
	    len);
	return MNL_CB_OK;
}

/* Every packet up to id: dropped (its copy is kept). */
static int
nfq_verdict_drop(int fd, uint32_t id, char *err, size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh = nfq_header(buf, NFQNL_MSG_VERDICT_BATCH, 0);
	struct nfqnl_msg_verdict_hdr vh = {
		.verdict = htonl(NF_DROP),
		.id = htonl(id),
	};

	mnl_attr_put(nlh, NFQA_VERDICT_HDR, sizeof(vh), &vh);
	if (send(fd, nlh, nlh->nlmsg_len, 0) < 0) {
		errbuf_errno(err, errlen, "nfqueue: verdict");
		return -1;
	}
	return 0;
}

int
replay_read(int fd, struct replay_list *l, char *err, size_t errlen)
{
	static char buf[REPLAY_PKT_MAX + 4096];
	struct nfq_read_ctx c = { .list = l };
	ssize_t n;
	int reads;

	for (reads = 0; reads < REPLAY_READ_BATCH; reads++) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* the socket overflowed: some were lost */
				l->overflow++;
				continue;
			}
			errbuf_errno(err, errlen, "nfqueue: recv");
			return -1;
		}
		(void)mnl_cb_run(buf, (size_t)n, 0, 0, nfq_packet_cb, &c);
	}
	if (c.n > 0 && nfq_verdict_drop(fd, c.last_id, err, errlen) < 0)
		return -1;
	return c.n;
}

/* --- checking and injecting --- */

static int
addr_in(int family, const void *a, const struct sk_ifaddr *addrs,
    size_t naddrs)
{
	size_t i;

	for (i = 0; i < naddrs; i++)
		if (addrs[i].family == family && memcmp(addrs[i].addr, a,
		    family == AF_INET ? 4 : 16) == 0)
			return 1;
	return 0;
}

int
replay_check(const void *pkt, size_t len, const struct sk_ifaddr *addrs,
    size_t naddrs, char *why, size_t whylen)
{
	const uint8_t *p = pkt;

	if (len < 20) {
		errbuf(why, whylen, "a packet of %zu bytes is too short", len);
		return -1;
	}
	if (len > REPLAY_PKT_MAX) {
		errbuf(why, whylen, "a packet of %zu bytes is too long", len);
		return -1;
	}
	/* addrs NULL: the shape only */
	switch (p[0] >> 4) {
	case 4:
		if ((p[0] & 0x0f) < 5 || (size_t)(p[0] & 0x0f) * 4 > len ||
		    ((size_t)p[2] << 8 | p[3]) != len) {
			errbuf(why, whylen, "an IPv4 header that does not "
			    "match its %zu bytes", len);
			return -1;
		}
		if (addrs != NULL && !addr_in(AF_INET, p + 16, addrs, naddrs)) {
			errbuf(why, whylen, "an IPv4 packet to an address "
			    "the namespace does not have");
			return -1;
		}
		return 0;
	case 6:
		if (len < 40 || ((size_t)p[4] << 8 | p[5]) + 40 != len) {
			errbuf(why, whylen, "an IPv6 header that does not "
			    "match its %zu bytes", len);
			return -1;
		}
		if (addrs != NULL &&
		    !addr_in(AF_INET6, p + 24, addrs, naddrs)) {
			errbuf(why, whylen, "an IPv6 packet to an address "
			    "the namespace does not have");
			return -1;
		}
		return 0;
	default:
		errbuf(why, whylen, "a packet that is neither IPv4 nor IPv6");
		return -1;
	}
}

static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t
fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * The transport checksum again, from the bytes: a packet queued as it
 * arrived may carry one its NIC was left to finish (checksum offload),
 * and a packet sent down a veth is checked by nobody else.  Only TCP and
 * UDP directly after the IP header; other packets go as they came.
 */
void
replay_checksums(uint8_t *p, size_t len)
{
	size_t hl, l4len, csum_off;
	uint32_t sum;
	uint8_t proto;
	uint16_t c;

	if (p[0] >> 4 == 4) {
		hl = (size_t)(p[0] & 0x0f) * 4;
		p[10] = p[11] = 0;
		c = fold(sum16(p, hl, 0));
		p[10] = (uint8_t)(c >> 8);
		p[11] = (uint8_t)c;
		/* a fragment (offset or more-fragments): left alone */
		if ((((size_t)p[6] << 8 | p[7]) & 0x3fff) != 0)
			return;
		proto = p[9];
		l4len = len - hl;
		sum = sum16(p + 12, 8, 0) + proto + (uint32_t)l4len;
	} else {
		hl = 40;
		proto = p[6];
		l4len = len - hl;
		sum = sum16(p + 8, 32, 0) + proto + (uint32_t)l4len;
	}
	if (proto == IPPROTO_TCP && l4len >= 20)
		csum_off = 16;
	else if (proto == IPPROTO_UDP && l4len >= 8)
		csum_off = 6;
	else
		return;
	/* a UDP datagram over IPv4 sent without a checksum keeps none */
	if (proto == IPPROTO_UDP && p[0] >> 4 == 4 &&
	    p[hl + 6] == 0 && p[hl + 7] == 0)
		return;
	p[hl + csum_off] = p[hl + csum_off + 1] = 0;
	c = fold(sum16(p + hl, l4len, sum));
	if (proto == IPPROTO_UDP && c == 0)
		c = 0xffff;
	p[hl + csum_off] = (uint8_t)(c >> 8);
	p[hl + csum_off + 1] = (uint8_t)c;
}

int
replay_out_open(struct replay_out *o, const char *ns, const char *hostif,
    char *err, size_t errlen)
{
	uint8_t mac[ETH_ALEN];
	int saved, mfd, rc;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->sl.sll_family = AF_PACKET;
	o->sl.sll_halen = ETH_ALEN;
	snprintf(o->ns, sizeof(o->ns), "%s", ns);
	/* the namespace's MAC, from inside it */
	if ((saved = netns_enter(ns, err, errlen)) < 0)
		return -1;
	mfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	rc = mfd < 0 ? -1 : if_mac(mfd, "eth0", mac, err, errlen);
	if (mfd >= 0)
		close(mfd);
	if (netns_leave(saved, err, errlen) < 0 || rc < 0)
		return -1;
	memcpy(o->sl.sll_addr, mac, ETH_ALEN);
	if ((o->sl.sll_ifindex = (int)if_nametoindex(hostif)) == 0) {
		errbuf_errno(err, errlen, "%s", hostif);
		return -1;
	}
	o->fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (o->fd < 0) {
		errbuf_errno(err, errlen, "packet socket");
		return -1;
	}
	return 0;
}

size_t
replay_out_send(struct replay_out *o, struct replay_list *l, size_t max_pkts,
    char *err, size_t errlen)
{
	struct replay_pkt *p, *chain;
	size_t sent = 0;

	if (l->head == NULL)
		return 0;
	chain = take_pkts(l, max_pkts);
	for (p = chain; p != NULL; p = p->next) {
		if (replay_check(p->data, p->len, NULL, 0, NULL, 0) < 0) {
			l->inject_failed += p->count;
			continue;
		}
		replay_checksums(p->data, p->len);
		o->sl.sll_protocol = htons(p->data[0] >> 4 == 4 ? ETH_P_IP :
		    ETH_P_IPV6);
		if (sendto(o->fd, p->data, p->len, 0,
		    (struct sockaddr *)&o->sl, sizeof(o->sl)) ==
		    (ssize_t)p->len) {
			sent += p->count;
		} else {
			if (l->inject_failed == 0)
				errbuf_errno(err, errlen, "inject into %s",
				    o->ns);
			l->inject_failed += p->count;
		}
	}
	replay_pkt_free_chain(chain);
	l->injected += sent;
	return sent;
}

void
replay_out_close(struct replay_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

void
replay_list_drop(struct replay_list *l)
{
	struct replay_pkt *p;

	for (p = l->head; p != NULL; p = p->next)
		l->inject_failed += p->count;
	replay_list_free(l);
}

void
replay_list_move(struct replay_list *to, struct replay_list *from)
{
	if (from->head == NULL)
		return;
	*to->tail = from->head;
	to->tail = from->tail;
	to->npkts += from->npkts;
	to->bytes += from->bytes;
	from->head = NULL;
	from->tail = &from->head;
	from->npkts = from->bytes = 0;
}
