/* SPDX-License-Identifier: ISC */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "migrd-protocol.h"
#include "output.h"

static const char *
s_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "-";
}

static long long
i_of(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* An integer member as text, "-" when absent or not an integer. */
static const char *
n_of(json_t *o, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		return "-";
	snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	return buf;
}

/* A number of milliseconds with one decimal, "-" when absent. */
static const char *
ms_of(json_t *o, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		return "-";
	snprintf(buf, len, "%.1f", json_number_value(v));
	return buf;
}

/* Epoch seconds as UTC, "-" when absent. */
static const char *
time_of(json_t *o, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(o, key);
	time_t t;
	struct tm tm;

	if (!json_is_number(v) || json_number_value(v) < 0 ||
	    json_number_value(v) > 1e11)
		return "-";
	t = (time_t)json_number_value(v);
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return "-";
	return buf;
}

/* Text from migrd or its peer, control characters masked; returns the
 * number of characters written. */
static int
put_clean(FILE *fp, const char *s)
{
	int n = 0;

	for (; *s; s++, n++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, fp);
	return n;
}

static void
join(json_t *a, char *buf, size_t len)
{
	size_t i, off = 0;
	json_t *v;

	buf[0] = '\0';
	json_array_foreach(a, i, v) {
		char tmp[64];

		if (json_is_string(v))
			snprintf(tmp, sizeof(tmp), "%s", json_string_value(v));
		else
			snprintf(tmp, sizeof(tmp), "%lld",
			    (long long)json_integer_value(v));
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
		    "%s%s", i ? "," : "", tmp);
		if (off >= len)
			break;
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "-");
}

static void
show_migrations(json_t *d)
{
	json_t *a = json_object_get(d, "migrations"), *m;
	size_t i;
	char ts[32];

	if (!json_is_array(a))
		return;
	printf("migrations: %zu\n", json_array_size(a));
	json_array_foreach(a, i, m) {
		printf("migration: %s %s %s peer %s since %s mig %s\n",
		    s_of(m, "ns"), s_of(m, "role"), s_of(m, "state"),
		    s_of(m, "peer"), time_of(m, "since", ts, sizeof(ts)),
		    s_of(m, "mig"));
		if (strcmp(s_of(m, "state"), "in-doubt") != 0)
			continue;
		printf("%s: in doubt with %s (COMMIT sent, no answer): the "
		    "namespace stays locked; run \"migctl resolve %s "
		    "rollback|done\"\n", s_of(m, "ns"), s_of(m, "peer"),
		    s_of(m, "ns"));
	}
}

static void
show_status(json_t *d)
{
	json_t *t;

	printf("host: %s\n", s_of(d, "host"));
	printf("protocol: %lld\n", i_of(d, "protocol"));
	printf("pid: %lld\n", i_of(d, "pid"));
	printf("uptime: %lld\n", i_of(d, "uptime"));
	printf("listen: %s port %lld\n", s_of(d, "listen"), i_of(d, "port"));
	printf("control-socket: %s\n", s_of(d, "control_socket"));
	printf("peers: %lld\n", i_of(d, "peers"));
	printf("peers-up: %lld\n", i_of(d, "peers_up"));
	t = json_object_get(d, "tls_process");
	if (json_is_true(json_object_get(t, "running")))
		printf("tls-process: pid %lld, uid %lld\n", i_of(t, "pid"),
		    i_of(t, "uid"));
	else if (t != NULL)
		printf("tls-process: not running (restarting)\n");
	printf("namespaces: %lld\n", i_of(d, "namespaces"));
	t = json_object_get(d, "event_loop");
	if (t != NULL)
		printf("event-loop: held %lld ms at most, %lld time(s) over "
		    "1 s\n", i_of(t, "longest_hold_ms"),
		    i_of(t, "holds_over_1s"));
	printf("capabilities: %s\n", s_of(d, "capabilities"));
	show_migrations(d);
}

static void
show_peers(json_t *d)
{
	json_t *p;
	size_t i;

	printf("%-12s %-22s %-14s %-8s %-22s %s\n", "PEER", "ADDRESS",
	    "STATE", "TLS", "CIPHER", "LAST-ERROR");
	json_array_foreach(json_object_get(d, "peers"), i, p) {
		char addr[80];

		snprintf(addr, sizeof(addr), "%s:%lld", s_of(p, "address"),
		    i_of(p, "port"));
		printf("%-12s %-22s %-14s %-8s %-22s %s\n", s_of(p, "name"),
		    addr, s_of(p, "state"), s_of(p, "tls"), s_of(p, "cipher"),
		    json_string_length(json_object_get(p, "last_error")) ?
		    s_of(p, "last_error") : "-");
	}
}

static void
show_ns_list(json_t *d)
{
	json_t *n;
	size_t i;
	char addrs[256], tasks[256];

	printf("%-15s %-40s %s\n", "NAMESPACE", "ADDRESSES", "TASKS");
	json_array_foreach(json_object_get(d, "namespaces"), i, n) {
		join(json_object_get(n, "addrs"), addrs, sizeof(addrs));
		join(json_object_get(n, "tasks"), tasks, sizeof(tasks));
		printf("%-15s %-40s %s\n", s_of(n, "name"), addrs, tasks);
	}
}

static void
show_ns(json_t *d)
{
	char buf[512];
	json_t *w, *r;
	size_t i;

	printf("name: %s\n", s_of(d, "name"));
	join(json_object_get(d, "addrs"), buf, sizeof(buf));
	printf("addresses: %s\n", buf);
	join(json_object_get(d, "routes"), buf, sizeof(buf));
	printf("routes: %s\n", buf);
	printf("mac: %s\n", json_string_length(json_object_get(d, "mac")) ?
	    s_of(d, "mac") : "-");
	join(json_object_get(d, "tasks"), buf, sizeof(buf));
	printf("tasks: %s\n", buf);
	json_array_foreach(json_object_get(d, "workloads"), i, w)
		printf("workload: pid %lld %s%s: %s\n", i_of(w, "pid"),
		    json_is_true(json_object_get(w, "exited")) ?
		    "exited" : "running", json_is_true(json_object_get(w,
		    "checkpoint")) ? " (checkpoint mode)" :
		    json_is_true(json_object_get(w, "gate")) ? " (gated)" : "",
		    s_of(w, "command"));
	/* the system's view, as the records a migration would carry */
	json_array_foreach(json_object_get(d, "network"), i, r) {
		const char *type = s_of(r, "type");

		if (strcmp(type, "link") == 0)
			printf("link: %s %s %s mtu %lld\n", s_of(r, "name"),
			    s_of(r, "kind"), s_of(r, "mac"), i_of(r, "mtu"));
		else if (strcmp(type, "addr") == 0)
			printf("address: %s/%lld on %s\n", s_of(r, "addr"),
			    i_of(r, "prefix"), s_of(r, "dev"));
		else if (strcmp(type, "route") == 0)
			printf("route: %s/%lld%s%s on %s metric %lld\n",
			    s_of(r, "dst"), i_of(r, "prefix"),
			    json_object_get(r, "gateway") ? " via " : "",
			    json_object_get(r, "gateway") ?
			    s_of(r, "gateway") : "", s_of(r, "dev"),
			    i_of(r, "metric"));
	}
}

static void
show_history(json_t *d)
{
	json_t *e;
	size_t i;
	char ts[32];

	json_array_foreach(json_object_get(d, "events"), i, e) {
		time_t t = (time_t)i_of(e, "time");
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("%s %-8s %s\n", ts, s_of(e, "kind"), s_of(e, "event"));
		if (json_is_object(json_object_get(e, "report"))) {
			printf("    ");
			output_report_summary(stdout,
			    json_object_get(e, "report"));
		}
	}
}

int
output_progress_parse(json_t *p, const char **phase, double *at_ms,
    const char **text)
{
	json_t *v = json_object_get(p, "at_ms");

	if (!json_is_object(p) || !json_is_number(v))
		return -1;
	*phase = json_string_value(json_object_get(p, "phase"));
	*text = json_string_value(json_object_get(p, "text"));
	*at_ms = json_number_value(v);
	if (*phase == NULL || *text == NULL || *at_ms < 0)
		return -1;
	return 0;
}

/* "   15.2 ms  prepared   host2 built svc, locked and detached" */
int
output_progress_text(FILE *fp, json_t *p)
{
	const char *phase, *text;
	double at_ms;
	int n;

	if (output_progress_parse(p, &phase, &at_ms, &text) == -1)
		return -1;
	fprintf(fp, "%7.1f ms  ", at_ms);
	for (n = put_clean(fp, phase); n < 10; n++)
		fputc(' ', fp);
	fputc(' ', fp);
	put_clean(fp, text);
	fputc('\n', fp);
	return 0;
}

static void
report_heading(FILE *fp, json_t *r)
{
	const char *ns = s_of(r, "ns"), *from = s_of(r, "from");
	const char *to = s_of(r, "to"), *outcome = s_of(r, "outcome");
	const char *reason = json_string_value(json_object_get(r, "reason"));
	int in_doubt = strcmp(outcome, "in-doubt") == 0;

	if (strcmp(outcome, "moved") == 0)
		fprintf(fp, "%s moved %s -> %s", ns, from, to);
	else if (strcmp(outcome, "rolled-back") == 0)
		fprintf(fp, "%s stays on %s: rolled back", ns, from);
	else if (strcmp(outcome, "refused") == 0)
		fprintf(fp, "%s stays on %s: refused", ns, from);
	else if (in_doubt)
		fprintf(fp, "%s in doubt: COMMIT sent to %s, no answer", ns,
		    to);
	else {
		fprintf(fp, "%s %s -> %s: ", ns, from, to);
		put_clean(fp, outcome);
	}
	if (reason != NULL && *reason != '\0') {
		fprintf(fp, ": ");
		put_clean(fp, reason);
	}
	fputc('\n', fp);
	if (in_doubt)
		fprintf(fp, "  the namespace stays locked on %s; run \"migctl "
		    "resolve %s rollback|done\"\n", from, ns);
}

/* checkpoint mode: CRIU's dump in the freeze, and pre-copy before it */
static void
print_checkpoint(FILE *fp, json_t *b)
{
	json_t *p;
	char n[4][24];
	size_t i;

	fprintf(fp, "  %-10s %10s  bytes of CRIU's images (%s files, %s "
	    "bytes of memory), dumped in %s ms\n", "checkpoint",
	    n_of(b, "image_bytes", n[0], sizeof(n[0])),
	    n_of(b, "images", n[1], sizeof(n[1])),
	    n_of(b, "memory", n[2], sizeof(n[2])),
	    ms_of(b, "dump_ms", n[3], sizeof(n[3])));
	json_array_foreach(json_object_get(b, "precopy"), i, p)
		fprintf(fp, "  %-10s %10s  bytes of memory copied in pass %zu "
		    "while it ran (%s ms), %s bytes of images sent in %s ms\n",
		    "pre-copy", n_of(p, "memory", n[0], sizeof(n[0])), i + 1,
		    ms_of(p, "ms", n[1], sizeof(n[1])),
		    n_of(p, "bytes", n[2], sizeof(n[2])),
		    ms_of(p, "send_ms", n[3], sizeof(n[3])));
}

static void
report_sockets(FILE *fp, json_t *r)
{
	json_t *sk = json_object_get(r, "sockets"), *b;
	char n[6][24];

	fprintf(fp, "  %-10s %10s", "sockets",
	    n_of(sk, "total", n[0], sizeof(n[0])));
	if (json_is_object(sk))
		fprintf(fp, "  (%s listening, %s established, %s half-closed, "
		    "%s udp; %s taken from accept queues)",
		    n_of(sk, "tcp_listen", n[1], sizeof(n[1])),
		    n_of(sk, "tcp_established", n[2], sizeof(n[2])),
		    n_of(sk, "tcp_closing", n[3], sizeof(n[3])),
		    n_of(sk, "udp", n[4], sizeof(n[4])),
		    n_of(sk, "accepted", n[5], sizeof(n[5])));
	fputc('\n', fp);
	if (json_is_integer(json_object_get(sk, "with_path")))
		fprintf(fp, "  %-10s %10s  connections kept their RTT, "
		    "congestion window and MSS%s\n", "path",
		    n_of(sk, "with_path", n[0], sizeof(n[0])),
		    json_integer_value(json_object_get(sk, "with_path")) == 0 &&
		    json_integer_value(json_object_get(sk,
		    "tcp_established")) > 0 ? " (TCP_REPAIR_PATH is not on "
		    "both hosts)" : "");
	if (json_integer_value(json_object_get(sk, "reset")) > 0)
		fprintf(fp, "  %-10s %10s  connections reset at go-live (they "
		    "could not resume; see the destination's log)\n", "reset",
		    n_of(sk, "reset", n[0], sizeof(n[0])));
	b = json_object_get(r, "bytes");
	fprintf(fp, "  %-10s %10s  bytes\n", "queued",
	    n_of(b, "queued", n[0], sizeof(n[0])));
	fprintf(fp, "  %-10s %10s  bytes", "streamed",
	    n_of(b, "streamed", n[0], sizeof(n[0])));
	if (json_is_integer(json_object_get(b, "encoded")))
		fprintf(fp, " on the channel, %s before compression",
		    n_of(b, "encoded", n[0], sizeof(n[0])));
	fputc('\n', fp);
	b = json_object_get(r, "checkpoint");
	if (json_is_object(b))
		print_checkpoint(fp, b);
	b = json_object_get(r, "lock");
	if (json_is_object(b) && strcmp(json_string_value(json_object_get(b,
	    "mode")) ? json_string_value(json_object_get(b, "mode")) : "",
	    "replay") == 0)
		fprintf(fp, "  %-10s %10s  packets kept by the lock: %s sent "
		    "on before COMMIT (%s replayed there), %s after it, %s "
		    "dropped\n", "replay",
		    n_of(b, "kept", n[0], sizeof(n[0])),
		    n_of(b, "sent", n[1], sizeof(n[1])),
		    n_of(b, "replayed", n[2], sizeof(n[2])),
		    n_of(b, "forwarded", n[3], sizeof(n[3])),
		    n_of(b, "overflow", n[4], sizeof(n[4])));
}

static void
report_phases(FILE *fp, json_t *r)
{
	static const struct {
		const char	*key, *label, *note;
	} ph[] = {
		{ "precopy",	"pre-copy",	"" },
		{ "freeze",	"freeze",	"" },
		{ "dump",	"dump",		"" },
		{ "transfer",	"transfer",	"" },
		{ "restore",	"restore",	"" },
		{ "commit",	"commit",	"" },
		{ "downtime",	"downtime",	"  (lock to thaw)" },
		{ "total",	"total",	"" },
	};
	json_t *ms = json_object_get(r, "ms");
	char buf[32];
	size_t i;

	fprintf(fp, "  %-10s %10s\n", "phase", "ms");
	for (i = 0; i < sizeof(ph) / sizeof(ph[0]); i++)
		fprintf(fp, "  %-10s %10s%s\n", ph[i].label,
		    ms_of(ms, ph[i].key, buf, sizeof(buf)), ph[i].note);
}

int
output_report(FILE *fp, json_t *r)
{
	if (!json_is_string(json_object_get(r, "outcome")))
		return -1;
	report_heading(fp, r);
	fprintf(fp, "  %-10s %s\n", "migration", s_of(r, "mig"));
	report_sockets(fp, r);
	report_phases(fp, r);
	return 0;
}

/* "moved, sockets 21, downtime 95.4 ms" */
int
output_report_summary(FILE *fp, json_t *r)
{
	char n[24], ms[32];

	if (!json_is_object(r))
		return -1;
	put_clean(fp, s_of(r, "outcome"));
	fprintf(fp, ", sockets %s, downtime %s%s\n",
	    n_of(json_object_get(r, "sockets"), "total", n, sizeof(n)),
	    ms_of(json_object_get(r, "ms"), "downtime", ms, sizeof(ms)),
	    json_is_number(json_object_get(json_object_get(r, "ms"),
	    "downtime")) ? " ms" : "");
	return 0;
}

/* "check": one line per refusal, the orphans, the host's word. */
static void
show_check(json_t *d)
{
	json_t *r, *h = json_object_get(d, "host");
	size_t i;

	json_array_foreach(json_object_get(d, "refusals"), i, r)
		printf("refused: %s\n", json_string_value(r) ?
		    json_string_value(r) : "?");
	if (i_of(d, "orphans") > 0)
		printf("waits for: %lld closed connection(s) to deliver their "
		    "last bytes: %s\n", i_of(d, "orphans"),
		    s_of(d, "orphans_busy"));
	if (json_is_object(h))
		printf("host %s: %s%s\n", s_of(h, "name"),
		    json_is_true(json_object_get(h, "ok")) ? "can take it" :
		    "cannot take it: ", json_is_true(json_object_get(h,
		    "ok")) ? "" : s_of(h, "reason"));
}

static void
text_result(enum action a, int code, const char *message, json_t *data)
{
	int reported = 0;

	/* a migration's report comes with failures too, and a check's
	 * findings are what it is for */
	if (a == A_MIGRATE)
		reported = output_report(stdout, data) == 0;
	if (a == A_CHECK && json_is_object(data))
		show_check(data);
	if (code != RES_OK) {
		fflush(stdout);
		fprintf(stderr, "migctl: %s: %s\n", migr_strresult(code),
		    message);
		return;
	}
	switch (a) {
	case A_STATUS:
		show_status(data);
		break;
	case A_PEERS:
		show_peers(data);
		break;
	case A_NS_LIST:
		show_ns_list(data);
		break;
	case A_NS_SHOW:
		show_ns(data);
		break;
	case A_HISTORY:
		show_history(data);
		break;
	case A_RUN:
		printf("%s (log %s)\n", message, s_of(data, "log"));
		break;
	case A_MIGRATE:
		if (!reported)
			printf("%s\n", message);
		break;
	default:
		printf("%s\n", message);
		break;
	}
}

static int
text_progress(json_t *p)
{
	if (output_progress_text(stdout, p) == -1)
		return -1;
	fflush(stdout);
	return 0;
}

const struct output text_output = { text_result, text_progress };
