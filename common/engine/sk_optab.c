/* SPDX-License-Identifier: ISC */
/*
 * The socket options a TCP or UDP service can set, one table: each is
 * read on the source, and either carried (only when its value differs
 * from what a fresh socket of the same kind reads, so a record holds
 * what the program changed) or refused by name when it has a value the
 * engine cannot reproduce.  The destination applies the carried ones in
 * table order (IP_TOS before SO_PRIORITY, which it sets too; a filter
 * before SO_LOCK_FILTER), most before bind, the "late" ones once the
 * queues are in place.
 *
 * docs/protocol.md lists the table with what happens to each option, and
 * what the kernel gives no way to read (and so is neither carried nor
 * refused): among them IPV6_MTU, whose getsockopt() answers the path MTU
 * rather than what was set, and SO_INCOMING_CPU, which the kernel itself
 * rewrites with each packet received.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/net_tstamp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "sk_priv.h"

/* Names a libc may lack (values from the 6.1 uapi headers). */
#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK		72
#endif
#ifndef SO_RCVMARK
#define SO_RCVMARK		75
#endif
#ifndef SO_TXREHASH
#define SO_TXREHASH		74
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO		11
#endif
#ifndef IPV6_FLOWINFO_SEND
#define IPV6_FLOWINFO_SEND	33
#endif
#ifndef IP_RECVERR_RFC4884
#define IP_RECVERR_RFC4884	26
#endif
#ifndef IPV6_RECVERR_RFC4884
#define IPV6_RECVERR_RFC4884	31
#endif
#ifndef TCP_INQ
#define TCP_INQ			36
#endif
#ifndef TCP_TX_DELAY
#define TCP_TX_DELAY		37
#endif
#ifndef TCP_FASTOPEN_KEY
#define TCP_FASTOPEN_KEY	33
#endif
#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE	34
#endif
#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX	101
#define UDP_NO_CHECK6_RX	102
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT		103
#endif
#ifndef UDP_GRO
#define UDP_GRO			104
#endif
#ifndef UDP_ENCAP
#define UDP_ENCAP		100
#endif
#ifndef SOF_TIMESTAMPING_BIND_PHC
#define SOF_TIMESTAMPING_BIND_PHC	(1 << 15)
#endif

#define P_TCP	0x1
#define P_UDP	0x2
#define P_ALL	(P_TCP | P_UDP)
#define F_4	0x1		/* AF_INET sockets */
#define F_6	0x2		/* AF_INET6 sockets */
#define F_ALL	(F_4 | F_6)

/* flags */
#define O_LATE		0x01	/* applied once the queues are in place */
#define O_REFUSE	0x02	/* any value but the fresh socket's: refuse */
#define O_UNCONN	0x04	/* only for LISTEN, CLOSE, BOUND (connections
				   carry it in their own fields) */
#define O_LISTEN	0x08	/* only for LISTEN */
#define O_IFINDEX	0x10	/* an interface index: refused when set, the
				   moved interfaces get new indexes */

struct sk_optdef {
	const char		*name;
	int			 level, opt;
	enum sk_opt_kind	 kind;
	uint8_t			 protos, fams, flags;
	int64_t			 min, max;	/* ival, or bytes for data */
	const char		*why;		/* a refusal's reason */
};

#define B(n, l, o, p, f, fl)	{ #n, l, o, SK_OK_BOOL, p, f, fl, 0, 1, NULL }
#define I(n, l, o, p, f, fl, lo, hi) \
	{ #n, l, o, SK_OK_INT, p, f, fl, lo, hi, NULL }

static const struct sk_optdef optab[] = {
	/* SOL_SOCKET */
	B(SO_REUSEADDR, SOL_SOCKET, SO_REUSEADDR, P_ALL, F_ALL, 0),
	B(SO_REUSEPORT, SOL_SOCKET, SO_REUSEPORT, P_ALL, F_ALL, 0),
	B(SO_KEEPALIVE, SOL_SOCKET, SO_KEEPALIVE, P_ALL, F_ALL, 0),
	B(SO_BROADCAST, SOL_SOCKET, SO_BROADCAST, P_ALL, F_ALL, 0),
	B(SO_DONTROUTE, SOL_SOCKET, SO_DONTROUTE, P_ALL, F_ALL, 0),
	B(SO_OOBINLINE, SOL_SOCKET, SO_OOBINLINE, P_TCP, F_ALL, 0),
	B(SO_NO_CHECK, SOL_SOCKET, SO_NO_CHECK, P_UDP, F_ALL, 0),
	I(SO_MARK, SOL_SOCKET, SO_MARK, P_ALL, F_ALL, 0, 0, UINT32_MAX),
	I(SO_RCVLOWAT, SOL_SOCKET, SO_RCVLOWAT, P_ALL, F_ALL, 0, 0, INT_MAX),
	{ "SO_RCVTIMEO", SOL_SOCKET, SO_RCVTIMEO, SK_OK_TIMEVAL, P_ALL,
	  F_ALL, 0, 0, INT64_MAX / 2, NULL },
	{ "SO_SNDTIMEO", SOL_SOCKET, SO_SNDTIMEO, SK_OK_TIMEVAL, P_ALL,
	  F_ALL, 0, 0, INT64_MAX / 2, NULL },
	{ "SO_LINGER", SOL_SOCKET, SO_LINGER, SK_OK_LINGER, P_ALL, F_ALL, 0,
	  -1, INT_MAX, NULL },
	{ "SO_BINDTODEVICE", SOL_SOCKET, SO_BINDTODEVICE, SK_OK_STRING, P_ALL,
	  F_ALL, 0, 0, IFNAMSIZ - 1, NULL },
	B(SO_TIMESTAMP, SOL_SOCKET, SO_TIMESTAMP, P_ALL, F_ALL, 0),
	B(SO_TIMESTAMPNS, SOL_SOCKET, SO_TIMESTAMPNS, P_ALL, F_ALL, 0),
	I(SO_TIMESTAMPING, SOL_SOCKET, SO_TIMESTAMPING, P_ALL, F_ALL, 0, 0,
	    SOF_TIMESTAMPING_BIND_PHC - 1),
	B(SO_RXQ_OVFL, SOL_SOCKET, SO_RXQ_OVFL, P_ALL, F_ALL, 0),
	B(SO_WIFI_STATUS, SOL_SOCKET, SO_WIFI_STATUS, P_ALL, F_ALL, 0),
	B(SO_SELECT_ERR_QUEUE, SOL_SOCKET, SO_SELECT_ERR_QUEUE, P_ALL, F_ALL,
	    0),
	I(SO_BUSY_POLL, SOL_SOCKET, SO_BUSY_POLL, P_ALL, F_ALL, 0, 0, INT_MAX),
	B(SO_PREFER_BUSY_POLL, SOL_SOCKET, SO_PREFER_BUSY_POLL, P_ALL, F_ALL,
	    0),
	I(SO_BUSY_POLL_BUDGET, SOL_SOCKET, SO_BUSY_POLL_BUDGET, P_ALL, F_ALL,
	    0, 0, 65535),
	B(SO_ZEROCOPY, SOL_SOCKET, SO_ZEROCOPY, P_ALL, F_ALL, 0),
	I(SO_MAX_PACING_RATE, SOL_SOCKET, SO_MAX_PACING_RATE, P_ALL, F_ALL, 0,
	    0, UINT32_MAX),
	I(SO_TXREHASH, SOL_SOCKET, SO_TXREHASH, P_ALL, F_ALL, 0, 0, 255),
	B(SO_RCVMARK, SOL_SOCKET, SO_RCVMARK, P_ALL, F_ALL, 0),
	B(SO_PASSCRED, SOL_SOCKET, SO_PASSCRED, P_ALL, F_ALL, 0),
	B(SO_PASSSEC, SOL_SOCKET, SO_PASSSEC, P_ALL, F_ALL, 0),
	{ "SO_ATTACH_FILTER", SOL_SOCKET, SO_GET_FILTER, SK_OK_BYTES, P_ALL,
	  F_ALL, 0, 0, BPF_MAXINSNS * sizeof(struct sock_filter), NULL },
	B(SO_LOCK_FILTER, SOL_SOCKET, SO_LOCK_FILTER, P_ALL, F_ALL, O_LATE),
	/* UDP's peek offset matters once its datagrams are back */
	I(SO_PEEK_OFF, SOL_SOCKET, SO_PEEK_OFF, P_UDP, F_ALL, O_LATE, -1,
	    INT_MAX),

	/* SOL_IP (an AF_INET6 socket has them too, for mapped addresses);
	 * IP_TOS before SO_PRIORITY, which setting IP_TOS changes */
	I(IP_TOS, SOL_IP, IP_TOS, P_ALL, F_ALL, 0, 0, 255),
	I(SO_PRIORITY, SOL_SOCKET, SO_PRIORITY, P_ALL, F_ALL, 0, 0,
	    UINT32_MAX),
	I(IP_TTL, SOL_IP, IP_TTL, P_ALL, F_4, 0, 1, 255),
	I(IP_MINTTL, SOL_IP, IP_MINTTL, P_ALL, F_4, 0, 0, 255),
	{ "IP_OPTIONS", SOL_IP, IP_OPTIONS, SK_OK_BYTES, P_ALL, F_4, 0, 0, 40,
	  NULL },
	B(IP_RECVOPTS, SOL_IP, IP_RECVOPTS, P_ALL, F_ALL, 0),
	B(IP_RETOPTS, SOL_IP, IP_RETOPTS, P_ALL, F_ALL, 0),
	B(IP_PKTINFO, SOL_IP, IP_PKTINFO, P_ALL, F_ALL, 0),
	B(IP_RECVTTL, SOL_IP, IP_RECVTTL, P_ALL, F_ALL, 0),
	B(IP_RECVTOS, SOL_IP, IP_RECVTOS, P_ALL, F_ALL, 0),
	B(IP_RECVERR, SOL_IP, IP_RECVERR, P_ALL, F_ALL, 0),
	B(IP_RECVERR_RFC4884, SOL_IP, IP_RECVERR_RFC4884, P_ALL, F_ALL, 0),
	B(IP_RECVORIGDSTADDR, SOL_IP, IP_RECVORIGDSTADDR, P_ALL, F_ALL, 0),
	B(IP_RECVFRAGSIZE, SOL_IP, IP_RECVFRAGSIZE, P_ALL, F_ALL, 0),
	B(IP_PASSSEC, SOL_IP, IP_PASSSEC, P_ALL, F_ALL, 0),
	B(IP_CHECKSUM, SOL_IP, IP_CHECKSUM, P_ALL, F_ALL, 0),
	I(IP_MTU_DISCOVER, SOL_IP, IP_MTU_DISCOVER, P_ALL, F_ALL, 0, 0, 5),
	B(IP_FREEBIND, SOL_IP, IP_FREEBIND, P_ALL, F_ALL, 0),
	B(IP_TRANSPARENT, SOL_IP, IP_TRANSPARENT, P_ALL, F_ALL, 0),
	B(IP_BIND_ADDRESS_NO_PORT, SOL_IP, IP_BIND_ADDRESS_NO_PORT, P_ALL,
	    F_ALL, 0),
	I(IP_MULTICAST_TTL, SOL_IP, IP_MULTICAST_TTL, P_UDP, F_ALL, 0, 0, 255),
	B(IP_MULTICAST_LOOP, SOL_IP, IP_MULTICAST_LOOP, P_UDP, F_ALL, 0),
	B(IP_MULTICAST_ALL, SOL_IP, IP_MULTICAST_ALL, P_UDP, F_ALL, 0),
	{ "IP_MULTICAST_IF", SOL_IP, IP_MULTICAST_IF, SK_OK_BYTES, P_UDP,
	  F_ALL, 0, 4, 4, NULL },
	{ "IP_UNICAST_IF", SOL_IP, IP_UNICAST_IF, SK_OK_INT, P_ALL, F_ALL,
	  O_IFINDEX, 0, 0, "IP_UNICAST_IF names an interface by its index" },

	/* SOL_IPV6 */
	B(IPV6_V6ONLY, SOL_IPV6, IPV6_V6ONLY, P_ALL, F_6, 0),
	I(IPV6_UNICAST_HOPS, SOL_IPV6, IPV6_UNICAST_HOPS, P_ALL, F_6, 0, 1,
	    255),
	I(IPV6_MULTICAST_HOPS, SOL_IPV6, IPV6_MULTICAST_HOPS, P_UDP, F_6, 0, 0,
	    255),
	B(IPV6_MULTICAST_LOOP, SOL_IPV6, IPV6_MULTICAST_LOOP, P_UDP, F_6, 0),
	B(IPV6_MULTICAST_ALL, SOL_IPV6, IPV6_MULTICAST_ALL, P_UDP, F_6, 0),
	{ "IPV6_MULTICAST_IF", SOL_IPV6, IPV6_MULTICAST_IF, SK_OK_INT, P_UDP,
	  F_6, O_IFINDEX, 0, 0,
	  "IPV6_MULTICAST_IF names an interface by its index" },
	{ "IPV6_UNICAST_IF", SOL_IPV6, IPV6_UNICAST_IF, SK_OK_INT, P_ALL, F_6,
	  O_IFINDEX, 0, 0, "IPV6_UNICAST_IF names an interface by its index" },
	I(IPV6_TCLASS, SOL_IPV6, IPV6_TCLASS, P_ALL, F_6, 0, 0, 255),
	B(IPV6_RECVPKTINFO, SOL_IPV6, IPV6_RECVPKTINFO, P_ALL, F_6, 0),
	B(IPV6_RECVHOPLIMIT, SOL_IPV6, IPV6_RECVHOPLIMIT, P_ALL, F_6, 0),
	B(IPV6_RECVRTHDR, SOL_IPV6, IPV6_RECVRTHDR, P_ALL, F_6, 0),
	B(IPV6_RECVHOPOPTS, SOL_IPV6, IPV6_RECVHOPOPTS, P_ALL, F_6, 0),
	B(IPV6_RECVDSTOPTS, SOL_IPV6, IPV6_RECVDSTOPTS, P_ALL, F_6, 0),
	B(IPV6_RECVTCLASS, SOL_IPV6, IPV6_RECVTCLASS, P_ALL, F_6, 0),
	B(IPV6_RECVPATHMTU, SOL_IPV6, IPV6_RECVPATHMTU, P_ALL, F_6, 0),
	B(IPV6_RECVORIGDSTADDR, SOL_IPV6, IPV6_RECVORIGDSTADDR, P_ALL, F_6, 0),
	B(IPV6_RECVFRAGSIZE, SOL_IPV6, IPV6_RECVFRAGSIZE, P_ALL, F_6, 0),
	B(IPV6_RECVERR, SOL_IPV6, IPV6_RECVERR, P_ALL, F_6, 0),
	B(IPV6_RECVERR_RFC4884, SOL_IPV6, IPV6_RECVERR_RFC4884, P_ALL, F_6,
	    0),
	B(IPV6_2292PKTINFO, SOL_IPV6, IPV6_2292PKTINFO, P_ALL, F_6, 0),
	B(IPV6_2292HOPLIMIT, SOL_IPV6, IPV6_2292HOPLIMIT, P_ALL, F_6, 0),
	B(IPV6_2292HOPOPTS, SOL_IPV6, IPV6_2292HOPOPTS, P_ALL, F_6, 0),
	B(IPV6_2292DSTOPTS, SOL_IPV6, IPV6_2292DSTOPTS, P_ALL, F_6, 0),
	B(IPV6_2292RTHDR, SOL_IPV6, IPV6_2292RTHDR, P_ALL, F_6, 0),
	B(IPV6_FLOWINFO, SOL_IPV6, IPV6_FLOWINFO, P_ALL, F_6, 0),
	I(IPV6_MTU_DISCOVER, SOL_IPV6, IPV6_MTU_DISCOVER, P_ALL, F_6, 0, 0, 5),
	B(IPV6_DONTFRAG, SOL_IPV6, IPV6_DONTFRAG, P_ALL, F_6, 0),
	B(IPV6_FREEBIND, SOL_IPV6, IPV6_FREEBIND, P_ALL, F_6, 0),
	B(IPV6_TRANSPARENT, SOL_IPV6, IPV6_TRANSPARENT, P_ALL, F_6, 0),
	B(IPV6_AUTOFLOWLABEL, SOL_IPV6, IPV6_AUTOFLOWLABEL, P_ALL, F_6, 0),
	B(IPV6_FLOWINFO_SEND, SOL_IPV6, IPV6_FLOWINFO_SEND, P_ALL, F_6, 0),
	I(IPV6_ADDR_PREFERENCES, SOL_IPV6, IPV6_ADDR_PREFERENCES, P_ALL, F_6,
	    0, 0, 0xffff),
	I(IPV6_MINHOPCOUNT, SOL_IPV6, IPV6_MINHOPCOUNT, P_ALL, F_6, 0, 0, 255),
	/* sticky extension headers: the header bytes as set */
	{ "IPV6_HOPOPTS", SOL_IPV6, IPV6_HOPOPTS, SK_OK_BYTES, P_ALL, F_6, 0,
	  0, 2048, NULL },
	{ "IPV6_RTHDR", SOL_IPV6, IPV6_RTHDR, SK_OK_BYTES, P_ALL, F_6, 0, 0,
	  2048, NULL },
	{ "IPV6_DSTOPTS", SOL_IPV6, IPV6_DSTOPTS, SK_OK_BYTES, P_ALL, F_6, 0,
	  0, 2048, NULL },
	{ "IPV6_RTHDRDSTOPTS", SOL_IPV6, IPV6_RTHDRDSTOPTS, SK_OK_BYTES, P_ALL,
	  F_6, 0, 0, 2048, NULL },
	{ "IPV6_PKTINFO", SOL_IPV6, IPV6_PKTINFO, SK_OK_BYTES, P_UDP, F_6,
	  O_REFUSE, 0, 0, "a sticky IPV6_PKTINFO names an interface by its "
	  "index" },

	/* SOL_TCP; the connection's MSS and window clamp travel with its
	 * state (struct sk_tcp) */
	B(TCP_NODELAY, SOL_TCP, TCP_NODELAY, P_TCP, F_ALL, 0),
	B(TCP_CORK, SOL_TCP, TCP_CORK, P_TCP, F_ALL, 0),
	I(TCP_KEEPIDLE, SOL_TCP, TCP_KEEPIDLE, P_TCP, F_ALL, 0, 1, 32767),
	I(TCP_KEEPINTVL, SOL_TCP, TCP_KEEPINTVL, P_TCP, F_ALL, 0, 1, 32767),
	I(TCP_KEEPCNT, SOL_TCP, TCP_KEEPCNT, P_TCP, F_ALL, 0, 1, 127),
	I(TCP_SYNCNT, SOL_TCP, TCP_SYNCNT, P_TCP, F_ALL, 0, 1, 127),
	I(TCP_LINGER2, SOL_TCP, TCP_LINGER2, P_TCP, F_ALL, 0, -1, 120),
	I(TCP_DEFER_ACCEPT, SOL_TCP, TCP_DEFER_ACCEPT, P_TCP, F_ALL, O_LISTEN,
	    0, INT_MAX),
	I(TCP_MAXSEG, SOL_TCP, TCP_MAXSEG, P_TCP, F_ALL, O_UNCONN, 0, 65535),
	I(TCP_WINDOW_CLAMP, SOL_TCP, TCP_WINDOW_CLAMP, P_TCP, F_ALL, O_UNCONN,
	    0, INT_MAX),
	{ "TCP_CONGESTION", SOL_TCP, TCP_CONGESTION, SK_OK_STRING, P_TCP,
	  F_ALL, 0, 1, 15, NULL },
	I(TCP_USER_TIMEOUT, SOL_TCP, TCP_USER_TIMEOUT, P_TCP, F_ALL, 0, 0,
	    INT_MAX),
	B(TCP_THIN_LINEAR_TIMEOUTS, SOL_TCP, TCP_THIN_LINEAR_TIMEOUTS, P_TCP,
	    F_ALL, 0),
	I(TCP_NOTSENT_LOWAT, SOL_TCP, TCP_NOTSENT_LOWAT, P_TCP, F_ALL, O_LATE,
	    0, UINT32_MAX),
	I(TCP_FASTOPEN, SOL_TCP, TCP_FASTOPEN, P_TCP, F_ALL, O_LISTEN, 0,
	    INT_MAX),
	{ "TCP_FASTOPEN_KEY", SOL_TCP, TCP_FASTOPEN_KEY, SK_OK_BYTES, P_TCP,
	  F_ALL, O_LISTEN, 16, 32, NULL },
	B(TCP_FASTOPEN_CONNECT, SOL_TCP, TCP_FASTOPEN_CONNECT, P_TCP, F_ALL,
	    0),
	B(TCP_FASTOPEN_NO_COOKIE, SOL_TCP, TCP_FASTOPEN_NO_COOKIE, P_TCP,
	    F_ALL, 0),
	I(TCP_SAVE_SYN, SOL_TCP, TCP_SAVE_SYN, P_TCP, F_ALL, 0, 0, 2),
	I(TCP_TX_DELAY, SOL_TCP, TCP_TX_DELAY, P_TCP, F_ALL, 0, 0, INT_MAX),
	B(TCP_INQ, SOL_TCP, TCP_INQ, P_TCP, F_ALL, 0),

	/* SOL_UDP */
	B(UDP_CORK, SOL_UDP, UDP_CORK, P_UDP, F_ALL, 0),
	{ "UDP_ENCAP", SOL_UDP, UDP_ENCAP, SK_OK_INT, P_UDP, F_ALL, O_REFUSE,
	  0, 0, "UDP_ENCAP hands datagrams to a tunnel in the kernel" },
	B(UDP_NO_CHECK6_TX, SOL_UDP, UDP_NO_CHECK6_TX, P_UDP, F_6, 0),
	B(UDP_NO_CHECK6_RX, SOL_UDP, UDP_NO_CHECK6_RX, P_UDP, F_6, 0),
	I(UDP_SEGMENT, SOL_UDP, UDP_SEGMENT, P_UDP, F_ALL, 0, 0, 65535),
	B(UDP_GRO, SOL_UDP, UDP_GRO, P_UDP, F_ALL, 0),
};
#define NOPTS	(sizeof(optab) / sizeof(optab[0]))

#define VALUE_MAX	(BPF_MAXINSNS * sizeof(struct sock_filter))

/* One option's value as read, in a form that compares whole. */
struct optval {
	int	 present;	/* the kernel answered */
	int64_t	 ival;
	uint32_t len;
	uint8_t	 buf[VALUE_MAX];
};

unsigned
sk_opt_count(void)
{
	return NOPTS;
}

const char *
sk_opt_name(unsigned id)
{
	return id < NOPTS ? optab[id].name : NULL;
}

int
sk_opt_find(const char *name)
{
	unsigned i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(optab[i].name, name) == 0)
			return (int)i;
	return -1;
}

enum sk_opt_kind
sk_opt_kind(unsigned id)
{
	return id < NOPTS ? optab[id].kind : SK_OK_INT;
}

static int
applies(const struct sk_optdef *d, enum sk_proto proto, int family)
{
	return (d->protos & (proto == SK_PROTO_TCP ? P_TCP : P_UDP)) &&
	    (d->fams & (family == AF_INET6 ? F_6 : F_4));
}

static int
applies_state(const struct sk_optdef *d, enum sk_st st)
{
	if ((d->flags & O_LISTEN) && st != SK_ST_LISTEN)
		return 0;
	if ((d->flags & O_UNCONN) && st != SK_ST_LISTEN &&
	    st != SK_ST_CLOSE && st != SK_ST_BOUND)
		return 0;
	return 1;
}

int
sk_opt_check(const struct sk_opt *o, enum sk_proto proto, int family,
    enum sk_st st, char *why, size_t whylen)
{
	const struct sk_optdef *d;

	if (o->id >= NOPTS) {
		snprintf(why, whylen, "option %u unknown", o->id);
		return -1;
	}
	d = &optab[o->id];
	if (!applies(d, proto, family)) {
		snprintf(why, whylen, "%s: not an option of an %s %s socket",
		    d->name, family == AF_INET6 ? "inet6" : "inet",
		    sk_proto_name(proto));
		return -1;
	}
	if (!applies_state(d, st)) {
		snprintf(why, whylen, "%s: not an option of a socket in state "
		    "%s", d->name, sk_st_name(st) ? sk_st_name(st) : "?");
		return -1;
	}
	if (d->flags & (O_REFUSE | O_IFINDEX)) {
		snprintf(why, whylen, "%s: %s", d->name, d->why);
		return -1;
	}
	switch (d->kind) {
	case SK_OK_BOOL:
	case SK_OK_INT:
	case SK_OK_TIMEVAL:
	case SK_OK_LINGER:
		if (o->len != 0 || o->ival < d->min || o->ival > d->max) {
			snprintf(why, whylen, "%s: %lld out of range %lld..%lld",
			    d->name, (long long)o->ival, (long long)d->min,
			    (long long)d->max);
			return -1;
		}
		break;
	case SK_OK_STRING:
	case SK_OK_BYTES:
		if ((int64_t)o->len < d->min || (int64_t)o->len > d->max ||
		    (o->len > 0 && o->data == NULL) ||
		    (d->kind == SK_OK_STRING && o->len > 0 &&
		    memchr(o->data, '\0', o->len) != NULL) ||
		    (d->opt == SO_GET_FILTER &&
		    o->len % sizeof(struct sock_filter) != 0)) {
			snprintf(why, whylen, "%s: a value of %u bytes",
			    d->name, o->len);
			return -1;
		}
		break;
	}
	return 0;
}

/* Read one option into v; v->present 0 when this socket has no such
 * option.  -1 only on an unexpected error. */
static int
opt_get(int fd, const struct sk_optdef *d, struct optval *v)
{
	union {
		int		 i;
		struct timeval	 tv;
		struct linger	 lg;
		uint32_t	 u32;
	} u;
	socklen_t len;
	int rc;

	/* not the 32 KiB buffer: only len bytes of it are ever looked at */
	v->present = 0;
	v->ival = 0;
	v->len = 0;
	switch (d->kind) {
	case SK_OK_STRING:
	case SK_OK_BYTES:
		len = sizeof(v->buf);
		if (d->opt == SO_GET_FILTER && d->level == SOL_SOCKET) {
			/* the length is in instructions, the buffer in bytes */
			len = BPF_MAXINSNS;
		}
		rc = getsockopt(fd, d->level, d->opt, v->buf, &len);
		if (rc == 0) {
			if (d->opt == SO_GET_FILTER && d->level == SOL_SOCKET)
				len *= sizeof(struct sock_filter);
			if (d->kind == SK_OK_STRING) {
				/* the kernel counts the NUL of some names */
				len = (socklen_t)strnlen((char *)v->buf, len);
			}
			v->len = len;
		}
		break;
	default:
		memset(&u, 0, sizeof(u));
		len = d->kind == SK_OK_TIMEVAL ? sizeof(u.tv) :
		    d->kind == SK_OK_LINGER ? sizeof(u.lg) : sizeof(u.i);
		rc = getsockopt(fd, d->level, d->opt, &u, &len);
		if (rc != 0)
			break;
		if (d->kind == SK_OK_TIMEVAL)
			v->ival = (int64_t)u.tv.tv_sec * 1000000 + u.tv.tv_usec;
		else if (d->kind == SK_OK_LINGER)
			v->ival = u.lg.l_onoff ? u.lg.l_linger : -1;
		else if (d->max > INT_MAX)
			v->ival = u.u32;	/* unsigned on the wire */
		else
			v->ival = d->kind == SK_OK_BOOL ? u.i != 0 : u.i;
		break;
	}
	if (rc == 0) {
		v->present = 1;
		return 0;
	}
	/* options this socket, family or kernel does not have */
	if (errno == ENOPROTOOPT || errno == EOPNOTSUPP || errno == EINVAL ||
	    errno == ENOTCONN)
		return 0;
	if (d->opt == SO_GET_FILTER && d->level == SOL_SOCKET &&
	    errno == EACCES) {
		/* an eBPF filter has no classic program to read back */
		v->present = 1;
		v->ival = -1;
		return 0;
	}
	sk_log_errno("sk_opts_read: %s", d->name);
	return -1;
}

/*
 * What a fresh socket of a kind reads, to tell what a program changed.
 * Its defaults follow its network namespace's sysctls (TCP_KEEPIDLE
 * reads net.ipv4.tcp_keepalive_time, IP_TTL ip_default_ttl), so the
 * fresh socket is made in the namespace of the socket being read
 * (SIOCGSKNS), and its values are kept per namespace, family and
 * protocol: the table is read on a fresh socket once, not once per
 * socket.  The key is the namespace's cookie (SO_NETNS_COOKIE), which
 * the kernel never gives to another namespace.  Not thread-safe; the
 * engine's callers are single-threaded.
 */
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71
#endif
#ifndef SIOCGSKNS
#define SIOCGSKNS	0x894C
#endif
#define REF_SETS	8

struct refval {
	uint8_t		 present;
	int64_t		 ival;
	uint32_t	 len;
	uint8_t		*data;
};

struct refset {
	int		 used;
	uint64_t	 cookie;
	int		 family;
	enum sk_proto	 proto;
	struct refval	 v[NOPTS];
};

static struct refset refsets[REF_SETS];
static unsigned refnext;

static int
same(const struct optval *a, const struct refval *b)
{
	return a->present == b->present && a->ival == b->ival &&
	    a->len == b->len && (a->len == 0 ||
	    memcmp(a->buf, b->data, a->len) == 0);
}

/* A fresh socket of the kind in fd's namespace (ours if the kernel
 * cannot say which). */
static int
fresh_socket(int fd, int family, enum sk_proto proto)
{
	int type = (proto == SK_PROTO_TCP ? SOCK_STREAM : SOCK_DGRAM) |
	    SOCK_CLOEXEC;
	int nsfd, own, rfd, err;

	if ((nsfd = ioctl(fd, SIOCGSKNS)) < 0)
		return socket(family, type, 0);
	if ((own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0) {
		close(nsfd);
		return socket(family, type, 0);
	}
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		close(nsfd);
		close(own);
		return socket(family, type, 0);
	}
	rfd = socket(family, type, 0);
	err = errno;
	if (setns(own, CLONE_NEWNET) < 0) {
		/* stranded in another namespace: nothing may go on */
		sk_log_errno("sk_opts_read: back to our namespace");
		if (rfd >= 0)
			close(rfd);
		rfd = -1;
		err = errno;
	}
	close(nsfd);
	close(own);
	errno = err;
	return rfd;
}

static void
refset_clear(struct refset *r)
{
	unsigned i;

	for (i = 0; i < NOPTS; i++)
		free(r->v[i].data);
	memset(r, 0, sizeof(*r));
}

/* The fresh socket's values for fd's kind, read now or kept. */
static const struct refset *
refset_get(int fd, int family, enum sk_proto proto, struct optval *tmp)
{
	struct refset *r;
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	unsigned i;
	int rfd;

	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) < 0)
		cookie = 0;	/* before 5.14: one namespace, ours */
	for (i = 0; i < REF_SETS; i++)
		if (refsets[i].used && refsets[i].cookie == cookie &&
		    refsets[i].family == family && refsets[i].proto == proto)
			return &refsets[i];
	r = &refsets[refnext++ % REF_SETS];
	refset_clear(r);
	if ((rfd = fresh_socket(fd, family, proto)) < 0) {
		sk_log_errno("sk_opts_read: socket");
		return NULL;
	}
	for (i = 0; i < NOPTS; i++) {
		const struct sk_optdef *d = &optab[i];

		if (!applies(d, proto, family))
			continue;
		if (opt_get(rfd, d, tmp) < 0)
			goto out_fail;
		r->v[i].present = (uint8_t)tmp->present;
		r->v[i].ival = tmp->ival;
		r->v[i].len = tmp->len;
		if (tmp->len > 0) {
			if ((r->v[i].data = malloc(tmp->len)) == NULL)
				goto out_fail;
			memcpy(r->v[i].data, tmp->buf, tmp->len);
		}
	}
	close(rfd);
	r->cookie = cookie;
	r->family = family;
	r->proto = proto;
	r->used = 1;
	return r;

out_fail:
	close(rfd);
	refset_clear(r);
	return NULL;
}

/*
 * Read every option of the table that applies to the socket; keep those
 * that differ from a fresh socket's, and say why a value is refused.
 * Returns 0 (why empty), 1 (refusals listed in why), or -1 on an error.
 * st may be NULL: only refusals.
 */
int
sk_opts_read(int fd, int family, enum sk_proto proto, enum sk_st state,
    struct sk_state *st, char *why, size_t whylen)
{
	const struct refset *ref;
	struct optval *v;
	size_t off = 0;
	unsigned i;
	int refused = 0, rc = -1;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if ((v = malloc(sizeof(*v))) == NULL) {
		sk_log_errno("sk_opts_read: malloc");
		return -1;
	}
	if ((ref = refset_get(fd, family, proto, v)) == NULL)
		goto out;
	for (i = 0; i < NOPTS; i++) {
		const struct sk_optdef *d = &optab[i];
		const char *reason = NULL;
		struct sk_opt *o;

		if (!applies(d, proto, family) || !applies_state(d, state))
			continue;
		if (opt_get(fd, d, v) < 0)
			goto out;
		if (!v->present || same(v, &ref->v[i]))
			continue;
		if (d->flags & (O_REFUSE | O_IFINDEX))
			reason = d->why;
		else if (d->opt == SO_GET_FILTER && d->level == SOL_SOCKET &&
		    v->ival == -1)
			reason = "an eBPF socket filter (SO_ATTACH_BPF) cannot "
			    "be read back";
		else if (d->opt == SO_TIMESTAMPING && d->level == SOL_SOCKET &&
		    (v->ival & SOF_TIMESTAMPING_BIND_PHC))
			reason = "SO_TIMESTAMPING bound to a PTP clock";
		if (reason != NULL) {
			refused = 1;
			if (why != NULL && off < whylen)
				off += (size_t)snprintf(why + off, whylen - off,
				    "%s%s", off ? "; " : "", reason);
			continue;
		}
		if (st == NULL)
			continue;
		if (st->nopts == SK_OPTS_MAX) {
			sk_log(LOG_WARNING, "sk_opts_read: more than %d "
			    "options set", SK_OPTS_MAX);
			goto out;
		}
		o = &st->opts[st->nopts];
		memset(o, 0, sizeof(*o));
		o->id = (uint16_t)i;
		o->ival = v->ival;
		if (d->kind == SK_OK_STRING || d->kind == SK_OK_BYTES) {
			o->ival = 0;
			o->len = v->len;
			if (v->len > 0 && (o->data = malloc(v->len)) == NULL) {
				sk_log_errno("sk_opts_read: malloc");
				goto out;
			}
			if (v->len > 0)
				memcpy(o->data, v->buf, v->len);
		}
		st->nopts++;
	}
	rc = refused;
out:
	free(v);
	return rc;
}

/* Set one carried option. */
static int
opt_set(int fd, const struct sk_optdef *d, const struct sk_opt *o)
{
	union {
		int		 i;
		uint32_t	 u32;
		struct timeval	 tv;
		struct linger	 lg;
		struct sock_fprog fp;
	} u;
	const void *val = &u;
	socklen_t len = sizeof(u.i);

	memset(&u, 0, sizeof(u));
	switch (d->kind) {
	case SK_OK_BOOL:
	case SK_OK_INT:
		if (d->max > INT_MAX)
			u.u32 = (uint32_t)o->ival;
		else
			u.i = (int)o->ival;
		break;
	case SK_OK_TIMEVAL:
		u.tv.tv_sec = (time_t)(o->ival / 1000000);
		u.tv.tv_usec = (suseconds_t)(o->ival % 1000000);
		len = sizeof(u.tv);
		break;
	case SK_OK_LINGER:
		u.lg.l_onoff = o->ival >= 0;
		u.lg.l_linger = o->ival >= 0 ? (int)o->ival : 0;
		len = sizeof(u.lg);
		break;
	case SK_OK_STRING:
	case SK_OK_BYTES:
		if (d->opt == SO_GET_FILTER && d->level == SOL_SOCKET) {
			u.fp.len = (unsigned short)(o->len /
			    sizeof(struct sock_filter));
			u.fp.filter = (struct sock_filter *)o->data;
			if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &u.fp,
			    sizeof(u.fp)) < 0) {
				sk_log_errno("sk_opts_apply: %s", d->name);
				return -1;
			}
			return 0;
		}
		val = o->data;
		len = o->len;
		break;
	}
	if (setsockopt(fd, d->level, d->opt, val, len) < 0) {
		sk_log_errno("sk_opts_apply: %s = %lld", d->name,
		    (long long)o->ival);
		return -1;
	}
	return 0;
}

int
sk_opts_apply(int fd, const struct sk_state *st, int late)
{
	uint32_t i;

	for (i = 0; i < st->nopts; i++) {
		const struct sk_opt *o = &st->opts[i];

		if (o->id >= NOPTS)
			return -1;
		if (((optab[o->id].flags & O_LATE) != 0) != (late != 0))
			continue;
		if (opt_set(fd, &optab[o->id], o) < 0)
			return -1;
	}
	return 0;
}

/* The carried value of an option by name, or dflt. */
int64_t
sk_opts_value(const struct sk_state *st, const char *name, int64_t dflt)
{
	uint32_t i;

	for (i = 0; i < st->nopts; i++)
		if (st->opts[i].id < NOPTS &&
		    strcmp(optab[st->opts[i].id].name, name) == 0)
			return st->opts[i].ival;
	return dflt;
}

/* A copy of st's options alone (for the ones sk_resume() applies). */
struct sk_state *
sk_opts_copy(const struct sk_state *st)
{
	struct sk_state *c;
	uint32_t i;

	if ((c = sk_state_new()) == NULL) {
		sk_log_errno("sk_opts_copy: sk_state_new");
		return NULL;
	}
	for (i = 0; i < st->nopts && i < SK_OPTS_MAX; i++) {
		struct sk_opt *o = &c->opts[c->nopts];

		*o = st->opts[i];
		o->data = NULL;
		if (o->len > 0 && (o->data = malloc(o->len)) == NULL) {
			sk_log_errno("sk_opts_copy: malloc");
			sk_state_free(c);
			return NULL;
		}
		if (o->len > 0)
			memcpy(o->data, st->opts[i].data, o->len);
		c->nopts++;
	}
	return c;
}
