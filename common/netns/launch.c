/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "errbuf.h"
#include "launch.h"
#include "netns.h"

/* What the child reports through the status pipe when it gives up. */
struct launch_status {
	int	step;
	int	err;
};

static const char *const steps[] = {
	"join cgroup", "enter netns", "open log", "place sockets",
	"environment", "close inherited fds", "exec", "hide paths",
	"drop privileges", "check the program", "pid namespace", "mount /proc"
};
enum { ST_HIDE = 7, ST_PRIVS = 8, ST_CHECK = 9, ST_PIDNS = 10, ST_PROC = 11 };
#define ST_READY	(-1)	/* ready for exec, waiting for the go */
#define ST_PID		(-2)	/* pidns: err is the program's pid */
#define NSTEPS	(int)(sizeof(steps) / sizeof(steps[0]))

static __attribute__((noreturn)) void
child_fail(int wfd, int step)
{
	struct launch_status ls = { step, errno };

	if (write(wfd, &ls, sizeof(ls)) < 0)
		_exit(126);
	_exit(127);
}

/* LISTEN_FDNAMES: the names joined by ':'. */
static char *
join_names(char *const *names, size_t n)
{
	size_t i, k, len = 1;
	char *s, *p;

	for (i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	if ((s = calloc(1, len)) == NULL)
		return NULL;
	/* a cursor, not strcat(): ten thousand names */
	for (i = 0, p = s; i < n; i++) {
		if (i)
			*p++ = ':';
		k = strlen(names[i]);
		memcpy(p, names[i], k);
		p += k;
	}
	*p = '\0';
	return s;
}

/*
 * pidns: the mounts below /run go (detached, with what is below them):
 * every namespace's nsfs mount in /run/netns, a logged-in user's
 * /run/user/UID, a container engine's: state of this host, which CRIU
 * would have to find again on the next.  /run itself stays.
 */
static int
drop_run_mounts(void)
{
	char line[PATH_MAX + 256], mp[PATH_MAX];
	FILE *f;
	int rc = 0;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... (octal escapes in
		 * MOUNTPOINT are left: such a path is not unmounted) */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 ||
		    strncmp(mp, "/run/", 5) != 0)
			continue;
		if (umount2(mp, MNT_DETACH) < 0 && errno != EINVAL &&
		    errno != ENOENT)
			rc = -1;	/* EINVAL: gone with its parent */
	}
	fclose(f);
	return rc;
}

/*
 * A mount namespace of its own, the paths of hide covered in it.  With
 * pidns it is private rather than a slave of ours, and the mounts below
 * /run are gone from it (drop_run_mounts()).
 */
static int
hide_paths(const struct launch_spec *sp)
{
	const char *const *hide = sp->hide;
	struct stat st;
	size_t i;

	if ((hide == NULL || hide[0] == NULL) && !sp->pidns)
		return 0;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC |
	    (sp->pidns ? MS_PRIVATE : MS_SLAVE), NULL) < 0)
		return -1;
	if (sp->pidns && drop_run_mounts() < 0)
		return -1;
	for (i = 0; hide != NULL && hide[i] != NULL; i++) {
		if (stat(hide[i], &st) < 0) {
			if (errno == ENOENT)
				continue;
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			if (mount("migr-hidden", hide[i], "tmpfs", MS_RDONLY |
			    MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0")
			    < 0)
				return -1;
		} else if (mount("/dev/null", hide[i], NULL, MS_BIND, NULL) < 0)
			return -1;
	}
	return 0;
}

/*
 * pidns: the rest is done by pid 1 of a new pid namespace, which this
 * child forks, reports to the caller (ST_PID) and leaves, so the program
 * is not the child of anything of ours in its namespace.  It leads a
 * session of its own there and mounts that namespace's /proc.
 */
static void
enter_pidns(int wfd)
{
	struct launch_status ls = { ST_PID, 0 };
	pid_t pid;

	if (unshare(CLONE_NEWPID) < 0 || (pid = fork()) < 0)
		child_fail(wfd, ST_PIDNS);
	if (pid > 0) {
		ls.err = (int)pid;
		_exit(write(wfd, &ls, sizeof(ls)) == (ssize_t)sizeof(ls) ?
		    0 : 126);
	}
	if (setsid() < 0)
		child_fail(wfd, ST_PIDNS);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    NULL) < 0)
		child_fail(wfd, ST_PROC);
}

/*
 * uid, gid and nothing more: permitted, effective, inheritable and
 * ambient sets all caps (kept across setuid by PR_SET_KEEPCAPS), then
 * no_new_privs.  uid 0 keeps what it has.
 */
static int
drop_privileges(const struct launch_spec *sp)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0
	};
	struct __user_cap_data_struct data[2];
	unsigned v;

	if (sp->uid != 0) {
		if (setgroups(1, &sp->gid) < 0 ||
		    prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
		    setresgid(sp->gid, sp->gid, sp->gid) < 0 ||
		    setresuid(sp->uid, sp->uid, sp->uid) < 0)
			return -1;
		memset(data, 0, sizeof(data));
		data[0].permitted = data[0].effective = data[0].inheritable =
		    (uint32_t)sp->caps;
		data[1].permitted = data[1].effective = data[1].inheritable =
		    (uint32_t)(sp->caps >> 32);
		if (syscall(SYS_capset, &hdr, data) < 0)
			return -1;
		for (v = 0; v < 64; v++)
			if ((sp->caps & (1ULL << v)) &&
			    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, v, 0,
			    0) < 0)
				return -1;
	}
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/*
 * The log keeper: it copies what arrives on fd 0 (the pipe the workload
 * writes to) to fd 1 (the log, NAME in the folder at fd 2), and when the
 * log has reached max bytes moves it to NAME.1 (replacing the one
 * before) and starts a new one, so a workload's output never takes more
 * than about twice max.  A write that fails (a full disk) drops that
 * output: the workload is never held up by its log.  It ends when the
 * last writer is gone.
 */
static __attribute__((noreturn)) void
log_keeper(const char *name, size_t max)
{
	char buf[16384], old[NAME_MAX + 1];
	struct stat st;
	size_t size = 0;
	ssize_t n, w, off;
	int fd;

	if (fstat(1, &st) == 0 && st.st_size > 0)
		size = (size_t)st.st_size;
	snprintf(old, sizeof(old), "%s.1", name);
	for (;;) {
		if ((n = read(0, buf, sizeof(buf))) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		if (size >= max) {
			if (renameat(2, name, 2, old) == 0 &&
			    (fd = openat(2, name, O_WRONLY | O_CREAT | O_APPEND |
			    O_TRUNC | O_CLOEXEC, 0640)) >= 0) {
				dup3(fd, 1, 0);
				close(fd);
			} else if (ftruncate(1, 0) < 0)
				continue;	/* keep what there is */
			size = 0;
		}
		for (off = 0; off < n; off += w)
			if ((w = write(1, buf + off, (size_t)(n - off))) <= 0)
				break;
		size += (size_t)off;
	}
}

/*
 * Start the keeper of a log of at most sp->logmax (dirfd, logfd: the
 * log's folder and the log, opened by the caller): the write end of its
 * pipe, close-on-exec, or -1.  The keeper is a grandchild, so that it is
 * not the workload's child (a program must not find a child it did not
 * make), and holds no capability, nothing of the caller's but the pipe,
 * the folder and the log, and no_new_privs.
 */
static int
start_keeper(const struct launch_spec *sp, int dirfd, int logfd, int hostnet)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0
	};
	struct __user_cap_data_struct none[2];
	const char *name = strrchr(sp->logpath, '/');
	char logcg[PATH_MAX];
	int p[2], status;
	pid_t pid;

	name = name != NULL ? name + 1 : sp->logpath;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		/* a cgroup of its own below the workload's: frozen, killed
		 * and removed with it, but not one of its tasks */
		snprintf(logcg, sizeof(logcg), "%s/%s", sp->cgroup,
		    LAUNCH_LOG_CGROUP);
		if (cgroup_create(logcg, NULL, 0) == 0)
			(void)cgroup_enter(logcg, 0, NULL, 0);
		/* nor in its network namespace ("ip netns pids"), and
		 * deaf to the signals a workload's tasks may be sent */
		if (hostnet >= 0)
			(void)setns(hostnet, CLONE_NEWNET);
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
		signal(SIGUSR2, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		memset(none, 0, sizeof(none));
		if (dup3(p[0], 0, 0) < 0 || dup3(logfd, 1, 0) < 0 ||
		    dup3(dirfd, 2, 0) < 0 ||
		    close_range(3, ~0U, 0) < 0 ||
		    syscall(SYS_capset, &hdr, none) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(1);
		prctl(PR_SET_NAME, "migr-log", 0, 0, 0);
		log_keeper(name, sp->logmax);
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return p[1];
}

/* The log: its folder and the file, opened before the mount namespace
 * may cover anything. */
static int
open_log(const struct launch_spec *sp, int *dirfd)
{
	char dir[PATH_MAX];
	const char *slash;

	*dirfd = -1;
	if (sp->logpath == NULL)
		return open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (sp->logmax > 0 && (slash = strrchr(sp->logpath, '/')) != NULL) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - sp->logpath),
		    slash == sp->logpath ? "/" : sp->logpath);
		if ((*dirfd = open(dir, O_DIRECTORY | O_RDONLY |
		    O_CLOEXEC)) < 0)
			return -1;
	}
	return open(sp->logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0640);
}

static __attribute__((noreturn)) void
child(const struct launch_spec *sp, int wfd, int gofd)
{
	struct launch_status ready = { ST_READY, 0 };
	char go;
	char num[32], *fdnames;
	sigset_t none;
	size_t i;
	int fd, nsfd, base, kept, dirfd, hostnet;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();
	/* the cgroup first, so nothing the child does escapes it */
	if (cgroup_enter(sp->cgroup, 0, NULL, 0) < 0)
		child_fail(wfd, 0);
	/* the caller's network namespace, for the log keeper */
	hostnet = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if ((nsfd = netns_open(sp->ns, NULL, 0)) < 0 ||
	    setns(nsfd, CLONE_NEWNET) < 0)
		child_fail(wfd, 1);
	close(nsfd);
	if ((fd = open_log(sp, &dirfd)) < 0)
		child_fail(wfd, 2);
	if (hide_paths(sp) < 0)
		child_fail(wfd, ST_HIDE);
	if (dirfd >= 0) {
		int logfd = fd;

		if ((fd = start_keeper(sp, dirfd, logfd, hostnet)) < 0)
			child_fail(wfd, 2);
		close(logfd);
		close(dirfd);
	}
	if (hostnet >= 0)
		close(hostnet);
	if (sp->pidns)
		enter_pidns(wfd);
	/*
	 * The sockets and the status pipe out of the way of 0..3+nfds, then
	 * the sockets into place.  The sockets go to base.., above every
	 * descriptor still needed (the caller's may have any numbers, above
	 * FD_SETSIZE too), so the dup2()s there replace only what would be
	 * closed anyway.
	 */
	/* what the program keeps: 0-2, its sockets, and its gate */
	kept = 3 + (int)sp->nfds + (sp->gate ? 1 : 0);
	base = kept;
	if (fd > base)
		base = fd;
	for (i = 0; i < sp->nfds; i++)
		if (sp->fds[i] > base)
			base = sp->fds[i];
	base++;
	if ((wfd = fcntl(wfd, F_DUPFD_CLOEXEC, base + (int)sp->nfds)) < 0 ||
	    (gofd = fcntl(gofd, F_DUPFD_CLOEXEC, wfd + 1)) < 0)
		_exit(126);
	for (i = 0; i < sp->nfds; i++)
		if (dup3(sp->fds[i], base + (int)i, O_CLOEXEC) < 0)
			child_fail(wfd, 3);
	if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		child_fail(wfd, 2);
	close(fd);
	if ((fd = open("/dev/null", O_RDONLY)) < 0 || dup2(fd, 0) < 0)
		child_fail(wfd, 2);
	for (i = 0; i < sp->nfds; i++)
		if (dup2(base + (int)i, 3 + (int)i) < 0)  /* clears CLOEXEC */
			child_fail(wfd, 3);
	if (sp->nfds > 0) {
		if ((fdnames = join_names(sp->names, sp->nfds)) == NULL)
			child_fail(wfd, 4);
		snprintf(num, sizeof(num), "%ld", (long)getpid());
		setenv("LISTEN_PID", num, 1);
		snprintf(num, sizeof(num), "%zu", sp->nfds);
		setenv("LISTEN_FDS", num, 1);
		if (strlen(fdnames) <= LAUNCH_FDNAMES_MAX)
			setenv("LISTEN_FDNAMES", fdnames, 1);
		else
			unsetenv("LISTEN_FDNAMES");
	} else {
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
	}
	/* the gate: the program's own end of the go pipe, above its
	 * sockets (base is above it, so nothing needed is replaced) */
	unsetenv(LAUNCH_GATE_ENV);
	if (sp->gate) {
		if (dup2(gofd, 3 + (int)sp->nfds) < 0)	/* clears CLOEXEC */
			child_fail(wfd, 3);
		snprintf(num, sizeof(num), "%zu", 3 + sp->nfds);
		setenv(LAUNCH_GATE_ENV, num, 1);
	}
	/* nothing else of the caller's leaks into the workload (its peer
	 * sessions would be collected with it at the next migration) */
	if (close_range((unsigned)kept, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		child_fail(wfd, 5);
	if (drop_privileges(sp) < 0)
		child_fail(wfd, ST_PRIVS);
	/* as the user it runs as: the program and every folder above it */
	if (access(sp->argv[0], X_OK) < 0)
		child_fail(wfd, ST_CHECK);
	if (write(wfd, &ready, sizeof(ready)) != (ssize_t)sizeof(ready))
		_exit(126);
	/* gated, the program itself waits for the byte */
	if (!sp->gate && read(gofd, &go, 1) != 1)
		_exit(0);		/* cancelled */
	execv(sp->argv[0], sp->argv);
	child_fail(wfd, 6);
}

/* A status from the child: 0 for want (its value in *val if not NULL),
 * or -1 and err (the child is reaped then). */
static int
child_status(pid_t pid, int fd, int want, int *val, char *err, size_t errlen)
{
	struct launch_status ls;
	int status;
	ssize_t n;

	do
		n = read(fd, &ls, sizeof(ls));
	while (n < 0 && errno == EINTR);
	if (want == 0 && n == 0)
		return 0;		/* the pipe closed at exec */
	if (n == (ssize_t)sizeof(ls) && ls.step == want) {
		if (val != NULL)
			*val = ls.err;
		return 0;
	}
	if (n == (ssize_t)sizeof(ls) && ls.step >= 0 && ls.step < NSTEPS)
		errbuf(err, errlen, "%s: %s", steps[ls.step], strerror(ls.err));
	else
		errbuf(err, errlen, "the workload failed to start");
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/* pidns: the program's pid, from the child that forked it and left (it
 * is reaped here); -1 and err if that child failed first. */
static pid_t
child_pidns(pid_t pid, int fd, char *err, size_t errlen)
{
	int status, val;

	if (child_status(pid, fd, ST_PID, &val, err, errlen) < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return (pid_t)val;
}

int
launch_prepare(const struct launch_spec *sp, struct launch_pending *lp,
    char *err, size_t errlen)
{
	int st[2], go[2];
	pid_t pid;

	lp->pid = -1;
	lp->go = lp->status = -1;
	if (sp->nfds > LAUNCH_MAX_FDS || sp->argv == NULL ||
	    sp->argv[0] == NULL || sp->argv[0][0] != '/') {
		errbuf(err, errlen, "no program, not an absolute path, or "
		    "more than %d sockets", LAUNCH_MAX_FDS);
		return -1;
	}
	if (sp->gate && sp->pidns) {
		errbuf(err, errlen, "a gated program is not started in a pid "
		    "namespace");
		return -1;
	}
	if (pipe2(st, O_CLOEXEC) < 0) {
		errbuf_errno(err, errlen, "pipe");
		return -1;
	}
	if (pipe2(go, O_CLOEXEC) < 0) {
		errbuf_errno(err, errlen, "pipe");
		close(st[0]);
		close(st[1]);
		return -1;
	}
	if ((pid = fork()) < 0) {
		errbuf_errno(err, errlen, "fork");
		close(st[0]);
		close(st[1]);
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (pid == 0) {
		close(st[0]);
		close(go[1]);
		child(sp, st[1], go[0]);
	}
	close(st[1]);
	close(go[0]);
	if ((sp->pidns && (pid = child_pidns(pid, st[0], err, errlen)) < 0) ||
	    child_status(pid, st[0], ST_READY, NULL, err, errlen) < 0 ||
	    (sp->gate && child_status(pid, st[0], 0, NULL, err, errlen) < 0)) {
		close(st[0]);
		close(go[1]);
		return -1;
	}
	lp->pid = pid;
	lp->go = go[1];
	lp->status = st[0];
	if (sp->gate) {			/* it runs: only the gate is left */
		close(st[0]);
		lp->status = -1;
	}
	return 0;
}

pid_t
launch_go(struct launch_pending *lp, char *err, size_t errlen)
{
	pid_t pid = lp->pid;
	int rc;

	if (write(lp->go, "g", 1) != 1) {
		errbuf_errno(err, errlen, "the workload is gone");
		rc = -1;
	} else if (lp->status >= 0)
		rc = child_status(pid, lp->status, 0, NULL, err, errlen);
	else
		rc = 0;			/* gated: it ran already */
	close(lp->go);
	if (lp->status >= 0)
		close(lp->status);
	lp->pid = -1;
	lp->go = lp->status = -1;
	return rc < 0 ? -1 : pid;
}

void
launch_cancel(struct launch_pending *lp)
{
	int status;

	if (lp->pid <= 0)
		return;
	close(lp->go);		/* the child exits */
	if (lp->status >= 0)
		close(lp->status);
	else
		kill(lp->pid, SIGKILL);	/* a gated program: not waited for */
	while (waitpid(lp->pid, &status, 0) < 0 && errno == EINTR)
		;
	lp->pid = -1;
	lp->go = lp->status = -1;
}

int
launch_keeper(const struct launch_spec *sp, char *err, size_t errlen)
{
	int fd, dirfd, out;

	if ((fd = open_log(sp, &dirfd)) < 0) {
		errbuf_errno(err, errlen, "open log");
		return -1;
	}
	if (dirfd < 0)
		return fd;
	out = start_keeper(sp, dirfd, fd, -1);
	close(fd);
	close(dirfd);
	if (out < 0)
		errbuf_errno(err, errlen, "start the log keeper");
	return out;
}

pid_t
launch_workload(const struct launch_spec *sp, char *err, size_t errlen)
{
	struct launch_pending lp;

	if (launch_prepare(sp, &lp, err, errlen) < 0)
		return -1;
	return launch_go(&lp, err, errlen);
}
