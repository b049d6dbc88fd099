/* SPDX-License-Identifier: ISC */
/*
 * A function run in a child process, its answer read from the loop
 * (helper.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "helper.h"
#include "log.h"
#include "migrd.h"

struct helper {
	char		 what[64];
	pid_t		 pid;
	int		 fd;
	struct event	*ev;
	char		*buf;
	size_t		 len, cap, max;
	helper_done_fn	*done;
	void		*arg;
};

static void
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		p += w;
		n -= (size_t)w;
	}
}

static void __attribute__((noreturn))
child(int fd, helper_fn *fn, void *fnarg, pid_t parent)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD };
	json_t *o;
	char *s;
	size_t i;

	/* migrd's handlers write to its loop's socketpair: not ours */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);	/* migrd died before the line above */
	if ((o = fn(fnarg)) == NULL ||
	    (s = json_dumps(o, JSON_COMPACT)) == NULL)
		_exit(1);
	write_all(fd, s, strlen(s));
	_exit(0);
}

static void
helper_free(struct helper *h)
{
	if (h->ev != NULL)
		event_free(h->ev);
	if (h->fd != -1)
		close(h->fd);
	free(h->buf);
	free(h);
}

static void
finish(struct helper *h, const char *failure)
{
	helper_done_fn *done = h->done;
	void *arg = h->arg;
	json_t *o = NULL;
	char text[160];

	if (failure == NULL && (o = json_loadb(h->buf, h->len, 0,
	    NULL)) == NULL) {
		snprintf(text, sizeof(text), "the %s process ended before it "
		    "answered", h->what);
		failure = text;
	} else if (failure != NULL) {
		snprintf(text, sizeof(text), "%s", failure);
		failure = text;
	}
	helper_free(h);
	done(arg, o, failure);
	json_decref(o);
}

static void
readable(evutil_socket_t fd, short what, void *arg)
{
	struct helper *h = arg;
	ssize_t r;
	char *nb;

	(void)what;
	if (h->len == h->cap) {
		if (h->cap >= h->max) {
			kill(h->pid, SIGKILL);
			finish(h, "its answer is too long");
			return;
		}
		h->cap = h->cap == 0 ? 4096 : 2 * h->cap;
		if ((nb = realloc(h->buf, h->cap)) == NULL) {
			log_warn("%s: realloc", __func__);
			kill(h->pid, SIGKILL);
			finish(h, "out of memory reading its answer");
			return;
		}
		h->buf = nb;
	}
	if ((r = read(fd, h->buf + h->len, h->cap - h->len)) < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		log_warn("%s: read", __func__);
		kill(h->pid, SIGKILL);
		finish(h, "cannot read its answer");
		return;
	}
	if (r > 0) {
		h->len += (size_t)r;
		return;
	}
	finish(h, NULL);
}

struct helper *
helper_start(const char *what, size_t max, helper_fn *fn, void *fnarg,
    helper_done_fn *done, void *arg, char *why, size_t len)
{
	struct helper *h;
	pid_t parent = getpid();
	int p[2];

	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	snprintf(h->what, sizeof(h->what), "%s", what);
	h->max = max;
	h->fd = -1;
	h->done = done;
	h->arg = arg;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		free(h);
		return NULL;
	}
	if ((h->pid = fork()) < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(h);
		return NULL;
	}
	if (h->pid == 0) {
		close(p[0]);
		fcntl(p[1], F_SETFL, 0);	/* blocking writes */
		child(p[1], fn, fnarg, parent);
	}
	close(p[1]);
	h->fd = p[0];
	if ((h->ev = event_new(migrd.base, h->fd, EV_READ | EV_PERSIST,
	    readable, h)) == NULL || event_add(h->ev, NULL) == -1) {
		snprintf(why, len, "cannot watch the %s process", what);
		kill(h->pid, SIGKILL);
		helper_free(h);
		return NULL;
	}
	log_debug("%s: pid %ld", what, (long)h->pid);
	return h;
}

pid_t
helper_pid(const struct helper *h)
{
	return h->pid;
}

void
helper_cancel(struct helper *h)
{
	if (h == NULL)
		return;
	kill(h->pid, SIGKILL);
	helper_free(h);
}

void
helper_finish(struct helper *h, int ms)
{
	struct pollfd p;
	double t0 = mono_ms();
	char buf[4096];
	ssize_t n;
	int left, r;

	if (h == NULL)
		return;
	p.fd = h->fd;
	p.events = POLLIN;
	while ((left = ms - (int)(mono_ms() - t0)) > 0) {
		p.revents = 0;
		if ((r = poll(&p, 1, left)) < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		/* the answer is not wanted; EOF: the child is gone */
		if ((n = read(h->fd, buf, sizeof(buf))) == 0 ||
		    (n < 0 && errno != EINTR && errno != EAGAIN))
			break;
	}
	if (left <= 0)
		log_warnx("%s: pid %ld still at work after %d ms: killed",
		    h->what, (long)h->pid, ms);
	helper_cancel(h);
}
