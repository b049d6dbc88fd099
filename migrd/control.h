/* SPDX-License-Identifier: ISC */
/*
 * The control socket: a unix stream socket (or the one systemd passes),
 * framed JSON requests, exactly one MSG_RESULT reply per request.  Only
 * root or members of admin-group are served (SO_PEERCRED on accept).
 */
#ifndef MIGRD_CONTROL_H
#define MIGRD_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "nsarg.h"

int	control_init(void);
void	control_shutdown(void);

/*
 * A command comes in two halves (the table in ctl_cmds.c).  The check
 * reads the request and what this host has, changes nothing, and fills
 * a struct ctl_req with what the command acts on; the action does the
 * work from that alone.  Both return an enum migr_result and may write
 * a message (empty = the code's string); the action may set *data.
 * tests/fuzz/fuzz_control.c runs the checks alone (ctl_check()).
 */
struct mig;
struct mns;
struct ctl_req {
	const char		*ns;		/* a valid name, or NULL */
	const char		*host;		/* migrate, check; or NULL */
	const char		*outcome;	/* resolve */
	int			 force;		/* resolve: even with the peer up */
	const char		*mac;		/* ns create; or NULL */
	uint8_t			 macb[6];
	struct nsarg_addr	 addrs[NSARG_ADDRS_MAX];
	size_t			 naddrs;
	struct nsarg_route	 routes[NSARG_ROUTES_MAX];
	size_t			 nroutes;
	json_t			*argv;		/* run; the request's */
	int			 checkpoint;	/* run: checkpoint mode */
	int			 gate;		/* run: gated restarts */
	struct mns		*mns;		/* show, delete, run */
	struct mig		*mig;		/* cancel, resolve */
};
/* The strings and argv point into the request, which outlives both. */
typedef int (*ctl_check_fn)(json_t *req, struct ctl_req *r, char *msg,
    size_t msglen);
typedef int (*ctl_act_fn)(struct ctl_req *r, json_t **data, char *msg,
    size_t msglen);

/*
 * A handler that cannot answer at once (a migration) takes the caller's
 * id from control_current(), returns CTL_DEFERRED, and later sends any
 * number of MSG_CTL_PROGRESS frames and exactly one result.  The
 * connection reads no other request meanwhile.  A caller that went away
 * is simply not found: both calls then do nothing.
 */
#define CTL_DEFERRED	(-1)
uint64_t control_current(void);
int	control_progress(uint64_t id, json_t *progress);	/* steals */
void	control_finish(uint64_t id, int code, const char *msg, json_t *data);

#endif
