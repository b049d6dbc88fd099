/*
 * The cgroup v2 freezer and killer, by cgroup directory path.
 *
 * freeze_cgroup() writes 1 to cgroup.freeze and waits until cgroup.events
 * says "frozen 1": only then is every task of the cgroup stopped and its
 * fd tables stable.  thaw_cgroup() is the reverse.  kill_cgroup() writes
 * cgroup.kill and waits until "populated 0".  Each waits at most
 * timeout_ms and returns 0 or -1 (logged).
 */
#ifndef MIGR_FREEZE_H
#define MIGR_FREEZE_H

#include <stddef.h>
#include <sys/types.h>

int	freeze_cgroup(const char *cgpath, int timeout_ms);
int	thaw_cgroup(const char *cgpath, int timeout_ms);
int	kill_cgroup(const char *cgpath, int timeout_ms);

/* Value of KEY in cgroup.events ("frozen", "populated"): 0/1, or -1. */
int	cgroup_event(const char *cgpath, const char *key);

/*
 * Process ids listed in cgroup.procs.  *pids is allocated (free it);
 * at most max entries are read, more is an error.  0 or -1.
 */
int	cgroup_procs(const char *cgpath, pid_t **pids, size_t *n, size_t max);

#endif
