/* SPDX-License-Identifier: ISC */
/*
 * migr-inetd: makes a program that only talks on stdin and stdout
 * movable with its namespace.  It listens, and runs CMD once per TCP
 * connection with the socket as fds 0 and 1 (inetd "nowait" style, UCSPI
 * environment).  Started again by migrd after a migration, it gets every
 * socket of the namespace through the socket-activation convention
 * (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES from fd 3): listeners are kept,
 * and each connection that moved gets a fresh CMD at once.
 *
 *   migr-inetd [-v] -l ADDR:PORT [-l ADDR:PORT]... -- CMD [ARG...]
 *
 * A -l whose port an adopted listener already has is that listener, so
 * the restarted supervisor takes the same command line as the original.
 * At most MAX_CHILDREN children live at once; a connection beyond that
 * is accepted and closed.  SIGTERM or SIGINT ends the supervisor; the
 * children are left to the cgroup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <event2/event.h>

#include "addrport.h"
#include "launch.h"
#include "log.h"
#include "version.h"

#define MAX_CHILDREN	1024
#define MAX_LISTENERS	64
#define MAX_SPECS	64

struct listener {
	int		 fd;
	int		 port;
	struct event	*ev;
};

static struct event_base	*base;
static struct listener		 listeners[MAX_LISTENERS];
static int			 nlisteners;
static int			 nchildren;
static int			 verbose;
static char			**cmd;

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: migr-inetd [-v] -l ADDR:PORT "
	    "[-l ADDR:PORT]... -- CMD [ARG...]\n"
	    "       migr-inetd --version\n");
	exit(2);
}

static void
child_env(const char *prefix, const struct sockaddr_storage *ss)
{
	char ip[INET6_ADDRSTRLEN], var[32], port[8];
	int p = sa_format(ss, ip, sizeof(ip));

	snprintf(var, sizeof(var), "%sIP", prefix);
	setenv(var, ip, 1);
	snprintf(var, sizeof(var), "%sPORT", prefix);
	snprintf(port, sizeof(port), "%d", p);
	setenv(var, port, 1);
}

/* Run CMD on connection fd, which is closed here in any case. */
static void
spawn(int fd, const char *how)
{
	struct sockaddr_storage local, remote;
	socklen_t llen = sizeof(local), rlen = sizeof(remote);
	char lip[INET6_ADDRSTRLEN], rip[INET6_ADDRSTRLEN];
	int lport, rport, fl;
	pid_t pid;

	memset(&local, 0, sizeof(local));
	memset(&remote, 0, sizeof(remote));
	getsockname(fd, (struct sockaddr *)&local, &llen);
	getpeername(fd, (struct sockaddr *)&remote, &rlen);
	lport = sa_format(&local, lip, sizeof(lip));
	rport = sa_format(&remote, rip, sizeof(rip));
	if (nchildren >= MAX_CHILDREN) {
		log_warnx("%s connection from %s port %d to %s port %d "
		    "closed: %d children already", how, rip, rport, lip, lport,
		    nchildren);
		goto out_close_fd;
	}
	if ((pid = fork()) < 0) {
		log_warn("%s: fork", __func__);
		goto out_close_fd;
	}
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0)
			_exit(127);
		/* CMD expects blocking stdio; a restored socket may not be */
		if ((fl = fcntl(0, F_GETFL)) >= 0)
			fcntl(0, F_SETFL, fl & ~O_NONBLOCK);
		close_range(3, ~0U, 0);
		setenv("PROTO", "TCP", 1);
		child_env("TCPLOCAL", &local);
		child_env("TCPREMOTE", &remote);
		execv(cmd[0], cmd);
		dprintf(2, "migr-inetd: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	nchildren++;
	if (verbose)
		log_info("%s connection from %s port %d to %s port %d: "
		    "pid %ld", how, rip, rport, lip, lport, (long)pid);
out_close_fd:
	close(fd);
}

static void
on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;

	(void)fd;
	(void)what;
	event_add(l->ev, NULL);
}

static void
on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct listener *l = arg;
	struct timeval tv = { 1, 0 };
	int fd;

	(void)what;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE) {
			/* no busy loop: try again in a second */
			log_warn("%s: accept on port %d, pausing 1 s",
			    __func__, l->port);
			event_del(l->ev);
			event_base_once(base, -1, EV_TIMEOUT, on_resume, l,
			    &tv);
		} else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("%s: accept on port %d", __func__, l->port);
		return;
	}
	spawn(fd, "accepted");
}

static void
serve_listener(int fd)
{
	struct listener *l;

	if (nlisteners == MAX_LISTENERS)
		fatalx("more than %d listeners", MAX_LISTENERS);
	l = &listeners[nlisteners++];
	l->fd = fd;
	l->port = local_port(fd);
	if (evutil_make_socket_nonblocking(fd) < 0 ||
	    evutil_make_socket_closeonexec(fd) < 0)
		fatal("listener fd %d", fd);
	l->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_accept, l);
	if (l->ev == NULL || event_add(l->ev, NULL) < 0)
		fatalx("cannot watch listener fd %d", fd);
}

static void
listen_on(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char ip[INET6_ADDRSTRLEN];
	int fd, i, port, one = 1, zero = 0;

	if (addr_parse(spec, &ss, &len) < 0)
		exit(2);		/* logged */
	port = sa_format(&ss, ip, sizeof(ip));
	for (i = 0; i < nlisteners; i++)
		if (listeners[i].port == port)
			return;		/* adopted */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd < 0)
		fatal("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(fd, SOMAXCONN) < 0)
		fatal("listen on %s", spec);
	serve_listener(fd);
}

/*
 * Sockets handed over by migrd: listeners are kept, connections put in
 * conns[] for spawn once the SIGCHLD event is in place.
 */
static int
adopt_fds(int *conns, int max)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	char *names = NULL, *name, *cursor;
	int i, count, acc, type, nconn = 0;
	socklen_t len;

	if (pid == NULL || n == NULL || atol(pid) != (long)getpid())
		goto out_unset;
	count = atoi(n);
	if (getenv("LISTEN_FDNAMES") != NULL &&
	    (names = strdup(getenv("LISTEN_FDNAMES"))) == NULL)
		fatal("%s: strdup", __func__);
	cursor = names;
	name = strsep(&cursor, ":");	/* NULL once the names run out */
	for (i = 0; i < count; i++) {
		int fd = 3 + i;

		len = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0) {
			log_warn("adopted fd %d", fd);
			goto next;
		}
		len = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
			type = -1;
		if (acc || (name && strncmp(name, "listen-", 7) == 0 &&
		    type == SOCK_STREAM))
			serve_listener(fd);
		else if (type == SOCK_STREAM && nconn < max &&
		    (name == NULL || strncmp(name, "conn-", 5) == 0)) {
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			conns[nconn++] = fd;
		} else {
			log_warnx("adopted fd %d (%s): not a TCP listener or "
			    "connection, closed", fd, name ? name : "no name");
			close(fd);
		}
 next:
		name = strsep(&cursor, ":");
	}
	free(names);
 out_unset:
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return nconn;
}

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	int status;

	(void)sig;
	(void)what;
	(void)arg;
	while (waitpid(-1, &status, WNOHANG) > 0)
		if (nchildren > 0)
			nchildren--;
}

static void
on_sigterm(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	if (verbose)
		log_info("signal %d: exiting, %d children left to the cgroup",
		    (int)sig, nchildren);
	event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
	static int conns[LAUNCH_MAX_FDS];
	struct event *ev;
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char *specs[MAX_SPECS];
	int c, i, nconn, nspecs = 0;

	log_procinit("migr-inetd");
	log_init(LOG_TO_STDERR, 0, 0);
	while ((c = getopt_long(argc, argv, "+l:v", longopts, NULL)) != -1) {
		switch (c) {
		case 'V':
			printf("migr-inetd %s\n", MIGR_VERSION);
			return 0;
		case 'l':
			if (nspecs == MAX_SPECS)
				fatalx("more than %d listeners", MAX_SPECS);
			specs[nspecs++] = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || nspecs == 0)
		usage();
	cmd = argv + optind;
	if (cmd[0][0] != '/') {
		log_warnx("%s: the command must be an absolute path", cmd[0]);
		exit(2);
	}
	if (access(cmd[0], X_OK) < 0) {
		log_warn("%s", cmd[0]);
		exit(2);
	}
	signal(SIGPIPE, SIG_IGN);
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	if ((ev = evsignal_new(base, SIGCHLD, on_sigchld, NULL)) == NULL ||
	    event_add(ev, NULL) < 0 ||
	    (ev = evsignal_new(base, SIGTERM, on_sigterm, NULL)) == NULL ||
	    event_add(ev, NULL) < 0 ||
	    (ev = evsignal_new(base, SIGINT, on_sigterm, NULL)) == NULL ||
	    event_add(ev, NULL) < 0)
		fatalx("cannot watch signals");
	/* adopted listeners first, so that -l finds their ports taken */
	nconn = adopt_fds(conns, LAUNCH_MAX_FDS);
	for (i = 0; i < nspecs; i++)
		listen_on(specs[i]);
	for (i = 0; i < nconn; i++)
		spawn(conns[i], "adopted");
	if (verbose)
		log_info("%d listeners, %d connections adopted, running %s",
		    nlisteners, nconn, cmd[0]);
	event_base_dispatch(base);
	return 0;
}
