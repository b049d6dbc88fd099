/*
 * Namespaces migrd manages: a network namespace (/run/netns/NAME) whose
 * veth "vNAME" is enslaved to the LAN bridge, a cgroup v2
 * (CGROUP_ROOT/NAME, default /sys/fs/cgroup/migr/NAME) for its workloads, and a record in
 * STATE_DIR/state.json so that a restarted migrd finds them again.
 */
#ifndef MIGRD_NS_H
#define MIGRD_NS_H

#include <sys/types.h>

#include <jansson.h>

#define NS_NETNS_DIR	"/run/netns"

int	ns_init(void);
void	ns_shutdown(void);
int	ns_count(void);
int	ns_exists(const char *name);
void	ns_child_exited(pid_t pid, int status);

int	ns_ctl_list(json_t *, json_t **, char *, size_t);
int	ns_ctl_show(json_t *, json_t **, char *, size_t);
int	ns_ctl_create(json_t *, json_t **, char *, size_t);
int	ns_ctl_delete(json_t *, json_t **, char *, size_t);
int	ns_ctl_run(json_t *, json_t **, char *, size_t);

/* what a migration needs */
int	ns_argv_check(json_t *argv, char *msg, size_t msglen);
json_t	*ns_describe(const char *name);		/* {addrs, routes, mac} */
int	ns_describe_check(json_t *desc, char *msg, size_t msglen);
json_t	*ns_workload_argv(const char *name);	/* newest running, or NULL */
int	ns_can_host(const char *name, json_t *addrs, char *msg,
	    size_t msglen);
int	ns_adopt(const char *name, json_t *desc, json_t *argv, pid_t pid);
void	ns_forget(const char *name);
void	ns_logpath(const char *name, char *buf, size_t len);

/* workload.c: start argv in ns under its cgroup; pid or -1 + err. */
pid_t	workload_start(const char *ns, const char *const *argv,
	    const char *logpath, char *err, size_t errlen);
/* cgroup helpers */
int	cgroup_check(void);
int	cgroup_create(const char *ns);
int	cgroup_kill_remove(const char *ns);
json_t	*cgroup_pids(const char *ns);

#endif
