/* SPDX-License-Identifier: ISC */
/*
 * streamd: the test service.  Serves verified streams (pattern.h) on
 * every connection: writes the pattern at a set rate and checks each byte
 * it reads.  It adopts sockets handed over by migrd through the
 * socket-activation convention (LISTEN_PID, LISTEN_FDS from fd 3): a
 * listening socket is served, a connected one carries on where the old
 * task left it, since the pattern depends on sequence numbers only.
 *
 *   streamd -l ADDR:PORT[,rate=R][,linger=S][,shut=S]... [-r RATE] [-s FILE]
 *           [-t TICK_MS]
 *
 * It writes every -t milliseconds (default 50), the first time as soon as
 * it has its sockets: a restarted streamd does not wait a tick to write.
 *
 * Each listener has a mode, and connections take the mode of the listener
 * whose port they were accepted on (adopted ones too):
 *   rate=R     bytes/s written per connection (default -r, 8192; 0: idle)
 *   linger=S   after the client shuts its side, go on writing S seconds,
 *              then close (default 2)
 *   shut=S     shut our own side S seconds after accepting (or adopting),
 *              and go on reading until the client closes
 *   pause=A:B  read nothing between the instants A and B (seconds since
 *              the epoch, so a restarted streamd keeps the window), while
 *              writing on: a service that stalls, its queues filling
 *   buf=N      send and receive buffers of N bytes (forced when root)
 *   reply=N    write N bytes at once when a connection comes, then close
 *              it: the kernel delivers them from an orphan
 * A -l whose port an adopted listener already has configures that one
 * instead of binding again, so a restarted streamd takes the same command
 * line as the original.
 *
 * A connection that reads a wrong byte is reset (SO_LINGER 0), so the
 * client counts it.  SIGUSR1 writes the counters to FILE (or stderr);
 * SIGUSR2 ends every pause window and stops writing on the connections
 * that had one (their queues drain and are checked: flow_drain());
 * SIGTERM ends.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "addrport.h"
#include "clock.h"
#include "flow.h"
#include "log.h"

#define MAX_FLOWS	16384
#define MAX_LISTENERS	16
#define ACCEPT_BATCH	64
#define LISTEN_BACKLOG	4096	/* the kernel caps it at somaxconn */

struct mode {
	uint64_t	rate;
	double		linger;
	double		shut;		/* 0: never */
	double		pause_from, pause_until;	/* 0: no pause */
	int		buf;		/* 0: the kernel's */
	uint64_t	reply;		/* 0: a stream, not a reply */
};

struct listener {
	int		fd;
	int		port;
	struct mode	mode;
	struct event	*ev;
};

struct sflow {
	struct flow	*f;
	struct mode	 mode;
	double		 shut_at;	/* 0: not planned */
	double		 close_at;	/* 0: not planned */
};

static struct event_base	*base;
static struct sflow		 flows[MAX_FLOWS];
static int			 nflows;
static struct listener		 listeners[MAX_LISTENERS];
static int			 nlisteners;
static struct flow_stats	 stats;
static struct mode		 default_mode = { 8192, 2.0, 0, 0, 0, 0, 0 };
static uint64_t			 accepted, adopted, closed;
static const char		*statsfile;
static long			 tick_ms = 50;	/* -t */

static struct listener *
listener_by_port(int port)
{
	int i;

	for (i = 0; i < nlisteners; i++)
		if (listeners[i].port == port)
			return &listeners[i];
	return NULL;
}

static struct sflow *
find(struct flow *f)
{
	int i;

	for (i = 0; i < nflows; i++)
		if (flows[i].f == f)
			return &flows[i];
	return NULL;
}

static void
drop(struct sflow *sf)
{
	flow_free(sf->f);
	*sf = flows[--nflows];
}

static void
on_end(struct flow *f, enum flow_end why, void *arg)
{
	struct sflow *sf = find(f);

	(void)arg;
	if (sf == NULL)
		return;
	if (why == FLOW_EOF) {
		if (flow_write_closed(f)) {	/* both sides done */
			closed++;
			drop(sf);
		} else if (sf->close_at == 0) {
			/* the client half-closed: write a while longer */
			sf->close_at = flow_now() + sf->mode.linger;
		}
		return;
	}
	if (why == FLOW_MISMATCH) {
		struct linger rst = { 1, 0 };

		setsockopt(flow_fd(f), SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
	}
	drop(sf);
}

static void
add_flow(int fd)
{
	struct listener *l = listener_by_port(local_port(fd));
	struct sflow *sf;

	if (nflows == MAX_FLOWS) {
		log_warnx("too many connections");
		close(fd);
		return;
	}
	sf = &flows[nflows];
	memset(sf, 0, sizeof(*sf));
	sf->mode = l ? l->mode : default_mode;
	sf->f = flow_new(base, fd, 1, sf->mode.rate, &stats, on_end, NULL);
	if (sf->f == NULL)
		return;
	if (sf->mode.shut > 0)
		sf->shut_at = flow_now() + sf->mode.shut;
	if (sf->mode.pause_until > 0)
		flow_set_pause(sf->f, sf->mode.pause_from, sf->mode.pause_until);
	if (sf->mode.reply > 0) {
		uint64_t n = flow_write_now(sf->f, sf->mode.reply);

		if (n < sf->mode.reply)
			log_warnx("reply: %llu of %llu bytes fit",
			    (unsigned long long)n,
			    (unsigned long long)sf->mode.reply);
		sf->close_at = flow_now();	/* closed at the next tick */
	}
	nflows++;
}

static void
on_accept(evutil_socket_t lfd, short what, void *arg)
{
	int fd, i;

	(void)what;
	(void)arg;
	/* a few at a time: one a turn of a loop busy with 10,000 flows let
	 * the backlog overflow, and the handshakes it dropped ended in
	 * resets once their SYN-ACKs ran out */
	for (i = 0; i < ACCEPT_BATCH; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("accept");
			return;
		}
		accepted++;
		add_flow(fd);
	}
}

static struct listener *
serve_listener(int fd)
{
	struct listener *l;

	if (nlisteners == MAX_LISTENERS)
		fatalx("more than %d listeners", MAX_LISTENERS);
	l = &listeners[nlisteners++];
	l->fd = fd;
	l->port = local_port(fd);
	l->mode = default_mode;
	evutil_make_socket_nonblocking(fd);
	l->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_accept, NULL);
	if (l->ev == NULL || event_add(l->ev, NULL) < 0)
		fatalx("cannot watch listener %d", fd);
	return l;
}

/* "ADDR:PORT[,rate=R][,linger=S][,shut=S][,pause=A:B][,buf=N][,reply=N]" */
static void
listen_on(char *spec)
{
	struct sockaddr_storage ss;
	struct mode m = default_mode;
	struct listener *l;
	char *opt, *save = NULL, *end, ip[INET6_ADDRSTRLEN];
	socklen_t len;
	int fd, one = 1, zero = 0, port;

	spec = strtok_r(spec, ",", &save);
	while ((opt = strtok_r(NULL, ",", &save)) != NULL) {
		if (strncmp(opt, "rate=", 5) == 0)
			m.rate = strtoull(opt + 5, &end, 10);
		else if (strncmp(opt, "linger=", 7) == 0)
			m.linger = strtod(opt + 7, &end);
		else if (strncmp(opt, "shut=", 5) == 0)
			m.shut = strtod(opt + 5, &end);
		else if (strncmp(opt, "pause=", 6) == 0) {
			m.pause_from = strtod(opt + 6, &end);
			if (*end != ':')
				fatalx("bad value in '%s'", opt);
			m.pause_until = strtod(end + 1, &end);
		} else if (strncmp(opt, "buf=", 4) == 0)
			m.buf = (int)strtol(opt + 4, &end, 10);
		else if (strncmp(opt, "reply=", 6) == 0)
			m.reply = strtoull(opt + 6, &end, 10);
		else
			fatalx("unknown listener option '%s'", opt);
		if (*end != '\0')
			fatalx("bad value in '%s'", opt);
	}
	if (spec == NULL || addr_parse(spec, &ss, &len) < 0)
		exit(2);
	port = sa_format(&ss, ip, sizeof(ip));
	l = listener_by_port(port);
	if (l == NULL) {
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			fatal("socket");
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* accepted connections inherit the listener's buffers */
		if (m.buf > 0 && flow_set_bufs(fd, m.buf) < 0)
			log_warn("buf=%d", m.buf);
		if (ss.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
		    listen(fd, LISTEN_BACKLOG) < 0)
			fatal("listen on %s", spec);
		l = serve_listener(fd);
	}
	l->mode = m;
}

/*
 * migrd's gate (MIGR_GATE_FD, for a workload run with "--gate"): started
 * while its sockets are still in repair, streamd sets itself up, then
 * waits for one byte there before it touches them.  End of file means
 * the move was undone: it leaves, having touched nothing.
 */
static double
since_ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* This process's age in ms (its start time in /proc/self/stat, in
 * clock ticks since boot: the fork, migrd's set-up of the child, exec
 * and the runtime's start included), or -1 */
static double
age_ms(void)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	struct timespec now;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;
	int i;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	/* after the name: fields 3 to 21, then starttime (22) */
	for (i = 3; i <= 22 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
		return -1;
	clock_gettime(CLOCK_BOOTTIME, &now);
	return ((double)now.tv_sec + (double)now.tv_nsec / 1e9 -
	    (double)start / (double)sysconf(_SC_CLK_TCK)) * 1e3;
}

static void
wait_gate(void)
{
	const char *g = getenv("MIGR_GATE_FD");
	struct timespec t0, t1;
	double age = age_ms();
	ssize_t n;
	char c;
	int fd;

	if (g == NULL)
		return;
	fd = atoi(g);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		log_warnx("gate closed: the move was undone, leaving");
		exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	unsetenv("MIGR_GATE_FD");
	/* how long the set-up took, and how long the gate held it then */
	log_warnx("gate opened after %.0f ms (at the gate %.0f ms after "
	    "the fork)", since_ms(&t0, &t1), age);
}

/* Sockets handed over by the socket-activation convention. */
static void
adopt_fds(int *conn_fds, int *nconn)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int i, count, acc;
	socklen_t len;

	*nconn = 0;
	if (pid == NULL || n == NULL || atol(pid) != (long)getpid())
		return;
	count = atoi(n);
	for (i = 0; i < count && *nconn < MAX_FLOWS; i++) {
		int fd = 3 + i;

		len = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0) {
			log_warn("adopted fd %d", fd);
			continue;
		}
		if (acc)
			serve_listener(fd);
		else
			conn_fds[(*nconn)++] = fd;
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

static void
write_stats(void)
{
	FILE *out = statsfile ? fopen(statsfile, "w") : stderr;

	if (out == NULL) {
		log_warn("%s", statsfile);
		return;
	}
	fprintf(out, "flows=%d listeners=%d accepted=%llu adopted=%llu "
	    "closed=%llu tx_bytes=%llu rx_bytes=%llu mismatches=%llu "
	    "resets=%llu eofs=%llu errors=%llu\n", nflows, nlisteners,
	    (unsigned long long)accepted, (unsigned long long)adopted,
	    (unsigned long long)closed, (unsigned long long)stats.tx_bytes,
	    (unsigned long long)stats.rx_bytes,
	    (unsigned long long)stats.mismatches,
	    (unsigned long long)stats.resets, (unsigned long long)stats.eofs,
	    (unsigned long long)stats.errors);
	if (out != stderr)
		fclose(out);
}

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	double now = flow_now();
	int i;

	(void)fd;
	(void)what;
	(void)arg;
	for (i = 0; i < nflows; i++) {
		struct sflow *sf = &flows[i];

		if (sf->close_at && now >= sf->close_at) {
			closed++;
			drop(sf);
			i--;
			continue;
		}
		if (sf->shut_at && now >= sf->shut_at) {
			sf->shut_at = 0;
			flow_shutdown_write(sf->f);
		}
		flow_tick(sf->f, tick_ms / 1000.0);
	}
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	if (sig == SIGUSR2) {
		flow_drain();
		return;
	}
	write_stats();
	if (sig != SIGUSR1)
		event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
	struct timeval tick;
	struct rlimit rl;
	int c, i, nconn, nspecs = 0, conn_fds[MAX_FLOWS];
	char *end, *specs[MAX_LISTENERS];

	log_procinit("streamd");
	log_init(LOG_TO_STDERR, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	/* 10,000 flows need more descriptors than the usual 1,024 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
	base = event_base_new();
	if (base == NULL)
		fatalx("event_base_new");
	/* nothing touches a socket before the gate opens */
	wait_gate();
	/* adopted listeners first, so that -l finds their ports taken */
	adopt_fds(conn_fds, &nconn);
	while ((c = getopt(argc, argv, "l:r:s:t:")) != -1) {
		switch (c) {
		case 'l':
			if (nspecs == MAX_LISTENERS)
				fatalx("more than %d listeners", MAX_LISTENERS);
			specs[nspecs++] = optarg;
			break;
		case 'r':
			default_mode.rate = strtoull(optarg, &end, 10);
			if (*end != '\0')
				fatalx("bad rate '%s'", optarg);
			break;
		case 's':
			statsfile = optarg;
			break;
		case 't':
			tick_ms = flow_tick_arg(optarg);
			break;
		default:
			fprintf(stderr, "usage: streamd -l ADDR:PORT[,rate=R]"
			    "[,linger=S][,shut=S][,pause=A:B][,buf=N][,reply=N]... "
			    "[-r RATE] [-s STATSFILE] [-t TICK_MS]\n");
			return 2;
		}
	}
	/* after -r, which sets the default mode, whatever the order */
	for (i = 0; i < nspecs; i++)
		listen_on(specs[i]);
	/* connections last, so they take their listener's mode */
	for (i = 0; i < nconn; i++) {
		adopted++;
		add_flow(conn_fds[i]);
	}
	if (nlisteners == 0 && nflows == 0)
		fatalx("nothing to serve: give -l or sockets through LISTEN_FDS");

	tick = ms_timeval(tick_ms);
	on_tick(-1, 0, NULL);
	event_add(event_new(base, -1, EV_PERSIST, on_tick, NULL), &tick);
	event_add(evsignal_new(base, SIGTERM, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGINT, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGUSR1, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGUSR2, on_signal, NULL), NULL);
	event_base_dispatch(base);
	return stats.mismatches ? 1 : 0;
}
