/* SPDX-License-Identifier: ISC */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "errbuf.h"

static int
write_knob(const char *cgpath, const char *knob, const char *val, char *err,
    size_t errlen)
{
	char path[PATH_MAX];
	int fd;
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", cgpath, knob) >=
	    sizeof(path)) {
		errbuf(err, errlen, "%s: path too long", cgpath);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		errbuf_errno(err, errlen, "%s", path);
		errno = e;
		return -1;
	}
	n = write(fd, val, strlen(val));
	if (n < 0) {
		int e = errno;

		errbuf_errno(err, errlen, "write %s to %s", val, path);
		close(fd);
		errno = e;	/* the caller may tell EBUSY from the rest */
		return -1;
	}
	close(fd);
	return 0;
}

/* Parse KEY's value out of an open cgroup.events. */
static int
events_value(int fd, const char *key)
{
	char buf[512], *line, *save = NULL;
	size_t klen = strlen(key);
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return atoi(line + klen + 1);
	}
	return -1;
}

static int
open_events(const char *cgpath, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.events", cgpath) >=
	    sizeof(path)) {
		errbuf(err, errlen, "%s: path too long", cgpath);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		errbuf_errno(err, errlen, "%s", path);
	return fd;
}

int
cgroup_event(const char *cgpath, const char *key)
{
	int fd = open_events(cgpath, NULL, 0), v;

	if (fd < 0)
		return -1;
	v = events_value(fd, key);
	close(fd);
	return v;
}

/* Wait until cgroup.events shows KEY == want; kernfs signals each change
 * of the file with POLLPRI. */
static int
wait_event(const char *cgpath, const char *key, int want, int timeout_ms,
    char *err, size_t errlen)
{
	double t0 = mono_ms();
	struct pollfd p;
	int fd, v, rc = -1;

	fd = open_events(cgpath, err, errlen);
	if (fd < 0)
		return -1;
	for (;;) {
		long left;

		v = events_value(fd, key);
		if (v == want) {
			rc = 0;
			break;
		}
		left = timeout_ms - (long)(mono_ms() - t0);
		if (left <= 0) {
			errbuf(err, errlen, "%s: '%s' still %d after %d ms",
			    cgpath, key, v, timeout_ms);
			break;
		}
		p.fd = fd;
		p.events = POLLPRI;
		/* wake up now and then too: a change may slip between the
		 * read and the poll */
		if (poll(&p, 1, left < 50 ? (int)left : 50) < 0 &&
		    errno != EINTR) {
			errbuf_errno(err, errlen, "poll %s/cgroup.events",
			    cgpath);
			break;
		}
	}
	close(fd);
	return rc;
}

int
cgroup_freeze_start(const char *cgpath, char *err, size_t errlen)
{
	return write_knob(cgpath, "cgroup.freeze", "1", err, errlen);
}

int
cgroup_freeze(const char *cgpath, int timeout_ms, char *err, size_t errlen)
{
	if (cgroup_freeze_start(cgpath, err, errlen) < 0)
		return -1;
	return wait_event(cgpath, "frozen", 1, timeout_ms, err, errlen);
}

int
cgroup_thaw(const char *cgpath, char *err, size_t errlen)
{
	int v;

	if (write_knob(cgpath, "cgroup.freeze", "0", err, errlen) < 0)
		return -1;
	if ((v = cgroup_event(cgpath, "frozen")) != 0) {
		errbuf(err, errlen, "%s: still frozen after cgroup.freeze 0 "
		    "(%s)", cgpath, v < 0 ? "cgroup.events unreadable" :
		    "a cgroup above it is frozen");
		return -1;
	}
	return 0;
}

int
cgroup_kill_start(const char *cgpath, char *err, size_t errlen)
{
	return write_knob(cgpath, "cgroup.kill", "1", err, errlen);
}

int
cgroup_kill(const char *cgpath, int timeout_ms, char *err, size_t errlen)
{
	if (cgroup_kill_start(cgpath, err, errlen) < 0)
		return -1;
	return wait_event(cgpath, "populated", 0, timeout_ms, err, errlen);
}

int
cgroup_is_v2(const char *dir, char *err, size_t errlen)
{
	struct statfs sf;

	if (statfs(dir, &sf) < 0) {
		errbuf_errno(err, errlen, "%s", dir);
		return -1;
	}
	if (sf.f_type != CGROUP2_SUPER_MAGIC) {
		errbuf(err, errlen, "%s is not on a cgroup v2 mount", dir);
		return -1;
	}
	return 0;
}

int
cgroup_create(const char *cgpath, char *err, size_t errlen)
{
	if (mkdir(cgpath, 0755) < 0 && errno != EEXIST) {
		errbuf_errno(err, errlen, "mkdir %s", cgpath);
		return -1;
	}
	return 0;
}

int
cgroup_set(const char *cgpath, const char *knob, const char *val, char *err,
    size_t errlen)
{
	return write_knob(cgpath, knob, val, err, errlen);
}

/* Does dir's cgroup.subtree_control list controller? */
static int
subtree_has(const char *dir, const char *controller)
{
	char path[PATH_MAX], line[512], *w, *save;
	FILE *f;
	int found = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.subtree_control",
	    dir) >= sizeof(path) || (f = fopen(path, "re")) == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) != NULL)
		for (w = strtok_r(line, " \n", &save); w != NULL;
		    w = strtok_r(NULL, " \n", &save))
			if (strcmp(w, controller) == 0)
				found = 1;
	fclose(f);
	return found;
}

int
cgroup_delegate(const char *top, const char *cgpath, const char *controller,
    char *err, size_t errlen)
{
	char dir[PATH_MAX], plus[64];
	size_t len = strlen(top), end;

	if (strncmp(cgpath, top, len) != 0 ||
	    (cgpath[len] != '/' && cgpath[len] != '\0') ||
	    strlen(cgpath) >= sizeof(dir)) {
		errbuf(err, errlen, "%s is not below %s", cgpath, top);
		return -1;
	}
	snprintf(plus, sizeof(plus), "+%s", controller);
	for (end = len;;) {
		memcpy(dir, cgpath, end);
		dir[end] = '\0';
		if (!subtree_has(dir, controller) &&
		    write_knob(dir, "cgroup.subtree_control", plus, err,
		    errlen) < 0) {
			if (errno == EBUSY)
				errbuf(err, errlen, "cannot enable the %s "
				    "controller in %s: it holds processes of "
				    "its own", controller, dir);
			else if (errno == EOPNOTSUPP)
				/* pids may be enabled beside processes,
				 * which then rules out the levels below */
				errbuf(err, errlen, "cannot enable the %s "
				    "controller in %s: a cgroup above it holds "
				    "processes of its own", controller, dir);
			else if (errno == ENOENT)
				errbuf(err, errlen, "cannot enable the %s "
				    "controller in %s: not offered there (see "
				    "its cgroup.controllers)", controller, dir);
			return -1;
		}
		if (cgpath[end] == '\0')
			return 0;
		/* the next component */
		end++;
		while (cgpath[end] != '/' && cgpath[end] != '\0')
			end++;
	}
}

/* The cgroups one level below (empty: the kill covered them). */
static int
remove_children(const char *cgpath, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if ((d = opendir(cgpath)) == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", cgpath,
		    de->d_name) >= sizeof(path) ||
		    (rmdir(path) < 0 && errno != ENOENT)) {
			errbuf_errno(err, errlen, "rmdir %s", path);
			rc = -1;
			break;
		}
	}
	closedir(d);
	return rc;
}

int
cgroup_remove(const char *cgpath, int timeout_ms, char *err, size_t errlen)
{
	if (access(cgpath, F_OK) < 0)
		return 0;
	/* a frozen cgroup's tasks die too: SIGKILL wakes them */
	if (cgroup_event(cgpath, "populated") != 0 &&
	    cgroup_kill(cgpath, timeout_ms, err, errlen) < 0)
		return -1;
	if (remove_children(cgpath, err, errlen) < 0)
		return -1;
	if (rmdir(cgpath) < 0 && errno != ENOENT) {
		errbuf_errno(err, errlen, "rmdir %s", cgpath);
		return -1;
	}
	return 0;
}

int
cgroup_enter(const char *cgpath, pid_t pid, char *err, size_t errlen)
{
	char num[32];

	snprintf(num, sizeof(num), "%ld", (long)pid);
	return write_knob(cgpath, "cgroup.procs", num, err, errlen);
}

int
cgroup_procs(const char *cgpath, pid_t **pids, size_t *n, size_t max,
    char *err, size_t errlen)
{
	char path[PATH_MAX];
	pid_t *list = NULL;
	size_t count = 0;
	FILE *f;
	long pid;

	*pids = NULL;
	*n = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", cgpath) >=
	    sizeof(path)) {
		errbuf(err, errlen, "%s: path too long", cgpath);
		return -1;
	}
	f = fopen(path, "re");
	if (f == NULL) {
		errbuf_errno(err, errlen, "%s", path);
		return -1;
	}
	while (fscanf(f, "%ld", &pid) == 1) {
		pid_t *nl;

		if (count == max) {
			errbuf(err, errlen, "%s: more than %zu tasks", cgpath,
			    max);
			goto out_fail;
		}
		nl = realloc(list, (count + 1) * sizeof(*list));
		if (nl == NULL) {
			errbuf_errno(err, errlen, "%s: realloc", cgpath);
			goto out_fail;
		}
		list = nl;
		list[count++] = (pid_t)pid;
	}
	fclose(f);
	*pids = list;
	*n = count;
	return 0;
out_fail:
	fclose(f);
	free(list);
	return -1;
}
