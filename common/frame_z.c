/* SPDX-License-Identifier: ISC */
/*
 * Compressed frames: one raw deflate stream each way (frame_z.h).
 */
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

#include <event2/buffer.h>

#include "frame_z.h"
#include "log.h"
#include "migrd-protocol.h"

/*
 * Bulk that does not compress (a program's memory in checkpoint mode is
 * often random to deflate; as base64 it shrinks by a quarter, no more)
 * costs the sender's CPU more than the wire saves: deflate takes about
 * 20 MB/s here, and a tenth of that under TCG, where a link carries
 * 100 MB/s or more.  So a large frame that shrank by less than 30 %
 * makes the next large ones go as stored
 * blocks (level 0: a copy, inside the same stream, which the peer
 * inflates as it does any other), and every FRAME_Z_PROBE-th tries the
 * level again.  Small frames (records, control) always compress.
 */
#define FRAME_Z_BULK	(64 * 1024)	/* a large frame, in JSON bytes */
#define FRAME_Z_PROBE	16

struct frame_z {
	z_stream		def;	/* what we send */
	z_stream		inf;	/* what we receive */
	unsigned int		ways;	/* FRAME_Z_* set up */
	int			def_broken;	/* a failure left the */
	int			inf_broken;	/* stream mid-way */
	int			level;		/* the configured one */
	int			cur;		/* deflate's now */
	unsigned		store;		/* large frames still to
						   store before a probe */
	struct frame_z_stats	st;
};

struct frame_z *
frame_z_new(int level, unsigned int ways)
{
	struct frame_z *z;

	if (ways == 0 || (ways & ~(FRAME_Z_SEND | FRAME_Z_RECV)) != 0) {
		log_warnx("%s: ways %#x are not send, receive or both",
		    __func__, ways);
		return NULL;
	}
	if ((ways & FRAME_Z_SEND) && (level < 1 || level > 9)) {
		log_warnx("%s: level %d is not 1 to 9", __func__, level);
		return NULL;
	}
	if ((z = calloc(1, sizeof(*z))) == NULL) {
		log_warn("%s: calloc", __func__);
		return NULL;
	}
	/* raw deflate (negative window bits): no zlib header, no checksum;
	 * TLS already protects the bytes */
	z->level = z->cur = level;
	if ((ways & FRAME_Z_SEND) && deflateInit2(&z->def, level,
	    Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		log_warnx("%s: deflateInit2: %s", __func__,
		    z->def.msg != NULL ? z->def.msg : "failed");
		free(z);
		return NULL;
	}
	z->ways |= ways & FRAME_Z_SEND;
	if ((ways & FRAME_Z_RECV) && inflateInit2(&z->inf, -15) != Z_OK) {
		log_warnx("%s: inflateInit2: %s", __func__,
		    z->inf.msg != NULL ? z->inf.msg : "failed");
		frame_z_free(z);
		return NULL;
	}
	z->ways |= ways & FRAME_Z_RECV;
	return z;
}

void
frame_z_free(struct frame_z *z)
{
	if (z == NULL)
		return;
	if (z->ways & FRAME_Z_SEND)
		deflateEnd(&z->def);
	if (z->ways & FRAME_Z_RECV)
		inflateEnd(&z->inf);
	free(z);
}

const struct frame_z_stats *
frame_z_stats(const struct frame_z *z)
{
	return &z->st;
}

size_t
frame_z_bound(size_t max)
{
	/* deflate's stored blocks add 5 bytes per 16 KiB at worst, and the
	 * flush at most 10 more */
	return max + max / 64 + 64;
}

int
frame_push_z(struct evbuffer *out, struct frame_z *z, uint16_t type,
    const json_t *payload, size_t max)
{
	return frame_push_z_tail(out, z, type, payload, NULL, 0, max);
}

int
frame_push_z_tail(struct evbuffer *out, struct frame_z *z, uint16_t type,
    const json_t *payload, const void *tail, size_t taillen, size_t max)
{
	uint8_t *buf;
	char *s;
	size_t n, bound, clen;
	int rc, level;

	if (!(z->ways & FRAME_Z_SEND)) {
		log_warnx("%s: the stream was set up to receive only",
		    __func__);
		return -1;
	}
	if (z->def_broken) {
		log_warnx("%s: the stream failed earlier", __func__);
		return -1;
	}
	if (frame_serialise_tail(type, payload, tail, taillen, max, &s,
	    &n) == -1)
		return -1;
	bound = frame_z_bound(n);
	if ((buf = malloc(MIGR_FRAME_HDR_LEN + bound)) == NULL) {
		log_warn("%s: malloc", __func__);
		free(s);
		return -1;
	}
	z->def.next_out = buf + MIGR_FRAME_HDR_LEN;
	z->def.avail_out = (uInt)bound;
	level = n < FRAME_Z_BULK ? z->level : z->store > 0 ? 0 : z->level;
	/* nothing is pending (every frame ended in a flush), so the change
	 * writes at most an empty block into the room above */
	if (level != z->cur) {
		if (deflateParams(&z->def, level, Z_DEFAULT_STRATEGY) !=
		    Z_OK) {
			log_warnx("%s: deflateParams(%d) failed", __func__,
			    level);
			z->def_broken = 1;
			free(s);
			free(buf);
			return -1;
		}
		z->cur = level;
	}
	z->def.next_in = (const Bytef *)s;
	z->def.avail_in = (uInt)n;
	rc = deflate(&z->def, Z_SYNC_FLUSH);
	free(s);
	/* all taken, and room left over: nothing of it is still inside */
	if (rc != Z_OK || z->def.avail_in != 0 || z->def.avail_out == 0) {
		log_warnx("%s: deflate of %zu bytes failed (%d)", __func__, n,
		    rc);
		z->def_broken = 1;
		free(buf);
		return -1;
	}
	clen = bound - z->def.avail_out;
	if (n >= FRAME_Z_BULK) {
		if (level == 0)
			z->store--;
		else if (clen > n / 10 * 7)
			z->store = FRAME_Z_PROBE - 1;
	}
	frame_hdr_pack(buf, type, (uint32_t)clen);
	rc = evbuffer_add(out, buf, MIGR_FRAME_HDR_LEN + clen);
	free(buf);
	if (rc == -1) {
		/* the stream moved on without these bytes */
		log_warnx("%s: evbuffer_add failed", __func__);
		z->def_broken = 1;
		return -1;
	}
	z->st.json_out += n;
	z->st.wire_out += MIGR_FRAME_HDR_LEN + clen;
	return 0;
}

/* Inflate len bytes at p into a malloc'ed *text of at most max bytes. */
static int
inflate_frame(struct frame_z *z, const uint8_t *p, size_t len, size_t max,
    char **text, size_t *n)
{
	size_t cap, used = 0;
	char *buf, *nb;
	int rc;

	*text = NULL;
	/* room for one byte past max, to see that it went past */
	cap = len < (max + 1) / 4 ? 4 * len + 1024 : max + 1;
	if (cap > max + 1)
		cap = max + 1;
	if ((buf = malloc(cap)) == NULL) {
		log_warn("%s: malloc", __func__);
		return FRAME_IO;
	}
	z->inf.next_in = p;
	z->inf.avail_in = (uInt)len;
	for (;;) {
		z->inf.next_out = (Bytef *)buf + used;
		z->inf.avail_out = (uInt)(cap - used);
		rc = inflate(&z->inf, Z_SYNC_FLUSH);
		used = cap - z->inf.avail_out;
		if (used > max) {
			free(buf);
			return FRAME_TOO_BIG;
		}
		/* a peer never ends its stream; anything else is corrupt */
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			free(buf);
			return FRAME_BAD_PAYLOAD;
		}
		if (z->inf.avail_out > 0) {
			if (z->inf.avail_in == 0)
				break;
			/* input left and room left: inflate is stuck */
			free(buf);
			return FRAME_BAD_PAYLOAD;
		}
		cap = cap > (max + 1) / 2 ? max + 1 : 2 * cap;
		if ((nb = realloc(buf, cap)) == NULL) {
			log_warn("%s: realloc", __func__);
			free(buf);
			return FRAME_IO;
		}
		buf = nb;
	}
	*text = buf;
	*n = used;
	return FRAME_OK;
}

int
frame_pull_z(struct evbuffer *in, struct frame_z *z, size_t max,
    struct frame_hdr *h, json_t **payload)
{
	unsigned char *p;
	size_t n = 0;
	char *text;
	int st;

	*payload = NULL;
	if (!(z->ways & FRAME_Z_RECV)) {
		log_warnx("%s: the stream was set up to send only", __func__);
		return FRAME_IO;
	}
	if (z->inf_broken)
		return FRAME_BAD_PAYLOAD;
	if (max > MIGR_FRAME_MAX)
		max = MIGR_FRAME_MAX;
	if ((st = frame_peek(in, max, frame_z_bound(max), h, &p)) != FRAME_OK)
		return st;
	st = inflate_frame(z, p + MIGR_FRAME_HDR_LEN, h->len, max, &text, &n);
	if (st == FRAME_OK) {
		st = frame_decode(h->type, text, n, payload);
		free(text);
	}
	evbuffer_drain(in, MIGR_FRAME_HDR_LEN + h->len);
	if (st != FRAME_OK) {
		z->inf_broken = 1;
		return st;
	}
	z->st.json_in += n;
	z->st.wire_in += MIGR_FRAME_HDR_LEN + h->len;
	h->len = (uint32_t)n;
	return FRAME_OK;
}
