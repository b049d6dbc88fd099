/* SPDX-License-Identifier: ISC */
/*
 * Are a cgroup's tasks at rest?  Light mode carries a program's sockets,
 * not its memory: what a task has read from a socket and not yet written
 * anywhere dies with it at the commit, though its peer counts it
 * delivered.  A task is at rest when it sleeps in a wait for input (a
 * read, recv, poll, select, epoll, accept, wait or futex), interruptibly:
 * a program that loops "read, work, write" holds nothing there.  A task
 * stopped (SIGSTOP, a tracer) in one of those is at rest only if that
 * wait takes no bytes as it returns: a read stopped on its way out holds
 * what it read, a poll's events stay in the socket.  A task
 * that runs, sleeps in a timer, or is blocked writing to a socket whose
 * peer reads slowly may hold bytes it read.
 *
 * Only tasks that hold a socket count: a "sleep" beside the service holds
 * none of its input.  Each thread of such a task is looked at.
 *
 * taskrest_pids() and taskrest_cgroup() look once: 1 when every such task
 * is at rest, 0 when one is not (why names it and what it does: "pid 812
 * (cat) is blocked in write"), -1 when they cannot tell (why says).  A
 * task that exits meanwhile is at rest.
 */
#ifndef MIGR_TASKREST_H
#define MIGR_TASKREST_H

#include <stddef.h>
#include <sys/types.h>

int	taskrest_pids(const pid_t *pids, size_t n, char *why, size_t len);
int	taskrest_cgroup(const char *cgpath, char *why, size_t len);
/* The name of a wait for input (system call nr), or NULL. */
const char *taskrest_wait_name(long nr);
/* The system call a line of /proc/TID/syscall shows: its number, -1 when
 * the task sleeps outside one, -2 when it runs ("running"), -3 when the
 * line makes no sense. */
long	taskrest_parse_syscall(const char *line);

#endif
