/* SPDX-License-Identifier: ISC */
/* Unit tests for migrd/listener.c: accepted sockets are CLOEXEC and
 * NONBLOCK, and when descriptors run out (EMFILE) accepting pauses for a
 * second instead of spinning, then resumes by itself. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "listener.h"
#include "log.h"

struct ctx {
	int	accepted;
	int	flags_ok;
	int	fds[8];
};

static void
on_accept(int fd, struct sockaddr *sa, socklen_t len, void *arg)
{
	struct ctx *c = arg;

	(void)sa;
	(void)len;
	if ((fcntl(fd, F_GETFD) & FD_CLOEXEC) &&
	    (fcntl(fd, F_GETFL) & O_NONBLOCK))
		c->flags_ok++;
	c->fds[c->accepted++ % 8] = fd;
}

static int warnings;

static void
count_warn(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)arg;
	if (strstr(msg, "pausing") != NULL)
		warnings++;
}

static int
listening_socket(struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	/* abstract name: nothing to clean up */
	snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
	    "migr-test-listener-%ld", (long)getpid());
	assert_int_equal(bind(fd, (struct sockaddr *)sun, sizeof(*sun)), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

static int
client(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)sun,
	    sizeof(*sun)), 0);
	return fd;
}

static void
test_accepts_with_flags(void **state)
{
	struct event_base *base = event_base_new();
	struct sockaddr_un sun;
	struct ctx c = { 0 };
	struct listener *l;
	int c1, c2;

	(void)state;
	l = listener_new(base, listening_socket(&sun), on_accept, &c);
	assert_non_null(l);
	c1 = client(&sun);
	c2 = client(&sun);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(c.accepted, 2);
	assert_int_equal(c.flags_ok, 2);
	close(c.fds[0]);
	close(c.fds[1]);
	close(c1);
	close(c2);
	listener_free(l);
	event_base_free(base);
}

static void
test_emfile_pauses(void **state)
{
	struct event_base *base = event_base_new();
	struct sockaddr_un sun;
	struct ctx c = { 0 };
	struct listener *l;
	struct rlimit old, low;
	struct timeval half = { 0, 500000 }, two = { 1, 600000 };
	int cl, lfd, probe;

	(void)state;
	log_set_sink(count_warn, NULL);
	lfd = listening_socket(&sun);
	l = listener_new(base, lfd, on_accept, &c);
	assert_non_null(l);
	cl = client(&sun);
	/* no descriptor left above the ones in use */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	probe = dup(0);
	assert_true(probe >= 0);
	close(probe);
	low = old;
	low.rlim_cur = (rlim_t)probe;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);

	/* half a second of loop: one EMFILE, then paused (no spinning) */
	event_base_loopexit(base, &half);
	event_base_dispatch(base);
	assert_int_equal(c.accepted, 0);
	assert_int_equal(warnings, 1);

	/* descriptors back: the pending client is accepted after ~1 s */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	event_base_loopexit(base, &two);
	event_base_dispatch(base);
	assert_int_equal(c.accepted, 1);
	assert_int_equal(warnings, 1);
	close(c.fds[0]);
	close(cl);
	listener_free(l);
	event_base_free(base);
	log_set_sink(NULL, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_with_flags),
		cmocka_unit_test(test_emfile_pauses),
	};

	return cmocka_run_group_tests_name("listener", tests, NULL, NULL);
}
