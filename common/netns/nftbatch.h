/* SPDX-License-Identifier: ISC */
/*
 * nf_tables tables deleted by name inside a namespace, in one netlink
 * transaction (libmnl): no libnftables context and no ruleset fetch,
 * which cost 21 to 132 ms in the TCG lab under ASan (the batch: 7 to
 * 15 ms), inside the downtime when a destination lifts its lock.  Each table named is
 * gone afterwards, whether it was there or not; no other table is
 * touched.  The kernel applies the batch whole or not at all: on
 * failure nothing changed, and err says why.  At most 16 tables.
 */
#ifndef MIGR_NFTBATCH_H
#define MIGR_NFTBATCH_H

#include <stddef.h>

enum nftbatch_family { NFTBATCH_INET, NFTBATCH_ARP };

struct nftbatch_table {
	enum nftbatch_family	 family;
	const char		*name;
};

int	nftbatch_delete(const char *ns, const struct nftbatch_table *,
	    size_t n, char *err, size_t errlen);

#endif
