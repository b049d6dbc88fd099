/* SPDX-License-Identifier: ISC */
/*
 * What a peer sends, parsed where a parse can do no harm: in the TLS
 * process (tlsd.h), which holds no privilege.  Its frames (frame.h) are
 * checked, inflated when the channel compresses (frame_z.h) and their
 * JSON parsed here; migrd gets each as a tree (tree.h).
 *
 * A frame above max-message is refused from its header, unless it is
 * of a type that may be larger (MSG_BULK: records, chunks and images,
 * up to MIGR_FRAME_MAX, which migrd allows only from the peer of a
 * migration it prepared for, a state the TLS process does not know).
 *
 * Compression follows the rule of the hellos (docs/protocol-channel.md):
 * what the peer sends after its hello is one deflate stream when this
 * host and that hello both announce "deflate".
 */
#ifndef MIGRD_CHAN_RX_H
#define MIGRD_CHAN_RX_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct evbuffer;
struct frame_z;

/* bytes of a frame still coming are told to migrd this often at most */
#define CHAN_RX_PROGRESS_MS	1000

struct chan_rx {
	uint32_t	 id;		/* the session's, for the log */
	struct frame_z	*z;		/* the peer's stream, once deflated */
	int		 deflate;	/* this host announces deflate */
	size_t		 max;		/* max-message: the limit of all but
					   the bulk types (MSG_BULK) */
	int		 hello;		/* the peer's hello came */
	int		 done;		/* a frame was refused: no more */
	uint64_t	 told_ms;	/* the last progress item */
};

void	chan_rx_init(struct chan_rx *rx, uint32_t id, int deflate,
	    size_t max);
void	chan_rx_free(struct chan_rx *rx);
/*
 * The whole frames at the front of in, as items on out, until out holds
 * high bytes or more; fresh: bytes came since the last call, which a
 * frame not yet whole tells migrd (FRAME_PARTIAL item).  -1 once a
 * frame was refused (its status item is on out) or on a failure: read
 * no more of that peer.
 */
int	chan_rx_parse(struct chan_rx *rx, struct evbuffer *in,
	    struct evbuffer *out, size_t high, int fresh, uint64_t now_ms);

/* Does the hello announce capability cap? */
int	chan_hello_has(const json_t *hello, const char *cap);

#endif
