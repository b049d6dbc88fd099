/* SPDX-License-Identifier: ISC */
/*
 * engine-floor: the socket state engine against the floor of the TCP
 * repair API, on one machine, in one run.
 *
 * N connections over loopback, in a network namespace of the program's
 * own, idle or with Q bytes written each way and left unread (so Q bytes
 * wait in the receive queue of each end; the send queues are empty, all
 * acknowledged).  Their server ends are moved on the spot in two ways:
 *
 *  floor	the repair syscalls a dump and a restore cannot do without,
 *		written out here, with no engine, no records and no
 *		allocation (the bytes go to buffers made before the clock
 *		runs).  Dump: TCP_REPAIR on; for each queue TCP_REPAIR_QUEUE,
 *		TCP_QUEUE_SEQ and a MSG_PEEK read (its length comes from
 *		the read); TCP_INFO (the negotiated options, which
 *		TCP_REPAIR_OPTIONS cannot read back), TCP_MAXSEG,
 *		TCP_REPAIR_WINDOW, TCP_TIMESTAMP (without it the peer's PAWS
 *		check drops what the copy sends), getsockname, getpeername.
 *		Restore, on a new socket: TCP_REPAIR on, TCP_QUEUE_SEQ of both
 *		queues, bind, connect, TCP_REPAIR_OPTIONS, TCP_TIMESTAMP, the
 *		queues written, TCP_REPAIR_WINDOW, TCP_REPAIR off.  No buffer
 *		sizes and no socket options are carried;
 *  engine	sk_pause + sk_save, sk_json_encode + json_dumps (the
 *		record's text, as on the wire), sk_json_parse, sk_restore +
 *		sk_resume.  sk_check alone is timed too, outside the total.
 *
 * Closing the original (in repair mode, silently) before its copy binds
 * is in neither path's time.  Each run makes fresh connections, times
 * each phase over all N sockets with CLOCK_MONOTONIC, then checks every
 * moved connection: the restored end reads the peer's bytes exactly, the
 * peer reads its own, and a byte goes each way.  Floor and engine runs
 * alternate; a first run of each warms up and is not counted.  The table
 * gives the median of the runs in microseconds per socket (a total is
 * the median of the runs' totals), and the ratio of the engine's total
 * to the floor's.  It passes no judgement on the ratio: it exits 1 only
 * when a moved connection misbehaves.
 *
 *   engine-floor [-6] [-p both|floor|engine] [-q BYTES] [-r RUNS] [N ...]
 *
 * N defaults to 1 100 1000; each N gets a row idle and a row with 64 KiB
 * each way, or only the -q row.  Needs root: CAP_SYS_ADMIN for the
 * namespace, CAP_NET_ADMIN for TCP_REPAIR.
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <err.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "sk_engine.h"
#include "sk_json.h"

#ifndef TCP_REPAIR_WINDOW
#define TCP_REPAIR_WINDOW	29
#endif
#ifndef TCPOPT_MSS
#define TCPOPT_MSS		2
#define TCPOPT_WINDOW		3
#define TCPOPT_SACK_PERM	4
#define TCPOPT_TIMESTAMP	8
#endif

#define PORT		7400
#define RUNS_MAX	101
#define NS_MAX		16
#define N_MAX		100000
#define Q_DEFAULT	(64u * 1024)
#define Q_MAX		(16u * 1024 * 1024)
#define WAIT_MS		5000

enum path { PATH_BOTH, PATH_FLOOR, PATH_ENGINE };

/* The phases timed; T_CHECK (sk_check alone) is not in the total. */
enum {
	T_FL_DUMP, T_FL_RESTORE,
	T_CHECK, T_PAUSE, T_SAVE, T_ENCODE, T_DECODE, T_RESTORE, T_RESUME,
	T_FL_TOTAL, T_EN_TOTAL,
	T__MAX
};

struct pair {
	int	 cfd;		/* the peer, which stays */
	int	 sfd;		/* the end that moves */
};

/* What the floor keeps of a socket. */
struct fl_sock {
	struct sockaddr_storage	 local, remote;
	socklen_t		 llen, rlen;
	uint32_t		 snd_end, rcv_end;	/* TCP_QUEUE_SEQ */
	uint32_t		 sndq_len, rcvq_len;
	uint8_t			*sndq, *rcvq;		/* cap bytes each */
	uint8_t			 options, snd_wscale, rcv_wscale;
	int			 mss, tsval;
	struct tcp_repair_window win;
};

/* One run's connections and what each path keeps of them. */
struct work {
	struct pair		*p;
	size_t			 n;
	int			 family;
	int			 bufsz;
	uint32_t		 q;
	uint32_t		 cap;
	uint8_t			*arena;
	struct fl_sock		*f;
	struct sk_handle	**h;
	struct sk_state		**st;
	char			**text;
	size_t			*len;
	struct sk_record	*rec;
};

struct row {
	size_t		 n;
	uint32_t	 q;
	double		 med[T__MAX];
};

struct bench {
	int		 family;
	int		 bufsz;		/* SO_SNDBUF, SO_RCVBUF of both ends */
	int		 runs;
	enum path	 path;
	int		 lfd;
	double		 t[RUNS_MAX][T__MAX];	/* us per socket */
};

typedef void (*step_fn)(struct work *, size_t);

static void
usage(void)
{
	fprintf(stderr, "usage: engine-floor [-6] [-p both|floor|engine] "
	    "[-q BYTES] [-r RUNS] [N ...]\n");
	exit(2);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One step over every socket of the run: microseconds per socket. */
static double
phase(struct work *w, step_fn fn)
{
	double t0;
	size_t i;

	t0 = now_us();
	for (i = 0; i < w->n; i++)
		fn(w, i);
	return (now_us() - t0) / (double)w->n;
}

static uint8_t
pat(int stream, uint32_t i)
{
	uint32_t x = i * 2654435761u + (uint32_t)stream * 40503u;

	return (uint8_t)(x >> 13 ^ x);
}

/* ---- sockets and the namespace ---- */

static void
tcp_set(int fd, int opt, int val, const char *name)
{
	if (setsockopt(fd, IPPROTO_TCP, opt, &val, sizeof(val)) < 0)
		err(1, "%s %d", name, val);
}

static int
tcp_get(int fd, int opt, const char *name)
{
	socklen_t len = sizeof(int);
	int val = 0;

	if (getsockopt(fd, IPPROTO_TCP, opt, &val, &len) < 0)
		err(1, "%s", name);
	return val;
}

static int
ioctl_int(int fd, unsigned long req)
{
	int v = 0;

	if (ioctl(fd, req, &v) < 0)
		err(1, "ioctl %lu", req);
	return v;
}

/* A network namespace of our own, with lo up: the host's is untouched. */
static void
netns_enter(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET) < 0)
		err(1, "unshare(CLONE_NEWNET) (root needed)");
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		err(1, "socket");
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name) - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		err(1, "SIOCGIFFLAGS lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		err(1, "SIOCSIFFLAGS lo");
	close(fd);
}

/* Two descriptors a connection, and a few for the engine's checks. */
static void
fd_limit(size_t n)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)(2 * n + 64);

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		err(1, "getrlimit");
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		err(1, "setrlimit RLIMIT_NOFILE %llu", (unsigned long long)want);
}

static socklen_t
lo_addr(int family, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons(PORT);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s4->sin_port = htons(PORT);
	return sizeof(*s4);
}

/* Buffers that hold the queued bytes with room to spare, both ends. */
static void
set_bufs(int fd, int size)
{
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0)
		err(1, "SO_SNDBUF/SO_RCVBUF");
}

static int
listener(int family, int bufsz)
{
	struct sockaddr_storage ss;
	socklen_t len = lo_addr(family, &ss);
	int fd;

	if ((fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		err(1, "socket");
	set_bufs(fd, bufsz);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(fd, SOMAXCONN) < 0)
		err(1, "listener");
	return fd;
}

static void
fill(int fd, int stream, uint32_t q)
{
	uint8_t buf[4096];
	uint32_t off = 0, i, k;
	ssize_t n;

	while (off < q) {
		k = q - off < sizeof(buf) ? q - off : sizeof(buf);
		for (i = 0; i < k; i++)
			buf[i] = pat(stream, off + i);
		n = send(fd, buf, k, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			err(1, "fill: %u of %u bytes written", off, q);
		off += (uint32_t)n;
	}
}

/* Every byte written is in the receiver's queue and acknowledged. */
static int
settled(const struct pair *p, uint32_t q)
{
	return (uint32_t)ioctl_int(p->sfd, SIOCINQ) == q &&
	    (uint32_t)ioctl_int(p->cfd, SIOCINQ) == q &&
	    ioctl_int(p->sfd, SIOCOUTQ) == 0 &&
	    ioctl_int(p->cfd, SIOCOUTQ) == 0;
}

static void
pairs_settle(struct work *w)
{
	size_t i = 0;
	int ms;

	for (ms = 0; ms < WAIT_MS; ms++) {
		while (i < w->n && settled(&w->p[i], w->q))
			i++;
		if (i == w->n)
			return;
		usleep(1000);
	}
	errx(1, "connection %zu: queues not settled after %d ms", i, WAIT_MS);
}

static void
pairs_open(struct work *w, int lfd)
{
	struct sockaddr_storage ss;
	socklen_t len = lo_addr(w->family, &ss);
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct pair *p = &w->p[i];

		p->cfd = socket(w->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (p->cfd < 0)
			err(1, "socket");
		set_bufs(p->cfd, w->bufsz);
		if (connect(p->cfd, (struct sockaddr *)&ss, len) < 0)
			err(1, "connect %zu", i);
		if ((p->sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			err(1, "accept %zu", i);
		fill(p->cfd, 1, w->q);
		fill(p->sfd, 2, w->q);
	}
	pairs_settle(w);
}

/* Read exactly q bytes of stream from fd and compare them. */
static void
read_check(int fd, int stream, uint32_t q, const char *who, size_t i)
{
	uint8_t buf[65536];
	struct pollfd pfd = { fd, POLLIN, 0 };
	uint32_t got = 0, k;
	ssize_t n;

	while (got < q) {
		if (poll(&pfd, 1, WAIT_MS) != 1)
			errx(1, "%s %zu: %u of %u bytes in %d ms", who, i, got,
			    q, WAIT_MS);
		n = recv(fd, buf, q - got < sizeof(buf) ? q - got :
		    sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			err(1, "%s %zu: read after %u of %u bytes", who, i,
			    got, q);
		for (k = 0; k < (uint32_t)n; k++)
			if (buf[k] != pat(stream, got + k))
				errx(1, "%s %zu: byte %u differs", who, i,
				    got + k);
		got += (uint32_t)n;
	}
}

static void
ping(int from, int to, const char *who, size_t i)
{
	uint8_t c = pat(3, 0);

	if (send(from, &c, 1, MSG_NOSIGNAL) != 1)
		err(1, "%s %zu: send", who, i);
	read_check(to, 3, 1, who, i);
}

/* The moved connections carry on: queued bytes, then a byte each way. */
static void
pairs_check(struct work *w, const char *who)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct pair *p = &w->p[i];

		read_check(p->sfd, 1, w->q, who, i);
		read_check(p->cfd, 2, w->q, who, i);
		ping(p->sfd, p->cfd, who, i);
		ping(p->cfd, p->sfd, who, i);
	}
}

/* Quietly: the moved end in repair mode, the peer with a reset. */
static void
pairs_close(struct work *w)
{
	struct linger lg = { 1, 0 };
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (w->p[i].sfd >= 0) {
			tcp_set(w->p[i].sfd, TCP_REPAIR, 1, "TCP_REPAIR");
			close(w->p[i].sfd);
		}
		setsockopt(w->p[i].cfd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg));
		close(w->p[i].cfd);
	}
}

/* The original end goes silently (repair mode) before its copy binds. */
static void
close_sfd(struct work *w, size_t i)
{
	close(w->p[i].sfd);
	w->p[i].sfd = -1;
}

/* ---- the floor ---- */

/* Select a queue, read where it ends, peek its bytes. */
static void
fl_queue_dump(int fd, int queue, uint32_t *end, uint8_t *buf,
    uint32_t cap, uint32_t *len)
{
	ssize_t n;

	tcp_set(fd, TCP_REPAIR_QUEUE, queue, "TCP_REPAIR_QUEUE");
	*end = (uint32_t)tcp_get(fd, TCP_QUEUE_SEQ, "TCP_QUEUE_SEQ");
	n = recv(fd, buf, cap, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
		err(1, "recv MSG_PEEK queue %d", queue);
	if (n < 0)
		n = 0;
	if ((uint32_t)n == cap)
		errx(1, "queue %d holds %u bytes or more", queue, cap);
	*len = (uint32_t)n;
}

static void
fl_dump(struct work *w, size_t i)
{
	struct fl_sock *f = &w->f[i];
	struct tcp_info ti;
	socklen_t len;
	int fd = w->p[i].sfd;

	tcp_set(fd, TCP_REPAIR, 1, "TCP_REPAIR");
	fl_queue_dump(fd, TCP_RECV_QUEUE, &f->rcv_end, f->rcvq, w->cap,
	    &f->rcvq_len);
	fl_queue_dump(fd, TCP_SEND_QUEUE, &f->snd_end, f->sndq, w->cap,
	    &f->sndq_len);
	/* the negotiated options: TCP_REPAIR_OPTIONS cannot be read */
	len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		err(1, "TCP_INFO");
	f->options = ti.tcpi_options;
	f->snd_wscale = ti.tcpi_snd_wscale;
	f->rcv_wscale = ti.tcpi_rcv_wscale;
	f->mss = tcp_get(fd, TCP_MAXSEG, "TCP_MAXSEG");
	len = sizeof(f->win);
	if (getsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &f->win, &len) < 0)
		err(1, "TCP_REPAIR_WINDOW");
	/* without it the peer's PAWS check drops every segment */
	f->tsval = tcp_get(fd, TCP_TIMESTAMP, "TCP_TIMESTAMP");
	f->llen = sizeof(f->local);
	f->rlen = sizeof(f->remote);
	if (getsockname(fd, (struct sockaddr *)&f->local, &f->llen) < 0 ||
	    getpeername(fd, (struct sockaddr *)&f->remote, &f->rlen) < 0)
		err(1, "getsockname/getpeername");
}

static void
fl_options(int fd, const struct fl_sock *f)
{
	struct tcp_repair_opt o[4];
	int n = 0;

	o[n].opt_code = TCPOPT_MSS;
	o[n++].opt_val = (uint32_t)f->mss;
	if (f->options & TCPI_OPT_WSCALE) {
		o[n].opt_code = TCPOPT_WINDOW;
		o[n++].opt_val = f->snd_wscale | (uint32_t)f->rcv_wscale << 16;
	}
	if (f->options & TCPI_OPT_SACK) {
		o[n].opt_code = TCPOPT_SACK_PERM;
		o[n++].opt_val = 0;
	}
	if (f->options & TCPI_OPT_TIMESTAMPS) {
		o[n].opt_code = TCPOPT_TIMESTAMP;
		o[n++].opt_val = 0;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_OPTIONS, o,
	    (socklen_t)(n * sizeof(o[0]))) < 0)
		err(1, "TCP_REPAIR_OPTIONS");
}

/* Queue len bytes on the selected queue (repair mode). */
static void
fl_queue_fill(int fd, const uint8_t *buf, uint32_t len)
{
	uint32_t off = 0;
	ssize_t n;

	while (off < len) {
		n = send(fd, buf + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			err(1, "queue fill: %u of %u bytes", off, len);
		off += (uint32_t)n;
	}
}

static void
fl_restore(struct work *w, size_t i)
{
	const struct fl_sock *f = &w->f[i];
	int fd;

	if ((fd = socket(w->family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		err(1, "socket");
	tcp_set(fd, TCP_REPAIR, 1, "TCP_REPAIR");
	tcp_set(fd, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE, "TCP_REPAIR_QUEUE");
	tcp_set(fd, TCP_QUEUE_SEQ, (int)(f->snd_end - f->sndq_len),
	    "TCP_QUEUE_SEQ");
	tcp_set(fd, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE, "TCP_REPAIR_QUEUE");
	tcp_set(fd, TCP_QUEUE_SEQ, (int)(f->rcv_end - f->rcvq_len),
	    "TCP_QUEUE_SEQ");
	if (bind(fd, (const struct sockaddr *)&f->local, f->llen) < 0 ||
	    connect(fd, (const struct sockaddr *)&f->remote, f->rlen) < 0)
		err(1, "bind/connect in repair");
	fl_options(fd, f);
	tcp_set(fd, TCP_TIMESTAMP, f->tsval, "TCP_TIMESTAMP");
	/* the receive queue is still the one selected */
	fl_queue_fill(fd, f->rcvq, f->rcvq_len);
	if (f->sndq_len > 0) {
		tcp_set(fd, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE,
		    "TCP_REPAIR_QUEUE");
		fl_queue_fill(fd, f->sndq, f->sndq_len);
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &f->win,
	    sizeof(f->win)) < 0)
		err(1, "TCP_REPAIR_WINDOW");
	tcp_set(fd, TCP_REPAIR, 0, "TCP_REPAIR");
	w->p[i].sfd = fd;
}

/* ---- the engine ---- */

static void
en_check(struct work *w, size_t i)
{
	char why[512];

	if (sk_check(w->p[i].sfd, why, sizeof(why)) < 0)
		errx(1, "sk_check %zu: %s", i, why);
}

static void
en_pause(struct work *w, size_t i)
{
	if ((w->h[i] = sk_pause(w->p[i].sfd)) == NULL)
		errx(1, "sk_pause %zu", i);
}

static void
en_save(struct work *w, size_t i)
{
	if (sk_save(w->h[i], &w->st[i]) < 0)
		errx(1, "sk_save %zu", i);
}

static void
en_release(struct work *w, size_t i)
{
	if (sk_release(w->h[i]) < 0)
		errx(1, "sk_release %zu", i);
	w->h[i] = NULL;
	w->p[i].sfd = -1;
}

/* The record's text, as it goes on the wire, and its length. */
static void
en_encode(struct work *w, size_t i)
{
	json_t *j;

	if ((j = sk_json_encode(w->st[i])) == NULL)
		errx(1, "sk_json_encode %zu", i);
	w->text[i] = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (w->text[i] == NULL)
		errx(1, "json_dumps %zu", i);
	w->len[i] = strlen(w->text[i]);
}

static void
en_decode(struct work *w, size_t i)
{
	char why[256];

	if (sk_json_parse(w->text[i], w->len[i], NULL, &w->rec[i], why,
	    sizeof(why)) < 0)
		errx(1, "sk_json_parse %zu: %s", i, why);
}

static void
en_restore(struct work *w, size_t i)
{
	if ((w->h[i] = sk_restore(w->rec[i].u.sock)) == NULL)
		errx(1, "sk_restore %zu", i);
}

static void
en_resume(struct work *w, size_t i)
{
	if (sk_resume(w->h[i], 0) < 0)
		errx(1, "sk_resume %zu", i);
	w->p[i].sfd = sk_detach(w->h[i]);
	w->h[i] = NULL;
}

/* What no phase is timed on: freeing the products between phases. */
static void
en_free_states(struct work *w, size_t i)
{
	sk_state_free(w->st[i]);
	w->st[i] = NULL;
}

static void
en_free_texts(struct work *w, size_t i)
{
	free(w->text[i]);
	w->text[i] = NULL;
}

static void
en_free_records(struct work *w, size_t i)
{
	sk_record_clear(&w->rec[i]);
}

/* ---- runs ---- */

static void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n, size)) == NULL)
		err(1, "calloc");
	return p;
}

static void
work_init(struct work *w, const struct bench *b, size_t n, uint32_t q)
{
	memset(w, 0, sizeof(*w));
	w->n = n;
	w->q = q;
	w->family = b->family;
	w->bufsz = b->bufsz;
	w->p = xcalloc(n, sizeof(*w->p));
}

/* The floor's queue buffers, mapped (a byte a page) before the clock
 * runs: the floor allocates nothing. */
static void
floor_init(struct work *w)
{
	size_t i, size;

	w->cap = w->q + 4096;
	w->f = xcalloc(w->n, sizeof(*w->f));
	size = w->n * 2 * (size_t)w->cap;
	w->arena = xcalloc(1, size);
	for (i = 0; i < size; i += 4096)
		w->arena[i] = 0xa5;
	for (i = 0; i < w->n; i++) {
		w->f[i].rcvq = w->arena + 2 * i * w->cap;
		w->f[i].sndq = w->f[i].rcvq + w->cap;
	}
}

static void
engine_init(struct work *w)
{
	w->h = xcalloc(w->n, sizeof(*w->h));
	w->st = xcalloc(w->n, sizeof(*w->st));
	w->text = xcalloc(w->n, sizeof(*w->text));
	w->len = xcalloc(w->n, sizeof(*w->len));
	w->rec = xcalloc(w->n, sizeof(*w->rec));
}

static void
work_free(struct work *w)
{
	free(w->p);
	free(w->f);
	free(w->arena);
	free(w->h);
	free(w->st);
	free(w->text);
	free(w->len);
	free(w->rec);
}

static void
floor_run(struct bench *b, size_t n, uint32_t q, double *t)
{
	struct work w;

	work_init(&w, b, n, q);
	floor_init(&w);
	pairs_open(&w, b->lfd);
	t[T_FL_DUMP] = phase(&w, fl_dump);
	phase(&w, close_sfd);
	t[T_FL_RESTORE] = phase(&w, fl_restore);
	t[T_FL_TOTAL] = t[T_FL_DUMP] + t[T_FL_RESTORE];
	pairs_check(&w, "floor");
	pairs_close(&w);
	work_free(&w);
}

static void
engine_run(struct bench *b, size_t n, uint32_t q, double *t)
{
	struct work w;

	work_init(&w, b, n, q);
	engine_init(&w);
	pairs_open(&w, b->lfd);
	t[T_CHECK] = phase(&w, en_check);
	t[T_PAUSE] = phase(&w, en_pause);
	t[T_SAVE] = phase(&w, en_save);
	phase(&w, en_release);
	t[T_ENCODE] = phase(&w, en_encode);
	phase(&w, en_free_states);
	t[T_DECODE] = phase(&w, en_decode);
	phase(&w, en_free_texts);
	t[T_RESTORE] = phase(&w, en_restore);
	t[T_RESUME] = phase(&w, en_resume);
	phase(&w, en_free_records);
	t[T_EN_TOTAL] = t[T_PAUSE] + t[T_SAVE] + t[T_ENCODE] + t[T_DECODE] +
	    t[T_RESTORE] + t[T_RESUME];
	pairs_check(&w, "engine");
	pairs_close(&w);
	work_free(&w);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(struct bench *b, int col)
{
	double v[RUNS_MAX];
	int r;

	for (r = 0; r < b->runs; r++)
		v[r] = b->t[r][col];
	qsort(v, (size_t)b->runs, sizeof(v[0]), cmp_double);
	if (b->runs % 2)
		return v[b->runs / 2];
	return (v[b->runs / 2 - 1] + v[b->runs / 2]) / 2;
}

/* Runs alternate floor and engine; the first of each warms up. */
static void
bench_row(struct bench *b, struct row *row)
{
	double warm[T__MAX];
	int r, c;

	memset(b->t, 0, sizeof(b->t));
	for (r = -1; r < b->runs; r++) {
		double *t = r < 0 ? warm : b->t[r];

		if (b->path != PATH_ENGINE)
			floor_run(b, row->n, row->q, t);
		if (b->path != PATH_FLOOR)
			engine_run(b, row->n, row->q, t);
	}
	for (c = 0; c < T__MAX; c++)
		row->med[c] = median(b, c);
}

/* ---- output ---- */

static void
print_head(const struct bench *b)
{
	struct utsname u;

	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	printf("# engine-floor: %s %s, %s loopback in a private netns, "
	    "median of %d runs, us per socket\n", u.sysname, u.release,
	    b->family == AF_INET6 ? "inet6" : "inet", b->runs);
	printf("# floor: bare repair syscalls; engine: sk_pause+sk_save, "
	    "encode (sk_json_encode+json_dumps), decode (sk_json_parse), "
	    "sk_restore+sk_resume\n");
	printf("%-6s %-7s %8s %10s %8s %8s %9s %9s %10s %8s %6s\n", "N",
	    "queued", "fl_dump", "fl_restore", "fl_total", "en_dump",
	    "en_encode", "en_decode", "en_restore", "en_total", "ratio");
	fflush(stdout);
}

static void
print_row(const struct bench *b, const struct row *r)
{
	const double *m = r->med;

	printf("%-6zu %-7u", r->n, r->q);
	if (b->path != PATH_ENGINE)
		printf(" %8.1f %10.1f %8.1f", m[T_FL_DUMP], m[T_FL_RESTORE],
		    m[T_FL_TOTAL]);
	else
		printf(" %8s %10s %8s", "-", "-", "-");
	if (b->path != PATH_FLOOR)
		printf(" %8.1f %9.1f %9.1f %10.1f %8.1f",
		    m[T_PAUSE] + m[T_SAVE], m[T_ENCODE], m[T_DECODE],
		    m[T_RESTORE] + m[T_RESUME], m[T_EN_TOTAL]);
	else
		printf(" %8s %9s %9s %10s %8s", "-", "-", "-", "-", "-");
	if (b->path == PATH_BOTH && m[T_FL_TOTAL] > 0)
		printf(" %6.2f\n", m[T_EN_TOTAL] / m[T_FL_TOTAL]);
	else
		printf(" %6s\n", "-");
	fflush(stdout);
}

/* The engine's own phases; check is sk_check alone, which sk_pause
 * runs again and which is not in en_dump. */
static void
print_detail(const struct row *rows, size_t nrows)
{
	size_t i;

	printf("\n# engine phases, us per socket (check: sk_check alone, "
	    "outside en_dump)\n");
	printf("%-6s %-7s %8s %8s %8s %8s %8s\n", "N", "queued", "check",
	    "pause", "save", "restore", "resume");
	for (i = 0; i < nrows; i++) {
		const double *m = rows[i].med;

		printf("%-6zu %-7u %8.1f %8.1f %8.1f %8.1f %8.1f\n",
		    rows[i].n, rows[i].q, m[T_CHECK], m[T_PAUSE], m[T_SAVE],
		    m[T_RESTORE], m[T_RESUME]);
	}
}

/* ---- main ---- */

static long
num(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < min || v > max)
		errx(2, "%s: a number from %ld to %ld expected", s, min, max);
	return v;
}

static enum path
path_arg(const char *s)
{
	if (strcmp(s, "both") == 0)
		return PATH_BOTH;
	if (strcmp(s, "floor") == 0)
		return PATH_FLOOR;
	if (strcmp(s, "engine") == 0)
		return PATH_ENGINE;
	usage();
	return PATH_BOTH;
}

/* The rows: each N idle and with Q_DEFAULT bytes, or with -q's alone. */
static size_t
args(int argc, char *argv[], struct bench *b, struct row *rows)
{
	size_t ns[NS_MAX] = { 1, 100, 1000 }, nn = 3, nrows = 0, i;
	uint32_t qs[2] = { 0, Q_DEFAULT }, nq = 2, j;
	int ch;

	b->family = AF_INET;
	b->runs = 5;
	while ((ch = getopt(argc, argv, "6p:q:r:")) != -1) {
		switch (ch) {
		case '6':
			b->family = AF_INET6;
			break;
		case 'p':
			b->path = path_arg(optarg);
			break;
		case 'q':
			qs[0] = (uint32_t)num(optarg, 0, Q_MAX);
			nq = 1;
			break;
		case 'r':
			b->runs = (int)num(optarg, 1, RUNS_MAX);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > NS_MAX)
		usage();
	if (argc > 0)
		nn = (size_t)argc;
	for (i = 0; i < (size_t)argc; i++)
		ns[i] = (size_t)num(argv[i], 1, N_MAX);
	/* the same buffers for every row: room for the largest queue */
	b->bufsz = (int)(2 * qs[nq - 1] + 128 * 1024);
	for (i = 0; i < nn; i++)
		for (j = 0; j < nq; j++) {
			rows[nrows].n = ns[i];
			rows[nrows++].q = qs[j];
		}
	return nrows;
}

int
main(int argc, char *argv[])
{
	static struct bench b;
	struct row rows[2 * NS_MAX];
	size_t nrows, nmax = 0, i;

	nrows = args(argc, argv, &b, rows);
	for (i = 0; i < nrows; i++)
		nmax = rows[i].n > nmax ? rows[i].n : nmax;
	netns_enter();
	fd_limit(nmax);
	b.lfd = listener(b.family, b.bufsz);
	print_head(&b);
	for (i = 0; i < nrows; i++) {
		bench_row(&b, &rows[i]);
		print_row(&b, &rows[i]);
	}
	if (b.path != PATH_FLOOR)
		print_detail(rows, nrows);
	close(b.lfd);
	return 0;
}
