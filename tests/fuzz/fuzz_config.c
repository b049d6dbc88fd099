/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for migrd.conf (migrd/config*.c): the input is a
 * configuration file, read by config_parse_fp() through fmemopen().
 *
 * - Every error is logged once, as "fuzz:LINE: reason" (or "fuzz:
 *   reason" about the whole file), and counted: the count returned is
 *   the number of messages.
 * - What config_print() prints ("migrd -nv") parses back to the same
 *   configuration, errors or not: a value is kept only when it is
 *   valid, and every kept value prints as a statement that reads back
 *   to it.  A file without errors prints as one without errors.
 * - Printing is canonical: what the printed file parses to prints the
 *   same text again.
 *
 * The parser allocates nothing (struct migrd_conf is flat): the
 * sanitizers watch the reads and writes.
 *
 *   tests/fuzz/run.sh config [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int	nlogged;

/* Each message names the file, and the line when there is one. */
static void
sink(int prio, const char *msg, void *arg)
{
	const char *p;

	(void)prio;
	(void)arg;
	nlogged++;
	if (strncmp(msg, "fuzz:", 5) != 0) {
		fprintf(stderr, "error message without the file: \"%s\"\n",
		    msg);
		abort();
	}
	p = msg + 5;
	if (*p >= '1' && *p <= '9') {
		p += strspn(p, "0123456789");
		if (*p++ != ':') {
			fprintf(stderr, "bad line number: \"%s\"\n", msg);
			abort();
		}
	}
	if (*p != ' ' || p[1] == '\0') {
		fprintf(stderr, "error message without a reason: \"%s\"\n",
		    msg);
		abort();
	}
}

/* Parse len bytes of text into c: the errors, each logged. */
static int
parse(const void *text, size_t len, struct migrd_conf *c)
{
	FILE *fp;
	int errors;

	nlogged = 0;
	if ((fp = fmemopen((void *)text, len, "r")) == NULL)
		abort();
	errors = config_parse_fp(fp, "fuzz", c);
	fclose(fp);
	if (errors != nlogged) {
		fprintf(stderr, "%d errors counted, %d logged\n", errors,
		    nlogged);
		abort();
	}
	return errors;
}

/* config_print() into a malloc'ed string (*len bytes, not counting the
 * NUL at the end). */
static char *
print(const struct migrd_conf *c, size_t *len)
{
	char *buf = NULL;
	FILE *fp;

	if ((fp = open_memstream(&buf, len)) == NULL)
		abort();
	config_print(fp, c);
	if (fclose(fp) != 0 || buf == NULL || *len == 0)
		abort();
	return buf;
}

/* Equal but for where each peer was defined. */
static int
same(struct migrd_conf *a, struct migrd_conf *b)
{
	int i;

	for (i = 0; i < a->npeers; i++)
		a->peers[i].line = 0;
	for (i = 0; i < b->npeers; i++)
		b->peers[i].line = 0;
	return memcmp(a, b, sizeof(*a)) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct migrd_conf c1, c2, c3;
	char *t1, *t2;
	size_t l1, l2;
	int e1, e2;

	if (size == 0)
		return 0;	/* fmemopen() wants a buffer */
	log_set_sink(sink, NULL);
	e1 = parse(data, size, &c1);
	t1 = print(&c1, &l1);
	e2 = parse(t1, l1, &c2);
	if (!same(&c1, &c2)) {
		fprintf(stderr, "printed configuration reads back "
		    "otherwise:\n%s", t1);
		abort();
	}
	if (e1 == 0 && e2 != 0) {
		fprintf(stderr, "a good configuration printed with %d "
		    "errors:\n%s", e2, t1);
		abort();
	}
	parse(t1, l1, &c3);
	t2 = print(&c3, &l2);
	if (l1 != l2 || memcmp(t1, t2, l1) != 0) {
		fprintf(stderr, "not canonical:\n%s\n%s", t1, t2);
		abort();
	}
	free(t1);
	free(t2);
	return 0;
}
