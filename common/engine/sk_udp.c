/* SPDX-License-Identifier: ISC */
/*
 * UDP: bound or connected sockets with their options and every unread
 * datagram.
 *
 * The datagrams are read without being taken: with SO_PEEK_OFF set,
 * each MSG_PEEK returns the next datagram (the kernel skips the ones
 * already peeked), with the sender's address and, through IP_PKTINFO
 * and IPV6_RECVPKTINFO, the address it was sent to.  The owner's peek
 * offset and packet-info settings are put back afterwards.  On the
 * destination each datagram is sent again from its sender to that
 * address (sk_inject.c) once the socket is bound, so it queues them in
 * the same order, with the same boundaries and sources.
 *
 * Refused: a pending error (an ICMP error the owner has not read yet)
 * and data held back by UDP_CORK or MSG_MORE, which no call can read.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "sk_priv.h"

#define DGRAM_MAX	65536

int
sk_udp_check(int fd, char *why, size_t whylen)
{
	struct pollfd p = { fd, 0, 0 };

	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		sk_why(why, whylen, "udp: a pending error (an ICMP error not "
		    "read yet) cannot be moved");
	return 0;
}

/* Set an int option, keeping what it was in *old. */
static int
swap_int(int fd, int level, int opt, int val, int *old)
{
	if (sk_getint(fd, level, opt, old) < 0)
		return -1;
	return sk_setint(fd, level, opt, val);
}

/* The destination address of one datagram, from its packet info. */
static void
dgram_to(const struct msghdr *mh, const struct sk_state *st,
    struct sockaddr_storage *to)
{
	struct cmsghdr *c;

	*to = st->local;
	for (c = CMSG_FIRSTHDR((struct msghdr *)mh); c != NULL;
	    c = CMSG_NXTHDR((struct msghdr *)mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			struct sockaddr_in *s = (struct sockaddr_in *)to;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			if (st->family == AF_INET) {
				s->sin_addr = pi.ipi_addr;
			} else {
				/* a mapped socket got an IPv4 datagram */
				struct sockaddr_in6 *s6 =
				    (struct sockaddr_in6 *)to;

				memset(&s6->sin6_addr, 0, 16);
				s6->sin6_addr.s6_addr[10] = 0xff;
				s6->sin6_addr.s6_addr[11] = 0xff;
				memcpy(&s6->sin6_addr.s6_addr[12], &pi.ipi_addr,
				    4);
			}
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
		    c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			((struct sockaddr_in6 *)to)->sin6_addr = pi.ipi6_addr;
		}
	}
}

static int
read_dgrams(struct sk_handle *h, struct sk_state *st)
{
	uint8_t *buf, cbuf[256];
	struct sk_dgram *dg;
	struct msghdr mh;
	struct iovec iov;
	uint32_t cap = st->udp.ndgrams;
	ssize_t n;

	if ((buf = malloc(DGRAM_MAX)) == NULL) {
		sk_log_errno("%s: malloc", __func__);
		return -1;
	}
	for (;;) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = buf;
		iov.iov_len = DGRAM_MAX;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		if (st->udp.ndgrams == SK_DGRAMS_MAX) {
			sk_log(LOG_WARNING, "%s: more than %d datagrams",
			    __func__, SK_DGRAMS_MAX);
			goto out_fail;
		}
		/* the list doubles: one element at a time, every datagram
		 * copied the whole list (and ASan kept every old copy) */
		if (st->udp.ndgrams == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			if (cap > SK_DGRAMS_MAX)
				cap = SK_DGRAMS_MAX;
			dg = realloc(st->udp.dgrams, cap * sizeof(*dg));
			if (dg == NULL) {
				sk_log_errno("%s: realloc", __func__);
				goto out_fail;
			}
			st->udp.dgrams = dg;
		}
		dg = &st->udp.dgrams[st->udp.ndgrams];
		memset(dg, 0, sizeof(*dg));
		mh.msg_name = &dg->from;
		mh.msg_namelen = sizeof(dg->from);
		n = recvmsg(h->fd, &mh, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			sk_log_errno("%s: recvmsg", __func__);
			goto out_fail;
		}
		if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
			sk_log(LOG_WARNING, "%s: a datagram did not fit",
			    __func__);
			goto out_fail;
		}
		dgram_to(&mh, st, &dg->to);
		dg->len = (uint32_t)n;
		if (n > 0 && (dg->data = malloc((size_t)n)) == NULL) {
			sk_log_errno("%s: malloc", __func__);
			goto out_fail;
		}
		if (n > 0)
			memcpy(dg->data, buf, (size_t)n);
		st->udp.ndgrams++;
	}
	free(buf);
	return 0;
out_fail:
	free(buf);
	return -1;
}

int
sk_udp_save(struct sk_handle *h, struct sk_state *st)
{
	int fd = h->fd, peek, pi4 = 0, pi6 = 0, outq = 0, rc = -1;

	/* held back by UDP_CORK or MSG_MORE: nobody can read it back (the
	 * namespace is locked, so what was on its way out is gone) */
	if (ioctl(fd, SIOCOUTQ, &outq) == 0 && outq > 0) {
		sk_log(LOG_WARNING, "%s: %d bytes held back by UDP_CORK or "
		    "MSG_MORE cannot be moved", __func__, outq);
		return -1;
	}
	if (swap_int(fd, SOL_SOCKET, SO_PEEK_OFF, 0, &peek) < 0) {
		sk_log_errno("%s: SO_PEEK_OFF", __func__);
		return -1;
	}
	if (swap_int(fd, IPPROTO_IP, IP_PKTINFO, 1, &pi4) < 0 ||
	    (st->family == AF_INET6 &&
	    swap_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1, &pi6) < 0)) {
		sk_log_errno("%s: packet info", __func__);
		goto out;
	}
	rc = read_dgrams(h, st);
out:
	if (sk_setint(fd, IPPROTO_IP, IP_PKTINFO, pi4) < 0 ||
	    (st->family == AF_INET6 &&
	    sk_setint(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, pi6) < 0) ||
	    sk_setint(fd, SOL_SOCKET, SO_PEEK_OFF, peek) < 0) {
		sk_log_errno("%s: putting the owner's options back", __func__);
		rc = -1;
	}
	if (rc == 0 && st->udp.ndgrams > 0)
		sk_log(LOG_DEBUG, "%s: %u datagrams to carry", __func__,
		    st->udp.ndgrams);
	return rc;
}

int
sk_udp_restore(struct sk_handle *h, const struct sk_state *st)
{
	socklen_t alen = st->family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	uint64_t bytes = 0;
	uint32_t i;

	if (sk_opts_apply(h->fd, st, 0) < 0)
		return -1;
	for (i = 0; i < st->udp.ndgrams; i++)
		bytes += st->udp.dgrams[i].len + 1024;	/* per-skb overhead */
	if (sk_bufs_force(h->fd, st->bufs.snd, sk_bufs_room(bytes) >
	    st->bufs.rcv ? sk_bufs_room(bytes) : st->bufs.rcv) < 0)
		return -1;
	if ((st->state == SK_ST_BOUND || st->state == SK_ST_ESTABLISHED) &&
	    sk_addr_port(&st->local) != 0 &&
	    bind(h->fd, (const struct sockaddr *)&st->local, alen) < 0) {
		sk_log_errno("%s: bind", __func__);
		return -1;
	}
	/* before connect: a connected socket takes datagrams from its peer
	 * only, and the queue may hold some from before it connected */
	for (i = 0; i < st->udp.ndgrams; i++)
		if (sk_inject_udp(&st->udp.dgrams[i]) < 0)
			return -1;
	if (st->state == SK_ST_ESTABLISHED &&
	    connect(h->fd, (const struct sockaddr *)&st->remote, alen) < 0) {
		sk_log_errno("%s: connect", __func__);
		return -1;
	}
	/* the late options (SO_PEEK_OFF) wait for sk_resume() */
	return (h->late = sk_opts_copy(st)) == NULL ? -1 : 0;
}
