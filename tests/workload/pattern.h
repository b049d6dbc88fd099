/* SPDX-License-Identifier: ISC */
/*
 * The byte pattern of the test workload (streamd, streamc).
 *
 * Every byte of a test connection is a function of the connection's
 * 4-tuple, its direction, and the byte's absolute TCP sequence number.
 * Neither end keeps any state that a restart could lose: a workload
 * restarted on another host asks the kernel for its sequence numbers
 * (pattern_seqs) and carries on.  So any byte that migr loses,
 * duplicates, reorders or corrupts shows up as a mismatch at the
 * receiver, and no byte sitting in a frozen task's memory can go missing.
 */
#ifndef MIGR_WORKLOAD_PATTERN_H
#define MIGR_WORKLOAD_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum { DIR_C2S = 0, DIR_S2C = 1 };

static inline uint64_t
pattern_mix(uint64_t x)
{
	/* splitmix64 finaliser */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint8_t
pattern_byte(uint64_t key, int dir, uint32_t seq)
{
	uint64_t w = pattern_mix(key ^ ((uint64_t)dir << 62) ^ (seq >> 3));

	return (uint8_t)(w >> ((seq & 7) * 8));
}

static inline void
pattern_fill(uint64_t key, int dir, uint32_t seq, uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pattern_byte(key, dir, seq + (uint32_t)i);
}

/* Index of the first byte that differs from the pattern, or len. */
static inline size_t
pattern_check(uint64_t key, int dir, uint32_t seq, const uint8_t *buf,
    size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern_byte(key, dir, seq + (uint32_t)i))
			return i;
	return len;
}

/* Key of a connection from the client's point of view. */
uint64_t pattern_key(const struct sockaddr_storage *client,
    const struct sockaddr_storage *server);

/*
 * The sequence number of the next byte this socket will send and of the
 * next byte it will read.  Briefly enters repair mode (needs
 * CAP_NET_ADMIN) and leaves it without a window probe.  0 or -1.
 */
int pattern_seqs(int fd, uint32_t *tx_next, uint32_t *rx_next);

#endif
