/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include "netns.h"
#include "rtnl.h"

/* A NETLINK_ROUTE socket that lives in nsfd (sockets keep the netns they
 * were created in, so the thread only visits nsfd for the socket() call). */
static struct mnl_socket *
rtnl_socket(int nsfd, char *err, size_t errlen)
{
	struct mnl_socket *nl;
	int saved, self = -1;

	if (nsfd != -1 && (self = netns_enter_fd(nsfd, err, errlen)) < 0)
		return NULL;
	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	saved = errno;
	/* a thread left in a foreign namespace must not go on as if it
	 * were home: fail, and say so */
	if (self != -1 && netns_leave(self, err, errlen) < 0) {
		if (nl != NULL)
			mnl_socket_close(nl);
		return NULL;
	}
	if (nl == NULL) {
		snprintf(err, errlen, "netlink socket: %s", strerror(saved));
		return NULL;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1) {
		snprintf(err, errlen, "netlink bind: %s", strerror(errno));
		mnl_socket_close(nl);
		return NULL;
	}
	return nl;
}

/* Send nlh, wait for the ACK.  0 or -1 with errno set. */
static int
rtnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, const char *what,
    char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid = mnl_socket_get_portid(nl);
	ssize_t n;
	int rc;

	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (unsigned int)time(NULL);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) == -1) {
		snprintf(err, errlen, "%s: send: %s", what, strerror(errno));
		return -1;
	}
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n == -1) {
			snprintf(err, errlen, "%s: %s", what, strerror(errno));
			return -1;
		}
		rc = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, NULL,
		    NULL);
		if (rc == -1) {
			snprintf(err, errlen, "%s: %s", what, strerror(errno));
			return -1;
		}
		if (rc == MNL_CB_STOP)
			return 0;
	}
}

static struct nlmsghdr *
link_msg(char *buf, uint16_t type, uint16_t flags, int ifindex)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh;
}

int
rtnl_veth_add(const char *host_if, const char *peer_if, int nsfd,
    const uint8_t *peer_mac, uint32_t mtu, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nlattr *linkinfo, *data, *peer;
	struct ifinfomsg *pifi;
	struct mnl_socket *nl;
	int rc;

	nlh = link_msg(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, host_if);
	if (mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	linkinfo = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	/* the peer's attributes follow its own ifinfomsg */
	pifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*pifi));
	memset(pifi, 0, sizeof(*pifi));
	pifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer_if);
	if (peer_mac != NULL)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, peer_mac);
	if (mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)nsfd);
	mnl_attr_nest_end(nlh, peer);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, linkinfo);
	if ((nl = rtnl_socket(-1, err, errlen)) == NULL)
		return -1;
	rc = rtnl_talk(nl, nlh, "add veth", err, errlen);
	mnl_socket_close(nl);
	return rc;
}

int
rtnl_link_del(const char *ifname, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct mnl_socket *nl;
	int rc;

	nlh = link_msg(buf, RTM_DELLINK, 0, 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname);
	if ((nl = rtnl_socket(-1, err, errlen)) == NULL)
		return -1;
	rc = rtnl_talk(nl, nlh, "delete link", err, errlen);
	mnl_socket_close(nl);
	return rc;
}

/* ifindex of ifname as seen from nl's namespace (RTM_GETLINK). */
static int
rtnl_ifindex(struct mnl_socket *nl, const char *ifname, char *err,
    size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh, *r;
	ssize_t n;

	nlh = link_msg(buf, RTM_GETLINK, NLM_F_REQUEST, 0);
	nlh->nlmsg_seq = (unsigned int)time(NULL);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) == -1 ||
	    (n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) == -1) {
		snprintf(err, errlen, "get link %s: %s", ifname,
		    strerror(errno));
		return -1;
	}
	r = (struct nlmsghdr *)buf;
	if (!mnl_nlmsg_ok(r, (int)n)) {
		snprintf(err, errlen, "get link %s: short reply", ifname);
		return -1;
	}
	if (r->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(r);

		snprintf(err, errlen, "no interface %s: %s", ifname,
		    strerror(-e->error));
		return -1;
	}
	if (r->nlmsg_type != RTM_NEWLINK) {
		snprintf(err, errlen, "get link %s: unexpected reply", ifname);
		return -1;
	}
	return ((struct ifinfomsg *)mnl_nlmsg_get_payload(r))->ifi_index;
}

int
rtnl_link_set(int nsfd, const char *ifname, const char *master,
    const uint8_t *mac, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct mnl_socket *nl;
	int idx, midx = 0, rc = -1;

	if ((nl = rtnl_socket(nsfd, err, errlen)) == NULL)
		return -1;
	if ((idx = rtnl_ifindex(nl, ifname, err, errlen)) == -1)
		goto out_close;
	if (master != NULL &&
	    (midx = rtnl_ifindex(nl, master, err, errlen)) == -1)
		goto out_close;
	nlh = link_msg(buf, RTM_NEWLINK, 0, idx);
	ifi = mnl_nlmsg_get_payload(nlh);
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	if (master != NULL)
		mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)midx);
	if (mac != NULL)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	rc = rtnl_talk(nl, nlh, "set link", err, errlen);
	if (rc == -1) {
		char tmp[200];

		snprintf(tmp, sizeof(tmp), "%s %s", ifname, err);
		snprintf(err, errlen, "%s", tmp);
	}
out_close:
	mnl_socket_close(nl);
	return rc;
}

/* A socket in nsfd and the index of ifname there; NULL on failure. */
static struct mnl_socket *
rtnl_open_at(int nsfd, const char *ifname, int *idx, char *err,
    size_t errlen)
{
	struct mnl_socket *nl;

	if ((nl = rtnl_socket(nsfd, err, errlen)) == NULL)
		return NULL;
	if ((*idx = rtnl_ifindex(nl, ifname, err, errlen)) == -1) {
		mnl_socket_close(nl);
		return NULL;
	}
	return nl;
}

/* A request that creates something that must not exist yet. */
static struct nlmsghdr *
create_msg(char *buf, uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	return nlh;
}

int
rtnl_addr_add(int nsfd, const char *ifname, const struct nsarg_addr *a,
    char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;
	struct mnl_socket *nl;
	size_t alen = a->family == AF_INET ? 4 : 16;
	int idx, rc;

	if ((nl = rtnl_open_at(nsfd, ifname, &idx, err, errlen)) == NULL)
		return -1;
	nlh = create_msg(buf, RTM_NEWADDR);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)a->family;
	ifa->ifa_prefixlen = (uint8_t)a->plen;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (uint32_t)idx;
	mnl_attr_put(nlh, IFA_LOCAL, alen, a->addr);
	mnl_attr_put(nlh, IFA_ADDRESS, alen, a->addr);
	if (a->family == AF_INET6) {
		/* no duplicate address detection: usable at once */
		ifa->ifa_flags = IFA_F_NODAD;
		mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
	}
	rc = rtnl_talk(nl, nlh, a->text, err, errlen);
	mnl_socket_close(nl);
	return rc;
}

int
rtnl_route_add(int nsfd, const char *ifname, const struct nsarg_route *r,
    char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	struct mnl_socket *nl;
	size_t alen = r->family == AF_INET ? 4 : 16;
	int idx, rc;

	if ((nl = rtnl_open_at(nsfd, ifname, &idx, err, errlen)) == NULL)
		return -1;
	nlh = create_msg(buf, RTM_NEWROUTE);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)r->family;
	rtm->rtm_dst_len = r->is_default ? 0 : (uint8_t)r->dst.plen;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_BOOT;
	rtm->rtm_scope = r->dev_only ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	if (!r->is_default)
		mnl_attr_put(nlh, RTA_DST, alen, r->dst.addr);
	if (!r->dev_only)
		mnl_attr_put(nlh, RTA_GATEWAY, alen, r->gw);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)idx);
	if (r->metric)
		mnl_attr_put_u32(nlh, RTA_PRIORITY, r->metric);
	rc = rtnl_talk(nl, nlh, r->text, err, errlen);
	mnl_socket_close(nl);
	return rc;
}

int
rtnl_dump(int nsfd, uint16_t type, uint8_t family, size_t hdrlen,
    mnl_cb_t cb, void *arg, char *err, size_t errlen)
{
	char *buf;
	struct nlmsghdr *nlh;
	struct rtgenmsg *g;
	struct mnl_socket *nl;
	unsigned int portid, seq;
	ssize_t n;
	int rc = -1;

	buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	if (buf == NULL) {
		snprintf(err, errlen, "dump: %s", strerror(errno));
		return -1;
	}
	if ((nl = rtnl_socket(nsfd, err, errlen)) == NULL) {
		free(buf);
		return -1;
	}
	portid = mnl_socket_get_portid(nl);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq = (unsigned int)time(NULL);
	/* every dump request starts with a header whose first byte is the
	 * family (rtgenmsg, ifinfomsg, ifaddrmsg, rtmsg) */
	g = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	g->rtgen_family = family;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) == -1) {
		snprintf(err, errlen, "dump: send: %s", strerror(errno));
		goto out_close;
	}
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE);
		if (n == -1) {
			snprintf(err, errlen, "dump: %s", strerror(errno));
			break;
		}
		n = mnl_cb_run(buf, (size_t)n, seq, portid, cb, arg);
		if (n == MNL_CB_ERROR) {
			snprintf(err, errlen, "dump: %s", strerror(errno));
			break;
		}
		if (n == MNL_CB_STOP) {
			rc = 0;
			break;
		}
	}
out_close:
	mnl_socket_close(nl);
	free(buf);
	return rc;
}
