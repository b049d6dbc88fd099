/* Unit tests for migctl/parser.c: commands and abbreviations map to the
 * right action and arguments; ambiguous, unknown, missing and invalid
 * arguments give the documented exit status.  And migctl/output*.c's
 * migration progress and report printing, on a memory stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migrd-protocol.h"
#include "output.h"
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

static void
test_cancel_resolve(void **state)
{
	struct parse_result r;

	(void)state;
	assert_int_equal(run(&r, "cancel web"), 0);
	assert_int_equal(r.action, A_CANCEL);
	assert_string_equal(r.ns, "web");
	assert_int_equal(run(&r, "c web"), 0);
	assert_int_equal(r.action, A_CANCEL);
	assert_int_equal(run(&r, "resolve web rollback"), 0);
	assert_int_equal(r.action, A_RESOLVE);
	assert_string_equal(r.ns, "web");
	assert_string_equal(r.outcome, "rollback");
	assert_int_equal(run(&r, "resolve web done"), 0);
	assert_string_equal(r.outcome, "done");
	assert_int_equal(run(&r, "res svc r"), 0);
	assert_int_equal(r.action, A_RESOLVE);
	assert_string_equal(r.ns, "svc");
	assert_string_equal(r.outcome, "rollback");
	assert_int_equal(run(&r, "re svc d"), 0);
	assert_string_equal(r.outcome, "done");
	/* "r" is now run or resolve */
	assert_int_equal(run(&r, "r svc d"), 2);
}

static void
test_cancel_resolve_errors(void **state)
{
	struct parse_result r;

	(void)state;
	assert_int_equal(run(&r, "cancel"), 2);
	assert_int_equal(run(&r, "cancel web extra"), 2);
	assert_int_equal(run(&r, "cancel we/b"), RES_INVALID_ARGUMENT);
	assert_int_equal(run(&r, "resolve"), 2);
	assert_int_equal(run(&r, "resolve web"), 2);
	assert_int_equal(run(&r, "resolve web commit"), 2);
	assert_int_equal(run(&r, "resolve web rollbackx"), 2);
	assert_int_equal(run(&r, "resolve web done extra"), 2);
	assert_int_equal(run(&r, "resolve abcdefghijklmnop done"),
	    RES_INVALID_ARGUMENT);
	assert_int_equal(run(&r, "resolve -x done"), RES_INVALID_ARGUMENT);
}

/* The error message goes to stderr: check it is there. */
static void
test_resolve_message(void **state)
{
	struct parse_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *saved = stderr;
	char *argv[] = { "resolve", "web", "maybe", NULL };

	(void)state;
	assert_non_null(stderr = open_memstream(&buf, &len));
	assert_int_equal(parse(3, argv, &r), 2);
	fclose(stderr);
	stderr = saved;
	assert_non_null(strstr(buf, "unknown argument 'maybe'"));
	assert_non_null(strstr(buf, "rollback, done"));
	free(buf);
}

/* Call f on the JSON text js and return what it printed (malloc'ed). */
static char *
capture(int (*f)(FILE *, json_t *), const char *js, int *rc)
{
	json_t *o = json_loads(js, JSON_DECODE_ANY, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	assert_non_null(o);
	assert_non_null(fp = open_memstream(&buf, &len));
	*rc = f(fp, o);
	fclose(fp);
	json_decref(o);
	return buf;
}

static void
test_progress(void **state)
{
	char *s;
	int rc;

	(void)state;
	s = capture(output_progress_text, "{\"phase\": \"prepared\", "
	    "\"at_ms\": 15.24, \"text\": \"host2 built svc, locked and "
	    "detached\"}", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "   15.2 ms  prepared   host2 built svc, "
	    "locked and detached\n");
	free(s);
	/* an integer is a number too; control characters are masked */
	s = capture(output_progress_text, "{\"phase\": \"frozen\", "
	    "\"at_ms\": 1234, \"text\": \"a\\u001b[2Jb\", \"new\": 1}", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, " 1234.0 ms  frozen     a?[2Jb\n");
	free(s);
	s = capture(output_progress_json, "{\"text\": \"t\", "
	    "\"phase\": \"dumped\", \"at_ms\": 15.2}", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "{\"progress\":{\"at_ms\":15.2,"
	    "\"phase\":\"dumped\",\"text\":\"t\"}}\n");
	free(s);
}

static void
test_progress_malformed(void **state)
{
	static const char *bad[] = {
		"{}",
		"[]",
		"\"prepared\"",
		"{\"phase\": \"p\", \"at_ms\": \"15\", \"text\": \"t\"}",
		"{\"phase\": 1, \"at_ms\": 15, \"text\": \"t\"}",
		"{\"phase\": \"p\", \"at_ms\": 15, \"text\": null}",
		"{\"phase\": \"p\", \"text\": \"t\"}",
		"{\"phase\": \"p\", \"at_ms\": -1, \"text\": \"t\"}",
	};
	size_t i;
	char *s;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = capture(output_progress_text, bad[i], &rc);
		assert_int_equal(rc, -1);
		assert_string_equal(s, "");
		free(s);
		s = capture(output_progress_json, bad[i], &rc);
		assert_int_equal(rc, -1);
		assert_string_equal(s, "");
		free(s);
	}
}

static const char report_moved[] =
    "{\"ns\":\"svc\",\"from\":\"host1\",\"to\":\"host2\","
    "\"mig\":\"host1-svc-1764758400123\",\"outcome\":\"moved\","
    "\"sockets\":{\"total\":21,\"tcp_listen\":1,\"tcp_established\":18,"
    "\"tcp_closing\":1,\"udp\":1,\"accepted\":0},"
    "\"bytes\":{\"queued\":12345,\"streamed\":67890},"
    "\"ms\":{\"precopy\":10.1,\"freeze\":3.2,\"dump\":20.5,"
    "\"transfer\":25.0,\"restore\":18.7,\"commit\":30.2,"
    "\"downtime\":95.4,\"total\":140.9}}";

static void
test_report(void **state)
{
	char *s;
	int rc;

	(void)state;
	s = capture(output_report, report_moved, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s,
	    "svc moved host1 -> host2\n"
	    "  migration  host1-svc-1764758400123\n"
	    "  sockets            21  (1 listening, 18 established, "
	    "1 half-closed, 1 udp; 0 taken from accept queues)\n"
	    "  queued          12345  bytes\n"
	    "  streamed        67890  bytes\n"
	    "  phase              ms\n"
	    "  pre-copy         10.1\n"
	    "  freeze            3.2\n"
	    "  dump             20.5\n"
	    "  transfer         25.0\n"
	    "  restore          18.7\n"
	    "  commit           30.2\n"
	    "  downtime         95.4  (freeze to thaw)\n"
	    "  total           140.9\n");
	free(s);
	s = capture(output_report_summary, report_moved, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "moved, sockets 21, downtime 95.4 ms\n");
	free(s);
}

static void
test_report_failed(void **state)
{
	char *s;
	int rc;

	(void)state;
	/* phases that did not happen print "-"; integers are numbers */
	s = capture(output_report, "{\"ns\":\"svc\",\"from\":\"host1\","
	    "\"to\":\"host2\",\"mig\":\"m1\",\"outcome\":\"rolled-back\","
	    "\"reason\":\"host2: restore failed\",\"sockets\":{\"total\":3},"
	    "\"ms\":{\"precopy\":1,\"freeze\":2.26,\"downtime\":\"x\","
	    "\"total\":50}}", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s,
	    "svc stays on host1: rolled back: host2: restore failed\n"
	    "  migration  m1\n"
	    "  sockets             3  (- listening, - established, "
	    "- half-closed, - udp; - taken from accept queues)\n"
	    "  queued              -  bytes\n"
	    "  streamed            -  bytes\n"
	    "  phase              ms\n"
	    "  pre-copy          1.0\n"
	    "  freeze            2.3\n"
	    "  dump                -\n"
	    "  transfer            -\n"
	    "  restore             -\n"
	    "  commit              -\n"
	    "  downtime            -  (freeze to thaw)\n"
	    "  total            50.0\n");
	free(s);
	s = capture(output_report, "{\"ns\":\"svc\",\"from\":\"host1\","
	    "\"to\":\"host2\",\"outcome\":\"refused\",\"reason\":\"busy\"}",
	    &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(s, "svc stays on host1: refused: busy\n"));
	assert_non_null(strstr(s, "  migration  -\n  sockets             -\n"));
	assert_non_null(strstr(s, "  total               -\n"));
	free(s);
	s = capture(output_report, "{\"ns\":\"svc\",\"from\":\"host1\","
	    "\"to\":\"host2\",\"outcome\":\"in-doubt\"}", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(s, "svc in doubt: COMMIT sent to host2, no "
	    "answer\n  the namespace stays locked on host1; run \"migctl "
	    "resolve svc rollback|done\"\n"));
	free(s);
	s = capture(output_report_summary, "{\"outcome\":\"refused\"}", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "refused, sockets -, downtime -\n");
	free(s);
	/* not a report at all: nothing printed */
	s = capture(output_report, "[1]", &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(s, "");
	free(s);
	s = capture(output_report, "{\"ns\":\"svc\"}", &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(s, "");
	free(s);
	s = capture(output_report_summary, "null", &rc);
	assert_int_equal(rc, -1);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_and_abbreviations),
		cmocka_unit_test(test_ns_create),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_cancel_resolve),
		cmocka_unit_test(test_cancel_resolve_errors),
		cmocka_unit_test(test_resolve_message),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_progress_malformed),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_report_failed),
	};

	return cmocka_run_group_tests_name("migctl_parser", tests, NULL, NULL);
}
