/* SPDX-License-Identifier: ISC */
/*
 * The destination's side of checkpoint mode's images (mig_ckpt_dst.c,
 * ckpt_dst_image()): what a peer sends is hostile.  Passes of pre-copy
 * come in order, each into a folder of its own (STATE_DIR/ckpt/inpK-NS)
 * that the destination links to the pass before; the dump's images come
 * last, into in-NS, linked to the last pass; anything out of order, over
 * the budget, or named like the link is refused; a piece may come as a
 * binary tail (frame.h), byte for byte; the cleanup leaves nothing.
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

#include "ckpt_priv.h"
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

/* one MIG_IMAGE as frame_decode() hands on a binary tail: "raw" */
static int
image_raw(struct mig *m, const char *name, long off, const void *bytes,
    size_t n, int also_data, char *why, size_t len)
{
	json_t *msg;
	int rc;

	msg = json_pack("{s:s,s:s,s:I,s:o}", "mig", m->id, "name", name,
	    "off", (json_int_t)off, "raw", json_stringn_nocheck(bytes, n));
	if (also_data)
		json_object_set_new(msg, "data", json_string("eHh4"));
	rc = ckpt_dst_image(m, msg, why, len);
	json_decref(msg);
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

/* pieces as binary tails: byte for byte into the file; data and a
 * tail both, neither, or a tail above a piece are refused */
static void
test_raw_pieces(void **st)
{
	struct mig *m = new_mig(1 << 22);
	uint8_t *bytes, back[8000];
	char why[512], path[PATH_MAX + 32];
	json_t *msg;
	size_t i;
	FILE *f;

	(void)st;
	assert_non_null(bytes = malloc(CK_PIECE + 1));
	for (i = 0; i < CK_PIECE + 1; i++)
		bytes[i] = (uint8_t)(i * 13);	/* NULs among them */
	assert_int_equal(image_raw(m, "pages-1.img", 0, bytes, 5000, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(image_raw(m, "pages-1.img", 5000, bytes + 5000, 3000,
	    0, why, sizeof(why)), 0);
	assert_int_equal(m->ck_bytes, 8000);
	snprintf(path, sizeof(path), "%s/ckpt/in-t/pages-1.img", state);
	assert_non_null(f = fopen(path, "r"));
	assert_int_equal(fread(back, 1, sizeof(back), f), 8000);
	fclose(f);
	assert_memory_equal(back, bytes, 8000);
	assert_int_equal(image_raw(m, "pages-2.img", 0, bytes, 30, 1, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "not both"));
	assert_int_equal(image_raw(m, "pages-2.img", 0, bytes, CK_PIECE + 1,
	    0, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "a piece at 0 of"));
	msg = json_pack("{s:s,s:s,s:I}", "mig", m->id, "name", "pages-2.img",
	    "off", (json_int_t)0);
	assert_int_equal(ckpt_dst_image(m, msg, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "needs data or a binary tail"));
	json_decref(msg);
	ckpt_cleanup(m);
	assert_false(exists("in-t"));
	free(bytes);
	free(m);
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
		cmocka_unit_test(test_raw_pieces),
		cmocka_unit_test(test_passes_in_order),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_budget_and_link),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
