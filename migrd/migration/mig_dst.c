/* SPDX-License-Identifier: ISC */
/*
 * The destination half of a migration.  PREPARE is checked field by
 * field (the peer is authenticated, not trusted) and against what this
 * host has; a namespace that cannot live here is refused before the
 * source freezes anything.  The namespace is then built locked and
 * detached, each socket record is restored as it arrives, and at COMMIT
 * the namespace goes live: attached, unlocked, announced, sockets out of
 * repair, the workload started with them (LISTEN_FDS).
 */
#include <dirent.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <event2/event.h>

#include "announce.h"
#include "clock.h"
#include "launch.h"
#include "committed.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "nsbuild.h"
#include "ns.h"
#include "peer.h"
#include "policy.h"
#include "probe.h"
#include "sk_json.h"

#define PREPARE_RECORDS_MAX	(3 * NSDUMP_MAX)
#define INCOMING_MAX	POLICY_MIGRATIONS_MAX	/* coming in at once */
/* file descriptors kept free of any migration's sockets */
#define FD_RESERVE		128
/* going live: sockets out of repair for about this long, then the loop */
#define LIVE_SLICE_MS		20

static void	attach_step(struct mig *);
static void	attach_undo(struct mig *, const char *);

/* Open file descriptors of this process, or -1. */
static long
fds_open(void)
{
	struct dirent *d;
	long n = 0;
	DIR *dir;

	if ((dir = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL)
		n += d->d_name[0] != '.';
	closedir(dir);
	return n - 1;		/* the directory's own */
}

/*
 * How many sockets one more migration may bring: each takes a file
 * descriptor while it is restored and a second one while it is handed to
 * the workload, on top of what is open and what the migrations coming
 * in already hold room for.  -1 if it cannot be told.
 */
static long
fd_room(void)
{
	struct rlimit rl;
	struct mig *m;
	long open, room;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || (open = fds_open()) < 0)
		return -1;
	room = (long)(rl.rlim_cur > (rlim_t)LONG_MAX ? LONG_MAX : rl.rlim_cur)
	    - open - FD_RESERVE;
	TAILQ_FOREACH(m, &migs, entry)
		if (m->role == MIG_DEST && m->state == MD_PREPARED)
			room -= 2 * (long)m->sock_budget;
	return room > 0 ? room / 2 : 0;
}

/*
 * The sockets a PREPARE announces, against the peer's "allow sockets"
 * and the descriptors this host has: 0 and p->budget (the most records
 * it may then send: what it announced and a margin for connections
 * accepted until its freeze, within both), or -1 and why.
 */
static int
sockets_fit(const char *peer, const struct policy *pol, struct prep *p,
    char *why, size_t len)
{
	unsigned lim = policy_limit(pol, POLICY_SOCKETS, POLICY_SOCKETS_MAX);
	uint64_t want = (uint64_t)p->sockets;
	long room = fd_room();

	if (want > lim) {
		snprintf(why, len, "%s may not bring %llu sockets here in one "
		    "migration (allow %s sockets %u)", peer,
		    (unsigned long long)want, peer, lim);
		return -1;
	}
	if (room < 0) {
		snprintf(why, len, "%s cannot count its file descriptors",
		    migrd.conf.hostname);
		return -1;
	}
	if (want > (uint64_t)room) {
		snprintf(why, len, "%s has room for %ld more sockets, not %llu "
		    "(its limit of open files, LimitNOFILE)",
		    migrd.conf.hostname, room, (unsigned long long)want);
		return -1;
	}
	if (want > LAUNCH_MAX_FDS) {
		snprintf(why, len, "%llu sockets: one workload takes at most "
		    "%d", (unsigned long long)want, LAUNCH_MAX_FDS);
		return -1;
	}
	p->budget = want + want / 4 + 64;
	if (p->budget > LAUNCH_MAX_FDS)
		p->budget = LAUNCH_MAX_FDS;
	if (p->budget > lim)
		p->budget = lim;
	if (p->budget > (uint64_t)room)
		p->budget = (uint64_t)room;
	return 0;
}

/* migrations coming in, from peer or (NULL) from any */
static unsigned
incoming(const char *peer)
{
	struct mig *m;
	unsigned n = 0;

	TAILQ_FOREACH(m, &migs, entry)
		n += m->role == MIG_DEST &&
		    (peer == NULL || strcmp(m->peer, peer) == 0);
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

/* The workload: null, or {argv[, checkpoint | gate]} of a program
 * this host has. */
static int
check_workload(json_t *wl, struct prep *p, char *why, size_t len)
{
	json_error_t jerr;
	const char *prog;
	json_t *ck = NULL;
	int gate = 0;

	p->argv = NULL;
	if (json_is_null(wl))
		return 0;
	if (json_unpack_ex(wl, &jerr, JSON_STRICT, "{s:o,s?o,s?b}", "argv",
	    &p->argv, "checkpoint", &ck, "gate", &gate) == -1) {
		snprintf(why, len, "workload: %s", jerr.text);
		return -1;
	}
	if (gate && ck != NULL) {
		snprintf(why, len, "workload: checkpointed and gated");
		return -1;
	}
	p->gate = gate;
	if (ns_argv_check(p->argv, why, len) != RES_OK)
		return -1;
	prog = json_string_value(json_array_get(p->argv, 0));
	if (prog[0] != '/' || access(prog, X_OK) == -1) {
		snprintf(why, len, "workload %.200s is not an executable "
		    "path on %s", prog, migrd.conf.hostname);
		return -1;
	}
	return ck != NULL ? ckpt_prep_parse(ck, p, why, len) : 0;
}

int
prep_parse(const char *peer, json_t *msg, struct prep *p, char *why,
    size_t len)
{
	const char *from;
	json_t *records, *wl;
	json_error_t jerr;

	memset(p, 0, sizeof(*p));
	p->ns = "?";
	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s,s:s,s:s,s:o,s:o,"
	    "s:I,s?o}", "mig", &p->id, "ns", &p->ns, "from", &from,
	    "namespace", &p->desc, "records", &records, "sockets",
	    &p->sockets, "workload", &wl) == -1) {
		p->id = json_string_value(json_object_get(msg, "mig"));
		p->ns = "?";
		snprintf(why, len, "malformed request: %s", jerr.text);
		return -1;
	}
	if (json_object_get(msg, "workload") == NULL)
		wl = json_null();
	if (p->id[0] == '\0') {
		snprintf(why, len, "empty migration id");
		return -1;
	}
	if (p->sockets < 0 || p->sockets > POLICY_SOCKETS_MAX) {
		snprintf(why, len, "sockets: %lld is not 0 to %d",
		    (long long)p->sockets, POLICY_SOCKETS_MAX);
		return -1;
	}
	if (nsarg_name(p->ns, why, len) == -1) {
		p->ns = "?";
		return -1;
	}
	if (strcmp(from, peer) != 0) {
		snprintf(why, len, "the request says it is from '%.64s' on "
		    "the session of %s", from, peer);
		return -1;
	}
	if (ns_describe_check(p->desc, why, len) != RES_OK ||
	    check_workload(wl, p, why, len) == -1)
		return -1;
	if ((p->nd = calloc(1, sizeof(*p->nd))) == NULL) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (parse_records(records, p->nd, why, len) == -1) {
		free(p->nd);
		p->nd = NULL;
		return -1;
	}
	return 0;
}

/*
 * Every check a PREPARE must pass: the message (prep_parse()), then
 * against what this host has and does: 0 and p filled (p->nd is the
 * caller's to free), or -1 and why.
 */
static int
prep_validate(const char *peer, json_t *msg, struct prep *p, char *why,
    size_t len)
{
	const struct peer_conf *pc;
	struct statvfs vfs;

	if (prep_parse(peer, msg, p, why, len) == -1)
		return -1;
	/* local policy: what this peer may bring here (policy.h) */
	pc = config_find_peer(&migrd.conf, peer);
	if (pc == NULL) {
		snprintf(why, len, "%s is not a configured peer", peer);
		goto out_free;
	}
	if (policy_check(peer, &pc->allow, p->ns, p->desc, p->nd, p->argv,
	    why, len) == -1 || sockets_fit(peer, &pc->allow, p, why, len) == -1 ||
	    ckpt_prep_allowed(peer, p, &p->ck_max, why, len) == -1)
		goto out_free;
	/* each one coming in may go live: room for its entry */
	if (committed_count(peer) + incoming(peer) >= COMMITTED_PER_PEER) {
		snprintf(why, len, "%u moves from %s went live here and %s "
		    "has not acknowledged them (FORGET), %u more are under "
		    "way: see migrd(8), COMMITTED MIGRATIONS",
		    committed_count(peer), peer, peer, incoming(peer));
		goto out_free;
	}
	if (mig_find_ns(p->ns) != NULL || mig_find_id(p->id, peer) != NULL ||
	    committed_has(peer, p->id)) {
		snprintf(why, len, "%s is already being moved, or this "
		    "migration was seen before", p->ns);
		goto out_free;
	}
	if (ns_can_host(p->ns, json_object_get(p->desc, "addrs"), why,
	    len) != RES_OK)
		goto out_free;
	/* the commit point is a write there (a PREPARE writes it too) */
	if (statvfs(migrd.conf.state_dir, &vfs) == 0 && vfs.f_bavail == 0) {
		snprintf(why, len, "%s's state folder %.200s is full",
		    migrd.conf.hostname, migrd.conf.state_dir);
		goto out_free;
	}
	return 0;

out_free:
	free(p->nd);
	p->nd = NULL;
	return -1;
}

void
dst_prepare(const char *peer, json_t *msg)
{
	const struct peer_conf *pc;
	struct prep p;
	struct mig *m;
	char why[400];
	unsigned most;

	if (prep_validate(peer, msg, &p, why, sizeof(why)) == -1) {
		refuse(peer, p.id, p.ns, why);
		return;
	}
	if (incoming(NULL) >= INCOMING_MAX) {
		snprintf(why, sizeof(why), "%s takes in at most %d migrations "
		    "at once", migrd.conf.hostname, INCOMING_MAX);
		goto out_refuse;
	}
	pc = config_find_peer(&migrd.conf, peer);
	most = pc != NULL ? policy_limit(&pc->allow, POLICY_MIGRATIONS,
	    INCOMING_MAX) : INCOMING_MAX;
	if (incoming(peer) >= most) {
		snprintf(why, sizeof(why), "%s may bring at most %u migrations "
		    "here at once (allow %s migrations)", peer, most, peer);
		goto out_refuse;
	}
	if (mig_fault("dst-refuse")) {
		snprintf(why, sizeof(why), "fault injected: dst-refuse");
		goto out_refuse;
	}
	if ((m = mig_new(MIG_DEST, p.id, p.ns, peer)) == NULL) {
		snprintf(why, sizeof(why), "out of memory");
		goto out_refuse;
	}
	m->nd = p.nd;
	m->sock_budget = p.budget;
	m->desc = json_incref(p.desc);
	m->argv = p.argv ? json_incref(p.argv) : NULL;
	m->ck = p.ckpt;
	m->gate = p.gate;
	m->ck_max = p.ck_max;
	snprintf(m->ck_stdout, sizeof(m->ck_stdout), "%s",
	    p.ck_stdout ? p.ck_stdout : "");
	/* The one write of "prepared" (a restart finds the half-built
	 * namespace there), made before the step: a state folder that
	 * cannot take this migration (a full disk) would fail it at the
	 * commit point, after the source's whole downtime, so it is
	 * refused now. */
	m->state = MD_PREPARED;
	if (mig_persist("persist-prepare") == -1) {
		snprintf(why, sizeof(why), "%s cannot write its state: %.300s",
		    migrd.conf.hostname, mig_persist_error());
		mig_free(m);
		(void)mig_persist(NULL);
		refuse(peer, p.id, p.ns, why);
		return;
	}
	m->state = MD_IDLE;
	history_add("migrate", "%s coming in from %s", p.ns, peer);
	mig_event(m, ME_RX_PREPARE);
	return;

out_refuse:
	free(p.nd);
	refuse(peer, p.id, p.ns, why);
}

/* "migctl check NS HOST" on the source: could this host take it?  The
 * same checks as a PREPARE, and nothing built. */
void
dst_check(const char *peer, json_t *msg)
{
	struct prep p;
	char why[400] = "";
	int ok;

	ok = prep_validate(peer, msg, &p, why, sizeof(why)) == 0;
	free(p.nd);
	peer_send(peer, MSG_MIG_CHECKED, json_pack("{s:s,s:b,s:s}", "mig",
	    p.id ? p.id : "", "ok", ok, "reason", ok ? "" : why));
}

static void
reannounce_cb(evutil_socket_t fd, short what, void *arg)
{
	char *ns = arg;

	char err[256];

	(void)fd;
	(void)what;
	if (ns_exists(ns) && announce_addrs(ns, "eth0", err, sizeof(err)) < 0)
		log_warnx("%s: second announcement: %s", ns, err);
	free(ns);
}

/*
 * Before the commit point: the workload forked and taken through every
 * step up to its exec (cgroup, namespace, its user, its sockets at fds
 * 3..: listeners first, then the rest in record order), so that what
 * would stop it from starting is found while the source can still roll
 * back.  0 (nothing to start, or ready), or -1 and err.
 */
static int
live_prepare(struct mig *m, char *err, size_t errlen)
{
	char *argv[NSARG_ARGV_MAX + 1], **names = NULL;
	int *fds = NULL, rc = -1;
	size_t i, n;

	m->live.pid = -1;
	if (m->argv == NULL)
		return 0;
	for (i = 0; i < json_array_size(m->argv) && i < NSARG_ARGV_MAX; i++)
		argv[i] = (char *)json_string_value(json_array_get(m->argv, i));
	argv[i] = NULL;
	/* fault: a program that is gone by the time COMMIT comes */
	if (mig_fault("dst-exec-fail"))
		argv[0] = (char *)"/nonexistent/dst-exec-fail";
	if ((fds = calloc(m->dst.nitems + 1, sizeof(*fds))) == NULL ||
	    (names = calloc(m->dst.nitems + 1, sizeof(*names))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	n = migdst_workload_fds(&m->dst, fds, names);
	rc = workload_prepare(m->ns, fds, names, n, argv, m->gate, &m->live,
	    err, errlen);
out:
	free(fds);
	free(names);
	return rc;
}

/*
 * The workload forked and ready (gated: running, at its gate), timed in
 * the log as "what"; 0, or -1 and the migration failed (m may be gone).
 */
static int
workload_ready(struct mig *m, const char *what)
{
	double t0 = mono_ms();
	char why[256];

	if (live_prepare(m, why, sizeof(why)) < 0) {
		mig_fail(m, "%s cannot start %s's workload: %s",
		    migrd.conf.hostname, m->ns, why);
		return -1;
	}
	if (m->live.pid > 0)
		log_info("migration %s: %s's %s, pid %ld (%.1f ms)", m->id,
		    m->ns, what, (long)m->live.pid, mono_ms() - t0);
	return 0;
}

/*
 * Every socket is out of repair: the workload (which holds its own
 * copies since live_prepare()) runs, before the packets kept for replay
 * go in.  Those go in beside it, in slices: the restored sockets take
 * them in sequence order whenever they come (a socket out of repair is
 * a socket like any other), and a workload held back until the last of
 * them left every live socket without a writer that long (122 ms for
 * 805 packets, 154 sockets, in a TCG guest).  Once only: the slices
 * call it when the last socket is out, live_done() if nothing did.
 */
static void
live_release(struct mig *m)
{
	double t0 = mono_ms();
	char err[256];

	if (m->released)
		return;
	m->released = 1;
	migdst_release(&m->dst);
	m->pid = 0;
	if (m->live.pid > 0 &&
	    (m->pid = launch_go(&m->live, err, sizeof(err))) < 0) {
		snprintf(m->reason, sizeof(m->reason), "workload did not "
		    "start (%.180s); its sockets are closed", err);
		log_warnx("migration %s: %s", m->id, m->reason);
		m->pid = 0;
	}
	if (m->ck) {
		ckpt_dst_go(m);
		m->pid = m->ck_root;
	}
	m->t_released = mono_ms();
	m->release_ms = m->t_released - t0;
}

/*
 * What reached the source meanwhile has gone in (what is left of it
 * now), the workload runs: the namespace is this host's.
 */
static void
live_done(struct mig *m)
{
	struct timeval gap = { 0, MIGDST_REANNOUNCE_MS * 1000 };
	double replay_ms, t2;
	char *ns;

	live_release(m);
	replay_ms = replay_dst_done(m);
	t2 = mono_ms();
	ns_adopt(m->ns, m->desc, m->argv, m->pid, m->ck, m->gate);
	if ((ns = strdup(m->ns)) != NULL &&
	    event_base_once(migrd.base, -1, EV_TIMEOUT, reannounce_cb, ns,
	    &gap) == -1)
		free(ns);
	m->going = 0;
	/* each step of going live, for the loop watch's holds */
	log_info("migration %s: %s live, %zu sockets out of repair in "
	    "%.1f ms (attach %.1f, unlock %.1f, announce %.1f ms); then "
	    "workload %.1f, replay %.1f (beside it), registry %.1f ms",
	    m->id, m->ns, m->dst.fig.sockets, m->dst.fig.live_ms,
	    m->dst.fig.attach_ms, m->dst.fig.unlock_ms,
	    m->dst.fig.announce_ms, m->release_ms, replay_ms,
	    mono_ms() - t2);
}

/* The last slice, outside any step: live, COMMITTED if COMMIT asked for
 * it, and the migration ends here (m is freed). */
static void
live_finish(struct mig *m)
{
	live_done(m);
	if (m->committed_due)
		dst_action(m, MA_SEND_COMMITTED);
	(void)mig_settle(m);
}

/*
 * One slice of going live, from the loop: about LIVE_SLICE_MS of
 * sockets leaving repair, then the loop's other work (heartbeats,
 * status, other migrations), then the next slice; once every socket is
 * out, slices of the packets kept for replay the same way (24,000 of
 * them held a TCG guest's loop 5 s in one go, and the source lost the
 * channel).  Fault "dst-live-slow": one socket a slice, the slices
 * spread over 2.5 s.
 */
static void
live_slice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;
	struct timeval next = { 0, 0 };
	int slow = mig_fault("dst-live-slow");
	double t0 = mono_ms(), left;

	(void)fd;
	(void)what;
	if (m->attaching) {
		attach_step(m);
		return;
	}
	if (!migdst_resume_some(&m->dst, LIVE_SLICE_MS, slow ? 1 : SIZE_MAX)) {
		if (slow)
			next.tv_usec = (suseconds_t)(2500000 / m->dst.nitems);
		if (evtimer_add(m->live_ev, &next) == 0)
			return;
		migdst_resume_all(&m->dst);	/* no timer: the rest now */
	} else {
		/* every socket is out: the workload runs now, and the
		 * replay has what is left of this slice, or the next one
		 * (the last sockets' slice and a whole replay slice in one
		 * turn would hold the loop twice as long) */
		live_release(m);
		left = LIVE_SLICE_MS - (mono_ms() - t0);
		if ((left <= 0 || !replay_dst_inject_some(m, left)) &&
		    evtimer_add(m->live_ev, &next) == 0)
			return;
	}
	live_finish(m);
}

/* migrd stops while m goes live: the rest at once, nothing is left
 * in repair (its sockets would be lost with migrd). */
void
dst_live_now(struct mig *m)
{
	char err[256];

	if (!m->going)
		return;
	evtimer_del(m->live_ev);
	if (m->attaching) {
		/* what is left of the port's wait, here and now */
		m->attaching = 0;
		if (migdst_attach_rest(&m->dst, err, sizeof(err)) < 0) {
			attach_undo(m, err);
			return;
		}
	}
	migdst_resume_all(&m->dst);
	live_finish(m);
}

/*
 * Going live could not begin: nothing has left repair, the workload has
 * not run and COMMITTED has not gone, so the commit is undone (the id
 * leaves the committed list, what was built is discarded) and the
 * source, told ABORTED with the reason, rolls back with every
 * connection.
 */
static void
attach_undo(struct mig *m, const char *err)
{
	m->going = 0;
	m->attaching = 0;
	m->told = 1;		/* ABORTED says it; no FAILED besides */
	mig_fail(m, "%s could not go live, undone before any socket left "
	    "repair: %.180s", migrd.conf.hostname, err);
}

/*
 * Going live waits for the veth's port to forward on the bridge (at
 * once without STP, up to NSBUILD_FORWARD_MS with it), polled from the
 * loop every NSBUILD_FORWARD_POLL_MS; then the lock goes, the addresses
 * are announced and the sockets leave repair in slices.  Fault
 * "dst-attach-slow": the port seems to wait 1.5 s, as under STP.
 */
static void
attach_step(struct mig *m)
{
	struct timeval again = { 0, NSBUILD_FORWARD_POLL_MS * 1000 };
	struct timeval now = { 0, 0 };
	char err[256];
	int rc;

	rc = migdst_attach_poll(&m->dst, mig_fault("dst-attach-slow") ?
	    1500 : 0, err, sizeof(err));
	if (rc == 0) {
		if (evtimer_add(m->live_ev, &again) == 0)
			return;
		snprintf(err, sizeof(err), "evtimer_add failed");
		rc = -1;
	}
	if (rc < 0 || migdst_attach_finish(&m->dst, err, sizeof(err)) < 0) {
		attach_undo(m, err);
		return;
	}
	m->attaching = 0;
	if (m->dst.fig.attach_ms >= 100)
		log_info("migration %s: the port of %s forwarded on %s after "
		    "%.0f ms", m->id, m->ns, migrd.conf.bridge,
		    m->dst.fig.attach_ms);
	/*
	 * From here there is no undo: the sockets leave repair in slices
	 * of the loop, and COMMITTED waits for the last of them, so the
	 * source keeps its frozen copy until this one is whole.  The loop
	 * goes on meanwhile: a repeated COMMIT waits the same way, and the
	 * committed list does not answer for a migration going live.
	 */
	if (evtimer_add(m->live_ev, &now) < 0) {
		/* no timer: all at once */
		migdst_resume_all(&m->dst);
		live_finish(m);
	}
}

static void
go_live(struct mig *m)
{
	struct timeval now = { 0, 0 };
	char err[256];

	if (mig_fault("dst-crash-commit")) {
		log_warnx("fault injected: dst-crash-commit: exiting");
		_exit(3);
	}
	if (mig_fault("dst-attach-fail")) {
		snprintf(err, sizeof(err), "fault injected attaching the veth");
		goto undo;
	}
	if (m->live_ev == NULL &&
	    (m->live_ev = evtimer_new(migrd.base, live_slice_cb, m)) == NULL) {
		snprintf(err, sizeof(err), "evtimer_new failed");
		goto undo;
	}
	if (migdst_attach_start(&m->dst, migrd.conf.bridge, err,
	    sizeof(err)) < 0)
		goto undo;
	/* going from now: COMMITTED waits for the last socket, and the
	 * port's wait, then the slices, run from the loop */
	m->going = 1;
	m->attaching = 1;
	if (evtimer_add(m->live_ev, &now) == 0)
		return;
	snprintf(err, sizeof(err), "evtimer_add failed");
undo:
	attach_undo(m, err);
}

static void
send_prepared(struct mig *m)
{
	mig_send(m, MSG_MIG_PREPARED, json_pack("{s:f}", "build_ms",
	    m->dst.fig.build_ms));
}

static void
probe_done(struct mig *m)
{
	if (m->probe != NULL) {
		probe_free(m->probe);
		free(m->probe);
		m->probe = NULL;
	}
}

static void
probe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;
	char why[300];
	int rc;

	(void)fd;
	(void)what;
	if (m->probe == NULL || m->state != MD_PREPARED)
		return;
	rc = probe_finish(m->probe, why, sizeof(why));
	if (rc == 0)
		log_info("migration %s: %zu addresses of %s probed on %s: none "
		    "in use by another MAC", m->id, m->probe->naddrs, m->ns,
		    m->probe->bridge);
	probe_done(m);
	if (rc > 0) {
		mig_fail(m, "%.290s", why);	/* the source adds our name */
		return;
	}
	if (rc < 0)
		log_warnx("migration %s: probing the addresses of %s: %s",
		    m->id, m->ns, why);
	send_prepared(m);
}

/*
 * Before PREPARED (so before the source freezes anything): is any
 * address the namespace brings someone else's on the LAN?  The probes
 * go out now and their answers are read PROBE_WAIT_MS later, from the
 * loop; PREPARED goes then, or the migration fails naming the address
 * and the MAC that holds it.  0, or -1 if nothing is to be probed (send
 * PREPARED at once).
 */
static int
probe_addrs(struct mig *m)
{
	struct timeval wait = { 0, PROBE_WAIT_MS * 1000 };
	char err[256];

	if (m->nd == NULL || (m->probe = calloc(1, sizeof(*m->probe))) == NULL)
		return -1;
	if (probe_start(m->probe, migrd.conf.bridge, m->nd, err,
	    sizeof(err)) < 0) {
		log_warnx("migration %s: the addresses of %s were not probed: "
		    "%s", m->id, m->ns, err);
		probe_done(m);
		return -1;
	}
	if (m->probe->skipped[0] != '\0')
		log_warnx("migration %s: %s: IPv6 addresses not probed: %s",
		    m->id, m->ns, m->probe->skipped);
	if (m->probe->naddrs == 0 || (m->work == NULL &&
	    (m->work = evtimer_new(migrd.base, probe_cb, m)) == NULL) ||
	    evtimer_add(m->work, &wait) < 0) {
		probe_done(m);
		return -1;
	}
	return 0;
}

void
dst_action(struct mig *m, unsigned action)
{
	char err[256];

	switch (action) {
	case MA_BUILD:
		if (migdst_build(&m->dst, m->ns, m->hostif, m->nd, err,
		    sizeof(err)) < 0) {
			mig_fail(m, "cannot build %s on %s: %s", m->ns,
			    migrd.conf.hostname, err);
			break;
		}
		if (ns_cgroup_create(m->ns, err, sizeof(err)) == -1)
			mig_fail(m, "cannot create the cgroup of %s: %s", m->ns,
			    err);
		break;
	case MA_SEND_PREPARED:
		/* once the addresses were probed, unless none can be */
		if (probe_addrs(m) < 0)
			send_prepared(m);
		break;
	case MA_SEND_READY:
		if (!mig_fault("dst-ready-hold"))
			mig_send(m, MSG_MIG_READY, json_pack("{s:I,s:f}",
			    "sockets", (json_int_t)m->rx.seq, "restore_ms",
			    m->dst.fig.restore_ms));
		/*
		 * A gated workload starts now, with its sockets still in
		 * repair, while READY travels and the source decides: it
		 * sets itself up during the commit and waits at its gate,
		 * which opens once they are live.  If the move is undone it
		 * is killed (launch_cancel()), having touched nothing.  A
		 * program that cannot start fails the move: a COMMIT that
		 * crossed FAILED finds it gone and is answered ABORTED.
		 */
		if (m->gate && !m->ck && m->live.pid <= 0)
			(void)workload_ready(m, "gated workload started");
		break;
	case MA_SEND_FAILED:
		m->told = 1;
		mig_send(m, MSG_MIG_FAILED, json_pack("{s:s}", "reason",
		    m->reason[0] ? m->reason : "failed"));
		break;
	case MA_DISCARD:
		launch_cancel(&m->live);
		migdst_discard(&m->dst);
		ns_cgroup_remove(m->ns);
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
		if (m->going) {		/* when every socket is live */
			m->committed_due = 1;
			break;
		}
		/* since_release_ms: the workload ran that long before this
		 * (the replay's last slices go on beside it): where the
		 * source's downtime ends; since_commit_ms: how long this
		 * host had COMMIT, so the source can tell the channel's
		 * round trip from this host's work */
		mig_send(m, MSG_MIG_COMMITTED, json_pack("{s:f,s:I,s:I,s:I,"
		    "s:f,s:f}", "live_ms", m->dst.fig.live_ms, "pid",
		    (json_int_t)m->pid, "reset", (json_int_t)m->dst.fig.reset,
		    "replayed", (json_int_t)m->rq_replayed, "since_release_ms",
		    m->t_released > 0 ? mono_ms() - m->t_released : 0.0,
		    "since_commit_ms", m->t_commit_rx > 0 ? mono_ms() -
		    m->t_commit_rx : 0.0));
		break;
	case MA_SEND_ABORTED:
		/* why, when this host knows (it gave up itself) */
		mig_send(m, MSG_MIG_ABORTED, m->reason[0] ?
		    json_pack("{s:s}", "reason", m->reason) : NULL);
		break;
	default:
		log_warnx("migration %s: action %#x is not a destination's",
		    m->id, action);
		break;
	}
}

/* A whole record: its socket restored, or the migration failed (and m
 * may be gone: nothing of m is touched after a failure). */
static void
restore_whole(struct mig *m, struct sk_record *rec, uint64_t seq)
{
	char err[256];

	if (seq == 2 && mig_fault("dst-crash-restore")) {
		log_warnx("fault injected: dst-crash-restore: exiting");
		_exit(3);
	}
	if (seq == 2 && mig_fault("dst-restore")) {
		mig_fail(m, "fault injected restoring record %llu",
		    (unsigned long long)seq);
		return;
	}
	if (m->ck && (rec->u.sock->flags & SK_F_PARENT)) {
		mig_fail(m, "socket record %llu: checkpoint mode carries "
		    "sockets held by the program only", (unsigned long long)seq);
		return;
	}
	/* checkpoint mode: a UDP socket waits for CRIU's to be gone */
	if (m->ck && rec->u.sock->proto == SK_PROTO_UDP) {
		if (ckpt_dst_keep_udp(m, &rec->u.sock, err, sizeof(err)) < 0) {
			mig_fail(m, "socket record %llu: %s",
			    (unsigned long long)seq, err);
			return;
		}
		m->rx.seq++;
		return;
	}
	/* checkpoint mode: CRIU restores the listeners itself (an empty
	 * accept queue was the source's condition) */
	if (m->ck && rec->u.sock->state == SK_ST_LISTEN) {
		m->rx.seq++;
		return;
	}
	if (migdst_restore(&m->dst, rec->u.sock, err, sizeof(err)) < 0) {
		mig_fail(m, "socket record %llu could not be restored: %s",
		    (unsigned long long)seq, err);
		return;
	}
	m->rx.seq++;
}

int
rx_record(struct rx_stream *rx, json_t *msg, json_int_t *seq, json_t **raw,
    char *why, size_t len)
{
	struct sk_json_limits lim = { 0, true };
	json_error_t jerr;
	char err[200];
	const char *id;
	json_t *r, *holders;

	/* holders: checkpoint mode's (ckpt_dst_holders()) */
	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s,s:I,s:o,s?o}",
	    "mig", &id, "seq", seq, "record", &r, "holders", &holders) == -1) {
		snprintf(why, len, "malformed record: %s", jerr.text);
		return -1;
	}
	if (rx->partial) {
		snprintf(why, len, "record %lld came before the chunks of "
		    "record %llu", (long long)*seq,
		    (unsigned long long)rx->seq + 1);
		return -1;
	}
	if (*seq != (json_int_t)rx->seq + 1) {
		snprintf(why, len, "record %lld out of order (expected %llu)",
		    (long long)*seq, (unsigned long long)rx->seq + 1);
		return -1;
	}
	if (sk_json_decode(r, &lim, &rx->rec, err, sizeof(err)) == -1) {
		snprintf(why, len, "record %lld: %s", (long long)*seq, err);
		return -1;
	}
	if (rx->rec.type != SK_REC_SOCKET) {
		sk_record_clear(&rx->rec);
		snprintf(why, len, "record %lld is not a socket",
		    (long long)*seq);
		return -1;
	}
	*raw = r;
	if (sk_record_pending(&rx->rec) > 0) {
		rx->partial = 1;	/* its large parts follow in chunks */
		return 0;
	}
	return 1;
}

int
rx_chunk(struct rx_stream *rx, json_t *msg, json_int_t *seq, char *why,
    size_t len)
{
	json_error_t jerr;
	json_t *c;
	char err[200];
	const char *id, *raw = NULL;
	size_t rawlen = 0;

	/* raw: a queue's bytes, from the frame's binary tail (frame.h) */
	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s,s:I,s:o,s?s%}",
	    "mig", &id, "seq", seq, "chunk", &c, "raw", &raw, &rawlen) ==
	    -1) {
		snprintf(why, len, "malformed chunk: %s", jerr.text);
		return -1;
	}
	if (!rx->partial || *seq != (json_int_t)rx->seq + 1) {
		snprintf(why, len, "a chunk of record %lld, which waits for "
		    "none", (long long)*seq);
		return -1;
	}
	if (sk_record_add_chunk_raw(&rx->rec, c, raw, rawlen, err,
	    sizeof(err)) < 0) {
		snprintf(why, len, "record %lld: %s", (long long)*seq, err);
		return -1;
	}
	if (sk_record_pending(&rx->rec) > 0)
		return 0;
	rx->partial = 0;
	return 1;
}

int
rx_dump_done(const struct rx_stream *rx, json_t *msg, char *why, size_t len)
{
	json_int_t n = -1;

	if (rx->partial) {
		snprintf(why, len, "the dump ended in the middle of record "
		    "%llu", (unsigned long long)rx->seq + 1);
		return -1;
	}
	if (json_unpack(msg, "{s:I}", "records", &n) == -1 ||
	    n != (json_int_t)rx->seq) {
		snprintf(why, len, "dump ended at %lld records, %llu came",
		    (long long)n, (unsigned long long)rx->seq);
		return -1;
	}
	return 0;
}

void
rx_free(struct rx_stream *rx)
{
	if (rx->partial)
		sk_record_clear(&rx->rec);
	rx->partial = 0;
}

/* COMMIT: in ready, a workload that cannot start here is found now,
 * while the source can still roll back (ABORTED, with the reason). */
static void
take_commit(struct mig *m)
{
	if (m->state == MD_READY && !m->ck && m->live.pid <= 0 &&
	    workload_ready(m, "workload ready to start") < 0)
		return;
	mig_event(m, ME_RX_COMMIT);
}

/* The whole record leaves m->rx first: a failed restore may free m. */
static void
restore_taken(struct mig *m, uint64_t seq)
{
	struct sk_record rec = m->rx.rec;

	memset(&m->rx.rec, 0, sizeof(m->rx.rec));
	m->rx.partial = 0;
	restore_whole(m, &rec, seq);
	sk_record_clear(&rec);
}

static void
restore_record(struct mig *m, json_t *msg)
{
	json_int_t seq;
	json_t *r;
	char why[300];
	int rc;

	if ((rc = rx_record(&m->rx, msg, &seq, &r, why, sizeof(why))) < 0) {
		mig_fail(m, "%s", why);
		return;
	}
	if ((uint64_t)seq > m->sock_budget) {
		mig_fail(m, "%s sent more than %llu sockets, the most this host "
		    "took it for (allow %s sockets, and its open files)",
		    m->peer, (unsigned long long)m->sock_budget, m->peer);
		return;
	}
	mig_count_kind(&m->kinds, r);
	if (ckpt_dst_holders(m, m->rx.rec.u.sock->id,
	    json_object_get(msg, "holders"), why, sizeof(why)) < 0) {
		if (rc == 0)
			rx_free(&m->rx);
		else
			sk_record_clear(&m->rx.rec);
		mig_fail(m, "%s", why);
		return;
	}
	if (rc == 0)
		return;
	restore_taken(m, (uint64_t)seq);
}

static void
restore_chunk(struct mig *m, json_t *msg)
{
	json_int_t seq;
	char why[300];
	int rc;

	if ((rc = rx_chunk(&m->rx, msg, &seq, why, sizeof(why))) < 0) {
		mig_fail(m, "%s", why);
		return;
	}
	if (rc == 0)
		return;
	restore_taken(m, (uint64_t)seq);
}

void
dst_rx(struct mig *m, int type, json_t *msg)
{
	char why[300];

	switch (type) {
	case MSG_MIG_RECORD:
		if (m->state == MD_PREPARED)
			restore_record(m, msg);
		break;
	case MSG_MIG_CHUNK:
		if (m->state == MD_PREPARED)
			restore_chunk(m, msg);
		break;
	case MSG_MIG_DUMP_DONE:
		if (m->state != MD_PREPARED)
			break;
		if (rx_dump_done(&m->rx, msg, why, sizeof(why)) == -1) {
			mig_fail(m, "%s", why);
			break;
		}
		if (m->ck) {	/* READY once CRIU restored the program */
			if (m->ck_helper == NULL && m->ck_root == 0)
				ckpt_dst_restore(m, msg);
			break;
		}
		mig_event(m, ME_RX_DUMP_DONE);
		break;
	case MSG_MIG_IMAGE:
		if (m->state == MD_PREPARED && m->ck_helper == NULL &&
		    ckpt_dst_image(m, msg, why, sizeof(why)) < 0)
			mig_fail(m, "%s", why);
		break;
	case MSG_MIG_COMMIT:
		if (m->t_commit_rx == 0)	/* for since_commit_ms */
			m->t_commit_rx = mono_ms();
		/* fault: a destination that hears COMMIT and never answers */
		if (m->state == MD_READY && mig_fault("dst-commit-hold")) {
			m->commit_held = 1;	/* and no timeout either */
			break;
		}
		/* fault: COMMIT taken in 3 s later, for a link cut then */
		if (m->state == MD_READY &&
		    mig_pause(m, "dst-commit-pause", take_commit))
			break;
		take_commit(m);
		break;
	case MSG_MIG_PACKETS:
		/* kept by the source's lock: between the dump and COMMIT */
		if (m->state != MD_PREPARED && m->state != MD_READY)
			break;
		if (replay_dst_rx(m, msg, why, sizeof(why)) == -1)
			mig_fail(m, "%s", why);
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
	if (m->live_ev != NULL)
		event_free(m->live_ev);
	m->live_ev = NULL;
	launch_cancel(&m->live);
	ckpt_cleanup(m);
	probe_done(m);
	rx_free(&m->rx);
	migdst_free(&m->dst);	/* discards whatever is still built */
	free(m->nd);
	m->nd = NULL;
}

void
dst_discard_leftover(const char *ns)
{
	char veth[IFNAMSIZ], err[256];

	if (ns_exists(ns))
		return;		/* it went live: not a leftover */
	snprintf(veth, sizeof(veth), "v%s", ns);
	if (nsbuild_delete(ns, veth, err, sizeof(err)) < 0)
		log_warnx("%s: %s", ns, err);
	ns_cgroup_remove(ns);
}
