/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the record decoder (common/records): the input
 * is a record and, on the lines after it, chunk objects for it (JSON
 * lines, the form tests/unit/test_sk_json.c writes the seed corpus in),
 * decoded with chunks allowed.
 *
 * - A record is refused with a message or decoded.
 * - Each chunk is taken or refused with a message; a refused chunk
 *   leaves the record as it was, a taken one moves it on, and never
 *   past what the record announced.
 * - A whole record re-encodes, and the re-encoded text decodes to the
 *   same text again (the encoding is canonical).
 * - A whole socket record, split at every part and sent back in
 *   chunks, decodes to that same text.
 *
 * Sanitizers catch the rest.
 *
 *   tests/fuzz/run.sh sk_json [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sk_json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A destination's (rx_record() in migrd/migration/mig_dst.c): each queue
 * bounded by SK_JSON_MAX_QUEUE, chunks allowed. */
static const struct sk_json_limits lim = { 0, true };

/* A refusal always says why, "field: reason". */
static void
refused(const char *err)
{
	if (err[0] == '\0' || strchr(err, ':') == NULL) {
		fprintf(stderr, "refusal without a reason: \"%s\"\n", err);
		abort();
	}
}

static char *
dumps(json_t *j)
{
	char *s;

	if (j == NULL)
		abort();
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	if (s == NULL)
		abort();
	return s;
}

static char *
encode(const struct sk_record *rec)
{
	json_t *j = NULL;

	switch (rec->type) {
	case SK_REC_SOCKET:
		j = sk_json_encode(rec->u.sock);
		break;
	case SK_REC_LINK:
		j = sk_json_encode_link(&rec->u.link);
		break;
	case SK_REC_ADDR:
		j = sk_json_encode_addr(&rec->u.addr);
		break;
	case SK_REC_ROUTE:
		j = sk_json_encode_route(&rec->u.route);
		break;
	}
	if (j == NULL) {
		fprintf(stderr, "a decoded record does not encode\n");
		abort();
	}
	return dumps(j);
}

/* What the chunks brought and have still to bring adds up to what the
 * record announced; a record's datagrams are the ones brought. */
static void
check_parts(const struct sk_record *rec, const uint32_t *announced)
{
	int p;

	for (p = 0; p < SK_PART__MAX; p++)
		if (rec->filled[p] + (uint64_t)rec->pending[p] != announced[p])
			abort();
	if (announced[SK_PART_DGRAMS] > 0 &&
	    rec->u.sock->udp.ndgrams != rec->filled[SK_PART_DGRAMS])
		abort();
}

static void
feed(struct sk_record *rec, const char *text, size_t len,
    const uint32_t *announced)
{
	uint32_t pending[SK_PART__MAX], filled[SK_PART__MAX], ndgrams = 0;
	uint64_t before = sk_record_pending(rec);
	char err[256];
	json_t *c;
	int rc;

	memcpy(pending, rec->pending, sizeof(pending));
	memcpy(filled, rec->filled, sizeof(filled));
	if (rec->type == SK_REC_SOCKET)
		ndgrams = rec->u.sock->udp.ndgrams;
	/* not JSON: a NULL chunk, which is refused too */
	c = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	rc = sk_record_add_chunk(rec, c, err, sizeof(err));
	json_decref(c);
	if (rc < 0) {
		refused(err);
		if (memcmp(pending, rec->pending, sizeof(pending)) != 0 ||
		    memcmp(filled, rec->filled, sizeof(filled)) != 0 ||
		    (rec->type == SK_REC_SOCKET &&
		    rec->u.sock->udp.ndgrams != ndgrams)) {
			fprintf(stderr, "a refused chunk changed the record\n");
			abort();
		}
		return;
	}
	if (rec->type != SK_REC_SOCKET || sk_record_pending(rec) >= before)
		abort();
	check_parts(rec, announced);
}

/* Encode, decode, encode: the same text, which is returned. */
static char *
canonical(const struct sk_record *rec)
{
	struct sk_record again;
	char err[256], *t1, *t2;

	t1 = encode(rec);
	if (sk_json_parse(t1, strlen(t1), &lim, &again, err,
	    sizeof(err)) < 0) {
		fprintf(stderr, "re-encoded record refused: %s\n%s\n", err, t1);
		abort();
	}
	if (sk_record_pending(&again) != 0)
		abort();	/* sk_json_encode() never splits */
	t2 = encode(&again);
	sk_record_clear(&again);
	if (strcmp(t1, t2) != 0) {
		fprintf(stderr, "not canonical:\n%s\n%s\n", t1, t2);
		abort();
	}
	free(t2);
	return t1;
}

/* At most this many chunks a part in split_round_trip(): a queue of
 * megabytes in chunks of a few bytes would take seconds, for no path
 * that a few hundred chunks do not take. */
#define SPLIT_CHUNKS	256

/* The state split at every part, back in chunks of step bytes (or
 * datagrams), through text: the same record as whole. */
static void
split_round_trip(const struct sk_state *st, const char *whole, uint32_t step)
{
	struct sk_record rec;
	char err[256], *text;
	uint32_t off, n, total, least;
	json_t *c;
	int p, rc;

	text = dumps(sk_json_encode_split(st, 0));
	rc = sk_json_parse(text, strlen(text), &lim, &rec, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "split record refused: %s\n%s\n", err, text);
		abort();
	}
	free(text);
	for (p = 0; p < SK_PART__MAX; p++) {
		total = rec.pending[p];
		least = total / SPLIT_CHUNKS + 1;
		for (off = 0; off < total; off += n) {
			n = p == SK_PART_DGRAMS ? 1 + step % 7 : step;
			if (n < least)
				n = least;
			if (n > total - off)
				n = total - off;
			text = dumps(sk_json_chunk(st, (enum sk_part)p, off,
			    n));
			c = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
			if (sk_record_add_chunk(&rec, c, err,
			    sizeof(err)) < 0) {
				fprintf(stderr, "chunk refused: %s\n%s\n", err,
				    text);
				abort();
			}
			json_decref(c);
			free(text);
		}
	}
	if (sk_record_pending(&rec) != 0)
		abort();
	text = encode(&rec);
	sk_record_clear(&rec);
	if (strcmp(text, whole) != 0) {
		fprintf(stderr, "split and whole differ:\n%s\n%s\n", whole,
		    text);
		abort();
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	uint32_t announced[SK_PART__MAX];
	struct sk_record rec;
	char err[256], *t1;
	size_t len;

	log_set_sink(log_discard, NULL);
	nl = memchr(p, '\n', size);
	len = nl != NULL ? (size_t)(nl - p) : size;
	if (sk_json_parse(p, len, &lim, &rec, err, sizeof(err)) < 0) {
		refused(err);
		return 0;
	}
	memcpy(announced, rec.pending, sizeof(announced));
	if (rec.type == SK_REC_SOCKET)
		check_parts(&rec, announced);
	else if (sk_record_pending(&rec) != 0)
		abort();
	/* the chunks, one a line; empty lines are skipped */
	for (p = nl != NULL ? nl + 1 : end; p < end;
	    p = nl != NULL ? nl + 1 : end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (len > 0)
			feed(&rec, p, len, announced);
	}
	if (sk_record_pending(&rec) == 0) {
		t1 = canonical(&rec);
		if (rec.type == SK_REC_SOCKET)
			split_round_trip(rec.u.sock, t1,
			    1 + (uint32_t)(size % 4093));
		free(t1);
	}
	sk_record_clear(&rec);
	return 0;
}
