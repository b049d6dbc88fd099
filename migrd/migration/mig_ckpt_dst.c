/* SPDX-License-Identifier: ISC */
/*
 * Checkpoint mode on the destination (mig_ckpt.c has the whole flow):
 * PREPARE's workload says checkpoint, and local policy must allow it; the
 * images land in STATE_DIR/ckpt/in-NS within the peer's budget; at
 * DUMP_DONE, in a helper, criu restore --leave-stopped, every restored
 * task checked (credcheck, filecheck), the engine's sockets put at the
 * numbers their holders used (fdput), then READY; going live, SIGCONT.
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
#include <sys/socket.h>
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

/* "pipe:[" digits "]", as a peer may name one. */
static int
pipe_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 8 || n > 27 || strncmp(s, "pipe:[", 6) != 0 || s[n - 1] != ']')
		return 0;
	for (i = 6; i < n - 1; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

int
ckpt_prep_parse(json_t *ck, struct prep *p, char *why, size_t len)
{
	json_error_t jerr;
	const char *out;

	if (json_unpack_ex(ck, &jerr, JSON_STRICT, "{s:s}", "stdout",
	    &out) == -1) {
		snprintf(why, len, "workload.checkpoint: %s", jerr.text);
		return -1;
	}
	if (out[0] != '\0' && !pipe_name_ok(out)) {
		snprintf(why, len, "workload.checkpoint.stdout: '%.40s' is not "
		    "a pipe's name", out);
		return -1;
	}
	p->ckpt = 1;
	p->ck_stdout = out;
	return 0;
}

int
ckpt_prep_allowed(const char *peer, const struct prep *p, uint64_t *max,
    char *why, size_t len)
{
	const struct peer_conf *pc;
	unsigned mib;

	*max = 0;
	if (!p->ckpt)
		return 0;
	pc = config_find_peer(&migrd.conf, peer);
	mib = pc != NULL ? policy_limit(&pc->allow, POLICY_CHECKPOINT, 0) : 0;
	if (mib == 0) {
		snprintf(why, len, "%s may not move checkpointed programs to %s "
		    "(restoring one runs %s's code here: allow %s checkpoint "
		    "MIB)", peer, migrd.conf.hostname, peer, peer);
		return -1;
	}
	if (migrd.workload_uid == 0) {
		snprintf(why, len, "workload-user is root on %s: a restored "
		    "program would run as root", migrd.conf.hostname);
		return -1;
	}
	if (!criu_present()) {
		snprintf(why, len, "criu is not installed on %s",
		    migrd.conf.hostname);
		return -1;
	}
	*max = (uint64_t)mib << 20;
	return 0;
}

/*
 * The folder that takes an image of pass (0: the dump): the one open,
 * or the next (pass 1, 2, ... in order, then the dump's).  Each pass
 * after the first, and the dump after any, gets a link to the one
 * before: made here, never sent (imgdir takes no links from a peer).
 */
static int
rx_folder(struct mig *m, int pass, char *why, size_t len)
{
	char dir[PATH_MAX + 96], rel[PATH_MAX], err[256];
	int parent;

	if (m->ck_rx_open && (pass == 0 ? m->ck_rx_final :
	    !m->ck_rx_final && pass == m->ck_pass))
		return 0;
	if (m->ck_rx_final) {
		snprintf(why, len, "an image of pass %d after the dump's", pass);
		return -1;
	}
	if (pass > 0 && pass != m->ck_pass + 1) {
		snprintf(why, len, "an image of pass %d after pass %d", pass,
		    m->ck_pass);
		return -1;
	}
	if (m->ck_rx_open) {
		if (imgdir_rx_finish(&m->ck_rx, err, sizeof(err)) < 0) {
			snprintf(why, len, "images of pass %d: %s", m->ck_pass,
			    err);
			return -1;
		}
		m->ck_taken_files += m->ck_rx.nfiles;
		imgdir_rx_close(&m->ck_rx);
		m->ck_rx_open = 0;
	}
	parent = pass > 0 ? pass - 1 : m->ck_pass;
	if (pass > 0) {
		m->ck_pass = pass;
		ckpt_pass_dir(dir, sizeof(dir), "in", m->ns, pass);
	} else {
		m->ck_rx_final = 1;
		ckpt_dir_path(m->ck_dir, sizeof(m->ck_dir), "in", m->ns);
		snprintf(dir, sizeof(dir), "%s", m->ck_dir);
	}
	if (ckpt_dir_clear(dir, err, sizeof(err)) < 0 ||
	    imgdir_rx_open(&m->ck_rx, dir, m->ck_max - m->ck_bytes,
	    m->ck_taken_files < CK_FILES_MAX ? CK_FILES_MAX -
	    m->ck_taken_files : 0, err, sizeof(err)) < 0)
		goto fail;
	m->ck_rx_open = 1;
	if (parent > 0) {
		ckpt_pass_rel(rel, sizeof(rel), "in", m->ns, parent);
		if (symlinkat(rel, m->ck_rx.dirfd, "parent") < 0) {
			snprintf(err, sizeof(err), "%.200s/parent: %s", dir,
			    strerror(errno));
			goto fail;
		}
	}
	return 0;
fail:
	snprintf(why, len, "%s cannot take images: %s", migrd.conf.hostname,
	    err);
	return -1;
}

int
ckpt_dst_image(struct mig *m, json_t *msg, char *why, size_t len)
{
	json_error_t jerr;
	const char *id, *name, *data = NULL, *raw = NULL;
	json_int_t off, pass = 0;
	size_t dlen = 0, rlen = 0, n;
	uint8_t *buf = NULL;
	const uint8_t *bytes;
	char err[256];
	int rc;

	if (!m->ck) {
		snprintf(why, len, "an image for a migration that is not in "
		    "checkpoint mode");
		return -1;
	}
	/* the piece: base64 in "data", or the frame's binary tail, which
	 * frame_decode() made "raw" (any bytes) */
	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s,s:s,s:I,s?s%,"
	    "s?s%,s?I}", "mig", &id, "name", &name, "off", &off, "data",
	    &data, &dlen, "raw", &raw, &rlen, "pass", &pass) == -1) {
		snprintf(why, len, "malformed image: %s", jerr.text);
		return -1;
	}
	if ((data == NULL) == (raw == NULL)) {
		snprintf(why, len, "image %.64s: a piece needs data or a "
		    "binary tail, and not both", name);
		return -1;
	}
	if (off < 0 || dlen > sk_b64_enclen(CK_PIECE) || rlen > CK_PIECE) {
		snprintf(why, len, "image %.64s: a piece at %lld of %zu "
		    "bytes", name, (long long)off, raw ? rlen : dlen);
		return -1;
	}
	if (pass < 0 || pass > CK_PASSES_MAX) {
		snprintf(why, len, "image %.64s: pass %lld (at most %d)", name,
		    (long long)pass, CK_PASSES_MAX);
		return -1;
	}
	if (rx_folder(m, (int)pass, why, len) < 0)
		return -1;
	if (raw != NULL) {
		bytes = (const uint8_t *)raw;
		n = rlen;
	} else if (sk_b64_decode(data, dlen, &buf, &n, err, sizeof(err)) <
	    0) {
		snprintf(why, len, "image %.64s: %s", name, err);
		return -1;
	} else
		bytes = buf;
	rc = imgdir_rx_put(&m->ck_rx, name, (uint64_t)off, bytes, n, err,
	    sizeof(err));
	free(buf);
	if (rc < 0) {
		snprintf(why, len, "%s (allow %s checkpoint MIB bounds the "
		    "images, every pass of pre-copy included)", err, m->peer);
		return -1;
	}
	m->ck_bytes += n;
	return 0;
}

int
ckpt_dst_holders(struct mig *m, uint64_t id, json_t *holders, char *why,
    size_t len)
{
	json_int_t nspid, fd;
	struct ck_holder *nh;
	json_t *h;
	size_t i, cap;

	if (holders == NULL)
		return 0;
	if (!m->ck || !json_is_array(holders) ||
	    json_array_size(holders) > CK_HOLDERS_MAX) {
		snprintf(why, len, "record %llu: holders: not a list of at "
		    "most %d, in checkpoint mode", (unsigned long long)id,
		    CK_HOLDERS_MAX);
		return -1;
	}
	json_array_foreach(holders, i, h) {
		if (json_unpack(h, "[II!]", &nspid, &fd) == -1 || nspid < 1 ||
		    nspid > CK_PID_MAX || fd < 0 || fd >= CK_FD_MAX) {
			snprintf(why, len, "record %llu: holder %zu is not "
			    "[pid, fd]", (unsigned long long)id, i);
			return -1;
		}
		if (m->ck_nholders == m->ck_capholders) {
			cap = m->ck_capholders ? 2 * m->ck_capholders : 64;
			if ((nh = reallocarray(m->ck_holders, cap,
			    sizeof(*nh))) == NULL) {
				snprintf(why, len, "out of memory");
				return -1;
			}
			m->ck_holders = nh;
			m->ck_capholders = cap;
		}
		m->ck_holders[m->ck_nholders].id = id;
		m->ck_holders[m->ck_nholders].nspid = (pid_t)nspid;
		m->ck_holders[m->ck_nholders++].fd = (int)fd;
	}
	return 0;
}

int
ckpt_dst_keep_udp(struct mig *m, struct sk_state **st, char *why,
    size_t len)
{
	struct sk_state **nu;
	size_t cap;

	/* as many as the socket budget let come (restore_record()) */
	if (m->ck_nudp == m->ck_capudp) {
		cap = m->ck_capudp ? 2 * m->ck_capudp : 16;
		if ((nu = reallocarray(m->ck_udp, cap, sizeof(*nu))) == NULL) {
			snprintf(why, len, "out of memory");
			return -1;
		}
		m->ck_udp = nu;
		m->ck_capudp = cap;
	}
	m->ck_udp[m->ck_nudp++] = *st;
	*st = NULL;
	return 0;
}

/* The sockets to put, by record id, for the holders to find theirs. */
struct ck_put {
	uint64_t	 id;
	int		 fd;		/* ours, to give */
	int		 done;		/* a holder took it */
	const char	*name;
};

static int
put_cmp(const void *a, const void *b)
{
	const struct ck_put *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * In the helper: each task of the restored tree gets, at every number it
 * held a socket of v (sorted by put_cmp) under, that socket's fd; every
 * one of them must find a holder (an orphaned connection would be
 * closed, and its peer reset).
 */
static int
put_sockets(const struct mig *m, const char *cg, struct ck_put *v, size_t nv,
    char *err, size_t errlen)
{
	struct fdput_item *items = NULL;
	struct ck_put key, *hit;
	pid_t *pids = NULL, nsp;
	size_t i, j, n, npids;
	int rc = -1;

	if (cgroup_procs(cg, &pids, &npids, CK_TASKS_MAX, err, errlen) < 0)
		return -1;
	if ((items = calloc(m->ck_nholders + 1, sizeof(*items))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < npids; i++) {
		if ((nsp = ckpt_nspid(pids[i])) <= 0)
			continue;
		for (n = 0, j = 0; j < m->ck_nholders; j++) {
			if (m->ck_holders[j].nspid != nsp)
				continue;
			key.id = m->ck_holders[j].id;
			/* thousands of connections: found by id */
			if ((hit = bsearch(&key, v, nv, sizeof(*v),
			    put_cmp)) == NULL)
				continue;	/* a listener: CRIU's own */
			items[n].fd = hit->fd;
			items[n++].target = m->ck_holders[j].fd;
			hit->done = 1;
		}
		if (n > 0 && fdput(pids[i], items, n, err, errlen) < 0)
			goto out;
	}
	for (i = 0; i < nv; i++)
		if (!v[i].done) {
			snprintf(err, errlen, "socket %llu (%s) has no holder "
			    "in the restored program",
			    (unsigned long long)v[i].id, v[i].name);
			goto out;
		}
	rc = 0;
out:
	free(items);
	free(pids);
	return rc;
}

/*
 * In the helper: the program's UDP sockets.  CRIU restored each bound
 * (and connected) but with none of the datagrams that waited in it, and
 * the engine's, which has them, cannot bind beside it.  So CRIU's goes
 * first: a placeholder takes its numbers (the last reference closes it),
 * then the engine's is rebuilt (bound, its datagrams replayed, connected),
 * resumed, and goes where CRIU's was.  The handles go in *h, m->ck_nudp.
 */
static int
udp_rebuild(const struct mig *m, const char *cg, struct sk_handle **h,
    char *err, size_t errlen)
{
	struct ck_put *v;
	size_t i;
	int ph, saved, rc = -1;

	if ((v = calloc(m->ck_nudp, sizeof(*v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((ph = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < m->ck_nudp; i++) {
		v[i].id = m->ck_udp[i]->id;
		v[i].fd = ph;
		v[i].name = "udp";
	}
	qsort(v, m->ck_nudp, sizeof(*v), put_cmp);
	if (put_sockets(m, cg, v, m->ck_nudp, err, errlen) < 0)
		goto out;
	if ((saved = netns_enter(m->ns, err, errlen)) < 0)
		goto out;
	for (i = 0; i < m->ck_nudp; i++)
		if ((h[i] = sk_restore(m->ck_udp[i])) == NULL ||
		    sk_resume(h[i], 0) < 0) {
			snprintf(err, errlen, "UDP socket %llu could not be "
			    "rebuilt (see the log)",
			    (unsigned long long)m->ck_udp[i]->id);
			break;
		}
	if (netns_leave(saved, err, errlen) < 0 || i < m->ck_nudp)
		goto out;
	rc = 0;
out:
	if (ph >= 0)
		close(ph);
	free(v);
	return rc;
}

/*
 * In the helper: each task of the restored tree gets the engine's
 * sockets at the numbers it held them (fdput()): the TCP connections
 * restored as their records came, and the UDP sockets rebuilt now.
 */
static int
handover(const struct mig *m, const char *cg, char *err, size_t errlen)
{
	struct sk_handle **udp = NULL;
	struct ck_put *v = NULL;
	size_t i, k, nv = 0;
	int rc = -1;

	if ((udp = calloc(m->ck_nudp + 1, sizeof(*udp))) == NULL ||
	    (v = calloc(m->dst.nitems + m->ck_nudp + 1, sizeof(*v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (m->ck_nudp > 0 && udp_rebuild(m, cg, udp, err, errlen) < 0)
		goto out;
	for (k = 0; k < m->dst.nitems; k++)
		if (m->dst.items[k].h != NULL) {
			v[nv].id = m->dst.items[k].id;
			v[nv].name = m->dst.items[k].name;
			v[nv++].fd = sk_handle_fd(m->dst.items[k].h);
		}
	for (i = 0; i < m->ck_nudp; i++) {
		v[nv].id = m->ck_udp[i]->id;
		v[nv].name = "udp";
		v[nv++].fd = sk_handle_fd(udp[i]);
	}
	qsort(v, nv, sizeof(*v), put_cmp);
	rc = put_sockets(m, cg, v, nv, err, errlen);
out:
	/* the program holds them now (this helper exits anyway) */
	for (i = 0; udp != NULL && i < m->ck_nudp; i++)
		if (udp[i] != NULL)
			close(sk_detach(udp[i]));
	free(udp);
	free(v);
	return rc;
}

/* In the helper: every file the restored tasks hold, as the workload
 * user would open it (filecheck.h). */
static int
files_fit(const char *cg, char *err, size_t errlen)
{
	pid_t *pids;
	size_t n;
	int rc;

	if (cgroup_procs(cg, &pids, &n, CK_TASKS_MAX, err, errlen) < 0)
		return -1;
	rc = filecheck_tasks(pids, n, migrd.workload_uid, migrd.workload_gid,
	    migrd.conf.workload_caps, err, errlen);
	free(pids);
	return rc;
}

/* In the helper: criu restore, the check, the hand-over. */
static json_t *
dst_restore_child(void *arg)
{
	const struct mig *m = arg;
	char cg[PATH_MAX], logpath[PATH_MAX], pidfile[PATH_MAX + 128];
	char inherit[64] = "", path[PATH_MAX], err[512], line[32];
	int fds[2], nfds = 0;
	json_t *fail;
	pid_t root;
	FILE *f;

	ns_cgroup_path(m->ns, cg, sizeof(cg));
	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, m->ns);
	if ((fds[nfds++] = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return criu_fail(NULL, "%s: %s", path, strerror(errno));
	if (m->ck_stdout[0] != '\0') {
		/* its output goes to a keeper of its log here, as it did
		 * there */
		struct launch_spec sp = { .cgroup = cg, .logpath = logpath,
			.logmax = migrd.conf.workload_log_max };

		ns_logpath(m->ns, logpath, sizeof(logpath));
		if ((fds[nfds++] = launch_keeper(&sp, err, sizeof(err))) < 0)
			return criu_fail(NULL, "%s", err);
		snprintf(inherit, sizeof(inherit), "fd[4]:%s", m->ck_stdout);
	}
	snprintf(pidfile, sizeof(pidfile), "%s/restored.pid", m->ck_dir);
	{
		const char *const argv[] = {
			"criu", "restore", "--images-dir", m->ck_dir,
			"--log-file", "restore.log", "-v2",
			"--restore-detached", "--leave-stopped",
			"--root", "/", "--ext-mount-map", "auto",
			"--tcp-close", "--manage-cgroups=ignore",
			"--pidfile", pidfile,
			"--inherit-fd", "fd[3]:" CK_NET_KEY,
			nfds > 1 ? "--inherit-fd" : NULL, inherit, NULL
		};
		/* no_new_privs: the peer's program must not gain privileges
		 * by exec (caps.c tells how criu keeps its own) */
		const struct criu_run r = { "restore", m->ck_dir,
			"restore.log", argv, fds, nfds, cg, 1, 0 };

		if (mig_fault("dst-ckpt-restore"))
			return criu_fail(NULL, "fault injected: "
			    "dst-ckpt-restore");
		if ((fail = run_criu(&r)) != NULL)
			return fail;
	}
	if ((f = fopen(pidfile, "re")) == NULL ||
	    fgets(line, sizeof(line), f) == NULL ||
	    (root = (pid_t)strtol(line, NULL, 10)) <= 0) {
		if (f != NULL)
			fclose(f);
		return criu_fail(NULL, "criu restore left no pid");
	}
	fclose(f);
	/* nothing of it has run yet: is it what this host lets run? */
	if (credcheck_tree(root, migrd.workload_uid, migrd.workload_gid,
	    migrd.conf.workload_caps, err, sizeof(err)) < 0)
		return criu_fail(NULL, "the restored program is not fit to "
		    "run here: %s", err);
	/* nor may it hold a file the workload user could not open: CRIU
	 * opened and mapped them as root */
	if (files_fit(cg, err, sizeof(err)) < 0)
		return criu_fail(NULL, "the restored program is not fit to "
		    "run here: %s", err);
	if (mig_fault("dst-ckpt-handover"))
		return criu_fail(NULL, "fault injected: dst-ckpt-handover");
	if (handover(m, cg, err, sizeof(err)) < 0)
		return criu_fail(NULL, "hand-over of the sockets: %s", err);
	return json_pack("{s:b,s:i}", "ok", 1, "pid", (int)root);
}

static void
dst_restored(void *arg, json_t *a, const char *failure)
{
	struct mig *m = arg;
	char why[512];
	int pid = 0;

	m->ck_helper = NULL;
	m->ck_ms = mono_ms() - m->ck_ms;
	if (!criu_answer_ok(m, a, failure, why, sizeof(why)) ||
	    json_unpack(a, "{s:i}", "pid", &pid) == -1 || pid <= 0) {
		mig_fail(m, "%s could not restore the program of %s: %.400s",
		    migrd.conf.hostname, m->ns, why);
		return;
	}
	m->ck_root = (pid_t)pid;
	m->dst.fig.restore_ms += m->ck_ms;
	log_info("migration %s: %s's program restored, pid %d, stopped, its "
	    "sockets handed over (%.1f ms)", m->id, m->ns, pid, m->ck_ms);
	mig_event(m, ME_RX_DUMP_DONE);
}

void
ckpt_dst_restore(struct mig *m, json_t *msg)
{
	json_int_t files = -1, bytes = -1;
	char why[512];

	if (json_unpack(msg, "{s:{s:I,s:I}}", "images", "files", &files,
	    "bytes", &bytes) == -1 || !m->ck_rx_open || !m->ck_rx_final) {
		mig_fail(m, "checkpoint mode, and no images came");
		return;
	}
	if (imgdir_rx_finish(&m->ck_rx, why, sizeof(why)) < 0) {
		mig_fail(m, "images: %.400s", why);
		return;
	}
	/* every pass of pre-copy, and the dump */
	if (files != (json_int_t)(m->ck_taken_files + m->ck_rx.nfiles) ||
	    bytes != (json_int_t)m->ck_bytes) {
		mig_fail(m, "images: %lld files, %lld bytes announced, %zu "
		    "and %llu came", (long long)files, (long long)bytes,
		    m->ck_taken_files + m->ck_rx.nfiles,
		    (unsigned long long)m->ck_bytes);
		return;
	}
	m->ck_ms = mono_ms();
	if ((m->ck_helper = helper_start("criu restore", CK_ANSWER_MAX,
	    dst_restore_child, m, dst_restored, m, why, sizeof(why))) == NULL)
		mig_fail(m, "cannot run CRIU: %.400s", why);
}

void
ckpt_dst_go(struct mig *m)
{
	char cg[PATH_MAX];
	int n;

	ns_cgroup_path(m->ns, cg, sizeof(cg));
	if ((n = ckpt_cont_all(cg)) < 0)
		log_warnx("migration %s: the restored program of %s could not "
		    "be continued", m->id, m->ns);
	else
		log_info("migration %s: %s's program goes on (%d tasks)",
		    m->id, m->ns, n);
}
