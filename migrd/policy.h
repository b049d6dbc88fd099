/* SPDX-License-Identifier: ISC */
/*
 * What a peer may bring here.  A peer is authenticated by its
 * certificate, not trusted: a PREPARE asks this host to build a
 * namespace with the addresses and MACs it names and, once committed,
 * to start the program it names.  Each peer gets only what the "allow"
 * statements of migrd.conf grant it:
 *
 *   allow PEER program PATH...     a program, or every program under
 *                                  a directory (PATH ends in '/'; "/"
 *                                  is any program);
 *                                  compared after resolving symbolic
 *                                  links and "..", both sides
 *   allow PEER address PREFIX...   addresses within ADDR/PLEN
 *   allow PEER mac PREFIX...       MACs starting with these octets
 *                                  ("52:54:00"), 1 to 6 of them, or
 *                                  any MAC ("*": the kernel's random
 *                                  ones, when the namespace's were
 *                                  left to it)
 *   allow PEER namespace PATTERN...  names matching a shell pattern
 *   allow PEER sockets N           at most N sockets in one migration
 *                                  (default: as many as this host has
 *                                  file descriptors for)
 *   allow PEER migrations N        at most N of its migrations coming
 *                                  in at once (default and most: 8)
 *   allow PEER checkpoint MIB      its checkpointed programs, moved with
 *                                  their memory by CRIU (restoring one is
 *                                  running the peer's code as the
 *                                  workload user), with at most MIB
 *                                  MiB of images in one migration;
 *                                  never by default
 *
 * Nothing is granted by default: a peer with no "allow" at all can move
 * nothing here.  A namespace without a workload needs no program.
 */
#ifndef MIGRD_POLICY_H
#define MIGRD_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define POLICY_MAX		32	/* entries of a peer, all kinds */
#define POLICY_TEXT_MAX		256	/* characters of one entry */
/* the largest "sockets" and "migrations" values: what one PREPARE may
 * announce, and what this host takes in at once from all peers */
#define POLICY_SOCKETS_MAX	1048576
#define POLICY_MIGRATIONS_MAX	8
/* the most "checkpoint" may allow of images in one migration, in MiB */
#define POLICY_CHECKPOINT_MAX	65536

enum policy_kind {
	POLICY_PROGRAM,
	POLICY_ADDRESS,
	POLICY_MAC,
	POLICY_NAMESPACE,
	POLICY_SOCKETS,
	POLICY_MIGRATIONS,
	POLICY_CHECKPOINT,
	POLICY_NKINDS
};

struct policy_entry {
	enum policy_kind kind;
	char		 text[POLICY_TEXT_MAX];	/* as written */
	int		 family;		/* address: AF_INET(6) */
	uint8_t		 addr[16];	/* address, mac: the prefix */
	unsigned	 plen;		/* address: bits; mac: octets;
					   sockets, migrations,
					   checkpoint: N */
};

struct policy {
	struct policy_entry	entry[POLICY_MAX];
	int			n;
};

struct nsdump;

/* The keyword of a kind ("program"...), or of no kind: -1. */
const char	*policy_kind_name(enum policy_kind);
int		 policy_kind_find(const char *);
/* One value of kind as written in migrd.conf: 0 and *e, or -1 and why. */
int	policy_entry_parse(enum policy_kind, const char *,
	    struct policy_entry *, char *why, size_t len);

/* The last "sockets", "migrations" or "checkpoint" value of pol, or
 * dflt. */
unsigned	policy_limit(const struct policy *, enum policy_kind,
		    unsigned dflt);

/*
 * May peer, under pol, bring namespace ns described by desc (addrs,
 * mac), with the links and addresses of nd, running argv (NULL: no
 * workload)?  0, or -1 and why, which names the first thing refused and
 * the statement that would allow it.  The inputs have been validated
 * as a PREPARE's are; this only judges them.
 */
int	policy_check(const char *peer, const struct policy *pol,
	    const char *ns, json_t *desc, const struct nsdump *nd,
	    json_t *argv, char *why, size_t len);

#endif
