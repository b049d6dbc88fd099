/* SPDX-License-Identifier: ISC */
/*
 * The committed-id store (migrd/migration/committed.c): what a
 * destination answers to a repeated COMMIT.  Entries are per source
 * peer: one peer's flood never pushes out another's, ids are matched
 * with their peer, and an entry goes only when its own peer says FORGET.
 * The state file round trip, and version 1 files (ids without a peer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "committed.h"

static int
teardown(void **state)
{
	(void)state;
	committed_clear();
	return 0;
}

/* What used to be a ring of 64 shared by all peers: a hostile peer's
 * thousand moves do not change what host1 is told about its own. */
static void
test_per_peer(void **state)
{
	char id[64];
	int i;

	(void)state;
	assert_int_equal(committed_add("host1", "host1-svc-1"), 0);
	for (i = 0; i < 1000; i++) {
		snprintf(id, sizeof(id), "evil-%d", i);
		assert_int_equal(committed_add("evil", id), 0);
	}
	assert_true(committed_has("host1", "host1-svc-1"));
	/* the id alone is not enough: the peer must be the one it went
	 * live for */
	assert_false(committed_has("evil", "host1-svc-1"));
	assert_false(committed_has("host1", "evil-3"));
	assert_int_equal(committed_count("host1"), 1);
	assert_int_equal(committed_count("evil"), 1000);
	/* a peer forgets only its own */
	assert_int_equal(committed_del("evil", "host1-svc-1"), 0);
	assert_true(committed_has("host1", "host1-svc-1"));
	assert_int_equal(committed_del("host1", "host1-svc-1"), 1);
	assert_false(committed_has("host1", "host1-svc-1"));
	assert_int_equal(committed_del("host1", "host1-svc-1"), 0);
	/* twice the same: one entry */
	assert_int_equal(committed_add("host2", "x"), 0);
	assert_int_equal(committed_add("host2", "x"), 0);
	assert_int_equal(committed_count("host2"), 1);
}

static void
each(const char *id, void *arg)
{
	char *out = arg;

	strcat(out, id);
	strcat(out, ";");
}

static void
test_state_file(void **state)
{
	char out[256] = "", *text;
	json_t *a, *b;

	(void)state;
	assert_int_equal(committed_add("host1", "a"), 0);
	assert_int_equal(committed_add("host2", "b"), 0);
	assert_non_null(a = committed_json());
	text = json_dumps(a, JSON_COMPACT);
	assert_string_equal(text, "[{\"peer\":\"host1\",\"mig\":\"a\"},"
	    "{\"peer\":\"host2\",\"mig\":\"b\"}]");
	free(text);
	committed_clear();
	assert_false(committed_has("host1", "a"));
	/* read back, with a version 1 entry, and bad ones skipped */
	json_array_append_new(a, json_string("old"));
	json_array_append_new(a, json_integer(7));
	json_array_append_new(a, json_pack("{s:s}", "mig", "no-peer"));
	json_array_append_new(a, json_pack("{s:s,s:s}", "peer", "host1",
	    "mig", ""));
	b = json_pack("{s:s,s:s}", "peer", "host1", "mig", "");
	json_object_set_new(b, "mig", json_string(
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "0123456789012345678901234567890123456789012345678901234567890123"));
	json_array_append_new(a, b);
	committed_load(a);
	json_decref(a);
	assert_true(committed_has("host1", "a"));
	assert_true(committed_has("host2", "b"));
	assert_false(committed_has("host2", "a"));
	/* an id from a version 1 file answers any peer, and any peer's
	 * FORGET removes it */
	assert_true(committed_has("host1", "old"));
	assert_true(committed_has("host2", "old"));
	assert_false(committed_has("host1", "no-peer"));
	committed_each("host1", each, out);
	assert_string_equal(out, "a;");
	assert_int_equal(committed_del("host2", "old"), 1);
	assert_false(committed_has("host1", "old"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_per_peer, teardown),
		cmocka_unit_test_teardown(test_state_file, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
