/* SPDX-License-Identifier: ISC */
/*
 * Low descriptors for libraries that select(2).  libnftables waits on
 * its netlink socket with select(), whose fortified FD_SET aborts the
 * process on a descriptor of FD_SETSIZE (1024) or above, and a daemon
 * holding a namespace's sockets has more than that.  socket() takes the
 * lowest free number, so a few numbers reserved at start-up (on
 * /dev/null) and freed around such a call give the library's socket one
 * of them, however many descriptors the process holds.
 *
 * Single-threaded use: nothing may open a descriptor between
 * lowfd_release() and lowfd_retake() but the library call.
 */
#ifndef MIGR_LOWFD_H
#define MIGR_LOWFD_H

#define LOWFD_RESERVED	4

int	lowfd_reserve(void);	/* at start-up: 0, or -1 (logged) */
void	lowfd_release(void);	/* free the reserved numbers */
void	lowfd_retake(void);	/* reserve again those still free */
int	lowfd_count(void);	/* how many are reserved now */

#endif
