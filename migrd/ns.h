/* SPDX-License-Identifier: ISC */
/*
 * Namespaces migrd manages: a network namespace (/run/netns/NAME) whose
 * veth "vNAME" is enslaved to the LAN bridge, a cgroup v2
 * (CGROUP_ROOT/NAME, default /sys/fs/cgroup/migr/NAME) for its workloads, and a record in
 * STATE_DIR/state.json so that a restarted migrd finds them again.
 */
#ifndef MIGRD_NS_H
#define MIGRD_NS_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

int	ns_init(void);
void	ns_shutdown(void);
int	ns_count(void);
int	ns_exists(const char *name);
void	ns_child_exited(pid_t pid, int status);

/* control commands: the checks change nothing (control.h) */
struct ctl_req;
int	ns_show_check(json_t *, struct ctl_req *, char *, size_t);
int	ns_create_check(json_t *, struct ctl_req *, char *, size_t);
int	ns_delete_check(json_t *, struct ctl_req *, char *, size_t);
int	ns_run_check(json_t *, struct ctl_req *, char *, size_t);
int	ns_ctl_list(struct ctl_req *, json_t **, char *, size_t);
int	ns_ctl_show(struct ctl_req *, json_t **, char *, size_t);
int	ns_ctl_create(struct ctl_req *, json_t **, char *, size_t);
int	ns_ctl_delete(struct ctl_req *, json_t **, char *, size_t);
int	ns_ctl_run(struct ctl_req *, json_t **, char *, size_t);

/* what a migration needs */
int	ns_argv_check(json_t *argv, char *msg, size_t msglen);
json_t	*ns_describe(const char *name);		/* {addrs, routes, mac} */
int	ns_describe_check(json_t *desc, char *msg, size_t msglen);
json_t	*ns_workload_argv(const char *name);	/* newest running, or NULL */
/* That one's pid if it runs in checkpoint mode (it moves with its
 * memory), else 0. */
pid_t	ns_workload_ckpt(const char *name);
/* Is it gated: restarted before going live, waiting at its gate? */
int	ns_workload_gate(const char *name);
int	ns_can_host(const char *name, json_t *addrs, char *msg,
	    size_t msglen);
int	ns_adopt(const char *name, json_t *desc, json_t *argv, pid_t pid,
	    int ckpt, int gate);
void	ns_forget(const char *name);
void	ns_logpath(const char *name, char *buf, size_t len);

/*
 * workload.c: start argv in ns under its cgroup, with nfds sockets at
 * fds 3.. (LISTEN_FDS) when nfds > 0; with ckpt, in the shape checkpoint
 * mode needs (pid 1 of a pid namespace of its own, launch.h); the pid
 * once it runs, or -1 and the reason in err.
 */
pid_t	workload_start(const char *ns, const int *fds, char *const *names,
	    size_t nfds, char *const *argv, int ckpt, char *err,
	    size_t errlen);
/* The same in two steps (launch.h): ready to exec, then go or cancel. */
struct launch_pending;
int	workload_prepare(const char *ns, const int *fds, char *const *names,
	    size_t nfds, char *const *argv, int gate, struct launch_pending *,
	    char *err, size_t errlen);
/* The namespace's cgroup: CGROUP_ROOT/NAME (after ns_cgroup_resolve()
 * made "auto" a path). */
int	ns_cgroup_resolve(void);
void	ns_cgroup_path(const char *ns, char *buf, size_t len);
int	ns_cgroup_ready(char *err, size_t errlen);
int	ns_cgroup_create(const char *ns, char *err, size_t errlen);
int	ns_cgroup_remove(const char *ns);	/* kills its tasks; logged */
json_t	*ns_cgroup_pids(const char *ns);

#endif
