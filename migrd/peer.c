/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "chan_rx.h"
#include "clock.h"
#include "frame.h"
#include "frame_z.h"
#include "listener.h"
#include "log.h"
#include "mig.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "peer.h"
#include "sk_engine.h"
#include "tlsd.h"
#include "tree.h"

/* deflate level of the channel (compress deflate): 1, the fastest, takes
 * a socket record to a tenth; higher levels gain a few percent more at
 * twice the CPU (docs/performance.md) */
#define CHANNEL_DEFLATE_LEVEL	1

#define BACKOFF_MIN	1
#define BACKOFF_MAX	30

enum sess_state { S_TLS, S_HELLO, S_UP, S_CLOSING };

struct peer;

struct session {
	TAILQ_ENTRY(session)	 entry;
	uint32_t		 id;		/* the TLS process's */
	struct bufferevent	*bev;		/* plaintext, once up */
	struct event		*tick;
	struct peer		*peer;		/* NULL until hello (inbound) */
	int			 outbound;
	enum sess_state		 state;
	char			 addr[96];
	char			 ip[INET6_ADDRSTRLEN];	/* inbound */
	uint64_t		 created_ms;
	uint64_t		 last_rx_ms;
	uint64_t		 hb_seq;
	uint64_t		 hb_rx;
	time_t			 up_since;
	struct frame_z		*z;	/* both announced deflate */
	int			 raw_images;	/* the peer takes binary
						   tails (frame.h) */
	int			 raw_chunks;	/* on chunks too */
	int			 repair_path;	/* and records with the
						   connections' paths */
	int			 gate;		/* and gated workloads */
	uint64_t		 tx_json;	/* JSON bytes sent */
	uint64_t		 rx_json;	/* compressed frames received: */
	uint64_t		 rx_wire;	/* their JSON, their wire bytes */
	uint64_t		 cert_names;	/* bit i: peers[i] (tlsd.h) */
	char			 tls[16];	/* "TLSv1.3" */
	char			 cipher[64];
	char			 cert[160];
};

struct peer {
	const struct peer_conf	*pc;
	struct session		*sess;		/* up, or being set up (dialer) */
	struct event		*redial;
	unsigned		 backoff;
	int			 dialer;
	unsigned		 sessions;	/* times it came up */
	char			 last_error[200];
};

static TAILQ_HEAD(, session)	sessions = TAILQ_HEAD_INITIALIZER(sessions);
static unsigned			nsessions;
/* sessions of any state, inbound ones before hello included */
#define SESSIONS_MAX	(2 * CONF_PEERS_MAX + 16)
/* inbound sessions from one address still in TLS or hello */
#define PREAUTH_PER_ADDR	4
/* at most one warning this often about refused connections */
#define PREAUTH_WARN_MS		10000
static struct peer		peers[CONF_PEERS_MAX];
static int			npeers;
static struct listener		*peer_listener;

static void	sess_close(struct session *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static void	peer_dial(evutil_socket_t, short, void *);

static const char *
state_name(const struct session *s)
{
	switch (s->state) {
	case S_TLS:	return "tls-handshake";
	case S_HELLO:	return "hello";
	case S_UP:	return "up";
	case S_CLOSING:	return "closing";
	}
	return "?";
}

static void
schedule_redial(struct peer *p)
{
	struct timeval tv = { p->backoff, 0 };

	if (!p->dialer || p->redial == NULL)
		return;
	log_debug("%s: %s in %u s", __func__, p->pc->name, p->backoff);
	evtimer_add(p->redial, &tv);
	p->backoff = p->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX :
	    p->backoff * 2;
}

static void
sess_free(struct session *s)
{
	struct peer *p = s->peer;

	TAILQ_REMOVE(&sessions, s, entry);
	nsessions--;
	if (s->tick)
		event_free(s->tick);
	frame_z_free(s->z);
	/* closing the plaintext closes the connection: the TLS process
	 * flushes it, then lingers (tlsd.c); before that, it is told */
	if (s->bev != NULL)
		bufferevent_free(s->bev);
	else
		tlsd_drop(s->id);
	if (p != NULL && p->sess == s) {
		p->sess = NULL;
		schedule_redial(p);
	}
	free(s);
}

static void
sess_close_cb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		sess_free(s);
}

static void
sess_close_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	sess_free(arg);
}

/* Log why, remember it for "peers", then flush what is queued and free. */
static void
sess_close(struct session *s, const char *fmt, ...)
{
	char why[200];
	va_list ap;
	int was_up = s->state == S_UP;

	if (s->state == S_CLOSING)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (s->peer != NULL) {
		snprintf(s->peer->last_error, sizeof(s->peer->last_error),
		    "%s", why);
		if (was_up) {
			history_add("peer", "%s down: %s", s->peer->pc->name,
			    why);
			mig_channel(s->peer->pc->name, 0);
		}
		else
			log_warnx("peer %s (%s): %s", s->peer->pc->name,
			    s->addr, why);
	} else
		log_warnx("peer %s: connection refused: %s", s->addr, why);
	s->state = S_CLOSING;
	/* never free here: callers up the stack still hold s */
	if (s->bev == NULL) {
		event_active(s->tick, EV_TIMEOUT, 1);
		return;
	}
	bufferevent_disable(s->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(s->bev)) == 0)
		event_active(s->tick, EV_TIMEOUT, 1);
	else
		bufferevent_setcb(s->bev, NULL, sess_close_cb,
		    sess_close_event, s);
}

static int
sess_send_tail(struct session *s, uint16_t type, json_t *payload,
    const void *tail, size_t taillen)
{
	struct evbuffer *out = bufferevent_get_output(s->bev);
	size_t max = MSG_BULK(type) ? MIGR_FRAME_MAX : migrd.conf.max_message;
	size_t before = evbuffer_get_length(out);
	uint64_t json0;
	int rc;

	if (s->z != NULL) {
		json0 = frame_z_stats(s->z)->json_out;
		rc = frame_push_z_tail(out, s->z, type, payload, tail, taillen,
		    max);
		if (rc == 0)
			s->tx_json += frame_z_stats(s->z)->json_out - json0;
	} else {
		rc = frame_push_tail(out, type, payload, tail, taillen, max);
		if (rc == 0)
			s->tx_json += evbuffer_get_length(out) - before -
			    MIGR_FRAME_HDR_LEN;
	}
	json_decref(payload);
	if (rc == -1)
		return -1;
	/* records are paced by the dumper (peer_output_len) instead */
	if (type != MSG_MIG_RECORD && type != MSG_MIG_CHUNK &&
	    evbuffer_get_length(out) > migrd.conf.max_queue) {
		sess_close(s, "output queue above max-queue (%u bytes)",
		    migrd.conf.max_queue);
		return -1;
	}
	return 0;
}

static int
sess_send(struct session *s, uint16_t type, json_t *payload)
{
	return sess_send_tail(s, type, payload, NULL, 0);
}

static void
send_result(struct session *s, int code, const char *msg)
{
	sess_send(s, MSG_RESULT, json_pack("{s:i,s:s}", "code", code,
	    "message", msg));
}

static void
send_hello(struct session *s)
{
	/* raw-images: a piece of an image as a binary tail (frame.h) */
	/* gate: a workload's "gate" in PREPARE (launch.h) */
	/* raw-chunks: a chunk's queue bytes as a binary tail */
	json_t *caps = json_pack("[s,s,s,s]", "heartbeat", "raw-images",
	    "gate", "raw-chunks");

	if (caps != NULL && migrd.conf.compress == CONF_COMPRESS_DEFLATE)
		json_array_append_new(caps, json_string("deflate"));
	/* repair-path: this host restores TCP_REPAIR_PATH (sk_path.c) */
	if (caps != NULL && migrd.conf.repair_path && sk_path_supported())
		json_array_append_new(caps, json_string("repair-path"));
	sess_send(s, MSG_HELLO, json_pack("{s:i,s:s,s:s,s:o}",
	    "version", MIGR_PROTO_VERSION, "host", migrd.conf.hostname,
	    "peer", s->peer ? s->peer->pc->name : "",
	    "capabilities", caps));
}

/*
 * After both hellos: what the peer takes (binary tails on images), and
 * compression from the next message on, each way, when both announced
 * deflate.  The dialer sends nothing between its hello
 * and the answer, and the listener answers before it compresses, so
 * each side knows where the other's stream begins.
 */
static int
sess_caps(struct session *s, json_t *hello)
{
	s->raw_images = chan_hello_has(hello, "raw-images");
	s->raw_chunks = chan_hello_has(hello, "raw-chunks");
	s->repair_path = chan_hello_has(hello, "repair-path");
	s->gate = chan_hello_has(hello, "gate");
	if (migrd.conf.compress != CONF_COMPRESS_DEFLATE ||
	    !chan_hello_has(hello, "deflate"))
		return 0;
	if ((s->z = frame_z_new(CHANNEL_DEFLATE_LEVEL, FRAME_Z_SEND)) == NULL) {
		sess_close(s, "cannot set up compression");
		return -1;
	}
	return 0;
}

/* Does the certificate of s name peer p (the TLS process's bit)? */
static int
cert_names(const struct session *s, const struct peer *p)
{
	return (s->cert_names & (1ull << (p - peers))) != 0;
}

static struct peer *
find_peer(const char *name)
{
	int i;

	for (i = 0; i < npeers; i++)
		if (strcmp(peers[i].pc->name, name) == 0)
			return &peers[i];
	return NULL;
}

static void
sess_up(struct session *s)
{
	s->state = S_UP;
	s->up_since = time(NULL);
	s->peer->backoff = BACKOFF_MIN;
	s->peer->sessions++;
	s->peer->last_error[0] = '\0';
	history_add("peer", "%s up (%s, %s, %s)", s->peer->pc->name, s->addr,
	    s->tls, s->outbound ? "outbound" : "inbound");
	mig_channel(s->peer->pc->name, 1);
}

/*
 * A hello's fields, and its sender against the configured peers (its
 * certificate is the caller's to check): RES_OK with *host and *to set,
 * or RES_BAD_REQUEST (malformed: closed without a word), RES_BAD_VERSION
 * or RES_UNKNOWN_PEER (answered with that result), and why.
 */
int
peer_hello_check(json_t *j, const struct migrd_conf *c, const char **host,
    const char **to, char *why, size_t len)
{
	json_int_t version;
	json_t *caps;
	json_error_t jerr;

	if (json_unpack_ex(j, &jerr, JSON_STRICT, "{s:I,s:s,s:s,s:o}",
	    "version", &version, "host", host, "peer", to,
	    "capabilities", &caps) == -1) {
		snprintf(why, len, "malformed hello: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if (!json_is_array(caps)) {
		snprintf(why, len, "malformed hello: capabilities is not an "
		    "array");
		return RES_BAD_REQUEST;
	}
	if (version != MIGR_PROTO_VERSION) {
		snprintf(why, len, "hello with protocol version %lld, ours is "
		    "%d", (long long)version, MIGR_PROTO_VERSION);
		return RES_BAD_VERSION;
	}
	if (config_find_peer(c, *host) == NULL) {
		snprintf(why, len, "hello from unknown host '%.64s'", *host);
		return RES_UNKNOWN_PEER;
	}
	return RES_OK;
}

static void
handle_hello(struct session *s, json_t *j)
{
	const char *host, *to;
	char why[200];
	struct peer *p;
	int rc;

	if ((rc = peer_hello_check(j, &migrd.conf, &host, &to, why,
	    sizeof(why))) != RES_OK) {
		if (rc != RES_BAD_REQUEST)
			send_result(s, rc, migr_strresult(rc));
		sess_close(s, "%s", why);
		return;
	}
	/* the peers are the configured ones (peer_init) */
	if ((p = find_peer(host)) == NULL) {
		send_result(s, RES_UNKNOWN_PEER, "unknown peer");
		sess_close(s, "hello from unknown host '%.64s'", host);
		return;
	}
	if (!cert_names(s, p)) {
		send_result(s, RES_DENIED, "certificate does not match name");
		sess_close(s, "hello as '%s' but certificate is %s", host,
		    s->cert);
		return;
	}
	if (strcmp(to, migrd.conf.hostname) != 0) {
		send_result(s, RES_UNKNOWN_PEER, "wrong host");
		sess_close(s, "hello for '%.64s', we are '%s'", to,
		    migrd.conf.hostname);
		return;
	}
	if (s->outbound) {
		if (p != s->peer) {
			sess_close(s, "dialed %s but '%s' answered",
			    s->peer->pc->name, host);
			return;
		}
		if (sess_caps(s, j) == -1)
			return;
		sess_up(s);
		return;
	}
	if (p->sess != NULL && p->sess != s) {
		/* the dialer only dials without a session: its view wins */
		sess_close(p->sess, "replaced by a new session from %s",
		    s->addr);
		if (p->sess != NULL && p->sess->state == S_CLOSING)
			p->sess->peer = NULL;
		p->sess = NULL;
	}
	s->peer = p;
	p->sess = s;
	send_hello(s);
	if (sess_caps(s, j) == -1)
		return;
	sess_up(s);
}

static void
handle_frame(struct session *s, struct frame_hdr *h, json_t *j)
{
	json_int_t code = -1;
	const char *msg = "";

	switch (h->type) {
	case MSG_HELLO:
		if (s->state != S_HELLO) {
			sess_close(s, "unexpected second hello");
			return;
		}
		handle_hello(s, j);
		return;
	case MSG_HEARTBEAT:
		if (s->state != S_UP) {
			sess_close(s, "heartbeat before hello");
			return;
		}
		s->hb_rx++;
		return;
	case MSG_RESULT:
		json_unpack(j, "{s?I,s?s}", "code", &code, "message", &msg);
		sess_close(s, "peer ended the session: %lld %.100s",
		    (long long)code, msg);
		return;
	default:
		if (MSG_IS_MIG(h->type) && s->state == S_UP) {
			mig_rx(s->peer->pc->name, h->type, j);
			return;
		}
		sess_close(s, "message type %u (%s) is not for the peer "
		    "channel%s", h->type, migr_msgname(h->type),
		    MSG_IS_MIG(h->type) ? " before hello" : "");
		return;
	}
}

/* A refusal of the peer's frame, by the TLS process or by the limit. */
static void
sess_refused(struct session *s, int st, const struct frame_hdr *h,
    size_t limit)
{
	if (st == FRAME_BAD_VERSION)
		send_result(s, RES_BAD_VERSION, "protocol version mismatch");
	else
		send_result(s, frame_status_result(st), frame_strstatus(st));
	if (st == FRAME_BAD_VERSION)
		sess_close(s, "frame version %u, ours is %d", h->version,
		    MIGR_PROTO_VERSION);
	else if (st == FRAME_TOO_BIG && limit == migrd.conf.max_message)
		sess_close(s, "frame of %u bytes is above max-message %u",
		    h->len, migrd.conf.max_message);
	else if (st == FRAME_TOO_BIG)
		sess_close(s, "frame of %u bytes is above the record limit "
		    "%zu", h->len, limit);
	else
		sess_close(s, "%s", frame_strstatus(st));
}

/*
 * What the peer sent, as the TLS process parsed it: one tree a frame
 * (tree.h).  Nothing of the peer's bytes is parsed here.
 */
static void
sess_read(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct tree_item it;
	struct frame_hdr h;
	json_t *j;
	int st;

	/* bytes came: the peer lives, though a large frame is not whole
	 * yet (records at a slow link's pace take longer than dead-time;
	 * the TLS process says so, TREE_PROGRESS) */
	if (evbuffer_get_length(in) > 0)
		s->last_rx_ms = (uint64_t)mono_ms();
	while (s->state == S_HELLO || s->state == S_UP) {
		/* socket records may be large, but only from the peer of a
		 * migration this host has prepared for */
		size_t limit = s->state == S_UP ?
		    mig_rx_limit(s->peer->pc->name) : migrd.conf.max_message;

		bufferevent_setwatermark(bev, EV_READ, 0,
		    tree_item_max(limit));
		st = tree_pull(in, limit, &it, &h, &j);
		if (st == FRAME_PARTIAL)
			return;
		if (st == TREE_PROGRESS)
			continue;
		if (st == TREE_BAD) {
			sess_close(s, "the TLS process sent a malformed %s "
			    "(status %u, %u bytes): %s", migr_msgname(h.type),
			    it.status, it.body, "a bug, or it was taken over");
			return;
		}
		if (st != FRAME_OK) {
			sess_refused(s, st, &h, limit);
			return;
		}
		if (it.flags & TREE_Z) {
			s->rx_json += it.len;
			s->rx_wire += it.wire;
		}
		if (h.len > migrd.conf.max_message && !MSG_BULK(h.type)) {
			json_decref(j);
			sess_close(s, "%s of %u bytes is above max-message %u",
			    migr_msgname(h.type), h.len,
			    migrd.conf.max_message);
			return;
		}
		handle_frame(s, &h, j);
		json_decref(j);
	}
}

static void
sess_event(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;

	(void)bev;
	/* the TLS process closes the plaintext when the connection ends
	 * (it logs a TLS error itself) */
	if (what & BEV_EVENT_EOF) {
		sess_close(s, "connection closed by peer");
		return;
	}
	sess_close(s, "connection failed: %s",
	    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
}

static void
sess_tick(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;
	uint64_t now = (uint64_t)mono_ms();

	(void)fd;
	(void)what;
	if (s->state == S_CLOSING) {
		sess_free(s);	/* closed with nothing queued, or flush too slow */
		return;
	}
	if (s->state != S_UP) {
		if (now - s->created_ms > migrd.conf.handshake_timeout * 1000ull)
			sess_close(s, "no hello within %u s",
			    migrd.conf.handshake_timeout);
		return;
	}
	if (now - s->last_rx_ms > migrd.conf.dead_ms) {
		sess_close(s, "dead: nothing received for %llu ms",
		    (unsigned long long)(now - s->last_rx_ms));
		return;
	}
	sess_send(s, MSG_HEARTBEAT, json_pack("{s:I}", "seq",
	    (json_int_t)++s->hb_seq));
}

/*
 * A session for TCP socket fd, in its handshake: the TLS process gets
 * the socket (tlsd_new) and answers with the plaintext (peer_tls_up) or
 * why not (peer_tls_failed).  p: the peer dialed (outbound), or NULL.
 * NULL with why set if it could not be made; fd is closed either way
 * (or the TLS process's).
 */
static struct session *
sess_new(int fd, int outbound, struct peer *p, char *why, size_t len)
{
	static uint32_t next_id;
	struct session *s;
	struct timeval tv;

	if (!tlsd_ready()) {
		snprintf(why, len, "the TLS process is not running");
		close(fd);
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(why, len, "out of memory");
		close(fd);
		return NULL;
	}
	if (++next_id == 0)
		next_id = 1;
	s->id = next_id;
	s->outbound = outbound;
	s->peer = p;
	s->created_ms = (uint64_t)mono_ms();
	tv = ms_timeval((long)migrd.conf.heartbeat_ms);
	s->tick = event_new(migrd.base, -1, EV_PERSIST, sess_tick, s);
	if (s->tick == NULL || evtimer_add(s->tick, &tv) == -1) {
		snprintf(why, len, "cannot add its timer");
		if (s->tick != NULL)
			event_free(s->tick);
		free(s);
		close(fd);
		return NULL;
	}
	if (tlsd_new(s->id, fd, outbound, p != NULL ?
	    (unsigned)(p - peers) : 0) == -1) {
		snprintf(why, len, "cannot hand it to the TLS process");
		event_free(s->tick);
		free(s);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	nsessions++;
	return s;
}

static struct session *
sess_by_id(uint32_t id)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->id == id)
			return s;
	return NULL;
}

/* The handshake is done: fd carries the session's plaintext. */
static void
peer_tls_up(const struct tlsd_msg *m, int fd)
{
	struct session *s = sess_by_id(m->id);

	if (s == NULL || s->state != S_TLS || s->bev != NULL) {
		close(fd);	/* given up on (tlsd_drop is on its way) */
		return;
	}
	s->cert_names = m->names;
	snprintf(s->tls, sizeof(s->tls), "%s", m->version);
	snprintf(s->cipher, sizeof(s->cipher), "%s", m->cipher);
	snprintf(s->cert, sizeof(s->cert), "%s", m->cert);
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (s->bev = bufferevent_socket_new(migrd.base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		sess_close(s, "cannot set up the session's buffers");
		return;
	}
	/* never buffer more than one maximal frame of input */
	bufferevent_setwatermark(s->bev, EV_READ, 0,
	    migrd.conf.max_message + MIGR_FRAME_HDR_LEN);
	bufferevent_setcb(s->bev, sess_read, NULL, sess_event, s);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	s->state = S_HELLO;
	s->last_rx_ms = (uint64_t)mono_ms();
	if (s->outbound) {
		/* the TLS process checked it too */
		if (!cert_names(s, s->peer)) {
			sess_close(s, "certificate does not name %s",
			    s->peer->pc->name);
			return;
		}
		send_hello(s);
	}
}

static void
peer_tls_failed(uint32_t id, const char *why)
{
	struct session *s = sess_by_id(id);

	if (s != NULL && s->state == S_TLS)
		sess_close(s, "%s", why);
}

/* The TLS process died: the sessions in their handshake die with it
 * (those up see their plaintext close). */
static void
peer_tls_lost(void)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->state == S_TLS)
			sess_close(s, "the TLS process exited");
}

static const struct tlsd_hooks tls_hooks = {
	.up = peer_tls_up, .fail = peer_tls_failed, .lost = peer_tls_lost
};

static void
fmt_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		port = ntohs(in6->sin6_port);
	}
	snprintf(buf, len, "%s:%u", a, port);
}

/* The IP of sa as inet_ntop writes it; a v4-mapped IPv6 one as IPv4. */
static void
fmt_ip(const struct sockaddr *sa, char *buf, size_t len)
{
	const struct sockaddr_in6 *in6 = (const void *)sa;
	const struct sockaddr_in *in = (const void *)sa;

	snprintf(buf, len, "?");
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &in->sin_addr, buf, len);
	else if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
		inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], buf, len);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &in6->sin6_addr, buf, len);
}

/* Is ip (as fmt_ip() writes it) a configured peer's address? */
static int
is_peer_ip(const char *ip)
{
	char canon[INET6_ADDRSTRLEN];
	unsigned char bin[16];
	int i, af;

	for (i = 0; i < migrd.conf.npeers; i++) {
		af = strchr(migrd.conf.peers[i].addr, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(af, migrd.conf.peers[i].addr, bin) == 1 &&
		    inet_ntop(af, bin, canon, sizeof(canon)) != NULL &&
		    strcmp(canon, ip) == 0)
			return 1;
	}
	return 0;
}

/* inbound sessions from ip not yet through TLS and hello */
static unsigned
unfinished_from(const char *ip)
{
	struct session *s;
	unsigned n = 0;

	TAILQ_FOREACH(s, &sessions, entry)
		if (!s->outbound && s->state != S_UP &&
		    strcmp(s->ip, ip) == 0)
			n++;
	return n;
}

/*
 * Before any TLS: a connection is refused unless it comes from a
 * configured peer's address, and that address has fewer than
 * PREAUTH_PER_ADDR connections still in their handshake.  So a stranger
 * who reaches the port costs an accept() and a close(), and cannot use
 * up the sessions real peers need.  Refusals are counted and reported at
 * most every PREAUTH_WARN_MS, so a flood does not flood the log.
 */
static int
preauth_ok(const char *ip, const char *addr)
{
	static uint64_t last_warn_ms;
	static unsigned refused;
	static char why[160];
	uint64_t now = (uint64_t)mono_ms();

	if (!is_peer_ip(ip))
		snprintf(why, sizeof(why), "%s is no peer's address", addr);
	else if (unfinished_from(ip) >= PREAUTH_PER_ADDR)
		snprintf(why, sizeof(why), "%s has %d connections in their "
		    "handshake", ip, PREAUTH_PER_ADDR);
	else if (nsessions >= SESSIONS_MAX)
		snprintf(why, sizeof(why), "%u sessions open", nsessions);
	else
		return 1;
	refused++;
	log_debug("peer port: refused %s: %s", addr, why);
	if (last_warn_ms == 0 || now - last_warn_ms >= PREAUTH_WARN_MS) {
		log_warnx("peer port: refused %u connection%s before TLS "
		    "(last: %s)", refused, refused == 1 ? "" : "s", why);
		last_warn_ms = now;
		refused = 0;
	}
	return 0;
}

static void
peer_accept(int fd, struct sockaddr *sa, socklen_t salen, void *arg)
{
	struct session *s;
	char addr[sizeof(s->addr)], ip[sizeof(s->ip)], why[80];
	int one = 1;

	(void)salen;
	(void)arg;
	fmt_addr(sa, addr, sizeof(addr));
	fmt_ip(sa, ip, sizeof(ip));
	if (!preauth_ok(ip, addr)) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((s = sess_new(fd, 0, NULL, why, sizeof(why))) == NULL) {
		log_warnx("peer %s: refused: %s", addr, why);
		return;
	}
	snprintf(s->addr, sizeof(s->addr), "%s", addr);
	snprintf(s->ip, sizeof(s->ip), "%s", ip);
	log_debug("peer %s: accepted", addr);
}

static int
make_sockaddr(const char *addr, uint16_t port, struct sockaddr_storage *ss,
    socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return 0;
	}
	log_warnx("%s: bad address %s", __func__, addr);
	return -1;
}

static void
peer_dial(evutil_socket_t fd, short what, void *arg)
{
	struct peer *p = arg;
	struct sockaddr_storage ss;
	socklen_t len;
	struct session *s;
	int one = 1;

	(void)fd;
	(void)what;
	if (p->sess != NULL)
		return;
	if (make_sockaddr(p->pc->addr, p->pc->port, &ss, &len) == -1)
		return;
	/* our own socket: libevent's would not be close-on-exec */
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		log_warn("%s: socket", __func__);
		schedule_redial(p);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* the TLS process takes it still connecting: its first write
	 * waits for the connection, and fails if it does */
	if (connect(fd, (struct sockaddr *)&ss, len) == -1 &&
	    errno != EINPROGRESS) {
		snprintf(p->last_error, sizeof(p->last_error),
		    "connect: %s", strerror(errno));
		log_warnx("peer %s (%s:%u): %s", p->pc->name, p->pc->addr,
		    p->pc->port, p->last_error);
		close(fd);
		schedule_redial(p);
		return;
	}
	if ((s = sess_new(fd, 1, p, p->last_error,
	    sizeof(p->last_error))) == NULL) {
		schedule_redial(p);
		return;
	}
	p->sess = s;
	snprintf(s->addr, sizeof(s->addr), "%s:%u", p->pc->addr, p->pc->port);
	log_debug("peer %s: dialing %s", p->pc->name, s->addr);
}

static int
listen_socket(void)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;
	char a[80];

	if (make_sockaddr(migrd.conf.listen_addr, migrd.conf.listen_port,
	    &ss, &len) == -1)
		return -1;
	snprintf(a, sizeof(a), "%s port %u", migrd.conf.listen_addr,
	    migrd.conf.listen_port);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd == -1) {
		log_warn("%s: socket", __func__);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) == -1) {
		log_warn("%s: bind %s", __func__, a);
		goto fail_close;
	}
	if (listen(fd, 16) == -1) {
		log_warn("%s: listen %s", __func__, a);
		goto fail_close;
	}
	log_info("peer channel listening on %s", a);
	return fd;

fail_close:
	close(fd);
	return -1;
}

int
peer_init(void)
{
	int i, fd;

	if (tlsd_start(migrd.base, &tls_hooks) == -1)
		return -1;
	if ((fd = listen_socket()) == -1)
		return -1;
	if ((peer_listener = listener_new(migrd.base, fd, peer_accept,
	    NULL)) == NULL)
		return -1;
	npeers = migrd.conf.npeers;
	for (i = 0; i < npeers; i++) {
		struct peer *p = &peers[i];

		p->pc = &migrd.conf.peers[i];
		p->backoff = BACKOFF_MIN;
		p->dialer = strcmp(migrd.conf.hostname, p->pc->name) < 0;
		if (!p->dialer)
			continue;
		p->redial = evtimer_new(migrd.base, peer_dial, p);
		if (p->redial == NULL)
			return -1;
		event_active(p->redial, EV_TIMEOUT, 0);
	}
	return 0;
}

void
peer_shutdown(void)
{
	struct session *s;
	int i;

	while ((s = TAILQ_FIRST(&sessions)) != NULL) {
		s->state = S_CLOSING;
		if (s->peer && s->peer->sess == s)
			s->peer->sess = NULL;
		s->peer = NULL;
		sess_free(s);
	}
	for (i = 0; i < npeers; i++) {
		if (peers[i].redial)
			event_free(peers[i].redial);
		peers[i].redial = NULL;
	}
	listener_free(peer_listener);
	peer_listener = NULL;
	tlsd_stop();
}

int
peer_send(const char *name, int type, json_t *payload)
{
	struct peer *p = find_peer(name);

	if (p == NULL || p->sess == NULL || p->sess->state != S_UP) {
		json_decref(payload);
		return -1;
	}
	return sess_send(p->sess, (uint16_t)type, payload);
}

int
peer_send_tail(const char *name, int type, json_t *payload, const void *tail,
    size_t taillen)
{
	struct peer *p = find_peer(name);

	if (p == NULL || p->sess == NULL || p->sess->state != S_UP ||
	    !(type == MSG_MIG_CHUNK ? p->sess->raw_chunks :
	    p->sess->raw_images)) {
		json_decref(payload);
		return -1;
	}
	return sess_send_tail(p->sess, (uint16_t)type, payload, tail,
	    taillen);
}

int
peer_takes_gate(const char *name)
{
	struct peer *p = find_peer(name);

	return p != NULL && p->sess != NULL && p->sess->state == S_UP &&
	    p->sess->gate;
}

int
peer_raw_images(const char *name)
{
	struct peer *p = find_peer(name);

	return p != NULL && p->sess != NULL && p->sess->state == S_UP &&
	    p->sess->raw_images;
}

int
peer_raw_chunks(const char *name)
{
	struct peer *p = find_peer(name);

	return p != NULL && p->sess != NULL && p->sess->state == S_UP &&
	    p->sess->raw_chunks;
}

/* Connections' paths move over s: the peer takes them, and so do we. */
static int
sess_paths(const struct session *s)
{
	return migrd.conf.repair_path && s->repair_path;
}

int
peer_repair_path(const char *name)
{
	struct peer *p = find_peer(name);

	return p != NULL && p->sess != NULL && p->sess->state == S_UP &&
	    sess_paths(p->sess);
}

size_t
peer_output_len(const char *name)
{
	struct peer *p = find_peer(name);

	if (p == NULL || p->sess == NULL || p->sess->state != S_UP)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(p->sess->bev));
}

uint64_t
peer_tx_json(const char *name)
{
	struct peer *p = find_peer(name);

	if (p == NULL || p->sess == NULL || p->sess->state != S_UP)
		return 0;
	return p->sess->tx_json;
}

void
peer_drop(const char *name, const char *why)
{
	struct peer *p = find_peer(name);

	if (p != NULL && p->sess != NULL)
		sess_close(p->sess, "%s", why);
}

int
peer_is_up(const char *name)
{
	struct peer *p = find_peer(name);

	return p != NULL && p->sess != NULL && p->sess->state == S_UP;
}

/* What the streams carried: JSON and wire bytes each way (inbound, as
 * the TLS process inflated it). */
static json_t *
compress_json(const struct session *s)
{
	const struct frame_z_stats *st = frame_z_stats(s->z);

	return json_pack("{s:s,s:I,s:I,s:I,s:I}", "method", "deflate",
	    "json_out", (json_int_t)st->json_out,
	    "wire_out", (json_int_t)st->wire_out,
	    "json_in", (json_int_t)s->rx_json,
	    "wire_in", (json_int_t)s->rx_wire);
}

json_t *
peer_list_json(void)
{
	json_t *a = json_array(), *o;
	struct session *s;
	int i;

	if (a == NULL)
		return NULL;
	for (i = 0; i < npeers; i++) {
		struct peer *p = &peers[i];

		s = p->sess;
		o = json_pack("{s:s,s:s,s:i,s:s,s:s,s:i,s:s}",
		    "name", p->pc->name, "address", p->pc->addr,
		    "port", p->pc->port,
		    "state", s ? state_name(s) : (p->dialer ? "connecting" :
		    "waiting"),
		    "role", p->dialer ? "dialer" : "listener",
		    "sessions", p->sessions, "last_error", p->last_error);
		if (o == NULL)
			continue;
		if (s != NULL && s->state == S_UP) {
			json_object_set_new(o, "tls", json_string(s->tls));
			json_object_set_new(o, "cipher",
			    json_string(s->cipher));
			json_object_set_new(o, "certificate",
			    json_string(s->cert));
			json_object_set_new(o, "remote", json_string(s->addr));
			json_object_set_new(o, "up_since",
			    json_integer(s->up_since));
			json_object_set_new(o, "heartbeats_rx",
			    json_integer((json_int_t)s->hb_rx));
			json_object_set_new(o, "compress", s->z == NULL ?
			    json_string("none") : compress_json(s));
			json_object_set_new(o, "repair_path",
			    json_boolean(sess_paths(s)));
			json_object_set_new(o, "last_rx_ms_ago",
			    json_integer((json_int_t)((uint64_t)mono_ms() -
			    s->last_rx_ms)));
		}
		json_array_append_new(a, o);
	}
	return a;
}
