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
	assert_true(src_downtime_end(1300, 1000, 120) == 1180);
	assert_true(src_downtime_end(1300, 1000, 0) == 1300);
	/* as far back as COMMIT itself, not before */
	assert_true(src_downtime_end(1300, 1000, 300) == 1000);
	assert_true(src_downtime_end(1300, 1000, 300.5) == 1300);
	assert_true(src_downtime_end(1300, 1000, 1e12) == 1300);
	/* unknown, or no COMMIT sent (it cannot be): at COMMITTED */
	assert_true(src_downtime_end(1300, 1000, -1) == 1300);
	assert_true(src_downtime_end(1300, 0, 50) == 1300);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_committed_fields),
		cmocka_unit_test(test_downtime_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
