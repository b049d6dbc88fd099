#include <stdio.h>

#include "migrd-protocol.h"
#include "output.h"

/* The whole result object, plus the code's name: {code, result,
 * message, data}. */
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
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	fputc('\n', stdout);
	json_decref(o);
}

const struct output json_output = { json_result };
