/* SPDX-License-Identifier: ISC */
/* Control commands: one handler per MSG_CTL_* type. */
#ifndef MIGRD_CTL_CMDS_H
#define MIGRD_CTL_CMDS_H

#include <stddef.h>

#include <jansson.h>

struct ctl_req;

/* The command's check, then (if RES_OK) its action. */
int	ctl_dispatch(int type, json_t *req, json_t **data, char *msg,
	    size_t msglen);
/* The check alone: nothing changes, here or on the system. */
int	ctl_check(int type, json_t *req, struct ctl_req *r, char *msg,
	    size_t msglen);

#endif
