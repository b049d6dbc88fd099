#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "tool.h"

#define TOOL_ARGS_MAX	32

static const char *ip_path;

int
tool_init(void)
{
	static const char *const cands[] = { "/usr/sbin/ip", "/sbin/ip",
	    "/usr/bin/ip", "/bin/ip" };
	size_t i;

	for (i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (access(cands[i], X_OK) == 0) {
			ip_path = cands[i];
			return 0;
		}
	}
	log_warnx("%s: ip(8) not found; namespace commands will fail",
	    __func__);
	return -1;
}

/* Read both pipes until EOF, keeping at most len-1 bytes of each. */
static void
drain(int ofd, int efd, char *out, size_t outlen, char *err, size_t errlen)
{
	struct pollfd pfd[2] = { { ofd, POLLIN, 0 }, { efd, POLLIN, 0 } };
	size_t olen = 0, elen = 0;
	char junk[4096];
	int open = 2, i;

	while (open > 0) {
		if (poll(pfd, 2, 10000) <= 0)
			break;
		for (i = 0; i < 2; i++) {
			char *b = i == 0 ? out : err;
			size_t cap = i == 0 ? outlen : errlen;
			size_t *have = i == 0 ? &olen : &elen;
			ssize_t n;
			int keep;

			if (pfd[i].fd == -1 || !(pfd[i].revents &
			    (POLLIN | POLLHUP | POLLERR)))
				continue;
			keep = b != NULL && *have + 1 < cap;
			if (keep)
				n = read(pfd[i].fd, b + *have, cap - 1 - *have);
			else
				n = read(pfd[i].fd, junk, sizeof(junk));
			if (n <= 0) {
				pfd[i].fd = -1;
				open--;
			} else if (keep)
				*have += (size_t)n;
		}
	}
	if (out != NULL && outlen > 0)
		out[olen < outlen ? olen : outlen - 1] = '\0';
	if (err != NULL && errlen > 0) {
		err[elen < errlen ? elen : errlen - 1] = '\0';
		err[strcspn(err, "\n")] = '\0';
	}
}

int
tool_ip(const char *const args[], char *out, size_t outlen, char *err,
    size_t errlen)
{
	const char *argv[TOOL_ARGS_MAX + 2];
	char cmd[512];
	size_t i, off = 0;
	int op[2], ep[2], status;
	pid_t pid;

	if (err && errlen)
		err[0] = '\0';
	if (ip_path == NULL) {
		snprintf(err, errlen, "ip(8) not found");
		return -1;
	}
	argv[0] = "ip";
	for (i = 0; args[i] != NULL; i++) {
		if (i == TOOL_ARGS_MAX) {
			snprintf(err, errlen, "too many arguments");
			return -1;
		}
		argv[i + 1] = args[i];
		off += (size_t)snprintf(cmd + off, off < sizeof(cmd) ?
		    sizeof(cmd) - off : 0, " %s", args[i]);
		if (off >= sizeof(cmd))
			off = sizeof(cmd) - 1;
	}
	argv[i + 1] = NULL;
	if (pipe2(op, O_CLOEXEC) == -1) {
		log_warn("%s: pipe", __func__);
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC) == -1) {
		log_warn("%s: pipe", __func__);
		goto fail_close_op;
	}
	switch ((pid = fork())) {
	case -1:
		log_warn("%s: fork", __func__);
		goto fail_close_ep;
	case 0:
		signal(SIGPIPE, SIG_DFL);
		if (dup2(op[1], STDOUT_FILENO) == -1 ||
		    dup2(ep[1], STDERR_FILENO) == -1)
			_exit(126);
		execv(ip_path, (char *const *)argv);
		dprintf(STDERR_FILENO, "exec %s: %s\n", ip_path,
		    strerror(errno));
		_exit(127);
	}
	close(op[1]);
	close(ep[1]);
	drain(op[0], ep[0], out, outlen, err, errlen);
	close(op[0]);
	close(ep[0]);
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			log_warn("%s: waitpid", __func__);
			return -1;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		log_debug("ran ip%s", cmd);
		return 0;
	}
	log_warnx("ip%s: failed (%s)", cmd, err && err[0] ? err : "?");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;

fail_close_ep:
	close(ep[0]);
	close(ep[1]);
fail_close_op:
	close(op[0]);
	close(op[1]);
	return -1;
}
