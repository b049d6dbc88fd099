/* SPDX-License-Identifier: ISC */
/* Unit tests for the workload's byte pattern and address parsing: the
 * verifier must catch any wrong byte at its exact position, and the
 * pattern must differ by direction, connection and sequence number. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "addrport.h"
#include "pattern.h"

static void
test_check_finds_each_wrong_byte(void **state)
{
	uint8_t buf[4096];
	size_t i;

	(void)state;
	pattern_fill(42, DIR_C2S, 1000, buf, sizeof(buf));
	assert_int_equal(pattern_check(42, DIR_C2S, 1000, buf, sizeof(buf)),
	    sizeof(buf));
	for (i = 0; i < sizeof(buf); i += 97) {
		buf[i] ^= 0x01;
		assert_int_equal(pattern_check(42, DIR_C2S, 1000, buf,
		    sizeof(buf)), i);
		buf[i] ^= 0x01;
	}
}

static void
test_shifted_stream_is_caught(void **state)
{
	uint8_t buf[512];

	(void)state;
	/* a duplicated or lost byte shifts the stream by one */
	pattern_fill(7, DIR_S2C, 5000, buf, sizeof(buf));
	assert_true(pattern_check(7, DIR_S2C, 5001, buf, sizeof(buf)) < 8);
	assert_true(pattern_check(7, DIR_S2C, 4999, buf, sizeof(buf)) < 8);
}

static void
test_directions_and_keys_differ(void **state)
{
	uint8_t a[256], b[256];

	(void)state;
	pattern_fill(1, DIR_C2S, 0, a, sizeof(a));
	pattern_fill(1, DIR_S2C, 0, b, sizeof(b));
	assert_memory_not_equal(a, b, sizeof(a));
	pattern_fill(2, DIR_C2S, 0, b, sizeof(b));
	assert_memory_not_equal(a, b, sizeof(a));
}

static void
test_sequence_wraps(void **state)
{
	uint8_t buf[64];
	size_t i;

	(void)state;
	pattern_fill(9, DIR_C2S, 0xffffffe0u, buf, sizeof(buf));
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i],
		    pattern_byte(9, DIR_C2S, 0xffffffe0u + (uint32_t)i));
	assert_int_equal(buf[32], pattern_byte(9, DIR_C2S, 0));
}

static void
test_key_sees_v4_mapped_as_v4(void **state)
{
	struct sockaddr_storage c4, s4, c6, s6;
	socklen_t len;

	(void)state;
	assert_int_equal(addr_parse("10.77.0.10:40000", &c4, &len), 0);
	assert_int_equal(addr_parse("10.77.0.100:7000", &s4, &len), 0);
	assert_int_equal(addr_parse("[::ffff:10.77.0.10]:40000", &c6, &len), 0);
	assert_int_equal(addr_parse("[::ffff:10.77.0.100]:7000", &s6, &len), 0);
	assert_true(pattern_key(&c4, &s4) == pattern_key(&c6, &s6));
	assert_true(pattern_key(&c4, &s4) != pattern_key(&s4, &c4));
}

static void
test_addr_parse_rejects_bad_input(void **state)
{
	static const char *bad[] = {
		"", ":80", "10.0.0.1", "10.0.0.1:", "10.0.0.1:0",
		"10.0.0.1:65536", "10.0.0.1:80x", "[fd00::1:80", "fd00::1]:80",
		"300.1.1.1:80", "[zz::1]:80",
	};
	struct sockaddr_storage ss;
	socklen_t len;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(addr_parse(bad[i], &ss, &len), -1);
	assert_int_equal(addr_parse("[fd00:77::100]:7000", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_finds_each_wrong_byte),
		cmocka_unit_test(test_shifted_stream_is_caught),
		cmocka_unit_test(test_directions_and_keys_differ),
		cmocka_unit_test(test_sequence_wraps),
		cmocka_unit_test(test_key_sees_v4_mapped_as_v4),
		cmocka_unit_test(test_addr_parse_rejects_bad_input),
	};

	return cmocka_run_group_tests_name("pattern", tests, NULL, NULL);
}
