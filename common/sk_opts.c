/*
 * The socket options a workload sets, read on the source and applied
 * to the new socket before it is bound.  Buffer sizes are carried only
 * when the user set them (SO_BUF_LOCK, Linux 5.15+, tells which); the
 * kernel stores twice what the user asked, so the user's value is the
 * read value halved.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

#include "sk_priv.h"

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK		72
#endif
#define SK_SNDBUF_LOCK		1
#define SK_RCVBUF_LOCK		2

/* Read one int option; ENOPROTOOPT leaves *val at 0 and succeeds. */
static int
sk_opt_get(int fd, int level, int opt, const char *name, int *val)
{
	if (sk_getint(fd, level, opt, val) == 0)
		return 0;
	if (errno == ENOPROTOOPT) {
		sk_log(LOG_DEBUG, "sk_opts_read: %s not supported", name);
		*val = 0;
		return 0;
	}
	sk_log_errno("sk_opts_read: %s", name);
	return -1;
}

static int
sk_opt_set(int fd, int level, int opt, const char *name, int val)
{
	if (sk_setint(fd, level, opt, val) == 0)
		return 0;
	if (errno == ENOPROTOOPT) {
		sk_log(LOG_DEBUG, "sk_opts_apply: %s not supported", name);
		return 0;
	}
	sk_log_errno("sk_opts_apply: %s = %d", name, val);
	return -1;
}

#define GET(lvl, opt, dst) \
	do { if (sk_opt_get(fd, lvl, opt, #opt, &v) < 0) return -1; \
	     dst = v; } while (0)
#define SET(lvl, opt, val) \
	do { if (sk_opt_set(fd, lvl, opt, #opt, (int)(val)) < 0) \
		return -1; } while (0)

int
sk_opts_read(int fd, int family, enum sk_proto proto, struct sk_opts *o)
{
	struct linger lg;
	socklen_t len;
	int v, locks;

	memset(o, 0, sizeof(*o));
	GET(SOL_SOCKET, SO_REUSEADDR, o->reuseaddr);
	GET(SOL_SOCKET, SO_REUSEPORT, o->reuseport);
	GET(SOL_SOCKET, SO_KEEPALIVE, o->keepalive);
	GET(SOL_SOCKET, SO_PRIORITY, o->priority);
	GET(SOL_SOCKET, SO_MARK, o->mark);
	GET(SOL_SOCKET, SO_BUF_LOCK, locks);
	if (locks & SK_RCVBUF_LOCK) {
		GET(SOL_SOCKET, SO_RCVBUF, o->rcvbuf);
		o->rcvbuf /= 2;
	}
	if (locks & SK_SNDBUF_LOCK) {
		GET(SOL_SOCKET, SO_SNDBUF, o->sndbuf);
		o->sndbuf /= 2;
	}
	len = sizeof(lg);
	if (getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &len) < 0) {
		sk_log_errno("%s: SO_LINGER", __func__);
		return -1;
	}
	o->linger_on = lg.l_onoff != 0;
	o->linger_secs = lg.l_linger;
	if (family == AF_INET6)
		GET(IPPROTO_IPV6, IPV6_V6ONLY, o->v6only);
	if (proto != SK_PROTO_TCP)
		return 0;
	GET(IPPROTO_TCP, TCP_NODELAY, o->nodelay);
	GET(IPPROTO_TCP, TCP_CORK, o->cork);
	GET(IPPROTO_TCP, TCP_KEEPIDLE, o->keepidle);
	GET(IPPROTO_TCP, TCP_KEEPINTVL, o->keepintvl);
	GET(IPPROTO_TCP, TCP_KEEPCNT, o->keepcnt);
	GET(IPPROTO_TCP, TCP_USER_TIMEOUT, o->user_timeout);
	GET(IPPROTO_TCP, TCP_NOTSENT_LOWAT, o->notsent_lowat);
	len = sizeof(o->congestion) - 1;
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->congestion,
	    &len) < 0) {
		sk_log_errno("%s: TCP_CONGESTION", __func__);
		return -1;
	}
	o->congestion[sizeof(o->congestion) - 1] = '\0';
	return 0;
}

int
sk_opts_apply(int fd, int family, enum sk_proto proto,
    const struct sk_opts *o)
{
	struct linger lg;

	SET(SOL_SOCKET, SO_REUSEADDR, o->reuseaddr);
	SET(SOL_SOCKET, SO_REUSEPORT, o->reuseport);
	SET(SOL_SOCKET, SO_KEEPALIVE, o->keepalive);
	if (o->priority != 0)
		SET(SOL_SOCKET, SO_PRIORITY, o->priority);
	if (o->mark != 0)
		SET(SOL_SOCKET, SO_MARK, o->mark);
	if (o->rcvbuf != 0)
		SET(SOL_SOCKET, SO_RCVBUF, o->rcvbuf);
	if (o->sndbuf != 0)
		SET(SOL_SOCKET, SO_SNDBUF, o->sndbuf);
	if (o->linger_on) {
		lg.l_onoff = 1;
		lg.l_linger = o->linger_secs;
		if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg)) < 0) {
			sk_log_errno("%s: SO_LINGER", __func__);
			return -1;
		}
	}
	if (family == AF_INET6)
		SET(IPPROTO_IPV6, IPV6_V6ONLY, o->v6only);
	if (proto != SK_PROTO_TCP)
		return 0;
	SET(IPPROTO_TCP, TCP_NODELAY, o->nodelay);
	SET(IPPROTO_TCP, TCP_CORK, o->cork);
	if (o->keepidle != 0)
		SET(IPPROTO_TCP, TCP_KEEPIDLE, o->keepidle);
	if (o->keepintvl != 0)
		SET(IPPROTO_TCP, TCP_KEEPINTVL, o->keepintvl);
	if (o->keepcnt != 0)
		SET(IPPROTO_TCP, TCP_KEEPCNT, o->keepcnt);
	SET(IPPROTO_TCP, TCP_USER_TIMEOUT, o->user_timeout);
	if (o->notsent_lowat != 0)
		SET(IPPROTO_TCP, TCP_NOTSENT_LOWAT, o->notsent_lowat);
	if (o->congestion[0] != '\0' &&
	    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->congestion,
	    strlen(o->congestion)) < 0) {
		sk_log_errno("%s: TCP_CONGESTION %s", __func__,
		    o->congestion);
		return -1;
	}
	return 0;
}
