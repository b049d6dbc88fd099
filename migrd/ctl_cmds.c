/* SPDX-License-Identifier: ISC */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "ctl_cmds.h"
#include "loopwatch.h"
#include "mig.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "nsarg.h"
#include "ns.h"
#include "peer.h"
#include "tlsd.h"

static int
cmd_status(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	json_t *peers = peer_list_json();
	size_t i, up = 0;

	(void)r;
	(void)msg;
	(void)msglen;
	for (i = 0; peers && i < json_array_size(peers); i++) {
		const char *st = json_string_value(json_object_get(
		    json_array_get(peers, i), "state"));

		if (st != NULL && strcmp(st, "up") == 0)
			up++;
	}
	*data = json_pack("{s:s,s:i,s:I,s:I,s:s,s:s,s:i,s:i,s:i,s:i,s:o,s:o}",
	    "host", migrd.conf.hostname,
	    "protocol", MIGR_PROTO_VERSION,
	    "pid", (json_int_t)getpid(),
	    "uptime", (json_int_t)(time(NULL) - migrd.started),
	    "control_socket", migrd.conf.control_socket,
	    "listen", migrd.conf.listen_addr,
	    "port", migrd.conf.listen_port,
	    "peers", migrd.conf.npeers,
	    "peers_up", (int)up,
	    "namespaces", ns_count(),
	    "capabilities", caps_json(),
	    "migrations", mig_status_json());
	json_decref(peers);
	if (*data != NULL) {
		json_object_set_new(*data, "tls_process", json_pack(
		    "{s:I,s:I,s:b}", "pid", (json_int_t)tlsd_pid(),
		    "uid", (json_int_t)migrd.channel_uid,
		    "running", tlsd_ready()));
		json_object_set_new(*data, "event_loop", loopwatch_json());
	}
	return *data ? RES_OK : RES_ERROR;
}

static int
cmd_peers(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	(void)r;
	(void)msg;
	(void)msglen;
	*data = json_pack("{s:o}", "peers", peer_list_json());
	return *data ? RES_OK : RES_ERROR;
}

static int
cmd_history(struct ctl_req *r, json_t **data, char *msg, size_t msglen)
{
	(void)r;
	(void)msg;
	(void)msglen;
	*data = json_pack("{s:o}", "events", history_json());
	return *data ? RES_OK : RES_ERROR;
}

static const struct {
	ctl_check_fn	check;		/* NULL: nothing to check */
	ctl_act_fn	act;
} cmds[MSG__MAX] = {
	[MSG_CTL_STATUS] = { NULL, cmd_status },
	[MSG_CTL_PEERS] = { NULL, cmd_peers },
	[MSG_CTL_HISTORY] = { NULL, cmd_history },
	[MSG_CTL_MIGRATE] = { mig_migrate_check, mig_ctl_migrate },
	[MSG_CTL_CANCEL] = { mig_cancel_check, mig_ctl_cancel },
	[MSG_CTL_RESOLVE] = { mig_resolve_check, mig_ctl_resolve },
	[MSG_CTL_CHECK] = { mig_check_check, mig_ctl_check },
	[MSG_CTL_NS_LIST] = { NULL, ns_ctl_list },
	[MSG_CTL_NS_SHOW] = { ns_show_check, ns_ctl_show },
	[MSG_CTL_NS_CREATE] = { ns_create_check, ns_ctl_create },
	[MSG_CTL_NS_DELETE] = { ns_delete_check, ns_ctl_delete },
	[MSG_CTL_RUN] = { ns_run_check, ns_ctl_run },
};

int
ctl_check(int type, json_t *req, struct ctl_req *r, char *msg,
    size_t msglen)
{
	memset(r, 0, sizeof(*r));
	if (type <= 0 || type >= MSG__MAX || cmds[type].act == NULL) {
		snprintf(msg, msglen, "unknown command %d", type);
		return RES_UNKNOWN_COMMAND;
	}
	return cmds[type].check != NULL ? cmds[type].check(req, r, msg,
	    msglen) : RES_OK;
}

int
ctl_dispatch(int type, json_t *req, json_t **data, char *msg, size_t msglen)
{
	struct ctl_req r;
	int rc;

	if ((rc = ctl_check(type, req, &r, msg, msglen)) != RES_OK)
		return rc;
	return cmds[type].act(&r, data, msg, msglen);
}
