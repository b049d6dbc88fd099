/* SPDX-License-Identifier: ISC */
/*
 * The keywords of migrd.conf: one table drives parsing, defaults,
 * validation and "migrd -nv", in this order, which is also the order of
 * docs/man/migrd.conf.5 (tests/unit/test_config_man.c checks the page
 * against the table).  listen and peer, made of several words, have
 * their own types here; the others use the generic ones of
 * config_types.c.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>

#include "config_keys.h"
#include "migrd-protocol.h"

static const char *const lock_modes[] = { "drop", "replay", NULL };
static const char *const compress_modes[] = { "none", "deflate", NULL };
static const char *const no_yes[] = { "no", "yes", NULL };

static int
valid_addr(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 ||
	    inet_pton(AF_INET6, s, buf) == 1;
}

/* "[port N]" at w[i..]; returns 0 and sets *port, or -1 */
static int
opt_port(struct conf_ctx *p, const char *kw, char **w, int n, int i,
    uint16_t *port)
{
	uint32_t v;

	if (i == n)
		return 0;
	if (strcmp(w[i], "port") != 0 || i + 2 != n) {
		conf_err(p, "%s: expected 'port N' after the address, got '%s'",
		    kw, w[i]);
		return -1;
	}
	if (conf_get_uint(p, kw, w[i + 1], 1, 65535, &v) == -1)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* listen ADDRESS [port N]: listen_addr, listen_port */
static int
listen_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	struct migrd_conf *c = p->c;

	if (!valid_addr(w[1])) {
		conf_err(p, "%s: '%s' is not a numeric IPv4 or IPv6 address",
		    k->name, w[1]);
		return -1;
	}
	if (opt_port(p, k->name, w, n, 2, &c->listen_port) == -1)
		return -1;
	conf_set_str(c->listen_addr, sizeof(c->listen_addr), w[1]);
	return 0;
}

static void
listen_init(const struct conf_key *k, struct migrd_conf *c)
{
	conf_set_str(c->listen_addr, sizeof(c->listen_addr), k->defs);
	c->listen_port = (uint16_t)k->defu;
}

static int
listen_value(const struct conf_key *k, const struct migrd_conf *c, int i,
    char *buf, size_t len)
{
	(void)k;
	if (i > 0)
		return -1;
	snprintf(buf, len, "%s port %u", c->listen_addr, c->listen_port);
	return 0;
}

/* peer NAME ADDRESS [port N]: peers[npeers++] */
static int
peer_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	struct migrd_conf *c = p->c;
	struct peer_conf *pc;
	uint16_t port = MIGR_PEER_PORT;
	int i;

	if (!conf_valid_name(w[1])) {
		conf_err(p, "%s: '%s' is not a valid host name", k->name, w[1]);
		return -1;
	}
	if (!valid_addr(w[2])) {
		conf_err(p, "%s %s: '%s' is not a numeric IPv4 or IPv6 address",
		    k->name, w[1], w[2]);
		return -1;
	}
	for (i = 0; i < c->npeers; i++) {
		if (strcmp(c->peers[i].name, w[1]) == 0) {
			conf_err(p, "%s %s: already defined at line %d",
			    k->name, w[1], c->peers[i].line);
			return -1;
		}
	}
	if (c->npeers == CONF_PEERS_MAX) {
		conf_err(p, "%s: more than %d peers", k->name, CONF_PEERS_MAX);
		return -1;
	}
	if (opt_port(p, k->name, w, n, 3, &port) == -1)
		return -1;
	pc = &c->peers[c->npeers++];
	memset(pc, 0, sizeof(*pc));
	conf_set_str(pc->name, sizeof(pc->name), w[1]);
	conf_set_str(pc->addr, sizeof(pc->addr), w[2]);
	pc->port = port;
	pc->line = p->line;
	return 0;
}

static int
peer_value(const struct conf_key *k, const struct migrd_conf *c, int i,
    char *buf, size_t len)
{
	const struct peer_conf *pc;

	(void)k;
	if (i >= c->npeers)
		return -1;
	pc = &c->peers[i];
	snprintf(buf, len, "%s %s port %u", pc->name, pc->addr, pc->port);
	return 0;
}

/* allow PEER KIND VALUE...: peers[PEER].allow */
static int
allow_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	/* the peer is this parse's own, so not const */
	struct peer_conf *pc = (struct peer_conf *)config_find_peer(p->c,
	    w[1]);
	char why[400];
	int i, kind;

	if (pc == NULL) {
		conf_err(p, "%s: no peer '%s' before this line", k->name, w[1]);
		return -1;
	}
	if ((kind = policy_kind_find(w[2])) == -1) {
		conf_err(p, "%s %s: '%s' is not program, address, mac, "
		    "namespace, sockets, migrations or checkpoint", k->name,
		    w[1], w[2]);
		return -1;
	}
	for (i = 3; i < n; i++) {
		if (pc->allow.n == POLICY_MAX) {
			conf_err(p, "%s %s: more than %d values", k->name,
			    w[1], POLICY_MAX);
			return -1;
		}
		if (policy_entry_parse(kind, w[i],
		    &pc->allow.entry[pc->allow.n], why, sizeof(why)) == -1) {
			/* as if never given ("migrd -nv" reads back) */
			memset(&pc->allow.entry[pc->allow.n], 0,
			    sizeof(pc->allow.entry[0]));
			conf_err(p, "%s %s: %s", k->name, w[1], why);
			return -1;
		}
		pc->allow.n++;
	}
	return 0;
}

/* one value a line: the i-th of every peer's entries in turn */
static int
allow_value(const struct conf_key *k, const struct migrd_conf *c, int i,
    char *buf, size_t len)
{
	const struct policy_entry *e;
	int j;

	(void)k;
	for (j = 0; j < c->npeers; j++) {
		if (i < c->peers[j].allow.n) {
			e = &c->peers[j].allow.entry[i];
			snprintf(buf, len, "%s %s %s", c->peers[j].name,
			    policy_kind_name(e->kind), e->text);
			return 0;
		}
		i -= c->peers[j].allow.n;
	}
	return -1;
}

/* workload-capabilities none | CAP...: workload_caps, a bit per cap */
static int
caps_parse(struct conf_ctx *p, const struct conf_key *k, char **w, int n)
{
	char allowed[] = CONF_WORKLOAD_CAPS, *save, *tok;
	uint64_t mask = 0;
	cap_value_t v;
	int i, ok;

	if (n == 2 && strcmp(w[1], "none") == 0) {
		p->c->workload_caps = 0;
		return 0;
	}
	for (i = 1; i < n; i++) {
		ok = 0;
		for (tok = strtok_r(allowed, " ", &save); tok != NULL;
		    tok = strtok_r(NULL, " ", &save))
			ok |= strcmp(tok, w[i]) == 0;
		snprintf(allowed, sizeof(allowed), "%s", CONF_WORKLOAD_CAPS);
		if (!ok || cap_from_name(w[i], &v) == -1 || v > 63) {
			conf_err(p, "%s: '%s' is not one of %s, or none",
			    k->name, w[i], CONF_WORKLOAD_CAPS);
			return -1;
		}
		mask |= 1ULL << v;
	}
	p->c->workload_caps = mask;
	return 0;
}

static int
caps_value(const struct conf_key *k, const struct migrd_conf *c, int i,
    char *buf, size_t len)
{
	size_t off = 0;
	char *name;
	int v;

	(void)k;
	if (i > 0)
		return -1;
	buf[0] = '\0';
	for (v = 0; v < 64; v++) {
		if (!(c->workload_caps & (1ULL << v)))
			continue;
		if ((name = cap_to_name((cap_value_t)v)) == NULL)
			continue;
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
		    "%s%s", off ? " " : "", name);
		cap_free(name);
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
	return 0;
}

static const struct conf_type conf_listen = {
	1, 3, listen_parse, listen_init, listen_value
};
static const struct conf_type conf_peer = {
	2, 4, peer_parse, NULL, peer_value
};
static const struct conf_type conf_allow = {
	3, CONF_WORDS_MAX - 1, allow_parse, NULL, allow_value
};
static const struct conf_type conf_caps = {
	1, 3, caps_parse, NULL, caps_value
};

#define AT(f)	.off = offsetof(struct migrd_conf, f), \
		.size = sizeof(((struct migrd_conf *)0)->f)

const struct conf_key conf_keys[] = {
	{ "hostname", &conf_name, AT(hostname), .flags = CK_REQUIRED,
	  .what = "host name",
	  .descr = "this host's name, as its certificate gives it" },
	/* listen and peer store their fields themselves */
	{ "listen", &conf_listen, .defs = "0.0.0.0", .defu = MIGR_PEER_PORT,
	  .descr = "address and TCP port of the peer channel" },
	{ "peer", &conf_peer, .flags = CK_REPEAT,
	  .descr = "a peer host: name, address, TCP port" },
	{ "allow", &conf_allow, .flags = CK_REPEAT,
	  .descr = "what a peer may bring here (none by default)" },
	{ "certificate", &conf_path, AT(cert), .defs = "/etc/migrd/cert.pem",
	  .descr = "this host's certificate chain (PEM)" },
	{ "key", &conf_path, AT(key), .defs = "/etc/migrd/key.pem",
	  .descr = "its private key (PEM)" },
	{ "ca", &conf_path, AT(ca), .defs = "/etc/migrd/ca.pem",
	  .descr = "CA certificates peers must chain to (PEM)" },
	{ "control-socket", &conf_path, AT(control_socket),
	  .defs = MIGR_CONTROL_SOCKET,
	  .descr = "the socket migctl connects to" },
	{ "admin-group", &conf_name, AT(admin_group), .what = "group name",
	  .descr = "group that may use the control socket besides root" },
	{ "state-dir", &conf_path, AT(state_dir), .defs = "/var/lib/migrd",
	  .descr = "where migrd keeps its state" },
	{ "bridge", &conf_name, AT(bridge), .defs = "br0",
	  .what = "interface name",
	  .descr = "LAN bridge the namespaces are attached to" },
	{ "cgroup-root", &conf_path, AT(cgroup_root), .flags = CK_AUTO,
	  .defs = "auto",
	  .descr = "parent of the namespaces' cgroups, or auto" },
	{ "max-message", &conf_uint, AT(max_message),
	  .min = 1024, .max = MIGR_FRAME_MAX, .unit = CU_BYTES,
	  .defu = MIGR_FRAME_DEFAULT,
	  .descr = "largest JSON payload of one frame" },
	{ "max-queue", &conf_uint, AT(max_queue),
	  .min = 65536, .max = 1024 * 1024 * 1024, .unit = CU_BYTES,
	  .defu = 4 * 1024 * 1024,
	  .descr = "largest output queued to one socket" },
	{ "max-control-clients", &conf_uint, AT(max_control_clients),
	  .min = 1, .max = 1024, .defu = 32,
	  .descr = "control connections open at once" },
	{ "handshake-timeout", &conf_uint, AT(handshake_timeout),
	  .min = 1, .max = 3600, .unit = CU_SECONDS, .defu = 3,
	  .descr = "time allowed for the TLS handshake and hello" },
	{ "channel-user", &conf_name, AT(channel_user), .defs = "65533",
	  .what = "user name or uid",
	  .descr = "user (or bare uid) the peer channel's TLS process runs "
	  "as" },
	{ "heartbeat-interval", &conf_uint, AT(heartbeat_ms),
	  .min = 50, .max = 600000, .unit = CU_MS, .defu = 1000,
	  .descr = "time between heartbeats to a peer" },
	{ "dead-time", &conf_uint, AT(dead_ms),
	  .min = 100, .max = 3600000, .unit = CU_MS, .defu = 5000,
	  .descr = "silence after which a peer is dead" },
	{ "compress", &conf_enum, AT(compress), .choices = compress_modes,
	  .defu = CONF_COMPRESS_DEFLATE,
	  .descr = "compression of the peer channel: none or deflate" },
	{ "repair-path", &conf_enum, AT(repair_path), .choices = no_yes,
	  .defu = 1,
	  .descr = "carry each connection's RTT, window and MSS where "
	  "both kernels can: yes or no" },
	{ "migrate-timeout", &conf_uint, AT(migrate_timeout),
	  .min = 1, .max = 3600, .unit = CU_SECONDS, .defu = 30,
	  .descr = "longest wait of each phase of a migration" },
	{ "commit-timeout", &conf_uint, AT(commit_ms),
	  .min = 100, .max = 600000, .unit = CU_MS, .defu = 3000,
	  .descr = "wait for the answer to a commit before sending it again" },
	{ "orphan-wait", &conf_uint, AT(orphan_ms),
	  .min = 0, .max = 600000, .unit = CU_MS, .defu = 10000,
	  .descr = "wait for closed connections to deliver their last bytes" },
	{ "settle-wait", &conf_uint, AT(settle_ms),
	  .min = 10, .max = 60000, .unit = CU_MS, .defu = 1000,
	  .descr = "light mode: wait, locked, for the tasks that hold sockets "
	  "to wait for input" },
	{ "lock", &conf_enum, AT(lock_mode), .choices = lock_modes,
	  .defu = CONF_LOCK_REPLAY,
	  .descr = "what the lock does with what arrives: drop or replay" },
	{ "lock-queue-bytes", &conf_uint, AT(lock_queue_bytes),
	  .min = 65536, .max = 1024 * 1024 * 1024, .unit = CU_BYTES,
	  .defu = 4 * 1024 * 1024,
	  .descr = "bytes of packets the replaying lock keeps" },
	{ "lock-queue-packets", &conf_uint, AT(lock_queue_packets),
	  .min = 16, .max = 65536, .defu = 4096,
	  .descr = "packets the replaying lock keeps" },
	{ "checkpoint-precopy", &conf_uint, AT(precopy_passes),
	  .min = 0, .max = 8, .defu = 4,
	  .descr = "checkpoint mode: most passes of memory copied while the "
	  "program runs (0: none)" },
	{ "workload-user", &conf_name, AT(workload_user), .defs = "nobody",
	  .what = "user name",
	  .descr = "user the workloads run as" },
	{ "workload-group", &conf_name, AT(workload_group),
	  .what = "group name",
	  .descr = "their group (default: the user's own)" },
	{ "workload-capabilities", &conf_caps,
	  .descr = "capabilities the workloads keep (none by default)" },
	{ "workload-log-dir", &conf_path, AT(workload_log_dir),
	  .defs = "/var/log/migr",
	  .descr = "folder of the workloads' output, NAME.log a namespace" },
	{ "workload-log-max", &conf_uint, AT(workload_log_max),
	  .min = 4096, .max = 1024 * 1024 * 1024, .unit = CU_BYTES,
	  .defu = 1024 * 1024,
	  .descr = "size at which a log becomes NAME.log.1 and starts anew" },
	{ "workload-memory-max", &conf_uint, AT(workload_memory_max),
	  .min = 0, .max = 16 * 1024 * 1024, .defu = 0,
	  .descr = "MiB of memory a namespace's programs may use together "
	  "(cgroup memory.max; 0: no limit)" },
	{ "workload-pids-max", &conf_uint, AT(workload_pids_max),
	  .min = 0, .max = 4194304, .defu = 0,
	  .descr = "tasks a namespace's programs may have together "
	  "(cgroup pids.max; 0: no limit)" },
};

#define NKEYS	(sizeof(conf_keys) / sizeof(conf_keys[0]))
_Static_assert(NKEYS <= 64, "struct conf_ctx has a 64-bit seen mask");

const size_t conf_nkeys = NKEYS;

const struct conf_key *
conf_key_find(const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(conf_keys[i].name, name) == 0)
			return &conf_keys[i];
	return NULL;
}
