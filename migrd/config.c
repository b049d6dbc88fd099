/*
 * A small hand parser for migrd.conf.  One statement per line:
 *
 *	hostname NAME
 *	listen ADDRESS [port N]
 *	peer NAME ADDRESS [port N]
 *	certificate FILE | key FILE | ca FILE
 *	control-socket PATH | admin-group GROUP | state-dir DIR
 *	bridge IFNAME | cgroup-root DIR
 *	max-message BYTES | max-queue BYTES | max-control-clients N
 *	handshake-timeout SECONDS
 *	heartbeat-interval MS | dead-time MS
 *
 * Every error is reported as "file:line: reason" and parsing goes on so
 * that one run of "migrd -n" shows them all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "migrd-protocol.h"

#define MAX_WORDS	8
#define LINE_MAX_LEN	1024

struct pctx {
	const char		*file;
	int			 line;
	int			 errors;
	struct migrd_conf	*c;
	unsigned		 seen;		/* bit per keyword */
};

static void perr(struct pctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
perr(struct pctx *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->line > 0)
		log_warnx("%s:%d: %s", p->file, p->line, msg);
	else
		log_warnx("%s: %s", p->file, msg);
	p->errors++;
}

void
config_defaults(struct migrd_conf *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->listen_addr, "0.0.0.0");
	c->listen_port = MIGR_PEER_PORT;
	strcpy(c->control_socket, MIGR_CONTROL_SOCKET);
	strcpy(c->state_dir, "/var/lib/migrd");
	strcpy(c->bridge, "br0");
	strcpy(c->cgroup_root, "/sys/fs/cgroup/migr");
	strcpy(c->cert, "/etc/migrd/cert.pem");
	strcpy(c->key, "/etc/migrd/key.pem");
	strcpy(c->ca, "/etc/migrd/ca.pem");
	c->max_message = MIGR_FRAME_DEFAULT;
	c->max_queue = 4 * 1024 * 1024;
	c->handshake_timeout = 10;
	c->heartbeat_ms = 1000;
	c->dead_ms = 5000;
	c->max_control_clients = 32;
	c->migrate_timeout = 30;
	c->commit_ms = 3000;
}

static int
get_uint(struct pctx *p, const char *kw, const char *s, uint32_t min,
    uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9') {
		perr(p, "%s: '%s' is not a number", kw, s);
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0' || errno == ERANGE) {
		perr(p, "%s: '%s' is not a number", kw, s);
		return -1;
	}
	if (v < min || v > max) {
		perr(p, "%s: %s is out of range %u-%u", kw, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int
valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= CONF_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || (i > 0 && (ch == '-' ||
		    ch == '.' || ch == '_'))))
			return 0;
	}
	return 1;
}

static int
valid_addr(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 ||
	    inet_pton(AF_INET6, s, buf) == 1;
}

static int
copy_str(struct pctx *p, const char *kw, char *dst, size_t dstlen,
    const char *s)
{
	if (strlen(s) >= dstlen) {
		perr(p, "%s: value is longer than %zu characters", kw,
		    dstlen - 1);
		return -1;
	}
	strcpy(dst, s);
	return 0;
}

static int
copy_path(struct pctx *p, const char *kw, char *dst, size_t dstlen,
    const char *s)
{
	if (s[0] != '/') {
		perr(p, "%s: '%s' must be an absolute path", kw, s);
		return -1;
	}
	return copy_str(p, kw, dst, dstlen, s);
}

/* "[port N]" at w[i..]; returns 0 and sets *port, or -1 */
static int
opt_port(struct pctx *p, const char *kw, char **w, int n, int i,
    uint16_t *port)
{
	uint32_t v;

	if (i == n)
		return 0;
	if (strcmp(w[i], "port") != 0 || i + 2 != n) {
		perr(p, "%s: expected 'port N' after the address, got '%s'",
		    kw, w[i]);
		return -1;
	}
	if (get_uint(p, kw, w[i + 1], 1, 65535, &v) == -1)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static void
kw_peer(struct pctx *p, char **w, int n)
{
	struct migrd_conf *c = p->c;
	struct peer_conf *pc;
	int i;

	if (n < 3) {
		perr(p, "peer: usage: peer NAME ADDRESS [port N]");
		return;
	}
	if (!valid_name(w[1])) {
		perr(p, "peer: '%s' is not a valid host name", w[1]);
		return;
	}
	if (!valid_addr(w[2])) {
		perr(p, "peer %s: '%s' is not a numeric IPv4 or IPv6 address",
		    w[1], w[2]);
		return;
	}
	for (i = 0; i < c->npeers; i++) {
		if (strcmp(c->peers[i].name, w[1]) == 0) {
			perr(p, "peer %s: already defined at line %d", w[1],
			    c->peers[i].line);
			return;
		}
	}
	if (c->npeers == CONF_PEERS_MAX) {
		perr(p, "peer: more than %d peers", CONF_PEERS_MAX);
		return;
	}
	pc = &c->peers[c->npeers];
	memset(pc, 0, sizeof(*pc));
	pc->port = MIGR_PEER_PORT;
	if (opt_port(p, "peer", w, n, 3, &pc->port) == -1)
		return;
	strcpy(pc->name, w[1]);
	strcpy(pc->addr, w[2]);
	pc->line = p->line;
	c->npeers++;
}

enum kw_id {
	KW_HOSTNAME, KW_LISTEN, KW_PEER, KW_CERT, KW_KEY, KW_CA, KW_CTLSOCK,
	KW_ADMIN, KW_STATEDIR, KW_BRIDGE, KW_MAXMSG, KW_MAXQ, KW_HSTIMEOUT,
	KW_HBINT, KW_DEAD, KW_MAXCLIENTS, KW_CGROUP, KW_MIGTIMEOUT,
	KW_COMMITTIMEOUT
};

static const struct keyword {
	const char	*name;
	enum kw_id	 id;
	int		 minargs, maxargs;
	int		 repeat;
} keywords[] = {
	{ "hostname",		KW_HOSTNAME,	1, 1, 0 },
	{ "listen",		KW_LISTEN,	1, 3, 0 },
	{ "peer",		KW_PEER,	2, 4, 1 },
	{ "certificate",	KW_CERT,	1, 1, 0 },
	{ "key",		KW_KEY,		1, 1, 0 },
	{ "ca",			KW_CA,		1, 1, 0 },
	{ "control-socket",	KW_CTLSOCK,	1, 1, 0 },
	{ "admin-group",	KW_ADMIN,	1, 1, 0 },
	{ "state-dir",		KW_STATEDIR,	1, 1, 0 },
	{ "bridge",		KW_BRIDGE,	1, 1, 0 },
	{ "max-message",	KW_MAXMSG,	1, 1, 0 },
	{ "max-queue",		KW_MAXQ,	1, 1, 0 },
	{ "handshake-timeout",	KW_HSTIMEOUT,	1, 1, 0 },
	{ "heartbeat-interval",	KW_HBINT,	1, 1, 0 },
	{ "dead-time",		KW_DEAD,	1, 1, 0 },
	{ "migrate-timeout",	KW_MIGTIMEOUT,	1, 1, 0 },
	{ "commit-timeout",	KW_COMMITTIMEOUT, 1, 1, 0 },
	{ "max-control-clients", KW_MAXCLIENTS,	1, 1, 0 },
	{ "cgroup-root",	KW_CGROUP,	1, 1, 0 },
};

static void
statement(struct pctx *p, char **w, int n)
{
	struct migrd_conf *c = p->c;
	const struct keyword *k = NULL;
	size_t i;

	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strcmp(w[0], keywords[i].name) == 0)
			k = &keywords[i];
	if (k == NULL) {
		perr(p, "unknown keyword '%s'", w[0]);
		return;
	}
	if (n - 1 < k->minargs || n - 1 > k->maxargs) {
		perr(p, "%s: wrong number of arguments", k->name);
		return;
	}
	if (!k->repeat && (p->seen & (1u << k->id))) {
		perr(p, "%s: given more than once", k->name);
		return;
	}
	p->seen |= 1u << k->id;

	switch (k->id) {
	case KW_HOSTNAME:
		if (!valid_name(w[1]))
			perr(p, "hostname: '%s' is not a valid host name",
			    w[1]);
		else
			strcpy(c->hostname, w[1]);
		break;
	case KW_LISTEN:
		if (!valid_addr(w[1]))
			perr(p, "listen: '%s' is not a numeric IPv4 or IPv6 "
			    "address", w[1]);
		else if (opt_port(p, "listen", w, n, 2, &c->listen_port) == 0)
			strcpy(c->listen_addr, w[1]);
		break;
	case KW_PEER:
		kw_peer(p, w, n);
		break;
	case KW_CERT:
		copy_path(p, k->name, c->cert, sizeof(c->cert), w[1]);
		break;
	case KW_KEY:
		copy_path(p, k->name, c->key, sizeof(c->key), w[1]);
		break;
	case KW_CA:
		copy_path(p, k->name, c->ca, sizeof(c->ca), w[1]);
		break;
	case KW_CTLSOCK:
		copy_path(p, k->name, c->control_socket,
		    sizeof(c->control_socket), w[1]);
		break;
	case KW_ADMIN:
		if (!valid_name(w[1]))
			perr(p, "admin-group: '%s' is not a valid group name",
			    w[1]);
		else
			strcpy(c->admin_group, w[1]);
		break;
	case KW_STATEDIR:
		copy_path(p, k->name, c->state_dir, sizeof(c->state_dir),
		    w[1]);
		break;
	case KW_BRIDGE:
		if (!valid_name(w[1]) || strlen(w[1]) >= sizeof(c->bridge))
			perr(p, "bridge: '%s' is not a valid interface name",
			    w[1]);
		else
			strcpy(c->bridge, w[1]);
		break;
	case KW_MAXMSG:
		get_uint(p, k->name, w[1], 1024, MIGR_FRAME_MAX,
		    &c->max_message);
		break;
	case KW_MAXQ:
		get_uint(p, k->name, w[1], 65536, 1024 * 1024 * 1024,
		    &c->max_queue);
		break;
	case KW_HSTIMEOUT:
		get_uint(p, k->name, w[1], 1, 3600, &c->handshake_timeout);
		break;
	case KW_HBINT:
		get_uint(p, k->name, w[1], 50, 600000, &c->heartbeat_ms);
		break;
	case KW_DEAD:
		get_uint(p, k->name, w[1], 100, 3600000, &c->dead_ms);
		break;
	case KW_MIGTIMEOUT:
		get_uint(p, k->name, w[1], 1, 3600, &c->migrate_timeout);
		break;
	case KW_COMMITTIMEOUT:
		get_uint(p, k->name, w[1], 100, 600000, &c->commit_ms);
		break;
	case KW_CGROUP:
		copy_path(p, k->name, c->cgroup_root, sizeof(c->cgroup_root),
		    w[1]);
		break;
	case KW_MAXCLIENTS:
		get_uint(p, k->name, w[1], 1, 1024, &c->max_control_clients);
		break;
	}
}

/* Split line in place into words; returns count or -1 if too many. */
static int
split(char *line, char **w)
{
	int n = 0;
	char *s = line;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#')
			break;
		if (n == MAX_WORDS)
			return -1;
		w[n++] = s;
		while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '#')
			s++;
		if (*s == '#') {
			*s = '\0';
			break;
		}
		if (*s != '\0')
			*s++ = '\0';
	}
	return n;
}

static void
check_whole(struct pctx *p)
{
	struct migrd_conf *c = p->c;
	int i;

	p->line = 0;	/* errors about the whole file */
	if (c->hostname[0] == '\0')
		perr(p, "hostname is required");
	for (i = 0; i < c->npeers; i++) {
		if (strcmp(c->peers[i].name, c->hostname) == 0) {
			p->line = c->peers[i].line;
			perr(p, "peer %s: is this host's own name",
			    c->hostname);
		}
	}
	p->line = 0;
	if (c->dead_ms <= c->heartbeat_ms)
		perr(p, "dead-time (%u ms) must be longer than "
		    "heartbeat-interval (%u ms)", c->dead_ms, c->heartbeat_ms);
	if (c->max_queue < 2 * (c->max_message + MIGR_FRAME_HDR_LEN))
		perr(p, "max-queue (%u) must hold two messages of "
		    "max-message (%u) bytes", c->max_queue, c->max_message);
}

int
config_parse_fp(FILE *fp, const char *name, struct migrd_conf *c)
{
	struct pctx p = { .file = name, .c = c };
	char line[LINE_MAX_LEN + 2];
	char *w[MAX_WORDS];
	int n;

	config_defaults(c);
	while (fgets(line, sizeof(line), fp) != NULL) {
		size_t len = strlen(line);

		p.line++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		else if (!feof(fp)) {
			int ch;

			perr(&p, "line longer than %d characters",
			    LINE_MAX_LEN);
			while ((ch = fgetc(fp)) != EOF && ch != '\n')
				;
			continue;
		}
		if ((n = split(line, w)) == -1) {
			perr(&p, "too many words (at most %d)", MAX_WORDS);
			continue;
		}
		if (n > 0)
			statement(&p, w, n);
	}
	if (ferror(fp)) {
		log_warn("%s: read", name);
		p.errors++;
	}
	check_whole(&p);
	return p.errors;
}

int
config_parse_file(const char *path, struct migrd_conf *c)
{
	FILE *fp;
	int errors;

	if ((fp = fopen(path, "r")) == NULL) {
		log_warn("%s", path);
		config_defaults(c);
		return 1;
	}
	errors = config_parse_fp(fp, path, c);
	fclose(fp);
	return errors;
}

const struct peer_conf *
config_find_peer(const struct migrd_conf *c, const char *name)
{
	int i;

	for (i = 0; i < c->npeers; i++)
		if (strcmp(c->peers[i].name, name) == 0)
			return &c->peers[i];
	return NULL;
}

void
config_print(FILE *fp, const struct migrd_conf *c)
{
	int i;

	fprintf(fp, "hostname %s\n", c->hostname);
	fprintf(fp, "listen %s port %u\n", c->listen_addr, c->listen_port);
	for (i = 0; i < c->npeers; i++)
		fprintf(fp, "peer %s %s port %u\n", c->peers[i].name,
		    c->peers[i].addr, c->peers[i].port);
	fprintf(fp, "certificate %s\nkey %s\nca %s\n", c->cert, c->key, c->ca);
	fprintf(fp, "control-socket %s\n", c->control_socket);
	if (c->admin_group[0])
		fprintf(fp, "admin-group %s\n", c->admin_group);
	fprintf(fp, "state-dir %s\nbridge %s\ncgroup-root %s\n", c->state_dir,
	    c->bridge, c->cgroup_root);
	fprintf(fp, "max-message %u\nmax-queue %u\nmax-control-clients %u\n",
	    c->max_message, c->max_queue, c->max_control_clients);
	fprintf(fp, "handshake-timeout %u\nheartbeat-interval %u\n"
	    "dead-time %u\n", c->handshake_timeout, c->heartbeat_ms,
	    c->dead_ms);
	fprintf(fp, "migrate-timeout %u\ncommit-timeout %u\n",
	    c->migrate_timeout, c->commit_ms);
}
