/*
 * Output vtable: fixed, greppable text (output.c) or JSON through
 * jansson (output_json.c), chosen with -j.
 */
#ifndef MIGCTL_OUTPUT_H
#define MIGCTL_OUTPUT_H

#include <jansson.h>

#include "parser.h"

struct output {
	/* data may be NULL; code and message are the daemon's result */
	void	(*result)(enum action a, int code, const char *message,
		    json_t *data);
};

extern const struct output text_output;
extern const struct output json_output;

#endif
