/* SPDX-License-Identifier: ISC */
/*
 * Read what a namespace's network is made of, through rtnetlink inside
 * it: its links (name, kind, MAC, MTU; not the fallback tunnels such as
 * sit0 that the kernel makes in every namespace), the addresses a migration has to
 * carry (not loopback's, not the IPv6 link-local ones the kernel makes
 * again from the MAC), and the routes of its main table that the kernel
 * did not make by itself.  The result uses the record structs of
 * sk_json.h, so each entry encodes as one "link", "addr" or "route".
 */
#ifndef MIGR_NSDUMP_H
#define MIGR_NSDUMP_H

#include <stddef.h>

#include "sk_json.h"

#define NSDUMP_MAX	256	/* of each kind */

struct nsdump {
	struct sk_link		links[NSDUMP_MAX];
	size_t			nlinks;
	struct sk_ifaddr	addrs[NSDUMP_MAX];
	size_t			naddrs;
	struct sk_route		routes[NSDUMP_MAX];
	size_t			nroutes;
};

/* Add one decoded link, address or route record: 0, or -1 when it is of
 * another kind or d already holds NSDUMP_MAX of its kind. */
int	nsdump_add(struct nsdump *d, const struct sk_record *rec);

/* 0 or -1; d is allocated by the caller (it is large: use the heap). */
int	nsdump_read(const char *ns, struct nsdump *d, char *err, size_t errlen);

/* Read ns and hand each record, encoded, to emit (which takes the
 * reference; links, then addresses, then routes).  0 or -1. */
typedef int (*nsdump_emit_fn)(json_t *rec, void *arg);
int	nsdump_emit(const char *ns, nsdump_emit_fn emit, void *arg, char *err,
	    size_t errlen);

#endif
