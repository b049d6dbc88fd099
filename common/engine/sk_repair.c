/* SPDX-License-Identifier: ISC */
/*
 * The socket state engine's public half: the handle, its lifecycle
 * (check, pause, save, release, rollback, reset, restore, resume) and
 * the injected log sink.  Protocol work lives in sk_tcp_*.c and
 * sk_udp.c, options in sk_optab.c, buffer sizes in sk_bufs.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_engine.h"
#include "sk_priv.h"

#ifndef TCP_ULP
#define TCP_ULP			31
#endif

static sk_log_fn	 sk_log_sink;
static void		*sk_log_arg;

void
sk_set_log(sk_log_fn fn, void *arg)
{
	sk_log_sink = fn;
	sk_log_arg = arg;
}

static void
sk_vlog(int prio, const char *fmt, va_list ap, int with_errno)
{
	char msg[1024];
	int saved_errno = errno;
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (with_errno) {
		n = strlen(msg);
		snprintf(msg + n, sizeof(msg) - n, ": %s",
		    strerror(saved_errno));
	}
	if (sk_log_sink != NULL)
		sk_log_sink(prio, msg, sk_log_arg);
	else if (prio <= LOG_WARNING)
		fprintf(stderr, "sk: %s\n", msg);
	errno = saved_errno;
}

void
sk_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_vlog(prio, fmt, ap, 0);
	va_end(ap);
}

void
sk_log_errno(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_vlog(LOG_WARNING, fmt, ap, 1);
	va_end(ap);
}

void
sk_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (why == NULL || whylen == 0)
		return;
	n = strnlen(why, whylen);
	if (n + 3 >= whylen)
		return;
	if (n > 0) {
		memcpy(why + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + n, whylen - n, fmt, ap);
	va_end(ap);
}

int
sk_getint(int fd, int level, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	*val = 0;
	return getsockopt(fd, level, opt, val, &len);
}

int
sk_setint(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}

int
sk_tcp_repair(int fd, int mode)
{
	if (sk_setint(fd, IPPROTO_TCP, TCP_REPAIR, mode) < 0) {
		sk_log_errno("%s: TCP_REPAIR %d", __func__, mode);
		return -1;
	}
	return 0;
}

/*
 * Family, protocol and state of fd; -1 with why filled otherwise.  The
 * kernel's CLOSE becomes CLOSE, BOUND or ENDED: a socket that exchanged
 * segments had a connection.
 */
static int
sk_identify(int fd, int *family, enum sk_proto *proto, enum sk_st *st,
    char *why, size_t whylen)
{
	struct sk_tinfo ti;
	struct sockaddr_storage ss;
	socklen_t len;
	int dom, type, prot;

	if (sk_getint(fd, SOL_SOCKET, SO_DOMAIN, &dom) < 0 ||
	    sk_getint(fd, SOL_SOCKET, SO_TYPE, &type) < 0 ||
	    sk_getint(fd, SOL_SOCKET, SO_PROTOCOL, &prot) < 0) {
		snprintf(why, whylen, "not a socket (%s)", strerror(errno));
		return -1;
	}
	if (dom != AF_INET && dom != AF_INET6) {
		snprintf(why, whylen, "address family %d cannot be moved "
		    "(only inet and inet6)", dom);
		return -1;
	}
	*family = dom;
	memset(&ti, 0, sizeof(ti));
	if (type == SOCK_STREAM && prot == IPPROTO_TCP) {
		*proto = SK_PROTO_TCP;
		if (sk_tinfo(fd, &ti) < 0) {
			snprintf(why, whylen, "tcp: TCP_INFO: %s",
			    strerror(errno));
			return -1;
		}
		*st = (enum sk_st)ti.state;
	} else if (type == SOCK_DGRAM && prot == IPPROTO_UDP) {
		*proto = SK_PROTO_UDP;
		len = sizeof(ss);
		if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0)
			*st = SK_ST_ESTABLISHED;
		else
			*st = SK_ST_CLOSE;
	} else {
		snprintf(why, whylen, "socket type %d protocol %d cannot be "
		    "moved (only TCP and UDP)", type, prot);
		return -1;
	}
	if (*st == SK_ST_CLOSE && *proto == SK_PROTO_TCP &&
	    (ti.segs_in > 0 || ti.segs_out > 0)) {
		*st = SK_ST_ENDED;
		return 0;
	}
	if (*st == SK_ST_CLOSE) {
		len = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
		    sk_addr_port(&ss) != 0)
			*st = SK_ST_BOUND;
	}
	return 0;
}

/* What refuses a socket of a known kind, options aside: why += reasons. */
static void
sk_check_kind(int fd, int family, enum sk_proto proto, enum sk_st st,
    char *why, size_t whylen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char ulp[32];

	len = sizeof(ss);
	if (family == AF_INET6 &&
	    getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)&ss)->sin6_addr))
		sk_why(why, whylen, "%s: a link-local address cannot be moved",
		    sk_proto_name(proto));
	if (proto == SK_PROTO_TCP) {
		if (!sk_st_tcp_movable(st))
			sk_why(why, whylen, "tcp: state %s cannot be moved%s",
			    sk_st_name(st) ? sk_st_name(st) : "unknown",
			    st == SK_ST_SYN_RECV || st == SK_ST_NEW_SYN_RECV ?
			    " (handshake in progress)" : st == SK_ST_TIME_WAIT ?
			    " (TIME_WAIT)" : "");
		memset(ulp, 0, sizeof(ulp));
		len = sizeof(ulp) - 1;
		if (getsockopt(fd, IPPROTO_TCP, TCP_ULP, ulp, &len) == 0 &&
		    ulp[0] != '\0')
			sk_why(why, whylen, "tcp: upper layer protocol \"%s\" "
			    "cannot be moved", ulp);
		sk_tcp_check(fd, st, why, whylen);
	} else
		sk_udp_check(fd, why, whylen);
}

int
sk_check(int fd, char *why, size_t whylen)
{
	char opts[512];
	enum sk_proto proto;
	enum sk_st st;
	int family;

	if (whylen > 0)
		why[0] = '\0';
	if (sk_identify(fd, &family, &proto, &st, why, whylen) < 0)
		return -1;
	sk_check_kind(fd, family, proto, st, why, whylen);
	if (sk_opts_read(fd, family, proto, st, NULL, opts, sizeof(opts)) == 1)
		sk_why(why, whylen, "%s: %s", sk_proto_name(proto), opts);
	return why[0] == '\0' ? 0 : -1;
}

static struct sk_handle *
sk_handle_new(int fd, int family, enum sk_proto proto, enum sk_st st)
{
	struct sk_handle *h;

	if ((h = calloc(1, sizeof(*h))) == NULL) {
		sk_log_errno("%s: calloc", __func__);
		return NULL;
	}
	h->fd = fd;
	h->family = family;
	h->proto = proto;
	h->state = st;
	return h;
}

static void
sk_handle_free(struct sk_handle *h)
{
	if (h == NULL)
		return;
	free(h->unsent);
	sk_state_free(h->st);
	sk_state_free(h->late);
	free(h);
}

/*
 * The options, buffer sizes and file flags are read first, before
 * repair mode changes what some of them read (SO_REUSEADDR reads 2, a
 * forced reuse, on a socket in repair).
 */
struct sk_handle *
sk_pause(int fd)
{
	struct sk_handle *h;
	struct sk_state *st;
	char why[1024];
	enum sk_proto proto;
	enum sk_st state;
	int family, fl;

	/* sk_check(), with the options read once, into the state */
	why[0] = '\0';
	if (sk_identify(fd, &family, &proto, &state, why, sizeof(why)) < 0) {
		sk_log(LOG_WARNING, "%s: %s", __func__, why);
		return NULL;
	}
	sk_check_kind(fd, family, proto, state, why, sizeof(why));
	if (why[0] != '\0') {
		sk_log(LOG_WARNING, "%s: %s", __func__, why);
		return NULL;
	}
	if ((h = sk_handle_new(fd, family, proto, state)) == NULL)
		return NULL;
	if ((h->st = st = sk_state_new()) == NULL) {
		sk_log_errno("%s: sk_state_new", __func__);
		goto out_free;
	}
	st->proto = proto;
	st->family = family;
	st->state = state;
	switch (sk_opts_read(fd, family, proto, state, st, why, sizeof(why))) {
	case 0:
		break;
	case 1:
		sk_log(LOG_WARNING, "%s: %s: %s", __func__,
		    sk_proto_name(proto), why);
		/* FALLTHROUGH */
	default:
		goto out_free;
	}
	if (sk_bufs_read(fd, &st->bufs) < 0)
		goto out_free;
	h->reuseaddr = (int)sk_opts_value(st, "SO_REUSEADDR", 0);
	if ((fl = fcntl(fd, F_GETFL)) < 0) {
		sk_log_errno("%s: F_GETFL", __func__);
		goto out_free;
	}
	if (fl & O_NONBLOCK)
		st->flags |= SK_F_NONBLOCK;
	/* LISTEN refuses repair; CLOSE/BOUND have nothing to read */
	if (proto == SK_PROTO_TCP && state != SK_ST_LISTEN &&
	    state != SK_ST_CLOSE && state != SK_ST_BOUND) {
		if (sk_tcp_repair(fd, 1) < 0)
			goto out_free;
		h->repair = true;
	}
	return h;

out_free:
	sk_handle_free(h);
	return NULL;
}

int
sk_save(struct sk_handle *h, struct sk_state **out)
{
	struct sk_state *st = h->st;
	socklen_t len;
	int rc;

	*out = NULL;
	if (st == NULL) {
		sk_log(LOG_WARNING, "%s: saved already", __func__);
		return -1;
	}
	len = sizeof(st->local);
	if (getsockname(h->fd, (struct sockaddr *)&st->local, &len) < 0) {
		sk_log_errno("%s: getsockname", __func__);
		return -1;
	}
	len = sizeof(st->remote);
	if (getpeername(h->fd, (struct sockaddr *)&st->remote, &len) == 0)
		st->flags |= SK_F_REMOTE;
	if (h->proto == SK_PROTO_TCP)
		rc = sk_tcp_save(h, st);
	else
		rc = sk_udp_save(h, st);
	if (rc < 0)
		return -1;
	h->st = NULL;
	*out = st;
	return 0;
}

int
sk_set_remote(struct sk_handle *h, const struct sockaddr_storage *ss)
{
	if (ss->ss_family != h->family) {
		sk_log(LOG_WARNING, "%s: family %d for a socket of family %d",
		    __func__, ss->ss_family, h->family);
		return -1;
	}
	h->remote = *ss;
	return 0;
}

int
sk_accept_pending(struct sk_handle *h, int *fds, size_t max, size_t *nfds)
{
	struct sk_tinfo ti;
	int fl, fd, rc = 0;

	*nfds = 0;
	if (h->proto != SK_PROTO_TCP || h->state != SK_ST_LISTEN) {
		sk_log(LOG_WARNING, "%s: not a listener", __func__);
		return -1;
	}
	/*
	 * For a listener TCP_INFO's unacked is the accept queue length.
	 * Refuse before accepting anything rather than drop a connection.
	 */
	if (sk_tinfo(h->fd, &ti) < 0) {
		sk_log_errno("%s: TCP_INFO", __func__);
		return -1;
	}
	if (ti.unacked > max) {
		sk_log(LOG_WARNING, "%s: %u connections waiting, room for %zu",
		    __func__, ti.unacked, max);
		return -1;
	}
	if ((fl = fcntl(h->fd, F_GETFL)) < 0 ||
	    fcntl(h->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		sk_log_errno("%s: fcntl", __func__);
		return -1;
	}
	while (*nfds < max) {
		fd = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				sk_log_errno("%s: accept4", __func__);
				rc = -1;
			}
			break;
		}
		fds[(*nfds)++] = fd;
	}
	if (fcntl(h->fd, F_SETFL, fl) < 0) {
		sk_log_errno("%s: fcntl restore", __func__);
		rc = -1;
	}
	return rc;
}

int
sk_release(struct sk_handle *h)
{
	int rc = 0;

	if (h == NULL)
		return 0;
	if (close(h->fd) < 0) {
		sk_log_errno("%s: close", __func__);
		rc = -1;
	}
	sk_handle_free(h);
	return rc;
}

int
sk_rollback(struct sk_handle *h)
{
	int rc = 0;

	if (h == NULL)
		return 0;
	if (h->repair) {
		if (sk_tcp_repair(h->fd, TCP_REPAIR_OFF_NO_WP) < 0)
			rc = -1;
		/* Leaving repair clears sk_reuse: put the owner's back. */
		else if (sk_setint(h->fd, SOL_SOCKET, SO_REUSEADDR,
		    h->reuseaddr) < 0) {
			sk_log_errno("%s: SO_REUSEADDR", __func__);
			rc = -1;
		}
	}
	sk_handle_free(h);
	return rc;
}

/*
 * A connection that cannot be given back (one accepted from a listener's
 * queue during the dump): reset it, so its client learns at once rather
 * than at its own timeout.  An ENDED one has nobody to tell.
 */
int
sk_reset(struct sk_handle *h)
{
	struct linger lg = { 1, 0 };
	int rc = 0;

	if (h == NULL)
		return 0;
	if (h->repair && sk_tcp_repair(h->fd, TCP_REPAIR_OFF_NO_WP) < 0)
		rc = -1;
	if (h->proto == SK_PROTO_TCP && h->state != SK_ST_ENDED &&
	    setsockopt(h->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0) {
		sk_log_errno("%s: SO_LINGER", __func__);
		rc = -1;
	}
	if (close(h->fd) < 0) {
		sk_log_errno("%s: close", __func__);
		rc = -1;
	}
	sk_handle_free(h);
	return rc;
}

/* One try: a new socket, rebuilt from st. */
static struct sk_handle *
sk_restore_once(const struct sk_state *st)
{
	struct sk_handle *h;
	int fd, type, rc;

	type = st->proto == SK_PROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;
	fd = socket(st->family, type | SOCK_CLOEXEC,
	    st->proto == SK_PROTO_TCP ? IPPROTO_TCP : IPPROTO_UDP);
	if (fd < 0) {
		sk_log_errno("%s: socket", __func__);
		return NULL;
	}
	if ((h = sk_handle_new(fd, st->family, st->proto, st->state)) ==
	    NULL)
		goto out_close;
	h->restored = true;
	h->reuseaddr = (int)sk_opts_value(st, "SO_REUSEADDR", 0);
	h->bufs = st->bufs;
	if (st->proto == SK_PROTO_TCP)
		rc = sk_tcp_restore(h, st);
	else
		rc = sk_udp_restore(h, st);
	if (rc < 0)
		goto out_free;
	/* the owner's file flags travel with the socket */
	if ((st->flags & SK_F_NONBLOCK) &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		sk_log_errno("%s: O_NONBLOCK", __func__);
		goto out_free;
	}
	return h;

out_free:
	sk_handle_free(h);
out_close:
	close(fd);
	return NULL;
}

/*
 * An ENDED connection is ended by a replay against a stand-in peer on
 * this host, and a timer of the socket (a retransmission) can race it on
 * a loaded host; the check after the replay catches that, and a new
 * socket is tried (sk_tcp_restore.c).  Anything else fails at once.
 */
#define SK_ENDED_TRIES	3
unsigned sk_stat_ended_retries;

struct sk_handle *
sk_restore(const struct sk_state *st)
{
	struct sk_handle *h;
	char why[256];
	uint32_t i;
	int tries;

	if (st->data_size != sizeof(*st)) {
		sk_log(LOG_WARNING, "%s: state data_size %u, expected %zu",
		    __func__, st->data_size, sizeof(*st));
		return NULL;
	}
	if (st->family != AF_INET && st->family != AF_INET6) {
		sk_log(LOG_WARNING, "%s: family %d", __func__, st->family);
		return NULL;
	}
	for (i = 0; i < st->nopts; i++)
		if (sk_opt_check(&st->opts[i], st->proto, st->family,
		    st->state, why, sizeof(why)) < 0) {
			sk_log(LOG_WARNING, "%s: %s", __func__, why);
			return NULL;
		}
	for (tries = 1; ; tries++) {
		if ((h = sk_restore_once(st)) != NULL ||
		    st->proto != SK_PROTO_TCP || st->state != SK_ST_ENDED ||
		    tries == SK_ENDED_TRIES)
			return h;
		sk_stat_ended_retries++;
		sk_log(LOG_NOTICE, "%s: ended connection: try %d of %d",
		    __func__, tries + 1, SK_ENDED_TRIES);
	}
}

/*
 * Queue the bytes that were never on the wire, now that repair is off.
 * The send buffer is forced to hold them all, so the kernel takes them
 * at once and sends them as the peer's window allows: nothing waits
 * here for a slow reader.
 */
static int
sk_queue_unsent(struct sk_handle *h)
{
	uint32_t off = 0;
	ssize_t n;

	if (sk_bufs_force(h->fd, sk_bufs_room(h->unsent_len +
	    (uint64_t)h->bufs.snd), 0) < 0)
		return -1;
	while (off < h->unsent_len) {
		n = send(h->fd, h->unsent + off, h->unsent_len - off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (uint32_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		sk_log_errno("sk_resume: %u of %u never-sent bytes could not "
		    "be queued again", h->unsent_len - off, h->unsent_len);
		return -1;
	}
	free(h->unsent);
	h->unsent = NULL;
	h->unsent_len = 0;
	return 0;
}

int
sk_resume(struct sk_handle *h, int flags)
{
	if (h->repair) {
		if (sk_tcp_repair(h->fd, (flags & SK_RESUME_NO_PROBE) ?
		    TCP_REPAIR_OFF_NO_WP : 0) < 0)
			return -1;
		h->repair = false;
		if (sk_setint(h->fd, SOL_SOCKET, SO_REUSEADDR,
		    h->reuseaddr) < 0) {
			sk_log_errno("%s: SO_REUSEADDR", __func__);
			return -1;
		}
	}
	if (!h->restored)
		return 0;
	if (h->unsent_len > 0 && sk_queue_unsent(h) < 0)
		return -1;
	/* the buffers as they were, then what had to wait for the queues */
	if (sk_bufs_set(h->fd, &h->bufs) < 0)
		return -1;
	if (h->late != NULL) {
		if (sk_opts_apply(h->fd, h->late, 1) < 0)
			return -1;
		sk_state_free(h->late);
		h->late = NULL;
	}
	return 0;
}

int
sk_detach(struct sk_handle *h)
{
	int fd = h->fd;

	sk_handle_free(h);
	return fd;
}

void
sk_abort(struct sk_handle *h)
{
	if (h == NULL)
		return;
	close(h->fd);
	sk_handle_free(h);
}

int
sk_handle_fd(const struct sk_handle *h)
{
	return h->fd;
}
