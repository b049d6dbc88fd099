/* SPDX-License-Identifier: ISC */
/*
 * Before a restored program runs: is every task of it what local policy
 * lets a peer run here?  `criu restore -s` leaves the tree stopped with
 * the credentials the peer's images name, so checkpoint mode reads each
 * thread's /proc status while none has run, and refuses the lot if one
 * is not: every uid and gid the workload user's, no supplementary group
 * but that gid, no capability in any set but the bounding one beyond
 * allowed (the workload's configured capabilities, a bit each), and
 * NoNewPrivs set (so no exec can gain any).
 */
#ifndef MIGR_CREDCHECK_H
#define MIGR_CREDCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0 if thread tid is fit to run as uid/gid with at most the
 * capabilities of allowed, else -1 with why in err. */
int	credcheck_task(pid_t tid, uid_t uid, gid_t gid, uint64_t allowed,
	    char *err, size_t errlen);

/*
 * Every thread of root and of every process below it (a tree a restore
 * left stopped, so none forks meanwhile); 0, or -1 with the first that
 * is not fit.
 */
int	credcheck_tree(pid_t root, uid_t uid, gid_t gid, uint64_t allowed,
	    char *err, size_t errlen);

#endif
