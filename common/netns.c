#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netns.h"

int
netns_open(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(name, '/') != NULL)
		snprintf(path, sizeof(path), "%s", name);
	else if ((size_t)snprintf(path, sizeof(path), "/run/netns/%s", name) >=
	    sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		log_warn("%s: %s", __func__, path);
	return fd;
}

int
netns_enter(const char *name)
{
	int target, saved;

	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0) {
		log_warn("%s: own namespace", __func__);
		return -1;
	}
	target = netns_open(name);
	if (target < 0) {
		close(saved);
		return -1;
	}
	if (setns(target, CLONE_NEWNET) < 0) {
		log_warn("%s: setns %s", __func__, name);
		close(target);
		close(saved);
		return -1;
	}
	close(target);
	return saved;
}

int
netns_leave(int saved)
{
	int rc = 0;

	if (setns(saved, CLONE_NEWNET) < 0) {
		/* a thread stuck in a foreign namespace must not go on */
		log_warn("%s: setns back", __func__);
		rc = -1;
	}
	close(saved);
	return rc;
}
