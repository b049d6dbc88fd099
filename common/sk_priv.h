/*
 * Internals shared by the sk_*.c files of the socket state engine.
 * Not for users of the engine: they include sk_repair.h.
 */
#ifndef MIGR_SK_PRIV_H
#define MIGR_SK_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "sk_state.h"

struct sk_handle {
	int		 fd;
	int		 family;
	enum sk_proto	 proto;
	enum sk_st	 state;
	bool		 repair;	/* TCP_REPAIR is on */
	bool		 restored;	/* made by sk_restore() */
	int		 reuseaddr;	/* SO_REUSEADDR before pause (rollback) */
	uint8_t		*unsent;	/* owned: bytes to send after resume */
	uint32_t	 unsent_len;
};

void	sk_log(int prio, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* sk_log(LOG_WARNING) with ": strerror(errno)" appended. */
void	sk_log_errno(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

int	sk_getint(int fd, int level, int opt, int *val);
int	sk_setint(int fd, int level, int opt, int val);

/* Read and apply the workload's options (sk_opts.c). */
int	sk_opts_read(int fd, int family, enum sk_proto, struct sk_opts *);
int	sk_opts_apply(int fd, int family, enum sk_proto,
	    const struct sk_opts *);

/* Per-protocol halves (sk_tcp_dump.c, sk_tcp_restore.c, sk_udp.c). */
int	sk_tcp_save(struct sk_handle *, struct sk_state *);
int	sk_tcp_restore(struct sk_handle *, const struct sk_state *);
int	sk_udp_save(struct sk_handle *, struct sk_state *);
int	sk_udp_restore(struct sk_handle *, const struct sk_state *);

/* Replay a FIN|ACK (fin) or an ACK from the peer (sk_fin.c). */
int	sk_peer_inject(const struct sk_state *, uint32_t seq, uint32_t ack,
	    uint16_t win, int fin);

#ifndef TCP_REPAIR_OFF_NO_WP
#define TCP_REPAIR_OFF_NO_WP	-1	/* leave repair, no window probe */
#endif
int	sk_tcp_repair(int fd, int mode);

#endif
