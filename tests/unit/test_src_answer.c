/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the source's reading of its peer's answers
 * (migrd/migration/mig_src.c): COMMITTED's figures, hostile or absent,
 * and where the downtime ends with since_release_ms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>

#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"

struct migrd migrd;	/* mig_src.c's, unused here */

static void
answer(const char *text, struct src_answer *a)
{
	json_error_t e;
	json_t *msg = json_loads(text, 0, &e);

	assert_non_null(msg);
	src_answer(MSG_MIG_COMMITTED, msg, a);
	json_decref(msg);
}

static void
test_committed_fields(void **state)
{
	struct src_answer a;

	(void)state;
	answer("{\"mig\":\"m\",\"live_ms\":9.8,\"pid\":2211,\"reset\":1,"
	    "\"replayed\":50,\"since_release_ms\":3.5}", &a);
	assert_true(a.ms > 9.7 && a.ms < 9.9);
	assert_int_equal(a.pid, 2211);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.replayed, 50);
	assert_true(a.since_release > 3.4 && a.since_release < 3.6);
	assert_true(a.since_commit < 0);	/* absent */
	answer("{\"mig\":\"m\",\"since_release_ms\":7.5,"
	    "\"since_commit_ms\":40.25}", &a);
	assert_true(a.since_commit > 40.2 && a.since_commit < 40.3);
	/* an integer is a number too */
	answer("{\"mig\":\"m\",\"since_release_ms\":7}", &a);
	assert_true(a.since_release > 6.9 && a.since_release < 7.1);
	/* absent (a repeated COMMIT's answer, an older peer): unknown */
	answer("{\"mig\":\"m\"}", &a);
	assert_true(a.since_release < 0);
	assert_int_equal(a.replayed, 0);
	/* not a number: unknown */
	answer("{\"mig\":\"m\",\"since_release_ms\":\"12\"}", &a);
	assert_true(a.since_release < 0);
}

/* COMMIT first sent at 1000 ms, COMMITTED here at 1300 ms. */
static void
test_downtime_end(void **state)
{
	(void)state;
	/* released 120 ms before COMMITTED: the downtime ends then */
	assert_true(src_downtime_end(1300, 1000, 1, 120, -1) == 1180);
	assert_true(src_downtime_end(1300, 1000, 1, 0, -1) == 1300);
	/* as far back as COMMIT itself, not before */
	assert_true(src_downtime_end(1300, 1000, 1, 300, -1) == 1000);
	assert_true(src_downtime_end(1300, 1000, 1, 300.5, -1) == 1300);
	assert_true(src_downtime_end(1300, 1000, 1, 1e12, -1) == 1300);
	/* unknown, or no COMMIT sent (it cannot be): at COMMITTED */
	assert_true(src_downtime_end(1300, 1000, 1, -1, 260) == 1300);
	assert_true(src_downtime_end(1300, 0, 1, 50, 260) == 1300);
}

/* With since_commit_ms: the destination had COMMIT 260 ms of the 300,
 * so the channel's round trip was 40 ms, and COMMITTED's way here about
 * 20 of them. */
static void
test_downtime_end_way_back(void **state)
{
	(void)state;
	assert_true(src_downtime_end(1300, 1000, 1, 120, 260) == 1160);
	/* all of it on the way: half of 300 */
	assert_true(src_downtime_end(1300, 1000, 1, 0, 0) == 1150);
	/* COMMIT repeated: its round trip holds the outage, not taken */
	assert_true(src_downtime_end(1300, 1000, 2, 120, 260) == 1180);
	/* released before COMMIT came, or had COMMIT longer than it was
	 * sent: the figures do not fit, not taken */
	assert_true(src_downtime_end(1300, 1000, 1, 120, 100) == 1180);
	assert_true(src_downtime_end(1300, 1000, 1, 120, 301) == 1180);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_committed_fields),
		cmocka_unit_test(test_downtime_end),
		cmocka_unit_test(test_downtime_end_way_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
