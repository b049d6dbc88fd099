/* SPDX-License-Identifier: ISC */
/*
 * The table of migrations under way, the state machine's driver, the
 * state file, and the control commands that act on a migration.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "control.h"
#include "giveback.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "ns.h"
#include "cgroup.h"
#include "peer.h"
#include "statefile.h"
#include "committed.h"

#define STATE_FILE	"migrations.json"
#define STATE_VERSION	2	/* 2: committed as {peer, mig} */

struct mig_list		migs = TAILQ_HEAD_INITIALIZER(migs);
static int		persist_clean = 1;	/* the file says what we hold */
/* kept open for the state file: closed just before each write, so a
 * process out of descriptors can still write it (two are needed in
 * turn: the new file, then its directory) */
static int		spare_fd = -1;
static struct event	*still_ev;	/* "still" reports, every second */
static const char	*fault_spec;
#define FDS_HIGH	1100	/* fault fds-high: descriptors above it */

double
mig_now(const struct mig *m)
{
	return mono_ms() - m->t0;
}

/* MIGRD_FAULT="point,point": failures the lab tests inject. */
int
mig_fault(const char *point)
{
	const char *p = fault_spec;
	size_t n = strlen(point);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, point, n) == 0 && (p[n] == ',' || p[n] == '\0')) {
			log_warnx("fault injected: %s", point);
			return 1;
		}
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return 0;
}

static void
pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;

	(void)fd;
	(void)what;
	event_free(m->pause);
	m->pause = NULL;
	log_warnx("migration %s: the fault's pause is over", m->id);
	m->pause_fn(m);
}

/*
 * Fault POINT (a "-pause" one): the step waits MIG_PAUSE_MS on a timer,
 * the event loop running on, then pause_fn(m) takes it.  Once a
 * migration, so that the step it delays runs as ever afterwards; a test
 * cuts the link in that window, at a known point of the protocol.
 */
int
mig_pause(struct mig *m, const char *point, void (*fn)(struct mig *))
{
	struct timeval tv = { MIG_PAUSE_MS / 1000, (MIG_PAUSE_MS % 1000) * 1000 };

	if (m->pause != NULL)
		return 1;		/* already waiting */
	if (m->paused || !mig_fault(point))
		return 0;
	if ((m->pause = evtimer_new(migrd.base, pause_cb, m)) == NULL ||
	    evtimer_add(m->pause, &tv) < 0) {
		log_warnx("%s: cannot arm the pause of %s", m->id, point);
		if (m->pause != NULL)
			event_free(m->pause);
		m->pause = NULL;
		return 0;
	}
	m->paused = 1;
	m->pause_fn = fn;
	return 1;
}

static char	persist_err[PATH_MAX + 64];	/* why the last write failed */

/* Fault "persist-emfile": every descriptor taken, as at EMFILE. */
static int *
hog_fds(size_t *n)
{
	struct rlimit rl;
	int *fds, fd;

	*n = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 65536 ||
	    (fds = calloc(rl.rlim_cur, sizeof(*fds))) == NULL)
		return NULL;
	while (*n < rl.rlim_cur &&
	    (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fds[(*n)++] = fd;
	return fds;
}

/* What a restart must find: migrations in a durable state, a
 * destination's half-built namespace (to clean it), and the ids this
 * host went live with and their sources have not forgotten (committed.h). */
static int
persist(void)
{
	char path[PATH_MAX + 32], err[PATH_MAX + 64];
	json_t *root, *a, *c;
	struct mig *m;
	size_t nhog = 0;
	int rc, *hog;

	snprintf(path, sizeof(path), "%s/%s", migrd.conf.state_dir,
	    STATE_FILE);
	a = json_array();
	TAILQ_FOREACH(m, &migs, entry) {
		if (!migfsm_durable(m->state) && m->state != MD_PREPARED &&
		    m->state != MD_READY)
			continue;
		/* "frozen": the source's tasks are (the gate and the wait
		 * for orphans come before the freeze, in state frozen) */
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,"
		    "s:b}", "mig", m->id, "ns", m->ns, "peer", m->peer,
		    "role", m->role == MIG_SOURCE ? "source" : "destination",
		    "state", migfsm_state_name(m->state),
		    "since", (json_int_t)m->since, "frozen",
		    m->role == MIG_SOURCE && (m->have_src || (m->restarted &&
		    m->was_frozen))));
	}
	c = committed_json();
	root = json_pack("{s:i,s:o,s:o}", "version", STATE_VERSION,
	    "migrations", a, "committed", c);
	if (root == NULL) {
		persist_clean = 0;
		return -1;
	}
	hog = mig_fault("persist-emfile") ? hog_fds(&nhog) : NULL;
	if (spare_fd >= 0)
		close(spare_fd);
	if ((rc = statefile_write(path, root, err, sizeof(err))) < 0) {
		log_warnx("migrations not saved: %s", err);
		snprintf(persist_err, sizeof(persist_err), "%s", err);
	}
	while (nhog > 0)
		close(hog[--nhog]);
	free(hog);
	if ((spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		log_warn("no spare descriptor for the state file");
	persist_clean = rc == 0;
	json_decref(root);
	return rc;
}

static void	arm_timer(struct mig *);
static void	send_forget(const char *, const char *);

/*
 * Write what the step st from m's state leads to, if it is to be written
 * (MA_PERSIST; a destination's half-built namespace, "prepared", is
 * written by dst_prepare() before the step, refusing if it cannot be).
 * -1 only when
 * a vital state (migfsm_vital()) could not be written: the caller must
 * not take the step.  A state that is not vital is logged and left: what
 * the file still says is one a restart resolves safely (an older durable
 * state of the same migration).  Fault "persist-STATE" makes the write of
 * STATE fail.
 */
static int
save_step(struct mig *m, const struct mig_step *st)
{
	enum mig_state cur = m->state;
	char fault[64];
	int added = 0, rc;

	if (!(st->actions & MA_PERSIST))
		return 0;
	/* COMMIT taken in ready, the commit point not yet written */
	if (m->role == MIG_DEST && st->next == MD_LIVE &&
	    mig_fault("dst-crash-precommit")) {
		log_warnx("fault injected: dst-crash-precommit: exiting");
		_exit(3);
	}
	m->state = st->next;
	/* going live undone: the id leaves the list in the same write */
	if (m->role == MIG_DEST && cur == MD_LIVE && st->next == MD_IDLE)
		committed_del(m->peer, m->id);
	if (m->role == MIG_DEST && st->next == MD_LIVE &&
	    !committed_has(m->peer, m->id)) {
		if (committed_add(m->peer, m->id) == -1) {
			m->state = cur;
			return migfsm_vital(m->role, st->next) ? -1 : 0;
		}
		added = 1;
	}
	snprintf(fault, sizeof(fault), "persist-%s",
	    migfsm_state_name(st->next));
	rc = mig_persist(fault);
	if (rc == -1 && added)
		committed_del(m->peer, m->id);
	m->state = cur;
	return rc == -1 && migfsm_vital(m->role, st->next) ? -1 : 0;
}

int
mig_check_target(const char *ns, const char *host, char *msg, size_t msglen)
{
	if (nsarg_name(ns, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	if (!ns_exists(ns)) {
		snprintf(msg, msglen, "no namespace '%s'", ns);
		return RES_NO_SUCH_NS;
	}
	if (host != NULL && config_find_peer(&migrd.conf, host) == NULL) {
		snprintf(msg, msglen, "'%.64s' is not a configured peer", host);
		return RES_UNKNOWN_PEER;
	}
	return RES_OK;
}

int
mig_persist(const char *fault)
{
	if (fault != NULL && mig_fault(fault)) {
		snprintf(persist_err, sizeof(persist_err), "fault injected");
		return -1;
	}
	return persist();
}

const char *
mig_persist_error(void)
{
	return persist_err;
}

double
mig_ms1(double ms)
{
	return (double)(long long)(ms * 10) / 10;
}

void
mig_arm_timer(struct mig *m)
{
	arm_timer(m);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;

	(void)fd;
	(void)what;
	if (m->commit_held) {		/* fault dst-commit-hold: mute */
		arm_timer(m);
		return;
	}
	if (m->reason[0] == '\0' && m->state != MS_COMMITTING &&
	    m->state != MS_IN_DOUBT)
		snprintf(m->reason, sizeof(m->reason), "no word from %s in "
		    "%u s (%s)", m->peer, migrd.conf.migrate_timeout,
		    migfsm_state_name(m->state));
	/* committing: a destination that is up has the time a phase has
	 * to answer (going live takes a while), before any doubt */
	if (m->state == MS_COMMITTING && peer_is_up(m->peer) &&
	    m->t_commit > 0 && mono_ms() - m->t_commit <
	    migrd.conf.migrate_timeout * 1000.0) {
		mig_event(m, ME_COMMIT_WAIT);
		return;
	}
	mig_event(m, ME_TIMEOUT);
}

/* Each waiting state has a deadline. */
static void
arm_timer(struct mig *m)
{
	struct timeval tv;
	unsigned ms;

	switch (m->state) {
	case MS_PREPARING:
	case MD_READY:
		ms = migrd.conf.migrate_timeout * 1000;
		break;
	case MS_FROZEN:
	case MD_PREPARED:
		/* before its freeze the source may hold new connections
		 * back, wait for orphans, lock and wait for its tasks to
		 * rest and for what they closed meanwhile (orphan-wait and
		 * settle-wait, by this host's own settings); the source
		 * re-arms at the freeze */
		ms = migrd.conf.migrate_timeout * 1000;
		if (m->role == MIG_DEST || !m->have_src)
			ms += GATE_MAX_MS + 2 * migrd.conf.orphan_ms +
			    migrd.conf.settle_ms;
		break;
	case MS_COMMITTING:
	case MS_IN_DOUBT:
		ms = migrd.conf.commit_ms;
		break;
	default:
		evtimer_del(m->timer);
		return;
	}
	tv = ms_timeval((long)ms);
	evtimer_add(m->timer, &tv);
}

struct mig *
mig_new(enum mig_role role, const char *id, const char *ns, const char *peer)
{
	struct mig *m;
	int i;

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		log_warn("%s: calloc", __func__);
		return NULL;
	}
	m->role = role;
	m->state = migfsm_initial(role);
	TAILQ_INIT(&m->outq);
	m->rq_fd = -1;
	m->rq_out.fd = -1;
	replay_list_init(&m->rq, 0, 0);
	snprintf(m->id, sizeof(m->id), "%s", id);
	snprintf(m->ns, sizeof(m->ns), "%s", ns);
	snprintf(m->peer, sizeof(m->peer), "%s", peer);
	snprintf(m->hostif, sizeof(m->hostif), "v%.14s", ns);
	/* cgroup_root is shorter than PATH_MAX - 16 (config.c) */
	if (snprintf(m->cgroup, sizeof(m->cgroup), "%.*s/%s",
	    PATH_MAX - 16, migrd.conf.cgroup_root, m->ns) < 0)
		m->cgroup[0] = '\0';
	m->since = time(NULL);
	m->t0 = mono_ms();
	m->t_said = m->t_phase = m->t0;
	snprintf(m->said, sizeof(m->said), "start");
	for (i = 0; i < PH__MAX; i++)
		m->ms[i] = -1;
	m->timer = evtimer_new(migrd.base, timer_cb, m);
	if (m->timer == NULL) {
		log_warnx("%s: evtimer_new failed", __func__);
		free(m);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&migs, m, entry);
	return m;
}

void
mig_free(struct mig *m)
{
	TAILQ_REMOVE(&migs, m, entry);
	event_free(m->timer);
	if (m->kill_ev != NULL)
		event_free(m->kill_ev);
	if (m->work != NULL)
		event_free(m->work);
	if (m->pause != NULL)
		event_free(m->pause);
	if (m->role == MIG_SOURCE)
		src_cleanup(m);
	else
		dst_cleanup(m);
	replay_close(m);
	json_decref(m->desc);
	json_decref(m->argv);
	json_decref(m->records);
	free(m);
}

struct mig *
mig_find_id(const char *id, const char *peer)
{
	struct mig *m;

	TAILQ_FOREACH(m, &migs, entry)
		if (strcmp(m->id, id) == 0 && strcmp(m->peer, peer) == 0)
			return m;
	return NULL;
}

struct mig *
mig_find_ns(const char *ns)
{
	struct mig *m;

	TAILQ_FOREACH(m, &migs, entry)
		if (strcmp(m->ns, ns) == 0)
			return m;
	return NULL;
}

int
mig_busy(const char *ns)
{
	return mig_find_ns(ns) != NULL;
}

int
mig_send(struct mig *m, int type, json_t *extra)
{
	return mig_send_tail(m, type, extra, NULL, 0);
}

int
mig_send_tail(struct mig *m, int type, json_t *extra, const void *tail,
    size_t taillen)
{
	json_t *p = extra != NULL ? extra : json_object();

	if (p == NULL || json_object_set_new(p, "mig", json_string(m->id)))
		return -1;
	if ((tail != NULL ? peer_send_tail(m->peer, type, p, tail, taillen) :
	    peer_send(m->peer, type, p)) == -1) {
		log_warnx("migration %s: cannot send %s to %s", m->id,
		    migr_msgname(type), m->peer);
		return -1;
	}
	return 0;
}

/*
 * A phase can outlast migctl's wait for a report (60 s: a dump of
 * 10,000 sockets with 87 MB queued in a TCG guest did, and migctl gave
 * up on a move that went on and succeeded).  A migration someone waits
 * for says it is still at work every MIG_STILL_MS without a report, so
 * that silence means a migrd that is stuck, not a long phase.
 */
#define MIG_STILL_MS	10000

static void
still_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m;
	double now = mono_ms();

	(void)fd;
	(void)what;
	(void)arg;
	TAILQ_FOREACH(m, &migs, entry)
		if (m->ctl != 0 && !m->answered &&
		    now - m->t_said >= MIG_STILL_MS)
			mig_progress(m, "still", "%s, %.0f s since \"%s\"",
			    migfsm_state_name(m->state), (now - m->t_phase) /
			    1000.0, m->said);
}

void
mig_progress(struct mig *m, const char *phase, const char *fmt, ...)
{
	char text[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_info("migration %s: %s: %s", m->id, phase, text);
	m->t_said = mono_ms();
	if (strcmp(phase, "still") != 0) {
		m->t_phase = m->t_said;
		snprintf(m->said, sizeof(m->said), "%s", phase);
	}
	if (m->ctl != 0 && !m->answered)
		control_progress(m->ctl, json_pack("{s:s,s:f,s:s}", "phase",
		    phase, "at_ms", mig_now(m), "text", text));
}

/* A local failure: its reason is kept, the machine hears of it after
 * the actions of the current step (the rest of which are skipped). */
void
mig_fail(struct mig *m, const char *fmt, ...)
{
	va_list ap;

	if (m->reason[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
		va_end(ap);
	}
	log_warnx("migration %s: %s", m->id, m->reason);
	m->failed = 1;
	mig_event(m, ME_LOCAL_FAIL);
}

void
mig_count_kind(struct mig_kinds *k, const json_t *rec)
{
	const char *proto = json_string_value(json_object_get(rec, "proto"));
	const char *st = json_string_value(json_object_get(rec, "state"));

	k->total++;
	if (json_object_get(json_object_get(rec, "tcp"), "path") != NULL)
		k->path++;
	if (proto != NULL && strcmp(proto, "udp") == 0)
		k->udp++;
	else if (st == NULL)
		k->other++;
	else if (strcmp(st, "LISTEN") == 0)
		k->listen++;
	else if (strcmp(st, "ESTABLISHED") == 0)
		k->established++;
	else if (strcmp(st, "FIN_WAIT1") == 0 ||
	    strcmp(st, "FIN_WAIT2") == 0 || strcmp(st, "CLOSE_WAIT") == 0 ||
	    strcmp(st, "LAST_ACK") == 0 || strcmp(st, "CLOSING") == 0)
		k->closing++;
	else
		k->other++;	/* bound, unconnected */
}

static json_t *
report_json(const struct mig *m, const char *outcome)
{
	static const char *const names[PH__MAX] = {
		[PH_PRECOPY] = "precopy", [PH_FREEZE] = "freeze",
		[PH_DUMP] = "dump", [PH_TRANSFER] = "transfer",
		[PH_RESTORE] = "restore", [PH_COMMIT] = "commit",
		[PH_DOWNTIME] = "downtime", [PH_TOTAL] = "total",
	};
	json_t *r, *ms = json_object();
	int i;

	for (i = 0; ms != NULL && i < PH__MAX; i++)
		if (m->ms[i] >= 0)
			json_object_set_new(ms, names[i],
			    json_real(mig_ms1(m->ms[i])));
	r = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i,"
	    "s:i,s:i},s:{s:I,s:I,s:I},s:o}",
	    "ns", m->ns, "from", migrd.conf.hostname, "to", m->peer,
	    "mig", m->id, "outcome", outcome,
	    "sockets", "total", m->kinds.total, "tcp_listen", m->kinds.listen,
	    "tcp_established", m->kinds.established,
	    "tcp_closing", m->kinds.closing, "udp", m->kinds.udp,
	    "other", m->kinds.other, "accepted", m->kinds.accepted,
	    "reset", m->kinds.reset, "with_path", m->kinds.path,
	    "bytes", "queued", (json_int_t)m->queued,
	    "streamed", (json_int_t)m->streamed, "encoded",
	    (json_int_t)m->encoded, "ms", ms);
	if (r != NULL && m->reason[0] != '\0')
		json_object_set_new(r, "reason", json_string(m->reason));
	if (r != NULL)
		json_object_set_new(r, "lock", replay_report(m));
	/* checkpoint mode: CRIU's part (source) */
	if (r != NULL && m->ck)
		json_object_set_new(r, "checkpoint", ckpt_report(m));
	return r;
}

/* Tell migctl and the history how it ended (source side). */
static void
answer(struct mig *m, int code, const char *outcome, const char *fmt, ...)
{
	char text[400];
	json_t *r;
	va_list ap;

	m->ms[PH_TOTAL] = mig_now(m);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	r = report_json(m, outcome);
	history_add("migrate", "%s", text);
	history_attach(r);
	if (m->ctl != 0 && !m->answered)
		control_finish(m->ctl, code, text, r);
	m->answered = 1;
	json_decref(r);
}

/* After a step: is the migration over?  1 if m was freed. */
static int
settle(struct mig *m, enum mig_state old)
{
	char peer[CONF_NAME_MAX], id[MIG_ID_MAX];
	int done;

	if (m->role == MIG_SOURCE) {
		if (m->state == MS_RUNNING && old != MS_RUNNING) {
			if (m->was_frozen)
				answer(m, RES_ROLLED_BACK, "rolled-back",
				    "%s stays on %s: rolled back: %s", m->ns,
				    migrd.conf.hostname, m->reason[0] ?
				    m->reason : "cancelled");
			else
				/* the result's name says "nothing changed" */
				answer(m, RES_REFUSED, "refused", "%s stays on "
				    "%s: %s", m->ns,
				    migrd.conf.hostname, m->reason[0] ?
				    m->reason : "cancelled");
		} else if (m->state == MS_DONE) {
			if (m->kill_ev != NULL)
				return 0;	/* its tasks are dying */
			answer(m, RES_OK, "moved", "%s moved %s -> %s", m->ns,
			    migrd.conf.hostname, m->peer);
		} else if (m->state == MS_IN_DOUBT && !m->answered) {
			answer(m, RES_IN_DOUBT, "in-doubt", "%s in doubt: "
			    "COMMIT sent to %s, no answer yet; the namespace "
			    "stays frozen and locked here until %s answers "
			    "or \"migctl resolve %s rollback|done\"", m->ns,
			    m->peer, m->peer, m->ns);
			return 0;
		} else
			return 0;
	} else {
		if (m->state == MD_IDLE)
			history_add("migrate", "%s from %s discarded: %s",
			    m->ns, m->peer, m->reason[0] ? m->reason :
			    "aborted by the source");
		else if (m->state == MD_LIVE && m->going)
			return 0;	/* its sockets leave repair */
		else if (m->state == MD_LIVE && !m->failed)	/* not undone */
			history_add("migrate", "%s taken in from %s, live "
			    "(pid %ld)", m->ns, m->peer, (long)m->pid);
		else
			return 0;
	}
	done = m->role == MIG_SOURCE && m->state == MS_DONE;
	snprintf(peer, sizeof(peer), "%s", m->peer);
	snprintf(id, sizeof(id), "%s", m->id);
	mig_free(m);
	persist();
	if (done)
		send_forget(peer, id);
	return 1;
}

int
mig_settle(struct mig *m)
{
	return settle(m, m->state);
}

void
mig_event(struct mig *m, enum mig_event ev)
{
	struct mig_step st;
	enum mig_state old;
	unsigned bit;
	double t_save;
	char written[40];

	if (m->in_step) {
		if (m->nqueue < MIG_QUEUE_MAX)
			m->queue[m->nqueue++] = ev;
		else
			log_warnx("migration %s: event queue full, %s lost",
			    m->id, migfsm_event_name(ev));
		return;
	}
	m->in_step = 1;
	for (;;) {
		st = migfsm_step(m->role, m->state, ev);
		if (st.ignored || (st.actions & MA_REFUSE_CMD)) {
			log_debug("migration %s: %s ignored in %s", m->id,
			    migfsm_event_name(ev), migfsm_state_name(m->state));
		} else {
			old = m->state;
			t_save = mono_ms();
			if (save_step(m, &st) == -1) {
				/* a decision not written is not taken */
				snprintf(m->reason, sizeof(m->reason), "state "
				    "%s not entered: cannot write it: %.200s",
				    migfsm_state_name(st.next), persist_err);
				log_warnx("migration %s: %s", m->id, m->reason);
				ev = ME_LOCAL_FAIL;
				st = migfsm_unsaved(m->role, old);
				(void)save_step(m, &st);
			}
			/* a written step says how long its write took */
			written[0] = '\0';
			if (st.actions & MA_PERSIST)
				snprintf(written, sizeof(written), " (written "
				    "in %.1f ms)", mono_ms() - t_save);
			log_info("migration %s: %s: %s -> %s%s", m->id,
			    migfsm_event_name(ev), migfsm_state_name(old),
			    migfsm_state_name(st.next), written);
			m->state = st.next;
			m->failed = 0;
			/* a new state, or the same one asked again */
			if (st.next != old || ev == ME_TIMEOUT ||
			    ev == ME_COMMIT_WAIT)
				arm_timer(m);
			for (bit = MA_PERSIST << 1; bit <= MA_SEND_ABORTED &&
			    !m->failed; bit <<= 1) {
				if (!(st.actions & bit))
					continue;
				if (m->role == MIG_SOURCE)
					src_action(m, bit);
				else
					dst_action(m, bit);
			}
			if (settle(m, old))
				return;		/* m is gone */
		}
		if (m->nqueue == 0)
			break;
		ev = m->queue[0];
		memmove(m->queue, m->queue + 1, (size_t)--m->nqueue *
		    sizeof(m->queue[0]));
	}
	m->in_step = 0;
}

const char *
mig_msg_id(json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "mig"));

	return id != NULL && strlen(id) < MIG_ID_MAX ? id : NULL;
}

/*
 * Source: the destination may drop its entry for id, as this host will
 * never ask about it again: it holds no migration of that id, and its
 * state file says so (a write that failed may have left the id in
 * doubt there, and a restart would ask).
 */
static void
send_forget(const char *peer, const char *id)
{
	if (!persist_clean) {
		log_warnx("migration %s: no FORGET to %s while the state file "
		    "lags (%s)", id, peer, persist_err);
		return;
	}
	peer_send(peer, MSG_MIG_FORGET, json_pack("{s:s}", "mig", id));
	log_debug("migration %s: FORGET sent to %s", id, peer);
}

/* Destination: the source knows how id ended. */
static void
forget_rx(const char *peer, const char *id)
{
	if (!committed_del(peer, id)) {
		log_debug("migration %s: FORGET from %s: not in the committed "
		    "list", id, peer);
		return;
	}
	log_info("migration %s: FORGET from %s", id, peer);
	(void)persist();
}

static void
replay_committed(const char *id, void *arg)
{
	const char *peer = arg;
	struct mig *m = mig_find_id(id, peer);

	/* going live: COMMITTED goes when it is live, not before (a crash
	 * now would leave the namespace nowhere) */
	if (m != NULL && m->going)
		return;
	peer_send(peer, MSG_MIG_COMMITTED, json_pack("{s:s}", "mig", id));
}

void
mig_rx(const char *peer, int type, json_t *msg)
{
	const char *id = mig_msg_id(msg);
	struct mig *m;

	if (id == NULL) {
		log_warnx("peer %s: %s without a valid mig id, ignored", peer,
		    migr_msgname(type));
		return;
	}
	if (type == MSG_MIG_PREPARE) {
		dst_prepare(peer, msg);
		return;
	}
	if (type == MSG_MIG_CHECK) {
		dst_check(peer, msg);
		return;
	}
	if (type == MSG_MIG_CHECKED) {
		check_rx(peer, msg);
		return;
	}
	if (type == MSG_MIG_FORGET) {
		forget_rx(peer, id);
		return;
	}
	if ((m = mig_find_id(id, peer)) == NULL) {
		if (type == MSG_MIG_COMMIT) {
			/* never known, discarded, or live here */
			peer_send(peer, committed_has(peer, id) ?
			    MSG_MIG_COMMITTED : MSG_MIG_ABORTED,
			    json_pack("{s:s}", "mig", id));
			log_info("migration %s: COMMIT from %s: answered %s",
			    id, peer, committed_has(peer, id) ? "committed" :
			    "aborted");
		} else if (type == MSG_MIG_COMMITTED)
			send_forget(peer, id);
		else if (type == MSG_MIG_PACKETS &&
		    replay_late_rx(peer, id, msg))
			;	/* after COMMIT: what reached the source */
		else
			log_debug("migration %s: %s from %s: not ours",
			    id, migr_msgname(type), peer);
		return;
	}
	if (m->role == MIG_SOURCE)
		src_rx(m, type, msg);
	else
		dst_rx(m, type, msg);
}

void
mig_channel(const char *peer, int up)
{
	struct mig *m, *next;

	/* reconcile: what went live here and that peer has not forgotten
	 * (its answer FORGET, or COMMIT handling if it is in doubt) */
	if (up)
		committed_each(peer, replay_committed, (void *)peer);
	for (m = TAILQ_FIRST(&migs); m != NULL; m = next) {
		next = TAILQ_NEXT(m, entry);
		if (strcmp(m->peer, peer) != 0)
			continue;
		if (!up && m->reason[0] == '\0' && m->state != MS_COMMITTING &&
		    m->state != MS_IN_DOUBT)
			snprintf(m->reason, sizeof(m->reason), "the channel "
			    "to %s went down (%s)", peer,
			    migfsm_state_name(m->state));
		mig_event(m, up ? ME_CHANNEL_UP : ME_CHANNEL_LOST);
	}
}

size_t
mig_rx_limit(const char *peer)
{
	struct mig *m;

	TAILQ_FOREACH(m, &migs, entry)
		if (m->role == MIG_DEST && m->state == MD_PREPARED &&
		    strcmp(m->peer, peer) == 0)
			return MIGR_FRAME_MAX;
	return migrd.conf.max_message;
}

json_t *
mig_status_json(void)
{
	json_t *a = json_array();
	struct mig *m;

	TAILQ_FOREACH(m, &migs, entry)
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}",
		    "ns", m->ns, "role", m->role == MIG_SOURCE ? "source" :
		    "destination", "state", migfsm_state_name(m->state),
		    "peer", m->peer, "mig", m->id,
		    "since", (json_int_t)m->since));
	return a;
}

/* {ns[, outcome]} of cancel and resolve: the migration, or a result. */
static int
ctl_target(json_t *req, int outcome, struct ctl_req *r, char *msg,
    size_t msglen)
{
	json_error_t jerr;
	int rc;

	r->force = 0;
	rc = outcome ? json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s,s:s,"
	    "s?b}", "ns", &r->ns, "outcome", &r->outcome, "force",
	    &r->force) : json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s}",
	    "ns", &r->ns);
	if (rc == -1) {
		snprintf(msg, msglen, "bad request: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if (nsarg_name(r->ns, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	if ((r->mig = mig_find_ns(r->ns)) == NULL) {
		snprintf(msg, msglen, "no migration of '%s' under way", r->ns);
		return RES_INVALID_ARGUMENT;
	}
	return RES_OK;
}

/* Feed an operator's command; RES_OK, or RES_BUSY if refused here. */
static int
ctl_event(struct mig *m, enum mig_event ev, const char *what, char *msg,
    size_t msglen)
{
	struct mig_step st = migfsm_step(m->role, m->state, ev);
	char ns[sizeof(m->ns)];

	if (st.ignored || (st.actions & MA_REFUSE_CMD)) {
		snprintf(msg, msglen, "cannot %s %s: it is %s (%s)", what,
		    m->ns, migfsm_state_name(m->state),
		    m->state == MS_COMMITTING || m->state == MD_LIVE ?
		    "past the commit point" : m->state == MS_IN_DOUBT ?
		    "use resolve" : "not at this stage");
		return RES_BUSY;
	}
	snprintf(ns, sizeof(ns), "%s", m->ns);
	snprintf(m->reason, sizeof(m->reason), "%s by the operator", what);
	mig_event(m, ev);	/* may free m */
	snprintf(msg, msglen, "%s: %s done", ns, what);
	return RES_OK;
}

int
mig_cancel_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	return ctl_target(req, 0, r, msg, msglen);
}

int
mig_ctl_cancel(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	char ns[sizeof(r->mig->ns)];

	(void)data;
	snprintf(ns, sizeof(ns), "%s", r->mig->ns);
	if (src_cancel_check(r->mig)) {
		snprintf(msg, msglen, "%s: cancel done (during the check)", ns);
		return RES_OK;
	}
	return ctl_event(r->mig, ME_CMD_CANCEL, "cancel", msg, msglen);
}

int
mig_resolve_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	int rc;

	if ((rc = ctl_target(req, 1, r, msg, msglen)) != RES_OK)
		return rc;
	if (strcmp(r->outcome, "rollback") != 0 &&
	    strcmp(r->outcome, "done") != 0) {
		snprintf(msg, msglen, "outcome must be rollback or done");
		return RES_INVALID_ARGUMENT;
	}
	if (r->mig->role != MIG_SOURCE) {
		snprintf(msg, msglen, "%s is coming in from %s: resolve it "
		    "there", r->mig->ns, r->mig->peer);
		return RES_BUSY;
	}
	/*
	 * With the peer reachable the peer knows: COMMIT goes to it again
	 * every commit-timeout and its answer ends the doubt, so an
	 * operator's guess could only be wrong (a rollback while it is
	 * live: two copies; "done" when it discarded: none).
	 */
	if (r->mig->state == MS_IN_DOUBT && peer_is_up(r->mig->peer) &&
	    !r->force) {
		snprintf(msg, msglen, "%s is up: it will answer the COMMIT "
		    "sent to it every %u ms, which ends the doubt; if it "
		    "never does, 'migctl resolve %s %s force'", r->mig->peer,
		    migrd.conf.commit_ms, r->mig->ns, r->outcome);
		return RES_BUSY;
	}
	return RES_OK;
}

int
mig_ctl_resolve(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	int done = strcmp(r->outcome, "done") == 0;

	(void)data;
	return ctl_event(r->mig, done ? ME_CMD_RESOLVE_DONE :
	    ME_CMD_RESOLVE_BACK, done ? "resolve (done)" :
	    "resolve (rollback)", msg, msglen);
}

/* One entry of the state file, as a restart finds it. */
static void
recover(json_t *o)
{
	const char *id, *ns, *peer, *role, *state;
	json_int_t since;
	char err[128];
	struct mig *m;
	int s, frozen = 1;	/* a file without the field: assume so */

	if (json_unpack(o, "{s:s,s:s,s:s,s:s,s:s,s:I,s?b}", "mig", &id, "ns",
	    &ns, "peer", &peer, "role", &role, "state", &state, "since",
	    &since, "frozen", &frozen) == -1 || strlen(id) >= MIG_ID_MAX ||
	    nsarg_name(ns, err, sizeof(err)) == -1 ||
	    config_find_peer(&migrd.conf, peer) == NULL ||
	    (s = migfsm_state_parse(state)) < 0) {
		log_warnx("%s: skipping a bad entry", STATE_FILE);
		return;
	}
	if (strcmp(role, "destination") == 0) {
		if (s == MD_LIVE && !ns_exists(ns)) {
			/*
			 * Committed, but migrd died before the namespace was
			 * live: its restored sockets died with it (closed in
			 * repair, silently, unless it died in the middle of
			 * going live).  Only the source can still have the
			 * connections: answer its COMMIT with ABORTED.
			 */
			history_add("migrate", "%s from %s: migrd died while "
			    "going live; the source keeps it", ns, peer);
			committed_del(peer, id);
			dst_discard_leftover(ns);
		} else if (s == MD_PREPARED || s == MD_READY) {
			/* a namespace half built when migrd died */
			history_add("migrate", "%s from %s: discarding what a "
			    "previous migrd built", ns, peer);
			dst_discard_leftover(ns);
		}
		return;
	}
	if (s == MS_DONE) {
		/*
		 * Moved, and migrd died before it killed the tasks and
		 * deleted the namespace: finish that, or a frozen copy
		 * would stay here for good, its addresses on the LAN.
		 */
		if ((m = mig_new(MIG_SOURCE, id, ns, peer)) == NULL)
			return;
		m->state = MS_DONE;
		m->restarted = 1;
		m->was_frozen = 1;
		m->answered = 1;
		history_add("migrate", "%s: found moved to %s after a "
		    "restart: killing what is left here", ns, peer);
		src_kill_delete(m, 1);
		mig_free(m);
		persist();
		return;
	}
	if (s != MS_FROZEN && s != MS_COMMITTING && s != MS_IN_DOUBT)
		return;
	if ((m = mig_new(MIG_SOURCE, id, ns, peer)) == NULL)
		return;
	m->state = (enum mig_state)s;
	m->since = (time_t)since;
	m->restarted = 1;
	/* the restart came during the gate or the wait for orphans:
	 * nothing is frozen, only the gate is to be lifted; unless migrd
	 * died between the freeze and writing it down: the cgroup says */
	if (s == MS_FROZEN && !frozen && m->cgroup[0] != '\0' &&
	    cgroup_event(m->cgroup, "frozen") == 1)
		frozen = 1;
	m->was_frozen = s != MS_FROZEN || frozen;
	m->answered = 1;	/* its migctl is gone */
	snprintf(m->reason, sizeof(m->reason), "migrd restarted");
	history_add("migrate", "%s: found %s%s with %s after a restart", ns,
	    state, m->was_frozen ? "" : " (before its freeze)", peer);
	arm_timer(m);
	mig_event(m, ME_RESTART);
}

int
mig_init(void)
{
	char path[PATH_MAX + 32], err[PATH_MAX + 64];
	struct timeval sec = { 1, 0 };
	json_t *root, *o;
	size_t i;
	int rc;

	if ((fault_spec = getenv("MIGRD_FAULT")) != NULL &&
	    fault_spec[0] != '\0')
		log_warnx("MIGRD_FAULT=%s: failures will be injected (tests "
		    "only)", fault_spec);
	if ((spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		log_warn("a spare descriptor for the state file");
		return -1;
	}
	/* fault: every descriptor opened from here on is numbered above
	 * FD_SETSIZE, as in a daemon holding thousands of sockets */
	if (mig_fault("fds-high")) {
		int fd;

		while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 &&
		    fd < FDS_HIGH)
			;
	}
	/* checkpoint images a dead migrd left: no migration outlives it
	 * needing them (a restarted one rolls back, commits or discards) */
	ckpt_purge();
	if ((still_ev = event_new(migrd.base, -1, EV_PERSIST, still_cb,
	    NULL)) == NULL || event_add(still_ev, &sec) < 0) {
		log_warnx("%s: cannot arm the still timer", __func__);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", migrd.conf.state_dir,
	    STATE_FILE);
	/* unreadable: a migration in doubt may be in there, and going on
	 * without it could leave two live copies or none */
	if ((rc = statefile_read(path, 1024 * 1024, &root, err,
	    sizeof(err))) == 1)
		return 0;
	if (rc < 0) {
		log_warnx("cannot read the migrations under way: %s (see "
		    "migrd(8), FILES, before moving it away)", err);
		return -1;
	}
	committed_load(json_object_get(root, "committed"));
	json_array_foreach(json_object_get(root, "migrations"), i, o)
		recover(o);
	json_decref(root);
	return persist();
}

void
mig_shutdown(void)
{
	struct mig *m, *next;

	if (still_ev != NULL) {
		event_free(still_ev);
		still_ev = NULL;
	}

	/* before the commit point: roll back or discard, as a cancel;
	 * going live: finish it */
	for (m = TAILQ_FIRST(&migs); m != NULL; m = next) {
		next = TAILQ_NEXT(m, entry);
		if (m->role == MIG_DEST && m->going) {
			dst_live_now(m);	/* frees m */
			continue;
		}
		if (m->role == MIG_SOURCE && m->kill_ev != NULL) {
			src_kill_now(m);
			if (mig_settle(m))
				continue;	/* freed */
		}
		if (m->state == MS_PREPARING || m->state == MS_FROZEN ||
		    m->state == MD_PREPARED || m->state == MD_READY) {
			snprintf(m->reason, sizeof(m->reason), "migrd stops");
			mig_event(m, ME_CMD_CANCEL);
		}
	}
	/* what is durable stays in the state file for the next start */
	while ((m = TAILQ_FIRST(&migs)) != NULL)
		mig_free(m);
	/* what rollbacks still give back goes now, not lost */
	giveback_finish_all();
}
