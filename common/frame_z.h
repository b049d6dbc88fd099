/* SPDX-License-Identifier: ISC */
/*
 * Compressed frames for the peer channel (capability "deflate", see
 * docs/protocol-channel.md).  Once both hellos announced it, each
 * direction of the session is one raw deflate stream (RFC 1951): every
 * later frame keeps its header {type, version, len}, len being the
 * compressed length, and its payload is the next piece of that stream,
 * flushed at the frame's end (Z_SYNC_FLUSH) so that it inflates to the
 * frame's JSON without waiting for the next one.  The history of the
 * stream (32 KiB) is what makes records small: a socket record repeats
 * most of its neighbour's text.
 *
 * A compressed frame is bounded twice, before anything is allocated: its
 * length by frame_z_bound(max), and what it inflates to by max itself.
 */
#ifndef MIGR_FRAME_Z_H
#define MIGR_FRAME_Z_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "frame.h"

struct evbuffer;
struct frame_z;

/* Bytes counted since frame_z_new(): JSON text and what went on the
 * wire (headers included), each way. */
struct frame_z_stats {
	uint64_t	json_out, wire_out;
	uint64_t	json_in, wire_in;
};

/* The ways a stream goes, for frame_z_new(): each costs its own state
 * (deflate's about 256 KiB, inflate's about 44 KiB), so a side that only
 * sends or only receives asks for that way alone. */
#define FRAME_Z_SEND	0x1
#define FRAME_Z_RECV	0x2

/* level: 1 (fast) .. 9 (small), for FRAME_Z_SEND; ways: FRAME_Z_*. */
struct frame_z	*frame_z_new(int level, unsigned int ways);
void		 frame_z_free(struct frame_z *z);
const struct frame_z_stats *frame_z_stats(const struct frame_z *z);

/* The largest compressed payload accepted for JSON of at most max bytes
 * (deflate may grow incompressible text a little). */
size_t	frame_z_bound(size_t max);

/* As frame_push()/frame_pull() (frame.h), through the stream; on
 * FRAME_OK h->len is the length of the inflated JSON.  A frame
 * that does not inflate, inflates beyond max, or is not one JSON object
 * is FRAME_BAD_PAYLOAD or FRAME_TOO_BIG, and the stream is unusable
 * after it: the caller closes the session. */
int	frame_push_z(struct evbuffer *out, struct frame_z *z, uint16_t type,
	    const json_t *payload, size_t max);
/* With a binary tail (frame.h), through the stream. */
int	frame_push_z_tail(struct evbuffer *out, struct frame_z *z,
	    uint16_t type, const json_t *payload, const void *tail,
	    size_t taillen, size_t max);
int	frame_pull_z(struct evbuffer *in, struct frame_z *z, size_t max,
	    struct frame_hdr *h, json_t **payload);

#endif
