/* SPDX-License-Identifier: ISC */
/*
 * filecheck (common/ckpt): a restored task may hold only files the
 * workload user could open itself.  Children stand for tasks CRIU
 * restored: they open or map files as root, as CRIU does, then become
 * nobody (and dumpable again, as CRIU leaves them) and wait.  Holding a
 * pipe, a socket, /dev/null and a world-readable file for reading
 * passes; a root-only file open for reading, mapped after its
 * descriptor was closed, or a world-readable one open for writing is
 * refused, and the reason names the file.  Needs root; skipped
 * otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "filecheck.h"

#define NOBODY	65534

enum hold { FINE, SECRET_FD, SECRET_MAP, OPEN_FOR_WRITE, SECRET_O_PATH };

static char secret[64], open_file[64];

/* A child holding what hold says, as nobody, waiting to be looked at. */
static pid_t
child(enum hold hold)
{
	int p[2], fd, pp[2], sk;
	pid_t pid;
	char c;
	void *m;

	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		int ok = 1;

		close(p[0]);
		/* nothing of the test's (its log is root's), but the pipe */
		if ((fd = open("/dev/null", O_RDWR)) < 0 || dup2(fd, 0) < 0 ||
		    dup2(fd, 1) < 0 || dup2(fd, 2) < 0 ||
		    (p[1] > 3 && syscall(SYS_close_range, 3, p[1] - 1, 0) < 0) ||
		    syscall(SYS_close_range, p[1] + 1, ~0U, 0) < 0)
			_exit(1);
		/* what it holds, opened as root */
		ok = pipe(pp) == 0 && (sk = socket(AF_INET, SOCK_STREAM, 0)) >= 0 &&
		    open("/dev/null", O_RDWR) >= 0 &&
		    open(open_file, O_RDONLY) >= 0;
		switch (hold) {
		case SECRET_FD:
			ok = ok && open(secret, O_RDONLY) >= 0;
			break;
		case SECRET_MAP:
			ok = ok && (fd = open(secret, O_RDONLY)) >= 0 &&
			    (m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd,
			    0)) != MAP_FAILED && close(fd) == 0;
			break;
		case OPEN_FOR_WRITE:
			ok = ok && open(open_file, O_WRONLY) >= 0;
			break;
		case SECRET_O_PATH:
			ok = ok && open(secret, O_PATH) >= 0;
			break;
		default:
			break;
		}
		ok = ok && setgroups(0, NULL) == 0 &&
		    setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
		    setresuid(NOBODY, NOBODY, NOBODY) == 0 &&
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0 &&
		    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0;
		if (write(p[1], ok ? "y" : "n", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_int_equal(c, 'y');
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int
setup(void **state)
{
	int fd;

	(void)state;
	snprintf(secret, sizeof(secret), "/tmp/test_filecheck.%ld.secret",
	    (long)getpid());
	snprintf(open_file, sizeof(open_file), "/tmp/test_filecheck.%ld.open",
	    (long)getpid());
	if ((fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
	    write(fd, "root only\n", 10) != 10 || close(fd) < 0 ||
	    (fd = open(open_file, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
	    write(fd, "anyone may read\n", 16) != 16 || close(fd) < 0)
		return -1;
	/* the umask must not have narrowed them */
	return chmod(secret, 0600) == 0 && chmod(open_file, 0644) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(secret);
	unlink(open_file);
	return 0;
}

static void
expect(enum hold hold, int rc, const char *words)
{
	char err[512] = "";
	pid_t pid;

	if (geteuid() != 0)
		skip();
	pid = child(hold);
	assert_int_equal(filecheck_tasks(&pid, 1, NOBODY, NOBODY, 0, err,
	    sizeof(err)), rc);
	if (words != NULL && strstr(err, words) == NULL)
		fail_msg("\"%s\" lacks \"%s\"", err, words);
	reap(pid);
}

/* Can nobody read what this test maps (its own program)?  Not in a
 * build folder closed to others (a clone in /root). */
static int
nobody_reads_me(void)
{
	char exe[4096];
	ssize_t n;
	pid_t pid;
	int status;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0)
		return 0;
	exe[n] = '\0';
	if ((pid = fork()) == 0)
		_exit(setgroups(0, NULL) == 0 && setresgid(NOBODY, NOBODY,
		    NOBODY) == 0 && setresuid(NOBODY, NOBODY, NOBODY) == 0 &&
		    access(exe, R_OK) == 0 ? 0 : 1);
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	    WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void
test_fine(void **state)
{
	(void)state;
	if (geteuid() != 0 || !nobody_reads_me())
		skip();
	expect(FINE, 0, NULL);
	expect(SECRET_O_PATH, 0, NULL);
}

static void
test_refused(void **state)
{
	(void)state;
	expect(SECRET_FD, -1, "is open for reading, which the workload user "
	    "could not do");
	expect(SECRET_FD, -1, secret);
	expect(SECRET_MAP, -1, "is mapped");
	expect(SECRET_MAP, -1, secret);
	expect(OPEN_FOR_WRITE, -1, "is open for writing");
}

/* root as the workload user: no check can stand for it */
static void
test_root(void **state)
{
	char err[256];
	pid_t self = getpid();

	(void)state;
	assert_int_equal(filecheck_tasks(&self, 1, 0, 0, 0, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "root"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fine),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_root),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
