/* SPDX-License-Identifier: ISC */
/*
 * credcheck (common/ckpt): a restored tree may run only as local policy
 * says.  Children stand for restored tasks, stopped before they run:
 * one fit (uid and gid 65534 throughout, no other group, no capability,
 * NoNewPrivs), and one unfit in each way a peer's image could make it
 * (root; a gid of 0; an extra group; NoNewPrivs unset).  Each unfit one
 * is refused with its reason; the fit one passes; a tree passes only if
 * every task below its root is fit too.  Needs root (to make the
 * children); skipped otherwise.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "credcheck.h"

#define NOBODY	65534

enum how { FIT, ROOT, GID0, EXTRA_GROUP, NO_NNP, NET_ADMIN };

#define NET_ADMIN_BIT	(1ULL << 12)	/* CAP_NET_ADMIN */

/* CAP_NET_ADMIN alone, permitted and effective, as a workload given
 * workload-capabilities cap_net_admin has it */
static int
keep_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = (uint32_t)NET_ADMIN_BIT;
	return (int)syscall(SYS_capset, &hdr, d);
}

static pid_t
child(enum how how)
{
	gid_t extra[2] = { NOBODY, 100 };
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		int ok = 1;

		close(p[0]);
		if (how != ROOT) {
			ok = (how == EXTRA_GROUP ? setgroups(2, extra) :
			    setgroups(0, NULL)) == 0 &&
			    setresgid(how == GID0 ? 0 : NOBODY, how == GID0 ?
			    0 : NOBODY, how == GID0 ? 0 : NOBODY) == 0 &&
			    (how != NET_ADMIN || prctl(PR_SET_KEEPCAPS, 1, 0, 0,
			    0) == 0) &&
			    setresuid(NOBODY, NOBODY, NOBODY) == 0 &&
			    (how != NET_ADMIN || keep_net_admin() == 0) &&
			    (how == NO_NNP ||
			    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
		}
		/* dies with the test, whatever fails there (after the
		 * credentials change, which clears it) */
		ok = ok && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0;
		if (write(p[1], ok ? "y" : "n", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	assert_true(pid > 0);
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_int_equal(c, 'y');
	return pid;
}

static void
reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static void
refused(enum how how, const char *why)
{
	char err[256] = "";
	pid_t pid = child(how);
	int rc;

	rc = credcheck_task(pid, NOBODY, NOBODY, 0, err, sizeof(err));
	reap(pid);
	assert_int_equal(rc, -1);
	if (strstr(err, why) == NULL)
		fail_msg("wanted '%s' in '%s'", why, err);
}

static int
need_root(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	return 0;
}

static void
test_fit_task_passes(void **state)
{
	char err[256] = "";
	pid_t pid;

	need_root(state);
	pid = child(FIT);
	if (credcheck_task(pid, NOBODY, NOBODY, 0, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	/* fit for this user, not for another */
	assert_int_equal(credcheck_task(pid, 1000, 1000, 0, err, sizeof(err)),
	    -1);
	reap(pid);
}

static void
test_unfit_tasks_refused(void **state)
{
	need_root(state);
	refused(ROOT, "uids 0");
	refused(GID0, "gids 0");
	refused(EXTRA_GROUP, "supplementary groups");
	refused(NO_NNP, "NoNewPrivs not set");
	refused(NET_ADMIN, "CapPrm capabilities 0000000000001000 beyond");
}

/* the capabilities local policy gives its workloads are allowed */
static void
test_allowed_caps_pass(void **state)
{
	char err[256] = "";
	pid_t pid;

	need_root(state);
	pid = child(NET_ADMIN);
	if (credcheck_task(pid, NOBODY, NOBODY, NET_ADMIN_BIT, err,
	    sizeof(err)) < 0)
		fail_msg("%s", err);
	reap(pid);
}

/*
 * A tree: a root child forks a grandchild that stays root, then drops
 * its own privileges: fit itself, refused for what is below it.  A fit
 * child with a fit grandchild passes.
 */
struct tree {
	pid_t	root, below;
};

static struct tree
tree(int grandchild_fit)
{
	struct tree t;
	int p[2];
	char c;

	assert_int_equal(pipe(p), 0);
	if ((t.root = fork()) == 0) {
		int ok;

		close(p[0]);
		if ((t.below = fork()) == 0) {
			if (grandchild_fit)
				(void)(setgroups(0, NULL) + setresgid(NOBODY,
				    NOBODY, NOBODY) + setresuid(NOBODY,
				    NOBODY, NOBODY) + prctl(PR_SET_NO_NEW_PRIVS,
				    1, 0, 0, 0));
			for (;;)
				pause();
		}
		ok = t.below > 0 && setgroups(0, NULL) == 0 &&
		    setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
		    setresuid(NOBODY, NOBODY, NOBODY) == 0 &&
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
		usleep(100000);		/* the grandchild is set */
		if (write(p[1], &t.below, sizeof(t.below)) !=
		    (ssize_t)sizeof(t.below) || write(p[1], ok ? "y" : "n",
		    1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	assert_true(t.root > 0);
	close(p[1]);
	assert_int_equal(read(p[0], &t.below, sizeof(t.below)),
	    sizeof(t.below));
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	if (c != 'y') {
		kill(t.below, SIGKILL);
		reap(t.root);
		fail_msg("the tree could not be made");
	}
	return t;
}

static void
tree_end(struct tree t)
{
	kill(t.below, SIGKILL);
	reap(t.root);
}

static void
test_tree(void **state)
{
	char err[256] = "";
	struct tree t;
	int rc, top;

	need_root(state);
	t = tree(1);
	rc = credcheck_tree(t.root, NOBODY, NOBODY, 0, err, sizeof(err));
	tree_end(t);
	if (rc < 0)
		fail_msg("a fit tree: %s", err);
	t = tree(0);
	top = credcheck_task(t.root, NOBODY, NOBODY, 0, err, sizeof(err));
	rc = credcheck_tree(t.root, NOBODY, NOBODY, 0, err, sizeof(err));
	tree_end(t);
	assert_int_equal(top, 0);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err, "uids 0"));
	/* a task that is gone is not fit either */
	assert_int_equal(credcheck_tree(t.root, NOBODY, NOBODY, 0, err,
	    sizeof(err)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_task_passes),
		cmocka_unit_test(test_unfit_tasks_refused),
		cmocka_unit_test(test_allowed_caps_pass),
		cmocka_unit_test(test_tree),
	};

	return cmocka_run_group_tests_name("credcheck", tests, NULL, NULL);
}
