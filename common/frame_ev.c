/* SPDX-License-Identifier: ISC */
/*
 * The libevent side of framing (frame.h): frames pulled from and pushed
 * to an evbuffer.  Apart from frame.c so that a program that only uses
 * the blocking fd side (migctl) does not link libevent.
 */
#include <stdlib.h>

#include <event2/buffer.h>

#include "frame.h"
#include "log.h"
#include "migrd-protocol.h"

int
frame_peek(struct evbuffer *in, size_t max, size_t lenmax,
    struct frame_hdr *h, unsigned char **frame)
{
	uint8_t hdr[MIGR_FRAME_HDR_LEN];
	size_t avail = evbuffer_get_length(in);
	int st;

	*frame = NULL;
	if (avail < MIGR_FRAME_HDR_LEN)
		return FRAME_PARTIAL;
	if (evbuffer_copyout(in, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		return FRAME_PARTIAL;
	st = frame_hdr_check(hdr, sizeof(hdr), max, h);
	if (st == FRAME_TOO_BIG && h->len <= lenmax)
		st = FRAME_OK;
	if (st != FRAME_OK)
		return st;
	if (avail - MIGR_FRAME_HDR_LEN < h->len)
		return FRAME_PARTIAL;
	/* linearise only header + payload, both already bounded */
	*frame = evbuffer_pullup(in, MIGR_FRAME_HDR_LEN + h->len);
	return *frame != NULL ? FRAME_OK : FRAME_PARTIAL;
}

int
frame_pull(struct evbuffer *in, size_t max, struct frame_hdr *h,
    json_t **payload)
{
	unsigned char *p;
	int st;

	*payload = NULL;
	if ((st = frame_peek(in, max, 0, h, &p)) != FRAME_OK)
		return st;
	st = frame_decode(h->type, p + MIGR_FRAME_HDR_LEN, h->len, payload);
	evbuffer_drain(in, MIGR_FRAME_HDR_LEN + h->len);
	return st;
}

int
frame_push(struct evbuffer *out, uint16_t type, const json_t *payload,
    size_t max)
{
	return frame_push_tail(out, type, payload, NULL, 0, max);
}

int
frame_push_tail(struct evbuffer *out, uint16_t type, const json_t *payload,
    const void *tail, size_t taillen, size_t max)
{
	uint8_t *buf;
	size_t len;
	int rc;

	if (frame_pack_tail(type, payload, tail, taillen, max, &buf,
	    &len) == -1)
		return -1;
	rc = evbuffer_add(out, buf, len);
	free(buf);
	if (rc == -1)
		log_warnx("%s: evbuffer_add failed", __func__);
	return rc;
}
