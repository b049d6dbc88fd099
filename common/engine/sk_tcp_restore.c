/* SPDX-License-Identifier: ISC */
/*
 * TCP restore: build a new socket from a record, in the order the
 * kernel accepts (checked against Linux 6.1 net/ipv4/tcp.c):
 *
 *  1. socket, options (SO_REUSEADDR before repair, which would reset its
 *     forced reuse), buffers forced larger than the queues, TCP_REPAIR
 *     on (bind then forces port reuse);
 *  2. TCP_QUEUE_SEQ for both queues (only legal in CLOSE, queues empty);
 *  3. TCP_MAXSEG with the saved MSS clamp, so connect() computes the
 *     real MSS (without it a restored socket sends 524-byte segments
 *     until traffic grows its MSS), then bind, connect: straight to
 *     ESTABLISHED, no SYN on the wire; TCP_MAXSEG back to unset;
 *  4. TCP_REPAIR_OPTIONS (only while ESTABLISHED and nothing sent),
 *     TCP_TIMESTAMP (else the peer's PAWS drops every segment), and
 *     TCP_REPAIR_PATH where the kernel has it (sk_path.c): RTT, window,
 *     MSS, ts_recent, ECN, so that nothing waits for a 3 s RTO;
 *  5. receive queue, then the sent-not-acked part of the send queue,
 *     both with non-blocking send() in repair mode (the latter counts as
 *     in flight); the buffers hold them, so nothing waits;
 *  6. half-closed states: ESTABLISHED is turned into the saved state by
 *     replaying the FINs.  Ours: shutdown(SHUT_WR) while the send queue
 *     is selected, so the FIN takes the next sequence number and counts
 *     as sent (retransmission delivers it again if the peer needs it).
 *     The peer's: a FIN|ACK from the peer's address, injected through a
 *     raw socket (sk_inject.c).  CLOSE_WAIT: inject; LAST_ACK: inject
 *     then shutdown; CLOSING: shutdown then inject; FIN_WAIT1: shutdown;
 *     FIN_WAIT2: shutdown, then the peer's ACK of that FIN injected the
 *     same way (a re-sent FIN could meet a peer that has closed since).
 *     The state reached is checked against the record's;
 *  7. TCP_REPAIR_WINDOW last (EINVAL while its rcv_wup lies beyond
 *     rcv_nxt, which an injected FIN or queued data moves), and a window
 *     clamp the owner had set below what the buffers give.
 *
 * The never-sent part of the send queue is kept in the handle and queued
 * by sk_resume() after repair is off, except when we sent a FIN: then
 * the FIN must follow it, so it goes in during repair as in flight and
 * reaches the peer by retransmission.
 *
 * An ENDED connection is rebuilt the same way towards a stand-in peer
 * (its own address, on a port of its own), its unread bytes queued,
 * then ended as it ended: our FIN, then one segment with the peer's FIN
 * and its acknowledgement of ours (FIN_WAIT1, TIME_WAIT, CLOSE: reads
 * give the bytes, then end of file), or a RST (reads give the bytes,
 * then ECONNRESET).  Nothing reaches the wire: the stand-in is local.
 *
 * SYN_SENT: the initial sequence number is set in repair mode, repair is
 * left, and connect() (which keeps a sequence number already set) sends
 * the same SYN again; a SYN-ACK from the peer, for the first SYN or this
 * one, completes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_priv.h"

#ifndef TCPOPT_MSS
#define TCPOPT_MSS		2
#define TCPOPT_WINDOW		3
#define TCPOPT_SACK_PERM	4
#define TCPOPT_TIMESTAMP	8
#endif

/* An ENDED connection's stand-in sequence numbers. */
#define ENDED_SND_SEQ		1000
#define ENDED_RCV_SEQ		1000

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

/* Fill the selected queue with len bytes (repair mode, never waiting). */
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
		n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* the receive queue is charged to the protocol's
			 * memory: this host is at net.ipv4.tcp_mem's limit */
			sk_log(LOG_WARNING, "%s: %u of %u bytes left for queue "
			    "%d: this host's TCP memory is exhausted (see "
			    "net.ipv4.tcp_mem)", __func__, len - off, len,
			    queue);
			return -1;
		}
		if (n <= 0) {
			sk_log_errno("%s: %u of %u bytes left for queue %d",
			    __func__, len - off, len, queue);
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

/*
 * A window open to the peer's FIN.  After the receive queue is filled
 * the restored socket's window is the initial one less the bytes queued,
 * often 0 for a slow reader, and Linux 6.1 drops a FIN that meets a zero
 * window (tcp_data_queue).  The real window is set once the FINs are in.
 */
static int
sk_open_window(int fd, const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;
	struct tcp_repair_window w;
	uint32_t rcv_nxt = t->rcv_seq + t->rcvq_len;

	memset(&w, 0, sizeof(w));
	w.snd_wl1 = rcv_nxt;
	w.snd_wnd = (st->flags & SK_F_WINDOW) ? t->win.snd_wnd : 65535;
	w.max_window = (st->flags & SK_F_WINDOW) ? t->win.max_window : 65535;
	if (w.max_window < w.snd_wnd)
		w.max_window = w.snd_wnd;
	w.rcv_wnd = 65535;
	w.rcv_wup = rcv_nxt;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w,
	    sizeof(w)) < 0) {
		sk_log_errno("%s: TCP_REPAIR_WINDOW", __func__);
		return -1;
	}
	return 0;
}

/* The peer's FIN; it had acked up to snd_seq (our first queued byte). */
static int
sk_fin_in(const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;

	return sk_inject_tcp(st, t->rcv_seq + t->rcvq_len, t->snd_seq,
	    sk_peer_window(st), SK_INJ_FIN | SK_INJ_ACK);
}

/* FIN_WAIT2: the peer had acked our FIN (and every byte before). */
static int
sk_fin_acked(const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;

	return sk_inject_tcp(st, t->rcv_seq + t->rcvq_len,
	    t->snd_seq + t->sndq_len + 1, sk_peer_window(st), SK_INJ_ACK);
}

/*
 * ENDED: the peer's FIN and its acknowledgement of ours in one segment,
 * after ours is queued (FIN_WAIT1).  The socket answers with an ACK at
 * once and is done in the same step; the stand-in peer's stack resets
 * that ACK, but the reset finds only the TIME_WAIT left behind.  (FIN
 * first, then ours, as for LAST_ACK, leaves a delayed ACK armed in
 * CLOSE_WAIT: a host slow to reach the next step reset the socket.)
 */
static int
sk_fin_both(const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;

	return sk_inject_tcp(st, t->rcv_seq + t->rcvq_len,
	    t->snd_seq + t->sndq_len + 1, sk_peer_window(st),
	    SK_INJ_FIN | SK_INJ_ACK);
}

/*
 * The state the replay reached is the one recorded, or the restore
 * fails: an injected segment the socket dropped leaves it elsewhere.
 * The stack takes an injected segment in a softirq, most often before
 * sendto() returns but later on a loaded host: it is given up to a
 * second to get there.
 */
static int
sk_state_is(int fd, enum sk_st want)
{
	struct tcp_info ti;
	socklen_t len;
	int kernel = want == SK_ST_ENDED ? SK_ST_CLOSE : (int)want, tries;

	for (tries = 0; tries < 200; tries++) {
		memset(&ti, 0, sizeof(ti));
		len = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0) {
			sk_log_errno("sk_tcp_restore: TCP_INFO");
			return -1;
		}
		if (ti.tcpi_state == kernel)
			return 0;
		usleep(5000);
	}
	sk_log(LOG_WARNING, "sk_tcp_restore: the replay reached state %s, "
	    "the record says %s", sk_st_name((enum sk_st)ti.tcpi_state) ?
	    sk_st_name((enum sk_st)ti.tcpi_state) : "?", sk_st_name(want));
	return -1;
}

/* A connection that ended by FIN reads EOF, not an error the replay
 * left (a retransmission of our FIN that the stand-in peer reset). */
static int
sk_no_error(int fd)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
		sk_log_errno("sk_tcp_restore: SO_ERROR");
		return -1;
	}
	if (err != 0) {
		sk_log(LOG_WARNING, "sk_tcp_restore: the replay of an ended "
		    "connection left error %s", strerror(err));
		return -1;
	}
	return 0;
}

/* Socket, options, buffers large enough for the queues, repair on. */
static int
sk_tcp_begin(struct sk_handle *h, const struct sk_state *st, int repair)
{
	const struct sk_tcp *t = &st->tcp;
	uint32_t snd, rcv;

	/* the late ones wait for sk_resume() */
	if (sk_opts_apply(h->fd, st, 0) < 0 ||
	    (h->late = sk_opts_copy(st)) == NULL)
		return -1;
	snd = sk_bufs_room(t->sndq_len);
	rcv = sk_bufs_room(t->rcvq_len);
	if (sk_bufs_force(h->fd, snd > st->bufs.snd ? snd : st->bufs.snd,
	    rcv > st->bufs.rcv ? rcv : st->bufs.rcv) < 0)
		return -1;
	if (repair) {
		if (sk_tcp_repair(h->fd, 1) < 0)
			return -1;
		h->repair = true;
	}
	return 0;
}

/*
 * Connect in repair mode (no SYN), with the MSS clamp as a user MSS
 * while connect() computes the segment size.
 */
static int
sk_tcp_connect(int fd, const struct sk_state *st,
    const struct sockaddr_storage *remote)
{
	const struct sk_tcp *t = &st->tcp;
	/* TCP_MAXSEG takes at most MAX_TCP_WINDOW (32767): an MTU above
	 * 32 KiB (loopback) starts at that, the rest at their own */
	uint32_t mss = t->mss > 32767 ? 32767 : t->mss;

	if (mss >= 88 && sk_setint(fd, IPPROTO_TCP, TCP_MAXSEG,
	    (int)mss) < 0) {
		sk_log_errno("%s: TCP_MAXSEG %u", __func__, mss);
		return -1;
	}
	if (bind(fd, (const struct sockaddr *)&st->local,
	    sk_addr_len(&st->local)) < 0) {
		sk_log_errno("%s: bind", __func__);
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)remote,
	    sk_addr_len(remote)) < 0) {
		sk_log_errno("%s: connect", __func__);
		return -1;
	}
	/* as a fresh socket: the clamp lives in the connection now */
	if (sk_setint(fd, IPPROTO_TCP, TCP_MAXSEG, 0) < 0) {
		sk_log_errno("%s: TCP_MAXSEG 0", __func__);
		return -1;
	}
	return 0;
}

static int
sk_tcp_restore_conn(struct sk_handle *h, const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;
	struct tcp_repair_window w;
	uint32_t inflight;
	int fd = h->fd, v;

	if (!(st->flags & SK_F_REMOTE)) {
		sk_log(LOG_WARNING, "%s: %s without a remote address",
		    __func__, sk_st_name(st->state));
		return -1;
	}
	if (sk_tcp_begin(h, st, 1) < 0)
		return -1;
	if (sk_set_queue_seq(fd, TCP_SEND_QUEUE, t->snd_seq) < 0 ||
	    sk_set_queue_seq(fd, TCP_RECV_QUEUE, t->rcv_seq) < 0 ||
	    sk_tcp_connect(fd, st, &st->remote) < 0 ||
	    sk_repair_options(fd, t) < 0)
		return -1;
	if ((st->flags & SK_F_TSVAL) &&
	    sk_setint(fd, IPPROTO_TCP, TCP_TIMESTAMP, (int)t->ts_val) < 0 &&
	    errno != ENOPROTOOPT) {
		sk_log_errno("%s: TCP_TIMESTAMP", __func__);
		return -1;
	}
	/* before the queues: the in-flight bytes arm the restored RTO */
	if (st->flags & SK_F_PATH)
		sk_path_restore(fd, &t->path);

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
		if (sk_open_window(fd, st) < 0 || sk_fin_in(st) < 0)
			return -1;
		break;
	case SK_ST_LAST_ACK:
		if (sk_open_window(fd, st) < 0 || sk_fin_in(st) < 0 ||
		    sk_fin_out(fd) < 0)
			return -1;
		break;
	case SK_ST_CLOSING:
		if (sk_open_window(fd, st) < 0 || sk_fin_out(fd) < 0 ||
		    sk_fin_in(st) < 0)
			return -1;
		break;
	default:
		break;
	}
	if (sk_state_is(fd, st->state) < 0)
		return -1;

	if (st->flags & SK_F_WINDOW) {
		uint32_t rcv_nxt = t->rcv_seq + t->rcvq_len +
		    (sk_st_fin_rcvd(st->state) ? 1 : 0);

		memset(&w, 0, sizeof(w));
		w.snd_wl1 = t->win.snd_wl1;
		w.snd_wnd = t->win.snd_wnd;
		w.max_window = t->win.max_window;
		w.rcv_wnd = t->win.rcv_wnd;
		w.rcv_wup = t->win.rcv_wup;
		/*
		 * snd_wl1 is the sequence number of the segment that last
		 * moved the peer's window; a segment whose data a full
		 * receive queue dropped still moved it, so it may lie
		 * beyond what the window now lets in, which the kernel
		 * refuses.  An earlier snd_wl1 only lets the next window
		 * update through more readily.
		 */
		if ((int32_t)(w.snd_wl1 - (rcv_nxt + w.rcv_wnd)) > 0)
			w.snd_wl1 = rcv_nxt;
		if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w,
		    sizeof(w)) < 0 && errno != ENOPROTOOPT) {
			sk_log_errno("%s: TCP_REPAIR_WINDOW", __func__);
			return -1;
		}
	}
	/* a clamp the owner set below what the buffers gave */
	if (t->window_clamp > 0 &&
	    sk_getint(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v) == 0 &&
	    (uint32_t)v > t->window_clamp &&
	    sk_setint(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP,
	    (int)t->window_clamp) < 0) {
		sk_log_errno("%s: TCP_WINDOW_CLAMP", __func__);
		return -1;
	}
	sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	return 0;
}

/* A stand-in peer for an ENDED connection: its own address, on a low
 * port that no other stand-in of this process holds now. */
static void
sk_stand_in(const struct sockaddr_storage *local, unsigned n,
    struct sockaddr_storage *out)
{
	uint16_t port = (uint16_t)(1 + n % 1000);

	*out = *local;
	if (port == sk_addr_port(local))
		port++;
	if (out->ss_family == AF_INET)
		((struct sockaddr_in *)out)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)out)->sin6_port = htons(port);
}

unsigned sk_test_ended_stall_ms;

/* the stall the engine's tests ask for, once */
static int
sk_test_stall(void)
{
	unsigned ms = sk_test_ended_stall_ms;

	sk_test_ended_stall_ms = 0;
	if (ms > 0)
		usleep(ms * 1000);
	return 0;
}

static int
sk_tcp_restore_ended(struct sk_handle *h, const struct sk_state *st)
{
	static unsigned next;
	struct sk_state *s;
	int fd = h->fd, rc = -1, tries;

	/* the connection as the injections see it: the stand-in peer, and
	 * sequence numbers of our own */
	if ((s = sk_state_new()) == NULL) {
		sk_log_errno("%s: sk_state_new", __func__);
		return -1;
	}
	s->family = st->family;
	s->local = st->local;
	s->state = st->state;
	s->tcp.snd_seq = ENDED_SND_SEQ;
	s->tcp.rcv_seq = ENDED_RCV_SEQ;
	s->tcp.rcvq_len = st->tcp.rcvq_len;
	if (sk_tcp_begin(h, st, 1) < 0 ||
	    sk_set_queue_seq(fd, TCP_SEND_QUEUE, ENDED_SND_SEQ) < 0 ||
	    sk_set_queue_seq(fd, TCP_RECV_QUEUE, ENDED_RCV_SEQ) < 0)
		goto out;
	if (bind(fd, (const struct sockaddr *)&st->local,
	    sk_addr_len(&st->local)) < 0) {
		sk_log_errno("%s: bind", __func__);
		goto out;
	}
	for (tries = 0; tries < 1000; tries++) {
		sk_stand_in(&st->local, next++, &s->remote);
		if (connect(fd, (const struct sockaddr *)&s->remote,
		    sk_addr_len(&s->remote)) == 0)
			break;
		if (errno != EADDRNOTAVAIL && errno != EADDRINUSE) {
			sk_log_errno("%s: connect", __func__);
			goto out;
		}
	}
	if (tries == 1000 || sk_fill_queue(fd, TCP_RECV_QUEUE, st->tcp.rcvq,
	    st->tcp.rcvq_len) < 0)
		goto out;
	if (st->tcp.end == SK_END_RESET) {
		/* in ESTABLISHED a RST leaves ECONNRESET for the reader */
		if (sk_inject_tcp(s, ENDED_RCV_SEQ + st->tcp.rcvq_len,
		    ENDED_SND_SEQ, 65535, SK_INJ_RST) < 0)
			goto out;
	} else if (sk_open_window(fd, s) < 0 || sk_fin_out(fd) < 0 ||
	    sk_test_stall() < 0 || sk_fin_both(s) < 0)
		goto out;
	if (sk_state_is(fd, SK_ST_ENDED) < 0 ||
	    (st->tcp.end != SK_END_RESET && sk_no_error(fd) < 0))
		goto out;
	/* closed now: leaving repair sends nothing */
	if (sk_tcp_repair(fd, TCP_REPAIR_OFF_NO_WP) < 0)
		goto out;
	h->repair = false;
	rc = 0;
out:
	sk_state_free(s);
	return rc;
}

static int
sk_tcp_restore_syn_sent(struct sk_handle *h, const struct sk_state *st)
{
	int fd = h->fd, fl;

	if (!(st->flags & SK_F_REMOTE)) {
		sk_log(LOG_WARNING, "%s: SYN_SENT without a remote address",
		    __func__);
		return -1;
	}
	if (sk_tcp_begin(h, st, 1) < 0 ||
	    sk_set_queue_seq(fd, TCP_SEND_QUEUE, st->tcp.snd_seq) < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)&st->local,
	    sk_addr_len(&st->local)) < 0) {
		sk_log_errno("%s: bind", __func__);
		return -1;
	}
	if (sk_tcp_repair(fd, TCP_REPAIR_OFF_NO_WP) < 0)
		return -1;
	h->repair = false;
	/* connect() keeps the sequence number set: the same SYN again */
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		sk_log_errno("%s: O_NONBLOCK", __func__);
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)&st->remote,
	    sk_addr_len(&st->remote)) == 0 || errno != EINPROGRESS) {
		sk_log_errno("%s: connect", __func__);
		return -1;
	}
	if (fcntl(fd, F_SETFL, fl) < 0) {
		sk_log_errno("%s: F_SETFL", __func__);
		return -1;
	}
	return sk_state_is(fd, SK_ST_SYN_SENT);
}

/* LISTEN, BOUND and CLOSE: no repair needed, nothing in flight. */
static int
sk_tcp_restore_plain(struct sk_handle *h, const struct sk_state *st)
{
	int fd = h->fd;

	if (sk_tcp_begin(h, st, 0) < 0)
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
	case SK_ST_ENDED:
		return sk_tcp_restore_ended(h, st);
	case SK_ST_SYN_SENT:
		return sk_tcp_restore_syn_sent(h, st);
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
