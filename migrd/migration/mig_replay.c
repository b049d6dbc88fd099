/* SPDX-License-Identifier: ISC */
/*
 * The replaying lock of one migration (migrd.conf "lock replay").
 *
 * Source: the queue's reader is bound before the lock goes in, and from
 * then on every packet that reaches the locked namespace is kept
 * (replay.h), within lock-queue-bytes and lock-queue-packets, and sent
 * on to the destination in PACKETS messages as it comes, in order (the
 * destination prepared before the freeze; what is left goes right
 * before COMMIT, so COMMIT waits for no burst).  The destination injects
 * them once its sockets have left repair, so the peers' data and
 * acknowledgements meet live sockets at once instead of waiting for
 * the peers' retransmission timers.  What reaches the source after
 * COMMIT (until the LAN has learnt the namespace's new port) follows the
 * same way until the source deletes the namespace; the destination
 * injects it for REPLAY_LATE_MS after going live (a peer's window lets
 * it send new data without an answer: lost, it would wait for a timer).
 * On a rollback every packet kept goes back to the sockets here, the
 * same way and in slices too (giveback.h), whether it was sent on or
 * not.
 *
 * Destination: a PACKETS message is the peer's input like any other: a
 * packet must be a whole IPv4 or IPv6 packet to one of the addresses of
 * the namespace being built, within this host's own bounds; what does
 * not fit is counted and dropped (its sender retransmits it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "giveback.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "peer.h"
#include "sk_b64.h"

static void	late_add(struct mig *, size_t pkts_left, size_t bytes_left);

/* the JSON one PACKETS message may hold: max-message, less room for
 * the rest of the message */
static size_t
batch_max(void)
{
	return migrd.conf.max_message - 1024;
}

static void	send_kept(struct mig *);

static void
rq_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;
	char err[256];

	(void)what;
	if (replay_read(fd, &m->rq, err, sizeof(err)) < 0) {
		/* unread, they are dropped: the lock stays closed */
		log_warnx("migration %s: %s: packets are dropped from now on",
		    m->id, err);
		event_del(m->rq_ev);
		return;
	}
	/* on to the destination as they come: the destination prepared
	 * before the freeze, and what is sent now does not hold up COMMIT
	 * later (a rollback gives back every packet kept, sent or not) */
	send_kept(m);
}

void
replay_src_open(struct mig *m)
{
	char err[256];

	m->rq_fd = -1;
	replay_list_init(&m->rq, migrd.conf.lock_queue_packets,
	    migrd.conf.lock_queue_bytes);
	if (migrd.conf.lock_mode != CONF_LOCK_REPLAY)
		return;
	m->rq_fd = replay_open(m->ns, migrd.conf.lock_queue_packets, err,
	    sizeof(err));
	if (m->rq_fd < 0) {
		log_warnx("migration %s: the lock of %s drops what arrives "
		    "(no queue: %s)", m->id, m->ns, err);
		return;
	}
	m->rq_ev = event_new(migrd.base, m->rq_fd, EV_READ | EV_PERSIST,
	    rq_read_cb, m);
	if (m->rq_ev == NULL || event_add(m->rq_ev, NULL) < 0) {
		log_warnx("migration %s: the lock of %s drops what arrives "
		    "(cannot watch its queue)", m->id, m->ns);
		replay_close(m);
		return;
	}
	m->rq_on = 1;
}

/* Read what is still waiting in the queue, without waiting. */
static void
drain(struct mig *m)
{
	char err[256];

	if (m->rq_fd >= 0 && replay_read(m->rq_fd, &m->rq, err,
	    sizeof(err)) < 0)
		log_warnx("migration %s: %s", m->id, err);
}

/* What was kept and not sent yet, to the destination, in order. */
static void
send_kept(struct mig *m)
{
	struct replay_pkt *p = m->rq_last_sent != NULL ?
	    m->rq_last_sent->next : m->rq.head;
	size_t max = batch_max(), n;
	json_t *a;

	while (p != NULL) {
		/* paced like the records: the channel's queue stays below
		 * max-queue (above it the session would close); the rest
		 * goes with the next packet that comes, or is left to its
		 * sender's retransmission */
		if (peer_output_len(m->peer) > migrd.conf.max_queue / 2)
			break;
		if ((a = json_array()) == NULL)
			break;
		for (n = 0; p != NULL; p = p->next) {
			/* base64, its quotes and a comma */
			size_t enc = sk_b64_enclen(p->len) + 3;
			char *b;

			if (n > 0 && n + enc > max)
				break;
			m->rq_last_sent = p;
			m->rq_sent++;
			if (enc > max) {
				m->rq.overflow++;	/* fits no message */
				continue;
			}
			if ((b = sk_b64_encode(p->data, p->len)) == NULL ||
			    json_array_append_new(a, json_string(b)) < 0) {
				free(b);
				m->rq.overflow++;
				continue;
			}
			free(b);
			n += enc;
		}
		if (json_array_size(a) == 0) {
			json_decref(a);
			continue;
		}
		/* the message takes a */
		if (mig_send(m, MSG_MIG_PACKETS, json_pack("{s:o,s:I}",
		    "packets", a, "overflow", (json_int_t)m->rq.overflow)) ==
		    -1) {
			log_warnx("migration %s: cannot send the packets kept "
			    "for replay", m->id);
			return;
		}
	}
}

void
replay_src_send(struct mig *m)
{
	if (m->rq_fd < 0)
		return;
	drain(m);
	send_kept(m);
}

/* On a rollback what was kept goes back to the sockets here, in slices
 * of the loop (giveback.h).  Fault "src-giveback-slow": one batch a
 * slice, however fast the host. */
void
replay_src_rollback(struct mig *m)
{
	if (m->rq_fd < 0)
		return;
	drain(m);
	giveback_start(migrd.base, m->id, m->ns, m->hostif, &m->rq,
	    mig_fault("src-giveback-slow") ? 0 : GIVEBACK_SLICE_MS);
}

int
replay_take(struct replay_list *l, const struct nsdump *nd, json_t *msg,
    size_t *refused, char *why, size_t len)
{
	static const struct sk_ifaddr none;	/* no namespace: no address */
	json_t *a = json_object_get(msg, "packets"), *v;
	struct { uint8_t *data; size_t len; } *pkts;
	size_t i, n = 0;
	char reason[160];
	int rc = -1;

	if (!json_is_array(a)) {
		snprintf(why, len, "PACKETS without a packets array");
		return -1;
	}
	/* every packet decoded before any is taken: a message refused
	 * leaves l as it was */
	if ((pkts = calloc(json_array_size(a) + 1, sizeof(*pkts))) == NULL) {
		snprintf(why, len, "PACKETS: out of memory");
		return -1;
	}
	json_array_foreach(a, i, v) {
		const char *t = json_string_value(v);

		if (t == NULL || json_string_length(v) >
		    sk_b64_enclen(REPLAY_PKT_MAX)) {
			snprintf(why, len, "PACKETS: element %zu is not a "
			    "packet", i);
			goto out;
		}
		if (sk_b64_decode(t, json_string_length(v), &pkts[n].data,
		    &pkts[n].len, reason, sizeof(reason)) < 0) {
			snprintf(why, len, "PACKETS: element %zu: %s", i,
			    reason);
			goto out;
		}
		n++;
	}
	for (i = 0; i < n; i++) {
		/* a packet for somebody else is not replayed here, but it
		 * is not worth failing the migration over either */
		if (replay_check(pkts[i].data, pkts[i].len, nd != NULL ?
		    nd->addrs : &none, nd != NULL ? nd->naddrs : 0, reason,
		    sizeof(reason)) < 0) {
			if ((*refused)++ == 0)
				snprintf(why, len, "%s", reason);
		} else {
			(void)replay_list_add(l, pkts[i].data, pkts[i].len);
		}
	}
	rc = 0;
out:
	for (i = 0; i < n; i++)
		free(pkts[i].data);
	free(pkts);
	return rc;
}

int
replay_dst_rx(struct mig *m, json_t *msg, char *why, size_t len)
{
	size_t before = m->rq_refused;

	if (m->rq.max_bytes == 0)
		replay_list_init(&m->rq, migrd.conf.lock_queue_packets,
		    migrd.conf.lock_queue_bytes);
	why[0] = '\0';
	if (replay_take(&m->rq, m->nd, msg, &m->rq_refused, why, len) < 0)
		return -1;
	/* neighbour discovery and multicast reach a locked namespace too,
	 * and are not for its sockets: said once, not warned about */
	if (before == 0 && m->rq_refused > 0)
		log_info("migration %s: a packet from %s not replayed: %s",
		    m->id, m->peer, why);
	return 0;
}

/* The largest packet a merge may make: the smallest known MTU of the
 * namespace's links but lo (nsdump's kind "lo"; a frame longer than its
 * veth's MTU would be dropped on the way in), or IPv6's minimum if none
 * is known (0: the record did not say). */
static size_t
merge_max(const struct mig *m)
{
	size_t i, mtu = 0;

	for (i = 0; m->nd != NULL && i < m->nd->nlinks; i++)
		if (strcmp(m->nd->links[i].kind, "lo") != 0 &&
		    m->nd->links[i].mtu > 0 &&
		    (mtu == 0 || m->nd->links[i].mtu < mtu))
			mtu = m->nd->links[i].mtu;
	return mtu > 0 ? mtu : 1280;
}

/* Some of what was kept, into the namespace; a failure is said once,
 * in replay_dst_done(). */
static void
dst_inject(struct mig *m, size_t max_pkts)
{
	char err[256] = "";

	if (!m->rq_injecting) {
		/* a peer's run of segments as a few: every packet costs
		 * the namespace's stack a receive and an acknowledgement */
		size_t merged = replay_list_merge(&m->rq, merge_max(m));

		if (merged > 0)
			log_info("migration %s: %zu of the %zu packets kept "
			    "merged into the segments before them", m->id,
			    merged, m->rq.npkts + merged);
		/* what the source forwards after COMMIT, within what is
		 * left of the bounds */
		m->rq_injecting = 1;
		late_add(m, m->rq.max_pkts > m->rq.kept ? m->rq.max_pkts -
		    m->rq.kept : 0, m->rq.max_bytes > m->rq.bytes ?
		    m->rq.max_bytes - m->rq.bytes : 0);
	}
	if (m->rq.head == NULL)
		return;
	/* one packet socket for every slice, closed with m (after
	 * COMMITTED: its close waits for an RCU grace period) */
	if (m->rq_out.fd < 0 && replay_out_open(&m->rq_out, m->ns, m->hostif,
	    err, sizeof(err)) < 0) {
		replay_out_close(&m->rq_out);
		replay_list_drop(&m->rq);
	} else {
		m->rq_replayed += replay_out_send(&m->rq_out, &m->rq, max_pkts,
		    err, sizeof(err));
	}
	if (err[0] != '\0' && m->rq_inject_err[0] == '\0')
		snprintf(m->rq_inject_err, sizeof(m->rq_inject_err), "%.150s",
		    err);
}

int
replay_dst_inject_some(struct mig *m, double budget_ms)
{
	double t0 = mono_ms();

	do
		dst_inject(m, REPLAY_INJECT_BATCH);
	while (m->rq.head != NULL && mono_ms() - t0 < budget_ms);
	m->rq_inject_ms += mono_ms() - t0;
	return m->rq.head == NULL;
}

double
replay_dst_done(struct mig *m)
{
	double t0 = mono_ms();

	dst_inject(m, (size_t)-1);	/* the rest, if any */
	m->rq_inject_ms += mono_ms() - t0;
	if (m->rq.inject_failed > 0)
		log_warnx("migration %s: %zu packets kept for replay could not "
		    "be injected (%s)", m->id, m->rq.inject_failed,
		    m->rq_inject_err);
	return m->rq_inject_ms;
}

void
replay_close(struct mig *m)
{
	if (m->rq_ev != NULL)
		event_free(m->rq_ev);
	m->rq_ev = NULL;
	if (m->rq_fd >= 0)
		close(m->rq_fd);
	m->rq_fd = -1;
	replay_out_close(&m->rq_out);
	replay_list_free(&m->rq);
	m->rq_last_sent = NULL;
}

/*
 * Destination: the migrations that went live here lately, whose source
 * may still forward what reaches it.  Each takes at most its own
 * lock-queue-bytes and lock-queue-packets, for REPLAY_LATE_MS.
 */
#define REPLAY_LATE_MS	3000
#define REPLAY_LATE_MAX	16

struct late {
	TAILQ_ENTRY(late)	 entry;
	char			 peer[CONF_NAME_MAX];
	char			 id[MIG_ID_MAX];
	char			 ns[NSARG_NAME_MAX + 1];
	char			 hostif[24];
	struct nsdump		*nd;
	struct replay_out	 out;	/* opened at the first PACKETS */
	size_t			 pkts_left, bytes_left, injected;
	double			 until;
};
static TAILQ_HEAD(, late)	lates = TAILQ_HEAD_INITIALIZER(lates);
static size_t			nlates;

static void
late_free(struct late *l)
{
	TAILQ_REMOVE(&lates, l, entry);
	nlates--;
	if (l->injected > 0)
		log_info("migration %s: %zu packets that reached the source "
		    "after COMMIT replayed", l->id, l->injected);
	replay_out_close(&l->out);
	free(l->nd);
	free(l);
}

static void
late_expire(void)
{
	struct late *l, *next;
	double now = mono_ms();

	for (l = TAILQ_FIRST(&lates); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (now >= l->until || nlates > REPLAY_LATE_MAX)
			late_free(l);
	}
}

/* Destination, gone live: keep taking that migration's packets a while. */
static void
late_add(struct mig *m, size_t pkts_left, size_t bytes_left)
{
	struct late *l = NULL;

	late_expire();
	if (m->nd == NULL || (l = calloc(1, sizeof(*l))) == NULL ||
	    (l->nd = malloc(sizeof(*l->nd))) == NULL) {
		free(l);
		return;
	}
	memcpy(l->nd, m->nd, sizeof(*l->nd));
	snprintf(l->peer, sizeof(l->peer), "%s", m->peer);
	snprintf(l->id, sizeof(l->id), "%s", m->id);
	snprintf(l->ns, sizeof(l->ns), "%s", m->ns);
	snprintf(l->hostif, sizeof(l->hostif), "%s", m->hostif);
	l->out.fd = -1;
	l->pkts_left = pkts_left;
	l->bytes_left = bytes_left;
	l->until = mono_ms() + REPLAY_LATE_MS;
	TAILQ_INSERT_TAIL(&lates, l, entry);
	nlates++;
	late_expire();		/* the oldest beyond REPLAY_LATE_MAX */
}

int
replay_late_rx(const char *peer, const char *id, json_t *msg)
{
	struct replay_list rq;
	struct late *l;
	size_t refused = 0;
	char why[300];

	late_expire();
	TAILQ_FOREACH(l, &lates, entry)
		if (strcmp(l->id, id) == 0 && strcmp(l->peer, peer) == 0)
			break;
	if (l == NULL)
		return 0;
	replay_list_init(&rq, l->pkts_left, l->bytes_left);
	if (replay_take(&rq, l->nd, msg, &refused, why, sizeof(why)) < 0) {
		log_warnx("migration %s: late PACKETS from %s: %s", id, peer,
		    why);
		replay_list_free(&rq);
		return 1;
	}
	l->pkts_left -= rq.npkts;
	l->bytes_left -= rq.bytes;
	if (l->out.fd >= 0 || replay_out_open(&l->out, l->ns, l->hostif,
	    why, sizeof(why)) == 0)
		l->injected += replay_out_send(&l->out, &rq, (size_t)-1, why,
		    sizeof(why));
	else
		replay_out_close(&l->out);
	replay_list_free(&rq);
	return 1;
}

json_t *
replay_report(const struct mig *m)
{
	size_t before = m->t_commit > 0 ? m->rq_at_commit : m->rq_sent;

	return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "mode", m->rq_on ?
	    "replay" : "drop", "kept", (json_int_t)m->rq.kept, "sent",
	    (json_int_t)before, "forwarded", (json_int_t)(m->rq_sent - before),
	    "overflow", (json_int_t)m->rq.overflow, "replayed",
	    (json_int_t)m->rq_replayed);
}
