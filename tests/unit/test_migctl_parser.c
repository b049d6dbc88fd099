/* Unit tests for migctl/parser.c: commands and abbreviations map to the
 * right action and arguments; ambiguous, unknown, missing and invalid
 * arguments give the documented exit status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "migrd-protocol.h"
#include "parser.h"

static int
run(struct parse_result *r, const char *line)
{
	static char buf[512];
	char *argv[32], *tok, *save;
	int argc = 0, rc;
	FILE *saved = stderr;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok && argc < 31;
	    tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	stderr = fopen("/dev/null", "w");
	rc = parse(argc, argv, r);
	fclose(stderr);
	stderr = saved;
	return rc;
}

static void
test_commands_and_abbreviations(void **state)
{
	static const struct { const char *line; enum action a; } t[] = {
		{ "status", A_STATUS }, { "st", A_STATUS }, { "s", A_STATUS },
		{ "peers", A_PEERS }, { "p", A_PEERS },
		{ "history", A_HISTORY }, { "h", A_HISTORY },
		{ "ns list", A_NS_LIST }, { "n l", A_NS_LIST },
		{ "ns show web", A_NS_SHOW }, { "ns sh web", A_NS_SHOW },
		{ "ns delete web", A_NS_DELETE }, { "ns d web", A_NS_DELETE },
		{ "migrate web host2", A_MIGRATE }, { "m web host2", A_MIGRATE },
	};
	struct parse_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(run(&r, t[i].line), 0);
		assert_int_equal(r.action, t[i].a);
	}
	run(&r, "m web host2");
	assert_string_equal(r.ns, "web");
	assert_string_equal(r.host, "host2");
}

static void
test_ns_create(void **state)
{
	struct parse_result r;

	(void)state;
	assert_int_equal(run(&r, "ns create web --addr 10.77.0.100/24 "
	    "--a fd00:77::100/64 --mac 52:54:00:77:01:00 "
	    "--route default,10.77.0.1 --r 10.9.0.0/16,10.77.0.1"), 0);
	assert_int_equal(r.action, A_NS_CREATE);
	assert_string_equal(r.ns, "web");
	assert_int_equal(r.naddrs, 2);
	assert_string_equal(r.addrs[1], "fd00:77::100/64");
	assert_string_equal(r.mac, "52:54:00:77:01:00");
	assert_int_equal(r.nroutes, 2);
	assert_string_equal(r.routes[1], "10.9.0.0/16,10.77.0.1");
	/* "--" is a prefix of every option: ambiguous */
	assert_int_equal(run(&r, "ns create web -- 10.77.0.100/24"), 2);
	assert_int_equal(run(&r, "ns create web"), RES_INVALID_ARGUMENT);
	assert_int_equal(run(&r, "ns create web --addr"), 2);
	assert_int_equal(run(&r, "ns create web --addr 10.0.0.1"),
	    RES_INVALID_ARGUMENT);
	assert_int_equal(run(&r, "ns create web --addr 10.0.0.1/8 --mac "
	    "52:54:00:77:01:00 --mac 52:54:00:77:01:01"),
	    RES_INVALID_ARGUMENT);
	assert_int_equal(run(&r, "ns create we/b --addr 10.0.0.1/8"),
	    RES_INVALID_ARGUMENT);
}

static void
test_run(void **state)
{
	struct parse_result r;

	(void)state;
	assert_int_equal(run(&r, "run web -- /bin/sh -c true"), 0);
	assert_int_equal(r.action, A_RUN);
	assert_int_equal(r.argc, 3);
	assert_string_equal(r.argv[0], "/bin/sh");
	assert_string_equal(r.argv[1], "-c");
	assert_null(r.argv[3]);
	/* a bare name is looked up in PATH */
	assert_int_equal(run(&r, "run web -- sh"), 0);
	assert_int_equal(r.argv[0][0], '/');
	assert_int_equal(run(&r, "run web -- no-such-command-xyz"),
	    RES_INVALID_ARGUMENT);
	assert_int_equal(run(&r, "run web --"), RES_INVALID_ARGUMENT);
	assert_int_equal(run(&r, "run web"), 2);
	assert_int_equal(run(&r, "run web sh"), 2);
}

static void
test_errors(void **state)
{
	struct parse_result r;

	(void)state;
	assert_int_equal(run(&r, "bogus"), 2);
	assert_int_equal(run(&r, "ns"), 2);
	assert_int_equal(run(&r, "ns bogus"), 2);
	assert_int_equal(run(&r, "status extra"), 2);
	assert_int_equal(run(&r, "ns show"), 2);
	assert_int_equal(run(&r, "ns show a b"), 2);
	assert_int_equal(run(&r, "migrate web"), 2);
	assert_int_equal(run(&r, "ns delete abcdefghijklmnop"),
	    RES_INVALID_ARGUMENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_and_abbreviations),
		cmocka_unit_test(test_ns_create),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("migctl_parser", tests, NULL, NULL);
}
