/* SPDX-License-Identifier: ISC */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <compel/infect.h>
#include <compel/infect-rpc.h>
#include <compel/infect-util.h>
#include <compel/log.h>

#include "errbuf.h"
#include "fdput.h"
#include "fdput_proto.h"
#include "fdput-blob.h"
#include "log.h"

/* What the task's epoll sets watch: one entry per (set, number). */
struct watches {
	struct watch_entry {
		int			epfd, tfd;
		unsigned int		events;
		unsigned long long	data;
	}		*v;
	size_t		 n, cap;
};

/* The epoll sets of the task that watch one number. */
struct watch {
	struct fdput_ep	ep[FDPUT_EP_MAX];
	int		n;
};

static void
compel_log(unsigned int lvl, const char *fmt, va_list ap)
{
	char buf[512];
	size_t len;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	if (len > 0 && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	if (lvl <= COMPEL_LOG_ERROR)
		log_warnx("compel: %s", buf);
	else
		log_debug("compel: %s", buf);
}

/* Is /proc/pid/fd/fd an epoll instance? */
static int
is_epoll(pid_t pid, const char *fd)
{
	char path[PATH_MAX], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%.32s", (int)pid, fd);
	if ((n = readlink(path, link, sizeof(link) - 1)) < 0)
		return 0;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventpoll]") == 0;
}

/* Add to ws what epoll set epfd of pid watches: its fdinfo has a line
 * "tfd: N events: HEX data: HEX ..." per entry. */
static int
scan_epoll(pid_t pid, int epfd, struct watches *ws, char *err,
    size_t errlen)
{
	char path[64], line[256];
	unsigned long long data;
	unsigned int events;
	FILE *f;
	int tfd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, epfd);
	if ((f = fopen(path, "re")) == NULL)
		return 0;	/* closed meanwhile: not a watcher */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "tfd: %d events: %x data: %llx", &tfd,
		    &events, &data) != 3)
			continue;
		if (ws->n == ws->cap) {
			size_t cap = ws->cap ? 2 * ws->cap : 64;
			struct watch_entry *v = realloc(ws->v,
			    cap * sizeof(*v));

			if (v == NULL) {
				errbuf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			ws->v = v;
			ws->cap = cap;
		}
		ws->v[ws->n].epfd = epfd;
		ws->v[ws->n].tfd = tfd;
		ws->v[ws->n].events = events;
		ws->v[ws->n++].data = data;
	}
	fclose(f);
	return rc;
}

/* Every epoll set of the (stopped) task, read once for all the items. */
static int
find_watches(pid_t pid, struct watches *ws, char *err, size_t errlen)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL) {
		errbuf_errno(err, errlen, "%s", path);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !is_epoll(pid, de->d_name))
			continue;
		rc = scan_epoll(pid, atoi(de->d_name), ws, err, errlen);
	}
	closedir(d);
	return rc;
}

/* The sets that watch number target, into w. */
static int
watchers_of(const struct watches *ws, pid_t pid, int target,
    struct watch *w, char *err, size_t errlen)
{
	size_t i;

	w->n = 0;
	for (i = 0; i < ws->n; i++) {
		if (ws->v[i].tfd != target)
			continue;
		if (w->n == FDPUT_EP_MAX) {
			errbuf(err, errlen, "descriptor %d of pid %d is "
			    "watched by more than %d epoll sets", target,
			    (int)pid, FDPUT_EP_MAX);
			return -1;
		}
		w->ep[w->n].epfd = ws->v[i].epfd;
		w->ep[w->n].events = ws->v[i].events;
		w->ep[w->n++].data = ws->v[i].data;
	}
	return 0;
}

static const char *
step_name(int step)
{
	switch (step) {
	case FDPUT_RECV:
		return "receiving it";
	case FDPUT_DUP:
		return "putting it at its number";
	case FDPUT_FLAGS:
		return "giving it the placeholder's flags";
	case FDPUT_EPOLL:
		return "adding it to an epoll set";
	default:
		return "?";
	}
}

/* One item, with the parasite in place. */
static int
put_one(struct parasite_ctl *ctl, pid_t pid, const struct fdput_item *it,
    const struct watches *ws, char *err, size_t errlen)
{
	struct fdput_args *a;
	struct watch w;

	if (watchers_of(ws, pid, it->target, &w, err, errlen) < 0)
		return -1;
	a = compel_parasite_args(ctl, struct fdput_args);
	memset(a, 0, sizeof(*a));
	a->target = it->target;
	a->nep = w.n;
	memcpy(a->ep, w.ep, sizeof(a->ep));
	a->step = -1;
	if (compel_rpc_call(FDPUT_CMD_PUT, ctl) < 0 ||
	    compel_util_send_fd(ctl, it->fd) < 0) {
		errbuf(err, errlen, "pid %d: the parasite did not take "
		    "descriptor %d", (int)pid, it->target);
		if (compel_rpc_sync(FDPUT_CMD_PUT, ctl) < 0)
			log_debug("pid %d: the parasite did not answer",
			    (int)pid);
		return -1;
	}
	if (compel_rpc_sync(FDPUT_CMD_PUT, ctl) < 0 || a->step != FDPUT_OK) {
		errbuf(err, errlen, "pid %d: descriptor %d: %s: %s",
		    (int)pid, it->target, step_name(a->step),
		    a->err < 0 ? strerror((int)-a->err) : "failed");
		return -1;
	}
	log_debug("pid %d: descriptor %d in place, in %d epoll sets",
	    (int)pid, it->target, w.n);
	return 0;
}

int
fdput(pid_t pid, const struct fdput_item *items, size_t n, char *err,
    size_t errlen)
{
	struct parasite_ctl *ctl;
	struct infect_ctx *ictx;
	struct watches ws = { NULL, 0, 0 };
	void *regs = NULL;
	int state, logfd = -1, sock = -1, rc = -1;
	size_t i;

	if (n == 0)
		return 0;
	compel_log_init(compel_log, log_getverbose() > 1 ? COMPEL_LOG_DEBUG :
	    COMPEL_LOG_WARN);
	if ((state = compel_stop_task(pid)) < 0) {
		errbuf(err, errlen, "pid %d cannot be stopped (ptrace)",
		    (int)pid);
		return -1;
	}
	if ((ctl = compel_prepare(pid)) == NULL) {
		errbuf(err, errlen, "pid %d: compel cannot prepare it",
		    (int)pid);
		goto resume;
	}
	ictx = compel_infect_ctx(ctl);
	/* compel made it (in the task's netns) and leaves it to us: its
	 * name is the same for every call of this process */
	sock = ictx->sock;
	regs = ictx->regs_arg;		/* compel_cure() does not free it */
	/* the parasite writes its log here; nothing of it is kept */
	if ((logfd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
		errbuf_errno(err, errlen, "/dev/null");
		goto cure;
	}
	ictx->log_fd = logfd;
	/*
	 * No hardware breakpoint to stop the parasite at its sigreturn:
	 * some virtual CPUs never fire it, and the cure then waits for
	 * ever (seen in this project's build machine); compel steps by
	 * syscalls instead, which costs a few traps per call.
	 */
	ictx->flags |= INFECT_NO_BREAKPOINTS;
	fdput_setup_c_header(ctl);
	if (compel_infect(ctl, 1, sizeof(struct fdput_args)) < 0) {
		errbuf(err, errlen, "pid %d: compel cannot infect it",
		    (int)pid);
		goto cure;
	}
	/* the task is stopped: what it watches stays as read, but for the
	 * numbers we put (each put re-adds its own) */
	if (find_watches(pid, &ws, err, errlen) < 0)
		goto cure;
	for (i = 0; i < n; i++)
		if (put_one(ctl, pid, &items[i], &ws, err, errlen) < 0)
			goto cure;
	rc = 0;
cure:
	if (compel_cure(ctl) < 0) {
		if (rc == 0)
			errbuf(err, errlen, "pid %d: compel cannot cure it",
			    (int)pid);
		rc = -1;
	}
resume:
	if (compel_resume_task(pid, state, state) < 0 && rc == 0) {
		errbuf(err, errlen, "pid %d cannot be resumed", (int)pid);
		rc = -1;
	}
	if (logfd >= 0)
		close(logfd);
	if (sock >= 0)
		close(sock);
	free(regs);
	free(ws.v);
	return rc;
}
