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
	T_OUTCOME	/* resolve's outcome keyword, kept in full */
};

struct token {
	enum token_type		 type;
	const char		*keyword;
	enum action		 value;
	const struct token	*next;
};

static const struct token t_main[];
static const struct token t_ns[];
static const struct token t_ns_show[];
static const struct token t_ns_create[];
static const struct token t_ns_create_opts[];
static const struct token t_ns_delete[];
static const struct token t_run[];
static const struct token t_run_argv[];
static const struct token t_migrate[];
static const struct token t_migrate_host[];
static const struct token t_cancel[];
static const struct token t_resolve[];
static const struct token t_resolve_outcome[];
static const struct token t_end[];

static const struct token t_main[] = {
	{ T_KEYWORD,	"status",	A_STATUS,	t_end },
	{ T_KEYWORD,	"peers",	A_PEERS,	t_end },
	{ T_KEYWORD,	"ns",		A_NONE,		t_ns },
	{ T_KEYWORD,	"run",		A_RUN,		t_run },
	{ T_KEYWORD,	"migrate",	A_MIGRATE,	t_migrate },
	{ T_KEYWORD,	"history",	A_HISTORY,	t_end },
	{ T_KEYWORD,	"cancel",	A_CANCEL,	t_cancel },
	{ T_KEYWORD,	"resolve",	A_RESOLVE,	t_resolve },
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
static const struct token t_cancel[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_end },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_resolve[] = {
	{ T_NSNAME,	"NS",		A_NONE,		t_resolve_outcome },
	{ T_END,	NULL,		A_NONE,		NULL }
};
static const struct token t_resolve_outcome[] = {
	{ T_OUTCOME,	"rollback",	A_NONE,		t_end },
	{ T_OUTCOME,	"done",		A_NONE,		t_end },
	{ T_END,	NULL,		A_NONE,		NULL }
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
	    "  run NS -- CMD [ARG ...]        start a workload in NS\n"
	    "  migrate NS HOST                move NS to peer HOST\n"
	    "  cancel NS                      stop NS's migration before "
	    "COMMIT\n"
	    "  resolve NS rollback|done       end a migration in doubt: "
	    "NS runs\n"
	    "                                 here again, or HOST has it\n"
	    "  history                        recent events\n"
	    "options:\n"
	    "  -j         JSON output\n"
	    "  -s socket  control socket (default %s)\n"
	    "keywords may be abbreviated (\"ns l\" for \"ns list\").\n"
	    "exit status: the result code (0 ok, 2 bad request, 3 denied, "
	    "7 invalid\nargument, 8 no such namespace, 13 not implemented, "
	    "15 refused,\n16 rolled back, 17 in doubt, 18 busy, ...)\n",
	    MIGR_CONTROL_SOCKET);
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

int
parse(int argc, char *argv[], struct parse_result *res)
{
	const struct token *table = t_main, *match;
	char err[256];
	int i = 0, j, nmatch;

	memset(res, 0, sizeof(*res));
	while (table != NULL) {
		const char *w = i < argc ? argv[i] : NULL;

		match = NULL;
		nmatch = 0;
		for (j = 0; table[j].type != T_END; j++) {
			const struct token *t = &table[j];
			size_t wl = w ? strlen(w) : 0;

			if (w == NULL)
				break;
			switch (t->type) {
			case T_KEYWORD:
			case T_OPT_ADDR:
			case T_OPT_MAC:
			case T_OPT_ROUTE:
			case T_ARGV:
			case T_OUTCOME:
				if (wl == 0 || strncmp(w, t->keyword, wl) != 0)
					break;
				if (t->type == T_ARGV && wl != 2)
					break;	/* "--" only, exactly */
				if (wl == strlen(t->keyword)) {
					match = t;	/* exact beats prefix */
					nmatch = 1;
					goto matched;
				}
				match = t;
				nmatch++;
				break;
			case T_NSNAME:
			case T_HOST:
				match = t;
				nmatch++;
				break;
			default:
				break;
			}
		}
matched:
		if (w == NULL) {
			/* end of input: allowed if the table has T_END */
			for (j = 0; table[j].type != T_END; j++)
				;
			if (table[j].keyword == NULL || res->action == A_NONE) {
				fprintf(stderr, "migctl: missing argument\n");
				list_choices(table);
				return 2;
			}
			break;
		}
		if (nmatch == 0) {
			fprintf(stderr, "migctl: unknown argument '%s'\n", w);
			list_choices(table);
			return 2;
		}
		if (nmatch > 1) {
			fprintf(stderr, "migctl: '%s' is ambiguous\n", w);
			list_choices(table);
			return 2;
		}
		i++;
		if (match->value != A_NONE)
			res->action = match->value;
		switch (match->type) {
		case T_NSNAME:
			if (nsarg_name(w, err, sizeof(err)) == -1)
				return bad_arg(err);
			strcpy(res->ns, w);
			break;
		case T_HOST:
			if (strlen(w) >= sizeof(res->host))
				return bad_arg("host name too long");
			strcpy(res->host, w);
			break;
		case T_OUTCOME:
			snprintf(res->outcome, sizeof(res->outcome), "%s",
			    match->keyword);
			break;
		case T_OPT_ADDR:
		case T_OPT_MAC:
		case T_OPT_ROUTE:
			if (i >= argc) {
				fprintf(stderr, "migctl: %s needs a value\n",
				    match->keyword);
				return 2;
			}
			w = argv[i++];
			if (match->type == T_OPT_ADDR) {
				struct nsarg_addr a;

				if (nsarg_addr(w, &a, err, sizeof(err)) == -1)
					return bad_arg(err);
				if (res->naddrs == NSARG_ADDRS_MAX)
					return bad_arg("too many --addr");
				res->addrs[res->naddrs++] = w;
			} else if (match->type == T_OPT_ROUTE) {
				struct nsarg_route r;

				if (nsarg_route(w, &r, err, sizeof(err)) == -1)
					return bad_arg(err);
				if (res->nroutes == NSARG_ROUTES_MAX)
					return bad_arg("too many --route");
				res->routes[res->nroutes++] = w;
			} else {
				uint8_t mac[6];

				if (res->mac != NULL)
					return bad_arg("--mac given twice");
				if (nsarg_mac(w, mac, err, sizeof(err)) == -1)
					return bad_arg(err);
				res->mac = w;
			}
			break;
		case T_ARGV:
			res->argc = argc - i;
			if (res->argc == 0)
				return bad_arg("run: no command after --");
			if (res->argc > NSARG_ARGV_MAX)
				return bad_arg("run: too many arguments");
			for (j = 0; j < res->argc; j++)
				res->argv[j] = argv[i + j];
			res->argv[res->argc] = NULL;
			i = argc;
			if (resolve_cmd(res) == -1)
				return RES_INVALID_ARGUMENT;
			if (nsarg_argv((const char *const *)res->argv,
			    (size_t)res->argc, err, sizeof(err)) == -1)
				return bad_arg(err);
			break;
		default:
			break;
		}
		table = match->next;
		if (table == NULL && i < argc) {
			fprintf(stderr, "migctl: unexpected argument '%s'\n",
			    argv[i]);
			return 2;
		}
	}
	if (res->action == A_NS_CREATE && res->naddrs == 0)
		return bad_arg("ns create: at least one --addr is needed");
	if (res->action == A_RUN && res->argc == 0)
		return bad_arg("run: missing '-- CMD [ARG ...]'");
	return 0;
}
