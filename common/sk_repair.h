/*
 * The socket state engine: dump a live TCP or UDP socket through the
 * kernel's repair API and rebuild it elsewhere, with no segment on the
 * wire that the peer could notice.  Shaped after CRIU's libsoccr: a
 * prefixed API, an opaque handle, an explicit lifecycle.
 *
 * Lifecycle, source side (the namespace is frozen and locked):
 *
 *	if (sk_check(fd, why, sizeof(why)) < 0)	   no side effect
 *		refuse the migration with why;
 *	h = sk_pause(fd);			   TCP: repair on
 *	sk_save(h, &st);			   read state + queues
 *	    (LISTEN: sk_accept_pending(h, ...) hands back the connections
 *	     waiting in the accept queue; pause/save each one and set its
 *	     parent_id to the listener's id)
 *	send st;
 *	commit ?  sk_release(h)			   close, still in repair:
 *						   no FIN, no RST
 *	       :  sk_rollback(h)		   repair off without a window
 *						   probe; the socket goes on
 *
 * Lifecycle, destination side (the new namespace is locked):
 *
 *	h = sk_restore(st);	new socket, repair on, options, queue
 *				sequence numbers, bind, connect (no SYN),
 *				negotiated options, timestamp, queues,
 *				FINs replayed, window; still in repair
 *	    (restore every socket, both ends of in-namespace pairs, before
 *	     resuming any of them)
 *	unlock the namespace, announce the addresses;
 *	sk_resume(h, 0);	repair off with a window probe, then the
 *				never-sent bytes are sent normally
 *	fd = sk_detach(h);	hand the fd to the workload
 *	or sk_abort(h);		close silently (repair on) on failure
 *
 * Buffers: sk_save() allocates a struct sk_state the caller owns and
 * frees with sk_state_free().  sk_restore() copies what it needs from
 * the state it is given; the caller keeps ownership of it.
 *
 * Options the running kernel lacks (ENOPROTOOPT) are logged at debug
 * level and skipped.  Every function returns 0 (or a handle) on
 * success, -1 (or NULL) with a log line on failure.
 */
#ifndef MIGR_SK_REPAIR_H
#define MIGR_SK_REPAIR_H

#include <stddef.h>

#include "sk_state.h"

struct sk_handle;

/* Log sink: prio is a syslog priority.  NULL restores common/log.h. */
typedef void (*sk_log_fn)(int prio, const char *msg, void *arg);
void		 sk_set_log(sk_log_fn fn, void *arg);

/*
 * 0 when the socket behind fd can be moved; -1 and a reason in why
 * ("tcp: state SYN_SENT cannot be moved") when it cannot.  Reads only.
 */
int		 sk_check(int fd, char *why, size_t whylen);

/*
 * Source side.  fd stays the caller's until sk_release().
 * sk_accept_pending() accepts every connection waiting in a listener's
 * accept queue into fds (they are the caller's), or accepts none and
 * fails when more than max wait.
 */
struct sk_handle *sk_pause(int fd);
int		 sk_save(struct sk_handle *, struct sk_state **out);
int		 sk_accept_pending(struct sk_handle *listener, int *fds,
		    size_t max, size_t *nfds);
int		 sk_release(struct sk_handle *);
int		 sk_rollback(struct sk_handle *);

/* Destination side. */
#define SK_RESUME_NO_PROBE	0x01	/* leave repair without window probe */
struct sk_handle *sk_restore(const struct sk_state *);
int		 sk_resume(struct sk_handle *, int flags);
int		 sk_detach(struct sk_handle *);
void		 sk_abort(struct sk_handle *);

int		 sk_handle_fd(const struct sk_handle *);

#endif
