/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for migrd/fdpass.c, the messages between migrd and its TLS
 * process: a message and its descriptor arrive together and the
 * descriptor works; a message of the wrong size is refused (EBADMSG)
 * and a descriptor that came with it is closed, not leaked; a closed
 * channel reads 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "fdpass.h"
#include "tlsd.h"

static int sv[2];

static int
setup(void **state)
{
	(void)state;
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
}

static int
teardown(void **state)
{
	(void)state;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* how many descriptors this process has open */
static int
open_fds(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			n++;
	return n;
}

static void
test_message_and_descriptor(void **state)
{
	struct tlsd_msg out = { .type = TLSD_UP, .id = 7, .names = 5 }, in;
	int p[2], fd;
	char c = 0;

	(void)state;
	snprintf(out.version, sizeof(out.version), "TLSv1.3");
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fdpass_send(sv[0], &out, sizeof(out), p[1], 0),
	    (ssize_t)sizeof(out));
	close(p[1]);
	assert_int_equal(fdpass_recv(sv[1], &in, sizeof(in), &fd, 0),
	    (ssize_t)sizeof(in));
	assert_int_equal(in.type, TLSD_UP);
	assert_int_equal(in.id, 7);
	assert_int_equal(in.names, 5);
	assert_string_equal(in.version, "TLSv1.3");
	assert_int_not_equal(fd, -1);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	/* the descriptor is the pipe's write end */
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fd);
	close(p[0]);
}

static void
test_without_descriptor(void **state)
{
	struct tlsd_msg out = { .type = TLSD_FAIL, .id = 9 }, in;
	int fd;

	(void)state;
	assert_int_equal(fdpass_send(sv[0], &out, sizeof(out), -1, 0),
	    (ssize_t)sizeof(out));
	assert_int_equal(fdpass_recv(sv[1], &in, sizeof(in), &fd, 0),
	    (ssize_t)sizeof(in));
	assert_int_equal(fd, -1);
	assert_int_equal(in.id, 9);
}

static void
test_wrong_size_refused_fd_closed(void **state)
{
	struct tlsd_msg in;
	char small[10] = "short";
	int p[2], fd, before;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fdpass_send(sv[0], small, sizeof(small), p[1], 0),
	    (ssize_t)sizeof(small));
	close(p[1]);
	before = open_fds();
	errno = 0;
	assert_int_equal(fdpass_recv(sv[1], &in, sizeof(in), &fd, 0), -1);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(fd, -1);
	assert_int_equal(open_fds(), before);	/* closed, not leaked */
	close(p[0]);
}

static void
test_closed_channel_reads_zero(void **state)
{
	struct tlsd_msg in;
	int fd;

	(void)state;
	close(sv[0]);
	assert_int_equal(fdpass_recv(sv[1], &in, sizeof(in), &fd, 0), 0);
	assert_int_equal(fd, -1);
	sv[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);	/* teardown */
}

static void
test_nothing_yet(void **state)
{
	struct tlsd_msg in;
	int fd;

	(void)state;
	errno = 0;
	assert_int_equal(fdpass_recv(sv[1], &in, sizeof(in), &fd,
	    MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fd, -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_message_and_descriptor,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_without_descriptor,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_wrong_size_refused_fd_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_closed_channel_reads_zero,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_yet, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
