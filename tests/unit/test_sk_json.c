/* SPDX-License-Identifier: ISC */
/*
 * Socket records, schema v2: round trips for every state, protocol,
 * family and option kind; a table of malformed records, each refused
 * with the message naming its field; the chunk protocol that carries
 * large queues and many datagrams, and its refusals; a property test
 * over generated records; strict base64.
 *
 *   SK_SEED=N          replay the property test
 *   SK_JSON_CORPUS=DIR also write the encodings (and the malformed
 *                      records, and chunked records as JSON lines) to
 *                      DIR: the fuzz target's seed corpus,
 *                      tests/fuzz/corpus/sk_json
 */
#include <arpa/inet.h>
#include <limits.h>
#include <linux/filter.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sk_b64.h"
#include "sk_engine.h"
#include "sk_json.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- helpers ---- */

static uint64_t prng_state;

static uint32_t
prng(void)
{
	/* xorshift64*: reproducible from the seed printed on failure. */
	prng_state ^= prng_state >> 12;
	prng_state ^= prng_state << 25;
	prng_state ^= prng_state >> 27;
	return (uint32_t)((prng_state * 2685821657736338717ULL) >> 32);
}

static void
set_addr(struct sockaddr_storage *ss, int family, const char *a, uint16_t p)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(p);
		assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(p);
		assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
	}
}

static void
random_addr(struct sockaddr_storage *ss, int family, uint16_t port)
{
	uint32_t i;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		s->sin_addr.s_addr = prng();
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		for (i = 0; i < 16; i++)
			s->sin6_addr.s6_addr[i] = (uint8_t)prng();
	}
}

static uint8_t *
bytes(uint32_t n, uint32_t salt)
{
	uint8_t *b;
	uint32_t i;

	if (n == 0)
		return NULL;
	b = malloc(n);
	assert_non_null(b);
	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + salt + (i >> 8));
	return b;
}

/* The wire form: compact, keys sorted (so the option order in the text
 * is not the table's: the decoder must restore it). */
static char *
dump(const json_t *j)
{
	char *text;

	assert_non_null(j);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_non_null(text);
	return text;
}

static char *
encode_text(const struct sk_state *s)
{
	json_t *j = sk_json_encode(s);
	char *text;

	if (j == NULL)
		fail_msg("sk_json_encode refused a valid state");
	text = dump(j);
	json_decref(j);
	return text;
}

/* ---- the seed corpus of the fuzz target ---- */

static void
corpus_write(const char *name, const char *text)
{
	const char *dir = getenv("SK_JSON_CORPUS");
	char path[512];
	FILE *f;

	/* the fuzz target reads at most 64 KiB (smoke.sh -max_len) */
	if (dir == NULL || strlen(text) > 65000)
		return;
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("%s: cannot write", path);
	fprintf(f, "%s\n", text);
	assert_int_equal(fclose(f), 0);
}

/* Lines of text, for a record followed by its chunks. */
struct lines {
	char	*buf;
	size_t	 len;
};

static void
lines_add(struct lines *l, const char *text)
{
	size_t n = strlen(text);

	l->buf = realloc(l->buf, l->len + n + 2);
	assert_non_null(l->buf);
	memcpy(l->buf + l->len, text, n);
	l->len += n;
	l->buf[l->len++] = '\n';
	l->buf[l->len] = '\0';
}

static void
lines_write(struct lines *l, const char *name)
{
	if (l->buf != NULL) {
		l->buf[l->len - 1] = '\0';	/* corpus_write adds it */
		corpus_write(name, l->buf);
	}
	free(l->buf);
	l->buf = NULL;
	l->len = 0;
}

/* ---- options ---- */

static unsigned
opt_id(const char *name)
{
	int id = sk_opt_find(name);

	if (id < 0)
		fail_msg("option %s not in the engine's table", name);
	return (unsigned)id;
}

static struct sk_opt *
opt_slot(struct sk_state *s, const char *name)
{
	struct sk_opt *o;

	assert_true(s->nopts < SK_OPTS_MAX);
	o = &s->opts[s->nopts++];
	memset(o, 0, sizeof(*o));
	o->id = (uint16_t)opt_id(name);
	return o;
}

static void
opt_valid(const struct sk_state *s, const struct sk_opt *o)
{
	char why[160];

	if (sk_opt_check(o, s->proto, s->family, s->state, why,
	    sizeof(why)) < 0)
		fail_msg("test option refused by the engine: %s", why);
}

static void
add_int(struct sk_state *s, const char *name, int64_t v)
{
	struct sk_opt *o = opt_slot(s, name);

	o->ival = v;
	opt_valid(s, o);
}

static void
add_data(struct sk_state *s, const char *name, const void *data,
    uint32_t len)
{
	struct sk_opt *o = opt_slot(s, name);

	o->len = len;
	if (len > 0) {
		o->data = malloc(len);
		assert_non_null(o->data);
		memcpy(o->data, data, len);
	}
	opt_valid(s, o);
}

/* The engine reads and keeps the options in table order. */
static void
sort_opts(struct sk_state *s)
{
	struct sk_opt t;
	uint32_t i, j;

	for (i = 1; i < s->nopts; i++)
		for (j = i; j > 0 && s->opts[j - 1].id > s->opts[j].id; j--) {
			t = s->opts[j];
			s->opts[j] = s->opts[j - 1];
			s->opts[j - 1] = t;
		}
}

/* A classic BPF program: accept IPv4 frames, drop the rest. */
static const struct sock_filter filter_prog[] = {
	{ 0x28, 0, 0, 0x0000000c },	/* ldh [12] */
	{ 0x15, 0, 1, 0x00000800 },	/* jeq #0x800, L1, L2 */
	{ 0x06, 0, 0, 0x00040000 },	/* L1: ret #262144 */
	{ 0x06, 0, 0, 0x00000000 },	/* L2: ret #0 */
};

static const uint8_t tfo_key[16] = { 0x10, 0x32, 0x54, 0x76, 0x98, 0xba,
    0xdc, 0xfe, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

/* ---- states ---- */

static void
add_dgram(struct sk_state *s, const char *from, uint16_t from_port,
    const char *to, uint32_t len, uint32_t salt)
{
	struct sk_dgram *d;

	s->udp.dgrams = realloc(s->udp.dgrams,
	    (s->udp.ndgrams + 1) * sizeof(*s->udp.dgrams));
	assert_non_null(s->udp.dgrams);
	d = &s->udp.dgrams[s->udp.ndgrams++];
	memset(d, 0, sizeof(*d));
	set_addr(&d->from, s->family, from, from_port);
	set_addr(&d->to, s->family, to, sk_addr_port(&s->local));
	d->len = len;
	d->data = bytes(len, salt);
}

static bool
needs_remote(const struct sk_state *s)
{
	if (s->proto == SK_PROTO_UDP)
		return s->state == SK_ST_ESTABLISHED;
	return sk_st_tcp_conn(s->state) || s->state == SK_ST_SYN_SENT;
}

/*
 * A valid state of the given kind with every field it may carry set,
 * and options of every kind: bool, int (beyond INT_MAX too), timeval,
 * linger, string, bytes.
 */
static struct sk_state *
make_state(enum sk_proto proto, int family, enum sk_st st)
{
	struct sk_state *s = sk_state_new();
	int v6 = family == AF_INET6;
	const char *me = v6 ? "fd00:77::100" : "10.77.0.100";
	const char *peer = v6 ? "fd00:77::10" : "10.77.0.10";
	const uint8_t mcast_if[4] = { 10, 77, 0, 100 };

	assert_non_null(s);
	s->proto = proto;
	s->family = family;
	s->state = st;
	s->id = 42;
	set_addr(&s->local, family, me, st == SK_ST_CLOSE ? 0 : 8080);
	if (needs_remote(s)) {
		set_addr(&s->remote, family, peer,
		    proto == SK_PROTO_UDP ? 5353 : 40000);
		s->flags |= SK_F_REMOTE;
	}
	s->bufs.snd = 87040;
	s->bufs.rcv = 131072;
	s->bufs.lock = st == SK_ST_LISTEN ? 3 : 0;
	if (st == SK_ST_ESTABLISHED)
		s->flags |= SK_F_NONBLOCK;

	add_int(s, "SO_REUSEADDR", 1);
	add_int(s, "SO_MARK", 0xdeadbeef);
	add_int(s, "SO_RCVTIMEO", 1500000);
	add_int(s, "SO_SNDTIMEO", 250);
	add_int(s, "SO_LINGER", 5);
	add_data(s, "SO_BINDTODEVICE", "eth0", 4);
	add_data(s, "SO_ATTACH_FILTER", filter_prog, sizeof(filter_prog));
	add_int(s, "IP_TOS", 0x10);
	add_int(s, "SO_PRIORITY", 3);
	if (v6) {
		add_int(s, "IPV6_V6ONLY", 1);
		add_int(s, "IPV6_UNICAST_HOPS", 32);
	} else
		add_int(s, "IP_TTL", 32);

	if (proto == SK_PROTO_UDP) {
		add_int(s, "SO_BROADCAST", 1);
		add_int(s, "SO_PEEK_OFF", 0);
		add_int(s, "UDP_SEGMENT", 1400);
		add_int(s, "UDP_GRO", 1);
		add_int(s, "IP_MULTICAST_TTL", 4);
		add_data(s, "IP_MULTICAST_IF", mcast_if, 4);
		if (v6)
			add_int(s, "UDP_NO_CHECK6_TX", 1);
		if (st != SK_ST_CLOSE) {
			add_dgram(s, peer, 5353, me, 100, 1);
			add_dgram(s, peer, 5354, me, 0, 2);
			add_dgram(s, v6 ? "fd00:77::11" : "10.77.0.11", 9,
			    v6 ? "::" : "0.0.0.0", 1472, 3);
		}
		sort_opts(s);
		return s;
	}

	add_int(s, "SO_KEEPALIVE", 1);
	add_int(s, "TCP_NODELAY", 1);
	add_int(s, "TCP_KEEPIDLE", 60);
	add_int(s, "TCP_KEEPINTVL", 10);
	add_int(s, "TCP_KEEPCNT", 4);
	add_int(s, "TCP_USER_TIMEOUT", 30000);
	add_int(s, "TCP_NOTSENT_LOWAT", 16384);
	add_data(s, "TCP_CONGESTION", "cubic", 5);
	switch (st) {
	case SK_ST_LISTEN:
		s->tcp.backlog = 128;
		add_int(s, "TCP_DEFER_ACCEPT", 5);
		add_int(s, "TCP_FASTOPEN", 16);
		add_data(s, "TCP_FASTOPEN_KEY", tfo_key, sizeof(tfo_key));
		add_int(s, "TCP_MAXSEG", 1400);
		add_int(s, "TCP_WINDOW_CLAMP", 32768);
		break;
	case SK_ST_SYN_SENT:
		s->tcp.snd_seq = 0xfffffffeu;
		add_int(s, "TCP_SYNCNT", 3);
		add_int(s, "TCP_FASTOPEN_CONNECT", 1);
		break;
	case SK_ST_ENDED:
		s->tcp.end = SK_END_FIN;
		s->tcp.rcvq_len = 77;
		s->tcp.rcvq = bytes(77, 2);
		break;
	case SK_ST_BOUND:
	case SK_ST_CLOSE:
		break;
	default:
		s->tcp.snd_seq = 0xfffffff0u;	/* wraps */
		s->tcp.rcv_seq = 12345;
		s->tcp.sndq_len = 1000;
		s->tcp.sndq_unsent = 300;
		s->tcp.sndq = bytes(1000, 1);
		s->tcp.rcvq_len = 77;
		s->tcp.rcvq = bytes(77, 2);
		s->tcp.mss = 1448;
		s->tcp.wscale = true;
		s->tcp.snd_wscale = 7;
		s->tcp.rcv_wscale = 14;
		s->tcp.sack = true;
		s->tcp.tstamp = true;
		s->tcp.ts_val = 4000000000u;
		s->tcp.window_clamp = 65535;
		s->flags |= SK_F_TSVAL | SK_F_WINDOW;
		s->tcp.win.snd_wl1 = 12300;
		s->tcp.win.snd_wnd = 64000;
		s->tcp.win.max_window = 65535;
		s->tcp.win.rcv_wnd = 65000;
		s->tcp.win.rcv_wup = 12345;
		break;
	}
	sort_opts(s);
	return s;
}

static void
assert_addr_equal(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	assert_memory_equal(a, b, sizeof(*a));
}

static void
assert_state_equal(const struct sk_state *a, const struct sk_state *b)
{
	uint32_t i;

	assert_int_equal(a->data_size, b->data_size);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->parent_id, b->parent_id);
	assert_int_equal(a->proto, b->proto);
	assert_int_equal(a->family, b->family);
	assert_int_equal(a->state, b->state);
	assert_addr_equal(&a->local, &b->local);
	assert_addr_equal(&a->remote, &b->remote);
	assert_int_equal(a->bufs.snd, b->bufs.snd);
	assert_int_equal(a->bufs.rcv, b->bufs.rcv);
	assert_int_equal(a->bufs.lock, b->bufs.lock);
	assert_int_equal(a->nopts, b->nopts);
	for (i = 0; i < a->nopts; i++) {
		const struct sk_opt *x = &a->opts[i], *y = &b->opts[i];

		if (x->id != y->id)
			fail_msg("opts[%u]: %s, expected %s", i,
			    sk_opt_name(y->id), sk_opt_name(x->id));
		assert_int_equal(x->ival, y->ival);
		assert_int_equal(x->len, y->len);
		if (x->len > 0)
			assert_memory_equal(x->data, y->data, x->len);
		else
			assert_null(y->data);
	}
	assert_int_equal(a->tcp.snd_seq, b->tcp.snd_seq);
	assert_int_equal(a->tcp.rcv_seq, b->tcp.rcv_seq);
	assert_int_equal(a->tcp.sndq_len, b->tcp.sndq_len);
	assert_int_equal(a->tcp.sndq_unsent, b->tcp.sndq_unsent);
	assert_int_equal(a->tcp.rcvq_len, b->tcp.rcvq_len);
	if (a->tcp.sndq_len)
		assert_memory_equal(a->tcp.sndq, b->tcp.sndq, a->tcp.sndq_len);
	else
		assert_null(b->tcp.sndq);
	if (a->tcp.rcvq_len)
		assert_memory_equal(a->tcp.rcvq, b->tcp.rcvq, a->tcp.rcvq_len);
	else
		assert_null(b->tcp.rcvq);
	assert_int_equal(a->tcp.mss, b->tcp.mss);
	assert_int_equal(a->tcp.snd_wscale, b->tcp.snd_wscale);
	assert_int_equal(a->tcp.rcv_wscale, b->tcp.rcv_wscale);
	assert_int_equal(a->tcp.wscale, b->tcp.wscale);
	assert_int_equal(a->tcp.sack, b->tcp.sack);
	assert_int_equal(a->tcp.tstamp, b->tcp.tstamp);
	assert_int_equal(a->tcp.ts_val, b->tcp.ts_val);
	assert_memory_equal(&a->tcp.win, &b->tcp.win, sizeof(a->tcp.win));
	assert_memory_equal(&a->tcp.path, &b->tcp.path, sizeof(a->tcp.path));
	assert_int_equal(a->tcp.window_clamp, b->tcp.window_clamp);
	assert_int_equal(a->tcp.backlog, b->tcp.backlog);
	assert_int_equal(a->tcp.end, b->tcp.end);
	assert_int_equal(a->udp.ndgrams, b->udp.ndgrams);
	for (i = 0; i < a->udp.ndgrams; i++) {
		const struct sk_dgram *x = &a->udp.dgrams[i];
		const struct sk_dgram *y = &b->udp.dgrams[i];

		assert_addr_equal(&x->from, &y->from);
		assert_addr_equal(&x->to, &y->to);
		assert_int_equal(x->len, y->len);
		if (x->len > 0)
			assert_memory_equal(x->data, y->data, x->len);
		else
			assert_null(y->data);
	}
}

/* Encode, print, parse; the decoded state (and the text in *textp). */
static struct sk_state *
round_trip(const struct sk_state *s, char **textp)
{
	struct sk_record rec;
	char err[256], *text;
	int rc;

	text = encode_text(s);
	rc = sk_json_parse(text, strlen(text), NULL, &rec, err, sizeof(err));
	if (rc != 0)
		fail_msg("refused: %s\n%s", err, text);
	assert_int_equal(rec.type, SK_REC_SOCKET);
	assert_int_equal(sk_record_pending(&rec), 0);
	if (textp != NULL)
		*textp = text;
	else
		free(text);
	return rec.u.sock;
}

/* Round trip, compare, and check the encoding is canonical. */
static void
check_round_trip(const struct sk_state *s, const char *corpus_name)
{
	struct sk_state *d;
	char *t1, *t2;

	d = round_trip(s, &t1);
	assert_state_equal(s, d);
	t2 = encode_text(d);
	assert_string_equal(t1, t2);
	if (corpus_name != NULL)
		corpus_write(corpus_name, t1);
	free(t1);
	free(t2);
	sk_state_free(d);
}

static const char *
fam_name(int family)
{
	return family == AF_INET6 ? "inet6" : "inet";
}

/* ---- round trips ---- */

static void
test_round_trip_every_state(void **unused)
{
	static const enum sk_st tcp_states[] = { SK_ST_ESTABLISHED,
	    SK_ST_FIN_WAIT1, SK_ST_FIN_WAIT2, SK_ST_CLOSE_WAIT,
	    SK_ST_LAST_ACK, SK_ST_CLOSING, SK_ST_SYN_SENT, SK_ST_LISTEN,
	    SK_ST_BOUND, SK_ST_CLOSE, SK_ST_ENDED };
	static const enum sk_st udp_states[] = { SK_ST_CLOSE, SK_ST_BOUND,
	    SK_ST_ESTABLISHED };
	static const int fams[] = { AF_INET, AF_INET6 };
	struct sk_state *s;
	char name[64];
	size_t i, f;
	int n = 0;

	(void)unused;
	for (f = 0; f < nitems(fams); f++) {
		for (i = 0; i < nitems(tcp_states); i++) {
			s = make_state(SK_PROTO_TCP, fams[f], tcp_states[i]);
			snprintf(name, sizeof(name), "tcp-%s-%s",
			    sk_st_name(tcp_states[i]), fam_name(fams[f]));
			check_round_trip(s, name);
			n++;
			if (tcp_states[i] == SK_ST_ENDED) {
				/* and a reset, with nothing left to read */
				s->tcp.end = SK_END_RESET;
				free(s->tcp.rcvq);
				s->tcp.rcvq = NULL;
				s->tcp.rcvq_len = 0;
				snprintf(name, sizeof(name),
				    "tcp-ENDED-reset-%s", fam_name(fams[f]));
				check_round_trip(s, name);
				n++;
			}
			sk_state_free(s);
		}
		for (i = 0; i < nitems(udp_states); i++) {
			s = make_state(SK_PROTO_UDP, fams[f], udp_states[i]);
			if (udp_states[i] != SK_ST_CLOSE)
				assert_int_equal(s->udp.ndgrams, 3);
			snprintf(name, sizeof(name), "udp-%s-%s",
			    sk_st_name(udp_states[i]), fam_name(fams[f]));
			check_round_trip(s, name);
			n++;
			sk_state_free(s);
		}
	}
	assert_int_equal(n, 2 * (11 + 1 + 3));
}

/* The shape of the v2 encoding, byte for byte, for a few states. */
static void
test_encoding_golden(void **unused)
{
	static const uint8_t hello[] = "hello", abc[] = "abc";
	struct sk_state *s;
	char *text;

	(void)unused;

	/* ENDED by a reset, with bytes still to read */
	s = sk_state_new();
	s->proto = SK_PROTO_TCP;
	s->family = AF_INET;
	s->state = SK_ST_ENDED;
	s->id = 9;
	set_addr(&s->local, AF_INET, "10.77.0.100", 7001);
	s->bufs.snd = 16384;
	s->bufs.rcv = 131072;
	s->tcp.end = SK_END_RESET;
	s->tcp.rcvq_len = 3;
	s->tcp.rcvq = bytes(3, 0);
	memcpy(s->tcp.rcvq, abc, 3);
	text = encode_text(s);
	assert_string_equal(text, "{\"bufs\":{\"lock\":0,\"rcv\":131072,"
	    "\"snd\":16384},\"family\":\"inet\",\"id\":9,\"local\":{\"addr\":"
	    "\"10.77.0.100\",\"port\":7001},\"proto\":\"tcp\",\"state\":"
	    "\"ENDED\",\"tcp\":{\"end\":\"reset\",\"rcvq\":{\"data\":\"YWJj\","
	    "\"len\":3}},\"type\":\"socket\",\"v\":2}");
	free(text);
	sk_state_free(s);

	/* SYN_SENT, non-blocking */
	s = sk_state_new();
	s->proto = SK_PROTO_TCP;
	s->family = AF_INET6;
	s->state = SK_ST_SYN_SENT;
	s->id = 3;
	s->flags = SK_F_REMOTE | SK_F_NONBLOCK;
	set_addr(&s->local, AF_INET6, "fd00:77::100", 40001);
	set_addr(&s->remote, AF_INET6, "fd00:77::10", 80);
	s->tcp.snd_seq = 4294967295u;
	text = encode_text(s);
	assert_string_equal(text, "{\"bufs\":{\"lock\":0,\"rcv\":0,\"snd\":0},"
	    "\"family\":\"inet6\",\"id\":3,\"local\":{\"addr\":"
	    "\"fd00:77::100\",\"port\":40001},\"nonblock\":true,\"proto\":"
	    "\"tcp\",\"remote\":{\"addr\":\"fd00:77::10\",\"port\":80},"
	    "\"state\":\"SYN_SENT\",\"tcp\":{\"isn\":4294967295},\"type\":"
	    "\"socket\",\"v\":2}");
	free(text);
	sk_state_free(s);

	/* UDP with a datagram and an option of each kind */
	s = sk_state_new();
	s->proto = SK_PROTO_UDP;
	s->family = AF_INET;
	s->state = SK_ST_BOUND;
	s->id = 5;
	set_addr(&s->local, AF_INET, "0.0.0.0", 53);
	s->bufs.snd = 212992;
	s->bufs.rcv = 425984;
	s->bufs.lock = 2;
	add_int(s, "SO_REUSEADDR", 1);
	add_int(s, "SO_MARK", 4294967295LL);
	add_int(s, "SO_RCVTIMEO", 2500000);
	add_int(s, "SO_LINGER", 0);
	add_data(s, "SO_BINDTODEVICE", "eth0", 4);
	add_data(s, "SO_ATTACH_FILTER", filter_prog, 8);
	add_int(s, "SO_PEEK_OFF", -1);
	sort_opts(s);
	add_dgram(s, "10.77.0.10", 40000, "10.77.0.100", 5, 0);
	memcpy(s->udp.dgrams[0].data, hello, 5);
	text = encode_text(s);
	assert_string_equal(text, "{\"bufs\":{\"lock\":2,\"rcv\":425984,"
	    "\"snd\":212992},\"family\":\"inet\",\"id\":5,\"local\":{\"addr\":"
	    "\"0.0.0.0\",\"port\":53},\"opts\":{\"SO_ATTACH_FILTER\":"
	    "\"KAAAAAwAAAA=\",\"SO_BINDTODEVICE\":\"eth0\",\"SO_LINGER\":0,"
	    "\"SO_MARK\":4294967295,\"SO_PEEK_OFF\":-1,\"SO_RCVTIMEO\":2500000,"
	    "\"SO_REUSEADDR\":true},\"proto\":\"udp\",\"state\":\"BOUND\","
	    "\"type\":\"socket\",\"udp\":{\"dgrams\":[{\"data\":\"aGVsbG8=\","
	    "\"from\":{\"addr\":\"10.77.0.10\",\"port\":40000},\"to\":"
	    "{\"addr\":\"10.77.0.100\",\"port\":53}}]},\"v\":2}");
	free(text);
	check_round_trip(s, NULL);
	sk_state_free(s);
}

/*
 * Every option of the engine's table, alone on a socket of each protocol
 * and family: a value the engine's check allows round-trips; an option
 * the engine refuses is refused by the decoder too, with its reason.
 */
static int
sample_value(struct sk_opt *o, enum sk_proto proto, int family,
    enum sk_st st)
{
	static const int64_t ints[] = { 1, 0, 5, 255, -1, 65535, 4294967295LL,
	    2147483647 };
	static const uint32_t lens[] = { 8, 16, 4, 24, 40, 1 };
	static uint8_t buf[64];
	char why[160];
	size_t i;

	memset(buf, 0x5a, sizeof(buf));
	switch (sk_opt_kind(o->id)) {
	case SK_OK_STRING:
		o->data = (uint8_t *)"cubic";
		o->len = 5;
		return sk_opt_check(o, proto, family, st, why, sizeof(why));
	case SK_OK_BYTES:
		o->data = buf;
		for (i = 0; i < nitems(lens); i++) {
			o->len = lens[i];
			if (sk_opt_check(o, proto, family, st, why,
			    sizeof(why)) == 0)
				return 0;
		}
		return -1;
	default:
		for (i = 0; i < nitems(ints); i++) {
			o->ival = ints[i];
			if (sk_opt_check(o, proto, family, st, why,
			    sizeof(why)) == 0)
				return 0;
		}
		return -1;
	}
}

static void
test_round_trip_every_option(void **unused)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	static const enum sk_proto protos[] = { SK_PROTO_TCP, SK_PROTO_UDP };
	unsigned id, carried = 0, refusals = 0, refused = 0, kinds = 0;
	struct sk_record rec;
	char err[256], why[160], expect[300], *text;
	size_t f, p;

	(void)unused;
	assert_true(sk_opt_count() > 100);
	for (id = 0; id < sk_opt_count(); id++) {
		int somewhere = 0;

		assert_int_equal(sk_opt_find(sk_opt_name(id)), id);
		for (p = 0; p < nitems(protos); p++)
			for (f = 0; f < nitems(fams); f++) {
				struct sk_state *s = make_state(protos[p],
				    fams[f], protos[p] == SK_PROTO_TCP ?
				    SK_ST_LISTEN : SK_ST_BOUND);
				struct sk_opt o = { .id = (uint16_t)id };
				json_t *j, *v;
				uint32_t i;

				/* this option alone */
				for (i = 0; i < s->nopts; i++)
					free(s->opts[i].data);
				s->nopts = 0;
				if (sample_value(&o, protos[p], fams[f], s->state) == 0) {
					if (o.len > 0)
						add_data(s, sk_opt_name(id),
						    o.data, o.len);
					else
						add_int(s, sk_opt_name(id),
						    o.ival);
					check_round_trip(s, NULL);
					sk_state_free(s);
					somewhere = 1;
					carried++;
					continue;
				}
				/* the engine refuses it on this socket: the
				 * decoder too, with the engine's reason */
				memset(&o, 0, sizeof(o));
				o.id = (uint16_t)id;
				switch (sk_opt_kind(id)) {
				case SK_OK_BOOL:
					v = json_true();
					o.ival = 1;
					break;
				case SK_OK_STRING:
					v = json_string("x");
					o.data = (uint8_t *)"x";
					o.len = 1;
					break;
				case SK_OK_BYTES:
					v = json_string("");
					break;
				default:
					v = json_integer(1);
					o.ival = 1;
					break;
				}
				assert_int_equal(sk_opt_check(&o, protos[p],
				    fams[f], s->state, why, sizeof(why)), -1);
				j = sk_json_encode(s);
				sk_state_free(s);
				assert_non_null(j);
				assert_int_equal(json_object_set_new(j, "opts",
				    json_pack("{s:o}", sk_opt_name(id), v)), 0);
				text = dump(j);
				json_decref(j);
				assert_int_equal(sk_json_parse(text,
				    strlen(text), NULL, &rec, err,
				    sizeof(err)), -1);
				snprintf(expect, sizeof(expect), "opts: %s",
				    why);
				assert_string_equal(err, expect);
				free(text);
				refusals++;
			}
		if (somewhere)
			kinds |= 1u << sk_opt_kind(id);
		else
			refused++;
	}
	assert_int_equal(carried + refusals, 4 * sk_opt_count());
	/* every kind is carried by some option */
	assert_int_equal(kinds, (1u << SK_OK_INT) | (1u << SK_OK_BOOL) |
	    (1u << SK_OK_TIMEVAL) | (1u << SK_OK_LINGER) |
	    (1u << SK_OK_STRING) | (1u << SK_OK_BYTES));
	/* refused on every socket: UDP_ENCAP, IP_UNICAST_IF,
	 * IPV6_UNICAST_IF, IPV6_MULTICAST_IF, IPV6_PKTINFO */
	assert_int_equal(refused, 5);
	print_message("# %u options: %u round trips, %u refusals; %u options "
	    "refused everywhere\n", sk_opt_count(), carried, refusals,
	    refused);
}

static void
test_round_trip_parent_and_optional(void **unused)
{
	struct sk_state *s;

	(void)unused;
	s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_ESTABLISHED);
	s->parent_id = 7;
	s->flags |= SK_F_PARENT;
	check_round_trip(s, "tcp-child-inet6");
	/* No window, no timestamps, no clamp, no wscale, empty queues,
	 * blocking. */
	s->flags &= ~(SK_F_WINDOW | SK_F_TSVAL | SK_F_PARENT | SK_F_NONBLOCK);
	s->parent_id = 0;
	memset(&s->tcp.win, 0, sizeof(s->tcp.win));
	s->tcp.tstamp = false;
	s->tcp.ts_val = 0;
	s->tcp.window_clamp = 0;
	s->tcp.wscale = false;
	s->tcp.snd_wscale = s->tcp.rcv_wscale = 0;
	free(s->tcp.sndq);
	free(s->tcp.rcvq);
	s->tcp.sndq = s->tcp.rcvq = NULL;
	s->tcp.sndq_len = s->tcp.sndq_unsent = s->tcp.rcvq_len = 0;
	check_round_trip(s, "tcp-ESTABLISHED-bare-inet6");
	/* a timestamp value without timestamps is carried as it is */
	s->flags |= SK_F_TSVAL;
	s->tcp.ts_val = 1;
	check_round_trip(s, NULL);
	/* extremes: every sequence number at its top, the largest clamp */
	s->tcp.snd_seq = s->tcp.rcv_seq = UINT32_MAX;
	s->tcp.window_clamp = INT_MAX;
	s->tcp.mss = 65535;
	s->flags |= SK_F_WINDOW;
	s->tcp.win.snd_wl1 = s->tcp.win.snd_wnd = s->tcp.win.max_window =
	    s->tcp.win.rcv_wnd = s->tcp.win.rcv_wup = UINT32_MAX;
	s->id = (1ULL << 53) - 1;
	s->bufs.snd = s->bufs.rcv = INT_MAX;
	s->bufs.lock = 3;
	check_round_trip(s, NULL);
	/* what the connection knew of its path, each field at its top */
	s->flags |= SK_F_PATH;
	s->tcp.path.srtt_us = s->tcp.path.mdev_us = s->tcp.path.rttvar_us =
	    120000000;
	s->tcp.path.cwnd = UINT32_MAX;
	s->tcp.path.ssthresh = INT32_MAX;
	s->tcp.path.mss = 65535;
	s->tcp.path.ts_recent = UINT32_MAX;
	s->tcp.path.ts_age = 24 * 24 * 3600 - 1;
	s->tcp.path.ecn = 15;
	check_round_trip(s, NULL);
	/* and at its bottom: no RTT sample, the MSS left to the path */
	memset(&s->tcp.path, 0, sizeof(s->tcp.path));
	s->tcp.path.cwnd = 1;
	s->tcp.path.ssthresh = 2;
	check_round_trip(s, NULL);
	sk_state_free(s);

	/* an ENDED connection that was waiting in a listener */
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ENDED);
	s->parent_id = 1;
	s->flags |= SK_F_PARENT;
	check_round_trip(s, "tcp-ENDED-child-inet");
	sk_state_free(s);

	/* the largest backlog; a listener without options */
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_LISTEN);
	s->tcp.backlog = INT_MAX;
	while (s->nopts > 0)
		free(s->opts[--s->nopts].data);
	check_round_trip(s, NULL);
	sk_state_free(s);

	/* a connected UDP socket that never bound, and so holds nothing */
	s = make_state(SK_PROTO_UDP, AF_INET, SK_ST_ESTABLISHED);
	set_addr(&s->local, AF_INET, "0.0.0.0", 0);
	while (s->udp.ndgrams > 0)
		free(s->udp.dgrams[--s->udp.ndgrams].data);
	check_round_trip(s, "udp-ESTABLISHED-unbound-inet");
	sk_state_free(s);
}

/* Datagrams: over both families, from many senders, of every size. */
static void
test_round_trip_dgrams(void **unused)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	struct sk_state *s;
	char name[64];
	size_t f;
	int i;

	(void)unused;
	for (f = 0; f < nitems(fams); f++) {
		int v6 = fams[f] == AF_INET6;

		s = make_state(SK_PROTO_UDP, fams[f], SK_ST_ESTABLISHED);
		for (i = 0; i < 40; i++)
			add_dgram(s, v6 ? "fd00:77::10" : "10.77.0.10",
			    (uint16_t)(1 + i * 1000), v6 ? "fd00:77::100" :
			    "10.77.0.100", (uint32_t)(i * 37), (uint32_t)i);
		add_dgram(s, v6 ? "::ffff:10.0.0.1" : "255.255.255.255", 65535,
		    v6 ? "ff02::1" : "224.0.0.1", 65535, 9);
		snprintf(name, sizeof(name), "udp-dgrams-%s",
		    fam_name(fams[f]));
		check_round_trip(s, name);
		sk_state_free(s);
	}
}

static void
test_round_trip_ns_records(void **unused)
{
	struct sk_link l = { "eth0", "veth", { 0x52, 0x54, 0, 0x77, 1, 0 },
	    1500 };
	struct sk_ifaddr a = { "eth0", AF_INET6, { 0 }, 64 };
	struct sk_route r = { AF_INET, { 0 }, 0, true, { 10, 77, 0, 254 },
	    "eth0", 100, 254 };
	struct sk_record rec;
	char err[256], *text;
	json_t *j;

	(void)unused;
	inet_pton(AF_INET6, "fd00:77::100", a.addr);

	j = sk_json_encode_link(&l);
	text = dump(j);
	json_decref(j);
	assert_non_null(strstr(text, "\"v\":2"));
	corpus_write("ns-link", text);
	assert_int_equal(sk_json_parse(text, strlen(text), NULL, &rec, err,
	    sizeof(err)), 0);
	free(text);
	assert_int_equal(rec.type, SK_REC_LINK);
	assert_string_equal(rec.u.link.name, l.name);
	assert_string_equal(rec.u.link.kind, l.kind);
	assert_memory_equal(rec.u.link.mac, l.mac, 6);
	assert_int_equal(rec.u.link.mtu, l.mtu);
	assert_int_equal(sk_record_pending(&rec), 0);

	j = sk_json_encode_addr(&a);
	text = dump(j);
	json_decref(j);
	corpus_write("ns-addr", text);
	assert_int_equal(sk_json_parse(text, strlen(text), NULL, &rec, err,
	    sizeof(err)), 0);
	free(text);
	assert_int_equal(rec.type, SK_REC_ADDR);
	assert_string_equal(rec.u.addr.dev, a.dev);
	assert_int_equal(rec.u.addr.family, a.family);
	assert_memory_equal(rec.u.addr.addr, a.addr, 16);
	assert_int_equal(rec.u.addr.prefix, a.prefix);

	j = sk_json_encode_route(&r);
	text = dump(j);
	json_decref(j);
	corpus_write("ns-route", text);
	assert_int_equal(sk_json_parse(text, strlen(text), NULL, &rec, err,
	    sizeof(err)), 0);
	free(text);
	assert_int_equal(rec.type, SK_REC_ROUTE);
	assert_int_equal(rec.u.route.family, r.family);
	assert_memory_equal(rec.u.route.dst, r.dst, 4);
	assert_int_equal(rec.u.route.prefix, r.prefix);
	assert_true(rec.u.route.has_gateway);
	assert_memory_equal(rec.u.route.gateway, r.gateway, 4);
	assert_string_equal(rec.u.route.dev, r.dev);
	assert_int_equal(rec.u.route.metric, r.metric);
	assert_int_equal(rec.u.route.table, r.table);
}

/*
 * The options travel as a JSON object, whose key order is the sender's
 * (sorted here); the decoder gives them back in table order, the order
 * the engine applies them in (IP_TOS before SO_PRIORITY, which setting
 * IP_TOS changes).
 */
static void
test_opts_table_order(void **unused)
{
	static const char text[] = "{\"v\":2,\"type\":\"socket\",\"id\":1,"
	    "\"proto\":\"tcp\",\"family\":\"inet\",\"state\":\"BOUND\","
	    "\"local\":{\"addr\":\"10.77.0.100\",\"port\":80},"
	    "\"bufs\":{\"snd\":0,\"rcv\":0,\"lock\":0},\"opts\":{"
	    "\"TCP_NODELAY\":true,\"SO_PRIORITY\":6,\"IP_TOS\":16,"
	    "\"SO_LOCK_FILTER\":true,\"SO_ATTACH_FILTER\":\"\","
	    "\"SO_REUSEADDR\":true}}";
	struct sk_record rec;
	char err[256];
	uint32_t i;

	(void)unused;
	if (sk_json_parse(text, strlen(text), NULL, &rec, err,
	    sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(rec.u.sock->nopts, 6);
	for (i = 1; i < rec.u.sock->nopts; i++)
		if (rec.u.sock->opts[i - 1].id >= rec.u.sock->opts[i].id)
			fail_msg("opts[%u] %s before opts[%u] %s", i - 1,
			    sk_opt_name(rec.u.sock->opts[i - 1].id), i,
			    sk_opt_name(rec.u.sock->opts[i].id));
	assert_true(rec.u.sock->opts[0].id == opt_id("SO_REUSEADDR"));
	assert_true(rec.u.sock->opts[1].id == opt_id("SO_ATTACH_FILTER"));
	assert_int_equal(rec.u.sock->opts[1].len, 0);	/* empty filter */
	assert_null(rec.u.sock->opts[1].data);
	sk_record_clear(&rec);
}

/* ---- malformed records ---- */

enum base {
	B_EST4,		/* TCP ESTABLISHED inet */
	B_EST6,		/* TCP ESTABLISHED inet6 */
	B_LISTEN,	/* TCP LISTEN inet */
	B_SYN,		/* TCP SYN_SENT inet */
	B_ENDED,	/* TCP ENDED (fin) inet */
	B_BOUND,	/* TCP BOUND inet */
	B_CLOSE,	/* TCP CLOSE inet */
	B_UDP4,		/* UDP ESTABLISHED inet, 3 datagrams */
	B_UDP6,		/* UDP ESTABLISHED inet6, 3 datagrams */
	B_UDPCLOSE,	/* UDP CLOSE inet6 */
	B__MAX
};

struct bad_case {
	enum base	 base;
	const char	*path;		/* dotted path to change */
	const char	*value;		/* JSON text, NULL = delete */
	const char	*expect;	/* exact refusal message */
	uint32_t	 max_queue;	/* limits (0: default) */
	bool		 chunks;
	bool		 decode_only;	/* text the parser refuses */
};

#define BAD(b, p, v, e) \
	{ .base = b, .path = p, .value = v, .expect = e }
#define BADX(b, p, v, e, ...) \
	{ .base = b, .path = p, .value = v, .expect = e, __VA_ARGS__ }
#define BIG_B64	"\"AAAAAAAAAAAAAAAAAAAA\""
/* a tcp.path without srtt_us, valid otherwise */
#define PATH_REST	"\"mdev_us\":1,\"rttvar_us\":1,\"cwnd\":10," \
	"\"ssthresh\":2147483647,\"mss\":1448,\"ts_recent\":5," \
	"\"ts_age\":0,\"ecn\":1"

static const struct bad_case bad_cases[] = {
	/* every record */
	BAD(B_EST4, "v", "1",
	  "v: version 1 not supported (this side speaks 2)"),
	BAD(B_EST4, "v", "3",
	  "v: version 3 not supported (this side speaks 2)"),
	BAD(B_EST4, "v", NULL, "v: missing"),
	BAD(B_EST4, "v", "\"2\"", "v: not an integer"),
	BAD(B_EST4, "v", "2.0", "v: not an integer"),
	BAD(B_EST4, "type", "\"sock\"", "type: unknown record type \"sock\""),
	BAD(B_EST4, "type", NULL, "type: missing"),
	BAD(B_EST4, "extra", "1", "extra: unknown field"),
	BAD(B_EST4, "id", "-1", "id: -1 out of range 0..9007199254740991"),
	BAD(B_EST4, "id", "9007199254740992",
	  "id: 9007199254740992 out of range 0..9007199254740991"),
	BAD(B_EST4, "proto", "\"sctp\"",
	  "proto: invalid character at offset 0"),
	BAD(B_EST4, "proto", "\"udt\"", "proto: \"udt\" is not tcp or udp"),
	BAD(B_EST4, "family", "\"inet4\"",
	  "family: invalid character at offset 4"),
	BAD(B_EST4, "family", "\"inet6\"", "local.addr: not an IPv6 address"),
	/* states */
	BAD(B_EST4, "state", "\"SYN_RECV\"",
	  "state: SYN_RECV cannot be restored for tcp"),
	BAD(B_EST4, "state", "\"TIME_WAIT\"",
	  "state: TIME_WAIT cannot be restored for tcp"),
	BAD(B_EST4, "state", "\"NEW_SYN_RECV\"",
	  "state: NEW_SYN_RECV cannot be restored for tcp"),
	BAD(B_EST4, "state", "\"BOGUS\"", "state: unknown state \"BOGUS\""),
	BAD(B_EST4, "state", "\"established\"",
	  "state: invalid character at offset 0"),
	BAD(B_EST4, "state", "7", "state: not a string"),
	BAD(B_UDP4, "state", "\"ENDED\"",
	  "state: ENDED cannot be restored for udp"),
	BAD(B_UDP4, "state", "\"LISTEN\"",
	  "state: LISTEN cannot be restored for udp"),
	BAD(B_UDP4, "state", "\"SYN_SENT\"",
	  "state: SYN_SENT cannot be restored for udp"),
	/* addresses */
	BAD(B_EST4, "local.port", "70000",
	  "local.port: 70000 out of range 1..65535"),
	BAD(B_EST4, "local.port", "0", "local.port: 0 out of range 1..65535"),
	BAD(B_EST4, "local.addr", "\"10.77.0.300\"",
	  "local.addr: not an IPv4 address"),
	BAD(B_EST4, "local.addr", "\"fd00::1\"",
	  "local.addr: not an IPv4 address"),
	BAD(B_EST6, "local.addr", "\"fe80::1%eth0\"",
	  "local.addr: invalid character at offset 7"),
	BAD(B_EST4, "local.zone", "1", "local.zone: unknown field"),
	BAD(B_EST4, "local", "\"10.77.0.100:8080\"", "local: not an object"),
	BAD(B_EST4, "remote", NULL, "remote: missing"),
	BAD(B_EST4, "remote.port", "0", "remote.port: 0 out of range 1..65535"),
	BAD(B_EST6, "remote.addr", "\"10.77.0.10\"",
	  "remote.addr: not an IPv6 address"),
	BAD(B_LISTEN, "remote", "{\"addr\":\"10.77.0.10\",\"port\":1}",
	  "remote: not allowed in state LISTEN"),
	BAD(B_CLOSE, "local.port", "1", "local.port: must be 0 in state CLOSE"),
	/* parent, nonblock */
	BAD(B_EST4, "parent", "\"3\"", "parent: not an integer"),
	BAD(B_EST4, "parent", "-3",
	  "parent: -3 out of range 0..9007199254740991"),
	BAD(B_LISTEN, "parent", "3", "parent: only for a TCP connection"),
	BAD(B_SYN, "parent", "3", "parent: only for a TCP connection"),
	BAD(B_UDP4, "parent", "3", "parent: only for a TCP connection"),
	BAD(B_EST4, "nonblock", "1", "nonblock: not a boolean"),
	BAD(B_EST4, "nonblock", "\"true\"", "nonblock: not a boolean"),
	/* bufs */
	BAD(B_EST4, "bufs", NULL, "bufs: missing"),
	BAD(B_EST4, "bufs", "[]", "bufs: not an object"),
	BAD(B_EST4, "bufs.snd", "-1",
	  "bufs.snd: -1 out of range 0..2147483647"),
	BAD(B_EST4, "bufs.rcv", "2147483648",
	  "bufs.rcv: 2147483648 out of range 0..2147483647"),
	BAD(B_EST4, "bufs.lock", "4", "bufs.lock: 4 out of range 0..3"),
	BAD(B_EST4, "bufs.lock", NULL, "bufs.lock: missing"),
	BAD(B_EST4, "bufs.auto", "true", "bufs.auto: unknown field"),
	/* options: names */
	BAD(B_EST4, "opts", "[]", "opts: not an object"),
	BAD(B_EST4, "opts.NO_SUCH_OPTION", "1",
	  "opts.NO_SUCH_OPTION: unknown option"),
	BAD(B_EST4, "opts.tcp_nodelay", "true",
	  "opts.tcp_nodelay: unknown option"),
	BAD(B_EST4, "opts.SO_BUF_LOCK", "3",
	  "opts.SO_BUF_LOCK: unknown option"),
	BAD(B_EST4, "opts.TCP_MD5SIG", "\"\"",
	  "opts.TCP_MD5SIG: unknown option"),
	/* options: kinds */
	BAD(B_EST4, "opts.TCP_NODELAY", "1", "opts.TCP_NODELAY: not a boolean"),
	BAD(B_EST4, "opts.SO_MARK", "true", "opts.SO_MARK: not an integer"),
	BAD(B_EST4, "opts.SO_MARK", "\"7\"", "opts.SO_MARK: not an integer"),
	BAD(B_EST4, "opts.SO_RCVTIMEO", "1.5",
	  "opts.SO_RCVTIMEO: not an integer"),
	BAD(B_EST4, "opts.SO_RCVTIMEO", "{\"sec\":1}",
	  "opts.SO_RCVTIMEO: not an integer"),
	BAD(B_EST4, "opts.SO_LINGER", "false",
	  "opts.SO_LINGER: not an integer"),
	BAD(B_EST4, "opts.TCP_CONGESTION", "7",
	  "opts.TCP_CONGESTION: not a string of at most 255 bytes"),
	BAD(B_EST4, "opts.SO_ATTACH_FILTER", "[40,0,0,12]",
	  "opts.SO_ATTACH_FILTER: not base64 of at most 32768 bytes"),
	/* options: values */
	BAD(B_EST4, "opts.SO_MARK", "4294967296",
	  "opts: SO_MARK: 4294967296 out of range 0..4294967295"),
	BAD(B_EST4, "opts.SO_MARK", "-1",
	  "opts: SO_MARK: -1 out of range 0..4294967295"),
	BAD(B_EST4, "opts.TCP_KEEPCNT", "128",
	  "opts: TCP_KEEPCNT: 128 out of range 1..127"),
	BAD(B_EST4, "opts.TCP_KEEPIDLE", "0",
	  "opts: TCP_KEEPIDLE: 0 out of range 1..32767"),
	BAD(B_EST4, "opts.IP_TOS", "256",
	  "opts: IP_TOS: 256 out of range 0..255"),
	BAD(B_EST4, "opts.SO_RCVTIMEO", "-1",
	  "opts: SO_RCVTIMEO: -1 out of range 0..4611686018427387903"),
	BAD(B_EST4, "opts.SO_LINGER", "-2",
	  "opts: SO_LINGER: -2 out of range -1..2147483647"),
	BAD(B_EST4, "opts.SO_LINGER", "2147483648",
	  "opts: SO_LINGER: 2147483648 out of range -1..2147483647"),
	BAD(B_EST4, "opts.TCP_CONGESTION", "\"\"",
	  "opts.TCP_CONGESTION: empty"),
	BAD(B_EST4, "opts.SO_BINDTODEVICE", "\"\"",
	  "opts.SO_BINDTODEVICE: empty"),
	BAD(B_EST4, "opts.TCP_CONGESTION", "\"aaaaaaaaaaaaaaaa\"",
	  "opts: TCP_CONGESTION: a value of 16 bytes"),
	BADX(B_EST4, "opts.TCP_CONGESTION", "\"cu\\u0000bic\"",
	  "opts: TCP_CONGESTION: a value of 6 bytes", .decode_only = true),
	BAD(B_EST4, "opts.SO_BINDTODEVICE", "\"0123456789abcdef\"",
	  "opts: SO_BINDTODEVICE: a value of 16 bytes"),
	BAD(B_EST4, "opts.SO_ATTACH_FILTER", "\"AAAA\"",
	  "opts: SO_ATTACH_FILTER: a value of 3 bytes"),
	BAD(B_EST4, "opts.SO_ATTACH_FILTER", "\"!!!!\"",
	  "opts.SO_ATTACH_FILTER: invalid base64 character at offset 0"),
	BAD(B_EST4, "opts.SO_ATTACH_FILTER", "\"KAAAAAwAAAA\"",
	  "opts.SO_ATTACH_FILTER: base64 length 11 not a multiple of 4"),
	BAD(B_EST4, "opts.SO_ATTACH_FILTER", "\"KAAAAAwAAAB=\"",
	  "opts.SO_ATTACH_FILTER: non-canonical base64 padding"),
	BAD(B_LISTEN, "opts.TCP_FASTOPEN_KEY", "\"AAAAAAAAAAA=\"",
	  "opts: TCP_FASTOPEN_KEY: a value of 8 bytes"),
	BAD(B_UDP4, "opts.IP_MULTICAST_IF", "\"CgAA\"",
	  "opts: IP_MULTICAST_IF: a value of 3 bytes"),
	/* options: refused by the engine */
	BAD(B_UDP4, "opts.UDP_ENCAP", "1",
	  "opts: UDP_ENCAP: UDP_ENCAP hands datagrams to a tunnel in the kernel"),
	BAD(B_UDP4, "opts.UDP_ENCAP", "0",
	  "opts: UDP_ENCAP: UDP_ENCAP hands datagrams to a tunnel in the kernel"),
	BAD(B_EST4, "opts.IP_UNICAST_IF", "3",
	  "opts: IP_UNICAST_IF: IP_UNICAST_IF names an interface by its index"),
	BAD(B_EST6, "opts.IPV6_UNICAST_IF", "3",
	  "opts: IPV6_UNICAST_IF: IPV6_UNICAST_IF names an interface by its index"),
	BAD(B_UDP6, "opts.IPV6_MULTICAST_IF", "2",
	  "opts: IPV6_MULTICAST_IF: IPV6_MULTICAST_IF names an interface by "
	  "its index"),
	BAD(B_UDP6, "opts.IPV6_PKTINFO", "\"\"",
	  "opts: IPV6_PKTINFO: a sticky IPV6_PKTINFO names an interface by its "
	  "index"),
	/* options: of another protocol or family */
	BAD(B_UDP4, "opts.TCP_NODELAY", "true",
	  "opts: TCP_NODELAY: not an option of an inet udp socket"),
	BAD(B_UDP6, "opts.TCP_CONGESTION", "\"cubic\"",
	  "opts: TCP_CONGESTION: not an option of an inet6 udp socket"),
	BAD(B_EST4, "opts.UDP_CORK", "true",
	  "opts: UDP_CORK: not an option of an inet tcp socket"),
	BAD(B_EST4, "opts.UDP_ENCAP", "1",
	  "opts: UDP_ENCAP: not an option of an inet tcp socket"),
	BAD(B_EST4, "opts.IPV6_V6ONLY", "true",
	  "opts: IPV6_V6ONLY: not an option of an inet tcp socket"),
	BAD(B_UDP4, "opts.IPV6_V6ONLY", "false",
	  "opts: IPV6_V6ONLY: not an option of an inet udp socket"),
	BAD(B_EST6, "opts.IP_TTL", "64",
	  "opts: IP_TTL: not an option of an inet6 tcp socket"),
	BAD(B_UDP4, "opts.UDP_NO_CHECK6_RX", "true",
	  "opts: UDP_NO_CHECK6_RX: not an option of an inet udp socket"),
	/* options: for a listener, or an unconnected socket, only */
	BAD(B_EST4, "opts.TCP_DEFER_ACCEPT", "5",
	  "opts: TCP_DEFER_ACCEPT: not an option of a socket in state "
	  "ESTABLISHED"),
	BAD(B_EST6, "opts.TCP_MAXSEG", "1400",
	  "opts: TCP_MAXSEG: not an option of a socket in state ESTABLISHED"),
	BAD(B_EST4, "opts.TCP_WINDOW_CLAMP", "65535",
	  "opts: TCP_WINDOW_CLAMP: not an option of a socket in state "
	  "ESTABLISHED"),
	BAD(B_EST4, "opts.TCP_FASTOPEN", "5",
	  "opts: TCP_FASTOPEN: not an option of a socket in state "
	  "ESTABLISHED"),
	/* tcp: connections */
	BAD(B_EST4, "tcp", NULL, "tcp: missing"),
	BAD(B_EST4, "tcp", "[]", "tcp: not an object"),
	BAD(B_EST4, "tcp.backlog", "5", "tcp.backlog: unknown field"),
	BAD(B_EST4, "tcp.end", "\"fin\"", "tcp.end: unknown field"),
	BAD(B_EST4, "tcp.snd_wscale", "15",
	  "tcp.snd_wscale: 15 out of range 0..14"),
	BAD(B_EST4, "tcp.rcv_wscale", "-1",
	  "tcp.rcv_wscale: -1 out of range 0..14"),
	BAD(B_EST4, "tcp.wscale", "false",
	  "tcp.snd_wscale: must be 0 without wscale"),
	BAD(B_EST4, "tcp.mss", "87", "tcp.mss: 87 out of range 88..65535"),
	BAD(B_EST4, "tcp.mss", "65536",
	  "tcp.mss: 65536 out of range 88..65535"),
	BAD(B_EST4, "tcp.snd_seq", "4294967296",
	  "tcp.snd_seq: 4294967296 out of range 0..4294967295"),
	BAD(B_EST4, "tcp.rcv_seq", "-1",
	  "tcp.rcv_seq: -1 out of range 0..4294967295"),
	BAD(B_EST4, "tcp.rcv_seq", NULL, "tcp.rcv_seq: missing"),
	BAD(B_EST4, "tcp.sack", "null", "tcp.sack: not a boolean"),
	BAD(B_EST4, "tcp.tstamp", NULL, "tcp.tstamp: missing"),
	BAD(B_EST4, "tcp.ts_val", NULL, "tcp.ts_val: missing"),
	BAD(B_EST4, "tcp.ts_val", "null", "tcp.ts_val: not an integer"),
	BAD(B_EST4, "tcp.ts_val", "1e3", "tcp.ts_val: not an integer"),
	BAD(B_EST4, "tcp.ts_val", "4294967296",
	  "tcp.ts_val: 4294967296 out of range 0..4294967295"),
	BAD(B_EST4, "tcp.window_clamp", "-1",
	  "tcp.window_clamp: -1 out of range 0..2147483647"),
	BAD(B_EST4, "tcp.window_clamp", "2147483648",
	  "tcp.window_clamp: 2147483648 out of range 0..2147483647"),
	BAD(B_EST4, "tcp.window.max_window", "1",
	  "tcp.window.max_window: 1 below snd_wnd 64000"),
	BAD(B_EST4, "tcp.window.rcv_wup", NULL, "tcp.window.rcv_wup: missing"),
	BAD(B_EST4, "tcp.window.scale", "1", "tcp.window.scale: unknown field"),
	BAD(B_EST4, "tcp.window", "7", "tcp.window: not an object"),
	/* tcp: the path (TCP_REPAIR_PATH), within the kernel's ranges */
	BAD(B_EST4, "tcp.path", "7", "tcp.path: not an object"),
	BAD(B_EST4, "tcp.path", "{" PATH_REST ",\"srtt_us\":1,\"x\":1}",
	  "tcp.path.x: unknown field"),
	BAD(B_EST4, "tcp.path", "{" PATH_REST "}", "tcp.path.srtt_us: missing"),
	BAD(B_EST4, "tcp.path", "{" PATH_REST ",\"srtt_us\":120000001}",
	  "tcp.path.srtt_us: 120000001 out of range 0..120000000"),
	BAD(B_EST4, "tcp.path", "{\"srtt_us\":1,\"mdev_us\":1,"
	  "\"rttvar_us\":1,\"cwnd\":0,\"ssthresh\":2,\"mss\":0,"
	  "\"ts_recent\":0,\"ts_age\":0,\"ecn\":0}",
	  "tcp.path.cwnd: 0 out of range 1..4294967295"),
	BAD(B_EST4, "tcp.path", "{\"srtt_us\":1,\"mdev_us\":1,"
	  "\"rttvar_us\":1,\"cwnd\":1,\"ssthresh\":1,\"mss\":0,"
	  "\"ts_recent\":0,\"ts_age\":0,\"ecn\":0}",
	  "tcp.path.ssthresh: 1 out of range 2..2147483647"),
	BAD(B_EST4, "tcp.path", "{\"srtt_us\":1,\"mdev_us\":1,"
	  "\"rttvar_us\":1,\"cwnd\":1,\"ssthresh\":2,\"mss\":0,"
	  "\"ts_recent\":0,\"ts_age\":2073600,\"ecn\":0}",
	  "tcp.path.ts_age: 2073600 out of range 0..2073599"),
	BAD(B_EST4, "tcp.path", "{\"srtt_us\":1,\"mdev_us\":1,"
	  "\"rttvar_us\":1,\"cwnd\":1,\"ssthresh\":2,\"mss\":0,"
	  "\"ts_recent\":0,\"ts_age\":0,\"ecn\":16}",
	  "tcp.path.ecn: 16 out of range 0..15"),
	BAD(B_EST4, "tcp.path", "{\"srtt_us\":1,\"mdev_us\":1,"
	  "\"rttvar_us\":1,\"cwnd\":1,\"ssthresh\":2,\"mss\":0,"
	  "\"ts_recent\":0,\"ts_age\":0,\"ecn\":2}",
	  "tcp.path.ecn: 2 without ECN negotiated"),
	/* tcp: queues, and base64 that lies about its length */
	BAD(B_EST4, "tcp.sndq.len", "1001",
	  "tcp.sndq.data: decodes to 1000 bytes, len is 1001"),
	BAD(B_EST4, "tcp.sndq.len", "1003",
	  "tcp.sndq.data: 1336 base64 characters for len 1003 (expected 1340)"),
	BAD(B_EST4, "tcp.sndq.len", "1002",
	  "tcp.sndq.data: decodes to 1000 bytes, len is 1002"),
	BAD(B_EST4, "tcp.sndq.len", "999",
	  "tcp.sndq.data: 1336 base64 characters for len 999 (expected 1332)"),
	BAD(B_EST4, "tcp.sndq.len", "0",
	  "tcp.sndq.unsent: 300 out of range 0..0"),
	BAD(B_EST4, "tcp.sndq.data", "\"!!!!\"",
	  "tcp.sndq.data: 4 base64 characters for len 1000 (expected 1336)"),
	BAD(B_EST4, "tcp.sndq.len", "33554433",
	  "tcp.sndq.len: 33554433 out of range 0..33554432"),
	BAD(B_EST4, "tcp.sndq.unsent", "1001",
	  "tcp.sndq.unsent: 1001 out of range 0..1000"),
	BAD(B_EST4, "tcp.sndq.unsent", NULL, "tcp.sndq.unsent: missing"),
	BAD(B_EST4, "tcp.sndq.data", "7", "tcp.sndq.data: not a string"),
	BAD(B_EST4, "tcp.sndq.data", NULL, "tcp.sndq.data: missing"),
	BAD(B_EST4, "tcp.sndq", NULL, "tcp.sndq: missing"),
	BAD(B_EST4, "tcp.rcvq.len", "79",
	  "tcp.rcvq.data: 104 base64 characters for len 79 (expected 108)"),
	BAD(B_EST4, "tcp.rcvq.len", "76",
	  "tcp.rcvq.data: decodes to 77 bytes, len is 76"),
	BAD(B_EST4, "tcp.rcvq.unsent", "0", "tcp.rcvq.unsent: unknown field"),
	BAD(B_EST4, "tcp.rcvq.len", NULL, "tcp.rcvq.len: missing"),
	/* chunks: only when the limits allow them */
	BAD(B_EST4, "tcp.sndq.chunks", "true",
	  "tcp.sndq.chunks: not allowed here"),
	BAD(B_EST4, "tcp.rcvq.chunks", "true",
	  "tcp.rcvq.chunks: not allowed here"),
	BAD(B_ENDED, "tcp.rcvq.chunks", "true",
	  "tcp.rcvq.chunks: not allowed here"),
	BAD(B_UDP4, "udp.dgrams", "3", "udp.dgrams: chunks not allowed here"),
	BADX(B_EST4, "tcp.sndq.chunks", "true",
	  "tcp.sndq.data: not with chunks",
	  .chunks = true),
	BADX(B_EST4, "tcp.sndq.chunks", "false",
	  "tcp.sndq.chunks: not allowed here", .chunks = true),
	BADX(B_EST4, "tcp.sndq.chunks", "1", "tcp.sndq.chunks: not a boolean",
	  .chunks = true),
	BADX(B_UDP4, "udp.dgrams", "0", "udp.dgrams: 0 out of range 1..65536",
	  .chunks = true),
	BADX(B_UDP4, "udp.dgrams", "65537",
	  "udp.dgrams: 65537 out of range 1..65536", .chunks = true),
	BADX(B_EST4, "tcp.sndq.len", "1001",
	  "tcp.sndq.len: 1001 out of range 0..1000", .max_queue = 1000,
	  .chunks = true),
	/* tcp: states of their own */
	BAD(B_LISTEN, "tcp.backlog", "-1",
	  "tcp.backlog: -1 out of range 0..2147483647"),
	BAD(B_LISTEN, "tcp.backlog", "2147483648",
	  "tcp.backlog: 2147483648 out of range 0..2147483647"),
	BAD(B_LISTEN, "tcp.backlog", NULL, "tcp.backlog: missing"),
	BAD(B_LISTEN, "tcp.snd_seq", "1", "tcp.snd_seq: unknown field"),
	BAD(B_LISTEN, "tcp", NULL, "tcp: missing"),
	BAD(B_SYN, "remote", NULL, "remote: missing"),
	BAD(B_SYN, "tcp.isn", NULL, "tcp.isn: missing"),
	BAD(B_SYN, "tcp.isn", "4294967296",
	  "tcp.isn: 4294967296 out of range 0..4294967295"),
	BAD(B_SYN, "tcp.sndq", "{\"len\":0,\"unsent\":0,\"data\":\"\"}",
	  "tcp.sndq: unknown field"),
	BAD(B_SYN, "tcp", NULL, "tcp: missing"),
	BAD(B_ENDED, "tcp.end", "\"close\"",
	  "tcp.end: \"close\" is not fin or reset"),
	BAD(B_ENDED, "tcp.end", "\"none\"",
	  "tcp.end: \"none\" is not fin or reset"),
	BAD(B_ENDED, "tcp.end", "\"FIN\"",
	  "tcp.end: invalid character at offset 0"),
	BAD(B_ENDED, "tcp.end", "\"\"", "tcp.end: length 0 out of range 1..15"),
	BAD(B_ENDED, "tcp.end", "1", "tcp.end: not a string"),
	BAD(B_ENDED, "tcp.end", NULL, "tcp.end: missing"),
	BAD(B_ENDED, "tcp.rcvq", NULL, "tcp.rcvq: missing"),
	BAD(B_ENDED, "tcp.sndq", "{\"len\":0,\"unsent\":0,\"data\":\"\"}",
	  "tcp.sndq: unknown field"),
	BAD(B_ENDED, "tcp.snd_seq", "1", "tcp.snd_seq: unknown field"),
	BAD(B_ENDED, "remote", "{\"addr\":\"10.77.0.10\",\"port\":40000}",
	  "remote: not allowed in state ENDED"),
	BAD(B_ENDED, "tcp.rcvq.len", "78",
	  "tcp.rcvq.data: decodes to 77 bytes, len is 78"),
	BAD(B_ENDED, "local.port", "0", "local.port: 0 out of range 1..65535"),
	BAD(B_BOUND, "tcp", "{}", "tcp: not allowed in state BOUND"),
	BAD(B_CLOSE, "tcp", "{}", "tcp: not allowed in state CLOSE"),
	BAD(B_EST4, "udp", "{}", "udp: not allowed for tcp"),
	BAD(B_BOUND, "udp", "{\"dgrams\":[]}", "udp: not allowed for tcp"),
	/* udp */
	BAD(B_UDP4, "tcp", "{}", "tcp: not allowed for udp"),
	BAD(B_UDP4, "udp", "[]", "udp: not an object"),
	BAD(B_UDP4, "udp.rcvq_dropped", "0", "udp.rcvq_dropped: unknown field"),
	BAD(B_UDP4, "udp.dgrams", "\"x\"",
	  "udp.dgrams: not an array of at most 65536"),
	BAD(B_UDP4, "udp.dgrams", NULL,
	  "udp.dgrams: not an array of at most 65536"),
	BAD(B_UDP4, "udp.dgrams.0", "5", "udp.dgrams[0]: not an object"),
	BAD(B_UDP4, "udp.dgrams.1.to.port", "9",
	  "udp.dgrams[1].to: not the socket's port 8080"),
	BAD(B_UDP6, "udp.dgrams.2.to.port", "8081",
	  "udp.dgrams[2].to: not the socket's port 8080"),
	BAD(B_UDP4, "udp.dgrams.0.to", NULL, "udp.dgrams[0].to: missing"),
	BAD(B_UDP4, "udp.dgrams.0.from", NULL, "udp.dgrams[0].from: missing"),
	BAD(B_UDP4, "udp.dgrams.0.from.port", "0",
	  "udp.dgrams[0].from.port: 0 out of range 1..65535"),
	BAD(B_UDP6, "udp.dgrams.0.from.addr", "\"10.77.0.10\"",
	  "udp.dgrams[0].from.addr: not an IPv6 address"),
	BAD(B_UDP4, "udp.dgrams.0.len", "100",
	  "udp.dgrams[0].len: unknown field"),
	BAD(B_UDP4, "udp.dgrams.0.data", "\"AAA\"",
	  "udp.dgrams[0].data: base64 length 3 not a multiple of 4"),
	BAD(B_UDP4, "udp.dgrams.0.data", "\"YR==\"",
	  "udp.dgrams[0].data: non-canonical base64 padding"),
	BAD(B_UDP4, "udp.dgrams.0.data", "\"YQ==YQ==\"",
	  "udp.dgrams[0].data: invalid base64 character at offset 2"),
	BAD(B_UDP4, "udp.dgrams.0.data", NULL,
	  "udp.dgrams[0].data: not base64 of at most 65535 bytes"),
	BAD(B_UDP4, "udp.dgrams.0.data", "7",
	  "udp.dgrams[0].data: not base64 of at most 65535 bytes"),
	BADX(B_UDP4, "udp.dgrams.0.data", BIG_B64,
	  "udp.dgrams[0].data: the datagrams hold more than 10 bytes",
	  .max_queue = 10),
	BADX(B_UDP4, "udp.dgrams.2.data", BIG_B64,
	  "udp.dgrams[2].data: the datagrams hold more than 114 bytes",
	  .max_queue = 114),
	BAD(B_UDPCLOSE, "udp", "{\"dgrams\":[]}",
	  "udp: an unbound socket has no datagrams"),
	BAD(B_UDPCLOSE, "local.port", "53",
	  "local.port: must be 0 in state CLOSE"),
	BAD(B_UDPCLOSE, "remote", "{\"addr\":\"::1\",\"port\":53}",
	  "remote: not allowed in state CLOSE"),
	BAD(B_UDP4, "remote", NULL, "remote: missing"),
};

static json_t *
base_doc(enum base b)
{
	static json_t *docs[B__MAX];
	struct sk_state *s = NULL;

	if (b == B__MAX) {
		/* free them all */
		for (b = 0; b < B__MAX; b++) {
			json_decref(docs[b]);
			docs[b] = NULL;
		}
		return NULL;
	}
	if (docs[b] != NULL)
		return docs[b];
	switch (b) {
	case B_EST4:
		s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ESTABLISHED);
		break;
	case B_EST6:
		s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_ESTABLISHED);
		break;
	case B_LISTEN:
		s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_LISTEN);
		break;
	case B_SYN:
		s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_SYN_SENT);
		break;
	case B_ENDED:
		s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ENDED);
		break;
	case B_BOUND:
		s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_BOUND);
		break;
	case B_CLOSE:
		s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_CLOSE);
		break;
	case B_UDP4:
		s = make_state(SK_PROTO_UDP, AF_INET, SK_ST_ESTABLISHED);
		break;
	case B_UDP6:
		s = make_state(SK_PROTO_UDP, AF_INET6, SK_ST_ESTABLISHED);
		break;
	case B_UDPCLOSE:
		s = make_state(SK_PROTO_UDP, AF_INET6, SK_ST_CLOSE);
		break;
	case B__MAX:
		break;
	}
	docs[b] = sk_json_encode(s);
	assert_non_null(docs[b]);
	sk_state_free(s);
	return docs[b];
}

/* Set (or delete) a dotted path in doc; numbers index arrays. */
static void
mutate(json_t *doc, const char *path, const char *value)
{
	char buf[128], *dot, *p = buf;
	json_t *o = doc, *v = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	while ((dot = strchr(p, '.')) != NULL) {
		*dot = '\0';
		o = json_is_array(o) ? json_array_get(o, strtoul(p, NULL, 10)) :
		    json_object_get(o, p);
		if (o == NULL)
			fail_msg("mutate: %s: no %s", path, p);
		p = dot + 1;
	}
	if (value != NULL) {
		v = json_loads(value, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		if (v == NULL)
			fail_msg("mutate: %s: bad JSON %s", path, value);
	}
	if (json_is_array(o)) {
		if (v == NULL)
			json_array_remove(o, strtoul(p, NULL, 10));
		else
			json_array_set_new(o, strtoul(p, NULL, 10), v);
	} else if (v == NULL) {
		if (json_object_del(o, p) < 0)
			fail_msg("mutate: %s: nothing to delete", path);
	} else
		json_object_set_new(o, p, v);
}

/* Decode doc both as a json_t and as text: refused, with expect. */
static void
expect_refusal(const json_t *doc, const struct sk_json_limits *lim,
    const char *expect, bool decode_only, const char *what)
{
	struct sk_record rec;
	char err[512], *text;

	memset(&rec, 0xa5, sizeof(rec));
	err[0] = '\0';
	if (sk_json_decode(doc, lim, &rec, err, sizeof(err)) == 0) {
		sk_record_clear(&rec);
		fail_msg("%s: accepted (decode)", what);
	}
	if (strcmp(err, expect) != 0)
		fail_msg("%s: got \"%s\", expected \"%s\"", what, err, expect);
	assert_int_equal(rec.type, 0);
	assert_null(rec.u.sock);
	assert_int_equal(sk_record_pending(&rec), 0);
	if (decode_only)
		return;
	text = dump(doc);
	err[0] = '\0';
	if (sk_json_parse(text, strlen(text), lim, &rec, err,
	    sizeof(err)) == 0) {
		sk_record_clear(&rec);
		fail_msg("%s: accepted (parse)", what);
	}
	if (strcmp(err, expect) != 0)
		fail_msg("%s: parse got \"%s\", expected \"%s\"", what, err,
		    expect);
	assert_int_equal(rec.type, 0);
	free(text);
}

static void
test_malformed_table(void **unused)
{
	struct sk_json_limits lim;
	char what[160], name[64];
	json_t *doc;
	size_t i;

	(void)unused;
	for (i = 0; i < nitems(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];

		lim.max_queue = c->max_queue;
		lim.chunks = c->chunks;
		doc = json_deep_copy(base_doc(c->base));
		mutate(doc, c->path, c->value);
		snprintf(what, sizeof(what), "case %zu (%s = %s)", i, c->path,
		    c->value ? c->value : "deleted");
		expect_refusal(doc, &lim, c->expect, c->decode_only, what);
		if (!c->decode_only && !c->chunks && c->max_queue == 0) {
			char *text = dump(doc);

			snprintf(name, sizeof(name), "bad-%03zu", i);
			corpus_write(name, text);
			free(text);
		}
		json_decref(doc);
	}
	print_message("# %zu malformed records refused\n", nitems(bad_cases));
	/* the bases themselves are valid */
	for (i = 0; i < B__MAX; i++) {
		struct sk_record rec;
		char err[256];

		if (sk_json_decode(base_doc((enum base)i), NULL, &rec, err,
		    sizeof(err)) < 0)
			fail_msg("base %zu: %s", i, err);
		sk_record_clear(&rec);
	}
	base_doc(B__MAX);
}

/* Refusals that need a record built whole: counts and totals. */
static void
test_malformed_bounds(void **unused)
{
	struct sk_json_limits lim = { 0, false };
	struct sk_state *s;
	json_t *doc, *a, *d, *opts;
	uint32_t i;
	char name[32];

	(void)unused;
	/* more datagrams than SK_DGRAMS_MAX */
	s = make_state(SK_PROTO_UDP, AF_INET, SK_ST_BOUND);
	doc = sk_json_encode(s);
	sk_state_free(s);
	a = json_object_get(json_object_get(doc, "udp"), "dgrams");
	d = json_deep_copy(json_array_get(a, 1));	/* the empty one */
	assert_string_equal(json_string_value(json_object_get(d, "data")), "");
	json_array_clear(a);
	for (i = 0; i < SK_DGRAMS_MAX; i++)
		json_array_append(a, d);
	/* exactly the bound is fine */
	{
		struct sk_record rec;
		char err[256];

		if (sk_json_decode(doc, &lim, &rec, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		assert_int_equal(rec.u.sock->udp.ndgrams, SK_DGRAMS_MAX);
		sk_record_clear(&rec);
	}
	json_array_append(a, d);
	json_decref(d);
	expect_refusal(doc, &lim, "udp.dgrams: not an array of at most 65536",
	    false, "65537 datagrams");
	json_decref(doc);

	/* more datagram bytes than the queue bound, over many datagrams */
	s = make_state(SK_PROTO_UDP, AF_INET6, SK_ST_BOUND);
	for (i = 0; i < 40; i++)
		add_dgram(s, "fd00:77::10", 5353, "fd00:77::100", 1000, i);
	doc = sk_json_encode(s);
	sk_state_free(s);
	lim.max_queue = 40000;	/* the 43 datagrams hold 41572 bytes */
	expect_refusal(doc, &lim,
	    "udp.dgrams[41].data: the datagrams hold more than 40000 bytes",
	    false, "datagram bytes");
	lim.max_queue = 41572;
	{
		struct sk_record rec;
		char err[256];

		if (sk_json_decode(doc, &lim, &rec, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		sk_record_clear(&rec);
	}
	json_decref(doc);
	lim.max_queue = 0;

	/* one datagram larger than UDP allows */
	s = make_state(SK_PROTO_UDP, AF_INET, SK_ST_BOUND);
	add_dgram(s, "10.77.0.10", 5353, "10.77.0.100", 65536, 1);
	doc = sk_json_encode(s);
	sk_state_free(s);
	expect_refusal(doc, &lim,
	    "udp.dgrams[3].data: not base64 of at most 65535 bytes", false,
	    "a 65536-byte datagram");
	json_decref(doc);

	/* more options than SK_OPTS_MAX */
	s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_LISTEN);
	doc = sk_json_encode(s);
	sk_state_free(s);
	opts = json_object_get(doc, "opts");
	for (i = 0; json_object_size(opts) <= SK_OPTS_MAX; i++) {
		snprintf(name, sizeof(name), "OPT_%u", i);
		json_object_set_new(opts, name, json_true());
	}
	expect_refusal(doc, &lim, "opts: more than 64 options", false,
	    "65 options");
	json_decref(doc);
}

static void
test_malformed_text(void **unused)
{
	static const struct { const char *text, *expect; } cases[] = {
		{ "[1]", "record: not an object" },
		{ "", "record: invalid JSON" },
		{ "{\"v\":2,\"v\":2,\"type\":\"link\"}",
		  "record: invalid JSON" },
		{ "{\"v\":2", "record: invalid JSON" },
		{ "{\"v\":2,\"type\":\"socket\",\"opts\":{\"X\":\"\\u0000\"}}",
		  "record: invalid JSON" },
		{ "{\"v\":2,\"type\":\"link\",\"name\":\"eth0\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01\",\"mtu\":1500}",
		  "mac: not a lower-case MAC" },
		{ "{\"v\":2,\"type\":\"link\",\"name\":\"eth/0\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01:00\",\"mtu\":1500}",
		  "name: invalid character at offset 3" },
		{ "{\"v\":2,\"type\":\"link\",\"name\":\"..\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01:00\",\"mtu\":1500}",
		  "name: \"..\" is not a link name" },
		{ "{\"v\":2,\"type\":\"link\",\"name\":\"eth0\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01:00\",\"mtu\":67}",
		  "mtu: 67 out of range 68..65536" },
		{ "{\"v\":1,\"type\":\"link\",\"name\":\"eth0\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01:00\",\"mtu\":1500}",
		  "v: version 1 not supported (this side speaks 2)" },
		{ "{\"v\":2,\"type\":\"addr\",\"dev\":\"eth0\",\"family\":\"inet\","
		  "\"addr\":\"10.0.0.1\",\"prefix\":33}",
		  "prefix: 33 out of range 0..32" },
		{ "{\"v\":2,\"type\":\"route\",\"family\":\"inet6\",\"dst\":\"::\","
		  "\"prefix\":0,\"dev\":\"\",\"metric\":0,\"table\":254}",
		  "dev: length 0 out of range 1..15" },
		{ "{\"v\":2,\"type\":\"route\",\"family\":\"inet6\",\"dst\":\"::\","
		  "\"prefix\":0,\"gateway\":\"10.0.0.1\",\"dev\":\"\",\"metric\":0,"
		  "\"table\":254}", "gateway: not an IPv6 address" },
		{ "{\"v\":2,\"type\":\"route\",\"family\":\"inet\",\"dst\":"
		  "\"0.0.0.0\",\"prefix\":0,\"dev\":\"eth0\",\"metric\":0,"
		  "\"table\":0}", "table: 0 out of range 1..4294967295" },
	};
	struct sk_record rec;
	char err[256], name[32];
	size_t i;

	(void)unused;
	for (i = 0; i < nitems(cases); i++) {
		if (sk_json_parse(cases[i].text, strlen(cases[i].text), NULL,
		    &rec, err, sizeof(err)) == 0)
			fail_msg("case %zu accepted", i);
		if (strncmp(err, cases[i].expect, strlen(cases[i].expect)) != 0)
			fail_msg("case %zu: got \"%s\", expected \"%s...\"", i,
			    err, cases[i].expect);
		snprintf(name, sizeof(name), "bad-text-%02zu", i);
		if (cases[i].text[0] != '\0')
			corpus_write(name, cases[i].text);
	}
}

static void
test_queue_cap(void **unused)
{
	struct sk_json_limits lim = { 999, false };
	struct sk_state *s;
	struct sk_record rec;
	char err[256], *text;

	(void)unused;
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ESTABLISHED);
	text = encode_text(s);
	sk_state_free(s);
	assert_int_equal(sk_json_parse(text, strlen(text), &lim, &rec, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "tcp.sndq.len: 1000 out of range 0..999");
	lim.max_queue = 1000;
	assert_int_equal(sk_json_parse(text, strlen(text), &lim, &rec, err,
	    sizeof(err)), 0);
	sk_record_clear(&rec);
	/* Text longer than the cap allows is refused before parsing. */
	lim.max_queue = 1;
	assert_true(strlen(text) < sk_json_max_text(&lim));
	assert_int_equal(sk_json_parse(text, sk_json_max_text(&lim) + 1,
	    &lim, &rec, err, sizeof(err)), -1);
	assert_true(strncmp(err, "record: ", 8) == 0);
	assert_non_null(strstr(err, "limit"));
	/* the bound grows with the cap, and holds the largest record */
	assert_true(sk_json_max_text(NULL) >
	    2 * sk_b64_enclen(SK_JSON_MAX_QUEUE));
	assert_true(sk_json_max_text(NULL) > sk_json_max_text(&lim));
	free(text);
}

/* The largest options a socket of the kind may hold. */
static void
add_largest_opts(struct sk_state *s)
{
	static uint8_t buf[BPF_MAXINSNS * sizeof(struct sock_filter)];
	static const char *const v6hdrs[] = { "IPV6_HOPOPTS", "IPV6_RTHDR",
	    "IPV6_DSTOPTS", "IPV6_RTHDRDSTOPTS" };
	size_t i;

	memset(buf, 0xff, sizeof(buf));
	add_data(s, "SO_ATTACH_FILTER", buf, sizeof(buf));
	add_data(s, "SO_BINDTODEVICE", "abcdefghijklmno", 15);
	add_int(s, "SO_RCVTIMEO", INT64_MAX / 2);
	add_int(s, "SO_SNDTIMEO", INT64_MAX / 2);
	if (s->family == AF_INET6)
		for (i = 0; i < nitems(v6hdrs); i++)
			add_data(s, v6hdrs[i], buf, 2048);
	else
		add_data(s, "IP_OPTIONS", buf, 40);
	if (s->proto == SK_PROTO_TCP) {
		add_data(s, "TCP_CONGESTION", "abcdefghijklmno", 15);
		if (s->state == SK_ST_LISTEN)	/* a listener's only */
			add_data(s, "TCP_FASTOPEN_KEY", buf, 32);
	}
	sort_opts(s);
}

/* sk_json_max_text() admits the largest record the decoder takes. */
static void
test_max_text(void **unused)
{
	struct sk_json_limits lim = { 65536, false };
	struct sk_state *s;
	struct sk_record rec;
	char err[256], *text;
	uint32_t i;
	json_t *j;

	(void)unused;
	/* SK_DGRAMS_MAX datagrams of the longest addresses and ports,
	 * as many bytes as the bound allows */
	s = make_state(SK_PROTO_UDP, AF_INET6, SK_ST_BOUND);
	while (s->udp.ndgrams > 0)
		free(s->udp.dgrams[--s->udp.ndgrams].data);
	while (s->nopts > 0)
		free(s->opts[--s->nopts].data);
	add_largest_opts(s);
	set_addr(&s->local, AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	    65535);
	s->udp.dgrams = realloc(s->udp.dgrams, SK_DGRAMS_MAX *
	    sizeof(*s->udp.dgrams));
	assert_non_null(s->udp.dgrams);
	for (i = 0; i < SK_DGRAMS_MAX; i++) {
		struct sk_dgram *d = &s->udp.dgrams[s->udp.ndgrams++];

		memset(d, 0, sizeof(*d));
		d->from = d->to = s->local;
		d->len = 1;
		d->data = bytes(1, i);
	}
	text = encode_text(s);
	assert_true(strlen(text) <= sk_json_max_text(&lim));
	if (sk_json_parse(text, strlen(text), &lim, &rec, err,
	    sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_state_equal(s, rec.u.sock);
	sk_record_clear(&rec);
	free(text);
	sk_state_free(s);

	/* a connection with both queues at the bound */
	lim.max_queue = 1 << 20;
	s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_ESTABLISHED);
	while (s->nopts > 0)
		free(s->opts[--s->nopts].data);
	add_largest_opts(s);
	free(s->tcp.sndq);
	free(s->tcp.rcvq);
	s->tcp.sndq_len = s->tcp.rcvq_len = lim.max_queue;
	s->tcp.sndq = bytes(lim.max_queue, 1);
	s->tcp.rcvq = bytes(lim.max_queue, 2);
	j = sk_json_encode(s);
	assert_non_null(j);
	text = json_dumps(j, JSON_INDENT(1));	/* not even compact */
	json_decref(j);
	assert_non_null(text);
	assert_true(strlen(text) <= sk_json_max_text(&lim));
	if (sk_json_parse(text, strlen(text), &lim, &rec, err,
	    sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_state_equal(s, rec.u.sock);
	sk_record_clear(&rec);
	free(text);
	sk_state_free(s);
}

/* ---- chunks ---- */

static const struct sk_json_limits chunk_lim = { 0, true };

/* Encode st split at inline_max, as text, and parse it with chunks. */
static void
parse_split(const struct sk_state *st, uint32_t inline_max,
    const struct sk_json_limits *lim, struct sk_record *rec,
    struct lines *corpus)
{
	json_t *j = sk_json_encode_split(st, inline_max);
	char err[256], *text;
	int p;

	assert_non_null(j);
	text = dump(j);
	json_decref(j);
	if (corpus != NULL)
		lines_add(corpus, text);
	if (sk_json_parse(text, strlen(text), lim, rec, err, sizeof(err)) < 0)
		fail_msg("split record refused: %s", err);
	free(text);
	assert_int_equal(rec->type, SK_REC_SOCKET);
	/* the record announces exactly the parts the encoder split */
	assert_int_equal(rec->pending[SK_PART_SNDQ],
	    sk_json_split(st, SK_PART_SNDQ, inline_max) ? st->tcp.sndq_len : 0);
	assert_int_equal(rec->pending[SK_PART_RCVQ],
	    sk_json_split(st, SK_PART_RCVQ, inline_max) ? st->tcp.rcvq_len : 0);
	assert_int_equal(rec->pending[SK_PART_DGRAMS],
	    sk_json_split(st, SK_PART_DGRAMS, inline_max) ?
	    st->udp.ndgrams : 0);
	for (p = 0; p < SK_PART__MAX; p++)
		assert_int_equal(rec->filled[p], 0);
}

/* A chunk through text, as on the wire. */
static int
add_chunk_json(struct sk_record *rec, json_t *chunk, char *err,
    size_t errlen, struct lines *corpus)
{
	char *text;
	json_t *j;
	int rc;

	assert_non_null(chunk);
	text = dump(chunk);
	json_decref(chunk);
	if (corpus != NULL)
		lines_add(corpus, text);
	j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(j);
	free(text);
	rc = sk_record_add_chunk(rec, j, err, errlen);
	json_decref(j);
	return rc;
}

static int
add_chunk_text(struct sk_record *rec, const char *text, char *err,
    size_t errlen)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
	int rc;

	if (j == NULL)
		fail_msg("bad chunk text %s", text);
	rc = sk_record_add_chunk(rec, j, err, errlen);
	json_decref(j);
	return rc;
}

/*
 * Send every announced part in order, in chunks of 1..max_bytes bytes
 * (1..max_dgrams datagrams), each from where the last ended; pending
 * goes down to 0.  Returns the number of chunks.
 */
static unsigned
feed_chunks(struct sk_record *rec, const struct sk_state *st,
    uint32_t max_bytes, uint32_t max_dgrams, struct lines *corpus)
{
	char err[256];
	unsigned nchunks = 0;
	int p;

	for (p = 0; p < SK_PART__MAX; p++) {
		uint32_t total = rec->pending[p], off = 0, n;
		uint32_t max = p == SK_PART_DGRAMS ? max_dgrams : max_bytes;

		while (off < total) {
			uint64_t before = sk_record_pending(rec);

			/* UINT32_MAX: the whole part in one chunk */
			n = max == UINT32_MAX ? total - off : 1 + prng() % max;
			if (n > total - off)
				n = total - off;
			if (add_chunk_json(rec, sk_json_chunk(st,
			    (enum sk_part)p, off, n), err, sizeof(err),
			    corpus) < 0)
				fail_msg("chunk %s %u+%u refused: %s",
				    p == SK_PART_SNDQ ? "sndq" : p ==
				    SK_PART_RCVQ ? "rcvq" : "dgrams", off, n,
				    err);
			off += n;
			nchunks++;
			assert_int_equal(rec->filled[p], off);
			assert_int_equal(rec->pending[p], total - off);
			assert_int_equal(sk_record_pending(rec), before - n);
		}
	}
	assert_int_equal(sk_record_pending(rec), 0);
	return nchunks;
}

/* Split st, send it in chunks, compare with st. */
static unsigned
check_split(const struct sk_state *st, uint32_t inline_max,
    uint32_t max_bytes, uint32_t max_dgrams, const char *corpus_name)
{
	struct lines corpus = { NULL, 0 };
	struct sk_record rec;
	unsigned n;

	parse_split(st, inline_max, &chunk_lim, &rec, corpus_name ? &corpus :
	    NULL);
	n = feed_chunks(&rec, st, max_bytes, max_dgrams, corpus_name ?
	    &corpus : NULL);
	assert_state_equal(st, rec.u.sock);
	sk_record_clear(&rec);
	if (corpus_name != NULL)
		lines_write(&corpus, corpus_name);
	else
		free(corpus.buf);
	return n;
}

static void
test_chunks_large_tcp(void **unused)
{
	struct sk_state *s;
	struct sk_record rec;
	json_t *j, *q;
	char err[256], *text;
	unsigned n;

	(void)unused;
	prng_state = 0x5eed;
	s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_ESTABLISHED);
	free(s->tcp.sndq);
	free(s->tcp.rcvq);
	s->tcp.sndq_len = 3 << 20;
	s->tcp.sndq_unsent = 1 << 20;
	s->tcp.sndq = bytes(s->tcp.sndq_len, 11);
	s->tcp.rcvq_len = 2 << 20;
	s->tcp.rcvq = bytes(s->tcp.rcvq_len, 12);

	/* the announcing record holds no queue byte */
	j = sk_json_encode_split(s, 65536);
	q = json_object_get(json_object_get(j, "tcp"), "sndq");
	assert_int_equal(json_integer_value(json_object_get(q, "len")),
	    3 << 20);
	assert_int_equal(json_integer_value(json_object_get(q, "unsent")),
	    1 << 20);
	assert_true(json_is_true(json_object_get(q, "chunks")));
	assert_null(json_object_get(q, "data"));
	q = json_object_get(json_object_get(j, "tcp"), "rcvq");
	assert_true(json_is_true(json_object_get(q, "chunks")));
	assert_null(json_object_get(q, "unsent"));
	text = dump(j);
	json_decref(j);
	assert_true(strlen(text) < 4096);
	/* a side that does not take chunks refuses it */
	assert_int_equal(sk_json_parse(text, strlen(text), NULL, &rec, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "tcp.sndq.chunks: not allowed here");
	free(text);

	n = check_split(s, 65536, 256 * 1024, 1, NULL);
	print_message("# 5 MiB of queues in %u chunks\n", n);
	assert_true(n >= 20);
	/* one chunk per part */
	assert_int_equal(check_split(s, 0, UINT32_MAX, 1, NULL), 2);

	/* only the send queue is split: the receive queue stays inline */
	free(s->tcp.rcvq);
	s->tcp.rcvq_len = 1000;
	s->tcp.rcvq = bytes(1000, 13);
	parse_split(s, 65536, &chunk_lim, &rec, NULL);
	assert_int_equal(rec.pending[SK_PART_SNDQ], 3 << 20);
	assert_int_equal(rec.pending[SK_PART_RCVQ], 0);
	assert_memory_equal(rec.u.sock->tcp.rcvq, s->tcp.rcvq, 1000);
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_RCVQ,
	    0, 10), err, sizeof(err), NULL), -1);
	assert_string_equal(err,
	    "chunk.part: \"rcvq\" is not a part the record announced");
	feed_chunks(&rec, s, 1 << 20, 1, NULL);
	assert_state_equal(s, rec.u.sock);
	sk_record_clear(&rec);

	/* under the bound nothing is split: the plain encoding */
	{
		json_t *a = sk_json_encode(s), *b = sk_json_encode_split(s,
		    3 << 20);
		char *ta = dump(a), *tb = dump(b);

		assert_string_equal(ta, tb);
		json_decref(a);
		json_decref(b);
		free(ta);
		free(tb);
		assert_false(sk_json_split(s, SK_PART_SNDQ, 3 << 20));
		assert_true(sk_json_split(s, SK_PART_SNDQ, (3 << 20) - 1));
		assert_false(sk_json_split(s, SK_PART_DGRAMS, 0));
	}
	sk_state_free(s);

	/* an ENDED connection with 2 MiB still to read */
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ENDED);
	s->tcp.end = SK_END_RESET;
	free(s->tcp.rcvq);
	s->tcp.rcvq_len = 2 << 20;
	s->tcp.rcvq = bytes(s->tcp.rcvq_len, 14);
	n = check_split(s, 65536, 300000, 1, NULL);
	assert_true(n >= 7);
	sk_state_free(s);
}

static void
test_chunks_large_udp(void **unused)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	struct sk_state *s;
	struct sk_record rec;
	size_t f;
	uint32_t i;
	unsigned n;
	json_t *j;

	(void)unused;
	prng_state = 0xd6a;
	for (f = 0; f < nitems(fams); f++) {
		int v6 = fams[f] == AF_INET6;

		s = make_state(SK_PROTO_UDP, fams[f], SK_ST_BOUND);
		for (i = 0; s->udp.ndgrams < 2000; i++)
			add_dgram(s, v6 ? "fd00:77::10" : "10.77.0.10",
			    (uint16_t)(1024 + i % 50), v6 ? "fd00:77::100" :
			    "10.77.0.100", prng() % 1473, i);
		/* the record announces a count */
		j = sk_json_encode_split(s, 65536);
		assert_int_equal(json_integer_value(json_object_get(
		    json_object_get(j, "udp"), "dgrams")), 2000);
		json_decref(j);
		n = check_split(s, 65536, 1, 97, NULL);
		assert_true(n >= 2000 / 97);
		print_message("# 2000 %s datagrams in %u chunks\n",
		    fam_name(fams[f]), n);
		/* one datagram a chunk */
		assert_int_equal(check_split(s, 0, 1, 1, NULL), 2000);
		/* all in one */
		assert_int_equal(check_split(s, 0, 1, UINT32_MAX, NULL), 1);
		/* under the bound: inline */
		parse_split(s, UINT32_MAX, &chunk_lim, &rec, NULL);
		assert_int_equal(sk_record_pending(&rec), 0);
		assert_state_equal(s, rec.u.sock);
		sk_record_clear(&rec);
		sk_state_free(s);
	}
}

/* Small records split at every part, in small chunks: the seed corpus
 * of the fuzz target's chunk path, as JSON lines. */
static void
test_chunks_small(void **unused)
{
	struct sk_state *s;
	uint32_t i;

	(void)unused;
	prng_state = 0x511;
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ESTABLISHED);
	check_split(s, 0, 300, 1, "chunks-tcp-ESTABLISHED-inet");
	sk_state_free(s);
	s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_LAST_ACK);
	check_split(s, 100, 64, 1, "chunks-tcp-LAST_ACK-inet6");
	sk_state_free(s);
	s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_ENDED);
	check_split(s, 0, 20, 1, "chunks-tcp-ENDED-inet6");
	sk_state_free(s);
	s = make_state(SK_PROTO_UDP, AF_INET, SK_ST_ESTABLISHED);
	for (i = 0; i < 20; i++)
		add_dgram(s, "10.77.0.10", 5353, "10.77.0.100", i * 9, i);
	check_split(s, 0, 1, 4, "chunks-udp-ESTABLISHED-inet");
	sk_state_free(s);
	s = make_state(SK_PROTO_UDP, AF_INET6, SK_ST_BOUND);
	check_split(s, 0, 1, 1, "chunks-udp-BOUND-inet6");
	sk_state_free(s);
}

/* A TCP state with 3000 bytes in its send queue (unsent of them not
 * sent yet) and 2000 in its receive queue, patterns seed and seed + 1. */
static struct sk_state *
queued_state(enum sk_st state, uint32_t unsent, uint32_t seed)
{
	struct sk_state *s = make_state(SK_PROTO_TCP, AF_INET, state);

	free(s->tcp.sndq);
	free(s->tcp.rcvq);
	s->tcp.sndq_len = 3000;
	s->tcp.sndq_unsent = unsent;
	s->tcp.sndq = bytes(3000, seed);
	s->tcp.rcvq_len = 2000;
	s->tcp.rcvq = bytes(2000, seed + 1);
	return s;
}

/*
 * What a chunk may not do; a refused chunk leaves the record as it was.
 * The record, the chunks refused and the chunks taken go to the corpus
 * as they come.
 */
static void
test_chunks_refused(void **unused)
{
	struct sk_state *s;
	struct sk_record rec, link;
	struct lines cl = { NULL, 0 };
	char err[256], *text;
	uint8_t *big;
	uint32_t i;
	struct sk_link l = { "eth0", "veth", { 0x52, 0x54, 0, 0x77, 1, 0 },
	    1500 };
	json_t *j;

	(void)unused;
	s = queued_state(SK_ST_CLOSE_WAIT, 0, 21);
	parse_split(s, 100, &chunk_lim, &rec, &cl);

#define REFUSE(text, msg) do {						\
	uint32_t p0_ = rec.pending[0], p1_ = rec.pending[1];		\
	uint32_t p2_ = rec.pending[2], f0_ = rec.filled[0];		\
	uint32_t f1_ = rec.filled[1], f2_ = rec.filled[2];		\
	err[0] = '\0';							\
	if (cl.buf != NULL)						\
		lines_add(&cl, text);					\
	if (add_chunk_text(&rec, text, err, sizeof(err)) == 0)		\
		fail_msg("chunk accepted: %s", text);			\
	if (strcmp(err, msg) != 0)					\
		fail_msg("chunk %s: got \"%s\", expected \"%s\"", text,	\
		    err, msg);						\
	assert_int_equal(rec.pending[0], p0_);				\
	assert_int_equal(rec.pending[1], p1_);				\
	assert_int_equal(rec.pending[2], p2_);				\
	assert_int_equal(rec.filled[0], f0_);				\
	assert_int_equal(rec.filled[1], f1_);				\
	assert_int_equal(rec.filled[2], f2_);				\
} while (0)

	/* the object */
	REFUSE("[1]", "chunk: not an object");
	REFUSE("\"sndq\"", "chunk: not an object");
	assert_int_equal(sk_record_add_chunk(&rec, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "chunk: not an object");
	REFUSE("{\"off\":0,\"data\":\"AAAA\"}", "chunk.part: missing");
	REFUSE("{\"part\":1,\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.part: not a string");
	REFUSE("{\"part\":\"SNDQ\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.part: invalid character at offset 0");
	REFUSE("{\"part\":\"sndqq\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.part: \"sndqq\" is not a part the record announced");
	REFUSE("{\"part\":\"sndq\",\"data\":\"AAAA\"}", "chunk.off: missing");
	REFUSE("{\"part\":\"sndq\",\"off\":-1,\"data\":\"AAAA\"}",
	    "chunk.off: -1 out of range 0..4294967295");
	REFUSE("{\"part\":\"sndq\",\"off\":\"0\",\"data\":\"AAAA\"}",
	    "chunk.off: not an integer");
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAAA\",\"len\":3}",
	    "chunk.len: unknown field");
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"dgrams\":[]}",
	    "chunk.dgrams: unknown field");
	/* a part not announced, out of order, at the wrong offset */
	REFUSE("{\"part\":\"dgrams\",\"off\":0,\"dgrams\":[]}",
	    "chunk.part: \"dgrams\" is not a part the record announced");
	REFUSE("{\"part\":\"rcvq\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.part: rcvq before the parts ahead of it");
	REFUSE("{\"part\":\"sndq\",\"off\":5,\"data\":\"AAAA\"}",
	    "chunk.off: 5, expected 0");
	REFUSE("{\"part\":\"sndq\",\"off\":4294967295,\"data\":\"AAAA\"}",
	    "chunk.off: 4294967295, expected 0");
	/* data: missing, not base64, empty, more than announced */
	REFUSE("{\"part\":\"sndq\",\"off\":0}",
	    "chunk.data: not base64 of at most the 3000 bytes announced");
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":7}",
	    "chunk.data: not base64 of at most the 3000 bytes announced");
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"!!!!\"}",
	    "chunk.data: invalid base64 character at offset 0");
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAA\"}",
	    "chunk.data: base64 length 3 not a multiple of 4");
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"\"}",
	    "chunk.data: 0 bytes, 3000 announced");
	big = bytes(3001, 0);
	text = sk_b64_encode(big, 3001);
	j = json_pack("{s:s, s:i, s:s}", "part", "sndq", "off", 0, "data",
	    text);
	free(text);
	text = dump(j);
	json_decref(j);
	REFUSE(text, "chunk.data: not base64 of at most the 3000 bytes "
	    "announced");
	free(text);

	/* the first byte, then base64 whose length fits what is left
	 * (2999 bytes) but decodes to 3000 */
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_SNDQ,
	    0, 1), err, sizeof(err), &cl), 0);
	text = sk_b64_encode(big, 3000);
	j = json_pack("{s:s, s:i, s:s}", "part", "sndq", "off", 1, "data",
	    text);
	free(text);
	text = dump(j);
	json_decref(j);
	REFUSE(text, "chunk.data: 3000 bytes, 2999 announced");
	free(text);
	free(big);
	/* a replay of the first chunk */
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.off: 0, expected 1");
	/* the rest of sndq; then rcvq may come, sndq no more */
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_SNDQ,
	    1, 2999), err, sizeof(err), &cl), 0);
	REFUSE("{\"part\":\"sndq\",\"off\":3000,\"data\":\"AAAA\"}",
	    "chunk.part: \"sndq\" is not a part the record announced");
	REFUSE("{\"part\":\"rcvq\",\"off\":1,\"data\":\"AAAA\"}",
	    "chunk.off: 1, expected 0");
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_RCVQ,
	    0, 2000), err, sizeof(err), &cl), 0);
	assert_int_equal(sk_record_pending(&rec), 0);
	assert_state_equal(s, rec.u.sock);
	/* the record is whole */
	REFUSE("{\"part\":\"rcvq\",\"off\":2000,\"data\":\"AAAA\"}",
	    "chunk: no record waits for one");
	REFUSE("[]", "chunk: no record waits for one");
	assert_state_equal(s, rec.u.sock);
	lines_write(&cl, "chunks-refused-tcp");
	sk_record_clear(&rec);
	/* nor does a cleared record, a record never split, a link */
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk: no record waits for one");
	parse_split(s, UINT32_MAX, &chunk_lim, &rec, NULL);
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk: no record waits for one");
	sk_record_clear(&rec);
	j = sk_json_encode_link(&l);
	assert_int_equal(sk_json_decode(j, &chunk_lim, &link, err,
	    sizeof(err)), 0);
	json_decref(j);
	assert_int_equal(add_chunk_text(&link, "{\"part\":\"sndq\",\"off\":0,"
	    "\"data\":\"AAAA\"}", err, sizeof(err)), -1);
	assert_string_equal(err, "chunk: no record waits for one");
	sk_state_free(s);

	/* ENDED: only rcvq */
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ENDED);
	parse_split(s, 0, &chunk_lim, &rec, NULL);
	assert_int_equal(rec.pending[SK_PART_RCVQ], 77);
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.part: \"sndq\" is not a part the record announced");
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_RCVQ,
	    0, 77), err, sizeof(err), NULL), 0);
	assert_state_equal(s, rec.u.sock);
	sk_record_clear(&rec);
	sk_state_free(s);

	/* datagrams */
	s = make_state(SK_PROTO_UDP, AF_INET, SK_ST_BOUND);
	for (i = 0; i < 7; i++)
		add_dgram(s, "10.77.0.10", 5353, "10.77.0.100", 10, i);
	parse_split(s, 0, &chunk_lim, &rec, &cl);
	assert_int_equal(rec.pending[SK_PART_DGRAMS], 10);
	assert_int_equal(rec.u.sock->udp.ndgrams, 0);
	REFUSE("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.part: \"sndq\" is not a part the record announced");
	REFUSE("{\"part\":\"dgrams\",\"off\":0,\"dgrams\":[]}",
	    "chunk.dgrams: not an array of 1 to the 10 datagrams announced");
	REFUSE("{\"part\":\"dgrams\",\"off\":0,\"dgrams\":{}}",
	    "chunk.dgrams: not an array of 1 to the 10 datagrams announced");
	REFUSE("{\"part\":\"dgrams\",\"off\":0}",
	    "chunk.dgrams: not an array of 1 to the 10 datagrams announced");
	REFUSE("{\"part\":\"dgrams\",\"off\":0,\"data\":\"AAAA\"}",
	    "chunk.data: unknown field");
	REFUSE("{\"part\":\"dgrams\",\"off\":3,\"dgrams\":[{}]}",
	    "chunk.off: 3, expected 0");
	REFUSE("{\"part\":\"dgrams\",\"off\":0,\"dgrams\":[7]}",
	    "chunk.dgrams[0]: not an object");
	/* more datagrams than announced */
	{
		json_t *c = sk_json_chunk(s, SK_PART_DGRAMS, 0, 10);
		json_t *a = json_object_get(c, "dgrams");

		json_array_append_new(a, json_deep_copy(json_array_get(a, 0)));
		text = dump(c);
		json_decref(c);
		REFUSE(text, "chunk.dgrams: not an array of 1 to the 10 "
		    "datagrams announced");
		free(text);
	}
	/* a bad datagram after good ones: the whole chunk is refused */
	{
		json_t *c = sk_json_chunk(s, SK_PART_DGRAMS, 0, 4);

		json_integer_set(json_object_get(json_object_get(json_array_get(
		    json_object_get(c, "dgrams"), 2), "to"), "port"), 9);
		text = dump(c);
		json_decref(c);
		REFUSE(text, "chunk.dgrams[2].to: not the socket's port 8080");
		free(text);
		assert_int_equal(rec.u.sock->udp.ndgrams, 0);
	}
	/* it can be sent again, right, and the rest after it */
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_DGRAMS,
	    0, 4), err, sizeof(err), &cl), 0);
	assert_int_equal(rec.u.sock->udp.ndgrams, 4);
	REFUSE("{\"part\":\"dgrams\",\"off\":0,\"dgrams\":[{}]}",
	    "chunk.off: 0, expected 4");
	{
		json_t *c = sk_json_chunk(s, SK_PART_DGRAMS, 4, 2);

		json_object_set_new(json_array_get(json_object_get(c,
		    "dgrams"), 1), "data", json_string("AAA"));
		text = dump(c);
		json_decref(c);
		REFUSE(text, "chunk.dgrams[1].data: base64 length 3 not a "
		    "multiple of 4");
		free(text);
		assert_int_equal(rec.u.sock->udp.ndgrams, 4);
	}
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_DGRAMS,
	    4, 6), err, sizeof(err), &cl), 0);
	assert_state_equal(s, rec.u.sock);
	REFUSE("{\"part\":\"dgrams\",\"off\":10,\"dgrams\":[{}]}",
	    "chunk: no record waits for one");
	lines_write(&cl, "chunks-refused-udp");
	sk_record_clear(&rec);
	sk_state_free(s);

	/* the datagrams' bytes are bounded by the limits the record was
	 * decoded with, chunk after chunk */
	s = make_state(SK_PROTO_UDP, AF_INET6, SK_ST_BOUND);
	while (s->udp.ndgrams > 0)
		free(s->udp.dgrams[--s->udp.ndgrams].data);
	for (i = 0; i < 4; i++)
		add_dgram(s, "fd00:77::10", 5353, "fd00:77::100", 1000, i);
	{
		struct sk_json_limits lim = { 3000, true };

		parse_split(s, 100, &lim, &rec, NULL);
	}
	assert_int_equal(rec.pending[SK_PART_DGRAMS], 4);
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_DGRAMS,
	    0, 2), err, sizeof(err), NULL), 0);
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_DGRAMS,
	    2, 1), err, sizeof(err), NULL), 0);
	assert_int_equal(add_chunk_json(&rec, sk_json_chunk(s, SK_PART_DGRAMS,
	    3, 1), err, sizeof(err), NULL), -1);
	assert_string_equal(err,
	    "chunk.dgrams[0].data: the datagrams hold more than 3000 bytes");
	assert_int_equal(rec.u.sock->udp.ndgrams, 3);
	assert_int_equal(rec.pending[SK_PART_DGRAMS], 1);
	sk_record_clear(&rec);
	sk_state_free(s);
#undef REFUSE
}

/*
 * Queue chunks whose bytes come apart (a frame's binary tail): heads
 * from sk_json_chunk_head(), bytes as given, taken in any sizes, whole
 * at the end; and what such a chunk may not do, leaving the record as
 * it was.
 */
static int
add_raw_head(struct sk_record *rec, json_t *head, const void *raw,
    size_t rawlen, char *err, size_t errlen)
{
	int rc;

	assert_non_null(head);
	rc = sk_record_add_chunk_raw(rec, head, raw, rawlen, err, errlen);
	json_decref(head);
	return rc;
}

static void
test_chunks_raw(void **unused)
{
	const uint8_t *b;
	struct sk_state *s, *u;
	struct sk_record rec;
	char err[256];
	uint32_t p0, f0;
	uint8_t *big;
	json_t *j;

	(void)unused;
	s = queued_state(SK_ST_ESTABLISHED, 1000, 31);
	/* the head points into the state; it carries no bytes itself */
	j = sk_json_chunk_head(s, SK_PART_SNDQ, 1000, 24, &b);
	assert_non_null(j);
	assert_ptr_equal(b, s->tcp.sndq + 1000);
	assert_int_equal(json_object_size(j), 2);
	assert_string_equal(json_string_value(json_object_get(j, "part")),
	    "sndq");
	assert_int_equal(json_integer_value(json_object_get(j, "off")), 1000);
	json_decref(j);
	assert_null(sk_json_chunk_head(s, SK_PART_SNDQ, 0, 3001, &b));
	assert_null(sk_json_chunk_head(s, SK_PART_SNDQ, 3000, 1, &b));
	assert_null(sk_json_chunk_head(s, SK_PART_RCVQ, 0, 0, &b));
	assert_null(sk_json_chunk_head(s, SK_PART_RCVQ, UINT32_MAX, 2, &b));
	assert_null(sk_json_chunk_head(s, SK_PART_DGRAMS, 0, 1, &b));

	parse_split(s, 100, &chunk_lim, &rec, NULL);
	assert_int_equal(rec.pending[SK_PART_SNDQ], 3000);

#define REFUSE_RAW(text, raw, rawlen, msg) do {					p0 = rec.pending[SK_PART_SNDQ] + rec.pending[SK_PART_RCVQ];		f0 = rec.filled[SK_PART_SNDQ] + rec.filled[SK_PART_RCVQ];		j = json_loads(text, 0, NULL);						assert_non_null(j);							err[0] = '\0';								if (add_raw_head(&rec, j, raw, rawlen, err, sizeof(err)) == 0)			fail_msg("raw chunk accepted: %s", text);			if (strcmp(err, msg) != 0)							fail_msg("raw chunk %s: got \"%s\", expected \"%s\"",			    text, err, msg);						assert_int_equal(rec.pending[SK_PART_SNDQ] +				    rec.pending[SK_PART_RCVQ], p0);					assert_int_equal(rec.filled[SK_PART_SNDQ] +				    rec.filled[SK_PART_RCVQ], f0);				} while (0)

	big = bytes(3001, 31);
	/* no bytes, more than announced, data beside them, elsewhere */
	REFUSE_RAW("{\"part\":\"sndq\",\"off\":0}", big, 0,
	    "chunk.tail: 0 bytes, 3000 announced");
	REFUSE_RAW("{\"part\":\"sndq\",\"off\":0}", big, 3001,
	    "chunk.tail: 3001 bytes, 3000 announced");
	REFUSE_RAW("{\"part\":\"sndq\",\"off\":0,\"data\":\"AAAA\"}", big,
	    3, "chunk.data: unknown field");
	REFUSE_RAW("{\"part\":\"sndq\",\"off\":0,\"len\":3}", big, 3,
	    "chunk.len: unknown field");
	REFUSE_RAW("{\"part\":\"sndq\",\"off\":1}", big, 3,
	    "chunk.off: 1, expected 0");
	REFUSE_RAW("{\"part\":\"rcvq\",\"off\":0}", big, 3,
	    "chunk.part: rcvq before the parts ahead of it");
	REFUSE_RAW("{\"part\":\"dgrams\",\"off\":0}", big, 3,
	    "chunk.part: \"dgrams\" is not a part the record announced");
	REFUSE_RAW("[]", big, 3, "chunk: not an object");

	/* the send queue in three pieces, base64 in the middle: the two
	 * forms mix */
	j = sk_json_chunk_head(s, SK_PART_SNDQ, 0, 1, &b);
	assert_int_equal(add_raw_head(&rec, j, b, 1, err, sizeof(err)), 0);
	assert_int_equal(rec.filled[SK_PART_SNDQ], 1);
	assert_int_equal(sk_record_add_chunk(&rec, j = sk_json_chunk(s,
	    SK_PART_SNDQ, 1, 999), err, sizeof(err)), 0);
	json_decref(j);
	j = sk_json_chunk_head(s, SK_PART_SNDQ, 1000, 2000, &b);
	assert_int_equal(add_raw_head(&rec, j, b, 2000, err, sizeof(err)),
	    0);
	/* a replay of the last piece, then the receive queue in one */
	REFUSE_RAW("{\"part\":\"sndq\",\"off\":1000}", big, 2000,
	    "chunk.part: \"sndq\" is not a part the record announced");
	REFUSE_RAW("{\"part\":\"rcvq\",\"off\":0}", big, 2001,
	    "chunk.tail: 2001 bytes, 2000 announced");
	j = sk_json_chunk_head(s, SK_PART_RCVQ, 0, 2000, &b);
	assert_int_equal(add_raw_head(&rec, j, b, 2000, err, sizeof(err)),
	    0);
	assert_int_equal(sk_record_pending(&rec), 0);
	assert_state_equal(s, rec.u.sock);
	REFUSE_RAW("{\"part\":\"rcvq\",\"off\":2000}", big, 1,
	    "chunk: no record waits for one");
	sk_record_clear(&rec);
	free(big);
	sk_state_free(s);

	/* datagrams never come apart */
	u = make_state(SK_PROTO_UDP, AF_INET, SK_ST_BOUND);
	parse_split(u, 0, &chunk_lim, &rec, NULL);
	assert_true(rec.pending[SK_PART_DGRAMS] > 0);
	j = json_pack("{s:s,s:i}", "part", "dgrams", "off", 0);
	assert_int_equal(add_raw_head(&rec, j, "x", 1, err, sizeof(err)), -1);
	assert_string_equal(err, "chunk.part: datagrams do not come as a "
	    "tail");
	sk_record_clear(&rec);
	sk_state_free(u);
#undef REFUSE_RAW
}

/* The chunk encoder refuses what the state does not hold. */
static void
test_chunk_encoder_bounds(void **unused)
{
	struct sk_state *s;
	json_t *j;

	(void)unused;
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ESTABLISHED);
	assert_null(sk_json_chunk(s, SK_PART_SNDQ, 0, 1001));
	assert_null(sk_json_chunk(s, SK_PART_SNDQ, 1001, 0));
	assert_null(sk_json_chunk(s, SK_PART_RCVQ, 70, 8));
	assert_null(sk_json_chunk(s, SK_PART_RCVQ, UINT32_MAX, 2));
	assert_null(sk_json_chunk(s, SK_PART_DGRAMS, 0, 1));
	j = sk_json_chunk(s, SK_PART_SNDQ, 999, 1);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "part")),
	    "sndq");
	assert_int_equal(json_integer_value(json_object_get(j, "off")), 999);
	json_decref(j);
	sk_state_free(s);
	s = make_state(SK_PROTO_UDP, AF_INET, SK_ST_BOUND);
	assert_null(sk_json_chunk(s, SK_PART_DGRAMS, 2, 2));
	assert_null(sk_json_chunk(s, SK_PART_DGRAMS, 4, 0));
	j = sk_json_chunk(s, SK_PART_DGRAMS, 1, 2);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "dgrams")), 2);
	json_decref(j);
	sk_state_free(s);
}

/* ---- property test ---- */

static void
random_opts(struct sk_state *s)
{
	static const int64_t edges[] = { 0, 1, -1, 255, 65535, INT_MAX,
	    UINT32_MAX, INT64_MAX / 2 };
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
	unsigned n = prng() % 16, k, tries;
	uint8_t seen[512] = { 0 };

	assert_true(sk_opt_count() <= sizeof(seen));
	for (k = 0; k < n; k++) {
		struct sk_opt o = { .id = (uint16_t)(prng() % sk_opt_count()) };
		uint8_t buf[64];
		char why[160];
		uint32_t i;

		if (seen[o.id])
			continue;
		for (tries = 0; tries < 8; tries++) {
			switch (sk_opt_kind(o.id)) {
			case SK_OK_BOOL:
				o.ival = prng() & 1;
				break;
			case SK_OK_STRING:
				o.len = 1 + prng() % 15;
				for (i = 0; i < o.len; i++)
					buf[i] = (uint8_t)alnum[prng() %
					    (sizeof(alnum) - 1)];
				o.data = buf;
				break;
			case SK_OK_BYTES:
				o.len = prng() % 3 == 0 ? 4 * (prng() % 11) :
				    8 * (prng() % 9);
				for (i = 0; i < o.len; i++)
					buf[i] = (uint8_t)prng();
				o.data = buf;
				break;
			case SK_OK_TIMEVAL:
				o.ival = prng() & 1 ? prng() % 10000000 :
				    (int64_t)prng() * 1000000 +
				    prng() % 1000000;
				break;
			default:
				o.ival = prng() & 1 ? edges[prng() %
				    nitems(edges)] : (int64_t)(int32_t)prng() %
				    (1 + prng() % 70000);
				break;
			}
			if (sk_opt_check(&o, s->proto, s->family, s->state,
			    why, sizeof(why)) == 0)
				break;
			o.len = 0;
			o.data = NULL;
		}
		if (tries == 8)
			continue;
		seen[o.id] = 1;
		if (o.len > 0)
			add_data(s, sk_opt_name(o.id), o.data, o.len);
		else
			add_int(s, sk_opt_name(o.id), o.ival);
	}
	sort_opts(s);
}

static struct sk_state *
random_state(void)
{
	static const enum sk_st tcp_states[] = { SK_ST_ESTABLISHED,
	    SK_ST_FIN_WAIT1, SK_ST_FIN_WAIT2, SK_ST_CLOSE_WAIT,
	    SK_ST_LAST_ACK, SK_ST_CLOSING, SK_ST_SYN_SENT, SK_ST_LISTEN,
	    SK_ST_BOUND, SK_ST_CLOSE, SK_ST_ENDED };
	static const enum sk_st udp_states[] = { SK_ST_CLOSE, SK_ST_BOUND,
	    SK_ST_ESTABLISHED };
	struct sk_state *s = sk_state_new();
	struct sk_tcp *t = &s->tcp;
	uint32_t i, n;

	assert_non_null(s);
	s->proto = prng() % 3 ? SK_PROTO_TCP : SK_PROTO_UDP;
	s->family = prng() & 1 ? AF_INET6 : AF_INET;
	s->state = s->proto == SK_PROTO_TCP ?
	    tcp_states[prng() % nitems(tcp_states)] :
	    udp_states[prng() % nitems(udp_states)];
	s->id = (((uint64_t)prng() << 32) | prng()) & ((1ULL << 53) - 1);
	random_addr(&s->local, s->family, s->state == SK_ST_CLOSE ? 0 :
	    (uint16_t)(1 + prng() % 65535));
	if (s->proto == SK_PROTO_UDP && s->state == SK_ST_ESTABLISHED &&
	    prng() % 4 == 0)
		random_addr(&s->local, s->family, 0);	/* never bound */
	if (needs_remote(s)) {
		random_addr(&s->remote, s->family,
		    (uint16_t)(1 + prng() % 65535));
		s->flags |= SK_F_REMOTE;
	}
	if (prng() & 1)
		s->flags |= SK_F_NONBLOCK;
	if (s->proto == SK_PROTO_TCP && (sk_st_tcp_conn(s->state) ||
	    s->state == SK_ST_ENDED) && prng() % 3 == 0) {
		s->flags |= SK_F_PARENT;
		s->parent_id = (((uint64_t)prng() << 32) | prng()) &
		    ((1ULL << 53) - 1);
	}
	s->bufs.snd = prng() >> 1;
	s->bufs.rcv = prng() >> 1;
	s->bufs.lock = (uint8_t)(prng() % 4);
	random_opts(s);

	if (s->proto == SK_PROTO_UDP) {
		if (s->state == SK_ST_CLOSE || sk_addr_port(&s->local) == 0)
			return s;
		n = prng() % 3 ? prng() % 12 : 0;
		if (n > 0) {
			s->udp.dgrams = calloc(n, sizeof(*s->udp.dgrams));
			assert_non_null(s->udp.dgrams);
		}
		for (i = 0; i < n; i++) {
			struct sk_dgram *d = &s->udp.dgrams[i];

			random_addr(&d->from, s->family,
			    (uint16_t)(1 + prng() % 65535));
			random_addr(&d->to, s->family,
			    sk_addr_port(&s->local));
			d->len = prng() % 8 ? prng() % 1500 : 0;
			d->data = bytes(d->len, prng());
			s->udp.ndgrams++;
		}
		return s;
	}
	switch (s->state) {
	case SK_ST_LISTEN:
		t->backlog = prng() % 2 ? prng() % 4096 : prng() >> 1;
		return s;
	case SK_ST_SYN_SENT:
		t->snd_seq = prng();
		return s;
	case SK_ST_ENDED:
		t->end = prng() & 1 ? SK_END_FIN : SK_END_RESET;
		t->rcvq_len = prng() % 3 ? prng() % 2048 : 0;
		t->rcvq = bytes(t->rcvq_len, prng());
		return s;
	case SK_ST_BOUND:
	case SK_ST_CLOSE:
		return s;
	default:
		break;
	}
	t->snd_seq = prng();
	t->rcv_seq = prng();
	t->sndq_len = prng() % 3 ? prng() % 2048 : 0;
	t->sndq_unsent = t->sndq_len ? prng() % (t->sndq_len + 1) : 0;
	t->sndq = bytes(t->sndq_len, prng());
	t->rcvq_len = prng() % 3 ? prng() % 2048 : 0;
	t->rcvq = bytes(t->rcvq_len, prng());
	t->mss = 88 + prng() % (65536 - 88);
	t->wscale = prng() & 1;
	t->snd_wscale = t->wscale ? (uint8_t)(prng() % 15) : 0;
	t->rcv_wscale = t->wscale ? (uint8_t)(prng() % 15) : 0;
	t->sack = prng() & 1;
	t->tstamp = prng() & 1;
	if (t->tstamp || (prng() & 1)) {
		s->flags |= SK_F_TSVAL;
		t->ts_val = prng();
	}
	t->window_clamp = prng() & 1 ? prng() >> 1 : 0;
	if (prng() & 1) {
		s->flags |= SK_F_PATH;
		t->path.srtt_us = prng() % 120000001;
		t->path.mdev_us = prng() % 120000001;
		t->path.rttvar_us = prng() % 120000001;
		t->path.cwnd = 1 + prng() % UINT32_MAX;
		t->path.ssthresh = 2 + prng() % (INT32_MAX - 1);
		t->path.mss = prng() % 65536;
		t->path.ts_recent = prng();
		t->path.ts_age = prng() % (24 * 24 * 3600);
		t->path.ecn = prng() & 1 ? 1 | (prng() % 16) : 0;
	}
	if (prng() & 1) {
		s->flags |= SK_F_WINDOW;
		t->win.snd_wl1 = prng();
		t->win.snd_wnd = prng() >> 1;
		t->win.max_window = t->win.snd_wnd + (prng() >> 1);
		t->win.rcv_wnd = prng();
		t->win.rcv_wup = prng();
	}
	return s;
}

static void
test_property_round_trip(void **unused)
{
	uint64_t seed = (uint64_t)time(NULL);
	struct sk_state *s;
	int i, splits = 0;

	(void)unused;
	if (getenv("SK_SEED") != NULL)
		seed = strtoull(getenv("SK_SEED"), NULL, 0);
	print_message("# seed %llu (SK_SEED=... to replay)\n",
	    (unsigned long long)seed);
	prng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (i = 0; i < 3000; i++) {
		s = random_state();
		check_round_trip(s, NULL);
		/* and split, in chunks of random sizes */
		if (i % 3 == 0) {
			check_split(s, prng() % 2 ? 0 : prng() % 4096,
			    1 + prng() % 1000, 1 + prng() % 5, NULL);
			splits++;
		}
		sk_state_free(s);
	}
	print_message("# 3000 random records, %d of them split\n", splits);
}

/* ---- base64 ---- */

static void
test_b64_strict(void **unused)
{
	static const struct { const char *in; int ok; size_t len; } c[] = {
		{ "", 1, 0 }, { "YQ==", 1, 1 }, { "YWI=", 1, 2 },
		{ "YWJj", 1, 3 }, { "YR==", 0, 0 }, { "YWJ=", 0, 0 },
		{ "YQ=", 0, 0 }, { "Y Q==", 0, 0 }, { "YQ==YQ==", 0, 0 },
		{ "====", 0, 0 }, { "YWJj\n", 0, 0 }, { "YW-j", 0, 0 },
		{ "A===", 0, 0 }, { "YW_j", 0, 0 }, { "Y=Jj", 0, 0 },
	};
	uint8_t *out, all[256];
	size_t i, n;
	char why[96], *text;

	(void)unused;
	for (i = 0; i < nitems(c); i++) {
		int rc = sk_b64_decode(c[i].in, strlen(c[i].in), &out, &n,
		    why, sizeof(why));

		if ((rc == 0) != c[i].ok)
			fail_msg("\"%s\": rc %d", c[i].in, rc);
		if (rc == 0) {
			assert_int_equal(n, c[i].len);
			free(out);
		} else
			assert_true(why[0] != '\0');
	}
	/* every byte value, every length mod 3 */
	for (i = 0; i < sizeof(all); i++)
		all[i] = (uint8_t)i;
	for (i = 0; i <= sizeof(all); i++) {
		text = sk_b64_encode(all, i);
		assert_non_null(text);
		assert_int_equal(strlen(text), sk_b64_enclen(i));
		assert_int_equal(sk_b64_decode(text, strlen(text), &out, &n,
		    why, sizeof(why)), 0);
		assert_int_equal(n, i);
		if (i > 0)
			assert_memory_equal(out, all, i);
		free(out);
		free(text);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_state),
		cmocka_unit_test(test_encoding_golden),
		cmocka_unit_test(test_round_trip_every_option),
		cmocka_unit_test(test_round_trip_parent_and_optional),
		cmocka_unit_test(test_round_trip_dgrams),
		cmocka_unit_test(test_round_trip_ns_records),
		cmocka_unit_test(test_opts_table_order),
		cmocka_unit_test(test_malformed_table),
		cmocka_unit_test(test_malformed_bounds),
		cmocka_unit_test(test_malformed_text),
		cmocka_unit_test(test_queue_cap),
		cmocka_unit_test(test_max_text),
		cmocka_unit_test(test_chunks_large_tcp),
		cmocka_unit_test(test_chunks_large_udp),
		cmocka_unit_test(test_chunks_small),
		cmocka_unit_test(test_chunks_refused),
		cmocka_unit_test(test_chunks_raw),
		cmocka_unit_test(test_chunk_encoder_bounds),
		cmocka_unit_test(test_property_round_trip),
		cmocka_unit_test(test_b64_strict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
