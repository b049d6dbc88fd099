/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/netns/sockdiag.c: the text a refusal quotes for
 * a connection (an orphan owing bytes, a handshake under way), and
 * which of them counts as an orphan that still owes its peer.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "sockdiag.h"

static void
v4(struct sockaddr_storage *ss, const char *a, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, a, &sin->sin_addr), 1);
}

static void
v6(struct sockaddr_storage *ss, const char *a, uint16_t port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	assert_int_equal(inet_pton(AF_INET6, a, &sin6->sin6_addr), 1);
}

/* a request socket: no bytes, so no byte count in the text */
static void
test_handshake_text(void **state)
{
	struct sockdiag_sock s;
	char buf[160];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.state = 3;		/* TCP_SYN_RECV */
	v4(&s.local, "10.77.0.180", 7400);
	v4(&s.remote, "10.77.0.10", 40999);
	sockdiag_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "10.77.0.180:7400 -> 10.77.0.10:40999 "
	    "SYN_RECV");
	assert_false(sockdiag_orphan_busy(&s));
}

/* an IPv4 client of a dual-stack listener: sock_diag says AF_INET6 and
 * a v4-mapped address; the text gives the address the client knows */
static void
test_v4_mapped_text(void **state)
{
	struct sockdiag_sock s;
	char buf[160];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.state = 3;
	v6(&s.local, "::ffff:10.77.0.180", 7400);
	v6(&s.remote, "::ffff:10.77.0.10", 40999);
	sockdiag_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "10.77.0.180:7400 -> 10.77.0.10:40999 "
	    "SYN_RECV");
}

/* an orphan: no file, bytes the peer has not acknowledged */
static void
test_orphan_text(void **state)
{
	struct sockdiag_sock s;
	char buf[160];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.state = 4;		/* TCP_FIN_WAIT1 */
	s.wqueue = 65537;
	v6(&s.local, "fd00:77::180", 7405);
	v6(&s.remote, "fd00:77::10", 51000);
	sockdiag_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "[fd00:77::180]:7405 -> [fd00:77::10]:51000 "
	    "FIN_WAIT1, 65537 bytes not yet acknowledged");
	assert_true(sockdiag_orphan_busy(&s));
	s.inode = 4242;		/* a file holds it: not an orphan */
	assert_false(sockdiag_orphan_busy(&s));
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
	v4(&s.local, "10.77.0.180", 7400);
	v4(&s.remote, "10.77.0.10", 1);
	memset(buf, 'x', sizeof(buf));
	sockdiag_describe(&s, buf, sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_memory_equal(buf, "10.77.0.180", 11);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_text),
		cmocka_unit_test(test_v4_mapped_text),
		cmocka_unit_test(test_orphan_text),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
