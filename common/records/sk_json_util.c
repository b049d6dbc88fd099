/* SPDX-License-Identifier: ISC */
/* Field readers for the strict record decoders (see sk_json_priv.h). */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sk_b64.h"
#include "sk_json_priv.h"

const char sk_jcs_ifname[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-@";

/* "path.key"; "key" at the top level; "path" for the object itself. */
void
sk_jpath(char *buf, size_t len, const char *path, const char *key)
{
	if (path[0] != '\0' && key[0] != '\0')
		snprintf(buf, len, "%s.%s", path, key);
	else
		snprintf(buf, len, "%s", path[0] != '\0' ? path : key);
}

void
sk_jerr(struct sk_jctx *c, const char *path, const char *key,
    const char *fmt, ...)
{
	char name[128];
	size_t n;
	va_list ap;

	sk_jpath(name, sizeof(name), path, key);
	snprintf(c->err, c->errlen, "%s: ", name);
	n = strlen(c->err);
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
}

int
sk_jkeys(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *const *allowed)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)obj, key, v) {
		(void)v;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (allowed[i] == NULL) {
			char safe[40];

			/* The key is hostile text: print a bounded, clean copy. */
			for (i = 0; key[i] != '\0' && i < sizeof(safe) - 1; i++)
				safe[i] = (key[i] >= 0x20 && key[i] < 0x7f) ?
				    key[i] : '?';
			safe[i] = '\0';
			sk_jerr(c, path, safe, "unknown field");
			return -1;
		}
	}
	return 0;
}

static const json_t *
sk_jget(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *key, bool required, int *rc)
{
	const json_t *v = json_object_get(obj, key);

	*rc = 0;
	if (v == NULL || (json_is_null(v) && !required)) {
		if (required) {
			sk_jerr(c, path, key, "missing");
			*rc = -1;
		} else
			*rc = 1;
		return NULL;
	}
	return v;
}

int
sk_jobj(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *key, bool required, const json_t **out)
{
	int rc;
	const json_t *v = sk_jget(c, obj, path, key, required, &rc);

	*out = NULL;
	if (v == NULL)
		return rc;
	if (!json_is_object(v)) {
		sk_jerr(c, path, key, "not an object");
		return -1;
	}
	*out = v;
	return 0;
}

int
sk_jint(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *key, bool required, int64_t min, int64_t max, int64_t *out)
{
	int rc;
	const json_t *v = sk_jget(c, obj, path, key, required, &rc);
	json_int_t i;

	if (v == NULL)
		return rc;
	if (!json_is_integer(v)) {
		sk_jerr(c, path, key, "not an integer");
		return -1;
	}
	i = json_integer_value(v);
	if (i < min || i > max) {
		sk_jerr(c, path, key, "%lld out of range %lld..%lld",
		    (long long)i, (long long)min, (long long)max);
		return -1;
	}
	*out = i;
	return 0;
}

int
sk_jbool(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *key, bool required, bool *out)
{
	int rc;
	const json_t *v = sk_jget(c, obj, path, key, required, &rc);

	if (v == NULL)
		return rc;
	if (!json_is_boolean(v)) {
		sk_jerr(c, path, key, "not a boolean");
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

int
sk_jstr(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *key, bool required, const char *charset, bool allow_empty,
    char *out, size_t max)
{
	int rc;
	const json_t *v = sk_jget(c, obj, path, key, required, &rc);
	const char *s;
	size_t len, i;

	if (v == NULL)
		return rc;
	if (!json_is_string(v)) {
		sk_jerr(c, path, key, "not a string");
		return -1;
	}
	s = json_string_value(v);
	len = json_string_length(v);
	if (len >= max || (len == 0 && !allow_empty)) {
		sk_jerr(c, path, key, "length %zu out of range %d..%zu", len,
		    allow_empty ? 0 : 1, max - 1);
		return -1;
	}
	for (i = 0; i < len; i++) {
		if (s[i] == '\0' || strchr(charset, s[i]) == NULL) {
			sk_jerr(c, path, key, "invalid character at offset "
			    "%zu", i);
			return -1;
		}
	}
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

int
sk_jfamily(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *key, int *family)
{
	char buf[8];

	if (sk_jstr(c, obj, path, key, true, "inet6", false, buf,
	    sizeof(buf)) < 0)
		return -1;
	if (strcmp(buf, "inet") == 0)
		*family = AF_INET;
	else if (strcmp(buf, "inet6") == 0)
		*family = AF_INET6;
	else {
		sk_jerr(c, path, key, "\"%s\" is not inet or inet6", buf);
		return -1;
	}
	return 0;
}

int
sk_jaddr(struct sk_jctx *c, const json_t *obj, const char *path,
    const char *key, bool required, int family, uint8_t *out)
{
	char buf[INET6_ADDRSTRLEN];
	int rc;

	rc = sk_jstr(c, obj, path, key, required, "0123456789abcdefABCDEF.:",
	    false, buf, sizeof(buf));
	if (rc != 0)
		return rc;
	if (inet_pton(family, buf, out) != 1) {
		sk_jerr(c, path, key, "not an %s address",
		    family == AF_INET ? "IPv4" : "IPv6");
		return -1;
	}
	return 0;
}

json_t *
sk_json_b64(const uint8_t *buf, size_t n)
{
	char *text = sk_b64_encode(buf, n);
	json_t *j;

	if (text == NULL)
		return NULL;
	/* jansson would check 4/3 n bytes of UTF-8 that cannot be wrong */
	j = json_stringn_nocheck(text, strlen(text));
	free(text);
	return j;
}
