/* SPDX-License-Identifier: ISC */
/*
 * imgdir (common/ckpt): CRIU's image folder, listed and read on one
 * side, written on the other from a peer's pieces.  A folder of files
 * (one empty, one of 1 MiB and odd bytes) goes through in pieces of
 * 1000 bytes and comes out byte for byte; then what a hostile peer could
 * send is refused with nothing written beyond it: names that leave the
 * folder or hide, a name twice or out of order, a piece at the wrong
 * offset, more bytes or files than allowed, a folder that exists.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "imgdir.h"

static char base[64];

static void
mkfile(const char *dir, const char *name, size_t size, unsigned seed)
{
	char path[PATH_MAX];
	unsigned char *b = malloc(size + 1);
	size_t i;
	FILE *f;

	assert_non_null(b);
	for (i = 0; i < size; i++)
		b[i] = (unsigned char)((i * 131 + seed) ^ (i >> 9));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(b, 1, size, f), size);
	fclose(f);
	free(b);
}

static int
same_file(const char *a, const char *b)
{
	char cmd[2 * PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

static int
setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/test_imgdir.XXXXXX");
	return mkdtemp(base) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

/* Send every file of src into rx in pieces of n bytes. */
static void
send_all(const char *src, struct imgdir_rx *rx, size_t n)
{
	struct imgdir_file *f;
	char err[256], *buf = malloc(n);
	size_t nf, i;

	assert_non_null(buf);
	assert_int_equal(imgdir_list(src, 100, &f, &nf, err, sizeof(err)), 0);
	for (i = 0; i < nf; i++) {
		uint64_t off = 0;
		ssize_t r;

		do {
			r = imgdir_read(src, f[i].name, off, buf, n, err,
			    sizeof(err));
			assert_true(r >= 0);
			/* an empty file still comes, as one empty piece */
			if (r == 0 && off > 0)
				break;
			if (imgdir_rx_put(rx, f[i].name, off, buf, (size_t)r,
			    err, sizeof(err)) < 0)
				fail_msg("put %s: %s", f[i].name, err);
			off += (uint64_t)r;
		} while (r > 0);
	}
	assert_int_equal(imgdir_rx_finish(rx, err, sizeof(err)), 0);
	free(f);
	free(buf);
}

static void
test_round_trip(void **state)
{
	char src[128], dst[128], a[256], b[256], err[256];
	static const char *names[] = { "core-1.img", "empty.img",
	    "inventory.img", "pages-1.img", "stats-dump" };
	struct imgdir_file *f;
	struct imgdir_rx rx;
	size_t nf, i;

	(void)state;
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(dst, sizeof(dst), "%s/dst", base);
	assert_int_equal(mkdir(src, 0700), 0);
	mkfile(src, "pages-1.img", 1 << 20, 7);
	mkfile(src, "core-1.img", 4097, 1);
	mkfile(src, "inventory.img", 33, 2);
	mkfile(src, "empty.img", 0, 0);
	mkfile(src, "stats-dump", 999, 3);
	assert_int_equal(imgdir_list(src, 100, &f, &nf, err, sizeof(err)), 0);
	assert_int_equal(nf, 5);
	for (i = 0; i < nf; i++)	/* sorted */
		assert_string_equal(f[i].name, names[i]);
	assert_int_equal(f[3].size, 1 << 20);
	free(f);
	assert_int_equal(imgdir_rx_open(&rx, dst, 2 << 20, 16, err,
	    sizeof(err)), 0);
	send_all(src, &rx, 1000);
	assert_int_equal(rx.nfiles, 5);
	imgdir_rx_close(&rx);
	for (i = 0; i < nf; i++) {
		snprintf(a, sizeof(a), "%s/%s", src, names[i]);
		snprintf(b, sizeof(b), "%s/%s", dst, names[i]);
		assert_true(same_file(a, b));
	}
	/* an existing folder is never taken over */
	assert_int_equal(imgdir_rx_open(&rx, dst, 1, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "File exists"));
	/* a folder that holds something else is not sent */
	assert_int_equal(unlink(a), 0);
	assert_int_equal(symlink("/etc/passwd", a), 0);
	assert_int_equal(imgdir_list(src, 100, &f, &nf, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(a);
	assert_int_equal(imgdir_list(src, 3, &f, &nf, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 3 files"));
}

static void
test_names(void **state)
{
	char long_name[IMGDIR_NAME_MAX + 2];

	(void)state;
	assert_true(imgdir_name_ok("pages-12.img"));
	assert_true(imgdir_name_ok("stats_restore"));
	assert_false(imgdir_name_ok(""));
	assert_false(imgdir_name_ok(NULL));
	assert_false(imgdir_name_ok("."));
	assert_false(imgdir_name_ok(".."));
	assert_false(imgdir_name_ok(".hidden"));
	assert_false(imgdir_name_ok("../etc"));
	assert_false(imgdir_name_ok("a/b"));
	assert_false(imgdir_name_ok("a b"));
	assert_false(imgdir_name_ok("caf\xc3\xa9"));
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[IMGDIR_NAME_MAX] = '\0';
	assert_true(imgdir_name_ok(long_name));
	long_name[IMGDIR_NAME_MAX] = 'a';
	long_name[IMGDIR_NAME_MAX + 1] = '\0';
	assert_false(imgdir_name_ok(long_name));
}

static size_t
count_files(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return (size_t)-1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void
test_hostile_pieces(void **state)
{
	char dst[128], err[256], path[256];
	struct imgdir_rx rx;
	struct stat st;

	(void)state;
	snprintf(dst, sizeof(dst), "%s/hostile", base);
	assert_int_equal(imgdir_rx_open(&rx, dst, 100, 3, err, sizeof(err)),
	    0);
	assert_int_equal(imgdir_rx_put(&rx, "../escape", 0, "x", 1, err,
	    sizeof(err)), -1);
	assert_int_equal(imgdir_rx_put(&rx, ".profile", 0, "x", 1, err,
	    sizeof(err)), -1);
	assert_int_equal(imgdir_rx_put(&rx, "b.img", 5, "x", 1, err,
	    sizeof(err)), -1);		/* a new file starts at 0 */
	assert_non_null(strstr(err, "expected 0"));
	assert_int_equal(imgdir_rx_put(&rx, "b.img", 0, "0123", 4, err,
	    sizeof(err)), 0);
	assert_int_equal(imgdir_rx_put(&rx, "b.img", 2, "xx", 2, err,
	    sizeof(err)), -1);		/* no overwrite, no hole */
	assert_int_equal(imgdir_rx_put(&rx, "b.img", 9, "xx", 2, err,
	    sizeof(err)), -1);
	assert_int_equal(imgdir_rx_put(&rx, "a.img", 0, "x", 1, err,
	    sizeof(err)), -1);		/* out of order */
	assert_non_null(strstr(err, "out of order"));
	assert_int_equal(imgdir_rx_put(&rx, "c.img", 0, "x", 1, err,
	    sizeof(err)), 0);
	assert_int_equal(imgdir_rx_put(&rx, "b.img", 4, "x", 1, err,
	    sizeof(err)), -1);		/* b is over: never again */
	assert_int_equal(imgdir_rx_put(&rx, "d.img", 0, "x", 1, err,
	    sizeof(err)), 0);
	assert_int_equal(imgdir_rx_put(&rx, "e.img", 0, "x", 1, err,
	    sizeof(err)), -1);		/* a fourth file */
	assert_non_null(strstr(err, "more than 3"));
	{
		char big[200];

		memset(big, 'z', sizeof(big));
		assert_int_equal(imgdir_rx_put(&rx, "d.img", 1, big,
		    sizeof(big), err, sizeof(err)), -1);
		assert_non_null(strstr(err, "above 100 bytes"));
	}
	assert_int_equal(imgdir_rx_finish(&rx, err, sizeof(err)), 0);
	/* nothing outside, nothing hidden, b as first written */
	snprintf(path, sizeof(path), "%s/escape", base);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(count_files(dst), 3);
	snprintf(path, sizeof(path), "%s/b.img", dst);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4);
	imgdir_rx_discard(&rx);
	assert_int_equal(stat(dst, &st), -1);
	assert_int_equal(errno, ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_hostile_pieces),
	};

	return cmocka_run_group_tests_name("imgdir", tests, setup, teardown);
}
