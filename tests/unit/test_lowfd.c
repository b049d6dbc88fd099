/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/lowfd.c: with over FD_SETSIZE descriptors open,
 * a socket made between lowfd_release() and lowfd_retake() is numbered
 * below FD_SETSIZE, so select() (libnftables) can wait on it.
 */
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <nftables/libnftables.h>

#include "lowfd.h"

#define HIGH	(FD_SETSIZE + 100)

/* Take every number up to HIGH, as a daemon holding sockets does. */
static int
setup(void **state)
{
	struct rlimit rl;
	int fd;

	(void)state;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	if (rl.rlim_cur < HIGH + 16) {
		if (rl.rlim_max < HIGH + 16)
			return -1;
		rl.rlim_cur = HIGH + 16;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -1;
	}
	if (lowfd_reserve() < 0)
		return -1;
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 &&
	    fd < HIGH)
		;
	return fd < 0 ? -1 : 0;
}

/* a descriptor select() accepts: the fortified FD_SET aborts above */
static void
assert_selectable(int fd)
{
	struct timeval tv = { 0, 0 };
	fd_set r;

	assert_in_range(fd, 0, FD_SETSIZE - 1);
	FD_ZERO(&r);
	FD_SET(fd, &r);
	assert_int_not_equal(select(fd + 1, &r, NULL, NULL, &tv), -1);
}

static void
test_socket_below_setsize(void **state)
{
	int s;

	(void)state;
	assert_int_equal(lowfd_count(), LOWFD_RESERVED);
	/* without the release, a new socket lands above FD_SETSIZE */
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s >= FD_SETSIZE);
	close(s);

	lowfd_release();
	assert_int_equal(lowfd_count(), 0);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_selectable(s);
	close(s);
	lowfd_retake();
	assert_int_equal(lowfd_count(), LOWFD_RESERVED);

	/* retaken: the low numbers are held again */
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s >= FD_SETSIZE);
	close(s);
}

static void
test_number_kept_by_the_library(void **state)
{
	int s, t;

	(void)state;
	lowfd_release();
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_selectable(s);
	lowfd_retake();		/* s stays open: it is not taken back */
	assert_int_equal(lowfd_count(), LOWFD_RESERVED - 1);
	t = fcntl(s, F_GETFD);
	assert_int_not_equal(t, -1);	/* still the library's socket */

	/* the three left still serve, and release/retake is repeatable */
	lowfd_release();
	t = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_selectable(t);
	close(t);
	lowfd_retake();
	assert_int_equal(lowfd_count(), LOWFD_RESERVED - 1);
	lowfd_release();
	lowfd_release();	/* twice: no effect */
	lowfd_retake();
	lowfd_retake();
	assert_int_equal(lowfd_count(), LOWFD_RESERVED - 1);
	close(s);
}

/* In a child, in a network namespace of its own: add a table through
 * libnftables (which select()s on its socket), with the low numbers
 * released or not.  The wait status. */
static int
nft_add_in_child(int release)
{
	pid_t pid;
	int st;

	if ((pid = fork()) == 0) {
		struct nft_ctx *nft;
		int rc, n0 = lowfd_count();

		if (unshare(CLONE_NEWNET) < 0)
			_exit(77);
		if (release) {
			lowfd_release();
		} else {
			/* no hole left below HIGH, as a busy daemon */
			int fd;

			while ((fd = open("/dev/null", O_RDONLY)) >= 0 &&
			    fd < HIGH)
				;
		}
		nft = nft_ctx_new(NFT_CTX_DEFAULT);
		if (nft == NULL)
			_exit(2);
		nft_ctx_buffer_output(nft);
		nft_ctx_buffer_error(nft);
		rc = nft_run_cmd_from_buffer(nft, "add table inet lowfd\n");
		nft_ctx_free(nft);
		if (release)
			lowfd_retake();
		_exit(rc == 0 && lowfd_count() == n0 ? 0 : 1);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void
test_libnftables(void **state)
{
	int st;

	(void)state;
	st = nft_add_in_child(1);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		skip();		/* not root: no namespace of our own */
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* the library as it is: its FD_SET on a high socket aborts */
	st = nft_add_in_child(0);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_below_setsize),
		cmocka_unit_test(test_number_kept_by_the_library),
		cmocka_unit_test(test_libnftables),
	};

	return cmocka_run_group_tests_name("lowfd", tests, setup, NULL);
}
