/* SPDX-License-Identifier: ISC */
/*
 * A namespace's workloads and the cgroup that holds them: the paths
 * migrd uses (CGROUP_ROOT/NAME), made, emptied and removed through the
 * netns layer's cgroup.c, and workloads started through its launcher.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "launch.h"
#include "log.h"
#include "migrd.h"
#include "ns.h"

#define CGROUP_WAIT_MS	2000	/* for the tasks of a removed cgroup */

#define CGROUP_MOUNT	"/sys/fs/cgroup"

/* Our own cgroup v2 path ("/system.slice/migrd.service"), or -1. */
static int
own_cgroup(char *buf, size_t len)
{
	char line[PATH_MAX + 8];
	FILE *f;
	int rc = -1;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "0::/", 4) == 0 &&
		    (size_t)snprintf(buf, len, "%s", line + 3) < len) {
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/*
 * cgroup-root auto: under systemd ($INVOCATION_ID) the unit's own cgroup
 * is delegated to us (Delegate=yes), and the workloads go below it, in
 * "ns"; elsewhere in /sys/fs/cgroup/migr.  No controller is enabled in
 * the unit's cgroup, so migrd itself may stay in it, and systemd can
 * start it there again after a restart.
 */
int
ns_cgroup_resolve(void)
{
	char own[PATH_MAX - 128];	/* room for the mount and "/ns" */

	if (strcmp(migrd.conf.cgroup_root, "auto") != 0)
		return 0;
	if (getenv("INVOCATION_ID") != NULL && own_cgroup(own, sizeof(own)) ==
	    0 && strcmp(own, "/") != 0) {
		snprintf(migrd.conf.cgroup_root, sizeof(migrd.conf.cgroup_root),
		    "%s%s/ns", CGROUP_MOUNT, own);
		log_info("workloads go below the unit's own cgroup, in %s",
		    migrd.conf.cgroup_root);
	} else
		snprintf(migrd.conf.cgroup_root, sizeof(migrd.conf.cgroup_root),
		    "%s/migr", CGROUP_MOUNT);
	return 0;
}

void
ns_cgroup_path(const char *ns, char *buf, size_t len)
{
	/* cgroup-root is shorter than PATH_MAX - 64 (config.c) */
	if ((size_t)snprintf(buf, len, "%s/%s", migrd.conf.cgroup_root, ns) >=
	    len)
		buf[0] = '\0';
}

/*
 * cgroup-root's parent must be a cgroup v2 directory; the root itself
 * is made if it is not there.  With workload-memory-max or
 * workload-pids-max, the controller must reach the namespaces' cgroups:
 * it is enabled from the mount's root down to cgroup-root (none of which
 * may hold processes of its own, which rules out the unit's own cgroup
 * under systemd: migrd runs there).
 */
int
ns_cgroup_ready(char *err, size_t errlen)
{
	const char *root = migrd.conf.cgroup_root, *top = CGROUP_MOUNT;
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", root);
	if ((slash = strrchr(parent, '/')) != NULL && slash != parent)
		*slash = '\0';
	if (cgroup_is_v2(parent, err, errlen) < 0 ||
	    cgroup_create(root, err, errlen) < 0)
		return -1;
	/* a cgroup-root on another mount: from its parent down */
	if (strncmp(root, CGROUP_MOUNT "/", sizeof(CGROUP_MOUNT)) != 0)
		top = parent;
	if ((migrd.conf.workload_memory_max > 0 &&
	    cgroup_delegate(top, root, "memory", err, errlen) < 0) ||
	    (migrd.conf.workload_pids_max > 0 &&
	    cgroup_delegate(top, root, "pids", err, errlen) < 0))
		return -1;
	return 0;
}

/* The limits of the configuration, written again each time (a restart
 * with other values changes them); 0 lifts one where it is offered. */
static int
ns_cgroup_limit(const char *cg, const char *knob, uint64_t v, char *err,
    size_t errlen)
{
	char val[32];

	if (v == 0) {
		if (cgroup_set(cg, knob, "max", err, errlen) < 0 &&
		    errno != ENOENT)
			return -1;
		return 0;
	}
	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	return cgroup_set(cg, knob, val, err, errlen);
}

int
ns_cgroup_create(const char *ns, char *err, size_t errlen)
{
	char path[PATH_MAX];

	if (ns_cgroup_ready(err, errlen) < 0)
		return -1;
	ns_cgroup_path(ns, path, sizeof(path));
	if (cgroup_create(path, err, errlen) < 0 ||
	    ns_cgroup_limit(path, "memory.max",
	    (uint64_t)migrd.conf.workload_memory_max << 20, err, errlen) < 0 ||
	    ns_cgroup_limit(path, "pids.max", migrd.conf.workload_pids_max,
	    err, errlen) < 0)
		return -1;
	return 0;
}

int
ns_cgroup_remove(const char *ns)
{
	char path[PATH_MAX], err[256];

	ns_cgroup_path(ns, path, sizeof(path));
	if (cgroup_remove(path, CGROUP_WAIT_MS, err, sizeof(err)) < 0) {
		log_warnx("%s: %s", ns, err);
		return -1;
	}
	return 0;
}

json_t *
ns_cgroup_pids(const char *ns)
{
	char path[PATH_MAX];
	json_t *a = json_array();
	pid_t *pids;
	size_t i, n;

	ns_cgroup_path(ns, path, sizeof(path));
	if (a == NULL || cgroup_procs(path, &pids, &n, 4096, NULL, 0) < 0)
		return a;
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(pids[i]));
	free(pids);
	return a;
}

static int
prepare(const char *ns, const int *fds, char *const *names, size_t nfds,
    char *const *argv, int ckpt, int gate, struct launch_pending *lp,
    char *err, size_t errlen)
{
	char cg[PATH_MAX], logpath[PATH_MAX];
	/* what a workload must not reach: migrd's key, its control
	 * socket (root could use it), its state and configuration, the
	 * other workloads' logs (its own keeper holds the folder open) */
	const char *const hide[] = {
		migrd.conf.key, migrd.conf.control_socket,
		migrd.conf.state_dir, migrd.conf_path,
		migrd.conf.workload_log_dir, NULL
	};
	struct launch_spec sp = {
		.ns = ns, .cgroup = cg, .argv = argv, .logpath = logpath,
		.logmax = migrd.conf.workload_log_max,
		.fds = fds, .names = names, .nfds = nfds,
		.uid = migrd.workload_uid, .gid = migrd.workload_gid,
		.caps = migrd.conf.workload_caps, .hide = hide,
		.pidns = ckpt, .gate = gate,
	};

	ns_cgroup_path(ns, cg, sizeof(cg));
	ns_logpath(ns, logpath, sizeof(logpath));
	return launch_prepare(&sp, lp, err, errlen);
}

int
workload_prepare(const char *ns, const int *fds, char *const *names,
    size_t nfds, char *const *argv, int gate, struct launch_pending *lp,
    char *err, size_t errlen)
{
	return prepare(ns, fds, names, nfds, argv, 0, gate, lp, err, errlen);
}

pid_t
workload_start(const char *ns, const int *fds, char *const *names,
    size_t nfds, char *const *argv, int ckpt, char *err, size_t errlen)
{
	struct launch_pending lp;

	if (prepare(ns, fds, names, nfds, argv, ckpt, 0, &lp, err, errlen) < 0)
		return -1;
	return launch_go(&lp, err, errlen);
}
