/* SPDX-License-Identifier: ISC */
/*
 * migrd.conf: one statement per line, "keyword value...", '#' starting a
 * comment.  The keywords, with their types, defaults, limits and the
 * fields they set, are the table in config_keys.c; this file reads the
 * lines, hands each statement to its keyword's type, checks what
 * involves more than one keyword, and prints the effective
 * configuration back in the same syntax ("migrd -nv").
 *
 * Every error is reported as "file:line: reason" and parsing goes on so
 * that one run of "migrd -n" shows them all.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_keys.h"
#include "log.h"
#include "migrd-protocol.h"

#define NOTE_COLUMN	36	/* where "migrd -nv" starts its comments */

void
config_defaults(struct migrd_conf *c)
{
	const struct conf_key *k;
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < conf_nkeys; i++) {
		k = &conf_keys[i];
		if (k->type->init != NULL)
			k->type->init(k, c);
	}
}

static void
statement(struct conf_ctx *p, char **w, int n)
{
	const struct conf_key *k;
	uint64_t bit;

	if ((k = conf_key_find(w[0])) == NULL) {
		conf_err(p, "unknown keyword '%s'", w[0]);
		return;
	}
	if (n - 1 < k->type->minargs || n - 1 > k->type->maxargs) {
		conf_err(p, "%s: wrong number of arguments", k->name);
		return;
	}
	bit = (uint64_t)1 << (k - conf_keys);
	if (!(k->flags & CK_REPEAT) && (p->seen & bit)) {
		conf_err(p, "%s: given more than once", k->name);
		return;
	}
	p->seen |= bit;
	k->type->parse(p, k, w, n);
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
		if (n == CONF_WORDS_MAX)
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

/* What no single statement can check. */
static void
check_whole(struct conf_ctx *p)
{
	struct migrd_conf *c = p->c;
	const struct conf_key *k;
	char val[CONF_VALUE_MAX];
	size_t i;
	int j;

	p->line = 0;	/* errors about the whole file */
	for (i = 0; i < conf_nkeys; i++) {
		k = &conf_keys[i];
		if ((k->flags & CK_REQUIRED) &&
		    k->type->value(k, c, 0, val, sizeof(val)) == -1)
			conf_err(p, "%s is required", k->name);
	}
	for (j = 0; j < c->npeers; j++) {
		if (strcmp(c->peers[j].name, c->hostname) == 0) {
			p->line = c->peers[j].line;
			conf_err(p, "peer %s: is this host's own name",
			    c->hostname);
		}
	}
	p->line = 0;
	if (c->dead_ms <= c->heartbeat_ms)
		conf_err(p, "dead-time (%u ms) must be longer than "
		    "heartbeat-interval (%u ms)", c->dead_ms, c->heartbeat_ms);
	if (c->max_queue < 2 * (c->max_message + MIGR_FRAME_HDR_LEN))
		conf_err(p, "max-queue (%u) must hold two messages of "
		    "max-message (%u) bytes", c->max_queue, c->max_message);
}

enum line_fault {
	LINE_OK,
	LINE_LONG,	/* more than CONF_LINE_MAX characters */
	LINE_NUL	/* a NUL byte, which would end it early for split() */
};

/*
 * The next line of fp, without its newline, into line (CONF_LINE_MAX
 * characters and a NUL): 1, or 0 at the end of the file.  A faulty line
 * is read to its end all the same, and *fault says what is wrong.
 */
static int
read_line(FILE *fp, char *line, enum line_fault *fault)
{
	size_t len = 0;
	int ch;

	*fault = LINE_OK;
	flockfile(fp);
	while ((ch = getc_unlocked(fp)) != EOF && ch != '\n') {
		if (*fault != LINE_OK)
			continue;
		if (ch == '\0')
			*fault = LINE_NUL;
		else if (len == CONF_LINE_MAX)
			*fault = LINE_LONG;
		else
			line[len++] = (char)ch;
	}
	funlockfile(fp);
	line[len] = '\0';
	return ch != EOF || len > 0 || *fault != LINE_OK;
}

int
config_parse_fp(FILE *fp, const char *name, struct migrd_conf *c)
{
	struct conf_ctx p = { .file = name, .c = c };
	char line[CONF_LINE_MAX + 1];
	char *w[CONF_WORDS_MAX];
	enum line_fault fault;
	int n;

	config_defaults(c);
	while (read_line(fp, line, &fault)) {
		p.line++;
		if (fault == LINE_LONG) {
			conf_err(&p, "line longer than %d characters",
			    CONF_LINE_MAX);
			continue;
		}
		if (fault == LINE_NUL) {
			conf_err(&p, "line holds a NUL byte");
			continue;
		}
		if ((n = split(line, w)) == -1) {
			conf_err(&p, "too many words (at most %d)",
			    CONF_WORDS_MAX);
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

/* stmt, then "# note" at NOTE_COLUMN if the line stays short enough */
static void
print_line(FILE *fp, const char *stmt, const char *note)
{
	size_t len = strlen(stmt);

	if (len < NOTE_COLUMN)
		len = NOTE_COLUMN;
	if (len + 3 + strlen(note) <= CONF_LINE_MAX)
		fprintf(fp, "%-*s # %s\n", NOTE_COLUMN, stmt, note);
	else
		fprintf(fp, "%s\n", stmt);
}

/*
 * Every keyword in table order with its effective value, defaults
 * included, as statements that config_parse_fp() reads back to the same
 * configuration.  A keyword without a value (admin-group unset, no
 * peer) is printed as a comment.
 */
void
config_print(FILE *fp, const struct migrd_conf *c)
{
	const struct conf_key *k;
	char val[CONF_VALUE_MAX], stmt[CONF_VALUE_MAX + 64], note[256];
	size_t i;
	int j;

	for (i = 0; i < conf_nkeys; i++) {
		k = &conf_keys[i];
		if (k->type == &conf_uint)
			snprintf(note, sizeof(note), "%s (%u-%u%s%s)",
			    k->descr, k->min, k->max,
			    k->unit == CU_NONE ? "" : " ",
			    conf_unit_names[k->unit]);
		else
			snprintf(note, sizeof(note), "%s", k->descr);
		for (j = 0; k->type->value(k, c, j, val, sizeof(val)) == 0;
		    j++) {
			snprintf(stmt, sizeof(stmt), "%s %s", k->name, val);
			print_line(fp, stmt, note);
		}
		if (j == 0) {
			snprintf(stmt, sizeof(stmt), "#%s", k->name);
			snprintf(val, sizeof(val), "not set: %s", note);
			print_line(fp, stmt, val);
		}
	}
}
