/*
 * Tell the LAN that a namespace's addresses now live here: one gratuitous
 * ARP request per IPv4 address and one unsolicited neighbour
 * advertisement (override flag set, to all-nodes) per IPv6 address of
 * IFNAME inside namespace NS.  The frames come from the moved MAC, so the
 * LAN's switches learn its new port, and neighbours that cached the
 * address refresh their entry.  Returns the number of frames sent, or -1.
 */
#ifndef MIGR_ANNOUNCE_H
#define MIGR_ANNOUNCE_H

int	announce_addrs(const char *ns, const char *ifname);

#endif
