/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "flow.h"
#include "log.h"
#include "pattern.h"

#define FLOW_BUF	(64 * 1024)

/* flow_drain(): the pause windows are over, and the flows that had one
 * write no more */
static int flow_draining;

struct flow {
	int			 fd;
	uint64_t		 key;
	int			 tx_dir, rx_dir;
	uint32_t		 tx_next, rx_next;
	uint64_t		 rate;
	double			 credit;
	double			 last_rx;
	uint64_t		 rx_bytes;
	int			 rx_started;
	int			 wr_closed, rd_closed;
	double			 pause_from, pause_until;
	int			 rd_paused;	/* in the pause window */
	uint64_t		 read_rate;
	double			 rd_credit;
	int			 rd_throttled;	/* out of read credit */
	struct event		*rd, *wr;
	struct flow_stats	*stats;
	double			 max_gap;	/* this flow's own, s */
	flow_end_fn		 end;
	void			*arg;
};

double
flow_now(void)
{
	return mono_ms() / 1e3;
}

double
flow_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
flow_finish(struct flow *f, enum flow_end why)
{
	switch (why) {
	case FLOW_EOF:
		f->stats->eofs++;
		break;
	case FLOW_RESET:
		f->stats->resets++;
		break;
	case FLOW_MISMATCH:
		f->stats->mismatches++;
		break;
	case FLOW_ERROR:
		f->stats->errors++;
		break;
	}
	f->end(f, why, f->arg);
}

static enum flow_end
flow_errno_end(int err)
{
	return (err == ECONNRESET || err == EPIPE) ? FLOW_RESET : FLOW_ERROR;
}

static void
flow_on_read(evutil_socket_t fd, short what, void *arg)
{
	static uint8_t buf[FLOW_BUF];
	struct flow *f = arg;
	double now = flow_now();
	ssize_t n;
	size_t ok, want;

	(void)what;
	want = sizeof(buf);
	if (f->read_rate > 0) {
		if (f->rd_credit < 1) {
			event_del(f->rd);
			f->rd_throttled = 1;
			return;
		}
		if (f->rd_credit < (double)want)
			want = (size_t)f->rd_credit;
	}
	n = recv(fd, buf, want, MSG_PEEK);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		log_warn("flow %d: recv", fd);
		flow_finish(f, flow_errno_end(errno));
		return;
	}
	if (n == 0) {
		event_del(f->rd);
		f->rd_closed = 1;
		flow_finish(f, FLOW_EOF);
		return;
	}
	ok = pattern_check(f->key, f->rx_dir, f->rx_next, buf, (size_t)n);
	if (ok != (size_t)n) {
		log_warnx("flow %d: wrong byte at seq %u (offset %zu of a "
		    "%zd-byte read): got 0x%02x, want 0x%02x", fd,
		    f->rx_next + (uint32_t)ok, ok, n, buf[ok],
		    pattern_byte(f->key, f->rx_dir, f->rx_next + (uint32_t)ok));
		flow_finish(f, FLOW_MISMATCH);
		return;
	}
	/* consume exactly what was checked */
	if (recv(fd, buf, (size_t)n, 0) != n) {
		log_warn("flow %d: consume", fd);
		flow_finish(f, FLOW_ERROR);
		return;
	}
	if (f->rx_started && now - f->last_rx > f->stats->max_gap) {
		f->stats->max_gap = now - f->last_rx;
		f->stats->max_gap_end = now;
	}
	if (f->rx_started && now - f->last_rx > f->max_gap)
		f->max_gap = now - f->last_rx;
	f->rx_started = 1;
	f->last_rx = now;
	f->rx_next += (uint32_t)n;
	f->rx_bytes += (uint64_t)n;
	f->stats->rx_bytes += (uint64_t)n;
	if (f->read_rate > 0)
		f->rd_credit -= (double)n;
}

static void
flow_on_write(evutil_socket_t fd, short what, void *arg)
{
	static uint8_t buf[FLOW_BUF];
	struct flow *f = arg;
	size_t len = f->credit < sizeof(buf) ? (size_t)f->credit : sizeof(buf);
	ssize_t n;

	(void)what;
	if (len == 0 || f->wr_closed)
		return;
	pattern_fill(f->key, f->tx_dir, f->tx_next, buf, len);
	n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR) {
			event_add(f->wr, NULL);
			return;
		}
		log_warn("flow %d: send", fd);
		flow_finish(f, flow_errno_end(errno));
		return;
	}
	f->tx_next += (uint32_t)n;
	f->credit -= (double)n;
	f->stats->tx_bytes += (uint64_t)n;
	if (f->credit >= 1)
		event_add(f->wr, NULL);
}

/* The pause window and the read credit, at each tick. */
static void
flow_tick_read(struct flow *f, double dt)
{
	double wall = flow_wall();
	int paused = f->pause_until > 0 && wall >= f->pause_from &&
	    wall < f->pause_until && !flow_draining;

	if (f->rd_closed)
		return;
	if (f->read_rate > 0) {
		f->rd_credit += (double)f->read_rate * dt;
		if (f->rd_credit > (double)f->read_rate)
			f->rd_credit = (double)f->read_rate;
	}
	if (paused && !f->rd_paused) {
		f->rd_paused = 1;
		event_del(f->rd);
	} else if (!paused && f->rd_paused) {
		/* the pause was the reader's: not a stall of the stream */
		f->rd_paused = 0;
		f->last_rx = flow_now();
		event_add(f->rd, NULL);
	}
	if (!f->rd_paused && f->rd_throttled && f->rd_credit >= 1) {
		f->rd_throttled = 0;
		event_add(f->rd, NULL);
	}
}

void
flow_tick(struct flow *f, double dt)
{
	flow_tick_read(f, dt);
	if (f->rate == 0 || f->wr_closed ||
	    (flow_draining && f->pause_until > 0))
		return;
	f->credit += f->rate * dt;
	/* no more than a second's worth piles up during a stall */
	if (f->credit > (double)f->rate)
		f->credit = (double)f->rate;
	if (f->credit >= 1)
		event_add(f->wr, NULL);
}

struct flow *
flow_new(struct event_base *base, int fd, int is_server, uint64_t rate,
    struct flow_stats *stats, flow_end_fn end, void *arg)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	struct flow *f;
	int one = 1;

	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		log_warn("%s: calloc", __func__);
		close(fd);
		return NULL;
	}
	if (getsockname(fd, (struct sockaddr *)&local, &llen) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen) < 0) {
		log_warn("%s: socket addresses", __func__);
		goto out_free;
	}
	if (pattern_seqs(fd, &f->tx_next, &f->rx_next) < 0)
		goto out_free;
	/* an adopted socket may be half-closed already, either way */
	{
		struct tcp_info ti;
		socklen_t tlen = sizeof(ti);

		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen) == 0) {
			f->wr_closed = ti.tcpi_state == TCP_FIN_WAIT1 ||
			    ti.tcpi_state == TCP_FIN_WAIT2 ||
			    ti.tcpi_state == TCP_CLOSING ||
			    ti.tcpi_state == TCP_LAST_ACK;
		}
	}
	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	f->fd = fd;
	f->key = is_server ? pattern_key(&peer, &local) : pattern_key(&local, &peer);
	f->tx_dir = is_server ? DIR_S2C : DIR_C2S;
	f->rx_dir = is_server ? DIR_C2S : DIR_S2C;
	f->rate = rate;
	f->stats = stats;
	f->end = end;
	f->arg = arg;
	f->last_rx = flow_now();
	f->rd = event_new(base, fd, EV_READ | EV_PERSIST, flow_on_read, f);
	f->wr = event_new(base, fd, EV_WRITE, flow_on_write, f);
	if (f->rd == NULL || f->wr == NULL || event_add(f->rd, NULL) < 0) {
		log_warnx("%s: cannot add events", __func__);
		goto out_free;
	}
	return f;

out_free:
	if (f->rd)
		event_free(f->rd);
	if (f->wr)
		event_free(f->wr);
	free(f);
	close(fd);
	return NULL;
}

void
flow_free(struct flow *f)
{
	if (f == NULL)
		return;
	event_free(f->rd);
	event_free(f->wr);
	close(f->fd);
	free(f);
}

double
flow_open_gap(const struct flow *f)
{
	return f->rx_started ? flow_now() - f->last_rx : 0;
}

double
flow_max_gap(const struct flow *f)
{
	return f->max_gap;
}

void
flow_max_gap_reset(struct flow *f)
{
	f->max_gap = 0;
}

int
flow_fd(const struct flow *f)
{
	return f->fd;
}

void
flow_set_rate(struct flow *f, uint64_t rate)
{
	f->rate = rate;
	if (rate == 0)
		f->credit = 0;
}

int
flow_shutdown_write(struct flow *f)
{
	if (f->wr_closed)
		return 0;
	f->wr_closed = 1;
	f->credit = 0;
	event_del(f->wr);
	if (shutdown(f->fd, SHUT_WR) < 0) {
		log_warn("flow %d: shutdown", f->fd);
		return -1;
	}
	return 0;
}

int
flow_write_closed(const struct flow *f)
{
	return f->wr_closed;
}

int
flow_read_closed(const struct flow *f)
{
	return f->rd_closed;
}

uint64_t
flow_rx_bytes(const struct flow *f)
{
	return f->rx_bytes;
}

void
flow_set_pause(struct flow *f, double from, double until)
{
	f->pause_from = from;
	f->pause_until = until;
}

void
flow_drain(void)
{
	flow_draining = 1;
}

void
flow_set_read_rate(struct flow *f, uint64_t rate)
{
	f->read_rate = rate;
	f->rd_credit = 0;
}

uint64_t
flow_write_now(struct flow *f, uint64_t n)
{
	static uint8_t buf[FLOW_BUF];
	uint64_t done = 0;
	size_t len;
	ssize_t w;

	while (done < n && !f->wr_closed) {
		len = n - done < sizeof(buf) ? (size_t)(n - done) : sizeof(buf);
		pattern_fill(f->key, f->tx_dir, f->tx_next, buf, len);
		w = send(f->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w <= 0)
			break;
		f->tx_next += (uint32_t)w;
		f->stats->tx_bytes += (uint64_t)w;
		done += (uint64_t)w;
	}
	return done;
}

int
flow_set_bufs(int fd, int bytes)
{
	int rc = 0;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes,
	    sizeof(bytes)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) < 0)
		rc = -1;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes,
	    sizeof(bytes)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)) < 0)
		rc = -1;
	return rc;
}

long
flow_tick_arg(const char *arg)
{
	char *end;
	long ms;

	errno = 0;
	ms = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || ms < 1 || ms > 1000)
		fatalx("bad tick '%s' (1 to 1000 ms)", arg);
	return ms;
}
