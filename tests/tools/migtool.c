/* SPDX-License-Identifier: ISC */
/*
 * migtool: one migration, driven by hand, without the daemons: the
 * source and destination halves of migrd/migration/migsrc.c and migdst.c,
 * talking through files (in the lab, /mnt/lab, which both hosts share).
 * It is how the lab tests check the migration mechanics on their own;
 * migrd drives the same code over its TLS channel.
 *
 *   migtool source NS CGROUP HOSTIF OUTFILE DECISIONFILE
 *	check, freeze, lock, dump every record to OUTFILE (written whole,
 *	then renamed into place), then wait for DECISIONFILE to say
 *	"commit" (kill the tasks, close the sockets in repair, delete the
 *	ns) or "rollback" (repair off without probe, unlock, thaw); no
 *	decision within 120 s is a rollback
 *   migtool dest NS HOSTIF BRIDGE CGROUP INFILE [--discard] -- CMD ARG...
 *	wait for INFILE, build NS locked and detached from its records,
 *	restore every socket, then go live (attach, unlock, announce,
 *	resume) and start CMD in NS and CGROUP with the sockets
 *	(LISTEN_FDS); --discard throws the rebuilt ns away instead
 *
 * Both print one line of figures (key=value).  Exit status: 0 done,
 * 1 failed (nothing changed on a source that failed before its freeze,
 * or rolled back after it), 2 usage, 3 refused (a socket cannot move).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "announce.h"
#include "cgroup.h"
#include "launch.h"
#include "log.h"
#include "sk_engine.h"
#include "migdst.h"
#include "migsrc.h"
#include "nsdump.h"
#include "sk_json.h"

#define TIMEOUT_MS	5000
#define WAIT_S		120
#define LINE_MAX_BYTES	(80u * 1024 * 1024)

/* Records go whole into the file (inline_max 0: nothing split). */
static int
emit_line(json_t *rec, struct sk_state *st, void *arg)
{
	FILE *out = arg;
	char *txt;
	int rc;

	sk_state_free(st);
	if (rec == NULL)
		return -1;
	txt = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);
	if (txt == NULL)
		return -1;
	rc = fprintf(out, "%s\n", txt) < 0 ? -1 : 0;
	free(txt);
	return rc;
}

/* Wait for path to exist; 0, or -1 after WAIT_S seconds. */
static int
wait_file(const char *path)
{
	struct timespec nap = { 0, 50 * 1000000 };
	struct stat sb;
	int i;

	for (i = 0; i < WAIT_S * 20; i++) {
		if (stat(path, &sb) == 0)
			return 0;
		nanosleep(&nap, NULL);
	}
	log_warnx("%s: not there after %d s", path, WAIT_S);
	return -1;
}

/* Wait for DECISIONFILE to hold "commit" or "rollback": a file seen
 * between its creation and its first write reads empty, so an empty or
 * unknown word means "not yet".  No word within WAIT_S: rollback. */
static void
read_decision(const char *path, char *word, size_t len)
{
	struct timespec nap = { 0, 50 * 1000000 };
	FILE *f;
	int i;

	for (i = 0; i < WAIT_S * 20; i++) {
		word[0] = '\0';
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(word, (int)len, f) == NULL)
				word[0] = '\0';
			word[strcspn(word, " \t\r\n")] = '\0';
			fclose(f);
		}
		if (strcmp(word, "commit") == 0 || strcmp(word, "rollback") == 0)
			return;
		nanosleep(&nap, NULL);
	}
	log_warnx("%s: no decision after %d s: rolling back", path, WAIT_S);
	snprintf(word, len, "rollback");
}

static int
source(const char *ns, const char *cg, const char *hostif, const char *out,
    const char *decision)
{
	struct migsrc s;
	char why[512], tmp[4096], word[32] = "";
	FILE *f;
	int rc;

	if (migsrc_check(ns, cg, 0, why, sizeof(why), NULL) < 0) {
		log_warnx("cannot move %s: %s", ns, why);
		return 3;
	}
	if (migsrc_freeze(&s, ns, cg, 0, TIMEOUT_MS, why, sizeof(why)) < 0) {
		log_warnx("cannot freeze %s: %s", ns, why);
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (f == NULL || migsrc_dump(&s, emit_line, f) < 0 ||
	    fclose(f) != 0 || rename(tmp, out) < 0) {
		log_warnx("dump failed: rolling back");
		if (migsrc_rollback(&s, why, sizeof(why)) < 0)
			log_warnx("rollback: %s", why);
		migsrc_free(&s);
		return 1;
	}
	read_decision(decision, word, sizeof(word));
	if (strcmp(word, "commit") == 0)
		rc = migsrc_commit(&s, hostif, TIMEOUT_MS, why, sizeof(why)) < 0;
	else
		rc = migsrc_rollback(&s, why, sizeof(why)) < 0;
	if (rc)
		log_warnx("%s: %s", word, why);
	printf("decision=%s sockets=%zu accepted=%zu queued_bytes=%llu "
	    "freeze_ms=%.1f lock_ms=%.1f collect_ms=%.1f dump_ms=%.1f\n",
	    strcmp(word, "commit") == 0 ? "commit" : "rollback",
	    s.fig.sockets, s.fig.accepted,
	    (unsigned long long)s.fig.queued_bytes, s.fig.freeze_ms,
	    s.fig.lock_ms, s.fig.collect_ms, s.fig.dump_ms);
	migsrc_free(&s);
	return rc;
}

static int
dest(const char *ns, const char *hostif, const char *bridge, const char *cg,
    const char *in, int discard, char *const argv[])
{
	struct nsdump *nd = calloc(1, sizeof(*nd));
	struct migdst d;
	char *line = NULL, err[256];
	size_t cap = 0, nfds = 0;
	ssize_t len;
	int *fds = NULL, built = 0, rc = 1, lineno = 0;
	char **names = NULL;
	FILE *f = NULL;
	pid_t pid;

	memset(&d, 0, sizeof(d));
	if (nd == NULL || wait_file(in) < 0 || (f = fopen(in, "r")) == NULL)
		goto out;
	while ((len = getline(&line, &cap, f)) > 0) {
		struct sk_record rec;
		struct sk_json_limits lim = { 0 };

		lineno++;
		if ((size_t)len > LINE_MAX_BYTES ||
		    sk_json_parse(line, (size_t)len, &lim, &rec, err,
		    sizeof(err)) < 0) {
			log_warnx("%s:%d: %s", in, lineno,
			    (size_t)len > LINE_MAX_BYTES ? "record too long" : err);
			goto out_discard;
		}
		if (rec.type != SK_REC_SOCKET && built) {
			log_warnx("%s:%d: namespace record after a socket", in,
			    lineno);
			sk_record_clear(&rec);
			goto out_discard;
		}
		if (rec.type != SK_REC_SOCKET) {
			if (nsdump_add(nd, &rec) == -1) {
				log_warnx("%s:%d: too many namespace records",
				    in, lineno);
				sk_record_clear(&rec);
				goto out;
			}
		} else {
			/* the namespace is whole once the first socket comes */
			if (!built && migdst_build(&d, ns, hostif, nd, err,
			    sizeof(err)) < 0) {
				log_warnx("build %s: %s", ns, err);
				sk_record_clear(&rec);
				goto out;
			}
			built = 1;
			if (migdst_restore(&d, rec.u.sock, err,
			    sizeof(err)) < 0) {
				log_warnx("%s:%d: %s", in, lineno, err);
				sk_record_clear(&rec);
				goto out_discard;
			}
		}
		sk_record_clear(&rec);
	}
	if (!built && migdst_build(&d, ns, hostif, nd, err, sizeof(err)) < 0) {
		log_warnx("build %s: %s", ns, err);
		goto out;
	}
	built = 1;
	if (discard)
		goto out_discard;
	/* a cgroup left behind may still be frozen: the workload must run */
	if (cgroup_create(cg, err, sizeof(err)) < 0 ||
	    cgroup_thaw(cg, err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		goto out_discard;
	}
	if ((fds = calloc(d.nitems + 1, sizeof(*fds))) == NULL ||
	    (names = calloc(d.nitems + 1, sizeof(*names))) == NULL) {
		log_warnx("out of memory");
		goto out_discard;
	}
	if (migdst_attach(&d, bridge, err, sizeof(err)) < 0) {
		log_warnx("go live: %s", err);
		goto out_discard;
	}
	migdst_resume_all(&d);
	nfds = migdst_workload_fds(&d, fds, names);
	{
		struct timespec gap = { 0, MIGDST_REANNOUNCE_MS * 1000000L };

		nanosleep(&gap, NULL);
		if (announce_addrs(ns, "eth0", err, sizeof(err)) < 0)
			log_warnx("%s: second announcement: %s", ns, err);
	}
	{
		struct launch_spec sp = { .ns = ns, .cgroup = cg, .argv = argv,
		    .logpath = "/tmp/migtool-workload.log", .fds = fds,
		    .names = names, .nfds = nfds };

		pid = launch_workload(&sp, err, sizeof(err));
	}
	migdst_release(&d);
	if (pid < 0) {
		log_warnx("workload: %s", err);
		goto out;
	}
	printf("live=1 pid=%d sockets=%zu build_ms=%.1f restore_ms=%.1f "
	    "live_ms=%.1f\n", (int)pid, d.fig.sockets, d.fig.build_ms,
	    d.fig.restore_ms, d.fig.live_ms);
	rc = 0;
	goto out;
out_discard:
	migdst_discard(&d);
	printf("live=0 sockets=%zu\n", d.fig.sockets);
	rc = discard ? 0 : 1;
out:
	migdst_free(&d);
	free(fds);
	free(names);
	if (f != NULL)
		fclose(f);
	free(line);
	free(nd);
	return rc;
}

int
main(int argc, char **argv)
{
	int i;

	log_procinit("migtool");
	log_init(LOG_TO_STDERR, 0, 0);
	sk_set_log(log_msg, NULL);
	if (argc == 7 && strcmp(argv[1], "source") == 0)
		return source(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (argc >= 9 && strcmp(argv[1], "dest") == 0) {
		int discard = strcmp(argv[7], "--discard") == 0;

		for (i = 7; i < argc; i++)
			if (strcmp(argv[i], "--") == 0)
				break;
		if (i + 1 < argc)
			return dest(argv[2], argv[3], argv[4], argv[5], argv[6],
			    discard, argv + i + 1);
	}
	fprintf(stderr, "usage: migtool source NS CGROUP HOSTIF OUTFILE DECISIONFILE\n"
	    "       migtool dest NS HOSTIF BRIDGE CGROUP INFILE [--discard] -- CMD ARG...\n");
	return 2;
}
