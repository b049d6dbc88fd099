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

/*
 * Sockets by inode.  A namespace of ten thousand sockets made a walk of
 * the list per descriptor, and growing it one at a time a copy of it per
 * descriptor (realloc cannot grow in place under ASan): 20 s of migrd's
 * loop at the freeze in the TCG lab.  The list doubles, and an index
 * finds a socket in one or two looks.
 */
static size_t
ino_slot(const struct collect_set *set, unsigned long ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ULL) >> 32) &
	    (set->nbyino - 1);
}

static struct collect_sock *
find_ino(struct collect_set *set, unsigned long ino)
{
	size_t h, k;

	if (set->nbyino == 0)
		return NULL;
	for (h = ino_slot(set, ino); (k = set->byino[h]) != 0;
	    h = (h + 1) & (set->nbyino - 1))
		if (set->socks[k - 1].ino == ino)
			return &set->socks[k - 1];
	return NULL;
}

static void
index_put(struct collect_set *set, size_t pos)
{
	size_t h = ino_slot(set, set->socks[pos].ino);

	while (set->byino[h] != 0)
		h = (h + 1) & (set->nbyino - 1);
	set->byino[h] = pos + 1;
}

/* Room for one more socket: the list doubles, the index stays at most
 * half full. */
static int
grow(struct collect_set *set, char *err, size_t errlen)
{
	struct collect_sock *ns;
	size_t cap, nidx, *idx, i;

	if (set->nsocks < set->cap)
		return 0;
	cap = set->cap ? 2 * set->cap : 64;
	if ((ns = realloc(set->socks, cap * sizeof(*ns))) == NULL) {
		errbuf_errno(err, errlen, "realloc");
		return -1;
	}
	set->socks = ns;
	set->cap = cap;
	nidx = 2 * cap;
	if ((idx = calloc(nidx, sizeof(*idx))) == NULL) {
		errbuf_errno(err, errlen, "calloc");
		return -1;
	}
	free(set->byino);
	set->byino = idx;
	set->nbyino = nidx;
	for (i = 0; i < set->nsocks; i++)
		index_put(set, i);
	return 0;
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
add_sock(struct collect_set *set, unsigned flags, int pidfd, pid_t pid,
    int fd, unsigned long ino, char *err, size_t errlen)
{
	struct collect_sock *s = find_ino(set, ino);
	struct stat st;
	socklen_t len;
	int copy, family;

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
	len = sizeof(int);
	if ((flags & COLLECT_INET_ONLY) && (getsockopt(copy, SOL_SOCKET,
	    SO_DOMAIN, &family, &len) < 0 ||
	    (family != AF_INET && family != AF_INET6))) {
		close(copy);
		return 0;
	}
	if (grow(set, err, errlen) < 0) {
		close(copy);
		return -1;
	}
	s = &set->socks[set->nsocks];
	memset(s, 0, sizeof(*s));
	s->fd = copy;
	s->ino = ino;
	index_put(set, set->nsocks++);
	len = sizeof(int);
	getsockopt(copy, SOL_SOCKET, SO_DOMAIN, &s->family, &len);
	len = sizeof(int);
	getsockopt(copy, SOL_SOCKET, SO_TYPE, &s->type, &len);
	len = sizeof(int);
	getsockopt(copy, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &len);
	return add_user(s, pid, fd, err, errlen);
}

static int
collect_task(struct collect_set *set, unsigned flags, pid_t pid, char *err,
    size_t errlen)
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
		rc = add_sock(set, flags, pidfd, pid, (int)fd, ino, err,
		    errlen);
	}
	closedir(d);
	close(pidfd);
	return rc;
}

int
collect_sockets(const char *cgpath, unsigned flags, struct collect_set *set,
    char *err, size_t errlen)
{
	pid_t *pids;
	size_t n, i;

	memset(set, 0, sizeof(*set));
	if (cgroup_procs(cgpath, &pids, &n, COLLECT_MAX_TASKS, err, errlen) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (collect_task(set, flags, pids[i], err, errlen) < 0) {
			free(pids);
			collect_free(set);
			return -1;
		}
	}
	set->ntasks = n;
	free(pids);
	/* the index is for collecting; users of the set walk the list */
	free(set->byino);
	set->byino = NULL;
	set->nbyino = 0;
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
	free(set->byino);
	memset(set, 0, sizeof(*set));
}
