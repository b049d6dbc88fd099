/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/netns/taskrest.c, on real processes: a child
 * that holds a socket and waits in read() is at rest; one that holds a
 * socket and sleeps in a timer, runs, or is blocked writing to a full
 * socket is not, and the reason names it; a child without a socket is
 * never looked at; a thread is looked at like its process.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "taskrest.h"

#define LOOKS	400	/* 5 ms apart: 2 s for a child to get there */

enum what { READS, POLLS, SLEEPS, SLEEPS_BARE, RUNS, WRITES_FULL,
    THREAD_SLEEPS };

static void *
sleeper(void *arg)
{
	(void)arg;
	for (;;)
		sleep(60);
	return NULL;
}

static void
child(enum what w, int fd)
{
	static char buf[65536];
	pthread_t t;

	switch (w) {
	case READS:
		(void)read(fd, buf, sizeof(buf));
		break;
	case POLLS: {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		(void)poll(&p, 1, -1);
		break;
	}
	case SLEEPS:
		sleep(60);
		break;
	case SLEEPS_BARE:
		close(fd);
		sleep(60);
		break;
	case RUNS:
		for (;;)
			__asm__ volatile("" ::: "memory");
	case WRITES_FULL:
		for (;;)
			(void)write(fd, buf, sizeof(buf));
	case THREAD_SLEEPS:
		if (pthread_create(&t, NULL, sleeper, NULL) == 0)
			(void)read(fd, buf, sizeof(buf));
		break;
	}
	_exit(0);
}

static pid_t
spawn(enum what w, int *keep)
{
	int sv[2];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		child(w, sv[1]);
	}
	close(sv[1]);
	*keep = sv[0];		/* never written: READS waits for good */
	return pid;
}

static void
reap(pid_t pid, int keep)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(keep);
}

static void
pause_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* A child that must come to rest: it does, and stays so. */
static void
expect_rest(enum what w)
{
	char why[256];
	int keep, i, rc = 0;
	pid_t pid = spawn(w, &keep);

	for (i = 0; i < LOOKS && rc != 1; i++) {
		rc = taskrest_pids(&pid, 1, why, sizeof(why));
		assert_true(rc >= 0);
		if (rc != 1)
			pause_ms(5);
	}
	assert_int_equal(rc, 1);
	for (i = 0; i < 5; i++) {
		pause_ms(5);
		assert_int_equal(taskrest_pids(&pid, 1, why, sizeof(why)), 1);
	}
	reap(pid, keep);
}

/* A child that must never be at rest, and whose reason, once it gets
 * where it stays, contains want. */
static void
expect_busy(enum what w, const char *want)
{
	char why[256] = "";
	int keep, i, rc, seen = 0;
	pid_t pid = spawn(w, &keep);

	for (i = 0; i < LOOKS && !seen; i++) {
		rc = taskrest_pids(&pid, 1, why, sizeof(why));
		assert_int_equal(rc, 0);
		seen = strstr(why, want) != NULL;
		if (!seen)
			pause_ms(5);
	}
	if (!seen)
		fail_msg("never \"%s\"; last: %s", want, why);
	reap(pid, keep);
}

/*
 * Stopped (SIGSTOP) in a wait: in a poll it has taken nothing, and is at
 * rest; in a read it may be on its way out with bytes, and is not.
 */
static void
expect_stopped(enum what w, int rests, const char *want)
{
	char why[256] = "";
	int keep, i, st, rc = 0;
	pid_t pid = spawn(w, &keep);

	for (i = 0; i < LOOKS && rc != 1; i++) {
		rc = taskrest_pids(&pid, 1, why, sizeof(why));
		if (rc != 1)
			pause_ms(5);
	}
	assert_int_equal(rc, 1);	/* asleep in its wait */
	assert_int_equal(kill(pid, SIGSTOP), 0);
	assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
	assert_true(WIFSTOPPED(st));
	rc = taskrest_pids(&pid, 1, why, sizeof(why));
	if (rests)
		assert_int_equal(rc, 1);
	else if (rc != 0 || strstr(why, want) == NULL)
		fail_msg("rc %d, \"%s\", wanted \"%s\"", rc, why, want);
	reap(pid, keep);
}

static void
test_stopped(void **state)
{
	(void)state;
	expect_stopped(POLLS, 1, NULL);
	expect_stopped(READS, 0, "is stopped in read");
}

static void
test_reads(void **state)
{
	(void)state;
	expect_rest(READS);
}

static void
test_sleeps(void **state)
{
	(void)state;
	expect_busy(SLEEPS, "blocked in clock_nanosleep");
}

static void
test_sleeps_without_socket(void **state)
{
	(void)state;
	expect_rest(SLEEPS_BARE);
}

static void
test_runs(void **state)
{
	(void)state;
	expect_busy(RUNS, "is running");
}

static void
test_writes_full(void **state)
{
	(void)state;
	expect_busy(WRITES_FULL, "blocked in write");
}

static void
test_thread(void **state)
{
	(void)state;
	expect_busy(THREAD_SLEEPS, ", thread ");
}

/* A pid that is gone holds nothing. */
static void
test_gone(void **state)
{
	char why[64];
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	assert_int_equal(taskrest_pids(&pid, 1, why, sizeof(why)), 1);
}

static void
test_parse(void **state)
{
	(void)state;
	assert_int_equal(taskrest_parse_syscall("running\n"), -2);
	assert_int_equal(taskrest_parse_syscall("-1 0x7ffd1 0x7f01\n"), -1);
	assert_int_equal(taskrest_parse_syscall("0 0x3 0x55 0x20000 0x0 0x0 "
	    "0x0 0x7ffd 0x7f\n"), 0);
	assert_int_equal(taskrest_parse_syscall("232 0x4"), 232);
	assert_int_equal(taskrest_parse_syscall(""), -3);
	assert_int_equal(taskrest_parse_syscall("x 0"), -3);
	assert_int_equal(taskrest_parse_syscall("12x"), -3);
	assert_int_equal(taskrest_parse_syscall("-7 0x1"), -3);
	assert_string_equal(taskrest_wait_name(SYS_read), "read");
	assert_string_equal(taskrest_wait_name(SYS_epoll_pwait),
	    "epoll_pwait");
	assert_null(taskrest_wait_name(SYS_write));
	assert_null(taskrest_wait_name(SYS_clock_nanosleep));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_reads),
		cmocka_unit_test(test_stopped),
		cmocka_unit_test(test_sleeps),
		cmocka_unit_test(test_sleeps_without_socket),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_writes_full),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_gone),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
