/* SPDX-License-Identifier: ISC */
/*
 * Chunks: the parts of a socket record too large for one frame.  The
 * record announced their sizes (and the decoder allocated them within
 * its bounds); each chunk brings the next piece, in order, and nothing
 * past what was announced.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sk_b64.h"
#include "sk_json.h"
#include "sk_json_priv.h"

json_t *
sk_json_chunk(const struct sk_state *st, enum sk_part p, uint32_t off,
    uint32_t n)
{
	const uint8_t *base;
	json_t *a;
	uint32_t i, len;

	if (p == SK_PART_DGRAMS) {
		if (off > st->udp.ndgrams || n > st->udp.ndgrams - off ||
		    (a = json_array()) == NULL)
			return NULL;
		for (i = off; i < off + n; i++)
			if (json_array_append_new(a,
			    sk_json_enc_dgram(&st->udp.dgrams[i])) < 0) {
				json_decref(a);
				return NULL;
			}
		return json_pack("{s:s, s:I, s:o}", "part", "dgrams", "off",
		    (json_int_t)off, "dgrams", a);
	}
	base = p == SK_PART_SNDQ ? st->tcp.sndq : st->tcp.rcvq;
	len = p == SK_PART_SNDQ ? st->tcp.sndq_len : st->tcp.rcvq_len;
	if (off > len || n > len - off)
		return NULL;
	return json_pack("{s:s, s:I, s:o}", "part", sk_part_name(p), "off",
	    (json_int_t)off, "data", sk_json_b64(base + off, n));
}

json_t *
sk_json_chunk_head(const struct sk_state *st, enum sk_part p, uint32_t off,
    uint32_t n, const uint8_t **bytes)
{
	const uint8_t *base;
	uint32_t len;

	if (p != SK_PART_SNDQ && p != SK_PART_RCVQ)
		return NULL;
	base = p == SK_PART_SNDQ ? st->tcp.sndq : st->tcp.rcvq;
	len = p == SK_PART_SNDQ ? st->tcp.sndq_len : st->tcp.rcvq_len;
	if (n == 0 || off > len || n > len - off)
		return NULL;
	*bytes = base + off;
	return json_pack("{s:s, s:I}", "part", sk_part_name(p), "off",
	    (json_int_t)off);
}

uint64_t
sk_record_pending(const struct sk_record *rec)
{
	uint64_t n = 0;
	int p;

	for (p = 0; p < SK_PART__MAX; p++)
		n += rec->pending[p];
	return n;
}

/* A chunk's bytes, as they came (a frame's binary tail): no more than
 * the part still waits for, and at least one. */
static int
add_raw(struct sk_jctx *c, struct sk_record *rec, enum sk_part p,
    const void *raw, size_t n)
{
	struct sk_tcp *t = &rec->u.sock->tcp;
	uint8_t *dst = p == SK_PART_SNDQ ? t->sndq : t->rcvq;

	if (n == 0 || n > rec->pending[p]) {
		sk_jerr(c, "chunk", "tail", "%zu bytes, %u announced", n,
		    rec->pending[p]);
		return -1;
	}
	memcpy(dst + rec->filled[p], raw, n);
	rec->filled[p] += (uint32_t)n;
	rec->pending[p] -= (uint32_t)n;
	return 0;
}

static int
add_bytes(struct sk_jctx *c, struct sk_record *rec, enum sk_part p,
    const json_t *chunk)
{
	struct sk_tcp *t = &rec->u.sock->tcp;
	uint8_t *dst = p == SK_PART_SNDQ ? t->sndq : t->rcvq, *buf;
	const json_t *d = json_object_get(chunk, "data");
	char why[96];
	size_t n;

	if (!json_is_string(d) || json_string_length(d) >
	    sk_b64_enclen(rec->pending[p])) {
		sk_jerr(c, "chunk", "data", "not base64 of at most the %u "
		    "bytes announced", rec->pending[p]);
		return -1;
	}
	if (sk_b64_decode(json_string_value(d), json_string_length(d), &buf,
	    &n, why, sizeof(why)) < 0) {
		sk_jerr(c, "chunk", "data", "%s", why);
		return -1;
	}
	if (n == 0 || n > rec->pending[p]) {
		sk_jerr(c, "chunk", "data", "%zu bytes, %u announced", n,
		    rec->pending[p]);
		free(buf);
		return -1;
	}
	memcpy(dst + rec->filled[p], buf, n);
	free(buf);
	rec->filled[p] += (uint32_t)n;
	rec->pending[p] -= (uint32_t)n;
	return 0;
}

/*
 * The datagrams of a chunk, all or none: a refused chunk leaves the
 * record as it was (udp.ndgrams == filled, what the next chunk's
 * offset and the room allocated for the announced count rely on).
 */
static int
add_dgrams(struct sk_jctx *c, struct sk_record *rec, const json_t *chunk)
{
	struct sk_state *st = rec->u.sock;
	const json_t *a = json_object_get(chunk, "dgrams"), *d;
	uint32_t i, first = st->udp.ndgrams, n;
	uint64_t bytes = 0;
	size_t k;

	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > rec->pending[SK_PART_DGRAMS]) {
		sk_jerr(c, "chunk", "dgrams", "not an array of 1 to the %u "
		    "datagrams announced", rec->pending[SK_PART_DGRAMS]);
		return -1;
	}
	n = (uint32_t)json_array_size(a);
	for (i = 0; i < first; i++)
		bytes += st->udp.dgrams[i].len;
	json_array_foreach(a, k, d) {
		char path[40];

		snprintf(path, sizeof(path), "chunk.dgrams[%zu]", k);
		st->udp.ndgrams++;	/* owned by st from here */
		if (sk_jdgram(c, d, path, st,
		    &st->udp.dgrams[st->udp.ndgrams - 1], &bytes) < 0)
			goto undo;
	}
	rec->filled[SK_PART_DGRAMS] += n;
	rec->pending[SK_PART_DGRAMS] -= n;
	return 0;

undo:
	while (st->udp.ndgrams > first) {
		struct sk_dgram *g = &st->udp.dgrams[--st->udp.ndgrams];

		free(g->data);
		memset(g, 0, sizeof(*g));
	}
	return -1;
}

int
sk_record_add_chunk(struct sk_record *rec, const json_t *chunk, char *err,
    size_t errlen)
{
	return sk_record_add_chunk_raw(rec, chunk, NULL, 0, err, errlen);
}

int
sk_record_add_chunk_raw(struct sk_record *rec, const json_t *chunk,
    const void *raw, size_t rawlen, char *err, size_t errlen)
{
	static const char *const k_bytes[] = { "part", "off", "data", NULL };
	static const char *const k_raw[] = { "part", "off", NULL };
	static const char *const k_dgrams[] = { "part", "off", "dgrams", NULL };
	struct sk_jctx c = { err, errlen, SK_JSON_MAX_QUEUE, true };
	char part[16];
	int64_t off;
	int p;

	if (errlen > 0)
		err[0] = '\0';
	/* the datagrams' bytes: within the limits of the record's decoder */
	if (rec->max_queue != 0)
		c.max_queue = rec->max_queue;
	if (rec->type != SK_REC_SOCKET || sk_record_pending(rec) == 0) {
		snprintf(err, errlen, "chunk: no record waits for one");
		return -1;
	}
	if (!json_is_object(chunk)) {
		snprintf(err, errlen, "chunk: not an object");
		return -1;
	}
	if (sk_jstr(&c, chunk, "chunk", "part", true,
	    "abcdefghijklmnopqrstuvwxyz", false, part, sizeof(part)) < 0)
		return -1;
	for (p = 0; p < SK_PART__MAX; p++)
		if (strcmp(part, sk_part_name((enum sk_part)p)) == 0)
			break;
	if (p == SK_PART__MAX || rec->pending[p] == 0) {
		snprintf(err, errlen, "chunk.part: \"%s\" is not a part the "
		    "record announced", part);
		return -1;
	}
	/* in order: the parts one after the other, each from its start */
	if ((p > SK_PART_SNDQ && rec->pending[SK_PART_SNDQ] > 0) ||
	    (p > SK_PART_RCVQ && rec->pending[SK_PART_RCVQ] > 0)) {
		snprintf(err, errlen, "chunk.part: %s before the parts ahead "
		    "of it", part);
		return -1;
	}
	if (raw != NULL && p == SK_PART_DGRAMS) {
		snprintf(err, errlen, "chunk.part: datagrams do not come as "
		    "a tail");
		return -1;
	}
	if (sk_jkeys(&c, chunk, "chunk", p == SK_PART_DGRAMS ? k_dgrams :
	    raw != NULL ? k_raw : k_bytes) < 0 ||
	    sk_jint(&c, chunk, "chunk", "off", true, 0, UINT32_MAX, &off) < 0)
		return -1;
	if ((uint32_t)off != rec->filled[p]) {
		snprintf(err, errlen, "chunk.off: %lld, expected %u",
		    (long long)off, rec->filled[p]);
		return -1;
	}
	if (p == SK_PART_DGRAMS)
		return add_dgrams(&c, rec, chunk);
	if (raw != NULL)
		return add_raw(&c, rec, (enum sk_part)p, raw, rawlen);
	return add_bytes(&c, rec, (enum sk_part)p, chunk);
}
