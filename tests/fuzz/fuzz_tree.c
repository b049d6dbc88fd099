/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for what the TLS process hands migrd (migrd/tree.c):
 * the process that parses a peer's bytes is the one an attacker would
 * own first, so migrd takes its items as hostile.  The input is the
 * bytes of a session's socketpair: items, pulled as peer.c's
 * sess_read() pulls them (the limit 64 KiB or 1 MiB by the first byte),
 * until one is partial or refused.
 *
 * Oracles, besides the sanitizers:
 * - an item taken is a frame of a known type within the limit, and its
 *   tree one object that encodes back to the very bytes it came as
 *   (so nothing of it was skipped or read twice);
 * - an item refused takes nothing more: pulled again, the same answer;
 * - a refusal of the peer's frame says the header it had.
 *
 *   tests/fuzz/run.sh tree [SECONDS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"
#include "migrd-protocol.h"
#include "tree.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer *in, *again;
	struct tree_item it, it2;
	struct frame_hdr h, h2;
	size_t limit, left;
	uint8_t *copy;
	json_t *j, *j2;
	int st, st2;

	if (size < 1)
		return 0;
	limit = data[0] & 1 ? MIGR_FRAME_MAX : MIGR_FRAME_DEFAULT;
	if ((in = evbuffer_new()) == NULL || (again = evbuffer_new()) == NULL ||
	    evbuffer_add(in, data + 1, size - 1) == -1)
		abort();
	for (;;) {
		left = evbuffer_get_length(in);
		copy = malloc(left + 1);
		if (copy == NULL)
			abort();
		evbuffer_copyout(in, copy, left);
		st = tree_pull(in, limit, &it, &h, &j);
		if (st == TREE_PROGRESS) {
			free(copy);
			if (evbuffer_get_length(in) != left - sizeof(it))
				abort();
			continue;
		}
		if (st != FRAME_OK) {
			if (j != NULL)
				abort();
			/* nothing taken but a refusal of the peer's */
			if (evbuffer_get_length(in) != left &&
			    evbuffer_get_length(in) != left - sizeof(it))
				abort();
			if (st != FRAME_PARTIAL && st != TREE_BAD &&
			    (h.type != it.type || h.len != it.len))
				abort();
			if (evbuffer_get_length(in) == left) {
				st2 = tree_pull(in, limit, &it2, &h2, &j2);
				if (st2 != st || j2 != NULL)
					abort();
			}
			free(copy);
			break;
		}
		if (j == NULL || !json_is_object(j) || it.len > limit ||
		    it.type == MSG_NONE || it.type >= MSG__MAX ||
		    evbuffer_get_length(in) != left - sizeof(it) - it.body ||
		    tree_encode(it.type, j, again) == -1 ||
		    evbuffer_get_length(again) != it.body ||
		    memcmp(evbuffer_pullup(again, -1), copy + sizeof(it),
		    it.body) != 0)
			abort();
		evbuffer_drain(again, it.body);
		json_decref(j);
		free(copy);
	}
	evbuffer_free(in);
	evbuffer_free(again);
	return 0;
}
