/* SPDX-License-Identifier: ISC */
/*
 * lab-exec: run a command in a lab guest through its migr-agent and
 * return the command's stdout, stderr and exit status as its own.
 *
 *   lab-exec [-t SECONDS] LABDIR GUEST COMMAND [ARG...]
 *
 * The arguments are joined with spaces and run by the guest's /bin/sh,
 * as ssh does.  Each guest has EXEC_PORTS agent ports; a free one is
 * picked with flock(2) on LABDIR/GUEST.execN.lock, so up to that many
 * commands run in one guest at once.  Exit status: the command's, or 255
 * when the guest cannot be reached or the exchange breaks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "exec-proto.h"

#define EXEC_PORTS 4

/* Lock a free port (or wait for one); returns its number. */
static int
lock_port(const char *dir, const char *guest, int *lockfd)
{
	char path[4096];
	int i, fd;

	for (i = 0; i < EXEC_PORTS; i++) {
		snprintf(path, sizeof(path), "%s/%s.exec%d.lock", dir, guest, i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "lab-exec: %s: %s\n", path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*lockfd = fd;
			return i;
		}
		close(fd);
	}
	i = (int)(getpid() % EXEC_PORTS);
	snprintf(path, sizeof(path), "%s/%s.exec%d.lock", dir, guest, i);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		fprintf(stderr, "lab-exec: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*lockfd = fd;
	return i;
}

static int
connect_port(const char *dir, const char *guest, int port)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
	    "%s/%s.exec%d", dir, guest, port) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "lab-exec: lab folder path too long\n");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "lab-exec: %s: %s (is the lab up?)\n",
		    sun.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void
on_alarm(int sig)
{
	static const char msg[] = "lab-exec: no answer from the guest in time\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(255);
}

int
main(int argc, char **argv)
{
	struct exec_req req = { .magic = EXEC_MAGIC };
	unsigned timeout = 0;
	static char data[EXEC_CHUNK];
	char *cmd;
	size_t len = 0;
	int c, i, fd, lockfd, port;

	while ((c = getopt(argc, argv, "+t:")) != -1) {
		if (c == 't')
			timeout = (unsigned)strtoul(optarg, NULL, 10);
		else
			goto usage;
	}
	if (argc - optind < 3)
		goto usage;

	for (i = optind + 2; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > EXEC_CMD_MAX) {
		fprintf(stderr, "lab-exec: command longer than %d bytes\n",
		    EXEC_CMD_MAX);
		return 255;
	}
	cmd = calloc(1, len + 1);
	if (cmd == NULL)
		return 255;
	for (i = optind + 2; i < argc; i++) {
		strcat(cmd, argv[i]);
		if (i + 1 < argc)
			strcat(cmd, " ");
	}

	if (timeout) {
		/* the guest kills the command at the deadline; give up on a
		 * guest that does not answer at all a little later */
		signal(SIGALRM, on_alarm);
		alarm(timeout + 10);
	}
	port = lock_port(argv[optind], argv[optind + 1], &lockfd);
	fd = port < 0 ? -1 : connect_port(argv[optind], argv[optind + 1], port);
	if (fd < 0) {
		free(cmd);
		return 255;
	}

	if (getrandom(&req.id, sizeof(req.id), 0) != sizeof(req.id))
		req.id = (uint32_t)time(NULL) ^ (uint32_t)getpid();
	req.timeout_s = timeout;
	req.len = (uint32_t)strlen(cmd);
	if (exec_write_full(fd, &req, sizeof(req)) < 0 ||
	    exec_write_full(fd, cmd, req.len) < 0) {
		fprintf(stderr, "lab-exec: send: %s\n", strerror(errno));
		free(cmd);
		return 255;
	}
	free(cmd);

	for (;;) {
		struct exec_frame f;

		if (exec_read_full(fd, &f, sizeof(f)) < 0) {
			fprintf(stderr, "lab-exec: %s: connection lost\n",
			    argv[optind + 1]);
			return 255;
		}
		if (f.magic != EXEC_MAGIC || f.len > EXEC_CHUNK) {
			fprintf(stderr, "lab-exec: %s: bad frame\n",
			    argv[optind + 1]);
			return 255;
		}
		if (exec_read_full(fd, data, f.len) < 0) {
			fprintf(stderr, "lab-exec: %s: connection lost\n",
			    argv[optind + 1]);
			return 255;
		}
		if (f.id != req.id)
			continue;	/* left over from an abandoned exchange */
		switch (f.type) {
		case EXEC_STDOUT:
			exec_write_full(1, data, f.len);
			break;
		case EXEC_STDERR:
			exec_write_full(2, data, f.len);
			break;
		case EXEC_EXIT: {
			int32_t code;

			if (f.len != sizeof(code))
				return 255;
			memcpy(&code, data, sizeof(code));
			return code;
		}
		default:
			break;
		}
	}
usage:
	fprintf(stderr, "usage: lab-exec [-t SECONDS] LABDIR GUEST COMMAND [ARG...]\n");
	return 2;
}
