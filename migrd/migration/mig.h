/* SPDX-License-Identifier: ISC */
/*
 * Migrations: the protocol of migrd/migration/migfsm.c carried out by migrd.
 * The source half (mig_src.c) checks, pre-copies the namespace's
 * description, freezes, dumps and streams the sockets, then commits or
 * rolls back; the destination half (mig_dst.c) builds the namespace
 * locked and detached, restores each socket as its record arrives, and
 * goes live at COMMIT.  mig.c keeps the table of migrations under way,
 * feeds events to the state machine, persists what a restart must find,
 * and answers migctl.  docs/design.md has the state tables.
 */
#ifndef MIGRD_MIG_H
#define MIGRD_MIG_H

#include <stddef.h>

#include <jansson.h>

int	 mig_init(void);	/* after ns_init: what a restart left */
void	 mig_shutdown(void);

/* peer.c: a MSG_MIG_* message from an authenticated peer; the channel */
void	 mig_rx(const char *peer, int type, json_t *msg);
void	 mig_channel(const char *peer, int up);
size_t	 mig_rx_limit(const char *peer);	/* largest frame accepted */

/* control commands: the checks change nothing (control.h) */
struct ctl_req;
int	 mig_migrate_check(json_t *, struct ctl_req *, char *, size_t);
int	 mig_cancel_check(json_t *, struct ctl_req *, char *, size_t);
int	 mig_resolve_check(json_t *, struct ctl_req *, char *, size_t);
int	 mig_check_check(json_t *, struct ctl_req *, char *, size_t);
int	 mig_ctl_migrate(struct ctl_req *, json_t **, char *, size_t);
int	 mig_ctl_cancel(struct ctl_req *, json_t **, char *, size_t);
int	 mig_ctl_resolve(struct ctl_req *, json_t **, char *, size_t);
int	 mig_ctl_check(struct ctl_req *, json_t **, char *, size_t);
json_t	*mig_status_json(void);
/* 1 if ns is being moved (in or out): ns delete and run must wait */
int	 mig_busy(const char *ns);

#endif
