/* SPDX-License-Identifier: ISC */
/*
 * migrd's side of the TLS process (tlsd.h): start it, hand it sockets,
 * hear what became of them, and start it again if it dies.  Nothing it
 * says is taken on trust: sizes, types, ids and descriptors are checked
 * here, and peer.c checks ids against its sessions.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "fdpass.h"
#include "log.h"
#include "migrd.h"
#include "tlsd.h"

#define READY_WAIT_MS	10000	/* at start: key loaded, privileges gone */
#define RESTART_MIN_S	1
#define RESTART_MAX_S	30
#define STABLE_MS	60000	/* up this long: the next restart is quick */

static struct event_base	*evb;
static const struct tlsd_hooks	*hooks;
static struct event		*ctl_ev, *restart_ev;
static int			 ctl = -1;
static pid_t			 child = -1;
static int			 ready;
static unsigned			 backoff = RESTART_MIN_S;
static uint64_t			 ready_ms;

static void	ctl_read(evutil_socket_t, short, void *);

/* <state-dir>/empty: the TLS process's root, made here as root (the
 * TLS process checks it before its chroot: tlsd_sandbox()) */
static int
empty_root(char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/empty", migrd.conf.state_dir) >=
	    len) {
		log_warnx("state-dir %s: path too long", migrd.conf.state_dir);
		return -1;
	}
	if (mkdir(buf, 0755) == -1 && errno != EEXIST) {
		log_warn("mkdir %s", buf);
		return -1;
	}
	return 0;
}

static int
send_init(int fd)
{
	struct tlsd_init *ini;
	int i, rc = -1;

	if ((ini = calloc(1, sizeof(*ini))) == NULL) {
		log_warn("%s: calloc", __func__);
		return -1;
	}
	ini->type = TLSD_INIT;
	ini->npeers = (uint32_t)migrd.conf.npeers;
	ini->verbose = log_getverbose();
	ini->to_stderr = migrd.foreground;
	ini->deflate = migrd.conf.compress == CONF_COMPRESS_DEFLATE;
	ini->max_message = migrd.conf.max_message;
	ini->uid = migrd.channel_uid;
	ini->gid = migrd.channel_gid;
	snprintf(ini->cert, sizeof(ini->cert), "%s", migrd.conf.cert);
	snprintf(ini->key, sizeof(ini->key), "%s", migrd.conf.key);
	snprintf(ini->ca, sizeof(ini->ca), "%s", migrd.conf.ca);
	for (i = 0; i < migrd.conf.npeers; i++)
		snprintf(ini->names[i], sizeof(ini->names[i]), "%s",
		    migrd.conf.peers[i].name);
	if (empty_root(ini->root, sizeof(ini->root)) == -1)
		goto out;
	if (send(fd, ini, sizeof(*ini), MSG_NOSIGNAL) != (ssize_t)sizeof(*ini))
		log_warn("TLS process: sending its start message");
	else
		rc = 0;
out:
	free(ini);
	return rc;
}

/* fork and exec ourselves as "migrd --tls-relay 3": a fresh address
 * space (nothing of migrd's memory, its own layout) */
static int
spawn(void)
{
	int sv[2];
	pid_t pid;
	char arg[16];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("TLS process: socketpair");
		return -1;
	}
	snprintf(arg, sizeof(arg), "%d", sv[1]);
	if ((pid = fork()) == -1) {
		log_warn("TLS process: fork");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		char *const argv[] = { "migrd", TLSD_ARG, arg, NULL };

		if (fcntl(sv[1], F_SETFD, 0) == 0)
			execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(sv[1]);
	child = pid;
	ctl = sv[0];
	if (send_init(ctl) == -1) {
		tlsd_stop();
		return -1;
	}
	return 0;
}

static int
listen_ctl(void)
{
	if (evutil_make_socket_nonblocking(ctl) == -1 ||
	    (ctl_ev = event_new(evb, ctl, EV_READ | EV_PERSIST, ctl_read,
	    NULL)) == NULL || event_add(ctl_ev, NULL) == -1) {
		log_warnx("TLS process: cannot watch its channel");
		return -1;
	}
	return 0;
}

/* The channel is gone: forget the child's sessions, start another. */
static void
lost(const char *why)
{
	struct timeval tv = { backoff, 0 };

	log_warnx("TLS process: %s; restarting it in %u s", why, backoff);
	if (ctl_ev != NULL)
		event_free(ctl_ev);
	ctl_ev = NULL;
	if (ctl != -1)
		close(ctl);
	ctl = -1;
	if (child > 0)
		kill(child, SIGKILL);	/* reaped by SIGCHLD */
	ready = 0;
	if ((uint64_t)mono_ms() - ready_ms < STABLE_MS)
		backoff = backoff * 2 > RESTART_MAX_S ? RESTART_MAX_S :
		    backoff * 2;
	else
		backoff = RESTART_MIN_S;
	hooks->lost();
	evtimer_add(restart_ev, &tv);
}

static void
restart(evutil_socket_t fd, short what, void *arg)
{
	struct timeval tv = { backoff, 0 };

	(void)fd;
	(void)what;
	(void)arg;
	if (spawn() == 0 && listen_ctl() == 0)
		return;		/* ready when it says so */
	tlsd_stop();
	evtimer_add(restart_ev, &tv);
}

static void
became_ready(void)
{
	ready = 1;
	ready_ms = (uint64_t)mono_ms();
	log_info("TLS process ready (pid %d)", (int)child);
}

/* One message from the child, and the descriptor that came with it:
 * 1, 0 (nothing yet) or -1 (the channel closed or spoke nonsense). */
static int
recv_msg(struct tlsd_msg *m, int *fd)
{
	ssize_t n = fdpass_recv(ctl, m, sizeof(*m), fd, MSG_DONTWAIT);

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	m->version[sizeof(m->version) - 1] = '\0';
	m->cipher[sizeof(m->cipher) - 1] = '\0';
	m->cert[sizeof(m->cert) - 1] = '\0';
	m->why[sizeof(m->why) - 1] = '\0';
	return 1;
}

static void
ctl_read(evutil_socket_t fd, short what, void *arg)
{
	struct tlsd_msg m;
	int rfd, rc;

	(void)fd;
	(void)what;
	(void)arg;
	if ((rc = recv_msg(&m, &rfd)) == 0)
		return;
	if (rc == -1) {
		lost("its channel closed");
		return;
	}
	if (m.type == TLSD_UP && rfd != -1 && ready) {
		hooks->up(&m, rfd);
		return;
	}
	if (rfd != -1)
		close(rfd);
	if (m.type == TLSD_READY && !ready)
		became_ready();
	else if (m.type == TLSD_FAIL && m.id != 0 && ready)
		hooks->fail(m.id, m.why);
	else if (m.type == TLSD_FAIL && m.id == 0)
		lost(m.why);
	else
		lost("it sent a message out of turn");
}

/* At start the child must be ready before anything else happens. */
static int
wait_ready(void)
{
	struct pollfd pfd = { ctl, POLLIN, 0 };
	struct tlsd_msg m;
	int fd, rc;

	if (poll(&pfd, 1, READY_WAIT_MS) != 1) {
		log_warnx("TLS process: not ready within %d ms",
		    READY_WAIT_MS);
		return -1;
	}
	if ((rc = recv_msg(&m, &fd)) != 1) {
		log_warnx("TLS process: exited during its setup");
		return -1;
	}
	if (fd != -1)
		close(fd);
	if (m.type == TLSD_FAIL) {
		log_warnx("%s", m.why);
		return -1;
	}
	if (m.type != TLSD_READY) {
		log_warnx("TLS process: unexpected message %u", m.type);
		return -1;
	}
	became_ready();
	return 0;
}

int
tlsd_start(struct event_base *base, const struct tlsd_hooks *h)
{
	evb = base;
	hooks = h;
	if ((restart_ev = evtimer_new(evb, restart, NULL)) == NULL)
		return -1;
	if (spawn() == -1 || wait_ready() == -1 || listen_ctl() == -1) {
		tlsd_stop();
		return -1;
	}
	return 0;
}

int
tlsd_ready(void)
{
	return ready;
}

static int
send_msg(struct tlsd_msg *m, int fd)
{
	if (!ready)
		return -1;
	/* never wait on the child: a full channel fails the session */
	if (fdpass_send(ctl, m, sizeof(*m), fd, MSG_DONTWAIT) == -1) {
		log_warn("TLS process: send");
		return -1;
	}
	return 0;
}

int
tlsd_new(uint32_t id, int fd, int outbound, unsigned peer)
{
	struct tlsd_msg m = {
		.type = TLSD_NEW, .id = id, .outbound = outbound != 0,
		.peer = peer
	};
	int rc = send_msg(&m, fd);

	close(fd);	/* the child has its own copy, or nothing to do */
	return rc;
}

void
tlsd_drop(uint32_t id)
{
	struct tlsd_msg m = { .type = TLSD_DROP, .id = id };

	send_msg(&m, -1);
}

int
tlsd_child_exited(pid_t pid, int status)
{
	if (pid != child || child <= 0)
		return 0;
	if (WIFSIGNALED(status))
		log_warnx("TLS process (pid %d) killed by signal %d",
		    (int)pid, WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		log_warnx("TLS process (pid %d) exited with status %d",
		    (int)pid, WEXITSTATUS(status));
	child = -1;
	if (ctl != -1)
		lost("it exited");
	return 1;
}

pid_t
tlsd_pid(void)
{
	return ready ? child : -1;
}

void
tlsd_stop(void)
{
	if (ctl_ev != NULL)
		event_free(ctl_ev);
	ctl_ev = NULL;
	if (ctl != -1)
		close(ctl);	/* it exits on EOF */
	ctl = -1;
	if (child > 0)
		kill(child, SIGTERM);
	child = -1;
	ready = 0;
}
