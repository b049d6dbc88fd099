/*
 * Socket records, schema v1: encode a struct sk_state, decode and
 * validate one strictly; the record-type dispatch and text parsing.
 * Field by field specification: docs/protocol.md.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sk_b64.h"
#include "sk_json.h"
#include "sk_json_priv.h"

#define SK_JSON_MAX_ID	((1LL << 53) - 1)	/* exact in any JSON reader */

static const char sk_jcs_cc[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
static const char sk_jcs_state[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_12";

/* ---- encode ---- */

static json_t *
sk_json_enc_addr(const struct sockaddr_storage *ss)
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

static json_t *
sk_json_enc_queue(const uint8_t *buf, uint32_t len, const uint32_t *unsent)
{
	json_t *q;
	char *text;

	if ((text = sk_b64_encode(buf, len)) == NULL)
		return NULL;
	if (unsent != NULL)
		q = json_pack("{s:I, s:I, s:s}", "len", (json_int_t)len,
		    "unsent", (json_int_t)*unsent, "data", text);
	else
		q = json_pack("{s:I, s:s}", "len", (json_int_t)len, "data",
		    text);
	free(text);
	return q;
}

static json_t *
sk_json_enc_opts(const struct sk_state *st)
{
	const struct sk_opts *o = &st->opts;
	json_t *j;

	j = json_pack("{s:b, s:b, s:b, s:I, s:I, s:I, s:I, s:b, s:I}",
	    "reuseaddr", o->reuseaddr != 0, "reuseport", o->reuseport != 0,
	    "keepalive", o->keepalive != 0, "priority", (json_int_t)o->priority,
	    "mark", (json_int_t)o->mark, "rcvbuf", (json_int_t)o->rcvbuf,
	    "sndbuf", (json_int_t)o->sndbuf, "linger_on", o->linger_on != 0,
	    "linger_secs", (json_int_t)o->linger_secs);
	if (j == NULL)
		return NULL;
	if (st->family == AF_INET6 &&
	    json_object_set_new(j, "v6only", json_boolean(o->v6only)) < 0)
		goto out_free;
	if (st->proto == SK_PROTO_TCP &&
	    json_object_update_new(j, json_pack("{s:b, s:b, s:I, s:I, s:I, "
	    "s:I, s:I, s:s}", "nodelay", o->nodelay != 0, "cork",
	    o->cork != 0, "keepidle", (json_int_t)o->keepidle, "keepintvl",
	    (json_int_t)o->keepintvl, "keepcnt", (json_int_t)o->keepcnt,
	    "user_timeout", (json_int_t)o->user_timeout, "notsent_lowat",
	    (json_int_t)o->notsent_lowat, "congestion", o->congestion)) < 0)
		goto out_free;
	return j;

out_free:
	json_decref(j);
	return NULL;
}

static bool
sk_st_conn(enum sk_st s)
{
	return s == SK_ST_ESTABLISHED || sk_st_fin_sent(s) ||
	    sk_st_fin_rcvd(s);
}

static json_t *
sk_json_enc_tcp(const struct sk_state *st)
{
	const struct sk_tcp *t = &st->tcp;
	json_t *j;

	if (st->state == SK_ST_LISTEN)
		return json_pack("{s:I}", "backlog", (json_int_t)t->backlog);
	j = json_pack("{s:I, s:I, s:I, s:b, s:i, s:i, s:b, s:b, s:o*, s:o*}",
	    "snd_seq", (json_int_t)t->snd_seq, "rcv_seq",
	    (json_int_t)t->rcv_seq, "mss", (json_int_t)t->mss, "wscale",
	    t->wscale, "snd_wscale", (int)t->snd_wscale, "rcv_wscale",
	    (int)t->rcv_wscale, "sack", t->sack, "tstamp", t->tstamp,
	    "sndq", sk_json_enc_queue(t->sndq, t->sndq_len, &t->sndq_unsent),
	    "rcvq", sk_json_enc_queue(t->rcvq, t->rcvq_len, NULL));
	if (j == NULL || json_object_get(j, "sndq") == NULL ||
	    json_object_get(j, "rcvq") == NULL)
		goto out_free;
	if ((st->flags & SK_F_TSVAL) && json_object_set_new(j, "ts_val",
	    json_integer(t->ts_val)) < 0)
		goto out_free;
	if ((st->flags & SK_F_WINDOW) && json_object_set_new(j, "window",
	    json_pack("{s:I, s:I, s:I, s:I, s:I}",
	    "snd_wl1", (json_int_t)t->win.snd_wl1,
	    "snd_wnd", (json_int_t)t->win.snd_wnd,
	    "max_window", (json_int_t)t->win.max_window,
	    "rcv_wnd", (json_int_t)t->win.rcv_wnd,
	    "rcv_wup", (json_int_t)t->win.rcv_wup)) < 0)
		goto out_free;
	return j;

out_free:
	json_decref(j);
	return NULL;
}

json_t *
sk_json_encode(const struct sk_state *st)
{
	json_t *j, *part;

	j = json_pack("{s:i, s:s, s:I, s:s, s:s, s:s}", "v", SK_JSON_VERSION,
	    "type", "socket", "id", (json_int_t)st->id, "proto",
	    sk_proto_name(st->proto) ? sk_proto_name(st->proto) : "?",
	    "family", st->family == AF_INET6 ? "inet6" : "inet",
	    "state", sk_st_name(st->state) ? sk_st_name(st->state) : "?");
	if (j == NULL)
		goto out_fail;
	if ((st->flags & SK_F_PARENT) && json_object_set_new(j, "parent",
	    json_integer((json_int_t)st->parent_id)) < 0)
		goto out_free;
	if ((part = sk_json_enc_addr(&st->local)) == NULL ||
	    json_object_set_new(j, "local", part) < 0)
		goto out_free;
	if ((st->flags & SK_F_REMOTE) &&
	    ((part = sk_json_enc_addr(&st->remote)) == NULL ||
	    json_object_set_new(j, "remote", part) < 0))
		goto out_free;
	if ((part = sk_json_enc_opts(st)) == NULL ||
	    json_object_set_new(j, "opts", part) < 0)
		goto out_free;
	if (st->proto == SK_PROTO_TCP &&
	    (st->state == SK_ST_LISTEN || sk_st_conn(st->state)) &&
	    ((part = sk_json_enc_tcp(st)) == NULL ||
	    json_object_set_new(j, "tcp", part) < 0))
		goto out_free;
	if (st->proto == SK_PROTO_UDP && json_object_set_new(j, "udp",
	    json_pack("{s:I}", "rcvq_dropped",
	    (json_int_t)st->udp.rcvq_dropped)) < 0)
		goto out_free;
	return j;

out_free:
	json_decref(j);
out_fail:
	log_warnx("%s: cannot encode socket record %llu", __func__,
	    (unsigned long long)st->id);
	return NULL;
}

/* ---- decode ---- */

static int
sk_jsockaddr(struct sk_jctx *c, const json_t *top, const char *key,
    bool required, int family, bool need_port, struct sockaddr_storage *ss)
{
	static const char *const keys[] = { "addr", "port", NULL };
	const json_t *o;
	int64_t port;
	int rc;

	if ((rc = sk_jobj(c, top, "", key, required, &o)) != 0)
		return rc;
	if (sk_jkeys(c, o, key, keys) < 0)
		return -1;
	if (sk_jint(c, o, key, "port", true, need_port ? 1 : 0, 65535,
	    &port) < 0)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons((uint16_t)port);
		return sk_jaddr(c, o, key, "addr", true, AF_INET,
		    (uint8_t *)&s->sin_addr) < 0 ? -1 : 0;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons((uint16_t)port);
		return sk_jaddr(c, o, key, "addr", true, AF_INET6,
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

static int
sk_jopts(struct sk_jctx *c, const json_t *top, struct sk_state *st)
{
	static const char *const k_udp[] = { "reuseaddr", "reuseport",
	    "keepalive", "priority", "mark", "rcvbuf", "sndbuf", "linger_on",
	    "linger_secs", "v6only", NULL };
	static const char *const k_tcp[] = { "reuseaddr", "reuseport",
	    "keepalive", "priority", "mark", "rcvbuf", "sndbuf", "linger_on",
	    "linger_secs", "v6only", "nodelay", "cork", "keepidle",
	    "keepintvl", "keepcnt", "user_timeout", "notsent_lowat",
	    "congestion", NULL };
	struct sk_opts *o = &st->opts;
	const json_t *j;
	bool tcp = st->proto == SK_PROTO_TCP;

	if (sk_jobj(c, top, "", "opts", true, &j) < 0)
		return -1;
	if (sk_jkeys(c, j, "opts", tcp ? k_tcp : k_udp) < 0)
		return -1;
	JB(j, "opts", "reuseaddr", true, o->reuseaddr);
	JB(j, "opts", "reuseport", true, o->reuseport);
	JB(j, "opts", "keepalive", true, o->keepalive);
	JI(j, "opts", "priority", true, 0, INT_MAX, o->priority);
	JI(j, "opts", "mark", true, 0, UINT32_MAX, o->mark);
	JI(j, "opts", "rcvbuf", true, 0, INT_MAX / 2, o->rcvbuf);
	JI(j, "opts", "sndbuf", true, 0, INT_MAX / 2, o->sndbuf);
	JB(j, "opts", "linger_on", true, o->linger_on);
	JI(j, "opts", "linger_secs", true, 0, INT_MAX, o->linger_secs);
	if (st->family == AF_INET6)
		JB(j, "opts", "v6only", true, o->v6only);
	else if (json_object_get(j, "v6only") != NULL) {
		sk_jerr(c, "opts", "v6only", "only for family inet6");
		return -1;
	}
	if (!tcp)
		return 0;
	JB(j, "opts", "nodelay", true, o->nodelay);
	JB(j, "opts", "cork", true, o->cork);
	/* Kernel limits: MAX_TCP_KEEPIDLE/KEEPINTVL 32767, KEEPCNT 127. */
	JI(j, "opts", "keepidle", true, 0, 32767, o->keepidle);
	JI(j, "opts", "keepintvl", true, 0, 32767, o->keepintvl);
	JI(j, "opts", "keepcnt", true, 0, 127, o->keepcnt);
	JI(j, "opts", "user_timeout", true, 0, INT_MAX, o->user_timeout);
	JI(j, "opts", "notsent_lowat", true, 0, UINT32_MAX, o->notsent_lowat);
	if (sk_jstr(c, j, "opts", "congestion", true, sk_jcs_cc, false,
	    o->congestion, sizeof(o->congestion)) < 0)
		return -1;
	return 0;
}

static int
sk_jqueue(struct sk_jctx *c, const json_t *t, const char *key,
    uint32_t *len, uint32_t *unsent, uint8_t **data)
{
	static const char *const k_snd[] = { "len", "unsent", "data", NULL };
	static const char *const k_rcv[] = { "len", "data", NULL };
	char path[32], why[96];
	const json_t *q, *d;
	size_t n;
	int64_t v = 0;

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
sk_jtcp(struct sk_jctx *c, const json_t *top, struct sk_state *st)
{
	static const char *const k_listen[] = { "backlog", NULL };
	static const char *const k_conn[] = { "snd_seq", "rcv_seq", "mss",
	    "wscale", "snd_wscale", "rcv_wscale", "sack", "tstamp", "ts_val",
	    "window", "sndq", "rcvq", NULL };
	static const char *const k_win[] = { "snd_wl1", "snd_wnd",
	    "max_window", "rcv_wnd", "rcv_wup", NULL };
	struct sk_tcp *t = &st->tcp;
	const json_t *j, *w;
	int rc;

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
	if (st->state == SK_ST_LISTEN) {
		if (sk_jkeys(c, j, "tcp", k_listen) < 0)
			return -1;
		JI(j, "tcp", "backlog", true, 0, 65535, t->backlog);
		return 0;
	}
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
	if ((rc = sk_jint(c, j, "tcp", "ts_val", false, 0, UINT32_MAX,
	    &(int64_t){0})) < 0)
		return -1;
	if (rc == 0) {
		JI(j, "tcp", "ts_val", true, 0, UINT32_MAX, t->ts_val);
		st->flags |= SK_F_TSVAL;
	}
	if ((rc = sk_jobj(c, j, "tcp", "window", false, &w)) < 0)
		return -1;
	if (rc == 0) {
		if (sk_jkeys(c, w, "tcp.window", k_win) < 0)
			return -1;
		JI(w, "tcp.window", "snd_wl1", true, 0, UINT32_MAX,
		    t->win.snd_wl1);
		JI(w, "tcp.window", "snd_wnd", true, 0, UINT32_MAX,
		    t->win.snd_wnd);
		JI(w, "tcp.window", "max_window", true, 0, UINT32_MAX,
		    t->win.max_window);
		JI(w, "tcp.window", "rcv_wnd", true, 0, UINT32_MAX,
		    t->win.rcv_wnd);
		JI(w, "tcp.window", "rcv_wup", true, 0, UINT32_MAX,
		    t->win.rcv_wup);
		if (t->win.max_window < t->win.snd_wnd) {
			sk_jerr(c, "tcp.window", "max_window", "%u below "
			    "snd_wnd %u", t->win.max_window, t->win.snd_wnd);
			return -1;
		}
		st->flags |= SK_F_WINDOW;
	}
	if (sk_jqueue(c, j, "sndq", &t->sndq_len, &t->sndq_unsent,
	    &t->sndq) < 0)
		return -1;
	if (sk_jqueue(c, j, "rcvq", &t->rcvq_len, NULL, &t->rcvq) < 0)
		return -1;
	return 0;
}

static int
sk_jsocket(struct sk_jctx *c, const json_t *j, struct sk_state *st)
{
	static const char *const keys[] = { "v", "type", "id", "parent",
	    "proto", "family", "state", "local", "remote", "opts", "tcp",
	    "udp", NULL };
	static const char *const k_udp[] = { "rcvq_dropped", NULL };
	char buf[16];
	const json_t *u;
	bool conn, need_remote;
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
	conn = st->proto == SK_PROTO_TCP && sk_st_conn(st->state);
	need_remote = conn || (st->proto == SK_PROTO_UDP &&
	    st->state == SK_ST_ESTABLISHED);

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
	/* UDP may be connected without an explicit bind (port 0 is not). */
	if (sk_jsockaddr(c, j, "local", true, st->family,
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
		if (sk_jsockaddr(c, j, "remote", true, st->family, true,
		    &st->remote) < 0)
			return -1;
		st->flags |= SK_F_REMOTE;
	} else if (json_object_get(j, "remote") != NULL) {
		sk_jerr(c, "", "remote", "not allowed in state %s", buf);
		return -1;
	}
	if (sk_jopts(c, j, st) < 0)
		return -1;
	if (st->proto == SK_PROTO_TCP) {
		if (json_object_get(j, "udp") != NULL) {
			sk_jerr(c, "", "udp", "not allowed for tcp");
			return -1;
		}
		return sk_jtcp(c, j, st);
	}
	if (json_object_get(j, "tcp") != NULL) {
		sk_jerr(c, "", "tcp", "not allowed for udp");
		return -1;
	}
	if (sk_jobj(c, j, "", "udp", true, &u) < 0 ||
	    sk_jkeys(c, u, "udp", k_udp) < 0)
		return -1;
	JI(u, "udp", "rcvq_dropped", true, 0, UINT32_MAX,
	    st->udp.rcvq_dropped);
	return 0;
}

int
sk_json_decode(const json_t *j, const struct sk_json_limits *lim,
    struct sk_record *rec, char *err, size_t errlen)
{
	struct sk_jctx c = { err, errlen, SK_JSON_MAX_QUEUE };
	struct sk_state *st;
	char type[16];
	int64_t v;

	memset(rec, 0, sizeof(*rec));
	if (errlen > 0)
		err[0] = '\0';
	if (lim != NULL && lim->max_queue != 0)
		c.max_queue = lim->max_queue;
	if (!json_is_object(j)) {
		snprintf(err, errlen, "record: not an object");
		return -1;
	}
	if (sk_jint(&c, j, "", "v", true, INT64_MIN, INT64_MAX, &v) < 0)
		return -1;
	if (v != SK_JSON_VERSION) {
		snprintf(err, errlen, "v: version %lld not supported (this "
		    "side speaks %d)", (long long)v, SK_JSON_VERSION);
		return -1;
	}
	if (sk_jstr(&c, j, "", "type", true, "abcdefghijklmnopqrstuvwxyz",
	    false, type, sizeof(type)) < 0)
		return -1;
	if (strcmp(type, "socket") == 0) {
		if ((st = sk_state_new()) == NULL) {
			snprintf(err, errlen, "record: out of memory");
			return -1;
		}
		if (sk_jsocket(&c, j, st) < 0) {
			sk_state_free(st);
			return -1;
		}
		rec->type = SK_REC_SOCKET;
		rec->u.sock = st;
		return 0;
	}
	if (strcmp(type, "link") == 0) {
		rec->type = SK_REC_LINK;
		return sk_json_decode_link(&c, j, &rec->u.link);
	}
	if (strcmp(type, "addr") == 0) {
		rec->type = SK_REC_ADDR;
		return sk_json_decode_addr(&c, j, &rec->u.addr);
	}
	if (strcmp(type, "route") == 0) {
		rec->type = SK_REC_ROUTE;
		return sk_json_decode_route(&c, j, &rec->u.route);
	}
	snprintf(err, errlen, "type: unknown record type \"%s\"", type);
	return -1;
}

size_t
sk_json_max_text(const struct sk_json_limits *lim)
{
	uint32_t q = lim != NULL && lim->max_queue != 0 ? lim->max_queue :
	    SK_JSON_MAX_QUEUE;

	/* Two queues in base64 plus room for every other field. */
	return 2 * sk_b64_enclen(q) + 16384;
}

int
sk_json_parse(const char *buf, size_t len, const struct sk_json_limits *lim,
    struct sk_record *rec, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *j;
	int rc;

	memset(rec, 0, sizeof(*rec));
	if (len > sk_json_max_text(lim)) {
		snprintf(err, errlen, "record: %zu bytes, limit %zu", len,
		    sk_json_max_text(lim));
		return -1;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (j == NULL) {
		snprintf(err, errlen, "record: invalid JSON at line %d "
		    "column %d: %s", jerr.line, jerr.column, jerr.text);
		return -1;
	}
	rc = sk_json_decode(j, lim, rec, err, errlen);
	json_decref(j);
	return rc;
}

void
sk_record_clear(struct sk_record *rec)
{
	if (rec->type == SK_REC_SOCKET)
		sk_state_free(rec->u.sock);
	memset(rec, 0, sizeof(*rec));
}
