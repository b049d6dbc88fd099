#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "freeze.h"
#include "clock.h"
#include "log.h"
#include "migsrc.h"
#include "nsbuild.h"
#include "nsdump.h"
#include "nslock.h"
#include "sk_json.h"
#include "sk_repair.h"

#define MAX_ACCEPT	4096

int
migsrc_check(const char *ns, const char *cgroup, char *why, size_t len)
{
	struct collect_set set;
	char one[256];
	size_t i;
	int rc = 0;

	(void)ns;
	if (collect_sockets(cgroup, &set) < 0) {
		snprintf(why, len, "cannot collect the sockets of %s", cgroup);
		return -1;
	}
	for (i = 0; i < set.nsocks; i++) {
		if (sk_check(set.socks[i].fd, one, sizeof(one)) < 0) {
			snprintf(why, len, "pid %d fd %d: %s",
			    (int)set.socks[i].users[0].pid,
			    set.socks[i].users[0].fd, one);
			rc = -1;
			break;
		}
	}
	collect_free(&set);
	return rc;
}

int
migsrc_freeze(struct migsrc *s, const char *ns, const char *cgroup,
    int timeout_ms)
{
	double t0 = mono_ms(), t1;

	memset(s, 0, sizeof(*s));
	snprintf(s->ns, sizeof(s->ns), "%s", ns);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cgroup);
	if (freeze_cgroup(cgroup, timeout_ms) < 0)
		goto out_thaw;
	s->frozen = 1;
	t1 = mono_ms();
	s->fig.freeze_ms = t1 - t0;
	if (nslock_take(ns) < 0)
		goto out_thaw;
	s->locked = 1;
	s->fig.lock_ms = mono_ms() - t1;
	t1 = mono_ms();
	if (collect_sockets(cgroup, &s->set) < 0)
		goto out_unlock;
	s->fig.collect_ms = mono_ms() - t1;
	return 0;

out_unlock:
	nslock_release(ns);
	s->locked = 0;
out_thaw:
	thaw_cgroup(cgroup, timeout_ms);
	s->frozen = 0;
	return -1;
}

static struct migsrc_item *
add_item(struct migsrc *s)
{
	struct migsrc_item *it;

	it = realloc(s->items, (s->nitems + 1) * sizeof(*it));
	if (it == NULL) {
		log_warn("%s: realloc", __func__);
		return NULL;
	}
	s->items = it;
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
	json_t *j;

	if (sk_save(it->h, &st) < 0)
		return -1;
	if (listener != NULL)
		*listener = st->proto == SK_PROTO_TCP && st->state == SK_ST_LISTEN;
	st->id = it->id;
	if (parent) {
		st->parent_id = parent;
		st->flags |= SK_F_PARENT;
	}
	s->fig.queued_bytes += st->tcp.sndq_len + st->tcp.rcvq_len;
	j = sk_json_encode(st);
	sk_state_free(st);
	if (j == NULL)
		return -1;
	return emit(j, arg);
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

/* Pause and save one collected socket, and a listener's waiting
 * connections after it.  0 or -1. */
static int
dump_one(struct migsrc *s, struct collect_sock *cs, migsrc_emit_fn emit,
    void *arg)
{
	struct migsrc_item *it;
	uint64_t lid;
	size_t n = 0, j;
	int listener, *fds;

	if ((it = add_item(s)) == NULL)
		return -1;
	it->cs = cs;
	it->h = sk_pause(cs->fd);
	if (it->h == NULL || emit_socket(s, it, 0, emit, arg, &listener) < 0)
		return -1;
	s->fig.sockets++;
	if (!listener)
		return 0;
	/* a listener: its waiting connections go as established ones */
	lid = it->id;
	if ((fds = calloc(MAX_ACCEPT, sizeof(*fds))) == NULL) {
		log_warn("%s: calloc", __func__);
		return -1;
	}
	if (sk_accept_pending(it->h, fds, MAX_ACCEPT, &n) < 0) {
		free(fds);
		return -1;
	}
	for (j = 0; j < n; j++) {
		struct migsrc_item *c = add_item(s);

		if (c == NULL)
			break;
		c->accepted = 1;
		c->fd = fds[j];
		fds[j] = -1;
		c->h = sk_pause(c->fd);
		if (c->h == NULL || emit_socket(s, c, lid, emit, arg, NULL) < 0)
			break;
		s->fig.sockets++;
		s->fig.accepted++;
	}
	for (; j < n; j++)
		if (fds[j] >= 0)
			close(fds[j]);
	free(fds);
	return j == n ? 0 : -1;
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

int
migsrc_dump(struct migsrc *s, migsrc_emit_fn emit, void *arg)
{
	double t0 = mono_ms();
	int rc;

	if (nsdump_emit(s->ns, emit, arg) < 0)
		return -1;
	while ((rc = migsrc_dump_next(s, emit, arg)) > 0)
		;
	s->fig.dump_ms = mono_ms() - t0;
	return rc;
}

int
migsrc_reattach(struct migsrc *s, const char *ns, const char *cgroup)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	snprintf(s->ns, sizeof(s->ns), "%s", ns);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cgroup);
	/* whatever a dead migrd left: frozen, locked, sockets in repair */
	s->frozen = s->locked = 1;
	if (collect_sockets(cgroup, &s->set) < 0)
		return -1;
	for (i = 0; i < s->set.nsocks; i++) {
		struct collect_sock *cs = &s->set.socks[i];
		struct migsrc_item *it;

		if (is_listener(cs))
			continue;	/* never in repair */
		if ((it = add_item(s)) == NULL)
			return -1;
		it->cs = cs;
		if ((it->h = sk_pause(cs->fd)) == NULL)
			return -1;
	}
	return 0;
}

int
migsrc_commit(struct migsrc *s, const char *hostif, int timeout_ms)
{
	size_t i;
	int rc = 0;

	/* the tasks die first: their fds close on sockets still in repair */
	if (kill_cgroup(s->cgroup, timeout_ms) < 0)
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
	if (nsbuild_delete(s->ns, hostif) < 0)
		rc = -1;
	/* the emptied cgroup goes too: left frozen, it would freeze the
	 * next workload started in it (the service coming back here) */
	if (thaw_cgroup(s->cgroup, timeout_ms) < 0 ||
	    (rmdir(s->cgroup) < 0 && errno != ENOENT)) {
		log_warn("%s: remove %s", __func__, s->cgroup);
		rc = -1;
	}
	s->frozen = s->locked = 0;
	return rc;
}

int
migsrc_rollback(struct migsrc *s, int timeout_ms)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < s->nitems; i++) {
		struct migsrc_item *it = &s->items[i];

		if (it->accepted) {
			/* no way back into the accept queue: a documented loss */
			if (it->h != NULL)
				sk_release(it->h);
			else if (it->fd >= 0)
				close(it->fd);
		} else if (it->h != NULL && sk_rollback(it->h) < 0) {
			rc = -1;
		}
		it->h = NULL;
		it->fd = -1;
	}
	if (s->locked && nslock_release(s->ns) < 0)
		rc = -1;
	s->locked = 0;
	if (s->frozen && thaw_cgroup(s->cgroup, timeout_ms) < 0)
		rc = -1;
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
	collect_free(&s->set);
	memset(s, 0, sizeof(*s));
}
