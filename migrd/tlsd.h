/* SPDX-License-Identifier: ISC */
/*
 * The peer channel's TLS process ("migrd: tls"), after bgpd's session
 * engine.  Everything a stranger on the peer port can make migrd parse
 * before authentication (the TLS handshake, certificates) and every
 * record a peer's TLS layer sends runs in a child that holds no
 * privilege: a uid of its own (channel-user), no capability, no way to
 * gain one (no_new_privs), chrooted to an empty directory, not
 * dumpable, and, where built with libseccomp, a system call filter.
 *
 * migrd keeps the TCP work that needs no parsing: it accepts (and
 * refuses strangers before any TLS), and dials.  It hands each TCP
 * socket to the child (TLSD_NEW), which does the handshake, checks the
 * certificate, and answers TLSD_UP with the other end of a socketpair
 * that carries the session's plaintext, or TLSD_FAIL with the reason.
 * From then on the child parses what the peer sends (chan_rx.h) and
 * gives migrd each frame as a tree (tree.h), so that migrd parses no
 * byte of a peer's; what migrd sends, the child relays as it comes
 * (migrd's own frames need no parse).  Closing the socketpair closes
 * the connection (the child flushes, then half-closes and drains, so a
 * last result is not lost to a RST).
 *
 * Messages are fixed-size structs on a SOCK_SEQPACKET socketpair; a
 * descriptor travels with TLSD_NEW and TLSD_UP.  migrd validates what
 * the child says as it validates a peer: the child is the part an
 * attacker would own first.
 */
#ifndef MIGRD_TLSD_H
#define MIGRD_TLSD_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

enum tlsd_type {
	TLSD_INIT = 1,	/* migrd -> child: struct tlsd_init */
	TLSD_READY,	/* child -> migrd: set up and unprivileged */
	TLSD_NEW,	/* migrd -> child: a TCP socket (fd), handshake it */
	TLSD_DROP,	/* migrd -> child: forget session id */
	TLSD_UP,	/* child -> migrd: session id's plaintext (fd) */
	TLSD_FAIL,	/* child -> migrd: session id (0: setup) failed */
};

struct tlsd_init {
	uint32_t	type;
	uint32_t	npeers;
	int32_t		verbose;
	int32_t		to_stderr;
	int32_t		deflate;	/* this host announces deflate */
	uint32_t	max_message;
	uid_t		uid;
	gid_t		gid;
	char		cert[PATH_MAX];
	char		key[PATH_MAX];
	char		ca[PATH_MAX];
	char		root[PATH_MAX];		/* empty directory */
	char		names[CONF_PEERS_MAX][CONF_NAME_MAX];
};

struct tlsd_msg {
	uint32_t	type;
	uint32_t	id;
	uint32_t	outbound;	/* NEW: 1 if migrd dialed */
	uint32_t	peer;		/* NEW, outbound: index of its name */
	uint64_t	names;		/* UP: bit i, the certificate names
					   peer i (X509_check_host) */
	char		version[16];	/* UP: "TLSv1.3" */
	char		cipher[64];
	char		cert[160];	/* UP: subject and issuer CN */
	char		why[200];	/* FAIL */
};

/* The child's main: argv "migrd --tls-relay FD" execs into this. */
#define TLSD_ARG	"--tls-relay"
__attribute__((noreturn)) void tlsd_main(int fd);

/* migrd's side (tlsd_link.c) */
struct event_base;
struct tlsd_hooks {
	void	(*up)(const struct tlsd_msg *m, int fd);
	void	(*fail)(uint32_t id, const char *why);
	void	(*lost)(void);		/* the child exited: all ids gone */
};
int	 tlsd_start(struct event_base *base, const struct tlsd_hooks *h);
int	 tlsd_ready(void);
int	 tlsd_new(uint32_t id, int fd, int outbound, unsigned peer);
void	 tlsd_drop(uint32_t id);
/* SIGCHLD: 1 if pid was the TLS process (it is restarted). */
int	 tlsd_child_exited(pid_t pid, int status);
pid_t	 tlsd_pid(void);
void	 tlsd_stop(void);

#endif
