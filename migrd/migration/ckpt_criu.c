/* SPDX-License-Identifier: ISC */
/*
 * criu, run from a helper process (helper.h) of a migration, or for
 * "migctl check": waited for, its standard streams on /dev/null, the
 * descriptors it inherits at 3, 4, ...; a failure's answer names the
 * first error line of CRIU's log and keeps the whole log in
 * STATE_DIR/criu-WHAT.log (ckpt_priv.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "ckpt_priv.h"
#include "config.h"
#include "log.h"
#include "mig_priv.h"
#include "migrd.h"
#include "netns.h"

json_t *
criu_fail(json_t *log, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return json_pack("{s:b,s:s,s:o}", "ok", 0, "why", why, "log",
	    log != NULL ? log : json_array());
}

/* The lines of CRIU's log that report an error, but the summary
 * ("Dumping FAILED."), at most CK_LOG_LINES of the last ones; the first
 * (the cause: those after it are mostly its consequences) in first. */
static json_t *
criu_errors(const char *path, char *first, size_t firstlen)
{
	char line[512];
	json_t *a = json_array();
	FILE *f;

	first[0] = '\0';
	if (a == NULL || (f = fopen(path, "re")) == NULL)
		return a;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "Error (") == NULL ||
		    strstr(line, "FAILED") != NULL)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (first[0] == '\0')
			snprintf(first, firstlen, "%s", line);
		if (json_array_size(a) == CK_LOG_LINES)
			json_array_remove(a, 0);
		json_array_append_new(a, json_string(line));
	}
	fclose(f);
	return a;
}

/* CRIU's whole log of a failure, kept where an operator finds it:
 * STATE_DIR/criu-WHAT.log (the images go, this stays until the next). */
static void
keep_log(const char *from, const char *to)
{
	char buf[16384];
	int in, out;
	ssize_t n;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if ((out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) >= 0) {
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
		close(out);
	}
	close(in);
}

json_t *
run_criu(const struct criu_run *r)
{
	int status, i, tmp[4], devnull;
	pid_t pid;

	if ((pid = fork()) < 0)
		return criu_fail(NULL, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (!r->outlive)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (r->cgroup != NULL && cgroup_enter(r->cgroup, 0, NULL, 0) < 0)
			_exit(125);
		/* out of the way of 3.., then into place */
		for (i = 0; i < r->nfds && i < 4; i++)
			if ((tmp[i] = fcntl(r->fds[i], F_DUPFD, 1024)) < 0)
				_exit(125);
		for (i = 0; i < r->nfds && i < 4; i++)
			if (dup2(tmp[i], 3 + i) < 0)
				_exit(125);
		if ((devnull = open("/dev/null", O_RDWR)) < 0 ||
		    dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 ||
		    dup2(devnull, 2) < 0)
			_exit(125);
		if (syscall(SYS_close_range, 3 + r->nfds, ~0U, 0) < 0 ||
		    chdir("/") < 0 ||
		    (r->nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0))
			_exit(125);
		execvp("criu", (char *const *)r->argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return criu_fail(NULL, "waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return NULL;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return criu_fail(NULL, "criu is not installed here (Debian's "
		    "criu package)");
	{
		char log[PATH_MAX + 64], kept[PATH_MAX + 32], first[512];
		json_t *errs;

		snprintf(log, sizeof(log), "%s/%s", r->dir, r->logname);
		snprintf(kept, sizeof(kept), "%s/criu-%s.log",
		    migrd.conf.state_dir, r->what);
		keep_log(log, kept);
		errs = criu_errors(log, first, sizeof(first));
		return criu_fail(errs, "criu %s failed (%s %d)%s%s; its log: "
		    "%s", r->what, WIFEXITED(status) ? "status" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		    first[0] ? ": " : "", first, kept);
	}
}

json_t *
criu_tree_argv(struct criu_tree *t, const char *verb, const char *ns,
    pid_t root, const char *cgroup, const char *dir, const char *logname)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, ns);
	if (stat(path, &st) < 0)
		return criu_fail(NULL, "%s: %s", path, strerror(errno));
	snprintf(t->tree, sizeof(t->tree), "%ld", (long)root);
	snprintf(t->ext, sizeof(t->ext), "net[%lu]:" CK_NET_KEY,
	    (unsigned long)st.st_ino);
	t->n = 0;
	criu_tree_add(t, "criu");
	criu_tree_add(t, verb);
	criu_tree_add(t, "--tree");
	criu_tree_add(t, t->tree);
	criu_tree_add(t, "--images-dir");
	criu_tree_add(t, dir);
	criu_tree_add(t, "--log-file");
	criu_tree_add(t, logname);
	criu_tree_add(t, "-v2");
	criu_tree_add(t, "--freeze-cgroup");
	criu_tree_add(t, cgroup);
	criu_tree_add(t, "--tcp-close");
	criu_tree_add(t, "--external");
	criu_tree_add(t, "mnt[]");
	criu_tree_add(t, "--external");
	criu_tree_add(t, t->ext);
	return NULL;
}

void
criu_tree_add(struct criu_tree *t, const char *arg)
{
	/* the callers' options are few and fixed: room is a bug */
	if (t->n < (int)(sizeof(t->argv) / sizeof(t->argv[0])) - 1)
		t->argv[t->n++] = arg;
}

const char *const *
criu_tree_end(struct criu_tree *t)
{
	t->argv[t->n] = NULL;
	return t->argv;
}

int
criu_answer_ok(const struct mig *m, json_t *a, const char *failure, char *why,
    size_t len)
{
	const char *w = NULL;
	json_t *line;
	size_t i;
	int ok = 0;

	if (failure != NULL) {
		snprintf(why, len, "%s", failure);
		return 0;
	}
	if (json_unpack(a, "{s:b,s?s}", "ok", &ok, "why", &w) == -1) {
		snprintf(why, len, "its answer makes no sense");
		return 0;
	}
	json_array_foreach(json_object_get(a, "log"), i, line)
		log_warnx("migration %s: criu: %s", m->id,
		    json_string_value(line) ? json_string_value(line) : "?");
	if (!ok)
		snprintf(why, len, "%s", w ? w : "failed");
	return ok;
}

int
ckpt_criu_check(char *why, size_t len)
{
	char log[PATH_MAX + 32];
	const char *const argv[] = {
		"criu", "check", "--log-file", log, "-v2", NULL
	};
	const struct criu_run r = { "check", migrd.conf.state_dir,
		"criu-check.out", argv, NULL, 0, NULL, 0, 0 };
	json_t *fail;

	/* its log, written where run_criu() looks, kept if it failed */
	snprintf(log, sizeof(log), "%s/criu-check.out", migrd.conf.state_dir);
	fail = run_criu(&r);
	unlink(log);
	if (fail == NULL)
		return 0;
	snprintf(why, len, "checkpoint mode: %s",
	    json_string_value(json_object_get(fail, "why")));
	json_decref(fail);
	return -1;
}

int
criu_present(void)
{
	char path[PATH_MAX], *dirs, *d, *save = NULL;
	const char *env = getenv("PATH");
	int found = 0;

	if ((dirs = strdup(env ? env : "/usr/sbin:/usr/bin:/sbin:/bin")) ==
	    NULL)
		return 0;
	for (d = strtok_r(dirs, ":", &save); d && !found;
	    d = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/criu", d);
		found = access(path, X_OK) == 0;
	}
	free(dirs);
	return found;
}

