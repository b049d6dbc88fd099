/* SPDX-License-Identifier: ISC */
/*
 * skstream: a byte-exact stream workload for the socket engine tests.
 * Each direction carries a pseudo-random pattern (byte i of stream s is
 * a hash of i and s), so any lost, duplicated or reordered byte shows.
 *
 *   skstream serve ADDR PORT --read R --write W [--shut] [--go F]
 *	[--after-fin] --state FILE
 *	accept one connection, read R bytes of stream 1 (checked), (wait
 *	for file F to exist, or for the peer's FIN), write
 *	up to W bytes of stream 2 without blocking, optionally
 *	shutdown(SHUT_WR), write "FD READ WROTE" to FILE and wait for a
 *	signal (the socket is dumped meanwhile)
 *   skstream hold ADDR PORT --state FILE
 *	listen and never accept: connections wait in the accept queue;
 *	write "FD 0 0 0" to FILE and wait for a signal
 *   skstream accept --fd N --read-total N1 --write-total N2
 *	accept one connection on listener N, read N1 bytes of stream 1,
 *	write N2 bytes of stream 2, shut down, expect EOF, print "ok"
 *   skstream cont --fd N --state FILE --read-total N1 --write-total N2
 *	continue the server side on a restored socket: read stream 1 up
 *	to N1 bytes then expect EOF, write stream 2 up to N2 (unless the
 *	saved side had shut down), shutdown(SHUT_WR), print "ok"
 *   skstream client ADDR PORT --write N1 --read N2 [--delay S]
 *	[--rcvbuf B] [--shut-after-write [--shut-delay-ms MS]] [--wait F]
 *	[--state FILE]
 *	connect, write N1 bytes of stream 1, optionally shut down, sleep
 *	S seconds (or until file F exists), then read stream 2 to EOF and check it is N2 bytes (or,
 *	when FILE says the server had shut down, the bytes it wrote)
 *
 * Exit 0 and "ok ..." on success; 1 and a reason on any mismatch,
 * reset or short stream.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint8_t
pat(int stream, uint64_t i)
{
	uint32_t x = (uint32_t)i + (uint32_t)stream * 0x9e3779b9u;

	x ^= (uint32_t)(i >> 32);
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return (uint8_t)x;
}

static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "skstream: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void __attribute__((noreturn, format(printf, 1, 0)))
diex(const char *fmt, unsigned long long a, unsigned long long b)
{
	fprintf(stderr, "skstream: ");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(stderr, fmt, a, b);
#pragma GCC diagnostic pop
	fprintf(stderr, "\n");
	exit(1);
}

static int
sockaddr_of(const char *addr, const char *port, struct sockaddr_storage *ss,
    socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)atoi(port));
		*len = sizeof(*s4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)atoi(port));
		*len = sizeof(*s6);
		return AF_INET6;
	}
	fprintf(stderr, "skstream: bad address %s\n", addr);
	exit(2);
}

/* Read stream 1 from *off up to total, checking every byte. */
static void
read_check(int fd, int stream, uint64_t *off, uint64_t total, int want_eof)
{
	uint8_t buf[16384];
	ssize_t n, i;

	while (*off < total || want_eof) {
		size_t want = sizeof(buf);

		if (!want_eof && total - *off < want)
			want = (size_t)(total - *off);
		n = read(fd, buf, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		if (n == 0) {
			if (*off != total)
				diex("EOF after %llu bytes, expected %llu",
				    *off, total);
			return;
		}
		for (i = 0; i < n; i++)
			if (buf[i] != pat(stream, *off + (uint64_t)i))
				diex("byte %llu of stream differs (%llu)",
				    *off + (uint64_t)i, (unsigned)stream);
		*off += (uint64_t)n;
		if (*off > total)
			diex("%llu bytes, more than %llu", *off, total);
	}
}

/* Write the stream from *off to total; nonblock: stop when full. */
static void
write_pat(int fd, int stream, uint64_t *off, uint64_t total, int nonblock)
{
	uint8_t buf[16384];
	ssize_t n;
	size_t k, want;

	while (*off < total) {
		want = sizeof(buf);
		if (total - *off < want)
			want = (size_t)(total - *off);
		for (k = 0; k < want; k++)
			buf[k] = pat(stream, *off + k);
		n = send(fd, buf, want, MSG_NOSIGNAL |
		    (nonblock ? MSG_DONTWAIT : 0));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (nonblock && (errno == EAGAIN ||
			    errno == EWOULDBLOCK))
				return;
			die("send");
		}
		*off += (uint64_t)n;
	}
}

static unsigned long long
opt_num(int argc, char **argv, const char *name, unsigned long long dflt)
{
	int i;

	for (i = 0; i < argc - 1; i++)
		if (strcmp(argv[i], name) == 0)
			return strtoull(argv[i + 1], NULL, 0);
	return dflt;
}

static const char *
opt_str(int argc, char **argv, const char *name)
{
	int i;

	for (i = 0; i < argc - 1; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return NULL;
}

static int
opt_flag(int argc, char **argv, const char *name)
{
	int i;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

static int
listen_on(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int family, lfd, one = 1;

	family = sockaddr_of(argv[2], argv[3], &ss, &len);
	(void)argc;
	if ((lfd = socket(family, SOCK_STREAM, 0)) < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, len) < 0)
		die("bind");
	if (listen(lfd, 8) < 0)
		die("listen");
	return lfd;
}

static int
serve(int argc, char **argv)
{
	uint64_t rd = 0, wr = 0;
	const char *state = opt_str(argc, argv, "--state"), *go;
	int lfd, fd;
	FILE *f;

	if (argc < 4 || state == NULL)
		return 2;
	lfd = listen_on(argc, argv);
	if ((fd = accept(lfd, NULL, NULL)) < 0)
		die("accept");
	close(lfd);
	read_check(fd, 1, &rd, opt_num(argc, argv, "--read", 0), 0);
	/* --after-fin: wait for the peer's FIN (CLOSE_WAIT) first. */
	if (opt_flag(argc, argv, "--after-fin")) {
		struct tcp_info ti;
		socklen_t tl;
		int i;

		for (i = 0; i < 500; i++) {
			tl = sizeof(ti);
			if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 &&
			    ti.tcpi_state == TCP_CLOSE_WAIT)
				break;
			usleep(20000);
		}
	}
	/* --go FILE: wait for FILE before writing (a test sets a lock). */
	if ((go = opt_str(argc, argv, "--go")) != NULL)
		while (access(go, F_OK) != 0)
			usleep(20000);
	write_pat(fd, 2, &wr, opt_num(argc, argv, "--write", 0), 1);
	if (opt_flag(argc, argv, "--shut") && shutdown(fd, SHUT_WR) < 0)
		die("shutdown");
	/* Let queued segments leave before the socket is dumped. */
	usleep(200000);
	if ((f = fopen(state, "w")) == NULL)
		die(state);
	fprintf(f, "%d %llu %llu %d\n", fd, (unsigned long long)rd,
	    (unsigned long long)wr, opt_flag(argc, argv, "--shut"));
	fclose(f);
	for (;;)
		pause();
}

static int
hold(int argc, char **argv)
{
	const char *state = opt_str(argc, argv, "--state");
	int lfd;
	FILE *f;

	if (argc < 4 || state == NULL)
		return 2;
	lfd = listen_on(argc, argv);
	if ((f = fopen(state, "w")) == NULL)
		die(state);
	fprintf(f, "%d 0 0 0\n", lfd);
	fclose(f);
	for (;;)
		pause();
}

static int
accept_one(int argc, char **argv)
{
	uint64_t r = 0, w = 0;
	int lfd = (int)opt_num(argc, argv, "--fd", 3), fd;

	if ((fd = accept(lfd, NULL, NULL)) < 0)
		die("accept");
	read_check(fd, 1, &r, opt_num(argc, argv, "--read-total", 0), 0);
	write_pat(fd, 2, &w, opt_num(argc, argv, "--write-total", 0), 0);
	if (shutdown(fd, SHUT_WR) < 0)
		die("shutdown");
	read_check(fd, 1, &r, opt_num(argc, argv, "--read-total", 0), 1);
	printf("ok accept read=%llu wrote=%llu\n", (unsigned long long)r,
	    (unsigned long long)w);
	return 0;
}

static int
cont(int argc, char **argv)
{
	const char *state = opt_str(argc, argv, "--state");
	unsigned long long rd, wr;
	uint64_t r, w;
	int fd = (int)opt_num(argc, argv, "--fd", 3), sfd, shut;
	FILE *f;

	if (state == NULL || (f = fopen(state, "r")) == NULL)
		die("state");
	if (fscanf(f, "%d %llu %llu %d", &sfd, &rd, &wr, &shut) != 4)
		diex("bad state file (%llu %llu)", 0, 0);
	fclose(f);
	r = rd;
	w = wr;
	if (!shut) {
		write_pat(fd, 2, &w, opt_num(argc, argv, "--write-total", 0),
		    0);
		if (shutdown(fd, SHUT_WR) < 0)
			die("shutdown");
	}
	read_check(fd, 1, &r, opt_num(argc, argv, "--read-total", 0), 1);
	printf("ok cont read=%llu wrote=%llu\n", (unsigned long long)r,
	    (unsigned long long)w);
	return 0;
}

static int
client(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	uint64_t r = 0, w = 0, want;
	unsigned long long rd, wr;
	const char *state;
	FILE *f;
	int sfd, shut;
	int family, fd, rcvbuf = (int)opt_num(argc, argv, "--rcvbuf", 0);

	if (argc < 4)
		return 2;
	family = sockaddr_of(argv[2], argv[3], &ss, &len);
	if ((fd = socket(family, SOCK_STREAM, 0)) < 0)
		die("socket");
	if (rcvbuf > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
		die("SO_RCVBUF");
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		die("connect");
	write_pat(fd, 1, &w, opt_num(argc, argv, "--write", 0), 0);
	if (opt_flag(argc, argv, "--shut-after-write")) {
		usleep((useconds_t)opt_num(argc, argv, "--shut-delay-ms", 0) *
		    1000);
		if (shutdown(fd, SHUT_WR) < 0)
			die("shutdown");
	}
	sleep((unsigned)opt_num(argc, argv, "--delay", 0));
	/* --wait FILE: do not read before FILE exists (the move is done). */
	if ((state = opt_str(argc, argv, "--wait")) != NULL)
		while (access(state, F_OK) != 0)
			usleep(50000);
	want = opt_num(argc, argv, "--read", 0);
	/* A server that had shut down wrote no more than it saved. */
	if ((state = opt_str(argc, argv, "--state")) != NULL) {
		if ((f = fopen(state, "r")) == NULL)
			die(state);
		if (fscanf(f, "%d %llu %llu %d", &sfd, &rd, &wr, &shut) != 4)
			diex("bad state file (%llu %llu)", 0, 0);
		fclose(f);
		if (shut)
			want = wr;
	}
	read_check(fd, 2, &r, want, 1);
	if (!opt_flag(argc, argv, "--shut-after-write") &&
	    shutdown(fd, SHUT_WR) < 0)
		die("shutdown");
	printf("ok client read=%llu wrote=%llu\n", (unsigned long long)r,
	    (unsigned long long)w);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc = 2;

	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		rc = serve(argc, argv);
	else if (argc >= 2 && strcmp(argv[1], "cont") == 0)
		rc = cont(argc, argv);
	else if (argc >= 2 && strcmp(argv[1], "client") == 0)
		rc = client(argc, argv);
	else if (argc >= 2 && strcmp(argv[1], "hold") == 0)
		rc = hold(argc, argv);
	else if (argc >= 2 && strcmp(argv[1], "accept") == 0)
		rc = accept_one(argc, argv);
	if (rc == 2)
		fprintf(stderr, "usage: see the comment in skstream.c\n");
	return rc;
}
