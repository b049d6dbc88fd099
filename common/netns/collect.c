/* SPDX-License-Identifier: ISC */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect.h"
#include "cgroup.h"
#include "errbuf.h"

static int
sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int
sys_pidfd_getfd(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

static struct collect_sock *
find_ino(struct collect_set *set, unsigned long ino)
{
	size_t i;

	for (i = 0; i < set->nsocks; i++)
		if (set->socks[i].ino == ino)
			return &set->socks[i];
	return NULL;
}

static int
add_user(struct collect_sock *s, pid_t pid, int fd, char *err, size_t errlen)
{
	struct collect_user *u;

	u = realloc(s->users, (s->nusers + 1) * sizeof(*u));
	if (u == NULL) {
		errbuf_errno(err, errlen, "realloc");
		return -1;
	}
	s->users = u;
	u[s->nusers].pid = pid;
	u[s->nusers].fd = fd;
	s->nusers++;
	return 0;
}

static int
add_sock(struct collect_set *set, int pidfd, pid_t pid, int fd,
    unsigned long ino, char *err, size_t errlen)
{
	struct collect_sock *s = find_ino(set, ino), *ns;
	struct stat st;
	socklen_t len;
	int copy;

	if (s != NULL)
		return add_user(s, pid, fd, err, errlen);
	if (set->nsocks == COLLECT_MAX_SOCKS) {
		errbuf(err, errlen, "more than %d sockets", COLLECT_MAX_SOCKS);
		return -1;
	}
	copy = sys_pidfd_getfd(pidfd, fd);
	if (copy < 0 && (errno == EBADF || errno == ESRCH))
		return 0;	/* closed (or the task gone) since it was listed */
	if (copy < 0) {
		errbuf_errno(err, errlen, "pidfd_getfd pid %d fd %d", pid, fd);
		return -1;
	}
	/* a task that runs (a check before the freeze) may have closed it
	 * and opened something else at that number since */
	if (fstat(copy, &st) < 0 || st.st_ino != ino) {
		close(copy);
		return 0;
	}
	ns = realloc(set->socks, (set->nsocks + 1) * sizeof(*ns));
	if (ns == NULL) {
		errbuf_errno(err, errlen, "realloc");
		close(copy);
		return -1;
	}
	set->socks = ns;
	s = &ns[set->nsocks++];
	memset(s, 0, sizeof(*s));
	s->fd = copy;
	s->ino = ino;
	len = sizeof(int);
	getsockopt(copy, SOL_SOCKET, SO_DOMAIN, &s->family, &len);
	len = sizeof(int);
	getsockopt(copy, SOL_SOCKET, SO_TYPE, &s->type, &len);
	len = sizeof(int);
	getsockopt(copy, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &len);
	return add_user(s, pid, fd, err, errlen);
}

static int
collect_task(struct collect_set *set, pid_t pid, char *err, size_t errlen)
{
	char dir[64], link[PATH_MAX], target[64];
	struct dirent *de;
	DIR *d;
	int pidfd, rc = 0;

	pidfd = sys_pidfd_open(pid);
	if (pidfd < 0) {
		if (errno == ESRCH)	/* gone: it holds nothing any more */
			return 0;
		errbuf_errno(err, errlen, "pidfd_open %d", pid);
		return -1;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (d == NULL) {
		errbuf_errno(err, errlen, "%s", dir);
		close(pidfd);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		unsigned long ino;
		char *end;
		long fd;
		ssize_t n;

		fd = strtol(de->d_name, &end, 10);
		if (*end != '\0' || end == de->d_name)
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (sscanf(target, "socket:[%lu]", &ino) != 1)
			continue;
		rc = add_sock(set, pidfd, pid, (int)fd, ino, err, errlen);
	}
	closedir(d);
	close(pidfd);
	return rc;
}

int
collect_sockets(const char *cgpath, struct collect_set *set, char *err,
    size_t errlen)
{
	pid_t *pids;
	size_t n, i;

	memset(set, 0, sizeof(*set));
	if (cgroup_procs(cgpath, &pids, &n, COLLECT_MAX_TASKS, err, errlen) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (collect_task(set, pids[i], err, errlen) < 0) {
			free(pids);
			collect_free(set);
			return -1;
		}
	}
	set->ntasks = n;
	free(pids);
	return 0;
}

void
collect_free(struct collect_set *set)
{
	size_t i;

	for (i = 0; i < set->nsocks; i++) {
		if (set->socks[i].fd >= 0)	/* -1: handed on and closed */
			close(set->socks[i].fd);
		free(set->socks[i].users);
	}
	free(set->socks);
	memset(set, 0, sizeof(*set));
}
