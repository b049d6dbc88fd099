/* SPDX-License-Identifier: ISC */
/*
 * Checkpoint mode's steps in a migration (mig_priv.h).  The engine moves
 * the sockets as in light mode; CRIU moves the program:
 *
 *   source       once every socket is dumped (the tasks frozen, their
 *                sockets in repair, the namespace locked): criu dump
 *                --tcp-close --leave-stopped in a helper process, then
 *                its images as MIG_IMAGE messages, then DUMP_DONE
 *   destination  the images into a folder of its own, within the peer's
 *                "allow checkpoint" budget; at DUMP_DONE criu restore
 *                --leave-stopped in the rebuilt, still locked namespace,
 *                every restored task checked against local policy
 *                (credcheck), the engine's sockets put at the numbers
 *                the tasks held them (fdput), then READY; going live,
 *                once the sockets left repair, SIGCONT
 *
 * A rollback on the source sends SIGCONT after the thaw; a destination
 * that discards kills the stopped tree with the namespace's cgroup.
 * The images are deleted either way.  docs/design.md tells why it is
 * built so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

#include <event2/event.h>

#include "cgroup.h"
#include "ckpt_priv.h"
#include "clock.h"
#include "config.h"
#include "credcheck.h"
#include "fdput.h"
#include "filecheck.h"
#include "helper.h"
#include "imgdir.h"
#include "launch.h"
#include "log.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "netns.h"
#include "ns.h"
#include "peer.h"
#include "policy.h"
#include "sk_b64.h"

void
ckpt_cleanup(struct mig *m)
{
	int k;

	/* a dump is not cut short: killing CRIU with its parasite inside
	 * a task would kill that task too */
	if (m->role == MIG_SOURCE)
		helper_finish(m->ck_helper, CK_DUMP_WAIT_MS);
	else
		helper_cancel(m->ck_helper);
	m->ck_helper = NULL;
	free(m->ck_files);
	m->ck_files = NULL;
	m->ck_nfiles = m->ck_file = 0;
	free(m->ck_nspids);
	m->ck_nspids = NULL;
	m->ck_nnspids = 0;
	free(m->ck_holders);
	m->ck_holders = NULL;
	m->ck_nholders = m->ck_capholders = 0;
	while (m->ck_nudp > 0)
		sk_state_free(m->ck_udp[--m->ck_nudp]);
	free(m->ck_udp);
	m->ck_udp = NULL;
	m->ck_capudp = 0;
	if (m->ck_rx_open) {
		imgdir_rx_discard(&m->ck_rx);
		m->ck_rx_open = 0;
	}
	if (m->ck_dir[0] != '\0')
		ckpt_dir_remove(m->ck_dir);
	m->ck_dir[0] = '\0';
	/* and the passes of pre-copy (their figures stay, for the report) */
	for (k = m->ck_pass; k > 0; k--) {
		char dir[PATH_MAX + 96];

		ckpt_pass_dir(dir, sizeof(dir), m->role == MIG_SOURCE ?
		    "out" : "in", m->ns, k);
		ckpt_dir_remove(dir);
	}
	m->ck_precopying = 0;
}

/* --- a task's view ----------------------------------------------------- */

pid_t
ckpt_nspid(pid_t pid)
{
	char path[64], line[256], *p, *end;
	pid_t v = -1;
	long x;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		for (p = line + 6;; p = end) {
			x = strtol(p, &end, 10);
			if (end == p)
				break;
			v = (pid_t)x;
		}
		break;
	}
	fclose(f);
	return v;
}

/*
 * ckpt_nspid(), each task read once a migration: the dump asks it for
 * every socket, inside the freeze window, and a program holds thousands
 * of sockets in a handful of tasks.
 */
static pid_t
nspid_cached(struct mig *m, pid_t pid)
{
	struct ck_nspid *n;
	size_t i;

	for (i = 0; i < m->ck_nnspids; i++)
		if (m->ck_nspids[i].pid == pid)
			return m->ck_nspids[i].nspid;
	if ((n = reallocarray(m->ck_nspids, m->ck_nnspids + 1,
	    sizeof(*n))) == NULL)
		return ckpt_nspid(pid);
	m->ck_nspids = n;
	n[m->ck_nnspids].pid = pid;
	return n[m->ck_nnspids++].nspid = ckpt_nspid(pid);
}

/* "pipe:[INO]" if pid's standard output is a pipe (its log keeper's),
 * else "". */
static void
stdout_name(pid_t pid, char *buf, size_t len)
{
	char path[64], link[32];
	ssize_t n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/fd/1", (long)pid);
	if ((n = readlink(path, link, sizeof(link) - 1)) <= 0)
		return;
	link[n] = '\0';
	if (strncmp(link, "pipe:[", 6) == 0)
		snprintf(buf, len, "%s", link);
}

json_t *
ckpt_workload_json(const char *ns, json_t *argv)
{
	char out[32];
	pid_t root;

	if (argv == NULL)
		return NULL;
	if ((root = ns_workload_ckpt(ns)) <= 0)
		return json_pack("{s:O}", "argv", argv);
	stdout_name(root, out, sizeof(out));
	return json_pack("{s:O,s:{s:s}}", "argv", argv, "checkpoint",
	    "stdout", out);
}

/* --- source ------------------------------------------------------------- */

int
ckpt_src_precheck(struct mig *m, char *why, size_t len)
{
	const struct collect_set *set = &m->src.set;
	struct tcp_info ti;
	socklen_t sl;
	size_t i;

	for (i = 0; i < set->nsocks; i++) {
		const struct collect_sock *cs = &set->socks[i];

		/* only a listener can have anything waiting */
		sl = sizeof(ti);
		memset(&ti, 0, sizeof(ti));
		if (getsockopt(cs->fd, IPPROTO_TCP, TCP_INFO, &ti, &sl) == 0 &&
		    ti.tcpi_state == TCP_LISTEN && ti.tcpi_unacked > 0) {
			snprintf(why, len, "pid %d fd %d: %u connection(s) "
			    "wait to be accepted, and the listener CRIU "
			    "restores cannot take them over: try again",
			    (int)cs->users[0].pid, cs->users[0].fd,
			    ti.tcpi_unacked);
			return -1;
		}
	}
	return 0;
}

json_t *
ckpt_src_holders(struct mig *m)
{
	const struct migsrc_item *it;
	json_t *a;
	size_t i;
	pid_t nsp;

	if (!m->ck || m->src.nitems == 0)
		return NULL;
	/* the item the engine just dumped (migsrc.h: no accepted ones
	 * follow a listener in checkpoint mode, ckpt_src_precheck()) */
	it = &m->src.items[m->src.nitems - 1];
	if (it->cs == NULL || (a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < it->cs->nusers && i < CK_HOLDERS_MAX; i++)
		if ((nsp = nspid_cached(m, it->cs->users[i].pid)) > 0)
			json_array_append_new(a, json_pack("[i,i]", (int)nsp,
			    it->cs->users[i].fd));
	return a;
}

/* In the helper: criu dump of the frozen tree. */
static json_t *
src_dump_child(void *arg)
{
	const struct mig *m = arg;
	struct criu_tree t;
	char prev[PATH_MAX];
	json_t *fail;

	/* frozen by us already */
	if ((fail = criu_tree_argv(&t, "dump", m->ns, m->ck_root, m->cgroup,
	    m->ck_dir, "dump.log")) != NULL)
		return fail;
	criu_tree_add(&t, "--network-lock");
	criu_tree_add(&t, "nftables");
	/* for a rollback; a commit kills them */
	criu_tree_add(&t, "--leave-stopped");
	/* after pre-copy: only the pages written since its last pass */
	if (m->ck_pass > 0) {
		ckpt_pass_rel(prev, sizeof(prev), "out", m->ns, m->ck_pass);
		criu_tree_add(&t, "--track-mem");
		criu_tree_add(&t, "--prev-images-dir");
		criu_tree_add(&t, prev);
	}
	{
		const struct criu_run r = { "dump", m->ck_dir, "dump.log",
			criu_tree_end(&t), NULL, 0, NULL, 0, 1 };

		if (mig_fault("src-ckpt-dump"))
			return criu_fail(NULL, "fault injected: "
			    "src-ckpt-dump");
		if ((fail = run_criu(&r)) != NULL)
			return fail;
	}
	return json_pack("{s:b}", "ok", 1);
}

static void
src_dumped(void *arg, json_t *a, const char *failure)
{
	struct mig *m = arg;
	struct timeval now = { 0, 0 };
	uint64_t bytes, pages;
	char why[512];

	m->ck_helper = NULL;
	m->ck_ms = mono_ms() - m->ck_ms;
	if (!criu_answer_ok(m, a, failure, why, sizeof(why))) {
		mig_fail(m, "CRIU could not dump the program of %s: %.400s",
		    m->ns, why);
		return;
	}
	if (ckpt_list_images(m, m->ck_dir, &bytes, &pages, why,
	    sizeof(why)) < 0) {
		mig_fail(m, "CRIU's images of %s: %.400s", m->ns, why);
		return;
	}
	m->ck_images = m->ck_nfiles;
	m->ck_pages = pages;
	mig_progress(m, "checkpoint", "CRIU dumped pid %ld of %s: %zu "
	    "images, %llu bytes, %llu of them memory (%.1f ms)",
	    (long)m->ck_root, m->ns, m->ck_nfiles, (unsigned long long)bytes,
	    (unsigned long long)pages, m->ck_ms);
	m->ck_phase = CK_SENDING;
	evtimer_add(m->work, &now);
}

int
ckpt_list_images(struct mig *m, const char *dir, uint64_t *bytes,
    uint64_t *pages, char *why, size_t len)
{
	char link[PATH_MAX + 16];
	size_t i;

	/* CRIU's link to the pass before: the destination makes its own
	 * (a peer sends files, never links) */
	snprintf(link, sizeof(link), "%s/parent", dir);
	if (unlink(link) < 0 && errno != ENOENT) {
		snprintf(why, len, "%s: %s", link, strerror(errno));
		return -1;
	}
	free(m->ck_files);
	m->ck_files = NULL;
	m->ck_nfiles = m->ck_file = 0;
	m->ck_off = 0;
	if (imgdir_list(dir, CK_FILES_MAX, &m->ck_files, &m->ck_nfiles, why,
	    len) < 0)
		return -1;
	*bytes = *pages = 0;
	for (i = 0; i < m->ck_nfiles; i++) {
		*bytes += m->ck_files[i].size;
		if (strncmp(m->ck_files[i].name, "pages-", 6) == 0)
			*pages += m->ck_files[i].size;
	}
	m->ck_list_bytes = *bytes;
	m->ck_list_sent = 0;
	m->ck_t_told = mono_ms();
	return 0;
}

int
ckpt_send_images(struct mig *m, const char *dir, int pass, char *why,
    size_t len)
{
	uint8_t *buf;
	json_t *hdr;
	uint64_t json0;
	size_t before, want;
	ssize_t n;
	char *b64;
	int rc;

	if ((buf = malloc(CK_PIECE)) == NULL) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	while (m->ck_file < m->ck_nfiles) {
		const struct imgdir_file *f = &m->ck_files[m->ck_file];

		if (peer_output_len(m->peer) > migrd.conf.max_queue / 2) {
			free(buf);
			return 0;
		}
		want = f->size - m->ck_off < CK_PIECE ?
		    (size_t)(f->size - m->ck_off) : CK_PIECE;
		n = want == 0 ? 0 : imgdir_read(dir, f->name, m->ck_off,
		    buf, want, why, len);
		if (n < 0 || (size_t)n != want) {
			if (n >= 0)
				snprintf(why, len, "image %s changed while it "
				    "was sent", f->name);
			free(buf);
			return -1;
		}
		before = peer_output_len(m->peer);
		json0 = peer_tx_json(m->peer);
		hdr = json_pack("{s:s,s:I,s:o*}", "name", f->name, "off",
		    (json_int_t)m->ck_off, "pass", pass > 0 ?
		    json_integer(pass) : NULL);
		b64 = NULL;
		if (hdr == NULL || (!peer_raw_images(m->peer) &&
		    (b64 = sk_b64_encode(buf, (size_t)n)) == NULL)) {
			json_decref(hdr);
			snprintf(why, len, "out of memory");
			free(buf);
			return -1;
		}
		if (b64 == NULL)
			/* the piece as it is, after the JSON (frame.h) */
			rc = mig_send_tail(m, MSG_MIG_IMAGE, hdr, buf,
			    (size_t)n);
		else {
			json_object_set_new(hdr, "data", json_string(b64));
			free(b64);
			rc = mig_send(m, MSG_MIG_IMAGE, hdr);
		}
		if (rc < 0) {
			snprintf(why, len, "channel to %s lost", m->peer);
			free(buf);
			return -1;
		}
		m->streamed += peer_output_len(m->peer) - before;
		m->encoded += peer_tx_json(m->peer) - json0;
		m->ck_bytes += (uint64_t)n;
		m->ck_list_sent += (uint64_t)n;
		m->ck_off += (uint64_t)n;
		/* hundreds of MB take minutes: migctl hears how far */
		if (mono_ms() - m->ck_t_told >= CK_TELL_MS) {
			m->ck_t_told = mono_ms();
			char what[16] = "the dump";

			if (pass > 0)
				snprintf(what, sizeof(what), "pass %d", pass);
			mig_progress(m, pass > 0 ? "precopy" : "checkpoint",
			    "%s: %llu of %llu bytes of images sent", what,
			    (unsigned long long)m->ck_list_sent,
			    (unsigned long long)m->ck_list_bytes);
		}
		if (m->ck_off >= f->size) {
			m->ck_sent_files++;
			m->ck_file++;
			m->ck_off = 0;
		}
	}
	free(buf);
	return 1;
}

int
ckpt_src_step(struct mig *m)
{
	struct timeval later = { 0, 2000 };
	char why[512];
	int rc;

	switch (m->ck_phase) {
	case CK_NONE:
		ckpt_dir_path(m->ck_dir, sizeof(m->ck_dir), "out", m->ns);
		if (ckpt_dir_make(m->ck_dir, why, sizeof(why)) < 0) {
			mig_fail(m, "no room for CRIU's images: %.400s", why);
			return -1;
		}
		m->ck_ms = mono_ms();
		if ((m->ck_helper = helper_start("criu dump", CK_ANSWER_MAX,
		    src_dump_child, m, src_dumped, m, why, sizeof(why))) == NULL) {
			mig_fail(m, "cannot run CRIU: %.400s", why);
			return -1;
		}
		if (mig_fault("src-crash-ckpt-dump")) {
			usleep(300000);		/* criu at work */
			log_warnx("fault injected: src-crash-ckpt-dump: "
			    "exiting");
			_exit(3);
		}
		m->ck_phase = CK_DUMPING;
		return 0;
	case CK_DUMPING:
		return 0;
	case CK_SENDING:
		if ((rc = ckpt_send_images(m, m->ck_dir, 0, why,
		    sizeof(why))) < 0) {
			mig_fail(m, "sending CRIU's images: %.400s", why);
			return -1;
		}
		if (rc == 0) {
			evtimer_add(m->work, &later);	/* let it drain */
			return 0;
		}
		m->ck_phase = CK_SENT;
		mig_progress(m, "checkpoint", "%zu images sent, %llu bytes "
		    "(%zu and %llu with pre-copy's)", m->ck_nfiles,
		    (unsigned long long)m->ck_bytes - m->ck_precopy_bytes,
		    m->ck_sent_files, (unsigned long long)m->ck_bytes);
		return 1;
	case CK_SENT:
	default:
		return 1;
	}
}

int
ckpt_cont_all(const char *cgroup)
{
	pid_t *pids;
	size_t i, n;

	if (cgroup_procs(cgroup, &pids, &n, CK_TASKS_MAX, NULL, 0) < 0)
		return -1;
	for (i = 0; i < n; i++)
		kill(pids[i], SIGCONT);
	free(pids);
	return (int)n;
}

void
ckpt_src_resume(const char *ns, const char *cgroup)
{
	char cg[PATH_MAX];

	if (ns_workload_ckpt(ns) <= 0)
		return;
	if (cgroup == NULL || cgroup[0] == '\0') {
		ns_cgroup_path(ns, cg, sizeof(cg));
		cgroup = cg;
	}
	if (ckpt_cont_all(cgroup) < 0)
		log_warnx("%s: the tasks CRIU left stopped could not be "
		    "continued", ns);
}
