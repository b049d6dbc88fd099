/* SPDX-License-Identifier: ISC */
/*
 * What checkpoint mode's parts share: mig_ckpt.c (the source's steps),
 * mig_ckpt_dst.c (the destination's), mig_precopy.c (memory copied while
 * the program runs), ckpt_dir.c (the images' folders) and ckpt_criu.c
 * (criu, run from a helper, and what its failure says).
 */
#ifndef MIGR_CKPT_PRIV_H
#define MIGR_CKPT_PRIV_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CK_PIECE	(256 * 1024)	/* image bytes in one MIG_IMAGE */
#define CK_FILES_MAX	4096		/* images in one migration */
#define CK_HOLDERS_MAX	64		/* tasks holding one socket */
#define CK_NET_KEY	"migr-net"	/* CRIU's name for the namespace */
#define CK_LOG_LINES	5		/* CRIU's errors kept for our log */
#define CK_PID_MAX	4194304		/* PID_MAX_LIMIT */
#define CK_FD_MAX	(1 << 20)	/* fs.nr_open's ceiling */
#define CK_TASKS_MAX	4096		/* tasks of one restored tree */
#define CK_DUMP_WAIT_MS	30000		/* a dump under way, given up */
#define CK_LEFTOVER_MS	60000		/* a dead migrd's criu, waited for */
#define CK_TELL_MS	10000		/* images sending: progress */
#define CK_ANSWER_MAX	(64 * 1024)	/* a helper's verdict and errors */

struct mig;

/* --- ckpt_dir.c: STATE_DIR/ckpt/SIDE-NS, a name a peer cannot choose */
void	ckpt_dir_path(char *buf, size_t len, const char *side,
	    const char *ns);
/* Pass K's folder: STATE_DIR/ckpt/SIDEpK-NS, and how the folder of the
 * pass after it (or of the dump) names it, "../SIDEpK-NS". */
void	ckpt_pass_dir(char *buf, size_t len, const char *side, const char *ns,
	    int pass);
void	ckpt_pass_rel(char *buf, size_t len, const char *side, const char *ns,
	    int pass);
/* At startup, before the images go: wait (at most ms) for the criu
 * dumps a dead migrd left running (criu_run.outlive), so that none
 * leaves a program stopped after its migration was rolled back. */
void	ckpt_wait_criu(int ms);
/* A folder of files (and links), and the folder. */
void	ckpt_dir_remove(const char *dir);
/* dir, new and empty (whatever was there goes). */
int	ckpt_dir_make(const char *dir, char *why, size_t len);
/* STATE_DIR/ckpt there, dir not (whatever was there goes): for a folder
 * imgdir_rx_open() creates. */
int	ckpt_dir_clear(const char *dir, char *why, size_t len);

/* --- ckpt_criu.c */
struct criu_run {
	const char		*what;		/* "dump", "restore" */
	const char		*dir;		/* images, and the log */
	const char		*logname;
	const char *const	*argv;
	const int		*fds;		/* given at 3, 4, ... */
	int			 nfds;
	const char		*cgroup;	/* joined first, or NULL */
	int			 nnp;		/* no_new_privs, for criu and
						   all it restores */
	int			 outlive;	/* goes on if migrd dies: a
						   dump's parasite is inside
						   the program's tasks, and
						   killing criu then would
						   kill them */
};

/* criu as r says, waited for: NULL when it succeeded, else the failure
 * answer. */
json_t	*run_criu(const struct criu_run *);

/*
 * What every dump and pre-dump of a namespace's program tells criu: the
 * tree of root in cgroup (frozen together), its images and log, the
 * sockets left to the engine (--tcp-close: CRIU keeps their addresses
 * only), its mounts and network namespace external (CRIU names them).
 * The caller adds its own options at argv[n], then criu_tree_end().
 */
struct criu_tree {
	char		 tree[24];
	char		 ext[64];
	const char	*argv[32];
	int		 n;
};
/* NULL, or the failure answer (the namespace is gone). */
json_t	*criu_tree_argv(struct criu_tree *, const char *verb, const char *ns,
	    pid_t root, const char *cgroup, const char *dir,
	    const char *logname);
void	criu_tree_add(struct criu_tree *, const char *arg);
const char *const *criu_tree_end(struct criu_tree *);
/* {ok: false, why, log[]}: what a helper answers when it failed. */
json_t	*criu_fail(json_t *log, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* A helper's answer: 1 ok, or 0 and why (CRIU's errors go to our log). */
int	criu_answer_ok(const struct mig *, json_t *a, const char *failure,
	    char *why, size_t len);
/* Is criu in PATH? */
int	criu_present(void);

/* --- mig_ckpt.c */
/* The images CRIU wrote in dir, into m->ck_files; in bytes their size,
 * in pages the memory's.  CRIU's link to the pass before ("parent")
 * is removed: the destination makes its own.  -1 with why. */
int	ckpt_list_images(struct mig *, const char *dir, uint64_t *bytes,
	    uint64_t *pages, char *why, size_t len);
/* m->ck_files from dir as MIG_IMAGE pieces of pass (0: the dump) while
 * the channel has room: 1 all sent, 0 wait, -1 failed (why). */
int	ckpt_send_images(struct mig *, const char *dir, int pass, char *why,
	    size_t len);
/* The last number of NSpid: pid in its own pid namespace, or -1. */
pid_t	ckpt_nspid(pid_t pid);
/* SIGCONT to every task of a cgroup (not its sub-cgroups: the log
 * keeper's).  How many, or -1. */
int	ckpt_cont_all(const char *cgroup);

#endif
