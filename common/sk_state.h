/*
 * The state of one socket as the engine (sk_repair.h) saves it and
 * restores it, and as sk_json.h writes it on the wire.
 *
 * Versioned in the libsoccr manner: a producer fills data_size with
 * sizeof(struct sk_state) of its build and flags with what it filled;
 * a consumer refuses a data_size it does not know.  Bump
 * SK_STATE_VERSION (and the JSON "v") on any change of meaning.
 *
 * Buffer ownership: sndq and rcvq belong to the struct sk_state that
 * points at them; sk_state_free() frees both.  Nothing else frees them.
 */
#ifndef MIGR_SK_STATE_H
#define MIGR_SK_STATE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SK_STATE_VERSION	1

/* Protocols the engine moves. */
enum sk_proto {
	SK_PROTO_TCP = 1,
	SK_PROTO_UDP = 2,
};

/*
 * Socket states.  TCP values are the kernel's (include/net/tcp_states.h),
 * so TCP_INFO's tcpi_state maps one to one.  SK_ST_BOUND and
 * SK_ST_UNBOUND are CLOSE split by whether a local address is bound; a
 * UDP socket is SK_ST_ESTABLISHED when connected.
 */
enum sk_st {
	SK_ST_ESTABLISHED = 1,
	SK_ST_SYN_SENT = 2,
	SK_ST_SYN_RECV = 3,
	SK_ST_FIN_WAIT1 = 4,
	SK_ST_FIN_WAIT2 = 5,
	SK_ST_TIME_WAIT = 6,
	SK_ST_CLOSE = 7,
	SK_ST_CLOSE_WAIT = 8,
	SK_ST_LAST_ACK = 9,
	SK_ST_LISTEN = 10,
	SK_ST_CLOSING = 11,
	SK_ST_NEW_SYN_RECV = 12,
	SK_ST_BOUND = 100,	/* CLOSE with a bound local address */
};

/* flags: which optional parts the producer filled. */
#define SK_F_WINDOW	0x01	/* tcp.win is valid (TCP_REPAIR_WINDOW) */
#define SK_F_TSVAL	0x02	/* tcp.ts_val is valid (TCP_TIMESTAMP) */
#define SK_F_REMOTE	0x04	/* remote address is valid */
#define SK_F_PARENT	0x08	/* parent_id names the listener */

/* Socket options a workload sets; all are read, all are restored. */
struct sk_opts {
	int		 reuseaddr;	/* SO_REUSEADDR 0/1 */
	int		 reuseport;	/* SO_REUSEPORT 0/1 */
	int		 keepalive;	/* SO_KEEPALIVE 0/1 */
	int		 priority;	/* SO_PRIORITY 0..6 (7+ needs admin) */
	uint32_t	 mark;		/* SO_MARK */
	int		 rcvbuf;	/* user value (kernel value / 2), 0 = auto */
	int		 sndbuf;	/* user value (kernel value / 2), 0 = auto */
	int		 linger_on;	/* SO_LINGER l_onoff 0/1 */
	int		 linger_secs;	/* SO_LINGER l_linger */
	int		 v6only;	/* IPV6_V6ONLY 0/1 (inet6 only) */
	/* TCP only */
	int		 nodelay;	/* TCP_NODELAY 0/1 */
	int		 cork;		/* TCP_CORK 0/1 */
	int		 keepidle;	/* TCP_KEEPIDLE seconds */
	int		 keepintvl;	/* TCP_KEEPINTVL seconds */
	int		 keepcnt;	/* TCP_KEEPCNT */
	uint32_t	 user_timeout;	/* TCP_USER_TIMEOUT ms */
	uint32_t	 notsent_lowat;	/* TCP_NOTSENT_LOWAT bytes */
	char		 congestion[16];/* TCP_CONGESTION, NUL-terminated */
};

/* TCP_REPAIR_WINDOW, field for field (struct tcp_repair_window). */
struct sk_tcp_window {
	uint32_t	 snd_wl1;
	uint32_t	 snd_wnd;
	uint32_t	 max_window;
	uint32_t	 rcv_wnd;
	uint32_t	 rcv_wup;
};

struct sk_tcp {
	/*
	 * Sequence numbers of the first byte of each queue.  A FIN is not
	 * a queue byte: in a state where we sent a FIN it follows
	 * snd_seq + sndq_len, in one where we received a FIN it follows
	 * rcv_seq + rcvq_len.
	 */
	uint32_t	 snd_seq;
	uint32_t	 rcv_seq;
	uint32_t	 sndq_len;	/* bytes in sndq (sent-not-acked + unsent) */
	uint32_t	 sndq_unsent;	/* trailing bytes of sndq never sent */
	uint32_t	 rcvq_len;	/* bytes in rcvq */
	uint8_t		*sndq;		/* owned, NULL when sndq_len == 0 */
	uint8_t		*rcvq;		/* owned, NULL when rcvq_len == 0 */
	uint32_t	 mss;		/* MSS clamp (TCP_MAXSEG in repair) */
	uint8_t		 snd_wscale;	/* peer's scale, 0..14 */
	uint8_t		 rcv_wscale;	/* our scale, 0..14 */
	bool		 wscale;	/* window scaling negotiated */
	bool		 sack;		/* SACK permitted negotiated */
	bool		 tstamp;	/* timestamps negotiated */
	uint32_t	 ts_val;	/* TCP_TIMESTAMP at dump (SK_F_TSVAL) */
	struct sk_tcp_window win;	/* SK_F_WINDOW */
	uint32_t	 backlog;	/* LISTEN: listen() backlog */
};

struct sk_udp {
	uint32_t	 rcvq_dropped;	/* bytes of the first unread datagram
					 * (SIOCINQ) not carried; 0 = none */
};

struct sk_state {
	uint32_t	 data_size;	/* sizeof(struct sk_state) of producer */
	uint32_t	 flags;		/* SK_F_* */
	uint64_t	 id;		/* record id, unique per migration */
	uint64_t	 parent_id;	/* listener's id (SK_F_PARENT) */
	enum sk_proto	 proto;
	int		 family;	/* AF_INET or AF_INET6 */
	enum sk_st	 state;
	struct sockaddr_storage local;	/* family-specific, port included */
	struct sockaddr_storage remote;	/* SK_F_REMOTE */
	struct sk_opts	 opts;
	struct sk_tcp	 tcp;		/* proto TCP */
	struct sk_udp	 udp;		/* proto UDP */
};

struct sk_state	*sk_state_new(void);
void		 sk_state_free(struct sk_state *);

/* "ESTABLISHED", ... ; NULL for a value outside the enum. */
const char	*sk_st_name(enum sk_st);
/* -1 when the name is unknown. */
int		 sk_st_from_name(const char *);
const char	*sk_proto_name(enum sk_proto);

/* States with a FIN sent by us / received from the peer. */
bool		 sk_st_fin_sent(enum sk_st);
bool		 sk_st_fin_rcvd(enum sk_st);
/* TCP states the engine can move (connection states plus LISTEN/BOUND/CLOSE). */
bool		 sk_st_tcp_movable(enum sk_st);

/* Port of a sockaddr_in/in6 in host order, 0 for other families. */
uint16_t	 sk_addr_port(const struct sockaddr_storage *);

#endif
