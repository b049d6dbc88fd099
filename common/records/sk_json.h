/* SPDX-License-Identifier: ISC */
/*
 * JSON schema v2 for the records a migration carries: one "socket"
 * record per socket (struct sk_state), and the namespace records
 * "link", "addr" and "route".  docs/protocol.md specifies every field.
 *
 * A socket whose queues or datagrams are larger than what one frame
 * should hold travels as a record that announces them ("chunks"), then
 * chunk objects that carry them in order (sk_json_chunk()); the decoder
 * allocates what the record announced, within its bounds, and
 * sk_record_add_chunk() fills it.  A record is whole when
 * sk_record_pending() says 0.
 *
 * The decoder is strict, since records come from the network: every
 * field is type- and range-checked, unknown fields and unknown
 * versions are refused, queue data is strict base64 whose decoded
 * length must equal the declared one, and every queue is bounded by
 * a cap before anything is allocated.  Each refusal names the field:
 * "tcp.snd_wscale: 15 out of range 0..14".  A record that fails here
 * never reaches a syscall.
 */
#ifndef MIGR_SK_JSON_H
#define MIGR_SK_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_engine.h"

#define SK_JSON_VERSION		2
/* Default bound on each queue's bytes (tcp.sndq.len, tcp.rcvq.len) and
 * on the bytes of a UDP socket's datagrams. */
#define SK_JSON_MAX_QUEUE	(32u * 1024 * 1024)

struct sk_json_limits {
	uint32_t	 max_queue;	/* bytes per queue; 0 = default */
	bool		 chunks;	/* a record may announce chunks */
};

/* The parts of a socket record that may travel in chunks. */
enum sk_part {
	SK_PART_SNDQ,
	SK_PART_RCVQ,
	SK_PART_DGRAMS,
	SK_PART__MAX
};

enum sk_rec_type {
	SK_REC_SOCKET = 1,
	SK_REC_LINK,
	SK_REC_ADDR,
	SK_REC_ROUTE,
};

#define SK_IFNAMSIZ	16

struct sk_link {
	char		 name[SK_IFNAMSIZ];
	char		 kind[SK_IFNAMSIZ];	/* "veth", "lo", ...; may be "" */
	uint8_t		 mac[6];
	uint32_t	 mtu;
};

struct sk_ifaddr {
	char		 dev[SK_IFNAMSIZ];
	int		 family;
	uint8_t		 addr[16];
	uint8_t		 prefix;
};

struct sk_route {
	int		 family;
	uint8_t		 dst[16];
	uint8_t		 prefix;
	bool		 has_gateway;
	uint8_t		 gateway[16];
	char		 dev[SK_IFNAMSIZ];	/* may be "" with a gateway */
	uint32_t	 metric;
	uint32_t	 table;
};

struct sk_record {
	enum sk_rec_type type;
	union {
		struct sk_state	*sock;		/* owned */
		struct sk_link	 link;
		struct sk_ifaddr addr;
		struct sk_route	 route;
	} u;
	/* socket: what the chunks have still to bring (bytes of sndq and
	 * rcvq, datagrams), and where the next one starts */
	uint32_t	 pending[SK_PART__MAX];
	uint32_t	 filled[SK_PART__MAX];
	/* socket: the bound it was decoded under (max_queue), which its
	 * chunks keep */
	uint32_t	 max_queue;
};

/* New reference, or NULL on failure (out of memory, a bad address). */
json_t	*sk_json_encode(const struct sk_state *);
/*
 * The same, with every queue of more than inline_max bytes (and the
 * datagrams when they add up to more) announced as chunks instead.
 */
json_t	*sk_json_encode_split(const struct sk_state *, uint32_t inline_max);
/* Does the encoding of st under inline_max announce part as chunks? */
bool	 sk_json_split(const struct sk_state *, enum sk_part,
	    uint32_t inline_max);
/*
 * One chunk of part: the bytes [off, off + n) of a queue, or the
 * datagrams [off, off + n).  {"part": "sndq", "off": N, "data": "..."} or
 * {"part": "dgrams", "off": N, "dgrams": [...]}.
 */
json_t	*sk_json_chunk(const struct sk_state *, enum sk_part, uint32_t off,
	    uint32_t n);
/*
 * A chunk of a queue whose bytes travel beside its JSON (a frame's
 * binary tail, capability "raw-chunks"): {"part": "sndq", "off": N},
 * and *bytes pointing at the n bytes in st.  Queues only (sndq, rcvq);
 * n is at least 1.
 */
json_t	*sk_json_chunk_head(const struct sk_state *, enum sk_part,
	    uint32_t off, uint32_t n, const uint8_t **bytes);
/* Fill a record's announced part with a chunk: 0, or -1 and why (a
 * refused chunk leaves the record as it was). */
int	 sk_record_add_chunk(struct sk_record *, const json_t *chunk,
	    char *err, size_t errlen);
/* The same with the bytes of a queue's chunk apart (raw, rawlen), and
 * chunk its head from sk_json_chunk_head(); raw NULL is
 * sk_record_add_chunk(). */
int	 sk_record_add_chunk_raw(struct sk_record *, const json_t *chunk,
	    const void *raw, size_t rawlen, char *err, size_t errlen);
/* What the chunks have still to bring: 0 when the record is whole. */
uint64_t sk_record_pending(const struct sk_record *);
json_t	*sk_json_encode_link(const struct sk_link *);
json_t	*sk_json_encode_addr(const struct sk_ifaddr *);
json_t	*sk_json_encode_route(const struct sk_route *);

/*
 * Decode and validate one record.  0 and *rec filled (free with
 * sk_record_clear), or -1 and the reason in err.  lim may be NULL.
 */
int	 sk_json_decode(const json_t *, const struct sk_json_limits *lim,
	    struct sk_record *rec, char *err, size_t errlen);
/* The same from text (duplicate keys refused). */
int	 sk_json_parse(const char *buf, size_t len,
	    const struct sk_json_limits *lim, struct sk_record *rec,
	    char *err, size_t errlen);
/* Largest text sk_json_parse() accepts under lim. */
size_t	 sk_json_max_text(const struct sk_json_limits *lim);
void	 sk_record_clear(struct sk_record *);

#endif
