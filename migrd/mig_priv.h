/* Shared by mig.c, mig_src.c and mig_dst.c only. */
#ifndef MIGRD_MIG_PRIV_H
#define MIGRD_MIG_PRIV_H

#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "config.h"
#include "migdst.h"
#include "migfsm.h"
#include "migsrc.h"
#include "nsarg.h"

#define MIG_ID_MAX	128
#define MIG_REASON_MAX	256
#define MIG_QUEUE_MAX	8
#define MIG_FREEZE_MS	5000	/* cgroup freeze / kill / thaw waits */

/* Phase figures, in ms; a phase that did not happen stays negative. */
enum mig_phase {
	PH_PRECOPY, PH_FREEZE, PH_DUMP, PH_TRANSFER, PH_RESTORE, PH_COMMIT,
	PH_DOWNTIME, PH_TOTAL, PH__MAX
};

struct mig_kinds {
	unsigned	total, listen, established, closing, udp, other;
	unsigned	accepted;
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
	time_t			 since;
	double			 t0;		/* mono_ms() at the start */
	uint64_t		 ctl;		/* migctl waiting, or 0 */
	struct event		*timer;		/* the phase's deadline */
	struct event		*work;		/* source: next dump step */
	int			 in_step;
	int			 failed;	/* skip this step's other actions */
	int			 started;
	int			 was_frozen;	/* a rollback, not a refusal */
	int			 gating;	/* source: waiting for handshakes */
	double			 t_gate;
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
	uint64_t		 queued;	/* bytes in socket queues */
	uint64_t		 streamed;	/* bytes of records sent */

	/* source */
	json_t			*records;	/* pre-copy: links, addrs... */
	struct migsrc		 src;
	int			 have_src;
	uint64_t		 seq;		/* records sent */
	double			 t_freeze, t_dump_done, t_commit;
	/* destination */
	struct nsdump		*nd;
	struct migdst		 dst;
	uint64_t		 rx_seq;	/* records restored */
	pid_t			 pid;
};

TAILQ_HEAD(mig_list, mig);
extern struct mig_list	migs;

/* mig.c */
struct mig	*mig_new(enum mig_role, const char *id, const char *ns,
		    const char *peer);
void		 mig_free(struct mig *);
struct mig	*mig_find_id(const char *id, const char *peer);
struct mig	*mig_find_ns(const char *ns);
void		 mig_event(struct mig *, enum mig_event);
void		 mig_fail(struct mig *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
void		 mig_progress(struct mig *, const char *phase,
		    const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
int		 mig_send(struct mig *, int type, json_t *extra);
int		 mig_fault(const char *point);
void		 mig_count_kind(struct mig_kinds *, const json_t *rec);
double		 mig_now(const struct mig *);	/* ms since t0 */

/* mig_src.c: the source's actions and messages */
void	src_action(struct mig *, unsigned action);
void	src_rx(struct mig *, int type, json_t *msg);
void	src_cleanup(struct mig *);
/* mig_dst.c */
void	dst_prepare(const char *peer, json_t *msg);
void	dst_action(struct mig *, unsigned action);
void	dst_rx(struct mig *, int type, json_t *msg);
void	dst_cleanup(struct mig *);
void	dst_discard_leftover(const char *ns);
/* mig.c: the ids of migrations this host took in and went live with */
int	mig_committed(const char *id);
void	mig_add_committed(const char *id);

#endif
