/* SPDX-License-Identifier: ISC */
/* Unit tests for migrd/config*.c: good files give the right values, bad
 * lines are reported as "file:line: reason" and every one is counted,
 * and what config_print() prints parses back to the same configuration.
 * tests/unit/test_config_man.c checks the keyword table against the
 * manual. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "config_keys.h"
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
	/* a workload is nobody, with nothing, unless configured */
	assert_string_equal(c.workload_user, "nobody");
	assert_string_equal(c.workload_group, "");
	assert_int_equal(c.workload_caps, 0);
	/* the channel compressed unless said otherwise */
	assert_int_equal(c.compress, CONF_COMPRESS_DEFLATE);
	assert_int_equal(parse_text("hostname a\ncompress none\n", &c), 0);
	assert_int_equal(c.compress, CONF_COMPRESS_NONE);
	assert_int_equal(parse_text("hostname a\ncompress gzip\n", &c), 1);
	assert_true(logged("t.conf:2: compress: 'gzip' is not one of none, "
	    "deflate"));
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

	/* 1024 characters are a line; a NUL byte is an error of its own
	 * line, and the next line is read (fmemopen(), not parse_text():
	 * the text holds a NUL) */
	memset(&cap, 0, sizeof(cap));
	snprintf(text, sizeof(text), "hostname a\nca /%01020d\n", 0);
	assert_int_equal(parse_text(text, &c), 0);
	{
		static const char nul[] = "hostname a\0b\npeer x 10.0.0.1 "
		    "port 99999\nkey relative";
		FILE *fp = fmemopen((void *)nul, sizeof(nul) - 1, "r");

		assert_non_null(fp);
		assert_int_equal(config_parse_fp(fp, "t.conf", &c), 4);
		fclose(fp);
	}
	assert_true(logged("t.conf:1: line holds a NUL byte"));
	assert_true(logged("t.conf:2: peer: 99999 is out of range 1-65535"));
	assert_true(logged("t.conf:3: key: 'relative' must be an absolute "
	    "path"));
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

static void
test_more_errors(void **state)
{
	struct migrd_conf c;
	char text[1024];

	(void)state;
	snprintf(text, sizeof(text),
	    "hostname a\n"				/* 1 */
	    "control-socket /%0108d\n"			/* 2 */
	    "bridge averyveryverylongname\n"		/* 3 */
	    "admin-group -x\n"				/* 4 */
	    "hostname a b c d e f g h\n"		/* 5 */
	    "listen 10.0.0.1 port 0\n"			/* 6 */
	    "max-queue 99999999999999999999999\n"	/* 7 */
	    "peer -bad 10.0.0.1\n"			/* 8 */
	    "peer b 10.0.0.2 port\n"			/* 9 */
	    "dead-time 5000 ms\n"			/* 10 */
	    "migrate-timeout -1\n", 0);			/* 11 */
	assert_int_equal(parse_text(text, &c), 10);
	assert_true(logged("t.conf:2: control-socket: value is longer than "
	    "107 characters"));
	assert_true(logged("t.conf:3: bridge: 'averyveryverylongname' is not "
	    "a valid interface name"));
	assert_true(logged("t.conf:4: admin-group: '-x' is not a valid group "
	    "name"));
	assert_true(logged("t.conf:5: too many words (at most 8)"));
	assert_true(logged("t.conf:6: listen: 0 is out of range 1-65535"));
	assert_true(logged("t.conf:7: max-queue: '99999999999999999999999' is "
	    "not a number"));
	assert_true(logged("t.conf:8: peer: '-bad' is not a valid host name"));
	assert_true(logged("t.conf:9: peer: expected 'port N' after the "
	    "address, got 'port'"));
	assert_true(logged("t.conf:10: dead-time: wrong number of arguments"));
	assert_true(logged("t.conf:11: migrate-timeout: '-1' is not a "
	    "number"));
	/* nothing bad was stored */
	assert_string_equal(c.control_socket, "/run/migrd/migrd.sock");
	assert_string_equal(c.bridge, "br0");
	assert_string_equal(c.admin_group, "");
	assert_int_equal(c.listen_port, 7780);
	assert_int_equal(c.npeers, 0);

	memset(&cap, 0, sizeof(cap));
	assert_int_equal(parse_text("hostname a\nmax-queue 65536\n", &c), 1);
	assert_true(logged("t.conf: max-queue (65536) must hold two messages "
	    "of max-message (65536) bytes"));
}

/* config_print(c) as a string, to free */
static char *
print_text(const struct migrd_conf *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	config_print(fp, c);
	assert_int_equal(fclose(fp), 0);
	return buf;
}

/* a and b are the same configuration: equal byte for byte but for the
 * lines the peers were on */
static void
assert_same_conf(struct migrd_conf *a, struct migrd_conf *b)
{
	int i;

	assert_int_equal(a->npeers, b->npeers);
	for (i = 0; i < a->npeers; i++)
		a->peers[i].line = b->peers[i].line = 0;
	assert_memory_equal(a, b, sizeof(*a));
}

/* Is there a line "stmt" or "stmt # comment"? */
static int
has_line(const char *text, const char *stmt)
{
	size_t n = strlen(stmt);
	const char *s = text;

	while (*s != '\0') {
		if (strncmp(s, stmt, n) == 0 && (s[n] == '\n' || s[n] == ' '))
			return 1;
		if ((s = strchr(s, '\n')) == NULL)
			break;
		s++;
	}
	return 0;
}

/* Every keyword once, in table order, a comment if it has no value; only
 * a CK_REPEAT one on consecutive lines. */
static void
assert_table_order(const char *text)
{
	char word[128];
	const char *s;
	size_t k = 0;
	int lines = 0;

	for (s = text; *s != '\0'; s = strchr(s, '\n') + 1) {
		assert_int_equal(sscanf(s + (*s == '#'), "%127s", word), 1);
		lines++;
		if (k > 0 && strcmp(word, conf_keys[k - 1].name) == 0) {
			assert_true(conf_keys[k - 1].flags & CK_REPEAT);
			continue;
		}
		assert_true(k < conf_nkeys);
		assert_string_equal(word, conf_keys[k].name);
		k++;
	}
	assert_int_equal(k, conf_nkeys);
	assert_true(lines >= (int)conf_nkeys);
}

/* parse text, print, parse the print: the same configuration and the
 * same print */
static void
round_trip(const char *text)
{
	struct migrd_conf a, b;
	char *ta, *tb;

	memset(&cap, 0, sizeof(cap));
	assert_int_equal(parse_text(text, &a), 0);
	ta = print_text(&a);
	assert_table_order(ta);
	assert_int_equal(parse_text(ta, &b), 0);
	assert_int_equal(cap.count, 0);
	tb = print_text(&b);
	assert_string_equal(ta, tb);
	assert_same_conf(&a, &b);
	free(ta);
	free(tb);
}

static void
test_workload_caps(void **state)
{
	struct migrd_conf c;
	char *t;

	(void)state;
	assert_int_equal(parse_text("hostname a\nworkload-capabilities "
	    "cap_net_admin cap_net_bind_service\n", &c), 0);
	assert_int_equal(c.workload_caps, (1ULL << 12) | (1ULL << 10));
	t = print_text(&c);
	assert_true(has_line(t, "workload-capabilities cap_net_bind_service "
	    "cap_net_admin"));
	free(t);
	assert_int_equal(parse_text("hostname a\nworkload-capabilities "
	    "none\n", &c), 0);
	assert_int_equal(c.workload_caps, 0);
	t = print_text(&c);
	assert_true(has_line(t, "workload-capabilities none"));
	free(t);
	/* what would give a workload migrd's powers, or nonsense */
	assert_int_equal(parse_text("hostname a\nworkload-capabilities "
	    "cap_sys_admin\n", &c), 1);
	assert_int_equal(parse_text("hostname a\nworkload-capabilities "
	    "cap_net_admin cap_sys_ptrace\n", &c), 1);
	assert_int_equal(parse_text("hostname a\nworkload-capabilities "
	    "cap_bogus\n", &c), 1);
	assert_int_equal(parse_text("hostname a\nworkload-capabilities "
	    "none cap_net_raw\n", &c), 1);
	assert_int_equal(parse_text("hostname a\nworkload-user "
	    "-x\n", &c), 1);
}

static void
test_print_round_trip(void **state)
{
	const char *text =
	    "commit-timeout 2500\n"
	    "hostname host1\n"
	    "listen fd00:77::1 port 7790\n"
	    "peer host2 10.77.0.2\n"
	    "peer host3 fd00:77::3 port 7791\n"
	    "peer host0 10.77.0.9 port 1\n"
	    "certificate /etc/migrd/h.pem\n"
	    "key /k\n"
	    "ca /etc/migrd/other-ca.pem\n"
	    "control-socket /run/m.sock\n"
	    "admin-group migr\n"
	    "state-dir /var/lib/m\n"
	    "bridge br7\n"
	    "cgroup-root /sys/fs/cgroup/x\n"
	    "max-message 1048576\n"
	    "max-queue 1073741824\n"
	    "max-control-clients 1\n"
	    "handshake-timeout 3600\n"
	    "heartbeat-interval 50\n"
	    "dead-time 3600000\n"
	    "migrate-timeout 1\n";
	struct migrd_conf c;
	char *t;

	(void)state;
	round_trip(text);
	assert_int_equal(parse_text(text, &c), 0);
	t = print_text(&c);
	assert_true(has_line(t, "listen fd00:77::1 port 7790"));
	assert_true(has_line(t, "peer host2 10.77.0.2 port 7780"));
	assert_true(has_line(t, "peer host0 10.77.0.9 port 1"));
	assert_true(has_line(t, "key /k"));
	assert_true(has_line(t, "admin-group migr"));
	assert_true(has_line(t, "commit-timeout 2500"));
	free(t);
}

static void
test_print_defaults(void **state)
{
	struct migrd_conf c;
	char *t;

	(void)state;
	round_trip("hostname a\n");
	assert_int_equal(parse_text("hostname a\n", &c), 0);
	t = print_text(&c);
	assert_true(has_line(t, "hostname a"));
	assert_true(has_line(t, "listen 0.0.0.0 port 7780"));
	assert_true(has_line(t, "#peer"));
	assert_true(has_line(t, "certificate /etc/migrd/cert.pem"));
	assert_true(has_line(t, "control-socket /run/migrd/migrd.sock"));
	assert_true(has_line(t, "#admin-group"));
	assert_true(has_line(t, "bridge br0"));
	assert_true(has_line(t, "max-message 65536"));
	assert_true(has_line(t, "max-queue 4194304"));
	assert_true(has_line(t, "heartbeat-interval 1000"));
	assert_true(has_line(t, "commit-timeout 3000"));
	free(t);
}

/* A value as long as a line allows, and as many peers as allowed. */
static void
test_print_limits(void **state)
{
	char text[64 * 64 + 2048];
	struct migrd_conf c;
	size_t off, line;
	int i;

	(void)state;
	line = (size_t)snprintf(text, sizeof(text), "hostname a\n");
	off = line + (size_t)snprintf(text + line, sizeof(text) - line,
	    "state-dir /");
	/* "state-dir /ss...s", as long as a line may be */
	memset(text + off, 's', CONF_LINE_MAX - (off - line));
	off = line + CONF_LINE_MAX;
	off += (size_t)snprintf(text + off, sizeof(text) - off, "\n");
	for (i = 0; i < CONF_PEERS_MAX; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
		    "peer p%d 10.1.%d.%d\n", i, i / 250, i % 250 + 1);
	round_trip(text);
	assert_int_equal(parse_text(text, &c), 0);
	assert_int_equal(strlen(c.state_dir), CONF_LINE_MAX - 10);
	assert_int_equal(c.npeers, CONF_PEERS_MAX);

	/* one more */
	snprintf(text + off, sizeof(text) - off, "peer q 10.2.0.1\n");
	assert_int_equal(parse_text(text, &c), 1);
	assert_true(logged("t.conf:67: peer: more than 64 peers"));
}

static void
test_table(void **state)
{
	const struct conf_key *k;
	size_t i, j;

	(void)state;
	assert_true(conf_nkeys > 0 && conf_nkeys <= 64);
	for (i = 0; i < conf_nkeys; i++) {
		k = &conf_keys[i];
		assert_ptr_equal(conf_key_find(k->name), k);
		for (j = 0; j < i; j++)
			assert_string_not_equal(conf_keys[j].name, k->name);
		assert_non_null(k->type);
		assert_non_null(k->type->parse);
		assert_non_null(k->type->value);
		assert_non_null(k->descr);
		if (k->type == &conf_uint || k->type == &conf_enum)
			assert_int_equal(k->size, sizeof(uint32_t));
		if (k->type == &conf_uint) {
			assert_true(k->min <= k->defu && k->defu <= k->max);
			assert_true(k->unit <= CU_SECONDS);
		}
		if (k->type == &conf_path || k->type == &conf_name) {
			assert_true(k->off + k->size <=
			    sizeof(struct migrd_conf));
			assert_true(k->defs == NULL ||
			    strlen(k->defs) < k->size);
		}
		if (k->type == &conf_name)
			assert_non_null(k->what);
		if (k->flags & CK_REQUIRED)
			assert_null(k->defs);
	}
	assert_null(conf_key_find("listne"));
}

/* The enumeration type, which no keyword uses yet, on a key of its own */
static void
test_enum_type(void **state)
{
	static const struct conf_key k = {
		"t-bool", &conf_enum,
		.off = offsetof(struct migrd_conf, max_control_clients),
		.size = sizeof(uint32_t), .defu = 1, .choices = conf_yesno,
		.descr = "a boolean"
	};
	struct migrd_conf c;
	struct conf_ctx p = { .file = "t.conf", .line = 7, .c = &c };
	char yes[] = "yes", no[] = "no", maybe[] = "maybe", kw[] = "t-bool";
	char *w[2] = { kw, NULL };
	char val[16];

	(void)state;
	memset(&c, 0, sizeof(c));
	k.type->init(&k, &c);
	assert_int_equal(k.type->value(&k, &c, 0, val, sizeof(val)), 0);
	assert_string_equal(val, "yes");
	assert_int_equal(k.type->value(&k, &c, 1, val, sizeof(val)), -1);
	w[1] = no;
	assert_int_equal(k.type->parse(&p, &k, w, 2), 0);
	assert_int_equal(c.max_control_clients, 0);
	w[1] = yes;
	assert_int_equal(k.type->parse(&p, &k, w, 2), 0);
	assert_int_equal(c.max_control_clients, 1);
	w[1] = maybe;
	assert_int_equal(k.type->parse(&p, &k, w, 2), -1);
	assert_int_equal(p.errors, 1);
	assert_true(logged("t.conf:7: t-bool: 'maybe' is not one of no, yes"));
	assert_int_equal(c.max_control_clients, 1);
}

/* The installed example passes (tests run from the repository root). */
static void
test_example_file(void **state)
{
	struct migrd_conf c;

	(void)state;
	assert_int_equal(config_parse_file("migrd/migrd.conf.example", &c), 0);
	assert_string_equal(c.hostname, "host1");
	assert_int_equal(c.npeers, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_have_line_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whole_file_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_arg_count_and_long_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enum_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_example_file, setup, teardown),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
