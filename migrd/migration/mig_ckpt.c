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

#define CK_PIECE	(256 * 1024)	/* image bytes in one MIG_IMAGE */
#define CK_FILES_MAX	4096		/* images in one migration */
#define CK_HOLDERS_MAX	64		/* tasks holding one socket */
#define CK_NET_KEY	"migr-net"	/* CRIU's name for the namespace */
#define CK_LOG_LINES	5		/* CRIU's errors kept for our log */
#define CK_PID_MAX	4194304		/* PID_MAX_LIMIT */
#define CK_FD_MAX	(1 << 20)	/* fs.nr_open's ceiling */
#define CK_TASKS_MAX	4096		/* tasks of one restored tree */
#define CK_DUMP_WAIT_MS	30000		/* a dump under way, given up */
#define CK_ANSWER_MAX	(64 * 1024)	/* a helper's verdict and errors */

/* --- images on disk ------------------------------------------------ */

/* STATE_DIR/ckpt/{out,in}-NS: a name a peer cannot choose. */
static void
ck_path(char *buf, size_t len, const char *side, const char *ns)
{
	snprintf(buf, len, "%s/ckpt/%s-%s", migrd.conf.state_dir, side, ns);
}

/* A folder of files (CRIU's images), and the folder. */
static void
rm_flat(const char *dir)
{
	struct dirent *e;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    unlinkat(dirfd(d), e->d_name, 0) < 0)
			log_warn("%s/%s", dir, e->d_name);
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT)
		log_warn("rmdir %s", dir);
}

void
ckpt_purge(void)
{
	char top[PATH_MAX + 16], p[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

	snprintf(top, sizeof(top), "%s/ckpt", migrd.conf.state_dir);
	if ((d = opendir(top)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", top, e->d_name);
		log_info("removing checkpoint images left in %s", p);
		rm_flat(p);
	}
	closedir(d);
}

/* A new, empty images folder for m (whatever was there goes). */
static int
ck_mkdir(struct mig *m, const char *side, char *why, size_t len)
{
	char top[PATH_MAX + 16];

	snprintf(top, sizeof(top), "%s/ckpt", migrd.conf.state_dir);
	if (mkdir(top, 0700) < 0 && errno != EEXIST) {
		snprintf(why, len, "mkdir %.200s: %s", top, strerror(errno));
		return -1;
	}
	ck_path(m->ck_dir, sizeof(m->ck_dir), side, m->ns);
	rm_flat(m->ck_dir);
	return 0;
}

void
ckpt_cleanup(struct mig *m)
{
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
	if (m->ck_rx_open) {
		imgdir_rx_discard(&m->ck_rx);
		m->ck_rx_open = 0;
	}
	if (m->ck_dir[0] != '\0')
		rm_flat(m->ck_dir);
	m->ck_dir[0] = '\0';
}

/* --- a task's view ----------------------------------------------------- */

/* The last number of NSpid: pid in its own pid namespace, or -1. */
static pid_t
nspid_of(pid_t pid)
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
 * nspid_of(), each task read once a migration: the dump asks it for
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
		return nspid_of(pid);
	m->ck_nspids = n;
	n[m->ck_nnspids].pid = pid;
	return n[m->ck_nnspids++].nspid = nspid_of(pid);
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

/* --- CRIU, run from a helper ------------------------------------------ */

static json_t *
fail_answer(json_t *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* {ok: false, why, log[]}: what a helper answers when it failed. */
static json_t *
fail_answer(json_t *log, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return json_pack("{s:b,s:s,s:o}", "ok", 0, "why", why, "log",
	    log != NULL ? log : json_array());
}

/* The lines of CRIU's log that report an error, but the last one
 * ("Dumping FAILED."), at most CK_LOG_LINES of the last ones. */
static json_t *
criu_errors(const char *path)
{
	char line[512];
	json_t *a = json_array();
	FILE *f;

	if (a == NULL || (f = fopen(path, "re")) == NULL)
		return a;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "Error (") == NULL ||
		    strstr(line, "FAILED") != NULL)
			continue;
		line[strcspn(line, "\n")] = '\0';
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

struct criu_run {
	const char		*what;		/* "dump", "restore" */
	const char		*dir;		/* images, and the log */
	const char		*logname;
	const char *const	*argv;
	const int		*fds;		/* given at 3, 4, ... */
	int			 nfds;
	const char		*cgroup;	/* joined first, or NULL */
	int			 nnp;		/* no_new_privs, for criu and
						   all it restores */
};

/* criu as r says, waited for: NULL when it succeeded, else the failure
 * answer. */
static json_t *
run_criu(const struct criu_run *r)
{
	int status, i, tmp[4], devnull;
	pid_t pid;

	if ((pid = fork()) < 0)
		return fail_answer(NULL, "fork: %s", strerror(errno));
	if (pid == 0) {
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
			return fail_answer(NULL, "waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return NULL;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return fail_answer(NULL, "criu is not installed here (Debian's "
		    "criu package)");
	{
		char log[PATH_MAX + 64], kept[PATH_MAX + 32];
		const char *last;
		json_t *errs;

		snprintf(log, sizeof(log), "%s/%s", r->dir, r->logname);
		snprintf(kept, sizeof(kept), "%s/criu-%s.log",
		    migrd.conf.state_dir, r->what);
		keep_log(log, kept);
		errs = criu_errors(log);
		last = json_string_value(json_array_get(errs,
		    json_array_size(errs) - 1));
		return fail_answer(errs, "criu %s failed (%s %d)%s%s; its log: "
		    "%s", r->what, WIFEXITED(status) ? "status" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		    last ? ": " : "", last ? last : "", kept);
	}
}

/* A helper's answer: 1 ok, or 0 and why (CRIU's errors go to our log). */
static int
answer_ok(const struct mig *m, json_t *a, const char *failure, char *why,
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

/* --- source ------------------------------------------------------------- */

int
ckpt_criu_check(char *why, size_t len)
{
	char log[PATH_MAX + 32];
	const char *const argv[] = {
		"criu", "check", "--log-file", log, "-v2", NULL
	};
	const struct criu_run r = { "check", migrd.conf.state_dir,
		"criu-check.out", argv, NULL, 0, NULL, 0 };
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
ckpt_src_precheck(struct mig *m, char *why, size_t len)
{
	const struct collect_set *set = &m->src.set;
	struct tcp_info ti;
	socklen_t sl;
	size_t i;

	for (i = 0; i < set->nsocks; i++) {
		const struct collect_sock *cs = &set->socks[i];

		if (cs->type == SOCK_DGRAM) {
			snprintf(why, len, "pid %d fd %d: a UDP socket; "
			    "checkpoint mode does not carry UDP yet",
			    (int)cs->users[0].pid, cs->users[0].fd);
			return -1;
		}
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
	char tree[24], ext[64], path[PATH_MAX];
	struct stat st;
	json_t *fail;

	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, m->ns);
	if (stat(path, &st) < 0)
		return fail_answer(NULL, "%s: %s", path, strerror(errno));
	snprintf(tree, sizeof(tree), "%ld", (long)m->ck_root);
	snprintf(ext, sizeof(ext), "net[%lu]:" CK_NET_KEY,
	    (unsigned long)st.st_ino);
	{
		const char *const argv[] = {
			"criu", "dump", "--tree", tree, "--images-dir",
			m->ck_dir, "--log-file", "dump.log", "-v2",
			/* the engine has the sockets: CRIU keeps only their
			 * addresses and leaves them alone */
			"--tcp-close", "--network-lock", "nftables",
			/* frozen by us already */
			"--freeze-cgroup", m->cgroup,
			/* for a rollback; a commit kills them */
			"--leave-stopped",
			/* mounts and the namespace stay, CRIU names them */
			"--external", "mnt[]", "--external", ext, NULL
		};
		const struct criu_run r = { "dump", m->ck_dir, "dump.log",
			argv, NULL, 0, NULL, 0 };

		if (mig_fault("src-ckpt-dump"))
			return fail_answer(NULL, "fault injected: "
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
	char why[512];
	uint64_t bytes = 0;
	size_t i;

	m->ck_helper = NULL;
	m->ck_ms = mono_ms() - m->ck_ms;
	if (!answer_ok(m, a, failure, why, sizeof(why))) {
		mig_fail(m, "CRIU could not dump the program of %s: %.400s",
		    m->ns, why);
		return;
	}
	if (imgdir_list(m->ck_dir, CK_FILES_MAX, &m->ck_files, &m->ck_nfiles,
	    why, sizeof(why)) < 0) {
		mig_fail(m, "CRIU's images of %s: %.400s", m->ns, why);
		return;
	}
	for (i = 0; i < m->ck_nfiles; i++)
		bytes += m->ck_files[i].size;
	m->ck_images = m->ck_nfiles;
	mig_progress(m, "checkpoint", "CRIU dumped pid %ld of %s: %zu "
	    "images, %llu bytes (%.1f ms)", (long)m->ck_root, m->ns,
	    m->ck_nfiles, (unsigned long long)bytes, m->ck_ms);
	m->ck_phase = CK_SENDING;
	evtimer_add(m->work, &now);
}

/* The images, a piece at a time while the channel has room: 1 all
 * sent, 0 wait, -1 failed (why). */
static int
send_images(struct mig *m, char *why, size_t len)
{
	uint8_t *buf;
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
		n = want == 0 ? 0 : imgdir_read(m->ck_dir, f->name, m->ck_off,
		    buf, want, why, len);
		if (n < 0 || (size_t)n != want) {
			if (n >= 0)
				snprintf(why, len, "image %s changed while it "
				    "was sent", f->name);
			free(buf);
			return -1;
		}
		if ((b64 = sk_b64_encode(buf, (size_t)n)) == NULL) {
			snprintf(why, len, "out of memory");
			free(buf);
			return -1;
		}
		before = peer_output_len(m->peer);
		json0 = peer_tx_json(m->peer);
		rc = mig_send(m, MSG_MIG_IMAGE, json_pack("{s:s,s:I,s:s}",
		    "name", f->name, "off", (json_int_t)m->ck_off, "data",
		    b64));
		free(b64);
		if (rc < 0) {
			snprintf(why, len, "channel to %s lost", m->peer);
			free(buf);
			return -1;
		}
		m->streamed += peer_output_len(m->peer) - before;
		m->encoded += peer_tx_json(m->peer) - json0;
		m->ck_bytes += (uint64_t)n;
		m->ck_off += (uint64_t)n;
		if (m->ck_off >= f->size) {
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
		if (ck_mkdir(m, "out", why, sizeof(why)) < 0) {
			mig_fail(m, "no room for CRIU's images: %.400s", why);
			return -1;
		}
		if (mkdir(m->ck_dir, 0700) < 0) {
			mig_fail(m, "no room for CRIU's images: mkdir %.200s: %s",
			    m->ck_dir, strerror(errno));
			return -1;
		}
		m->ck_ms = mono_ms();
		if ((m->ck_helper = helper_start("criu dump", CK_ANSWER_MAX,
		    src_dump_child, m, src_dumped, m, why, sizeof(why))) == NULL) {
			mig_fail(m, "cannot run CRIU: %.400s", why);
			return -1;
		}
		m->ck_phase = CK_DUMPING;
		return 0;
	case CK_DUMPING:
		return 0;
	case CK_SENDING:
		if ((rc = send_images(m, why, sizeof(why))) < 0) {
			mig_fail(m, "sending CRIU's images: %.400s", why);
			return -1;
		}
		if (rc == 0) {
			evtimer_add(m->work, &later);	/* let it drain */
			return 0;
		}
		m->ck_phase = CK_SENT;
		mig_progress(m, "checkpoint", "%zu images sent, %llu bytes",
		    m->ck_nfiles, (unsigned long long)m->ck_bytes);
		return 1;
	case CK_SENT:
	default:
		return 1;
	}
}

/* SIGCONT to every task of a cgroup (not its sub-cgroups: the log
 * keeper's).  How many, or -1. */
static int
cont_all(const char *cgroup)
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
	if (cont_all(cgroup) < 0)
		log_warnx("%s: the tasks CRIU left stopped could not be "
		    "continued", ns);
}

/* --- destination -------------------------------------------------------- */

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

/* Is criu in PATH? */
static int
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

int
ckpt_dst_image(struct mig *m, json_t *msg, char *why, size_t len)
{
	json_error_t jerr;
	const char *id, *name, *data;
	json_int_t off;
	size_t dlen, n;
	uint8_t *buf = NULL;
	char err[256];
	int rc;

	if (!m->ck) {
		snprintf(why, len, "an image for a migration that is not in "
		    "checkpoint mode");
		return -1;
	}
	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s,s:s,s:I,s:s%}",
	    "mig", &id, "name", &name, "off", &off, "data", &data,
	    &dlen) == -1) {
		snprintf(why, len, "malformed image: %s", jerr.text);
		return -1;
	}
	if (off < 0 || dlen > sk_b64_enclen(CK_PIECE)) {
		snprintf(why, len, "image %.64s: a piece at %lld of %zu "
		    "characters", name, (long long)off, dlen);
		return -1;
	}
	if (!m->ck_rx_open) {
		if (ck_mkdir(m, "in", err, sizeof(err)) < 0 ||
		    imgdir_rx_open(&m->ck_rx, m->ck_dir, m->ck_max,
		    CK_FILES_MAX, err, sizeof(err)) < 0) {
			snprintf(why, len, "%s cannot take images: %s",
			    migrd.conf.hostname, err);
			return -1;
		}
		m->ck_rx_open = 1;
	}
	if (sk_b64_decode(data, dlen, &buf, &n, err, sizeof(err)) < 0) {
		snprintf(why, len, "image %.64s: %s", name, err);
		return -1;
	}
	rc = imgdir_rx_put(&m->ck_rx, name, (uint64_t)off, buf, n, err,
	    sizeof(err));
	free(buf);
	if (rc < 0) {
		snprintf(why, len, "%s (allow %s checkpoint MIB bounds the "
		    "images)", err, m->peer);
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

/* The restored sockets by record id, for the holders to find theirs. */
struct ck_item_ix {
	uint64_t	id;
	size_t		k;		/* in m->dst.items */
};

static int
item_ix_cmp(const void *a, const void *b)
{
	const struct ck_item_ix *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * In the helper: each task of the restored tree gets the engine's
 * sockets at the numbers it held them; every connection must find its
 * holder (an orphaned one would be closed, and its peer reset).
 */
static int
handover(const struct mig *m, const char *cg, char *err, size_t errlen)
{
	struct fdput_item *items = NULL;
	struct ck_item_ix *ix = NULL, key, *hit;
	pid_t *pids = NULL, nsp;
	size_t i, j, k, n, npids, nix = 0;
	char *put = NULL;
	int rc = -1;

	if (cgroup_procs(cg, &pids, &npids, CK_TASKS_MAX, err, errlen) < 0)
		return -1;
	if ((items = calloc(m->ck_nholders + 1, sizeof(*items))) == NULL ||
	    (put = calloc(m->dst.nitems + 1, 1)) == NULL ||
	    (ix = calloc(m->dst.nitems + 1, sizeof(*ix))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* thousands of connections: found by id, not by a walk each */
	for (k = 0; k < m->dst.nitems; k++)
		if (m->dst.items[k].h != NULL) {
			ix[nix].id = m->dst.items[k].id;
			ix[nix++].k = k;
		}
	qsort(ix, nix, sizeof(*ix), item_ix_cmp);
	for (i = 0; i < npids; i++) {
		if ((nsp = nspid_of(pids[i])) <= 0)
			continue;
		for (n = 0, j = 0; j < m->ck_nholders; j++) {
			if (m->ck_holders[j].nspid != nsp)
				continue;
			key.id = m->ck_holders[j].id;
			if ((hit = bsearch(&key, ix, nix, sizeof(*ix),
			    item_ix_cmp)) == NULL)
				continue;	/* a listener: CRIU's own */
			items[n].fd = sk_handle_fd(m->dst.items[hit->k].h);
			items[n++].target = m->ck_holders[j].fd;
			put[hit->k] = 1;
		}
		if (n > 0 && fdput(pids[i], items, n, err, errlen) < 0)
			goto out;
	}
	for (i = 0; i < nix; i++)
		if (!put[ix[i].k]) {
			k = ix[i].k;
			snprintf(err, errlen, "socket %llu (%s) has no holder "
			    "in the restored program",
			    (unsigned long long)m->dst.items[k].id,
			    m->dst.items[k].name);
			goto out;
		}
	rc = 0;
out:
	free(ix);
	free(items);
	free(put);
	free(pids);
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
		return fail_answer(NULL, "%s: %s", path, strerror(errno));
	if (m->ck_stdout[0] != '\0') {
		/* its output goes to a keeper of its log here, as it did
		 * there */
		struct launch_spec sp = { .cgroup = cg, .logpath = logpath,
			.logmax = migrd.conf.workload_log_max };

		ns_logpath(m->ns, logpath, sizeof(logpath));
		if ((fds[nfds++] = launch_keeper(&sp, err, sizeof(err))) < 0)
			return fail_answer(NULL, "%s", err);
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
			"restore.log", argv, fds, nfds, cg, 1 };

		if (mig_fault("dst-ckpt-restore"))
			return fail_answer(NULL, "fault injected: "
			    "dst-ckpt-restore");
		if ((fail = run_criu(&r)) != NULL)
			return fail;
	}
	if ((f = fopen(pidfile, "re")) == NULL ||
	    fgets(line, sizeof(line), f) == NULL ||
	    (root = (pid_t)strtol(line, NULL, 10)) <= 0) {
		if (f != NULL)
			fclose(f);
		return fail_answer(NULL, "criu restore left no pid");
	}
	fclose(f);
	/* nothing of it has run yet: is it what this host lets run? */
	if (credcheck_tree(root, migrd.workload_uid, migrd.workload_gid,
	    migrd.conf.workload_caps, err, sizeof(err)) < 0)
		return fail_answer(NULL, "the restored program is not fit to "
		    "run here: %s", err);
	/* nor may it hold a file the workload user could not open: CRIU
	 * opened and mapped them as root */
	if (files_fit(cg, err, sizeof(err)) < 0)
		return fail_answer(NULL, "the restored program is not fit to "
		    "run here: %s", err);
	if (mig_fault("dst-ckpt-handover"))
		return fail_answer(NULL, "fault injected: dst-ckpt-handover");
	if (handover(m, cg, err, sizeof(err)) < 0)
		return fail_answer(NULL, "hand-over of the sockets: %s", err);
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
	if (!answer_ok(m, a, failure, why, sizeof(why)) ||
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
	    "bytes", &bytes) == -1 || !m->ck_rx_open) {
		mig_fail(m, "checkpoint mode, and no images came");
		return;
	}
	if (imgdir_rx_finish(&m->ck_rx, why, sizeof(why)) < 0) {
		mig_fail(m, "images: %.400s", why);
		return;
	}
	if (files != (json_int_t)m->ck_rx.nfiles ||
	    bytes != (json_int_t)m->ck_rx.bytes) {
		mig_fail(m, "images: %lld files, %lld bytes announced, %zu "
		    "and %llu came", (long long)files, (long long)bytes,
		    m->ck_rx.nfiles, (unsigned long long)m->ck_rx.bytes);
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
	if ((n = cont_all(cg)) < 0)
		log_warnx("migration %s: the restored program of %s could not "
		    "be continued", m->id, m->ns);
	else
		log_info("migration %s: %s's program goes on (%d tasks)",
		    m->id, m->ns, n);
}
