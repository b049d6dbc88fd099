/* SPDX-License-Identifier: ISC */
/*
 * The source half of a migration: "migctl migrate NS HOST" checks and
 * pre-copies while the service runs; at PREPARED it freezes, locks and
 * collects, then streams one socket record at a time from the event
 * loop, paced by the channel's output queue, so the destination restores
 * each while the next is dumped.  COMMITTED kills the tasks with their
 * sockets still in repair and deletes the namespace; anything before
 * COMMIT rolls back.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <event2/event.h>

#include "cgroup.h"
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
#include "sk_json.h"
#include "srccheck.h"

#define STEP_BUDGET_MS	20	/* of dumping, before the loop runs again */
#define GATE_POLL_MS	10
#define ORPHAN_POLL_MS	20
#define FREEZE_POLL_MS	10
#define SETTLE_POLL_MS	2
#define SETTLE_LOOKS	2	/* at rest, in a row, SETTLE_POLL_MS apart */

static void	work_cb(evutil_socket_t, short, void *);
static void	gate_wait(struct mig *);
static void	orphan_wait(struct mig *);
static void	settle_wait(struct mig *);
static void	freeze_wait(struct mig *);
static void	freeze_dump(struct mig *);

static int
append_record(json_t *rec, void *arg)
{
	return json_array_append_new(arg, rec);
}

/* "migrate NS HOST": NS is here and idle, HOST a peer that is up. */
int
mig_migrate_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	const char *ns, *host;
	json_error_t jerr;
	int rc;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s,s:s}", "ns", &ns,
	    "host", &host) == -1) {
		snprintf(msg, msglen, "migrate: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if ((rc = mig_check_target(ns, host, msg, msglen)) != RES_OK)
		return rc;
	if (mig_find_ns(ns) != NULL) {
		snprintf(msg, msglen, "a migration of %s is under way", ns);
		return RES_BUSY;
	}
	if (!peer_is_up(host)) {
		snprintf(msg, msglen, "no session with %s (see migctl peers)",
		    host);
		return RES_PEER_DOWN;
	}
	r->ns = ns;
	r->host = host;
	return RES_OK;
}

/* The migration ends before it began: answer migctl, forget it. */
static void
refuse_early(struct mig *m, int code, const char *fmt, ...)
{
	char text[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	control_finish(m->ctl, code, text, NULL);
	mig_free(m);
}

/* The check's verdict (srccheck.h): refuse, or pre-copy and start. */
static void
checked(void *arg, int nsocks, const char *why, json_t *reasons)
{
	struct mig *m = arg;
	struct timeval zero = { 0, 0 };
	char err[512];
	json_t *records;

	(void)reasons;
	m->check = NULL;
	if (nsocks < 0) {
		history_add("migrate", "%s -> %s refused: %s", m->ns, m->peer,
		    why);
		refuse_early(m, RES_REFUSED, "%s cannot move, nothing "
		    "changed: %s", m->ns, why);
		return;
	}
	/* pre-copy: the namespace's links, addresses and routes */
	if ((records = json_array()) == NULL ||
	    nsdump_emit(m->ns, append_record, records, err,
	    sizeof(err)) < 0) {
		json_decref(records);
		refuse_early(m, RES_SYSTEM, "cannot read the network of %s: "
		    "%s", m->ns, err);
		return;
	}
	m->checked_socks = nsocks;
	m->records = records;
	m->desc = ns_describe(m->ns);
	m->argv = ns_workload_argv(m->ns);
	m->ck_root = ns_workload_ckpt(m->ns);
	m->ck = m->ck_root > 0;
	if ((m->work = evtimer_new(migrd.base, work_cb, m)) == NULL ||
	    evtimer_add(m->work, &zero) == -1) {
		refuse_early(m, RES_SYSTEM, "cannot schedule the migration");
		return;
	}
	mig_progress(m, "check", "every socket of %s can move; %zu network "
	    "records", m->ns, json_array_size(records));
}

int
src_cancel_check(struct mig *m)
{
	if (m->role != MIG_SOURCE || m->check == NULL)
		return 0;
	history_add("migrate", "%s -> %s refused: cancel by the operator "
	    "during the check", m->ns, m->peer);
	refuse_early(m, RES_REFUSED, "%s stays here: cancel by the "
	    "operator during the check", m->ns);
	return 1;
}

/*
 * The migration exists from here (a second "migrate" of the namespace
 * is busy), in state running, while its check runs away from the loop;
 * checked() goes on.
 */
int
mig_ctl_migrate(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	const char *ns = r->ns, *host = r->host;
	char why[256], cg[PATH_MAX + 32], id[MIG_ID_MAX];
	struct timespec now;
	struct mig *m;

	(void)data;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(id, sizeof(id), "%s-%s-%lld%03ld", migrd.conf.hostname, ns,
	    (long long)now.tv_sec, now.tv_nsec / 1000000);
	if ((m = mig_new(MIG_SOURCE, id, ns, host)) == NULL) {
		snprintf(msg, msglen, "out of memory");
		return RES_SYSTEM;
	}
	m->ctl = control_current();
	ns_cgroup_path(ns, cg, sizeof(cg));
	if ((m->check = srccheck_start(ns, cg, 0, checked, m, why,
	    sizeof(why))) == NULL) {
		mig_free(m);
		snprintf(msg, msglen, "cannot check %s: %s", ns, why);
		return RES_SYSTEM;
	}
	return CTL_DEFERRED;
}

/*
 * Records and their chunks wait here, in order, and leave while the
 * channel's output holds less than max-queue/2: a socket with 32 MiB
 * queued each way waits as its state (raw bytes), not as 85 MiB of
 * base64 text in the channel's buffer.
 */
struct outrec {
	TAILQ_ENTRY(outrec)	 entry;
	json_t			*rec;		/* sent: NULL */
	struct sk_state		*st;		/* its chunks' source, or NULL */
	json_t			*holders;	/* checkpoint mode: [[pid, fd]] */
	uint64_t		 seq;
	int			 part;		/* next chunk: part, offset */
	uint32_t		 off;
};

static void
outrec_free(struct mig *m, struct outrec *o)
{
	TAILQ_REMOVE(&m->outq, o, entry);
	json_decref(o->rec);
	json_decref(o->holders);
	sk_state_free(o->st);
	free(o);
}

void
src_outq_free(struct mig *m)
{
	while (!TAILQ_EMPTY(&m->outq))
		outrec_free(m, TAILQ_FIRST(&m->outq));
}

/*
 * n bytes of a queue as a binary tail after the chunk's head: to a peer
 * that takes them ("raw-chunks"), which spares both hosts the base64
 * and a JSON string of a third more to write and to scan (under TCG the
 * decoder took 10 MB/s of it, the wire carries 19).
 */
static int
send_raw_chunk(struct mig *m, struct outrec *o, uint32_t n)
{
	const uint8_t *bytes = NULL;
	json_t *head;

	if ((head = sk_json_chunk_head(o->st, (enum sk_part)o->part, o->off,
	    n, &bytes)) == NULL) {
		log_warnx("migration %s: record %llu: no chunk at %u+%u",
		    m->id, (unsigned long long)o->seq, o->off, n);
		return -1;
	}
	return mig_send_tail(m, MSG_MIG_CHUNK, json_pack("{s:I,s:o}", "seq",
	    (json_int_t)o->seq, "chunk", head), bytes, n);
}

/* The next chunk of o (o->part, o->off), or 0 when none is left. */
static int
next_chunk(struct mig *m, struct outrec *o)
{
	const struct sk_state *st = o->st;
	uint32_t len, n, bytes;
	int rc;

	for (; o->part < SK_PART__MAX; o->part++, o->off = 0) {
		if (st == NULL || !sk_json_split(st, (enum sk_part)o->part,
		    m->src.inline_max))
			continue;
		len = o->part == SK_PART_SNDQ ? st->tcp.sndq_len :
		    o->part == SK_PART_RCVQ ? st->tcp.rcvq_len :
		    st->udp.ndgrams;
		if (o->off >= len)
			continue;
		if (o->part != SK_PART_DGRAMS)
			n = len - o->off < MIGR_CHUNK_BYTES ? len - o->off :
			    MIGR_CHUNK_BYTES;
		else	/* whole datagrams, as many as fit */
			for (n = 0, bytes = 0; o->off + n < len && (n == 0 ||
			    bytes + st->udp.dgrams[o->off + n].len + 64 <=
			    MIGR_CHUNK_BYTES); n++)
				bytes += st->udp.dgrams[o->off + n].len + 64;
		if (o->part != SK_PART_DGRAMS && m->raw_chunks)
			rc = send_raw_chunk(m, o, n);
		else
			rc = mig_send(m, MSG_MIG_CHUNK, json_pack("{s:I,s:o}",
			    "seq", (json_int_t)o->seq, "chunk",
			    sk_json_chunk(st, (enum sk_part)o->part, o->off,
			    n)));
		if (rc == -1)
			return -1;
		o->off += n;
		return 1;
	}
	return 0;
}

/* Send what waits while the channel has room: 1 when all of it left,
 * 0 when some waits for the channel to drain, -1 on a failure. */
static int
outq_pump(struct mig *m)
{
	struct outrec *o;
	size_t before;
	uint64_t json0;
	int rc;

	while ((o = TAILQ_FIRST(&m->outq)) != NULL) {
		if (peer_output_len(m->peer) > migrd.conf.max_queue / 2)
			return 0;
		before = peer_output_len(m->peer);
		json0 = peer_tx_json(m->peer);
		if (o->rec != NULL) {
			rc = mig_send(m, MSG_MIG_RECORD, json_pack("{s:I,s:O,"
			    "s:O*}", "seq", (json_int_t)o->seq, "record", o->rec,
			    "holders", o->holders));
			json_decref(o->rec);
			o->rec = NULL;
		} else if ((rc = next_chunk(m, o)) == 0)
			outrec_free(m, o);
		if (rc < 0)
			return -1;
		m->streamed += peer_output_len(m->peer) - before;
		m->encoded += peer_tx_json(m->peer) - json0;
	}
	return 1;
}

static int
emit_record(json_t *rec, struct sk_state *st, void *arg)
{
	struct mig *m = arg;
	struct outrec *o;

	if (rec == NULL || (o = calloc(1, sizeof(*o))) == NULL) {
		json_decref(rec);
		sk_state_free(st);
		return -1;
	}
	mig_count_kind(&m->kinds, rec);
	o->rec = rec;
	o->st = st;
	o->holders = st != NULL ? ckpt_src_holders(m) : NULL;
	o->seq = ++m->seq;
	TAILQ_INSERT_TAIL(&m->outq, o, entry);
	return 0;
}

static void
dump_done(struct mig *m)
{
	/* the sockets, and CRIU's dump of the program in checkpoint mode */
	m->ms[PH_DUMP] = m->src.fig.dump_ms + (m->ck ? m->ck_ms : 0);
	m->queued = m->src.fig.queued_bytes;
	m->kinds.accepted = (unsigned)m->src.fig.accepted;
	m->t_dump_done = mono_ms();
	if (mig_send(m, MSG_MIG_DUMP_DONE, json_pack("{s:I,s:o*}", "records",
	    (json_int_t)m->seq, "images", m->ck ? json_pack("{s:I,s:I}",
	    "files", (json_int_t)m->ck_sent_files, "bytes",
	    (json_int_t)m->ck_bytes) : NULL)) == -1) {
		mig_fail(m, "channel to %s lost during the dump", m->peer);
		return;
	}
	if (m->ck)
		mig_progress(m, "dump", "%llu sockets and %zu images dumped "
		    "and streamed, %llu bytes on the channel (%llu before "
		    "compression)",
		    (unsigned long long)m->seq, m->ck_nfiles,
		    (unsigned long long)m->streamed,
		    (unsigned long long)m->encoded);
	else
		mig_progress(m, "dump", "%llu sockets dumped and streamed, "
		    "%llu bytes of records (%llu of JSON)",
		    (unsigned long long)m->seq,
		    (unsigned long long)m->streamed,
		    (unsigned long long)m->encoded);
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
		if ((rc = outq_pump(m)) < 0) {
			mig_fail(m, "channel to %s lost during the dump",
			    m->peer);
			return;
		}
		if (rc == 0) {
			evtimer_add(m->work, &later);	/* let it drain */
			return;
		}
		if (m->dumped)
			break;
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
		    mig_fault("src-crash-dump")) {
			log_warnx("fault injected: src-crash-dump: exiting");
			_exit(3);
		}
		if (rc > 0 && m->seq * 2 >= m->src.set.nsocks &&
		    mig_fault("src-dump")) {
			mig_fail(m, "fault injected during the dump");
			return;
		}
		if (rc == 0)
			m->dumped = 1;	/* once what waits has left */
	}
	/* checkpoint mode: CRIU's dump of the program, and its images */
	if (m->ck && ckpt_src_step(m) <= 0)
		return;
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
	if (m->state == MS_FROZEN && m->ck_precopying) {
		if (ckpt_precopy_step(m) > 0)
			freeze_dump(m);
	} else if (m->state == MS_FROZEN && m->gating)
		gate_wait(m);
	else if (m->state == MS_FROZEN && m->orphaning)
		orphan_wait(m);
	else if (m->state == MS_FROZEN && m->settling)
		settle_wait(m);
	else if (m->state == MS_FROZEN && m->freezing)
		freeze_wait(m);
	else if (m->state == MS_FROZEN && m->have_src)
		dump_step(m);
}

/* After a restart the sockets are taken back from the frozen tasks. */
static int
reattach(struct mig *m)
{
	char err[256];

	if (m->have_src)
		return 0;
	if (!m->restarted || !m->was_frozen)
		return -1;	/* nothing was frozen */
	if (migsrc_reattach(&m->src, m->ns, m->cgroup,
	    ns_workload_ckpt(m->ns) > 0 ? MIGSRC_CKPT : 0, err,
	    sizeof(err)) < 0) {
		log_warnx("migration %s: cannot take back the sockets of %s: "
		    "%s", m->id, m->ns, err);
		migsrc_free(&m->src);
		return -1;
	}
	m->have_src = 1;
	return 0;
}

/*
 * Frozen: collect, write it down, and dump from the next turn.
 */
static void
frozen_now(struct mig *m)
{
	struct timeval now = { 0, 0 };
	const struct migsrc_figures *f = &m->src.fig;
	char err[256], rest[64] = "";

	if (migsrc_freeze_finish(&m->src, err, sizeof(err)) < 0) {
		migsrc_free(&m->src);
		mig_fail(m, "cannot collect the sockets of %s: %.200s", m->ns,
		    err);
		return;
	}
	/* to a peer that takes a chunk's bytes as they are, a queue of
	 * more than a few KiB goes apart from its record, out of the
	 * JSON; to any other, only what a frame could not hold */
	m->raw_chunks = peer_raw_chunks(m->peer);
	m->src.inline_max = m->raw_chunks ? MIGR_RECORD_INLINE_RAW :
	    MIGR_RECORD_INLINE;
	m->have_src = 1;
	/* a restart from here finds it frozen (and one that comes before
	 * this is written finds the cgroup frozen: mig.c, recover()) */
	if (mig_persist("persist-freeze") == -1) {
		mig_fail(m, "cannot write that %s is frozen: %.200s", m->ns,
		    mig_persist_error());
		return;
	}
	mig_arm_timer(m);	/* migrate-timeout from the freeze on */
	m->ms[PH_FREEZE] = f->lock_ms + f->settle_ms + f->freeze_ms +
	    f->collect_ms;
	/* checkpoint mode does not wait for the tasks to rest */
	if (!m->ck)
		snprintf(rest, sizeof(rest), "tasks waiting for input after "
		    "%.1f ms, ", f->settle_ms);
	mig_progress(m, "freeze", "traffic locked (%.1f ms), %s%zu tasks "
	    "frozen, %zu sockets collected (%.1f ms)", f->lock_ms, rest,
	    m->src.set.ntasks, m->src.set.nsocks, m->ms[PH_FREEZE]);
	if (mig_fault("src-freeze")) {
		mig_fail(m, "fault injected after the freeze");
		return;
	}
	if (m->ck && ckpt_src_precheck(m, err, sizeof(err)) < 0) {
		mig_fail(m, "checkpoint mode cannot move %s now: %.200s",
		    m->ns, err);
		return;
	}
	evtimer_add(m->work, &now);
}

/*
 * Wait (from the loop) until every task of the cgroup is frozen: a task
 * in an uninterruptible sleep (a stuck file system) can hold the freeze
 * up, and the loop serves the peers and migctl meanwhile.  Refused, and
 * thawed, after MIG_FREEZE_MS.
 */
static void
freeze_wait(struct mig *m)
{
	double waited = mono_ms() - m->src.t_freeze;
	/* most freezes take a few ms: look often at first */
	struct timeval poll = { 0, (waited < 50 ? 1 : FREEZE_POLL_MS) * 1000 };
	char why[256];
	int v = migsrc_frozen(&m->src);

	/* fault: tasks that take longer to freeze than MIG_FREEZE_MS */
	if (v == 1 && m->fault_slow_freeze)
		v = 0;
	if (v == 0 && waited < MIG_FREEZE_MS) {
		evtimer_add(m->work, &poll);
		return;
	}
	m->freezing = 0;
	if (v == 1) {
		frozen_now(m);
		return;
	}
	if (migsrc_rollback(&m->src, why, sizeof(why)) < 0)
		log_warnx("migration %s: %s", m->id, why);
	migsrc_free(&m->src);
	mig_fail(m, "the tasks of %s did not freeze within %d ms%s (a task "
	    "in an uninterruptible sleep?)", m->ns, MIG_FREEZE_MS,
	    v < 0 ? ": cannot read cgroup.events" : "");
}

static void
freeze_now(struct mig *m)
{
	char err[256];

	m->was_frozen = 1;
	if (migsrc_freeze_start(&m->src, err, sizeof(err)) < 0) {
		mig_fail(m, "cannot freeze %s: %.200s", m->ns, err);
		return;
	}
	m->freezing = 1;
	m->fault_slow_freeze = mig_fault("src-freeze-slow");
	freeze_wait(m);
}

/* settle-wait, and orphan-wait more once settle_orphans() let some
 * through */
static double
settle_max(const struct mig *m)
{
	return migrd.conf.settle_ms + (m->t_drain > 0 ? migrd.conf.orphan_ms :
	    0);
}

/*
 * At rest: did the tasks close connections while locked that still owe
 * their peers bytes?  Such an orphan has no file, so nothing moves it,
 * and locked it cannot deliver them: it is let through the lock (both
 * ways, that connection only) and waited for, at most orphan-wait, then
 * the tasks are looked at again.  0 none, 1 waiting, -1 failed.
 */
static int
settle_orphans(struct mig *m)
{
	double now = mono_ms();
	char why[512];
	int n = migsrc_pass_orphans(&m->src, why, sizeof(why));

	if (n == 0) {
		if (m->t_drain > 0)
			mig_progress(m, "orphans", "connections closed while "
			    "locked delivered their last bytes (%.1f ms)",
			    now - m->t_drain);
		m->t_drain = 0;
		return 0;
	}
	m->rest_looks = 0;
	if (n < 0) {
		m->settling = 0;
		mig_fail(m, "cannot let the connections the tasks of %s "
		    "closed while locked deliver their last bytes: %.300s",
		    m->ns, why);
		return -1;
	}
	if (m->t_drain == 0) {
		m->t_drain = now;
		mig_progress(m, "orphans", "%d connection%s closed while "
		    "locked, let through to deliver %s last bytes: %.300s", n,
		    n == 1 ? "" : "s", n == 1 ? "its" : "their", why);
	}
	if (now - m->t_drain < migrd.conf.orphan_ms)
		return 1;
	m->settling = 0;
	mig_fail(m, "%d connection%s closed while locked still owe%s %s "
	    "peer bytes after %u ms (orphan-wait): %.300s", n, n == 1 ? "" :
	    "s", n == 1 ? "s" : "", n == 1 ? "its" : "their",
	    migrd.conf.orphan_ms, why);
	return -1;
}

/*
 * Light mode carries the sockets, not the memory: a task frozen between
 * a read and its write takes what it read to its death, and the peer,
 * its bytes acknowledged, never sends them again.  Locked, nothing more
 * reaches the tasks from outside: wait (from the loop) until every task
 * that holds a socket waits for input (taskrest.h), twice in a row, then
 * freeze.  Refused, naming the task, after settle-wait; the rollback
 * unlocks and gives the sockets what the lock kept, so nothing is lost.
 */
static void
settle_wait(struct mig *m)
{
	struct timeval poll = { 0, SETTLE_POLL_MS * 1000 };
	struct timeval drain = { 0, ORPHAN_POLL_MS * 1000 };
	double waited = mono_ms() - m->t_settle;
	char why[300];
	int o, v = migsrc_at_rest(&m->src, why, sizeof(why));

	if (v == 1 && ++m->rest_looks >= SETTLE_LOOKS) {
		if ((o = settle_orphans(m)) != 0) {
			if (o > 0)
				evtimer_add(m->work, &drain);
			return;
		}
		m->settling = 0;
		m->src.fig.settle_ms = waited;
		freeze_now(m);
		return;
	}
	if (v == 0)
		m->rest_looks = 0;
	/* at rest once: one more look, whatever the time */
	if (v == 1 || (v == 0 && waited < settle_max(m))) {
		evtimer_add(m->work, &poll);
		return;
	}
	m->settling = 0;
	if (v < 0) {
		mig_fail(m, "cannot tell whether the tasks of %s wait for "
		    "input: %.300s", m->ns, why);
		return;
	}
	/* waited: settle-wait, and orphan-wait more after a drain */
	mig_fail(m, "%s cannot move in light mode: %.300s after %.0f ms "
	    "(settle-wait%s), not waiting for input, and what it has read "
	    "but not written would be lost: move it in checkpoint mode "
	    "(migctl run --checkpoint), or try again", m->ns, why, waited,
	    m->t_drain > 0 ? " and orphan-wait" : "");
}

/*
 * The lock first: the peer's stall starts once it holds, which is when
 * its transaction commits, at the end of migsrc_lock().  The downtime's
 * clock starts there, not when it was asked: making the libnftables
 * context and fetching the ruleset come first and take tens to a few
 * hundred ms in a TCG guest, while the traffic still flows.
 */
static void
lock_now(struct mig *m)
{
	char err[256];

	/* the queue's reader first: the lock may not queue to nobody */
	replay_src_open(m);
	if (migsrc_lock(&m->src, m->ns, m->cgroup,
	    (m->ck ? MIGSRC_CKPT : 0) |
	    (peer_repair_path(m->peer) ? 0 : MIGSRC_NO_PATH), m->rq_on,
	    err, sizeof(err)) < 0) {
		mig_fail(m, "cannot lock %s: %.200s", m->ns, err);
		return;
	}
	m->t_freeze = mono_ms();
	if (m->ck) {
		/* CRIU carries the memory: the tasks may stop anywhere */
		freeze_now(m);
		return;
	}
	m->settling = 1;
	m->rest_looks = 0;
	m->t_drain = 0;
	m->t_settle = mono_ms();
	settle_wait(m);
}

/* Wait (from the loop) until no handshake is under way, then freeze. */
static void
gate_wait(struct mig *m)
{
	struct timeval poll = { 0, GATE_POLL_MS * 1000 };
	double waited = mono_ms() - m->t_gate;
	char why[512], awhy[512];
	int n = migsrc_handshakes(m->ns, why, sizeof(why));
	/* checkpoint mode: the restored listener is CRIU's and starts
	 * empty, so the program accepts what waits first (the gate holds
	 * new SYNs back meanwhile) */
	int a = m->ck ? migsrc_accept_waiting(m->ns, awhy, sizeof(awhy)) : 0;

	if (mig_fault("src-crash-gate")) {
		log_warnx("fault injected: src-crash-gate: exiting");
		_exit(3);
	}
	if ((n > 0 || a > 0) && waited < GATE_MAX_MS) {
		evtimer_add(m->work, &poll);
		return;
	}
	m->gating = 0;
	if (a < 0) {
		mig_fail(m, "cannot list the listeners of %s: %.300s", m->ns,
		    awhy);
		return;
	}
	if (a > 0) {
		mig_fail(m, "%s: connections still wait to be accepted after "
		    "the program had %.0f ms to take them, and the listener "
		    "CRIU restores cannot take them over (%.300s): try again",
		    m->ns, waited, awhy);
		return;
	}
	/*
	 * A request socket cannot be dumped, and its client may already
	 * count the connection established (its last ACK lost, or dropped
	 * by a full accept queue): after the move it would be reset.  What
	 * cannot be carried is refused, naming it; nothing is frozen yet.
	 */
	if (n < 0) {
		mig_fail(m, "cannot list the handshakes under way in %s: "
		    "%.200s", m->ns, why);
		return;
	}
	if (n > 0) {
		mig_fail(m, "%d handshake%s still under way after %.0f ms, "
		    "whose client may count the connection established and "
		    "would be reset after the move (%.300s): try again", n,
		    n == 1 ? "" : "s", waited, why);
		return;
	}
	mig_progress(m, "gate", "new connections held back, handshakes "
	    "under way finished (%.1f ms)", waited);
	m->orphaning = 1;
	m->t_orphan = mono_ms();
	orphan_wait(m);
}

/*
 * Wait (from the loop) until no connection the programs closed still
 * owes its peer bytes: nothing can move such an orphan, it has no file.
 * Refused, naming it, after orphan-wait.
 */
static void
orphan_wait(struct mig *m)
{
	struct timeval poll = { 0, ORPHAN_POLL_MS * 1000 };
	double waited = mono_ms() - m->t_orphan;
	char why[512];
	int n = migsrc_orphans(m->ns, why, sizeof(why));

	if (n < 0) {
		m->orphaning = 0;
		mig_fail(m, "cannot list the connections of %s: %.200s", m->ns,
		    why);
		return;
	}
	if (n > 0 && waited < migrd.conf.orphan_ms) {
		evtimer_add(m->work, &poll);
		return;
	}
	m->orphaning = 0;
	if (n > 0) {
		mig_fail(m, "%d closed connection%s still owe%s %s peer bytes "
		    "after %u ms (orphan-wait): %.300s", n, n == 1 ? "" : "s",
		    n == 1 ? "s" : "", n == 1 ? "its" : "their",
		    migrd.conf.orphan_ms, why);
		return;
	}
	if (waited > ORPHAN_POLL_MS)
		mig_progress(m, "orphans", "closed connections delivered their "
		    "last bytes (%.1f ms)", waited);
	lock_now(m);
}

/* PREPARE's workload: its argv, and how it moves (checkpoint mode, or
 * gated to a peer that takes it) */
static json_t *
workload_json(const struct mig *m)
{
	json_t *wl = ckpt_workload_json(m->ns, m->argv);

	if (wl != NULL && !m->ck && ns_workload_gate(m->ns) &&
	    peer_takes_gate(m->peer))
		json_object_set_new(wl, "gate", json_true());
	return wl;
}

/* COMMIT to the destination: the first one starts the commit phase's
 * clock; a repeat (in doubt) is the same message. */
static void
send_commit(struct mig *m)
{
	/* what reached the namespace since the lock, ahead of COMMIT on
	 * the same channel: the destination has it when it goes live */
	replay_src_send(m);
	if (m->t_commit == 0) {
		char err[256];

		/* a migrd that died between READY and COMMIT: it muted the
		 * lock before it wrote "committing"; repeated, it costs one
		 * transaction after a restart */
		if (m->restarted && nslock_mute(m->ns, err, sizeof(err)) < 0)
			log_warnx("migration %s: %s", m->id, err);
		m->t_commit = mono_ms();
		m->rq_at_commit = m->rq_sent;
		if (m->rq_on)
			mig_progress(m, "commit", "COMMIT sent to %s, after the "
			    "%zu packets that reached %s while locked (%zu "
			    "dropped)", m->peer, m->rq_sent, m->ns,
			    m->rq.overflow);
		else
			mig_progress(m, "commit", "COMMIT sent to %s", m->peer);
	}
	m->commits_sent++;
	mig_send(m, MSG_MIG_COMMIT, NULL);
}

/* after fault src-commit-pause: unless the decision was undone */
static void
commit_after_pause(struct mig *m)
{
	if (m->state == MS_COMMITTING || m->state == MS_IN_DOUBT)
		send_commit(m);
}

/* The gate first: the service runs on, only new SYNs are dropped. */
static void
freeze_dump(struct mig *m)
{
	char err[256];

	m->ms[PH_PRECOPY] = mig_now(m);
	if (nslock_gate(m->ns, err, sizeof(err)) < 0) {
		mig_fail(m, "cannot hold back new connections to %s: %.200s",
		    m->ns, err);
		return;
	}
	m->gating = 1;
	m->t_gate = mono_ms();
	gate_wait(m);
}

void
src_action(struct mig *m, unsigned action)
{
	struct timeval now = { 0, 0 };
	char err[256];
	int thawed;

	switch (action) {
	case MA_SEND_PREPARE:
		if (mig_send(m, MSG_MIG_PREPARE, json_pack("{s:s,s:s,s:O,s:O,"
		    "s:i,s:o*}", "ns", m->ns, "from", migrd.conf.hostname,
		    "namespace", m->desc, "records", m->records, "sockets",
		    m->checked_socks, "workload", workload_json(m))) == -1)
			mig_fail(m, "cannot send prepare to %s", m->peer);
		break;
	case MA_FREEZE_DUMP:
		/* checkpoint mode: the memory first, while it runs */
		if (m->ck && migrd.conf.precopy_passes > 0) {
			m->ck_precopying = 1;
			evtimer_add(m->work, &now);
		} else {
			freeze_dump(m);
		}
		break;
	case MA_ROLLBACK:
		m->gating = 0;
		m->orphaning = 0;
		m->settling = 0;	/* the else below unlocks */
		ckpt_cleanup(m);	/* CRIU out of the tasks first */
		if (m->freezing) {
			/* given up while the freeze was under way: thaw */
			m->freezing = 0;
			if (migsrc_rollback(&m->src, err, sizeof(err)) < 0)
				log_warnx("migration %s: %s", m->id, err);
			migsrc_free(&m->src);
		}
		thawed = m->have_src || (m->restarted && m->was_frozen);
		if (reattach(m) == 0) {
			if (migsrc_rollback(&m->src, err, sizeof(err)) < 0)
				log_warnx("migration %s: rollback of %s was "
				    "not clean: %s", m->id, m->ns, err);
			migsrc_free(&m->src);
			m->have_src = 0;
			/* checkpoint mode: what CRIU left stopped goes on */
			ckpt_src_resume(m->ns, m->cgroup);
			/* the sockets are live and unlocked again: what
			 * came meanwhile is theirs */
			replay_src_rollback(m);
		} else {
			if (nslock_release(m->ns, err, sizeof(err)) < 0)
				/* failed before or in the freeze: the gate
				 * may stay */
				log_warnx("migration %s: %s may still be "
				    "gated: %s", m->id, m->ns, err);
			else
				replay_src_rollback(m);	/* a failed collect */
			/* a migrd that died while the freeze was under way
			 * left it asked for (cgroup.freeze 1) */
			if (m->restarted && m->cgroup[0] != '\0' &&
			    cgroup_thaw(m->cgroup, err, sizeof(err)) < 0)
				log_warnx("migration %s: %s", m->id, err);
		}
		replay_close(m);	/* given back above, if it could be */
		if (thawed)
			mig_progress(m, "rollback", "%s resumed here: repair "
			    "off, unlocked, thawed", m->ns);
		else
			mig_progress(m, "rollback", "%s runs on here: never "
			    "frozen, new connections let in again", m->ns);
		break;
	case MA_SEND_COMMIT:
		/* "committing" is written, COMMIT not yet sent */
		if (mig_fault("src-crash-commit")) {
			log_warnx("fault injected: src-crash-commit: exiting");
			_exit(3);
		}
		/* fault: the first COMMIT waits, for a link cut then */
		if (m->t_commit == 0 &&
		    mig_pause(m, "src-commit-pause", commit_after_pause))
			break;
		send_commit(m);
		break;
	case MA_KILL_DELETE:
		if (mig_fault("src-crash-done")) {
			log_warnx("fault injected: src-crash-done: exiting");
			_exit(3);
		}
		src_kill_delete(m, 0);
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

/*
 * After the commit the source's tasks die with their sockets in repair.
 * SIGKILL wakes a frozen task, but it still has to run its exit, which
 * for a large address space or a task in an uninterruptible sleep takes
 * a while: the kill is asked, then looked at every KILL_POLL_MS from the
 * loop, for up to MIG_FREEZE_MS.  The namespace is deleted and the
 * operator answered only after that, so a namespace that comes back at
 * once finds its name free.
 */
#define KILL_POLL_MS	5

static void
kill_finish(struct mig *m, int timeout_ms)
{
	char err[256];

	if (m->kill_ev != NULL) {
		event_free(m->kill_ev);
		m->kill_ev = NULL;
	}
	if (m->have_src) {
		if (migsrc_commit(&m->src, m->hostif, timeout_ms, err,
		    sizeof(err)) < 0)
			log_warnx("migration %s: cleaning %s was not complete: "
			    "%s", m->id, m->ns, err);
		migsrc_free(&m->src);
		m->have_src = 0;
	}
	replay_close(m);
	ns_forget(m->ns);
	mig_progress(m, "done", "tasks killed with their sockets in repair, "
	    "%s deleted here", m->ns);
}

static void
kill_poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mig *m = arg;
	struct timeval tv = ms_timeval(KILL_POLL_MS);
	double waited = mono_ms() - m->t_kill;
	/* an unreadable cgroup.events (-1) has nothing left to wait for;
	 * fault: the tasks seem to take 3 s to die */
	int gone = migsrc_killed(&m->src) != 0 &&
	    !(m->kill_slow && waited < 3000);

	(void)fd;
	(void)what;
	if (!gone && waited < MIG_FREEZE_MS) {
		evtimer_add(m->kill_ev, &tv);
		return;
	}
	if (gone)
		log_info("migration %s: the tasks of %s died in %.1f ms", m->id,
		    m->ns, waited);
	else
		log_warnx("migration %s: the tasks of %s still run after %.0f "
		    "ms: deleting the namespace beside them", m->id, m->ns,
		    waited);
	kill_finish(m, 0);
	mig_settle(m);
}

void
src_kill_delete(struct mig *m, int wait)
{
	struct timeval tv = ms_timeval(KILL_POLL_MS);
	char err[256];

	if (reattach(m) == 0 && !wait) {
		if (migsrc_kill_start(&m->src, err, sizeof(err)) < 0)
			log_warnx("migration %s: %s", m->id, err);
		else if ((m->kill_ev = evtimer_new(migrd.base, kill_poll_cb,
		    m)) == NULL)
			log_warnx("migration %s: evtimer_new failed", m->id);
		else {
			m->kill_slow = mig_fault("src-kill-slow");
			m->t_kill = mono_ms();
			evtimer_add(m->kill_ev, &tv);
			return;
		}
	}
	kill_finish(m, MIG_FREEZE_MS);
}

void
src_kill_now(struct mig *m)
{
	double left;

	if (m->kill_ev == NULL)
		return;
	left = MIG_FREEZE_MS - (mono_ms() - m->t_kill);
	kill_finish(m, left > 0 ? (int)left : 0);
}

int
src_answer(int type, json_t *msg, struct src_answer *a)
{
	a->ms = -1;
	a->n = -1;
	a->pid = 0;
	a->replayed = 0;
	a->since_release = -1;
	a->since_commit = -1;
	a->reason = NULL;
	switch (type) {
	case MSG_MIG_PREPARED:
		json_unpack(msg, "{s?F}", "build_ms", &a->ms);
		break;
	case MSG_MIG_REFUSED:
	case MSG_MIG_FAILED:
	case MSG_MIG_ABORTED:
		a->reason = json_string_value(json_object_get(msg, "reason"));
		break;
	case MSG_MIG_READY:
		return json_unpack(msg, "{s:I,s:F}", "sockets", &a->n,
		    "restore_ms", &a->ms);
	case MSG_MIG_COMMITTED:
		json_unpack(msg, "{s?F,s?I,s?I,s?I,s?F,s?F}", "live_ms",
		    &a->ms, "pid", &a->pid, "reset", &a->n, "replayed",
		    &a->replayed, "since_release_ms", &a->since_release,
		    "since_commit_ms", &a->since_commit);
		break;
	}
	return 0;
}

/*
 * The downtime ends where the destination's workload ran, which COMMITTED
 * says in ms before itself: the replay's last slices may follow it.  A
 * figure that puts it before COMMIT was sent (or is not one) is not
 * believed: then it ends here, as it did before peers said it.
 *
 * COMMITTED also took its way here (through both TLS processes: 10 to
 * 30 ms in a TCG lab), which would count as downtime.  since_commit, how
 * long the destination had COMMIT, tells the channel's round trip from
 * its work: (now - t_commit) - since_commit; half of it is taken off,
 * if COMMIT went once (a repeat's round trip holds the outage that made
 * it) and the figures fit (released after COMMIT came).  The way there
 * carries the last kept packets ahead of COMMIT, so half the round trip
 * is at least the way back, and the downtime errs short of nothing.
 */
double
src_downtime_end(double now, double t_commit, unsigned commits,
    double since_release, double since_commit)
{
	double end, rtt;

	if (t_commit <= 0 || since_release < 0 ||
	    since_release > now - t_commit)
		return now;
	end = now - since_release;
	rtt = (now - t_commit) - since_commit;
	if (commits == 1 && since_commit >= since_release && rtt >= 0)
		end -= rtt / 2;
	return end;
}

static void
copy_reason(struct mig *m, const char *r, const char *dflt)
{
	snprintf(m->reason, sizeof(m->reason), "%.40s: %.200s", m->peer,
	    r != NULL ? r : dflt);
}

void
src_rx(struct mig *m, int type, json_t *msg)
{
	struct src_answer a;
	int rc = src_answer(type, msg, &a);
	json_int_t n = a.n, pid = a.pid;
	double ms = a.ms;
	char err[256];

	switch (type) {
	case MSG_MIG_PREPARED:
		if (m->state == MS_PREPARING)
			mig_progress(m, "prepared", "%s built %s, locked and "
			    "detached (%.1f ms)", m->peer, m->ns, ms);
		mig_event(m, ME_RX_PREPARED);
		break;
	case MSG_MIG_REFUSED:
		copy_reason(m, a.reason, "refused");
		mig_event(m, ME_RX_REFUSED);
		break;
	case MSG_MIG_FAILED:
		copy_reason(m, a.reason, "failed");
		mig_event(m, ME_RX_FAILED);
		break;
	case MSG_MIG_READY:
		if (m->state != MS_FROZEN || m->t_dump_done == 0) {
			log_warnx("migration %s: READY before the dump ended",
			    m->id);
			mig_fail(m, "%s sent READY out of turn", m->peer);
			break;
		}
		if (rc == -1 || n != (json_int_t)m->seq) {
			mig_fail(m, "%s restored %lld of %llu sockets", m->peer,
			    (long long)n, (unsigned long long)m->seq);
			break;
		}
		m->ms[PH_RESTORE] = ms;
		m->ms[PH_TRANSFER] = mono_ms() - m->t_dump_done;
		mig_progress(m, "ready", "%s restored %lld sockets (%.1f ms)",
		    m->peer, (long long)n, ms);
		/* from COMMIT on the destination may announce the addresses:
		 * this host answers for them no more (nslock.h) */
		if (nslock_mute(m->ns, err, sizeof(err)) < 0) {
			mig_fail(m, "cannot stop %s answering for its "
			    "addresses before COMMIT: %.200s", m->ns, err);
			break;
		}
		mig_event(m, ME_RX_READY);
		break;
	case MSG_MIG_COMMITTED:
		/* the peer's counts, bounded by what was sent */
		if (a.replayed > 0)
			m->rq_replayed = (uint64_t)a.replayed > m->rq_sent ?
			    m->rq_sent : (uint64_t)a.replayed;
		if (n > 0)
			m->kinds.reset = n > (json_int_t)m->kinds.total ?
			    m->kinds.total : (unsigned)n;
		/* the service runs again, over there */
		if (m->t_commit > 0 && m->ms[PH_COMMIT] < 0)
			m->ms[PH_COMMIT] = mono_ms() - m->t_commit;
		if (m->t_freeze > 0 && m->ms[PH_DOWNTIME] < 0)
			m->ms[PH_DOWNTIME] = src_downtime_end(mono_ms(),
			    m->t_commit, m->commits_sent, a.since_release,
			    a.since_commit) - m->t_freeze;
		if (m->state == MS_COMMITTING || m->state == MS_IN_DOUBT)
			mig_progress(m, "live", "%s is live on %s, workload pid "
			    "%lld (%.1f ms)%s", m->ns, m->peer, (long long)pid,
			    ms, n > 0 ? "; some connections could not resume "
			    "and were reset (see its log)" : "");
		mig_event(m, ME_RX_COMMITTED);
		break;
	case MSG_MIG_ABORTED:
		/* with no reason, the FAILED that crossed COMMIT says why */
		if (a.reason != NULL)
			copy_reason(m, a.reason, NULL);
		else if (m->reason[0] == '\0')
			snprintf(m->reason, sizeof(m->reason), "%s discarded "
			    "the migration (ABORTED)", m->peer);
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
	srccheck_cancel(m->check);
	m->check = NULL;
	ckpt_cleanup(m);
	src_outq_free(m);
	/* neither committed nor rolled back (migrd stops in doubt): the
	 * sockets stay in repair for the next migrd */
	if (m->have_src)
		migsrc_free(&m->src);
	m->have_src = 0;
}
