/* Unit tests for migrd/config.c: good files give the right values, bad
 * lines are reported as "file:line: reason" and every one is counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "log.h"

struct captured {
	int	count;
	char	msgs[16][512];
};

static struct captured cap;

static void
capture(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)arg;
	if (cap.count < 16)
		snprintf(cap.msgs[cap.count], sizeof(cap.msgs[0]), "%s", msg);
	cap.count++;
}

static int
setup(void **state)
{
	(void)state;
	memset(&cap, 0, sizeof(cap));
	log_set_sink(capture, NULL);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	log_set_sink(NULL, NULL);
	return 0;
}

static int
parse_text(const char *text, struct migrd_conf *c)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int n;

	assert_non_null(fp);
	n = config_parse_fp(fp, "t.conf", c);
	fclose(fp);
	return n;
}

/* Was msg logged (exact)? */
static int
logged(const char *msg)
{
	int i;

	for (i = 0; i < cap.count && i < 16; i++)
		if (strcmp(cap.msgs[i], msg) == 0)
			return 1;
	return 0;
}

static void
test_good_file(void **state)
{
	struct migrd_conf c;
	const char *text =
	    "# migrd.conf\n"
	    "\n"
	    "hostname host1\n"
	    "listen 10.77.0.1 port 7790   # trailing comment\n"
	    "peer host2 10.77.0.2\n"
	    "\tpeer   host3   fd00:77::3   port 7791\n"
	    "certificate /etc/migrd/host1.pem\n"
	    "key /etc/migrd/host1-key.pem\n"
	    "ca /etc/migrd/ca.pem\n"
	    "control-socket /run/migrd/x.sock\n"
	    "admin-group migr\n"
	    "state-dir /var/lib/migrd-test\n"
	    "bridge br7\n"
	    "max-message 4096\n"
	    "max-queue 1048576\n"
	    "handshake-timeout 3\n"
	    "heartbeat-interval 200\n"
	    "dead-time 900\n";

	(void)state;
	assert_int_equal(parse_text(text, &c), 0);
	assert_int_equal(cap.count, 0);
	assert_string_equal(c.hostname, "host1");
	assert_string_equal(c.listen_addr, "10.77.0.1");
	assert_int_equal(c.listen_port, 7790);
	assert_int_equal(c.npeers, 2);
	assert_string_equal(c.peers[0].name, "host2");
	assert_string_equal(c.peers[0].addr, "10.77.0.2");
	assert_int_equal(c.peers[0].port, 7780);
	assert_int_equal(c.peers[0].line, 5);
	assert_string_equal(c.peers[1].name, "host3");
	assert_string_equal(c.peers[1].addr, "fd00:77::3");
	assert_int_equal(c.peers[1].port, 7791);
	assert_string_equal(c.cert, "/etc/migrd/host1.pem");
	assert_string_equal(c.key, "/etc/migrd/host1-key.pem");
	assert_string_equal(c.ca, "/etc/migrd/ca.pem");
	assert_string_equal(c.control_socket, "/run/migrd/x.sock");
	assert_string_equal(c.admin_group, "migr");
	assert_string_equal(c.state_dir, "/var/lib/migrd-test");
	assert_string_equal(c.bridge, "br7");
	assert_int_equal(c.max_message, 4096);
	assert_int_equal(c.max_queue, 1048576);
	assert_int_equal(c.handshake_timeout, 3);
	assert_int_equal(c.heartbeat_ms, 200);
	assert_int_equal(c.dead_ms, 900);
	assert_non_null(config_find_peer(&c, "host3"));
	assert_null(config_find_peer(&c, "host9"));
}

static void
test_defaults(void **state)
{
	struct migrd_conf c;

	(void)state;
	assert_int_equal(parse_text("hostname a\n", &c), 0);
	assert_string_equal(c.control_socket, "/run/migrd/migrd.sock");
	assert_string_equal(c.listen_addr, "0.0.0.0");
	assert_int_equal(c.listen_port, 7780);
	assert_string_equal(c.bridge, "br0");
	assert_int_equal(c.max_message, 65536);
	assert_int_equal(c.npeers, 0);
	assert_true(c.dead_ms > c.heartbeat_ms);
}

static void
test_errors_have_line_numbers(void **state)
{
	struct migrd_conf c;
	const char *text =
	    "hostname host1\n"				/* 1 */
	    "# fine\n"					/* 2 */
	    "listne 10.0.0.1\n"				/* 3 */
	    "peer host2 10.77.0.2 port 70000\n"		/* 4 */
	    "peer host2 10.77.0.2\n"			/* 5 */
	    "peer host2 10.77.0.9\n"			/* 6 */
	    "peer host3 not-an-address\n"		/* 7 */
	    "certificate relative.pem\n"		/* 8 */
	    "max-message 12x\n"				/* 9 */
	    "hostname again\n"				/* 10 */
	    "listen 10.0.0.1 prot 5\n"			/* 11 */
	    "handshake-timeout 0\n";			/* 12 */

	(void)state;
	assert_int_equal(parse_text(text, &c), 9);
	assert_true(logged("t.conf:3: unknown keyword 'listne'"));
	assert_true(logged("t.conf:4: peer: 70000 is out of range 1-65535"));
	assert_true(logged("t.conf:6: peer host2: already defined at line 5"));
	assert_true(logged("t.conf:7: peer host3: 'not-an-address' is not a "
	    "numeric IPv4 or IPv6 address"));
	assert_true(logged("t.conf:8: certificate: 'relative.pem' must be an "
	    "absolute path"));
	assert_true(logged("t.conf:9: max-message: '12x' is not a number"));
	assert_true(logged("t.conf:10: hostname: given more than once"));
	assert_true(logged("t.conf:11: listen: expected 'port N' after the "
	    "address, got 'prot'"));
	assert_true(logged("t.conf:12: handshake-timeout: 0 is out of range "
	    "1-3600"));
	/* the good lines still took effect */
	assert_string_equal(c.hostname, "host1");
	assert_int_equal(c.npeers, 1);
}

static void
test_whole_file_checks(void **state)
{
	struct migrd_conf c;

	(void)state;
	assert_int_equal(parse_text("peer x 10.0.0.1\n", &c), 1);
	assert_true(logged("t.conf: hostname is required"));

	memset(&cap, 0, sizeof(cap));
	assert_int_equal(parse_text("hostname a\nheartbeat-interval 500\n"
	    "dead-time 500\n", &c), 1);
	assert_true(logged("t.conf: dead-time (500 ms) must be longer than "
	    "heartbeat-interval (500 ms)"));

	memset(&cap, 0, sizeof(cap));
	assert_int_equal(parse_text("hostname a\n\npeer a 10.0.0.1\n", &c), 1);
	assert_true(logged("t.conf:3: peer a: is this host's own name"));
}

static void
test_wrong_arg_count_and_long_line(void **state)
{
	struct migrd_conf c;
	char text[3000];

	(void)state;
	assert_int_equal(parse_text("hostname\nhostname a b\n", &c), 3);
	assert_true(logged("t.conf:1: hostname: wrong number of arguments"));
	assert_true(logged("t.conf:2: hostname: wrong number of arguments"));
	assert_true(logged("t.conf: hostname is required"));

	memset(&cap, 0, sizeof(cap));
	snprintf(text, sizeof(text), "hostname a\nbridge %02000d\n"
	    "bridge br1\n", 0);
	assert_int_equal(parse_text(text, &c), 1);
	assert_true(logged("t.conf:2: line longer than 1024 characters"));
	/* the line after the long one is parsed as line 3 */
	assert_string_equal(c.bridge, "br1");
}

static void
test_missing_file(void **state)
{
	struct migrd_conf c;

	(void)state;
	assert_int_equal(config_parse_file("/nonexistent/migrd.conf", &c), 1);
	assert_int_equal(cap.count, 1);
	assert_non_null(strstr(cap.msgs[0], "/nonexistent/migrd.conf"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_have_line_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whole_file_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_arg_count_and_long_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
