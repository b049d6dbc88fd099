/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <stdio.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "netns.h"
#include "rtnl.h"
#include "nsdump.h"

struct ctx {
	struct nsdump	*d;
	int		 ifindex[NSDUMP_MAX];	/* of links[i] */
	int		 overflow;
};

static const char *
ifname_of(const struct ctx *c, int index)
{
	size_t i;

	for (i = 0; i < c->d->nlinks; i++)
		if (c->ifindex[i] == index)
			return c->d->links[i].name;
	return NULL;
}

/* Devices the kernel makes in every namespace once their module is in
 * (the fallback tunnels): the destination has them too. */
static int
kernel_made(const struct sk_link *l)
{
	static const char *names[] = {
		"sit0", "tunl0", "ip6tnl0", "gre0", "gretap0", "erspan0",
		"ip_vti0", "ip6_vti0", "ip6gre0", "ip6gretap0", "ip6erspan0",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(l->name, names[i]) == 0)
			return 1;
	return 0;
}

static int
link_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct ctx *c = arg;
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct sk_link *l;
	struct nlattr *a;

	if (c->d->nlinks == NSDUMP_MAX) {
		c->overflow = 1;
		return MNL_CB_OK;
	}
	l = &c->d->links[c->d->nlinks];
	memset(l, 0, sizeof(*l));
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			snprintf(l->name, sizeof(l->name), "%s",
			    mnl_attr_get_str(a));
			break;
		case IFLA_ADDRESS:
			if (mnl_attr_get_payload_len(a) == 6)
				memcpy(l->mac, mnl_attr_get_payload(a), 6);
			break;
		case IFLA_MTU:
			l->mtu = mnl_attr_get_u32(a);
			break;
		case IFLA_LINKINFO: {
			struct nlattr *n;

			mnl_attr_for_each_nested(n, a)
				if (mnl_attr_get_type(n) == IFLA_INFO_KIND)
					snprintf(l->kind, sizeof(l->kind), "%s",
					    mnl_attr_get_str(n));
			break;
		}
		}
	}
	if (ifi->ifi_type == ARPHRD_LOOPBACK)
		snprintf(l->kind, sizeof(l->kind), "lo");
	if (kernel_made(l))
		return MNL_CB_OK;
	c->ifindex[c->d->nlinks++] = ifi->ifi_index;
	return MNL_CB_OK;
}

static int
addr_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct ctx *c = arg;
	struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a, *addr = NULL, *local = NULL;
	const char *dev = ifname_of(c, (int)ifa->ifa_index);
	struct sk_ifaddr *x;
	size_t alen = ifa->ifa_family == AF_INET ? 4 : 16;

	mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
		if (mnl_attr_get_type(a) == IFA_ADDRESS)
			addr = a;
		else if (mnl_attr_get_type(a) == IFA_LOCAL)
			local = a;
	}
	if (local != NULL)		/* IPv4: the local end of the address */
		addr = local;
	if (addr == NULL || dev == NULL || mnl_attr_get_payload_len(addr) != alen)
		return MNL_CB_OK;
	/* made again by the kernel on the other side */
	if (ifa->ifa_scope == RT_SCOPE_HOST || ifa->ifa_scope == RT_SCOPE_LINK)
		return MNL_CB_OK;
	if (c->d->naddrs == NSDUMP_MAX) {
		c->overflow = 1;
		return MNL_CB_OK;
	}
	x = &c->d->addrs[c->d->naddrs++];
	memset(x, 0, sizeof(*x));
	snprintf(x->dev, sizeof(x->dev), "%s", dev);
	x->family = ifa->ifa_family;
	memcpy(x->addr, mnl_attr_get_payload(addr), alen);
	x->prefix = ifa->ifa_prefixlen;
	return MNL_CB_OK;
}

static int
route_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct ctx *c = arg;
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct sk_route r;
	size_t alen = rtm->rtm_family == AF_INET ? 4 : 16;
	uint32_t table = rtm->rtm_table;
	const char *dev;

	memset(&r, 0, sizeof(r));
	r.family = rtm->rtm_family;
	r.prefix = rtm->rtm_dst_len;
	mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
		switch (mnl_attr_get_type(a)) {
		case RTA_DST:
			if (mnl_attr_get_payload_len(a) == alen)
				memcpy(r.dst, mnl_attr_get_payload(a), alen);
			break;
		case RTA_GATEWAY:
			if (mnl_attr_get_payload_len(a) == alen) {
				memcpy(r.gateway, mnl_attr_get_payload(a), alen);
				r.has_gateway = true;
			}
			break;
		case RTA_OIF:
			dev = ifname_of(c, (int)mnl_attr_get_u32(a));
			if (dev != NULL)
				snprintf(r.dev, sizeof(r.dev), "%s", dev);
			break;
		case RTA_PRIORITY:
			r.metric = mnl_attr_get_u32(a);
			break;
		case RTA_TABLE:
			table = mnl_attr_get_u32(a);
			break;
		}
	}
	r.table = table;
	/* the kernel makes prefix, local and multicast routes by itself */
	if (table != RT_TABLE_MAIN || rtm->rtm_protocol == RTPROT_KERNEL ||
	    rtm->rtm_type != RTN_UNICAST)
		return MNL_CB_OK;
	if (r.family == AF_INET6 && r.prefix == 64 && r.dst[0] == 0xfe &&
	    (r.dst[1] & 0xc0) == 0x80)
		return MNL_CB_OK;
	if (c->d->nroutes == NSDUMP_MAX) {
		c->overflow = 1;
		return MNL_CB_OK;
	}
	c->d->routes[c->d->nroutes++] = r;
	return MNL_CB_OK;
}

int
nsdump_add(struct nsdump *d, const struct sk_record *rec)
{
	if (rec->type == SK_REC_LINK && d->nlinks < NSDUMP_MAX)
		d->links[d->nlinks++] = rec->u.link;
	else if (rec->type == SK_REC_ADDR && d->naddrs < NSDUMP_MAX)
		d->addrs[d->naddrs++] = rec->u.addr;
	else if (rec->type == SK_REC_ROUTE && d->nroutes < NSDUMP_MAX)
		d->routes[d->nroutes++] = rec->u.route;
	else
		return -1;
	return 0;
}

int
nsdump_read(const char *ns, struct nsdump *d, char *err, size_t errlen)
{
	struct ctx c = { .d = d };
	int nsfd, rc = -1;

	memset(d, 0, sizeof(*d));
	nsfd = netns_open(ns, err, errlen);
	if (nsfd < 0)
		return -1;
	if (rtnl_dump(nsfd, RTM_GETLINK, AF_UNSPEC, sizeof(struct ifinfomsg),
	    link_cb, &c, err, errlen) < 0 ||
	    rtnl_dump(nsfd, RTM_GETADDR, AF_UNSPEC, sizeof(struct ifaddrmsg),
	    addr_cb, &c, err, errlen) < 0 ||
	    rtnl_dump(nsfd, RTM_GETROUTE, AF_INET, sizeof(struct rtmsg),
	    route_cb, &c, err, errlen) < 0 ||
	    rtnl_dump(nsfd, RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg),
	    route_cb, &c, err, errlen) < 0)
		goto out;
	if (c.overflow) {
		errbuf(err, errlen, "%s: more than %d links, addresses or "
		    "routes", ns, NSDUMP_MAX);
		goto out;
	}
	rc = 0;
out:
	close(nsfd);
	return rc;
}

static int
emit_one(json_t *rec, const char *what, nsdump_emit_fn emit, void *arg,
    char *err, size_t errlen)
{
	if (rec == NULL) {
		errbuf(err, errlen, "cannot encode a %s record", what);
		return -1;
	}
	if (emit(rec, arg) < 0) {
		errbuf(err, errlen, "cannot hand on a %s record", what);
		return -1;
	}
	return 0;
}

int
nsdump_emit(const char *ns, nsdump_emit_fn emit, void *arg, char *err,
    size_t errlen)
{
	struct nsdump *d = calloc(1, sizeof(*d));
	size_t i;
	int rc = -1;

	if (d == NULL) {
		errbuf_errno(err, errlen, "calloc");
		return -1;
	}
	if (nsdump_read(ns, d, err, errlen) < 0)
		goto out;
	for (i = 0; i < d->nlinks; i++)
		if (emit_one(sk_json_encode_link(&d->links[i]), "link", emit,
		    arg, err, errlen) < 0)
			goto out;
	for (i = 0; i < d->naddrs; i++)
		if (emit_one(sk_json_encode_addr(&d->addrs[i]), "address",
		    emit, arg, err, errlen) < 0)
			goto out;
	for (i = 0; i < d->nroutes; i++)
		if (emit_one(sk_json_encode_route(&d->routes[i]), "route",
		    emit, arg, err, errlen) < 0)
			goto out;
	rc = 0;
out:
	free(d);
	return rc;
}
