/*
 * Start a workload inside a namespace and a cgroup with sockets handed
 * to it by the socket-activation convention: fds 3, 4, ... with
 * LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES (names joined by ':') in its
 * environment.  stdin is /dev/null; stdout and stderr go to logpath
 * (appended), or /dev/null.  The child is a session leader.  Returns its
 * pid, or -1.  The caller keeps (and may close) its own fds.
 */
#ifndef MIGR_LAUNCH_H
#define MIGR_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

#define LAUNCH_MAX_FDS	4096

pid_t	launch_workload(const char *ns, const char *cgroup, const int *fds,
	    char *const *names, size_t nfds, char *const argv[],
	    const char *logpath);

#endif
