/*
 * The socket state engine's public half: the handle, its lifecycle
 * (check, pause, save, release, rollback, restore, resume) and the
 * injected log sink.  Protocol work lives in sk_tcp_*.c and sk_udp.c.
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

#include "log.h"
#include "sk_priv.h"
#include "sk_repair.h"

#ifndef TCP_ULP
#define TCP_ULP			31
#endif

/* How long sk_resume() waits for room to send the never-sent bytes. */
#define SK_RESUME_SEND_MS	5000

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
		log_warnx("%s", msg);
	else if (prio == LOG_DEBUG)
		log_debug("%s", msg);
	else
		log_info("%s", msg);
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

/* Family, protocol and state of fd; -1 with why filled otherwise. */
static int
sk_identify(int fd, int *family, enum sk_proto *proto, enum sk_st *st,
    char *why, size_t whylen)
{
	struct tcp_info ti;
	struct sockaddr_storage ss;
	socklen_t len;
	int dom, type, prot;

	if (sk_getint(fd, SOL_SOCKET, SO_DOMAIN, &dom) < 0 ||
	    sk_getint(fd, SOL_SOCKET, SO_TYPE, &type) < 0 ||
	    sk_getint(fd, SOL_SOCKET, SO_PROTOCOL, &prot) < 0) {
		snprintf(why, whylen, "fd %d: not a socket (%s)", fd,
		    strerror(errno));
		return -1;
	}
	if (dom != AF_INET && dom != AF_INET6) {
		snprintf(why, whylen, "fd %d: address family %d cannot be "
		    "moved (only inet and inet6)", fd, dom);
		return -1;
	}
	*family = dom;
	if (type == SOCK_STREAM && prot == IPPROTO_TCP) {
		*proto = SK_PROTO_TCP;
		len = sizeof(ti);
		memset(&ti, 0, sizeof(ti));
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0) {
			snprintf(why, whylen, "tcp: TCP_INFO: %s",
			    strerror(errno));
			return -1;
		}
		*st = (enum sk_st)ti.tcpi_state;
	} else if (type == SOCK_DGRAM && prot == IPPROTO_UDP) {
		*proto = SK_PROTO_UDP;
		len = sizeof(ss);
		if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0)
			*st = SK_ST_ESTABLISHED;
		else
			*st = SK_ST_CLOSE;
	} else {
		snprintf(why, whylen, "fd %d: socket type %d protocol %d "
		    "cannot be moved (only TCP and UDP)", fd, type, prot);
		return -1;
	}
	if (*st == SK_ST_CLOSE) {
		len = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
		    sk_addr_port(&ss) != 0)
			*st = SK_ST_BOUND;
	}
	return 0;
}

int
sk_check(int fd, char *why, size_t whylen)
{
	struct sockaddr_storage ss;
	char ulp[32];
	socklen_t len;
	enum sk_proto proto;
	enum sk_st st;
	int family, atmark = 0;

	if (sk_identify(fd, &family, &proto, &st, why, whylen) < 0)
		return -1;
	len = sizeof(ss);
	if (family == AF_INET6 &&
	    getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)&ss)->sin6_addr)) {
		snprintf(why, whylen, "%s: link-local address cannot be "
		    "moved", sk_proto_name(proto));
		return -1;
	}
	if (proto == SK_PROTO_UDP)
		return 0;
	if (!sk_st_tcp_movable(st)) {
		snprintf(why, whylen, "tcp: state %s cannot be moved%s",
		    sk_st_name(st) ? sk_st_name(st) : "unknown",
		    st == SK_ST_SYN_SENT || st == SK_ST_SYN_RECV ||
		    st == SK_ST_NEW_SYN_RECV ? " (handshake in progress)" :
		    st == SK_ST_TIME_WAIT ? " (TIME_WAIT)" : "");
		return -1;
	}
	memset(ulp, 0, sizeof(ulp));
	len = sizeof(ulp) - 1;
	if (getsockopt(fd, IPPROTO_TCP, TCP_ULP, ulp, &len) == 0 &&
	    ulp[0] != '\0') {
		snprintf(why, whylen, "tcp: upper layer protocol \"%s\" "
		    "cannot be moved", ulp);
		return -1;
	}
	if (st != SK_ST_LISTEN && ioctl(fd, SIOCATMARK, &atmark) == 0 && atmark) {
		snprintf(why, whylen, "tcp: urgent data pending cannot be "
		    "moved");
		return -1;
	}
	return 0;
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
	free(h);
}

struct sk_handle *
sk_pause(int fd)
{
	struct sk_handle *h;
	char why[256];
	enum sk_proto proto;
	enum sk_st st;
	int family;

	if (sk_check(fd, why, sizeof(why)) < 0 ||
	    sk_identify(fd, &family, &proto, &st, why, sizeof(why)) < 0) {
		sk_log(LOG_WARNING, "%s: %s", __func__, why);
		return NULL;
	}
	if ((h = sk_handle_new(fd, family, proto, st)) == NULL)
		return NULL;
	if (sk_getint(fd, SOL_SOCKET, SO_REUSEADDR, &h->reuseaddr) < 0) {
		sk_log_errno("%s: SO_REUSEADDR", __func__);
		goto out_free;
	}
	/* sk_reuse reads 2 (forced) on a socket already in repair. */
	h->reuseaddr = h->reuseaddr != 0;
	/* LISTEN refuses repair; CLOSE/BOUND have nothing in flight. */
	if (proto == SK_PROTO_TCP && st != SK_ST_LISTEN &&
	    st != SK_ST_CLOSE && st != SK_ST_BOUND) {
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
	struct sk_state *st;
	socklen_t len;
	int rc;

	*out = NULL;
	if ((st = sk_state_new()) == NULL) {
		sk_log_errno("%s: sk_state_new", __func__);
		return -1;
	}
	st->proto = h->proto;
	st->family = h->family;
	st->state = h->state;
	len = sizeof(st->local);
	if (getsockname(h->fd, (struct sockaddr *)&st->local, &len) < 0) {
		sk_log_errno("%s: getsockname", __func__);
		goto out_free;
	}
	len = sizeof(st->remote);
	if (getpeername(h->fd, (struct sockaddr *)&st->remote, &len) == 0)
		st->flags |= SK_F_REMOTE;
	if (sk_opts_read(h->fd, h->family, h->proto, &st->opts) < 0)
		goto out_free;
	/* Repair mode forces SO_REUSEADDR; save what the user had. */
	st->opts.reuseaddr = h->reuseaddr;
	if (h->proto == SK_PROTO_TCP)
		rc = sk_tcp_save(h, st);
	else
		rc = sk_udp_save(h, st);
	if (rc < 0)
		goto out_free;
	*out = st;
	return 0;

out_free:
	sk_state_free(st);
	return -1;
}

int
sk_accept_pending(struct sk_handle *h, int *fds, size_t max, size_t *nfds)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
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
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(h->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0) {
		sk_log_errno("%s: TCP_INFO", __func__);
		return -1;
	}
	if (ti.tcpi_unacked > max) {
		sk_log(LOG_WARNING, "%s: %u connections waiting, room for %zu",
		    __func__, ti.tcpi_unacked, max);
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
		/* Leaving repair clears sk_reuse: put the user's back. */
		else if (sk_setint(h->fd, SOL_SOCKET, SO_REUSEADDR,
		    h->reuseaddr) < 0) {
			sk_log_errno("%s: SO_REUSEADDR", __func__);
			rc = -1;
		}
	}
	sk_handle_free(h);
	return rc;
}

struct sk_handle *
sk_restore(const struct sk_state *st)
{
	struct sk_handle *h;
	int fd, type, rc;

	if (st->data_size != sizeof(*st)) {
		sk_log(LOG_WARNING, "%s: state data_size %u, expected %zu",
		    __func__, st->data_size, sizeof(*st));
		return NULL;
	}
	if (st->family != AF_INET && st->family != AF_INET6) {
		sk_log(LOG_WARNING, "%s: family %d", __func__, st->family);
		return NULL;
	}
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
	h->reuseaddr = st->opts.reuseaddr;
	if (st->proto == SK_PROTO_TCP)
		rc = sk_tcp_restore(h, st);
	else
		rc = sk_udp_restore(h, st);
	if (rc < 0)
		goto out_free;
	return h;

out_free:
	sk_handle_free(h);
out_close:
	close(fd);
	return NULL;
}

/* Send the bytes that were never on the wire, now that repair is off. */
static int
sk_send_unsent(struct sk_handle *h)
{
	struct pollfd pfd;
	uint32_t off = 0;
	ssize_t n;

	while (off < h->unsent_len) {
		n = send(h->fd, h->unsent + off, h->unsent_len - off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (uint32_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			sk_log_errno("%s: send", __func__);
			return -1;
		}
		pfd.fd = h->fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, SK_RESUME_SEND_MS) <= 0) {
			sk_log(LOG_WARNING, "%s: %u of %u bytes not sent "
			    "after %d ms", __func__, h->unsent_len - off,
			    h->unsent_len, SK_RESUME_SEND_MS);
			return -1;
		}
	}
	free(h->unsent);
	h->unsent = NULL;
	h->unsent_len = 0;
	return 0;
}

int
sk_resume(struct sk_handle *h, int flags)
{
	if (!h->repair)
		return 0;
	if (sk_tcp_repair(h->fd, (flags & SK_RESUME_NO_PROBE) ?
	    TCP_REPAIR_OFF_NO_WP : 0) < 0)
		return -1;
	h->repair = false;
	if (sk_setint(h->fd, SOL_SOCKET, SO_REUSEADDR, h->reuseaddr) < 0) {
		sk_log_errno("%s: SO_REUSEADDR", __func__);
		return -1;
	}
	if (h->unsent_len > 0 && sk_send_unsent(h) < 0)
		return -1;
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
