/* SPDX-License-Identifier: ISC */
/*
 * Memory pre-copy, checkpoint mode's source (mig_priv.h): while the
 * program still runs (after PREPARED, before the gate), criu pre-dump
 * --track-mem copies its memory into STATE_DIR/ckpt/outpK-NS, and those
 * images go to the destination as MIG_IMAGE pieces of pass K while the
 * program goes on.  Pass 1 takes the whole memory; each pass after it
 * (--prev-images-dir, the kernel's soft-dirty bits) only the pages
 * written since the pass before.  Passes go on while they shrink: the
 * last is the checkpoint-precopy'th, one that wrote no more than
 * PC_SMALL, or one that wrote more than half of what the one before
 * did (the program writes as fast as its memory is copied, and another
 * pass would not make the freeze shorter).  The dump in the freeze then
 * writes only what changed since the last pass (mig_ckpt.c).
 *
 * Each pre-dump stops the program for as long as CRIU needs to take
 * the pages of its tasks (the namespace's traffic is not locked; TCP
 * peers see a program that paused).  A rollback waits for a pre-dump
 * under way, as for the dump: CRIU's parasite is inside the tasks.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "ckpt_priv.h"
#include "clock.h"
#include "config.h"
#include "helper.h"
#include "log.h"
#include "mig_priv.h"
#include "migrd.h"
#include "netns.h"

#define PC_SMALL	(1024 * 1024)	/* memory a pass may leave to the dump */

/* criu pre-dump of the running tree of root into dir (after prev, a
 * path from dir, or from nothing): NULL when it worked, else the failure
 * answer.  The tasks stop together, and go on after. */
static json_t *
predump(const char *ns, pid_t root, const char *cgroup, const char *dir,
    const char *prev)
{
	struct criu_tree t;
	json_t *fail;

	if ((fail = criu_tree_argv(&t, "pre-dump", ns, root, cgroup, dir,
	    "pre-dump.log")) != NULL)
		return fail;
	criu_tree_add(&t, "--track-mem");
	if (prev != NULL) {
		criu_tree_add(&t, "--prev-images-dir");
		criu_tree_add(&t, prev);
	}
	{
		const struct criu_run r = { "pre-dump", dir, "pre-dump.log",
			criu_tree_end(&t), NULL, 0, NULL, 0, 1 };

		return run_criu(&r);
	}
}

/* In the helper: pass m->ck_pass. */
static json_t *
predump_child(void *arg)
{
	const struct mig *m = arg;
	char dir[PATH_MAX + 96], prev[PATH_MAX];
	json_t *fail;

	if (mig_fault("src-ckpt-predump"))
		return criu_fail(NULL, "fault injected: src-ckpt-predump");
	ckpt_pass_dir(dir, sizeof(dir), "out", m->ns, m->ck_pass);
	if (m->ck_pass > 1)
		ckpt_pass_rel(prev, sizeof(prev), "out", m->ns,
		    m->ck_pass - 1);
	if ((fail = predump(m->ns, m->ck_root, m->cgroup, dir,
	    m->ck_pass > 1 ? prev : NULL)) != NULL)
		return fail;
	return json_pack("{s:b}", "ok", 1);
}

int
ckpt_dry_predump(const char *ns, pid_t root, const char *cgroup, char *why,
    size_t len)
{
	char dir[PATH_MAX + 96];
	json_t *fail;

	ckpt_dir_path(dir, sizeof(dir), "check", ns);
	if (ckpt_dir_make(dir, why, len) < 0)
		return -1;
	fail = mig_fault("src-ckpt-predump") ? criu_fail(NULL, "fault "
	    "injected: src-ckpt-predump") : predump(ns, root, cgroup, dir,
	    NULL);
	ckpt_dir_remove(dir);
	if (fail == NULL)
		return 0;
	snprintf(why, len, "checkpoint mode: CRIU cannot take the program: "
	    "%s", json_string_value(json_object_get(fail, "why")));
	json_decref(fail);
	return -1;
}

static void
predumped(void *arg, json_t *a, const char *failure)
{
	struct mig *m = arg;
	struct ck_pass *p = &m->ck_passes[m->ck_pass - 1];
	struct timeval now = { 0, 0 };
	char why[512], dir[PATH_MAX + 96];

	m->ck_helper = NULL;
	p->ms = mono_ms() - m->ck_t0;
	if (!criu_answer_ok(m, a, failure, why, sizeof(why))) {
		mig_fail(m, "CRIU could not copy the memory of %s (pass %d): "
		    "%.400s", m->ns, m->ck_pass, why);
		return;
	}
	ckpt_pass_dir(dir, sizeof(dir), "out", m->ns, m->ck_pass);
	if (ckpt_list_images(m, dir, &p->bytes, &p->pages, why,
	    sizeof(why)) < 0) {
		mig_fail(m, "CRIU's images of %s (pass %d): %.400s", m->ns,
		    m->ck_pass, why);
		return;
	}
	mig_progress(m, "precopy", "pass %d: CRIU copied %llu bytes of the "
	    "memory of %s while it runs (%.1f ms)", m->ck_pass,
	    (unsigned long long)p->pages, m->ns, p->ms);
	m->ck_phase = CK_SENDING;
	m->ck_t0 = mono_ms();
	evtimer_add(m->work, &now);
}

/* Would one more pass shorten the freeze? */
static int
another_pass(const struct mig *m)
{
	const struct ck_pass *p;

	if (m->ck_pass >= (int)migrd.conf.precopy_passes ||
	    m->ck_pass >= CK_PASSES_MAX)
		return 0;
	if (m->ck_pass == 0)
		return 1;
	p = &m->ck_passes[m->ck_pass - 1];
	if (p->pages <= PC_SMALL)
		return 0;
	return m->ck_pass == 1 || p->pages * 2 <= p[-1].pages;
}

int
ckpt_precopy_step(struct mig *m)
{
	struct timeval now = { 0, 0 }, later = { 0, 2000 };
	char why[512], dir[PATH_MAX + 96];
	struct ck_pass *p;
	int rc;

	switch (m->ck_phase) {
	case CK_NONE:
		if (!another_pass(m)) {
			m->ck_precopying = 0;
			return 1;
		}
		m->ck_pass++;
		ckpt_pass_dir(dir, sizeof(dir), "out", m->ns, m->ck_pass);
		if (ckpt_dir_make(dir, why, sizeof(why)) < 0) {
			mig_fail(m, "no room for CRIU's images: %.400s", why);
			return -1;
		}
		m->ck_t0 = mono_ms();
		mig_arm_timer(m);	/* each pass has the phase's time */
		if ((m->ck_helper = helper_start("criu pre-dump",
		    CK_ANSWER_MAX, predump_child, m, predumped, m, why,
		    sizeof(why))) == NULL) {
			mig_fail(m, "cannot run CRIU: %.400s", why);
			return -1;
		}
		if (mig_fault("src-crash-predump")) {
			usleep(300000);		/* criu at work */
			log_warnx("fault injected: src-crash-predump: exiting");
			_exit(3);
		}
		m->ck_phase = CK_DUMPING;
		return 0;
	case CK_SENDING:
		ckpt_pass_dir(dir, sizeof(dir), "out", m->ns, m->ck_pass);
		if ((rc = ckpt_send_images(m, dir, m->ck_pass, why,
		    sizeof(why))) < 0) {
			mig_fail(m, "sending CRIU's images (pass %d): %.400s",
			    m->ck_pass, why);
			return -1;
		}
		mig_arm_timer(m);	/* it moves on */
		if (rc == 0) {
			evtimer_add(m->work, &later);	/* let it drain */
			return 0;
		}
		p = &m->ck_passes[m->ck_pass - 1];
		p->send_ms = mono_ms() - m->ck_t0;
		m->ck_precopy_bytes = m->ck_bytes;
		mig_progress(m, "precopy", "pass %d: %zu images sent, %llu "
		    "bytes (%.1f ms)", m->ck_pass, m->ck_nfiles,
		    (unsigned long long)p->bytes, p->send_ms);
		m->ck_phase = CK_NONE;
		evtimer_add(m->work, &now);
		return 0;
	case CK_DUMPING:
	default:
		return 0;
	}
}

json_t *
ckpt_report(const struct mig *m)
{
	const struct ck_pass *p;
	json_t *passes = json_array();
	int k;

	for (k = 0; k < m->ck_pass && passes != NULL; k++) {
		p = &m->ck_passes[k];
		json_array_append_new(passes, json_pack("{s:i,s:f,s:I,s:I,"
		    "s:f}", "pass", k + 1, "ms", mig_ms1(p->ms), "memory",
		    (json_int_t)p->pages, "bytes", (json_int_t)p->bytes,
		    "send_ms", mig_ms1(p->send_ms)));
	}
	return json_pack("{s:f,s:I,s:I,s:I,s:o*}", "dump_ms", mig_ms1(m->ck_ms),
	    "images", (json_int_t)m->ck_images, "image_bytes",
	    (json_int_t)(m->ck_bytes - m->ck_precopy_bytes), "memory",
	    (json_int_t)m->ck_pages, "precopy", passes);
}
