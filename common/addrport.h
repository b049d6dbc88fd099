/* SPDX-License-Identifier: ISC */
/*
 * "ADDR:PORT" text and socket addresses, for the programs that take
 * listen and connect addresses on their command line (migr-inetd, the
 * test workload).
 */
#ifndef MIGR_ADDRPORT_H
#define MIGR_ADDRPORT_H

#include <stddef.h>
#include <sys/socket.h>

/* Parse "A.B.C.D:PORT" or "[V6]:PORT" into ss; 0, or -1 (logged). */
int	addr_parse(const char *, struct sockaddr_storage *, socklen_t *);

/*
 * ss's address into ip (IPv4-mapped IPv6 as IPv4, "?" for another
 * family); returns the port, or -1.
 */
int	sa_format(const struct sockaddr_storage *, char *, size_t);

/* The local port fd is bound to, or -1. */
int	local_port(int);

#endif
