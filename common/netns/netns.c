/* SPDX-License-Identifier: ISC */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "netns.h"

int
netns_open(const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(name, '/') != NULL)
		snprintf(path, sizeof(path), "%s", name);
	else if ((size_t)snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR,
	    name) >= sizeof(path)) {
		errbuf(err, errlen, "namespace name too long");
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		errbuf_errno(err, errlen, "%s", path);
	return fd;
}

int
netns_enter_fd(int nsfd, char *err, size_t errlen)
{
	int saved;

	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0) {
		errbuf_errno(err, errlen, "own network namespace");
		return -1;
	}
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		errbuf_errno(err, errlen, "setns");
		close(saved);
		return -1;
	}
	return saved;
}

int
netns_enter(const char *name, char *err, size_t errlen)
{
	int target, saved;

	target = netns_open(name, err, errlen);
	if (target < 0)
		return -1;
	saved = netns_enter_fd(target, err, errlen);
	if (saved < 0)
		errbuf_errno(err, errlen, "setns %s", name);
	close(target);
	return saved;
}

int
netns_leave(int saved, char *err, size_t errlen)
{
	int rc = 0;

	if (setns(saved, CLONE_NEWNET) < 0) {
		errbuf_errno(err, errlen, "setns back");
		rc = -1;
	}
	close(saved);
	return rc;
}
