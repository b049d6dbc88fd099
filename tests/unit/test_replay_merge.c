/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/netns/replay_merge.c: which kept segments merge
 * and what the merged one carries.  Each expectation is a segment built
 * whole by this file (the second's headers, the first's sequence number,
 * both payloads), its checksums computed by replay_checksums() on both
 * sides, and compared byte for byte; and what must not merge stays as
 * it was, in its place.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "replay.h"

#define ACK	0x10
#define PSH	0x08
#define FIN	0x01

struct spec {
	int		 v6;
	uint16_t	 sport;
	uint32_t	 seq, ack;
	uint16_t	 win;
	uint8_t		 flags, tos;
	const char	*payload;
	int		 ipopt;		/* IPv4 with 4 bytes of options */
};

/* A TCP segment from the peer (port sport) to svc:7400, checksums
 * right; its length. */
static size_t
build(const struct spec *s, uint8_t *p)
{
	size_t hl = s->v6 ? 40 : (s->ipopt ? 24 : 20);
	size_t plen = strlen(s->payload), len = hl + 32 + plen;
	uint8_t *t = p + hl;

	memset(p, 0, len);
	if (s->v6) {
		p[0] = (uint8_t)(0x60 | s->tos >> 4);
		p[1] = (uint8_t)(s->tos << 4);
		p[4] = (uint8_t)((len - 40) >> 8);
		p[5] = (uint8_t)(len - 40);
		p[6] = 6;
		p[7] = 64;
		inet_pton(AF_INET6, "fd00:77::9", p + 8);
		inet_pton(AF_INET6, "fd00:77::180", p + 24);
	} else {
		p[0] = (uint8_t)(0x40 | hl / 4);
		p[1] = s->tos;
		p[2] = (uint8_t)(len >> 8);
		p[3] = (uint8_t)len;
		p[6] = 0x40;		/* DF */
		p[8] = 64;
		p[9] = 6;
		inet_pton(AF_INET, "10.77.0.9", p + 12);
		inet_pton(AF_INET, "10.77.0.180", p + 16);
		if (s->ipopt)
			p[20] = 1, p[21] = 1, p[22] = 1, p[23] = 1;	/* NOPs */
	}
	t[0] = (uint8_t)(s->sport >> 8);
	t[1] = (uint8_t)s->sport;
	t[2] = 0x1c;			/* 7400 */
	t[3] = 0xe8;
	t[4] = (uint8_t)(s->seq >> 24);
	t[5] = (uint8_t)(s->seq >> 16);
	t[6] = (uint8_t)(s->seq >> 8);
	t[7] = (uint8_t)s->seq;
	t[8] = (uint8_t)(s->ack >> 24);
	t[9] = (uint8_t)(s->ack >> 16);
	t[10] = (uint8_t)(s->ack >> 8);
	t[11] = (uint8_t)s->ack;
	t[12] = 8 << 4;			/* 32 bytes: timestamps */
	t[13] = s->flags;
	t[14] = (uint8_t)(s->win >> 8);
	t[15] = (uint8_t)s->win;
	t[20] = 1;			/* NOP, NOP, TS */
	t[21] = 1;
	t[22] = 8;
	t[23] = 10;
	t[27] = (uint8_t)s->ack;	/* a TSval that moves with ack */
	memcpy(t + 32, s->payload, plen);
	replay_checksums(p, len);
	return len;
}

static void
add(struct replay_list *l, const struct spec *s)
{
	uint8_t p[2048];

	assert_int_equal(replay_list_add(l, p, build(s, p)), 0);
}

/* The packet at the list's position i, its checksums made again (as the
 * replay does), against the segment s. */
static void
is_at(struct replay_list *l, size_t i, const struct spec *s, uint32_t count)
{
	struct replay_pkt *p = l->head;
	uint8_t want[2048];
	size_t len = build(s, want);

	while (i-- > 0 && p != NULL)
		p = p->next;
	assert_non_null(p);
	replay_checksums(p->data, p->len);
	assert_int_equal(p->len, len);
	assert_memory_equal(p->data, want, len);
	assert_int_equal(p->count, count);
}

static void
test_run_merges(void **state)
{
	struct replay_list l;
	struct spec a1 = { 0, 40000, 1000, 500, 1000, ACK | PSH, 0, "abc", 0 };
	struct spec a2 = { 0, 40000, 1003, 501, 1001, ACK, 0, "defg", 0 };
	struct spec a3 = { 0, 40000, 1007, 502, 1002, ACK, 0, "h", 0 };
	struct spec b1 = { 1, 40001, 7, 90, 2000, ACK, 0, "xy", 0 };
	struct spec b2 = { 1, 40001, 9, 91, 2001, ACK | PSH, 0, "z", 0 };
	/* a's three as one: a3's headers, a1's seq, PSH from a1 */
	struct spec a = { 0, 40000, 1000, 502, 1002, ACK | PSH, 0,
	    "abcdefgh", 0 };
	struct spec b = { 1, 40001, 7, 91, 2001, ACK | PSH, 0, "xyz", 0 };

	(void)state;
	replay_list_init(&l, 100, 1 << 20);
	add(&l, &a1);
	add(&l, &b1);
	add(&l, &a2);
	add(&l, &b2);
	add(&l, &a3);
	assert_int_equal(replay_list_merge(&l, 1500), 3);
	assert_int_equal(l.npkts, 2);
	assert_int_equal(l.merged, 3);
	assert_int_equal(l.kept, 5);
	/* each where its last segment was: b, then a */
	is_at(&l, 0, &b, 2);
	is_at(&l, 1, &a, 3);
	assert_int_equal(l.bytes, l.head->len + l.head->next->len);
	assert_ptr_equal(l.tail, &l.head->next->next);
	replay_list_free(&l);
}

/* What must stay as it came: each pair below is two segments that look
 * alike but one rule forbids joining. */
static void
test_kept_apart(void **state)
{
	struct spec d1 = { 0, 40000, 1000, 500, 1000, ACK, 0, "abc", 0 };
	struct spec gap = { 0, 40000, 1004, 500, 1000, ACK, 0, "e", 0 };
	struct spec again = { 0, 40000, 1001, 500, 1000, ACK, 0, "bc", 0 };
	struct spec fin = { 0, 40000, 1003, 500, 1000, ACK | FIN, 0, "d", 0 };
	struct spec pure = { 0, 40000, 1003, 501, 1000, ACK, 0, "", 0 };
	struct spec ce = { 0, 40000, 1003, 500, 1000, ACK, 3, "d", 0 };
	struct spec opt = { 0, 40000, 1003, 500, 1000, ACK, 0, "d", 1 };
	struct spec other = { 0, 40002, 1003, 500, 1000, ACK, 0, "d", 0 };
	struct spec v6 = { 1, 40000, 1003, 500, 1000, ACK, 0, "d", 0 };
	struct spec next = { 0, 40000, 1003, 500, 1000, ACK, 0, "d", 0 };
	const struct spec *second[] = { &gap, &again, &fin, &ce, &opt,
	    &other, &v6 };
	struct replay_list l;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(second) / sizeof(second[0]); i++) {
		replay_list_init(&l, 100, 1 << 20);
		add(&l, &d1);
		add(&l, second[i]);
		assert_int_equal(replay_list_merge(&l, 1500), 0);
		assert_int_equal(l.npkts, 2);
		is_at(&l, 0, &d1, 1);
		is_at(&l, 1, second[i], 1);
		replay_list_free(&l);
	}
	/* a pure ACK between: the data after it does not join the data
	 * before it (the ACK would then come first) */
	replay_list_init(&l, 100, 1 << 20);
	add(&l, &d1);
	add(&l, &pure);
	add(&l, &next);
	assert_int_equal(replay_list_merge(&l, 1500), 0);
	is_at(&l, 0, &d1, 1);
	is_at(&l, 1, &pure, 1);
	is_at(&l, 2, &next, 1);
	replay_list_free(&l);
	/* longer than max_len together: apart; the IPv4 header, 32 bytes
	 * of TCP and 4 of payload are 56 */
	replay_list_init(&l, 100, 1 << 20);
	add(&l, &d1);
	add(&l, &next);
	assert_int_equal(replay_list_merge(&l, 55), 0);
	assert_int_equal(replay_list_merge(&l, 56), 1);
	assert_int_equal(l.npkts, 1);
	replay_list_free(&l);
}

/* Not TCP, or not a whole packet: left where it was. */
static void
test_other_packets(void **state)
{
	static const uint8_t junk[24] = { 0x45, 0, 0, 24 };
	struct spec d1 = { 0, 40000, 1000, 500, 1000, ACK, 0, "abc", 0 };
	struct spec d2 = { 0, 40000, 1003, 500, 1000, ACK, 0, "d", 0 };
	struct spec d = { 0, 40000, 1000, 500, 1000, ACK, 0, "abcd", 0 };
	struct replay_list l;

	(void)state;
	replay_list_init(&l, 100, 1 << 20);
	add(&l, &d1);
	assert_int_equal(replay_list_add(&l, junk, sizeof(junk)), 0);
	add(&l, &d2);
	assert_int_equal(replay_list_merge(&l, 1500), 1);
	assert_int_equal(l.npkts, 2);
	assert_int_equal(l.head->len, sizeof(junk));
	assert_memory_equal(l.head->data, junk, sizeof(junk));
	is_at(&l, 1, &d, 2);
	replay_list_free(&l);
	/* one packet, or none: nothing to do */
	replay_list_init(&l, 100, 1 << 20);
	assert_int_equal(replay_list_merge(&l, 1500), 0);
	add(&l, &d1);
	assert_int_equal(replay_list_merge(&l, 1500), 0);
	replay_list_free(&l);
}

/* A long run, as a busy peer's during a freeze: one segment per MTU's
 * worth, every byte in order, the sequence wrapping on the way. */
static void
test_long_run(void **state)
{
	struct replay_list l;
	struct replay_pkt *p;
	char pl[2] = "a";
	uint32_t seq = 0xfffffff0u, want = seq;
	size_t i, total = 0, plen;

	(void)state;
	replay_list_init(&l, 5000, 1 << 24);
	for (i = 0; i < 3000; i++) {
		struct spec s = { 0, 40000, seq, 1, 1000, ACK, 0, pl, 0 };

		pl[0] = (char)('a' + i % 26);
		s.payload = pl;
		add(&l, &s);
		seq++;
	}
	replay_list_merge(&l, 1500);
	/* 1500 - 20 - 32 = 1448 bytes a segment */
	assert_int_equal(l.npkts, 3);
	for (p = l.head; p != NULL; p = p->next) {
		const uint8_t *t = p->data + 20;

		assert_int_equal((uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 |
		    (uint32_t)t[6] << 8 | t[7], want);
		plen = p->len - 52;
		for (i = 0; i < plen; i++)
			assert_int_equal(t[32 + i], 'a' + (total + i) % 26);
		total += plen;
		want += (uint32_t)plen;
		assert_true(p->len <= 1500);
	}
	assert_int_equal(total, 3000);
	replay_list_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_merges),
		cmocka_unit_test(test_kept_apart),
		cmocka_unit_test(test_other_packets),
		cmocka_unit_test(test_long_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
