/* SPDX-License-Identifier: ISC */
#include <stdio.h>

#include "migrd-protocol.h"
#include "output.h"

/*
 * -j prints a stream of JSON objects, exactly one per line, whatever
 * they hold (strings escape their newlines): the progress frames of a
 * migration, then the result.  15 digits: 15.2 prints as 15.2, not
 * 15.199999999999999.
 */
#define DUMP_FLAGS \
	(JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15))

/* o on one line of fp */
int
output_json_line(FILE *fp, json_t *o)
{
	int rc;

	rc = json_dumpf(o, fp, DUMP_FLAGS);
	fputc('\n', fp);
	return rc;
}

/* The whole result object, plus the code's name, on one line: {code,
 * result, message, data}. */
static void
json_result(enum action a, int code, const char *message, json_t *data)
{
	json_t *o;

	(void)a;
	o = json_pack("{s:i,s:s,s:s}", "code", code, "result",
	    migr_strresult(code), "message", message);
	if (o == NULL)
		return;
	if (data != NULL)
		json_object_set(o, "data", data);
	output_json_line(stdout, o);
	json_decref(o);
}

/* One compact line per progress frame: {"progress": {...}}, with
 * "ns" first when given. */
int
output_progress_json_ns(FILE *fp, const char *ns, json_t *p)
{
	const char *phase, *text;
	double at_ms;
	json_t *o;
	int rc;

	if (output_progress_parse(p, &phase, &at_ms, &text) == -1)
		return -1;
	o = ns != NULL ? json_pack("{s:s,s:O}", "ns", ns, "progress", p) :
	    json_pack("{s:O}", "progress", p);
	if (o == NULL)
		return -1;
	rc = output_json_line(fp, o);
	json_decref(o);
	return rc;
}

int
output_progress_json(FILE *fp, json_t *p)
{
	return output_progress_json_ns(fp, NULL, p);
}

static int
json_progress(json_t *p)
{
	if (output_progress_json(stdout, p) == -1)
		return -1;
	fflush(stdout);
	return 0;
}

const struct output json_output = { json_result, json_progress };
