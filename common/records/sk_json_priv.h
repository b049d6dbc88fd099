/* SPDX-License-Identifier: ISC */
/*
 * Field readers shared by the record decoders (sk_json*.c).  Each
 * takes the path of the object it reads from ("" for the top level,
 * "tcp.sndq" inside), names the field in any refusal, and returns 0
 * (found and valid), 1 (absent, only when optional) or -1 (refused,
 * reason in the context).
 */
#ifndef MIGR_SK_JSON_PRIV_H
#define MIGR_SK_JSON_PRIV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sk_jctx {
	char		*err;
	size_t		 errlen;
	uint32_t	 max_queue;
	bool		 chunks;	/* queues may be announced */
};

void	sk_jerr(struct sk_jctx *, const char *path, const char *key,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Refuse keys of obj not in the NULL-terminated list. */
int	sk_jkeys(struct sk_jctx *, const json_t *obj, const char *path,
	    const char *const *allowed);
int	sk_jobj(struct sk_jctx *, const json_t *obj, const char *path,
	    const char *key, bool required, const json_t **out);
int	sk_jint(struct sk_jctx *, const json_t *obj, const char *path,
	    const char *key, bool required, int64_t min, int64_t max,
	    int64_t *out);
int	sk_jbool(struct sk_jctx *, const json_t *obj, const char *path,
	    const char *key, bool required, bool *out);
/* String of 1..max-1 bytes (0.. when allow_empty) from charset. */
int	sk_jstr(struct sk_jctx *, const json_t *obj, const char *path,
	    const char *key, bool required, const char *charset,
	    bool allow_empty, char *out, size_t max);
int	sk_jfamily(struct sk_jctx *, const json_t *obj, const char *path,
	    const char *key, int *family);
/* IP address text of the given family into 4 or 16 bytes. */
int	sk_jaddr(struct sk_jctx *, const json_t *obj, const char *path,
	    const char *key, bool required, int family, uint8_t *out);
void	sk_jpath(char *buf, size_t len, const char *path, const char *key);
/* n bytes as a base64 JSON string (ASCII: no UTF-8 check), or NULL */
json_t	*sk_json_b64(const uint8_t *buf, size_t n);

extern const char sk_jcs_ifname[];

/* Socket records (sk_json_sock.c, sk_json_opts.c, sk_json_chunk.c). */
struct sk_state;
struct sk_record;
struct sk_dgram;
struct sockaddr_storage;
int	sk_jsocket(struct sk_jctx *, const json_t *, struct sk_state *,
	    struct sk_record *);
int	sk_jsockaddr(struct sk_jctx *, const json_t *top, const char *path,
	    const char *key, bool required, int family, bool need_port,
	    struct sockaddr_storage *);
int	sk_jdgram(struct sk_jctx *, const json_t *, const char *path,
	    const struct sk_state *, struct sk_dgram *, uint64_t *bytes);
int	sk_jbufs(struct sk_jctx *, const json_t *, struct sk_state *);
int	sk_jopts(struct sk_jctx *, const json_t *, struct sk_state *);
json_t	*sk_json_enc_sockaddr(const struct sockaddr_storage *);
json_t	*sk_json_enc_dgram(const struct sk_dgram *);
json_t	*sk_json_enc_bufs(const struct sk_state *);
json_t	*sk_json_enc_opts(const struct sk_state *);
const char *sk_part_name(int);

/* Namespace records (sk_json_ns.c); the caller checked "v" and "type". */
struct sk_link;
struct sk_ifaddr;
struct sk_route;
int	sk_json_decode_link(struct sk_jctx *, const json_t *, struct sk_link *);
int	sk_json_decode_addr(struct sk_jctx *, const json_t *,
	    struct sk_ifaddr *);
int	sk_json_decode_route(struct sk_jctx *, const json_t *,
	    struct sk_route *);

#endif
