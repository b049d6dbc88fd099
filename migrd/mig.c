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
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "control.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "ns.h"
#include "peer.h"

#define COMMITTED_MAX	64
#define STATE_FILE	"migrations.json"
#define STATE_VERSION	1

struct mig_list		migs = TAILQ_HEAD_INITIALIZER(migs);
static char		committed[COMMITTED_MAX][MIG_ID_MAX];
static unsigned		ncommitted;
static const char	*fault_spec;

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

int
mig_committed(const char *id)
{
	unsigned i;

	for (i = 0; i < ncommitted && i < COMMITTED_MAX; i++)
		if (strcmp(committed[i], id) == 0)
			return 1;
	return 0;
}

static void
mig_forget_committed(const char *id)
{
	unsigned i;

	for (i = 0; i < ncommitted && i < COMMITTED_MAX; i++)
		if (strcmp(committed[i], id) == 0)
			committed[i][0] = '\0';
}

void
mig_add_committed(const char *id)
{
	if (mig_committed(id))
		return;
	snprintf(committed[ncommitted % COMMITTED_MAX], MIG_ID_MAX, "%s", id);
	ncommitted++;
}

/* What a restart must find: migrations in a durable state, a
 * destination's half-built namespace (to clean it), and the ids this
 * host went live with (to answer a repeated COMMIT). */
static int
persist(void)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 32];
	json_t *root, *a, *c;
	struct mig *m;
	unsigned i;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/%s", migrd.conf.state_dir,
	    STATE_FILE);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", migrd.conf.state_dir,
	    STATE_FILE);
	a = json_array();
	c = json_array();
	TAILQ_FOREACH(m, &migs, entry) {
		if (!migfsm_durable(m->state) && m->state != MD_PREPARED &&
		    m->state != MD_READY)
			continue;
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}",
		    "mig", m->id, "ns", m->ns, "peer", m->peer,
		    "role", m->role == MIG_SOURCE ? "source" : "destination",
		    "state", migfsm_state_name(m->state),
		    "since", (json_int_t)m->since));
	}
	for (i = 0; i < ncommitted && i < COMMITTED_MAX; i++)
		if (committed[i][0] != '\0')
			json_array_append_new(c, json_string(committed[i]));
	root = json_pack("{s:i,s:o,s:o}", "version", STATE_VERSION,
	    "migrations", a, "committed", c);
	if (root == NULL)
		return -1;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		log_warn("%s: %s", __func__, tmp);
		goto out;
	}
	if (json_dumpfd(root, fd, JSON_INDENT(1)) == -1 || fsync(fd) == -1) {
		log_warn("%s: write %s", __func__, tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		log_warn("%s: rename %s", __func__, path);
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;

	(void)fd;
	(void)what;
	if (m->reason[0] == '\0' && m->state != MS_COMMITTING &&
	    m->state != MS_IN_DOUBT)
		snprintf(m->reason, sizeof(m->reason), "no word from %s in "
		    "%u s (%s)", m->peer, migrd.conf.migrate_timeout,
		    migfsm_state_name(m->state));
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
	case MS_FROZEN:
	case MD_PREPARED:
	case MD_READY:
		ms = migrd.conf.migrate_timeout * 1000;
		break;
	case MS_COMMITTING:
	case MS_IN_DOUBT:
		ms = migrd.conf.commit_ms;
		break;
	default:
		evtimer_del(m->timer);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
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
	if (m->work != NULL)
		event_free(m->work);
	if (m->role == MIG_SOURCE)
		src_cleanup(m);
	else
		dst_cleanup(m);
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
	json_t *p = extra != NULL ? extra : json_object();

	if (p == NULL || json_object_set_new(p, "mig", json_string(m->id)))
		return -1;
	if (peer_send(m->peer, type, p) == -1) {
		log_warnx("migration %s: cannot send %s to %s", m->id,
		    migr_msgname(type), m->peer);
		return -1;
	}
	return 0;
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
			    json_real((double)(long long)(m->ms[i] * 10) / 10));
	r = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i},"
	    "s:{s:I,s:I},s:o}",
	    "ns", m->ns, "from", migrd.conf.hostname, "to", m->peer,
	    "mig", m->id, "outcome", outcome,
	    "sockets", "total", m->kinds.total, "tcp_listen", m->kinds.listen,
	    "tcp_established", m->kinds.established,
	    "tcp_closing", m->kinds.closing, "udp", m->kinds.udp,
	    "other", m->kinds.other, "accepted", m->kinds.accepted,
	    "bytes", "queued", (json_int_t)m->queued,
	    "streamed", (json_int_t)m->streamed, "ms", ms);
	if (r != NULL && m->reason[0] != '\0')
		json_object_set_new(r, "reason", json_string(m->reason));
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
	if (m->role == MIG_SOURCE) {
		if (m->state == MS_RUNNING && old != MS_RUNNING) {
			if (m->was_frozen)
				answer(m, RES_ROLLED_BACK, "rolled-back",
				    "%s stays on %s: rolled back: %s", m->ns,
				    migrd.conf.hostname, m->reason[0] ?
				    m->reason : "cancelled");
			else
				answer(m, RES_REFUSED, "refused", "%s stays on "
				    "%s, nothing changed: %s", m->ns,
				    migrd.conf.hostname, m->reason[0] ?
				    m->reason : "cancelled");
		} else if (m->state == MS_DONE) {
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
		else if (m->state == MD_LIVE)
			history_add("migrate", "%s taken in from %s, live "
			    "(pid %ld)", m->ns, m->peer, (long)m->pid);
		else
			return 0;
	}
	mig_free(m);
	persist();
	return 1;
}

void
mig_event(struct mig *m, enum mig_event ev)
{
	struct mig_step st;
	enum mig_state old;
	unsigned bit;

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
			log_info("migration %s: %s: %s -> %s", m->id,
			    migfsm_event_name(ev), migfsm_state_name(old),
			    migfsm_state_name(st.next));
			m->state = st.next;
			m->failed = 0;
			/* a new state, or the same one asked again */
			if (st.next != old || ev == ME_TIMEOUT)
				arm_timer(m);
			if (m->role == MIG_DEST && st.next == MD_LIVE)
				mig_add_committed(m->id);
			if ((st.actions & MA_PERSIST) ||
			    (m->role == MIG_DEST && st.next == MD_PREPARED))
				persist();
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

void
mig_rx(const char *peer, int type, json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "mig"));
	struct mig *m;

	if (id == NULL || strlen(id) >= MIG_ID_MAX) {
		log_warnx("peer %s: %s without a valid mig id, ignored", peer,
		    migr_msgname(type));
		return;
	}
	if (type == MSG_MIG_PREPARE) {
		dst_prepare(peer, msg);
		return;
	}
	if ((m = mig_find_id(id, peer)) == NULL) {
		if (type == MSG_MIG_COMMIT) {
			/* never known, discarded, or long live here */
			peer_send(peer, mig_committed(id) ? MSG_MIG_COMMITTED :
			    MSG_MIG_ABORTED, json_pack("{s:s}", "mig", id));
			log_info("migration %s: COMMIT from %s: answered %s",
			    id, peer, mig_committed(id) ? "committed" :
			    "aborted");
		} else
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
			return MIGR_RECORD_MAX;
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
ctl_target(json_t *req, const char *fmt, const char **outcome,
    struct mig **mp, char *msg, size_t msglen)
{
	const char *ns;
	json_error_t jerr;
	int rc;

	rc = outcome ? json_unpack_ex(req, &jerr, JSON_STRICT, fmt, "ns", &ns,
	    "outcome", outcome) : json_unpack_ex(req, &jerr, JSON_STRICT,
	    fmt, "ns", &ns);
	if (rc == -1) {
		snprintf(msg, msglen, "bad request: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if (nsarg_name(ns, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	if ((*mp = mig_find_ns(ns)) == NULL) {
		snprintf(msg, msglen, "no migration of '%s' under way", ns);
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
mig_ctl_cancel(json_t *req, json_t **data, char *msg, size_t msglen)
{
	struct mig *m;
	int rc;

	(void)data;
	if ((rc = ctl_target(req, "{s:s}", NULL, &m, msg, msglen)) != RES_OK)
		return rc;
	return ctl_event(m, ME_CMD_CANCEL, "cancel", msg, msglen);
}

int
mig_ctl_resolve(json_t *req, json_t **data, char *msg, size_t msglen)
{
	const char *outcome;
	struct mig *m;
	int rc;

	(void)data;
	if ((rc = ctl_target(req, "{s:s,s:s}", &outcome, &m, msg,
	    msglen)) != RES_OK)
		return rc;
	if (strcmp(outcome, "rollback") != 0 && strcmp(outcome, "done") != 0) {
		snprintf(msg, msglen, "outcome must be rollback or done");
		return RES_INVALID_ARGUMENT;
	}
	if (m->role != MIG_SOURCE) {
		snprintf(msg, msglen, "%s is coming in from %s: resolve it "
		    "there", m->ns, m->peer);
		return RES_BUSY;
	}
	return ctl_event(m, strcmp(outcome, "done") == 0 ?
	    ME_CMD_RESOLVE_DONE : ME_CMD_RESOLVE_BACK, strcmp(outcome,
	    "done") == 0 ? "resolve (done)" : "resolve (rollback)", msg,
	    msglen);
}

/* One entry of the state file, as a restart finds it. */
static void
recover(json_t *o)
{
	const char *id, *ns, *peer, *role, *state;
	json_int_t since;
	char err[128];
	struct mig *m;
	int s;

	if (json_unpack(o, "{s:s,s:s,s:s,s:s,s:s,s:I}", "mig", &id, "ns", &ns,
	    "peer", &peer, "role", &role, "state", &state, "since",
	    &since) == -1 || strlen(id) >= MIG_ID_MAX ||
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
			mig_forget_committed(id);
			dst_discard_leftover(ns);
		} else if (s == MD_PREPARED || s == MD_READY) {
			/* a namespace half built when migrd died */
			history_add("migrate", "%s from %s: discarding what a "
			    "previous migrd built", ns, peer);
			dst_discard_leftover(ns);
		}
		return;
	}
	if (s != MS_FROZEN && s != MS_COMMITTING && s != MS_IN_DOUBT)
		return;
	if ((m = mig_new(MIG_SOURCE, id, ns, peer)) == NULL)
		return;
	m->state = (enum mig_state)s;
	m->since = (time_t)since;
	m->restarted = 1;
	m->was_frozen = 1;
	m->answered = 1;	/* its migctl is gone */
	snprintf(m->reason, sizeof(m->reason), "migrd restarted");
	history_add("migrate", "%s: found %s with %s after a restart", ns,
	    state, peer);
	arm_timer(m);
	mig_event(m, ME_RESTART);
}

int
mig_init(void)
{
	char path[PATH_MAX + 32];
	json_error_t jerr;
	json_t *root, *o;
	struct stat sb;
	size_t i;

	if ((fault_spec = getenv("MIGRD_FAULT")) != NULL &&
	    fault_spec[0] != '\0')
		log_warnx("MIGRD_FAULT=%s: failures will be injected (tests "
		    "only)", fault_spec);
	snprintf(path, sizeof(path), "%s/%s", migrd.conf.state_dir,
	    STATE_FILE);
	if (stat(path, &sb) == -1)
		return errno == ENOENT ? 0 : -1;
	if (sb.st_size > 1024 * 1024 ||
	    (root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		log_warnx("%s: unreadable, ignored", path);
		return 0;
	}
	json_array_foreach(json_object_get(root, "committed"), i, o)
		if (json_is_string(o) && strlen(json_string_value(o)) <
		    MIG_ID_MAX && json_string_value(o)[0] != '\0')
			mig_add_committed(json_string_value(o));
	json_array_foreach(json_object_get(root, "migrations"), i, o)
		recover(o);
	json_decref(root);
	return persist();
}

void
mig_shutdown(void)
{
	struct mig *m, *next;

	/* before the commit point: roll back or discard, as a cancel */
	for (m = TAILQ_FIRST(&migs); m != NULL; m = next) {
		next = TAILQ_NEXT(m, entry);
		if (m->state == MS_PREPARING || m->state == MS_FROZEN ||
		    m->state == MD_PREPARED || m->state == MD_READY) {
			snprintf(m->reason, sizeof(m->reason), "migrd stops");
			mig_event(m, ME_CMD_CANCEL);
		}
	}
	/* what is durable stays in the state file for the next start */
	while ((m = TAILQ_FIRST(&migs)) != NULL)
		mig_free(m);
}
