/* SPDX-License-Identifier: ISC */
/*
 * One verified TCP flow of the test workload: writes the pattern at a
 * bounded rate and checks every byte it reads against the pattern (see
 * pattern.h).  Shared by streamd (server side) and streamc (client side).
 */
#ifndef MIGR_WORKLOAD_FLOW_H
#define MIGR_WORKLOAD_FLOW_H

#include <stdint.h>
#include <event2/event.h>

struct flow;

struct flow_stats {
	uint64_t	tx_bytes;	/* pattern bytes written */
	uint64_t	rx_bytes;	/* bytes read and found right */
	uint64_t	mismatches;	/* flows that read a wrong byte */
	uint64_t	resets;		/* flows ended by ECONNRESET/EPIPE */
	uint64_t	eofs;		/* flows whose peer closed its side */
	uint64_t	errors;		/* other socket errors */
	double		max_gap;	/* longest wait between two reads, s */
	double		max_gap_end;	/* flow_now() when it ended */
};

enum flow_end { FLOW_EOF, FLOW_RESET, FLOW_MISMATCH, FLOW_ERROR };

/*
 * Called once when the flow ends, or, for FLOW_EOF, when the peer has
 * shut its side: reading stops, and the callback either frees the flow
 * or keeps it to go on writing (a half-closed connection).
 */
typedef void (*flow_end_fn)(struct flow *, enum flow_end, void *arg);

/*
 * Adopt a connected TCP socket: read its sequence numbers and key and
 * start reading and writing.  rate is bytes/s written (0: write nothing).
 * The flow owns fd.  NULL on failure (fd closed).
 */
struct flow *flow_new(struct event_base *, int fd, int is_server,
    uint64_t rate, struct flow_stats *, flow_end_fn, void *arg);
void	flow_free(struct flow *);
/* Gap since the last read, for flows still open at the end. */
double	flow_open_gap(const struct flow *);
/* This flow's longest wait between two reads (s), and its reset (for
 * a windowed report); flow_stats has the longest of all flows. */
double	flow_max_gap(const struct flow *);
void	flow_max_gap_reset(struct flow *);
/* Called by a periodic timer: grant write credit for dt seconds. */
void	flow_tick(struct flow *, double dt);
int	flow_fd(const struct flow *);
void	flow_set_rate(struct flow *, uint64_t rate);
/* shutdown(SHUT_WR): a FIN after the queued bytes; nothing more is written */
int	flow_shutdown_write(struct flow *);
/* 1 once this end's FIN is queued (by us, or before an adoption) */
int	flow_write_closed(const struct flow *);
/* 1 once the peer's FIN was read (now, or before an adoption) */
int	flow_read_closed(const struct flow *);
uint64_t flow_rx_bytes(const struct flow *);
double	flow_now(void);
/* Seconds since the epoch: the clock a pause is set in, so that a
 * service restarted elsewhere and its client agree on it. */
double	flow_wall(void);

/*
 * A reader that stalls: no read between the two instants (flow_wall()
 * seconds), while writing goes on; the wait does not count as a stall.
 */
void	flow_set_pause(struct flow *, double from, double until);
/* Every pause window ends now, and a flow that had one writes no more:
 * its queues drain and what they held is checked (a signal's work). */
void	flow_drain(void);
/* Read at most rate bytes/s (0: as fast as they come). */
void	flow_set_read_rate(struct flow *, uint64_t rate);
/* Write up to n bytes of the pattern now, past the rate; how many. */
uint64_t flow_write_now(struct flow *, uint64_t n);
/* Both buffers of fd to bytes (forced when allowed): 0 or -1. */
int	flow_set_bufs(int fd, int bytes);
/* -t TICK_MS of streamd and streamc: 1..1000 ms, else a fatal error */
long	flow_tick_arg(const char *arg);

#endif
