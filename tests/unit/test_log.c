/* SPDX-License-Identifier: ISC */
/* Unit tests for common/log.c: messages reach the sink with the right
 * priority and text, errno survives every call, log_debug obeys the
 * verbosity, and a stderr that journald reads gets "<prio>" prefixes
 * instead of the program's name. */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <syslog.h>
#include <cmocka.h>

#include "log.h"

struct captured {
	int	prio;
	int	count;
	char	msg[2048];
};

static void
capture(int prio, const char *msg, void *arg)
{
	struct captured *c = arg;

	c->prio = prio;
	c->count++;
	strncpy(c->msg, msg, sizeof(c->msg) - 1);
}

static int
setup(void **state)
{
	static struct captured c;

	memset(&c, 0, sizeof(c));
	log_set_sink(capture, &c);
	log_setverbose(0);
	*state = &c;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	log_set_sink(NULL, NULL);
	return 0;
}

static void
test_warn_appends_strerror_and_keeps_errno(void **state)
{
	struct captured *c = *state;

	errno = ENOENT;
	log_warn("%s: open %s", "f", "/x");
	assert_int_equal(errno, ENOENT);
	assert_string_equal(c->msg, "f: open /x: No such file or directory");
	assert_int_equal(c->prio, LOG_ERR);
}

static void
test_warnx_has_no_errno_text(void **state)
{
	struct captured *c = *state;

	errno = EPERM;
	log_warnx("bad value %d", 7);
	assert_int_equal(errno, EPERM);
	assert_string_equal(c->msg, "bad value 7");
}

static void
test_info_priority(void **state)
{
	struct captured *c = *state;

	log_info("hello");
	assert_int_equal(c->prio, LOG_INFO);
	assert_int_equal(c->count, 1);
}

static void
test_debug_needs_verbose(void **state)
{
	struct captured *c = *state;

	log_debug("quiet");
	assert_int_equal(c->count, 0);
	log_setverbose(1);
	log_debug("loud %s", "now");
	assert_int_equal(c->count, 1);
	assert_string_equal(c->msg, "loud now");
	assert_int_equal(c->prio, LOG_DEBUG);
}

static void
test_long_message_is_truncated_not_overflowed(void **state)
{
	struct captured *c = *state;
	char big[5000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_warnx("%s", big);
	assert_int_equal(strlen(c->msg), 2047);
}

/* Log to stderr redirected into a file; return what was written. */
static void
log_to_file(const char *journal_env, char *out, size_t outlen)
{
	char path[] = "/tmp/test_log.XXXXXX", env[64];
	struct stat st;
	int fd, saved;
	ssize_t n;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(fstat(fd, &st), 0);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	if (journal_env == NULL)
		unsetenv("JOURNAL_STREAM");
	else {
		/* "match": the file itself; anything else as given */
		if (strcmp(journal_env, "match") == 0)
			snprintf(env, sizeof(env), "%llu:%llu",
			    (unsigned long long)st.st_dev,
			    (unsigned long long)st.st_ino);
		else
			snprintf(env, sizeof(env), "%s", journal_env);
		setenv("JOURNAL_STREAM", env, 1);
	}
	log_set_sink(NULL, NULL);
	log_procinit("tlog");
	log_init(LOG_TO_STDERR, 0, 0);
	log_warnx("broken %d", 1);
	log_info("fine");
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = pread(fd, out, outlen - 1, 0);
	assert_true(n >= 0);
	out[n] = '\0';
	close(fd);
	unsetenv("JOURNAL_STREAM");
	log_init(LOG_TO_STDERR, 0, 0);
}

static void
test_journal_stream_gets_priorities(void **state)
{
	char out[256];

	(void)state;
	log_to_file("match", out, sizeof(out));
	assert_string_equal(out, "<3>broken 1\n<6>fine\n");
}

static void
test_plain_stderr_gets_the_name(void **state)
{
	char out[256];

	(void)state;
	log_to_file(NULL, out, sizeof(out));
	assert_string_equal(out, "tlog: broken 1\ntlog: fine\n");
	/* a JOURNAL_STREAM that is some other stream (a child of a
	 * service writing to a file) is not ours */
	log_to_file("1:2", out, sizeof(out));
	assert_string_equal(out, "tlog: broken 1\ntlog: fine\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_warn_appends_strerror_and_keeps_errno, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warnx_has_no_errno_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_info_priority, setup, teardown),
		cmocka_unit_test_setup_teardown(test_debug_needs_verbose, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_message_is_truncated_not_overflowed, setup, teardown),
		cmocka_unit_test(test_journal_stream_gets_priorities),
		cmocka_unit_test(test_plain_stderr_gets_the_name),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
