/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "migrd-protocol.h"
#include "parser.h"

enum token_type {
	T_END,		/* the command may end here */
	T_KEYWORD,
	T_NSNAME,
	T_HOST,
	T_OPT_ADDR,	/* --addr ADDR/PLEN */
	T_OPT_MAC,	/* --mac MAC */
	T_OPT_ROUTE,	/* --route DEST,GW */
	T_ARGV,		/* -- CMD ARGS... (rest of the line) */
	T_OUTCOME,	/* resolve's outcome keyword, kept in full */
	T_FORCE,	/* resolve ... force */
	T_PARALLEL,	/* evacuate ... parallel N */
	T_CHECKPOINT,	/* run NS --checkpoint -- ... */
	T_GATE		/* run NS --gate -- ... */
};

struct token {
	enum token_type		 type;
	const char		*keyword;
	enum action		 value;
	const struct token	*next;
};

/* A usage error: the exit status, as for a bad request. */
#define USAGE_ERROR	2

/* The words parse() has yet to read. */
struct words {
	int	  argc;
	char	**argv;
	int	  next;
};

/* How a word selects a token of the table at hand. */
enum match {
	NO_MATCH,
	MATCH,		/* one of possibly several */
	EXACT_MATCH	/* the keyword in full: beats every other */
};

static const struct token t_main[];
static const struct token t_ns[];
static const struct token t_ns_show[];
static const struct token t_ns_create[];
static const struct token t_ns_create_opts[];
static const struct token t_ns_delete[];
static const struct token t_run[];
static const struct token t_run_argv[];
static const struct token t_run_argv_only[];
static const struct token t_migrate[];
static const struct token t_migrate_host[];
static const struct token t_check[];
static const struct token t_check_host[];
static const struct token t_cancel[];
static const struct token t_resolve[];
static const struct token t_resolve_outcome[];
static const struct token t_resolve_force[];
static const struct token t_evacuate[];
static const struct token t_evacuate_opts[];
static const struct token t_end[];

static const struct token t_main[] = {
	{ T_KEYWORD,	"status",	A_STATUS,	t_end },
	{ T_KEYWORD,	"peers",	A_PEERS,	t_end },
	{ T_KEYWORD,	"ns",		A_NONE,		t_ns },
	{ T_KEYWORD,	"run",		A_RUN,		t_run },
	{ T_KEYWORD,	"migrate",	A_MIGRATE,	t_migrate },
	{ T_KEYWORD,	"check",	A_CHECK,	t_check },
	{ T_KEYWORD,	"history",	A_HISTORY,	t_end },
	{ T_KEYWORD,	"cancel",	A_CANCEL,	t_cancel },
	{ T_KEYWORD,	"resolve",	A_RESOLVE,	t_resolve },
	{ T_KEYWORD,	"evacuate",	A_EVACUATE,	t_evacuate },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_ns[] = {
	{ T_KEYWORD,	"list",		A_NS_LIST,	t_end },
	{ T_KEYWORD,	"show",		A_NS_SHOW,	t_ns_show },
	{ T_KEYWORD,	"create",	A_NS_CREATE,	t_ns_create },
	{ T_KEYWORD,	"delete",	A_NS_DELETE,	t_ns_delete },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_ns_show[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_end },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_ns_delete[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_end },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_ns_create[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_ns_create_opts },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_ns_create_opts[] = {
	{ T_OPT_ADDR,	"--addr",	A_NONE,		t_ns_create_opts },
	{ T_OPT_MAC,	"--mac",	A_NONE,		t_ns_create_opts },
	{ T_OPT_ROUTE,	"--route",	A_NONE,		t_ns_create_opts },
	{ T_END,	"",		A_NONE,		NULL }
};
static const struct token t_run[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_run_argv },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_run_argv[] = {
	{ T_CHECKPOINT,	"--checkpoint",	A_NONE,		t_run_argv_only },
	{ T_GATE,	"--gate",	A_NONE,		t_run_argv_only },
	{ T_ARGV,	"--",		A_NONE,		NULL },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_run_argv_only[] = {
	{ T_ARGV,	"--",		A_NONE,		NULL },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_migrate[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_migrate_host },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_migrate_host[] = {
	{ T_HOST,	"HOST",		A_NONE,		t_end },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_check[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_check_host },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_check_host[] = {
	{ T_HOST,	"HOST",		A_NONE,		t_end },
	{ T_END,	"",		A_NONE,		NULL }
};
static const struct token t_cancel[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_end },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_resolve[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_resolve_outcome },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_resolve_outcome[] = {
	{ T_OUTCOME,	"rollback",	A_NONE,		t_resolve_force },
	{ T_OUTCOME,	"done",		A_NONE,		t_resolve_force },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_resolve_force[] = {
	{ T_FORCE,	"force",	A_NONE,		t_end },
	{ T_END,	"",		A_NONE,		NULL }
};
static const struct token t_evacuate[] = {
	{ T_HOST,	"HOST",		A_NONE,		t_evacuate_opts },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_evacuate_opts[] = {
	{ T_PARALLEL,	"parallel",	A_NONE,		t_end },
	{ T_END,	"",		A_NONE,		NULL }
};
static const struct token t_end[] = {
	{ T_END,	"",		A_NONE,		NULL }
};

void
parser_usage(FILE *fp)
{
	fprintf(fp,
	    "usage: migctl [-j] [-s socket] command [argument ...]\n"
	    "commands:\n"
	    "  status                         daemon status\n"
	    "  peers                          peer sessions\n"
	    "  ns list                        managed namespaces\n"
	    "  ns show NS                     one namespace in detail\n"
	    "  ns create NS --addr ADDR/PLEN [--addr ...] [--mac MAC]\n"
	    "                [--route DEST,GW ...]\n"
	    "                                 DEST is default or ADDR/PLEN\n"
	    "  ns delete NS                   kill its tasks, remove it\n"
	    "  run NS [--checkpoint | --gate] -- CMD [ARG ...]\n"
	    "                                 start a workload in NS; with\n"
	    "                                 --checkpoint it moves with its\n"
	    "                                 memory (CRIU); with --gate it\n"
	    "                                 restarts before going live and\n"
	    "                                 waits at MIGR_GATE_FD\n"
	    "  migrate NS HOST                move NS to peer HOST\n"
	    "  check NS [HOST]                could NS move (to HOST)? changes "
	    "nothing\n"
	    "  cancel NS                      stop NS's migration before "
	    "COMMIT\n"
	    "  resolve NS rollback|done [force]  end a migration in doubt: "
	    "NS runs\n"
	    "                                 here again, or HOST has it\n"
	    "  evacuate HOST [parallel N]     move every namespace here to "
	    "HOST,\n"
	    "                                 N at a time (1 to %d, default 1)\n"
	    "  history                        recent events\n"
	    "options:\n"
	    "  -h, --help           this text\n"
	    "  -j, --json           JSON output, one object per line (a "
	    "migration's\n"
	    "                       progress objects, then the result)\n"
	    "  -s, --socket socket  control socket (default %s)\n"
	    "      --version        migctl's and the protocol's version\n"
	    "keywords may be abbreviated (\"ns l\" for \"ns list\").\n"
	    "exit status: the result code (0 ok, 2 bad request, 3 denied, "
	    "7 invalid\nargument, 8 no such namespace, 13 not implemented, "
	    "15 refused,\n16 rolled back, 17 in doubt, 18 busy, ...)\n",
	    EVACUATE_PARALLEL_MAX, MIGR_CONTROL_SOCKET);
}

static void
list_choices(const struct token *table)
{
	int i, first = 1;

	fprintf(stderr, "valid here:");
	for (i = 0; table[i].type != T_END || table[i].keyword; i++) {
		if (table[i].type == T_END) {
			fprintf(stderr, "%s<end>", first ? " " : ", ");
			break;
		}
		fprintf(stderr, "%s%s", first ? " " : ", ", table[i].keyword);
		first = 0;
	}
	fprintf(stderr, "\n");
}

static int
resolve_cmd(struct parse_result *res)
{
	const char *path, *p, *e;
	size_t n;

	if (strchr(res->argv[0], '/') != NULL) {
		if (res->argv[0][0] != '/') {
			if (realpath(res->argv[0], res->resolved) == NULL) {
				fprintf(stderr, "migctl: %s: %s\n",
				    res->argv[0], strerror(errno));
				return -1;
			}
			res->argv[0] = res->resolved;
		}
		return 0;
	}
	if ((path = getenv("PATH")) == NULL)
		path = "/usr/sbin:/usr/bin:/sbin:/bin";
	for (p = path; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		n = (size_t)(e - p);
		if (n == 0 || p[0] != '/')
			continue;
		if (snprintf(res->resolved, sizeof(res->resolved), "%.*s/%s",
		    (int)n, p, res->argv[0]) >= (int)sizeof(res->resolved))
			continue;
		if (access(res->resolved, X_OK) == 0) {
			res->argv[0] = res->resolved;
			return 0;
		}
	}
	fprintf(stderr, "migctl: %s: command not found in PATH\n",
	    res->argv[0]);
	return -1;
}

static int
bad_arg(const char *why)
{
	fprintf(stderr, "migctl: %s\n", why);
	return RES_INVALID_ARGUMENT;
}

/* Keywords, options and outcomes match by prefix, run's "--" only in
 * full; a name or a host is any word. */
static enum match
match_word(const struct token *t, const char *w)
{
	size_t wl = strlen(w);

	switch (t->type) {
	case T_KEYWORD:
	case T_OPT_ADDR:
	case T_OPT_MAC:
	case T_OPT_ROUTE:
	case T_ARGV:
	case T_OUTCOME:
	case T_FORCE:
	case T_PARALLEL:
	case T_CHECKPOINT:
	case T_GATE:
		if (wl == 0 || strncmp(w, t->keyword, wl) != 0)
			return NO_MATCH;
		if (t->type == T_ARGV && wl != 2)
			return NO_MATCH;	/* "--" only, exactly */
		if ((t->type == T_CHECKPOINT || t->type == T_GATE) && wl < 3)
			return NO_MATCH;	/* "--c" at least: not "--" */
		return wl == strlen(t->keyword) ? EXACT_MATCH : MATCH;
	case T_NSNAME:
	case T_HOST:
		return MATCH;		/* any word, checked once chosen */
	default:
		return NO_MATCH;
	}
}

/* The one token of table that w selects, or NULL after saying why. */
static const struct token *
match_token(const struct token *table, const char *w)
{
	const struct token *match = NULL;
	int j, nmatch = 0;

	for (j = 0; table[j].type != T_END; j++) {
		switch (match_word(&table[j], w)) {
		case EXACT_MATCH:
			return &table[j];
		case MATCH:
			match = &table[j];
			nmatch++;
			break;
		case NO_MATCH:
			break;
		}
	}
	if (nmatch == 0)
		fprintf(stderr, "migctl: unknown argument '%s'\n", w);
	else if (nmatch > 1)
		fprintf(stderr, "migctl: '%s' is ambiguous\n", w);
	else
		return match;
	list_choices(table);
	return NULL;
}

/* May the command end before table?  Only if table says so (a T_END
 * with a keyword) and a command has been chosen. */
static int
may_end(const struct token *table, const struct parse_result *res)
{
	int j;

	for (j = 0; table[j].type != T_END; j++)
		;
	return table[j].keyword != NULL && res->action != A_NONE;
}

static int
parse_nsname(const char *w, struct parse_result *res)
{
	char err[256];

	if (nsarg_name(w, err, sizeof(err)) == -1)
		return bad_arg(err);
	strcpy(res->ns, w);
	return 0;
}

static int
parse_host(const char *w, struct parse_result *res)
{
	if (strlen(w) >= sizeof(res->host))
		return bad_arg("host name too long");
	strcpy(res->host, w);
	return 0;
}

/* resolve's outcome, in full however abbreviated */
static int
parse_outcome(const struct token *t, struct parse_result *res)
{
	snprintf(res->outcome, sizeof(res->outcome), "%s", t->keyword);
	return 0;
}

static int
opt_addr(const char *w, struct parse_result *res)
{
	struct nsarg_addr a;
	char err[256];

	if (nsarg_addr(w, &a, err, sizeof(err)) == -1)
		return bad_arg(err);
	if (res->naddrs == NSARG_ADDRS_MAX)
		return bad_arg("too many --addr");
	res->addrs[res->naddrs++] = w;
	return 0;
}

static int
opt_route(const char *w, struct parse_result *res)
{
	struct nsarg_route r;
	char err[256];

	if (nsarg_route(w, &r, err, sizeof(err)) == -1)
		return bad_arg(err);
	if (res->nroutes == NSARG_ROUTES_MAX)
		return bad_arg("too many --route");
	res->routes[res->nroutes++] = w;
	return 0;
}

static int
opt_mac(const char *w, struct parse_result *res)
{
	uint8_t mac[6];
	char err[256];

	if (res->mac != NULL)
		return bad_arg("--mac given twice");
	if (nsarg_mac(w, mac, err, sizeof(err)) == -1)
		return bad_arg(err);
	res->mac = w;
	return 0;
}

/* --addr, --mac, --route: take the next word as the value. */
static int
parse_option(const struct token *t, struct words *ws,
    struct parse_result *res)
{
	const char *w;

	if (ws->next >= ws->argc) {
		fprintf(stderr, "migctl: %s needs a value\n", t->keyword);
		return USAGE_ERROR;
	}
	w = ws->argv[ws->next++];
	switch (t->type) {
	case T_OPT_ADDR:
		return opt_addr(w, res);
	case T_OPT_ROUTE:
		return opt_route(w, res);
	default:
		return opt_mac(w, res);
	}
}

/* evacuate's "parallel N": 1 to EVACUATE_PARALLEL_MAX */
static int
parse_parallel(struct words *ws, struct parse_result *res)
{
	char *end, why[96];
	long n;

	if (ws->next >= ws->argc) {
		fprintf(stderr, "migctl: parallel needs a value\n");
		return USAGE_ERROR;
	}
	errno = 0;
	n = strtol(ws->argv[ws->next], &end, 10);
	if (errno != 0 || end == ws->argv[ws->next] || *end != '\0' ||
	    n < 1 || n > EVACUATE_PARALLEL_MAX) {
		snprintf(why, sizeof(why), "parallel: '%.20s' is not a number "
		    "from 1 to %d", ws->argv[ws->next], EVACUATE_PARALLEL_MAX);
		return bad_arg(why);
	}
	ws->next++;
	res->parallel = (int)n;
	return 0;
}

/* run's "-- CMD [ARG ...]": the rest of the line, CMD found in PATH. */
static int
parse_argv(struct words *ws, struct parse_result *res)
{
	char err[256];
	int j;

	res->argc = ws->argc - ws->next;
	if (res->argc == 0)
		return bad_arg("run: no command after --");
	if (res->argc > NSARG_ARGV_MAX)
		return bad_arg("run: too many arguments");
	for (j = 0; j < res->argc; j++)
		res->argv[j] = ws->argv[ws->next + j];
	res->argv[res->argc] = NULL;
	ws->next = ws->argc;
	if (resolve_cmd(res) == -1)
		return RES_INVALID_ARGUMENT;
	if (nsarg_argv((const char *const *)res->argv, (size_t)res->argc,
	    err, sizeof(err)) == -1)
		return bad_arg(err);
	return 0;
}

/* What token t, just matched by word w, stands for; it may take more
 * words. */
static int
parse_token(const struct token *t, const char *w, struct words *ws,
    struct parse_result *res)
{
	if (t->value != A_NONE)
		res->action = t->value;
	switch (t->type) {
	case T_NSNAME:
		return parse_nsname(w, res);
	case T_HOST:
		return parse_host(w, res);
	case T_OUTCOME:
		return parse_outcome(t, res);
	case T_FORCE:
		res->force = 1;
		return 0;
	case T_CHECKPOINT:
		res->checkpoint = 1;
		return 0;
	case T_GATE:
		res->gate = 1;
		return 0;
	case T_PARALLEL:
		return parse_parallel(ws, res);
	case T_OPT_ADDR:
	case T_OPT_MAC:
	case T_OPT_ROUTE:
		return parse_option(t, ws, res);
	case T_ARGV:
		return parse_argv(ws, res);
	default:
		return 0;
	}
}

/* What the tables cannot say: the arguments a command needs. */
static int
check_complete(const struct parse_result *res)
{
	if (res->action == A_NS_CREATE && res->naddrs == 0)
		return bad_arg("ns create: at least one --addr is needed");
	if (res->action == A_RUN && res->argc == 0)
		return bad_arg("run: missing '-- CMD [ARG ...]'");
	return 0;
}

/* Every word can travel: a request is JSON, whose strings are UTF-8
 * (jansson's check, the one parse_request() meets). */
static int
check_utf8(int argc, char *argv[])
{
	json_t *s;
	int i;

	for (i = 0; i < argc; i++) {
		if ((s = json_string(argv[i])) == NULL) {
			fprintf(stderr, "migctl: argument %d is not valid "
			    "UTF-8 (requests are JSON)\n", i + 1);
			return RES_INVALID_ARGUMENT;
		}
		json_decref(s);
	}
	return 0;
}

int
parse(int argc, char *argv[], struct parse_result *res)
{
	const struct token *table = t_main, *match;
	struct words ws = { argc, argv, 0 };
	const char *w;
	int rc;

	memset(res, 0, sizeof(*res));
	res->parallel = 1;
	if ((rc = check_utf8(argc, argv)) != 0)
		return rc;
	while (table != NULL) {
		if (ws.next >= ws.argc) {
			if (!may_end(table, res)) {
				fprintf(stderr, "migctl: missing argument\n");
				list_choices(table);
				return USAGE_ERROR;
			}
			break;
		}
		w = ws.argv[ws.next];
		if ((match = match_token(table, w)) == NULL)
			return USAGE_ERROR;
		ws.next++;
		if ((rc = parse_token(match, w, &ws, res)) != 0)
			return rc;
		table = match->next;
		if (table == NULL && ws.next < ws.argc) {
			fprintf(stderr, "migctl: unexpected argument '%s'\n",
			    ws.argv[ws.next]);
			return USAGE_ERROR;
		}
	}
	return check_complete(res);
}

static const uint16_t action_msg[] = {
	[A_STATUS] = MSG_CTL_STATUS,
	[A_PEERS] = MSG_CTL_PEERS,
	[A_NS_LIST] = MSG_CTL_NS_LIST,
	[A_NS_SHOW] = MSG_CTL_NS_SHOW,
	[A_NS_CREATE] = MSG_CTL_NS_CREATE,
	[A_NS_DELETE] = MSG_CTL_NS_DELETE,
	[A_RUN] = MSG_CTL_RUN,
	[A_MIGRATE] = MSG_CTL_MIGRATE,
	[A_HISTORY] = MSG_CTL_HISTORY,
	[A_CANCEL] = MSG_CTL_CANCEL,
	[A_RESOLVE] = MSG_CTL_RESOLVE,
	[A_CHECK] = MSG_CTL_CHECK,
	/* evacuate is many requests; this is its first (evacuate.c) */
	[A_EVACUATE] = MSG_CTL_NS_LIST,
};

/* An array of the n strings, or NULL (never one with some missing). */
static json_t *
strings(const char *const *v, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; a && i < n; i++) {
		if (json_array_append_new(a, json_string(v[i])) == -1) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
parse_request(const struct parse_result *r, uint16_t *type)
{
	json_t *o;

	if ((size_t)r->action >= sizeof(action_msg) / sizeof(action_msg[0]) ||
	    action_msg[r->action] == 0)
		return NULL;
	*type = action_msg[r->action];
	switch (r->action) {
	case A_NS_SHOW:
	case A_NS_DELETE:
	case A_CANCEL:
		return json_pack("{s:s}", "ns", r->ns);
	case A_RESOLVE:
		return r->force ? json_pack("{s:s,s:s,s:b}", "ns", r->ns,
		    "outcome", r->outcome, "force", 1) : json_pack("{s:s,s:s}",
		    "ns", r->ns, "outcome", r->outcome);
	case A_NS_CREATE:
		o = json_pack("{s:s,s:o,s:o}", "ns", r->ns,
		    "addrs", strings(r->addrs, r->naddrs),
		    "routes", strings(r->routes, r->nroutes));
		if (o && r->mac)
			json_object_set_new(o, "mac", json_string(r->mac));
		return o;
	case A_RUN:
		o = json_pack("{s:s,s:o}", "ns", r->ns, "argv",
		    strings((const char *const *)r->argv, r->argc));
		if (o && r->checkpoint)
			json_object_set_new(o, "checkpoint", json_true());
		if (o && r->gate)
			json_object_set_new(o, "gate", json_true());
		return o;
	case A_MIGRATE:
		return json_pack("{s:s,s:s}", "ns", r->ns, "host", r->host);
	case A_CHECK:
		if (r->host[0] == '\0')
			return json_pack("{s:s}", "ns", r->ns);
		return json_pack("{s:s,s:s}", "ns", r->ns, "host", r->host);
	default:
		return json_object();
	}
}
