/*
 * TCP restore: build a new socket from a record, in the order the
 * kernel accepts (checked against Linux 6.1 net/ipv4/tcp.c):
 *
 *  1. socket, options, TCP_REPAIR on (bind then forces port reuse;
 *     after SO_REUSEADDR, which would reset that);
 *  2. TCP_QUEUE_SEQ for both queues (only legal in CLOSE, queues empty);
 *  3. bind, connect: straight to ESTABLISHED, no SYN on the wire;
 *  4. TCP_REPAIR_OPTIONS (only while ESTABLISHED and nothing sent),
 *     TCP_TIMESTAMP (else the peer's PAWS drops every segment);
 *  5. receive queue, then the sent-not-acked part of the send queue,
 *     both with send() in repair mode (the latter counts as in flight);
 *  6. half-closed states: ESTABLISHED is turned into the saved state by
 *     replaying the FINs.  Ours: shutdown(SHUT_WR) while the send queue
 *     is selected, so the FIN takes the next sequence number and counts
 *     as sent (retransmission delivers it again if the peer needs it).
 *     The peer's: a FIN|ACK from the peer's address, injected through a
 *     raw socket (sk_fin.c).  CLOSE_WAIT: inject; LAST_ACK: inject then
 *     shutdown; CLOSING: shutdown then inject; FIN_WAIT1: shutdown;
 *     FIN_WAIT2: shutdown, then the peer's ACK of that FIN injected the
 *     same way (a re-sent FIN could meet a peer that has closed since);
 *  7. TCP_REPAIR_WINDOW last (EINVAL while its rcv_wup lies beyond
 *     rcv_nxt, which an injected FIN or queued data moves).
 *
 * The never-sent part of the send queue is kept in the handle and sent
 * by sk_resume() after repair is off, except when we sent a FIN: then
 * the FIN must follow it, so it goes in during repair as in flight and
 * reaches the peer by retransmission.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sk_priv.h"

#ifndef TCPOPT_MSS
#define TCPOPT_MSS		2
#define TCPOPT_WINDOW		3
#define TCPOPT_SACK_PERM	4
#define TCPOPT_TIMESTAMP	8
#endif

static socklen_t
sk_addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	    sizeof(struct sockaddr_in);
}

static int
sk_set_queue_seq(int fd, int queue, uint32_t seq)
{
	if (sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, queue) < 0) {
		sk_log_errno("%s: TCP_REPAIR_QUEUE %d", __func__, queue);
		return -1;
	}
	if (sk_setint(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, (int)seq) < 0) {
		sk_log_errno("%s: TCP_QUEUE_SEQ %d = %u", __func__, queue,
		    seq);
		return -1;
	}
	return 0;
}

/* Fill the selected queue with len bytes (repair mode). */
static int
sk_fill_queue(int fd, int queue, const uint8_t *buf, uint32_t len)
{
	uint32_t off = 0;
	ssize_t n;

	if (len == 0)
		return 0;
	if (sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, queue) < 0) {
		sk_log_errno("%s: TCP_REPAIR_QUEUE %d", __func__, queue);
		return -1;
	}
	while (off < len) {
		n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sk_log_errno("%s: send %u bytes to queue %d", __func__,
			    len - off, queue);
			return -1;
		}
		off += (uint32_t)n;
	}
	return 0;
}

static int
sk_repair_options(int fd, const struct sk_tcp *t)
{
	struct tcp_repair_opt opts[4];
	int n = 0;

	opts[n].opt_code = TCPOPT_MSS;
	opts[n++].opt_val = t->mss;
	if (t->wscale) {
		opts[n].opt_code = TCPOPT_WINDOW;
		opts[n++].opt_val = (uint32_t)t->snd_wscale |
		    ((uint32_t)t->rcv_wscale << 16);
	}
	if (t->sack) {
		opts[n].opt_code = TCPOPT_SACK_PERM;
		opts[n++].opt_val = 0;
	}
	if (t->tstamp) {
		opts[n].opt_code = TCPOPT_TIMESTAMP;
		opts[n++].opt_val = 0;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_OPTIONS, opts,
	    (socklen_t)(n * sizeof(opts[0]))) < 0) {
		sk_log_errno("%s: TCP_REPAIR_OPTIONS", __func__);
		return -1;
	}
	return 0;
}

static int
sk_fin_out(int fd)
{
	if (sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE) < 0) {
		sk_log_errno("%s: TCP_REPAIR_QUEUE", __func__);
		return -1;
	}
	if (shutdown(fd, SHUT_WR) < 0) {
		sk_log_errno("%s: shutdown", __func__);
		return -1;
	}
	return 0;
}

static uint16_t
sk_peer_window(const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;
	uint32_t wnd = 65535;

	if (st->flags & SK_F_WINDOW) {
		wnd = t->win.snd_wnd >> (t->wscale ? t->snd_wscale : 0);
		if (wnd > 65535)
			wnd = 65535;
	}
	return (uint16_t)wnd;
}

/* The peer's FIN; it had acked up to snd_seq (our first queued byte). */
static int
sk_fin_in(const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;

	return sk_peer_inject(st, t->rcv_seq + t->rcvq_len, t->snd_seq,
	    sk_peer_window(st), 1);
}

/* FIN_WAIT2: the peer had acked our FIN (and every byte before it). */
static int
sk_fin_acked(const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;

	return sk_peer_inject(st, t->rcv_seq + t->rcvq_len,
	    t->snd_seq + t->sndq_len + 1, sk_peer_window(st), 0);
}

static int
sk_tcp_restore_conn(struct sk_handle *h, const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;
	struct tcp_repair_window w;
	uint32_t inflight;
	int fd = h->fd;

	if (!(st->flags & SK_F_REMOTE)) {
		sk_log(LOG_WARNING, "%s: %s without a remote address",
		    __func__, sk_st_name(st->state));
		return -1;
	}
	/* Options first: SO_REUSEADDR would undo repair's forced reuse. */
	if (sk_opts_apply(fd, st->family, st->proto, &st->opts) < 0)
		return -1;
	if (sk_tcp_repair(fd, 1) < 0)
		return -1;
	h->repair = true;
	if (sk_set_queue_seq(fd, TCP_SEND_QUEUE, t->snd_seq) < 0 ||
	    sk_set_queue_seq(fd, TCP_RECV_QUEUE, t->rcv_seq) < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)&st->local,
	    sk_addr_len(&st->local)) < 0) {
		sk_log_errno("%s: bind", __func__);
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)&st->remote,
	    sk_addr_len(&st->remote)) < 0) {
		sk_log_errno("%s: connect", __func__);
		return -1;
	}
	if (sk_repair_options(fd, t) < 0)
		return -1;
	if ((st->flags & SK_F_TSVAL) &&
	    sk_setint(fd, IPPROTO_TCP, TCP_TIMESTAMP, (int)t->ts_val) < 0 &&
	    errno != ENOPROTOOPT) {
		sk_log_errno("%s: TCP_TIMESTAMP", __func__);
		return -1;
	}

	inflight = t->sndq_len - t->sndq_unsent;
	if (sk_st_fin_sent(st->state))
		inflight = t->sndq_len;
	if (sk_fill_queue(fd, TCP_RECV_QUEUE, t->rcvq, t->rcvq_len) < 0 ||
	    sk_fill_queue(fd, TCP_SEND_QUEUE, t->sndq, inflight) < 0)
		return -1;
	if (inflight < t->sndq_len) {
		h->unsent_len = t->sndq_len - inflight;
		if ((h->unsent = malloc(h->unsent_len)) == NULL) {
			sk_log_errno("%s: malloc", __func__);
			return -1;
		}
		memcpy(h->unsent, t->sndq + inflight, h->unsent_len);
	}

	switch (st->state) {
	case SK_ST_FIN_WAIT1:
		if (sk_fin_out(fd) < 0)
			return -1;
		break;
	case SK_ST_FIN_WAIT2:
		if (sk_fin_out(fd) < 0 || sk_fin_acked(st) < 0)
			return -1;
		break;
	case SK_ST_CLOSE_WAIT:
		if (sk_fin_in(st) < 0)
			return -1;
		break;
	case SK_ST_LAST_ACK:
		if (sk_fin_in(st) < 0 || sk_fin_out(fd) < 0)
			return -1;
		break;
	case SK_ST_CLOSING:
		if (sk_fin_out(fd) < 0 || sk_fin_in(st) < 0)
			return -1;
		break;
	default:
		break;
	}

	if (st->flags & SK_F_WINDOW) {
		memset(&w, 0, sizeof(w));
		w.snd_wl1 = t->win.snd_wl1;
		w.snd_wnd = t->win.snd_wnd;
		w.max_window = t->win.max_window;
		w.rcv_wnd = t->win.rcv_wnd;
		w.rcv_wup = t->win.rcv_wup;
		if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w,
		    sizeof(w)) < 0 && errno != ENOPROTOOPT) {
			sk_log_errno("%s: TCP_REPAIR_WINDOW", __func__);
			return -1;
		}
	}
	sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	return 0;
}

/* LISTEN, BOUND and CLOSE: no repair needed, nothing in flight. */
static int
sk_tcp_restore_plain(struct sk_handle *h, const struct sk_state *st)
{
	int fd = h->fd;

	if (sk_opts_apply(fd, st->family, st->proto, &st->opts) < 0)
		return -1;
	if (st->state == SK_ST_CLOSE)
		return 0;
	/*
	 * A BOUND record may be a connection that died (reset) while its
	 * task kept the fd: it shows its old local address but no longer
	 * holds the port, and a plain bind next to the listener on that
	 * port fails with EADDRINUSE.  Repair mode forces the reuse, as it
	 * does for connections; it is left again without a window probe.
	 */
	if (st->state == SK_ST_BOUND && sk_tcp_repair(fd, 1) < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)&st->local,
	    sk_addr_len(&st->local)) < 0) {
		sk_log_errno("%s: bind", __func__);
		return -1;
	}
	if (st->state == SK_ST_BOUND &&
	    sk_tcp_repair(fd, TCP_REPAIR_OFF_NO_WP) < 0)
		return -1;
	if (st->state == SK_ST_LISTEN &&
	    listen(fd, (int)st->tcp.backlog) < 0) {
		sk_log_errno("%s: listen", __func__);
		return -1;
	}
	return 0;
}

int
sk_tcp_restore(struct sk_handle *h, const struct sk_state *st)
{
	switch (st->state) {
	case SK_ST_LISTEN:
	case SK_ST_BOUND:
	case SK_ST_CLOSE:
		return sk_tcp_restore_plain(h, st);
	case SK_ST_ESTABLISHED:
	case SK_ST_FIN_WAIT1:
	case SK_ST_FIN_WAIT2:
	case SK_ST_CLOSE_WAIT:
	case SK_ST_LAST_ACK:
	case SK_ST_CLOSING:
		return sk_tcp_restore_conn(h, st);
	default:
		sk_log(LOG_WARNING, "%s: state %d cannot be restored",
		    __func__, st->state);
		return -1;
	}
}
