/*
 * The control socket: a unix stream socket (or the one systemd passes),
 * framed JSON requests, exactly one MSG_RESULT reply per request.  Only
 * root or members of admin-group are served (SO_PEERCRED on accept).
 */
#ifndef MIGRD_CONTROL_H
#define MIGRD_CONTROL_H

#include <jansson.h>

int	control_init(void);
void	control_shutdown(void);

/* A command handler: returns an enum migr_result, may set *data and
 * write a message (empty = the code's string). */
typedef int (*ctl_handler)(json_t *req, json_t **data, char *msg,
    size_t msglen);

#endif
