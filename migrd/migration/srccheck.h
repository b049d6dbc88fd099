/* SPDX-License-Identifier: ISC */
/*
 * migsrc_check() away from the event loop.  Collecting and checking
 * every socket of a namespace costs a few milliseconds a socket (13 ms
 * in the TCG lab under ASan): seconds for a few hundred, minutes for ten
 * thousand.  Run in migrd's loop, that silence made the peer declare
 * this host dead ("nothing received for 4447 ms") in the middle of a
 * PREPARE.  So the check runs in a child process, which only looks
 * (the check has no side effect), and hands its verdict back through a
 * pipe as one JSON object; the loop goes on meanwhile.
 */
#ifndef MIGRD_SRCCHECK_H
#define MIGRD_SRCCHECK_H

#include <jansson.h>

struct srccheck;

/*
 * What migsrc_check() said: the number of sockets, or -1 with why (every
 * reason, "; "-separated) and reasons (one string each, borrowed: the
 * callee keeps a reference if it wants one).  A child that failed to
 * answer is a reason too.
 */
typedef void	srccheck_done_fn(void *arg, int nsocks, const char *why,
		    json_t *reasons);

/* "migctl check" (not a migration, which copies the memory anyway):
 * in checkpoint mode, a dry pre-dump of the program too. */
#define SRCCHECK_DRY_DUMP	0x1

/* NULL with why when the child cannot be started; done is then never
 * called. */
struct srccheck	*srccheck_start(const char *ns, const char *cgroup,
		    unsigned flags, srccheck_done_fn *done, void *arg,
		    char *why, size_t len);
/* Kill the child and forget it: done is not called. */
void		 srccheck_cancel(struct srccheck *c);

#endif
