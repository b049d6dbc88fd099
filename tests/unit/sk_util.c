/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "sk_json.h"
#include "sk_util.h"

uint8_t
pat(int stream, uint32_t i)
{
	uint32_t x = i * 2654435761u + (uint32_t)stream * 40503u;

	return (uint8_t)(x >> 13 ^ x);
}

void
fill(uint8_t *b, int stream, uint32_t off, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pat(stream, off + (uint32_t)i);
}

void
lo_addr(int family, struct sockaddr_storage *ss, socklen_t *len,
    uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s->sin_port = htons(port);
		*len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_addr = in6addr_loopback;
		s->sin6_port = htons(port);
		*len = sizeof(*s);
	}
}

int
listener(int family, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	lo_addr(family, &ss, &len, port);
	fd = socket(family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

int
connect_to(int family, uint16_t port, int rcvbuf)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	lo_addr(family, &ss, &len, port);
	fd = socket(family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	if (rcvbuf)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
		    sizeof(rcvbuf)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
	return fd;
}

/* Write up to n bytes of stream without blocking; returns bytes written. */
uint32_t
write_nb(int fd, int stream, uint32_t off, uint32_t n)
{
	uint8_t buf[4096];
	uint32_t done = 0;
	ssize_t w;

	while (done < n) {
		size_t k = n - done < sizeof(buf) ? n - done : sizeof(buf);

		fill(buf, stream, off + done, k);
		w = send(fd, buf, k, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w <= 0)
			break;
		done += (uint32_t)w;
	}
	return done;
}

/* Read exactly n bytes of stream (5 s limit), checking each byte. */
void
read_exact(int fd, int stream, uint32_t off, uint32_t n)
{
	uint8_t buf[4096];
	struct pollfd p = { fd, POLLIN, 0 };
	uint32_t got = 0, i;
	ssize_t r;

	while (got < n) {
		assert_int_equal(poll(&p, 1, 5000), 1);
		r = recv(fd, buf, n - got < sizeof(buf) ? n - got : sizeof(buf),
		    MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN)
			continue;
		if (r <= 0)
			fail_msg("read: %zd (%s) after %u of %u bytes", r,
			    strerror(errno), got, n);
		for (i = 0; i < (uint32_t)r; i++)
			if (buf[i] != pat(stream, off + got + i))
				fail_msg("stream %d byte %u differs", stream,
				    off + got + i);
		got += (uint32_t)r;
	}
}

void
expect_eof(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char c;

	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(recv(fd, &c, 1, MSG_DONTWAIT), 0);
}

void
wire_trip(const struct sk_state *st, struct sk_record *rec)
{
	char err[256], *text;
	json_t *j;

	j = sk_json_encode(st);
	assert_non_null(j);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	assert_non_null(text);
	if (sk_json_parse(text, strlen(text), NULL, rec, err,
	    sizeof(err)) < 0)
		fail_msg("refused: %s", err);
	free(text);
}

/* Dump fd through JSON text (as on the wire), release it, restore it. */
struct sk_handle *
move(int fd, struct sk_state **saved)
{
	struct sk_handle *h;
	struct sk_state *st;
	struct sk_record rec;

	h = sk_pause(fd);
	assert_non_null(h);
	assert_int_equal(sk_save(h, &st), 0);
	assert_int_equal(sk_release(h), 0);
	wire_trip(st, &rec);
	h = sk_restore(rec.u.sock);
	assert_non_null(h);
	if (saved != NULL)
		*saved = st;
	else
		sk_state_free(st);
	sk_record_clear(&rec);
	return h;
}

uint32_t
drain_some(int fd, int stream, uint32_t off, uint32_t n, int ms)
{
	uint8_t buf[65536];
	struct pollfd p = { fd, POLLIN, 0 };
	uint32_t got = 0, i;
	ssize_t r;

	while (got < n && poll(&p, 1, ms) == 1) {
		r = recv(fd, buf, n - got < sizeof(buf) ? n - got :
		    sizeof(buf), MSG_DONTWAIT);
		if (r <= 0)
			break;
		for (i = 0; i < (uint32_t)r; i++)
			if (buf[i] != pat(stream, off + got + i))
				fail_msg("stream %d byte %u differs", stream,
				    off + got + i);
		got += (uint32_t)r;
	}
	return got;
}

int64_t
st_opt(const struct sk_state *st, const char *name, int64_t dflt)
{
	uint32_t i;

	for (i = 0; i < st->nopts; i++)
		if (strcmp(sk_opt_name(st->opts[i].id), name) == 0)
			return st->opts[i].ival;
	return dflt;
}

int
hold_port(uint16_t port, int to_port)
{
	char cmd[320];

	snprintf(cmd, sizeof(cmd), "nft add table inet skhold && "
	    "nft add chain inet skhold in '{ type filter hook input "
	    "priority -400; }' && nft add rule inet skhold in tcp sport %u "
	    "drop", port);
	if (system(cmd) != 0)
		return -1;
	if (!to_port)
		return 0;
	snprintf(cmd, sizeof(cmd), "nft add rule inet skhold in tcp dport %u "
	    "drop", port);
	return system(cmd) == 0 ? 0 : -1;
}

void
release_port(void)
{
	if (system("nft delete table inet skhold") != 0)
		fail_msg("nft delete table inet skhold");
}
