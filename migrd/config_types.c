/* SPDX-License-Identifier: ISC */
/*
 * The generic value types of migrd.conf: unsigned integers with a range,
 * absolute paths and names that fit their field, and enumerations (a
 * boolean is the enumeration no/yes).  Each parses the one word after
 * its keyword into the field of struct migrd_conf the keyword's table
 * entry names, sets the entry's default there, and formats the field
 * back as the word that parses to it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_keys.h"
#include "log.h"

const char *const conf_unit_names[] = {
	[CU_NONE] = "",
	[CU_BYTES] = "bytes",
	[CU_MS] = "milliseconds",
	[CU_SECONDS] = "seconds",
};

const char *const conf_yesno[] = { "no", "yes", NULL };

void
conf_err(struct conf_ctx *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->line > 0)
		log_warnx("%s:%d: %s", p->file, p->line, msg);
	else
		log_warnx("%s: %s", p->file, msg);
	p->errors++;
}

int
conf_get_uint(struct conf_ctx *p, const char *kw, const char *s, uint32_t min,
    uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9') {
		conf_err(p, "%s: '%s' is not a number", kw, s);
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0' || errno == ERANGE) {
		conf_err(p, "%s: '%s' is not a number", kw, s);
		return -1;
	}
	if (v < min || v > max) {
		conf_err(p, "%s: %s is out of range %u-%u", kw, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int
conf_valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= CONF_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || (i > 0 && (ch == '-' ||
		    ch == '.' || ch == '_'))))
			return 0;
	}
	return 1;
}

/*
 * Store s (shorter than size, checked by the caller) and zero the rest
 * of the field, so that equal configurations are equal byte for byte.
 */
void
conf_set_str(char *dst, size_t size, const char *s)
{
	memset(dst, 0, size);
	memcpy(dst, s, strlen(s));
}

static void *
field(const struct conf_key *k, struct migrd_conf *c)
{
	return (char *)c + k->off;
}

static const void *
cfield(const struct conf_key *k, const struct migrd_conf *c)
{
	return (const char *)c + k->off;
}

static int
uint_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	(void)n;
	return conf_get_uint(p, k->name, w[1], k->min, k->max,
	    field(k, p->c));
}

static void
uint_init(const struct conf_key *k, struct migrd_conf *c)
{
	uint32_t *v = field(k, c);

	*v = k->defu;
}

static int
uint_value(const struct conf_key *k, const struct migrd_conf *c, int i,
    char *buf, size_t len)
{
	const uint32_t *v = cfield(k, c);

	if (i > 0)
		return -1;
	snprintf(buf, len, "%u", *v);
	return 0;
}

static int
path_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	(void)n;
	if ((k->flags & CK_AUTO) && strcmp(w[1], "auto") == 0) {
		conf_set_str(field(k, p->c), k->size, w[1]);
		return 0;
	}
	if (w[1][0] != '/') {
		conf_err(p, "%s: '%s' must be an absolute path%s", k->name,
		    w[1], (k->flags & CK_AUTO) ? " or auto" : "");
		return -1;
	}
	if (strlen(w[1]) >= k->size) {
		conf_err(p, "%s: value is longer than %zu characters", k->name,
		    k->size - 1);
		return -1;
	}
	conf_set_str(field(k, p->c), k->size, w[1]);
	return 0;
}

static int
name_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	(void)n;
	if (!conf_valid_name(w[1]) || strlen(w[1]) >= k->size) {
		conf_err(p, "%s: '%s' is not a valid %s", k->name, w[1],
		    k->what);
		return -1;
	}
	conf_set_str(field(k, p->c), k->size, w[1]);
	return 0;
}

static void
str_init(const struct conf_key *k, struct migrd_conf *c)
{
	if (k->defs != NULL)
		conf_set_str(field(k, c), k->size, k->defs);
}

static int
str_value(const struct conf_key *k, const struct migrd_conf *c, int i,
    char *buf, size_t len)
{
	const char *s = cfield(k, c);

	if (i > 0 || s[0] == '\0')
		return -1;
	snprintf(buf, len, "%s", s);
	return 0;
}

static int
enum_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	uint32_t *v = field(k, p->c);
	char list[256];
	size_t off;
	uint32_t i;

	(void)n;
	for (i = 0; k->choices[i] != NULL; i++) {
		if (strcmp(w[1], k->choices[i]) == 0) {
			*v = i;
			return 0;
		}
	}
	list[0] = '\0';
	for (i = 0, off = 0; k->choices[i] != NULL && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
		    i > 0 ? ", " : "", k->choices[i]);
	conf_err(p, "%s: '%s' is not one of %s", k->name, w[1], list);
	return -1;
}

static int
enum_value(const struct conf_key *k, const struct migrd_conf *c, int i,
    char *buf, size_t len)
{
	const uint32_t *v = cfield(k, c);

	if (i > 0)
		return -1;
	snprintf(buf, len, "%s", k->choices[*v]);
	return 0;
}

const struct conf_type conf_uint = {
	1, 1, uint_parse, uint_init, uint_value
};
const struct conf_type conf_path = {
	1, 1, path_parse, str_init, str_value
};
const struct conf_type conf_name = {
	1, 1, name_parse, str_init, str_value
};
const struct conf_type conf_enum = {
	1, 1, enum_parse, uint_init, enum_value
};
