/* SPDX-License-Identifier: ISC */
/*
 * The socket state engine, libmigr-engine: its one public header.
 *
 * It depends on nothing but the C library and the kernel's repair API:
 * no JSON, no event loop, no logging of the daemon's (a caller injects
 * its own sink with sk_set_log()).  The records that carry a struct
 * sk_state over the network live beside it, in common/records.
 *
 * What it carries, and what it refuses, is decided here and documented
 * in docs/protocol.md: every byte of every queue, both directions, in
 * every TCP state a socket can be in while a program holds it (SYN_SENT
 * to the half-closed states, listeners, a connection that ended while
 * its owner still holds it), UDP sockets with every unread datagram, and
 * each socket option of the table in sk_optab.c.  What cannot be carried
 * exactly is refused by sk_check() with its name, before anything moves.
 */
#ifndef MIGR_SK_ENGINE_H
#define MIGR_SK_ENGINE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * struct sk_state: one socket as the engine saves it and restores it,
 * and as the records (common/records/sk_json.h) write it on the wire.
 *
 * Versioned in the libsoccr manner: a producer fills data_size with
 * sizeof(struct sk_state) of its build and flags with what it filled;
 * a consumer refuses a data_size it does not know.  Bump
 * SK_STATE_VERSION (and the JSON "v") on any change of meaning.
 *
 * Buffer ownership: the queues, the datagrams and the option values
 * belong to the struct sk_state that points at them; sk_state_free()
 * frees them all.  Nothing else frees them.
 */
#define SK_STATE_VERSION	2

/* Protocols the engine moves. */
enum sk_proto {
	SK_PROTO_TCP = 1,
	SK_PROTO_UDP = 2,
};

/*
 * Socket states.  TCP values are the kernel's (include/net/tcp_states.h),
 * so TCP_INFO's tcpi_state maps one to one.  The kernel's CLOSE is split
 * three ways: SK_ST_CLOSE (never bound), SK_ST_BOUND (bound, never
 * connected) and SK_ST_ENDED (a connection that ended, by the peer's
 * FIN or by a reset, while its owner still holds it, maybe with bytes
 * still to read).  A UDP socket is SK_ST_ESTABLISHED when connected.
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
	SK_ST_ENDED = 101,	/* CLOSE after a connection (tcp.end) */
};

/* How an SK_ST_ENDED connection ended, as its owner will learn it. */
enum sk_end {
	SK_END_NONE = 0,
	SK_END_FIN = 1,		/* read: the bytes left, then end of file */
	SK_END_RESET = 2,	/* read: the bytes left, then ECONNRESET */
};

/* flags: which optional parts the producer filled. */
#define SK_F_WINDOW	0x01	/* tcp.win is valid (TCP_REPAIR_WINDOW) */
#define SK_F_TSVAL	0x02	/* tcp.ts_val is valid (TCP_TIMESTAMP) */
#define SK_F_REMOTE	0x04	/* remote address is valid */
#define SK_F_PARENT	0x08	/* parent_id names the listener */
#define SK_F_NONBLOCK	0x10	/* the owner's file has O_NONBLOCK */
#define SK_F_PATH	0x20	/* tcp.path is valid (TCP_REPAIR_PATH) */

/*
 * One socket option with a value other than the kernel's default.  id
 * indexes the engine's option table (sk_opt_name(), sk_opt_find());
 * the value is ival for numbers, flags and timeouts (microseconds), or
 * len bytes of data for strings and binary values.
 */
struct sk_opt {
	uint16_t	 id;
	int64_t		 ival;
	uint32_t	 len;
	uint8_t		*data;		/* owned; NULL when len == 0 */
};
#define SK_OPTS_MAX	64

/* Value kinds of the option table. */
enum sk_opt_kind {
	SK_OK_INT,		/* int: ival within [min, max] */
	SK_OK_BOOL,		/* int 0/1 */
	SK_OK_TIMEVAL,		/* struct timeval: ival microseconds */
	SK_OK_LINGER,		/* struct linger: ival -1 off, else seconds */
	SK_OK_STRING,		/* NUL-free text, len < max */
	SK_OK_BYTES,		/* binary, len <= max */
};

/* Send and receive buffer sizes, as the kernel keeps them. */
struct sk_bufs {
	uint32_t	 snd;		/* SO_SNDBUF as read (bytes) */
	uint32_t	 rcv;		/* SO_RCVBUF as read (bytes) */
	uint8_t		 lock;		/* SO_BUF_LOCK: 1 send, 2 receive */
};

/* TCP_REPAIR_WINDOW, field for field (struct tcp_repair_window). */
struct sk_tcp_window {
	uint32_t	 snd_wl1;
	uint32_t	 snd_wnd;
	uint32_t	 max_window;
	uint32_t	 rcv_wnd;
	uint32_t	 rcv_wup;
};

/*
 * What a connection learnt about its path: TCP_REPAIR_PATH of migr's
 * kernel series (kernel/patches/0002-0004), field for field.  A kernel
 * without it has none: the restored socket then starts with no RTT
 * sample (an RTO of 3 s) and in slow start.
 */
struct sk_tcp_path {
	uint32_t	 srtt_us;	/* smoothed RTT; 0: no sample */
	uint32_t	 mdev_us;	/* its mean deviation */
	uint32_t	 rttvar_us;	/* RTO = srtt + rttvar */
	uint32_t	 cwnd;		/* congestion window, segments */
	uint32_t	 ssthresh;	/* slow start threshold, segments */
	uint32_t	 mss;		/* MSS in use */
	uint32_t	 ts_recent;	/* the peer's last TSval (PAWS) */
	uint32_t	 ts_age;	/* seconds since it came */
	uint32_t	 ecn;		/* ECN state: 1 ok, 2 CWR due, 4 ECE
					   due, 8 CE seen */
};

struct sk_tcp {
	/*
	 * Sequence numbers of the first byte of each queue.  A FIN is not
	 * a queue byte: in a state where we sent a FIN it follows
	 * snd_seq + sndq_len, in one where we received a FIN it follows
	 * rcv_seq + rcvq_len.  In SYN_SENT snd_seq is the initial
	 * sequence number the SYN carries.
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
	struct sk_tcp_path path;	/* SK_F_PATH */
	uint32_t	 window_clamp;	/* TCP_WINDOW_CLAMP of a connection */
	uint32_t	 backlog;	/* LISTEN: listen() backlog */
	enum sk_end	 end;		/* SK_ST_ENDED */
};

/* One unread datagram, with where it came from and went to. */
struct sk_dgram {
	struct sockaddr_storage from;
	struct sockaddr_storage to;	/* its destination address */
	uint32_t	 len;
	uint8_t		*data;		/* owned, NULL when len == 0 */
};
#define SK_DGRAMS_MAX	65536

struct sk_udp {
	uint32_t	 ndgrams;
	struct sk_dgram	*dgrams;	/* owned, oldest first */
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
	struct sk_bufs	 bufs;
	uint32_t	 nopts;
	struct sk_opt	 opts[SK_OPTS_MAX];	/* non-default values */
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
const char	*sk_end_name(enum sk_end);
int		 sk_end_from_name(const char *);

/* States with a FIN sent by us / received from the peer. */
bool		 sk_st_fin_sent(enum sk_st);
bool		 sk_st_fin_rcvd(enum sk_st);
/* TCP states the engine can move. */
bool		 sk_st_tcp_movable(enum sk_st);
/* TCP states of a synchronised connection, with queues and options. */
bool		 sk_st_tcp_conn(enum sk_st);

/* Port of a sockaddr_in/in6 in host order, 0 for other families. */
uint16_t	 sk_addr_port(const struct sockaddr_storage *);

/*
 * The option table (sk_optab.c): each option the engine reads, carries
 * or refuses.  sk_opt_find() gives the id of a name, or -1;
 * sk_opt_check() says whether a value is one the table allows for a
 * socket of proto and family in state st: 0, or -1 with why.
 */
const char	*sk_opt_name(unsigned id);
int		 sk_opt_find(const char *name);
enum sk_opt_kind sk_opt_kind(unsigned id);
int		 sk_opt_check(const struct sk_opt *, enum sk_proto, int family,
		    enum sk_st, char *why, size_t whylen);
unsigned	 sk_opt_count(void);

/* ------------------------------------------------------------------ */

/*
 * The engine, shaped after CRIU's libsoccr: a prefixed API, an opaque
 * handle, an explicit lifecycle.
 *
 * Lifecycle, source side (the namespace is frozen and locked):
 *
 *	if (sk_check(fd, why, sizeof(why)) < 0)	   no side effect
 *		refuse the migration with why;
 *	h = sk_pause(fd);			   TCP: repair on
 *	sk_save(h, &st);			   read state, queues,
 *						   options, datagrams
 *	    (LISTEN: sk_accept_pending(h, ...) hands back the connections
 *	     waiting in the accept queue; pause/save each one and set its
 *	     parent_id to the listener's id)
 *	send st;
 *	commit ?  sk_release(h)			   close, still in repair:
 *						   no FIN, no RST
 *	       :  sk_rollback(h)		   repair off without a window
 *						   probe; the socket goes on
 *	    (an accepted connection cannot go back into its listener's
 *	     queue: sk_reset(h) resets it, so its client learns at once)
 *
 * Lifecycle, destination side (the new namespace is locked):
 *
 *	h = sk_restore(st);	new socket, options, buffers forced large
 *				enough, repair on, queue sequence numbers,
 *				MSS, bind, connect (no SYN), negotiated
 *				options, timestamp, queues, FINs replayed
 *				and checked, window, buffers as they were;
 *				still in repair.  UDP: bound, connected,
 *				every datagram queued again from its sender.
 *	    (restore every socket, both ends of in-namespace pairs, before
 *	     resuming any of them)
 *	unlock the namespace, announce the addresses;
 *	sk_resume(h, 0);	repair off with a window probe; the never-sent
 *				bytes are queued (never waiting for the peer)
 *	fd = sk_detach(h);	hand the fd to the workload
 *	or sk_abort(h);		close silently (repair on) on failure
 *
 * Buffers: sk_save() allocates a struct sk_state the caller owns and
 * frees with sk_state_free().  sk_restore() copies what it needs from
 * the state it is given; the caller keeps ownership of it.
 *
 * Every function returns 0 (or a handle) on success, -1 (or NULL) with
 * a log line on failure.
 */
struct sk_handle;

/*
 * Log sink: prio is a syslog priority.  Without one (or after
 * sk_set_log(NULL, NULL)) warnings go to stderr and the rest nowhere.
 */
typedef void (*sk_log_fn)(int prio, const char *msg, void *arg);
void		 sk_set_log(sk_log_fn fn, void *arg);

/*
 * 0 when the socket behind fd can be moved exactly; -1 and every reason
 * it cannot in why ("tcp: TCP_MD5SIG keys cannot be moved; urgent data
 * pending") otherwise.  Reads only, on a socket its owner may still be
 * using.  sk_pause() checks again, and sk_save() checks what can only be
 * seen once the owner is frozen (an urgent mark past the read position).
 */
int		 sk_check(int fd, char *why, size_t whylen);

/*
 * Source side.  fd stays the caller's until sk_release().
 * sk_accept_pending() accepts every connection waiting in a listener's
 * accept queue into fds (they are the caller's), or accepts none and
 * fails when more than max wait.
 */
struct sk_handle *sk_pause(int fd);
int		 sk_save(struct sk_handle *, struct sk_state **out);
int		 sk_accept_pending(struct sk_handle *listener, int *fds,
		    size_t max, size_t *nfds);
/* The peer of a SYN_SENT socket, which getpeername() does not tell (the
 * caller finds it with sock_diag); before sk_save(). */
int		 sk_set_remote(struct sk_handle *,
		    const struct sockaddr_storage *);
int		 sk_release(struct sk_handle *);
int		 sk_rollback(struct sk_handle *);
int		 sk_reset(struct sk_handle *);

/* Destination side. */
#define SK_RESUME_NO_PROBE	0x01	/* leave repair without window probe */
struct sk_handle *sk_restore(const struct sk_state *);
int		 sk_resume(struct sk_handle *, int flags);
int		 sk_detach(struct sk_handle *);
void		 sk_abort(struct sk_handle *);

int		 sk_handle_fd(const struct sk_handle *);

/*
 * TCP_REPAIR_PATH (sk_path.c): does this kernel have it (probed once,
 * needs CAP_NET_ADMIN)?  sk_path_counts() says how many restores set a
 * record's path, and how many could not (the kernel lacks the option or
 * refused the values: the connection moves all the same, only without
 * what it knew of its path).
 */
bool		 sk_path_supported(void);
void		 sk_path_counts(uint64_t *set, uint64_t *failed);

#endif
