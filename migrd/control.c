/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "control.h"
#include "ctl_cmds.h"
#include "frame.h"
#include "listener.h"
#include "log.h"
#include "migrd-protocol.h"
#include "migrd.h"

struct ctl_conn {
	TAILQ_ENTRY(ctl_conn)	 entry;
	struct bufferevent	*bev;
	pid_t			 pid;
	uid_t			 uid;
	uint64_t		 id;
	int			 closing;
	int			 busy;		/* a deferred command runs */
};

static TAILQ_HEAD(, ctl_conn)	conns = TAILQ_HEAD_INITIALIZER(conns);
static unsigned			nconns;
static struct listener		*ctl_listener;
static int			ctl_activated;	/* fd from systemd */
static uint64_t			next_id = 1;
static uint64_t			current_id;	/* during ctl_dispatch */

static struct ctl_conn *
conn_by_id(uint64_t id)
{
	struct ctl_conn *c;

	TAILQ_FOREACH(c, &conns, entry)
		if (c->id == id && !c->closing)
			return c;
	return NULL;
}

static void
conn_free(struct ctl_conn *c)
{
	TAILQ_REMOVE(&conns, c, entry);
	bufferevent_free(c->bev);
	free(c);
	if (nconns-- == migrd.conf.max_control_clients && ctl_listener)
		listener_resume(ctl_listener);
}

static void
conn_flushed(struct bufferevent *bev, void *arg)
{
	struct ctl_conn *c = arg;

	if (c->closing &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_free(c);
}

/* Queue one result; the connection stays open unless close_after. */
static void
conn_reply(struct ctl_conn *c, int code, const char *msg, json_t *data,
    int close_after)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	json_t *r;

	r = json_pack("{s:i,s:s}", "code", code, "message",
	    msg && msg[0] ? msg : migr_strresult(code));
	if (r != NULL && data != NULL)
		json_object_set(r, "data", data);
	if (r == NULL || frame_push(out, MSG_RESULT, r,
	    MIGR_FRAME_MAX) == -1) {
		json_decref(r);
		/* too big for a frame: still end with exactly one result */
		r = json_pack("{s:i,s:s}", "code", RES_LIMIT, "message",
		    "reply does not fit in a frame");
		frame_push(out, MSG_RESULT, r, MIGR_FRAME_MAX);
	}
	json_decref(r);
	if (close_after || evbuffer_get_length(out) > migrd.conf.max_queue) {
		c->closing = 1;
		bufferevent_disable(c->bev, EV_READ);
	}
}

static void
conn_read(struct bufferevent *bev, void *arg)
{
	struct ctl_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct frame_hdr h;
	json_t *req, *data;
	char msg[512];
	int st, code;

	while (!c->closing && !c->busy) {
		st = frame_pull(in, migrd.conf.max_message, &h, &req);
		if (st == FRAME_PARTIAL)
			return;
		if (st != FRAME_OK) {
			if (st == FRAME_TOO_BIG)
				snprintf(msg, sizeof(msg), "request of %u "
				    "bytes is above max-message %u", h.len,
				    migrd.conf.max_message);
			else if (st == FRAME_BAD_VERSION)
				snprintf(msg, sizeof(msg), "protocol version "
				    "%u, migrd speaks %d", h.version,
				    MIGR_PROTO_VERSION);
			else
				snprintf(msg, sizeof(msg), "%s",
				    frame_strstatus(st));
			log_warnx("control: pid %ld uid %u: %s, closing",
			    (long)c->pid, (unsigned)c->uid, msg);
			conn_reply(c, frame_status_result(st), msg, NULL, 1);
			json_decref(req);
			break;
		}
		data = NULL;
		msg[0] = '\0';
		if (!MSG_IS_CTL(h.type)) {
			code = RES_UNKNOWN_COMMAND;
			snprintf(msg, sizeof(msg), "message type %u is not a "
			    "control command", h.type);
		} else {
			log_debug("control: pid %ld uid %u: %s",
			    (long)c->pid, (unsigned)c->uid,
			    migr_msgname(h.type));
			current_id = c->id;
			code = ctl_dispatch(h.type, req, &data, msg,
			    sizeof(msg));
			current_id = 0;
		}
		if (code == CTL_DEFERRED) {
			/* the handler answers later, through control_finish */
			c->busy = 1;
			json_decref(data);
			json_decref(req);
			break;
		}
		conn_reply(c, code, msg, data, 0);
		json_decref(data);
		json_decref(req);
	}
	conn_flushed(bev, c);
}

static void
conn_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & BEV_EVENT_ERROR)
		log_debug("control: connection error: %s", strerror(errno));
	conn_free(arg);
}

/*
 * Root, or a process in the admin group: its primary group, or one of
 * its supplementary groups as the kernel had them when it connected
 * (SO_PEERGROUPS), not as the user database lists them now.
 */
static int
caller_allowed(int fd, const struct ucred *cr)
{
	gid_t some[64], *groups = some;
	socklen_t len = sizeof(some);
	size_t i;
	int ok = 0;

	if (cr->uid == 0)
		return 1;
	if (!migrd.have_admin_gid)
		return 0;
	if (cr->gid == migrd.admin_gid)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1) {
		if (errno != ERANGE || (groups = malloc(len)) == NULL) {
			log_warn("%s: SO_PEERGROUPS", __func__);
			return 0;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups,
		    &len) == -1) {
			log_warn("%s: SO_PEERGROUPS", __func__);
			free(groups);
			return 0;
		}
	}
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == migrd.admin_gid)
			ok = 1;
	if (groups != some)
		free(groups);
	return ok;
}

static void
control_accept(int fd, struct sockaddr *sa, socklen_t salen, void *arg)
{
	struct ctl_conn *c;
	struct ucred cr;
	socklen_t len = sizeof(cr);

	(void)sa;
	(void)salen;
	(void)arg;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1) {
		log_warn("%s: SO_PEERCRED", __func__);
		close(fd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("%s: calloc", __func__);
		close(fd);
		return;
	}
	c->pid = cr.pid;
	c->uid = cr.uid;
	c->id = next_id++;
	c->bev = bufferevent_socket_new(migrd.base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		log_warnx("%s: bufferevent_socket_new failed", __func__);
		close(fd);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&conns, c, entry);
	if (++nconns == migrd.conf.max_control_clients) {
		log_warnx("control: %u clients, pausing accept", nconns);
		listener_pause(ctl_listener);
	}
	bufferevent_setwatermark(c->bev, EV_READ, 0,
	    migrd.conf.max_message + MIGR_FRAME_HDR_LEN);
	bufferevent_setcb(c->bev, conn_read, conn_flushed, conn_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (!caller_allowed(fd, &cr)) {
		log_warnx("control: refused pid %ld uid %u gid %u: not root "
		    "nor in admin-group", (long)cr.pid, (unsigned)cr.uid,
		    (unsigned)cr.gid);
		char why[96];

		snprintf(why, sizeof(why), "uid %u is neither root nor in "
		    "the admin group", (unsigned)cr.uid);
		conn_reply(c, RES_DENIED, why, NULL, 1);
	}
}

/* Another migrd answering on path?  1 yes, 0 no (path free), -1 error. */
static int
control_probe(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s: %s", __func__, path);
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("%s: %s exists and is not a socket", __func__, path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("%s: socket", __func__);
		return -1;
	}
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	if (rc == 0) {
		log_warnx("%s: another migrd answers on %s", __func__, path);
		return 1;
	}
	if (errno != ECONNREFUSED) {
		log_warn("%s: connect %s", __func__, path);
		return -1;
	}
	/* a stale socket from a dead migrd: only now remove it */
	if (unlink(path) == -1) {
		log_warn("%s: unlink stale %s", __func__, path);
		return -1;
	}
	log_info("removed stale control socket %s", path);
	return 0;
}

static int
control_bind(const char *path)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("%s: %s: path too long", __func__, path);
		return -1;
	}
	if (control_probe(path) != 0)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1) {
		log_warn("%s: socket", __func__);
		return -1;
	}
	old = umask(S_IXUSR | S_IRWXG | S_IRWXO);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_warn("%s: bind %s", __func__, path);
		umask(old);
		goto fail_close;
	}
	umask(old);
	if (chmod(path, 0660) == -1) {
		log_warn("%s: chmod %s", __func__, path);
		goto fail_unlink;
	}
	if (migrd.have_admin_gid && chown(path, 0, migrd.admin_gid) == -1) {
		log_warn("%s: chown %s", __func__, path);
		goto fail_unlink;
	}
	if (listen(fd, 16) == -1) {
		log_warn("%s: listen", __func__);
		goto fail_unlink;
	}
	return fd;

fail_unlink:
	unlink(path);
fail_close:
	close(fd);
	return -1;
}

uint64_t
control_current(void)
{
	return current_id;
}

int
control_progress(uint64_t id, json_t *p)
{
	struct ctl_conn *c = conn_by_id(id);
	struct evbuffer *out;
	int rc = -1;

	if (c != NULL && p != NULL) {
		out = bufferevent_get_output(c->bev);
		/* a client that stopped reading loses its progress lines */
		if (evbuffer_get_length(out) < migrd.conf.max_queue)
			rc = frame_push(out, MSG_CTL_PROGRESS, p,
			    MIGR_FRAME_MAX);
	}
	json_decref(p);
	return rc;
}

void
control_finish(uint64_t id, int code, const char *msg, json_t *data)
{
	struct ctl_conn *c = conn_by_id(id);

	if (c == NULL || !c->busy)
		return;
	c->busy = 0;
	conn_reply(c, code, msg, data, 0);
	/* requests that came while it ran */
	if (!c->closing)
		conn_read(c->bev, c);
}

int
control_init(void)
{
	int fd;

	if ((fd = notify_listen_fd()) != -1) {
		ctl_activated = 1;
		log_info("control socket passed by systemd (fd %d)", fd);
	} else if ((fd = control_bind(migrd.conf.control_socket)) == -1)
		return -1;
	else
		log_info("control socket %s", migrd.conf.control_socket);
	if ((ctl_listener = listener_new(migrd.base, fd, control_accept,
	    NULL)) == NULL) {
		if (!ctl_activated)
			unlink(migrd.conf.control_socket);
		return -1;
	}
	return 0;
}

void
control_shutdown(void)
{
	struct ctl_conn *c;

	while ((c = TAILQ_FIRST(&conns)) != NULL)
		conn_free(c);
	if (ctl_listener != NULL) {
		listener_free(ctl_listener);
		ctl_listener = NULL;
		if (!ctl_activated)
			unlink(migrd.conf.control_socket);
	}
}
