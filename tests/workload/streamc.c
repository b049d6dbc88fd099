/* SPDX-License-Identifier: ISC */
/*
 * streamc: the test client.  Keeps -n connections to the service busy in
 * both directions (-r bytes/s each way per connection), checks every byte
 * it reads against the pattern (pattern.h), measures the longest stall
 * (the longest wait between two reads on any connection) and the longest
 * acknowledgement stall with -a (the longest wait, with bytes sent and
 * not yet acknowledged, for the acknowledged count to move: what a peer
 * that only sends sees; TCP_INFO of every connection at every tick),
 * and every -p
 * milliseconds opens a fresh connection (to a target that is not idle,
 * since an idle port never speaks) to check that the service still
 * accepts.  It opens its -n connections (up to 16,384) 512 at a time,
 * and raises its limit of open files to the hard limit.
 *
 *   streamc -c ADDR:PORT[,MODE] [-c ...]... [-n CONNS] [-r RATE]
 *           [-d SECONDS] [-p PROBE_MS] [-o REPORT] [-a] [-t TICK_MS] [-w]
 *
 * It writes, and with -a looks at the acknowledged count, every -t
 * milliseconds (default 50): a stall is measured to within a tick.
 *
 * Connections are spread round-robin over the -c targets (mix IPv4 and
 * IPv6 by giving both).  A target's MODE says what its service port
 * does (see streamd's listener modes):
 *   idle          nothing is written either way (pair with rate=0)
 *   halfclose=S   shut our side after S seconds; the service must go on
 *                 writing, then close (FIN_WAIT2 here, CLOSE_WAIT there)
 *   peershut      the service shuts its side first (pair with shut=S);
 *                 we go on writing 1 s after its FIN, then close
 *   pause=A:B     read nothing between the instants A and B (seconds
 *                 since the epoch), writing on: a slow reader whose
 *                 queues fill (pair with the service's pause=A:B)
 *   buf=N         send and receive buffers of N bytes (forced when root)
 *   readrate=R    read at most R bytes/s
 *   recvonly      nothing is written, everything the service writes is
 *                 read and checked: a peer that only receives (its
 *                 acknowledgements are all it sends)
 *   reply         the service writes its reply and closes (reply=N):
 *                 nothing is written, the reply's end of file is
 *                 expected
 *
 * It runs -d seconds (0: until SIGTERM/SIGINT);
 * SIGUSR1 writes an interim report (to -o's file through a rename, so
 * a reader never sees half of one).  With -w each report's longest
 * stalls are those since the previous report, not since the start: a
 * drill that moves the service many times under one client reads one
 * round's stall from each report.  SIGUSR2 ends every pause window and
 * stops writing on the connections that had one: their queues drain and
 * what they held is checked (flow_drain()).  The report is one line of
 * key=value pairs, then verdict=PASS or verdict=FAIL; the exit status is
 * 0 on PASS.
 * PASS means: every connection opened, none read a wrong byte, none was
 * reset, none was closed by the service unless its mode says so, every
 * close a mode expects happened, and every probe got served.
 */
#include <errno.h>
#include <limits.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/event.h>

#include "addrport.h"
#include "clock.h"
#include "flow.h"
#include "log.h"

#define MAX_TARGETS	16
#define MAX_FLOWS	16384
/* connects under way at once: 10,000 at a time would overflow the
 * service's SYN and accept queues (1,024) for nothing */
#define MAX_CONNECTING	512
/*
 * How long a probe may take to be served: as long as a client of the
 * kernel's default patience (tcp_syn_retries 6) waits.  While a move
 * holds new connections back (its gate, the wait for orphans to deliver
 * their last bytes, up to orphan-wait, and the downtime: in the TCG lab
 * 20 s and more with tens of MiB queued) the probe's SYNs are dropped
 * and retransmitted after 1, 3, 7, 15, 31 and 63 s; 127 s covers a hold
 * of up to 63 s.  (63 s, which covers 31 s, failed in CI when a move
 * waited for a draining orphan and then streamed 30 MiB.)
 */
#define PROBE_TIMEOUT	127.0

struct target {
	struct sockaddr_storage	ss;
	socklen_t		len;
	int			idle, peershut, reply, recvonly;
	double			halfclose;	/* 0: never */
	double			pause_from, pause_until;
	int			buf;
	uint64_t		readrate;
};

struct cflow {
	struct flow	*f;
	struct target	*t;
	double		 shut_at, close_at;	/* 0: not planned */
	uint64_t	 acked;		/* tcpi_bytes_acked at acked_at */
	double		 acked_at;
};

struct pending {		/* a connect in progress */
	struct event	*ev;
	struct target	*t;
	int		 fd;
	int		 probe;
	double		 started;
	struct pending	*next;
};

struct probe {			/* a probe connection being served */
	struct flow	*flow;
	double		 started;
	struct probe	*next;
};

static struct event_base	*base;
static long			 to_open, connecting;	/* flows */
static struct target		 targets[MAX_TARGETS];
static int			 ntargets, next_target;
static struct cflow		 flows[MAX_FLOWS];
static int			 nflows;
static struct flow_stats	 stats, probe_stats;
static uint64_t			 rate = 8192;
static uint64_t			 connect_failures, probes_ok, probes_failed;
/* the longest wait, with bytes sent and not acknowledged, for an
 * acknowledgement that moves on: the stall of a peer that sends */
static double			 ack_stall;
static int			 ack_stalls;	/* -a: measure them */
/* -w: each report's stalls since the previous report */
static int			 windowed;
static long			 tick_ms = 50;	/* -t */
static uint64_t			 closes_ok, unexpected_eofs;
static struct probe		*probes;
static const char		*report;
static double			 started;	/* flow_now() at start */

static void
drop(int i)
{
	flow_free(flows[i].f);
	flows[i] = flows[--nflows];
}

static void
on_flow_end(struct flow *f, enum flow_end why, void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < nflows; i++)
		if (flows[i].f == f)
			break;
	if (i == nflows)
		return;
	if (why == FLOW_RESET) {
		char ip[INET6_ADDRSTRLEN];
		int port = sa_format(&flows[i].t->ss, ip, sizeof(ip));

		/* which class and which connection, to find it in a capture */
		log_warnx("flow %d: reset: %s port %d from local port %d",
		    flow_fd(f), ip, port, local_port(flow_fd(f)));
	}
	if (why == FLOW_EOF) {
		struct cflow *cf = &flows[i];

		if (cf->t->reply) {
			closes_ok++;		/* the reply ends with its FIN */
		} else if (cf->t->halfclose > 0 && flow_write_closed(f)) {
			closes_ok++;		/* it closed after our FIN */
		} else if (cf->t->peershut && !flow_write_closed(f)) {
			closes_ok++;		/* its FIN came first, as planned */
			cf->close_at = flow_now() + 1.0;
			return;
		} else {
			unexpected_eofs++;
			log_warnx("flow %d: closed by the service", flow_fd(f));
		}
	}
	drop(i);
}

static void
on_probe_end(struct flow *f, enum flow_end why, void *arg)
{
	struct probe **pp, *p = arg;

	(void)f;
	if (why != FLOW_EOF || flow_rx_bytes(p->flow) == 0) {
		probes_failed++;
		log_warnx("probe ended before it was served");
	} else {
		probes_ok++;
	}
	for (pp = &probes; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	flow_free(p->flow);
	free(p);
}

static void	start_connect(int);

/* Open the flows still to open, MAX_CONNECTING at a time. */
static void
open_more(void)
{
	while (to_open > 0 && connecting < MAX_CONNECTING) {
		to_open--;
		start_connect(0);
	}
}

static void
on_connected(evutil_socket_t fd, short what, void *arg)
{
	struct pending *pd = arg;
	int err = 0;
	socklen_t len = sizeof(err);

	event_free(pd->ev);
	if (!pd->probe) {
		connecting--;
		open_more();
	}
	if (what & EV_TIMEOUT)
		err = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err != 0) {
		errno = err;
		log_warn("connect");
		close(fd);
		if (pd->probe)
			probes_failed++;
		else
			connect_failures++;
		free(pd);
		return;
	}
	if (pd->probe) {
		struct probe *p = calloc(1, sizeof(*p));

		if (p == NULL) {
			close(fd);
			probes_failed++;
		} else {
			p->started = pd->started;
			p->flow = flow_new(base, fd, 0, 0, &probe_stats,
			    on_probe_end, p);
			if (p->flow == NULL) {
				free(p);
				probes_failed++;
			} else {
				p->next = probes;
				probes = p;
			}
		}
	} else if (nflows < MAX_FLOWS) {
		struct cflow *cf = &flows[nflows];

		memset(cf, 0, sizeof(*cf));
		cf->t = pd->t;
		cf->f = flow_new(base, fd, 0, pd->t->idle || pd->t->reply ||
		    pd->t->recvonly ? 0 : rate, &stats,
		    on_flow_end, NULL);
		if (cf->f == NULL) {
			connect_failures++;
		} else {
			if (pd->t->halfclose > 0)
				cf->shut_at = flow_now() + pd->t->halfclose;
			if (pd->t->pause_until > 0)
				flow_set_pause(cf->f, pd->t->pause_from,
				    pd->t->pause_until);
			if (pd->t->readrate > 0)
				flow_set_read_rate(cf->f, pd->t->readrate);
			nflows++;
		}
	} else {
		close(fd);
	}
	free(pd);
}

/* A probe wants to be served: never an idle target, which is silent. */
static struct target *
probe_target(void)
{
	static unsigned next_probe;
	int i;

	for (i = 0; i < ntargets; i++) {
		struct target *t = &targets[next_probe++ % ntargets];

		if (!t->idle)
			return t;
	}
	return NULL;
}

static void
start_connect(int probe)
{
	struct target *t = probe ? probe_target() :
	    &targets[next_target++ % ntargets];
	struct timeval limit = { probe ? (long)PROBE_TIMEOUT : 60, 0 };
	struct pending *pd;
	int fd;

	if (t == NULL)
		return;		/* only idle targets: nothing to probe */
	fd = socket(t->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	pd = calloc(1, sizeof(*pd));
	if (fd < 0 || pd == NULL) {
		log_warn("socket");
		goto out_fail;
	}
	/* before connect, so the window scale leaves room for them */
	if (t->buf > 0 && !probe && flow_set_bufs(fd, t->buf) < 0)
		log_warn("buf=%d", t->buf);
	if (connect(fd, (struct sockaddr *)&t->ss, t->len) < 0 &&
	    errno != EINPROGRESS) {
		log_warn("connect");
		goto out_fail;
	}
	pd->fd = fd;
	pd->t = t;
	pd->probe = probe;
	pd->started = flow_now();
	pd->ev = event_new(base, fd, EV_WRITE, on_connected, pd);
	if (pd->ev == NULL || event_add(pd->ev, &limit) < 0)
		goto out_fail;
	if (!probe)
		connecting++;
	return;
out_fail:
	if (fd >= 0)
		close(fd);
	free(pd);
	if (probe)
		probes_failed++;
	else
		connect_failures++;
}

/* 10,000 flows need more descriptors than the usual 1,024 */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The gap a flow still has open, when it counts as a stall: not on an
 * idle connection, nor once the service closed its side. */
static double
open_stall(const struct cflow *cf)
{
	if (cf->t->idle || flow_read_closed(cf->f))
		return 0;
	return flow_open_gap(cf->f);
}

/*
 * The median of the flows' own longest stalls (a gap still open counts),
 * in seconds: the longest stall is one flow's, often the last one a
 * busy program serves, and this says what most flows saw.
 */
static double
median_stall(void)
{
	double *g, m = 0, open;
	int i, n = 0;

	if (nflows == 0 || (g = calloc((size_t)nflows, sizeof(*g))) == NULL)
		return 0;
	for (i = 0; i < nflows; i++) {
		if (flows[i].t->idle)
			continue;
		g[n] = flow_max_gap(flows[i].f);
		if ((open = open_stall(&flows[i])) > g[n])
			g[n] = open;
		n++;
	}
	if (n > 0) {
		qsort(g, (size_t)n, sizeof(*g), cmp_double);
		m = n % 2 ? g[n / 2] : (g[n / 2 - 1] + g[n / 2]) / 2;
	}
	free(g);
	return m;
}

static int
write_report(void)
{
	char tmp[PATH_MAX];
	FILE *out = stdout;
	double stall = stats.max_gap, stall_end = stats.max_gap_end;
	int i, pass;

	uint64_t pending = 0;

	for (i = 0; i < nflows; i++) {
		if (open_stall(&flows[i]) > stall) {
			stall = open_stall(&flows[i]);
			stall_end = flow_now();
		}
		/* a close its mode expects that has not happened yet */
		if ((flows[i].t->halfclose > 0 || flows[i].t->peershut ||
		    flows[i].t->reply) && flows[i].close_at == 0)
			pending++;
	}
	pass = stats.mismatches == 0 && stats.resets == 0 &&
	    unexpected_eofs == 0 && pending == 0 && stats.errors == 0 &&
	    connect_failures == 0 && probes_failed == 0;
	if (report != NULL) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", report);
		if ((out = fopen(tmp, "w")) == NULL) {
			log_warn("%s", tmp);
			return pass;
		}
	}
	fprintf(out, "flows=%d tx_bytes=%llu rx_bytes=%llu mismatches=%llu "
	    "resets=%llu eofs=%llu closes_ok=%llu closes_pending=%llu "
	    "errors=%llu connect_failures=%llu "
	    "longest_stall_ms=%.0f longest_stall_end_s=%.1f "
	    "median_stall_ms=%.0f "
	    "longest_ack_stall_ms=%.0f probes_ok=%llu "
	    "probes_failed=%llu verdict=%s\n", nflows,
	    (unsigned long long)stats.tx_bytes,
	    (unsigned long long)stats.rx_bytes,
	    (unsigned long long)stats.mismatches,
	    (unsigned long long)stats.resets, (unsigned long long)unexpected_eofs,
	    (unsigned long long)closes_ok, (unsigned long long)pending,
	    (unsigned long long)stats.errors,
	    (unsigned long long)connect_failures, stall * 1000,
	    stall > 0 ? stall_end - started : 0, median_stall() * 1000,
	    ack_stall * 1000,
	    (unsigned long long)probes_ok, (unsigned long long)probes_failed,
	    pass ? "PASS" : "FAIL");
	if (out != stdout) {
		if (fclose(out) != 0 || rename(tmp, report) < 0)
			log_warn("%s", report);
	} else
		fflush(out);
	if (windowed) {
		stats.max_gap = stats.max_gap_end = 0;
		ack_stall = 0;
		for (i = 0; i < nflows; i++)
			flow_max_gap_reset(flows[i].f);
	}
	return pass;
}

static void
ack_tick(struct cflow *cf, double now)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(flow_fd(cf->f), IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		return;
	if (ti.tcpi_bytes_acked != cf->acked || ti.tcpi_unacked == 0 ||
	    cf->acked_at == 0) {
		cf->acked = ti.tcpi_bytes_acked;
		cf->acked_at = now;
	} else if (now - cf->acked_at > ack_stall) {
		ack_stall = now - cf->acked_at;
	}
}

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct probe *p, *next;
	double now = flow_now();
	int i;

	(void)fd;
	(void)what;
	(void)arg;
	for (i = 0; i < nflows; i++) {
		struct cflow *cf = &flows[i];

		if (cf->close_at && now >= cf->close_at) {
			drop(i--);
			continue;
		}
		if (cf->shut_at && now >= cf->shut_at) {
			cf->shut_at = 0;
			flow_shutdown_write(cf->f);
		}
		if (ack_stalls)
			ack_tick(cf, now);
		flow_tick(cf->f, tick_ms / 1000.0);
	}
	for (p = probes; p != NULL; p = next) {
		next = p->next;
		if (flow_rx_bytes(p->flow) > 0) {
			/* served: the probe is done */
			on_probe_end(p->flow, FLOW_EOF, p);
		} else if (now - p->started > PROBE_TIMEOUT) {
			on_probe_end(p->flow, FLOW_ERROR, p);
		}
	}
}

static void
on_probe_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	start_connect(1);
}

/* "ADDR:PORT[,idle][,halfclose=S][,peershut][,pause=A:B][,buf=N]
 * [,readrate=R][,reply][,recvonly]" */
static int
parse_target(char *spec, struct target *t)
{
	char *opt, *save = NULL, *end;

	memset(t, 0, sizeof(*t));
	spec = strtok_r(spec, ",", &save);
	while ((opt = strtok_r(NULL, ",", &save)) != NULL) {
		if (strcmp(opt, "idle") == 0) {
			t->idle = 1;
		} else if (strcmp(opt, "peershut") == 0) {
			t->peershut = 1;
		} else if (strcmp(opt, "reply") == 0) {
			t->reply = 1;
		} else if (strcmp(opt, "recvonly") == 0) {
			t->recvonly = 1;
		} else if (strncmp(opt, "pause=", 6) == 0) {
			t->pause_from = strtod(opt + 6, &end);
			if (*end != ':' || (t->pause_until = strtod(end + 1,
			    &end), *end != '\0')) {
				log_warnx("bad value in '%s'", opt);
				return -1;
			}
		} else if (strncmp(opt, "buf=", 4) == 0) {
			t->buf = (int)strtol(opt + 4, &end, 10);
			if (*end != '\0' || t->buf <= 0) {
				log_warnx("bad value in '%s'", opt);
				return -1;
			}
		} else if (strncmp(opt, "readrate=", 9) == 0) {
			t->readrate = strtoull(opt + 9, &end, 10);
			if (*end != '\0') {
				log_warnx("bad value in '%s'", opt);
				return -1;
			}
		} else if (strncmp(opt, "halfclose=", 10) == 0) {
			t->halfclose = strtod(opt + 10, &end);
			if (*end != '\0' || t->halfclose <= 0) {
				log_warnx("bad value in '%s'", opt);
				return -1;
			}
		} else {
			log_warnx("unknown target mode '%s'", opt);
			return -1;
		}
	}
	if (spec == NULL)
		return -1;
	return addr_parse(spec, &t->ss, &t->len);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	if (sig == SIGUSR1)
		write_report();
	else if (sig == SIGUSR2)
		flow_drain();
	else
		event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
	struct timeval tick, dur = { 0, 0 }, probe_tv;
	long conns = 1, duration = 10, probe_ms = 0;
	int c;
	char *end;

	log_procinit("streamc");
	log_init(LOG_TO_STDERR, 0, 0);
	while ((c = getopt(argc, argv, "ac:n:r:d:p:o:t:w")) != -1) {
		switch (c) {
		case 'a':
			ack_stalls = 1;
			break;
		case 'c':
			if (ntargets == MAX_TARGETS)
				fatalx("at most %d targets", MAX_TARGETS);
			if (parse_target(optarg, &targets[ntargets]) < 0)
				return 2;
			ntargets++;
			break;
		case 'n':
			conns = strtol(optarg, &end, 10);
			if (*end || conns < 0 || conns > MAX_FLOWS)
				fatalx("bad connection count '%s'", optarg);
			break;
		case 'r':
			rate = strtoull(optarg, &end, 10);
			if (*end)
				fatalx("bad rate '%s'", optarg);
			break;
		case 'd':
			duration = strtol(optarg, &end, 10);
			if (*end || duration < 0)
				fatalx("bad duration '%s'", optarg);
			break;
		case 'p':
			probe_ms = strtol(optarg, &end, 10);
			if (*end || probe_ms < 0)
				fatalx("bad probe interval '%s'", optarg);
			break;
		case 'o':
			report = optarg;
			break;
		case 't':
			tick_ms = flow_tick_arg(optarg);
			break;
		case 'w':
			windowed = 1;
			break;
		default:
			goto usage;
		}
	}
	if (ntargets == 0 || optind != argc)
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	base = event_base_new();
	if (base == NULL)
		fatalx("event_base_new");
	started = flow_now();
	raise_nofile();
	to_open = conns;
	open_more();
	tick = ms_timeval(tick_ms);
	event_add(event_new(base, -1, EV_PERSIST, on_tick, NULL), &tick);
	if (probe_ms > 0) {
		probe_tv.tv_sec = probe_ms / 1000;
		probe_tv.tv_usec = (probe_ms % 1000) * 1000;
		event_add(event_new(base, -1, EV_PERSIST, on_probe_timer, NULL),
		    &probe_tv);
	}
	event_add(evsignal_new(base, SIGTERM, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGINT, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGUSR1, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGUSR2, on_signal, NULL), NULL);
	if (duration > 0) {
		dur.tv_sec = duration;
		event_base_loopexit(base, &dur);
	}
	event_base_dispatch(base);
	return write_report() ? 0 : 1;
usage:
	fprintf(stderr, "usage: streamc -c ADDR:PORT[,idle|,halfclose=S|,peershut|,reply|,recvonly]"
	    "[,pause=A:B][,buf=N][,readrate=R]... [-n CONNS] "
	    "[-r RATE] [-d SECONDS] [-p PROBE_MS] [-o REPORT] [-a] [-t TICK_MS] [-w]\n");
	return 2;
}
