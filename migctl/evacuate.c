/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "evacuate.h"
#include "frame.h"
#include "migrd-protocol.h"

#define EVAC_MAX_NS	4096	/* more than migrd's namespaces can be */

struct evac_ns {
	const char	*name;		/* in the list's reply */
	int		 fd;		/* -1: not started, or finished */
	int		 code;
	char		*message;
	json_t		*report;	/* the migration's, if it came */
};

struct evac {
	const struct output	*out;
	int			 json;
	const char		*host;
	struct evac_ns		*ns;
	size_t			 n;
};

/* The names of the namespaces migrd manages: a new "ns list" reply
 * (kept for the names' storage) or NULL after saying why. */
static json_t *
list_namespaces(const char *sock, int *rc)
{
	json_t *req = json_object(), *reply = NULL, *a;
	const char *msg;
	uint16_t type;
	int fd, sent, code;

	*rc = RES_ERROR;
	if (req == NULL || (fd = ctl_connect(sock)) == -1) {
		if (req != NULL && errno == EACCES)
			*rc = RES_DENIED;
		json_decref(req);
		return NULL;
	}
	sent = frame_write_fd(fd, MSG_CTL_NS_LIST, req, MIGR_FRAME_MAX);
	json_decref(req);
	if (ctl_read(fd, sent, &type, &reply) == -1) {
		close(fd);
		return NULL;
	}
	close(fd);
	if (type != MSG_RESULT || ctl_result(reply, &code, &msg) == -1) {
		fprintf(stderr, "migctl: malformed reply to ns list\n");
		json_decref(reply);
		return NULL;
	}
	if (code != RES_OK) {
		fprintf(stderr, "migctl: ns list: %s: %s\n",
		    migr_strresult(code), msg);
		*rc = code;
		json_decref(reply);
		return NULL;
	}
	a = json_object_get(json_object_get(reply, "data"), "namespaces");
	if (!json_is_array(a) || json_array_size(a) > EVAC_MAX_NS) {
		fprintf(stderr, "migctl: malformed reply to ns list\n");
		json_decref(reply);
		return NULL;
	}
	return reply;
}

/* x's result: a line of its own, before the table */
static void
show_result(struct evac *e, const struct evac_ns *x)
{
	json_t *o;

	if (e->json) {
		o = json_pack("{s:s,s:i,s:s,s:s}", "ns", x->name, "code",
		    x->code, "result", migr_strresult(x->code), "message",
		    x->message ? x->message : "");
		if (o != NULL && x->report != NULL)
			json_object_set(o, "data", x->report);
		if (o != NULL)
			output_json_line(stdout, o);
		json_decref(o);
	} else if (x->code == RES_OK) {
		printf("%-15s%s\n", x->name, x->message);
	} else {
		printf("%-15s%s: %s\n", x->name, migr_strresult(x->code),
		    x->message);
	}
	fflush(stdout);
}

/* x is over: its connection closed, its outcome kept and printed */
static void
finish(struct evac *e, struct evac_ns *x, int code, const char *message,
    json_t *report)
{
	if (x->fd != -1)
		close(x->fd);
	x->fd = -1;
	x->code = code;
	x->message = strdup(message != NULL ? message : "");
	x->report = json_is_object(report) ? json_incref(report) : NULL;
	show_result(e, x);
}

/* Send the MIGRATE of e->ns[i] on a connection of its own. */
static void
start(struct evac *e, const char *sock, size_t i)
{
	struct evac_ns *x = &e->ns[i];
	json_t *req;

	req = json_pack("{s:s,s:s}", "ns", x->name, "host", e->host);
	if (req == NULL || (x->fd = ctl_connect(sock)) == -1) {
		json_decref(req);
		finish(e, x, RES_ERROR, "cannot reach migrd", NULL);
		return;
	}
	/* a failed write: migrd may have answered and closed, the read
	 * says what happened */
	(void)frame_write_fd(x->fd, MSG_CTL_MIGRATE, req, MIGR_FRAME_MAX);
	json_decref(req);
}

/* One progress frame of x, its name first. */
static int
show_progress(struct evac *e, struct evac_ns *x, json_t *p)
{
	const char *phase, *text;
	double at_ms;
	int rc;

	if (e->json) {
		rc = output_progress_json_ns(stdout, x->name, p);
	} else {
		if (output_progress_parse(p, &phase, &at_ms, &text) == -1)
			return -1;
		printf("%-15s", x->name);
		rc = output_progress_text(stdout, p);
	}
	fflush(stdout);
	return rc;
}

/* A frame has come on x's connection (or it broke). */
static void
on_frame(struct evac *e, struct evac_ns *x)
{
	const char *msg;
	uint16_t type;
	json_t *m;
	int code;

	if (ctl_read(x->fd, 0, &type, &m) == -1) {
		finish(e, x, RES_ERROR, "no result from migrd", NULL);
		return;
	}
	if (type == MSG_CTL_PROGRESS) {
		if (show_progress(e, x, m) == -1)
			fprintf(stderr, "migctl: %s: malformed progress from "
			    "migrd\n", x->name);
	} else if (type != MSG_RESULT || ctl_result(m, &code, &msg) == -1) {
		finish(e, x, RES_ERROR, "bad reply from migrd", NULL);
	} else {
		finish(e, x, code, msg, json_object_get(m, "data"));
	}
	json_decref(m);
}

/* The report's figure at ms.key, or "-" */
static const char *
ms(const struct evac_ns *x, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(json_object_get(x->report, "ms"), key);

	if (!json_is_number(v))
		return "-";
	snprintf(buf, len, "%.1f ms", json_number_value(v));
	return buf;
}

static const char *
outcome(const struct evac_ns *x)
{
	const char *o = json_string_value(json_object_get(x->report,
	    "outcome"));

	return o != NULL ? o : x->code == RES_OK ? "moved" :
	    migr_strresult(x->code);
}

/* The table, and the exit status. */
static int
summary(struct evac *e)
{
	size_t i, moved = 0;
	int rc = RES_OK, doubt = 0;
	char b1[32], b2[32];
	json_t *a, *o;

	for (i = 0; i < e->n; i++) {
		if (e->ns[i].code == RES_OK) {
			moved++;
			continue;
		}
		if (e->ns[i].code == RES_IN_DOUBT)
			doubt = 1;
		if (rc == RES_OK)
			rc = e->ns[i].code;
	}
	if (doubt)
		rc = RES_IN_DOUBT;
	if (e->json) {
		if ((a = json_array()) == NULL)
			return RES_ERROR;
		for (i = 0; i < e->n; i++)
			json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:s}",
			    "ns", e->ns[i].name, "outcome", outcome(&e->ns[i]),
			    "code", e->ns[i].code, "message",
			    e->ns[i].message ? e->ns[i].message : ""));
		o = json_pack("{s:s,s:I,s:I,s:o}", "host", e->host, "moved",
		    (json_int_t)moved, "stayed", (json_int_t)(e->n - moved),
		    "namespaces", a);
		snprintf(b1, sizeof(b1), "%zu of %zu moved", moved, e->n);
		e->out->result(A_EVACUATE, rc, b1, o);
		json_decref(o);
		return rc;
	}
	if (e->n > 0) {
		printf("\n%-15s %-12s %12s %12s\n", "namespace", "outcome",
		    "downtime", "total");
		for (i = 0; i < e->n; i++)
			printf("%-15s %-12s %12s %12s\n", e->ns[i].name,
			    outcome(&e->ns[i]), ms(&e->ns[i], "downtime", b1,
			    sizeof(b1)), ms(&e->ns[i], "total", b2,
			    sizeof(b2)));
	}
	printf("evacuate %s: %zu namespace%s, %zu moved, %zu stayed here%s\n",
	    e->host, e->n, e->n == 1 ? "" : "s", moved, e->n - moved,
	    doubt ? " (one or more in doubt: see migctl(8), resolve)" : "");
	fflush(stdout);
	return rc;
}

int
evacuate(const char *sock, const char *host, int parallel,
    const struct output *out)
{
	struct evac e = { out, out == &json_output, host, NULL, 0 };
	struct pollfd pfd[EVACUATE_PARALLEL_MAX];
	size_t idx[EVACUATE_PARALLEL_MAX], next = 0, i;
	json_t *list, *v;
	int rc, npfd;

	if ((list = list_namespaces(sock, &rc)) == NULL)
		return rc;
	v = json_object_get(json_object_get(list, "data"), "namespaces");
	e.n = json_array_size(v);
	if (e.n > 0 && (e.ns = calloc(e.n, sizeof(*e.ns))) == NULL) {
		fprintf(stderr, "migctl: out of memory\n");
		json_decref(list);
		return RES_ERROR;
	}
	for (i = 0; i < e.n; i++) {
		e.ns[i].fd = -1;
		e.ns[i].name = json_string_value(json_object_get(
		    json_array_get(v, i), "name"));
		if (e.ns[i].name == NULL) {
			fprintf(stderr, "migctl: malformed reply to ns list\n");
			free(e.ns);
			json_decref(list);
			return RES_ERROR;
		}
	}
	for (;;) {
		/* keep up to parallel migrations under way */
		for (npfd = 0, i = 0; i < e.n; i++)
			if (e.ns[i].fd != -1)
				npfd++;
		while (npfd < parallel && next < e.n) {
			start(&e, sock, next);
			if (e.ns[next++].fd != -1)
				npfd++;
		}
		for (npfd = 0, i = 0; i < e.n; i++) {
			if (e.ns[i].fd == -1)
				continue;
			pfd[npfd].fd = e.ns[i].fd;
			pfd[npfd].events = POLLIN;
			idx[npfd++] = i;
		}
		if (npfd == 0)
			break;
		if (poll(pfd, (nfds_t)npfd, -1) == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "migctl: poll: %s\n", strerror(errno));
			break;
		}
		for (i = 0; i < (size_t)npfd; i++)
			if (pfd[i].revents != 0)
				on_frame(&e, &e.ns[idx[i]]);
	}
	rc = summary(&e);
	for (i = 0; i < e.n; i++) {
		if (e.ns[i].fd != -1)
			close(e.ns[i].fd);
		free(e.ns[i].message);
		json_decref(e.ns[i].report);
	}
	free(e.ns);
	json_decref(list);
	return rc;
}
