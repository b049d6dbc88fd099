/* Control commands: one handler per MSG_CTL_* type. */
#ifndef MIGRD_CTL_CMDS_H
#define MIGRD_CTL_CMDS_H

#include <stddef.h>

#include <jansson.h>

int	ctl_dispatch(int type, json_t *req, json_t **data, char *msg,
	    size_t msglen);

#endif
