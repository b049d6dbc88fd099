/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/netns/sockdiag.c: the text a refusal quotes for
 * a connection (an orphan owing bytes, a handshake under way), and
 * which of them counts as an orphan that still owes its peer.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "sockdiag.h"

static void
addr(struct sockaddr_storage *ss, const char *a, uint16_t port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(a, ':') == NULL) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, a, &sin->sin_addr), 1);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		assert_int_equal(inet_pton(AF_INET6, a, &sin6->sin6_addr), 1);
	}
}

/*
 * The texts a refusal quotes.  A request socket has no bytes, so no byte
 * count; an IPv4 client of a dual-stack listener (sock_diag says AF_INET6
 * and a v4-mapped address) is named as the client knows itself; an
 * orphan owes bytes.  Each: is it a handshake, an orphan still owing?
 */
static void
test_describe(void **state)
{
	static const struct {
		uint8_t		 st;
		const char	*l, *r;
		uint16_t	 lp, rp;
		uint32_t	 ino, wq;
		const char	*text;
		bool		 handshake, orphan;
	} c[] = {
		{ 3, "10.77.0.180", "10.77.0.10", 7400, 40999, 0, 0,
		  "10.77.0.180:7400 -> 10.77.0.10:40999 SYN_RECV", true, false },
		{ 12, "::ffff:10.77.0.180", "::ffff:10.77.0.10", 7400, 40999,
		  0, 0, "10.77.0.180:7400 -> 10.77.0.10:40999 NEW_SYN_RECV",
		  true, false },
		{ 4, "fd00:77::180", "fd00:77::10", 7405, 51000, 0, 65537,
		  "[fd00:77::180]:7405 -> [fd00:77::10]:51000 FIN_WAIT1, "
		  "65537 bytes not yet acknowledged", false, true },
		{ 4, "fd00:77::180", "fd00:77::10", 7405, 51000, 4242, 65537,
		  "[fd00:77::180]:7405 -> [fd00:77::10]:51000 FIN_WAIT1, "
		  "65537 bytes not yet acknowledged", false, false },
		{ 1, "10.77.0.180", "10.77.0.10", 7400, 1, 4243, 0,
		  "10.77.0.180:7400 -> 10.77.0.10:1 ESTABLISHED", false,
		  false },
	};
	struct sockdiag_sock s;
	char buf[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(&s, 0, sizeof(s));
		s.state = c[i].st;
		s.inode = c[i].ino;
		s.wqueue = c[i].wq;
		addr(&s.local, c[i].l, c[i].lp);
		addr(&s.remote, c[i].r, c[i].rp);
		sockdiag_describe(&s, buf, sizeof(buf));
		assert_string_equal(buf, c[i].text);
		assert_int_equal(sockdiag_handshake(&s), c[i].handshake);
		assert_int_equal(sockdiag_orphan_busy(&s), c[i].orphan);
	}
}

/* a listener: its queues count connections, and one with some waiting
 * is what checkpoint mode's gate waits for */
static void
test_listener(void **state)
{
	struct sockdiag_sock s;
	char buf[160];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.state = 10;			/* TCP_LISTEN */
	s.inode = 77;
	s.wqueue = 16;			/* the backlog: not bytes */
	addr(&s.local, "fd00:77::189", 7501);
	addr(&s.remote, "::", 0);
	sockdiag_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "[fd00:77::189]:7501 LISTEN, 0 connections "
	    "waiting to be accepted");
	assert_false(sockdiag_accept_waiting(&s));
	s.rqueue = 1;
	sockdiag_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "[fd00:77::189]:7501 LISTEN, 1 connection "
	    "waiting to be accepted");
	assert_true(sockdiag_accept_waiting(&s));
	assert_false(sockdiag_handshake(&s));
	assert_false(sockdiag_orphan_busy(&s));
	s.state = 1;			/* an established one's rqueue: bytes */
	assert_false(sockdiag_accept_waiting(&s));
}

/* a buffer too short cuts the text, never overruns it */
static void
test_short_buffer(void **state)
{
	struct sockdiag_sock s;
	char buf[12];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.state = 1;
	addr(&s.local, "10.77.0.180", 7400);
	addr(&s.remote, "10.77.0.10", 1);
	memset(buf, 'x', sizeof(buf));
	sockdiag_describe(&s, buf, sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_memory_equal(buf, "10.77.0.180", 11);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_listener),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
