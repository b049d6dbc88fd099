/* SPDX-License-Identifier: ISC */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nftables/libnftables.h>

#include "addrport.h"
#include "errbuf.h"
#include "lowfd.h"
#include "netns.h"
#include "nftbatch.h"
#include "nslock.h"
#include "replay.h"
#include "sockdiag.h"

#define LOCK_INET \
	"add table inet " NSLOCK_TABLE "\n" \
	"add chain inet " NSLOCK_TABLE " in " \
	"{ type filter hook input priority -400; policy drop; }\n" \
	"add chain inet " NSLOCK_TABLE " out " \
	"{ type filter hook output priority -400; policy drop; }\n" \
	"add chain inet " NSLOCK_TABLE " nd_in\n" \
	"add chain inet " NSLOCK_TABLE " nd_out\n" \
	"add rule inet " NSLOCK_TABLE " in iif lo accept\n" \
	"add rule inet " NSLOCK_TABLE " out oif lo accept\n" \
	"add rule inet " NSLOCK_TABLE " in jump nd_in\n" \
	"add rule inet " NSLOCK_TABLE " out jump nd_out\n"
/* ARP is a family of its own: a namespace that answers an ARP request
 * teaches the LAN's switches where its MAC is */
#define LOCK_ARP \
	"add table arp " NSLOCK_TABLE "\n" \
	"add chain arp " NSLOCK_TABLE " in " \
	"{ type filter hook input priority -400; policy drop; }\n" \
	"add chain arp " NSLOCK_TABLE " out " \
	"{ type filter hook output priority -400; policy drop; }\n"
/*
 * A source still owns its addresses until COMMIT: it answers who asks
 * for them (an ARP request, a neighbour solicitation), and nothing
 * else.  Silent, a long freeze (tens of MiB queued: 30 s in the TCG
 * lab) outlasts the LAN's neighbour entries: once the kernel of a
 * client or router gives up on the address, a connect() under way fails
 * with "No route to host" instead of waiting for the move.  The answers
 * are marked with SOCCR_MARK (0xC114, criu/soccr.h), the one mark the
 * lock CRIU's dump adds in checkpoint mode lets through.  nslock_mute()
 * empties these chains before COMMIT, so the old port is never taught
 * again once the destination may announce the new one.
 */
#define SOCCR_MARK	"0xc114"
#define ANSWER_RULES \
	"add rule inet " NSLOCK_TABLE " nd_in icmpv6 type nd-neighbor-solicit " \
	"meta mark set " SOCCR_MARK " accept\n" \
	"add rule inet " NSLOCK_TABLE " nd_out icmpv6 type nd-neighbor-advert " \
	"meta mark set " SOCCR_MARK " accept\n" \
	"add rule arp " NSLOCK_TABLE " in arp operation request accept\n" \
	"add rule arp " NSLOCK_TABLE " out arp operation reply accept\n"

static const char lock_rules[] = LOCK_INET LOCK_ARP;

static const char lock_rules_source[] = LOCK_INET LOCK_ARP ANSWER_RULES;

/* The replaying lock: what comes in goes to the queue migrd reads
 * (replay.h), with no "bypass": unread, it is dropped (fail closed). */
#define STR_(x)	#x
#define STR(x)	STR_(x)
static const char lock_rules_replay[] = LOCK_INET
	"add rule inet " NSLOCK_TABLE " in queue num " STR(REPLAY_QUEUE_NUM) "\n"
	LOCK_ARP ANSWER_RULES;

static const char mute_rules[] =
	"flush chain inet " NSLOCK_TABLE " nd_in\n"
	"flush chain inet " NSLOCK_TABLE " nd_out\n"
	"flush chain arp " NSLOCK_TABLE " in\n"
	"flush chain arp " NSLOCK_TABLE " out\n";

/* Before the freeze: no new connection starts, so the handshakes under
 * way finish into an accept queue, where the dump finds them.  A SYN it
 * drops is sent again by its client, to whichever host is live then. */
static const char gate_rules[] =
	"add table inet " NSLOCK_GATE "\n"
	"add chain inet " NSLOCK_GATE " in "
	"{ type filter hook input priority -410; policy accept; }\n"
	"add rule inet " NSLOCK_GATE " in tcp flags & (syn | ack) == syn "
	"drop\n";

/* Run an nft script inside ns; the error text nft gives goes to err. */
static int
nft_in_ns(const char *ns, const char *script, char *out, size_t outlen,
    char *err, size_t errlen)
{
	struct nft_ctx *nft;
	int saved, rc = -1;

	saved = netns_enter(ns, err, errlen);
	if (saved < 0)
		return -1;
	/* the context's netlink socket must be made inside the namespace,
	 * and below FD_SETSIZE: libnftables select()s on it (lowfd.h) */
	lowfd_release();
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (nft == NULL) {
		errbuf(err, errlen, "nft_ctx_new failed");
		goto out_retake;
	}
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	if (nft_run_cmd_from_buffer(nft, script) != 0) {
		const char *e = nft_ctx_get_error_buffer(nft);
		size_t n = e ? strcspn(e, "\n") : 0;

		errbuf(err, errlen, "%s: nft: %.*s", ns, n ? (int)n : 6,
		    n ? e : "failed");
	} else {
		if (out != NULL)
			snprintf(out, outlen, "%s", nft_ctx_get_output_buffer(nft));
		rc = 0;
	}
	nft_ctx_free(nft);
out_retake:
	lowfd_retake();
	if (netns_leave(saved, rc == 0 ? err : NULL, errlen) < 0)
		rc = -1;
	return rc;
}

int
nslock_take(const char *ns, char *err, size_t errlen)
{
	/* one transaction: the table appears whole or not at all */
	return nft_in_ns(ns, lock_rules, NULL, 0, err, errlen);
}

int
nslock_take_source(const char *ns, int replay, char *err, size_t errlen)
{
	return nft_in_ns(ns, replay ? lock_rules_replay : lock_rules_source,
	    NULL, 0, err, errlen);
}

/* One connection's two rules (in: from its peer; out: to it). */
static int
pass_rules(const struct sockdiag_sock *s, char *buf, size_t len)
{
	char l[64], r[64];
	int lp = sa_format(&s->local, l, sizeof(l));
	int rp = sa_format(&s->remote, r, sizeof(r));
	const char *fam = strchr(l, ':') != NULL ? "ip6" : "ip";
	int n;

	if (lp < 0 || rp < 0)
		return -1;
	n = snprintf(buf, len,
	    "insert rule inet " NSLOCK_TABLE " in %s saddr %s %s daddr %s "
	    "tcp sport %d tcp dport %d accept\n"
	    "insert rule inet " NSLOCK_TABLE " out %s saddr %s %s daddr %s "
	    "tcp sport %d tcp dport %d accept\n",
	    fam, r, fam, l, rp, lp, fam, l, fam, r, lp, rp);
	return n > 0 && (size_t)n < len ? n : -1;
}

int
nslock_pass(const char *ns, const struct sockdiag_sock *s, size_t n,
    char *err, size_t errlen)
{
	size_t i, off = 0, cap;
	char *script;
	int k, rc;

	if (n == 0)
		return 0;
	if (n > NSLOCK_PASS_MAX) {
		errbuf(err, errlen, "%zu connections to let through the lock, "
		    "at most %d", n, NSLOCK_PASS_MAX);
		return -1;
	}
	cap = n * 512;
	if ((script = malloc(cap)) == NULL) {
		errbuf_errno(err, errlen, "malloc");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if ((k = pass_rules(&s[i], script + off, cap - off)) < 0) {
			errbuf(err, errlen, "a connection of %s has no address "
			    "nft can take", ns);
			free(script);
			return -1;
		}
		off += (size_t)k;
	}
	rc = nft_in_ns(ns, script, NULL, 0, err, errlen);
	free(script);
	return rc;
}

int
nslock_mute(const char *ns, char *err, size_t errlen)
{
	return nft_in_ns(ns, mute_rules, NULL, 0, err, errlen);
}

int
nslock_gate(const char *ns, char *err, size_t errlen)
{
	return nft_in_ns(ns, gate_rules, NULL, 0, err, errlen);
}

/*
 * Our own tables, each gone whether it was there or not, in one
 * transaction and without listing first.  A destination lifts its lock
 * inside the downtime, so this goes straight to netlink (nftbatch.h): a
 * libnftables transaction costs a context and a ruleset fetch, 21 to
 * 132 ms in the TCG lab under ASan, the batch 7 to 15 ms.
 */
static const struct nftbatch_table unlock_tables[] = {
	{ NFTBATCH_INET, NSLOCK_TABLE },
	{ NFTBATCH_ARP, NSLOCK_TABLE },
	{ NFTBATCH_INET, NSLOCK_GATE },
};

int
nslock_unlock(const char *ns, char *err, size_t errlen)
{
	return nftbatch_delete(ns, unlock_tables, sizeof(unlock_tables) /
	    sizeof(unlock_tables[0]), err, errlen);
}

/*
 * Drop the lock and the gate, whichever is there, in one transaction,
 * with the lock CRIU's dump leaves (checkpoint mode: "inet CRIU-PID",
 * which drops everything but its own marked packets).
 */
int
nslock_release(const char *ns, char *err, size_t errlen)
{
	char out[4096] = "", script[1024] = "", *p, *end;
	size_t n, off = 0;

	if (nft_in_ns(ns, "list tables\n", out, sizeof(out), err, errlen) < 0)
		return -1;
	if (strstr(out, "table inet " NSLOCK_TABLE "\n") != NULL)
		strcat(script, "delete table inet " NSLOCK_TABLE "\n");
	if (strstr(out, "table arp " NSLOCK_TABLE "\n") != NULL)
		strcat(script, "delete table arp " NSLOCK_TABLE "\n");
	if (strstr(out, "table inet " NSLOCK_GATE "\n") != NULL)
		strcat(script, "delete table inet " NSLOCK_GATE "\n");
	off = strlen(script);
	for (p = out; (p = strstr(p, "table inet CRIU-")) != NULL; p = end) {
		end = p + strlen("table inet CRIU-");
		n = strspn(end, "0123456789");
		if (n == 0 || n > 10 || end[n] != '\n')
			continue;
		off += (size_t)snprintf(script + off, sizeof(script) - off,
		    "delete table inet CRIU-%.*s\n", (int)n, end);
		if (off >= sizeof(script) - 48)
			break;
	}
	if (script[0] == '\0')
		return 0;
	return nft_in_ns(ns, script, NULL, 0, err, errlen);
}

int
nslock_held(const char *ns, char *err, size_t errlen)
{
	char out[4096] = "";

	if (nft_in_ns(ns, "list tables inet\n", out, sizeof(out), err,
	    errlen) < 0)
		return -1;
	return strstr(out, "table inet " NSLOCK_TABLE "\n") != NULL;
}
