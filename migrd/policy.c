/* SPDX-License-Identifier: ISC */
/*
 * Per-peer policy: parsing the values of "allow" (migrd.conf) and
 * judging a PREPARE against them (policy.h says what each kind means).
 */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsarg.h"
#include "nsdump.h"
#include "policy.h"

static const char *const kind_names[POLICY_NKINDS] = {
	[POLICY_PROGRAM] = "program",
	[POLICY_ADDRESS] = "address",
	[POLICY_MAC] = "mac",
	[POLICY_NAMESPACE] = "namespace",
	[POLICY_SOCKETS] = "sockets",
	[POLICY_MIGRATIONS] = "migrations",
	[POLICY_CHECKPOINT] = "checkpoint",
};


const char *
policy_kind_name(enum policy_kind k)
{
	return (unsigned)k < POLICY_NKINDS ? kind_names[k] : "?";
}

int
policy_kind_find(const char *s)
{
	int k;

	for (k = 0; k < POLICY_NKINDS; k++)
		if (strcmp(kind_names[k], s) == 0)
			return k;
	return -1;
}

/* ADDR or ADDR/PLEN */
static int
parse_prefix(const char *s, struct policy_entry *e, char *why, size_t len)
{
	char a[INET6_ADDRSTRLEN + 1], *end;
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long plen;

	if (alen == 0 || alen >= sizeof(a))
		goto bad;
	memcpy(a, s, alen);
	a[alen] = '\0';
	if (inet_pton(AF_INET, a, e->addr) == 1)
		e->family = AF_INET;
	else if (inet_pton(AF_INET6, a, e->addr) == 1)
		e->family = AF_INET6;
	else
		goto bad;
	e->plen = e->family == AF_INET ? 32 : 128;
	if (slash != NULL) {
		if (slash[1] < '0' || slash[1] > '9')
			goto bad;
		plen = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || plen > e->plen)
			goto bad;
		e->plen = (unsigned)plen;
	}
	return 0;
bad:
	snprintf(why, len, "'%s' is not ADDRESS[/PREFIXLEN] (IPv4 or IPv6)",
	    s);
	return -1;
}

/* 1 to 6 octets, two hex digits each, separated by ':'; or '*', any */
static int
parse_mac_prefix(const char *s, struct policy_entry *e, char *why,
    size_t len)
{
	const char *p = s;
	unsigned n = 0, v;
	int c;

	if (strcmp(s, "*") == 0)
		return 0;
	for (;;) {
		if (n == 6 || sscanf(p, "%2x%n", &v, &c) != 1 || c != 2)
			goto bad;
		e->addr[n++] = (uint8_t)v;
		p += 2;
		if (*p == '\0')
			break;
		if (*p++ != ':')
			goto bad;
	}
	e->plen = n;
	return 0;
bad:
	snprintf(why, len, "'%s' is not a MAC prefix: 1 to 6 octets of two "
	    "hex digits, such as 52:54:00, or '*'", s);
	return -1;
}

static int
parse_pattern(const char *s, char *why, size_t len)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
		    ch == '_' || ch == '*' || ch == '?')) {
			snprintf(why, len, "'%s' is not a namespace pattern: "
			    "letters, digits, '-', '.', '_', '*' and '?'", s);
			return -1;
		}
	}
	return 0;
}

/* sockets 0..POLICY_SOCKETS_MAX, migrations 1..POLICY_MIGRATIONS_MAX,
 * checkpoint 1..POLICY_CHECKPOINT_MAX */
static int
parse_count(enum policy_kind kind, const char *s, struct policy_entry *e,
    char *why, size_t len)
{
	unsigned long max = kind == POLICY_SOCKETS ? POLICY_SOCKETS_MAX :
	    kind == POLICY_CHECKPOINT ? POLICY_CHECKPOINT_MAX :
	    POLICY_MIGRATIONS_MAX, min = kind == POLICY_SOCKETS ? 0 : 1, v;
	char *end;

	if (s[0] < '0' || s[0] > '9' || (v = strtoul(s, &end, 10), *end) ||
	    v < min || v > max) {
		snprintf(why, len, "%s: '%s' is not a number from %lu to %lu",
		    policy_kind_name(kind), s, min, max);
		return -1;
	}
	e->plen = (unsigned)v;
	return 0;
}

unsigned
policy_limit(const struct policy *pol, enum policy_kind kind, unsigned dflt)
{
	int i;

	for (i = pol->n - 1; i >= 0; i--)
		if (pol->entry[i].kind == kind)
			return pol->entry[i].plen;
	return dflt;
}

int
policy_entry_parse(enum policy_kind kind, const char *s,
    struct policy_entry *e, char *why, size_t len)
{
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	if (s[0] == '\0' || strlen(s) >= sizeof(e->text)) {
		snprintf(why, len, "%s: '%.40s...' is empty or longer than %d "
		    "characters", policy_kind_name(kind), s,
		    POLICY_TEXT_MAX - 1);
		return -1;
	}
	snprintf(e->text, sizeof(e->text), "%s", s);
	switch (kind) {
	case POLICY_PROGRAM:
		if (s[0] != '/') {
			snprintf(why, len, "program: '%s' is not an absolute "
			    "path", s);
			return -1;
		}
		return 0;
	case POLICY_ADDRESS:
		return parse_prefix(s, e, why, len);
	case POLICY_MAC:
		return parse_mac_prefix(s, e, why, len);
	case POLICY_NAMESPACE:
		return parse_pattern(s, why, len);
	case POLICY_SOCKETS:
	case POLICY_MIGRATIONS:
	case POLICY_CHECKPOINT:
		return parse_count(kind, s, e, why, len);
	default:
		snprintf(why, len, "no such kind");
		return -1;
	}
}

static int
prefix_has(const struct policy_entry *e, int family, const uint8_t *addr)
{
	unsigned full = e->plen / 8, rest = e->plen % 8;

	if (e->family != family)
		return 0;
	if (memcmp(e->addr, addr, full) != 0)
		return 0;
	return rest == 0 || ((e->addr[full] ^ addr[full]) &
	    (uint8_t)(0xff << (8 - rest))) == 0;
}

static int
address_allowed(const struct policy *pol, int family, const uint8_t *addr)
{
	int i;

	for (i = 0; i < pol->n; i++)
		if (pol->entry[i].kind == POLICY_ADDRESS &&
		    prefix_has(&pol->entry[i], family, addr))
			return 1;
	return 0;
}

static int
mac_allowed(const struct policy *pol, const uint8_t *mac)
{
	int i;

	for (i = 0; i < pol->n; i++)
		if (pol->entry[i].kind == POLICY_MAC &&
		    memcmp(pol->entry[i].addr, mac, pol->entry[i].plen) == 0)
			return 1;
	return 0;
}

static int
name_allowed(const struct policy *pol, const char *ns)
{
	int i;

	for (i = 0; i < pol->n; i++)
		if (pol->entry[i].kind == POLICY_NAMESPACE &&
		    fnmatch(pol->entry[i].text, ns, 0) == 0)
			return 1;
	return 0;
}

/*
 * Both sides resolved (symbolic links, "..", "//"), so that neither a
 * link inside an allowed directory nor "/allowed/../bin/sh" leads out of
 * it.  An entry that does not resolve (not there) allows nothing.
 */
static int
program_allowed(const struct policy *pol, const char *prog,
    char real[PATH_MAX])
{
	char dir[PATH_MAX];
	size_t n;
	int i;

	if (realpath(prog, real) == NULL) {
		real[0] = '\0';
		return 0;
	}
	for (i = 0; i < pol->n; i++) {
		const struct policy_entry *e = &pol->entry[i];

		if (e->kind != POLICY_PROGRAM || realpath(e->text, dir) == NULL)
			continue;
		n = strlen(e->text);
		if (e->text[n - 1] != '/') {
			if (strcmp(dir, real) == 0)
				return 1;
			continue;
		}
		n = strlen(dir);
		if (strcmp(dir, "/") == 0 || (strncmp(dir, real, n) == 0 &&
		    real[n] == '/'))
			return 1;
	}
	return 0;
}

/*
 * The name as the peer gave it, its end kept when long (that is where
 * "/allowed/../../bin/sh" shows what it is), and what it resolves to
 * when that differs: the resolved path is what the policy compared.
 */
static int
program_check(const char *peer, const struct policy *pol, const char *prog,
    char *why, size_t len)
{
	char real[PATH_MAX];
	size_t n = strlen(prog);
	int other;

	if (program_allowed(pol, prog, real))
		return 0;
	other = real[0] != '\0' && strcmp(real, prog) != 0;
	snprintf(why, len, "%s may not bring program %s%s here (%s%.200s%s"
	    "no 'allow %s program' covers it)", peer, n > 160 ? "..." : "",
	    n > 160 ? prog + n - 160 : prog, other ? "it resolves to " : "",
	    other ? real : "", other ? "; " : "", peer);
	return -1;
}

static void
mac_text(const uint8_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
	    m[3], m[4], m[5]);
}

static int
refuse(char *why, size_t len, const char *peer, const char *what,
    const char *value, const char *kind)
{
	snprintf(why, len, "%s may not bring %s %.200s here (no 'allow %s "
	    "%s' covers it)", peer, what, value, peer, kind);
	return -1;
}

int
policy_check(const char *peer, const struct policy *pol, const char *ns,
    json_t *desc, const struct nsdump *nd, json_t *argv, char *why,
    size_t len)
{
	static const uint8_t zero[6];
	struct nsarg_addr a;
	char text[INET6_ADDRSTRLEN], err[128];
	const char *s;
	json_t *v;
	uint8_t mac[6];
	size_t i;

	if (!name_allowed(pol, ns))
		return refuse(why, len, peer, "namespace", ns, "namespace");
	json_array_foreach(json_object_get(desc, "addrs"), i, v) {
		s = json_string_value(v);
		if (s == NULL || nsarg_addr(s, &a, err, sizeof(err)) == -1 ||
		    !address_allowed(pol, a.family, a.addr))
			return refuse(why, len, peer, "address", s ? s : "?",
			    "address");
	}
	for (i = 0; nd != NULL && i < nd->naddrs; i++) {
		if (address_allowed(pol, nd->addrs[i].family,
		    nd->addrs[i].addr))
			continue;
		inet_ntop(nd->addrs[i].family, nd->addrs[i].addr, text,
		    sizeof(text));
		return refuse(why, len, peer, "address", text, "address");
	}
	s = json_string_value(json_object_get(desc, "mac"));
	if (s != NULL && s[0] != '\0') {
		if (nsarg_mac(s, mac, err, sizeof(err)) == -1 ||
		    !mac_allowed(pol, mac))
			return refuse(why, len, peer, "MAC", s, "mac");
	}
	for (i = 0; nd != NULL && i < nd->nlinks; i++) {
		/* loopback's is all zero, and it is no one's on the LAN */
		if (memcmp(nd->links[i].mac, zero, 6) == 0 ||
		    mac_allowed(pol, nd->links[i].mac))
			continue;
		mac_text(nd->links[i].mac, text, sizeof(text));
		return refuse(why, len, peer, "MAC", text, "mac");
	}
	if (argv != NULL) {
		s = json_string_value(json_array_get(argv, 0));
		if (s == NULL)
			return refuse(why, len, peer, "program", "?", "program");
		return program_check(peer, pol, s, why, len);
	}
	return 0;
}
