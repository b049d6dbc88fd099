/* SPDX-License-Identifier: ISC */
/*
 * Tell the LAN that a namespace's addresses now live here: one gratuitous
 * ARP request per IPv4 address and one unsolicited neighbour
 * advertisement (override flag set, to all-nodes) per IPv6 address of
 * IFNAME inside namespace NS.  The frames come from the moved MAC, so the
 * LAN's switches learn its new port, and neighbours that cached the
 * address refresh their entry.  IPv6 link-local addresses are not
 * announced: they are not moved (the kernel makes them from the MAC) and
 * cannot be a source while their duplicate address detection runs.
 *
 * Returns the number of frames sent; -1 when any address could not be
 * announced, with the first such address and why in err (the others
 * were still tried).
 */
#ifndef MIGR_ANNOUNCE_H
#define MIGR_ANNOUNCE_H

#include <stddef.h>

int	announce_addrs(const char *ns, const char *ifname, char *err,
	    size_t errlen);

#endif
