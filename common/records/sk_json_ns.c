/* SPDX-License-Identifier: ISC */
/*
 * Namespace records, schema v2: "link" (name, kind, MAC, MTU), "addr"
 * (an address on a link) and "route".  Encode and strict decode; see
 * docs/protocol.md.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "sk_json.h"
#include "sk_json_priv.h"

static const char *
sk_family_name(int family)
{
	return family == AF_INET6 ? "inet6" : "inet";
}

json_t *
sk_json_encode_link(const struct sk_link *l)
{
	char mac[18];
	json_t *j;

	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
	    l->mac[0], l->mac[1], l->mac[2], l->mac[3], l->mac[4], l->mac[5]);
	j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:I}", "v", SK_JSON_VERSION,
	    "type", "link", "name", l->name, "kind", l->kind, "mac", mac,
	    "mtu", (json_int_t)l->mtu);
	return j;
}

json_t *
sk_json_encode_addr(const struct sk_ifaddr *a)
{
	char buf[INET6_ADDRSTRLEN];
	json_t *j = NULL;

	if (inet_ntop(a->family, a->addr, buf, sizeof(buf)) != NULL)
		j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:i}", "v",
		    SK_JSON_VERSION, "type", "addr", "dev", a->dev, "family",
		    sk_family_name(a->family), "addr", buf, "prefix",
		    (int)a->prefix);
	return j;
}

json_t *
sk_json_encode_route(const struct sk_route *r)
{
	char dst[INET6_ADDRSTRLEN], gw[INET6_ADDRSTRLEN];
	json_t *j = NULL;

	if (inet_ntop(r->family, r->dst, dst, sizeof(dst)) == NULL ||
	    (r->has_gateway &&
	    inet_ntop(r->family, r->gateway, gw, sizeof(gw)) == NULL))
		goto out;
	j = json_pack("{s:i, s:s, s:s, s:s, s:i, s:s, s:I, s:I}", "v",
	    SK_JSON_VERSION, "type", "route", "family",
	    sk_family_name(r->family), "dst", dst, "prefix", (int)r->prefix,
	    "dev", r->dev, "metric", (json_int_t)r->metric, "table",
	    (json_int_t)r->table);
	if (j != NULL && r->has_gateway &&
	    json_object_set_new(j, "gateway", json_string(gw)) < 0) {
		json_decref(j);
		j = NULL;
	}
out:
	return j;
}

int
sk_json_decode_link(struct sk_jctx *c, const json_t *j, struct sk_link *l)
{
	static const char *const keys[] = { "v", "type", "name", "kind",
	    "mac", "mtu", NULL };
	char mac[18];
	unsigned int b[6];
	int64_t mtu;
	int i, n = 0;

	if (sk_jkeys(c, j, "", keys) < 0 ||
	    sk_jstr(c, j, "", "name", true, sk_jcs_ifname, false, l->name,
	    sizeof(l->name)) < 0 ||
	    sk_jstr(c, j, "", "kind", true, sk_jcs_ifname, true, l->kind,
	    sizeof(l->kind)) < 0 ||
	    sk_jstr(c, j, "", "mac", true, "0123456789abcdef:", false, mac,
	    sizeof(mac)) < 0)
		return -1;
	if (strcmp(l->name, ".") == 0 || strcmp(l->name, "..") == 0) {
		sk_jerr(c, "", "name", "\"%s\" is not a link name", l->name);
		return -1;
	}
	if (strlen(mac) != 17 || sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%n",
	    &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &n) != 6 || n != 17) {
		sk_jerr(c, "", "mac", "not a lower-case MAC xx:xx:xx:xx:xx:xx");
		return -1;
	}
	for (i = 0; i < 6; i++)
		l->mac[i] = (uint8_t)b[i];
	/* 68 is IPv4's minimum; lo's MTU is 65536 (64 KiB), the largest */
	if (sk_jint(c, j, "", "mtu", true, 68, 65536, &mtu) < 0)
		return -1;
	l->mtu = (uint32_t)mtu;
	return 0;
}

int
sk_json_decode_addr(struct sk_jctx *c, const json_t *j, struct sk_ifaddr *a)
{
	static const char *const keys[] = { "v", "type", "dev", "family",
	    "addr", "prefix", NULL };
	int64_t prefix;

	if (sk_jkeys(c, j, "", keys) < 0 ||
	    sk_jstr(c, j, "", "dev", true, sk_jcs_ifname, false, a->dev,
	    sizeof(a->dev)) < 0 ||
	    sk_jfamily(c, j, "", "family", &a->family) < 0 ||
	    sk_jaddr(c, j, "", "addr", true, a->family, a->addr) < 0 ||
	    sk_jint(c, j, "", "prefix", true, 0,
	    a->family == AF_INET ? 32 : 128, &prefix) < 0)
		return -1;
	a->prefix = (uint8_t)prefix;
	return 0;
}

int
sk_json_decode_route(struct sk_jctx *c, const json_t *j, struct sk_route *r)
{
	static const char *const keys[] = { "v", "type", "family", "dst",
	    "prefix", "gateway", "dev", "metric", "table", NULL };
	int64_t v;
	int rc;

	if (sk_jkeys(c, j, "", keys) < 0 ||
	    sk_jfamily(c, j, "", "family", &r->family) < 0 ||
	    sk_jaddr(c, j, "", "dst", true, r->family, r->dst) < 0 ||
	    sk_jint(c, j, "", "prefix", true, 0,
	    r->family == AF_INET ? 32 : 128, &v) < 0)
		return -1;
	r->prefix = (uint8_t)v;
	if ((rc = sk_jaddr(c, j, "", "gateway", false, r->family,
	    r->gateway)) < 0)
		return -1;
	r->has_gateway = rc == 0;
	if (sk_jstr(c, j, "", "dev", true, sk_jcs_ifname, r->has_gateway,
	    r->dev, sizeof(r->dev)) < 0)
		return -1;
	if (sk_jint(c, j, "", "metric", true, 0, UINT32_MAX, &v) < 0)
		return -1;
	r->metric = (uint32_t)v;
	/* 0 is RT_TABLE_UNSPEC: a route always names its table. */
	if (sk_jint(c, j, "", "table", true, 1, UINT32_MAX, &v) < 0)
		return -1;
	r->table = (uint32_t)v;
	return 0;
}
