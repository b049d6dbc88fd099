/* SPDX-License-Identifier: ISC */
/*
 * TCP dump: check a socket, then read a paused (repair mode) socket's
 * state and queues.
 *
 * Sequence arithmetic (all mod 2^32).  In repair mode TCP_QUEUE_SEQ
 * reads write_seq (send queue selected) and rcv_nxt (receive queue
 * selected).  SIOCOUTQ is write_seq - snd_una (not acked), SIOCOUTQNSD
 * write_seq - snd_nxt (never sent), SIOCINQ the unread data bytes (a
 * received FIN not counted).  A FIN occupies one sequence number:
 * write_seq counts ours once sent or queued, rcv_nxt counts the
 * peer's once received.  The record holds data bytes only, with the
 * sequence number of the first one; the FINs follow from the state.
 *
 * Urgent data: SIOCINQ stops at an urgent mark the reader has not
 * passed, and reading skips the urgent byte, so a queue with a mark in
 * it cannot be carried as a byte stream.  sk_tcp_check() refuses a
 * pending urgent byte (recv(MSG_OOB | MSG_PEEK) reads it without taking
 * it); the dump, with the owner frozen, also compares SIOCINQ with
 * SO_OOBINLINE flipped, which differs exactly when a mark lies ahead.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sk_priv.h"

#ifndef TCP_REPAIR_WINDOW
#define TCP_REPAIR_WINDOW	29
#endif
#ifndef TCPI_OPT_SYN_DATA
#define TCPI_OPT_SYN_DATA	32
#endif

/* Largest queue carried, each direction (a record's bound too). */
#define SK_QUEUE_MAX	(32u * 1024 * 1024)

static int
sk_ioctl_u32(int fd, unsigned long req, const char *name, uint32_t *val)
{
	int v = 0;

	if (ioctl(fd, req, &v) < 0) {
		sk_log_errno("sk_tcp_save: %s", name);
		return -1;
	}
	if (v < 0) {
		sk_log(LOG_WARNING, "sk_tcp_save: %s = %d", name, v);
		return -1;
	}
	*val = (uint32_t)v;
	return 0;
}

/* POLLERR: a pending error (sk_err), or notifications on the error queue. */
static int
sk_pollerr(int fd)
{
	struct pollfd p = { fd, 0, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* An urgent byte the owner has not read: recv(MSG_OOB | MSG_PEEK)
 * returns it (or EAGAIN when only its pointer came), and takes nothing. */
static int
sk_urgent_pending(int fd)
{
	char c;
	ssize_t n;
	int atmark = 0;

	if (ioctl(fd, SIOCATMARK, &atmark) == 0 && atmark)
		return 1;
	n = recv(fd, &c, 1, MSG_OOB | MSG_PEEK | MSG_DONTWAIT);
	return n == 1 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

int
sk_tcp_check(int fd, enum sk_st st, char *why, size_t whylen)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int inq = 0, outq = 0;

	if (st == SK_ST_LISTEN || st == SK_ST_CLOSE || st == SK_ST_BOUND)
		return 0;
	if (st != SK_ST_SYN_SENT && sk_urgent_pending(fd))
		sk_why(why, whylen, "tcp: urgent data pending cannot be moved");
	if (st != SK_ST_ENDED && sk_pollerr(fd))
		sk_why(why, whylen, "tcp: a pending socket error or error-queue "
		    "notification cannot be moved");
	memset(&ti, 0, sizeof(ti));
	if (st == SK_ST_SYN_SENT &&
	    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	    (ti.tcpi_options & TCPI_OPT_SYN_DATA))
		sk_why(why, whylen, "tcp: SYN_SENT with data in the SYN (fast "
		    "open) cannot be moved");
	if (ioctl(fd, SIOCINQ, &inq) == 0 && (uint32_t)inq > SK_QUEUE_MAX)
		sk_why(why, whylen, "tcp: %d bytes to read, more than the %u "
		    "a record carries", inq, SK_QUEUE_MAX);
	if (ioctl(fd, SIOCOUTQ, &outq) == 0 && (uint32_t)outq > SK_QUEUE_MAX)
		sk_why(why, whylen, "tcp: %d bytes to send, more than the %u "
		    "a record carries", outq, SK_QUEUE_MAX);
	return 0;
}

static int
sk_queue_seq(int fd, int queue, uint32_t *seq)
{
	socklen_t len = sizeof(*seq);

	if (sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, queue) < 0) {
		sk_log_errno("%s: TCP_REPAIR_QUEUE %d", __func__, queue);
		return -1;
	}
	if (getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, seq, &len) < 0) {
		sk_log_errno("%s: TCP_QUEUE_SEQ %d", __func__, queue);
		return -1;
	}
	return 0;
}

/* Peek exactly len bytes of the selected queue into a new buffer. */
static int
sk_queue_peek(int fd, int queue, uint32_t len, uint8_t **out)
{
	uint8_t *buf;
	ssize_t n;

	*out = NULL;
	if (len == 0)
		return 0;
	if (len > SK_QUEUE_MAX) {
		sk_log(LOG_WARNING, "%s: %u bytes in queue %d, more than %u",
		    __func__, len, queue, SK_QUEUE_MAX);
		return -1;
	}
	if (sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, queue) < 0) {
		sk_log_errno("%s: TCP_REPAIR_QUEUE %d", __func__, queue);
		return -1;
	}
	/* One more byte than expected shows a queue longer than said. */
	if ((buf = malloc((size_t)len + 1)) == NULL) {
		sk_log_errno("%s: malloc %u", __func__, len);
		return -1;
	}
	n = recv(fd, buf, (size_t)len + 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0) {
		sk_log_errno("%s: recv queue %d", __func__, queue);
		goto out_free;
	}
	if ((size_t)n != len) {
		sk_log(LOG_WARNING, "%s: queue %d holds %zd bytes, expected "
		    "%u", __func__, queue, n, len);
		goto out_free;
	}
	*out = buf;
	return 0;

out_free:
	free(buf);
	return -1;
}

/* SIOCINQ, and the same with SO_OOBINLINE flipped: they differ when an
 * urgent mark lies ahead of the read position. */
static int
sk_inq_no_mark(int fd, uint32_t *inq)
{
	uint32_t other;
	int inl;

	if (sk_ioctl_u32(fd, SIOCINQ, "SIOCINQ", inq) < 0 ||
	    sk_getint(fd, SOL_SOCKET, SO_OOBINLINE, &inl) < 0)
		return -1;
	if (sk_setint(fd, SOL_SOCKET, SO_OOBINLINE, !inl) < 0)
		return -1;
	if (sk_ioctl_u32(fd, SIOCINQ, "SIOCINQ", &other) < 0) {
		sk_setint(fd, SOL_SOCKET, SO_OOBINLINE, inl);
		return -1;
	}
	if (sk_setint(fd, SOL_SOCKET, SO_OOBINLINE, inl) < 0)
		return -1;
	if (other != *inq) {
		sk_log(LOG_WARNING, "sk_tcp_save: urgent data in the receive "
		    "queue cannot be moved");
		return -1;
	}
	return 0;
}

static int
sk_tcp_save_conn(struct sk_handle *h, struct sk_state *st)
{
	struct sk_tcp *t = &st->tcp;
	struct tcp_info ti;
	struct tcp_repair_window w;
	socklen_t len;
	uint32_t outq, nsd, inq, write_seq, rcv_nxt, fin_unacked;
	int fd = h->fd, v;

	len = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0) {
		sk_log_errno("%s: TCP_INFO", __func__);
		return -1;
	}
	t->sack = (ti.tcpi_options & TCPI_OPT_SACK) != 0;
	t->tstamp = (ti.tcpi_options & TCPI_OPT_TIMESTAMPS) != 0;
	t->wscale = (ti.tcpi_options & TCPI_OPT_WSCALE) != 0;
	if (t->wscale) {
		t->snd_wscale = ti.tcpi_snd_wscale;
		t->rcv_wscale = ti.tcpi_rcv_wscale;
	}

	if (sk_ioctl_u32(fd, SIOCOUTQ, "SIOCOUTQ", &outq) < 0 ||
	    sk_ioctl_u32(fd, SIOCOUTQNSD, "SIOCOUTQNSD", &nsd) < 0 ||
	    sk_inq_no_mark(fd, &inq) < 0)
		return -1;
	if (sk_queue_seq(fd, TCP_RECV_QUEUE, &rcv_nxt) < 0 ||
	    sk_queue_seq(fd, TCP_SEND_QUEUE, &write_seq) < 0)
		return -1;

	/* Our FIN, sent or queued, is the last sequence number. */
	if (sk_st_fin_sent(st->state)) {
		fin_unacked = st->state != SK_ST_FIN_WAIT2;
		if (outq < fin_unacked) {
			sk_log(LOG_WARNING, "%s: %s with SIOCOUTQ %u",
			    __func__, sk_st_name(st->state), outq);
			return -1;
		}
		t->sndq_len = outq - fin_unacked;
		t->sndq_unsent = nsd > 0 ? nsd - 1 : 0;
		t->snd_seq = write_seq - 1 - t->sndq_len;
	} else {
		t->sndq_len = outq;
		t->sndq_unsent = nsd;
		t->snd_seq = write_seq - outq;
	}
	if (t->sndq_unsent > t->sndq_len) {
		sk_log(LOG_WARNING, "%s: %u unsent of %u queued", __func__,
		    t->sndq_unsent, t->sndq_len);
		return -1;
	}
	t->rcvq_len = inq;
	t->rcv_seq = rcv_nxt - (sk_st_fin_rcvd(st->state) ? 1 : 0) - inq;

	if (sk_queue_peek(fd, TCP_SEND_QUEUE, t->sndq_len, &t->sndq) < 0 ||
	    sk_queue_peek(fd, TCP_RECV_QUEUE, t->rcvq_len, &t->rcvq) < 0)
		return -1;

	if (sk_getint(fd, IPPROTO_TCP, TCP_MAXSEG, &v) < 0) {
		sk_log_errno("%s: TCP_MAXSEG", __func__);
		return -1;
	}
	t->mss = (uint32_t)v;
	if (sk_getint(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v) < 0) {
		sk_log_errno("%s: TCP_WINDOW_CLAMP", __func__);
		return -1;
	}
	t->window_clamp = v > 0 ? (uint32_t)v : 0;

	if (sk_getint(fd, IPPROTO_TCP, TCP_TIMESTAMP, &v) == 0) {
		t->ts_val = (uint32_t)v;
		st->flags |= SK_F_TSVAL;
	} else if (errno != ENOPROTOOPT) {
		sk_log_errno("%s: TCP_TIMESTAMP", __func__);
		return -1;
	}

	len = sizeof(w);
	if (getsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, &len) == 0) {
		t->win.snd_wl1 = w.snd_wl1;
		t->win.snd_wnd = w.snd_wnd;
		t->win.max_window = w.max_window;
		t->win.rcv_wnd = w.rcv_wnd;
		t->win.rcv_wup = w.rcv_wup;
		st->flags |= SK_F_WINDOW;
	} else if (errno != ENOPROTOOPT) {
		sk_log_errno("%s: TCP_REPAIR_WINDOW", __func__);
		return -1;
	}
	switch (sk_path_save(fd, &t->path)) {
	case -1:
		return -1;
	case 1:
		st->flags |= SK_F_PATH;
		break;
	}
	sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	return 0;
}

/*
 * A connection that ended while its owner holds it: only its unread
 * bytes and how it ended matter.  The peer's address is gone with it
 * (getpeername answers ENOTCONN in CLOSE, on the destination too).
 */
static int
sk_tcp_save_ended(struct sk_handle *h, struct sk_state *st)
{
	struct sk_tcp *t = &st->tcp;
	uint32_t outq, inq;
	int fd = h->fd;

	if (sk_ioctl_u32(fd, SIOCOUTQ, "SIOCOUTQ", &outq) < 0 ||
	    sk_inq_no_mark(fd, &inq) < 0)
		return -1;
	/* A connection only ends with bytes unacknowledged by a reset or a
	 * timeout, and the kernel then purged its write queue (tcp_reset,
	 * tcp_write_err): SIOCOUTQ still counts them, but they are gone,
	 * and the owner learns so from the error, as it would here. */
	if (outq != 0)
		sk_log(LOG_DEBUG, "%s: %u bytes the ended connection never "
		    "delivered (the kernel dropped them with it)", __func__,
		    outq);
	t->rcvq_len = inq;
	if (sk_queue_peek(fd, TCP_RECV_QUEUE, inq, &t->rcvq) < 0)
		return -1;
	sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	/* the error is not read (that would clear it on a rollback): a
	 * pending one is carried as ECONNRESET, the common case */
	t->end = sk_pollerr(fd) ? SK_END_RESET : SK_END_FIN;
	st->flags &= ~SK_F_REMOTE;
	return 0;
}

/* Dialling out: only the initial sequence number matters. */
static int
sk_tcp_save_syn_sent(struct sk_handle *h, struct sk_state *st)
{
	uint32_t write_seq;

	if (!(st->flags & SK_F_REMOTE)) {
		sk_log(LOG_WARNING, "%s: SYN_SENT without the peer's address "
		    "(getpeername cannot tell it: see sk_set_remote)",
		    __func__);
		return -1;
	}
	if (sk_queue_seq(h->fd, TCP_SEND_QUEUE, &write_seq) < 0)
		return -1;
	sk_setint(h->fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	st->tcp.snd_seq = write_seq - 1;	/* the SYN took one */
	return 0;
}

int
sk_tcp_save(struct sk_handle *h, struct sk_state *st)
{
	struct tcp_info ti;
	socklen_t len;

	switch (st->state) {
	case SK_ST_CLOSE:
	case SK_ST_BOUND:
		return 0;
	case SK_ST_LISTEN:
		/* For a listener TCP_INFO reports the backlog in sacked. */
		len = sizeof(ti);
		memset(&ti, 0, sizeof(ti));
		if (getsockopt(h->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0) {
			sk_log_errno("%s: TCP_INFO", __func__);
			return -1;
		}
		st->tcp.backlog = ti.tcpi_sacked;
		return 0;
	case SK_ST_ENDED:
		return sk_tcp_save_ended(h, st);
	case SK_ST_SYN_SENT:
		if (h->remote.ss_family != 0) {
			st->remote = h->remote;
			st->flags |= SK_F_REMOTE;
		}
		return sk_tcp_save_syn_sent(h, st);
	default:
		if (!sk_st_tcp_conn(st->state)) {
			sk_log(LOG_WARNING, "%s: state %d", __func__,
			    st->state);
			return -1;
		}
		return sk_tcp_save_conn(h, st);
	}
}
