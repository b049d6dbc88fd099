/* SPDX-License-Identifier: ISC */
/*
 * One message, and at most one descriptor with it (SCM_RIGHTS), on a
 * unix socket: what migrd and its TLS process say to each other.
 */
#ifndef MIGRD_FDPASS_H
#define MIGRD_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* fd -1: none.  sendmsg()'s result (flags: MSG_DONTWAIT...). */
ssize_t	fdpass_send(int sock, const void *buf, size_t len, int fd, int flags);
/*
 * recvmsg()'s result; *fd is the descriptor that came (close-on-exec),
 * or -1.  A message that is not exactly len bytes, or whose control
 * data was cut, is -1 with EBADMSG, its descriptor closed.
 */
ssize_t	fdpass_recv(int sock, void *buf, size_t len, int *fd, int flags);

#endif
