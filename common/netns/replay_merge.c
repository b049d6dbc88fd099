/* SPDX-License-Identifier: ISC */
/*
 * Kept TCP segments that continue one another, merged before the replay
 * (replay.h, replay_list_merge()).
 *
 * Every packet injected costs the namespace's stack a receive, and each
 * data segment an acknowledgement of its own: about 0.15 ms a packet in a
 * TCG guest, where a thousand kept segments of 100 bytes took 150 to 350
 * ms beside the released workload.  A peer that keeps writing while the
 * namespace is locked sends its bytes in order, so most of what the lock
 * keeps of one connection is a run of segments, each starting where the
 * one before it ended; merged, the socket takes the same bytes, in the
 * same order, in a few segments.
 *
 * Only what cannot change the stream's meaning is merged: two data
 * segments of the same connection, next to each other in that
 * connection's order (nothing of it between them, a pure ACK included),
 * the second starting exactly where the first ended, flags ACK and at
 * most PSH (no SYN, FIN, RST, URG, ECE or CWR), the same IP header
 * shape (IPv4 without options or fragments, IPv6 with TCP right after
 * the header) and the same TOS or traffic class (a CE mark is not
 * lost), and the result within max_len.  The merged segment is the
 * second's headers (its acknowledgement, window, options and
 * timestamps are the newer), the first's sequence number, both
 * payloads, and PSH if either had it; it takes the second's place.
 * Checksums are left to the replay (replay_checksums()).  Anything else
 * stays as it came: a retransmission, out of order or overlapping,
 * still reaches the socket, which discards or D-SACKs it as it would.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define TH_PSH	0x08
#define TH_ACK	0x10

struct seg {
	uint8_t		 key[37];	/* family, source, destination, ports */
	int		 data;		/* a data segment that may merge */
	size_t		 hl, thl;	/* IP and TCP header lengths */
	uint32_t	 seq;
	size_t		 plen;		/* payload */
	uint8_t		 flags, tos;
};

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* 0 and s filled for a TCP segment replay_check() would pass, else -1. */
static int
seg_parse(const uint8_t *p, size_t len, struct seg *s)
{
	int v4 = len >= 20 && p[0] >> 4 == 4;
	size_t alen = v4 ? 4 : 16, tcp;

	memset(s, 0, sizeof(*s));
	if (v4) {
		s->hl = (size_t)(p[0] & 0x0f) * 4;
		if (p[9] != 6 || s->hl < 20 ||
		    ((size_t)p[2] << 8 | p[3]) != len ||
		    (((size_t)p[6] << 8 | p[7]) & 0x3fff) != 0)
			return -1;
		s->tos = p[1];
		memcpy(s->key + 1, p + 12, 8);
	} else if (len >= 40 && p[0] >> 4 == 6) {
		s->hl = 40;
		if (p[6] != 6 || ((size_t)p[4] << 8 | p[5]) + 40 != len)
			return -1;
		s->tos = (uint8_t)((p[0] & 0x0f) << 4 | p[1] >> 4);
		memcpy(s->key + 1, p + 8, 32);
	} else {
		return -1;
	}
	tcp = s->hl;
	if (len < tcp + 20)
		return -1;
	s->thl = (size_t)(p[tcp + 12] >> 4) * 4;
	if (s->thl < 20 || tcp + s->thl > len)
		return -1;
	s->key[0] = v4 ? 4 : 6;
	memcpy(s->key + 1 + 2 * alen, p + tcp, 4);	/* both ports */
	s->seq = be32(p + tcp + 4);
	s->flags = p[tcp + 13];
	s->plen = len - tcp - s->thl;
	/* IPv4 with options: its header is not the second's to keep */
	s->data = s->plen > 0 && (s->flags & TH_ACK) &&
	    (s->flags & ~(TH_ACK | TH_PSH)) == 0 && (!v4 || s->hl == 20);
	return 0;
}

/* b's headers, a's sequence number and payload, then b's payload. */
static struct replay_pkt *
merge(const struct replay_pkt *a, const struct seg *sa,
    const struct replay_pkt *b, const struct seg *sb)
{
	size_t hdr = sb->hl + sb->thl, len = b->len + sa->plen;
	struct replay_pkt *m = malloc(sizeof(*m) + len);
	uint8_t *d;

	if (m == NULL)
		return NULL;
	m->next = NULL;
	m->len = len;
	m->count = a->count + b->count;
	d = m->data;
	memcpy(d, b->data, hdr);
	memcpy(d + hdr, a->data + sa->hl + sa->thl, sa->plen);
	memcpy(d + hdr + sa->plen, b->data + hdr, sb->plen);
	if (d[0] >> 4 == 4) {
		d[2] = (uint8_t)(len >> 8);
		d[3] = (uint8_t)len;
	} else {
		d[4] = (uint8_t)((len - 40) >> 8);
		d[5] = (uint8_t)(len - 40);
	}
	d[sb->hl + 4] = (uint8_t)(sa->seq >> 24);
	d[sb->hl + 5] = (uint8_t)(sa->seq >> 16);
	d[sb->hl + 6] = (uint8_t)(sa->seq >> 8);
	d[sb->hl + 7] = (uint8_t)sa->seq;
	d[sb->hl + 13] |= sa->flags & TH_PSH;
	return m;
}

/* The connection's slot: its last packet, by index, and that packet
 * parsed (seg.key is the slot's key). */
struct slot {
	int		 used;
	size_t		 last;
	struct seg	 seg;
};

static uint32_t
hash(const uint8_t *k, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

size_t
replay_list_merge(struct replay_list *l, size_t max_len)
{
	struct replay_pkt **v, *p, *m;
	struct slot *tab, *e;
	struct seg s, *o;
	size_t n = l->npkts, cap = 16, i, k, merged = 0;

	if (n < 2)
		return 0;
	while (cap < 2 * n)
		cap *= 2;
	v = malloc(n * sizeof(*v));
	tab = calloc(cap, sizeof(*tab));
	if (v == NULL || tab == NULL) {
		/* nothing merged: the replay is slower, not wrong */
		free(v);
		free(tab);
		return 0;
	}
	for (i = 0, p = l->head; i < n && p != NULL; i++, p = p->next)
		v[i] = p;
	n = i;
	for (i = 0; i < n; i++) {
		if (seg_parse(v[i]->data, v[i]->len, &s) < 0)
			continue;
		for (k = hash(s.key, sizeof(s.key)) & (cap - 1);
		    tab[k].used && memcmp(tab[k].seg.key, s.key,
		    sizeof(s.key)) != 0; k = (k + 1) & (cap - 1))
			;
		e = &tab[k];
		o = &e->seg;
		if (e->used && s.data && o->data && o->tos == s.tos &&
		    o->hl == s.hl && o->seq + (uint32_t)o->plen == s.seq &&
		    v[i]->len + o->plen <= max_len &&
		    (m = merge(v[e->last], o, v[i], &s)) != NULL) {
			free(v[e->last]);
			v[e->last] = NULL;
			free(v[i]);
			v[i] = m;
			merged++;
			/* what was merged, parsed: b's headers, a's start */
			s.seq = o->seq;
			s.plen += o->plen;
			s.flags |= o->flags & TH_PSH;
		}
		e->used = 1;
		e->last = i;
		e->seg = s;
	}
	/* the list again, without the merged */
	l->head = NULL;
	l->tail = &l->head;
	l->npkts = l->bytes = 0;
	for (i = 0; i < n; i++) {
		if (v[i] == NULL)
			continue;
		v[i]->next = NULL;
		*l->tail = v[i];
		l->tail = &v[i]->next;
		l->npkts++;
		l->bytes += v[i]->len;
	}
	l->merged += merged;
	free(v);
	free(tab);
	return merged;
}
