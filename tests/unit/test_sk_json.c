/*
 * Socket records, schema v1: round trips for every state, family and
 * option; a table of malformed records, each refused with the message
 * naming its field; a property test over generated records; strict
 * base64.
 */
#include <arpa/inet.h>
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
#include "sk_json.h"
#include "sk_state.h"

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
		b[i] = (uint8_t)(i * 7 + salt);
	return b;
}

static bool
is_conn(enum sk_st s)
{
	return s == SK_ST_ESTABLISHED || sk_st_fin_sent(s) || sk_st_fin_rcvd(s);
}

/* A valid state of the given kind with every field set to non-defaults. */
static struct sk_state *
make_state(enum sk_proto proto, int family, enum sk_st st)
{
	struct sk_state *s = sk_state_new();
	int v6 = family == AF_INET6;

	assert_non_null(s);
	s->proto = proto;
	s->family = family;
	s->state = st;
	s->id = 42;
	set_addr(&s->local, family, v6 ? "fd00:77::100" : "10.77.0.100",
	    st == SK_ST_CLOSE ? 0 : 8080);
	if (is_conn(st)) {
		set_addr(&s->remote, family, v6 ? "fd00:77::10" : "10.77.0.10",
		    40000);
		s->flags |= SK_F_REMOTE;
	}
	s->opts.reuseaddr = 1;
	s->opts.keepalive = 1;
	s->opts.priority = 3;
	s->opts.mark = 0xdeadbeef;
	s->opts.rcvbuf = 65536;
	s->opts.sndbuf = 32768;
	s->opts.linger_on = 1;
	s->opts.linger_secs = 5;
	s->opts.v6only = v6;
	if (proto == SK_PROTO_TCP) {
		s->opts.nodelay = 1;
		s->opts.cork = 0;
		s->opts.keepidle = 60;
		s->opts.keepintvl = 10;
		s->opts.keepcnt = 4;
		s->opts.user_timeout = 30000;
		s->opts.notsent_lowat = 16384;
		strcpy(s->opts.congestion, "cubic");
		if (st == SK_ST_LISTEN)
			s->tcp.backlog = 128;
		if (is_conn(st) && proto == SK_PROTO_TCP) {
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
			s->flags |= SK_F_TSVAL | SK_F_WINDOW;
			s->tcp.win.snd_wl1 = 12300;
			s->tcp.win.snd_wnd = 64000;
			s->tcp.win.max_window = 65535;
			s->tcp.win.rcv_wnd = 65000;
			s->tcp.win.rcv_wup = 12345;
		}
	} else if (st == SK_ST_ESTABLISHED) {
		set_addr(&s->remote, family, v6 ? "fd00:77::10" : "10.77.0.10",
		    5353);
		s->flags |= SK_F_REMOTE;
		s->udp.rcvq_dropped = 512;
	}
	return s;
}

static void
assert_state_equal(const struct sk_state *a, const struct sk_state *b)
{
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->parent_id, b->parent_id);
	assert_int_equal(a->proto, b->proto);
	assert_int_equal(a->family, b->family);
	assert_int_equal(a->state, b->state);
	assert_memory_equal(&a->local, &b->local, sizeof(a->local));
	if (a->flags & SK_F_REMOTE)
		assert_memory_equal(&a->remote, &b->remote, sizeof(a->remote));
	assert_memory_equal(&a->opts, &b->opts, sizeof(a->opts));
	assert_int_equal(a->tcp.snd_seq, b->tcp.snd_seq);
	assert_int_equal(a->tcp.rcv_seq, b->tcp.rcv_seq);
	assert_int_equal(a->tcp.sndq_len, b->tcp.sndq_len);
	assert_int_equal(a->tcp.sndq_unsent, b->tcp.sndq_unsent);
	assert_int_equal(a->tcp.rcvq_len, b->tcp.rcvq_len);
	if (a->tcp.sndq_len)
		assert_memory_equal(a->tcp.sndq, b->tcp.sndq, a->tcp.sndq_len);
	if (a->tcp.rcvq_len)
		assert_memory_equal(a->tcp.rcvq, b->tcp.rcvq, a->tcp.rcvq_len);
	assert_int_equal(a->tcp.mss, b->tcp.mss);
	assert_int_equal(a->tcp.snd_wscale, b->tcp.snd_wscale);
	assert_int_equal(a->tcp.rcv_wscale, b->tcp.rcv_wscale);
	assert_int_equal(a->tcp.wscale, b->tcp.wscale);
	assert_int_equal(a->tcp.sack, b->tcp.sack);
	assert_int_equal(a->tcp.tstamp, b->tcp.tstamp);
	assert_int_equal(a->tcp.ts_val, b->tcp.ts_val);
	assert_memory_equal(&a->tcp.win, &b->tcp.win, sizeof(a->tcp.win));
	assert_int_equal(a->tcp.backlog, b->tcp.backlog);
	assert_int_equal(a->udp.rcvq_dropped, b->udp.rcvq_dropped);
}

/* Encode, print, parse, decode; returns the decoded state. */
static struct sk_state *
round_trip(const struct sk_state *s, char **textp)
{
	struct sk_record rec;
	char err[256], *text;
	json_t *j;
	int rc;

	j = sk_json_encode(s);
	assert_non_null(j);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	assert_non_null(text);
	rc = sk_json_parse(text, strlen(text), NULL, &rec, err, sizeof(err));
	if (rc != 0)
		fail_msg("refused: %s\n%s", err, text);
	assert_int_equal(rec.type, SK_REC_SOCKET);
	if (textp != NULL)
		*textp = text;
	else
		free(text);
	return rec.u.sock;
}

/* ---- round trips ---- */

static void
test_round_trip_every_state(void **unused)
{
	static const enum sk_st tcp_states[] = { SK_ST_ESTABLISHED,
	    SK_ST_FIN_WAIT1, SK_ST_FIN_WAIT2, SK_ST_CLOSE_WAIT,
	    SK_ST_LAST_ACK, SK_ST_CLOSING, SK_ST_LISTEN, SK_ST_BOUND,
	    SK_ST_CLOSE };
	static const enum sk_st udp_states[] = { SK_ST_CLOSE, SK_ST_BOUND,
	    SK_ST_ESTABLISHED };
	static const int fams[] = { AF_INET, AF_INET6 };
	struct sk_state *s, *d;
	size_t i, f;

	(void)unused;
	for (f = 0; f < 2; f++) {
		for (i = 0; i < sizeof(tcp_states) / sizeof(tcp_states[0]);
		    i++) {
			s = make_state(SK_PROTO_TCP, fams[f], tcp_states[i]);
			d = round_trip(s, NULL);
			assert_state_equal(s, d);
			sk_state_free(s);
			sk_state_free(d);
		}
		for (i = 0; i < 3; i++) {
			s = make_state(SK_PROTO_UDP, fams[f], udp_states[i]);
			d = round_trip(s, NULL);
			assert_state_equal(s, d);
			sk_state_free(s);
			sk_state_free(d);
		}
	}
}

static void
test_round_trip_parent_and_optional(void **unused)
{
	struct sk_state *s, *d;

	(void)unused;
	s = make_state(SK_PROTO_TCP, AF_INET6, SK_ST_ESTABLISHED);
	s->parent_id = 7;
	s->flags |= SK_F_PARENT;
	d = round_trip(s, NULL);
	assert_state_equal(s, d);
	sk_state_free(d);
	/* No window, no timestamp value, no wscale, empty queues. */
	s->flags &= ~(SK_F_WINDOW | SK_F_TSVAL | SK_F_PARENT);
	s->parent_id = 0;
	memset(&s->tcp.win, 0, sizeof(s->tcp.win));
	s->tcp.ts_val = 0;
	s->tcp.wscale = false;
	s->tcp.snd_wscale = s->tcp.rcv_wscale = 0;
	free(s->tcp.sndq);
	free(s->tcp.rcvq);
	s->tcp.sndq = s->tcp.rcvq = NULL;
	s->tcp.sndq_len = s->tcp.sndq_unsent = s->tcp.rcvq_len = 0;
	d = round_trip(s, NULL);
	assert_state_equal(s, d);
	assert_null(d->tcp.sndq);
	assert_null(d->tcp.rcvq);
	sk_state_free(s);
	sk_state_free(d);
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
	text = json_dumps(j, 0);
	json_decref(j);
	assert_int_equal(sk_json_parse(text, strlen(text), NULL, &rec, err,
	    sizeof(err)), 0);
	free(text);
	assert_int_equal(rec.type, SK_REC_LINK);
	assert_string_equal(rec.u.link.name, l.name);
	assert_string_equal(rec.u.link.kind, l.kind);
	assert_memory_equal(rec.u.link.mac, l.mac, 6);
	assert_int_equal(rec.u.link.mtu, l.mtu);

	j = sk_json_encode_addr(&a);
	text = json_dumps(j, 0);
	json_decref(j);
	assert_int_equal(sk_json_parse(text, strlen(text), NULL, &rec, err,
	    sizeof(err)), 0);
	free(text);
	assert_int_equal(rec.type, SK_REC_ADDR);
	assert_string_equal(rec.u.addr.dev, a.dev);
	assert_int_equal(rec.u.addr.family, a.family);
	assert_memory_equal(rec.u.addr.addr, a.addr, 16);
	assert_int_equal(rec.u.addr.prefix, a.prefix);

	j = sk_json_encode_route(&r);
	text = json_dumps(j, 0);
	json_decref(j);
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

/* ---- malformed records ---- */

struct bad_case {
	const char	*path;		/* dotted path to change */
	const char	*value;		/* JSON text, NULL = delete */
	const char	*expect;	/* exact refusal message */
};

static const struct bad_case bad_cases[] = {
	{ "v", "2", "v: version 2 not supported (this side speaks 1)" },
	{ "v", NULL, "v: missing" },
	{ "v", "\"1\"", "v: not an integer" },
	{ "v", "1.0", "v: not an integer" },
	{ "type", "\"sock\"", "type: unknown record type \"sock\"" },
	{ "extra", "1", "extra: unknown field" },
	{ "id", "-1", "id: -1 out of range 0..9007199254740991" },
	{ "proto", "\"sctp\"", "proto: invalid character at offset 0" },
	{ "proto", "\"udt\"", "proto: \"udt\" is not tcp or udp" },
	{ "family", "\"inet4\"", "family: invalid character at offset 4" },
	{ "state", "\"SYN_SENT\"", "state: SYN_SENT cannot be restored for tcp" },
	{ "state", "\"TIME_WAIT\"", "state: TIME_WAIT cannot be restored for tcp" },
	{ "state", "\"BOGUS\"", "state: unknown state \"BOGUS\"" },
	{ "state", "7", "state: not a string" },
	{ "local.port", "70000", "local.port: 70000 out of range 1..65535" },
	{ "local.port", "0", "local.port: 0 out of range 1..65535" },
	{ "local.addr", "\"10.77.0.300\"", "local.addr: not an IPv4 address" },
	{ "local.addr", "\"fd00::1\"", "local.addr: not an IPv4 address" },
	{ "local.zone", "1", "local.zone: unknown field" },
	{ "remote", NULL, "remote: missing" },
	{ "remote.port", "0", "remote.port: 0 out of range 1..65535" },
	{ "parent", "\"3\"", "parent: not an integer" },
	{ "opts", NULL, "opts: missing" },
	{ "opts.nodelay", "1", "opts.nodelay: not a boolean" },
	{ "opts.keepcnt", "128", "opts.keepcnt: 128 out of range 0..127" },
	{ "opts.keepidle", "40000", "opts.keepidle: 40000 out of range 0..32767" },
	{ "opts.mark", "4294967296", "opts.mark: 4294967296 out of range 0..4294967295" },
	{ "opts.rcvbuf", "-2", "opts.rcvbuf: -2 out of range 0..1073741823" },
	{ "opts.v6only", "true", "opts.v6only: only for family inet6" },
	{ "opts.congestion", "\"\"", "opts.congestion: length 0 out of range 1..15" },
	{ "opts.congestion", "\"../../x\"", "opts.congestion: invalid character at offset 0" },
	{ "opts.congestion", "\"aaaaaaaaaaaaaaaa\"", "opts.congestion: length 16 out of range 1..15" },
	{ "tcp", NULL, "tcp: missing" },
	{ "tcp", "[]", "tcp: not an object" },
	{ "tcp.backlog", "5", "tcp.backlog: unknown field" },
	{ "tcp.snd_wscale", "15", "tcp.snd_wscale: 15 out of range 0..14" },
	{ "tcp.rcv_wscale", "-1", "tcp.rcv_wscale: -1 out of range 0..14" },
	{ "tcp.mss", "87", "tcp.mss: 87 out of range 88..65535" },
	{ "tcp.mss", "65536", "tcp.mss: 65536 out of range 88..65535" },
	{ "tcp.snd_seq", "4294967296", "tcp.snd_seq: 4294967296 out of range 0..4294967295" },
	{ "tcp.rcv_seq", "-1", "tcp.rcv_seq: -1 out of range 0..4294967295" },
	{ "tcp.rcv_seq", NULL, "tcp.rcv_seq: missing" },
	{ "tcp.sack", "null", "tcp.sack: not a boolean" },
	{ "tcp.ts_val", "1e3", "tcp.ts_val: not an integer" },
	{ "tcp.window.max_window", "1", "tcp.window.max_window: 1 below snd_wnd 64000" },
	{ "tcp.window.rcv_wup", NULL, "tcp.window.rcv_wup: missing" },
	{ "tcp.sndq.len", "1001", "tcp.sndq.data: decodes to 1000 bytes, len is 1001" },
	{ "tcp.sndq.len", "1003", "tcp.sndq.data: 1336 base64 characters for len 1003 (expected 1340)" },
	{ "tcp.sndq.data", "\"!!!!\"", "tcp.sndq.data: 4 base64 characters for len 1000 (expected 1336)" },
	{ "tcp.sndq.len", "33554433", "tcp.sndq.len: 33554433 out of range 0..33554432" },
	{ "tcp.sndq.unsent", "1001", "tcp.sndq.unsent: 1001 out of range 0..1000" },
	{ "tcp.sndq.data", "7", "tcp.sndq.data: not a string" },
	{ "tcp.sndq.data", NULL, "tcp.sndq.data: missing" },
	{ "tcp.rcvq.len", "79", "tcp.rcvq.data: 104 base64 characters for len 79 (expected 108)" },
	{ "tcp.rcvq.len", "76", "tcp.rcvq.data: decodes to 77 bytes, len is 76" },
	{ "tcp.rcvq.unsent", "0", "tcp.rcvq.unsent: unknown field" },
	{ "udp", "{}", "udp: not allowed for tcp" },
};

/* Set (or delete) a dotted path in doc. */
static void
mutate(json_t *doc, const char *path, const char *value)
{
	char buf[128], *dot, *p = buf;
	json_t *o = doc, *v;

	snprintf(buf, sizeof(buf), "%s", path);
	while ((dot = strchr(p, '.')) != NULL) {
		*dot = '\0';
		o = json_object_get(o, p);
		assert_non_null(o);
		p = dot + 1;
	}
	if (value == NULL) {
		json_object_del(o, p);
		return;
	}
	v = json_loads(value, JSON_DECODE_ANY, NULL);
	assert_non_null(v);
	json_object_set_new(o, p, v);
}

static void
test_malformed_table(void **unused)
{
	struct sk_state *s;
	struct sk_record rec;
	char err[256], *text;
	size_t i;
	json_t *base, *doc;

	(void)unused;
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ESTABLISHED);
	base = sk_json_encode(s);
	sk_state_free(s);
	assert_non_null(base);
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		doc = json_deep_copy(base);
		mutate(doc, bad_cases[i].path, bad_cases[i].value);
		text = json_dumps(doc, 0);
		json_decref(doc);
		err[0] = '\0';
		if (sk_json_parse(text, strlen(text), NULL, &rec, err,
		    sizeof(err)) == 0) {
			sk_record_clear(&rec);
			fail_msg("case %zu (%s) accepted", i, bad_cases[i].path);
		}
		if (strcmp(err, bad_cases[i].expect) != 0)
			fail_msg("case %zu (%s): got \"%s\", expected \"%s\"",
			    i, bad_cases[i].path, err, bad_cases[i].expect);
		assert_int_equal(rec.type, 0);
		assert_null(rec.u.sock);
		free(text);
	}
	json_decref(base);
}

static void
test_malformed_text(void **unused)
{
	static const struct { const char *text, *expect; } cases[] = {
		{ "[1]", "record: not an object" },
		{ "{\"v\":1,\"v\":1,\"type\":\"link\"}", "record: invalid JSON" },
		{ "{\"v\":1", "record: invalid JSON" },
		{ "{\"v\":1,\"type\":\"link\",\"name\":\"eth0\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01\",\"mtu\":1500}", "mac: not a lower-case MAC" },
		{ "{\"v\":1,\"type\":\"link\",\"name\":\"eth/0\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01:00\",\"mtu\":1500}", "name: invalid character at offset 3" },
		{ "{\"v\":1,\"type\":\"link\",\"name\":\"eth0\",\"kind\":\"\","
		  "\"mac\":\"52:54:00:77:01:00\",\"mtu\":67}", "mtu: 67 out of range 68..65536" },
		{ "{\"v\":1,\"type\":\"addr\",\"dev\":\"eth0\",\"family\":\"inet\","
		  "\"addr\":\"10.0.0.1\",\"prefix\":33}", "prefix: 33 out of range 0..32" },
		{ "{\"v\":1,\"type\":\"route\",\"family\":\"inet6\",\"dst\":\"::\","
		  "\"prefix\":0,\"dev\":\"\",\"metric\":0,\"table\":254}",
		  "dev: length 0 out of range 1..15" },
		{ "{\"v\":1,\"type\":\"route\",\"family\":\"inet6\",\"dst\":\"::\","
		  "\"prefix\":0,\"gateway\":\"10.0.0.1\",\"dev\":\"\",\"metric\":0,"
		  "\"table\":254}", "gateway: not an IPv6 address" },
	};
	struct sk_record rec;
	char err[256];
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (sk_json_parse(cases[i].text, strlen(cases[i].text), NULL,
		    &rec, err, sizeof(err)) == 0)
			fail_msg("case %zu accepted", i);
		if (strncmp(err, cases[i].expect, strlen(cases[i].expect)) != 0)
			fail_msg("case %zu: got \"%s\", expected \"%s...\"", i,
			    err, cases[i].expect);
	}
}

static void
test_queue_cap(void **unused)
{
	struct sk_json_limits lim = { 999 };
	struct sk_state *s;
	struct sk_record rec;
	char err[256], *text;
	json_t *j;

	(void)unused;
	s = make_state(SK_PROTO_TCP, AF_INET, SK_ST_ESTABLISHED);
	j = sk_json_encode(s);
	sk_state_free(s);
	text = json_dumps(j, 0);
	json_decref(j);
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
	assert_non_null(strstr(err, "limit"));
	free(text);
}

/* ---- property test ---- */

static struct sk_state *
random_state(void)
{
	static const enum sk_st tcp_states[] = { SK_ST_ESTABLISHED,
	    SK_ST_FIN_WAIT1, SK_ST_FIN_WAIT2, SK_ST_CLOSE_WAIT,
	    SK_ST_LAST_ACK, SK_ST_CLOSING, SK_ST_LISTEN, SK_ST_BOUND,
	    SK_ST_CLOSE };
	static const enum sk_st udp_states[] = { SK_ST_CLOSE, SK_ST_BOUND,
	    SK_ST_ESTABLISHED };
	static const char *ccs[] = { "cubic", "reno", "bbr", "dctcp" };
	enum sk_proto proto = prng() % 3 ? SK_PROTO_TCP : SK_PROTO_UDP;
	int family = prng() & 1 ? AF_INET6 : AF_INET;
	enum sk_st st = proto == SK_PROTO_TCP ? tcp_states[prng() % 9] :
	    udp_states[prng() % 3];
	struct sk_state *s = make_state(proto, family, st);
	struct sockaddr_in *s4;
	struct sockaddr_in6 *s6;
	uint32_t i;

	s->id = ((uint64_t)prng() << 21) ^ prng();
	if (st != SK_ST_CLOSE) {
		if (family == AF_INET) {
			s4 = (struct sockaddr_in *)&s->local;
			s4->sin_addr.s_addr = prng();
			s4->sin_port = htons((uint16_t)(prng() % 65535 + 1));
		} else {
			s6 = (struct sockaddr_in6 *)&s->local;
			for (i = 0; i < 16; i++)
				s6->sin6_addr.s6_addr[i] = (uint8_t)prng();
			s6->sin6_port = htons((uint16_t)(prng() % 65535 + 1));
		}
	}
	s->opts.reuseaddr = prng() & 1;
	s->opts.reuseport = prng() & 1;
	s->opts.keepalive = prng() & 1;
	s->opts.priority = (int)(prng() % 7);
	s->opts.mark = prng();
	s->opts.rcvbuf = (int)(prng() % 1000000);
	s->opts.sndbuf = (int)(prng() % 1000000);
	s->opts.linger_on = prng() & 1;
	s->opts.linger_secs = (int)(prng() % 100);
	if (proto == SK_PROTO_TCP) {
		s->opts.nodelay = prng() & 1;
		s->opts.cork = prng() & 1;
		s->opts.keepidle = (int)(prng() % 32768);
		s->opts.keepintvl = (int)(prng() % 32768);
		s->opts.keepcnt = (int)(prng() % 128);
		s->opts.user_timeout = prng() % 100000;
		s->opts.notsent_lowat = prng();
		memset(s->opts.congestion, 0, sizeof(s->opts.congestion));
		strcpy(s->opts.congestion, ccs[prng() % 4]);
	}
	if (st == SK_ST_LISTEN)
		s->tcp.backlog = prng() % 65536;
	if (proto == SK_PROTO_TCP && is_conn(st)) {
		free(s->tcp.sndq);
		free(s->tcp.rcvq);
		s->tcp.snd_seq = prng();
		s->tcp.rcv_seq = prng();
		s->tcp.sndq_len = prng() % 3 ? prng() % 2048 : 0;
		s->tcp.sndq_unsent = s->tcp.sndq_len ?
		    prng() % (s->tcp.sndq_len + 1) : 0;
		s->tcp.sndq = bytes(s->tcp.sndq_len, prng());
		s->tcp.rcvq_len = prng() % 3 ? prng() % 2048 : 0;
		s->tcp.rcvq = bytes(s->tcp.rcvq_len, prng());
		s->tcp.mss = 88 + prng() % (65536 - 88);
		s->tcp.wscale = prng() & 1;
		s->tcp.snd_wscale = s->tcp.wscale ? (uint8_t)(prng() % 15) : 0;
		s->tcp.rcv_wscale = s->tcp.wscale ? (uint8_t)(prng() % 15) : 0;
		s->tcp.sack = prng() & 1;
		s->tcp.tstamp = prng() & 1;
		s->flags &= ~(SK_F_TSVAL | SK_F_WINDOW);
		s->tcp.ts_val = 0;
		memset(&s->tcp.win, 0, sizeof(s->tcp.win));
		if (prng() & 1) {
			s->flags |= SK_F_TSVAL;
			s->tcp.ts_val = prng();
		}
		if (prng() & 1) {
			s->flags |= SK_F_WINDOW;
			s->tcp.win.snd_wl1 = prng();
			s->tcp.win.snd_wnd = prng() >> 1;
			s->tcp.win.max_window = s->tcp.win.snd_wnd + (prng() >> 1);
			s->tcp.win.rcv_wnd = prng();
			s->tcp.win.rcv_wup = prng();
		}
		if (prng() & 1) {
			s->flags |= SK_F_PARENT;
			s->parent_id = prng();
		}
	}
	return s;
}

static void
test_property_round_trip(void **unused)
{
	uint64_t seed = (uint64_t)time(NULL);
	struct sk_state *s, *d;
	char *t1, *t2;
	json_t *j;
	int i;

	(void)unused;
	if (getenv("SK_SEED") != NULL)
		seed = strtoull(getenv("SK_SEED"), NULL, 0);
	print_message("# seed %llu (SK_SEED=... to replay)\n",
	    (unsigned long long)seed);
	prng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (i = 0; i < 3000; i++) {
		s = random_state();
		d = round_trip(s, &t1);
		assert_state_equal(s, d);
		/* The encoding is canonical: re-encoding gives the same text. */
		j = sk_json_encode(d);
		t2 = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(j);
		assert_string_equal(t1, t2);
		free(t1);
		free(t2);
		sk_state_free(s);
		sk_state_free(d);
	}
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
		{ "A===", 0, 0 },
	};
	uint8_t *out;
	size_t i, n;
	char why[96];

	(void)unused;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int rc = sk_b64_decode(c[i].in, strlen(c[i].in), &out, &n,
		    why, sizeof(why));

		if ((rc == 0) != c[i].ok)
			fail_msg("\"%s\": rc %d", c[i].in, rc);
		if (rc == 0) {
			assert_int_equal(n, c[i].len);
			free(out);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_state),
		cmocka_unit_test(test_round_trip_parent_and_optional),
		cmocka_unit_test(test_round_trip_ns_records),
		cmocka_unit_test(test_malformed_table),
		cmocka_unit_test(test_malformed_text),
		cmocka_unit_test(test_queue_cap),
		cmocka_unit_test(test_property_round_trip),
		cmocka_unit_test(test_b64_strict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
