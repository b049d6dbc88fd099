/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the control requests migrd takes on its unix
 * socket, through each command's check (ctl_check(), migrd/ctl_cmds.c:
 * the half of a command that changes nothing), and for migctl's command
 * line, which makes them.  migrd here is "host1" with peers "host2" and
 * "client", the LAN bridge is "lo"; it manages the namespaces "svc"
 * (being moved to host2) and "web" (idle), and "inbound" is coming in
 * from host2.
 *
 * The input, by its first byte:
 *
 *   W  the bytes a client writes to the socket: frames (common/frame.c)
 *      pulled from an evbuffer as control.c's conn_read() pulls them,
 *      up to max-message, each control request checked, until a bad
 *      frame (which closes the connection)
 *   R  "RNN{...}": one request, NN its message type in decimal, then
 *      its JSON payload (a frame's payload, without the frame)
 *   M  a migctl command line, one word a line: parse() (migctl/
 *      parser.c); what it accepts, made into its request
 *      (parse_request()), framed and pulled back as migrd would, then
 *      checked
 *
 * Oracles, besides the sanitizers:
 * - every check answers a result code (never "deferred"), a refusal
 *   with a message that says why;
 * - what a check passes is what its action takes for granted: a name
 *   that is valid and, for show, delete and run, a namespace that is
 *   there (the action uses it), addresses and routes within bounds, a
 *   MAC that fits its field, an argv of strings with an absolute
 *   command, a migration for cancel and resolve, an outcome that is
 *   rollback or done;
 * - a request migctl makes is never malformed for migrd (not "bad
 *   request", not an unknown command), and for ns create and run its
 *   arguments, which migctl checks with the same functions, are never
 *   "invalid argument"; it reads back from its frame unchanged;
 * - nothing changes: the namespaces and migrations stay as they were.
 *
 * Nothing here changes the system: the checks look (if_nametoindex(),
 * /run/netns), and the state folder (STATE_DIR) does not exist, so that
 * nothing can be written (the namespaces adopted at the start are not
 * saved, and say so in the log).
 *
 *   tests/fuzz/run.sh control [SECONDS]
 *   FUZZ_VERBOSE=1 build/check/tests/fuzz/fuzz_control FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "control.h"
#include "ctl_cmds.h"
#include "frame.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "ns.h"
#include "nsarg.h"
#include "parser.h"

#define WORDS_MAX	128
#define STATE_DIR	"/nonexistent/fuzz_control"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct migrd	migrd;		/* migrd.c's, which is not linked */
static int	verbose;	/* $FUZZ_VERBOSE: say what each request did */
static FILE	*devnull;	/* migctl's complaints */
static json_t	*migs_before;	/* mig_status_json() at the start */

/* A namespace as a migration brings it (nothing on the system). */
static void
adopt(const char *name, const char *addr)
{
	json_t *desc;

	desc = json_pack("{s:[s],s:[],s:s}", "addrs", addr, "routes", "mac",
	    "");
	if (desc == NULL || ns_adopt(name, desc, NULL, 0, 0, 0) == -1)
		abort();
	json_decref(desc);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct peer_conf *pc;

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (!verbose)
		log_set_sink(log_discard, NULL);
	if ((devnull = fopen("/dev/null", "w")) == NULL)
		abort();
	config_defaults(&migrd.conf);
	snprintf(migrd.conf.hostname, sizeof(migrd.conf.hostname), "host1");
	snprintf(migrd.conf.bridge, sizeof(migrd.conf.bridge), "lo");
	pc = &migrd.conf.peers[migrd.conf.npeers++];
	snprintf(pc->name, sizeof(pc->name), "host2");
	snprintf(pc->addr, sizeof(pc->addr), "10.77.0.2");
	pc->port = MIGR_PEER_PORT;
	pc = &migrd.conf.peers[migrd.conf.npeers++];
	snprintf(pc->name, sizeof(pc->name), "client");
	snprintf(pc->addr, sizeof(pc->addr), "10.77.0.10");
	pc->port = MIGR_PEER_PORT;
	snprintf(migrd.conf.state_dir, sizeof(migrd.conf.state_dir), "%s",
	    STATE_DIR);
	snprintf(migrd.conf.cgroup_root, sizeof(migrd.conf.cgroup_root),
	    "%s/cgroup", STATE_DIR);
	if ((migrd.base = event_base_new()) == NULL)
		abort();
	adopt("svc", "10.77.0.180/24");
	adopt("web", "10.77.0.181/24");
	/* a migration of each kind; their timers are never armed */
	if (mig_new(MIG_SOURCE, "host1-svc-1", "svc", "host2") == NULL ||
	    mig_new(MIG_DEST, "host2-inbound-1", "inbound", "host2") == NULL)
		abort();
	migs_before = mig_status_json();
	return 0;
}

/* Not empty, nor a label and nothing ("bad request: "): a jansson
 * error text is empty when the unpacking itself went well. */
static int
says_why(const char *msg)
{
	const char *colon = strstr(msg, ": ");

	return msg[0] != '\0' && (colon == NULL || colon[2] != '\0');
}

static void
fail(int type, const char *what, const char *msg)
{
	fprintf(stderr, "%s: %s (\"%s\")\n", migr_msgname(type), what, msg);
	abort();
}

/* What the action of type takes for granted once its check passed. */
static void
passed(int type, const struct ctl_req *r)
{
	char err[256];
	size_t i, n;

	switch (type) {
	case MSG_CTL_NS_CREATE:
		if (r->ns == NULL || nsarg_name(r->ns, err, sizeof(err)) ||
		    ns_exists(r->ns) || r->naddrs == 0 ||
		    r->naddrs > NSARG_ADDRS_MAX ||
		    r->nroutes > NSARG_ROUTES_MAX ||
		    (r->mac != NULL && strlen(r->mac) != 17))
			fail(type, "passed, but cannot be built", "");
		break;
	case MSG_CTL_RUN:
		n = json_array_size(r->argv);
		if (r->mns == NULL || !ns_exists(r->ns) || mig_busy(r->ns) ||
		    !json_is_array(r->argv) || n == 0 ||
		    n > NSARG_ARGV_MAX)
			fail(type, "passed, but cannot run", "");
		for (i = 0; i < n; i++)
			if (!json_is_string(json_array_get(r->argv, i)))
				fail(type, "passed an argument that is not "
				    "a string", "");
		if (json_string_value(json_array_get(r->argv, 0))[0] != '/')
			fail(type, "passed a relative command", "");
		break;
	case MSG_CTL_NS_SHOW:
	case MSG_CTL_NS_DELETE:
		if (r->mns == NULL || !ns_exists(r->ns) ||
		    (type == MSG_CTL_NS_DELETE && mig_busy(r->ns)))
			fail(type, "passed without its namespace", "");
		break;
	case MSG_CTL_MIGRATE:
	case MSG_CTL_CHECK:
		if (r->ns == NULL || !ns_exists(r->ns) || (r->host != NULL &&
		    config_find_peer(&migrd.conf, r->host) == NULL) ||
		    (type == MSG_CTL_MIGRATE && (r->host == NULL ||
		    mig_busy(r->ns))))
			fail(type, "passed for what it cannot do", "");
		break;
	case MSG_CTL_CANCEL:
	case MSG_CTL_RESOLVE:
		if (r->mig == NULL || (type == MSG_CTL_RESOLVE &&
		    (r->mig->role != MIG_SOURCE || r->outcome == NULL ||
		    (strcmp(r->outcome, "rollback") != 0 &&
		    strcmp(r->outcome, "done") != 0))))
			fail(type, "passed without a migration to act on", "");
		break;
	}
}

/* One request through its check: the result code. */
static int
check(int type, json_t *req)
{
	struct ctl_req r;
	char msg[512] = "";
	json_t *now;
	int nns = ns_count(), code;

	code = ctl_check(type, req, &r, msg, sizeof(msg));
	if (verbose)
		fprintf(stderr, "%s: %d %s\n", migr_msgname(type), code, msg);
	if (code < 0 || code >= RES__MAX)
		fail(type, "not a result code", msg);
	if (code != RES_OK) {
		if (!says_why(msg))
			fail(type, "refused without saying why", msg);
	} else
		passed(type, &r);
	now = mig_status_json();
	if (ns_count() != nns || !json_equal(now, migs_before))
		fail(type, "the check changed migrd's state", msg);
	json_decref(now);
	return code;
}

/* "RNN{...}" */
static void
request(const char *p, size_t len)
{
	json_t *req;
	int type;

	if (len < 2 || p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9')
		return;
	type = (p[0] - '0') * 10 + (p[1] - '0');
	if (!MSG_IS_CTL(type))
		return;		/* answered "not a control command" */
	if (frame_decode_payload(p + 2, len - 2, &req) != FRAME_OK)
		return;		/* answered "bad request" */
	check(type, req);
	json_decref(req);
}

/* The bytes of a connection, as conn_read() takes them. */
static void
stream(const uint8_t *data, size_t size)
{
	struct evbuffer *in = evbuffer_new();
	struct frame_hdr h;
	json_t *req;
	int st;

	if (in == NULL || evbuffer_add(in, data, size) == -1)
		abort();
	for (;;) {
		st = frame_pull(in, migrd.conf.max_message, &h, &req);
		if (st != FRAME_OK) {
			if (req != NULL)
				abort();
			break;	/* partial: waits; bad: answered, closed */
		}
		if (MSG_IS_CTL(h.type))
			check(h.type, req);
		json_decref(req);
	}
	evbuffer_free(in);
}

/* A migctl command line, and what it sends. */
static void
command(const char *p, size_t len)
{
	static char buf[MIGR_FRAME_MAX];
	char *argv[WORDS_MAX + 1], *w, *end;
	struct parse_result res;
	struct evbuffer *in;
	struct frame_hdr h;
	json_t *req, *got;
	uint8_t *frame;
	size_t flen;
	uint16_t type;
	FILE *saved = stderr;
	int argc = 0, rc, code;

	if (len >= sizeof(buf))
		return;
	memcpy(buf, p, len);
	buf[len] = '\0';
	if (memchr(buf, '\0', len) != NULL)
		return;		/* no argv word holds a NUL */
	for (w = buf, end = buf + len; argc < WORDS_MAX; w = end + 1) {
		argv[argc++] = w;
		if ((end = strchr(w, '\n')) == NULL)
			break;
		*end = '\0';
	}
	argv[argc] = NULL;
	stderr = verbose ? saved : devnull;
	rc = parse(argc, argv, &res);
	stderr = saved;
	if (verbose)
		fprintf(stderr, "migctl: parse: %d\n", rc);
	if (rc != 0)
		return;
	if ((req = parse_request(&res, &type)) == NULL || !MSG_IS_CTL(type))
		abort();
	/* migctl's frame, read as migrd reads it */
	if (frame_pack(type, req, MIGR_FRAME_MAX, &frame, &flen) == -1)
		abort();
	if ((in = evbuffer_new()) == NULL ||
	    evbuffer_add(in, frame, flen) == -1)
		abort();
	rc = frame_pull(in, migrd.conf.max_message, &h, &got);
	evbuffer_free(in);
	free(frame);
	if (rc == FRAME_TOO_BIG && flen > migrd.conf.max_message) {
		json_decref(req);
		return;		/* refused whole: too big, a clean answer */
	}
	if (rc != FRAME_OK || h.type != type || !json_equal(req, got))
		fail(type, "migctl's request does not read back", "");
	code = check(type, got);
	if (code == RES_BAD_REQUEST || code == RES_UNKNOWN_COMMAND ||
	    (code == RES_INVALID_ARGUMENT && (type == MSG_CTL_NS_CREATE ||
	    type == MSG_CTL_RUN))) {
		char *s = json_dumps(got, JSON_COMPACT);

		fprintf(stderr, "migctl sends what migrd refuses (%d): %s\n",
		    code, s);
		abort();
	}
	json_decref(got);
	json_decref(req);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0]) {
	case 'W':
		stream(data + 1, size - 1);
		break;
	case 'R':
		request((const char *)data + 1, size - 1);
		break;
	case 'M':
		command((const char *)data + 1, size - 1);
		break;
	}
	return 0;
}
