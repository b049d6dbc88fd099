/* SPDX-License-Identifier: ISC */
/*
 * The replaying lock's packets: what reaches a locked namespace is kept,
 * not dropped, and later handed to the sockets it was meant for.
 *
 * While the lock is in place its input chain sends every packet that is
 * not from the loopback to NFQUEUE queue REPLAY_QUEUE_NUM, without
 * "bypass": with no reader bound the kernel drops them (fail closed).
 * replay_open() binds the reader inside the namespace before the lock
 * goes in; replay_read() copies what arrived into a bounded list and
 * gives every packet the verdict drop, so nothing waits in the kernel.
 *
 * A replay_out hands kept packets back to a namespace: each is sent as
 * an Ethernet frame, to the namespace's own MAC, down the host's end of
 * the namespace's veth, so it arrives on the namespace's eth0 as if from
 * the LAN, after the sockets left repair and the lock is gone.
 *
 * replay_check() is what a destination asks of a packet its peer sent:
 * a whole IPv4 or IPv6 packet, to one of the namespace's addresses.
 */
#ifndef MIGR_REPLAY_H
#define MIGR_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netpacket/packet.h>

#include "sk_json.h"		/* struct sk_ifaddr */

#define REPLAY_QUEUE_NUM	7780
/* the largest packet kept: the IP maximum */
#define REPLAY_PKT_MAX		65535

struct replay_pkt {
	struct replay_pkt	*next;
	size_t			 len;
	uint32_t		 count;		/* packets kept in it: 1, more
						   once merged */
	uint8_t			 data[];
};

struct replay_list {
	struct replay_pkt	*head, **tail;
	size_t			 npkts, bytes;		/* kept now */
	size_t			 kept;		/* kept since the start */
	size_t			 max_pkts, max_bytes;	/* bounds */
	size_t			 overflow;	/* packets not kept (bounds,
						   or the socket overflowed) */
	size_t			 injected, inject_failed;	/* packets
						   kept, merged ones counted */
	size_t			 merged;	/* packets merged into the
						   one before them */
};

void	replay_list_init(struct replay_list *, size_t max_pkts,
	    size_t max_bytes);
/* Keep a copy: 0, or -1 when a bound is reached (counted as overflow). */
int	replay_list_add(struct replay_list *, const void *pkt, size_t len);
/* Take the first n packets off (to send them on); they are freed by
 * the caller with replay_pkt_free_chain(). */
struct replay_pkt *replay_list_take(struct replay_list *, size_t max_bytes);
void	replay_pkt_free_chain(struct replay_pkt *);
/* The packets freed; the counters stay. */
void	replay_list_free(struct replay_list *);

/* The queue's reader, made inside ns; its fd (non-blocking), or -1. */
int	replay_open(const char *ns, size_t max_pkts, char *err, size_t errlen);
/*
 * Read what is there into the list, REPLAY_READ_BATCH reads at most (a
 * read may carry several packets): the number of packets read, or -1
 * and err.  The bound keeps the caller's loop turning while packets
 * come faster than it reads them (a thousand busy peers, in a slow
 * guest): unbounded, the read would last as long as they keep coming,
 * and the peer channel dies of the silence.  What is left is read on
 * the next call (the fd stays readable).
 */
#define REPLAY_READ_BATCH	256
int	replay_read(int fd, struct replay_list *, char *err, size_t errlen);

/*
 * 0 if pkt is a whole IPv4 or IPv6 packet (its header's length is len)
 * addressed to one of addrs (a namespace's, as nsdump has them; NULL: to
 * any address); -1 and why.
 */
int	replay_check(const void *pkt, size_t len,
	    const struct sk_ifaddr *addrs, size_t naddrs, char *why,
	    size_t whylen);

/* The IPv4 header checksum and the TCP or UDP checksum (directly after
 * the IP header) computed again from the bytes of pkt (replay_check()
 * passed): a packet kept as it arrived may hold one a NIC was left to
 * finish, and nothing checks a packet sent down a veth. */
void	replay_checksums(uint8_t *pkt, size_t len);

/*
 * Kept packets back into a namespace, through one packet socket made
 * once and closed once.  Closing a packet socket waits for an RCU grace
 * period (packet_release() calls synchronize_net()): 12 to 17 ms
 * measured, which every slice paid when each made its own.
 */
struct replay_out {
	int			 fd;		/* AF_PACKET, or -1 */
	struct sockaddr_ll	 sl;		/* hostif, ns's MAC */
	char			 ns[64];	/* for messages */
};
/* Through hostif (the host's end of ns's veth), to the MAC of ns's
 * eth0: 0, or -1 and err (close it all the same). */
int	replay_out_open(struct replay_out *, const char *ns,
	    const char *hostif, char *err, size_t errlen);
/*
 * Send the first max_pkts packets of the list ((size_t)-1: all; 0: one)
 * and take them off it: the number of kept packets sent, each merged
 * one counted (failures are counted in the list, the first is said in
 * err).  Each packet goes through the
 * namespace's stack within the call: tens of thousands take seconds in
 * a slow guest, so a caller in an event loop sends a few at a time.
 */
size_t	replay_out_send(struct replay_out *, struct replay_list *,
	    size_t max_pkts, char *err, size_t errlen);
void	replay_out_close(struct replay_out *);
/* the packets freed and counted as failed injections */
void	replay_list_drop(struct replay_list *);
/* from's packets appended to to's, from left empty; the counters of
 * both stay as they were */
void	replay_list_move(struct replay_list *to, struct replay_list *from);
/*
 * Data segments of one TCP connection that continue one another merged
 * into one, in place, before they are sent (replay_merge.c says which):
 * the same bytes in the same order, in fewer packets, none longer than
 * max_len (the namespace's MTU).  Returns how many were merged into the
 * one before them; out of memory, none (the replay is then slower, not
 * wrong).
 */
size_t	replay_list_merge(struct replay_list *, size_t max_len);
/* what a caller in an event loop sends at a time: a few milliseconds of
 * a slow guest */
#define REPLAY_INJECT_BATCH	64

#endif
