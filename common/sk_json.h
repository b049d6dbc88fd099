/*
 * JSON schema v1 for the records a migration carries: one "socket"
 * record per socket (struct sk_state), and the namespace records
 * "link", "addr" and "route".  docs/protocol.md specifies every field.
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

#include "sk_state.h"

#define SK_JSON_VERSION		1
/* Default bound on each queue's bytes (tcp.sndq.len, tcp.rcvq.len). */
#define SK_JSON_MAX_QUEUE	(32u * 1024 * 1024)

struct sk_json_limits {
	uint32_t	 max_queue;	/* bytes per queue; 0 = default */
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
};

/* New reference, or NULL (logged) on failure. */
json_t	*sk_json_encode(const struct sk_state *);
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
