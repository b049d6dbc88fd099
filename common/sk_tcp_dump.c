/*
 * TCP dump: read a paused (repair mode) socket's state and queues.
 *
 * Sequence arithmetic (all mod 2^32).  In repair mode TCP_QUEUE_SEQ
 * reads write_seq (send queue selected) and rcv_nxt (receive queue
 * selected).  SIOCOUTQ is write_seq - snd_una (not acked), SIOCOUTQNSD
 * write_seq - snd_nxt (never sent), SIOCINQ the unread data bytes (a
 * received FIN not counted).  A FIN occupies one sequence number:
 * write_seq counts ours once sent or queued, rcv_nxt counts the
 * peer's once received.  The record holds data bytes only, with the
 * sequence number of the first one; the FINs follow from the state.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sk_priv.h"

#ifndef TCP_REPAIR_WINDOW
#define TCP_REPAIR_WINDOW	29
#endif

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
	    sk_ioctl_u32(fd, SIOCINQ, "SIOCINQ", &inq) < 0)
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
	sk_setint(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
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
	default:
		if (!sk_st_tcp_movable(st->state)) {
			sk_log(LOG_WARNING, "%s: state %d", __func__,
			    st->state);
			return -1;
		}
		return sk_tcp_save_conn(h, st);
	}
}
