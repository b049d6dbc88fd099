/* SPDX-License-Identifier: ISC */
/*
 * Start a workload: a child that joins a cgroup and a network namespace,
 * writes its output to a log file and execs a program, with sockets
 * handed to it by the socket-activation convention when there are any:
 * fds 3, 4, ... with LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES (names
 * joined by ':') in its environment.  stdin is /dev/null; stdout and
 * stderr go to the log (appended), or /dev/null; with logmax, through a
 * pipe to a keeper process (no capabilities, not the workload's child,
 * in the cgroup CGROUP/log: frozen and killed with the workload, not
 * among its tasks) that moves the log to LOG.1 when it reaches logmax
 * and starts anew.  Nothing else of the
 * caller's leaks into it: every other fd is closed at exec.  The child is
 * a session leader with an empty signal mask.
 *
 * It runs as uid/gid (no supplementary groups) with only the capabilities
 * of caps, ambient so that they survive exec, and no_new_privs set (no
 * set-user-ID program or file capability gives it more); with uid 0 it
 * keeps root and the caller's bounding set.  In a mount namespace of its
 * own, each path of hide is covered: a directory by an empty read-only
 * tmpfs, a file by /dev/null (the caller's key, its state): what it
 * cannot see it cannot read, whoever it runs as.
 *
 * With pidns (checkpoint mode's container shape) the program is pid 1 of
 * a pid namespace of its own, the leader of its own session there, in a
 * private mount namespace (CRIU cannot dump one that is the slave of a
 * mount outside) with a /proc of that pid namespace and without the
 * mounts below /run (nsfs mounts of /run/netns, per-user and per-engine
 * state: this host's, which CRIU would have to find on the next).  The child that sets
 * it up forks it and exits, so it is reparented: the caller must be a
 * child subreaper (PR_SET_CHILD_SUBREAPER) to reap it.  As the init of its
 * namespace it gets only the signals it handles, SIGKILL and SIGSTOP.
 *
 * A close-on-exec pipe reports a failure before exec to the caller, so
 * launch_workload() returns the pid only once the program runs, and -1
 * with the step that failed in err ("join cgroup: ...", "exec: ...")
 * otherwise.  The caller keeps (and may close) its own fds.
 */
#ifndef MIGR_LAUNCH_H
#define MIGR_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* sockets handed to one workload: as many as a source collects
 * (COLLECT_MAX_SOCKS) */
#define LAUNCH_MAX_FDS	65536
/* LISTEN_FDNAMES is left out above this (execve() takes no environment
 * string over 128 KiB, MAX_ARG_STRLEN): 10,000 connections' names are
 * about 400 KiB.  The names are a hint; LISTEN_FDS is what counts. */
#define LAUNCH_FDNAMES_MAX	(96 * 1024)
/* the log keeper's cgroup, below the workload's */
#define LAUNCH_LOG_CGROUP	"log"

struct launch_spec {
	const char	 *ns;		/* name under /run/netns, or a path */
	const char	 *cgroup;	/* cgroup directory */
	char *const	 *argv;		/* argv[0]: an absolute path */
	const char	 *logpath;	/* NULL: /dev/null */
	size_t		  logmax;	/* 0: appended to without end; else
					 * moved to logpath.1 at this size */
	const int	 *fds;		/* nfds sockets for LISTEN_FDS */
	char *const	 *names;	/* their LISTEN_FDNAMES */
	size_t		  nfds;
	uid_t		  uid;
	gid_t		  gid;
	uint64_t	  caps;		/* bit per CAP_*: kept, ambient */
	const char *const *hide;	/* NULL-terminated, or NULL */
	int		  pidns;	/* pid 1 of a pid namespace */
	int		  gate;		/* launch_prepare() execs at once,
					 * the program waits at its gate */
};

pid_t	launch_workload(const struct launch_spec *, char *err, size_t errlen);

/*
 * A log keeper alone, as launch_workload() starts one for its program
 * (logpath, logmax and cgroup of sp; logmax 0: the log itself): the
 * descriptor to write the log through (close-on-exec), or -1 and err.
 * For a program that comes with its own descriptors: one that CRIU
 * restores, given this as its output.
 */
int	launch_keeper(const struct launch_spec *, char *err, size_t errlen);

/*
 * The same in two steps, so that the caller can give up while nothing
 * is running yet: launch_prepare() forks the child and takes it through
 * every step up to exec, including a check that the program is
 * executable by the user it runs as, then leaves it waiting: 0, or -1
 * with the step that failed.  The sockets are the child's from then on
 * (it holds them; the caller keeps its own descriptors).  launch_go()
 * lets it exec: its pid, or -1 (the exec failed).  launch_cancel() ends
 * it before exec (it exits, holding nothing).
 *
 * With gate, launch_prepare() lets the program exec at once, so that it
 * starts while its sockets are still in repair, and returns once the
 * exec succeeded.  The program finds the read end of a pipe at the fd
 * named by MIGR_GATE_FD (just above its sockets) and must not touch a
 * socket before it has read one byte there: launch_go() writes it and
 * returns the pid.  End of file there means the move was undone: the
 * program should exit without touching its sockets, and launch_cancel()
 * does not wait for that, it kills the program (SIGKILL) and reaps it.
 */
#define LAUNCH_GATE_ENV	"MIGR_GATE_FD"
struct launch_pending {
	pid_t	pid;
	int	go;		/* a byte: exec (gate: go on); closed: exit */
	int	status;		/* the exec's status; -1: it ran already */
};
int	launch_prepare(const struct launch_spec *, struct launch_pending *,
	    char *err, size_t errlen);
pid_t	launch_go(struct launch_pending *, char *err, size_t errlen);
void	launch_cancel(struct launch_pending *);

#endif
