/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "errbuf.h"
#include "netns.h"
#include "rtnl.h"
#include "nsbuild.h"

/* As iproute2 does: /run/netns is a shared mount point, so a namespace
 * bound on it is seen (and can be unmounted) from every mount namespace. */
static int
prepare_run_dir(char *err, size_t errlen)
{
	if (mkdir(NETNS_RUN_DIR, 0755) < 0 && errno != EEXIST) {
		errbuf_errno(err, errlen, "mkdir %s", NETNS_RUN_DIR);
		return -1;
	}
	if (mount("", NETNS_RUN_DIR, "none", MS_SHARED | MS_REC, NULL) == 0)
		return 0;
	if (errno != EINVAL) {
		errbuf_errno(err, errlen, "make %s shared", NETNS_RUN_DIR);
		return -1;
	}
	if (mount(NETNS_RUN_DIR, NETNS_RUN_DIR, "none", MS_BIND | MS_REC,
	    NULL) < 0 ||
	    mount("", NETNS_RUN_DIR, "none", MS_SHARED | MS_REC, NULL) < 0) {
		errbuf_errno(err, errlen, "bind %s", NETNS_RUN_DIR);
		return -1;
	}
	return 0;
}

int
nsbuild_create(const char *ns, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, saved, rc = -1;

	if (strchr(ns, '/') != NULL || (size_t)snprintf(path, sizeof(path),
	    NETNS_RUN_DIR "/%s", ns) >= sizeof(path)) {
		errbuf(err, errlen, "bad namespace name '%s'", ns);
		return -1;
	}
	if (prepare_run_dir(err, errlen) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0) {
		errbuf_errno(err, errlen, "%s", path);
		return -1;
	}
	close(fd);
	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0) {
		errbuf_errno(err, errlen, "own network namespace");
		goto out_unlink;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		errbuf_errno(err, errlen, "unshare");
		close(saved);
		goto out_unlink;
	}
	if (mount("/proc/thread-self/ns/net", path, "none", MS_BIND, NULL) < 0)
		errbuf_errno(err, errlen, "bind %s", path);
	else
		rc = 0;
	if (netns_leave(saved, rc == 0 ? err : NULL, errlen) < 0)
		rc = -1;
	if (rc == 0)
		return 0;
out_unlink:
	umount2(path, MNT_DETACH);
	unlink(path);
	return -1;
}

/* Records to the argument structs rtnl.h takes. */
static void
to_nsarg_addr(int family, const uint8_t *addr, unsigned plen,
    struct nsarg_addr *a)
{
	char txt[INET6_ADDRSTRLEN] = "?";

	memset(a, 0, sizeof(*a));
	a->family = family;
	memcpy(a->addr, addr, family == AF_INET ? 4 : 16);
	a->plen = plen;
	inet_ntop(family, addr, txt, sizeof(txt));
	snprintf(a->text, sizeof(a->text), "%s/%u", txt, plen);
}

static void
to_nsarg_route(const struct sk_route *r, struct nsarg_route *nr)
{
	memset(nr, 0, sizeof(*nr));
	nr->family = r->family;
	nr->is_default = r->prefix == 0;
	to_nsarg_addr(r->family, r->dst, r->prefix, &nr->dst);
	nr->dev_only = !r->has_gateway;
	memcpy(nr->gw, r->gateway, sizeof(nr->gw));
	nr->metric = r->metric;
	snprintf(nr->text, sizeof(nr->text), "route %s", nr->dst.text);
}

/* An all-zero MAC in a link record: the kernel picks one. */
static const uint8_t *
link_mac(const struct sk_link *l)
{
	static const uint8_t zero[6];

	return memcmp(l->mac, zero, sizeof(zero)) == 0 ? NULL : l->mac;
}

int
nsbuild_apply(const char *ns, const struct nsdump *d, const char *hostif,
    char *err, size_t errlen)
{
	size_t i, nveth = 0;
	int nsfd, rc = -1;

	for (i = 0; i < d->nlinks; i++) {
		if (strcmp(d->links[i].kind, "veth") == 0)
			nveth++;
		else if (strcmp(d->links[i].kind, "lo") != 0) {
			errbuf(err, errlen, "link %s of kind '%s' cannot be "
			    "moved", d->links[i].name, d->links[i].kind);
			return -1;
		}
	}
	if (nveth > 1) {
		errbuf(err, errlen, "%zu veth links; a namespace carries one",
		    nveth);
		return -1;
	}
	nsfd = netns_open(ns, err, errlen);
	if (nsfd < 0)
		return -1;
	/* the veth pair is made from outside, its inner end made inside
	 * with the moved name, MAC and MTU */
	for (i = 0; i < d->nlinks; i++) {
		const struct sk_link *l = &d->links[i];

		if (strcmp(l->kind, "veth") == 0 &&
		    rtnl_veth_add(hostif, l->name, nsfd, link_mac(l), l->mtu,
		    err, errlen) < 0)
			goto out_close;
	}
	for (i = 0; i < d->nlinks; i++)
		if (rtnl_link_set(nsfd, d->links[i].name, NULL, NULL, err,
		    errlen) < 0)
			goto out_close;
	/* Keep the order the source listed: IPv4 lists the primary (first
	 * added) address first, IPv6 the newest first. */
	for (i = 0; i < d->naddrs; i++) {
		const struct sk_ifaddr *x = &d->addrs[i];
		struct nsarg_addr a;

		if (x->family != AF_INET)
			continue;
		to_nsarg_addr(x->family, x->addr, x->prefix, &a);
		if (rtnl_addr_add(nsfd, x->dev, &a, err, errlen) < 0)
			goto out_close;
	}
	for (i = d->naddrs; i-- > 0;) {
		const struct sk_ifaddr *x = &d->addrs[i];
		struct nsarg_addr a;

		if (x->family != AF_INET6)
			continue;
		to_nsarg_addr(x->family, x->addr, x->prefix, &a);
		if (rtnl_addr_add(nsfd, x->dev, &a, err, errlen) < 0)
			goto out_close;
	}
	for (i = 0; i < d->nroutes; i++) {
		struct nsarg_route r;

		to_nsarg_route(&d->routes[i], &r);
		if (d->routes[i].dev[0] == '\0') {
			errbuf(err, errlen, "%s: a route with no device",
			    r.text);
			goto out_close;
		}
		if (rtnl_route_add(nsfd, d->routes[i].dev, &r, err,
		    errlen) < 0)
			goto out_close;
	}
	rc = 0;
out_close:
	close(nsfd);
	return rc;
}

static int
read_word(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int rc = -1;

	if (f == NULL)
		return -1;
	if (fgets(buf, (int)len, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	fclose(f);
	return rc;
}

/*
 * The outer end up, alone: the pair gets its carrier while the records
 * stream.  The kernel reports a carrier through linkwatch, up to a
 * second later, and a bridge enables a port only once its operstate is
 * up: brought up by nsbuild_attach() itself, the port would start
 * forwarding only that second into the commit, with the service
 * stalled.  Alone, the outer end reaches nothing but the locked inner
 * one.
 */
int
nsbuild_carrier(const char *hostif, char *err, size_t errlen)
{
	return rtnl_link_set(-1, hostif, NULL, NULL, err, errlen);
}

int
nsbuild_enslave(const char *hostif, const char *bridge, char *err,
    size_t errlen)
{
	return rtnl_link_set(-1, hostif, bridge, NULL, err, errlen);
}

/*
 * The port forwards only once the veth has carrier and the bridge has
 * moved it to forwarding (linkwatch runs apart from us, and a bridge
 * with STP holds a new port in listening and learning first).  A frame
 * sent before that, such as the announcement that follows, would be
 * dropped and the LAN's switches would keep the old port.
 */
int
nsbuild_forwarding(const char *hostif)
{
	char path[PATH_MAX], oper[32], state[32];

	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", hostif);
	if (read_word(path, oper, sizeof(oper)) < 0 || strcmp(oper, "up") != 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/brport/state", hostif);
	/* 3: BR_STATE_FORWARDING */
	return read_word(path, state, sizeof(state)) == 0 &&
	    strcmp(state, "3") == 0;
}

int
nsbuild_forwarding_wait(const char *hostif, const char *bridge, int ms,
    char *err, size_t errlen)
{
	struct timespec nap = { 0, NSBUILD_FORWARD_POLL_MS * 1000000 };
	int i;

	/* one look even with no time left */
	for (i = 0; i <= ms / NSBUILD_FORWARD_POLL_MS; i++) {
		if (nsbuild_forwarding(hostif))
			return 0;
		if (i < ms / NSBUILD_FORWARD_POLL_MS)
			nanosleep(&nap, NULL);
	}
	errbuf(err, errlen, "%s is not forwarding on %s after %d ms", hostif,
	    bridge, NSBUILD_FORWARD_MS);
	return -1;
}

int
nsbuild_attach(const char *hostif, const char *bridge, char *err,
    size_t errlen)
{
	if (nsbuild_enslave(hostif, bridge, err, errlen) < 0)
		return -1;
	return nsbuild_forwarding_wait(hostif, bridge, NSBUILD_FORWARD_MS,
	    err, errlen);
}

int
nsbuild_delete(const char *ns, const char *hostif, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int rc = 0;

	/* deleting one end of a veth deletes the other */
	if (hostif != NULL && if_nametoindex(hostif) > 0 &&
	    rtnl_link_del(hostif, err, errlen) < 0)
		rc = -1;
	snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s", ns);
	if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL &&
	    errno != ENOENT && rc == 0) {
		errbuf_errno(err, errlen, "umount %s", path);
		rc = -1;
	}
	if (unlink(path) < 0 && errno != ENOENT && rc == 0) {
		errbuf_errno(err, errlen, "unlink %s", path);
		rc = -1;
	}
	return rc;
}
