/* SPDX-License-Identifier: ISC */
/*
 * The peer channel: one TLS session per configured peer.  The host whose
 * name sorts first dials, the other accepts, so a pair has one session.
 * hello (version, names, capabilities) must come first; heartbeats
 * detect a dead peer; the dialer reconnects with exponential backoff.
 */
#ifndef MIGRD_PEER_H
#define MIGRD_PEER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

int	 peer_init(void);		/* listener + dialers */
void	 peer_shutdown(void);
json_t	*peer_list_json(void);
int	 peer_is_up(const char *name);
/* Queue one message to a peer whose session is up (payload stolen). */
int	 peer_send(const char *name, int type, json_t *payload);
/* The same with a binary tail (frame.h), to a peer that announced
 * "raw-images" in its hello (peer_raw_images()), or for MSG_MIG_CHUNK
 * "raw-chunks" (peer_raw_chunks()); -1 to any other. */
int	 peer_send_tail(const char *name, int type, json_t *payload,
	    const void *tail, size_t taillen);
int	 peer_raw_images(const char *name);
int	 peer_raw_chunks(const char *name);
/* The peer announced "gate": it starts a gated workload before going
 * live (launch.h); to any other it is sent as an ordinary one. */
int	 peer_takes_gate(const char *name);
/* Both hosts restore what a connection knew of its path (TCP_REPAIR_PATH
 * of migr's kernel series), and repair-path is on here. */
int	 peer_repair_path(const char *name);
size_t	 peer_output_len(const char *name);	/* bytes not yet sent */
/* JSON bytes queued to the peer since its session came up (before
 * compression; peer_output_len() counts after it) */
uint64_t peer_tx_json(const char *name);
void	 peer_drop(const char *name, const char *why);	/* fault tests */

struct migrd_conf;
/* A hello checked against c: an enum migr_result, and why if not OK
 * (no session needed: tests/fuzz/fuzz_peer.c calls it). */
int	 peer_hello_check(json_t *hello, const struct migrd_conf *c,
	    const char **host, const char **to, char *why, size_t len);

#endif
