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
show_status(json_t *d)
{
	printf("host: %s\n", s_of(d, "host"));
	printf("protocol: %lld\n", i_of(d, "protocol"));
	printf("pid: %lld\n", i_of(d, "pid"));
	printf("uptime: %lld\n", i_of(d, "uptime"));
	printf("listen: %s port %lld\n", s_of(d, "listen"), i_of(d, "port"));
	printf("control-socket: %s\n", s_of(d, "control_socket"));
	printf("peers: %lld\n", i_of(d, "peers"));
	printf("peers-up: %lld\n", i_of(d, "peers_up"));
	printf("namespaces: %lld\n", i_of(d, "namespaces"));
	printf("capabilities: %s\n", s_of(d, "capabilities"));
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
	json_t *w, *ifs, *ifa, *ai;
	size_t i, k;

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
		printf("workload: pid %lld %s: %s\n", i_of(w, "pid"),
		    json_is_true(json_object_get(w, "exited")) ?
		    "exited" : "running", s_of(w, "command"));
	ifs = json_object_get(d, "interfaces");
	json_array_foreach(ifs, i, ifa) {
		printf("interface: %s %s %s", s_of(ifa, "ifname"),
		    s_of(ifa, "operstate"), s_of(ifa, "address"));
		json_array_foreach(json_object_get(ifa, "addr_info"), k, ai)
			printf(" %s/%lld", s_of(ai, "local"),
			    i_of(ai, "prefixlen"));
		printf("\n");
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
	}
}

static void
text_result(enum action a, int code, const char *message, json_t *data)
{
	if (code != RES_OK) {
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
	default:
		printf("%s\n", message);
		break;
	}
}

const struct output text_output = { text_result };
