/* SPDX-License-Identifier: ISC */
/*
 * The TCP sockets of a namespace as sock_diag (inet_diag over netlink)
 * lists them: every one the kernel holds, with or without a file.  That
 * shows what collecting the tasks' fds cannot:
 *
 *  - orphans: connections a program closed while the kernel still owes
 *    the peer bytes (or a FIN) from them; they have no file (inode 0);
 *  - the peer of a socket in SYN_SENT, which getpeername() does not tell;
 *  - TCP_MD5SIG keys, which no getsockopt() reads.
 *
 * sockdiag_tcp() returns 0 and an array the caller frees, or -1 and the
 * reason in err.
 */
#ifndef MIGR_SOCKDIAG_H
#define MIGR_SOCKDIAG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct sockdiag_sock {
	uint8_t			 state;		/* TCP_* of the kernel */
	struct sockaddr_storage	 local, remote;
	uint32_t		 inode;		/* 0: no file */
	uint32_t		 rqueue;	/* bytes to read (LISTEN: backlog) */
	uint32_t		 wqueue;	/* bytes (and FIN) not acknowledged */
	bool			 md5;		/* TCP_MD5SIG keys set */
};

/* Every TCP socket of ns, sorted by inode (those without a file, inode
 * 0, first). */
int	sockdiag_tcp(const char *ns, struct sockdiag_sock **out, size_t *n,
	    char *err, size_t errlen);
/* The socket of inode ino in a list sockdiag_tcp() made, or NULL. */
const struct sockdiag_sock *sockdiag_find(const struct sockdiag_sock *,
	    size_t n, uint32_t ino);
/* An orphan that still owes its peer bytes or a FIN. */
bool	sockdiag_orphan_busy(const struct sockdiag_sock *);
/* A handshake under way: a request socket, which nothing can dump. */
bool	sockdiag_handshake(const struct sockdiag_sock *);
/* A listener with connections waiting to be accepted. */
bool	sockdiag_accept_waiting(const struct sockdiag_sock *);
/* "10.0.0.1:80 -> 10.0.0.9:4711 FIN_WAIT1, 65537 bytes not yet
 * acknowledged" (the bytes only when there are some) */
void	sockdiag_describe(const struct sockdiag_sock *, char *buf,
	    size_t len);

#endif
