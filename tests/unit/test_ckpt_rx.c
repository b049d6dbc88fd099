/* SPDX-License-Identifier: ISC */
/*
 * The destination's side of checkpoint mode's images (mig_ckpt_dst.c,
 * ckpt_dst_image()): what a peer sends is hostile.  Passes of pre-copy
 * come in order, each into a folder of its own (STATE_DIR/ckpt/inpK-NS)
 * that the destination links to the pass before; the dump's images come
 * last, into in-NS, linked to the last pass; anything out of order, over
 * the budget, or named like the link is refused; the cleanup leaves
 * nothing.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mig_priv.h"
#include "migrd.h"

struct migrd migrd;

static char state[256];

/* one MIG_IMAGE: "data" is base64 of n bytes of 'x' */
static int
image(struct mig *m, int pass, const char *name, long off, size_t n,
    char *why, size_t len)
{
	static const char b64[] = "eHh4";	/* "xxx" */
	char *data;
	json_t *msg;
	size_t i;
	int rc;

	assert_int_equal(n % 3, 0);
	assert_non_null(data = calloc(n / 3 * 4 + 1, 1));
	for (i = 0; i < n / 3; i++)
		memcpy(data + 4 * i, b64, 4);
	msg = json_pack("{s:s,s:s,s:I,s:s}", "mig", m->id, "name", name,
	    "off", (json_int_t)off, "data", data);
	if (pass > 0)
		json_object_set_new(msg, "pass", json_integer(pass));
	rc = ckpt_dst_image(m, msg, why, len);
	json_decref(msg);
	free(data);
	return rc;
}

static char *
link_of(const char *dir)
{
	static char target[PATH_MAX];
	char path[PATH_MAX + 16];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/ckpt/%s/parent", state, dir);
	if ((n = readlink(path, target, sizeof(target) - 1)) < 0)
		return NULL;
	target[n] = '\0';
	return target;
}

static int
exists(const char *rel)
{
	char path[PATH_MAX + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ckpt/%s", state, rel);
	return lstat(path, &st) == 0;
}

static struct mig *
new_mig(uint64_t max)
{
	struct mig *m;

	assert_non_null(m = calloc(1, sizeof(*m)));
	m->role = MIG_DEST;
	m->ck = 1;
	m->ck_max = max;
	snprintf(m->id, sizeof(m->id), "host2-t-1");
	snprintf(m->ns, sizeof(m->ns), "t");
	snprintf(m->peer, sizeof(m->peer), "host2");
	return m;
}

static int
setup(void **st)
{
	(void)st;
	snprintf(state, sizeof(state), "/tmp/test_ckpt_rx.XXXXXX");
	assert_non_null(mkdtemp(state));
	snprintf(migrd.conf.state_dir, sizeof(migrd.conf.state_dir), "%s",
	    state);
	snprintf(migrd.conf.hostname, sizeof(migrd.conf.hostname), "host1");
	return 0;
}

static int
teardown(void **st)
{
	char path[PATH_MAX + 16];

	(void)st;
	snprintf(path, sizeof(path), "%s/ckpt", state);
	rmdir(path);
	assert_int_equal(rmdir(state), 0);	/* nothing left in it */
	return 0;
}

/* passes 1, 2, then the dump: folders, links, and the cleanup */
static void
test_passes_in_order(void **st)
{
	struct mig *m = new_mig(1 << 20);
	char why[512];

	(void)st;
	assert_int_equal(image(m, 1, "pages-1.img", 0, 3000, why,
	    sizeof(why)), 0);
	assert_int_equal(image(m, 1, "pages-1.img", 3000, 3000, why,
	    sizeof(why)), 0);
	assert_true(exists("inp1-t/pages-1.img"));
	assert_null(link_of("inp1-t"));		/* the first has none */
	assert_int_equal(image(m, 2, "pages-1.img", 0, 300, why,
	    sizeof(why)), 0);
	assert_string_equal(link_of("inp2-t"), "../inp1-t");
	assert_int_equal(image(m, 0, "core-1.img", 0, 30, why,
	    sizeof(why)), 0);
	assert_int_equal(image(m, 0, "pages-1.img", 0, 30, why,
	    sizeof(why)), 0);
	assert_string_equal(link_of("in-t"), "../inp2-t");
	assert_int_equal(m->ck_bytes, 6000 + 300 + 60);
	/* whole files so far: 1 + 1 before the dump's folder */
	assert_int_equal(m->ck_taken_files, 2);
	ckpt_cleanup(m);
	assert_false(exists("inp1-t"));
	assert_false(exists("inp2-t"));
	assert_false(exists("in-t"));
	free(m);
}

/* a pass out of order, or after the dump's images, is refused */
static void
test_out_of_order(void **st)
{
	struct mig *m = new_mig(1 << 20);
	char why[512];

	(void)st;
	assert_int_equal(image(m, 2, "a.img", 0, 3, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "pass 2 after pass 0"));
	assert_int_equal(image(m, 1, "a.img", 0, 3, why, sizeof(why)), 0);
	assert_int_equal(image(m, 3, "a.img", 0, 3, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "pass 3 after pass 1"));
	assert_int_equal(image(m, 2, "a.img", 0, 3, why, sizeof(why)), 0);
	assert_int_equal(image(m, 1, "b.img", 0, 3, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "pass 1 after pass 2"));
	assert_int_equal(image(m, 0, "a.img", 0, 3, why, sizeof(why)), 0);
	assert_int_equal(image(m, 3, "a.img", 0, 3, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "pass 3 after the dump's"));
	assert_int_equal(image(m, 9, "a.img", 0, 3, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "pass 9 (at most 8)"));
	ckpt_cleanup(m);
	free(m);
}

/* the budget counts every pass; the link's name is not a peer's */
static void
test_budget_and_link(void **st)
{
	struct mig *m = new_mig(6000);
	char why[512];

	(void)st;
	assert_int_equal(image(m, 1, "pages-1.img", 0, 3000, why,
	    sizeof(why)), 0);
	assert_int_equal(image(m, 2, "pages-1.img", 0, 2400, why,
	    sizeof(why)), 0);
	/* the dump's folder links to pass 2: a file "parent" is refused */
	assert_int_equal(image(m, 0, "parent", 0, 3, why, sizeof(why)), -1);
	assert_string_equal(link_of("in-t"), "../inp2-t");
	/* 5400 taken: 601 more is over the 6000 of the budget */
	assert_int_equal(image(m, 0, "pages-1.img", 0, 603, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "every pass of pre-copy included"));
	assert_int_equal(image(m, 0, "pages-1.img", 0, 600, why,
	    sizeof(why)), 0);
	ckpt_cleanup(m);
	assert_false(exists("in-t"));
	free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passes_in_order),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_budget_and_link),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
