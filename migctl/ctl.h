/* SPDX-License-Identifier: ISC */
/*
 * migctl's side of the control socket: connect, and read frames with a
 * bound on the wait.
 */
#ifndef MIGCTL_CTL_H
#define MIGCTL_CTL_H

#include <stdint.h>

#include <jansson.h>

#define CTL_TIMEOUT	60	/* seconds, for each frame read */

/* A connected control socket, or -1 after saying why (errno kept). */
int	ctl_connect(const char *path);
/* The next frame: 0 with *type and *msg set, or -1 after saying why
 * ("request not sent" when sent is -1 and nothing came). */
int	ctl_read(int fd, int sent, uint16_t *type, json_t **msg);
/* A MSG_RESULT payload's code (a known result) and message: 0, or -1
 * when it has not both. */
int	ctl_result(json_t *m, int *code, const char **message);

#endif
