/* SPDX-License-Identifier: ISC */
/* The committed-id store (committed.h). */
#include <stdlib.h>
#include <string.h>

#include "committed.h"
#include "config.h"
#include "log.h"
#include "mig_priv.h"

struct committed {
	char	peer[CONF_NAME_MAX];	/* "" from a version 1 file */
	char	id[MIG_ID_MAX];
};

static struct committed	*ids;
static size_t		 nids, capids;

static int
match(const struct committed *c, const char *peer, const char *id)
{
	return strcmp(c->id, id) == 0 &&
	    (c->peer[0] == '\0' || strcmp(c->peer, peer) == 0);
}

int
committed_has(const char *peer, const char *id)
{
	size_t i;

	for (i = 0; i < nids; i++)
		if (match(&ids[i], peer, id))
			return 1;
	return 0;
}

int
committed_add(const char *peer, const char *id)
{
	struct committed *n;

	if (strlen(peer) >= CONF_NAME_MAX || strlen(id) >= MIG_ID_MAX ||
	    id[0] == '\0') {
		log_warnx("committed: bad entry (%zu, %zu bytes)",
		    strlen(peer), strlen(id));
		return -1;
	}
	if (committed_has(peer, id))
		return 0;
	if (nids == capids) {
		size_t cap = capids ? capids * 2 : 16;

		if ((n = realloc(ids, cap * sizeof(*ids))) == NULL) {
			log_warn("committed: realloc");
			return -1;
		}
		ids = n;
		capids = cap;
	}
	snprintf(ids[nids].peer, sizeof(ids[nids].peer), "%s", peer);
	snprintf(ids[nids].id, sizeof(ids[nids].id), "%s", id);
	nids++;
	return 0;
}

int
committed_del(const char *peer, const char *id)
{
	size_t i;
	int gone = 0;

	for (i = 0; i < nids; )
		if (match(&ids[i], peer, id)) {
			ids[i] = ids[--nids];
			gone = 1;
		} else
			i++;
	return gone;
}

unsigned
committed_count(const char *peer)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < nids; i++)
		if (strcmp(ids[i].peer, peer) == 0)
			n++;
	return n;
}

json_t *
committed_json(void)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < nids; i++)
		if (json_array_append_new(a, json_pack("{s:s,s:s}", "peer",
		    ids[i].peer, "mig", ids[i].id)) == -1) {
			json_decref(a);
			return NULL;
		}
	return a;
}

void
committed_load(json_t *array)
{
	const char *peer, *id;
	json_t *o;
	size_t i;

	json_array_foreach(array, i, o) {
		peer = "";
		if (json_is_string(o))
			id = json_string_value(o);
		else if (json_unpack(o, "{s:s,s:s}", "peer", &peer, "mig",
		    &id) == -1) {
			log_warnx("committed: entry %zu is not {peer, mig}", i);
			continue;
		}
		(void)committed_add(peer, id);
	}
}

void
committed_each(const char *peer, void (*fn)(const char *, void *),
    void *arg)
{
	size_t i;

	for (i = 0; i < nids; i++)
		if (strcmp(ids[i].peer, peer) == 0)
			fn(ids[i].id, arg);
}

void
committed_clear(void)
{
	free(ids);
	ids = NULL;
	nids = capids = 0;
}
