/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the peer channel's compressed frames
 * (common/frame_z.c).  The first byte picks the limit (64 KiB or 1 MiB)
 * and the mode:
 *
 * - even: the rest is what a peer sends once compression is on, frames
 *   of one deflate stream, pulled until one is partial or refused.  A
 *   frame taken is one JSON object of at most the limit, and goes
 *   through a fresh pair of streams unchanged; after a refusal the
 *   stream refuses everything.
 * - odd: the rest is JSON texts a line each, which this host sends:
 *   every object within the limit is pushed and pulled through one pair
 *   of streams and comes out the same; anything else is refused by the
 *   sender, which stays usable.
 *
 * Sanitizers catch the rest.
 *
 *   tests/fuzz/run.sh frame_z [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"
#include "frame_z.h"
#include "log.h"
#include "migrd-protocol.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
same(const json_t *a, const json_t *b)
{
	char *s = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
	char *t = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);

	if (s == NULL || t == NULL || strcmp(s, t) != 0) {
		fprintf(stderr, "changed on the way:\n%s\n%s\n", s, t);
		abort();
	}
	free(s);
	free(t);
}

/* j through tx and rx: the same object, or the sender refuses it (too
 * large) and nothing is queued. */
static void
through(struct frame_z *tx, struct frame_z *rx, const json_t *j,
    size_t max)
{
	struct evbuffer *b = evbuffer_new();
	struct frame_hdr h;
	json_t *out;
	char *s;
	int st;

	if (b == NULL)
		abort();
	if (frame_push_z(b, tx, MSG_MIG_RECORD, j, max) == -1) {
		s = json_dumps(j, JSON_COMPACT);
		if (s == NULL || strlen(s) <= max ||
		    evbuffer_get_length(b) != 0)
			abort();	/* refused only when too large */
		free(s);
		evbuffer_free(b);
		return;
	}
	st = frame_pull_z(b, rx, max, &h, &out);
	if (st != FRAME_OK || evbuffer_get_length(b) != 0 ||
	    h.type != MSG_MIG_RECORD) {
		fprintf(stderr, "own frame refused: %d\n", st);
		abort();
	}
	same(j, out);
	json_decref(out);
	evbuffer_free(b);
}

static void
from_peer(const uint8_t *p, size_t n, size_t max)
{
	struct frame_z *rx = frame_z_new(0, FRAME_Z_RECV);
	struct frame_z *t1 = frame_z_new(1, FRAME_Z_SEND);
	struct frame_z *t2 = frame_z_new(0, FRAME_Z_RECV);
	struct evbuffer *in = evbuffer_new();
	struct frame_hdr h;
	json_t *j;
	int st;

	if (rx == NULL || t1 == NULL || t2 == NULL || in == NULL)
		abort();
	evbuffer_add(in, p, n);
	while ((st = frame_pull_z(in, rx, max, &h, &j)) == FRAME_OK) {
		if (!json_is_object(j) || h.len == 0 || h.len > max)
			abort();
		through(t1, t2, j, max);
		json_decref(j);
	}
	if (j != NULL)
		abort();
	if (st != FRAME_PARTIAL &&
	    frame_pull_z(in, rx, max, &h, &j) == FRAME_OK)
		abort();	/* taken after a refusal */
	json_decref(j);
	frame_z_free(rx);
	frame_z_free(t1);
	frame_z_free(t2);
	evbuffer_free(in);
}

static void
to_peer(const uint8_t *p, size_t n, size_t max)
{
	struct frame_z *tx = frame_z_new(1, FRAME_Z_SEND);
	struct frame_z *rx = frame_z_new(0, FRAME_Z_RECV);
	const uint8_t *end = p + n, *nl;
	json_t *j;

	if (tx == NULL || rx == NULL)
		abort();
	for (; p < end; p = nl != NULL ? nl + 1 : end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		j = json_loadb((const char *)p, nl != NULL ?
		    (size_t)(nl - p) : (size_t)(end - p),
		    JSON_REJECT_DUPLICATES, NULL);
		if (json_is_object(j))
			through(tx, rx, j, max);
		json_decref(j);
	}
	frame_z_free(tx);
	frame_z_free(rx);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max;

	log_set_sink(log_discard, NULL);
	if (size < 1)
		return 0;
	max = data[0] & 2 ? MIGR_FRAME_MAX : MIGR_FRAME_DEFAULT;
	if (data[0] & 1)
		to_peer(data + 1, size - 1, max);
	else
		from_peer(data + 1, size - 1, max);
	return 0;
}
