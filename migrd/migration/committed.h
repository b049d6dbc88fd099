/* SPDX-License-Identifier: ISC */
/*
 * The migrations this host went live with, as (source peer, id), kept
 * until that source says it knows (FORGET): the answer to a COMMIT
 * repeated after its COMMITTED was lost, or after a restart of either
 * side.  Each peer has its own entries and its own bound: a peer that
 * never says FORGET blocks its own moves here (PREPARE refused), never
 * another peer's answers.  Entries read from a state file of version 1
 * have no peer ("") and answer any peer.
 */
#ifndef MIGRD_COMMITTED_H
#define MIGRD_COMMITTED_H

#include <jansson.h>

/* unacknowledged moves from one peer: PREPARE is refused beyond it */
#define COMMITTED_PER_PEER	256

int		committed_has(const char *peer, const char *id);
/* 0, or -1 (no memory; logged) */
int		committed_add(const char *peer, const char *id);
/* 1 if an entry went */
int		committed_del(const char *peer, const char *id);
unsigned	committed_count(const char *peer);
/* [{"peer":..., "mig":...}], for the state file */
json_t		*committed_json(void);
/* from the state file: objects as above, or id strings (version 1);
 * bad entries are logged and skipped */
void		committed_load(json_t *array);
/* fn(id, arg) for each id of peer's (not those without a peer) */
void		committed_each(const char *peer,
		    void (*fn)(const char *id, void *arg), void *arg);
void		committed_clear(void);

#endif
