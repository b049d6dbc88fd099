/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "mcast.h"
#include "netns.h"

static void
note(char *why, size_t whylen, size_t *off, const char *group,
    const char *dev)
{
	if (*off < whylen)
		*off += (size_t)snprintf(why + *off, whylen - *off, "%s%s on %s",
		    *off ? ", " : "", group, dev);
}

/* /proc/net/igmp: a line per device, then one per group (hex, in the
 * host's byte order, as the kernel prints a __be32 with %08X). */
static int
igmp4(char *why, size_t whylen, size_t *off)
{
	char line[256], dev[32] = "?", txt[INET_ADDRSTRLEN];
	unsigned int grp;
	struct in_addr a;
	FILE *f;
	int n = 0;

	/* no file: a kernel without IPv4 multicast, so no group */
	if ((f = fopen("/proc/self/net/igmp", "re")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] != '\t') {
			if (sscanf(line, "%*d %31s", dev) != 1)
				snprintf(dev, sizeof(dev), "?");
			continue;
		}
		if (sscanf(line, " %8x", &grp) != 1)
			continue;
		a.s_addr = grp;
		if (a.s_addr == htonl(0xe0000001))	/* 224.0.0.1 */
			continue;
		inet_ntop(AF_INET, &a, txt, sizeof(txt));
		note(why, whylen, off, txt, dev);
		n++;
	}
	fclose(f);
	return n;
}

static int
igmp6(char *why, size_t whylen, size_t *off)
{
	char line[256], dev[32], hex[33], txt[INET6_ADDRSTRLEN];
	struct in6_addr a;
	unsigned int b;
	FILE *f;
	int i, n = 0;

	if ((f = fopen("/proc/self/net/igmp6", "re")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*d %31s %32s", dev, hex) != 2 ||
		    strlen(hex) != 32)
			continue;
		for (i = 0; i < 16; i++) {
			if (sscanf(hex + 2 * i, "%2x", &b) != 1)
				break;
			a.s6_addr[i] = (uint8_t)b;
		}
		if (i != 16)
			continue;
		inet_ntop(AF_INET6, &a, txt, sizeof(txt));
		/* all-nodes, all-routers (node, link, site), and the
		 * solicited-node group of each address (ff02::1:ffXX:XXXX) */
		if (strcmp(txt, "ff02::1") == 0 || strcmp(txt, "ff01::1") == 0 ||
		    strcmp(txt, "ff02::2") == 0 || strcmp(txt, "ff01::2") == 0 ||
		    strcmp(txt, "ff05::2") == 0 ||
		    strncmp(hex, "ff0200000000000000000001ff", 26) == 0)
			continue;
		note(why, whylen, off, txt, dev);
		n++;
	}
	fclose(f);
	return n;
}

int
mcast_joined(const char *ns, char *why, size_t whylen)
{
	size_t off = 0;
	int saved, n4, n6 = 0;

	if (whylen > 0)
		why[0] = '\0';
	/* /proc/self/net shows the namespace of the calling thread */
	if ((saved = netns_enter(ns, why, whylen)) < 0)
		return -1;
	if ((n4 = igmp4(why, whylen, &off)) < 0 ||
	    (n6 = igmp6(why, whylen, &off)) < 0) {
		errbuf_errno(why, whylen, "cannot read the multicast groups");
		netns_leave(saved, NULL, 0);
		return -1;
	}
	if (netns_leave(saved, why, whylen) < 0)
		return -1;
	return n4 + n6;
}
