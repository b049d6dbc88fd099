/*
 * The control socket: a unix stream socket (or the one systemd passes),
 * framed JSON requests, exactly one MSG_RESULT reply per request.  Only
 * root or members of admin-group are served (SO_PEERCRED on accept).
 */
#ifndef MIGRD_CONTROL_H
#define MIGRD_CONTROL_H

#include <stdint.h>

#include <jansson.h>

int	control_init(void);
void	control_shutdown(void);

/* A command handler: returns an enum migr_result, may set *data and
 * write a message (empty = the code's string). */
typedef int (*ctl_handler)(json_t *req, json_t **data, char *msg,
    size_t msglen);

/*
 * A handler that cannot answer at once (a migration) takes the caller's
 * id from control_current(), returns CTL_DEFERRED, and later sends any
 * number of MSG_CTL_PROGRESS frames and exactly one result.  The
 * connection reads no other request meanwhile.  A caller that went away
 * is simply not found: both calls then do nothing.
 */
#define CTL_DEFERRED	(-1)
uint64_t control_current(void);
int	control_progress(uint64_t id, json_t *progress);	/* steals */
void	control_finish(uint64_t id, int code, const char *msg, json_t *data);

#endif
