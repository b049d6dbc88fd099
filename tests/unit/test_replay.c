/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/netns/replay.c: the bounds of what the replaying
 * lock keeps, what a destination accepts from its peer, and the
 * checksums of a packet given back (against packets whose checksums
 * were computed apart from this code, by Python's struct and socket);
 * how much one read of the queue takes (the queue played by a socket
 * pair carrying NFQUEUE messages); and, as root in a namespace of the
 * test's own, that an injection sends the packets it was asked for, in
 * order, and leaves the rest on the list (a veth pair: what is sent
 * down one end is read from a UDP socket on the other).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "giveback.h"
#include "replay.h"

/* 10.77.0.9:40000 -> 10.77.0.180:7400, TCP PSH|ACK, "hello, replay" */
static const uint8_t tcp4[] = {
	0x45, 0x00, 0x00, 0x35, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0x13,
	0x39, 0x0a, 0x4d, 0x00, 0x09, 0x0a, 0x4d, 0x00, 0xb4, 0x9c, 0x40,
	0x1c, 0xe8, 0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x07, 0xd0, 0x50,
	0x18, 0xff, 0xff, 0x26, 0x46, 0x00, 0x00, 0x68, 0x65, 0x6c, 0x6c,
	0x6f, 0x2c, 0x20, 0x72, 0x65, 0x70, 0x6c, 0x61, 0x79
};

/* [fd00:77::9]:5353 -> [fd00:77::180]:7500, UDP "datagram" */
static const uint8_t udp6[] = {
	0x60, 0x00, 0x00, 0x00, 0x00, 0x10, 0x11, 0x40, 0xfd, 0x00, 0x00,
	0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x09, 0xfd, 0x00, 0x00, 0x77, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x80, 0x14, 0xe9, 0x1d, 0x4c,
	0x00, 0x10, 0x2f, 0x7e, 0x64, 0x61, 0x74, 0x61, 0x67, 0x72, 0x61,
	0x6d
};

static void
ns_addrs(struct sk_ifaddr a[2])
{
	memset(a, 0, 2 * sizeof(*a));
	a[0].family = AF_INET;
	inet_pton(AF_INET, "10.77.0.180", a[0].addr);
	a[1].family = AF_INET6;
	inet_pton(AF_INET6, "fd00:77::180", a[1].addr);
}

static void
test_check_accepts(void **state)
{
	struct sk_ifaddr a[2];
	char why[128] = "";

	(void)state;
	ns_addrs(a);
	assert_int_equal(replay_check(tcp4, sizeof(tcp4), a, 2, why,
	    sizeof(why)), 0);
	assert_int_equal(replay_check(udp6, sizeof(udp6), a, 2, why,
	    sizeof(why)), 0);
	/* NULL: the shape only */
	assert_int_equal(replay_check(tcp4, sizeof(tcp4), NULL, 0, NULL, 0),
	    0);
}

static void
test_check_refuses(void **state)
{
	struct sk_ifaddr a[2];
	uint8_t p[sizeof(tcp4)];
	char why[128];

	(void)state;
	ns_addrs(a);
	/* to an address the namespace does not have */
	memcpy(p, tcp4, sizeof(p));
	p[19] = 0xb5;
	assert_int_equal(replay_check(p, sizeof(p), a, 2, why, sizeof(why)),
	    -1);
	assert_string_equal(why, "an IPv4 packet to an address the namespace "
	    "does not have");
	/* only the IPv6 address given: the IPv4 one is not the namespace's */
	assert_int_equal(replay_check(tcp4, sizeof(tcp4), &a[1], 1, why,
	    sizeof(why)), -1);
	/* a length that is not the header's */
	assert_int_equal(replay_check(tcp4, sizeof(tcp4) - 1, a, 2, why,
	    sizeof(why)), -1);
	assert_string_equal(why, "an IPv4 header that does not match its 52 "
	    "bytes");
	assert_int_equal(replay_check(udp6, sizeof(udp6) + 1, NULL, 0, why,
	    sizeof(why)), -1);
	/* a header length beyond the packet */
	memcpy(p, tcp4, sizeof(p));
	p[0] = 0x4f;
	assert_int_equal(replay_check(p, 40, NULL, 0, why, sizeof(why)), -1);
	p[0] = 0x44;		/* and shorter than the minimum */
	assert_int_equal(replay_check(p, sizeof(p), NULL, 0, why,
	    sizeof(why)), -1);
	/* neither version, too short */
	p[0] = 0x55;
	assert_int_equal(replay_check(p, sizeof(p), NULL, 0, why,
	    sizeof(why)), -1);
	assert_string_equal(why, "a packet that is neither IPv4 nor IPv6");
	assert_int_equal(replay_check(tcp4, 19, NULL, 0, why, sizeof(why)),
	    -1);
}

static void
test_checksums(void **state)
{
	uint8_t p[sizeof(tcp4)], q[sizeof(udp6)];

	(void)state;
	/* right already: unchanged */
	memcpy(p, tcp4, sizeof(p));
	replay_checksums(p, sizeof(p));
	assert_memory_equal(p, tcp4, sizeof(p));
	/* wrong (a NIC's partial sum, or nothing): made right */
	p[10] = p[11] = 0;
	p[36] = 0x12;
	p[37] = 0x34;
	replay_checksums(p, sizeof(p));
	assert_memory_equal(p, tcp4, sizeof(p));
	memcpy(q, udp6, sizeof(q));
	q[46] = q[47] = 0;
	replay_checksums(q, sizeof(q));
	assert_memory_equal(q, udp6, sizeof(q));
}

static void
test_list_bounds(void **state)
{
	struct replay_list l;
	struct replay_pkt *c;

	(void)state;
	replay_list_init(&l, 3, 100);
	assert_int_equal(replay_list_add(&l, tcp4, sizeof(tcp4)), 0);
	assert_int_equal(replay_list_add(&l, udp6, sizeof(udp6)), -1); /* bytes */
	assert_int_equal(replay_list_add(&l, tcp4, 20), 0);
	assert_int_equal(replay_list_add(&l, tcp4, 20), 0);
	assert_int_equal(replay_list_add(&l, tcp4, 1), -1);	/* packets */
	assert_int_equal(replay_list_add(&l, tcp4, 0), -1);	/* empty */
	assert_int_equal(l.npkts, 3);
	assert_int_equal(l.bytes, sizeof(tcp4) + 40);
	assert_int_equal(l.kept, 3);
	assert_int_equal(l.overflow, 3);
	/* taken in order, at least one whatever the limit */
	c = replay_list_take(&l, 1);
	assert_non_null(c);
	assert_null(c->next);
	assert_int_equal(c->len, sizeof(tcp4));
	assert_memory_equal(c->data, tcp4, sizeof(tcp4));
	replay_pkt_free_chain(c);
	assert_int_equal(l.npkts, 2);
	c = replay_list_take(&l, (size_t)-1);
	assert_non_null(c);
	assert_non_null(c->next);
	assert_null(c->next->next);
	replay_pkt_free_chain(c);
	assert_null(l.head);
	assert_int_equal(l.bytes, 0);
	/* room again, the counters kept */
	assert_int_equal(replay_list_add(&l, udp6, sizeof(udp6)), 0);
	replay_list_free(&l);
	assert_int_equal(l.npkts, 0);
	assert_int_equal(l.kept, 4);
	assert_int_equal(l.overflow, 3);
	assert_int_equal(replay_list_add(&l, udp6, sizeof(udp6)), 0);
	replay_list_free(&l);
}

/* One NFQUEUE packet message, as the kernel sends it, with id and tcp4. */
static void
send_queued(int fd, uint32_t id)
{
	char buf[512];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfqnl_msg_packet_hdr ph = { .packet_id = htonl(id) };
	struct nfgenmsg *g;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(tcp4), tcp4);
	assert_int_equal(send(fd, nlh, nlh->nlmsg_len, 0), nlh->nlmsg_len);
}

/* The id of the batch verdict replay_read() sent back, or 0. */
static uint32_t
verdict_id(int fd)
{
	const struct nfqnl_msg_verdict_hdr *vh;
	const struct nlmsghdr *nlh;
	char buf[512];
	ssize_t n;

	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n <= 0)
		return 0;
	nlh = (const struct nlmsghdr *)buf;
	assert_int_equal(nlh->nlmsg_type & 0xff, NFQNL_MSG_VERDICT_BATCH);
	vh = mnl_attr_get_payload(mnl_nlmsg_get_payload_offset(nlh,
	    sizeof(struct nfgenmsg)));
	assert_int_equal(ntohl(vh->verdict), NF_DROP);
	return ntohl(vh->id);
}

/*
 * Packets that come faster than they are read do not keep the reader:
 * one call takes REPLAY_READ_BATCH reads at most, gives those the
 * verdict, and the next call takes the rest.
 */
static void
test_read_batch(void **state)
{
	const int total = REPLAY_READ_BATCH + 44, big = 4 << 20;
	struct replay_list l;
	char err[128];
	int sv[2], i;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK,
	    0, sv), 0);
	if (setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &big,
	    sizeof(big)) < 0)
		(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big,
		    sizeof(big));
	for (i = 1; i <= total; i++)
		send_queued(sv[1], (uint32_t)i);
	replay_list_init(&l, 1000, 1 << 20);
	assert_int_equal(replay_read(sv[0], &l, err, sizeof(err)),
	    REPLAY_READ_BATCH);
	assert_int_equal(l.npkts, REPLAY_READ_BATCH);
	assert_int_equal(verdict_id(sv[1]), REPLAY_READ_BATCH);
	assert_int_equal(replay_read(sv[0], &l, err, sizeof(err)),
	    total - REPLAY_READ_BATCH);
	assert_int_equal(l.npkts, total);
	assert_int_equal(verdict_id(sv[1]), total);
	/* nothing left: no packet, no verdict */
	assert_int_equal(replay_read(sv[0], &l, err, sizeof(err)), 0);
	assert_int_equal(verdict_id(sv[1]), 0);
	assert_int_equal(l.overflow, 0);
	assert_memory_equal(l.head->data, tcp4, sizeof(tcp4));
	replay_list_free(&l);
	close(sv[0]);
	close(sv[1]);
}

static int have_netns;

/* 10.99.1.1:5000 -> 10.99.1.2:7500, UDP, "pkt NN", checksums left 0 for
 * replay_out_send() to compute */
static size_t
udp_pkt(uint8_t *p, unsigned i)
{
	size_t n = 20 + 8 + 6;

	memset(p, 0, n);
	p[0] = 0x45;
	p[3] = (uint8_t)n;
	p[8] = 64;
	p[9] = 17;
	memcpy(p + 12, (uint8_t[]){ 10, 99, 1, 1 }, 4);
	memcpy(p + 16, (uint8_t[]){ 10, 99, 1, 2 }, 4);
	p[20] = 5000 >> 8;
	p[21] = 5000 & 0xff;
	p[22] = 7500 >> 8;
	p[23] = 7500 & 0xff;
	p[25] = 8 + 6;
	snprintf((char *)p + 28, 7, "pkt%03u", i);
	return n;
}

/* count datagrams "pktNNN" on fd, checking their order from first */
static unsigned
read_in_order(int fd, unsigned first)
{
	char buf[64], want[8];
	unsigned i = first;
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		snprintf(want, sizeof(want), "pkt%03u", i % 1000);
		if (n != 6 || memcmp(buf, want, 6) != 0)
			fail_msg("datagram %u: %zd bytes, not %s", i, n, want);
		i++;
	}
	assert_true(n == -1 && errno == EAGAIN);
	return i - first;
}

/* An injection sends what it was asked for, in order, at least one,
 * and leaves the rest on the list. */
static void
test_inject_slices(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
	    .sin_port = htons(7500) };
	struct replay_list l;
	struct replay_out o;
	uint8_t pkt[64];
	char err[256] = "";
	unsigned i;
	int fd;

	(void)state;
	if (!have_netns)
		skip();
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	inet_pton(AF_INET, "10.99.1.2", &a.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	replay_list_init(&l, 100, 1 << 20);
	for (i = 0; i < 25; i++)
		assert_int_equal(replay_list_add(&l, pkt, udp_pkt(pkt, i)), 0);
	assert_int_equal(replay_out_open(&o, "/proc/thread-self/ns/net", "h0",
	    err, sizeof(err)), 0);
	assert_int_equal(replay_out_send(&o, &l, 10, err, sizeof(err)), 10);
	assert_int_equal(l.npkts, 15);
	assert_int_equal(l.bytes, 15 * 34);
	/* none asked for is one */
	assert_int_equal(replay_out_send(&o, &l, 0, err, sizeof(err)), 1);
	assert_int_equal(l.npkts, 14);
	assert_int_equal(replay_out_send(&o, &l, (size_t)-1, err,
	    sizeof(err)), 14);
	replay_out_close(&o);
	assert_int_equal(l.npkts, 0);
	assert_null(l.head);
	assert_int_equal(l.injected, 25);
	assert_int_equal(l.inject_failed, 0);
	assert_string_equal(err, "");
	/* every one arrived, in order; the list takes packets again */
	assert_int_equal(read_in_order(fd, 0), 25);
	assert_int_equal(replay_list_add(&l, pkt, udp_pkt(pkt, 25)), 0);
	assert_ptr_equal(l.tail, &l.head->next);
	replay_list_free(&l);
	close(fd);
}

/*
 * A rollback's give-back: the first slice at once, the rest one slice
 * per turn of the loop, every packet in order, the caller's list left
 * empty with its counters; giveback_finish_all() sends what is left at
 * once.  A slice of 0 ms sends one batch.
 */
static void
test_giveback_slices(void **state)
{
	const unsigned total = 3 * REPLAY_INJECT_BATCH + 8;
	struct sockaddr_in a = { .sin_family = AF_INET,
	    .sin_port = htons(7500) };
	struct event_base *base;
	struct replay_list l;
	uint8_t pkt[64];
	unsigned i, turns = 0, got;
	int fd, rcvbuf = 1 << 20;

	(void)state;
	if (!have_netns)
		skip();
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
	    sizeof(rcvbuf));
	inet_pton(AF_INET, "10.99.1.2", &a.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_non_null(base = event_base_new());
	replay_list_init(&l, 1000, 1 << 20);
	for (i = 0; i < total; i++)
		assert_int_equal(replay_list_add(&l, pkt, udp_pkt(pkt, i)), 0);
	giveback_start(base, "t1", "/proc/thread-self/ns/net", "h0", &l, 0);
	/* the list is the give-back's now; its counters stay */
	assert_null(l.head);
	assert_ptr_equal(l.tail, &l.head);
	assert_int_equal(l.npkts, 0);
	assert_int_equal(l.kept, total);
	assert_int_equal(giveback_pending(), total - REPLAY_INJECT_BATCH);
	got = read_in_order(fd, 0);
	assert_int_equal(got, REPLAY_INJECT_BATCH);
	while (giveback_pending() > 0 && turns < 100) {
		assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
		turns++;
	}
	assert_int_equal(turns, 3);	/* 64, 64, then 8 */
	got += read_in_order(fd, got);
	assert_int_equal(got, total);
	/* nothing more is scheduled */
	assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 1);

	/* finished at once: a stopping migrd drops nothing */
	for (i = 0; i < 100; i++)
		assert_int_equal(replay_list_add(&l, pkt, udp_pkt(pkt, i)), 0);
	giveback_start(base, "t2", "/proc/thread-self/ns/net", "h0", &l, 0);
	assert_int_equal(giveback_pending(), 100 - REPLAY_INJECT_BATCH);
	giveback_finish_all();
	assert_int_equal(giveback_pending(), 0);
	assert_int_equal(read_in_order(fd, 0), 100);
	assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 1);

	/* a namespace that is gone: the packets are dropped, counted */
	for (i = 0; i < 5; i++)
		assert_int_equal(replay_list_add(&l, pkt, udp_pkt(pkt, i)), 0);
	giveback_start(base, "t3", "/proc/thread-self/ns/net", "nosuch0", &l,
	    0);
	assert_int_equal(giveback_pending(), 0);
	assert_int_equal(read_in_order(fd, 0), 0);
	replay_list_free(&l);
	event_base_free(base);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_accepts),
		cmocka_unit_test(test_check_refuses),
		cmocka_unit_test(test_checksums),
		cmocka_unit_test(test_list_bounds),
		cmocka_unit_test(test_read_batch),
		cmocka_unit_test(test_inject_slices),
		cmocka_unit_test(test_giveback_slices),
	};

	if (unshare(CLONE_NEWNET) == 0 && system("ip link set lo up && "
	    "ip link add eth0 type veth peer name h0 && "
	    "ip addr add 10.99.1.2/24 dev eth0 && ip link set h0 up && "
	    "ip link set eth0 up") == 0)
		have_netns = 1;
	else
		fprintf(stderr, "# no private network namespace with a veth "
		    "pair (not root?): injection skipped\n");
	return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
