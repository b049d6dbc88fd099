/*
 * The source half of a migration: "migctl migrate NS HOST" checks and
 * pre-copies while the service runs; at PREPARED it freezes, locks and
 * collects, then streams one socket record at a time from the event
 * loop, paced by the channel's output queue, so the destination restores
 * each while the next is dumped.  COMMITTED kills the tasks with their
 * sockets still in repair and deletes the namespace; anything before
 * COMMIT rolls back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "clock.h"
#include "control.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "ns.h"
#include "nsdump.h"
#include "nslock.h"
#include "peer.h"

#define STEP_BUDGET_MS	20	/* of dumping, before the loop runs again */
#define GATE_MAX_MS	1000	/* for handshakes under way to finish */
#define GATE_POLL_MS	10

static void	work_cb(evutil_socket_t, short, void *);
static void	gate_wait(struct mig *);

static int
append_record(json_t *rec, void *arg)
{
	return json_array_append_new(arg, rec);
}

int
mig_ctl_migrate(json_t *req, json_t **data, char *msg, size_t msglen)
{
	const char *ns, *host;
	char why[512], cg[PATH_MAX + 32], id[MIG_ID_MAX];
	json_error_t jerr;
	json_t *records;
	struct mig *m;
	struct timeval zero = { 0, 0 };
	struct timespec now;

	(void)data;
	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s,s:s}", "ns", &ns,
	    "host", &host) == -1) {
		snprintf(msg, msglen, "migrate: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if (nsarg_name(ns, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	if (!ns_exists(ns)) {
		snprintf(msg, msglen, "no namespace '%s'", ns);
		return RES_NO_SUCH_NS;
	}
	if (config_find_peer(&migrd.conf, host) == NULL) {
		snprintf(msg, msglen, "'%.64s' is not a configured peer", host);
		return RES_UNKNOWN_PEER;
	}
	if (mig_find_ns(ns) != NULL) {
		snprintf(msg, msglen, "a migration of %s is under way", ns);
		return RES_BUSY;
	}
	if (!peer_is_up(host)) {
		snprintf(msg, msglen, "no session with %s (see migctl peers)",
		    host);
		return RES_PEER_DOWN;
	}
	snprintf(cg, sizeof(cg), "%s/%s", migrd.conf.cgroup_root, ns);
	if (migsrc_check(ns, cg, why, sizeof(why)) < 0) {
		snprintf(msg, msglen, "%s cannot move, nothing changed: %s",
		    ns, why);
		history_add("migrate", "%s -> %s refused: %s", ns, host, why);
		return RES_REFUSED;
	}
	/* pre-copy: the namespace's links, addresses and routes */
	if ((records = json_array()) == NULL ||
	    nsdump_emit(ns, append_record, records) < 0) {
		json_decref(records);
		snprintf(msg, msglen, "cannot read the network of %s", ns);
		return RES_SYSTEM;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(id, sizeof(id), "%s-%s-%lld%03ld", migrd.conf.hostname, ns,
	    (long long)now.tv_sec, now.tv_nsec / 1000000);
	if ((m = mig_new(MIG_SOURCE, id, ns, host)) == NULL) {
		json_decref(records);
		snprintf(msg, msglen, "out of memory");
		return RES_SYSTEM;
	}
	m->ctl = control_current();
	m->records = records;
	m->desc = ns_describe(ns);
	m->argv = ns_workload_argv(ns);
	/* the first event runs from the loop, once migctl's connection
	 * waits for the deferred answer */
	if ((m->work = evtimer_new(migrd.base, work_cb, m)) == NULL ||
	    evtimer_add(m->work, &zero) == -1) {
		snprintf(msg, msglen, "cannot schedule the migration");
		mig_free(m);
		return RES_SYSTEM;
	}
	mig_progress(m, "check", "every socket of %s can move; %zu network "
	    "records", ns, json_array_size(records));
	return CTL_DEFERRED;
}

static int
emit_record(json_t *rec, void *arg)
{
	struct mig *m = arg;
	size_t before = peer_output_len(m->peer);

	mig_count_kind(&m->kinds, rec);
	if (mig_send(m, MSG_MIG_RECORD, json_pack("{s:I,s:o}", "seq",
	    (json_int_t)(m->seq + 1), "record", rec)) == -1)
		return -1;
	m->seq++;
	m->streamed += peer_output_len(m->peer) - before;
	return 0;
}

static void
dump_done(struct mig *m)
{
	m->ms[PH_DUMP] = m->src.fig.dump_ms;
	m->queued = m->src.fig.queued_bytes;
	m->kinds.accepted = (unsigned)m->src.fig.accepted;
	m->t_dump_done = mono_ms();
	if (mig_send(m, MSG_MIG_DUMP_DONE, json_pack("{s:I}", "records",
	    (json_int_t)m->seq)) == -1) {
		mig_fail(m, "channel to %s lost during the dump", m->peer);
		return;
	}
	mig_progress(m, "dump", "%llu sockets dumped and streamed, %llu "
	    "bytes of records", (unsigned long long)m->seq,
	    (unsigned long long)m->streamed);
	if (mig_fault("channel-drop"))
		peer_drop(m->peer, "fault injected: channel-drop");
}

/* One turn of the dump: sockets until the budget or a full queue. */
static void
dump_step(struct mig *m)
{
	struct timeval later = { 0, 2000 }, now = { 0, 0 };
	double t0 = mono_ms();
	int rc;

	for (;;) {
		if (peer_output_len(m->peer) > migrd.conf.max_queue / 2) {
			evtimer_add(m->work, &later);	/* let it drain */
			return;
		}
		if (mono_ms() - t0 > STEP_BUDGET_MS) {
			evtimer_add(m->work, &now);
			return;
		}
		if ((rc = migsrc_dump_next(&m->src, emit_record, m)) < 0) {
			mig_fail(m, "dump failed after %llu sockets",
			    (unsigned long long)m->seq);
			return;
		}
		if (rc > 0 && m->seq * 2 >= m->src.set.nsocks &&
		    mig_fault("src-dump")) {
			mig_fail(m, "fault injected during the dump");
			return;
		}
		if (rc == 0)
			break;
	}
	dump_done(m);
}

static void
work_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;

	(void)fd;
	(void)what;
	if (!m->started) {
		m->started = 1;
		mig_event(m, ME_CMD_MIGRATE);
		return;
	}
	if (m->state == MS_FROZEN && m->gating)
		gate_wait(m);
	else if (m->state == MS_FROZEN && m->have_src)
		dump_step(m);
}

/* After a restart the sockets are taken back from the frozen tasks. */
static int
reattach(struct mig *m)
{
	if (m->have_src)
		return 0;
	if (!m->restarted)
		return -1;	/* nothing was frozen */
	if (migsrc_reattach(&m->src, m->ns, m->cgroup) < 0) {
		log_warnx("migration %s: cannot take back the sockets of %s",
		    m->id, m->ns);
		migsrc_free(&m->src);
		return -1;
	}
	m->have_src = 1;
	return 0;
}

static void
freeze_now(struct mig *m)
{
	struct timeval now = { 0, 0 };
	const struct migsrc_figures *f = &m->src.fig;

	m->t_freeze = mono_ms();
	m->was_frozen = 1;
	if (migsrc_freeze(&m->src, m->ns, m->cgroup, MIG_FREEZE_MS) < 0) {
		mig_fail(m, "cannot freeze and lock %s", m->ns);
		return;
	}
	m->have_src = 1;
	m->ms[PH_FREEZE] = f->freeze_ms + f->lock_ms + f->collect_ms;
	mig_progress(m, "freeze", "%zu tasks frozen, traffic locked, %zu "
	    "sockets collected (%.1f ms)", m->src.set.ntasks,
	    m->src.set.nsocks, m->ms[PH_FREEZE]);
	if (mig_fault("src-freeze")) {
		mig_fail(m, "fault injected after the freeze");
		return;
	}
	evtimer_add(m->work, &now);
}

/* Wait (from the loop) until no handshake is under way, then freeze. */
static void
gate_wait(struct mig *m)
{
	struct timeval poll = { 0, GATE_POLL_MS * 1000 };
	double waited = mono_ms() - m->t_gate;
	int n = nslock_synrecv(m->ns);

	if (n > 0 && waited < GATE_MAX_MS) {
		evtimer_add(m->work, &poll);
		return;
	}
	m->gating = 0;
	if (n != 0)
		log_warnx("migration %s: %d handshakes still under way after "
		    "%.0f ms: their clients will have to retry", m->id, n,
		    waited);
	mig_progress(m, "gate", "new connections held back, handshakes "
	    "under way finished (%.1f ms)", waited);
	freeze_now(m);
}

/* The gate first: the service runs on, only new SYNs are dropped. */
static void
freeze_dump(struct mig *m)
{
	m->ms[PH_PRECOPY] = mig_now(m);
	if (nslock_gate(m->ns) < 0) {
		mig_fail(m, "cannot hold back new connections to %s", m->ns);
		return;
	}
	m->gating = 1;
	m->t_gate = mono_ms();
	gate_wait(m);
}

void
src_action(struct mig *m, unsigned action)
{
	switch (action) {
	case MA_SEND_PREPARE:
		if (mig_send(m, MSG_MIG_PREPARE, json_pack("{s:s,s:s,s:O,s:O,"
		    "s:o*}", "ns", m->ns, "from", migrd.conf.hostname,
		    "namespace", m->desc, "records", m->records, "workload",
		    m->argv ? json_pack("{s:O}", "argv", m->argv) : NULL)) ==
		    -1)
			mig_fail(m, "cannot send prepare to %s", m->peer);
		break;
	case MA_FREEZE_DUMP:
		freeze_dump(m);
		break;
	case MA_ROLLBACK:
		m->gating = 0;
		if (reattach(m) == 0) {
			if (migsrc_rollback(&m->src, MIG_FREEZE_MS) < 0)
				log_warnx("migration %s: rollback of %s was "
				    "not clean", m->id, m->ns);
			migsrc_free(&m->src);
			m->have_src = 0;
		} else if (nslock_release(m->ns) < 0) {
			/* failed before or in the freeze: the gate may stay */
			log_warnx("migration %s: %s may still be gated",
			    m->id, m->ns);
		}
		mig_progress(m, "rollback", "%s resumed here: repair off, "
		    "unlocked, thawed", m->ns);
		break;
	case MA_SEND_COMMIT:
		if (m->t_commit == 0) {
			m->t_commit = mono_ms();
			mig_progress(m, "commit", "COMMIT sent to %s", m->peer);
		}
		mig_send(m, MSG_MIG_COMMIT, NULL);
		break;
	case MA_KILL_DELETE:
		if (reattach(m) == 0) {
			if (migsrc_commit(&m->src, m->hostif, MIG_FREEZE_MS) < 0)
				log_warnx("migration %s: cleaning %s was not "
				    "complete", m->id, m->ns);
			migsrc_free(&m->src);
			m->have_src = 0;
		}
		ns_forget(m->ns);
		mig_progress(m, "done", "tasks killed with their sockets in "
		    "repair, %s deleted here", m->ns);
		break;
	case MA_SEND_ABORT:
		mig_send(m, MSG_MIG_ABORT, NULL);
		break;
	default:
		log_warnx("migration %s: action %#x is not a source's", m->id,
		    action);
		break;
	}
}

static void
copy_reason(struct mig *m, json_t *msg, const char *dflt)
{
	const char *r = json_string_value(json_object_get(msg, "reason"));

	snprintf(m->reason, sizeof(m->reason), "%.40s: %.200s", m->peer,
	    r != NULL ? r : dflt);
}

void
src_rx(struct mig *m, int type, json_t *msg)
{
	json_int_t n = -1, pid = 0;
	double ms = -1;

	switch (type) {
	case MSG_MIG_PREPARED:
		json_unpack(msg, "{s?F}", "build_ms", &ms);
		if (m->state == MS_PREPARING)
			mig_progress(m, "prepared", "%s built %s, locked and "
			    "detached (%.1f ms)", m->peer, m->ns, ms);
		mig_event(m, ME_RX_PREPARED);
		break;
	case MSG_MIG_REFUSED:
		copy_reason(m, msg, "refused");
		mig_event(m, ME_RX_REFUSED);
		break;
	case MSG_MIG_FAILED:
		copy_reason(m, msg, "failed");
		mig_event(m, ME_RX_FAILED);
		break;
	case MSG_MIG_READY:
		if (m->state != MS_FROZEN || m->t_dump_done == 0) {
			log_warnx("migration %s: READY before the dump ended",
			    m->id);
			mig_fail(m, "%s sent READY out of turn", m->peer);
			break;
		}
		if (json_unpack(msg, "{s:I,s:F}", "sockets", &n, "restore_ms",
		    &ms) == -1 || n != (json_int_t)m->seq) {
			mig_fail(m, "%s restored %lld of %llu sockets", m->peer,
			    (long long)n, (unsigned long long)m->seq);
			break;
		}
		m->ms[PH_RESTORE] = ms;
		m->ms[PH_TRANSFER] = mono_ms() - m->t_dump_done;
		mig_progress(m, "ready", "%s restored %lld sockets (%.1f ms)",
		    m->peer, (long long)n, ms);
		mig_event(m, ME_RX_READY);
		break;
	case MSG_MIG_COMMITTED:
		json_unpack(msg, "{s?F,s?I}", "live_ms", &ms, "pid", &pid);
		/* the service runs again, over there */
		if (m->t_commit > 0 && m->ms[PH_COMMIT] < 0)
			m->ms[PH_COMMIT] = mono_ms() - m->t_commit;
		if (m->t_freeze > 0 && m->ms[PH_DOWNTIME] < 0)
			m->ms[PH_DOWNTIME] = mono_ms() - m->t_freeze;
		if (m->state == MS_COMMITTING || m->state == MS_IN_DOUBT)
			mig_progress(m, "live", "%s is live on %s, workload pid "
			    "%lld (%.1f ms)", m->ns, m->peer, (long long)pid,
			    ms);
		mig_event(m, ME_RX_COMMITTED);
		break;
	case MSG_MIG_ABORTED:
		snprintf(m->reason, sizeof(m->reason), "%s discarded the "
		    "migration (ABORTED)", m->peer);
		mig_event(m, ME_RX_ABORTED);
		break;
	default:
		log_warnx("migration %s: %s from %s is not for a source",
		    m->id, migr_msgname(type), m->peer);
		break;
	}
}

void
src_cleanup(struct mig *m)
{
	/* neither committed nor rolled back (migrd stops in doubt): the
	 * sockets stay in repair for the next migrd */
	if (m->have_src)
		migsrc_free(&m->src);
	m->have_src = 0;
}
