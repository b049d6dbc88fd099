/* SPDX-License-Identifier: ISC */
/*
 * Collect the sockets of a frozen workload.  For each task of the cgroup,
 * every fd that is a socket is copied into this process with
 * pidfd_getfd(2) (needs CAP_SYS_PTRACE over the task), once per socket:
 * sockets are told apart by inode, and each keeps the list of (pid, fd)
 * pairs that held it, so a restarted workload can get them at the same
 * numbers.
 *
 * The tasks must be frozen (cgroup.h) so their fd tables hold still.
 */
#ifndef MIGR_COLLECT_H
#define MIGR_COLLECT_H

#include <stddef.h>
#include <sys/types.h>

#define COLLECT_MAX_SOCKS	65536
#define COLLECT_MAX_TASKS	4096

struct collect_user {
	pid_t	pid;
	int	fd;		/* the number the task used */
};

struct collect_sock {
	int			 fd;	/* our copy */
	unsigned long		 ino;
	int			 family, type, protocol;
	struct collect_user	*users;
	size_t			 nusers;
};

struct collect_set {
	struct collect_sock	*socks;
	size_t			 nsocks;
	size_t			 ntasks;
	/* while collecting: room in socks, and an index by inode (open
	 * addressing, entries are positions + 1) */
	size_t			 cap;
	size_t			*byino;
	size_t			 nbyino;		/* a power of 2 */
};

/* Only AF_INET and AF_INET6 sockets: the rest (unix socket pairs of a
 * checkpointed tree) are someone else's to carry. */
#define COLLECT_INET_ONLY	0x1

/* 0 or -1; on failure nothing is left open. */
int	collect_sockets(const char *cgpath, unsigned flags,
	    struct collect_set *, char *err, size_t errlen);
void	collect_free(struct collect_set *);

#endif
