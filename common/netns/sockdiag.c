/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "addrport.h"
#include "errbuf.h"
#include "netns.h"
#include "sockdiag.h"

#define SOCKDIAG_MAX	(1 << 20)	/* sockets in one namespace */

/* the kernel's TCP states (include/net/tcp_states.h) */
enum { ST_SYN_RECV = 3, ST_TIME_WAIT = 6, ST_LISTEN = 10,
    ST_NEW_SYN_RECV = 12 };

static const char *const tcp_states[] = {
	"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
	"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING",
	"NEW_SYN_RECV",
};

struct ctx {
	struct sockdiag_sock	*socks;
	size_t			 n, cap;
	int			 overflow;
};

static void
to_sockaddr(int family, const __be32 *addr, __be16 port,
    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = port;
		memcpy(&s->sin_addr, addr, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = port;
		memcpy(&s->sin6_addr, addr, 16);
	}
}

static int
attr_cb(const struct nlattr *a, void *arg)
{
	struct sockdiag_sock *s = arg;

	if (mnl_attr_get_type(a) == INET_DIAG_MD5SIG &&
	    mnl_attr_get_payload_len(a) > 0)
		s->md5 = true;
	return MNL_CB_OK;
}

static int
msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct ctx *c = arg;
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	struct sockdiag_sock *s;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return MNL_CB_ERROR;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct sockdiag_sock *ns;

		if (cap > SOCKDIAG_MAX) {
			c->overflow = 1;
			return MNL_CB_ERROR;
		}
		if ((ns = realloc(c->socks, cap * sizeof(*ns))) == NULL)
			return MNL_CB_ERROR;
		c->socks = ns;
		c->cap = cap;
	}
	s = &c->socks[c->n++];
	memset(s, 0, sizeof(*s));
	s->state = m->idiag_state;
	to_sockaddr(m->idiag_family, m->id.idiag_src, m->id.idiag_sport,
	    &s->local);
	to_sockaddr(m->idiag_family, m->id.idiag_dst, m->id.idiag_dport,
	    &s->remote);
	s->inode = m->idiag_inode;
	s->rqueue = m->idiag_rqueue;
	s->wqueue = m->idiag_wqueue;
	mnl_attr_parse(nlh, sizeof(*m), attr_cb, s);
	return MNL_CB_OK;
}

/* One dump of family's TCP sockets in every state. */
static int
dump(struct mnl_socket *nl, int family, struct ctx *c, char *err,
    size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct inet_diag_req_v2 *req;
	struct nlmsghdr *nlh;
	unsigned int seq, portid = mnl_socket_get_portid(nl);
	ssize_t n;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq = (unsigned int)time(NULL) + (unsigned)family;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = ~0U;
	/* the kernel adds INET_DIAG_MD5SIG (its "aux") only along with
	 * INET_DIAG_INFO (net/ipv4/inet_diag.c, inet_sk_diag_fill) */
	req->idiag_ext = 1 << (INET_DIAG_INFO - 1);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		errbuf_errno(err, errlen, "sock_diag: send");
		return -1;
	}
	for (;;) {
		if ((n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) < 0) {
			errbuf_errno(err, errlen, "sock_diag: receive");
			return -1;
		}
		n = mnl_cb_run(buf, (size_t)n, seq, portid, msg_cb, c);
		if (n == MNL_CB_STOP)
			return 0;
		if (n == MNL_CB_ERROR) {
			if (c->overflow)
				errbuf(err, errlen, "sock_diag: more than %d "
				    "sockets", SOCKDIAG_MAX);
			else
				errbuf_errno(err, errlen, "sock_diag");
			return -1;
		}
	}
}

static int
by_inode(const void *a, const void *b)
{
	uint32_t x = ((const struct sockdiag_sock *)a)->inode;
	uint32_t y = ((const struct sockdiag_sock *)b)->inode;

	return x < y ? -1 : x > y;
}

int
sockdiag_tcp(const char *ns, struct sockdiag_sock **out, size_t *n, char *err,
    size_t errlen)
{
	struct ctx c = { NULL, 0, 0, 0 };
	struct mnl_socket *nl;
	int saved, rc = -1;

	*out = NULL;
	*n = 0;
	/* the netlink socket belongs to the namespace it is made in */
	if ((saved = netns_enter(ns, err, errlen)) < 0)
		return -1;
	nl = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (netns_leave(saved, err, errlen) < 0) {
		if (nl != NULL)
			mnl_socket_close(nl);
		return -1;
	}
	if (nl == NULL) {
		errbuf_errno(err, errlen, "sock_diag socket");
		return -1;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		errbuf_errno(err, errlen, "sock_diag bind");
		goto out;
	}
	if (dump(nl, AF_INET, &c, err, errlen) < 0 ||
	    dump(nl, AF_INET6, &c, err, errlen) < 0)
		goto out;
	/* by inode, for sockdiag_find(): one look per socket of a namespace
	 * of ten thousand must not be a walk of the ten thousand */
	if (c.n > 1)
		qsort(c.socks, c.n, sizeof(*c.socks), by_inode);
	*out = c.socks;
	*n = c.n;
	c.socks = NULL;
	rc = 0;
out:
	free(c.socks);
	mnl_socket_close(nl);
	return rc;
}

const struct sockdiag_sock *
sockdiag_find(const struct sockdiag_sock *s, size_t n, uint32_t ino)
{
	struct sockdiag_sock key;

	if (ino == 0 || n == 0)
		return NULL;
	key.inode = ino;
	return bsearch(&key, s, n, sizeof(*s), by_inode);
}

bool
sockdiag_orphan_busy(const struct sockdiag_sock *s)
{
	/* no file, and bytes or a FIN the peer has not acknowledged */
	return s->inode == 0 && s->wqueue > 0 && s->state != ST_TIME_WAIT &&
	    s->state != ST_SYN_RECV && s->state != ST_NEW_SYN_RECV &&
	    s->state != ST_LISTEN;
}

bool
sockdiag_handshake(const struct sockdiag_sock *s)
{
	return s->state == ST_SYN_RECV || s->state == ST_NEW_SYN_RECV;
}

bool
sockdiag_accept_waiting(const struct sockdiag_sock *s)
{
	return s->state == ST_LISTEN && s->rqueue > 0;
}

/* "10.0.0.1:80", "[fd00::1]:80"; an IPv4 peer of a dual-stack socket
 * (v4-mapped) as its client knows it (sa_format()) */
static void
addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int port = sa_format(ss, a, sizeof(a));

	if (strchr(a, ':') != NULL)
		snprintf(buf, len, "[%s]:%d", a, port);
	else
		snprintf(buf, len, "%s:%d", a, port);
}

void
sockdiag_describe(const struct sockdiag_sock *s, char *buf, size_t len)
{
	char l[64], r[64];

	addr_text(&s->local, l, sizeof(l));
	addr_text(&s->remote, r, sizeof(r));
	/* a listener's queues are connections: waiting, and the most */
	if (s->state == ST_LISTEN) {
		snprintf(buf, len, "%s LISTEN, %u connection%s waiting to be "
		    "accepted", l, s->rqueue, s->rqueue == 1 ? "" : "s");
		return;
	}
	snprintf(buf, len, "%s -> %s %s%s%.0u%s", l, r,
	    s->state < sizeof(tcp_states) / sizeof(tcp_states[0]) ?
	    tcp_states[s->state] : "?", s->wqueue ? ", " : "", s->wqueue,
	    s->wqueue ? " bytes not yet acknowledged" : "");
}
