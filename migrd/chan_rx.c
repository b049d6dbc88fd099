/* SPDX-License-Identifier: ISC */
/*
 * The peer's frames into trees, in the TLS process (chan_rx.h).
 */
#include <string.h>

#include <event2/buffer.h>

#include "chan_rx.h"
#include "frame.h"
#include "frame_z.h"
#include "log.h"
#include "migrd-protocol.h"
#include "tree.h"

void
chan_rx_init(struct chan_rx *rx, uint32_t id, int deflate, size_t max)
{
	memset(rx, 0, sizeof(*rx));
	rx->id = id;
	rx->max = max < MIGR_FRAME_MAX ? max : MIGR_FRAME_MAX;
	rx->deflate = deflate != 0;
}

void
chan_rx_free(struct chan_rx *rx)
{
	frame_z_free(rx->z);
	rx->z = NULL;
}

int
chan_hello_has(const json_t *hello, const char *cap)
{
	json_t *caps = json_object_get(hello, "capabilities"), *c;
	size_t i;

	json_array_foreach(caps, i, c)
		if (json_is_string(c) && strcmp(json_string_value(c), cap) == 0)
			return 1;
	return 0;
}

/* The first hello decides whether what follows is deflated. */
static int
saw_frame(struct chan_rx *rx, const struct frame_hdr *h, const json_t *j)
{
	if (rx->hello || h->type != MSG_HELLO)
		return 0;
	rx->hello = 1;
	if (!rx->deflate || !chan_hello_has(j, "deflate"))
		return 0;
	if ((rx->z = frame_z_new(0, FRAME_Z_RECV)) == NULL)
		return -1;
	return 0;
}

/* The peer's frame h refused: why (a FRAME_*, or FRAME_IO with a
 * reason), to the log and as the status migrd gets. */
static int
refuse(struct chan_rx *rx, struct evbuffer *out, int st,
    const struct frame_hdr *h, const char *why)
{
	rx->done = 1;
	log_info("tls: session %u: the peer's frame (type %u, %s, version %u, "
	    "%u bytes) is refused: %s", rx->id, h->type,
	    migr_msgname(h->type), h->version, h->len,
	    why != NULL ? why : frame_strstatus(st));
	/* a failure of ours: say something migrd knows */
	if (st == FRAME_IO)
		st = FRAME_BAD_PAYLOAD;
	tree_push_status(out, st, h);
	return -1;
}

/* The limit of the frame at the front of in, by its type. */
static size_t
limit_of(const struct chan_rx *rx, struct evbuffer *in)
{
	uint8_t hdr[MIGR_FRAME_HDR_LEN];
	struct frame_hdr h;

	if (evbuffer_copyout(in, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr) ||
	    frame_hdr_check(hdr, sizeof(hdr), MIGR_FRAME_MAX, &h) != FRAME_OK)
		return MIGR_FRAME_MAX;	/* the pull says what is wrong */
	return MSG_BULK(h.type) ? MIGR_FRAME_MAX : rx->max;
}

int
chan_rx_parse(struct chan_rx *rx, struct evbuffer *in, struct evbuffer *out,
    size_t high, int fresh, uint64_t now_ms)
{
	struct frame_hdr h;
	size_t before, max;
	json_t *j;
	int st, z, took = 0;

	if (rx->done)
		return -1;
	while (evbuffer_get_length(out) < high) {
		memset(&h, 0, sizeof(h));
		before = evbuffer_get_length(in);
		z = rx->z != NULL;
		max = limit_of(rx, in);
		if (z)
			st = frame_pull_z(in, rx->z, max, &h, &j);
		else
			st = frame_pull(in, max, &h, &j);
		if (st == FRAME_PARTIAL) {
			/* a frame on its way: the peer lives */
			if (before > 0 && fresh && !took &&
			    now_ms - rx->told_ms >= CHAN_RX_PROGRESS_MS) {
				rx->told_ms = now_ms;
				tree_push_status(out, FRAME_PARTIAL, NULL);
			}
			return 0;
		}
		if (st != FRAME_OK) {
			json_decref(j);
			return refuse(rx, out, st, &h, NULL);
		}
		took = 1;
		if (saw_frame(rx, &h, j) == -1) {
			json_decref(j);
			return refuse(rx, out, FRAME_IO, &h,
			    "cannot set up inflate");
		}
		/* deeper than a tree goes (tree.h): not ours to pass on */
		if (tree_push(out, &h, j, before - evbuffer_get_length(in),
		    z) == -1) {
			json_decref(j);
			return refuse(rx, out, FRAME_IO, &h, "it nests deeper "
			    "than " TREE_DEPTH_STR " levels (or out of memory)");
		}
		json_decref(j);
	}
	return 0;
}
