/* SPDX-License-Identifier: ISC */
/*
 * Work that must not hold the loop (CRIU's dump or restore, which take
 * seconds), done by a function of migrd's run in a child process: the
 * child runs fn, writes the JSON object fn returns to a pipe and exits;
 * the loop reads it as it comes and calls done once, with the object,
 * or with NULL and a failure ("the child ended before it answered").
 *
 * The child dies with migrd (PR_SET_PDEATHSIG), has migrd's signal
 * handlers reset, and exits without running anything of migrd's (no
 * atexit, no flush).  migrd's SIGCHLD handler reaps it.
 */
#ifndef MIGRD_HELPER_H
#define MIGRD_HELPER_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct helper;
/* In the child: the answer (a new reference), or NULL for a failure. */
typedef json_t *helper_fn(void *fnarg);
/* In the loop, once: answer (borrowed) or NULL and failure. */
typedef void helper_done_fn(void *arg, json_t *answer, const char *failure);

/* The helper, or NULL and why; an answer longer than max bytes is a
 * failure. */
struct helper	*helper_start(const char *what, size_t max, helper_fn *fn,
		    void *fnarg, helper_done_fn *done, void *arg, char *why,
		    size_t len);
pid_t		 helper_pid(const struct helper *);
/* Kill the child, forget it: done is not called. */
void		 helper_cancel(struct helper *);
/* Let the child finish, for at most ms (the loop waits: for a step that
 * must not be cut, CRIU's dump inside a task), then the same. */
void		 helper_finish(struct helper *, int ms);

#endif
