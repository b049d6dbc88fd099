/* SPDX-License-Identifier: ISC */
/*
 * Output vtable: fixed, greppable text (output.c) or JSON through
 * jansson (output_json.c), chosen with -j.
 */
#ifndef MIGCTL_OUTPUT_H
#define MIGCTL_OUTPUT_H

#include <stdio.h>

#include <jansson.h>

#include "parser.h"

struct output {
	/* data may be NULL; code and message are the daemon's result */
	void	(*result)(enum action a, int code, const char *message,
		    json_t *data);
	/* one MSG_CTL_PROGRESS payload, printed and flushed at once;
	 * -1 if it is malformed (nothing printed) */
	int	(*progress)(json_t *p);
};

extern const struct output text_output;
extern const struct output json_output;

/* The pieces behind the vtables, on any stream (for the unit tests). */
int	output_progress_parse(json_t *p, const char **phase, double *at_ms,
	    const char **text);
int	output_progress_text(FILE *fp, json_t *p);
int	output_progress_json(FILE *fp, json_t *p);
int	output_progress_json_ns(FILE *fp, const char *ns, json_t *p);
/* o on one line of fp, as -j prints every object */
int	output_json_line(FILE *fp, json_t *o);
/* A migration report: heading and table; -1 (nothing printed) if r is
 * not an object with an "outcome". */
int	output_report(FILE *fp, json_t *r);
/* The same on one line, for history: "outcome, sockets N, downtime". */
int	output_report_summary(FILE *fp, json_t *r);

#endif
