/* SPDX-License-Identifier: ISC */
/*
 * The TLS process: handshakes, certificate checks, and between each TLS
 * connection and the socketpair migrd reads: what the peer sends as
 * trees (chan_rx.h), what migrd sends relayed as it is (tlsd.h).
 * It runs unprivileged (tlsd_sandbox.c) and keeps no state but the
 * sessions in flight; migrd restarts it if it dies.
 */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "chan_rx.h"
#include "clock.h"
#include "fdpass.h"
#include "log.h"
#include "loopwatch.h"
#include "tls.h"
#include "tlsd.h"
#include "tlsd_sandbox.h"

/* bytes a direction may hold here before its reader pauses */
#define RELAY_HIGH	(256 * 1024)
#define RELAY_LOW	(RELAY_HIGH / 2)
/* closing: drain what the peer still sends for this long (see linger) */
#define LINGER_MAX	32
#define LINGER_S	2
#define SESSIONS_MAX	(2 * CONF_PEERS_MAX + 16)

struct rsess {
	TAILQ_ENTRY(rsess)	 entry;
	uint32_t		 id;
	int			 outbound;
	unsigned		 peer;
	struct bufferevent	*tls;	/* the TCP connection */
	struct bufferevent	*plain;	/* to migrd, once up */
	struct chan_rx		 rx;	/* the peer's frames */
};

static TAILQ_HEAD(, rsess)	rsessions = TAILQ_HEAD_INITIALIZER(rsessions);
static unsigned			nrsessions;
static struct event_base	*base;
static SSL_CTX			*ctx;
static struct tlsd_init		 ini;
static int			 ctl = -1;

static void	relay_tls_read(struct bufferevent *, void *);
static void	relay_plain_read(struct bufferevent *, void *);

static int
ctl_send(struct tlsd_msg *m, int fd)
{
	/* blocking: migrd reads its end at once, and without it there is
	 * nothing to do */
	if (fdpass_send(ctl, m, sizeof(*m), fd, 0) == -1) {
		log_warn("tls: send to migrd");
		return -1;
	}
	return 0;
}

static void
send_fail(uint32_t id, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
send_fail(uint32_t id, const char *fmt, ...)
{
	struct tlsd_msg m = { .type = TLSD_FAIL, .id = id };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.why, sizeof(m.why), fmt, ap);
	va_end(ap);
	ctl_send(&m, -1);
}

/*
 * Closing a TCP socket with unread input sends a RST at once and drops
 * what is still queued for sending: the result that says why a session
 * ends could be lost with it.  So the socket half-closes after the last
 * byte and reads what the peer still sends, for LINGER_S at most.
 */
struct lingering {
	struct event	*ev;
	int		 fd;
};
static unsigned		nlinger;

static void
linger_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lingering *l = arg;
	char buf[4096];
	ssize_t n = 0;

	if (what & EV_READ) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;		/* more to come */
	}
	event_free(l->ev);
	close(l->fd);
	free(l);
	nlinger--;
}

static void
linger_close(int fd)
{
	struct timeval tv = { LINGER_S, 0 };
	struct lingering *l;

	if (nlinger >= LINGER_MAX || (l = calloc(1, sizeof(*l))) == NULL) {
		close(fd);
		return;
	}
	l->fd = fd;
	l->ev = event_new(base, fd, EV_READ | EV_PERSIST, linger_cb, l);
	if (l->ev == NULL || shutdown(fd, SHUT_WR) == -1 ||
	    event_add(l->ev, &tv) == -1) {
		if (l->ev != NULL)
			event_free(l->ev);
		free(l);
		close(fd);
		return;
	}
	nlinger++;
}

/* Free s; its TCP connection lingers (linger) unless abrupt. */
static void
rsess_free(struct rsess *s, int abrupt)
{
	int fd = -1;

	TAILQ_REMOVE(&rsessions, s, entry);
	nrsessions--;
	if (s->tls != NULL && !abrupt)
		fd = dup(bufferevent_getfd(s->tls));
	if (s->tls != NULL)
		bufferevent_free(s->tls);	/* frees the SSL, closes */
	if (fd != -1)
		linger_close(fd);
	if (s->plain != NULL)
		bufferevent_free(s->plain);
	chan_rx_free(&s->rx);
	free(s);
}

static struct rsess *
rsess_find(uint32_t id)
{
	struct rsess *s;

	TAILQ_FOREACH(s, &rsessions, entry)
		if (s->id == id)
			return s;
	return NULL;
}

/* Move what migrd wrote to the peer; pause reading migrd when the peer's
 * side holds RELAY_HIGH bytes (its write callback resumes it). */
static void
relay(struct bufferevent *from, struct bufferevent *to)
{
	struct evbuffer *out = bufferevent_get_output(to);

	evbuffer_add_buffer(out, bufferevent_get_input(from));
	if (evbuffer_get_length(out) >= RELAY_HIGH)
		bufferevent_disable(from, EV_READ);
}

/*
 * The peer's whole frames to migrd, as trees, until migrd's side holds
 * high bytes (then reading the peer pauses until it drains).  A frame
 * refused: its status went to migrd, which closes; nothing more of the
 * peer's is read.
 */
static void
parse_peer(struct rsess *s, size_t high, int fresh)
{
	struct evbuffer *in = bufferevent_get_input(s->tls);
	struct evbuffer *out = bufferevent_get_output(s->plain);

	if (chan_rx_parse(&s->rx, in, out, high, fresh,
	    (uint64_t)mono_ms()) == -1) {
		bufferevent_disable(s->tls, EV_READ);
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	if (evbuffer_get_length(out) >= RELAY_HIGH)
		bufferevent_disable(s->tls, EV_READ);
}

static void
relay_tls_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	parse_peer(arg, RELAY_HIGH, 1);
}

static void
relay_plain_read(struct bufferevent *bev, void *arg)
{
	struct rsess *s = arg;

	relay(bev, s->tls);
}

/* the plain side drained below RELAY_LOW: the frames already read, then
 * read the peer again */
static void
relay_plain_drained(struct bufferevent *bev, void *arg)
{
	struct rsess *s = arg;

	(void)bev;
	if (s->tls == NULL || s->rx.done)
		return;
	bufferevent_enable(s->tls, EV_READ);
	parse_peer(s, RELAY_HIGH, 0);
}

static void
relay_tls_drained(struct bufferevent *bev, void *arg)
{
	struct rsess *s = arg;

	(void)bev;
	if (s->plain != NULL)
		bufferevent_enable(s->plain, EV_READ);
}

/* one side is gone: the other has sent what it held */
static void
flushed(struct bufferevent *bev, void *arg)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		rsess_free(arg, 0);
}

static void
flush_error(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	rsess_free(arg, 1);
}

/*
 * One side of s ended and is freed: the other reads no more, sends what
 * it holds (migrd gets what came before the peer's EOF; the peer what
 * came before migrd's close), and then s goes (lingering if the TCP
 * side is the one left).
 */
static void
drain_other(struct rsess *s, struct bufferevent *other)
{
	bufferevent_disable(other, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(other)) == 0) {
		rsess_free(s, 0);
		return;
	}
	bufferevent_setwatermark(other, EV_WRITE, 0, 0);
	bufferevent_setcb(other, NULL, flushed, flush_error, s);
}

static void
tls_ended(struct rsess *s, short what)
{
	unsigned long e = bufferevent_get_openssl_error(s->tls);
	char err[300];

	if (e != 0 && ERR_GET_LIB(e) != 0) {
		tls_error_string(bufferevent_openssl_get_ssl(s->tls), e, err,
		    sizeof(err));
		log_info("tls: session %u: TLS error: %s", s->id, err);
	} else if (!(what & BEV_EVENT_EOF))
		log_debug("tls: session %u: %s", s->id,
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	/* the whole frames that waited for migrd's side to drain go to
	 * migrd before its EOF */
	parse_peer(s, SIZE_MAX, 0);
	bufferevent_free(s->tls);
	s->tls = NULL;
	drain_other(s, s->plain);
}

static void
plain_event(struct bufferevent *bev, short what, void *arg)
{
	struct rsess *s = arg;

	(void)bev;
	(void)what;
	/* migrd's end closed */
	bufferevent_free(s->plain);
	s->plain = NULL;
	drain_other(s, s->tls);
}

static void
tls_event_up(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	tls_ended(arg, what);
}

/* Handshake done: which peers the certificate names, and the relay. */
static void
handshake_done(struct rsess *s)
{
	SSL *ssl = bufferevent_openssl_get_ssl(s->tls);
	struct tlsd_msg m = { .type = TLSD_UP, .id = s->id };
	int sp[2];
	uint32_t i;

	/* an outbound handshake already checked its peer's name
	 * (SSL_set1_host in rsess_new); migrd checks the bit again */
	for (i = 0; i < ini.npeers; i++)
		if (tls_peer_matches(ssl, ini.names[i]))
			m.names |= 1ull << i;
	snprintf(m.version, sizeof(m.version), "%s", SSL_get_version(ssl));
	snprintf(m.cipher, sizeof(m.cipher), "%s", SSL_get_cipher_name(ssl));
	tls_peer_describe(ssl, m.cert, sizeof(m.cert));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sp) == -1) {
		send_fail(s->id, "TLS process: socketpair: %s",
		    strerror(errno));
		rsess_free(s, 1);
		return;
	}
	s->plain = bufferevent_socket_new(base, sp[0], BEV_OPT_CLOSE_ON_FREE);
	if (s->plain == NULL) {
		close(sp[0]);
		close(sp[1]);
		send_fail(s->id, "TLS process: out of memory");
		rsess_free(s, 1);
		return;
	}
	if (ctl_send(&m, sp[1]) == -1) {
		close(sp[1]);
		rsess_free(s, 1);
		return;
	}
	close(sp[1]);
	bufferevent_setwatermark(s->plain, EV_WRITE, RELAY_LOW, 0);
	bufferevent_setwatermark(s->tls, EV_WRITE, RELAY_LOW, 0);
	bufferevent_setcb(s->plain, relay_plain_read, relay_plain_drained,
	    plain_event, s);
	bufferevent_setcb(s->tls, relay_tls_read, relay_tls_drained,
	    tls_event_up, s);
	bufferevent_enable(s->plain, EV_READ | EV_WRITE);
	/* what came with the last handshake flight */
	if (evbuffer_get_length(bufferevent_get_input(s->tls)) > 0)
		parse_peer(s, RELAY_HIGH, 1);
}

static void
tls_event_handshake(struct bufferevent *bev, short what, void *arg)
{
	struct rsess *s = arg;
	unsigned long e;
	char err[300];

	if (what & BEV_EVENT_CONNECTED) {
		handshake_done(s);
		return;
	}
	e = bufferevent_get_openssl_error(bev);
	if (e != 0 && ERR_GET_LIB(e) != 0) {
		tls_error_string(bufferevent_openssl_get_ssl(bev), e, err,
		    sizeof(err));
		send_fail(s->id, "TLS handshake failed: %s", err);
	} else if ((what & BEV_EVENT_EOF) && e == 0)
		send_fail(s->id, "connection closed by peer during TLS "
		    "handshake");
	else
		send_fail(s->id, "connection failed: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	rsess_free(s, 0);
}

static void
rsess_new(const struct tlsd_msg *m, int fd)
{
	struct rsess *s;
	SSL *ssl;

	if (m->id == 0 || rsess_find(m->id) != NULL ||
	    (m->outbound && m->peer >= ini.npeers)) {
		log_warnx("tls: bad session request %u", m->id);
		close(fd);
		return;
	}
	if (nrsessions >= SESSIONS_MAX) {
		close(fd);
		send_fail(m->id, "TLS process: %u sessions open", nrsessions);
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (ssl = SSL_new(ctx)) == NULL) {
		free(s);
		close(fd);
		send_fail(m->id, "TLS process: out of memory");
		return;
	}
	s->id = m->id;
	chan_rx_init(&s->rx, s->id, ini.deflate, ini.max_message);
	s->outbound = m->outbound != 0;
	s->peer = m->peer;
	if (s->outbound) {
		/* checked during the handshake against SAN DNS (or CN) */
		SSL_set1_host(ssl, ini.names[s->peer]);
		SSL_set_tlsext_host_name(ssl, ini.names[s->peer]);
	}
	s->tls = bufferevent_openssl_socket_new(base, fd, ssl, s->outbound ?
	    BUFFEREVENT_SSL_CONNECTING : BUFFEREVENT_SSL_ACCEPTING,
	    BEV_OPT_CLOSE_ON_FREE);
	if (s->tls == NULL) {
		SSL_free(ssl);
		close(fd);
		free(s);
		send_fail(m->id, "TLS process: out of memory");
		return;
	}
	TAILQ_INSERT_TAIL(&rsessions, s, entry);
	nrsessions++;
	bufferevent_openssl_set_allow_dirty_shutdown(s->tls, 1);
	bufferevent_setcb(s->tls, NULL, NULL, tls_event_handshake, s);
	bufferevent_enable(s->tls, EV_READ | EV_WRITE);
}

static void
ctl_read(evutil_socket_t fd, short what, void *arg)
{
	struct tlsd_msg m;
	struct rsess *s;
	ssize_t n;
	int rfd = -1;

	(void)what;
	(void)arg;
	n = fdpass_recv(fd, &m, sizeof(m), &rfd, 0);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1 && errno == EBADMSG) {
		log_warnx("tls: malformed message from migrd");
		return;
	}
	if (n <= 0) {
		/* migrd is gone: so are its sessions */
		log_debug("tls: migrd closed the channel, exiting");
		_exit(0);
	}
	switch (m.type) {
	case TLSD_NEW:
		if (rfd == -1) {
			log_warnx("tls: session %u without a socket", m.id);
			return;
		}
		rsess_new(&m, rfd);
		return;
	case TLSD_DROP:
		if ((s = rsess_find(m.id)) != NULL)
			rsess_free(s, 1);
		break;
	default:
		log_warnx("tls: message type %u from migrd", m.type);
		break;
	}
	if (rfd != -1)
		close(rfd);
}

static int
read_init(int fd)
{
	ssize_t n;

	do
		n = recv(fd, &ini, sizeof(ini), 0);
	while (n == -1 && errno == EINTR);
	if (n != (ssize_t)sizeof(ini) || ini.type != TLSD_INIT ||
	    ini.npeers > CONF_PEERS_MAX)
		return -1;
	ini.cert[sizeof(ini.cert) - 1] = '\0';
	ini.key[sizeof(ini.key) - 1] = '\0';
	ini.ca[sizeof(ini.ca) - 1] = '\0';
	ini.root[sizeof(ini.root) - 1] = '\0';
	for (n = 0; n < CONF_PEERS_MAX; n++)
		ini.names[n][CONF_NAME_MAX - 1] = '\0';
	return 0;
}

void
tlsd_main(int fd)
{
	struct tlsd_msg ready = { .type = TLSD_READY };
	struct event *ev;

	log_procinit("migrd-tls");
	prctl(PR_SET_NAME, "migrd-tls", 0, 0, 0);	/* for ps, pgrep */
	signal(SIGPIPE, SIG_IGN);
	/* only what migrd meant to give: the channel, as descriptor 3 */
	if (tlsd_close_others(fd) == -1) {
		log_warn("tls: closing inherited descriptors");
		_exit(1);
	}
	ctl = fd = 3;
	if (read_init(fd) == -1) {
		log_warnx("tls: no valid start message from migrd");
		_exit(1);
	}
	log_init(ini.to_stderr, ini.verbose, LOG_DAEMON);
	if (ini.to_stderr)
		log_timestamps(1);
	/* as root: the key is readable, then never again */
	if ((ctx = tls_ctx_new(ini.cert, ini.key, ini.ca)) == NULL) {
		send_fail(0, "TLS setup failed (certificate %s, key %s, CA %s)",
		    ini.cert, ini.key, ini.ca);
		_exit(1);
	}
	if ((base = loop_new()) == NULL) {
		send_fail(0, "TLS process: cannot make its event loop");
		_exit(1);
	}
	/* jansson seeds its hash tables from /dev/urandom on first use,
	 * which the sandbox would refuse (it would fall back to the time
	 * and pid, which a peer could guess to flood an object's keys) */
	json_object_seed(0);
	if (tlsd_sandbox(&ini) == -1) {
		send_fail(0, "TLS process: cannot drop its privileges (see "
		    "the log)");
		_exit(1);
	}
	ev = event_new(base, fd, EV_READ | EV_PERSIST, ctl_read, NULL);
	if (ev == NULL || event_add(ev, NULL) == -1 ||
	    ctl_send(&ready, -1) == -1)
		_exit(1);
	log_debug("tls: ready, as uid %u", (unsigned)getuid());
	if (getenv("MIGRD_TLS_PROBE") != NULL)
		tlsd_sandbox_probe();
	event_base_dispatch(base);
	_exit(0);
}
