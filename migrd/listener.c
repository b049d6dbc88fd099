/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "listener.h"
#include "log.h"

struct listener {
	int		 fd;
	struct event	*ev;
	struct event	*pause_ev;
	listener_cb	 cb;
	void		*arg;
	int		 paused;
};

static void
listener_accept(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;
	struct sockaddr_storage ss;
	socklen_t len;
	int s;
	struct timeval one = { 1, 0 };

	(void)fd;
	(void)what;
	for (;;) {
		len = sizeof(ss);
		s = accept4(l->fd, (struct sockaddr *)&ss, &len,
		    SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (s != -1) {
			l->cb(s, (struct sockaddr *)&ss, len, l->arg);
			if (l->paused)
				return;
			continue;
		}
		switch (errno) {
		case EINTR:
			continue;
		case EAGAIN:
		case ECONNABORTED:
			return;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			log_warn("%s: accept, pausing for 1 s", __func__);
			event_del(l->ev);
			evtimer_add(l->pause_ev, &one);
			return;
		default:
			log_warn("%s: accept", __func__);
			return;
		}
	}
}

static void
listener_unpause(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;

	(void)fd;
	(void)what;
	if (!l->paused)
		event_add(l->ev, NULL);
}

struct listener *
listener_new(struct event_base *base, int fd, listener_cb cb, void *arg)
{
	struct listener *l;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		log_warn("%s: calloc", __func__);
		return NULL;
	}
	l->fd = fd;
	l->cb = cb;
	l->arg = arg;
	l->ev = event_new(base, fd, EV_READ | EV_PERSIST, listener_accept, l);
	l->pause_ev = evtimer_new(base, listener_unpause, l);
	if (l->ev == NULL || l->pause_ev == NULL ||
	    event_add(l->ev, NULL) == -1) {
		log_warnx("%s: cannot add accept event", __func__);
		listener_free(l);
		return NULL;
	}
	return l;
}

void
listener_free(struct listener *l)
{
	if (l == NULL)
		return;
	if (l->ev)
		event_free(l->ev);
	if (l->pause_ev)
		event_free(l->pause_ev);
	close(l->fd);
	free(l);
}

void
listener_pause(struct listener *l)
{
	l->paused = 1;
	event_del(l->ev);
}

void
listener_resume(struct listener *l)
{
	if (!l->paused)
		return;
	l->paused = 0;
	event_add(l->ev, NULL);
}

int
listener_fd(const struct listener *l)
{
	return l->fd;
}
