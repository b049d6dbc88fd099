/* SPDX-License-Identifier: ISC */
/*
 * migrd: main, options, signals, startup and shutdown order.
 *
 *	migrd [-dnv] [-f file]
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include "control.h"
#include "log.h"
#include "loopwatch.h"
#include "lowfd.h"
#include "mig.h"
#include "migrd-protocol.h"
#include "migrd.h"
#include "ns.h"
#include "peer.h"
#include "sk_engine.h"
#include "tlsd.h"
#include "version.h"

struct migrd migrd;

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: migrd [-dnv] [-f file]\n"
	    "       migrd --version\n"
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
			if (!tlsd_child_exited(pid, status))
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

/*
 * workload-user and workload-group, by name (or number).  A user that
 * does not exist stops migrd: starting the workloads as someone else,
 * root least of all, is not an option.
 */
static int
resolve_workload_user(void)
{
	const struct migrd_conf *c = &migrd.conf;
	struct passwd *pw;
	struct group *gr;

	if ((pw = getpwnam(c->workload_user)) == NULL) {
		log_warnx("workload-user %s: no such user", c->workload_user);
		return -1;
	}
	migrd.workload_uid = pw->pw_uid;
	migrd.workload_gid = pw->pw_gid;
	if (c->workload_group[0] != '\0') {
		if ((gr = getgrnam(c->workload_group)) == NULL) {
			log_warnx("workload-group %s: no such group",
			    c->workload_group);
			return -1;
		}
		migrd.workload_gid = gr->gr_gid;
	}
	if (migrd.workload_uid == 0)
		log_warnx("workload-user %s: workloads run as root, with "
		    "migrd's capabilities (see migrd.conf(5))",
		    c->workload_user);
	return 0;
}

/*
 * channel-user, by name, or a bare uid that names no user (the default,
 * 65533): the TLS process's uid and gid (tlsd.h).  Never root, and
 * never the workloads' uid, which could signal it.
 */
static int
resolve_channel_user(void)
{
	const char *u = migrd.conf.channel_user;
	struct passwd *pw;
	char *end;
	unsigned long v;

	if ((pw = getpwnam(u)) != NULL) {
		migrd.channel_uid = pw->pw_uid;
		migrd.channel_gid = pw->pw_gid;
	} else {
		errno = 0;
		v = strtoul(u, &end, 10);
		if (*end != '\0' || errno != 0 || v == 0 || v >= 0xffffffffUL) {
			log_warnx("channel-user %s: no such user", u);
			return -1;
		}
		migrd.channel_uid = (uid_t)v;
		migrd.channel_gid = (gid_t)v;
	}
	if (migrd.channel_uid == 0) {
		log_warnx("channel-user %s: may not be root", u);
		return -1;
	}
	if (migrd.channel_uid == migrd.workload_uid) {
		log_warnx("channel-user %s: is workload-user's uid %u, whose "
		    "programs could signal the TLS process; give it a uid of "
		    "its own", u, (unsigned)migrd.workload_uid);
		return -1;
	}
	return 0;
}

/*
 * Each socket of a migration coming in takes a descriptor while it is
 * restored and another while it is handed over: use all the hard limit
 * allows (systemd's LimitNOFILE= sets both), and say what it is.
 */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
	log_debug("open files: at most %llu", (unsigned long long)rl.rlim_cur);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct event *sigev[4], *wdev = NULL;
	const int sigs[4] = { SIGTERM, SIGINT, SIGCHLD, SIGHUP };
	int ch, checkonly = 0, verbose = 0, i, rc = 1;

	/* the TLS process: migrd execs itself (tlsd_link.c) */
	if (argc == 3 && strcmp(argv[1], TLSD_ARG) == 0)
		tlsd_main(atoi(argv[2]));
	migrd.conf_path = MIGR_CONFIG_FILE;
	while ((ch = getopt_long(argc, argv, "df:nv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'V':
			printf("migrd %s (protocol %d)\n", MIGR_VERSION,
			    MIGR_PROTO_VERSION);
			return 0;
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
	sk_set_log(log_msg, NULL);
	if ((i = config_parse_file(migrd.conf_path, &migrd.conf)) != 0) {
		log_warnx("%s: %d error%s", migrd.conf_path, i,
		    i == 1 ? "" : "s");
		return 1;
	}
	for (i = 0; i < migrd.conf.npeers; i++)
		if (migrd.conf.peers[i].allow.n == 0)
			log_warnx("peer %s: no 'allow' statement: it can move "
			    "nothing here", migrd.conf.peers[i].name);
	if (checkonly) {
		if (resolve_workload_user() == -1 ||
		    resolve_channel_user() == -1)
			return 1;
		if (verbose)
			config_print(stdout, &migrd.conf);
		fprintf(stderr, "configuration OK\n");
		return 0;
	}
	if (geteuid() != 0)
		fatalx("need root privileges");
	if (!migrd.foreground)
		log_init(LOG_TO_SYSLOG, verbose, LOG_DAEMON);
	else
		log_timestamps(1);	/* journald stamps its own lines */
	event_set_log_callback(libevent_log);
	signal(SIGPIPE, SIG_IGN);
	/* a checkpointed program (pid 1 of a pid namespace its launcher
	 * left, or the root `criu restore -d` leaves) is reparented to us,
	 * to be reaped and reported like any workload */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		fatal("PR_SET_CHILD_SUBREAPER");
	if (resolve_admin_group() == -1 || resolve_workload_user() == -1 ||
	    resolve_channel_user() == -1)
		return 1;
	raise_nofile();
	/* for libnftables, which select()s: see lowfd.h */
	if (lowfd_reserve() == -1)
		fatalx("cannot reserve low descriptors");
	if ((migrd.base = loop_new()) == NULL)
		fatalx("event_base_new failed");
	for (i = 0; i < 4; i++) {
		sigev[i] = evsignal_new(migrd.base, sigs[i], on_signal, NULL);
		if (sigev[i] == NULL || evsignal_add(sigev[i], NULL) == -1)
			fatalx("cannot watch signal %d", sigs[i]);
	}
	migrd.started = time(NULL);
	if (control_init() == -1)
		goto out_free;
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
	if (notify_watchdog_start(migrd.base, &wdev) == -1 ||
	    loopwatch_start(migrd.base) == -1)
		goto out_mig;

	if (event_base_dispatch(migrd.base) == -1)
		log_warnx("event loop failed");
	else
		rc = 0;
	notify_send("STOPPING=1");
out_mig:
	loopwatch_stop();
	if (wdev != NULL)
		event_free(wdev);
	mig_shutdown();
out_peer:
	peer_shutdown();
out_ns:
	ns_shutdown();
out_control:
	control_shutdown();
out_free:
	for (i = 0; i < 4; i++)
		event_free(sigev[i]);
	event_base_free(migrd.base);
	log_info("exiting");
	return rc;
}
