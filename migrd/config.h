/* SPDX-License-Identifier: ISC */
/*
 * migrd.conf: line-based "keyword value..." syntax, '#' comments.
 * See docs/man/migrd.conf.5.
 */
#ifndef MIGRD_CONFIG_H
#define MIGRD_CONFIG_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"

#define CONF_NAME_MAX	64
#define CONF_PEERS_MAX	64

struct peer_conf {
	char		name[CONF_NAME_MAX];
	char		addr[64];		/* numeric IPv4/IPv6 */
	uint16_t	port;
	int		line;
	struct policy	allow;		/* what it may bring here */
};

struct migrd_conf {
	char		hostname[CONF_NAME_MAX];
	char		listen_addr[64];
	uint16_t	listen_port;
	struct peer_conf peers[CONF_PEERS_MAX];
	int		npeers;
	char		cert[PATH_MAX];
	char		key[PATH_MAX];
	char		ca[PATH_MAX];
	char		control_socket[108];	/* sun_path */
	char		admin_group[CONF_NAME_MAX];
	char		state_dir[PATH_MAX];
	char		bridge[16];		/* IFNAMSIZ */
	char		cgroup_root[PATH_MAX];
	uint32_t	max_message;		/* bytes of JSON payload */
	uint32_t	max_queue;		/* bytes queued per socket */
	uint32_t	handshake_timeout;	/* seconds */
	uint32_t	heartbeat_ms;
	uint32_t	dead_ms;
	uint32_t	compress;		/* CONF_COMPRESS_* */
	uint32_t	repair_path;		/* 0 no, 1 yes */
	uint32_t	max_control_clients;
	uint32_t	migrate_timeout;	/* seconds per phase */
	uint32_t	commit_ms;		/* COMMIT unanswered: resend */
	uint32_t	orphan_ms;		/* orphans draining: wait */
	uint32_t	settle_ms;		/* light mode: tasks to rest */
	uint32_t	lock_mode;		/* CONF_LOCK_* */
	uint32_t	lock_queue_bytes;	/* replaying lock: bounds */
	uint32_t	lock_queue_packets;
	uint32_t	precopy_passes;		/* checkpoint mode: memory
						   passes before the freeze */
	char		channel_user[CONF_NAME_MAX];	/* tlsd.h */
	char		workload_user[CONF_NAME_MAX];
	char		workload_group[CONF_NAME_MAX];	/* "": the user's */
	uint64_t	workload_caps;		/* bit per CAP_*: ambient */
	char		workload_log_dir[PATH_MAX];
	uint32_t	workload_log_max;	/* bytes before NAME.log.1 */
	uint32_t	workload_memory_max;	/* MiB of a namespace's
						   cgroup, 0: no limit */
	uint32_t	workload_pids_max;	/* its tasks, 0: no limit */
};

/* lock: the choices' order in config_keys.c */
#define CONF_LOCK_DROP		0
#define CONF_LOCK_REPLAY	1

/* compress: the choices' order in config_keys.c */
#define CONF_COMPRESS_NONE	0
#define CONF_COMPRESS_DEFLATE	1

/* what workload-capabilities may give (migrd keeps them: caps.c) */
#define CONF_WORKLOAD_CAPS	"cap_net_admin cap_net_raw cap_net_bind_service"

void	config_defaults(struct migrd_conf *c);
/* Return the number of errors (each logged as "file:line: reason"). */
int	config_parse_file(const char *path, struct migrd_conf *c);
int	config_parse_fp(FILE *fp, const char *name, struct migrd_conf *c);
const struct peer_conf *config_find_peer(const struct migrd_conf *c,
	    const char *name);
/* Every keyword with its value, as a file config_parse_fp() reads back. */
void	config_print(FILE *fp, const struct migrd_conf *c);

#endif
