/* SPDX-License-Identifier: ISC */
/*
 * Trees: how the TLS process hands migrd what a peer sent, so that
 * migrd never parses a peer's bytes itself.
 *
 * The TLS process (tlsd.h) reads the peer's frames, inflates them and
 * parses their JSON (chan_rx.h); what it passes on is one item per
 * frame on the session's plaintext socketpair: a fixed header (struct
 * tree_item, host byte order, both ends are the same binary) and the
 * frame's JSON as a tree in a prefix encoding with no grammar to speak
 * of, in the manner of bgpd's imsg between its session engine and its
 * parent:
 *
 *   'o' count(u32) then count times: key (u32 length, bytes), value
 *   'a' count(u32) then count values
 *   's' length(u32) then that many bytes of UTF-8, no NUL
 *   'b' length(u32) then bytes: only the top-level "raw" of a type
 *       that takes a binary tail (frame.h, MSG_TAIL_OK), and a string
 *       there is always 'b', so that a tree has one encoding
 *   'i' int64, big-endian           'r' IEEE double, big-endian
 *   't' true   'f' false   'n' null
 *
 * Lengths and counts are big-endian too.  The root is an object.
 * Decoding bounds every length and count by the bytes that are left
 * before anything is allocated, nests TREE_DEPTH_MAX deep at most,
 * checks UTF-8, refuses a key twice and anything after the root:
 * migrd trusts the TLS process no more than a peer (it is what an
 * attacker would own first), but what it decodes is this, not JSON,
 * deflate or TLS.
 */
#ifndef MIGRD_TREE_H
#define MIGRD_TREE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "frame.h"

struct evbuffer;

#define TREE_DEPTH_MAX	32
#define TREE_DEPTH_STR	"32"

/* The item header.  status is a FRAME_* (frame.h):
 *   FRAME_OK       a frame: type, len (its JSON's length, inflated),
 *                  wire (the bytes it took on the wire, header
 *                  included), then body bytes of tree
 *   FRAME_PARTIAL  bytes of a frame came, not all of it yet (the peer
 *                  is alive: a large frame at a slow link's pace takes
 *                  longer than the dead time); no body
 *   FRAME_TOO_BIG, FRAME_BAD_VERSION, FRAME_BAD_TYPE, FRAME_BAD_PAYLOAD
 *                  the peer's frame was refused (type, version, len as
 *                  its header said); no body, and nothing follows: the
 *                  TLS process reads no more of that peer */
struct tree_item {
	uint16_t	status;
	uint16_t	type;
	uint16_t	version;
	uint16_t	flags;
	uint32_t	len;
	uint32_t	wire;
	uint32_t	body;
};
#define TREE_Z		0x1	/* flags: the frame was compressed */

/* A frame's tree takes at most this many bytes for len bytes of JSON (a
 * one-digit number costs 9). */
#define TREE_BODY_MAX(len)	((size_t)(len) * 5 + 64)

/* TREE_BAD: the item itself is malformed (the TLS process's fault,
 * never a peer's).  TREE_PROGRESS: a FRAME_PARTIAL item, taken. */
enum { TREE_BAD = 100, TREE_PROGRESS };

/* Append the tree of object j, the payload of a frame of type. */
int	tree_encode(uint16_t type, const json_t *j, struct evbuffer *out);
/* Decode the tree of len bytes at buf, of a frame of type (for 'b'). */
int	tree_decode(uint16_t type, const uint8_t *buf, size_t len,
	    json_t **out);

/* The TLS process's side: a frame (h, its payload j, the bytes it took
 * on the wire, compressed or not), or a status without a frame. */
int	tree_push(struct evbuffer *out, const struct frame_hdr *h,
	    const json_t *j, size_t wire, int z);
int	tree_push_status(struct evbuffer *out, int status,
	    const struct frame_hdr *h);

/*
 * migrd's side: the next item of in.  FRAME_OK: *payload is the
 * object, *it the item (it->len the JSON's length) and *h the frame's
 * header as it came.  TREE_PROGRESS: bytes came (taken).  FRAME_PARTIAL:
 * not all there yet.  A frame above max is FRAME_TOO_BIG, as is one the
 * TLS process refused as such; that and its other refusals (FRAME_*)
 * have *h as the peer's header said.  TREE_BAD: an item or a tree that
 * is malformed.  The caller closes the session on anything but FRAME_OK,
 * TREE_PROGRESS and FRAME_PARTIAL (FRAME_IO: out of memory).
 */
int	tree_pull(struct evbuffer *in, size_t max, struct tree_item *it,
	    struct frame_hdr *h, json_t **payload);
/* The largest item tree_pull() takes under max: for the read watermark. */
size_t	tree_item_max(size_t max);

#endif
