/* SPDX-License-Identifier: ISC */
/*
 * TCP_INFO with the kernel's own struct tcp_info (linux/tcp.h): the C
 * library's copy stops before the segment counters.  Apart from the rest
 * of the engine, which uses netinet/tcp.h, as the two do not mix.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/tcp.h>

#include "sk_priv.h"

int
sk_tinfo(int fd, struct sk_tinfo *out)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	memset(out, 0, sizeof(*out));
	if (getsockopt(fd, 6 /* IPPROTO_TCP */, TCP_INFO, &ti, &len) < 0)
		return -1;
	out->state = ti.tcpi_state;
	out->options = ti.tcpi_options;
	out->snd_wscale = ti.tcpi_snd_wscale;
	out->rcv_wscale = ti.tcpi_rcv_wscale;
	out->unacked = ti.tcpi_unacked;
	out->sacked = ti.tcpi_sacked;
	out->snd_mss = ti.tcpi_snd_mss;
	/* a kernel older than 4.2 gives a shorter struct: no counters */
	if (len >= offsetof(struct tcp_info, tcpi_segs_out) +
	    sizeof(ti.tcpi_segs_out)) {
		out->segs_in = ti.tcpi_segs_in;
		out->segs_out = ti.tcpi_segs_out;
	}
	return 0;
}
