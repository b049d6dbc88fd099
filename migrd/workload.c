/*
 * Workloads: a child that joins the namespace's cgroup and netns, writes
 * its output to a log file, and execs the command.  A CLOEXEC pipe
 * reports a failure before exec back to migrd (EOF means exec worked).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "migrd.h"
#include "ns.h"

static int
write_file(const char *path, const char *s)
{
	int fd, rc = 0;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		rc = -1;
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

/* The parent of cgroup-root must be a cgroup v2 directory. */
int
cgroup_check(void)
{
	char parent[PATH_MAX];
	struct statfs sf;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", migrd.conf.cgroup_root);
	if ((slash = strrchr(parent, '/')) != NULL && slash != parent)
		*slash = '\0';
	if (statfs(parent, &sf) == -1) {
		log_warn("%s: %s", __func__, parent);
		return -1;
	}
	if (sf.f_type != CGROUP2_SUPER_MAGIC) {
		log_warnx("%s: %s is not a cgroup v2 mount; workloads cannot "
		    "run (see cgroup-root in migrd.conf(5))", __func__, parent);
		return -1;
	}
	return 0;
}

int
cgroup_create(const char *ns)
{
	char path[PATH_MAX + 32];

	if (cgroup_check() == -1)
		return -1;
	if (mkdir(migrd.conf.cgroup_root, 0755) == -1 && errno != EEXIST) {
		log_warn("%s: mkdir %s", __func__, migrd.conf.cgroup_root);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", migrd.conf.cgroup_root, ns);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		log_warn("%s: mkdir %s", __func__, path);
		return -1;
	}
	return 0;
}

json_t *
cgroup_pids(const char *ns)
{
	char path[PATH_MAX + 32];
	json_t *a = json_array();
	FILE *fp;
	long pid;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", migrd.conf.cgroup_root, ns);
	if (a == NULL || (fp = fopen(path, "re")) == NULL)
		return a;
	while (fscanf(fp, "%ld", &pid) == 1)
		json_array_append_new(a, json_integer(pid));
	fclose(fp);
	return a;
}

int
cgroup_kill_remove(const char *ns)
{
	char path[PATH_MAX + 32], kill[PATH_MAX + 48];
	json_t *pids;
	int i, n = 1;

	snprintf(path, sizeof(path), "%s/%s", migrd.conf.cgroup_root, ns);
	if (access(path, F_OK) == -1)
		return 0;
	snprintf(kill, sizeof(kill), "%s/cgroup.kill", path);
	if (write_file(kill, "1") == -1)
		log_warn("%s: %s", __func__, kill);
	/* SIGKILL is asynchronous: wait (bounded) until the cgroup empties */
	for (i = 0; i < 200; i++) {
		pids = cgroup_pids(ns);
		n = (int)json_array_size(pids);
		json_decref(pids);
		if (n == 0)
			break;
		usleep(10000);
	}
	if (n != 0)
		log_warnx("%s: %s still has %d tasks", __func__, path, n);
	if (rmdir(path) == -1) {
		log_warn("%s: rmdir %s", __func__, path);
		return -1;
	}
	return 0;
}

struct child_err {
	int	stage;
	int	err;
};

static const char *const stages[] = {
	"open log file", "join cgroup", "open netns", "setns",
	"close inherited fds", "exec"
};

static __attribute__((noreturn)) void
child(int wfd, const char *ns, const char *const *argv, const char *logpath)
{
	struct child_err ce = { 0, 0 };
	char path[PATH_MAX + 32], pid[32];
	sigset_t none;
	int fd, nfd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();
	ce.stage = 0;
	if ((fd = open(logpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0640)) == -1)
		goto fail;
	nfd = open("/dev/null", O_RDONLY);
	if (nfd != -1)
		dup2(nfd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	ce.stage = 1;
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", migrd.conf.cgroup_root, ns);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (write_file(path, pid) == -1)
		goto fail;
	ce.stage = 2;
	snprintf(path, sizeof(path), "%s/%s", NS_NETNS_DIR, ns);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		goto fail;
	ce.stage = 3;
	if (setns(fd, CLONE_NEWNET) == -1)
		goto fail;
	ce.stage = 4;
	/* nothing of migrd's may leak into a workload: its peer sessions
	 * would be collected and frozen with it at the next migration */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		goto fail;
	ce.stage = 5;
	execv(argv[0], (char *const *)argv);
fail:
	ce.err = errno;
	if (write(wfd, &ce, sizeof(ce)) == -1)
		_exit(126);
	_exit(127);
}

pid_t
workload_start(const char *ns, const char *const *argv, const char *logpath,
    char *err, size_t errlen)
{
	struct child_err ce;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child(p[1], ns, argv, logpath);
	}
	close(p[1]);
	do
		n = read(p[0], &ce, sizeof(ce));
	while (n == -1 && errno == EINTR);
	close(p[0]);
	if (n == 0)
		return pid;		/* exec succeeded */
	if (n == (ssize_t)sizeof(ce) && ce.stage >= 0 && ce.stage < 6)
		snprintf(err, errlen, "%s: %s", stages[ce.stage],
		    strerror(ce.err));
	else
		snprintf(err, errlen, "workload failed to start");
	waitpid(pid, &status, 0);
	return -1;
}
