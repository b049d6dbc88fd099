/* SPDX-License-Identifier: ISC */
/*
 * Could the workload user open every file a restored task holds
 * (filecheck.h)?  Asked by faccessat(2) as that user, through the task's
 * own /proc links, in a child process that has become the user with the
 * workloads' capabilities, effective ids and capabilities (AT_EACCESS):
 * plain access(2) would drop the capabilities, and the kernel then lets
 * no one follow the /proc links of a task that holds some.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errbuf.h"
#include "filecheck.h"

#define FILECHECK_ERR_MAX	512

/* The access a descriptor was opened with, from fdinfo: R_OK, W_OK or
 * both; 0 for O_PATH (none); -1 if it cannot be read. */
static int
fd_access(const char *fdinfo)
{
	char line[128];
	unsigned long flags;
	int mode = -1;
	FILE *f;

	if ((f = fopen(fdinfo, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "flags: %lo", &flags) == 1) {
			if (flags & O_PATH)
				mode = 0;
			else if ((flags & O_ACCMODE) == O_WRONLY)
				mode = W_OK;
			else if ((flags & O_ACCMODE) == O_RDWR)
				mode = R_OK | W_OK;
			else
				mode = R_OK;
			break;
		}
	fclose(f);
	return mode;
}

/* The descriptors of one thread (its table may be its own). */
static int
check_fds(pid_t pid, pid_t tid, char *err, size_t errlen)
{
	char dir[64], path[384], info[384], link[PATH_MAX];
	struct dirent *e;
	ssize_t n;
	DIR *d;
	int mode, rc = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/task/%ld/fd", (long)pid,
	    (long)tid);
	if ((d = opendir(dir)) == NULL) {
		errbuf_errno(err, errlen, "pid %ld: cannot look at its "
		    "descriptors", (long)pid);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(info, sizeof(info), "/proc/%ld/task/%ld/fdinfo/%s",
		    (long)pid, (long)tid, e->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) < 0) {
			if (errno == ENOENT)
				continue;	/* closed meanwhile */
			errbuf_errno(err, errlen, "pid %ld fd %s", (long)pid,
			    e->d_name);
			rc = -1;
			break;
		}
		link[n] = '\0';
		/* socket:[], pipe:[], anon_inode:...: not files */
		if (link[0] != '/')
			continue;
		if ((mode = fd_access(info)) < 0) {
			errbuf(err, errlen, "pid %ld fd %s: its flags cannot "
			    "be read", (long)pid, e->d_name);
			rc = -1;
		} else if (mode != 0 &&
		    faccessat(AT_FDCWD, path, mode, AT_EACCESS) < 0) {
			errbuf(err, errlen, "pid %ld fd %s: %.200s is open for "
			    "%s, which the workload user could not do (%s)",
			    (long)pid, e->d_name, link, mode == R_OK ? "reading" :
			    mode == W_OK ? "writing" : "reading and writing",
			    strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/*
 * The file mappings of one process: any mapping needs the file open for
 * reading; a shared one that may become writable ("mw" in VmFlags) needs
 * it open for writing too.  The path is the task's: through its root.
 */
static int
check_maps(pid_t pid, char *err, size_t errlen)
{
	char path[64], line[PATH_MAX + 256], file[PATH_MAX], perms[8] = "";
	char root[PATH_MAX + 64];
	unsigned long inode;
	int off, rc = 0, have = 0;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/smaps", (long)pid);
	if ((f = fopen(path, "re")) == NULL) {
		errbuf_errno(err, errlen, "pid %ld: cannot look at its "
		    "mappings", (long)pid);
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		off = 0;
		if (sscanf(line, "%*[0-9a-f]-%*[0-9a-f] %7s %*s %*s %lu %n",
		    perms, &inode, &off) >= 2 && off > 0) {
			/* a mapping's first line: remember its file */
			snprintf(file, sizeof(file), "%s", line + off);
			len = strlen(file);
			have = inode != 0 && file[0] == '/' && !(len > 10 &&
			    strcmp(file + len - 10, " (deleted)") == 0);
			continue;
		}
		if (!have || strncmp(line, "VmFlags:", 8) != 0)
			continue;
		have = 0;
		snprintf(root, sizeof(root), "/proc/%ld/root%s", (long)pid,
		    file);
		if (faccessat(AT_FDCWD, root, R_OK | (perms[3] == 's' &&
		    strstr(line, " mw") != NULL ? W_OK : 0), AT_EACCESS) < 0) {
			errbuf(err, errlen, "pid %ld: %.200s is mapped (%s), "
			    "which the workload user could not do (%s)",
			    (long)pid, file, perms, strerror(errno));
			rc = -1;
		}
	}
	fclose(f);
	return rc;
}

static int
check_task(pid_t pid, char *err, size_t errlen)
{
	char dir[64];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/task", (long)pid);
	if ((d = opendir(dir)) == NULL) {
		errbuf_errno(err, errlen, "pid %ld", (long)pid);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			rc = check_fds(pid, (pid_t)atol(e->d_name), err, errlen);
	closedir(d);
	return rc == 0 ? check_maps(pid, err, errlen) : rc;
}

/* The user, with the capabilities caps (a bit each) permitted and
 * effective, and nothing else. */
static int
become(uid_t uid, gid_t gid, uint64_t caps)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = (uint32_t)caps;
	d[1].permitted = d[1].effective = (uint32_t)(caps >> 32);
	return setgroups(1, &gid) == 0 && prctl(PR_SET_KEEPCAPS, 1, 0, 0,
	    0) == 0 && setresgid(gid, gid, gid) == 0 &&
	    setresuid(uid, uid, uid) == 0 &&
	    syscall(SYS_capset, &hdr, d) == 0 ? 0 : -1;
}

int
filecheck_tasks(const pid_t *pids, size_t n, uid_t uid, gid_t gid,
    uint64_t caps, char *err, size_t errlen)
{
	char msg[FILECHECK_ERR_MAX] = "";
	ssize_t got = 0, r;
	int p[2], status;
	size_t i;
	pid_t c;

	if (uid == 0) {
		errbuf(err, errlen, "the workload user is root");
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		errbuf_errno(err, errlen, "pipe");
		return -1;
	}
	if ((c = fork()) < 0) {
		errbuf_errno(err, errlen, "fork");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (c == 0) {
		close(p[0]);
		/* the user: no other group, and only the capabilities its
		 * workloads have (a task's /proc links open only to one
		 * that holds every capability the task holds) */
		if (become(uid, gid, caps) < 0) {
			errbuf_errno(msg, sizeof(msg), "cannot become uid %ld",
			    (long)uid);
			(void)!write(p[1], msg, strlen(msg));
			_exit(1);
		}
		for (i = 0; i < n; i++)
			if (check_task(pids[i], msg, sizeof(msg)) < 0) {
				(void)!write(p[1], msg, strlen(msg));
				_exit(1);
			}
		_exit(0);
	}
	close(p[1]);
	while (got < (ssize_t)sizeof(msg) - 1 && ((r = read(p[0], msg + got,
	    sizeof(msg) - 1 - (size_t)got)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			got += r;
	msg[got] = '\0';
	close(p[0]);
	while (waitpid(c, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	errbuf(err, errlen, "%s", msg[0] ? msg : "the check's process failed");
	return -1;
}
