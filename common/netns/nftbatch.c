/* SPDX-License-Identifier: ISC */
/*
 * nf_tables tables deleted by netlink, without libnftables (nftbatch.h).
 *
 * The batch carries, for each table, a NEWTABLE without NLM_F_EXCL
 * (nothing happens to one that exists; one that does not is made) and
 * then its DELTABLE, so that a missing table is not an error (6.1 has
 * no NFT_MSG_DESTROYTABLE).  The kernel applies a batch whole or not at
 * all, and acknowledges each message.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "errbuf.h"
#include "netns.h"
#include "nftbatch.h"

/* a batch of at most MNL_SOCKET_BUFFER_SIZE, in a buffer twice that
 * (libmnl writes a message before it finds it past the limit) */
#define NFTBATCH_BUF	(2 * MNL_SOCKET_BUFFER_SIZE)
/* longer than the kernel takes (255), so that it is the kernel that
 * refuses, and short enough for one message to fit what is left */
#define NFTBATCH_NAME_MAX	512
#define NFTBATCH_WAIT_S	5

static void
put_batch(char *buf, uint16_t type, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(NFNL_SUBSYS_NFTABLES);
}

static void
put_table(char *buf, uint16_t msg, uint16_t flags, enum nftbatch_family f,
    const char *name, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = f == NFTBATCH_ARP ? NFPROTO_ARP : NFPROTO_INET;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, name);
}

/* The answers to the batch: one ACK per message, or the first error. */
static int
read_acks(struct mnl_socket *nl, const char *ns, unsigned want,
    uint32_t seq0, char *err, size_t errlen)
{
	char buf[NFTBATCH_BUF];
	const struct nlmsghdr *nlh;
	const struct nlmsgerr *e;
	unsigned got = 0;
	ssize_t n;
	int len;

	while (got < want) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n == -1) {
			if (errno == EINTR)
				continue;
			errbuf(err, errlen, "%s: nf_tables: recv: %s", ns,
			    strerror(errno));
			return -1;
		}
		len = (int)n;
		for (nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
		    nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_seq < seq0 ||
			    nlh->nlmsg_seq >= seq0 + want + 2)
				continue;	/* not ours */
			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			e = mnl_nlmsg_get_payload(nlh);
			if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
				errbuf(err, errlen, "%s: nf_tables: short "
				    "answer", ns);
				return -1;
			}
			if (e->error != 0) {
				errbuf(err, errlen, "%s: nf_tables: %s", ns,
				    strerror(-e->error));
				return -1;
			}
			got++;
		}
	}
	return 0;
}

int
nftbatch_delete(const char *ns, const struct nftbatch_table *t, size_t nt,
    char *err, size_t errlen)
{
	char buf[NFTBATCH_BUF];
	struct mnl_nlmsg_batch *b;
	struct mnl_socket *nl = NULL;
	uint32_t seq0 = (uint32_t)time(NULL), seq = seq0;
	struct timeval tmo = { NFTBATCH_WAIT_S, 0 };
	unsigned nmsg = 0;
	int saved, full = 0, rc = -1;
	size_t i;

	if (nt == 0)
		return 0;
	if (nt > 16) {
		errbuf(err, errlen, "nf_tables: %zu tables in one batch", nt);
		return -1;
	}
	for (i = 0; i < nt; i++)
		if (strlen(t[i].name) > NFTBATCH_NAME_MAX) {
			errbuf(err, errlen, "nf_tables: a table name of %zu "
			    "characters", strlen(t[i].name));
			return -1;
		}
	if ((saved = netns_enter(ns, err, errlen)) < 0)
		return -1;
	/* the socket belongs to the namespace it was made in */
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (nl == NULL) {
		errbuf(err, errlen, "%s: netfilter netlink socket: %s", ns,
		    strerror(errno));
		goto out;
	}
	/* the kernel answers at once; a wait bounded all the same */
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1 ||
	    setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tmo,
	    sizeof(tmo)) == -1) {
		errbuf(err, errlen, "%s: netlink socket set-up: %s", ns,
		    strerror(errno));
		goto out;
	}
	if ((b = mnl_nlmsg_batch_start(buf, MNL_SOCKET_BUFFER_SIZE)) == NULL) {
		errbuf(err, errlen, "nf_tables: no batch");
		goto out;
	}
	put_batch(mnl_nlmsg_batch_current(b), NFNL_MSG_BATCH_BEGIN, seq++);
	mnl_nlmsg_batch_next(b);
	for (i = 0; i < nt; i++) {
		put_table(mnl_nlmsg_batch_current(b), NFT_MSG_NEWTABLE,
		    NLM_F_CREATE, t[i].family, t[i].name, seq++);
		full = !mnl_nlmsg_batch_next(b);
		put_table(mnl_nlmsg_batch_current(b), NFT_MSG_DELTABLE, 0,
		    t[i].family, t[i].name, seq++);
		full |= !mnl_nlmsg_batch_next(b);
		nmsg += 2;
	}
	put_batch(mnl_nlmsg_batch_current(b), NFNL_MSG_BATCH_END, seq++);
	full |= !mnl_nlmsg_batch_next(b);
	if (full) {
		errbuf(err, errlen, "nf_tables: the batch is larger than %ld "
		    "bytes", (long)MNL_SOCKET_BUFFER_SIZE);
		mnl_nlmsg_batch_stop(b);
		goto out;
	}
	if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b),
	    mnl_nlmsg_batch_size(b)) == -1) {
		errbuf(err, errlen, "%s: nf_tables: send: %s", ns,
		    strerror(errno));
		mnl_nlmsg_batch_stop(b);
		goto out;
	}
	mnl_nlmsg_batch_stop(b);
	/* the begin message is seq0; the tables' messages follow it */
	if (read_acks(nl, ns, nmsg, seq0, err, errlen) == 0)
		rc = 0;
out:
	if (nl != NULL)
		mnl_socket_close(nl);
	if (netns_leave(saved, rc == 0 ? err : NULL, errlen) < 0)
		rc = -1;
	return rc;
}
