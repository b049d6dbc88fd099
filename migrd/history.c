/* SPDX-License-Identifier: ISC */
/*
 * A ring of the last HISTORY_MAX events (namespace created, workload
 * started, peer up/down...), answered by "migctl history".  Each is also
 * logged with log_info.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "migrd.h"

#define HISTORY_MAX	128

struct hentry {
	time_t	when;
	char	kind[16];
	char	text[240];
	json_t	*report;	/* a migration's figures, or NULL */
};

static struct hentry	ring[HISTORY_MAX];
static unsigned		head, count;

void
history_add(const char *kind, const char *fmt, ...)
{
	struct hentry *e = &ring[head];
	va_list ap;

	json_decref(e->report);
	e->report = NULL;
	e->when = time(NULL);
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	log_info("%s: %s", e->kind, e->text);
	head = (head + 1) % HISTORY_MAX;
	if (count < HISTORY_MAX)
		count++;
}

/* Attach a migration report to the event just added. */
void
history_attach(json_t *report)
{
	struct hentry *e = &ring[(head + HISTORY_MAX - 1) % HISTORY_MAX];

	if (count == 0 || report == NULL)
		return;
	json_decref(e->report);
	e->report = json_incref(report);
}

json_t *
history_json(void)
{
	json_t *a = json_array();
	unsigned i, idx;

	if (a == NULL)
		return NULL;
	for (i = 0; i < count; i++) {
		idx = (head + HISTORY_MAX - count + i) % HISTORY_MAX;
		json_array_append_new(a, json_pack("{s:I,s:s,s:s,s:O*}",
		    "time", (json_int_t)ring[idx].when,
		    "kind", ring[idx].kind, "event", ring[idx].text,
		    "report", ring[idx].report));
	}
	return a;
}
