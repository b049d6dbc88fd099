/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "launch.h"
#include "log.h"
#include "mig.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "netns.h"
#include "ns.h"
#include "nsarg.h"
#include "nsbuild.h"
#include "nsdump.h"
#include "statefile.h"

#define STATE_VERSION	1
#define NS_MAX		64

struct workload {
	pid_t	pid;
	time_t	started;
	char	cmd[256];
	json_t	*argv;		/* what a migration restarts elsewhere */
	int	exited;
	int	status;
	int	ckpt;		/* checkpoint mode: moves with its memory */
	int	gate;		/* restarted before going live, at a gate */
};

#define NS_WORKLOADS_MAX 16

struct mns {
	TAILQ_ENTRY(mns) entry;
	char		 name[NSARG_NAME_MAX + 1];
	json_t		*addrs;		/* array of canonical strings */
	json_t		*routes;
	char		 mac[18];
	time_t		 created;
	struct workload	 wl[NS_WORKLOADS_MAX];
	int		 nwl;
};

static TAILQ_HEAD(, mns) nslist = TAILQ_HEAD_INITIALIZER(nslist);
static int		 nscount;

static struct mns *
ns_find(const char *name)
{
	struct mns *n;

	TAILQ_FOREACH(n, &nslist, entry)
		if (strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

int
ns_count(void)
{
	return nscount;
}

int
ns_exists(const char *name)
{
	return ns_find(name) != NULL;
}

static void
ns_free(struct mns *n)
{
	int i;

	for (i = 0; i < n->nwl; i++)
		json_decref(n->wl[i].argv);
	json_decref(n->addrs);
	json_decref(n->routes);
	free(n);
}

static json_t *
ns_json(const struct mns *n, int verbose)
{
	json_t *o, *w;
	int i;

	o = json_pack("{s:s,s:O,s:O,s:s,s:I,s:o}", "name", n->name,
	    "addrs", n->addrs, "routes", n->routes, "mac", n->mac,
	    "created", (json_int_t)n->created, "tasks",
	    ns_cgroup_pids(n->name));
	if (o == NULL || !verbose)
		return o;
	w = json_array();
	for (i = 0; w && i < n->nwl; i++)
		json_array_append_new(w, json_pack("{s:i,s:s,s:I,s:b,s:i,s:O?,"
		    "s:b,s:b}", "pid", (int)n->wl[i].pid, "command",
		    n->wl[i].cmd, "started", (json_int_t)n->wl[i].started,
		    "exited", n->wl[i].exited, "status", n->wl[i].status,
		    "argv", n->wl[i].argv, "checkpoint", n->wl[i].ckpt,
		    "gate", n->wl[i].gate));
	json_object_set_new(o, "workloads", w);
	return o;
}

/* STATE_DIR/state.json, replaced whole and durably (statefile.h). */
static int
state_save(void)
{
	char path[PATH_MAX + 16], err[PATH_MAX + 64];
	json_t *root, *a;
	struct mns *n;
	int rc;

	snprintf(path, sizeof(path), "%s/state.json", migrd.conf.state_dir);
	if ((a = json_array()) == NULL)
		return -1;
	TAILQ_FOREACH(n, &nslist, entry)
		json_array_append_new(a, ns_json(n, 1));
	root = json_pack("{s:i,s:s,s:o}", "version", STATE_VERSION,
	    "host", migrd.conf.hostname, "namespaces", a);
	if (root == NULL)
		return -1;
	if ((rc = statefile_write(path, root, err, sizeof(err))) < 0)
		log_warnx("namespaces not saved: %s", err);
	json_decref(root);
	return rc;
}

static int
netns_present(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, name);
	return access(path, F_OK) == 0;
}

/* Workloads of a recovered ns: what they were, for "ns show" and for a
 * migration's argv.  A pid is no longer our child after a restart. */
static void
load_workloads(struct mns *n, json_t *a)
{
	json_t *o, *argv;
	json_int_t pid, started, status;
	const char *cmd;
	int exited, ckpt, gate;
	size_t i;

	json_array_foreach(a, i, o) {
		struct workload *w;

		argv = NULL;
		ckpt = gate = 0;
		if (n->nwl == NS_WORKLOADS_MAX || json_unpack(o,
		    "{s:I,s:s,s:I,s:b,s:I,s?o,s?b,s?b}", "pid", &pid, "command",
		    &cmd, "started", &started, "exited", &exited, "status",
		    &status, "argv", &argv, "checkpoint", &ckpt, "gate",
		    &gate) == -1 ||
		    (argv != NULL && ns_argv_check(argv, NULL, 0) != RES_OK))
			continue;
		w = &n->wl[n->nwl++];
		w->pid = (pid_t)pid;
		w->started = (time_t)started;
		snprintf(w->cmd, sizeof(w->cmd), "%s", cmd);
		w->exited = exited;
		w->status = (int)status;
		w->argv = argv ? json_incref(argv) : NULL;
		w->ckpt = ckpt;
		w->gate = gate;
	}
}

/*
 * Re-read state.json and keep what still exists on the system.  A file
 * that is there but unreadable stops migrd: overwriting it would forget
 * every namespace it manages.
 */
static int
state_load(void)
{
	char path[PATH_MAX + 16], err[PATH_MAX + 64];
	json_t *root, *a, *o;
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "%s/state.json", migrd.conf.state_dir);
	if ((rc = statefile_read(path, 4 * 1024 * 1024, &root, err,
	    sizeof(err))) == 1)
		return 0;
	if (rc < 0) {
		log_warnx("cannot read the namespaces migrd manages: %s (move "
		    "the file away to start afresh)", err);
		return -1;
	}
	a = json_object_get(root, "namespaces");
	json_array_foreach(a, i, o) {
		const char *name = NULL, *mac = "";
		json_t *addrs = NULL, *routes = NULL;
		json_int_t created = 0;
		struct mns *n;

		if (json_unpack(o, "{s:s,s:o,s:o,s?s,s?I}", "name", &name,
		    "addrs", &addrs, "routes", &routes, "mac", &mac,
		    "created", &created) == -1 ||
		    nsarg_name(name, err, sizeof(err)) == -1 ||
		    !json_is_array(addrs) || !json_is_array(routes) ||
		    strlen(mac) >= sizeof(n->mac) || ns_find(name)) {
			log_warnx("%s: %s: skipping bad entry %zu", __func__,
			    path, i);
			continue;
		}
		if (!netns_present(name)) {
			char cg[PATH_MAX];

			history_add("ns", "%s is in %s but gone from the "
			    "system; forgetting it", name, path);
			/* its cgroup goes too, if no task is left in it */
			ns_cgroup_path(name, cg, sizeof(cg));
			strcat(cg, "/" LAUNCH_LOG_CGROUP);
			(void)rmdir(cg);
			ns_cgroup_path(name, cg, sizeof(cg));
			if (rmdir(cg) == -1 && errno != ENOENT)
				log_warn("%s: keeping %s", __func__, cg);
			continue;
		}
		if ((n = calloc(1, sizeof(*n))) == NULL)
			break;
		strcpy(n->name, name);
		strcpy(n->mac, mac);
		n->addrs = json_incref(addrs);
		n->routes = json_incref(routes);
		n->created = (time_t)created;
		load_workloads(n, json_object_get(o, "workloads"));
		TAILQ_INSERT_TAIL(&nslist, n, entry);
		nscount++;
		if (ns_cgroup_create(name, err, sizeof(err)) < 0)
			log_warnx("namespace %s: %s", name, err);
		log_info("namespace %s recovered from %s", name, path);
	}
	json_decref(root);
	return state_save();
}

int
ns_init(void)
{
	char err[PATH_MAX + 64];
	struct stat st;

	if (mkdir(migrd.conf.state_dir, 0700) == -1 && errno != EEXIST) {
		log_warn("%s: mkdir %s", __func__, migrd.conf.state_dir);
		return -1;
	}
	if (stat(migrd.conf.state_dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		log_warnx("%s: %s is not a directory", __func__,
		    migrd.conf.state_dir);
		return -1;
	}
	/* the workloads' output: apart from the state, which must always
	 * be writable (a full log folder never stops a migration) */
	if (mkdir(migrd.conf.workload_log_dir, 0750) == -1 &&
	    errno != EEXIST) {
		log_warn("%s: mkdir %s", __func__,
		    migrd.conf.workload_log_dir);
		return -1;
	}
	ns_cgroup_resolve();
	if (ns_cgroup_ready(err, sizeof(err)) < 0)
		log_warnx("%s (workloads cannot run; see cgroup-root in "
		    "migrd.conf(5))", err);
	return state_load();
}

void
ns_shutdown(void)
{
	struct mns *n;

	while ((n = TAILQ_FIRST(&nslist)) != NULL) {
		TAILQ_REMOVE(&nslist, n, entry);
		ns_free(n);
	}
	nscount = 0;
}

void
ns_child_exited(pid_t pid, int status)
{
	struct mns *n;
	int i;

	TAILQ_FOREACH(n, &nslist, entry) {
		for (i = 0; i < n->nwl; i++) {
			if (n->wl[i].pid != pid || n->wl[i].exited)
				continue;
			n->wl[i].exited = 1;
			n->wl[i].status = WIFEXITED(status) ?
			    WEXITSTATUS(status) : 128 + WTERMSIG(status);
			history_add("run", "%s: pid %ld (%s) ended, status %d",
			    n->name, (long)pid, n->wl[i].cmd,
			    n->wl[i].status);
			state_save();
			return;
		}
	}
}

static int
get_ns_arg(json_t *req, const char **name, char *msg, size_t msglen)
{
	json_error_t jerr;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s}", "ns", name)) {
		snprintf(msg, msglen, "bad request: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if (nsarg_name(*name, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	if (ns_find(*name) == NULL) {
		snprintf(msg, msglen, "no namespace '%s'", *name);
		return RES_NO_SUCH_NS;
	}
	return RES_OK;
}

int
ns_ctl_list(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	json_t *a = json_array();
	struct mns *n;

	(void)r;
	(void)msg;
	(void)msglen;
	TAILQ_FOREACH(n, &nslist, entry)
		json_array_append_new(a, ns_json(n, 0));
	*data = json_pack("{s:o}", "namespaces", a);
	return RES_OK;
}

static int
append_record(json_t *rec, void *arg)
{
	return json_array_append_new(arg, rec);
}

int
ns_show_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	int rc;

	if ((rc = get_ns_arg(req, &r->ns, msg, msglen)) == RES_OK)
		r->mns = ns_find(r->ns);
	return rc;
}

int
ns_ctl_show(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	const char *name = r->ns;
	char err[256];
	json_t *o, *net;

	(void)msg;
	(void)msglen;
	o = ns_json(r->mns, 1);
	/* as the system has it now, in the records a migration carries */
	if ((net = json_array()) != NULL &&
	    nsdump_emit(name, append_record, net, err, sizeof(err)) == 0)
		json_object_set_new(o, "network", net);
	else {
		json_decref(net);
		log_warnx("ns show %s: %s", name, err);
	}
	*data = o;
	return RES_OK;
}

/* Remove what create may have made; errors are logged only. */
static void
ns_teardown(const char *name)
{
	char veth[IFNAMSIZ], err[300];

	snprintf(veth, sizeof(veth), "v%s", name);
	ns_cgroup_remove(name);
	if (nsbuild_delete(name, veth, err, sizeof(err)) < 0)
		log_warnx("%s: %s: %s", __func__, name, err);
}

/*
 * A namespace's addresses, routes (may be NULL) and MAC (may be NULL),
 * from migctl's "ns create" or a peer's PREPARE, parsed into a, r and
 * macb: RES_OK, or a result code and msg.
 */
static int
parse_desc(json_t *ja, json_t *jr, const char *mac, struct nsarg_addr *a,
    size_t *na, struct nsarg_route *r, size_t *nr, uint8_t macb[6],
    char *msg, size_t msglen)
{
	json_t *v;
	size_t i;

	if (!json_is_array(ja) || (jr != NULL && !json_is_array(jr))) {
		snprintf(msg, msglen, "addrs and routes must be arrays");
		return RES_BAD_REQUEST;
	}
	*na = json_array_size(ja);
	*nr = jr ? json_array_size(jr) : 0;
	if (*na == 0 || *na > NSARG_ADDRS_MAX || *nr > NSARG_ROUTES_MAX) {
		snprintf(msg, msglen, "need 1-%d addresses and at most %d "
		    "routes", NSARG_ADDRS_MAX, NSARG_ROUTES_MAX);
		return RES_INVALID_ARGUMENT;
	}
	json_array_foreach(ja, i, v) {
		if (!json_is_string(v) || nsarg_addr(json_string_value(v),
		    &a[i], msg, msglen) == -1) {
			if (!json_is_string(v))
				snprintf(msg, msglen, "address %zu is not a "
				    "string", i);
			return RES_INVALID_ARGUMENT;
		}
	}
	for (i = 0; i < *nr; i++) {
		v = json_array_get(jr, i);
		if (!json_is_string(v) || nsarg_route(json_string_value(v),
		    &r[i], msg, msglen) == -1) {
			if (!json_is_string(v))
				snprintf(msg, msglen, "route %zu is not a "
				    "string", i);
			return RES_INVALID_ARGUMENT;
		}
	}
	if (mac != NULL && nsarg_mac(mac, macb, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	return RES_OK;
}

/*
 * The records "ns create" builds from: lo, the veth's inner end eth0
 * (the given MAC, or one the kernel picks), the addresses and the routes
 * on eth0.  IPv6 addresses go in newest first, as a dump lists them, so
 * nsbuild_apply() adds them in the order given.
 */
static void
add_record_addr(struct nsdump *d, const struct nsarg_addr *x)
{
	struct sk_ifaddr *y = &d->addrs[d->naddrs++];

	snprintf(y->dev, sizeof(y->dev), "eth0");
	y->family = x->family;
	memcpy(y->addr, x->addr, sizeof(y->addr));
	y->prefix = (uint8_t)x->plen;
}

static void
create_records(struct nsdump *d, const struct nsarg_addr *a, size_t na,
    const struct nsarg_route *r, size_t nr, const uint8_t *mac)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	snprintf(d->links[0].name, sizeof(d->links[0].name), "lo");
	snprintf(d->links[0].kind, sizeof(d->links[0].kind), "lo");
	snprintf(d->links[1].name, sizeof(d->links[1].name), "eth0");
	snprintf(d->links[1].kind, sizeof(d->links[1].kind), "veth");
	if (mac != NULL)
		memcpy(d->links[1].mac, mac, 6);
	d->nlinks = 2;
	/* IPv4 in the order given, then IPv6 last given first */
	for (i = 0; i < na; i++)
		if (a[i].family == AF_INET)
			add_record_addr(d, &a[i]);
	for (i = na; i-- > 0;)
		if (a[i].family == AF_INET6)
			add_record_addr(d, &a[i]);
	for (i = 0; i < nr; i++) {
		struct sk_route *y = &d->routes[d->nroutes++];

		y->family = r[i].family;
		if (!r[i].is_default) {
			memcpy(y->dst, r[i].dst.addr, sizeof(y->dst));
			y->prefix = (uint8_t)r[i].dst.plen;
		}
		y->has_gateway = !r[i].dev_only;
		memcpy(y->gateway, r[i].gw, sizeof(y->gateway));
		snprintf(y->dev, sizeof(y->dev), "eth0");
		y->metric = r[i].metric;
		y->table = RT_TABLE_MAIN;
	}
}

/* "ns create": the request, and whether this host could build it. */
int
ns_create_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	const char *name;
	json_t *ja, *jr = NULL;
	json_error_t jerr;
	char veth[IFNAMSIZ];
	int rc;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s,s:o,s?s,s?o}",
	    "ns", &name, "addrs", &ja, "mac", &r->mac, "routes", &jr) == -1) {
		snprintf(msg, msglen, "bad request: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if (nsarg_name(name, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	if ((rc = parse_desc(ja, jr, r->mac, r->addrs, &r->naddrs, r->routes,
	    &r->nroutes, r->macb, msg, msglen)) != RES_OK)
		return rc;
	r->ns = name;
	snprintf(veth, sizeof(veth), "v%s", name);
	if (ns_find(name) != NULL || netns_present(name)) {
		snprintf(msg, msglen, "namespace '%s' exists", name);
		return RES_NS_EXISTS;
	}
	if (if_nametoindex(veth) != 0) {
		snprintf(msg, msglen, "interface %s exists", veth);
		return RES_NS_EXISTS;
	}
	if (if_nametoindex(migrd.conf.bridge) == 0) {
		snprintf(msg, msglen, "bridge %s does not exist",
		    migrd.conf.bridge);
		return RES_SYSTEM;
	}
	if (nscount >= NS_MAX) {
		snprintf(msg, msglen, "at most %d namespaces", NS_MAX);
		return RES_LIMIT;
	}
	return RES_OK;
}

int
ns_ctl_create(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	const char *name = r->ns, *mac = r->mac;
	size_t i, na = r->naddrs, nr = r->nroutes;
	char veth[IFNAMSIZ];
	struct nsdump *d;
	json_t *sa, *sr;
	struct mns *n;

	(void)data;
	snprintf(veth, sizeof(veth), "v%s", name);
	if ((d = malloc(sizeof(*d))) == NULL) {
		snprintf(msg, msglen, "out of memory");
		return RES_SYSTEM;
	}
	create_records(d, r->addrs, na, r->routes, nr, mac ? r->macb : NULL);

	/* validated: now change the system, undoing everything on failure;
	 * built as a migration's destination builds it (nsbuild.h) */
	if (nsbuild_create(name, msg, msglen) < 0) {
		free(d);
		return RES_SYSTEM;
	}
	if (nsbuild_apply(name, d, veth, msg, msglen) < 0 ||
	    nsbuild_attach(veth, migrd.conf.bridge, msg, msglen) < 0 ||
	    ns_cgroup_create(name, msg, msglen) < 0 ||
	    (n = calloc(1, sizeof(*n))) == NULL)
		goto fail_teardown;
	free(d);
	sa = json_array();
	sr = json_array();
	for (i = 0; i < na; i++)
		json_array_append_new(sa, json_string(r->addrs[i].text));
	for (i = 0; i < nr; i++)
		json_array_append_new(sr, json_string(r->routes[i].text));
	strcpy(n->name, name);
	if (mac)
		strcpy(n->mac, mac);
	n->addrs = sa;
	n->routes = sr;
	n->created = time(NULL);
	TAILQ_INSERT_TAIL(&nslist, n, entry);
	nscount++;
	state_save();
	history_add("ns", "created %s (%zu addresses, %zu routes)", name,
	    na, nr);
	snprintf(msg, msglen, "namespace %s created", name);
	return RES_OK;

fail_teardown:
	free(d);
	if (msg[0] == '\0')
		snprintf(msg, msglen, "out of memory");
	log_warnx("ns create %s: %s", name, msg);
	ns_teardown(name);
	return RES_SYSTEM;
}

int
ns_delete_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	int rc;

	if ((rc = get_ns_arg(req, &r->ns, msg, msglen)) != RES_OK)
		return rc;
	if (mig_busy(r->ns)) {
		snprintf(msg, msglen, "%s is being migrated", r->ns);
		return RES_BUSY;
	}
	r->mns = ns_find(r->ns);
	return RES_OK;
}

int
ns_ctl_delete(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	struct mns *n = r->mns;

	(void)data;
	ns_teardown(n->name);
	TAILQ_REMOVE(&nslist, n, entry);
	nscount--;
	history_add("ns", "deleted %s", n->name);
	snprintf(msg, msglen, "namespace %s deleted", n->name);
	ns_free(n);
	state_save();
	return RES_OK;
}

/* argv from a request or a peer: RES_OK, or a result code and msg. */
int
ns_argv_check(json_t *ja, char *msg, size_t msglen)
{
	const char *argv[NSARG_ARGV_MAX + 1];
	char dummy[8];
	size_t i, argc;
	json_t *v;

	if (msg == NULL) {
		msg = dummy;
		msglen = sizeof(dummy);
	}
	if (!json_is_array(ja)) {
		snprintf(msg, msglen, "argv is not an array");
		return RES_BAD_REQUEST;
	}
	argc = json_array_size(ja);
	if (argc > NSARG_ARGV_MAX) {
		snprintf(msg, msglen, "more than %d arguments", NSARG_ARGV_MAX);
		return RES_INVALID_ARGUMENT;
	}
	json_array_foreach(ja, i, v) {
		if ((argv[i] = json_string_value(v)) == NULL) {
			snprintf(msg, msglen, "argument %zu is not a string",
			    i);
			return RES_BAD_REQUEST;
		}
	}
	argv[argc] = NULL;
	if (nsarg_argv(argv, argc, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	return RES_OK;
}

/* Record a started workload (n has room: callers made it). */
static struct workload *
add_workload(struct mns *n, pid_t pid, json_t *argv, int ckpt, int gate)
{
	struct workload *w = &n->wl[n->nwl++];
	size_t i, off = 0;

	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->ckpt = ckpt;
	w->gate = gate;
	w->started = time(NULL);
	w->argv = json_incref(argv);
	for (i = 0; i < json_array_size(argv) && off < sizeof(w->cmd) - 1; i++)
		off += (size_t)snprintf(w->cmd + off, sizeof(w->cmd) - off,
		    "%s%s", i ? " " : "", json_string_value(json_array_get(argv,
		    i)));
	return w;
}

int
ns_run_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	const char *name;
	json_error_t jerr;
	json_t *ja;
	int ckpt = 0, gate = 0;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s,s:o,s?b,s?b}", "ns",
	    &name, "argv", &ja, "checkpoint", &ckpt, "gate", &gate) == -1) {
		snprintf(msg, msglen, "bad request: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if (ckpt && gate) {
		snprintf(msg, msglen, "a workload is checkpointed or gated, "
		    "not both");
		return RES_INVALID_ARGUMENT;
	}
	if (!json_is_array(ja)) {
		snprintf(msg, msglen, "bad request: argv is not an array");
		return RES_BAD_REQUEST;
	}
	if (nsarg_name(name, msg, msglen) == -1)
		return RES_INVALID_ARGUMENT;
	if ((r->mns = ns_find(name)) == NULL) {
		snprintf(msg, msglen, "no namespace '%s'", name);
		return RES_NO_SUCH_NS;
	}
	if (mig_busy(name)) {
		snprintf(msg, msglen, "%s is being migrated", name);
		return RES_BUSY;
	}
	r->ns = name;
	r->argv = ja;
	r->checkpoint = ckpt;
	r->gate = gate;
	return ns_argv_check(ja, msg, msglen);
}

int
ns_ctl_run(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	const char *argv[NSARG_ARGV_MAX + 1], *name = r->ns;
	char logpath[PATH_MAX + 32], err[256];
	json_t *ja = r->argv, *v;
	struct mns *n = r->mns;
	struct workload *w;
	size_t i, argc;
	pid_t pid;

	argc = json_array_size(ja);
	json_array_foreach(ja, i, v)
		argv[i] = json_string_value(v);
	argv[argc] = NULL;
	if (n->nwl == NS_WORKLOADS_MAX) {
		/* forget the oldest finished one, or refuse */
		for (i = 0; i < (size_t)n->nwl && !n->wl[i].exited; i++)
			;
		if (i == (size_t)n->nwl) {
			snprintf(msg, msglen, "%s already runs %d workloads",
			    name, NS_WORKLOADS_MAX);
			return RES_LIMIT;
		}
		memmove(&n->wl[i], &n->wl[i + 1],
		    (size_t)(n->nwl - (int)i - 1) * sizeof(n->wl[0]));
		n->nwl--;
	}
	/* checkpoint mode moves one program's tree, nothing beside it */
	for (i = 0; i < (size_t)n->nwl; i++)
		if (!n->wl[i].exited && (r->checkpoint || n->wl[i].ckpt)) {
			snprintf(msg, msglen, "%s already runs %s (pid %ld)%s",
			    name, n->wl[i].cmd, (long)n->wl[i].pid,
			    n->wl[i].ckpt ? ", checkpointed: it must be the "
			    "only program there" : ": a checkpointed program "
			    "must be the only one there");
			return RES_LIMIT;
		}
	ns_logpath(name, logpath, sizeof(logpath));
	if ((pid = workload_start(name, NULL, NULL, 0, (char *const *)argv,
	    r->checkpoint, err, sizeof(err))) == -1) {
		snprintf(msg, msglen, "cannot start %s in %s: %s", argv[0],
		    name, err);
		return RES_SYSTEM;
	}
	w = add_workload(n, pid, ja, r->checkpoint, r->gate);
	state_save();
	history_add("run", "%s: pid %ld%s: %s", name, (long)pid,
	    w->ckpt ? " (checkpoint mode)" : w->gate ? " (gated)" : "",
	    w->cmd);
	*data = json_pack("{s:i,s:s,s:b,s:b}", "pid", (int)pid, "log",
	    logpath, "checkpoint", w->ckpt, "gate", w->gate);
	snprintf(msg, msglen, "started pid %ld in %s%s", (long)pid, name,
	    w->ckpt ? ", in checkpoint mode" : w->gate ? ", gated when it "
	    "moves" : "");
	return RES_OK;
}

/* --- what a migration needs (mig_src.c, mig_dst.c) --- */

json_t *
ns_describe(const char *name)
{
	struct mns *n = ns_find(name);

	if (n == NULL)
		return NULL;
	return json_pack("{s:O,s:O,s:s}", "addrs", n->addrs, "routes",
	    n->routes, "mac", n->mac);
}

/* The newest workload of name that still runs and has an argv (the one
 * a migration moves), or NULL. */
static const struct workload *
newest_running(const char *name)
{
	struct mns *n = ns_find(name);
	int i;

	for (i = n ? n->nwl - 1 : -1; i >= 0; i--)
		if (n->wl[i].argv != NULL && !n->wl[i].exited)
			return &n->wl[i];
	return NULL;
}

json_t *
ns_workload_argv(const char *name)
{
	const struct workload *w = newest_running(name);

	return w != NULL ? json_incref(w->argv) : NULL;
}

/* Is the newest running workload gated (launch.h)? */
int
ns_workload_gate(const char *name)
{
	const struct workload *w = newest_running(name);

	return w != NULL && w->gate;
}

/* The newest running workload's pid if it is checkpointed, else 0. */
pid_t
ns_workload_ckpt(const char *name)
{
	const struct workload *w = newest_running(name);

	return w != NULL && w->ckpt ? w->pid : 0;
}

/* The description a peer sent: RES_OK, or a result code and msg. */
int
ns_describe_check(json_t *d, char *msg, size_t msglen)
{
	struct nsarg_addr a[NSARG_ADDRS_MAX];
	struct nsarg_route r[NSARG_ROUTES_MAX];
	uint8_t mac[6];
	json_t *addrs, *routes;
	const char *m;
	json_error_t jerr;
	size_t na, nr;

	if (json_unpack_ex(d, &jerr, JSON_STRICT, "{s:o,s:o,s:s}", "addrs",
	    &addrs, "routes", &routes, "mac", &m) == -1) {
		snprintf(msg, msglen, "namespace: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	/* a peer's "" is a namespace whose MAC migrd left to the kernel */
	return parse_desc(addrs, routes, m[0] ? m : NULL, a, &na, r, &nr, mac,
	    msg, msglen);
}

/* Could name live here?  RES_OK, or why not. */
int
ns_can_host(const char *name, json_t *addrs, char *msg, size_t msglen)
{
	char veth[IFNAMSIZ], why[256];
	struct nsarg_addr want, have;
	struct mns *n;
	json_t *v, *w;
	size_t i, j;

	snprintf(veth, sizeof(veth), "v%s", name);
	if (ns_find(name) != NULL || netns_present(name)) {
		snprintf(msg, msglen, "namespace '%s' exists on %s", name,
		    migrd.conf.hostname);
		return RES_NS_EXISTS;
	}
	if (if_nametoindex(veth) != 0) {
		snprintf(msg, msglen, "interface %s exists on %s", veth,
		    migrd.conf.hostname);
		return RES_NS_EXISTS;
	}
	if (if_nametoindex(migrd.conf.bridge) == 0) {
		snprintf(msg, msglen, "bridge %s does not exist on %s",
		    migrd.conf.bridge, migrd.conf.hostname);
		return RES_SYSTEM;
	}
	if (ns_cgroup_ready(why, sizeof(why)) == -1) {
		snprintf(msg, msglen, "no cgroup for workloads on %s: %s",
		    migrd.conf.hostname, why);
		return RES_SYSTEM;
	}
	if (nscount >= NS_MAX) {
		snprintf(msg, msglen, "%s has %d namespaces already",
		    migrd.conf.hostname, NS_MAX);
		return RES_LIMIT;
	}
	json_array_foreach(addrs, i, v) {
		if (nsarg_addr(json_string_value(v), &want, msg, msglen) == -1)
			return RES_INVALID_ARGUMENT;
		TAILQ_FOREACH(n, &nslist, entry) {
			json_array_foreach(n->addrs, j, w) {
				if (nsarg_addr(json_string_value(w), &have,
				    NULL, 0) == -1 || have.family != want.family ||
				    memcmp(&have.addr, &want.addr,
				    want.family == AF_INET ? 4 : 16) != 0)
					continue;
				snprintf(msg, msglen, "address %s is in use "
				    "by namespace %s on %s",
				    json_string_value(v), n->name,
				    migrd.conf.hostname);
				return RES_NS_EXISTS;
			}
		}
	}
	return RES_OK;
}

/* A namespace that came in by migration, its workload running. */
int
ns_adopt(const char *name, json_t *desc, json_t *argv, pid_t pid, int ckpt,
    int gate)
{
	struct mns *n;
	const char *mac = "";

	if ((n = calloc(1, sizeof(*n))) == NULL) {
		log_warn("%s: calloc", __func__);
		return -1;
	}
	snprintf(n->name, sizeof(n->name), "%s", name);
	json_unpack(desc, "{s:s}", "mac", &mac);
	snprintf(n->mac, sizeof(n->mac), "%s", mac);
	n->addrs = json_incref(json_object_get(desc, "addrs"));
	n->routes = json_incref(json_object_get(desc, "routes"));
	n->created = time(NULL);
	if (argv != NULL && pid > 0)
		add_workload(n, pid, argv, ckpt, gate);
	TAILQ_INSERT_TAIL(&nslist, n, entry);
	nscount++;
	state_save();
	return 0;
}

/* A namespace that moved away: migsrc_commit took the system's part. */
void
ns_forget(const char *name)
{
	struct mns *n = ns_find(name);

	if (n == NULL)
		return;
	TAILQ_REMOVE(&nslist, n, entry);
	nscount--;
	ns_free(n);
	state_save();
}

void
ns_logpath(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.log", migrd.conf.workload_log_dir, name);
}
