/* SPDX-License-Identifier: ISC */
/* Unit tests for migctl/parser.c: commands and abbreviations map to the
 * right action and arguments; ambiguous, unknown, missing and invalid
 * arguments give the documented exit status and message.  And
 * migctl/output*.c's migration progress and report printing, on a
 * memory stream, and -j's one JSON object per line, on stdout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
	assert_int_equal(r.checkpoint, 0);
}

/* run --checkpoint: before "--" only, once, and it reaches the request */
static void
test_run_checkpoint(void **state)
{
	struct parse_result r;
	json_t *req;
	uint16_t type;

	(void)state;
	assert_int_equal(run(&r, "run web --checkpoint -- /bin/cat"), 0);
	assert_int_equal(r.checkpoint, 1);
	assert_string_equal(r.argv[0], "/bin/cat");
	assert_non_null(req = parse_request(&r, &type));
	assert_true(json_is_true(json_object_get(req, "checkpoint")));
	json_decref(req);
	/* a prefix will do, as for every option */
	assert_int_equal(run(&r, "run web --check -- /bin/cat"), 0);
	assert_int_equal(r.checkpoint, 1);
	/* after "--" it is the program's */
	assert_int_equal(run(&r, "run web -- /bin/echo --checkpoint"), 0);
	assert_int_equal(r.checkpoint, 0);
	assert_string_equal(r.argv[1], "--checkpoint");
	assert_non_null(req = parse_request(&r, &type));
	assert_null(json_object_get(req, "checkpoint"));
	json_decref(req);
	assert_int_equal(run(&r, "run web --checkpoint --checkpoint -- /bin/cat"),
	    2);
	assert_int_equal(run(&r, "run web --checkpoint"), 2);
}

/* run --gate: like --checkpoint, and never with it */
static void
test_run_gate(void **state)
{
	struct parse_result r;
	json_t *req;
	uint16_t type;

	(void)state;
	assert_int_equal(run(&r, "run web --gate -- /bin/cat"), 0);
	assert_int_equal(r.gate, 1);
	assert_int_equal(r.checkpoint, 0);
	assert_non_null(req = parse_request(&r, &type));
	assert_true(json_is_true(json_object_get(req, "gate")));
	assert_null(json_object_get(req, "checkpoint"));
	json_decref(req);
	assert_int_equal(run(&r, "run web -- /bin/echo --gate"), 0);
	assert_int_equal(r.gate, 0);
	assert_non_null(req = parse_request(&r, &type));
	assert_null(json_object_get(req, "gate"));
	json_decref(req);
	/* one mode: either option ends the options */
	assert_int_equal(run(&r, "run web --gate --checkpoint -- /bin/cat"), 2);
	assert_int_equal(run(&r, "run web --checkpoint --gate -- /bin/cat"), 2);
	assert_int_equal(run(&r, "run web --gate"), 2);
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
	assert_int_equal(run(&r, "ca web"), 0);
	assert_int_equal(r.action, A_CANCEL);
	/* "c" is cancel or check */
	assert_int_equal(run(&r, "c web"), RES_BAD_REQUEST);
	assert_int_equal(run(&r, "check web"), 0);
	assert_int_equal(r.action, A_CHECK);
	assert_string_equal(r.ns, "web");
	assert_string_equal(r.host, "");
	assert_int_equal(run(&r, "ch web host2"), 0);
	assert_int_equal(r.action, A_CHECK);
	assert_string_equal(r.host, "host2");
	assert_int_equal(run(&r, "check web host2 extra"), RES_BAD_REQUEST);
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
	assert_int_equal(r.force, 0);
	assert_int_equal(run(&r, "resolve web rollback force"), 0);
	assert_int_equal(r.force, 1);
	assert_string_equal(r.outcome, "rollback");
	assert_int_equal(run(&r, "res svc d f"), 0);
	assert_int_equal(r.force, 1);
	assert_int_equal(run(&r, "resolve svc done"), 0);
	assert_int_equal(r.force, 0);
}

/* force travels as "force": true, and only when given */
static void
test_resolve_force_request(void **state)
{
	struct parse_result r;
	uint16_t type;
	json_t *req;

	(void)state;
	assert_int_equal(run(&r, "resolve web rollback force"), 0);
	assert_non_null(req = parse_request(&r, &type));
	assert_int_equal(type, MSG_CTL_RESOLVE);
	assert_true(json_is_true(json_object_get(req, "force")));
	assert_string_equal(json_string_value(json_object_get(req,
	    "outcome")), "rollback");
	json_decref(req);
	assert_int_equal(run(&r, "resolve web done"), 0);
	assert_non_null(req = parse_request(&r, &type));
	assert_null(json_object_get(req, "force"));
	json_decref(req);
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

/* parse() on argv, its stderr in *msg (malloc'ed). */
static int
parse_msg(struct parse_result *r, int argc, char *argv[], char **msg)
{
	FILE *saved = stderr;
	size_t len = 0;
	int rc;

	*msg = NULL;
	assert_non_null(stderr = open_memstream(msg, &len));
	rc = parse(argc, argv, r);
	fclose(stderr);
	stderr = saved;
	return rc;
}

/* The same on a line split at spaces ("" is no word at all). */
static int
run_msg(struct parse_result *r, const char *line, char **msg)
{
	static char buf[2048];
	char *argv[128], *tok, *save;
	int argc = 0;

	assert_true(strlen(line) < sizeof(buf));
	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save)) {
		assert_true(argc < 127);
		argv[argc++] = tok;
	}
	argv[argc] = NULL;
	return parse_msg(r, argc, argv, msg);
}

/* line exits with rc after printing exactly want */
static void
check_msg(const char *line, int rc, const char *want)
{
	struct parse_result r;
	char *msg;

	assert_int_equal(run_msg(&r, line, &msg), rc);
	assert_string_equal(msg, want);
	free(msg);
}

#define MAIN_WORDS	"status, peers, ns, run, migrate, check, history, " \
			"cancel, resolve, evacuate"
#define OPT_WORDS	"--addr, --mac, --route, <end>"

static void
test_missing_messages(void **state)
{
	static const char *need_ns[] = {
		"ns show", "ns delete", "ns create", "run", "migrate",
		"cancel", "resolve"
	};
	size_t i;

	(void)state;
	check_msg("", 2, "migctl: missing argument\n"
	    "valid here: " MAIN_WORDS "\n");
	check_msg("ns", 2, "migctl: missing argument\n"
	    "valid here: list, show, create, delete\n");
	for (i = 0; i < sizeof(need_ns) / sizeof(need_ns[0]); i++)
		check_msg(need_ns[i], 2, "migctl: missing argument\n"
		    "valid here: NS\n");
	check_msg("migrate web", 2, "migctl: missing argument\n"
	    "valid here: HOST\n");
	check_msg("run web", 2, "migctl: missing argument\n"
	    "valid here: --checkpoint, --gate, --\n");
	check_msg("resolve web", 2, "migctl: missing argument\n"
	    "valid here: rollback, done\n");
	/* what the tables cannot say */
	check_msg("ns create web", RES_INVALID_ARGUMENT,
	    "migctl: ns create: at least one --addr is needed\n");
	check_msg("ns create web --mac 52:54:00:77:01:00",
	    RES_INVALID_ARGUMENT,
	    "migctl: ns create: at least one --addr is needed\n");
	check_msg("run web --", RES_INVALID_ARGUMENT,
	    "migctl: run: no command after --\n");
	/* an option's value; the message names it in full */
	check_msg("ns create web --addr", 2, "migctl: --addr needs a value\n");
	check_msg("ns create web --addr 10.0.0.1/8 --r", 2,
	    "migctl: --route needs a value\n");
	check_msg("ns create web --addr 10.0.0.1/8 --m", 2,
	    "migctl: --mac needs a value\n");
}

static void
test_extra_and_unknown_messages(void **state)
{
	static const char *ends[] = {
		"status", "peers", "history", "ns list", "ns show web",
		"ns delete web", "migrate web host2", "cancel web",
		"resolve web done force"
	};
	char line[128], *argv[4], *msg;
	struct parse_result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		snprintf(line, sizeof(line), "%s extra", ends[i]);
		check_msg(line, 2, "migctl: unknown argument 'extra'\n"
		    "valid here: <end>\n");
	}
	check_msg("resolve web done extra", 2, "migctl: unknown argument "
	    "'extra'\nvalid here: force, <end>\n");
	/* -j is an option of migctl, not of the command */
	check_msg("ns list -j", 2, "migctl: unknown argument '-j'\n"
	    "valid here: <end>\n");
	check_msg("bogus", 2, "migctl: unknown argument 'bogus'\n"
	    "valid here: " MAIN_WORDS "\n");
	check_msg("statusx", 2, "migctl: unknown argument 'statusx'\n"
	    "valid here: " MAIN_WORDS "\n");
	check_msg("ns bogus", 2, "migctl: unknown argument 'bogus'\n"
	    "valid here: list, show, create, delete\n");
	check_msg("ns create web --addr 10.0.0.1/8 bogus", 2,
	    "migctl: unknown argument 'bogus'\nvalid here: " OPT_WORDS "\n");
	check_msg("ns create web --addr 10.0.0.1/8 --addrx 10.0.0.2/8", 2,
	    "migctl: unknown argument '--addrx'\nvalid here: " OPT_WORDS
	    "\n");
	check_msg("resolve web commit", 2, "migctl: unknown argument "
	    "'commit'\nvalid here: rollback, done\n");
	/* run's separator is "--" in full, never a prefix */
	check_msg("run web sh", 2, "migctl: unknown argument 'sh'\n"
	    "valid here: --checkpoint, --gate, --\n");
	check_msg("run web - sh", 2, "migctl: unknown argument '-'\n"
	    "valid here: --checkpoint, --gate, --\n");
	check_msg("run web --- sh", 2, "migctl: unknown argument '---'\n"
	    "valid here: --checkpoint, --gate, --\n");
	check_msg("run web --checkpoint sh", 2, "migctl: unknown argument "
	    "'sh'\nvalid here: --\n");
	/* the empty word is no keyword's prefix */
	argv[0] = "";
	argv[1] = NULL;
	assert_int_equal(parse_msg(&r, 1, argv, &msg), 2);
	assert_string_equal(msg, "migctl: unknown argument ''\n"
	    "valid here: " MAIN_WORDS "\n");
	free(msg);
	argv[0] = "ns";
	argv[1] = "";
	argv[2] = NULL;
	assert_int_equal(parse_msg(&r, 2, argv, &msg), 2);
	assert_string_equal(msg, "migctl: unknown argument ''\n"
	    "valid here: list, show, create, delete\n");
	free(msg);
	/* but it is a (bad) namespace name */
	argv[1] = "show";
	argv[2] = "";
	argv[3] = NULL;
	assert_int_equal(parse_msg(&r, 3, argv, &msg), RES_INVALID_ARGUMENT);
	assert_string_equal(msg, "migctl: namespace name is empty\n");
	free(msg);
}

static void
test_ambiguous_messages(void **state)
{
	struct parse_result r;
	char *msg;

	(void)state;
	check_msg("r web", 2, "migctl: 'r' is ambiguous\n"
	    "valid here: " MAIN_WORDS "\n");
	check_msg("ns create web --addr 10.0.0.1/8 --", 2,
	    "migctl: '--' is ambiguous\nvalid here: " OPT_WORDS "\n");
	check_msg("ns create web --addr 10.0.0.1/8 -", 2,
	    "migctl: '-' is ambiguous\nvalid here: " OPT_WORDS "\n");
	/* one more letter decides */
	assert_int_equal(run_msg(&r, "ru web -- /bin/sh", &msg), 0);
	assert_int_equal(r.action, A_RUN);
	assert_string_equal(msg, "");
	free(msg);
	assert_int_equal(run_msg(&r, "re web r", &msg), 0);
	assert_int_equal(r.action, A_RESOLVE);
	assert_string_equal(msg, "");
	free(msg);
	assert_int_equal(run_msg(&r, "ns c web --ad 10.0.0.1/8 --ro "
	    "default,10.0.0.254 --ma 52:54:00:77:01:00", &msg), 0);
	assert_int_equal(r.action, A_NS_CREATE);
	assert_int_equal(r.naddrs, 1);
	assert_int_equal(r.nroutes, 1);
	assert_string_equal(r.mac, "52:54:00:77:01:00");
	assert_string_equal(msg, "");
	free(msg);
}

static void
test_evacuate(void **state)
{
	struct parse_result r;

	(void)state;
	assert_int_equal(run(&r, "evacuate host2"), 0);
	assert_int_equal(r.action, A_EVACUATE);
	assert_string_equal(r.host, "host2");
	assert_int_equal(r.parallel, 1);
	assert_int_equal(run(&r, "e host2 p 3"), 0);
	assert_int_equal(r.action, A_EVACUATE);
	assert_int_equal(r.parallel, 3);
	assert_int_equal(run(&r, "evacuate host2 parallel 8"), 0);
	assert_int_equal(r.parallel, EVACUATE_PARALLEL_MAX);
	check_msg("evacuate", 2, "migctl: missing argument\n"
	    "valid here: HOST\n");
	check_msg("evacuate host2 parallel", 2,
	    "migctl: parallel needs a value\n");
	check_msg("evacuate host2 parallel 0", 7,
	    "migctl: parallel: '0' is not a number from 1 to 8\n");
	check_msg("evacuate host2 parallel 9", 7,
	    "migctl: parallel: '9' is not a number from 1 to 8\n");
	check_msg("evacuate host2 parallel 2x", 7,
	    "migctl: parallel: '2x' is not a number from 1 to 8\n");
	check_msg("evacuate host2 parallel -1", 7,
	    "migctl: parallel: '-1' is not a number from 1 to 8\n");
	check_msg("evacuate host2 parallel 2 3", 2,
	    "migctl: unknown argument '3'\nvalid here: <end>\n");
	/* its first request is the namespace list (the fuzzer found the
	 * table of requests one short) */
	{
		uint16_t type = 0;
		json_t *req;

		assert_int_equal(run(&r, "evacuate host2"), 0);
		req = parse_request(&r, &type);
		assert_non_null(req);
		assert_int_equal(type, MSG_CTL_NS_LIST);
		assert_int_equal(json_object_size(req), 0);
		json_decref(req);
	}
	check_msg("evacuate host2 now", 2,
	    "migctl: unknown argument 'now'\nvalid here: parallel, <end>\n");
}

static void
test_option_values(void **state)
{
	struct parse_result r;
	char *msg;

	(void)state;
	/* a second --mac is refused before its value is looked at */
	check_msg("ns create web --addr 10.0.0.1/8 --mac 52:54:00:77:01:00 "
	    "--mac bogus", RES_INVALID_ARGUMENT, "migctl: --mac given twice\n");
	check_msg("ns create web --addr 10.0.0.1/8 --mac 01:00:00:00:00:00",
	    RES_INVALID_ARGUMENT,
	    "migctl: MAC '01:00:00:00:00:00' is a multicast address\n");
	/* nsarg's reasons, after "migctl: " */
	assert_int_equal(run_msg(&r, "ns create web --addr 10.0.0.1", &msg),
	    RES_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "migctl: address '10.0.0.1'"));
	free(msg);
	assert_int_equal(run_msg(&r, "ns create web --addr 10.0.0.1/8 "
	    "--route bogus", &msg), RES_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "migctl: route 'bogus'"));
	free(msg);
	/* the word after an option is its value, whatever it looks like */
	assert_int_equal(run_msg(&r, "ns create web --addr --mac", &msg),
	    RES_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "'--mac'"));
	free(msg);
	/* options in any order, the namespace name checked first */
	check_msg("ns create -web --addr 10.0.0.1/8", RES_INVALID_ARGUMENT,
	    "migctl: namespace name '-web': only letters, digits, '-' and "
	    "'_' (not first) are allowed\n");
}

/* "ns create web" with n times "opt val" appended */
static int
create_with(struct parse_result *r, const char *opt, const char *val,
    int n, char **msg)
{
	char line[2048];
	size_t off;
	int i;

	off = (size_t)snprintf(line, sizeof(line), "ns create web");
	if (strcmp(opt, "--addr") != 0)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
		    " --addr 10.0.0.1/8");
	for (i = 0; i < n; i++) {
		off += (size_t)snprintf(line + off, sizeof(line) - off,
		    " %s %s", opt, val);
		assert_true(off < sizeof(line));
	}
	return run_msg(r, line, msg);
}

static void
test_limits(void **state)
{
	struct parse_result r;
	char host[80], line[128], *msg, *argv[NSARG_ARGV_MAX + 5];
	static char longarg[NSARG_ARG_LEN + 1];
	int i;

	(void)state;
	assert_int_equal(create_with(&r, "--addr", "10.0.0.1/8",
	    NSARG_ADDRS_MAX, &msg), 0);
	assert_int_equal(r.naddrs, NSARG_ADDRS_MAX);
	free(msg);
	assert_int_equal(create_with(&r, "--addr", "10.0.0.1/8",
	    NSARG_ADDRS_MAX + 1, &msg), RES_INVALID_ARGUMENT);
	assert_string_equal(msg, "migctl: too many --addr\n");
	free(msg);
	assert_int_equal(create_with(&r, "--route", "default,10.0.0.254",
	    NSARG_ROUTES_MAX, &msg), 0);
	assert_int_equal(r.nroutes, NSARG_ROUTES_MAX);
	free(msg);
	assert_int_equal(create_with(&r, "--route", "default,10.0.0.254",
	    NSARG_ROUTES_MAX + 1, &msg), RES_INVALID_ARGUMENT);
	assert_string_equal(msg, "migctl: too many --route\n");
	free(msg);

	/* a host name fills at most 63 bytes */
	memset(host, 'h', 63);
	host[63] = '\0';
	snprintf(line, sizeof(line), "migrate web %s", host);
	assert_int_equal(run_msg(&r, line, &msg), 0);
	assert_string_equal(r.host, host);
	free(msg);
	snprintf(line, sizeof(line), "migrate web %sh", host);
	check_msg(line, RES_INVALID_ARGUMENT, "migctl: host name too long\n");

	/* run: up to NSARG_ARGV_MAX words after "--" */
	argv[0] = "run";
	argv[1] = "web";
	argv[2] = "--";
	argv[3] = "/bin/sh";
	for (i = 4; i < NSARG_ARGV_MAX + 4; i++)
		argv[i] = "x";
	argv[i] = NULL;
	assert_int_equal(parse_msg(&r, 3 + NSARG_ARGV_MAX, argv, &msg), 0);
	assert_int_equal(r.argc, NSARG_ARGV_MAX);
	assert_null(r.argv[NSARG_ARGV_MAX]);
	free(msg);
	assert_int_equal(parse_msg(&r, 4 + NSARG_ARGV_MAX, argv, &msg),
	    RES_INVALID_ARGUMENT);
	assert_string_equal(msg, "migctl: run: too many arguments\n");
	free(msg);
	memset(longarg, 'a', NSARG_ARG_LEN);
	argv[4] = longarg;
	assert_int_equal(parse_msg(&r, 5, argv, &msg), RES_INVALID_ARGUMENT);
	assert_string_equal(msg, "migctl: argument 1 is longer than 1023\n");
	free(msg);
}

static void
test_run_lookup(void **state)
{
	struct parse_result r;
	char *msg, *path, cwd[4096], want[4096];

	(void)state;
	check_msg("run web -- no-such-command-xyz", RES_INVALID_ARGUMENT,
	    "migctl: no-such-command-xyz: command not found in PATH\n");
	check_msg("run web -- ./no/such/cmd", RES_INVALID_ARGUMENT,
	    "migctl: ./no/such/cmd: No such file or directory\n");
	/* the words after "--" are the command's, dashes and all */
	assert_int_equal(run_msg(&r, "run web -- /bin/sh -c -- --addr",
	    &msg), 0);
	assert_int_equal(r.argc, 4);
	assert_string_equal(r.argv[0], "/bin/sh");
	assert_string_equal(r.argv[2], "--");
	assert_string_equal(r.argv[3], "--addr");
	free(msg);
	/* a relative path is made absolute */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(realpath("/bin/sh", want));
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(run_msg(&r, "run web -- bin/sh", &msg), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_ptr_equal(r.argv[0], r.resolved);
	assert_string_equal(r.argv[0], want);
	free(msg);
	/* PATH: empty and relative entries are skipped; unset, a default */
	path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	setenv("PATH", "::relative:/no/such/dir:/bin", 1);
	assert_int_equal(run_msg(&r, "run web -- sh", &msg), 0);
	assert_string_equal(r.argv[0], "/bin/sh");
	free(msg);
	setenv("PATH", "bin", 1);
	check_msg("run web -- sh", RES_INVALID_ARGUMENT,
	    "migctl: sh: command not found in PATH\n");
	unsetenv("PATH");
	assert_int_equal(run_msg(&r, "run web -- sh", &msg), 0);
	assert_int_equal(r.argv[0][0], '/');
	free(msg);
	if (path != NULL)
		setenv("PATH", path, 1);
	free(path);
}

/* A word a JSON request cannot carry is refused, not dropped: "run"
 * sent an argv without it (found by tests/fuzz/fuzz_control). */
static void
test_not_utf8(void **state)
{
	struct parse_result r;
	uint16_t type;
	json_t *req;
	char *msg;

	(void)state;
	check_msg("run web -- /bin/echo \xff", RES_INVALID_ARGUMENT,
	    "migctl: argument 5 is not valid UTF-8 (requests are JSON)\n");
	check_msg("migrate web h\xc3", RES_INVALID_ARGUMENT,
	    "migctl: argument 3 is not valid UTF-8 (requests are JSON)\n");
	assert_int_equal(run_msg(&r, "run web -- /bin/echo \xc3\xa9t\xc3\xa9",
	    &msg), 0);
	free(msg);
	assert_non_null(req = parse_request(&r, &type));
	assert_int_equal(type, MSG_CTL_RUN);
	assert_int_equal(json_array_size(json_object_get(req, "argv")), 2);
	json_decref(req);
}

/* Nothing of an earlier command is left in the result. */
static void
test_result_reset(void **state)
{
	struct parse_result r;

	(void)state;
	assert_int_equal(run(&r, "ns create web --addr 10.0.0.1/8 --mac "
	    "52:54:00:77:01:00 --route default,10.0.0.254"), 0);
	assert_int_equal(run(&r, "status"), 0);
	assert_int_equal(r.action, A_STATUS);
	assert_string_equal(r.ns, "");
	assert_int_equal(r.naddrs, 0);
	assert_int_equal(r.nroutes, 0);
	assert_null(r.mac);
	assert_int_equal(run(&r, "run web -- /bin/sh"), 0);
	assert_int_equal(run(&r, "resolve svc d force"), 0);
	assert_int_equal(run(&r, "ns list"), 0);
	assert_int_equal(r.force, 0);
	assert_int_equal(run(&r, "resolve svc d"), 0);
	assert_int_equal(r.argc, 0);
	assert_null(r.argv[0]);
	assert_string_equal(r.host, "");
}

/* --help names every command with its arguments, and what -j prints. */
static void
test_usage(void **state)
{
	static const char *want[] = {
		"usage: migctl [-j] [-s socket] command [argument ...]\n",
		"\n  status ", "\n  peers ", "\n  ns list ", "\n  ns show NS ",
		"\n  ns create NS --addr ADDR/PLEN [--addr ...] [--mac MAC]\n",
		"[--route DEST,GW ...]\n", "\n  ns delete NS ",
		"\n  run NS [--checkpoint | --gate] -- CMD [ARG ...]",
		"\n  migrate NS HOST ",
		"\n  cancel NS ", "\n  resolve NS rollback|done ",
		"\n  history ", "JSON output, one object per line",
		"(default " MIGR_CONTROL_SOCKET ")", "--version",
	};
	char *buf = NULL;
	size_t i, len = 0;
	FILE *fp;

	(void)state;
	assert_non_null(fp = open_memstream(&buf, &len));
	parser_usage(fp);
	fclose(fp);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(buf, want[i]) == NULL)
			fail_msg("usage lacks \"%s\"", want[i]);
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
    "\"bytes\":{\"queued\":12345,\"streamed\":6789,\"encoded\":67890},"
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
	    "  streamed         6789  bytes on the channel, 67890 before compression\n"
	    "  phase              ms\n"
	    "  pre-copy         10.1\n"
	    "  freeze            3.2\n"
	    "  dump             20.5\n"
	    "  transfer         25.0\n"
	    "  restore          18.7\n"
	    "  commit           30.2\n"
	    "  downtime         95.4  (lock to thaw)\n"
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
	    "  downtime            -  (lock to thaw)\n"
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

/* -j: what a migration prints (its progress frames, then the result
 * with the report) and what other commands print, successes and
 * failures; every object must be on a line of its own. */
static const char *json_progress_seq[] = {
	"{\"phase\":\"prepare\",\"at_ms\":0.4,"
	    "\"text\":\"PREPARE sent to host2\"}",
	"{\"phase\":\"prepared\",\"at_ms\":15.24,"
	    "\"text\":\"host2 built svc, locked and detached\"}",
	"{\"phase\":\"freeze\",\"at_ms\":40,\"text\":\"two\\nlines\"}",
	"{\"phase\":\"dump\",\"at_ms\":61.5,\"text\":\"21 sockets\","
	    "\"extra\":{\"a\":[1,2,{\"b\":null}]}}",
	"{\"phase\":\"live\",\"at_ms\":120.25,\"text\":\"host2 is live\"}",
	"{\"phase\":\"done\",\"at_ms\":140.9,\"text\":\"svc deleted here\"}",
};

static const struct {
	enum action	 a;
	int		 code;
	const char	*message;
	const char	*data;		/* NULL: none */
} json_results[] = {
	{ A_MIGRATE, RES_OK, "svc moved to host2", report_moved },
	{ A_MIGRATE, RES_ROLLED_BACK, "host2: restore failed\n(rolled back)",
	    "{\"ns\":\"svc\",\"from\":\"host1\",\"to\":\"host2\","
	    "\"outcome\":\"rolled-back\",\"reason\":\"restore failed\","
	    "\"sockets\":{\"total\":3},\"ms\":{\"precopy\":1,\"total\":50}}" },
	{ A_NS_LIST, RES_OK, "ok", "{\"namespaces\":["
	    "{\"name\":\"web\",\"addrs\":[\"10.77.0.100/24\","
	    "\"fd00:77::100/64\"],\"tasks\":[12,13]},"
	    "{\"name\":\"svc\",\"addrs\":[],\"tasks\":[]}]}" },
	{ A_STATUS, RES_OK, "ok", "{\"host\":\"host1\",\"protocol\":1,"
	    "\"migrations\":[{\"ns\":\"svc\",\"role\":\"source\","
	    "\"state\":\"in-doubt\",\"peer\":\"host2\",\"since\":1764758400,"
	    "\"mig\":\"m1\"}]}" },
	{ A_HISTORY, RES_OK, "ok", "{\"events\":[{\"time\":1764758400,"
	    "\"kind\":\"migrate\",\"event\":\"svc moved to host2\","
	    "\"report\":{\"outcome\":\"moved\",\"ms\":{\"downtime\":95.4}}},"
	    "{\"time\":1764758401,\"kind\":\"ns\",\"event\":\"web created\"}]}"
	    },
	{ A_PEERS, RES_OK, "ok", "{\"peers\":[]}" },
	{ A_NS_SHOW, RES_NO_SUCH_NS, "no such namespace 'x'", NULL },
	{ A_CANCEL, RES_OK, "", "{}" },
};

#define N_PROGRESS	\
	(sizeof(json_progress_seq) / sizeof(json_progress_seq[0]))
#define N_RESULTS	(sizeof(json_results) / sizeof(json_results[0]))

/* Everything -j prints for the samples above, stdout caught in a
 * temporary file (malloc'ed); each progress frame's status in prc. */
static char *
json_output_text(int prc[N_PROGRESS])
{
	json_t *p[N_PROGRESS], *d[N_RESULTS];
	FILE *tmp;
	char *buf;
	long len;
	size_t i;
	int fd;

	for (i = 0; i < N_PROGRESS; i++)
		assert_non_null(p[i] = json_loads(json_progress_seq[i], 0,
		    NULL));
	for (i = 0; i < N_RESULTS; i++) {
		d[i] = NULL;
		if (json_results[i].data != NULL)
			assert_non_null(d[i] = json_loads(json_results[i].data,
			    0, NULL));
	}
	assert_non_null(tmp = tmpfile());
	fflush(stdout);
	assert_int_not_equal(fd = dup(STDOUT_FILENO), -1);
	assert_int_not_equal(dup2(fileno(tmp), STDOUT_FILENO), -1);
	for (i = 0; i < N_PROGRESS; i++)
		prc[i] = json_output.progress(p[i]);
	for (i = 0; i < N_RESULTS; i++)
		json_output.result(json_results[i].a, json_results[i].code,
		    json_results[i].message, d[i]);
	fflush(stdout);
	assert_int_not_equal(dup2(fd, STDOUT_FILENO), -1);
	close(fd);
	for (i = 0; i < N_PROGRESS; i++)
		json_decref(p[i]);
	for (i = 0; i < N_RESULTS; i++)
		json_decref(d[i]);

	assert_int_equal(fseek(tmp, 0, SEEK_END), 0);
	assert_true((len = ftell(tmp)) > 0);
	rewind(tmp);
	assert_non_null(buf = malloc((size_t)len + 1));
	assert_int_equal(fread(buf, 1, (size_t)len, tmp), (size_t)len);
	buf[len] = '\0';
	fclose(tmp);
	return buf;
}

static void
test_json_one_object_per_line(void **state)
{
	int prc[N_PROGRESS];
	char *text, *line, *nl;
	json_error_t err;
	json_t *o, *want;
	size_t i, n;

	(void)state;
	text = json_output_text(prc);
	for (i = 0; i < N_PROGRESS; i++)
		assert_int_equal(prc[i], 0);
	assert_int_equal(text[strlen(text) - 1], '\n');
	for (n = 0, line = text; (nl = strchr(line, '\n')) != NULL; n++) {
		*nl = '\0';
		/* one line, one object: nothing before or after it */
		o = json_loads(line, 0, &err);
		if (o == NULL)
			fail_msg("line %zu is not one JSON object: %s: %s", n,
			    err.text, line);
		assert_true(json_is_object(o));
		if (n < N_PROGRESS) {
			assert_int_equal(json_object_size(o), 1);
			want = json_loads(json_progress_seq[n], 0, NULL);
			assert_true(json_equal(json_object_get(o, "progress"),
			    want));
		} else {
			i = n - N_PROGRESS;
			assert_true(i < N_RESULTS);
			assert_int_equal(json_integer_value(json_object_get(o,
			    "code")), json_results[i].code);
			assert_string_equal(json_string_value(
			    json_object_get(o, "result")),
			    migr_strresult(json_results[i].code));
			assert_string_equal(json_string_value(
			    json_object_get(o, "message")),
			    json_results[i].message);
			want = json_results[i].data ?
			    json_loads(json_results[i].data, 0, NULL) : NULL;
			if (want == NULL)
				assert_null(json_object_get(o, "data"));
			else
				assert_true(json_equal(json_object_get(o,
				    "data"), want));
		}
		json_decref(want);
		json_decref(o);
		line = nl + 1;
	}
	assert_int_equal(n, N_PROGRESS + N_RESULTS);
	assert_string_equal(line, "");
	free(text);
}

/* The exact text: compact, keys sorted, reals as written. */
static void
test_json_compact(void **state)
{
	int prc[N_PROGRESS];
	char *text, *last, *prev;

	(void)state;
	text = json_output_text(prc);
	assert_non_null(strstr(text, "{\"progress\":{\"at_ms\":15.24,"
	    "\"phase\":\"prepared\",\"text\":\"host2 built svc, locked and "
	    "detached\"}}\n{\"progress\":{\"at_ms\":40,\"phase\":\"freeze\","
	    "\"text\":\"two\\nlines\"}}\n"));
	assert_non_null(strstr(text, "\n{\"code\":0,\"data\":{\"bytes\":"
	    "{\"encoded\":67890,\"queued\":12345,\"streamed\":6789},"
	    "\"from\":\"host1\","
	    "\"mig\":\"host1-svc-1764758400123\",\"ms\":{\"commit\":30.2,"
	    "\"downtime\":95.4,\"dump\":20.5,\"freeze\":3.2,\"precopy\":10.1,"
	    "\"restore\":18.7,\"total\":140.9,\"transfer\":25.0},"
	    "\"ns\":\"svc\",\"outcome\":\"moved\",\"sockets\":{\"accepted\":0,"
	    "\"tcp_closing\":1,\"tcp_established\":18,\"tcp_listen\":1,"
	    "\"total\":21,\"udp\":1},\"to\":\"host2\"},"
	    "\"message\":\"svc moved to host2\",\"result\":\"ok\"}\n"));
	assert_non_null(strstr(text, "\n{\"code\":16,\"data\":"));
	assert_non_null(strstr(text, "\"message\":\"host2: restore failed\\n"
	    "(rolled back)\",\"result\":\"failed and rolled back\"}\n"));
	/* the last two lines */
	text[strlen(text) - 1] = '\0';
	assert_non_null(last = strrchr(text, '\n'));
	*last++ = '\0';
	assert_non_null(prev = strrchr(text, '\n'));
	prev++;
	assert_string_equal(prev, "{\"code\":8,\"message\":\"no such "
	    "namespace 'x'\",\"result\":\"no such namespace\"}");
	assert_string_equal(last, "{\"code\":0,\"data\":{},\"message\":\"\","
	    "\"result\":\"ok\"}");
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_and_abbreviations),
		cmocka_unit_test(test_ns_create),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_run_checkpoint),
		cmocka_unit_test(test_run_gate),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_cancel_resolve),
		cmocka_unit_test(test_resolve_force_request),
		cmocka_unit_test(test_cancel_resolve_errors),
		cmocka_unit_test(test_resolve_message),
		cmocka_unit_test(test_missing_messages),
		cmocka_unit_test(test_extra_and_unknown_messages),
		cmocka_unit_test(test_ambiguous_messages),
		cmocka_unit_test(test_option_values),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_run_lookup),
		cmocka_unit_test(test_not_utf8),
		cmocka_unit_test(test_result_reset),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_progress_malformed),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_report_failed),
		cmocka_unit_test(test_json_one_object_per_line),
		cmocka_unit_test(test_json_compact),
		cmocka_unit_test(test_evacuate),
	};

	return cmocka_run_group_tests_name("migctl_parser", tests, NULL, NULL);
}
