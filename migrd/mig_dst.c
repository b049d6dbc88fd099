/*
 * The destination half of a migration.  PREPARE is checked field by
 * field (the peer is authenticated, not trusted) and against what this
 * host has; a namespace that cannot live here is refused before the
 * source freezes anything.  The namespace is then built locked and
 * detached, each socket record is restored as it arrives, and at COMMIT
 * the namespace goes live: attached, unlocked, announced, sockets out of
 * repair, the workload started with them (LISTEN_FDS).
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "announce.h"
#include "launch.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "nsbuild.h"
#include "ns.h"
#include "peer.h"
#include "sk_json.h"

#define PREPARE_RECORDS_MAX	(3 * NSDUMP_MAX)
#define INCOMING_MAX		8	/* migrations coming in at once */

static int
incoming(void)
{
	struct mig *m;
	int n = 0;

	TAILQ_FOREACH(m, &migs, entry)
		n += m->role == MIG_DEST;
	return n;
}

static void
refuse(const char *peer, const char *id, const char *ns, const char *why)
{
	history_add("migrate", "refused %.64s from %s: %s", ns, peer, why);
	peer_send(peer, MSG_MIG_REFUSED, json_pack("{s:s,s:s}", "mig", id,
	    "reason", why));
}

/* The namespace records of PREPARE into nd: 0, or -1 and why. */
static int
parse_records(json_t *records, struct nsdump *nd, char *why, size_t len)
{
	struct sk_record rec;
	char err[200];
	json_t *r;
	size_t i;

	if (!json_is_array(records) ||
	    json_array_size(records) > PREPARE_RECORDS_MAX) {
		snprintf(why, len, "records: not an array of at most %d",
		    PREPARE_RECORDS_MAX);
		return -1;
	}
	json_array_foreach(records, i, r) {
		if (sk_json_decode(r, NULL, &rec, err, sizeof(err)) == -1) {
			snprintf(why, len, "record %zu: %s", i, err);
			return -1;
		}
		if (nsdump_add(nd, &rec) == -1) {
			snprintf(why, len, "record %zu: not a link, address or "
			    "route, or too many", i);
			sk_record_clear(&rec);
			return -1;
		}
		sk_record_clear(&rec);
	}
	return 0;
}

/* The workload: null, or {argv} of a program this host has. */
static int
check_workload(json_t *wl, json_t **argv, char *why, size_t len)
{
	json_error_t jerr;
	const char *prog;

	*argv = NULL;
	if (json_is_null(wl))
		return 0;
	if (json_unpack_ex(wl, &jerr, JSON_STRICT, "{s:o}", "argv",
	    argv) == -1) {
		snprintf(why, len, "workload: %s", jerr.text);
		return -1;
	}
	if (ns_argv_check(*argv, why, len) != RES_OK)
		return -1;
	prog = json_string_value(json_array_get(*argv, 0));
	if (prog[0] != '/' || access(prog, X_OK) == -1) {
		snprintf(why, len, "workload %.200s is not an executable "
		    "path on %s", prog, migrd.conf.hostname);
		return -1;
	}
	return 0;
}

void
dst_prepare(const char *peer, json_t *msg)
{
	const char *id, *ns = "?", *from;
	json_t *desc, *records, *wl, *argv, *addrs;
	json_error_t jerr;
	struct nsdump *nd = NULL;
	struct mig *m;
	char why[400];

	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s,s:s,s:s,s:o,s:o,"
	    "s?o}", "mig", &id, "ns", &ns, "from", &from, "namespace", &desc,
	    "records", &records, "workload", &wl) == -1) {
		id = json_string_value(json_object_get(msg, "mig"));
		snprintf(why, sizeof(why), "malformed prepare: %s", jerr.text);
		refuse(peer, id, "?", why);
		return;
	}
	if (json_object_get(msg, "workload") == NULL)
		wl = json_null();
	if (id[0] == '\0') {
		refuse(peer, id, ns, "empty migration id");
		return;
	}
	if (nsarg_name(ns, why, sizeof(why)) == -1) {
		refuse(peer, id, "?", why);
		return;
	}
	if (strcmp(from, peer) != 0) {
		snprintf(why, sizeof(why), "prepare says it is from '%.64s' on "
		    "the session of %s", from, peer);
		refuse(peer, id, ns, why);
		return;
	}
	if (incoming() >= INCOMING_MAX) {
		snprintf(why, sizeof(why), "%s takes in at most %d migrations "
		    "at once", migrd.conf.hostname, INCOMING_MAX);
		refuse(peer, id, ns, why);
		return;
	}
	if (mig_find_ns(ns) != NULL || mig_find_id(id, peer) != NULL ||
	    mig_committed(id)) {
		snprintf(why, sizeof(why), "%s is already being moved, or this "
		    "migration was seen before", ns);
		refuse(peer, id, ns, why);
		return;
	}
	if (ns_describe_check(desc, why, sizeof(why)) != RES_OK ||
	    check_workload(wl, &argv, why, sizeof(why)) == -1) {
		refuse(peer, id, ns, why);
		return;
	}
	addrs = json_object_get(desc, "addrs");
	if (ns_can_host(ns, addrs, why, sizeof(why)) != RES_OK) {
		refuse(peer, id, ns, why);
		return;
	}
	if ((nd = calloc(1, sizeof(*nd))) == NULL) {
		refuse(peer, id, ns, "out of memory");
		return;
	}
	if (parse_records(records, nd, why, sizeof(why)) == -1) {
		free(nd);
		refuse(peer, id, ns, why);
		return;
	}
	if (mig_fault("dst-refuse")) {
		free(nd);
		refuse(peer, id, ns, "fault injected: dst-refuse");
		return;
	}
	if ((m = mig_new(MIG_DEST, id, ns, peer)) == NULL) {
		free(nd);
		refuse(peer, id, ns, "out of memory");
		return;
	}
	m->nd = nd;
	m->desc = json_incref(desc);
	m->argv = argv ? json_incref(argv) : NULL;
	history_add("migrate", "%s coming in from %s", ns, peer);
	mig_event(m, ME_RX_PREPARE);
}

static void
reannounce_cb(evutil_socket_t fd, short what, void *arg)
{
	char *ns = arg;

	(void)fd;
	(void)what;
	if (ns_exists(ns) && announce_addrs(ns, "eth0") < 0)
		log_warnx("%s: second announcement failed", ns);
	free(ns);
}

static pid_t
start_workload(struct mig *m, int *fds, char **names, size_t n)
{
	char *argv[NSARG_ARGV_MAX + 1], log[PATH_MAX + 32];
	size_t i;

	for (i = 0; i < json_array_size(m->argv) && i < NSARG_ARGV_MAX; i++)
		argv[i] = (char *)json_string_value(json_array_get(m->argv, i));
	argv[i] = NULL;
	ns_logpath(m->ns, log, sizeof(log));
	return launch_workload(m->ns, m->cgroup, fds, names, n, argv, log);
}

static void
go_live(struct mig *m)
{
	struct timeval gap = { 0, MIGDST_REANNOUNCE_MS * 1000 };
	char **names = NULL;
	int *fds = NULL;
	size_t n = 0;
	char *ns;

	if (mig_fault("dst-crash-commit")) {
		log_warnx("fault injected: dst-crash-commit: exiting");
		_exit(3);
	}
	if (migdst_go_live(&m->dst, migrd.conf.bridge, &fds, &names, &n) < 0) {
		/* past the commit point there is no way back */
		snprintf(m->reason, sizeof(m->reason), "going live failed: "
		    "the service is down; see the log");
		log_warnx("migration %s: %s", m->id, m->reason);
		return;
	}
	m->pid = 0;
	if (m->argv != NULL &&
	    (m->pid = start_workload(m, fds, names, n)) < 0) {
		snprintf(m->reason, sizeof(m->reason), "workload did not "
		    "start; its sockets are closed");
		log_warnx("migration %s: %s", m->id, m->reason);
		m->pid = 0;
	}
	migdst_free_fds(fds, names, n);
	ns_adopt(m->ns, m->desc, m->argv, m->pid);
	if ((ns = strdup(m->ns)) != NULL &&
	    event_base_once(migrd.base, -1, EV_TIMEOUT, reannounce_cb, ns,
	    &gap) == -1)
		free(ns);
}

void
dst_action(struct mig *m, unsigned action)
{
	switch (action) {
	case MA_BUILD:
		if (migdst_build(&m->dst, m->ns, m->hostif, m->nd) < 0) {
			mig_fail(m, "cannot build %s on %s", m->ns,
			    migrd.conf.hostname);
			break;
		}
		if (cgroup_create(m->ns) == -1)
			mig_fail(m, "cannot create the cgroup of %s", m->ns);
		break;
	case MA_SEND_PREPARED:
		mig_send(m, MSG_MIG_PREPARED, json_pack("{s:f}", "build_ms",
		    m->dst.fig.build_ms));
		break;
	case MA_SEND_READY:
		if (mig_fault("dst-ready-hold"))
			break;
		mig_send(m, MSG_MIG_READY, json_pack("{s:I,s:f}", "sockets",
		    (json_int_t)m->rx_seq, "restore_ms",
		    m->dst.fig.restore_ms));
		break;
	case MA_SEND_FAILED:
		m->told = 1;
		mig_send(m, MSG_MIG_FAILED, json_pack("{s:s}", "reason",
		    m->reason[0] ? m->reason : "failed"));
		break;
	case MA_DISCARD:
		migdst_discard(&m->dst);
		cgroup_kill_remove(m->ns);
		/* a cancel or a stop here: tell the source now rather than
		 * let it wait for its timeout (it ignores a late one) */
		if (!m->aborted && !m->told && m->state == MD_IDLE)
			mig_send(m, MSG_MIG_FAILED, json_pack("{s:s}",
			    "reason", m->reason[0] ? m->reason :
			    "discarded"));
		break;
	case MA_GO_LIVE:
		go_live(m);
		break;
	case MA_SEND_COMMITTED:
		mig_send(m, MSG_MIG_COMMITTED, json_pack("{s:f,s:I}",
		    "live_ms", m->dst.fig.live_ms, "pid", (json_int_t)m->pid));
		break;
	case MA_SEND_ABORTED:
		mig_send(m, MSG_MIG_ABORTED, NULL);
		break;
	default:
		log_warnx("migration %s: action %#x is not a destination's",
		    m->id, action);
		break;
	}
}

static void
restore_record(struct mig *m, json_t *msg)
{
	struct sk_record rec;
	json_error_t jerr;
	json_int_t seq;
	json_t *r;
	char err[200];
	const char *id;

	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s,s:I,s:o}", "mig",
	    &id, "seq", &seq, "record", &r) == -1) {
		mig_fail(m, "malformed record: %s", jerr.text);
		return;
	}
	if (seq != (json_int_t)m->rx_seq + 1) {
		mig_fail(m, "record %lld out of order (expected %llu)",
		    (long long)seq, (unsigned long long)m->rx_seq + 1);
		return;
	}
	if (sk_json_decode(r, NULL, &rec, err, sizeof(err)) == -1) {
		mig_fail(m, "record %lld: %s", (long long)seq, err);
		return;
	}
	if (rec.type != SK_REC_SOCKET) {
		sk_record_clear(&rec);
		mig_fail(m, "record %lld is not a socket", (long long)seq);
		return;
	}
	if (seq == 2 && mig_fault("dst-restore")) {
		sk_record_clear(&rec);
		mig_fail(m, "fault injected restoring record %lld",
		    (long long)seq);
		return;
	}
	if (migdst_restore(&m->dst, rec.u.sock) < 0) {
		sk_record_clear(&rec);
		mig_fail(m, "socket record %lld could not be restored",
		    (long long)seq);
		return;
	}
	sk_record_clear(&rec);
	mig_count_kind(&m->kinds, r);
	m->rx_seq++;
}

void
dst_rx(struct mig *m, int type, json_t *msg)
{
	json_int_t n = -1;

	switch (type) {
	case MSG_MIG_RECORD:
		if (m->state == MD_PREPARED)
			restore_record(m, msg);
		break;
	case MSG_MIG_DUMP_DONE:
		if (m->state != MD_PREPARED)
			break;
		if (json_unpack(msg, "{s:I}", "records", &n) == -1 ||
		    n != (json_int_t)m->rx_seq) {
			mig_fail(m, "dump ended at %lld records, %llu came",
			    (long long)n, (unsigned long long)m->rx_seq);
			break;
		}
		mig_event(m, ME_RX_DUMP_DONE);
		break;
	case MSG_MIG_COMMIT:
		mig_event(m, ME_RX_COMMIT);
		break;
	case MSG_MIG_ABORT:
		m->aborted = 1;
		snprintf(m->reason, sizeof(m->reason), "aborted by %s",
		    m->peer);
		mig_event(m, ME_RX_ABORT);
		break;
	default:
		log_warnx("migration %s: %s from %s is not for a destination",
		    m->id, migr_msgname(type), m->peer);
		break;
	}
}

void
dst_cleanup(struct mig *m)
{
	migdst_free(&m->dst);	/* discards whatever is still built */
	free(m->nd);
	m->nd = NULL;
}

void
dst_discard_leftover(const char *ns)
{
	char veth[IFNAMSIZ];

	if (ns_exists(ns))
		return;		/* it went live: not a leftover */
	snprintf(veth, sizeof(veth), "v%s", ns);
	nsbuild_delete(ns, veth);
	cgroup_kill_remove(ns);
}
