/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "announce.h"
#include "clock.h"
#include "errbuf.h"
#include "log.h"
#include "migdst.h"
#include "netns.h"
#include "nsbuild.h"
#include "nslock.h"
#include "sk_engine.h"

int
migdst_build(struct migdst *d, const char *ns, const char *hostif,
    const struct nsdump *dump, char *err, size_t errlen)
{
	double t0 = mono_ms();

	memset(d, 0, sizeof(*d));
	snprintf(d->ns, sizeof(d->ns), "%s", ns);
	snprintf(d->hostif, sizeof(d->hostif), "%s", hostif);
	if (nsbuild_create(ns, err, errlen) < 0)
		return -1;
	/* locked before any of its links is up */
	if (nslock_take(ns, err, errlen) < 0 ||
	    nsbuild_apply(ns, dump, hostif, err, errlen) < 0 ||
	    nsbuild_carrier(hostif, err, errlen) < 0) {
		nsbuild_delete(ns, hostif, NULL, 0);
		return -1;
	}
	d->built = 1;
	d->fig.build_ms = mono_ms() - t0;
	return 0;
}

/* "10.77.0.100-7000", with an IPv6 address's colons as dots: a name in
 * LISTEN_FDNAMES may hold no colon. */
static void
addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?", *p;
	const void *src = ss->ss_family == AF_INET6 ?
	    (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
	    (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	inet_ntop(ss->ss_family, src, a, sizeof(a));
	for (p = a; *p; p++)
		if (*p == ':')
			*p = '.';
	snprintf(buf, len, "%s-%u", a, sk_addr_port(ss));
}

int
migdst_restore(struct migdst *d, const struct sk_state *st, char *err,
    size_t errlen)
{
	double t0 = mono_ms();
	struct migdst_item *it;
	char l[64], r[64];
	int saved;

	/* doubling: one more each time copied the whole list per socket */
	if (d->nitems == d->capitems) {
		size_t cap = d->capitems ? 2 * d->capitems : 64;

		if ((it = realloc(d->items, cap * sizeof(*it))) == NULL) {
			errbuf_errno(err, errlen, "realloc");
			return -1;
		}
		d->items = it;
		d->capitems = cap;
	}
	it = &d->items[d->nitems];
	memset(it, 0, sizeof(*it));
	/* the socket must be made inside the namespace */
	saved = netns_enter(d->ns, err, errlen);
	if (saved < 0)
		return -1;
	it->h = sk_restore(st);
	if (netns_leave(saved, err, errlen) < 0) {
		if (it->h != NULL)
			sk_abort(it->h);
		return -1;
	}
	if (it->h == NULL) {
		errbuf(err, errlen, "the engine could not rebuild it (see the "
		    "log)");
		return -1;
	}
	it->id = st->id;
	it->listener = st->state == SK_ST_LISTEN;
	addr_text(&st->local, l, sizeof(l));
	if (st->flags & SK_F_REMOTE) {
		addr_text(&st->remote, r, sizeof(r));
		snprintf(it->name, sizeof(it->name), "%s-%s-%s",
		    it->listener ? "listen" : st->proto == SK_PROTO_UDP ?
		    "udp" : "conn", l, r);
	} else {
		snprintf(it->name, sizeof(it->name), "%s-%s",
		    it->listener ? "listen" : st->proto == SK_PROTO_UDP ?
		    "udp" : "sock", l);
	}
	d->nitems++;
	d->fig.sockets++;
	d->fig.restore_ms += mono_ms() - t0;
	return 0;
}

int
migdst_attach_start(struct migdst *d, const char *bridge, char *err,
    size_t errlen)
{
	d->t_attach = mono_ms();
	d->bridge = bridge;
	d->resumed = 0;
	return nsbuild_enslave(d->hostif, bridge, err, errlen);
}

int
migdst_attach_poll(struct migdst *d, double held, char *err, size_t errlen)
{
	double waited = mono_ms() - d->t_attach;

	if (waited >= held && nsbuild_forwarding(d->hostif)) {
		d->t_forward = mono_ms();
		return 1;
	}
	if (waited < NSBUILD_FORWARD_MS)
		return 0;
	snprintf(err, errlen, "%s is not forwarding on %s after %d ms",
	    d->hostif, d->bridge, NSBUILD_FORWARD_MS);
	return -1;
}

int
migdst_attach_finish(struct migdst *d, char *err, size_t errlen)
{
	double t1 = d->t_forward, t2;
	char why[256];

	if (nslock_unlock(d->ns, err, errlen) < 0)
		return -1;
	t2 = mono_ms();
	if (announce_addrs(d->ns, "eth0", why, sizeof(why)) < 0)
		log_warnx("%s: %s: not announced: %s", __func__, d->ns, why);
	d->fig.attach_ms = t1 - d->t_attach;
	d->fig.unlock_ms = t2 - t1;
	d->fig.announce_ms = mono_ms() - t2;
	return 0;
}

int
migdst_attach_rest(struct migdst *d, char *err, size_t errlen)
{
	double left = NSBUILD_FORWARD_MS - (mono_ms() - d->t_attach);

	if (nsbuild_forwarding_wait(d->hostif, d->bridge,
	    left > 0 ? (int)left : 0, err, errlen) < 0)
		return -1;
	d->t_forward = mono_ms();
	return migdst_attach_finish(d, err, errlen);
}

int
migdst_attach(struct migdst *d, const char *bridge, char *err, size_t errlen)
{
	if (migdst_attach_start(d, bridge, err, errlen) < 0)
		return -1;
	return migdst_attach_rest(d, err, errlen);
}

int
migdst_resume_some(struct migdst *d, double budget_ms, size_t most)
{
	double t0 = mono_ms();
	size_t n = 0;

	/*
	 * Each socket leaves repair (a window probe restarts its flow) and
	 * queues its never-sent bytes, waiting for no peer.  One that
	 * cannot take them back (the host is out of socket memory) is
	 * reset: its peer learns at once, rather than read a stream with a
	 * gap in it.
	 */
	for (; d->resumed < d->nitems; d->resumed++) {
		struct migdst_item *it = &d->items[d->resumed];

		if (n > 0 && (n >= most || mono_ms() - t0 >= budget_ms))
			break;
		n++;
		if (it->h == NULL || sk_resume(it->h, 0) == 0)
			continue;
		log_warnx("%s: %s: socket %llu could not resume: reset",
		    __func__, d->ns, (unsigned long long)it->id);
		sk_reset(it->h);
		it->h = NULL;
		d->fig.reset++;
	}
	d->fig.live_ms = mono_ms() - d->t_attach;	/* the wall's time */
	return d->resumed == d->nitems;
}

void
migdst_resume_all(struct migdst *d)
{
	(void)migdst_resume_some(d, INFINITY, SIZE_MAX);
}

size_t
migdst_workload_fds(const struct migdst *d, int *fds, char **names)
{
	size_t i, n = 0;
	int pass;

	/* listeners first, then the rest, in record order */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < d->nitems; i++) {
			struct migdst_item *it = &d->items[i];

			if (it->h == NULL || it->listener != (pass == 0))
				continue;
			names[n] = it->name;
			fds[n++] = sk_handle_fd(it->h);
		}
	return n;
}

void
migdst_release(struct migdst *d)
{
	size_t i;

	for (i = 0; i < d->nitems; i++) {
		if (d->items[i].h != NULL)
			close(sk_detach(d->items[i].h));
		d->items[i].h = NULL;
	}
	d->built = 0;		/* it is the workload's now */
}

void
migdst_discard(struct migdst *d)
{
	char why[256];
	size_t i;

	for (i = 0; i < d->nitems; i++) {
		if (d->items[i].h != NULL)
			sk_abort(d->items[i].h);	/* silent: still in repair */
		d->items[i].h = NULL;
	}
	if (d->built && nsbuild_delete(d->ns, d->hostif, why, sizeof(why)) < 0)
		log_warnx("%s: %s: %s", __func__, d->ns, why);
	d->built = 0;
}

void
migdst_free(struct migdst *d)
{
	migdst_discard(d);
	free(d->items);
	memset(d, 0, sizeof(*d));
}
