/*
 * streamd: the test service.  Serves verified streams (pattern.h) on
 * every connection: writes the pattern at --rate bytes/s and checks each
 * byte it reads.  It adopts sockets handed over by migrd through the
 * socket-activation convention (LISTEN_PID, LISTEN_FDS from fd 3): a
 * listening socket is served, a connected one carries on where the old
 * task left it, since the pattern depends on sequence numbers only.
 *
 *   streamd [-l ADDR:PORT]... [-r RATE] [-s STATSFILE]
 *
 * A connection that reads a wrong byte is reset (SO_LINGER 0), so the
 * client counts it.  SIGUSR1 writes the counters to STATSFILE (or
 * stderr); SIGTERM ends.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/event.h>

#include "addr.h"
#include "flow.h"
#include "log.h"

#define MAX_FLOWS 4096

static struct event_base	*base;
static struct flow		*flows[MAX_FLOWS];
static int			 nflows;
static struct flow_stats	 stats;
static uint64_t			 rate = 8192;
static uint64_t			 accepted, adopted;
static const char		*statsfile;

static void
on_end(struct flow *f, enum flow_end why, void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < nflows; i++)
		if (flows[i] == f)
			break;
	if (i < nflows)
		flows[i] = flows[--nflows];
	if (why == FLOW_MISMATCH) {
		struct linger rst = { 1, 0 };

		setsockopt(flow_fd(f), SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
	}
	flow_free(f);
}

static void
add_flow(int fd)
{
	struct flow *f;

	if (nflows == MAX_FLOWS) {
		log_warnx("too many connections");
		close(fd);
		return;
	}
	f = flow_new(base, fd, 1, rate, &stats, on_end, NULL);
	if (f != NULL)
		flows[nflows++] = f;
}

static void
on_accept(evutil_socket_t lfd, short what, void *arg)
{
	int fd;

	(void)what;
	(void)arg;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("accept");
		return;
	}
	accepted++;
	add_flow(fd);
}

static void
serve_listener(int fd)
{
	struct event *ev;

	evutil_make_socket_nonblocking(fd);
	ev = event_new(base, fd, EV_READ | EV_PERSIST, on_accept, NULL);
	if (ev == NULL || event_add(ev, NULL) < 0)
		fatalx("cannot watch listener %d", fd);
}

static void
listen_on(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, zero = 0;

	if (addr_parse(spec, &ss, &len) < 0)
		exit(2);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fatal("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 1024) < 0)
		fatal("listen on %s", spec);
	serve_listener(fd);
}

/* Sockets handed over by the socket-activation convention. */
static void
adopt_fds(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int i, count, acc;
	socklen_t len;

	if (pid == NULL || n == NULL || atol(pid) != (long)getpid())
		return;
	count = atoi(n);
	for (i = 0; i < count; i++) {
		int fd = 3 + i;

		len = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0) {
			log_warn("adopted fd %d", fd);
			continue;
		}
		if (acc) {
			serve_listener(fd);
		} else {
			adopted++;
			add_flow(fd);
		}
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
	fprintf(out, "flows=%d accepted=%llu adopted=%llu tx_bytes=%llu "
	    "rx_bytes=%llu mismatches=%llu resets=%llu eofs=%llu errors=%llu\n",
	    nflows, (unsigned long long)accepted, (unsigned long long)adopted,
	    (unsigned long long)stats.tx_bytes,
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
	int i;

	(void)fd;
	(void)what;
	(void)arg;
	for (i = 0; i < nflows; i++)
		flow_tick(flows[i], 0.05);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	write_stats();
	if (sig != SIGUSR1)
		event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
	struct timeval tick = { 0, 50000 };
	struct event *ev;
	int c, nlisten = 0;
	char *end;

	log_procinit("streamd");
	log_init(LOG_TO_STDERR, 0, 0);
	base = event_base_new();
	if (base == NULL)
		fatalx("event_base_new");
	while ((c = getopt(argc, argv, "l:r:s:")) != -1) {
		switch (c) {
		case 'l':
			listen_on(optarg);
			nlisten++;
			break;
		case 'r':
			rate = strtoull(optarg, &end, 10);
			if (*end != '\0')
				fatalx("bad rate '%s'", optarg);
			break;
		case 's':
			statsfile = optarg;
			break;
		default:
			fprintf(stderr, "usage: streamd [-l ADDR:PORT]... [-r RATE] [-s STATSFILE]\n");
			return 2;
		}
	}
	adopt_fds();
	if (nlisten == 0 && nflows == 0 && getenv("LISTEN_FDS") == NULL &&
	    event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED) == 0)
		fatalx("nothing to serve: give -l or sockets through LISTEN_FDS");

	ev = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	event_add(ev, &tick);
	event_add(evsignal_new(base, SIGTERM, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGINT, on_signal, NULL), NULL);
	event_add(evsignal_new(base, SIGUSR1, on_signal, NULL), NULL);
	signal(SIGPIPE, SIG_IGN);
	event_base_dispatch(base);
	return stats.mismatches ? 1 : 0;
}
