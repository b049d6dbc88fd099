/* SPDX-License-Identifier: ISC */
/*
 * Socket records, schema v2: encode a struct sk_state, and decode and
 * validate one strictly.  Field by field specification:
 * docs/protocol.md.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sk_b64.h"
#include "sk_json.h"
#include "sk_json_priv.h"

#define SK_JSON_MAX_ID	((1LL << 53) - 1)	/* exact in any JSON reader */

static const char sk_jcs_state[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_12";

static const char *const part_names[SK_PART__MAX] = {
	[SK_PART_SNDQ] = "sndq", [SK_PART_RCVQ] = "rcvq",
	[SK_PART_DGRAMS] = "dgrams",
};

const char *
sk_part_name(int p)
{
	return p >= 0 && p < SK_PART__MAX ? part_names[p] : "?";
}

/* Bytes of a part (datagrams: their bytes), for the split decision. */
static uint64_t
part_bytes(const struct sk_state *st, enum sk_part p)
{
	uint64_t n = 0;
	uint32_t i;

	switch (p) {
	case SK_PART_SNDQ:
		return st->tcp.sndq_len;
	case SK_PART_RCVQ:
		return st->tcp.rcvq_len;
	default:
		for (i = 0; i < st->udp.ndgrams; i++)
			n += st->udp.dgrams[i].len + 64;
		return n;
	}
}

bool
sk_json_split(const struct sk_state *st, enum sk_part p, uint32_t inline_max)
{
	return part_bytes(st, p) > inline_max;
}

/* ---- encode ---- */

json_t *
sk_json_enc_sockaddr(const struct sockaddr_storage *ss)
{
	char buf[INET6_ADDRSTRLEN];
	const void *a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else if (ss->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	else
		return NULL;
	if (inet_ntop(ss->ss_family, a, buf, sizeof(buf)) == NULL)
		return NULL;
	return json_pack("{s:s, s:i}", "addr", buf, "port",
	    (json_int_t)sk_addr_port(ss));
}

/* {"len": N[, "unsent": U], "data": "..."} or, split, "chunks": true. */
static json_t *
enc_queue(const uint8_t *buf, uint32_t len, const uint32_t *unsent,
    bool split)
{
	json_t *q;

	q = json_pack("{s:I}", "len", (json_int_t)len);
	if (q == NULL)
		return NULL;
	if (unsent != NULL && json_object_set_new(q, "unsent",
	    json_integer(*unsent)) < 0)
		goto out_free;
	if (split) {
		if (json_object_set_new(q, "chunks", json_true()) < 0)
			goto out_free;
		return q;
	}
	if (json_object_set_new(q, "data", sk_json_b64(buf, len)) < 0)
		goto out_free;
	return q;

out_free:
	json_decref(q);
	return NULL;
}

json_t *
sk_json_enc_dgram(const struct sk_dgram *d)
{
	json_t *from = sk_json_enc_sockaddr(&d->from);
	json_t *to = sk_json_enc_sockaddr(&d->to);
	json_t *data = sk_json_b64(d->data, d->len);
	json_t *j = NULL;

	if (from != NULL && to != NULL && data != NULL)
		j = json_pack("{s:O, s:O, s:O}", "from", from, "to", to,
		    "data", data);
	json_decref(from);
	json_decref(to);
	json_decref(data);
	return j;
}

static json_t *
enc_tcp(const struct sk_state *st, uint32_t inline_max)
{
	const struct sk_tcp *t = &st->tcp;
	json_t *j;

	switch (st->state) {
	case SK_ST_LISTEN:
		return json_pack("{s:I}", "backlog", (json_int_t)t->backlog);
	case SK_ST_SYN_SENT:
		return json_pack("{s:I}", "isn", (json_int_t)t->snd_seq);
	case SK_ST_ENDED:
		/* s:o* leaves out a queue that failed to encode */
		j = json_pack("{s:s*, s:o*}", "end", sk_end_name(t->end),
		    "rcvq", enc_queue(t->rcvq, t->rcvq_len, NULL,
		    sk_json_split(st, SK_PART_RCVQ, inline_max)));
		if (j == NULL || json_object_get(j, "end") == NULL ||
		    json_object_get(j, "rcvq") == NULL)
			goto out_free;
		return j;
	default:
		break;
	}
	j = json_pack("{s:I, s:I, s:I, s:b, s:i, s:i, s:b, s:b, s:o*, s:o*}",
	    "snd_seq", (json_int_t)t->snd_seq, "rcv_seq",
	    (json_int_t)t->rcv_seq, "mss", (json_int_t)t->mss, "wscale",
	    t->wscale, "snd_wscale", (int)t->snd_wscale, "rcv_wscale",
	    (int)t->rcv_wscale, "sack", t->sack, "tstamp", t->tstamp,
	    "sndq", enc_queue(t->sndq, t->sndq_len, &t->sndq_unsent,
	    sk_json_split(st, SK_PART_SNDQ, inline_max)),
	    "rcvq", enc_queue(t->rcvq, t->rcvq_len, NULL,
	    sk_json_split(st, SK_PART_RCVQ, inline_max)));
	if (j == NULL || json_object_get(j, "sndq") == NULL ||
	    json_object_get(j, "rcvq") == NULL)
		goto out_free;
	if ((st->flags & SK_F_TSVAL) && json_object_set_new(j, "ts_val",
	    json_integer(t->ts_val)) < 0)
		goto out_free;
	if (t->window_clamp && json_object_set_new(j, "window_clamp",
	    json_integer(t->window_clamp)) < 0)
		goto out_free;
	if ((st->flags & SK_F_WINDOW) && json_object_set_new(j, "window",
	    json_pack("{s:I, s:I, s:I, s:I, s:I}",
	    "snd_wl1", (json_int_t)t->win.snd_wl1,
	    "snd_wnd", (json_int_t)t->win.snd_wnd,
	    "max_window", (json_int_t)t->win.max_window,
	    "rcv_wnd", (json_int_t)t->win.rcv_wnd,
	    "rcv_wup", (json_int_t)t->win.rcv_wup)) < 0)
		goto out_free;
	if ((st->flags & SK_F_PATH) && json_object_set_new(j, "path",
	    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "srtt_us", (json_int_t)t->path.srtt_us,
	    "mdev_us", (json_int_t)t->path.mdev_us,
	    "rttvar_us", (json_int_t)t->path.rttvar_us,
	    "cwnd", (json_int_t)t->path.cwnd,
	    "ssthresh", (json_int_t)t->path.ssthresh,
	    "mss", (json_int_t)t->path.mss,
	    "ts_recent", (json_int_t)t->path.ts_recent,
	    "ts_age", (json_int_t)t->path.ts_age,
	    "ecn", (json_int_t)t->path.ecn)) < 0)
		goto out_free;
	return j;

out_free:
	json_decref(j);
	return NULL;
}

static json_t *
enc_udp(const struct sk_state *st, uint32_t inline_max)
{
	json_t *a;
	uint32_t i;

	if (sk_json_split(st, SK_PART_DGRAMS, inline_max))
		return json_pack("{s:I}", "dgrams",
		    (json_int_t)st->udp.ndgrams);
	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < st->udp.ndgrams; i++)
		if (json_array_append_new(a,
		    sk_json_enc_dgram(&st->udp.dgrams[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return json_pack("{s:o}", "dgrams", a);
}

json_t *
sk_json_encode_split(const struct sk_state *st, uint32_t inline_max)
{
	json_t *j, *part;

	j = json_pack("{s:i, s:s, s:I, s:s, s:s, s:s}", "v", SK_JSON_VERSION,
	    "type", "socket", "id", (json_int_t)st->id, "proto",
	    sk_proto_name(st->proto) ? sk_proto_name(st->proto) : "?",
	    "family", st->family == AF_INET6 ? "inet6" : "inet",
	    "state", sk_st_name(st->state) ? sk_st_name(st->state) : "?");
	if (j == NULL)
		return NULL;
	if ((st->flags & SK_F_PARENT) && json_object_set_new(j, "parent",
	    json_integer((json_int_t)st->parent_id)) < 0)
		goto out_free;
	if ((st->flags & SK_F_NONBLOCK) && json_object_set_new(j, "nonblock",
	    json_true()) < 0)
		goto out_free;
	if ((part = sk_json_enc_sockaddr(&st->local)) == NULL ||
	    json_object_set_new(j, "local", part) < 0)
		goto out_free;
	if ((st->flags & SK_F_REMOTE) &&
	    ((part = sk_json_enc_sockaddr(&st->remote)) == NULL ||
	    json_object_set_new(j, "remote", part) < 0))
		goto out_free;
	if ((part = sk_json_enc_bufs(st)) == NULL ||
	    json_object_set_new(j, "bufs", part) < 0)
		goto out_free;
	if (st->nopts > 0 && ((part = sk_json_enc_opts(st)) == NULL ||
	    json_object_set_new(j, "opts", part) < 0))
		goto out_free;
	if (st->proto == SK_PROTO_TCP && st->state != SK_ST_CLOSE &&
	    st->state != SK_ST_BOUND &&
	    ((part = enc_tcp(st, inline_max)) == NULL ||
	    json_object_set_new(j, "tcp", part) < 0))
		goto out_free;
	if (st->proto == SK_PROTO_UDP && st->udp.ndgrams > 0 &&
	    ((part = enc_udp(st, inline_max)) == NULL ||
	    json_object_set_new(j, "udp", part) < 0))
		goto out_free;
	return j;

out_free:
	json_decref(j);
	return NULL;
}

json_t *
sk_json_encode(const struct sk_state *st)
{
	return sk_json_encode_split(st, UINT32_MAX);
}

/* ---- decode ---- */

int
sk_jsockaddr(struct sk_jctx *c, const json_t *top, const char *path,
    const char *key, bool required, int family, bool need_port,
    struct sockaddr_storage *ss)
{
	static const char *const keys[] = { "addr", "port", NULL };
	const json_t *o;
	char p[48];
	int64_t port;
	int rc;

	sk_jpath(p, sizeof(p), path, key);
	if ((rc = sk_jobj(c, top, path, key, required, &o)) != 0)
		return rc;
	if (sk_jkeys(c, o, p, keys) < 0)
		return -1;
	if (sk_jint(c, o, p, "port", true, need_port ? 1 : 0, 65535,
	    &port) < 0)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons((uint16_t)port);
		return sk_jaddr(c, o, p, "addr", true, AF_INET,
		    (uint8_t *)&s->sin_addr) < 0 ? -1 : 0;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons((uint16_t)port);
		return sk_jaddr(c, o, p, "addr", true, AF_INET6,
		    (uint8_t *)&s->sin6_addr) < 0 ? -1 : 0;
	}
}

#define JB(obj, path, key, req, dst) do {				\
	bool b_ = false;						\
	int r_ = sk_jbool(c, obj, path, key, req, &b_);			\
	if (r_ < 0) return -1;						\
	if (r_ == 0) (dst) = b_;					\
} while (0)
#define JI(obj, path, key, req, min, max, dst) do {			\
	int64_t i_ = 0;							\
	int r_ = sk_jint(c, obj, path, key, req, min, max, &i_);	\
	if (r_ < 0) return -1;						\
	if (r_ == 0) (dst) = i_;					\
} while (0)

/*
 * A queue: its bytes, or (when the limits allow chunks) an announcement
 * that they follow; then *data is allocated for them and *pending says
 * how many are to come.
 */
static int
sk_jqueue(struct sk_jctx *c, const json_t *t, const char *key,
    uint32_t *len, uint32_t *unsent, uint8_t **data, uint32_t *pending)
{
	static const char *const k_snd[] = { "len", "unsent", "data",
	    "chunks", NULL };
	static const char *const k_rcv[] = { "len", "data", "chunks", NULL };
	char path[32], why[96];
	const json_t *q, *d;
	bool chunks = false;
	size_t n;
	int64_t v = 0;
	int rc;

	sk_jpath(path, sizeof(path), "tcp", key);
	if (sk_jobj(c, t, "tcp", key, true, &q) < 0)
		return -1;
	if (sk_jkeys(c, q, path, unsent ? k_snd : k_rcv) < 0)
		return -1;
	if (sk_jint(c, q, path, "len", true, 0, c->max_queue, &v) < 0)
		return -1;
	*len = (uint32_t)v;
	if (unsent != NULL) {
		if (sk_jint(c, q, path, "unsent", true, 0, *len, &v) < 0)
			return -1;
		*unsent = (uint32_t)v;
	}
	if ((rc = sk_jbool(c, q, path, "chunks", false, &chunks)) < 0)
		return -1;
	if (rc == 0) {
		if (!chunks || !c->chunks) {
			sk_jerr(c, path, "chunks", "not allowed here");
			return -1;
		}
		if (json_object_get(q, "data") != NULL) {
			sk_jerr(c, path, "data", "not with chunks");
			return -1;
		}
		if (*len > 0 && (*data = malloc(*len)) == NULL) {
			sk_jerr(c, path, "len", "out of memory");
			return -1;
		}
		*pending = *len;
		return 0;
	}
	d = json_object_get(q, "data");
	if (d == NULL) {
		sk_jerr(c, path, "data", "missing");
		return -1;
	}
	if (!json_is_string(d)) {
		sk_jerr(c, path, "data", "not a string");
		return -1;
	}
	/* Bound the text by the declared length before decoding. */
	if (json_string_length(d) != sk_b64_enclen(*len)) {
		sk_jerr(c, path, "data", "%zu base64 characters for len %u "
		    "(expected %zu)", json_string_length(d), *len,
		    sk_b64_enclen(*len));
		return -1;
	}
	if (sk_b64_decode(json_string_value(d), json_string_length(d), data,
	    &n, why, sizeof(why)) < 0) {
		sk_jerr(c, path, "data", "%s", why);
		return -1;
	}
	if (n != *len) {
		sk_jerr(c, path, "data", "decodes to %zu bytes, len is %u", n,
		    *len);
		return -1;
	}
	return 0;
}

static int
sk_jwindow(struct sk_jctx *c, const json_t *j, struct sk_state *st)
{
	static const char *const k_win[] = { "snd_wl1", "snd_wnd",
	    "max_window", "rcv_wnd", "rcv_wup", NULL };
	struct sk_tcp *t = &st->tcp;
	const json_t *w;
	int rc;

	if ((rc = sk_jobj(c, j, "tcp", "window", false, &w)) != 0)
		return rc < 0 ? -1 : 0;
	if (sk_jkeys(c, w, "tcp.window", k_win) < 0)
		return -1;
	JI(w, "tcp.window", "snd_wl1", true, 0, UINT32_MAX, t->win.snd_wl1);
	JI(w, "tcp.window", "snd_wnd", true, 0, UINT32_MAX, t->win.snd_wnd);
	JI(w, "tcp.window", "max_window", true, 0, UINT32_MAX,
	    t->win.max_window);
	JI(w, "tcp.window", "rcv_wnd", true, 0, UINT32_MAX, t->win.rcv_wnd);
	JI(w, "tcp.window", "rcv_wup", true, 0, UINT32_MAX, t->win.rcv_wup);
	if (t->win.max_window < t->win.snd_wnd) {
		sk_jerr(c, "tcp.window", "max_window", "%u below snd_wnd %u",
		    t->win.max_window, t->win.snd_wnd);
		return -1;
	}
	st->flags |= SK_F_WINDOW;
	return 0;
}

/*
 * What the connection knew of its path (TCP_REPAIR_PATH).  The ranges
 * are the kernel's (net/ipv4/tcp.c of the series), checked here so a
 * record out of them is refused by name rather than by the kernel.
 */
static int
sk_jtcp_path(struct sk_jctx *c, const json_t *j, struct sk_state *st)
{
	static const char *const k_path[] = { "srtt_us", "mdev_us",
	    "rttvar_us", "cwnd", "ssthresh", "mss", "ts_recent", "ts_age",
	    "ecn", NULL };
	/* TCP_RTO_MAX, 120 s */
	const int64_t rtt_max = 120000000;
	struct sk_tcp_path *p = &st->tcp.path;
	const json_t *o;
	int rc;

	if ((rc = sk_jobj(c, j, "tcp", "path", false, &o)) != 0)
		return rc < 0 ? -1 : 0;
	if (sk_jkeys(c, o, "tcp.path", k_path) < 0)
		return -1;
	JI(o, "tcp.path", "srtt_us", true, 0, rtt_max, p->srtt_us);
	JI(o, "tcp.path", "mdev_us", true, 0, rtt_max, p->mdev_us);
	JI(o, "tcp.path", "rttvar_us", true, 0, rtt_max, p->rttvar_us);
	JI(o, "tcp.path", "cwnd", true, 1, UINT32_MAX, p->cwnd);
	/* 2 up to TCP_INFINITE_SSTHRESH */
	JI(o, "tcp.path", "ssthresh", true, 2, INT32_MAX, p->ssthresh);
	JI(o, "tcp.path", "mss", true, 0, 65535, p->mss);
	JI(o, "tcp.path", "ts_recent", true, 0, UINT32_MAX, p->ts_recent);
	/* PAWS looks back 24 days at most */
	JI(o, "tcp.path", "ts_age", true, 0, 24 * 24 * 3600 - 1, p->ts_age);
	JI(o, "tcp.path", "ecn", true, 0, 15, p->ecn);
	if (p->ecn != 0 && !(p->ecn & 1)) {
		sk_jerr(c, "tcp.path", "ecn", "%u without ECN negotiated",
		    p->ecn);
		return -1;
	}
	st->flags |= SK_F_PATH;
	return 0;
}

static int
sk_jtcp_conn(struct sk_jctx *c, const json_t *j, struct sk_state *st,
    struct sk_record *rec)
{
	static const char *const k_conn[] = { "snd_seq", "rcv_seq", "mss",
	    "wscale", "snd_wscale", "rcv_wscale", "sack", "tstamp", "ts_val",
	    "window", "window_clamp", "path", "sndq", "rcvq", NULL };
	struct sk_tcp *t = &st->tcp;
	int rc;

	if (sk_jkeys(c, j, "tcp", k_conn) < 0)
		return -1;
	JI(j, "tcp", "snd_seq", true, 0, UINT32_MAX, t->snd_seq);
	JI(j, "tcp", "rcv_seq", true, 0, UINT32_MAX, t->rcv_seq);
	/* TCP_MIN_MSS (88) up to the 16-bit option field. */
	JI(j, "tcp", "mss", true, 88, 65535, t->mss);
	JB(j, "tcp", "wscale", true, t->wscale);
	/* TCP_MAX_WSCALE is 14 (RFC 7323). */
	JI(j, "tcp", "snd_wscale", true, 0, 14, t->snd_wscale);
	JI(j, "tcp", "rcv_wscale", true, 0, 14, t->rcv_wscale);
	if (!t->wscale && (t->snd_wscale != 0 || t->rcv_wscale != 0)) {
		sk_jerr(c, "tcp", "snd_wscale", "must be 0 without wscale");
		return -1;
	}
	JB(j, "tcp", "sack", true, t->sack);
	JB(j, "tcp", "tstamp", true, t->tstamp);
	/* timestamps without the clock's value would hang the connection
	 * (the peer's PAWS drops every segment) */
	if ((rc = sk_jint(c, j, "tcp", "ts_val", t->tstamp, 0, UINT32_MAX,
	    &(int64_t){0})) < 0)
		return -1;
	if (rc == 0) {
		JI(j, "tcp", "ts_val", true, 0, UINT32_MAX, t->ts_val);
		st->flags |= SK_F_TSVAL;
	}
	JI(j, "tcp", "window_clamp", false, 0, INT_MAX, t->window_clamp);
	if (sk_jwindow(c, j, st) < 0 || sk_jtcp_path(c, j, st) < 0)
		return -1;
	if (sk_jqueue(c, j, "sndq", &t->sndq_len, &t->sndq_unsent,
	    &t->sndq, &rec->pending[SK_PART_SNDQ]) < 0)
		return -1;
	return sk_jqueue(c, j, "rcvq", &t->rcvq_len, NULL, &t->rcvq,
	    &rec->pending[SK_PART_RCVQ]);
}

static int
sk_jtcp(struct sk_jctx *c, const json_t *top, struct sk_state *st,
    struct sk_record *rec)
{
	static const char *const k_listen[] = { "backlog", NULL };
	static const char *const k_syn[] = { "isn", NULL };
	static const char *const k_ended[] = { "end", "rcvq", NULL };
	struct sk_tcp *t = &st->tcp;
	const json_t *j;
	char end[16];
	int e;

	if (st->state == SK_ST_BOUND || st->state == SK_ST_CLOSE) {
		if (json_object_get(top, "tcp") != NULL) {
			sk_jerr(c, "", "tcp", "not allowed in state %s",
			    sk_st_name(st->state));
			return -1;
		}
		return 0;
	}
	if (sk_jobj(c, top, "", "tcp", true, &j) < 0)
		return -1;
	switch (st->state) {
	case SK_ST_LISTEN:
		if (sk_jkeys(c, j, "tcp", k_listen) < 0)
			return -1;
		/* listen() takes an int; the kernel caps it (somaxconn) */
		JI(j, "tcp", "backlog", true, 0, INT_MAX, t->backlog);
		return 0;
	case SK_ST_SYN_SENT:
		if (sk_jkeys(c, j, "tcp", k_syn) < 0)
			return -1;
		JI(j, "tcp", "isn", true, 0, UINT32_MAX, t->snd_seq);
		return 0;
	case SK_ST_ENDED:
		if (sk_jkeys(c, j, "tcp", k_ended) < 0 ||
		    sk_jstr(c, j, "tcp", "end", true, "abcdefghijklmnopqrstuvwxyz",
		    false, end, sizeof(end)) < 0)
			return -1;
		if ((e = sk_end_from_name(end)) <= SK_END_NONE) {
			sk_jerr(c, "tcp", "end", "\"%s\" is not fin or reset",
			    end);
			return -1;
		}
		t->end = (enum sk_end)e;
		return sk_jqueue(c, j, "rcvq", &t->rcvq_len, NULL, &t->rcvq,
		    &rec->pending[SK_PART_RCVQ]);
	default:
		return sk_jtcp_conn(c, j, st, rec);
	}
}

int
sk_jdgram(struct sk_jctx *c, const json_t *d, const char *path,
    const struct sk_state *st, struct sk_dgram *out, uint64_t *bytes)
{
	static const char *const keys[] = { "from", "to", "data", NULL };
	const json_t *data;
	char why[96];
	size_t n;

	if (!json_is_object(d)) {
		sk_jerr(c, path, "", "not an object");
		return -1;
	}
	if (sk_jkeys(c, d, path, keys) < 0 ||
	    sk_jsockaddr(c, d, path, "from", true, st->family, true,
	    &out->from) < 0 ||
	    sk_jsockaddr(c, d, path, "to", true, st->family, true,
	    &out->to) < 0)
		return -1;
	if (sk_addr_port(&out->to) != sk_addr_port(&st->local)) {
		sk_jerr(c, path, "to", "not the socket's port %u",
		    sk_addr_port(&st->local));
		return -1;
	}
	data = json_object_get(d, "data");
	if (!json_is_string(data) ||
	    json_string_length(data) > sk_b64_enclen(65535)) {
		sk_jerr(c, path, "data", "not base64 of at most 65535 bytes");
		return -1;
	}
	if (sk_b64_decode(json_string_value(data), json_string_length(data),
	    &out->data, &n, why, sizeof(why)) < 0) {
		sk_jerr(c, path, "data", "%s", why);
		return -1;
	}
	out->len = (uint32_t)n;
	*bytes += n;
	if (*bytes > c->max_queue) {
		sk_jerr(c, path, "data", "the datagrams hold more than %u "
		    "bytes", c->max_queue);
		return -1;
	}
	return 0;
}

static int
sk_judp(struct sk_jctx *c, const json_t *top, struct sk_state *st,
    struct sk_record *rec)
{
	static const char *const keys[] = { "dgrams", NULL };
	const json_t *u, *a, *d;
	uint64_t bytes = 0;
	int64_t n;
	size_t i;
	int rc;

	if ((rc = sk_jobj(c, top, "", "udp", false, &u)) != 0)
		return rc < 0 ? -1 : 0;
	if (sk_jkeys(c, u, "udp", keys) < 0)
		return -1;
	a = json_object_get(u, "dgrams");
	if (json_is_integer(a)) {
		/* announced: they come in chunks */
		if (!c->chunks || sk_jint(c, u, "udp", "dgrams", true, 1,
		    SK_DGRAMS_MAX, &n) < 0) {
			if (!c->chunks)
				sk_jerr(c, "udp", "dgrams", "chunks not "
				    "allowed here");
			return -1;
		}
		if ((st->udp.dgrams = calloc((size_t)n,
		    sizeof(*st->udp.dgrams))) == NULL) {
			sk_jerr(c, "udp", "dgrams", "out of memory");
			return -1;
		}
		rec->pending[SK_PART_DGRAMS] = (uint32_t)n;
		return 0;
	}
	if (!json_is_array(a) || json_array_size(a) > SK_DGRAMS_MAX) {
		sk_jerr(c, "udp", "dgrams", "not an array of at most %d",
		    SK_DGRAMS_MAX);
		return -1;
	}
	if (json_array_size(a) > 0 && (st->udp.dgrams =
	    calloc(json_array_size(a), sizeof(*st->udp.dgrams))) == NULL) {
		sk_jerr(c, "udp", "dgrams", "out of memory");
		return -1;
	}
	json_array_foreach(a, i, d) {
		char path[48];

		snprintf(path, sizeof(path), "udp.dgrams[%zu]", i);
		st->udp.ndgrams++;	/* owned by st from here */
		if (sk_jdgram(c, d, path, st, &st->udp.dgrams[i], &bytes) < 0)
			return -1;
	}
	return 0;
}

int
sk_jsocket(struct sk_jctx *c, const json_t *j, struct sk_state *st,
    struct sk_record *rec)
{
	static const char *const keys[] = { "v", "type", "id", "parent",
	    "proto", "family", "state", "nonblock", "local", "remote", "bufs",
	    "opts", "tcp", "udp", NULL };
	char buf[16];
	bool conn, need_remote, nb = false;
	int rc, sv;

	if (sk_jkeys(c, j, "", keys) < 0)
		return -1;
	JI(j, "", "id", true, 0, SK_JSON_MAX_ID, st->id);
	if (sk_jstr(c, j, "", "proto", true, "tcpud", false, buf,
	    sizeof(buf)) < 0)
		return -1;
	if (strcmp(buf, "tcp") == 0)
		st->proto = SK_PROTO_TCP;
	else if (strcmp(buf, "udp") == 0)
		st->proto = SK_PROTO_UDP;
	else {
		sk_jerr(c, "", "proto", "\"%s\" is not tcp or udp", buf);
		return -1;
	}
	if (sk_jfamily(c, j, "", "family", &st->family) < 0)
		return -1;
	if (sk_jstr(c, j, "", "state", true, sk_jcs_state, false, buf,
	    sizeof(buf)) < 0)
		return -1;
	if ((sv = sk_st_from_name(buf)) < 0) {
		sk_jerr(c, "", "state", "unknown state \"%s\"", buf);
		return -1;
	}
	st->state = (enum sk_st)sv;
	if (st->proto == SK_PROTO_TCP ? !sk_st_tcp_movable(st->state) :
	    (st->state != SK_ST_CLOSE && st->state != SK_ST_BOUND &&
	    st->state != SK_ST_ESTABLISHED)) {
		sk_jerr(c, "", "state", "%s cannot be restored for %s", buf,
		    sk_proto_name(st->proto));
		return -1;
	}
	conn = st->proto == SK_PROTO_TCP && (sk_st_tcp_conn(st->state) ||
	    st->state == SK_ST_ENDED);
	need_remote = (st->proto == SK_PROTO_TCP &&
	    (sk_st_tcp_conn(st->state) || st->state == SK_ST_SYN_SENT)) ||
	    (st->proto == SK_PROTO_UDP && st->state == SK_ST_ESTABLISHED);

	if ((rc = sk_jint(c, j, "", "parent", false, 0, SK_JSON_MAX_ID,
	    &(int64_t){0})) < 0)
		return -1;
	if (rc == 0) {
		if (!conn) {
			sk_jerr(c, "", "parent", "only for a TCP connection");
			return -1;
		}
		JI(j, "", "parent", true, 0, SK_JSON_MAX_ID, st->parent_id);
		st->flags |= SK_F_PARENT;
	}
	if ((rc = sk_jbool(c, j, "", "nonblock", false, &nb)) < 0)
		return -1;
	if (rc == 0 && nb)
		st->flags |= SK_F_NONBLOCK;
	/* UDP may be connected without an explicit bind (port 0 is not). */
	if (sk_jsockaddr(c, j, "", "local", true, st->family,
	    st->state != SK_ST_CLOSE && st->proto == SK_PROTO_TCP,
	    &st->local) < 0)
		return -1;
	if (st->state == SK_ST_CLOSE && sk_addr_port(&st->local) != 0) {
		sk_jerr(c, "local", "port", "must be 0 in state CLOSE");
		return -1;
	}
	if (st->proto == SK_PROTO_UDP && st->state == SK_ST_BOUND &&
	    sk_addr_port(&st->local) == 0) {
		sk_jerr(c, "local", "port", "0 out of range 1..65535");
		return -1;
	}
	if (need_remote) {
		if (sk_jsockaddr(c, j, "", "remote", true, st->family, true,
		    &st->remote) < 0)
			return -1;
		st->flags |= SK_F_REMOTE;
	} else if (json_object_get(j, "remote") != NULL) {
		sk_jerr(c, "", "remote", "not allowed in state %s", buf);
		return -1;
	}
	if (sk_jbufs(c, j, st) < 0 || sk_jopts(c, j, st) < 0)
		return -1;
	if (st->proto == SK_PROTO_TCP) {
		if (json_object_get(j, "udp") != NULL) {
			sk_jerr(c, "", "udp", "not allowed for tcp");
			return -1;
		}
		return sk_jtcp(c, j, st, rec);
	}
	if (json_object_get(j, "tcp") != NULL) {
		sk_jerr(c, "", "tcp", "not allowed for udp");
		return -1;
	}
	if (st->state == SK_ST_CLOSE && json_object_get(j, "udp") != NULL) {
		sk_jerr(c, "", "udp", "an unbound socket has no datagrams");
		return -1;
	}
	return sk_judp(c, j, st, rec);
}
