/* SPDX-License-Identifier: ISC */
/*
 * The "bufs" and "opts" objects of a socket record.  "opts" names each
 * option the engine carries (sk_optab.c) with its value: an integer, a
 * boolean, microseconds (timeouts), seconds (SO_LINGER), a string, or
 * base64 (binary values).  Only options that differ from a fresh socket
 * appear; an unknown name, a value of the wrong kind, out of range, or
 * an option the engine refuses is refused here, by name.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sk_b64.h"
#include "sk_json.h"
#include "sk_json_priv.h"

json_t *
sk_json_enc_bufs(const struct sk_state *st)
{
	return json_pack("{s:I, s:I, s:i}", "snd", (json_int_t)st->bufs.snd,
	    "rcv", (json_int_t)st->bufs.rcv, "lock", (int)st->bufs.lock);
}

int
sk_jbufs(struct sk_jctx *c, const json_t *top, struct sk_state *st)
{
	static const char *const keys[] = { "snd", "rcv", "lock", NULL };
	const json_t *j;
	int64_t v;

	if (sk_jobj(c, top, "", "bufs", true, &j) < 0 ||
	    sk_jkeys(c, j, "bufs", keys) < 0)
		return -1;
	if (sk_jint(c, j, "bufs", "snd", true, 0, INT_MAX, &v) < 0)
		return -1;
	st->bufs.snd = (uint32_t)v;
	if (sk_jint(c, j, "bufs", "rcv", true, 0, INT_MAX, &v) < 0)
		return -1;
	st->bufs.rcv = (uint32_t)v;
	if (sk_jint(c, j, "bufs", "lock", true, 0, 3, &v) < 0)
		return -1;
	st->bufs.lock = (uint8_t)v;
	return 0;
}

json_t *
sk_json_enc_opts(const struct sk_state *st)
{
	json_t *j = json_object(), *v;
	uint32_t i;

	if (j == NULL)
		return NULL;
	for (i = 0; i < st->nopts; i++) {
		const struct sk_opt *o = &st->opts[i];
		const char *name = sk_opt_name(o->id);

		if (name == NULL)
			goto out_free;
		switch (sk_opt_kind(o->id)) {
		case SK_OK_BOOL:
			v = json_boolean(o->ival != 0);
			break;
		case SK_OK_STRING:
			v = json_stringn((const char *)o->data, o->len);
			break;
		case SK_OK_BYTES:
			v = sk_json_b64(o->data, o->len);
			break;
		default:
			v = json_integer((json_int_t)o->ival);
			break;
		}
		if (v == NULL || json_object_set_new(j, name, v) < 0)
			goto out_free;
	}
	return j;

out_free:
	json_decref(j);
	return NULL;
}

/* One option's value, by its kind. */
static int
sk_jopt(struct sk_jctx *c, const char *name, const json_t *v,
    struct sk_opt *o)
{
	char why[160];
	size_t n;

	switch (sk_opt_kind(o->id)) {
	case SK_OK_BOOL:
		if (!json_is_boolean(v)) {
			sk_jerr(c, "opts", name, "not a boolean");
			return -1;
		}
		o->ival = json_is_true(v);
		return 0;
	case SK_OK_STRING:
		if (!json_is_string(v) || json_string_length(v) > 255) {
			sk_jerr(c, "opts", name, "not a string of at most 255 "
			    "bytes");
			return -1;
		}
		/*
		 * "" is a fresh socket's value of every string option that
		 * may be empty (SO_BINDTODEVICE), so the engine never
		 * carries it; and a state holding it could not be encoded
		 * (no data to write) nor checked (sk_opt_check() looks for
		 * a NUL in the data).
		 */
		if (json_string_length(v) == 0) {
			sk_jerr(c, "opts", name, "empty");
			return -1;
		}
		o->len = (uint32_t)json_string_length(v);
		if (o->len > 0 && (o->data = malloc(o->len)) == NULL) {
			sk_jerr(c, "opts", name, "out of memory");
			return -1;
		}
		if (o->len > 0)
			memcpy(o->data, json_string_value(v), o->len);
		return 0;
	case SK_OK_BYTES:
		/* no option holds more than a classic filter, 32 KiB */
		if (!json_is_string(v) ||
		    json_string_length(v) > sk_b64_enclen(32768)) {
			sk_jerr(c, "opts", name, "not base64 of at most 32768 "
			    "bytes");
			return -1;
		}
		if (sk_b64_decode(json_string_value(v), json_string_length(v),
		    &o->data, &n, why, sizeof(why)) < 0) {
			sk_jerr(c, "opts", name, "%s", why);
			return -1;
		}
		o->len = (uint32_t)n;
		return 0;
	default:
		if (!json_is_integer(v)) {
			sk_jerr(c, "opts", name, "not an integer");
			return -1;
		}
		o->ival = json_integer_value(v);
		return 0;
	}
}

/*
 * The engine applies the options in the order of its table (IP_TOS
 * before SO_PRIORITY, which setting IP_TOS changes; a filter before
 * SO_LOCK_FILTER), and reads them in that order; the keys of "opts"
 * come in whatever order the sender wrote them.
 */
static void
sk_jopts_sort(struct sk_state *st)
{
	struct sk_opt t;
	uint32_t i, j;

	for (i = 1; i < st->nopts; i++)
		for (j = i; j > 0 && st->opts[j - 1].id > st->opts[j].id; j--) {
			t = st->opts[j];
			st->opts[j] = st->opts[j - 1];
			st->opts[j - 1] = t;
		}
}

int
sk_jopts(struct sk_jctx *c, const json_t *top, struct sk_state *st)
{
	const json_t *j, *v;
	const char *name;
	char why[160], safe[40];
	size_t i;
	int rc, id;

	if ((rc = sk_jobj(c, top, "", "opts", false, &j)) != 0)
		return rc < 0 ? -1 : 0;
	if (json_object_size(j) > SK_OPTS_MAX) {
		sk_jerr(c, "", "opts", "more than %d options", SK_OPTS_MAX);
		return -1;
	}
	json_object_foreach((json_t *)j, name, v) {
		struct sk_opt *o = &st->opts[st->nopts];

		if ((id = sk_opt_find(name)) < 0) {
			/* hostile text: a bounded, clean copy */
			for (i = 0; name[i] != '\0' && i < sizeof(safe) - 1; i++)
				safe[i] = (name[i] >= 0x20 && name[i] < 0x7f) ?
				    name[i] : '?';
			safe[i] = '\0';
			sk_jerr(c, "opts", safe, "unknown option");
			return -1;
		}
		memset(o, 0, sizeof(*o));
		o->id = (uint16_t)id;
		st->nopts++;	/* owned by st from here: freed with it */
		if (sk_jopt(c, name, v, o) < 0)
			return -1;
		if (sk_opt_check(o, st->proto, st->family, st->state, why,
		    sizeof(why)) < 0) {
			sk_jerr(c, "", "opts", "%s", why);
			return -1;
		}
	}
	sk_jopts_sort(st);
	return 0;
}
