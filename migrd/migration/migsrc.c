/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "errbuf.h"
#include "log.h"
#include "mcast.h"
#include "migsrc.h"
#include "nsbuild.h"
#include "nsdump.h"
#include "nslock.h"
#include "sk_engine.h"
#include "sk_json.h"
#include "sockdiag.h"
#include "taskrest.h"

#define MAX_ACCEPT	4096

/* why += "; text" */
static void
add_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n = strnlen(why, len);

	if (n + 3 >= len)
		return;
	if (n > 0) {
		memcpy(why + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + n, len - n, fmt, ap);
	va_end(ap);
}

/* One reason: into why ("; " between reasons) and, when given, as an
 * element of reasons. */
static void
refuse(char *why, size_t len, json_t *reasons, const char *fmt, ...)
{
	char one[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	add_why(why, len, "%s", one);
	if (reasons != NULL)
		json_array_append_new(reasons, json_string(one));
}

static unsigned
collect_flags(unsigned flags)
{
	return (flags & MIGSRC_CKPT) ? COLLECT_INET_ONLY : 0;
}

/* The engine's reasons for one socket ("a; b"), each with its owner. */
static void
refuse_socket(char *why, size_t len, json_t *reasons,
    const struct collect_sock *cs, char *engine)
{
	char *p = engine, *q;

	for (;;) {
		if ((q = strstr(p, "; ")) != NULL)
			*q = '\0';
		refuse(why, len, reasons, "pid %d fd %d: %s",
		    (int)cs->users[0].pid, cs->users[0].fd, p);
		if (q == NULL)
			break;
		p = q + 2;
	}
}

int
migsrc_check(const char *ns, const char *cgroup, unsigned flags, char *why,
    size_t len, json_t *reasons)
{
	struct collect_set set;
	struct sockdiag_sock *diag = NULL;
	const struct sockdiag_sock *d;
	char one[1024];
	size_t i, ndiag = 0, n;
	int mc;

	if (len > 0)
		why[0] = '\0';
	if (collect_sockets(cgroup, collect_flags(flags), &set, one,
	    sizeof(one)) < 0) {
		refuse(why, len, reasons, "cannot collect the sockets: %s",
		    one);
		return -1;
	}
	if (sockdiag_tcp(ns, &diag, &ndiag, one, sizeof(one)) < 0) {
		refuse(why, len, reasons, "cannot list the TCP sockets: %s",
		    one);
		collect_free(&set);
		return -1;
	}
	for (i = 0; i < set.nsocks; i++) {
		const struct collect_sock *cs = &set.socks[i];

		if (sk_check(cs->fd, one, sizeof(one)) < 0)
			refuse_socket(why, len, reasons, cs, one);
		if ((d = sockdiag_find(diag, ndiag, (uint32_t)cs->ino)) !=
		    NULL && d->md5)
			refuse(why, len, reasons, "pid %d fd %d: tcp: "
			    "TCP_MD5SIG keys cannot be moved (no call reads "
			    "them back)", (int)cs->users[0].pid,
			    cs->users[0].fd);
	}
	if ((mc = mcast_joined(ns, one, sizeof(one))) > 0)
		refuse(why, len, reasons, "multicast groups joined (a "
		    "socket's memberships cannot be read back): %s", one);
	else if (mc < 0)
		refuse(why, len, reasons, "%s", one);
	/* the connections waiting in accept queues travel as sockets of
	 * their own: the destination sizes what it takes on this count */
	n = set.nsocks;
	for (i = 0; i < ndiag; i++)
		if (sockdiag_accept_waiting(&diag[i]))
			n += diag[i].rqueue;
	free(diag);
	collect_free(&set);
	if (why[0] != '\0')
		return -1;
	return n > INT_MAX ? INT_MAX : (int)n;
}

/* What diag_count() does with each socket that matches besides count
 * it: 0, or -1 with the reason in why. */
typedef int (*diag_each_fn)(const struct sockdiag_sock *, void *arg,
    char *why, size_t len);

/* The sockets of ns that match: how many, the first three in why; each
 * handed to each, when given (-1 if it fails). */
static int
diag_count(const char *ns, bool (*match)(const struct sockdiag_sock *),
    diag_each_fn each, void *arg, char *why, size_t len)
{
	struct sockdiag_sock *diag;
	char one[160];
	size_t i, n;
	int found = 0;

	if (len > 0)
		why[0] = '\0';
	if (sockdiag_tcp(ns, &diag, &n, why, len) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!match(&diag[i]))
			continue;
		if (found++ < 3) {
			sockdiag_describe(&diag[i], one, sizeof(one));
			add_why(why, len, "%s", one);
		}
		if (each != NULL && each(&diag[i], arg, why, len) < 0) {
			found = -1;
			break;
		}
	}
	if (found > 3)
		add_why(why, len, "and %d more", found - 3);
	free(diag);
	return found;
}

int
migsrc_orphans(const char *ns, char *why, size_t len)
{
	return diag_count(ns, sockdiag_orphan_busy, NULL, NULL, why, len);
}

int
migsrc_handshakes(const char *ns, char *why, size_t len)
{
	return diag_count(ns, sockdiag_handshake, NULL, NULL, why, len);
}

int
migsrc_accept_waiting(const char *ns, char *why, size_t len)
{
	return diag_count(ns, sockdiag_accept_waiting, NULL, NULL, why, len);
}

/* An orphan that appeared after the wait (a close between the last look
 * and the freeze) cannot be carried: the migration rolls back. */
static int
orphan_check(struct migsrc *s, char *err, size_t errlen)
{
	char one[160];
	size_t i;

	for (i = 0; i < s->ndiag; i++) {
		if (!sockdiag_orphan_busy(&s->diag[i]))
			continue;
		sockdiag_describe(&s->diag[i], one, sizeof(one));
		errbuf(err, errlen, "an orphaned connection still owes its "
		    "peer bytes, and has no file to move: %s", one);
		return -1;
	}
	return 0;
}

int
migsrc_lock(struct migsrc *s, const char *ns, const char *cgroup,
    unsigned flags, int replay, char *err, size_t errlen)
{
	double t0 = mono_ms();

	memset(s, 0, sizeof(*s));
	s->flags = flags;
	s->replay = replay;
	snprintf(s->ns, sizeof(s->ns), "%s", ns);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cgroup);
	if (nslock_take_source(s->ns, s->replay, err, errlen) < 0)
		return -1;
	s->locked = 1;
	s->fig.lock_ms = mono_ms() - t0;
	return 0;
}

int
migsrc_at_rest(const struct migsrc *s, char *why, size_t len)
{
	return taskrest_cgroup(s->cgroup, why, len);
}

static int
passed_already(const struct migsrc *s, const struct sockdiag_sock *d)
{
	size_t i;

	for (i = 0; i < s->npassed; i++)
		if (memcmp(&s->passed[i].local, &d->local,
		    sizeof(d->local)) == 0 &&
		    memcmp(&s->passed[i].remote, &d->remote,
		    sizeof(d->remote)) == 0)
			return 1;
	return 0;
}

/* A busy orphan (diag_count()'s each): remembered, if it is new, to be
 * let through. */
static int
remember_orphan(const struct sockdiag_sock *d, void *arg, char *why,
    size_t len)
{
	struct migsrc *s = arg;
	struct sockdiag_sock *p;

	if (passed_already(s, d))
		return 0;
	if (s->npassed == NSLOCK_PASS_MAX) {
		errbuf(why, len, "more than %d connections closed while locked",
		    NSLOCK_PASS_MAX);
		return -1;
	}
	if ((p = realloc(s->passed, (s->npassed + 1) * sizeof(*p))) == NULL) {
		errbuf_errno(why, len, "realloc");
		return -1;
	}
	s->passed = p;
	s->passed[s->npassed++] = *d;
	return 0;
}

int
migsrc_pass_orphans(struct migsrc *s, char *why, size_t len)
{
	size_t first = s->npassed;
	int busy = diag_count(s->ns, sockdiag_orphan_busy, remember_orphan, s,
	    why, len);

	if (busy >= 0 && s->npassed > first && nslock_pass(s->ns,
	    s->passed + first, s->npassed - first, why, len) < 0)
		busy = -1;
	if (busy < 0)
		s->npassed = first;	/* none of them was let through */
	return busy;
}

int
migsrc_freeze_start(struct migsrc *s, char *err, size_t errlen)
{
	s->t_freeze = mono_ms();
	if (cgroup_freeze_start(s->cgroup, err, errlen) < 0)
		return -1;
	s->frozen = 1;		/* asked: a rollback thaws */
	return 0;
}

int
migsrc_frozen(const struct migsrc *s)
{
	return cgroup_event(s->cgroup, "frozen");
}

int
migsrc_freeze_finish(struct migsrc *s, char *err, size_t errlen)
{
	double t1 = mono_ms();
	char why[256];

	s->fig.freeze_ms = t1 - s->t_freeze;
	if (collect_sockets(s->cgroup, collect_flags(s->flags), &s->set, err,
	    errlen) < 0 ||
	    sockdiag_tcp(s->ns, &s->diag, &s->ndiag, err, errlen) < 0)
		goto out;
	s->fig.collect_ms = mono_ms() - t1;
	if (orphan_check(s, err, errlen) < 0)
		goto out;
	return 0;

out:
	if (migsrc_rollback(s, why, sizeof(why)) < 0)
		log_warnx("%s: %s", __func__, why);
	return -1;
}

int
migsrc_freeze(struct migsrc *s, const char *ns, const char *cgroup,
    unsigned flags, int timeout_ms, char *err, size_t errlen)
{
	char why[256];

	if (migsrc_lock(s, ns, cgroup, flags, 0, err, errlen) < 0)
		return -1;
	if (migsrc_freeze_start(s, err, errlen) < 0 ||
	    cgroup_freeze(cgroup, timeout_ms, err, errlen) < 0) {
		if (migsrc_rollback(s, why, sizeof(why)) < 0)
			log_warnx("%s: %s", __func__, why);
		return -1;
	}
	return migsrc_freeze_finish(s, err, errlen);
}

static struct migsrc_item *
add_item(struct migsrc *s)
{
	struct migsrc_item *it;

	/* doubling: one more each time copied the whole list per socket */
	if (s->nitems == s->capitems) {
		size_t cap = s->capitems ? 2 * s->capitems : 64;

		if ((it = realloc(s->items, cap * sizeof(*it))) == NULL) {
			log_warn("%s: realloc", __func__);
			return NULL;
		}
		s->items = it;
		s->capitems = cap;
	}
	it = &s->items[s->nitems++];
	memset(it, 0, sizeof(*it));
	it->id = s->nitems;
	it->fd = -1;
	return it;
}

static int
emit_socket(struct migsrc *s, struct migsrc_item *it, uint64_t parent,
    migsrc_emit_fn emit, void *arg, int *listener)
{
	struct sk_state *st;
	uint32_t i;
	json_t *j;

	if (sk_save(it->h, &st) < 0)
		return -1;
	if (listener != NULL)
		*listener = st->proto == SK_PROTO_TCP && st->state == SK_ST_LISTEN;
	st->id = it->id;
	if (s->flags & MIGSRC_NO_PATH)
		st->flags &= ~SK_F_PATH;
	if (parent) {
		st->parent_id = parent;
		st->flags |= SK_F_PARENT;
	}
	s->fig.queued_bytes += st->tcp.sndq_len + st->tcp.rcvq_len;
	for (i = 0; i < st->udp.ndgrams; i++)
		s->fig.queued_bytes += st->udp.dgrams[i].len;
	j = sk_json_encode_split(st, s->inline_max ? s->inline_max :
	    UINT32_MAX);
	if (j == NULL) {
		log_warnx("%s: cannot encode socket record %llu", __func__,
		    (unsigned long long)it->id);
		sk_state_free(st);
		return -1;
	}
	return emit(j, st, arg);	/* it takes j and st */
}

/* Is the collected socket a listener? */
static int
is_listener(const struct collect_sock *cs)
{
	int acc = 0;
	socklen_t alen = sizeof(acc);

	getsockopt(cs->fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &alen);
	return acc != 0;
}

/*
 * Pause and save one collected socket.  A listener's waiting connections
 * are accepted and paused at once (in repair mode, so that a rollback
 * resets them silently), and saved one per later step: a listener with
 * hundreds of them held the loop for seconds in one step.  0 or -1.
 */
static int
dump_one(struct migsrc *s, struct collect_sock *cs, migsrc_emit_fn emit,
    void *arg)
{
	const struct sockdiag_sock *d;
	struct migsrc_item *it;
	size_t n = 0, j;
	int listener, *fds, rc = 0;

	if ((it = add_item(s)) == NULL)
		return -1;
	it->cs = cs;
	it->h = sk_pause(cs->fd);
	if (it->h == NULL)
		return -1;
	/* getpeername() does not tell a SYN_SENT socket's peer: sock_diag */
	if ((d = sockdiag_find(s->diag, s->ndiag, (uint32_t)cs->ino)) !=
	    NULL && d->state == SK_ST_SYN_SENT && sk_set_remote(it->h, &d->remote) < 0)
		return -1;
	if (emit_socket(s, it, 0, emit, arg, &listener) < 0)
		return -1;
	s->fig.sockets++;
	if (!listener)
		return 0;
	/* a listener: its waiting connections go as established ones */
	s->child_of = it->id;
	if ((fds = calloc(MAX_ACCEPT, sizeof(*fds))) == NULL) {
		log_warn("%s: calloc", __func__);
		return -1;
	}
	if (sk_accept_pending(it->h, fds, MAX_ACCEPT, &n) < 0) {
		free(fds);
		return -1;
	}
	s->child = s->nchild = s->nitems;
	for (j = 0; j < n; j++) {
		struct migsrc_item *c = add_item(s);

		if (c == NULL) {
			rc = -1;
			break;
		}
		c->accepted = 1;
		c->fd = fds[j];
		fds[j] = -1;
		if ((c->h = sk_pause(c->fd)) == NULL) {
			rc = -1;
			break;
		}
	}
	s->nchild = s->nitems;	/* the children, paused or not */
	for (; j < n; j++)
		if (fds[j] >= 0)
			close(fds[j]);
	free(fds);
	return rc;
}

/* Save the next waiting connection of the last listener: 1, or 0 when
 * none is left, or -1. */
static int
dump_child(struct migsrc *s, migsrc_emit_fn emit, void *arg)
{
	struct migsrc_item *c;

	if (s->child >= s->nchild)
		return 0;
	c = &s->items[s->child++];
	if (emit_socket(s, c, s->child_of, emit, arg, NULL) < 0)
		return -1;
	s->fig.sockets++;
	s->fig.accepted++;
	return 1;
}

/*
 * Listeners first: a connection restored before its listener takes the
 * port with forced reuse, and the listener's plain bind then fails with
 * EADDRINUSE.  The fd order of the tasks does not guarantee that (a
 * restarted workload's fds come in any order).  The cursor walks the
 * collected set twice: pass 1 listeners, pass 2 the rest.
 */
int
migsrc_dump_next(struct migsrc *s, migsrc_emit_fn emit, void *arg)
{
	double t0 = mono_ms();
	int rc = 0;

	if ((rc = dump_child(s, emit, arg)) != 0) {
		s->fig.dump_ms += mono_ms() - t0;
		return rc < 0 ? -1 : 1;
	}
	while (s->cursor < 2 * s->set.nsocks) {
		struct collect_sock *cs;

		cs = &s->set.socks[s->cursor % s->set.nsocks];
		if ((s->cursor++ < s->set.nsocks) != is_listener(cs))
			continue;
		rc = dump_one(s, cs, emit, arg) < 0 ? -1 : 1;
		break;
	}
	s->fig.dump_ms += mono_ms() - t0;
	return rc;
}

struct ns_emit {
	migsrc_emit_fn	 emit;
	void		*arg;
};

static int
ns_record(json_t *rec, void *arg)
{
	struct ns_emit *e = arg;

	return e->emit(rec, NULL, e->arg);
}

int
migsrc_dump(struct migsrc *s, migsrc_emit_fn emit, void *arg)
{
	struct ns_emit e = { emit, arg };
	double t0 = mono_ms();
	char why[256];
	int rc;

	if (nsdump_emit(s->ns, ns_record, &e, why, sizeof(why)) < 0) {
		log_warnx("%s: %s", __func__, why);
		return -1;
	}
	while ((rc = migsrc_dump_next(s, emit, arg)) > 0)
		;
	s->fig.dump_ms = mono_ms() - t0;
	return rc;
}

int
migsrc_reattach(struct migsrc *s, const char *ns, const char *cgroup,
    unsigned flags, char *err, size_t errlen)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->flags = flags;
	snprintf(s->ns, sizeof(s->ns), "%s", ns);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cgroup);
	/* whatever a dead migrd left: frozen, locked, sockets in repair */
	s->frozen = s->locked = 1;
	if (collect_sockets(cgroup, collect_flags(flags), &s->set, err,
	    errlen) < 0)
		return -1;
	for (i = 0; i < s->set.nsocks; i++) {
		struct collect_sock *cs = &s->set.socks[i];
		struct migsrc_item *it;

		if (is_listener(cs))
			continue;	/* never in repair */
		if ((it = add_item(s)) == NULL) {
			errbuf(err, errlen, "out of memory");
			return -1;
		}
		it->cs = cs;
		if ((it->h = sk_pause(cs->fd)) == NULL) {
			errbuf(err, errlen, "pid %d fd %d cannot be paused",
			    (int)cs->users[0].pid, cs->users[0].fd);
			return -1;
		}
	}
	return 0;
}

int
migsrc_kill_start(struct migsrc *s, char *err, size_t errlen)
{
	return cgroup_kill_start(s->cgroup, err, errlen);
}

int
migsrc_killed(const struct migsrc *s)
{
	int v = cgroup_event(s->cgroup, "populated");

	return v < 0 ? -1 : v == 0;
}

int
migsrc_commit(struct migsrc *s, const char *hostif, int timeout_ms,
    char *err, size_t errlen)
{
	char why[256];
	size_t i;
	int rc = 0;

	/* the tasks die first: their fds close on sockets still in repair */
	if (cgroup_kill(s->cgroup, timeout_ms, err, errlen) < 0)
		rc = -1;
	for (i = 0; i < s->nitems; i++) {
		struct migsrc_item *it = &s->items[i];

		if (it->h != NULL && sk_release(it->h) < 0)
			rc = -1;
		it->h = NULL;
		if (it->cs != NULL)
			it->cs->fd = -1;	/* closed by sk_release */
		it->fd = -1;
	}
	if (nsbuild_delete(s->ns, hostif, why, sizeof(why)) < 0) {
		if (rc == 0)
			errbuf(err, errlen, "%s", why);
		rc = -1;
	}
	/* the emptied cgroup goes too: left frozen, it would freeze the
	 * next workload started in it (the service coming back here) */
	if (cgroup_remove(s->cgroup, timeout_ms, why, sizeof(why)) < 0) {
		if (rc == 0)
			errbuf(err, errlen, "%s", why);
		rc = -1;
	}
	s->frozen = s->locked = 0;
	return rc;
}

int
migsrc_rollback(struct migsrc *s, char *err, size_t errlen)
{
	char why[256];
	size_t i;
	int rc = 0;

	for (i = 0; i < s->nitems; i++) {
		struct migsrc_item *it = &s->items[i];

		if (it->accepted) {
			/* no way back into the accept queue: reset, so the
			 * client learns at once (a documented loss) */
			if (it->h != NULL)
				sk_reset(it->h);
			else if (it->fd >= 0)
				close(it->fd);
		} else if (it->h != NULL && sk_rollback(it->h) < 0) {
			if (rc == 0)
				errbuf(err, errlen, "a socket did not leave "
				    "repair (see the log)");
			rc = -1;
		}
		it->h = NULL;
		it->fd = -1;
	}
	if (s->locked && nslock_release(s->ns, why, sizeof(why)) < 0) {
		if (rc == 0)
			errbuf(err, errlen, "%s", why);
		rc = -1;
	}
	s->locked = 0;
	if (s->frozen && cgroup_thaw(s->cgroup, why, sizeof(why)) < 0) {
		if (rc == 0)
			errbuf(err, errlen, "%s", why);
		rc = -1;
	}
	s->frozen = 0;
	return rc;
}

void
migsrc_free(struct migsrc *s)
{
	size_t i;

	for (i = 0; i < s->nitems; i++) {
		struct migsrc_item *it = &s->items[i];

		/* neither committed nor rolled back: leave the socket as it
		 * is, drop only our hold on it */
		if (it->h != NULL) {
			int fd = sk_detach(it->h);

			if (it->accepted)
				close(fd);
		} else if (it->accepted && it->fd >= 0) {
			close(it->fd);
		}
	}
	free(s->items);
	free(s->diag);
	free(s->passed);
	collect_free(&s->set);
	memset(s, 0, sizeof(*s));
}
