/* SPDX-License-Identifier: ISC */
/*
 * Put descriptors into another process at the numbers it expects: the
 * hand-over of checkpoint mode (docs/design.md, "Checkpoint mode"), where
 * CRIU restores a program with a placeholder at each socket's number and
 * the engine's restored socket must take the placeholder's place.
 *
 * The task is stopped (ptrace) and infected with a small parasite through
 * CRIU's compel library; for each item the parasite receives the
 * descriptor, puts it at its number with the placeholder's file status
 * and descriptor flags (O_NONBLOCK, FD_CLOEXEC), and adds it to every
 * epoll set of the task that watched the placeholder, with the same
 * events and data (closing the placeholder drops those entries).  Then
 * the task is cured and left in the state it was found in (running, or
 * stopped as `criu restore -s` leaves it).
 *
 * Only what shares the task's descriptor table sees the change; a task
 * of a tree that holds its own copy (after fork) needs its own call.
 */
#ifndef MIGR_FDPUT_H
#define MIGR_FDPUT_H

#include <stddef.h>
#include <sys/types.h>

struct fdput_item {
	int	fd;		/* ours: the descriptor to give */
	int	target;		/* its number in the task */
};

/* 0, or -1 with the reason in err (the task is left as it was found,
 * with the items before the failing one in place). */
int	fdput(pid_t pid, const struct fdput_item *items, size_t n, char *err,
	    size_t errlen);

#endif
