/* SPDX-License-Identifier: ISC */
/*
 * "migctl check NS [HOST]": the pre-flight a migration runs, on its own
 * and changing nothing, as criu check does for a process.  Here: every
 * socket, option and membership that would make the move refuse, the
 * closed connections it would wait for; there: whether HOST would take
 * the namespace (MSG_MIG_CHECK, the same checks as a PREPARE, nothing
 * built).  The answer waits for HOST's (a deferred control command).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>

#include "control.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "migsrc.h"
#include "ns.h"
#include "nsdump.h"
#include "peer.h"
#include "srccheck.h"

struct check {
	TAILQ_ENTRY(check)	 entry;
	char			 id[MIG_ID_MAX];
	char			 ns[NSARG_NAME_MAX + 1];
	char			 peer[CONF_NAME_MAX];	/* "": none asked */
	struct srccheck		*sc;		/* this side's, running */
	uint64_t		 ctl;
	struct event		*timer;
	json_t			*data;		/* what this side found */
	int			 code;		/* this side's verdict */
	char			 msg[512];
};

static TAILQ_HEAD(, check) checks = TAILQ_HEAD_INITIALIZER(checks);

static void
check_free(struct check *c)
{
	TAILQ_REMOVE(&checks, c, entry);
	srccheck_cancel(c->sc);
	if (c->timer != NULL)
		event_free(c->timer);
	json_decref(c->data);
	free(c);
}

/* The peer's word (or its silence) joins this side's, then migctl. */
static void
check_finish(struct check *c, int ok, const char *reason)
{
	json_object_set_new(c->data, "host", json_pack("{s:s,s:b,s:s}",
	    "name", c->peer, "ok", ok, "reason", reason));
	if (!ok && c->code == RES_OK) {
		c->code = RES_REFUSED;
		snprintf(c->msg, sizeof(c->msg), "%s cannot take it: %.400s",
		    c->peer, reason);
	} else if (c->code == RES_OK)
		snprintf(c->msg + strlen(c->msg), sizeof(c->msg) -
		    strlen(c->msg), "; %s can take it", c->peer);
	control_finish(c->ctl, c->code, c->msg, c->data);
	check_free(c);
}

static void
check_timeout(evutil_socket_t fd, short what, void *arg)
{
	char why[128];

	(void)fd;
	(void)what;
	snprintf(why, sizeof(why), "no answer in %u s",
	    migrd.conf.migrate_timeout);
	check_finish(arg, 0, why);
}

void
check_rx(const char *peer, json_t *msg)
{
	const char *id, *reason = "";
	struct check *c;
	int ok = 0;

	if (json_unpack(msg, "{s:s,s:b,s?s}", "mig", &id, "ok", &ok,
	    "reason", &reason) == -1) {
		log_warnx("peer %s: malformed mig-checked", peer);
		return;
	}
	/* a check still looking here has asked nobody yet */
	TAILQ_FOREACH(c, &checks, entry)
		if (c->sc == NULL && strcmp(c->id, id) == 0 &&
		    strcmp(c->peer, peer) == 0)
			break;
	if (c == NULL) {
		log_debug("peer %s: mig-checked %s: not ours", peer, id);
		return;
	}
	check_finish(c, ok, ok ? "" : reason);
}

static int
append_record(json_t *rec, void *arg)
{
	return json_array_append_new(arg, rec);
}

/* "check NS [HOST]": NS is here, HOST (if given) a configured peer. */
int
mig_check_check(json_t *req, struct ctl_req *r, char *msg, size_t msglen)
{
	const char *ns, *host = NULL;
	json_error_t jerr;
	int rc;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s,s?s}", "ns", &ns,
	    "host", &host) == -1) {
		snprintf(msg, msglen, "check: %s", jerr.text);
		return RES_BAD_REQUEST;
	}
	if ((rc = mig_check_target(ns, host, msg, msglen)) != RES_OK)
		return rc;
	r->ns = ns;
	r->host = host;
	return RES_OK;
}

/* This side's verdict (srccheck.h), then HOST's if one was named. */
static void
checked(void *arg, int nsocks, const char *why, json_t *reasons)
{
	struct check *c = arg;
	struct timeval tv = { migrd.conf.migrate_timeout, 0 };
	const char *ns = c->ns, *host = c->peer[0] != '\0' ? c->peer : NULL;
	char orph[512], err[256], all[2048];
	json_t *d, *records, *argv, *wl;
	int refused = nsocks < 0, norph;

	c->sc = NULL;
	snprintf(all, sizeof(all), "%s", why);
	reasons = json_copy(reasons);
	if (reasons == NULL) {
		control_finish(c->ctl, RES_SYSTEM, "out of memory", NULL);
		check_free(c);
		return;
	}
	if ((norph = migsrc_orphans(ns, orph, sizeof(orph))) < 0) {
		/* not knowing is no "none" */
		snprintf(err, sizeof(err), "cannot list the closed "
		    "connections: %.200s", orph);
		json_array_append_new(reasons, json_string(err));
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s",
		    refused ? "; " : "", err);
		refused = 1;
	}
	d = json_pack("{s:s,s:o,s:i,s:s}", "ns", ns, "refusals", reasons,
	    "orphans", norph > 0 ? norph : 0, "orphans_busy", norph > 0 ?
	    orph : "");
	if (d == NULL) {
		control_finish(c->ctl, RES_SYSTEM, "out of memory", NULL);
		check_free(c);
		return;
	}
	c->data = d;
	c->code = refused ? RES_REFUSED : RES_OK;
	if (refused)
		snprintf(c->msg, sizeof(c->msg), "%s cannot move: %.400s", ns,
		    all);
	else
		snprintf(c->msg, sizeof(c->msg), "%s can move%s", ns,
		    norph > 0 ? " (once its closed connections have "
		    "delivered their last bytes)" : "");
	if (host == NULL || !peer_is_up(host)) {
		if (host != NULL) {
			json_object_set_new(d, "host", json_pack("{s:s,s:b,"
			    "s:s}", "name", host, "ok", 0, "reason",
			    "no session (see migctl peers)"));
			if (!refused) {
				c->code = RES_PEER_DOWN;
				snprintf(c->msg, sizeof(c->msg), "no session "
				    "with %s", host);
			}
		}
		control_finish(c->ctl, c->code, c->msg, d);
		check_free(c);
		return;
	}
	/* ask host, with what a PREPARE would carry */
	if ((records = json_array()) == NULL ||
	    nsdump_emit(ns, append_record, records, err, sizeof(err)) < 0) {
		json_decref(records);
		snprintf(c->msg, sizeof(c->msg), "cannot read the network of "
		    "%s", ns);
		control_finish(c->ctl, RES_SYSTEM, c->msg, NULL);
		check_free(c);
		return;
	}
	argv = ns_workload_argv(ns);
	wl = ckpt_workload_json(ns, argv);
	json_decref(argv);
	if ((c->timer = evtimer_new(migrd.base, check_timeout, c)) == NULL ||
	    evtimer_add(c->timer, &tv) == -1) {
		json_decref(wl);
		json_decref(records);
		snprintf(c->msg, sizeof(c->msg), "cannot ask %s", host);
		control_finish(c->ctl, RES_SYSTEM, c->msg, NULL);
		check_free(c);
		return;
	}
	if (peer_send(host, MSG_MIG_CHECK, json_pack("{s:s,s:s,s:s,s:o,s:o,"
	    "s:i,s:o*}", "mig", c->id, "ns", ns, "from", migrd.conf.hostname,
	    "namespace", ns_describe(ns), "records", records, "sockets",
	    nsocks > 0 ? nsocks : 0, "workload", wl)) == -1) {
		snprintf(c->msg, sizeof(c->msg), "cannot ask %s", host);
		control_finish(c->ctl, RES_PEER_DOWN, c->msg, NULL);
		check_free(c);
	}
}

/* The check of this side runs away from the loop; checked() goes on. */
int
mig_ctl_check(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	char cg[PATH_MAX], why[256];
	struct timespec now;
	struct check *c;

	(void)data;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(msg, msglen, "out of memory");
		return RES_SYSTEM;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(c->id, sizeof(c->id), "check-%s-%s-%lld%03ld",
	    migrd.conf.hostname, r->ns, (long long)now.tv_sec,
	    now.tv_nsec / 1000000);
	snprintf(c->ns, sizeof(c->ns), "%s", r->ns);
	snprintf(c->peer, sizeof(c->peer), "%s", r->host ? r->host : "");
	c->ctl = control_current();
	ns_cgroup_path(r->ns, cg, sizeof(cg));
	/* a dry pre-dump too, unless a migration of it is under way (its
	 * own passes, or its freeze, hold the program) */
	if ((c->sc = srccheck_start(r->ns, cg, mig_busy(r->ns) ? 0 :
	    SRCCHECK_DRY_DUMP, checked, c, why, sizeof(why))) == NULL) {
		free(c);
		snprintf(msg, msglen, "cannot check %s: %s", r->ns, why);
		return RES_SYSTEM;
	}
	TAILQ_INSERT_TAIL(&checks, c, entry);
	return CTL_DEFERRED;
}
