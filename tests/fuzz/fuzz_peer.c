/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for what a peer sends (hostile input: the peer is
 * authenticated, not trusted), through the checks migrd applies before
 * it acts on anything: this host is "host1", its configured peers
 * "host2" and "client", and the session's peer is "host2".
 *
 * The input is one session's messages, one a line: a letter naming the
 * message, then its JSON payload to the end of the line.
 *
 *   H  HELLO           peer_hello_check() (migrd/peer.c)
 *   P  MIG_PREPARE     prep_parse() (migrd/migration/mig_dst.c), and
 *   C  MIG_CHECK         its records, description and workload
 *   R  MIG_RECORD      rx_record()    on the session's stream of socket
 *   K  MIG_CHUNK       rx_chunk()       records (a destination's), each
 *   D  MIG_DUMP_DONE   rx_dump_done()   whole record "restored"
 *   Q  MIG_PREPARED, Y MIG_READY, M MIG_COMMITTED, X MIG_REFUSED,
 *   F  MIG_FAILED      src_answer() (mig_src.c, a source's side)
 *   E  MIG_CHECKED     check_rx() (mig_check.c)
 *   O  MIG_COMMIT, A MIG_ABORT, B MIG_ABORTED, T MIG_PACKETS,
 *   I  MIG_IMAGE       (its binary tail after a NUL, frame_decode())
 *
 * Every message but PREPARE and CHECK also goes through mig_rx(), the
 * dispatch of migrd/migration/mig.c, with no migration under way.
 *
 * An input whose first byte is 'W' is, after it, the bytes of the
 * channel: frames (common/frame.c), parsed as the TLS process parses
 * them (migrd/chan_rx.c: inflated after a hello that announces
 * deflate), each frame's tree then taken as peer.c takes it
 * (migrd/tree.c: 1 MiB allowed once a PREPARE has passed, max-message
 * otherwise) and dispatched as above by its type, until one is bad.
 * Every tree decodes, and encodes back to the same bytes.
 *
 * Oracles, besides the sanitizers:
 * - a refusal says why;
 * - a hello that passes names a configured peer;
 * - a PREPARE that passes has a valid name, description and workload,
 *   and sent again as a source builds one (its records encoded back
 *   from what was parsed) passes again to the same namespace;
 * - a refused record or chunk leaves the stream as it was; a record
 *   waits for chunks exactly while something is pending, and a whole
 *   one is a socket that encodes;
 * - DUMP_DONE passes exactly when no record waits for chunks and its
 *   count is the number restored;
 * - PACKETS: every packet taken is a whole IP packet to an address of
 *   the last PREPARE that passed, within the bounds; each packet of a
 *   message that passes is taken, refused or counted, and a message
 *   refused leaves the list as it was;
 * - no migration is ever started, nothing is sent.
 *
 * Nothing here changes the system: prep_parse() only looks for the
 * workload's program (access()), and the state folder (STATE_DIR) does
 * not exist, so that nothing could be written even by mistake.
 *
 *   tests/fuzz/run.sh peer [SECONDS]
 *   FUZZ_VERBOSE=1 build/check/tests/fuzz/fuzz_peer FILE   what it says
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "chan_rx.h"
#include "frame.h"
#include "log.h"
#include "mig.h"
#include "mig_priv.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "ns.h"
#include "nsdump.h"
#include "peer.h"
#include "sk_engine.h"
#include "sk_json.h"
#include "tree.h"

#define PEER		"host2"
#define STATE_DIR	"/nonexistent/fuzz_peer"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct migrd	migrd;		/* migrd.c's, which is not linked */
static int	verbose;	/* $FUZZ_VERBOSE: say what each message did */

/* One session: what a PREPARE opened, the socket records so far. */
struct session {
	int			prepared;	/* records may be 1 MiB */
	struct rx_stream	rx;
	struct nsdump		*nd;		/* the last PREPARE's */
	struct replay_list	rq;		/* PACKETS taken */
};

/* A refusal says why: not nothing, nor a label and nothing ("malformed
 * hello: "; a jansson error text is empty when the unpacking itself
 * went well). */
static void
refused(const char *what, const char *why)
{
	const char *colon = strstr(why, ": ");

	if (verbose)
		fprintf(stderr, "%s refused: %s\n", what, why);
	if (why[0] == '\0' || (colon != NULL && colon[2] == '\0')) {
		fprintf(stderr, "%s refused without a reason: \"%s\"\n", what,
		    why);
		abort();
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct peer_conf *pc;

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (!verbose) {
		log_set_sink(log_discard, NULL);
		sk_set_log(log_discard, NULL);
	}
	config_defaults(&migrd.conf);
	snprintf(migrd.conf.hostname, sizeof(migrd.conf.hostname), "host1");
	pc = &migrd.conf.peers[migrd.conf.npeers++];
	snprintf(pc->name, sizeof(pc->name), "host2");
	snprintf(pc->addr, sizeof(pc->addr), "10.77.0.2");
	pc->port = MIGR_PEER_PORT;
	pc = &migrd.conf.peers[migrd.conf.npeers++];
	snprintf(pc->name, sizeof(pc->name), "client");
	snprintf(pc->addr, sizeof(pc->addr), "10.77.0.10");
	pc->port = MIGR_PEER_PORT;
	snprintf(migrd.conf.state_dir, sizeof(migrd.conf.state_dir), "%s",
	    STATE_DIR);
	snprintf(migrd.conf.cgroup_root, sizeof(migrd.conf.cgroup_root),
	    "%s/cgroup", STATE_DIR);
	return 0;
}

static void
hello(json_t *j)
{
	const char *host = NULL, *to = NULL;
	char why[200] = "";
	int rc;

	rc = peer_hello_check(j, &migrd.conf, &host, &to, why, sizeof(why));
	switch (rc) {
	case RES_OK:
		if (verbose)
			fprintf(stderr, "hello from %s passes\n", host);
		if (host == NULL || to == NULL ||
		    config_find_peer(&migrd.conf, host) == NULL)
			abort();
		break;
	case RES_BAD_REQUEST:
	case RES_BAD_VERSION:
	case RES_UNKNOWN_PEER:
		refused("hello", why);
		break;
	default:
		fprintf(stderr, "hello check returned %d\n", rc);
		abort();
	}
}

static int
same_link(const struct sk_link *a, const struct sk_link *b)
{
	return strcmp(a->name, b->name) == 0 &&
	    strcmp(a->kind, b->kind) == 0 &&
	    memcmp(a->mac, b->mac, sizeof(a->mac)) == 0 && a->mtu == b->mtu;
}

static int
same_addr(const struct sk_ifaddr *a, const struct sk_ifaddr *b)
{
	return strcmp(a->dev, b->dev) == 0 && a->family == b->family &&
	    memcmp(a->addr, b->addr, sizeof(a->addr)) == 0 &&
	    a->prefix == b->prefix;
}

static int
same_route(const struct sk_route *a, const struct sk_route *b)
{
	return a->family == b->family &&
	    memcmp(a->dst, b->dst, sizeof(a->dst)) == 0 &&
	    a->prefix == b->prefix && a->has_gateway == b->has_gateway &&
	    memcmp(a->gateway, b->gateway, sizeof(a->gateway)) == 0 &&
	    strcmp(a->dev, b->dev) == 0 && a->metric == b->metric &&
	    a->table == b->table;
}

static int
same_nsdump(const struct nsdump *a, const struct nsdump *b)
{
	size_t i;

	if (a->nlinks != b->nlinks || a->naddrs != b->naddrs ||
	    a->nroutes != b->nroutes)
		return 0;
	for (i = 0; i < a->nlinks; i++)
		if (!same_link(&a->links[i], &b->links[i]))
			return 0;
	for (i = 0; i < a->naddrs; i++)
		if (!same_addr(&a->addrs[i], &b->addrs[i]))
			return 0;
	for (i = 0; i < a->nroutes; i++)
		if (!same_route(&a->routes[i], &b->routes[i]))
			return 0;
	return 1;
}

static void
append(json_t *a, json_t *rec)
{
	if (rec == NULL) {
		fprintf(stderr, "a decoded namespace record does not "
		    "encode\n");
		abort();
	}
	json_array_append_new(a, rec);
}

/* A PREPARE as a source sends it (mig_src.c, MA_SEND_PREPARE), from
 * what p holds: the records as nsdump_emit() would give them. */
static json_t *
as_sent(const struct prep *p)
{
	const struct nsdump *d = p->nd;
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < d->nlinks; i++)
		append(a, sk_json_encode_link(&d->links[i]));
	for (i = 0; i < d->naddrs; i++)
		append(a, sk_json_encode_addr(&d->addrs[i]));
	for (i = 0; i < d->nroutes; i++)
		append(a, sk_json_encode_route(&d->routes[i]));
	return json_pack("{s:s,s:s,s:s,s:O,s:o,s:I,s:o*}", "mig", p->id,
	    "ns", p->ns, "from", PEER, "namespace", p->desc, "records", a,
	    "sockets", p->sockets,
	    "workload", p->argv ? json_pack("{s:O}", "argv", p->argv) : NULL);
}

static void
prepare(struct session *s, json_t *j)
{
	struct prep p, p2;
	char why[400] = "", why2[400] = "";
	json_t *again;

	if (prep_parse(PEER, j, &p, why, sizeof(why)) == -1) {
		refused("prepare", why);
		if (p.nd != NULL || p.ns == NULL)
			abort();
		return;
	}
	if (p.id == NULL || p.id[0] == '\0' ||
	    nsarg_name(p.ns, why, sizeof(why)) == -1 ||
	    ns_describe_check(p.desc, why, sizeof(why)) != RES_OK ||
	    (p.argv != NULL && ns_argv_check(p.argv, why,
	    sizeof(why)) != RES_OK) || p.nd == NULL ||
	    p.nd->nlinks > NSDUMP_MAX || p.nd->naddrs > NSDUMP_MAX ||
	    p.nd->nroutes > NSDUMP_MAX) {
		fprintf(stderr, "a PREPARE passed that should not: %s\n",
		    why);
		abort();
	}
	if ((again = as_sent(&p)) == NULL)
		abort();
	if (prep_parse(PEER, again, &p2, why2, sizeof(why2)) == -1) {
		fprintf(stderr, "a PREPARE sent back is refused: %s\n", why2);
		abort();
	}
	if (strcmp(p.id, p2.id) != 0 || strcmp(p.ns, p2.ns) != 0 ||
	    !json_equal(p.desc, p2.desc) || (p.argv == NULL) !=
	    (p2.argv == NULL) || (p.argv && !json_equal(p.argv, p2.argv)) ||
	    !same_nsdump(p.nd, p2.nd)) {
		fprintf(stderr, "a PREPARE sent back reads otherwise\n");
		abort();
	}
	if (verbose)
		fprintf(stderr, "prepare %s of %s passes: %zu links, %zu "
		    "addresses, %zu routes\n", p.id, p.ns, p.nd->nlinks,
		    p.nd->naddrs, p.nd->nroutes);
	free(p2.nd);
	json_decref(again);
	free(s->nd);
	s->nd = p.nd;		/* the addresses PACKETS may go to */
	replay_list_free(&s->rq);	/* another migration's list */
	s->prepared = 1;
}

/*
 * PACKETS: a refusal says why; every packet taken is a whole IP packet
 * to an address of the last PREPARE that passed (none before one), and
 * the bounds hold; the packets of a message that passed are each taken,
 * refused or counted as overflow.
 */
static void
packets(struct session *s, json_t *j)
{
	size_t before = s->rq.kept + s->rq.overflow, nrefused = 0;
	struct replay_pkt *p;
	char why[300] = "";

	if (s->rq.max_bytes == 0)
		replay_list_init(&s->rq, 64, 256 * 1024);
	if (replay_take(&s->rq, s->nd, j, &nrefused, why, sizeof(why)) == -1) {
		refused("packets", why);
		if (s->rq.kept + s->rq.overflow != before || nrefused != 0) {
			fprintf(stderr, "a refused PACKETS changed the list\n");
			abort();
		}
		return;
	}
	if (nrefused > 0 && why[0] == '\0')
		abort();
	if (s->rq.kept + s->rq.overflow + nrefused - before !=
	    json_array_size(json_object_get(j, "packets")))
		abort();
	if (s->rq.npkts > 64 || s->rq.bytes > 256 * 1024)
		abort();
	for (p = s->rq.head; p != NULL; p = p->next)
		if (s->nd == NULL || replay_check(p->data, p->len,
		    s->nd->addrs, s->nd->naddrs, NULL, 0) == -1) {
			fprintf(stderr, "a packet not for the namespace was "
			    "taken\n");
			abort();
		}
	if (verbose)
		fprintf(stderr, "packets: %zu kept, %zu overflow, %zu "
		    "refused\n", s->rq.npkts, s->rq.overflow, nrefused);
}

/* A whole socket record: as if restored. */
static void
restored(struct session *s)
{
	json_t *j;

	if (s->rx.partial || s->rx.rec.type != SK_REC_SOCKET ||
	    sk_record_pending(&s->rx.rec) != 0)
		abort();
	if ((j = sk_json_encode(s->rx.rec.u.sock)) == NULL) {
		fprintf(stderr, "a whole socket record does not encode\n");
		abort();
	}
	json_decref(j);
	sk_record_clear(&s->rx.rec);
	s->rx.seq++;
	if (verbose)
		fprintf(stderr, "record %llu restored\n",
		    (unsigned long long)s->rx.seq);
}

static void
record(struct session *s, int type, json_t *j)
{
	uint64_t seq = s->rx.seq, pending = 0;
	int partial = s->rx.partial, rc;
	json_int_t n;
	json_t *raw = NULL;
	char why[300] = "";

	if (partial)
		pending = sk_record_pending(&s->rx.rec);
	if (type == MSG_MIG_RECORD)
		rc = rx_record(&s->rx, j, &n, &raw, why, sizeof(why));
	else
		rc = rx_chunk(&s->rx, j, &n, why, sizeof(why));
	if (rc < 0) {
		refused("a record or chunk", why);
		if (s->rx.seq != seq || s->rx.partial != partial ||
		    (partial && sk_record_pending(&s->rx.rec) != pending)) {
			fprintf(stderr, "a refused record or chunk changed "
			    "the stream\n");
			abort();
		}
		return;
	}
	if (n != (json_int_t)seq + 1 ||
	    (type == MSG_MIG_RECORD && (partial || raw == NULL)) ||
	    (type == MSG_MIG_CHUNK && !partial))
		abort();
	if (rc == 0) {
		if (!s->rx.partial || sk_record_pending(&s->rx.rec) == 0 ||
		    (type == MSG_MIG_CHUNK &&
		    sk_record_pending(&s->rx.rec) >= pending))
			abort();
		return;
	}
	restored(s);
}

static void
dump_done(struct session *s, json_t *j)
{
	json_int_t n = -1;
	char why[300] = "";
	int rc, want;

	rc = rx_dump_done(&s->rx, j, why, sizeof(why));
	want = !s->rx.partial && json_unpack(j, "{s:I}", "records", &n) == 0 &&
	    n == (json_int_t)s->rx.seq;
	if ((rc == 0) != want) {
		fprintf(stderr, "dump done: %d, expected %d\n", rc, want);
		abort();
	}
	if (rc < 0)
		refused("dump done", why);
	else if (verbose)
		fprintf(stderr, "dump done passes\n");
}

static void
answer(int type, json_t *j)
{
	struct src_answer a;
	int rc;

	rc = src_answer(type, j, &a);
	if (rc != 0 && (rc != -1 || type != MSG_MIG_READY))
		abort();
	if (a.reason != NULL && a.reason != json_string_value(
	    json_object_get(j, "reason")))
		abort();
}

static void
message(struct session *s, int type, json_t *j)
{
	const char *id = mig_msg_id(j);

	if (id != NULL && strlen(id) >= MIG_ID_MAX)
		abort();
	switch (type) {
	case MSG_HELLO:
		hello(j);
		return;
	case MSG_MIG_PREPARE:
	case MSG_MIG_CHECK:
		/* mig_rx() would go on to build: the checks alone */
		if (id != NULL)
			prepare(s, j);
		return;
	case MSG_MIG_RECORD:
	case MSG_MIG_CHUNK:
		record(s, type, j);
		break;
	case MSG_MIG_DUMP_DONE:
		dump_done(s, j);
		break;
	case MSG_MIG_PREPARED:
	case MSG_MIG_READY:
	case MSG_MIG_COMMITTED:
	case MSG_MIG_REFUSED:
	case MSG_MIG_FAILED:
		answer(type, j);
		break;
	case MSG_MIG_CHECKED:
		check_rx(PEER, j);
		break;
	case MSG_MIG_PACKETS:
		packets(s, j);
		break;
	}
	if (MSG_IS_MIG(type)) {
		mig_rx(PEER, type, j);
		if (!TAILQ_EMPTY(&migs)) {
			fprintf(stderr, "%s started a migration\n",
			    migr_msgname(type));
			abort();
		}
	}
}

static int
letter_type(int c)
{
	switch (c) {
	case 'H': return MSG_HELLO;
	case 'P': return MSG_MIG_PREPARE;
	case 'C': return MSG_MIG_CHECK;
	case 'R': return MSG_MIG_RECORD;
	case 'K': return MSG_MIG_CHUNK;
	case 'D': return MSG_MIG_DUMP_DONE;
	case 'Q': return MSG_MIG_PREPARED;
	case 'Y': return MSG_MIG_READY;
	case 'M': return MSG_MIG_COMMITTED;
	case 'X': return MSG_MIG_REFUSED;
	case 'F': return MSG_MIG_FAILED;
	case 'E': return MSG_MIG_CHECKED;
	case 'O': return MSG_MIG_COMMIT;
	case 'A': return MSG_MIG_ABORT;
	case 'B': return MSG_MIG_ABORTED;
	case 'T': return MSG_MIG_PACKETS;
	case 'I': return MSG_MIG_IMAGE;
	}
	return MSG_NONE;
}

/* Lines: a letter, then JSON. */
static void
lines(struct session *s, const char *p, const char *end)
{
	const char *nl;
	json_t *j;
	size_t len;
	int type;

	for (; p < end; p = nl != NULL ? nl + 1 : end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (len < 2 || (type = letter_type(p[0])) == MSG_NONE)
			continue;
		/* as a frame's payload is: one object, duplicates refused,
		 * and an image's binary tail after a NUL */
		if (frame_decode(type, p + 1, len - 1, &j) != FRAME_OK)
			continue;
		message(s, type, j);
		json_decref(j);
	}
}

/*
 * The channel's bytes: frames, parsed as the TLS process parses them
 * (chan_rx_parse(), this host announcing deflate), then taken as
 * peer.c's sess_read() takes the trees it passes on (tree_pull()).
 */
static void
wire(struct session *s, const uint8_t *data, size_t size)
{
	struct evbuffer *in = evbuffer_new(), *items = evbuffer_new();
	struct evbuffer *again = evbuffer_new();
	struct tree_item it;
	struct chan_rx rx;
	struct frame_hdr h;
	size_t limit;
	unsigned char *body, *copy;
	json_t *j;
	int st;

	if (in == NULL || items == NULL || again == NULL ||
	    evbuffer_add(in, data, size) == -1)
		abort();
	chan_rx_init(&rx, 1, 1, migrd.conf.max_message);
	/* what stays in: a partial frame, or what followed a refusal */
	if (chan_rx_parse(&rx, in, items, SIZE_MAX, 1, 1000000) == 0 &&
	    evbuffer_get_length(in) >= MIGR_FRAME_HDR_LEN) {
		memset(&h, 0, sizeof(h));
		if (rx.z == NULL && frame_peek(in, MIGR_FRAME_MAX, 0, &h,
		    &body) != FRAME_PARTIAL)
			abort();
	}
	chan_rx_free(&rx);
	for (;;) {
		limit = s->prepared ? MIGR_FRAME_MAX : migrd.conf.max_message;
		/* the item, to encode its tree back */
		copy = NULL;
		if (evbuffer_get_length(items) >= sizeof(it)) {
			evbuffer_copyout(items, &it, sizeof(it));
			if ((copy = malloc(sizeof(it) + it.body)) == NULL)
				abort();
			evbuffer_copyout(items, copy, sizeof(it) + it.body);
		}
		st = tree_pull(items, limit, &it, &h, &j);
		/* the TLS process's trees are always well formed */
		if (st == TREE_BAD)
			abort();
		if (st == TREE_PROGRESS) {
			free(copy);
			continue;
		}
		if (st != FRAME_OK) {
			free(copy);
			if (j != NULL)
				abort();
			break;		/* the session closes */
		}
		if (j == NULL || !json_is_object(j) || h.len > limit ||
		    h.type == MSG_NONE || h.type >= MSG__MAX ||
		    tree_encode(it.type, j, again) == -1 ||
		    evbuffer_get_length(again) != it.body ||
		    memcmp(evbuffer_pullup(again, -1), copy + sizeof(it),
		    it.body) != 0)
			abort();
		free(copy);
		copy = NULL;
		evbuffer_drain(again, it.body);
		if (h.len > migrd.conf.max_message &&
		    h.type != MSG_MIG_RECORD && h.type != MSG_MIG_CHUNK) {
			json_decref(j);
			break;
		}
		if (h.type == MSG_RESULT) {
			json_decref(j);
			break;		/* the peer ended it */
		}
		message(s, h.type, j);
		json_decref(j);
	}
	evbuffer_free(in);
	evbuffer_free(items);
	evbuffer_free(again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session s;

	memset(&s, 0, sizeof(s));
	if (size > 0 && data[0] == 'W')
		wire(&s, data + 1, size - 1);
	else
		lines(&s, (const char *)data, (const char *)data + size);
	rx_free(&s.rx);
	free(s.nd);
	replay_list_free(&s.rq);
	return 0;
}
