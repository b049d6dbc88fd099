/* SPDX-License-Identifier: ISC */
/*
 * docs/man/migrd.conf.5 against the keyword table of migrd/config_keys.c:
 * the same keywords in the same order, and for each the default, range
 * and unit the table has.  The page follows a convention for this (see
 * the comment above its keyword list):
 *
 *	.It Ic keyword Ar unit ...
 *	...
 *	The range is MIN to MAX.			(numbers)
 *	The default is VALUE.				(if it has one)
 *	The default is					(or: a path)
 *	.Pa VALUE .
 *
 * where VALUE is written as "migrd -nv" prints it.  Tests run from the
 * repository root (tests/run), so the page is found from there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "config_keys.h"

#define MAN_PAGE	"docs/man/migrd.conf.5"
#define MAN_KEYS_MAX	64

struct man_key {
	char	name[64];
	char	arg[64];	/* the first "Ar" of the .It line */
	char	def[256];	/* VALUE of "The default is VALUE." */
	int	ndefs;		/* how many "The default is" */
	char	range[64];	/* "MIN to MAX" */
	int	required;	/* "required" in the paragraph */
	int	line;
};

static struct man_key man[MAN_KEYS_MAX];
static int nman;

/* s without a trailing " ." or "." (the sentence's end), into dst */
static void
copy_value(char *dst, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (n > 0 && s[n - 1] == '.')
		n--;
	while (n > 0 && s[n - 1] == ' ')
		n--;
	snprintf(dst, len, "%.*s", (int)n, s);
}

/* ".It Ic name Ar arg ..." */
static void
start_key(struct man_key *m, const char *s, int line)
{
	const char *ar;

	memset(m, 0, sizeof(*m));
	m->line = line;
	sscanf(s, "%63s", m->name);
	if ((ar = strstr(s, " Ar ")) != NULL)
		sscanf(ar + 4, "%63s", m->arg);
}

static int
load_man(void **state)
{
	FILE *fp;
	char buf[1024];
	struct man_key *m = NULL;
	int lineno = 0, desc = 0, depth = 0, pending = 0;

	(void)state;
	if ((fp = fopen(MAN_PAGE, "r")) == NULL) {
		print_error("%s: cannot open (tests run from the repository "
		    "root)\n", MAN_PAGE);
		return -1;
	}
	nman = 0;
	while (fgets(buf, sizeof(buf), fp) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		lineno++;
		if (strncmp(buf, ".Sh ", 4) == 0) {
			desc = strcmp(buf + 4, "DESCRIPTION") == 0;
			m = NULL;
			continue;
		}
		if (!desc || strncmp(buf, ".\\\"", 3) == 0)
			continue;
		if (strncmp(buf, ".Bl ", 4) == 0) {
			depth++;
			continue;
		}
		if (strcmp(buf, ".El") == 0) {
			if (--depth == 0)
				m = NULL;
			continue;
		}
		if (depth == 1 && strncmp(buf, ".It", 3) == 0) {
			m = NULL;
			if (strncmp(buf, ".It Ic ", 7) != 0)
				continue;
			if (nman == MAN_KEYS_MAX) {
				print_error("%s: more than %d keywords\n",
				    MAN_PAGE, MAN_KEYS_MAX);
				fclose(fp);
				return -1;
			}
			m = &man[nman++];
			start_key(m, buf + 7, lineno);
			continue;
		}
		if (m == NULL)
			continue;
		if (pending) {
			/* ".Pa VALUE ." */
			const char *v = strchr(buf, ' ');

			if (buf[0] == '.' && v != NULL)
				copy_value(m->def, sizeof(m->def), v + 1);
			pending = 0;
		}
		if (strcmp(buf, "The default is") == 0) {
			m->ndefs++;
			pending = 1;
		} else if (strncmp(buf, "The default is ", 15) == 0) {
			m->ndefs++;
			copy_value(m->def, sizeof(m->def), buf + 15);
		}
		if (strncmp(buf, "The range is ", 13) == 0)
			copy_value(m->range, sizeof(m->range), buf + 13);
		if (strstr(buf, "required") != NULL)
			m->required = 1;
	}
	fclose(fp);
	return 0;
}

static const struct man_key *
man_find(const char *name)
{
	int i;

	for (i = 0; i < nman; i++)
		if (strcmp(man[i].name, name) == 0)
			return &man[i];
	return NULL;
}

static void
test_table_keys_documented(void **state)
{
	size_t i;
	int missing = 0;

	(void)state;
	for (i = 0; i < conf_nkeys; i++) {
		if (man_find(conf_keys[i].name) == NULL) {
			print_error("%s: no \".It Ic %s\"\n", MAN_PAGE,
			    conf_keys[i].name);
			missing++;
		}
	}
	assert_int_equal(missing, 0);
}

static void
test_documented_keys_in_table(void **state)
{
	int i, unknown = 0;

	(void)state;
	assert_true(nman > 0);
	for (i = 0; i < nman; i++) {
		if (conf_key_find(man[i].name) == NULL) {
			print_error("%s:%d: '%s' is not in the keyword "
			    "table\n", MAN_PAGE, man[i].line, man[i].name);
			unknown++;
		}
	}
	assert_int_equal(unknown, 0);
}

static void
test_same_order(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal((size_t)nman, conf_nkeys);
	for (i = 0; i < conf_nkeys; i++) {
		if (strcmp(man[i].name, conf_keys[i].name) != 0)
			fail_msg("%s:%d: '%s' where the table has '%s'",
			    MAN_PAGE, man[i].line, man[i].name,
			    conf_keys[i].name);
	}
}

static void
test_defaults_match(void **state)
{
	struct migrd_conf d;
	const struct conf_key *k;
	const struct man_key *m;
	char val[CONF_VALUE_MAX];
	size_t i;
	int bad = 0;

	(void)state;
	config_defaults(&d);
	for (i = 0; i < conf_nkeys; i++) {
		k = &conf_keys[i];
		if ((m = man_find(k->name)) == NULL)
			continue;	/* test_table_keys_documented */
		if (k->type->value(k, &d, 0, val, sizeof(val)) == -1) {
			if (m->ndefs != 0) {
				print_error("%s:%d: %s has no default, the "
				    "page gives '%s'\n", MAN_PAGE, m->line,
				    k->name, m->def);
				bad++;
			}
		} else if (m->ndefs != 1 || strcmp(m->def, val) != 0) {
			print_error("%s:%d: %s: the default is '%s', the page "
			    "gives %d default(s), '%s'\n", MAN_PAGE, m->line,
			    k->name, val, m->ndefs, m->def);
			bad++;
		}
		if ((k->flags & CK_REQUIRED) && !m->required) {
			print_error("%s:%d: %s is required, the page does "
			    "not say so\n", MAN_PAGE, m->line, k->name);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void
test_ranges_and_units_match(void **state)
{
	const struct conf_key *k;
	const struct man_key *m;
	char range[64];
	const char *unit;
	size_t i;
	int bad = 0;

	(void)state;
	for (i = 0; i < conf_nkeys; i++) {
		k = &conf_keys[i];
		if (k->type != &conf_uint || (m = man_find(k->name)) == NULL)
			continue;
		snprintf(range, sizeof(range), "%u to %u", k->min, k->max);
		if (strcmp(m->range, range) != 0) {
			print_error("%s:%d: %s: the range is %s, the page "
			    "gives '%s'\n", MAN_PAGE, m->line, k->name, range,
			    m->range);
			bad++;
		}
		unit = k->unit == CU_NONE ? "n" : conf_unit_names[k->unit];
		if (strcmp(m->arg, unit) != 0) {
			print_error("%s:%d: %s takes %s, the page says "
			    "'Ar %s'\n", MAN_PAGE, m->line, k->name, unit,
			    m->arg);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_keys_documented),
		cmocka_unit_test(test_documented_keys_in_table),
		cmocka_unit_test(test_same_order),
		cmocka_unit_test(test_defaults_match),
		cmocka_unit_test(test_ranges_and_units_match),
	};

	return cmocka_run_group_tests_name("config_man", tests, load_man,
	    NULL);
}
