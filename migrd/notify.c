/* SPDX-License-Identifier: ISC */
/*
 * systemd integration without libsystemd: sd_notify(3)'s datagram to
 * $NOTIFY_SOCKET, sd_listen_fds(3)'s LISTEN_PID/LISTEN_FDS (first fd is
 * 3), and sd_watchdog_enabled(3)'s WATCHDOG_USEC/WATCHDOG_PID.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "migrd.h"

int
notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	socklen_t len;
	size_t plen;
	int fd, rc = 0;

	if (path == NULL || path[0] == '\0')
		return 0;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sun.sun_path)) {
		log_warnx("%s: bad NOTIFY_SOCKET '%s'", __func__, path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, plen);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';		/* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("%s: socket", __func__);
		return -1;
	}
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len) == -1) {
		log_warn("%s: sendto %s", __func__, path);
		rc = -1;
	}
	close(fd);
	return rc;
}

/* The control socket passed by migrd.socket, or -1. */
int
notify_listen_fd(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int fl;

	if (pid == NULL || fds == NULL)
		return -1;
	if (strtol(pid, NULL, 10) != (long)getpid())
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (strtol(fds, NULL, 10) < 1)
		return -1;
	if (strtol(fds, NULL, 10) > 1)
		log_warnx("%s: %s sockets passed, using fd 3 only", __func__,
		    fds);
	if ((fl = fcntl(3, F_GETFL)) == -1 ||
	    fcntl(3, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    fcntl(3, F_SETFD, FD_CLOEXEC) == -1) {
		log_warn("%s: fd 3", __func__);
		return -1;
	}
	return 3;
}

static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	notify_send("WATCHDOG=1");
}

/*
 * WatchdogSec= in the unit: systemd sets WATCHDOG_USEC (and
 * WATCHDOG_PID, which must be ours).  WATCHDOG=1 goes out at half that
 * period from a timer of the event loop, so a loop that hangs stops it
 * and systemd restarts migrd.  0 when there is no watchdog or it runs.
 */
int
notify_watchdog_start(struct event_base *base, struct event **evp)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid;
	struct timeval tv;
	long long us;
	char *end;

	*evp = NULL;
	if (usec == NULL)
		return 0;
	pid = getenv("WATCHDOG_PID");
	if (pid != NULL && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	us = strtoll(usec, &end, 10);
	if (*end != '\0' || us <= 0) {
		log_warnx("%s: bad WATCHDOG_USEC '%s'", __func__, usec);
		return -1;
	}
	us /= 2;
	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	if ((*evp = event_new(base, -1, EV_PERSIST, watchdog_cb, NULL)) ==
	    NULL || event_add(*evp, &tv) == -1) {
		log_warnx("%s: cannot arm the watchdog timer", __func__);
		return -1;
	}
	notify_send("WATCHDOG=1");
	log_info("systemd watchdog: WATCHDOG=1 every %lld ms", us / 1000);
	return 0;
}
