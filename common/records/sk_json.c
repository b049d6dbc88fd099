/* SPDX-License-Identifier: ISC */
/*
 * Records, schema v2: the record-type dispatch, text parsing, and the
 * bound on a record's text.  Socket records are in sk_json_sock.c,
 * namespace records in sk_json_ns.c.  Field by field specification:
 * docs/protocol.md.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sk_b64.h"
#include "sk_json.h"
#include "sk_json_priv.h"

int
sk_json_decode(const json_t *j, const struct sk_json_limits *lim,
    struct sk_record *rec, char *err, size_t errlen)
{
	struct sk_jctx c = { err, errlen, SK_JSON_MAX_QUEUE, false };
	struct sk_state *st;
	char type[16];
	int64_t v;

	memset(rec, 0, sizeof(*rec));
	if (errlen > 0)
		err[0] = '\0';
	if (lim != NULL && lim->max_queue != 0)
		c.max_queue = lim->max_queue;
	if (lim != NULL)
		c.chunks = lim->chunks;
	if (!json_is_object(j)) {
		snprintf(err, errlen, "record: not an object");
		return -1;
	}
	if (sk_jint(&c, j, "", "v", true, INT64_MIN, INT64_MAX, &v) < 0)
		return -1;
	if (v != SK_JSON_VERSION) {
		snprintf(err, errlen, "v: version %lld not supported (this "
		    "side speaks %d)", (long long)v, SK_JSON_VERSION);
		return -1;
	}
	if (sk_jstr(&c, j, "", "type", true, "abcdefghijklmnopqrstuvwxyz",
	    false, type, sizeof(type)) < 0)
		return -1;
	if (strcmp(type, "socket") == 0) {
		if ((st = sk_state_new()) == NULL) {
			snprintf(err, errlen, "record: out of memory");
			return -1;
		}
		if (sk_jsocket(&c, j, st, rec) < 0) {
			sk_state_free(st);
			memset(rec, 0, sizeof(*rec));
			return -1;
		}
		rec->type = SK_REC_SOCKET;
		rec->u.sock = st;
		rec->max_queue = c.max_queue;
		return 0;
	}
	if (strcmp(type, "link") == 0) {
		rec->type = SK_REC_LINK;
		return sk_json_decode_link(&c, j, &rec->u.link);
	}
	if (strcmp(type, "addr") == 0) {
		rec->type = SK_REC_ADDR;
		return sk_json_decode_addr(&c, j, &rec->u.addr);
	}
	if (strcmp(type, "route") == 0) {
		rec->type = SK_REC_ROUTE;
		return sk_json_decode_route(&c, j, &rec->u.route);
	}
	snprintf(err, errlen, "type: unknown record type \"%s\"", type);
	return -1;
}

size_t
sk_json_max_text(const struct sk_json_limits *lim)
{
	uint32_t q = lim != NULL && lim->max_queue != 0 ? lim->max_queue :
	    SK_JSON_MAX_QUEUE;

	/* Two queues (or the datagrams, a little more than their bytes)
	 * in base64, plus room for every other field and 64 options. */
	return 2 * sk_b64_enclen(q) + (size_t)SK_DGRAMS_MAX * 160 + 262144;
}

int
sk_json_parse(const char *buf, size_t len, const struct sk_json_limits *lim,
    struct sk_record *rec, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *j;
	int rc;

	memset(rec, 0, sizeof(*rec));
	if (len > sk_json_max_text(lim)) {
		snprintf(err, errlen, "record: %zu bytes, limit %zu", len,
		    sk_json_max_text(lim));
		return -1;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (j == NULL) {
		snprintf(err, errlen, "record: invalid JSON at line %d "
		    "column %d: %s", jerr.line, jerr.column, jerr.text);
		return -1;
	}
	rc = sk_json_decode(j, lim, rec, err, errlen);
	json_decref(j);
	return rc;
}

void
sk_record_clear(struct sk_record *rec)
{
	if (rec->type == SK_REC_SOCKET)
		sk_state_free(rec->u.sock);
	memset(rec, 0, sizeof(*rec));
}
