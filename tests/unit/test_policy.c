/* SPDX-License-Identifier: ISC */
/*
 * Per-peer policy (migrd/policy.c): the values "allow" takes, and what a
 * PREPARE may bring under them.  Programs are judged on the real file
 * system, in a directory made here with a program, a symbolic link out
 * of it and a "..": what a hostile peer would try.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <jansson.h>

#include "config.h"
#include "log.h"
#include "nsdump.h"
#include "policy.h"

static char dir[64], prog[128], link_out[128], dotdot[160];

static void
add(struct policy *p, enum policy_kind k, const char *s)
{
	char why[256];

	assert_true(p->n < POLICY_MAX);
	if (policy_entry_parse(k, s, &p->entry[p->n], why, sizeof(why)) != 0)
		fail_msg("%s: %s", s, why);
	p->n++;
}

static json_t *
desc(const char *addr, const char *mac)
{
	return json_pack("{s:[s],s:[],s:s}", "addrs", addr, "routes",
	    "mac", mac);
}

/* a policy for host2: svc*, 10.77.0.0/24, fd00:77::/64, 52:54:00, dir/ */
static void
lab_policy(struct policy *p)
{
	char d[80];

	memset(p, 0, sizeof(*p));
	add(p, POLICY_NAMESPACE, "svc*");
	add(p, POLICY_ADDRESS, "10.77.0.0/24");
	add(p, POLICY_ADDRESS, "fd00:77::/64");
	add(p, POLICY_MAC, "52:54:00");
	snprintf(d, sizeof(d), "%s/ok/", dir);
	add(p, POLICY_PROGRAM, d);
}

static int
judge(const struct policy *p, const char *ns, json_t *d,
    const struct nsdump *nd, const char *program, char *why, size_t len)
{
	json_t *argv = program ? json_pack("[s]", program) : NULL;
	int rc;

	why[0] = '\0';
	rc = policy_check("host2", p, ns, d, nd, argv, why, len);
	json_decref(argv);
	json_decref(d);
	return rc;
}

static int
setup(void **state)
{
	char path[160];
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_policy.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ok", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(prog, sizeof(prog), "%s/ok/svc", dir);
	assert_non_null(f = fopen(prog, "w"));
	fclose(f);
	assert_int_equal(chmod(prog, 0755), 0);
	snprintf(link_out, sizeof(link_out), "%s/ok/sh", dir);
	assert_int_equal(symlink("/bin/sh", link_out), 0);
	snprintf(dotdot, sizeof(dotdot), "%s/ok/../../../bin/sh", dir);
	return 0;
}

static int
teardown(void **state)
{
	char path[160];

	(void)state;
	unlink(prog);
	unlink(link_out);
	snprintf(path, sizeof(path), "%s/ok", dir);
	rmdir(path);
	rmdir(dir);
	return 0;
}

static void
test_entry_values(void **state)
{
	struct policy_entry e;
	char why[256];

	(void)state;
	assert_int_equal(policy_entry_parse(POLICY_ADDRESS, "10.1.2.3", &e,
	    why, sizeof(why)), 0);
	assert_int_equal(e.plen, 32);
	assert_int_equal(policy_entry_parse(POLICY_ADDRESS, "fd00::/8", &e,
	    why, sizeof(why)), 0);
	assert_int_equal(e.family, AF_INET6);
	assert_int_equal(e.plen, 8);
	assert_int_equal(policy_entry_parse(POLICY_ADDRESS, "10.0.0.0/33",
	    &e, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "10.0.0.0/33"));
	assert_int_equal(policy_entry_parse(POLICY_ADDRESS, "10.0.0.0/", &e,
	    why, sizeof(why)), -1);
	assert_int_equal(policy_entry_parse(POLICY_ADDRESS, "nowhere/8", &e,
	    why, sizeof(why)), -1);
	assert_int_equal(policy_entry_parse(POLICY_MAC, "52:54:00", &e, why,
	    sizeof(why)), 0);
	assert_int_equal(e.plen, 3);
	assert_int_equal(policy_entry_parse(POLICY_MAC, "52:54:0", &e, why,
	    sizeof(why)), -1);
	assert_int_equal(policy_entry_parse(POLICY_MAC,
	    "52:54:00:00:00:00:00", &e, why, sizeof(why)), -1);
	assert_int_equal(policy_entry_parse(POLICY_MAC, "52-54", &e, why,
	    sizeof(why)), -1);
	assert_int_equal(policy_entry_parse(POLICY_MAC, "*", &e, why,
	    sizeof(why)), 0);
	assert_int_equal(e.plen, 0);
	assert_int_equal(policy_entry_parse(POLICY_PROGRAM, "bin/sh", &e, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "absolute"));
	assert_int_equal(policy_entry_parse(POLICY_NAMESPACE, "svc-?*", &e,
	    why, sizeof(why)), 0);
	assert_int_equal(policy_entry_parse(POLICY_NAMESPACE, "a/b", &e, why,
	    sizeof(why)), -1);
	assert_int_equal(policy_kind_find("mac"), POLICY_MAC);
	assert_int_equal(policy_kind_find("uid"), -1);
}

static void
test_nothing_by_default(void **state)
{
	struct policy none;
	char why[400];

	(void)state;
	memset(&none, 0, sizeof(none));
	assert_int_equal(judge(&none, "svc", desc("10.77.0.80/24", ""), NULL,
	    NULL, why, sizeof(why)), -1);
	assert_string_equal(why, "host2 may not bring namespace svc here (no "
	    "'allow host2 namespace' covers it)");
}

static void
test_within(void **state)
{
	struct policy p;
	struct nsdump *nd = calloc(1, sizeof(*nd));
	char why[400];

	(void)state;
	lab_policy(&p);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24",
	    "52:54:00:77:01:80"), NULL, prog, why, sizeof(why)), 0);
	/* no workload: no program needed */
	assert_int_equal(judge(&p, "svc2", desc("fd00:77::80/64", ""), NULL,
	    NULL, why, sizeof(why)), 0);
	/* the records' links and addresses, loopback's zero MAC aside */
	nd->nlinks = 2;
	nd->links[1].mac[0] = 0x52;
	nd->links[1].mac[1] = 0x54;
	nd->naddrs = 1;
	nd->addrs[0].family = AF_INET;
	inet_pton(AF_INET, "10.77.0.81", nd->addrs[0].addr);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), nd,
	    prog, why, sizeof(why)), 0);
	free(nd);
}

static void
test_outside(void **state)
{
	struct policy p;
	struct nsdump *nd = calloc(1, sizeof(*nd));
	char why[400];

	(void)state;
	lab_policy(&p);
	assert_int_equal(judge(&p, "web", desc("10.77.0.80/24", ""), NULL,
	    NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "namespace web"));
	/* another LAN's address */
	assert_int_equal(judge(&p, "svc", desc("10.78.0.1/24", ""), NULL,
	    NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "address 10.78.0.1/24"));
	assert_int_equal(judge(&p, "svc", desc("fd00:78::1/64", ""), NULL,
	    NULL, why, sizeof(why)), -1);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24",
	    "02:00:00:00:00:01"), NULL, NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "MAC 02:00:00:00:00:01"));
	assert_non_null(strstr(why, "'allow host2 mac'"));
	/* a record's address or MAC the description does not name */
	nd->naddrs = 1;
	nd->addrs[0].family = AF_INET;
	inet_pton(AF_INET, "192.168.1.1", nd->addrs[0].addr);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), nd,
	    NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "address 192.168.1.1"));
	nd->naddrs = 0;
	nd->nlinks = 1;
	memcpy(nd->links[0].mac, "\x00\x00\x5e\x00\x01\x01", 6);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), nd,
	    NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "MAC 00:00:5e:00:01:01"));
	free(nd);
}

static void
test_programs(void **state)
{
	struct policy p;
	char why[400];

	(void)state;
	lab_policy(&p);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), NULL,
	    "/bin/sh", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "program /bin/sh"));
	/* a link inside the allowed directory that leads out of it */
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), NULL,
	    link_out, why, sizeof(why)), -1);
	/* out of it by ".." */
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), NULL,
	    dotdot, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "it resolves to /"));
	/* a long way out: its end (what it names) is in the message */
	{
		char far[600];
		size_t n;

		snprintf(far, sizeof(far), "%s", dir);
		for (n = strlen(far); n + 4 < 480; n += 3)
			strcat(far, "/..");
		strcat(far, "/bin/sh");
		assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""),
		    NULL, far, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "/../bin/sh here (it resolves "
		    "to /"));
		assert_non_null(strstr(why, "program ..."));
	}
	/* a program not there */
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), NULL,
	    "/nonexistent/prog", why, sizeof(why)), -1);
	/* a single program, not a directory: that file only */
	memset(&p, 0, sizeof(p));
	add(&p, POLICY_NAMESPACE, "*");
	add(&p, POLICY_ADDRESS, "0.0.0.0/0");
	add(&p, POLICY_PROGRAM, prog);
	add(&p, POLICY_MAC, "*");
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24",
	    "0a:11:22:33:44:55"), NULL, prog, why, sizeof(why)), 0);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), NULL,
	    link_out, why, sizeof(why)), -1);
	/* a directory without its '/' is taken as a file: allows nothing
	 * under it */
	memset(&p, 0, sizeof(p));
	add(&p, POLICY_NAMESPACE, "*");
	add(&p, POLICY_ADDRESS, "0.0.0.0/0");
	add(&p, POLICY_PROGRAM, dir);
	assert_int_equal(judge(&p, "svc", desc("10.77.0.80/24", ""), NULL,
	    prog, why, sizeof(why)), -1);
}

static int	logged;
static void
sink(int pri, const char *msg, void *arg)
{
	(void)pri;
	(void)arg;
	(void)msg;
	logged++;
}

static int
parse_text(const char *text, struct migrd_conf *c)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int errors;

	assert_non_null(fp);
	errors = config_parse_fp(fp, "t", c);
	fclose(fp);
	return errors;
}

static void
test_config(void **state)
{
	static struct migrd_conf c, c2;
	char *out = NULL;
	size_t outlen = 0;
	FILE *fp;

	(void)state;
	log_set_sink(sink, NULL);
	assert_int_equal(parse_text("hostname h1\n"
	    "allow host2 namespace svc\n"		/* before peer */
	    "peer host2 10.77.0.2\n"
	    "allow host2 uid 0\n"				/* no kind */
	    "allow host2 address 10.77.0.0/24 300.1.1.1/8\n"	/* a bad one */
	    "allow host2 program\n"			/* no value */
	    "allow host2 sockets 1048577\n"		/* too many */
	    "allow host2 migrations 0\n"			/* too few */
	    "allow host2 migrations 9\n"
	    "allow host2 checkpoint 0\n"			/* too few */
	    "allow host2 checkpoint 65537\n"		/* too many */
	    "allow host2 sockets 12x\n", &c), 10);
	assert_int_equal(parse_text("hostname h1\n"
	    "peer host2 10.77.0.2\n"
	    "peer host3 10.77.0.3\n"
	    "allow host2 namespace svc* web\n"
	    "allow host3 mac 52:54:00\n"
	    "allow host2 address 10.77.0.0/24 fd00:77::/64\n"
	    "allow host2 program /usr/lib/svc/ /usr/sbin/nginx\n"
	    "allow host2 sockets 100 5000\n"
	    "allow host2 migrations 2\n"
	    "allow host2 checkpoint 512\n", &c), 0);
	assert_int_equal(c.peers[0].allow.n, 10);
	/* checkpoint mode: granted with its budget, never by default */
	assert_int_equal(policy_limit(&c.peers[0].allow, POLICY_CHECKPOINT,
	    0), 512);
	assert_int_equal(policy_limit(&c.peers[1].allow, POLICY_CHECKPOINT,
	    0), 0);
	/* the last value counts; without one, the caller's default */
	assert_int_equal(policy_limit(&c.peers[0].allow, POLICY_SOCKETS, 7),
	    5000);
	assert_int_equal(policy_limit(&c.peers[0].allow, POLICY_MIGRATIONS,
	    8), 2);
	assert_int_equal(policy_limit(&c.peers[1].allow, POLICY_SOCKETS, 7),
	    7);
	assert_int_equal(c.peers[1].allow.n, 1);
	assert_int_equal(c.peers[0].allow.entry[2].kind, POLICY_ADDRESS);
	/* printed one value a line, and read back the same */
	assert_non_null(fp = open_memstream(&out, &outlen));
	config_print(fp, &c);
	fclose(fp);
	assert_non_null(strstr(out, "\nallow host2 namespace svc*"));
	assert_non_null(strstr(out, "\nallow host3 mac 52:54:00"));
	assert_non_null(strstr(out, "\nallow host2 program /usr/sbin/nginx"));
	assert_non_null(strstr(out, "\nallow host2 sockets 5000"));
	assert_non_null(strstr(out, "\nallow host2 migrations 2"));
	assert_int_equal(parse_text(out, &c2), 0);
	assert_memory_equal(&c.peers[0].allow, &c2.peers[0].allow,
	    sizeof(c.peers[0].allow));
	assert_memory_equal(&c.peers[1].allow, &c2.peers[1].allow,
	    sizeof(c.peers[1].allow));
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_values),
		cmocka_unit_test(test_nothing_by_default),
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_outside),
		cmocka_unit_test(test_programs),
		cmocka_unit_test(test_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
