#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "log.h"
#include "netns.h"

/* In the child: report why and give up. */
static void
child_fail(const char *what)
{
	fprintf(stderr, "launch: %s: %s\n", what, strerror(errno));
	_exit(127);
}

static void
child(const char *ns, const char *cgroup, const int *fds, char *const *names,
    size_t nfds, char *const argv[], const char *logpath)
{
	char path[PATH_MAX], num[32], *fdnames;
	size_t i, len = 1;
	int fd, nsfd, base;

	/* join the cgroup first, so nothing the child does escapes it */
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		child_fail(path);
	close(fd);
	nsfd = netns_open(ns);
	if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) < 0)
		child_fail(ns);
	close(nsfd);
	setsid();

	fd = open(logpath ? logpath : "/dev/null",
	    O_WRONLY | O_CREAT | O_APPEND, 0640);
	if (fd < 0)
		child_fail(logpath);
	/* move the sockets out of the way of 0..3+nfds, then into place */
	base = 3 + (int)nfds + 16;
	for (i = 0; i < nfds; i++)
		if (fcntl(fds[i], F_DUPFD_CLOEXEC, base + (int)i) != base + (int)i)
			child_fail("dup");
	if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		child_fail("dup2 log");
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		child_fail("/dev/null");
	for (i = 0; i < nfds; i++)
		if (dup2(base + (int)i, 3 + (int)i) < 0)	/* clears CLOEXEC */
			child_fail("dup2");
	/* nothing else leaks into the workload */
	if (close_range(3 + (unsigned)nfds, ~0U, 0) < 0)
		child_fail("close_range");

	for (i = 0; i < nfds; i++)
		len += strlen(names[i]) + 1;
	fdnames = calloc(1, len);
	if (fdnames == NULL)
		child_fail("calloc");
	for (i = 0; i < nfds; i++) {
		if (i)
			strcat(fdnames, ":");
		strcat(fdnames, names[i]);
	}
	snprintf(num, sizeof(num), "%ld", (long)getpid());
	setenv("LISTEN_PID", num, 1);
	snprintf(num, sizeof(num), "%zu", nfds);
	setenv("LISTEN_FDS", num, 1);
	setenv("LISTEN_FDNAMES", fdnames, 1);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	child_fail(argv[0]);
}

pid_t
launch_workload(const char *ns, const char *cgroup, const int *fds,
    char *const *names, size_t nfds, char *const argv[], const char *logpath)
{
	pid_t pid;

	if (nfds > LAUNCH_MAX_FDS || argv == NULL || argv[0] == NULL) {
		log_warnx("%s: bad arguments", __func__);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		log_warn("%s: fork", __func__);
		return -1;
	}
	if (pid == 0)
		child(ns, cgroup, fds, names, nfds, argv, logpath);
	return pid;
}
