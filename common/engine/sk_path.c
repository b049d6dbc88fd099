/* SPDX-License-Identifier: ISC */
/*
 * What a connection learnt about its path (RTT estimator, congestion
 * window, MSS, the peer's last timestamp, ECN), through TCP_REPAIR_PATH:
 * an option of migr's kernel series (kernel/patches/0002-0004, see
 * docs/kernel.md), not of Linux 6.1.
 *
 * It is an improvement, never a condition: a kernel without the option
 * (ENOPROTOOPT), or one that refuses the values for its own path
 * (EINVAL: a smaller MTU, say), leaves the socket as connect() made it,
 * and the connection still moves exactly.  The MSS is retried as "from
 * the path" (0) first, since it is the one field the destination's own
 * route may not allow.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_priv.h"

#ifndef TCP_REPAIR_PATH
#define TCP_REPAIR_PATH	4200	/* kernel/patches/0002 */

/* include/uapi/linux/tcp.h of the series; fields only ever appended */
struct tcp_repair_path {
	uint32_t	srtt_us;
	uint32_t	mdev_us;
	uint32_t	rttvar_us;
	uint32_t	snd_cwnd;
	uint32_t	snd_ssthresh;
	uint32_t	snd_mss;
	uint32_t	ts_recent;
	uint32_t	ts_recent_age;
	uint32_t	ecn_flags;
};
#endif

static int		path_known = -1;	/* -1: not probed yet */
static uint64_t		path_set, path_failed;

bool
sk_path_supported(void)
{
	struct tcp_repair_path p;
	socklen_t len = sizeof(p);
	int fd;

	if (path_known != -1)
		return path_known;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return false;	/* asked again next time */
	/* a fresh socket reads as one: no RTT, ssthresh infinite, and a
	 * kernel whose option of that number is another does not */
	if (sk_setint(fd, IPPROTO_TCP, TCP_REPAIR, 1) == 0) {
		memset(&p, 0, sizeof(p));
		path_known = getsockopt(fd, IPPROTO_TCP, TCP_REPAIR_PATH, &p,
		    &len) == 0 && len == sizeof(p) && p.srtt_us == 0 &&
		    p.snd_cwnd > 0 && p.snd_ssthresh == 0x7fffffff;
		if (!path_known)
			sk_log(LOG_INFO, "this kernel has no TCP_REPAIR_PATH: "
			    "moved connections start without their RTT and "
			    "congestion window");
	}
	close(fd);
	return path_known == 1;
}

void
sk_path_counts(uint64_t *set, uint64_t *failed)
{
	*set = path_set;
	*failed = path_failed;
}

/* The path of a socket in repair mode: 1 saved, 0 none (no option). */
int
sk_path_save(int fd, struct sk_tcp_path *out)
{
	struct tcp_repair_path p;
	socklen_t len = sizeof(p);

	if (!sk_path_supported())
		return 0;
	memset(&p, 0, sizeof(p));
	if (getsockopt(fd, IPPROTO_TCP, TCP_REPAIR_PATH, &p, &len) < 0) {
		sk_log_errno("sk_tcp_save: TCP_REPAIR_PATH");
		return -1;
	}
	out->srtt_us = p.srtt_us;
	out->mdev_us = p.mdev_us;
	out->rttvar_us = p.rttvar_us;
	out->cwnd = p.snd_cwnd;
	out->ssthresh = p.snd_ssthresh;
	out->mss = p.snd_mss;
	out->ts_recent = p.ts_recent;
	out->ts_age = p.ts_recent_age;
	out->ecn = p.ecn_flags;
	return 1;
}

/*
 * Give a restored socket (repair mode, ESTABLISHED, options restored)
 * its path.  Never fails the restore: 0 set, 1 left as connect() made it.
 */
int
sk_path_restore(int fd, const struct sk_tcp_path *in)
{
	struct tcp_repair_path p;

	if (!sk_path_supported()) {
		path_failed++;
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.srtt_us = in->srtt_us;
	p.mdev_us = in->mdev_us;
	p.rttvar_us = in->rttvar_us;
	p.snd_cwnd = in->cwnd;
	p.snd_ssthresh = in->ssthresh;
	p.snd_mss = in->mss;
	p.ts_recent = in->ts_recent;
	p.ts_recent_age = in->ts_age;
	p.ecn_flags = in->ecn;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_PATH, &p, sizeof(p)) == 0) {
		path_set++;
		return 0;
	}
	if (errno == EINVAL && p.snd_mss != 0) {
		p.snd_mss = 0;
		if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_PATH, &p,
		    sizeof(p)) == 0) {
			path_set++;
			return 0;
		}
	}
	sk_log_errno("sk_tcp_restore: TCP_REPAIR_PATH (srtt %u us, cwnd %u, "
	    "mss %u) left out", in->srtt_us, in->cwnd, in->mss);
	path_failed++;
	return 1;
}
