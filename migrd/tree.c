/* SPDX-License-Identifier: ISC */
/*
 * Trees between the TLS process and migrd (tree.h): the encoder the TLS
 * process runs on what it parsed, and the decoder migrd runs on what
 * the TLS process says.
 */
#include <endian.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "migrd-protocol.h"
#include "tree.h"

static int
put_u32(struct evbuffer *out, size_t v)
{
	uint32_t be;

	if (v > UINT32_MAX)
		return -1;
	be = htobe32((uint32_t)v);
	return evbuffer_add(out, &be, sizeof(be));
}

static int
put_bytes(struct evbuffer *out, char tag, const char *p, size_t n)
{
	if (evbuffer_add(out, &tag, 1) == -1 || put_u32(out, n) == -1)
		return -1;
	return n > 0 ? evbuffer_add(out, p, n) : 0;
}

static int
put_u64(struct evbuffer *out, char tag, uint64_t v)
{
	uint64_t be = htobe64(v);

	if (evbuffer_add(out, &tag, 1) == -1)
		return -1;
	return evbuffer_add(out, &be, sizeof(be));
}

static int
enc_node(const json_t *j, struct evbuffer *out, int depth, int raw)
{
	const char *key;
	json_t *v;
	size_t i;
	double d;
	uint64_t u;
	char tag;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		if (depth >= TREE_DEPTH_MAX)
			return -1;
		tag = 'o';
		if (evbuffer_add(out, &tag, 1) == -1 ||
		    put_u32(out, json_object_size(j)) == -1)
			return -1;
		json_object_foreach((json_t *)j, key, v) {
			size_t kn = strlen(key);

			if (put_u32(out, kn) == -1 ||
			    evbuffer_add(out, key, kn) == -1)
				return -1;
			/* the top-level raw of a type with a tail */
			if (enc_node(v, out, depth + 1, raw && depth == 0 &&
			    strcmp(key, "raw") == 0) == -1)
				return -1;
		}
		return 0;
	case JSON_ARRAY:
		if (depth >= TREE_DEPTH_MAX)
			return -1;
		tag = 'a';
		if (evbuffer_add(out, &tag, 1) == -1 ||
		    put_u32(out, json_array_size(j)) == -1)
			return -1;
		json_array_foreach(j, i, v)
			if (enc_node(v, out, depth + 1, 0) == -1)
				return -1;
		return 0;
	case JSON_STRING:
		return put_bytes(out, raw ? 'b' : 's', json_string_value(j),
		    json_string_length(j));
	case JSON_INTEGER:
		return put_u64(out, 'i', (uint64_t)json_integer_value(j));
	case JSON_REAL:
		d = json_real_value(j);
		memcpy(&u, &d, sizeof(u));
		return put_u64(out, 'r', u);
	case JSON_TRUE:
		tag = 't';
		break;
	case JSON_FALSE:
		tag = 'f';
		break;
	case JSON_NULL:
		tag = 'n';
		break;
	default:
		return -1;
	}
	return evbuffer_add(out, &tag, 1);
}

int
tree_encode(uint16_t type, const json_t *j, struct evbuffer *out)
{
	if (!json_is_object(j))
		return -1;
	return enc_node(j, out, 0, MSG_TAIL_OK(type));
}

/* What is left to decode. */
struct rd {
	const uint8_t	*p;
	size_t		 left;
	int		 tail;		/* the type takes a binary "raw" */
};

static int
get(struct rd *r, void *v, size_t n)
{
	if (r->left < n)
		return -1;
	memcpy(v, r->p, n);
	r->p += n;
	r->left -= n;
	return 0;
}

static int
get_u32(struct rd *r, uint32_t *v)
{
	uint32_t be;

	if (get(r, &be, sizeof(be)) == -1)
		return -1;
	*v = be32toh(be);
	return 0;
}

static json_t	*dec_node(struct rd *, int, int);

/* A key: n bytes, no NUL, into a string of its own (UTF-8 is checked
 * when it is set). */
static char *
dec_key(struct rd *r)
{
	uint32_t n;
	char *k;

	if (get_u32(r, &n) == -1 || n > r->left ||
	    memchr(r->p, '\0', n) != NULL || (k = malloc((size_t)n + 1)) ==
	    NULL)
		return NULL;
	memcpy(k, r->p, n);
	k[n] = '\0';
	r->p += n;
	r->left -= n;
	return k;
}

static json_t *
dec_object(struct rd *r, int depth)
{
	json_t *o, *v;
	uint32_t n, i;
	char *k;

	/* each member takes 5 bytes at least: a key's length, a tag */
	if (get_u32(r, &n) == -1 || n > r->left / 5 ||
	    (o = json_object()) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if ((k = dec_key(r)) == NULL)
			goto bad;
		if (json_object_get(o, k) != NULL ||
		    (v = dec_node(r, depth + 1, depth == 0 && r->tail &&
		    strcmp(k, "raw") == 0)) == NULL) {
			free(k);
			goto bad;
		}
		/* json_object_set_new checks the key's UTF-8 */
		if (json_object_set_new(o, k, v) == -1) {
			free(k);
			goto bad;
		}
		free(k);
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}

static json_t *
dec_array(struct rd *r, int depth)
{
	json_t *a, *v;
	uint32_t n, i;

	if (get_u32(r, &n) == -1 || n > r->left ||
	    (a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if ((v = dec_node(r, depth + 1, 0)) == NULL ||
		    json_array_append_new(a, v) == -1) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
dec_string(struct rd *r, int binary)
{
	const char *p;
	uint32_t n;

	if (get_u32(r, &n) == -1 || n > r->left)
		return NULL;
	p = (const char *)r->p;
	r->p += n;
	r->left -= n;
	if (binary)
		return json_stringn_nocheck(p, n);
	/* JSON text has no raw NUL, and jansson refuses \u0000 */
	if (memchr(p, '\0', n) != NULL)
		return NULL;
	return json_stringn(p, n);	/* NULL unless UTF-8 */
}

static json_t *
dec_node(struct rd *r, int depth, int raw)
{
	uint64_t u;
	double d;
	char tag;

	if (get(r, &tag, 1) == -1)
		return NULL;
	switch (tag) {
	case 'o':
		return depth < TREE_DEPTH_MAX ? dec_object(r, depth) : NULL;
	case 'a':
		return depth < TREE_DEPTH_MAX ? dec_array(r, depth) : NULL;
	case 's':
		/* a string in raw's place is always bytes: one encoding */
		return raw ? NULL : dec_string(r, 0);
	case 'b':
		return raw ? dec_string(r, 1) : NULL;
	case 'i':
		if (get(r, &u, sizeof(u)) == -1)
			return NULL;
		return json_integer((json_int_t)be64toh(u));
	case 'r':
		if (get(r, &u, sizeof(u)) == -1)
			return NULL;
		u = be64toh(u);
		memcpy(&d, &u, sizeof(d));
		return isfinite(d) ? json_real(d) : NULL;
	case 't':
		return json_true();
	case 'f':
		return json_false();
	case 'n':
		return json_null();
	}
	return NULL;
}

int
tree_decode(uint16_t type, const uint8_t *buf, size_t len, json_t **out)
{
	struct rd r = { buf, len, MSG_TAIL_OK(type) };

	*out = NULL;
	if (len == 0 || buf[0] != 'o')
		return -1;
	if ((*out = dec_node(&r, 0, 0)) == NULL)
		return -1;
	if (r.left != 0) {
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int
tree_push(struct evbuffer *out, const struct frame_hdr *h, const json_t *j,
    size_t wire, int z)
{
	struct tree_item it = { .status = FRAME_OK, .type = h->type,
	    .version = h->version, .flags = z ? TREE_Z : 0, .len = h->len };
	struct evbuffer *body;
	size_t n;
	int rc = -1;

	if (wire > UINT32_MAX || (body = evbuffer_new()) == NULL)
		return -1;
	it.wire = (uint32_t)wire;
	if (tree_encode(h->type, j, body) == 0) {
		n = evbuffer_get_length(body);
		if (n <= TREE_BODY_MAX(h->len)) {
			it.body = (uint32_t)n;
			rc = evbuffer_add(out, &it, sizeof(it));
			if (rc == 0)
				rc = evbuffer_add_buffer(out, body);
		}
	}
	evbuffer_free(body);
	return rc;
}

int
tree_push_status(struct evbuffer *out, int status, const struct frame_hdr *h)
{
	struct tree_item it = { .status = (uint16_t)status };

	if (h != NULL) {
		it.type = h->type;
		it.version = h->version;
		it.len = h->len;
	}
	return evbuffer_add(out, &it, sizeof(it));
}

size_t
tree_item_max(size_t max)
{
	if (max > MIGR_FRAME_MAX)
		max = MIGR_FRAME_MAX;
	return sizeof(struct tree_item) + TREE_BODY_MAX(max);
}

int
tree_pull(struct evbuffer *in, size_t max, struct tree_item *it,
    struct frame_hdr *h, json_t **payload)
{
	size_t avail = evbuffer_get_length(in);
	unsigned char *p;

	*payload = NULL;
	memset(h, 0, sizeof(*h));
	if (avail < sizeof(*it) ||
	    evbuffer_copyout(in, it, sizeof(*it)) != (ssize_t)sizeof(*it))
		return FRAME_PARTIAL;
	h->type = it->type;
	h->version = it->version;
	h->len = it->len;
	switch (it->status) {
	case FRAME_PARTIAL:
	case FRAME_TOO_BIG:
	case FRAME_BAD_VERSION:
	case FRAME_BAD_TYPE:
	case FRAME_BAD_PAYLOAD:
		if (it->body != 0 || it->flags != 0)
			return TREE_BAD;
		evbuffer_drain(in, sizeof(*it));
		return it->status == FRAME_PARTIAL ? TREE_PROGRESS :
		    it->status;
	case FRAME_OK:
		break;
	default:
		return TREE_BAD;
	}
	/* what the TLS process would have refused itself */
	if (it->version != MIGR_PROTO_VERSION || it->type == MSG_NONE ||
	    it->type >= MSG__MAX || it->len == 0 ||
	    it->len > MIGR_FRAME_MAX || it->body == 0 ||
	    it->body > TREE_BODY_MAX(it->len) || (it->flags & ~TREE_Z) != 0)
		return TREE_BAD;
	if (max > MIGR_FRAME_MAX)
		max = MIGR_FRAME_MAX;
	if (it->len > max)
		return FRAME_TOO_BIG;
	if (avail - sizeof(*it) < it->body)
		return FRAME_PARTIAL;
	if ((p = evbuffer_pullup(in, sizeof(*it) + it->body)) == NULL)
		return FRAME_IO;
	if (tree_decode(it->type, p + sizeof(*it), it->body, payload) == -1)
		return TREE_BAD;
	evbuffer_drain(in, sizeof(*it) + it->body);
	return FRAME_OK;
}
