/* SPDX-License-Identifier: ISC */
/* Shared by mig.c, mig_src.c and mig_dst.c only. */
#ifndef MIGRD_MIG_PRIV_H
#define MIGRD_MIG_PRIV_H

#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "config.h"
#include "imgdir.h"
#include "launch.h"
#include "migdst.h"
#include "migfsm.h"
#include "migsrc.h"
#include "nsarg.h"
#include "replay.h"
#include "sk_json.h"

#define MIG_ID_MAX	128
#define MIG_REASON_MAX	256
#define MIG_QUEUE_MAX	8
#define MIG_FREEZE_MS	5000	/* cgroup freeze / kill / thaw waits */
/* for handshakes under way to finish: a lost SYN-ACK is sent again
 * after 1 s, then 2 s more (docs/design.md, "A gate before the freeze") */
#define GATE_MAX_MS	3500

/* Phase figures, in ms; a phase that did not happen stays negative. */
enum mig_phase {
	PH_PRECOPY, PH_FREEZE, PH_DUMP, PH_TRANSFER, PH_RESTORE, PH_COMMIT,
	PH_DOWNTIME, PH_TOTAL, PH__MAX
};

struct helper;
struct outrec;
struct srccheck;

/* Checkpoint mode: a task that held a socket, at which number (the
 * destination puts the restored socket there). */
struct ck_holder {
	uint64_t	id;		/* the socket's record id */
	pid_t		nspid;		/* in the program's pid namespace */
	int		fd;
};

/* Checkpoint mode, source: a task's pid in its own pid namespace. */
struct ck_nspid {
	pid_t		pid, nspid;
};

/* The source's checkpoint steps: each pass of pre-copy while the
 * program runs, then the dump after the sockets'. */
enum ck_phase { CK_NONE, CK_DUMPING, CK_SENDING, CK_SENT };

/* Memory pre-copy (mig_precopy.c): passes at most (checkpoint-precopy),
 * and what each did. */
#define CK_PASSES_MAX	8
struct ck_pass {
	double		ms;		/* criu pre-dump */
	uint64_t	pages;		/* bytes of memory it wrote */
	uint64_t	bytes;		/* of images, sent */
	double		send_ms;	/* sending them */
};

/* The socket records a destination takes in, in order: each whole in
 * MIG_RECORD, or announced there and completed by MIG_CHUNKs. */
struct rx_stream {
	uint64_t		 seq;		/* records restored */
	struct sk_record	 rec;		/* the record at hand */
	int			 partial;	/* rec waits for chunks */
};

struct mig_kinds {
	unsigned	total, listen, established, closing, udp, other;
	unsigned	accepted;
	unsigned	reset;		/* at go-live, could not resume */
	unsigned	path;		/* connections with their path
					   (TCP_REPAIR_PATH) */
};

struct mig {
	TAILQ_ENTRY(mig)	 entry;
	char			 id[MIG_ID_MAX];
	char			 ns[NSARG_NAME_MAX + 1];
	char			 peer[CONF_NAME_MAX];
	char			 hostif[24];	/* "vNS" */
	char			 cgroup[PATH_MAX];
	enum mig_role		 role;
	enum mig_state		 state;
	int			 commit_held;	/* fault dst-commit-hold */
	struct event		*pause;		/* a "-pause" fault's timer */
	struct srccheck		*check;		/* the source's check runs */
	void			(*pause_fn)(struct mig *);
	int			 paused;	/* that fault was taken */
	uint64_t		 sock_budget;	/* destination: most records */
	/* destination: the workload, ready to exec before the commit
	 * point (live.pid > 0) */
	struct launch_pending	 live;
	struct probe		*probe;		/* destination: before PREPARED */
	/* destination, committed: its sockets leave repair a slice at a
	 * time (live_ev), and COMMITTED waits for the last */
	struct event		*live_ev;
	int			 going;		/* going live, not yet live */
	int			 attaching;	/* going, the veth's port not
						   forwarding yet */
	int			 released;	/* going, every socket out of
						   repair and the workload run */
	double			 release_ms;	/* what running it took */
	double			 t_released;	/* mono_ms() once it ran */
	double			 t_commit_rx;	/* the first COMMIT heard */
	/* source, moved: its tasks asked to die (cgroup.kill); kill_ev,
	 * set while they do, looks every few ms until they are gone, then
	 * the namespace is deleted and the migration settles */
	struct event		*kill_ev;
	double			 t_kill;
	int			 kill_slow;	/* fault src-kill-slow */
	int			 committed_due;	/* COMMITTED once live */
	int			 checked_socks;	/* source: found by its check */
	time_t			 since;
	double			 t0;		/* mono_ms() at the start */
	uint64_t		 ctl;		/* migctl waiting, or 0 */
	double			 t_said;	/* mono_ms() of the last report */
	double			 t_phase;	/* of the last but "still" */
	char			 said[16];	/* its phase */
	struct event		*timer;		/* the phase's deadline */
	struct event		*work;		/* source: next dump step */
	int			 in_step;
	int			 failed;	/* skip this step's other actions */
	int			 started;
	int			 was_frozen;	/* a rollback, not a refusal */
	int			 gating;	/* source: waiting for handshakes */
	double			 t_gate;
	int			 orphaning;	/* source: waiting for orphans */
	double			 t_orphan;
	int			 settling;	/* source: locked, waiting for its
						   tasks to rest (light mode) */
	double			 t_settle;
	int			 rest_looks;	/* looks in a row at rest */
	double			 t_drain;	/* orphans of the settle let
						   through since (or 0) */
	int			 freezing;	/* source: waiting for the freeze */
	int			 fault_slow_freeze;
	int			 aborted;	/* destination: the source said so */
	int			 told;		/* destination: FAILED sent */
	enum mig_event		 queue[MIG_QUEUE_MAX];
	int			 nqueue;
	int			 restarted;	/* found in the state file */
	int			 answered;	/* ctl has its result */
	char			 reason[MIG_REASON_MAX];
	json_t			*desc;		/* {addrs, routes, mac} */
	json_t			*argv;		/* the workload, or NULL */
	double			 ms[PH__MAX];
	struct mig_kinds	 kinds;
	/* checkpoint mode (mig_ckpt.c): the program moves with its memory,
	 * through CRIU; ck_root 0 is light mode */
	pid_t			 ck_root;	/* source: the program's pid;
						   destination: the restored
						   root's, once restored */
	int			 ck;		/* checkpoint mode */
	int			 gate;		/* destination: the workload
						   starts at READY, gated */
	char			 ck_stdout[32];	/* "pipe:[INO]" its output
						   went to, or "" */
	char			 ck_dir[PATH_MAX + 96];	/* CRIU's images:
						   STATE_DIR/ckpt/SIDE-NS */
	struct helper		*ck_helper;	/* criu dump or restore */
	enum ck_phase		 ck_phase;	/* source */
	struct imgdir_file	*ck_files;	/* source: sent in turn */
	size_t			 ck_nfiles, ck_file;
	uint64_t		 ck_off;	/* into ck_files[ck_file] */
	size_t			 ck_images;	/* source: files CRIU wrote */
	uint64_t		 ck_bytes;	/* of images sent, or taken */
	uint64_t		 ck_max;	/* destination: the most */
	struct imgdir_rx	 ck_rx;		/* destination */
	int			 ck_rx_open;
	struct ck_nspid		*ck_nspids;	/* source: read once each */
	size_t			 ck_nnspids;
	struct ck_holder	*ck_holders;	/* destination */
	size_t			 ck_nholders, ck_capholders;
	struct sk_state		**ck_udp;	/* destination: UDP records,
						   restored after CRIU's */
	size_t			 ck_nudp, ck_capudp;
	double			 ck_ms;		/* criu dump or restore */
	uint64_t		 ck_pages;	/* source: memory in the dump */
	size_t			 ck_sent_files;	/* source: images sent, every
						   pass and the dump */
	int			 ck_precopying;	/* source: passes under way */
	uint64_t		 ck_precopy_bytes; /* source: sent by them */
	int			 ck_pass;	/* passes done (source), or
						   being taken (destination;
						   the dump's after them) */
	int			 ck_rx_final;	/* destination: the dump's
						   images are coming */
	size_t			 ck_taken_files; /* destination: all passes */
	struct ck_pass		 ck_passes[CK_PASSES_MAX];
	double			 ck_t0;		/* this pass's start */
	uint64_t		 ck_list_bytes;	/* source: of the images being
						   sent, and sent of them */
	uint64_t		 ck_list_sent;
	double			 ck_t_told;	/* migctl last heard of them */
	uint64_t		 queued;	/* bytes in socket queues */
	uint64_t		 streamed;	/* bytes of records sent */
	uint64_t		 encoded;	/* the same, as JSON */
	/* the replaying lock (mig_replay.c): what reached the locked
	 * namespace (source), or what its peer sent of it (destination) */
	int			 rq_on;		/* source: it replays */
	int			 rq_fd;		/* source: the queue, or -1 */
	struct event		*rq_ev;
	struct replay_list	 rq;
	size_t			 rq_sent;	/* source: packets sent on */
	struct replay_pkt	*rq_last_sent;	/* ... the last of them (the
						   list only grows until
						   replay_close()) */
	size_t			 rq_at_commit;	/* ... of them before COMMIT */
	uint64_t		 rq_replayed;	/* injected (destination's
						   count, at the source) */
	size_t			 rq_refused;	/* destination: not taken */
	int			 rq_injecting;	/* destination: under way */
	struct replay_out	 rq_out;	/* ... through this (fd -1:
						   not open) */
	double			 rq_inject_ms;	/* ... for so long */
	char			 rq_inject_err[160];	/* the first failure */

	/* source */
	json_t			*records;	/* pre-copy: links, addrs... */
	TAILQ_HEAD(, outrec)	 outq;		/* records, chunks to send */
	int			 dumped;	/* every socket saved */
	int			 raw_chunks;	/* queues' bytes as tails */
	struct migsrc		 src;
	int			 have_src;
	uint64_t		 seq;		/* records sent */
	double			 t_freeze, t_dump_done, t_commit;
	unsigned		 commits_sent;	/* COMMIT, repeats counted */
	/* destination */
	struct nsdump		*nd;
	struct migdst		 dst;
	struct rx_stream	 rx;
	pid_t			 pid;
};

TAILQ_HEAD(mig_list, mig);
extern struct mig_list	migs;

/* mig.c */
/* The "mig" id a migration message carries, or NULL if none fits. */
const char	*mig_msg_id(json_t *msg);
struct mig	*mig_new(enum mig_role, const char *id, const char *ns,
		    const char *peer);
void		 mig_free(struct mig *);
struct mig	*mig_find_id(const char *id, const char *peer);
struct mig	*mig_find_ns(const char *ns);
void		 mig_event(struct mig *, enum mig_event);
/* Is m over (a step done outside mig_event())?  1 if m was freed. */
int		 mig_settle(struct mig *);
void		 mig_fail(struct mig *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
void		 mig_progress(struct mig *, const char *phase,
		    const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
int		 mig_send(struct mig *, int type, json_t *extra);
/* With a binary tail (frame.h), to a peer that takes them. */
int		 mig_send_tail(struct mig *, int type, json_t *extra,
		    const void *tail, size_t taillen);
int		 mig_fault(const char *point);
/* 1: fault POINT holds the step for MIG_PAUSE_MS, then fn(m) takes it */
#define MIG_PAUSE_MS	3000
int		 mig_pause(struct mig *, const char *point,
		    void (*fn)(struct mig *));
void		 mig_count_kind(struct mig_kinds *, const json_t *rec);
double		 mig_now(const struct mig *);	/* ms since t0 */

/* mig_src.c: the source's actions and messages */
/* What a destination's answer carries (what is absent: -1, -1, 0, 0,
 * NULL). */
struct src_answer {
	double		 ms;		/* build_ms, restore_ms, live_ms */
	json_int_t	 n;		/* READY: sockets; COMMITTED: reset */
	json_int_t	 pid;		/* COMMITTED */
	json_int_t	 replayed;	/* COMMITTED */
	double		 since_release;	/* COMMITTED: ms, or -1 */
	double		 since_commit;	/* COMMITTED: ms, or -1 */
	const char	*reason;	/* REFUSED, FAILED */
};
/* 0, or -1 for a READY without its figures. */
int	src_answer(int type, json_t *msg, struct src_answer *a);
/* Where the downtime ends (mono ms): now less COMMITTED's
 * since_release_ms, if that falls after COMMIT was first sent, less half
 * the channel's round trip when since_commit_ms tells it (COMMIT sent
 * commits times). */
double	src_downtime_end(double now, double t_commit, unsigned commits,
	    double since_release, double since_commit);
void	src_action(struct mig *, unsigned action);
/* Moved: kill the tasks (their sockets in repair), delete the namespace.
 * wait 0: asked here, waited for by a timer, and the migration settles
 * once it is done; wait 1: all of it now (a restart's recovery).
 * src_kill_now() ends a kill under way at once (migrd stops). */
void	src_kill_delete(struct mig *, int wait);
void	src_kill_now(struct mig *);
void	src_rx(struct mig *, int type, json_t *msg);
void	src_cleanup(struct mig *);
/* mig_precopy.c: the source's passes of memory pre-copy, from the loop
 * before the gate: 1 done (go on to the gate), 0 wait, -1 failed
 * (mig_fail() was called). */
int	ckpt_precopy_step(struct mig *);
/* In a child, for "migctl check": a pre-dump of the running program
 * into a folder deleted after it, to learn whether CRIU can take it;
 * -1 with why if not. */
int	ckpt_dry_predump(const char *ns, pid_t root, const char *cgroup,
	    char *why, size_t len);
/* The report's "checkpoint" object: the dump in the freeze (its time,
 * images, bytes, memory) and each pass of pre-copy before it. */
json_t	*ckpt_report(const struct mig *);
/* A figure in ms, to one decimal, as reports give them. */
double	mig_ms1(double ms);

/* "cancel" while the source's check runs: 1 (m is gone), else 0 */
int	src_cancel_check(struct mig *);
/* mig_replay.c: the replaying lock of one migration */
/* Source, before the lock is taken: bind the queue's reader (or let
 * the lock drop, saying why). */
void	replay_src_open(struct mig *);
/* Source, before COMMIT: the packets kept and not yet sent. */
void	replay_src_send(struct mig *);
/* Source, after a rollback: every packet back to the sockets here. */
void	replay_src_rollback(struct mig *);
/* Destination: take a PACKETS message (-1: the migration must fail). */
int	replay_dst_rx(struct mig *, json_t *msg, char *why, size_t len);
/*
 * What replay_dst_rx() does with one: every packet that is a whole IP
 * packet to one of nd's addresses goes into l (within its bounds); one
 * that is not is counted in *refused, the first one's reason in why.
 * -1 and why for a message that is not a list of base64 packets; l and
 * *refused are then as they were.
 */
int	replay_take(struct replay_list *l, const struct nsdump *nd,
	    json_t *msg, size_t *refused, char *why, size_t len);
/* Destination, once the sockets left repair: inject what came. */
/*
 * Destination, going live: what the source kept goes into the namespace
 * a few packets at a time, about budget_ms of them (1 when none is
 * left), so that thousands of them do not hold the loop; then the rest
 * at once, and the time all of it took.
 */
int	replay_dst_inject_some(struct mig *, double budget_ms);
double	replay_dst_done(struct mig *);
/* Destination: PACKETS for a migration gone live here lately (1: it
 * was one, taken or not; 0: unknown). */
int	replay_late_rx(const char *peer, const char *id, json_t *msg);
/* Either side: stop reading, forget what is kept. */
void	replay_close(struct mig *);
/* The report's "lock" object. */
json_t	*replay_report(const struct mig *);

/* mig_dst.c */
/* A PREPARE (or a CHECK) as this host would take it. */
struct prep {
	const char	*id, *ns;
	json_t		*desc, *argv;
	int		 ckpt;		/* checkpoint mode */
	int		 gate;		/* a gated workload (launch.h) */
	const char	*ck_stdout;	/* "pipe:[INO]" or "" */
	struct nsdump	*nd;
	json_int_t	 sockets;	/* as the source counted them */
	uint64_t	 budget;	/* prep_validate: what it may send */
	uint64_t	 ck_max;	/* prep_validate: bytes of images */
};
/*
 * The message alone, field by field (the peer is authenticated, not
 * trusted): 0 and p filled (p->nd is the caller's to free), or -1 and
 * why.  It may look at this host (is the workload's program there?) but
 * changes nothing, of the system or of migrd's state.
 */
int	prep_parse(const char *peer, json_t *msg, struct prep *p, char *why,
	    size_t len);
/*
 * MIG_RECORD, MIG_CHUNK: -1 and why (the migration fails), 0 when rx
 * waits for chunks, 1 when rx->rec is a whole socket record for the
 * caller to restore (then count in rx->seq) and clear.  *seq is the
 * message's; rx_record() also gives the record as it came (*raw).
 */
int	rx_record(struct rx_stream *rx, json_t *msg, json_int_t *seq,
	    json_t **raw, char *why, size_t len);
int	rx_chunk(struct rx_stream *rx, json_t *msg, json_int_t *seq,
	    char *why, size_t len);
/* MIG_DUMP_DONE: 0 if every record announced came whole, or -1 and why. */
int	rx_dump_done(const struct rx_stream *rx, json_t *msg, char *why,
	    size_t len);
void	rx_free(struct rx_stream *rx);
void	dst_prepare(const char *peer, json_t *msg);
void	dst_check(const char *peer, json_t *msg);
/* mig_check.c: "migctl check" */
void	check_rx(const char *peer, json_t *msg);
void	dst_action(struct mig *, unsigned action);
void	dst_rx(struct mig *, int type, json_t *msg);
void	dst_cleanup(struct mig *);
/* migrd stops while m goes live: the rest of it now */
void	dst_live_now(struct mig *);
void	dst_discard_leftover(const char *ns);
/* mig.c: the ids of migrations this host took in and went live with */

/* mig.c: a control request's NS (ours) and HOST (a peer, or NULL):
 * RES_OK, or a result code and msg */
int	mig_check_target(const char *ns, const char *host, char *msg,
	    size_t msglen);
/* mig_src.c: drop the records and chunks not sent yet */
void	src_outq_free(struct mig *);
/* mig.c: write the state file now (the source after its freeze); fault,
 * if not NULL, names the MIGRD_FAULT point that makes the write fail */
int	mig_persist(const char *fault);
/* why the last write of the state failed ("fault injected" for one) */
const char *mig_persist_error(void);
/* mig.c: (re)start the deadline of the state m is in */
void	mig_arm_timer(struct mig *);

/*
 * mig_ckpt.c: checkpoint mode, where CRIU moves the program with its
 * memory and the engine its sockets (docs/design.md, "Checkpoint mode").
 */
/* PREPARE's and CHECK's "workload": {argv[, checkpoint]} for ns, or
 * NULL without argv. */
json_t	*ckpt_workload_json(const char *ns, json_t *argv);
/* Source, in the check's process: "criu check" on this host; 0, or -1
 * and why (its last error). */
int	ckpt_criu_check(char *why, size_t len);
/* Source, once frozen: what checkpoint mode cannot carry yet (a UDP
 * socket, a listener with connections waiting to be accepted): 0, or -1
 * and why. */
int	ckpt_src_precheck(struct mig *, char *why, size_t len);
/* Source: where the socket just dumped was held, as MIG_RECORD's
 * "holders" (the last item of m->src), or NULL. */
json_t	*ckpt_src_holders(struct mig *);
/* Source, once every socket has gone: 1 when the images have gone too
 * (DUMP_DONE may follow), 0 while CRIU dumps or the channel is full
 * (m->work is armed again when there is more to do), -1 when the
 * migration failed (m may be gone). */
int	ckpt_src_step(struct mig *);
/* Source: the tasks CRIU left stopped go on (after a rollback's thaw). */
void	ckpt_src_resume(const char *ns, const char *cgroup);
/* Destination: a PREPARE's workload.checkpoint (prep_parse). */
int	ckpt_prep_parse(json_t *ck, struct prep *, char *why, size_t len);
/* Destination, at PREPARE: may peer move a checkpointed program here?
 * 0 and the most bytes of images it may send in *max, or -1 and why. */
int	ckpt_prep_allowed(const char *peer, const struct prep *,
	    uint64_t *max, char *why, size_t len);
/* Destination: MIG_IMAGE, and a record's "holders". */
int	ckpt_dst_image(struct mig *, json_t *msg, char *why, size_t len);
int	ckpt_dst_holders(struct mig *, uint64_t id, json_t *holders,
	    char *why, size_t len);
/* Destination: a UDP socket's record, kept (taken from *st) until CRIU
 * has restored the program (its own socket must go first). */
int	ckpt_dst_keep_udp(struct mig *, struct sk_state **st, char *why,
	    size_t len);
/* Destination, at DUMP_DONE: check what came, start CRIU's restore; it
 * ends in ME_RX_DUMP_DONE or in a failure. */
void	ckpt_dst_restore(struct mig *, json_t *msg);
/* Destination, going live: the restored tree runs. */
void	ckpt_dst_go(struct mig *);
/* Either side: the helper stopped (a source's dump is let finish), the
 * images deleted.  A rollback calls it first, so that no CRIU is at work
 * in the tasks it thaws. */
void	ckpt_cleanup(struct mig *);
/* At startup: images a dead migrd left. */
void	ckpt_purge(void);

#endif
