/* SPDX-License-Identifier: ISC */
/*
 * migr-agent: runs in a lab guest and serves exec requests from the
 * host on one virtio-serial port (see exec-proto.h).  One request at a
 * time per port; init respawns one agent per port.
 *
 * The command runs as `/bin/sh -c CMD` in a session of its own with
 * stdin on /dev/null.  The agent returns when the shell exits, after
 * draining what the pipes hold: a background child that keeps the pipes
 * open does not hold the exchange (start daemons with their output
 * redirected).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "exec-proto.h"

static int
find_port(const char *name, char *dev, size_t devlen)
{
	glob_t g;
	size_t i;
	int found = -1;

	if (glob("/sys/class/virtio-ports/*/name", 0, NULL, &g) != 0)
		return -1;
	for (i = 0; i < g.gl_pathc && found < 0; i++) {
		char buf[128] = "";
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (f == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL) {
			buf[strcspn(buf, "\n")] = '\0';
			if (strcmp(buf, name) == 0) {
				/* .../virtio-ports/vportNpM/name */
				char *p = strrchr(g.gl_pathv[i], '/');

				*p = '\0';
				p = strrchr(g.gl_pathv[i], '/');
				snprintf(dev, devlen, "/dev%s", p);
				found = 0;
			}
		}
		fclose(f);
	}
	globfree(&g);
	return found;
}

static int
send_frame(int port, uint32_t id, uint32_t type, const void *data,
    uint32_t len)
{
	struct exec_frame f = { EXEC_MAGIC, id, type, len };

	if (exec_write_full(port, &f, sizeof(f)) < 0)
		return -1;
	return exec_write_full(port, data, len);
}

static double
now(void)
{
	return mono_ms() / 1e3;
}

/* Relay one pipe's available bytes; returns 0 at EOF, 1 if open, -1 on
 * a port error. */
static int
relay(int port, uint32_t id, int fd, uint32_t type)
{
	static char buf[EXEC_CHUNK];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0)
		return (errno == EINTR || errno == EAGAIN) ? 1 : 0;
	if (n == 0)
		return 0;
	if (send_frame(port, id, type, buf, (uint32_t)n) < 0)
		return -1;
	return 1;
}

static void
run(int port, const struct exec_req *req, const char *cmd)
{
	int out[2], err[2], status = 0, exited = 0, port_ok = 1;
	double deadline = req->timeout_s ? now() + req->timeout_s : 0;
	pid_t pid;
	int32_t code;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		code = 127;
		send_frame(port, req->id, EXEC_EXIT, &code, sizeof(code));
		return;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		setsid();
		dup2(null, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);

	for (;;) {
		struct pollfd p[2] = {
			{ out[0], POLLIN, 0 }, { err[0], POLLIN, 0 },
		};
		int r;

		if (!exited && waitpid(pid, &status, WNOHANG) == pid)
			exited = 1;
		if (exited) {
			/* drain what is buffered, do not wait for EOF */
			while (port_ok && relay(port, req->id, out[0], EXEC_STDOUT) == 1)
				;
			while (port_ok && relay(port, req->id, err[0], EXEC_STDERR) == 1)
				;
			break;
		}
		if (deadline && now() > deadline) {
			kill(-pid, SIGKILL);
			continue;
		}
		r = poll(p, 2, 50);
		if (r <= 0)
			continue;
		if (p[0].revents && relay(port, req->id, out[0], EXEC_STDOUT) < 0)
			port_ok = 0;
		if (p[1].revents && relay(port, req->id, err[0], EXEC_STDERR) < 0)
			port_ok = 0;
		if (!port_ok) {
			/* the host went away: stop the command */
			kill(-pid, SIGKILL);
		}
	}
	close(out[0]);
	close(err[0]);
	if (WIFEXITED(status))
		code = WEXITSTATUS(status);
	else
		code = 128 + WTERMSIG(status);
	if (port_ok)
		send_frame(port, req->id, EXEC_EXIT, &code, sizeof(code));
}

int
main(int argc, char **argv)
{
	char dev[256];
	int port;

	if (argc != 2) {
		fprintf(stderr, "usage: migr-agent PORT-NAME\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	while (find_port(argv[1], dev, sizeof(dev)) < 0)
		sleep(1);
	port = open(dev, O_RDWR | O_CLOEXEC);
	if (port < 0) {
		perror(dev);
		return 1;
	}
	for (;;) {
		struct exec_req req;
		char *cmd;

		if (exec_read_full(port, &req, sizeof(req)) < 0) {
			/* no host connected: the port reads EOF; wait */
			usleep(20000);
			continue;
		}
		if (req.magic != EXEC_MAGIC || req.len == 0 ||
		    req.len > EXEC_CMD_MAX) {
			/* out of step: drop what is queued and start over */
			usleep(20000);
			continue;
		}
		cmd = malloc(req.len + 1);
		if (cmd == NULL || exec_read_full(port, cmd, req.len) < 0) {
			free(cmd);
			continue;
		}
		cmd[req.len] = '\0';
		run(port, &req, cmd);
		free(cmd);
	}
}
