/* SPDX-License-Identifier: ISC */
/*
 * fdput (common/ckpt): descriptors put into another process at the
 * numbers it expects, as checkpoint mode hands the engine's restored
 * sockets to a program CRIU restored with placeholders.
 *
 * The victim is a child that behaves like such a program: a TCP socket
 * that is not connected sits at number 7 (non-blocking, in an epoll set
 * with data the program chose) and another at number 9 (close-on-exec,
 * in no set), and the child counts in its own memory the bytes it read.
 * fdput() replaces both, with the child running and with it stopped
 * (SIGSTOP, as criu restore -s leaves a task).  Then bytes written to
 * our ends must come back through the child's epoll loop, with the data
 * it registered and the count it kept, and /proc must show each new
 * socket at its number with the placeholder's flags.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "fdput.h"
#include "log.h"

#define EP_DATA	0x5eed0000cafe0007ull

/* The victim: every readable event on 7 with EP_DATA is answered on 7
 * with "N/TOTAL", TOTAL kept in memory; 9 is answered the same way when
 * the parent asks over the control pipe. */
static void
victim(int ctl)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = EP_DATA };
	unsigned long total = 0;
	char buf[256], out[64];
	int ep, s;

	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (s < 0 || dup2(s, 7) < 0)
		_exit(2);
	close(s);
	s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || dup3(s, 9, O_CLOEXEC) < 0)
		_exit(2);
	close(s);
	if ((ep = epoll_create1(0)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, 7, &ev) < 0)
		_exit(2);
	ev.data.u64 = 0;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ctl, &ev) < 0)
		_exit(2);
	if (write(ctl, "r", 1) != 1)
		_exit(2);
	for (;;) {
		ssize_t n;
		int fd;

		if (epoll_wait(ep, &ev, 1, -1) != 1)
			continue;
		if (ev.data.u64 == 0) {		/* the parent: try 9 */
			if (read(ctl, buf, 1) != 1)
				_exit(0);
			fd = 9;
		} else if (ev.data.u64 == EP_DATA) {
			fd = 7;
		} else {
			_exit(3);
		}
		if ((n = read(fd, buf, sizeof(buf))) <= 0)
			continue;	/* a placeholder reads nothing */
		total += (unsigned long)n;
		snprintf(out, sizeof(out), "%zd/%lu", n, total);
		if (write(fd, out, strlen(out)) < 0)
			_exit(4);
	}
}

struct child {
	pid_t	pid;
	int	ctl;
};

static void
start(struct child *c)
{
	int sp[2];
	char r;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		close(sp[0]);
		victim(sp[1]);
	}
	close(sp[1]);
	c->ctl = sp[0];
	assert_int_equal(read(c->ctl, &r, 1), 1);	/* it is in its loop */
}

static void
stop(struct child *c)
{
	int status;

	kill(c->pid, SIGKILL);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	close(c->ctl);
}

static void
expect(int fd, const char *want)
{
	char buf[64];
	ssize_t n;

	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static unsigned long
fdinfo_flags(pid_t pid, int fd)
{
	char path[64], line[128];
	unsigned long fl = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "flags: %lo", &fl) == 1)
			break;
	fclose(f);
	return fl;
}

static ino_t
ino_at(pid_t pid, int fd)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static ino_t
ino_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_ino;
}

static void
put_both(int stopped)
{
	struct child c;
	struct fdput_item it[2];
	char err[256] = "";
	int a[2], b[2], status;

	start(&c);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	if (stopped) {
		kill(c.pid, SIGSTOP);
		assert_int_equal(waitpid(c.pid, &status, WUNTRACED), c.pid);
		assert_true(WIFSTOPPED(status));
	}
	it[0].fd = a[1];
	it[0].target = 7;
	it[1].fd = b[1];
	it[1].target = 9;
	if (fdput(c.pid, it, 2, err, sizeof(err)) < 0)
		fail_msg("fdput: %s", err);
	/* each at its number, with the placeholder's flags */
	assert_int_equal(ino_at(c.pid, 7), ino_of(a[1]));
	assert_int_equal(ino_at(c.pid, 9), ino_of(b[1]));
	assert_true(fdinfo_flags(c.pid, 7) & O_NONBLOCK);
	assert_false(fdinfo_flags(c.pid, 7) & O_CLOEXEC);
	assert_true(fdinfo_flags(c.pid, 9) & O_CLOEXEC);
	assert_false(fdinfo_flags(c.pid, 9) & O_NONBLOCK);
	close(a[1]);
	close(b[1]);
	if (stopped)
		kill(c.pid, SIGCONT);	/* as migrd resumes a restored tree */
	/* the epoll set wakes the child for 7 with the data it chose, and
	 * its memory goes on counting */
	assert_int_equal(write(a[0], "hello", 5), 5);
	expect(a[0], "5/5");
	assert_int_equal(write(a[0], "abc", 3), 3);
	expect(a[0], "3/8");
	assert_int_equal(write(b[0], "xy", 2), 2);
	assert_int_equal(write(c.ctl, "9", 1), 1);
	expect(b[0], "2/10");
	close(a[0]);
	close(b[0]);
	stop(&c);
}

static void
test_put_into_running_task(void **state)
{
	(void)state;
	put_both(0);
}

static void
test_put_into_stopped_task(void **state)
{
	(void)state;
	put_both(1);
}

static void
test_refusals(void **state)
{
	struct fdput_item it = { 0, 7 };
	char err[256] = "";
	struct child c;
	int sp[2];

	(void)state;
	/* nothing to do: not even a stop */
	assert_int_equal(fdput(1, NULL, 0, err, sizeof(err)), 0);
	/* a task that is gone */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	it.fd = sp[0];
	start(&c);
	stop(&c);
	assert_int_equal(fdput(c.pid, &it, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot be stopped"));
	/* a number the task cannot have: refused, the task runs on */
	start(&c);
	it.target = 1 << 30;
	err[0] = '\0';
	assert_int_equal(fdput(c.pid, &it, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "putting it at its number"));
	assert_int_equal(write(sp[1], "z", 1), 1);	/* still ours */
	assert_int_equal(kill(c.pid, 0), 0);
	stop(&c);
	close(sp[0]);
	close(sp[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_into_running_task),
		cmocka_unit_test(test_put_into_stopped_task),
		cmocka_unit_test(test_refusals),
	};

	log_init(LOG_TO_STDERR, 0, 0);
	return cmocka_run_group_tests_name("fdput", tests, NULL, NULL);
}
