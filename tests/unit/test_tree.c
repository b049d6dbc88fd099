/* SPDX-License-Identifier: ISC */
/* Unit tests for migrd/chan_rx.c and migrd/tree.c: what a peer sends is
 * parsed by the TLS process and reaches migrd as trees.  Every message
 * comes through the same, plain or deflated, a binary tail included;
 * the peer's bad frames reach migrd as the refusals they were; the TLS
 * process never runs ahead of migrd; and migrd refuses a malformed item
 * or tree (a TLS process taken over) before it allocates by it. */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <event2/buffer.h>

#include "chan_rx.h"
#include "frame.h"
#include "frame_z.h"
#include "log.h"
#include "migrd-protocol.h"
#include "tree.h"

/* what peers send, and what jansson must carry exactly */
static const char *const texts[] = {
	"{}",
	"{\"seq\":1,\"record\":{\"tcp\":{\"window\":{\"snd_wl1\":4294967295,"
	    "\"rcv_wnd\":64256}},\"opts\":[],\"state\":\"ESTABLISHED\"}}",
	"{\"min\":-9223372036854775808,\"max\":9223372036854775807,"
	    "\"zero\":0,\"neg\":-1}",
	"{\"r\":0.5,\"nz\":-0.0,\"big\":1e300,\"tiny\":5e-324}",
	"{\"t\":true,\"f\":false,\"n\":null,\"e\":\"\",\"a\":[[],{},[[1]]]}",
	"{\"u\":\"caf\\u00e9 \\u2603 \\ud83d\\ude00\",\"esc\":\"\\\"\\\\\\n\\t\","
	    "\"\\u00e9t\\u00e9\":1}",
	"{\"raw\":\"a raw of a type without a tail is a string\"}",
};

/* text as a frame of type, through chan_rx and tree_pull: the same */
static void
through(struct chan_rx *rx, uint16_t type, const char *text)
{
	struct evbuffer *wire = evbuffer_new(), *items = evbuffer_new();
	json_t *in = json_loads(text, JSON_REJECT_DUPLICATES, NULL), *out;
	struct tree_item it;
	struct frame_hdr h;
	size_t n;

	assert_non_null(in);
	assert_int_equal(frame_push(wire, type, in, MIGR_FRAME_MAX), 0);
	n = evbuffer_get_length(wire);
	assert_int_equal(chan_rx_parse(rx, wire, items, SIZE_MAX, 1, 0), 0);
	assert_int_equal(evbuffer_get_length(wire), 0);
	assert_int_equal(tree_pull(items, MIGR_FRAME_MAX, &it, &h, &out),
	    FRAME_OK);
	assert_int_equal(h.type, type);
	assert_int_equal(it.len, n - MIGR_FRAME_HDR_LEN);
	assert_int_equal(it.wire, n);
	assert_int_equal(it.flags, 0);
	assert_true(json_equal(in, out));
	assert_int_equal(evbuffer_get_length(items), 0);
	json_decref(in);
	json_decref(out);
	evbuffer_free(wire);
	evbuffer_free(items);
}

static void
test_roundtrip(void **state)
{
	struct chan_rx rx;
	size_t i;

	(void)state;
	chan_rx_init(&rx, 1, 1, 65536);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		through(&rx, MSG_MIG_RECORD, texts[i]);
		through(&rx, MSG_MIG_PREPARE, texts[i]);
	}
	/* no hello came: nothing was inflated */
	assert_null(rx.z);
	chan_rx_free(&rx);
}

/* A hello that announces deflate: what follows is one deflate stream,
 * when this host announces it too; otherwise plain. */
static void
test_deflate_after_hello(void **state)
{
	struct evbuffer *wire = evbuffer_new(), *items = evbuffer_new();
	json_t *hello = json_pack("{s:i,s:s,s:s,s:[s,s]}", "version",
	    MIGR_PROTO_VERSION, "host", "host2", "peer", "host1",
	    "capabilities", "heartbeat", "deflate");
	json_t *rec = json_loads(texts[1], 0, NULL), *out;
	struct frame_z *tx = frame_z_new(6, FRAME_Z_SEND);
	struct tree_item it;
	struct frame_hdr h;
	struct chan_rx rx;
	char *text = json_dumps(rec, JSON_COMPACT);
	size_t reclen = strlen(text);
	int i;

	(void)state;
	free(text);
	chan_rx_init(&rx, 1, 1, 65536);
	assert_int_equal(frame_push(wire, MSG_HELLO, hello, 65536), 0);
	for (i = 0; i < 50; i++)
		assert_int_equal(frame_push_z(wire, tx, MSG_MIG_RECORD, rec,
		    MIGR_FRAME_MAX), 0);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 0), 0);
	assert_non_null(rx.z);
	assert_int_equal(tree_pull(items, 65536, &it, &h, &out), FRAME_OK);
	assert_int_equal(h.type, MSG_HELLO);
	assert_int_equal(it.flags, 0);
	assert_true(json_equal(out, hello));
	json_decref(out);
	for (i = 0; i < 50; i++) {
		assert_int_equal(tree_pull(items, MIGR_FRAME_MAX, &it, &h,
		    &out), FRAME_OK);
		assert_int_equal(it.flags, TREE_Z);
		assert_true(json_equal(out, rec));
		/* what migrd counts: JSON and wire bytes, the latter far
		 * fewer once the stream has seen one */
		assert_int_equal(it.len, reclen);
		if (i > 0)
			assert_true(it.wire < it.len / 2);
		json_decref(out);
	}
	assert_int_equal(evbuffer_get_length(items), 0);
	chan_rx_free(&rx);

	/* this host does not announce deflate: the peer does not deflate
	 * either (the hellos' rule), so frames after the hello are plain */
	chan_rx_init(&rx, 2, 0, 65536);
	assert_int_equal(frame_push(wire, MSG_HELLO, hello, 65536), 0);
	assert_int_equal(frame_push(wire, MSG_HEARTBEAT, hello, 65536), 0);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 0), 0);
	assert_null(rx.z);
	for (i = 0; i < 2; i++) {
		assert_int_equal(tree_pull(items, 65536, &it, &h, &out),
		    FRAME_OK);
		assert_int_equal(it.flags, 0);
		json_decref(out);
	}
	chan_rx_free(&rx);
	json_decref(hello);
	json_decref(rec);
	frame_z_free(tx);
	evbuffer_free(wire);
	evbuffer_free(items);
}

/* An image's tail, any bytes, comes as "raw" of the same bytes. */
static void
test_binary_tail(void **state)
{
	struct evbuffer *wire = evbuffer_new(), *items = evbuffer_new();
	json_t *in = json_pack("{s:s,s:i}", "name", "pages-1.img", "off", 0);
	json_t *out, *raw;
	uint8_t tail[777];
	struct tree_item it;
	struct frame_hdr h;
	struct chan_rx rx;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tail); i++)
		tail[i] = (uint8_t)(i * 13);	/* NULs, not UTF-8 */
	chan_rx_init(&rx, 1, 1, 65536);
	assert_int_equal(frame_push_tail(wire, MSG_MIG_IMAGE, in, tail,
	    sizeof(tail), MIGR_FRAME_MAX), 0);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 0), 0);
	assert_int_equal(tree_pull(items, MIGR_FRAME_MAX, &it, &h, &out),
	    FRAME_OK);
	assert_non_null(raw = json_object_get(out, "raw"));
	assert_int_equal(json_string_length(raw), sizeof(tail));
	assert_memory_equal(json_string_value(raw), tail, sizeof(tail));
	assert_string_equal(json_string_value(json_object_get(out, "name")),
	    "pages-1.img");
	json_decref(out);
	chan_rx_free(&rx);
	json_decref(in);
	evbuffer_free(wire);
	evbuffer_free(items);
}

/* bytes as the peer's frame; what migrd gets back from the TLS
 * process, which then reads no more */
static int
refused(const void *bytes, size_t n, struct frame_hdr *h)
{
	struct evbuffer *wire = evbuffer_new(), *items = evbuffer_new();
	struct tree_item it;
	struct chan_rx rx;
	json_t *out;
	int st;

	chan_rx_init(&rx, 1, 1, 65536);
	evbuffer_add(wire, bytes, n);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 0), -1);
	assert_true(rx.done);
	/* a good frame after it is not read */
	assert_int_equal(frame_push(wire, MSG_HEARTBEAT, NULL, 100), 0);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 0), -1);
	assert_int_equal(evbuffer_get_length(items), sizeof(it));
	st = tree_pull(items, MIGR_FRAME_MAX, &it, h, &out);
	assert_null(out);
	assert_int_equal(evbuffer_get_length(items), 0);
	chan_rx_free(&rx);
	evbuffer_free(wire);
	evbuffer_free(items);
	return st;
}

static void
test_refusals(void **state)
{
	uint8_t buf[64 + 2 * TREE_DEPTH_MAX];
	struct frame_hdr h;
	size_t n;
	int i;

	(void)state;
	frame_hdr_pack(buf, MSG_HELLO, 5);
	memcpy(buf + 8, "nope!", 5);
	assert_int_equal(refused(buf, 13, &h), FRAME_BAD_PAYLOAD);
	assert_int_equal(h.type, MSG_HELLO);
	frame_hdr_pack(buf, MSG_HELLO, 7);
	memcpy(buf + 8, "[1,2,3]", 7);
	assert_int_equal(refused(buf, 15, &h), FRAME_BAD_PAYLOAD);
	/* the header alone is enough to refuse these, and says what */
	frame_hdr_pack(buf, MSG_HELLO, 0x7fffffff);
	assert_int_equal(refused(buf, 8, &h), FRAME_TOO_BIG);
	assert_int_equal(h.len, 0x7fffffff);
	/* above max-message, but for the types that may be larger */
	frame_hdr_pack(buf, MSG_HELLO, 70010);
	assert_int_equal(refused(buf, 8, &h), FRAME_TOO_BIG);
	assert_int_equal(h.len, 70010);
	frame_hdr_pack(buf, MSG_HELLO, 2);
	buf[3] = 9;			/* version 9 */
	memcpy(buf + 8, "{}", 2);
	assert_int_equal(refused(buf, 10, &h), FRAME_BAD_VERSION);
	assert_int_equal(h.version, 9);
	frame_hdr_pack(buf, MSG__MAX, 2);
	assert_int_equal(refused(buf, 10, &h), FRAME_BAD_TYPE);
	assert_int_equal(h.type, MSG__MAX);
	/* JSON that nests deeper than a tree: jansson takes it, the TLS
	 * process does not pass it on */
	n = 0;
	buf[8 + n++] = '{';
	buf[8 + n++] = '"';
	buf[8 + n++] = 'a';
	buf[8 + n++] = '"';
	buf[8 + n++] = ':';
	for (i = 0; i < TREE_DEPTH_MAX; i++)
		buf[8 + n++] = '[';
	for (i = 0; i < TREE_DEPTH_MAX; i++)
		buf[8 + n++] = ']';
	buf[8 + n++] = '}';
	frame_hdr_pack(buf, MSG_MIG_RECORD, (uint32_t)n);
	assert_int_equal(refused(buf, 8 + n, &h), FRAME_BAD_PAYLOAD);
	assert_int_equal(h.type, MSG_MIG_RECORD);
}

/* migrd's limit on what it takes: a frame above it is refused before its
 * tree is read, and nothing of it is taken. */
static void
test_limit(void **state)
{
	struct evbuffer *wire = evbuffer_new(), *items = evbuffer_new();
	char *big = malloc(100 * 1024);
	struct tree_item it;
	struct frame_hdr h;
	struct chan_rx rx;
	json_t *j, *out;
	size_t n;

	(void)state;
	memset(big, 'x', 100 * 1024 - 1);
	big[100 * 1024 - 1] = '\0';
	j = json_pack("{s:s}", "x", big);
	chan_rx_init(&rx, 1, 1, 65536);
	assert_int_equal(frame_push(wire, MSG_MIG_RECORD, j, MIGR_FRAME_MAX),
	    0);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 0), 0);
	n = evbuffer_get_length(items);
	assert_int_equal(tree_pull(items, 65536, &it, &h, &out),
	    FRAME_TOO_BIG);
	assert_null(out);
	assert_int_equal(h.len, 100 * 1024 - 1 + 8);
	assert_int_equal(evbuffer_get_length(items), n);
	assert_true(tree_item_max(MIGR_FRAME_MAX) >= n);
	assert_int_equal(tree_pull(items, MIGR_FRAME_MAX, &it, &h, &out),
	    FRAME_OK);
	assert_true(json_equal(j, out));
	json_decref(out);
	json_decref(j);
	free(big);
	chan_rx_free(&rx);
	evbuffer_free(wire);
	evbuffer_free(items);
}

/* A frame on its way is told to migrd, once a CHAN_RX_PROGRESS_MS at
 * most and only when bytes came; migrd takes that and waits on. */
static void
test_progress(void **state)
{
	struct evbuffer *wire = evbuffer_new(), *items = evbuffer_new();
	json_t *j = json_pack("{s:i}", "seq", 1), *out;
	struct tree_item it;
	struct frame_hdr h;
	struct chan_rx rx;
	uint8_t *p;
	size_t n;

	(void)state;
	chan_rx_init(&rx, 1, 1, 65536);
	assert_int_equal(frame_pack(MSG_HEARTBEAT, j, 100, &p, &n), 0);
	evbuffer_add(wire, p, n - 1);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 5000),
	    0);
	assert_int_equal(evbuffer_get_length(items), sizeof(it));
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 5999),
	    0);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 0, 9000),
	    0);
	assert_int_equal(evbuffer_get_length(items), sizeof(it));
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 6000),
	    0);
	assert_int_equal(evbuffer_get_length(items), 2 * sizeof(it));
	assert_int_equal(tree_pull(items, 100, &it, &h, &out), TREE_PROGRESS);
	assert_int_equal(tree_pull(items, 100, &it, &h, &out), TREE_PROGRESS);
	assert_int_equal(tree_pull(items, 100, &it, &h, &out), FRAME_PARTIAL);
	/* the last byte: the frame, and no progress beside it */
	evbuffer_add(wire, p + n - 1, 1);
	assert_int_equal(chan_rx_parse(&rx, wire, items, SIZE_MAX, 1, 9000),
	    0);
	assert_int_equal(tree_pull(items, 100, &it, &h, &out), FRAME_OK);
	assert_true(json_equal(j, out));
	assert_int_equal(evbuffer_get_length(items), 0);
	json_decref(out);
	json_decref(j);
	free(p);
	chan_rx_free(&rx);
	evbuffer_free(wire);
	evbuffer_free(items);
}

/* The TLS process stops at high bytes for migrd, whole frames left. */
static void
test_backpressure(void **state)
{
	struct evbuffer *wire = evbuffer_new(), *items = evbuffer_new();
	json_t *j = json_pack("{s:i}", "seq", 1), *out;
	struct tree_item it;
	struct frame_hdr h;
	struct chan_rx rx;
	int i;

	(void)state;
	chan_rx_init(&rx, 1, 1, 65536);
	for (i = 0; i < 3; i++)
		assert_int_equal(frame_push(wire, MSG_HEARTBEAT, j, 100), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(chan_rx_parse(&rx, wire, items, 1, 1, 0), 0);
		assert_int_equal(tree_pull(items, 100, &it, &h, &out),
		    FRAME_OK);
		json_decref(out);
		assert_int_equal(evbuffer_get_length(items), 0);
	}
	assert_int_equal(evbuffer_get_length(wire), 0);
	json_decref(j);
	chan_rx_free(&rx);
	evbuffer_free(wire);
	evbuffer_free(items);
}

/* A tree as a TLS process taken over might write it. */
struct tb {
	uint8_t	b[512];
	size_t	n;
};

static void
tb_tag(struct tb *t, char c)
{
	t->b[t->n++] = (uint8_t)c;
}

static void
tb_u32(struct tb *t, uint32_t v)
{
	v = htobe32(v);
	memcpy(t->b + t->n, &v, 4);
	t->n += 4;
}

static void
tb_str(struct tb *t, char tag, const char *s, size_t n)
{
	if (tag != 0)
		tb_tag(t, tag);
	tb_u32(t, (uint32_t)n);
	memcpy(t->b + t->n, s, n);
	t->n += n;
}

static int
dec(uint16_t type, const struct tb *t)
{
	json_t *j;
	int rc = tree_decode(type, t->b, t->n, &j);

	if (rc == 0)
		json_decref(j);
	else
		assert_null(j);
	return rc;
}

static void
test_hostile_trees(void **state)
{
	struct evbuffer *b = evbuffer_new();
	json_t *j = json_loads(texts[4], 0, NULL), *out;
	struct tb t;
	size_t n, i;
	uint8_t *p;

	(void)state;
	/* every prefix of a good tree is refused, and one byte more too */
	assert_int_equal(tree_encode(MSG_MIG_RECORD, j, b), 0);
	n = evbuffer_get_length(b);
	p = evbuffer_pullup(b, -1);
	for (i = 0; i < n; i++)
		assert_int_equal(tree_decode(MSG_MIG_RECORD, p, i, &out), -1);
	assert_int_equal(tree_decode(MSG_MIG_RECORD, p, n, &out), 0);
	assert_true(json_equal(j, out));
	json_decref(out);
	evbuffer_add(b, "n", 1);
	assert_int_equal(tree_decode(MSG_MIG_RECORD, evbuffer_pullup(b, -1),
	    n + 1, &out), -1);

	/* counts above what is left, before anything is allocated */
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 0xffffffff);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1); tb_str(&t, 0, "a", 1);
	tb_tag(&t, 'a'); tb_u32(&t, 0x7fffffff);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1); tb_u32(&t, 0xfffffff0);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1); tb_str(&t, 0, "a", 1);
	tb_tag(&t, 's'); tb_u32(&t, 0xfffffff0);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);

	/* the root is an object */
	t.n = 0; tb_tag(&t, 'a'); tb_u32(&t, 0);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 0);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), 0);

	/* a key twice; a NUL or bad UTF-8 in a key or a string */
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 2);
	tb_str(&t, 0, "k", 1); tb_tag(&t, 't');
	tb_str(&t, 0, "k", 1); tb_tag(&t, 'f');
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1);
	tb_str(&t, 0, "k\0x", 3); tb_tag(&t, 't');
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1);
	tb_str(&t, 0, "\xc3\x28", 2); tb_tag(&t, 't');
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1);
	tb_str(&t, 0, "k", 1); tb_str(&t, 's', "a\0b", 3);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1);
	tb_str(&t, 0, "k", 1); tb_str(&t, 's', "\xff", 1);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);

	/* bytes: only as the top-level "raw" of a type with a tail */
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1);
	tb_str(&t, 0, "raw", 3); tb_str(&t, 'b', "\0\xff", 2);
	assert_int_equal(dec(MSG_MIG_IMAGE, &t), 0);
	assert_int_equal(dec(MSG_MIG_CHUNK, &t), 0);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	/* and a string there is bytes, never text: one encoding */
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1);
	tb_str(&t, 0, "raw", 3); tb_str(&t, 's', "x", 1);
	assert_int_equal(dec(MSG_MIG_IMAGE, &t), -1);
	assert_int_equal(dec(MSG_MIG_RECORD, &t), 0);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1);
	tb_str(&t, 0, "tail", 4); tb_str(&t, 'b', "x", 1);
	assert_int_equal(dec(MSG_MIG_IMAGE, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1); tb_str(&t, 0, "k", 1);
	tb_tag(&t, 'o'); tb_u32(&t, 1); tb_str(&t, 0, "raw", 3);
	tb_str(&t, 'b', "x", 1);
	assert_int_equal(dec(MSG_MIG_IMAGE, &t), -1);

	/* not a number jansson would hold; a tag of no kind */
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1); tb_str(&t, 0, "r", 1);
	tb_tag(&t, 'r'); memcpy(t.b + t.n, "\x7f\xf8\0\0\0\0\0\0", 8);
	t.n += 8;
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);
	t.n = 0; tb_tag(&t, 'o'); tb_u32(&t, 1); tb_str(&t, 0, "x", 1);
	tb_tag(&t, 'x');
	assert_int_equal(dec(MSG_MIG_RECORD, &t), -1);

	/* nesting: TREE_DEPTH_MAX objects and arrays deep, not one more */
	for (n = TREE_DEPTH_MAX; n <= TREE_DEPTH_MAX + 1; n++) {
		t.n = 0;
		tb_tag(&t, 'o'); tb_u32(&t, 1); tb_str(&t, 0, "a", 1);
		for (i = 1; i < n; i++) {
			tb_tag(&t, 'a');
			tb_u32(&t, 1);
		}
		tb_tag(&t, 'n');
		assert_int_equal(dec(MSG_MIG_RECORD, &t),
		    n == TREE_DEPTH_MAX ? 0 : -1);
	}
	json_decref(j);
	evbuffer_free(b);
}

/* an item header as given */
static int
pull_item(struct tree_item it, const void *body, size_t n)
{
	struct evbuffer *b = evbuffer_new();
	struct frame_hdr h;
	json_t *out;
	int st;

	evbuffer_add(b, &it, sizeof(it));
	if (n > 0)
		evbuffer_add(b, body, n);
	st = tree_pull(b, MIGR_FRAME_MAX, &it, &h, &out);
	if (st == FRAME_OK)
		json_decref(out);
	else
		assert_null(out);
	evbuffer_free(b);
	return st;
}

static void
test_hostile_items(void **state)
{
	static const uint8_t empty[5] = { 'o', 0, 0, 0, 0 };
	struct tree_item ok = { .status = FRAME_OK, .type = MSG_HEARTBEAT,
	    .version = MIGR_PROTO_VERSION, .len = 2, .wire = 10,
	    .body = sizeof(empty) }, it;

	(void)state;
	assert_int_equal(pull_item(ok, empty, sizeof(empty)), FRAME_OK);
	/* a body announced but not there yet: wait */
	assert_int_equal(pull_item(ok, empty, 3), FRAME_PARTIAL);
	it = ok; it.status = 77;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	it = ok; it.status = FRAME_BAD_PAYLOAD;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	it.body = 0;
	assert_int_equal(pull_item(it, NULL, 0), FRAME_BAD_PAYLOAD);
	it = ok; it.status = FRAME_PARTIAL; it.body = 0; it.flags = TREE_Z;
	assert_int_equal(pull_item(it, NULL, 0), TREE_BAD);
	it.flags = 0;
	assert_int_equal(pull_item(it, NULL, 0), TREE_PROGRESS);
	it = ok; it.version = MIGR_PROTO_VERSION + 1;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	it = ok; it.type = MSG_NONE;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	it = ok; it.type = MSG__MAX;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	it = ok; it.len = MIGR_FRAME_MAX + 1;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	it = ok; it.len = 0;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	/* a body larger than any tree of len bytes: refused unread */
	it = ok; it.body = (uint32_t)TREE_BODY_MAX(it.len) + 1;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	it = ok; it.body = 0xffffffff;
	assert_int_equal(pull_item(it, NULL, 0), TREE_BAD);
	it = ok; it.flags = 0x80;
	assert_int_equal(pull_item(it, empty, sizeof(empty)), TREE_BAD);
	/* a body that is not the tree it says */
	it = ok; it.body = 4;
	assert_int_equal(pull_item(it, empty, 4), TREE_BAD);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_deflate_after_hello),
		cmocka_unit_test(test_binary_tail),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_backpressure),
		cmocka_unit_test(test_hostile_trees),
		cmocka_unit_test(test_hostile_items),
	};

	log_set_sink(log_discard, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
