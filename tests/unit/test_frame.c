/* SPDX-License-Identifier: ISC */
/* Unit tests for common/frame.c: the size cap is checked before any
 * allocation or consumption, bad versions/types/payloads are reported,
 * partial frames consume nothing, the fd helpers agree, and an image's
 * binary tail comes back byte for byte where it may come at all. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/buffer.h>

#include "frame.h"
#include "log.h"
#include "migrd-protocol.h"

static void
raw_hdr(uint8_t out[8], uint16_t type, uint16_t version, uint32_t len)
{
	uint16_t t = htons(type), v = htons(version);
	uint32_t l = htonl(len);

	memcpy(out, &t, 2);
	memcpy(out + 2, &v, 2);
	memcpy(out + 4, &l, 4);
}

static void
test_roundtrip(void **state)
{
	struct evbuffer *b = evbuffer_new();
	struct frame_hdr h;
	json_t *in = json_pack("{s:s,s:i}", "ns", "web", "n", 7), *out;
	uint8_t hdr[8];

	(void)state;
	assert_int_equal(frame_push(b, MSG_CTL_NS_SHOW, in, 1024), 0);
	/* header on the wire: type 7, version 1, len = compact JSON */
	assert_int_equal(evbuffer_copyout(b, hdr, 8), 8);
	assert_int_equal(hdr[0], 0);
	assert_int_equal(hdr[1], MSG_CTL_NS_SHOW);
	assert_int_equal(hdr[3], MIGR_PROTO_VERSION);
	assert_int_equal(evbuffer_get_length(b),
	    8 + strlen("{\"ns\":\"web\",\"n\":7}"));
	assert_int_equal(frame_pull(b, 1024, &h, &out), FRAME_OK);
	assert_int_equal(h.type, MSG_CTL_NS_SHOW);
	assert_int_equal(h.version, MIGR_PROTO_VERSION);
	assert_string_equal(json_string_value(json_object_get(out, "ns")),
	    "web");
	assert_int_equal(json_integer_value(json_object_get(out, "n")), 7);
	assert_int_equal(evbuffer_get_length(b), 0);
	json_decref(in);
	json_decref(out);
	evbuffer_free(b);
}

/*
 * A binary tail (an image's or a queue chunk's piece): any bytes, NULs included, come back
 * as "raw" of the same length; a type that takes none, a header with a
 * "raw" of its own, bad JSON before the NUL, and a tail that would pass
 * the limit are refused.
 */
static void
test_binary_tail(void **state)
{
	struct evbuffer *b = evbuffer_new();
	uint8_t tail[600], hdr[8];
	struct frame_hdr h;
	json_t *in = json_pack("{s:s,s:i}", "name", "pages-1.img", "off", 0);
	json_t *out, *raw;
	char *s;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(tail); i++)
		tail[i] = (uint8_t)(i * 7);	/* NULs and high bytes */
	assert_int_equal(frame_push_tail(b, MSG_MIG_IMAGE, in, tail,
	    sizeof(tail), 4096), 0);
	assert_int_equal(frame_pull(b, 4096, &h, &out), FRAME_OK);
	assert_int_equal(h.type, MSG_MIG_IMAGE);
	assert_non_null(raw = json_object_get(out, "raw"));
	assert_int_equal(json_string_length(raw), sizeof(tail));
	assert_memory_equal(json_string_value(raw), tail, sizeof(tail));
	assert_string_equal(json_string_value(json_object_get(out, "name")),
	    "pages-1.img");
	json_decref(out);
	/* an empty tail is a tail */
	assert_int_equal(frame_push_tail(b, MSG_MIG_IMAGE, in, tail, 0, 4096),
	    0);
	assert_int_equal(frame_pull(b, 4096, &h, &out), FRAME_OK);
	assert_int_equal(json_string_length(json_object_get(out, "raw")), 0);
	json_decref(out);
	/* a chunk of a queue takes one too (capability "raw-chunks") */
	assert_int_equal(frame_push_tail(b, MSG_MIG_CHUNK, in, tail,
	    sizeof(tail), 4096), 0);
	assert_int_equal(frame_pull(b, 4096, &h, &out), FRAME_OK);
	assert_int_equal(h.type, MSG_MIG_CHUNK);
	assert_memory_equal(json_string_value(json_object_get(out, "raw")),
	    tail, sizeof(tail));
	json_decref(out);
	/* no tail on any other type: not sent, and not taken */
	assert_int_equal(frame_push_tail(b, MSG_MIG_RECORD, in, tail, 8,
	    4096), -1);
	assert_int_equal(evbuffer_get_length(b), 0);
	assert_int_equal(frame_decode(MSG_MIG_RECORD, "{}\0xyz", 6, &out),
	    FRAME_BAD_PAYLOAD);
	assert_null(out);
	/* the header's own "raw", or bad JSON before the NUL */
	assert_int_equal(frame_decode(MSG_MIG_IMAGE, "{\"raw\":\"a\"}\0x",
	    12, &out), FRAME_BAD_PAYLOAD);
	assert_int_equal(frame_decode(MSG_MIG_IMAGE, "{\"a\":\0x", 7, &out),
	    FRAME_BAD_PAYLOAD);
	assert_int_equal(frame_decode(MSG_MIG_IMAGE, "\0x", 2, &out),
	    FRAME_BAD_PAYLOAD);
	/* the limit counts the NUL and the tail */
	assert_int_equal(frame_serialise_tail(MSG_MIG_IMAGE, in, tail,
	    sizeof(tail), 600, &s, &n), -1);
	assert_int_equal(frame_serialise_tail(MSG_MIG_IMAGE, in, tail, 100,
	    200, &s, &n), 0);
	assert_true(n <= 200);
	assert_int_equal(s[n - 101], '\0');
	free(s);
	/* on the receiving side, a frame above the limit is refused from
	 * its header, tail or not */
	raw_hdr(hdr, MSG_MIG_IMAGE, MIGR_PROTO_VERSION, 5000);
	evbuffer_add(b, hdr, 8);
	assert_int_equal(frame_pull(b, 4096, &h, &out), FRAME_TOO_BIG);
	json_decref(in);
	evbuffer_free(b);
}

static void
test_size_cap_before_payload(void **state)
{
	struct evbuffer *b = evbuffer_new();
	struct frame_hdr h;
	json_t *out = (json_t *)1;
	uint8_t hdr[8];

	(void)state;
	/* a header announcing 2 GiB, with no payload behind it */
	raw_hdr(hdr, MSG_HELLO, MIGR_PROTO_VERSION, 0x7fffffff);
	evbuffer_add(b, hdr, 8);
	assert_int_equal(frame_pull(b, 65536, &h, &out), FRAME_TOO_BIG);
	assert_null(out);
	assert_int_equal(h.len, 0x7fffffff);
	assert_int_equal(evbuffer_get_length(b), 8);	/* nothing consumed */
	/* exactly at the limit is fine, one above is not */
	assert_int_equal(frame_hdr_check(hdr, 8, 0x7fffffff, &h), FRAME_TOO_BIG);
	raw_hdr(hdr, MSG_HELLO, MIGR_PROTO_VERSION, 100);
	assert_int_equal(frame_hdr_check(hdr, 8, 100, &h), FRAME_OK);
	assert_int_equal(frame_hdr_check(hdr, 8, 99, &h), FRAME_TOO_BIG);
	/* the caller's limit can never exceed MIGR_FRAME_MAX */
	raw_hdr(hdr, MSG_HELLO, MIGR_PROTO_VERSION, MIGR_FRAME_MAX + 1);
	assert_int_equal(frame_hdr_check(hdr, 8, SIZE_MAX, &h), FRAME_TOO_BIG);
	evbuffer_free(b);
}

static void
test_bad_version_and_type(void **state)
{
	struct frame_hdr h;
	uint8_t hdr[8];

	(void)state;
	raw_hdr(hdr, MSG_HELLO, MIGR_PROTO_VERSION + 1, 2);
	assert_int_equal(frame_hdr_check(hdr, 8, 1024, &h), FRAME_BAD_VERSION);
	assert_int_equal(h.version, MIGR_PROTO_VERSION + 1);
	assert_int_equal(frame_status_result(FRAME_BAD_VERSION),
	    RES_BAD_VERSION);
	raw_hdr(hdr, MSG_NONE, MIGR_PROTO_VERSION, 2);
	assert_int_equal(frame_hdr_check(hdr, 8, 1024, &h), FRAME_BAD_TYPE);
	raw_hdr(hdr, MSG__MAX, MIGR_PROTO_VERSION, 2);
	assert_int_equal(frame_hdr_check(hdr, 8, 1024, &h), FRAME_BAD_TYPE);
	raw_hdr(hdr, MSG_HELLO, MIGR_PROTO_VERSION, 0);
	assert_int_equal(frame_hdr_check(hdr, 8, 1024, &h), FRAME_BAD_PAYLOAD);
}

static void
test_partial_frames(void **state)
{
	struct evbuffer *b = evbuffer_new();
	struct frame_hdr h;
	json_t *out;
	uint8_t hdr[8];
	const char *p = "{\"seq\":42}";
	size_t i;

	(void)state;
	raw_hdr(hdr, MSG_HEARTBEAT, MIGR_PROTO_VERSION, (uint32_t)strlen(p));
	/* feed byte by byte: PARTIAL and nothing consumed until the last */
	for (i = 0; i < 8; i++) {
		evbuffer_add(b, hdr + i, 1);
		assert_int_equal(frame_pull(b, 1024, &h, &out), FRAME_PARTIAL);
		assert_int_equal(evbuffer_get_length(b), i + 1);
	}
	for (i = 0; i < strlen(p) - 1; i++) {
		evbuffer_add(b, p + i, 1);
		assert_int_equal(frame_pull(b, 1024, &h, &out), FRAME_PARTIAL);
		assert_int_equal(evbuffer_get_length(b), 8 + i + 1);
	}
	evbuffer_add(b, p + i, 1);
	/* and a second frame right behind the first */
	frame_push(b, MSG_HEARTBEAT, NULL, 1024);
	assert_int_equal(frame_pull(b, 1024, &h, &out), FRAME_OK);
	assert_int_equal(json_integer_value(json_object_get(out, "seq")), 42);
	json_decref(out);
	assert_int_equal(evbuffer_get_length(b), 8 + 2);
	assert_int_equal(frame_pull(b, 1024, &h, &out), FRAME_OK);
	assert_int_equal(json_object_size(out), 0);
	json_decref(out);
	assert_int_equal(frame_pull(b, 1024, &h, &out), FRAME_PARTIAL);
	evbuffer_free(b);
}

static void
test_bad_payloads(void **state)
{
	static const char *const bad[] = {
		"[1,2]", "\"str\"", "{\"a\":", "{\"a\":1,\"a\":2}", "nope!",
		"{} {}",
	};
	struct evbuffer *b = evbuffer_new();
	struct frame_hdr h;
	json_t *out;
	uint8_t hdr[8];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_hdr(hdr, MSG_HELLO, MIGR_PROTO_VERSION,
		    (uint32_t)strlen(bad[i]));
		evbuffer_add(b, hdr, 8);
		evbuffer_add(b, bad[i], strlen(bad[i]));
		assert_int_equal(frame_pull(b, 1024, &h, &out),
		    FRAME_BAD_PAYLOAD);
		assert_null(out);
		/* the bad frame is consumed whole, nothing more */
		assert_int_equal(evbuffer_get_length(b), 0);
	}
	evbuffer_free(b);
}

static void
test_pack_refuses_oversize(void **state)
{
	json_t *big = json_pack("{s:s}", "x", "0123456789012345678901234567");
	uint8_t *buf = NULL;
	size_t len = 0;

	(void)state;
	log_set_sink(log_discard, NULL);
	assert_int_equal(frame_pack(MSG_RESULT, big, 10, &buf, &len), -1);
	assert_null(buf);
	log_set_sink(NULL, NULL);
	assert_int_equal(frame_pack(MSG_RESULT, big, 1024, &buf, &len), 0);
	assert_int_equal(len, 8 + strlen("{\"x\":\"0123456789012345678901234567\"}"));
	free(buf);
	json_decref(big);
}

static void
test_fd_helpers(void **state)
{
	struct frame_hdr h;
	json_t *in = json_pack("{s:i}", "code", 13), *out;
	uint8_t hdr[8];
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(frame_write_fd(sv[0], MSG_RESULT, in, 1024), 0);
	assert_int_equal(frame_read_fd(sv[1], 1024, &h, &out), FRAME_OK);
	assert_int_equal(h.type, MSG_RESULT);
	assert_int_equal(json_integer_value(json_object_get(out, "code")), 13);
	json_decref(out);
	/* an oversize header is refused without reading a payload */
	raw_hdr(hdr, MSG_RESULT, MIGR_PROTO_VERSION, 5000);
	assert_int_equal(write(sv[0], hdr, 8), 8);
	assert_int_equal(write(sv[0], "{}", 2), 2);
	assert_int_equal(frame_read_fd(sv[1], 1024, &h, &out), FRAME_TOO_BIG);
	assert_null(out);
	assert_int_equal(read(sv[1], hdr, 2), 2);	/* still unread */
	assert_memory_equal(hdr, "{}", 2);
	/* EOF mid-header */
	assert_int_equal(write(sv[0], hdr, 3), 3);
	close(sv[0]);
	assert_int_equal(frame_read_fd(sv[1], 1024, &h, &out), FRAME_IO);
	close(sv[1]);
	json_decref(in);
}

static void
test_result_strings(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < RES__MAX; i++)
		assert_non_null(migr_result_str[i]);
	assert_string_equal(migr_strresult(RES_NOT_IMPLEMENTED),
	    "not implemented yet");
	assert_string_equal(migr_strresult(-1), "unknown result code");
	assert_string_equal(migr_strresult(RES__MAX), "unknown result code");
	for (i = 1; i < MSG__MAX; i++)
		assert_string_not_equal(migr_msgname(i), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_binary_tail),
		cmocka_unit_test(test_size_cap_before_payload),
		cmocka_unit_test(test_bad_version_and_type),
		cmocka_unit_test(test_partial_frames),
		cmocka_unit_test(test_bad_payloads),
		cmocka_unit_test(test_pack_refuses_oversize),
		cmocka_unit_test(test_fd_helpers),
		cmocka_unit_test(test_result_strings),
	};

	return cmocka_run_group_tests_name("frame", tests, NULL, NULL);
}
