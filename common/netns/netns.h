/* SPDX-License-Identifier: ISC */
/*
 * Run code inside a network namespace from a single-threaded program:
 * netns_enter() switches the calling thread into the namespace (a name
 * under /run/netns, or a path such as /proc/PID/ns/net) and returns a
 * handle on the namespace it left; netns_leave() switches back.
 * Sockets created in between belong to the entered namespace for life.
 *
 * Like every function of the netns layer (common/netns), each returns -1
 * with the reason in err on failure (errbuf.h) and logs nothing.  A
 * thread whose netns_leave() failed is still in the foreign namespace:
 * its caller must not go on as if it were home.
 */
#ifndef MIGR_NETNS_H
#define MIGR_NETNS_H

#include <stddef.h>

/* Where named namespaces live, as iproute2 keeps them. */
#define NETNS_RUN_DIR	"/run/netns"

int	netns_open(const char *name_or_path, char *err, size_t errlen);
/* Returns the saved fd for netns_leave(), which closes it. */
int	netns_enter(const char *name_or_path, char *err, size_t errlen);
int	netns_enter_fd(int nsfd, char *err, size_t errlen);	/* the same */
int	netns_leave(int saved, char *err, size_t errlen);

#endif
