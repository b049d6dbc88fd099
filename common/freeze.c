#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "freeze.h"
#include "log.h"

static int
write_knob(const char *cgpath, const char *knob, const char *val)
{
	char path[PATH_MAX];
	int fd;
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", cgpath, knob) >=
	    sizeof(path)) {
		log_warnx("%s: path too long", __func__);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		log_warn("%s: open %s", __func__, path);
		return -1;
	}
	n = write(fd, val, strlen(val));
	if (n < 0)
		log_warn("%s: write %s", __func__, path);
	close(fd);
	return n < 0 ? -1 : 0;
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
open_events(const char *cgpath)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.events", cgpath) >=
	    sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		log_warn("%s: open %s", __func__, path);
	return fd;
}

int
cgroup_event(const char *cgpath, const char *key)
{
	int fd = open_events(cgpath), v;

	if (fd < 0)
		return -1;
	v = events_value(fd, key);
	close(fd);
	return v;
}

/* Wait until cgroup.events shows KEY == want; kernfs signals each change
 * of the file with POLLPRI. */
static int
wait_event(const char *cgpath, const char *key, int want, int timeout_ms)
{
	double t0 = mono_ms();
	struct pollfd p;
	int fd, v, rc = -1;

	fd = open_events(cgpath);
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
			log_warnx("%s: %s: '%s' still %d after %d ms", __func__,
			    cgpath, key, v, timeout_ms);
			break;
		}
		p.fd = fd;
		p.events = POLLPRI;
		/* wake up now and then too: a change may slip between the
		 * read and the poll */
		if (poll(&p, 1, left < 50 ? (int)left : 50) < 0 && errno != EINTR) {
			log_warn("%s: poll", __func__);
			break;
		}
	}
	close(fd);
	return rc;
}

int
freeze_cgroup(const char *cgpath, int timeout_ms)
{
	if (write_knob(cgpath, "cgroup.freeze", "1") < 0)
		return -1;
	return wait_event(cgpath, "frozen", 1, timeout_ms);
}

int
thaw_cgroup(const char *cgpath, int timeout_ms)
{
	if (write_knob(cgpath, "cgroup.freeze", "0") < 0)
		return -1;
	return wait_event(cgpath, "frozen", 0, timeout_ms);
}

int
kill_cgroup(const char *cgpath, int timeout_ms)
{
	if (write_knob(cgpath, "cgroup.kill", "1") < 0)
		return -1;
	return wait_event(cgpath, "populated", 0, timeout_ms);
}

int
cgroup_procs(const char *cgpath, pid_t **pids, size_t *n, size_t max)
{
	char path[PATH_MAX];
	pid_t *list = NULL;
	size_t count = 0;
	FILE *f;
	long pid;

	*pids = NULL;
	*n = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", cgpath) >=
	    sizeof(path))
		return -1;
	f = fopen(path, "re");
	if (f == NULL) {
		log_warn("%s: %s", __func__, path);
		return -1;
	}
	while (fscanf(f, "%ld", &pid) == 1) {
		pid_t *nl;

		if (count == max) {
			log_warnx("%s: %s: more than %zu tasks", __func__,
			    cgpath, max);
			goto out_fail;
		}
		nl = realloc(list, (count + 1) * sizeof(*list));
		if (nl == NULL) {
			log_warn("%s: realloc", __func__);
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
