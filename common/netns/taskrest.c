/* SPDX-License-Identifier: ISC */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "errbuf.h"
#include "taskrest.h"

#define PIDS_MAX	65536	/* the cgroup's tasks, at most */

struct sysname {
	long		 nr;
	const char	*name;
	int		 takes;		/* returns what it read */
};

/*
 * The waits for input.  Some architectures lack the older calls (arm64
 * has no select, poll or epoll_wait): their numbers are left out.
 *
 * A task asleep in one (S) holds nothing it read.  A stopped one (T,
 * SIGSTOP or a tracer) was stopped on its way in or on its way out, and
 * the two look the same: a read or recv on its way out has taken bytes
 * it has not used yet.  The others take no bytes from a socket when they
 * return (a poll's events stay in the socket, an accepted connection is
 * a socket the task holds), so a stopped task in one of those is at rest.
 */
static const struct sysname waits[] = {
	{ SYS_read, "read", 1 },
	{ SYS_readv, "readv", 1 },
	{ SYS_recvfrom, "recvfrom", 1 },
	{ SYS_recvmsg, "recvmsg", 1 },
	{ SYS_recvmmsg, "recvmmsg", 1 },
	{ SYS_ppoll, "ppoll", 0 },
	{ SYS_pselect6, "pselect6", 0 },
	{ SYS_epoll_pwait, "epoll_pwait", 0 },
#ifdef SYS_epoll_pwait2
	{ SYS_epoll_pwait2, "epoll_pwait2", 0 },
#endif
	{ SYS_accept, "accept", 0 },
	{ SYS_accept4, "accept4", 0 },
	{ SYS_wait4, "wait4", 0 },
	{ SYS_waitid, "waitid", 0 },
	{ SYS_rt_sigsuspend, "rt_sigsuspend", 0 },
	{ SYS_rt_sigtimedwait, "rt_sigtimedwait", 0 },
	{ SYS_futex, "futex", 0 },
#ifdef SYS_poll
	{ SYS_poll, "poll", 0 },
#endif
#ifdef SYS_select
	{ SYS_select, "select", 0 },
#endif
#ifdef SYS_epoll_wait
	{ SYS_epoll_wait, "epoll_wait", 0 },
#endif
#ifdef SYS_pause
	{ SYS_pause, "pause", 0 },
#endif
};

/* Others a refusal may name. */
static const struct sysname others[] = {
	{ SYS_write, "write", 0 },
	{ SYS_writev, "writev", 0 },
	{ SYS_sendto, "sendto", 0 },
	{ SYS_sendmsg, "sendmsg", 0 },
	{ SYS_sendmmsg, "sendmmsg", 0 },
	{ SYS_sendfile, "sendfile", 0 },
	{ SYS_splice, "splice", 0 },
	{ SYS_connect, "connect", 0 },
	{ SYS_clock_nanosleep, "clock_nanosleep", 0 },
#ifdef SYS_nanosleep
	{ SYS_nanosleep, "nanosleep", 0 },
#endif
	{ SYS_openat, "openat", 0 },
	{ SYS_fsync, "fsync", 0 },
};

static const struct sysname *
lookup(const struct sysname *t, size_t n, long nr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].nr == nr)
			return &t[i];
	return NULL;
}

static const struct sysname *
wait_of(long nr)
{
	return lookup(waits, sizeof(waits) / sizeof(waits[0]), nr);
}

const char *
taskrest_wait_name(long nr)
{
	const struct sysname *w = wait_of(nr);

	return w != NULL ? w->name : NULL;
}

long
taskrest_parse_syscall(const char *line)
{
	char *end;
	long nr;

	if (strncmp(line, "running", 7) == 0)
		return -2;
	errno = 0;
	nr = strtol(line, &end, 10);
	if (errno != 0 || end == line || (*end != ' ' && *end != '\n' &&
	    *end != '\0') || nr < -1)
		return -3;
	return nr;
}

/* Read a small /proc file whole; 0, 1 when it is gone (the task
 * exited), -1. */
static int
read_small(const char *path, char *buf, size_t len, char *why, size_t wlen)
{
	ssize_t r;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return 1;
		errbuf_errno(why, wlen, "%s", path);
		return -1;
	}
	r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0) {
		if (errno == ESRCH)
			return 1;
		errbuf_errno(why, wlen, "%s", path);
		return -1;
	}
	buf[r] = '\0';
	return 0;
}

/* Does pid hold a socket?  1, 0 (none, or it exited), -1. */
static int
holds_socket(pid_t pid, char *why, size_t len)
{
	char dir[64], target[64];
	struct dirent *d;
	DIR *dp;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	if ((dp = opendir(dir)) == NULL) {
		if (errno == ENOENT || errno == ESRCH)
			return 0;
		errbuf_errno(why, len, "%s", dir);
		return -1;
	}
	while (!found && (d = readdir(dp)) != NULL) {
		ssize_t r;

		if (d->d_name[0] == '.')
			continue;
		r = readlinkat(dirfd(dp), d->d_name, target,
		    sizeof(target) - 1);
		if (r > 0) {
			target[r] = '\0';
			found = strncmp(target, "socket:", 7) == 0;
		}
	}
	closedir(dp);
	return found;
}

/*
 * One thread: 1 at rest (or gone), 0 not (why says what it does), -1.
 * The state comes after the name in /proc/TID/stat, and the name may
 * hold spaces and parentheses: the last ')' ends it.
 */
static int
thread_rests(pid_t pid, const char *tid, char *why, size_t len)
{
	char path[96], line[256], stat[512], comm[32], thread[48] = "";
	const char *open, *close;
	const struct sysname *w, *o;
	char state, in[48] = "";
	long nr;
	int rc;

	snprintf(path, sizeof(path), "/proc/%ld/task/%s/syscall", (long)pid,
	    tid);
	if ((rc = read_small(path, line, sizeof(line), why, len)) != 0)
		return rc > 0 ? 1 : -1;
	snprintf(path, sizeof(path), "/proc/%ld/task/%s/stat", (long)pid, tid);
	if ((rc = read_small(path, stat, sizeof(stat), why, len)) != 0)
		return rc > 0 ? 1 : -1;
	if ((open = strchr(stat, '(')) == NULL ||
	    (close = strrchr(stat, ')')) == NULL || close < open ||
	    close[1] != ' ' || close[2] == '\0') {
		errbuf(why, len, "%s: cannot parse it", path);
		return -1;
	}
	snprintf(comm, sizeof(comm), "%.*s", (int)(close - open - 1),
	    open + 1);
	state = close[2];
	if (strtol(tid, NULL, 10) != (long)pid)
		snprintf(thread, sizeof(thread), ", thread %s", tid);
	if ((nr = taskrest_parse_syscall(line)) == -3) {
		errbuf(why, len, "/proc/%ld/task/%s/syscall: cannot parse "
		    "\"%.40s\"", (long)pid, tid, line);
		return -1;
	}
	w = nr >= 0 ? wait_of(nr) : NULL;
	if (state == 'S' && w != NULL)
		return 1;
	if ((state == 'T' || state == 't') && w != NULL && !w->takes)
		return 1;
	if (state == 'Z' || state == 'X')
		return 1;		/* exiting: holds nothing more */
	o = nr >= 0 && w == NULL ? lookup(others, sizeof(others) /
	    sizeof(others[0]), nr) : NULL;
	if (w != NULL || o != NULL)
		snprintf(in, sizeof(in), " in %s", w != NULL ? w->name :
		    o->name);
	else if (nr >= 0)
		snprintf(in, sizeof(in), " in system call %ld", nr);
	if (nr == -2 || state == 'R')
		errbuf(why, len, "pid %ld (%s%s) is running", (long)pid, comm,
		    thread);
	else if (state == 'T' || state == 't')
		errbuf(why, len, "pid %ld (%s%s) is stopped%s", (long)pid,
		    comm, thread, in);
	else if (nr == -1)
		errbuf(why, len, "pid %ld (%s%s) sleeps outside a system call",
		    (long)pid, comm, thread);
	else
		errbuf(why, len, "pid %ld (%s%s) is %s%s", (long)pid, comm,
		    thread, state == 'D' ? "stuck (D)" : "blocked", in);
	return 0;
}

/* Every thread of pid: 1, 0, -1 as above. */
static int
task_rests(pid_t pid, char *why, size_t len)
{
	char dir[64];
	struct dirent *d;
	DIR *dp;
	int rc = 1;

	snprintf(dir, sizeof(dir), "/proc/%ld/task", (long)pid);
	if ((dp = opendir(dir)) == NULL) {
		if (errno == ENOENT || errno == ESRCH)
			return 1;
		errbuf_errno(why, len, "%s", dir);
		return -1;
	}
	while (rc == 1 && (d = readdir(dp)) != NULL)
		if (d->d_name[0] != '.')
			rc = thread_rests(pid, d->d_name, why, len);
	closedir(dp);
	return rc;
}

int
taskrest_pids(const pid_t *pids, size_t n, char *why, size_t len)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if ((rc = holds_socket(pids[i], why, len)) < 0)
			return -1;
		if (rc == 0)
			continue;
		if ((rc = task_rests(pids[i], why, len)) != 1)
			return rc;
	}
	return 1;
}

int
taskrest_cgroup(const char *cgpath, char *why, size_t len)
{
	pid_t *pids;
	size_t n;
	int rc;

	if (cgroup_procs(cgpath, &pids, &n, PIDS_MAX, why, len) < 0)
		return -1;
	rc = taskrest_pids(pids, n, why, len);
	free(pids);
	return rc;
}
