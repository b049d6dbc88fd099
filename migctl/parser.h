/* SPDX-License-Identifier: ISC */
/*
 * migctl's command parser: chains of token tables, keywords may be
 * abbreviated to any unambiguous prefix (as in bgpctl's parser.c).
 */
#ifndef MIGCTL_PARSER_H
#define MIGCTL_PARSER_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "nsarg.h"

/* evacuate: at most this many migrations at once (migrd's default
 * bound per peer is 8 too) */
#define EVACUATE_PARALLEL_MAX	8

enum action {
	A_NONE, A_STATUS, A_PEERS, A_NS_LIST, A_NS_SHOW, A_NS_CREATE,
	A_NS_DELETE, A_RUN, A_MIGRATE, A_HISTORY, A_CANCEL, A_RESOLVE,
	A_CHECK, A_EVACUATE
};

struct parse_result {
	enum action	 action;
	char		 ns[NSARG_NAME_MAX + 1];
	char		 host[64];
	char		 outcome[16];	/* resolve: "rollback" or "done" */
	int		 force;		/* resolve ... force */
	int		 checkpoint;	/* run ... --checkpoint */
	int		 gate;		/* run ... --gate */
	int		 parallel;	/* evacuate: migrations at once */
	const char	*addrs[NSARG_ADDRS_MAX];
	int		 naddrs;
	const char	*routes[NSARG_ROUTES_MAX];
	int		 nroutes;
	const char	*mac;
	char		*argv[NSARG_ARGV_MAX + 1];
	int		 argc;
	char		 resolved[4096];	/* argv[0] found in PATH */
};

/* 0 ok; else an exit status after printing the reason to stderr. */
int	parse(int argc, char *argv[], struct parse_result *res);
/* The request res stands for: its payload (a new reference, or NULL
 * when out of memory or for no command) and *type, the message migrd
 * takes it as.  For evacuate, its first request: the namespace list. */
json_t	*parse_request(const struct parse_result *res, uint16_t *type);
void	parser_usage(FILE *fp);

#endif
