/* SPDX-License-Identifier: ISC */
/* Unit tests for common/nsarg.c: what "ns create" and "run" accept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "nsarg.h"

static void
test_names(void **state)
{
	static const char *const good[] = { "a", "web1", "A-b_c",
	    "abcdefghijklmn" };
	static const char *const bad[] = { "", "-a", "_a", "a b", "a/b",
	    "a.b", "abcdefghijklmno", "..", "a\n" };
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(nsarg_name(good[i], err, sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(nsarg_name(bad[i], err, sizeof(err)), -1);
		assert_true(strlen(err) > 0);
	}
	nsarg_name("abcdefghijklmno", err, sizeof(err));
	assert_string_equal(err, "namespace name 'abcdefghijklmno' is longer "
	    "than 14 characters");
}

static void
test_addrs(void **state)
{
	struct nsarg_addr a;
	char err[128];

	(void)state;
	assert_int_equal(nsarg_addr("10.77.0.100/24", &a, err, sizeof(err)), 0);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(a.plen, 24);
	assert_string_equal(a.text, "10.77.0.100/24");
	assert_int_equal(nsarg_addr("FD00:77:0::100/64", &a, err,
	    sizeof(err)), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_string_equal(a.text, "fd00:77::100/64");
	assert_int_equal(nsarg_addr("10.77.0.100", &a, err, sizeof(err)), -1);
	assert_string_equal(err, "address '10.77.0.100' needs a prefix length "
	    "(ADDR/PLEN)");
	assert_int_equal(nsarg_addr("10.77.0.300/24", &a, err, sizeof(err)),
	    -1);
	assert_int_equal(nsarg_addr("10.77.0.1/33", &a, err, sizeof(err)), -1);
	assert_int_equal(nsarg_addr("10.77.0.1/024", &a, err, sizeof(err)), -1);
	assert_int_equal(nsarg_addr("10.77.0.1/", &a, err, sizeof(err)), -1);
	assert_int_equal(nsarg_addr("10.77.0.1/2x", &a, err, sizeof(err)), -1);
	assert_int_equal(nsarg_addr("fd00::1/129", &a, err, sizeof(err)), -1);
	assert_int_equal(nsarg_addr("fd00::1/128", &a, err, sizeof(err)), 0);
}

static void
test_macs(void **state)
{
	uint8_t m[6];
	char err[128];

	(void)state;
	assert_int_equal(nsarg_mac("52:54:00:77:00:64", m, err, sizeof(err)),
	    0);
	assert_int_equal(m[5], 0x64);
	assert_int_equal(nsarg_mac("52:54:00:77:00:6", m, err, sizeof(err)),
	    -1);
	assert_int_equal(nsarg_mac("52:54:00:77:00:6g", m, err, sizeof(err)),
	    -1);
	assert_int_equal(nsarg_mac("52-54-00-77-00-64", m, err, sizeof(err)),
	    -1);
	assert_int_equal(nsarg_mac("52:54:00:77:00:640", m, err, sizeof(err)),
	    -1);
	assert_int_equal(nsarg_mac(" 2:54:00:77:00:64", m, err, sizeof(err)),
	    -1);
	assert_int_equal(nsarg_mac("01:00:5e:00:00:01", m, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "MAC '01:00:5e:00:00:01' is a multicast "
	    "address");
	assert_int_equal(nsarg_mac("00:00:00:00:00:00", m, err, sizeof(err)),
	    -1);
}

static void
test_routes(void **state)
{
	struct nsarg_route r;
	char err[128];

	(void)state;
	assert_int_equal(nsarg_route("default,10.77.0.1", &r, err,
	    sizeof(err)), 0);
	assert_true(r.is_default);
	assert_int_equal(r.family, AF_INET);
	assert_string_equal(r.text, "default,10.77.0.1");
	assert_int_equal(nsarg_route("10.1.0.0/16,10.77.0.1", &r, err,
	    sizeof(err)), 0);
	assert_false(r.is_default);
	assert_string_equal(r.dst.text, "10.1.0.0/16");
	assert_int_equal(nsarg_route("default,fd00:77::1", &r, err,
	    sizeof(err)), 0);
	assert_int_equal(r.family, AF_INET6);
	assert_int_equal(nsarg_route("fd00:1::/64,10.77.0.1", &r, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "route 'fd00:1::/64,10.77.0.1' mixes IPv4 "
	    "and IPv6");
	assert_int_equal(nsarg_route("default", &r, err, sizeof(err)), -1);
	assert_int_equal(nsarg_route("default,gw", &r, err, sizeof(err)), -1);
}

static void
test_argv(void **state)
{
	const char *ok[] = { "/usr/bin/socat", "-", "TCP-LISTEN:7" };
	const char *rel[] = { "socat" };
	char err[128], big[2000];
	const char *long_arg[] = { "/bin/echo", big };

	(void)state;
	assert_int_equal(nsarg_argv(ok, 3, err, sizeof(err)), 0);
	assert_int_equal(nsarg_argv(ok, 0, err, sizeof(err)), -1);
	assert_int_equal(nsarg_argv(rel, 1, err, sizeof(err)), -1);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(nsarg_argv(long_arg, 2, err, sizeof(err)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_addrs),
		cmocka_unit_test(test_macs),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_argv),
	};

	return cmocka_run_group_tests_name("nsarg", tests, NULL, NULL);
}
