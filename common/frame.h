/* SPDX-License-Identifier: ISC */
/*
 * Framing for the control socket and the peer channel: a fixed header
 * {type, version, len} then `len` bytes of JSON (one object).  The length
 * is checked against the caller's limit before anything is allocated.
 */
#ifndef MIGR_FRAME_H
#define MIGR_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct evbuffer;

struct frame_hdr {
	uint16_t	type;
	uint16_t	version;
	uint32_t	len;
};

enum frame_status {
	FRAME_OK = 0,
	FRAME_PARTIAL,		/* need more bytes; nothing consumed */
	FRAME_TOO_BIG,		/* len above the limit */
	FRAME_BAD_VERSION,	/* header version is not ours */
	FRAME_BAD_TYPE,		/* type unknown */
	FRAME_BAD_PAYLOAD,	/* not one JSON object */
	FRAME_IO		/* read/write failed or EOF (fd helpers) */
};

const char	*frame_strstatus(int status);
int		 frame_status_result(int status);	/* -> enum migr_result */

void	frame_hdr_pack(uint8_t out[8], uint16_t type, uint32_t len);
/* Check the header at buf (avail bytes); fills h when it returns
 * FRAME_OK or FRAME_BAD_VERSION. */
int	frame_hdr_check(const uint8_t *buf, size_t avail, size_t max,
	    struct frame_hdr *h);
int	frame_decode_payload(const void *buf, size_t len, json_t **out);
/*
 * A binary tail, for the types MSG_TAIL_OK() names (a piece of an image):
 * the payload is the JSON object, one NUL byte, then the tail's bytes,
 * which would cost a third more as base64 in the JSON and a scan of
 * every byte to parse.  JSON text never holds a raw NUL, so the first
 * one ends it.  frame_decode() hands the tail on as the object's string
 * "raw" (any bytes; json_string_length() is its length), and refuses a
 * tail on any other type and an object that has a "raw" of its own.
 */
int	frame_decode(uint16_t type, const void *buf, size_t len,
	    json_t **out);

/* Serialise payload (NULL = {}) into malloc'ed compact JSON of at most
 * max bytes (and MIGR_FRAME_MAX); with a tail (taillen bytes, for a type
 * that takes one), the NUL and the tail follow, counted in max. */
int	frame_serialise(uint16_t type, const json_t *payload, size_t max,
	    char **out, size_t *outlen);
int	frame_serialise_tail(uint16_t type, const json_t *payload,
	    const void *tail, size_t taillen, size_t max, char **out,
	    size_t *outlen);
/* Serialise payload (NULL = {}) into a malloc'ed frame; with a tail,
 * as frame_serialise_tail(). */
int	frame_pack(uint16_t type, const json_t *payload, size_t max,
	    uint8_t **out, size_t *outlen);
int	frame_pack_tail(uint16_t type, const json_t *payload,
	    const void *tail, size_t taillen, size_t max, uint8_t **out,
	    size_t *outlen);

/* libevent side.  frame_pull consumes a frame only on FRAME_OK (and a
 * bad frame's payload bytes are never read).  frame_peek, which it and
 * frame_pull_z() share, consumes nothing: the header at the front of in
 * checked against max (a payload up to lenmax passes too, for one that
 * is compressed), then FRAME_PARTIAL until the whole frame is there,
 * then *frame points at it, linear.  */
int	frame_peek(struct evbuffer *in, size_t max, size_t lenmax,
	    struct frame_hdr *h, unsigned char **frame);
int	frame_pull(struct evbuffer *in, size_t max, struct frame_hdr *h,
	    json_t **payload);
int	frame_push(struct evbuffer *out, uint16_t type, const json_t *payload,
	    size_t max);
int	frame_push_tail(struct evbuffer *out, uint16_t type,
	    const json_t *payload, const void *tail, size_t taillen,
	    size_t max);

/* Blocking fd side (migctl, tests). */
int	frame_write_fd(int fd, uint16_t type, const json_t *payload,
	    size_t max);
int	frame_read_fd(int fd, size_t max, struct frame_hdr *h,
	    json_t **payload);

#endif
