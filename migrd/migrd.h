/* SPDX-License-Identifier: ISC */
/*
 * migrd: shared daemon state.  One process, one libevent loop.
 */
#ifndef MIGRD_H
#define MIGRD_H

#include <sys/queue.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "config.h"

struct event_base;

struct migrd {
	struct event_base	*base;
	struct migrd_conf	 conf;
	const char		*conf_path;
	time_t			 started;
	gid_t			 admin_gid;
	int			 have_admin_gid;
	uid_t			 workload_uid;	/* workload-user, resolved */
	gid_t			 workload_gid;
	uid_t			 channel_uid;	/* channel-user: tlsd.h */
	gid_t			 channel_gid;
	int			 foreground;
};

extern struct migrd migrd;

/* history.c: a bounded in-memory log of what migrd did, for "history" */
void	 history_add(const char *kind, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	 history_attach(json_t *report);
json_t	*history_json(void);

/* notify.c: systemd readiness and socket activation */
int	 notify_send(const char *state);
int	 notify_listen_fd(void);
struct event;
int	 notify_watchdog_start(struct event_base *, struct event **);

/* caps.c */
int	 caps_drop(void);
json_t	*caps_json(void);



#endif
