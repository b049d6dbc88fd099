/*
 * migrd: main, options, signals, startup and shutdown order.
 *
 *	migrd [-dnv] [-f file]
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "control.h"
#include "log.h"
#include "mig.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "ns.h"
#include "peer.h"
#include "tls.h"

struct migrd migrd;

uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: migrd [-dnv] [-f file]\n"
	    "  -d       stay in the foreground, log to stderr\n"
	    "  -f file  configuration file (default %s)\n"
	    "  -n       check the configuration and exit\n"
	    "  -v       verbose (debug) logging\n", MIGR_CONFIG_FILE);
	exit(2);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	int status;
	pid_t pid;

	(void)what;
	(void)arg;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("signal %d, exiting", (int)sig);
		event_base_loopbreak(migrd.base);
		break;
	case SIGCHLD:
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			ns_child_exited(pid, status);
		break;
	case SIGHUP:
		log_info("SIGHUP: reload is not supported, restart migrd");
		break;
	}
}

static void
libevent_log(int severity, const char *msg)
{
	if (severity >= EVENT_LOG_WARN)
		log_warnx("libevent: %s", msg);
	else
		log_debug("libevent: %s", msg);
}

static int
resolve_admin_group(void)
{
	struct group *gr;

	if (migrd.conf.admin_group[0] == '\0')
		return 0;
	if ((gr = getgrnam(migrd.conf.admin_group)) == NULL) {
		log_warnx("admin-group %s: no such group",
		    migrd.conf.admin_group);
		return -1;
	}
	migrd.admin_gid = gr->gr_gid;
	migrd.have_admin_gid = 1;
	return 0;
}

int
main(int argc, char *argv[])
{
	struct event *sigev[4];
	const int sigs[4] = { SIGTERM, SIGINT, SIGCHLD, SIGHUP };
	int ch, checkonly = 0, verbose = 0, i, rc = 1;

	migrd.conf_path = MIGR_CONFIG_FILE;
	while ((ch = getopt(argc, argv, "df:nv")) != -1) {
		switch (ch) {
		case 'd':
			migrd.foreground = 1;
			break;
		case 'f':
			migrd.conf_path = optarg;
			break;
		case 'n':
			checkonly = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	log_procinit("migrd");
	log_init(LOG_TO_STDERR, verbose, LOG_DAEMON);
	if ((i = config_parse_file(migrd.conf_path, &migrd.conf)) != 0) {
		log_warnx("%s: %d error%s", migrd.conf_path, i,
		    i == 1 ? "" : "s");
		return 1;
	}
	if (checkonly) {
		if (verbose)
			config_print(stdout, &migrd.conf);
		fprintf(stderr, "configuration OK\n");
		return 0;
	}
	if (geteuid() != 0)
		fatalx("need root privileges");
	if (!migrd.foreground)
		log_init(LOG_TO_SYSLOG, verbose, LOG_DAEMON);
	event_set_log_callback(libevent_log);
	signal(SIGPIPE, SIG_IGN);
	if (resolve_admin_group() == -1)
		return 1;
	if ((migrd.base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	for (i = 0; i < 4; i++) {
		sigev[i] = evsignal_new(migrd.base, sigs[i], on_signal, NULL);
		if (sigev[i] == NULL || evsignal_add(sigev[i], NULL) == -1)
			fatalx("cannot watch signal %d", sigs[i]);
	}
	if ((migrd.ssl_ctx = tls_ctx_new(migrd.conf.cert, migrd.conf.key,
	    migrd.conf.ca)) == NULL)
		fatalx("TLS setup failed");
	migrd.started = time(NULL);
	if (control_init() == -1)
		goto out_free_ssl;
	if (ns_init() == -1)
		goto out_control;
	if (peer_init() == -1)
		goto out_ns;
	if (mig_init() == -1)
		goto out_peer;
	if (caps_drop() == -1)
		goto out_mig;
	history_add("daemon", "started as %s (protocol %d)",
	    migrd.conf.hostname, MIGR_PROTO_VERSION);
	notify_send("READY=1\nSTATUS=running");

	if (event_base_dispatch(migrd.base) == -1)
		log_warnx("event loop failed");
	else
		rc = 0;
	notify_send("STOPPING=1");
out_mig:
	mig_shutdown();
out_peer:
	peer_shutdown();
out_ns:
	ns_shutdown();
out_control:
	control_shutdown();
out_free_ssl:
	SSL_CTX_free(migrd.ssl_ctx);
	for (i = 0; i < 4; i++)
		event_free(sigev[i]);
	event_base_free(migrd.base);
	log_info("exiting");
	return rc;
}
