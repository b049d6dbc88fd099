/* SPDX-License-Identifier: ISC */
/*
 * Before a restored program runs, its files: CRIU opens and maps what
 * the peer's images name as root, before the tasks drop to the workload
 * user, so a restored task may hold a file that user could never open
 * itself (the host's /etc/shadow, migrd's key).  filecheck_tasks() looks
 * at every descriptor and every file mapping of the tasks and asks, as
 * that user (uid, gid, no other group, the capabilities its workloads
 * are given: what a workload could open, with CAP_DAC_OVERRIDE if it is
 * given that), whether the user
 * could open the file with the same access: read for a descriptor open
 * for reading or a readable mapping, write for one open for writing or a
 * shared writable mapping.  Sockets, pipes and anonymous inodes are
 * not files; descriptors opened O_PATH give no access; a deleted file
 * mapped has no path to judge (CRIU made it from the images: the peer's
 * bytes) and is let be.
 *
 * The paths are followed through /proc/PID/fd and /proc/PID/root, so
 * the task's own mounts count, and the tasks must be ones the user may
 * look at (dumpable, its own uid): what cannot be looked at is refused.
 */
#ifndef MIGR_FILECHECK_H
#define MIGR_FILECHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0 if user uid/gid could open every file the n tasks hold, else -1
 * with the first that it could not (or why it could not look) in err.
 * caps: the capabilities the tasks may hold (credcheck.h), which the
 * looking process needs to look at them. */
int	filecheck_tasks(const pid_t *pids, size_t n, uid_t uid, gid_t gid,
	    uint64_t caps, char *err, size_t errlen);

#endif
