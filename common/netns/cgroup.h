/* SPDX-License-Identifier: ISC */
/*
 * cgroup v2, by cgroup directory path: the one place that makes, fills,
 * freezes, kills and removes the cgroups that hold a namespace's tasks.
 *
 * cgroup_freeze() writes 1 to cgroup.freeze and waits until
 * cgroup.events says "frozen 1": only then is every task of the cgroup
 * stopped and its fd tables stable.  cgroup_kill() writes cgroup.kill and
 * waits until "populated 0".  Each waits at most timeout_ms (poll on
 * cgroup.events, which kernfs signals with POLLPRI).  cgroup_thaw() waits
 * for nothing: the write that clears cgroup.freeze also clears the
 * cgroup's frozen state (cgroup_do_freeze() updates it before it
 * returns), the tasks wake on their own, and a cgroup still frozen right
 * after it has a frozen cgroup above it.  All return 0, or -1 with the
 * reason in err (errbuf.h).
 */
#ifndef MIGR_CGROUP_H
#define MIGR_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

/* 0 when dir is on a cgroup v2 mount. */
int	cgroup_is_v2(const char *dir, char *err, size_t errlen);
/* mkdir; an existing cgroup is fine. */
int	cgroup_create(const char *cgpath, char *err, size_t errlen);
/* Kill what runs in it, wait until it is empty, rmdir.  A cgroup that
 * does not exist is fine. */
int	cgroup_remove(const char *cgpath, int timeout_ms, char *err,
	    size_t errlen);

int	cgroup_freeze(const char *cgpath, int timeout_ms, char *err,
	    size_t errlen);
/* Ask for the freeze and return: cgroup_event(cgpath, "frozen") says
 * when it is done (for an event loop that must not wait). */
int	cgroup_freeze_start(const char *cgpath, char *err, size_t errlen);
int	cgroup_thaw(const char *cgpath, char *err, size_t errlen);
int	cgroup_kill(const char *cgpath, int timeout_ms, char *err,
	    size_t errlen);
/* Ask for the kill and return: cgroup_event(cgpath, "populated") says
 * when every task is gone. */
int	cgroup_kill_start(const char *cgpath, char *err, size_t errlen);

/* KEY's value in cgroup.events ("frozen", "populated"), or -1. */
int	cgroup_event(const char *cgpath, const char *key);
/* The pids of cgroup.procs, at most max (more is an error); the caller
 * frees *pids. */
int	cgroup_procs(const char *cgpath, pid_t **pids, size_t *n, size_t max,
	    char *err, size_t errlen);
/* Write val to the cgroup's knob ("memory.max", "pids.max"). */
int	cgroup_set(const char *cgpath, const char *knob, const char *val,
	    char *err, size_t errlen);
/* Make controller ("memory", "pids") available to the cgroups below
 * cgpath: enabled in cgroup.subtree_control of each cgroup from top (the
 * mount's root, or any ancestor of cgpath) down to cgpath, where it is
 * not yet.  A cgroup that holds processes of its own cannot (EBUSY). */
int	cgroup_delegate(const char *top, const char *cgpath,
	    const char *controller, char *err, size_t errlen);
/* Move pid (0: the caller) into the cgroup. */
int	cgroup_enter(const char *cgpath, pid_t pid, char *err, size_t errlen);

#endif
