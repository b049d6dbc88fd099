/* SPDX-License-Identifier: ISC */
/*
 * migsrc_check() in a child process (srccheck.h), through helper.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper.h"
#include "log.h"
#include "mig_priv.h"
#include "migrd.h"
#include "migsrc.h"
#include "ns.h"
#include "srccheck.h"

/* The verdict's JSON: every reason of thousands of sockets fits. */
#define SRCCHECK_OUT_MAX	(4 * 1024 * 1024)

struct srccheck {
	struct helper		*h;
	char			 ns[64];
	char			 cgroup[PATH_MAX];
	unsigned		 flags;		/* SRCCHECK_* */
	srccheck_done_fn	*done;
	void			*arg;
};

/* In the helper's process: look, and answer. */
static json_t *
child(void *arg)
{
	const struct srccheck *c = arg;
	char why[4096], one[600];
	json_t *reasons;
	pid_t root;
	int n;

	if ((reasons = json_array()) == NULL)
		return NULL;
	if (mig_fault("src-check-die"))
		_exit(1);
	if (mig_fault("src-check-slow"))
		sleep(15);
	root = ns_workload_ckpt(c->ns);
	n = migsrc_check(c->ns, c->cgroup, root > 0 ? MIGSRC_CKPT : 0, why,
	    sizeof(why), reasons);
	/* checkpoint mode: can CRIU work on this host at all, and take
	 * this program? */
	if (root > 0 && (ckpt_criu_check(one, sizeof(one)) < 0 ||
	    ((c->flags & SRCCHECK_DRY_DUMP) && ckpt_dry_predump(c->ns, root,
	    c->cgroup, one, sizeof(one)) < 0))) {
		json_array_append_new(reasons, json_string(one));
		if (n >= 0)
			snprintf(why, sizeof(why), "%s", one);
		n = -1;
	}
	return json_pack("{s:i,s:s,s:o}", "n", n, "why", why, "reasons",
	    reasons);
}

/* The answer, or a failure to get one: tell the owner. */
static void
finish(void *arg, json_t *o, const char *failure)
{
	struct srccheck *c = arg;
	srccheck_done_fn *done = c->done;
	void *darg = c->arg;
	const char *why = "";
	json_t *reasons = NULL, *one;
	char text[200];
	int n = -1;

	free(c);
	if (failure == NULL && (json_unpack(o, "{s:i,s:s,s:o}", "n", &n,
	    "why", &why, "reasons", &reasons) == -1 ||
	    !json_is_array(reasons))) {
		failure = "the check's process ended before it answered";
		n = -1;
	}
	if (failure != NULL) {
		snprintf(text, sizeof(text), "%s%s", strncmp(failure, "the ",
		    4) == 0 ? "" : "the check: ", failure);
		one = json_pack("[s]", text);
		done(darg, -1, text, one);
		json_decref(one);
		return;
	}
	done(darg, n, why, reasons);
}

struct srccheck *
srccheck_start(const char *ns, const char *cgroup, unsigned flags,
    srccheck_done_fn *done, void *arg, char *why, size_t len)
{
	struct srccheck *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	snprintf(c->ns, sizeof(c->ns), "%s", ns);
	snprintf(c->cgroup, sizeof(c->cgroup), "%s", cgroup);
	c->flags = flags;
	c->done = done;
	c->arg = arg;
	if ((c->h = helper_start("check", SRCCHECK_OUT_MAX, child, c, finish,
	    c, why, len)) == NULL) {
		free(c);
		return NULL;
	}
	log_debug("check of %s: pid %ld", ns, (long)helper_pid(c->h));
	return c;
}

void
srccheck_cancel(struct srccheck *c)
{
	if (c == NULL)
		return;
	helper_cancel(c->h);
	free(c);
}
