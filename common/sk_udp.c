/*
 * UDP: bound or connected sockets with their options.  Unread
 * datagrams are not carried: their source addresses and boundaries
 * cannot be put back into a receive queue, and reading them would
 * lose them on rollback.  The size of the first one (SIOCINQ) is
 * reported in udp.rcvq_dropped so the loss is visible.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sk_priv.h"

int
sk_udp_save(struct sk_handle *h, struct sk_state *st)
{
	int v = 0;

	if (ioctl(h->fd, SIOCINQ, &v) < 0) {
		sk_log_errno("%s: SIOCINQ", __func__);
		return -1;
	}
	st->udp.rcvq_dropped = v > 0 ? (uint32_t)v : 0;
	if (v > 0)
		sk_log(LOG_INFO, "%s: unread datagram of %d bytes not moved",
		    __func__, v);
	return 0;
}

int
sk_udp_restore(struct sk_handle *h, const struct sk_state *st)
{
	socklen_t alen = st->family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	if (sk_opts_apply(h->fd, st->family, st->proto, &st->opts) < 0)
		return -1;
	if ((st->state == SK_ST_BOUND || st->state == SK_ST_ESTABLISHED) &&
	    sk_addr_port(&st->local) != 0 &&
	    bind(h->fd, (const struct sockaddr *)&st->local, alen) < 0) {
		sk_log_errno("%s: bind", __func__);
		return -1;
	}
	if (st->state == SK_ST_ESTABLISHED &&
	    connect(h->fd, (const struct sockaddr *)&st->remote, alen) < 0) {
		sk_log_errno("%s: connect", __func__);
		return -1;
	}
	return 0;
}
