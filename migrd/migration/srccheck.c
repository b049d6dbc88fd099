/* SPDX-License-Identifier: ISC */
/*
 * migsrc_check() in a child process (srccheck.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "mig_priv.h"
#include "migrd.h"
#include "migsrc.h"
#include "srccheck.h"

/* The verdict's JSON: every reason of thousands of sockets fits. */
#define SRCCHECK_OUT_MAX	(4 * 1024 * 1024)

struct srccheck {
	pid_t			 pid;
	int			 fd;
	struct event		*ev;
	char			*buf;
	size_t			 len, cap;
	srccheck_done_fn	*done;
	void			*arg;
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

/* The child: look, answer, leave without running anything of the
 * parent's (no atexit, no flush of its buffers). */
static void __attribute__((noreturn))
child(int fd, const char *ns, const char *cgroup, pid_t parent)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD };
	char why[4096];
	json_t *reasons, *o;
	char *s;
	size_t i;
	int n;

	/* migrd's handlers write to its loop's socketpair: not ours */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);	/* migrd died before the line above */
	if ((reasons = json_array()) == NULL)
		_exit(1);
	if (mig_fault("src-check-die"))
		_exit(1);
	if (mig_fault("src-check-slow"))
		sleep(15);
	n = migsrc_check(ns, cgroup, why, sizeof(why), reasons);
	o = json_pack("{s:i,s:s,s:o}", "n", n, "why", why, "reasons",
	    reasons);
	if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL)
		_exit(1);
	write_all(fd, s, strlen(s));
	_exit(0);
}

static void
srccheck_free(struct srccheck *c)
{
	if (c->ev != NULL)
		event_free(c->ev);
	if (c->fd != -1)
		close(c->fd);
	free(c->buf);
	free(c);
}

/* The child's answer is whole (EOF): read it, forget the child (the
 * SIGCHLD handler reaps it), then tell the owner. */
static void
finish(struct srccheck *c, const char *failure)
{
	srccheck_done_fn *done = c->done;
	void *arg = c->arg;
	const char *why = "";
	json_t *o = NULL, *reasons = NULL;
	char text[160];
	int n = -1;

	if (failure == NULL &&
	    ((o = json_loadb(c->buf, c->len, 0, NULL)) == NULL ||
	    json_unpack(o, "{s:i,s:s,s:o}", "n", &n, "why", &why,
	    "reasons", &reasons) == -1 || !json_is_array(reasons))) {
		failure = "the check's process ended before it answered";
		n = -1;
	}
	if (failure != NULL) {
		snprintf(text, sizeof(text), "%s", failure);
		why = text;
		reasons = NULL;
	}
	srccheck_free(c);
	if (reasons == NULL) {
		json_t *one = json_pack("[s]", why);

		done(arg, n, why, one);
		json_decref(one);
	} else
		done(arg, n, why, reasons);
	json_decref(o);
}

static void
readable(evutil_socket_t fd, short what, void *arg)
{
	struct srccheck *c = arg;
	ssize_t r;
	char *nb;

	(void)what;
	if (c->len == c->cap) {
		if (c->cap > SRCCHECK_OUT_MAX) {
			kill(c->pid, SIGKILL);
			finish(c, "the check's answer is too long");
			return;
		}
		c->cap = c->cap == 0 ? 16384 : 2 * c->cap;
		if ((nb = realloc(c->buf, c->cap)) == NULL) {
			log_warn("%s: realloc", __func__);
			kill(c->pid, SIGKILL);
			finish(c, "out of memory reading the check's answer");
			return;
		}
		c->buf = nb;
	}
	if ((r = read(fd, c->buf + c->len, c->cap - c->len)) < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		log_warn("%s: read", __func__);
		kill(c->pid, SIGKILL);
		finish(c, "cannot read the check's answer");
		return;
	}
	if (r > 0) {
		c->len += (size_t)r;
		return;
	}
	finish(c, NULL);
}

struct srccheck *
srccheck_start(const char *ns, const char *cgroup, srccheck_done_fn *done,
    void *arg, char *why, size_t len)
{
	struct srccheck *c;
	pid_t parent = getpid();
	int p[2];

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	c->fd = -1;
	c->done = done;
	c->arg = arg;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		free(c);
		return NULL;
	}
	if ((c->pid = fork()) < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(c);
		return NULL;
	}
	if (c->pid == 0) {
		close(p[0]);
		/* the child writes with blocking writes */
		fcntl(p[1], F_SETFL, 0);
		child(p[1], ns, cgroup, parent);
	}
	close(p[1]);
	c->fd = p[0];
	if ((c->ev = event_new(migrd.base, c->fd, EV_READ | EV_PERSIST,
	    readable, c)) == NULL || event_add(c->ev, NULL) == -1) {
		snprintf(why, len, "cannot watch the check's process");
		kill(c->pid, SIGKILL);
		srccheck_free(c);
		return NULL;
	}
	log_debug("check of %s: pid %ld", ns, (long)c->pid);
	return c;
}

void
srccheck_cancel(struct srccheck *c)
{
	if (c == NULL)
		return;
	kill(c->pid, SIGKILL);
	srccheck_free(c);
}
