/*
 * Run code inside a network namespace from a single-threaded program:
 * netns_enter() switches the calling thread into the namespace (a name
 * under /run/netns, or a path such as /proc/PID/ns/net) and returns a
 * handle on the namespace it left; netns_leave() switches back.
 * Sockets created in between belong to the entered namespace for life.
 */
#ifndef MIGR_NETNS_H
#define MIGR_NETNS_H

int	netns_open(const char *name_or_path);
int	netns_enter(const char *name_or_path);	/* returns the saved fd */
int	netns_leave(int saved);			/* closes saved */

#endif
