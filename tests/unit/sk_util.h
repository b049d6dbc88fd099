/* SPDX-License-Identifier: ISC */
/*
 * Helpers of the engine's unit tests (test_sk_*.c): a sequence-keyed
 * byte pattern per stream, loopback sockets, and the move of one socket
 * through its JSON record, as on the wire.
 */
#ifndef MIGR_TEST_SK_UTIL_H
#define MIGR_TEST_SK_UTIL_H

#include <stdint.h>
#include <sys/socket.h>

#include "sk_engine.h"

uint8_t	pat(int stream, uint32_t i);
void	fill(uint8_t *b, int stream, uint32_t off, size_t n);
void	lo_addr(int family, struct sockaddr_storage *ss, socklen_t *len,
	    uint16_t port);
int	listener(int family, uint16_t port);
/* rcvbuf: SO_RCVBUF before connect, 0 to leave it */
int	connect_to(int family, uint16_t port, int rcvbuf);
/* Write up to n bytes of stream without blocking; the bytes written. */
uint32_t write_nb(int fd, int stream, uint32_t off, uint32_t n);
/* Read exactly n bytes of stream (5 s limit), checking each byte. */
void	read_exact(int fd, int stream, uint32_t off, uint32_t n);
void	expect_eof(int fd);
/* st through its JSON text, as on the wire, into rec (the caller's to
 * sk_record_clear()); a refusal fails the test. */
struct sk_record;
void	wire_trip(const struct sk_state *st, struct sk_record *rec);
/* Dump fd through its JSON text (as on the wire), release it, restore
 * it; the saved state in *saved unless NULL. */
struct sk_handle *move(int fd, struct sk_state **saved);
/* The value of option name in st, or dflt when it was not carried. */
int64_t	st_opt(const struct sk_state *, const char *name, int64_t dflt);
/*
 * Drop every TCP segment to or from port, as migrd's lock does, while a
 * socket is moved on one host: between the release of the old socket
 * and the restore of the new one a segment from the peer would find no
 * socket and draw a RST.  With to_port 0 only what the moved socket sends
 * is held: what the engine injects towards it (a replayed FIN) must get
 * through, as through migrd's lock, which passes lo.  hold_port()
 * returns 0, or -1 without nft.
 */
int	hold_port(uint16_t port, int to_port);
void	release_port(void);
/* Pump: read what arrives on fd (up to n bytes) within ms; the count. */
uint32_t drain_some(int fd, int stream, uint32_t off, uint32_t n, int ms);

#endif
