/* SPDX-License-Identifier: ISC */
/*
 * An accepting socket on the event loop.  accept4() with
 * SOCK_CLOEXEC|SOCK_NONBLOCK; on EMFILE/ENFILE/ENOBUFS/ENOMEM accepting
 * pauses for a second instead of spinning (bgpd control.c does the same).
 */
#ifndef MIGRD_LISTENER_H
#define MIGRD_LISTENER_H

#include <sys/socket.h>

struct event_base;
struct listener;

typedef void (*listener_cb)(int fd, struct sockaddr *sa, socklen_t salen,
    void *arg);

struct listener	*listener_new(struct event_base *base, int fd,
		    listener_cb cb, void *arg);
void		 listener_free(struct listener *l);
void		 listener_pause(struct listener *l);
void		 listener_resume(struct listener *l);
int		 listener_fd(const struct listener *l);

#endif
