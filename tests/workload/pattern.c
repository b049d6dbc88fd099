/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>

#include "log.h"
#include "pattern.h"

#ifndef TCP_REPAIR_OFF_NO_WP
#define TCP_REPAIR_OFF_NO_WP	-1
#endif
#ifndef TCP_RECV_QUEUE
#define TCP_RECV_QUEUE		1
#define TCP_SEND_QUEUE		2
#endif

/* Fold an address (an IPv4-mapped IPv6 one as IPv4) and port into h. */
static uint64_t
fold_addr(uint64_t h, const struct sockaddr_storage *ss)
{
	const uint8_t *a;
	size_t len, i;
	uint16_t port;

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		a = s6->sin6_addr.s6_addr;
		len = 16;
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			a += 12;
			len = 4;
		}
		port = s6->sin6_port;
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		a = (const uint8_t *)&s4->sin_addr;
		len = 4;
		port = s4->sin_port;
	}
	for (i = 0; i < len; i++)
		h = pattern_mix(h ^ a[i]);
	return pattern_mix(h ^ ntohs(port));
}

uint64_t
pattern_key(const struct sockaddr_storage *client,
    const struct sockaddr_storage *server)
{
	return fold_addr(fold_addr(0x6d696772ULL, client), server);
}

int
pattern_seqs(int fd, uint32_t *tx_next, uint32_t *rx_next)
{
	int on = 1, off = TCP_REPAIR_OFF_NO_WP, q, inq1, inq2, tries;
	uint32_t rcv_nxt;
	socklen_t len = sizeof(uint32_t);

	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)) < 0) {
		log_warn("%s: TCP_REPAIR on", __func__);
		return -1;
	}
	q = TCP_SEND_QUEUE;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) < 0 ||
	    getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, tx_next, &len) < 0) {
		log_warn("%s: send queue sequence", __func__);
		goto out_repair_off;
	}
	q = TCP_RECV_QUEUE;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) < 0) {
		log_warn("%s: TCP_REPAIR_QUEUE", __func__);
		goto out_repair_off;
	}
	/* Segments keep arriving: rcv_nxt and the queue length must be read
	 * with no arrival in between. */
	for (tries = 0; tries < 100; tries++) {
		len = sizeof(uint32_t);
		if (ioctl(fd, SIOCINQ, &inq1) < 0 ||
		    getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &rcv_nxt, &len) < 0 ||
		    ioctl(fd, SIOCINQ, &inq2) < 0) {
			log_warn("%s: receive queue sequence", __func__);
			goto out_repair_off;
		}
		if (inq1 == inq2)
			break;
	}
	if (inq1 != inq2) {
		log_warnx("%s: receive queue never settled", __func__);
		goto out_repair_off;
	}
	*rx_next = rcv_nxt - (uint32_t)inq1;
	/* A FIN received holds a sequence number of its own: rcv_nxt is past
	 * it, and SIOCINQ does not count it. */
	{
		struct tcp_info ti;
		socklen_t tlen = sizeof(ti);

		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen) == 0 &&
		    (ti.tcpi_state == TCP_CLOSE_WAIT ||
		    ti.tcpi_state == TCP_LAST_ACK ||
		    ti.tcpi_state == TCP_CLOSING ||
		    ti.tcpi_state == TCP_TIME_WAIT))
			*rx_next -= 1;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off)) < 0) {
		log_warn("%s: TCP_REPAIR off", __func__);
		return -1;
	}
	return 0;

out_repair_off:
	setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off));
	return -1;
}
