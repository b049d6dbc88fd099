/* SPDX-License-Identifier: ISC */
/*
 * Internals shared by the sk_*.c files of the socket state engine.
 * Not for users of the engine: they include sk_engine.h.
 */
#ifndef MIGR_SK_PRIV_H
#define MIGR_SK_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "sk_engine.h"

struct sk_handle {
	int		 fd;
	int		 family;
	enum sk_proto	 proto;
	enum sk_st	 state;
	bool		 repair;	/* TCP_REPAIR is on */
	bool		 restored;	/* made by sk_restore() */
	int		 reuseaddr;	/* the owner's SO_REUSEADDR */
	struct sk_state	*st;		/* source: what sk_pause() read */
	struct sockaddr_storage remote;	/* source: sk_set_remote() */
	/* destination: what sk_resume() still has to do */
	uint8_t		*unsent;	/* owned: bytes never sent */
	uint32_t	 unsent_len;
	struct sk_bufs	 bufs;		/* the sizes to end with */
	struct sk_state	*late;		/* owned: the late options */
};

/* TCP_INFO, the fields the engine uses (sk_tinfo.c). */
struct sk_tinfo {
	uint8_t		 state, options, snd_wscale, rcv_wscale;
	uint32_t	 unacked, sacked, snd_mss;
	uint32_t	 segs_in, segs_out;
};
int	sk_tinfo(int fd, struct sk_tinfo *);

void	sk_log(int prio, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* sk_log(LOG_WARNING) with ": strerror(errno)" appended. */
void	sk_log_errno(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

int	sk_getint(int fd, int level, int opt, int *val);
int	sk_setint(int fd, int level, int opt, int val);

/* sk_optab.c: read (0, 1 with refusals in why, -1) and apply. */
int	sk_opts_read(int fd, int family, enum sk_proto, enum sk_st,
	    struct sk_state *st, char *why, size_t whylen);
int	sk_opts_apply(int fd, const struct sk_state *, int late);
int64_t	sk_opts_value(const struct sk_state *, const char *name,
	    int64_t dflt);
struct sk_state *sk_opts_copy(const struct sk_state *);

/* sk_bufs.c */
int	sk_bufs_read(int fd, struct sk_bufs *);
uint32_t sk_bufs_room(uint64_t len);
int	sk_bufs_force(int fd, uint32_t snd, uint32_t rcv);
int	sk_bufs_set(int fd, const struct sk_bufs *);

/* Per-protocol halves (sk_tcp_dump.c, sk_tcp_restore.c, sk_udp.c). */
int	sk_tcp_check(int fd, enum sk_st, char *why, size_t whylen);
int	sk_tcp_save(struct sk_handle *, struct sk_state *);
int	sk_tcp_restore(struct sk_handle *, const struct sk_state *);
int	sk_udp_check(int fd, char *why, size_t whylen);
int	sk_udp_save(struct sk_handle *, struct sk_state *);
int	sk_udp_restore(struct sk_handle *, const struct sk_state *);

/* sk_path.c: TCP_REPAIR_PATH (1 saved, 0 none, -1; 0 set, 1 not) */
int	sk_path_save(int fd, struct sk_tcp_path *);
int	sk_path_restore(int fd, const struct sk_tcp_path *);

/* sk_inject.c: a segment from the peer, or a datagram from its sender */
#define SK_INJ_ACK	0x1
#define SK_INJ_FIN	0x2
#define SK_INJ_RST	0x4
int	sk_inject_tcp(const struct sk_state *, uint32_t seq, uint32_t ack,
	    uint16_t win, int flags);
int	sk_inject_udp(const struct sk_dgram *);

#ifndef TCP_REPAIR_OFF_NO_WP
#define TCP_REPAIR_OFF_NO_WP	-1	/* leave repair, no window probe */
#endif
int	sk_tcp_repair(int fd, int mode);
/*
 * For the engine's own tests only: a stall between our FIN and the
 * peer's in the ENDED replay (one try; cleared when used), and how many
 * ENDED restores needed another try.  Nothing else sets or reads them.
 */
extern unsigned sk_test_ended_stall_ms;
extern unsigned sk_stat_ended_retries;

/* why += "; text" (or "text" when empty) */
void	sk_why(char *why, size_t whylen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
