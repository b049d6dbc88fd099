/* SPDX-License-Identifier: ISC */
/*
 * Send and receive buffer sizes.  The record carries them as the kernel
 * keeps them (SO_SNDBUF and SO_RCVBUF read back twice what a program
 * asked for, or what autotuning grew them to) with the SO_BUF_LOCK bits
 * that say whether a program fixed them.  The destination sets them with
 * the *FORCE variants, so its net.core.[rw]mem_max cannot clamp them, and
 * puts the lock bits back, so autotuning goes on where it went on.
 *
 * While the queues are filled the buffers are forced larger than what
 * the queues hold, so the fill never waits for room (a fresh socket's
 * buffers hold about 64 KiB, a slow reader's queues megabytes).
 */
#include <errno.h>
#include <sys/socket.h>

#include "sk_priv.h"

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK		72
#endif

int
sk_bufs_read(int fd, struct sk_bufs *b)
{
	int snd, rcv, lock;

	if (sk_getint(fd, SOL_SOCKET, SO_SNDBUF, &snd) < 0 ||
	    sk_getint(fd, SOL_SOCKET, SO_RCVBUF, &rcv) < 0) {
		sk_log_errno("%s: SO_SNDBUF/SO_RCVBUF", __func__);
		return -1;
	}
	if (sk_getint(fd, SOL_SOCKET, SO_BUF_LOCK, &lock) < 0) {
		sk_log_errno("%s: SO_BUF_LOCK", __func__);
		return -1;
	}
	b->snd = snd > 0 ? (uint32_t)snd : 0;
	b->rcv = rcv > 0 ? (uint32_t)rcv : 0;
	b->lock = (uint8_t)(lock & 3);
	return 0;
}

/* SO_*BUFFORCE takes half of the kernel value it sets. */
static int
force(int fd, int opt, const char *name, uint32_t kernel)
{
	uint32_t half = kernel / 2;

	if (half > INT32_MAX / 2)
		half = INT32_MAX / 2;
	if (sk_setint(fd, SOL_SOCKET, opt, (int)half) < 0) {
		sk_log_errno("sk_bufs: %s %u", name, kernel);
		return -1;
	}
	return 0;
}

/* Room for len bytes of queue with the kernel's per-buffer overhead. */
uint32_t
sk_bufs_room(uint64_t len)
{
	uint64_t want = 2 * len + 256 * 1024;

	return want > INT32_MAX ? INT32_MAX : (uint32_t)want;
}

int
sk_bufs_force(int fd, uint32_t snd, uint32_t rcv)
{
	if (snd > 0 && force(fd, SO_SNDBUFFORCE, "SO_SNDBUFFORCE", snd) < 0)
		return -1;
	if (rcv > 0 && force(fd, SO_RCVBUFFORCE, "SO_RCVBUFFORCE", rcv) < 0)
		return -1;
	return 0;
}

int
sk_bufs_set(int fd, const struct sk_bufs *b)
{
	if (sk_bufs_force(fd, b->snd, b->rcv) < 0)
		return -1;
	/* forcing locks both; unlock what autotuning may grow */
	if (sk_setint(fd, SOL_SOCKET, SO_BUF_LOCK, b->lock) < 0) {
		sk_log_errno("sk_bufs: SO_BUF_LOCK %u", b->lock);
		return -1;
	}
	return 0;
}
