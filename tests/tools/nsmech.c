/* SPDX-License-Identifier: ISC */
/*
 * nsmech: drive the freeze-window mechanics of libmigr from a shell, for
 * the lab tests.
 *
 *   nsmech freeze CGROUP | thaw CGROUP | kill CGROUP
 *   nsmech lock NS | lock-source NS | mute NS | unlock NS | locked NS
 *                                              (locked: prints yes/no)
 *   nsmech collect CGROUP                      (one line per socket)
 *   nsmech announce NS IFNAME                  (prints frames sent)
 *   nsmech hold CGROUP NS MS                   freeze+lock, wait MS, unlock+thaw;
 *                                              prints the window in ms
 *   nsmech dumpns NS                           link/addr/route records, one a line
 *   nsmech buildns NS HOSTIF [--lock] < RECORDS  create NS and build it
 *   nsmech attach HOSTIF BRIDGE | delns NS HOSTIF
 *
 * Exit status 0 on success, 1 on failure, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "announce.h"
#include "collect.h"
#include "cgroup.h"
#include "clock.h"
#include "log.h"
#include "sk_engine.h"
#include "nsbuild.h"
#include "nsdump.h"
#include "nslock.h"
#include "sk_json.h"

#define TIMEOUT_MS 5000

/* why the last library call failed (errbuf.h), printed at exit */
static char err[512];
#define E	err, sizeof(err)

static int
do_collect(const char *cg)
{
	struct collect_set set;
	size_t i, j;

	if (collect_sockets(cg, 0, &set, E) < 0)
		return 1;
	printf("tasks=%zu sockets=%zu\n", set.ntasks, set.nsocks);
	for (i = 0; i < set.nsocks; i++) {
		struct collect_sock *s = &set.socks[i];

		printf("ino=%lu family=%s type=%s users=", s->ino,
		    s->family == AF_INET ? "inet" : s->family == AF_INET6 ?
		    "inet6" : s->family == AF_UNIX ? "unix" : "other",
		    s->type == SOCK_STREAM ? "stream" : s->type == SOCK_DGRAM ?
		    "dgram" : "other");
		for (j = 0; j < s->nusers; j++)
			printf("%s%d:%d", j ? "," : "", (int)s->users[j].pid,
			    s->users[j].fd);
		printf("\n");
	}
	collect_free(&set);
	return 0;
}

/* The freeze window as migrd will open and close it, timed. */
static int
do_hold(const char *cg, const char *ns, long ms)
{
	struct timespec nap = { ms / 1000, (ms % 1000) * 1000000 };
	double t0 = mono_ms(), frozen, locked, unlocked;
	int rc = 0;

	if (cgroup_freeze(cg, TIMEOUT_MS, E) < 0)
		return 1;
	frozen = mono_ms();
	if (nslock_take(ns, E) < 0) {
		cgroup_thaw(cg, E);
		return 1;
	}
	locked = mono_ms();
	nanosleep(&nap, NULL);
	unlocked = mono_ms();
	if (nslock_release(ns, E) < 0)
		rc = 1;
	if (cgroup_thaw(cg, E) < 0)
		rc = 1;
	printf("window_ms=%.1f freeze_ms=%.1f lock_ms=%.1f unlock_thaw_ms=%.1f\n",
	    mono_ms() - t0, frozen - t0, locked - frozen, mono_ms() - unlocked);
	return rc;
}

static int
print_record(json_t *j, void *arg)
{
	char *txt;

	(void)arg;
	if (j == NULL)
		return -1;
	txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (txt == NULL)
		return -1;
	printf("%s\n", txt);
	free(txt);
	return 0;
}

/* Read records from stdin (strictly decoded) and build ns from them. */
static int
do_buildns(const char *ns, const char *hostif, int lock)
{
	struct nsdump *d = calloc(1, sizeof(*d));
	char line[8192];
	int rc = 1, lineno = 0;

	if (d == NULL)
		return 1;
	while (fgets(line, sizeof(line), stdin) != NULL) {
		struct sk_record rec;

		lineno++;
		if (sk_json_parse(line, strlen(line), NULL, &rec, err,
		    sizeof(err)) < 0) {
			log_warnx("stdin:%d: %s", lineno, err);
			goto out;
		}
		if (rec.type == SK_REC_LINK && d->nlinks < NSDUMP_MAX)
			d->links[d->nlinks++] = rec.u.link;
		else if (rec.type == SK_REC_ADDR && d->naddrs < NSDUMP_MAX)
			d->addrs[d->naddrs++] = rec.u.addr;
		else if (rec.type == SK_REC_ROUTE && d->nroutes < NSDUMP_MAX)
			d->routes[d->nroutes++] = rec.u.route;
		else
			log_warnx("stdin:%d: record ignored", lineno);
		sk_record_clear(&rec);
	}
	if (nsbuild_create(ns, E) < 0)
		goto out;
	if ((lock && nslock_take(ns, E) < 0) || nsbuild_apply(ns, d, hostif, E) < 0) {
		nsbuild_delete(ns, hostif, NULL, 0);
		goto out;
	}
	rc = 0;
out:
	free(d);
	return rc;
}

static int
run(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "", *arg = argc > 2 ? argv[2] : NULL;
	int n;

	if (arg == NULL)
		goto usage;
	if (strcmp(cmd, "freeze") == 0)
		return cgroup_freeze(arg, TIMEOUT_MS, E) < 0;
	if (strcmp(cmd, "thaw") == 0)
		return cgroup_thaw(arg, E) < 0;
	if (strcmp(cmd, "kill") == 0)
		return cgroup_kill(arg, TIMEOUT_MS, E) < 0;
	if (strcmp(cmd, "lock") == 0)
		return nslock_take(arg, E) < 0;
	if (strcmp(cmd, "lock-source") == 0)
		return nslock_take_source(arg, 0, E) < 0;
	if (strcmp(cmd, "mute") == 0)
		return nslock_mute(arg, E) < 0;
	if (strcmp(cmd, "unlock") == 0)
		return nslock_release(arg, E) < 0;
	if (strcmp(cmd, "locked") == 0) {
		n = nslock_held(arg, E);
		if (n >= 0)
			printf("%s\n", n ? "yes" : "no");
		return n < 0;
	}
	if (strcmp(cmd, "collect") == 0)
		return do_collect(arg);
	if (strcmp(cmd, "announce") == 0 && argc == 4) {
		n = announce_addrs(arg, argv[3], E);
		if (n >= 0)
			printf("%d\n", n);
		return n < 0;
	}
	if (strcmp(cmd, "dumpns") == 0)
		return nsdump_emit(arg, print_record, NULL, E) < 0;
	if (strcmp(cmd, "buildns") == 0 && (argc == 4 || argc == 5))
		return do_buildns(arg, argv[3], argc == 5 &&
		    strcmp(argv[4], "--lock") == 0);
	if (strcmp(cmd, "attach") == 0 && argc == 4)
		return nsbuild_attach(arg, argv[3], E) < 0;
	if (strcmp(cmd, "delns") == 0 && argc == 4)
		return nsbuild_delete(arg, argv[3], E) < 0;
	if (strcmp(cmd, "hold") == 0 && argc == 5)
		return do_hold(arg, argv[3], strtol(argv[4], NULL, 10));
usage:
	fprintf(stderr, "usage: nsmech freeze|thaw|kill CGROUP | lock|unlock|locked NS | "
	    "collect CGROUP | announce NS IFNAME | hold CGROUP NS MS |\n"
	    "       dumpns NS | buildns NS HOSTIF [--lock] | attach HOSTIF BRIDGE | delns NS HOSTIF\n");
	return 2;
}

int
main(int argc, char **argv)
{
	int rc = run(argc, argv);

	if (rc != 0 && err[0] != '\0')
		fprintf(stderr, "nsmech: %s\n", err);
	return rc;
}
