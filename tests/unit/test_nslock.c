/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the lock's tables (common/netns/nslock.c) and the
 * netlink batch that deletes them (nftbatch.c), in a network namespace
 * of the test's own (root): what nslock_unlock() removes and what it
 * leaves, that the lock it lifts held and holds no more, that a missing
 * table is no error, and that a failed batch changes nothing.  The
 * tables are read back through libnftables, apart from the code under
 * test; what passes is seen by a datagram sent out of one end of a veth
 * pair (an output drop fails sendto() with EPERM).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nftables/libnftables.h>

#include "nftbatch.h"
#include "nslock.h"
#include "sockdiag.h"

#define SELF	"/proc/thread-self/ns/net"

static int have_netns;

/* Run an nft script here; its output, or NULL on failure. */
static char *
nft(const char *script)
{
	struct nft_ctx *c = nft_ctx_new(NFT_CTX_DEFAULT);
	char *out = NULL;

	assert_non_null(c);
	nft_ctx_buffer_output(c);
	nft_ctx_buffer_error(c);
	if (nft_run_cmd_from_buffer(c, script) == 0)
		out = strdup(nft_ctx_get_output_buffer(c));
	nft_ctx_free(c);
	return out;
}

/* The tables here, one "family name" per line, as nft lists them. */
static char *
tables(void)
{
	char *out = nft("list tables\n");

	assert_non_null(out);
	return out;
}

static void
assert_tables(const char *want)
{
	char *t = tables();

	if (strcmp(t, want) != 0)
		fail_msg("tables:\n%s\nexpected:\n%s", t, want);
	free(t);
}

/* Does a datagram leave through d0 (10.99.0.1/24, one end of a veth
 * pair)?  1 yes, 0 dropped by netfilter on its way out. */
static int
datagram_leaves(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc;

	assert_true(fd >= 0);
	inet_pton(AF_INET, "10.99.0.2", &to.sin_addr);
	rc = (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to));
	if (rc == -1 && errno != EPERM)
		fail_msg("sendto: %s", strerror(errno));
	close(fd);
	return rc == 1;
}

static int
setup(void **state)
{
	char *out;

	(void)state;
	if (!have_netns)
		return 0;
	/* nothing from the case before */
	out = nft("flush ruleset\n");
	assert_non_null(out);
	free(out);
	return 0;
}

/* The source's whole lock and the gate, lifted at once; nothing left,
 * and what the lock held back goes out again. */
static void
test_unlock_all(void **state)
{
	char err[256] = "";

	(void)state;
	if (!have_netns)
		skip();
	assert_int_equal(datagram_leaves(), 1);
	assert_int_equal(nslock_gate(SELF, err, sizeof(err)), 0);
	assert_int_equal(nslock_take_source(SELF, 0, err, sizeof(err)), 0);
	assert_int_equal(nslock_held(SELF, err, sizeof(err)), 1);
	assert_int_equal(datagram_leaves(), 0);
	assert_tables("table inet " NSLOCK_GATE "\n"
	    "table inet " NSLOCK_TABLE "\n"
	    "table arp " NSLOCK_TABLE "\n");
	assert_int_equal(nslock_unlock(SELF, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_tables("");
	assert_int_equal(nslock_held(SELF, err, sizeof(err)), 0);
	assert_int_equal(datagram_leaves(), 1);
}

/* Missing tables are no error: none, or only some of the three. */
static void
test_unlock_missing(void **state)
{
	char err[256] = "";

	(void)state;
	if (!have_netns)
		skip();
	assert_int_equal(nslock_unlock(SELF, err, sizeof(err)), 0);
	assert_tables("");
	assert_int_equal(nslock_gate(SELF, err, sizeof(err)), 0);
	assert_int_equal(nslock_unlock(SELF, err, sizeof(err)), 0);
	assert_tables("");
	assert_int_equal(nslock_take(SELF, err, sizeof(err)), 0);
	assert_int_equal(nslock_unlock(SELF, err, sizeof(err)), 0);
	assert_tables("");
}

/* The workload's own tables, and ours of another family, stay. */
static void
test_unlock_leaves_others(void **state)
{
	char err[256] = "", *out;

	(void)state;
	if (!have_netns)
		skip();
	out = nft("add table inet svc\n"
	    "add chain inet svc in { type filter hook input priority 0; }\n"
	    "add table ip " NSLOCK_TABLE "\n"
	    "add table arp other\n");
	assert_non_null(out);
	free(out);
	assert_int_equal(nslock_take(SELF, err, sizeof(err)), 0);
	assert_int_equal(nslock_unlock(SELF, err, sizeof(err)), 0);
	assert_tables("table inet svc\n"
	    "table ip " NSLOCK_TABLE "\n"
	    "table arp other\n");
}

/*
 * A batch the kernel refuses is refused whole: a name longer than a
 * table's (NFT_TABLE_MAXNAMELEN, 256 with its NUL) fails the batch,
 * and the valid table before it in the same batch is still there.
 */
static void
test_failed_batch_changes_nothing(void **state)
{
	char err[256] = "", longname[300], *out;
	struct nftbatch_table t[2] = {
		{ NFTBATCH_INET, "keep" },
		{ NFTBATCH_INET, longname },
	};

	(void)state;
	if (!have_netns)
		skip();
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	out = nft("add table inet keep\n");
	assert_non_null(out);
	free(out);
	assert_int_equal(nftbatch_delete(SELF, t, 2, err, sizeof(err)), -1);
	if (strstr(err, SELF ": nf_tables: ") != err)
		fail_msg("error: \"%s\"", err);
	assert_tables("table inet keep\n");
	/* and the one alone goes */
	assert_int_equal(nftbatch_delete(SELF, t, 1, err, sizeof(err)), 0);
	assert_tables("");
}

static void
sock(struct sockdiag_sock *d, const char *l, int lp, const char *r, int rp)
{
	struct sockaddr_in6 *l6 = (struct sockaddr_in6 *)&d->local;
	struct sockaddr_in6 *r6 = (struct sockaddr_in6 *)&d->remote;

	memset(d, 0, sizeof(*d));
	l6->sin6_family = r6->sin6_family = AF_INET6;
	l6->sin6_port = htons((uint16_t)lp);
	r6->sin6_port = htons((uint16_t)rp);
	assert_int_equal(inet_pton(AF_INET6, l, &l6->sin6_addr), 1);
	assert_int_equal(inet_pton(AF_INET6, r, &r6->sin6_addr), 1);
	d->state = 9;	/* LAST_ACK */
}

/*
 * Orphans let through a source's lock: each connection gets one rule
 * each way, in its own family (an IPv4 client of a dual-stack listener,
 * v4-mapped in sock_diag, is IPv4 on the wire), ahead of the lock's
 * drop; more than NSLOCK_PASS_MAX at once is refused, nothing added.
 */
static void
test_pass(void **state)
{
	struct sockdiag_sock d[NSLOCK_PASS_MAX + 1];
	char err[256] = "", *in, *out;

	(void)state;
	if (!have_netns)
		skip();
	sock(&d[0], "::ffff:10.99.0.1", 7402, "::ffff:10.99.0.2", 40999);
	sock(&d[1], "fd00:77::180", 7400, "fd00:77::10", 51000);
	assert_int_equal(nslock_take_source(SELF, 0, err, sizeof(err)), 0);
	assert_int_equal(nslock_pass(SELF, d, 2, err, sizeof(err)), 0);
	in = nft("list chain inet " NSLOCK_TABLE " in\n");
	out = nft("list chain inet " NSLOCK_TABLE " out\n");
	assert_non_null(in);
	assert_non_null(out);
	if (strstr(in, "ip saddr 10.99.0.2 ip daddr 10.99.0.1 tcp sport 40999 "
	    "tcp dport 7402 accept") == NULL ||
	    strstr(in, "ip6 saddr fd00:77::10 ip6 daddr fd00:77::180 tcp "
	    "sport 51000 tcp dport 7400 accept") == NULL)
		fail_msg("in:\n%s", in);
	if (strstr(out, "ip saddr 10.99.0.1 ip daddr 10.99.0.2 tcp sport 7402 "
	    "tcp dport 40999 accept") == NULL ||
	    strstr(out, "ip6 saddr fd00:77::180 ip6 daddr fd00:77::10 tcp "
	    "sport 7400 tcp dport 51000 accept") == NULL)
		fail_msg("out:\n%s", out);
	/* ahead of the lock's own rules (the chain's policy drops) */
	assert_non_null(strstr(in, "iif \"lo\""));
	assert_true(strstr(in, "tcp dport") < strstr(in, "iif \"lo\""));
	free(in);
	free(out);
	assert_int_equal(nslock_pass(SELF, d, NSLOCK_PASS_MAX + 1, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "at most"));
	assert_int_equal(nslock_pass(SELF, d, 0, err, sizeof(err)), 0);
	assert_int_equal(nslock_unlock(SELF, err, sizeof(err)), 0);
}

/* A namespace that is not there: an error that names it, nothing done;
 * a batch too large for one message: refused before it is sent. */
static void
test_no_namespace(void **state)
{
	char err[256] = "", name[514];
	struct nftbatch_table t = { NFTBATCH_INET, NSLOCK_TABLE }, many[16];
	int i;

	(void)state;
	assert_int_equal(nslock_unlock("migr-test-no-such-ns", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "migr-test-no-such-ns"));
	assert_int_equal(nftbatch_delete("migr-test-no-such-ns", &t, 1, err,
	    sizeof(err)), -1);
	/* more than one batch holds: refused before anything is sent */
	assert_int_equal(nftbatch_delete(SELF, &t, 17, err, sizeof(err)), -1);
	assert_string_equal(err, "nf_tables: 17 tables in one batch");
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (i = 0; i < 16; i++) {
		many[i].family = NFTBATCH_INET;
		many[i].name = name;
	}
	assert_int_equal(nftbatch_delete(SELF, many, 1, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "nf_tables: a table name of 513 "
	    "characters");
	name[500] = '\0';
	assert_int_equal(nftbatch_delete(SELF, many, 16, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "nf_tables: the batch is larger than "));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unlock_all, setup),
		cmocka_unit_test_setup(test_unlock_missing, setup),
		cmocka_unit_test_setup(test_unlock_leaves_others, setup),
		cmocka_unit_test_setup(test_failed_batch_changes_nothing,
		    setup),
		cmocka_unit_test_setup(test_pass, setup),
		cmocka_unit_test(test_no_namespace),
	};

	if (unshare(CLONE_NEWNET) == 0 && system("ip link set lo up && "
	    "ip link add d0 type veth peer name d1 && "
	    "ip addr add 10.99.0.1/24 dev d0 && ip link set d1 up && "
	    "ip link set d0 up") == 0)
		have_netns = 1;
	else
		fprintf(stderr, "# no private network namespace with a veth "
		    "pair (not root?): cases skipped\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
