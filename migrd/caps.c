/* SPDX-License-Identifier: ISC */
/*
 * After setup migrd keeps only the capabilities it uses, in its
 * permitted, effective and bounding sets (the bounding set also limits
 * what ip(8) and workloads can get back on execve as uid 0):
 *
 *   cap_net_admin   create veths, set addresses and routes, enslave to
 *                   the bridge; TCP_REPAIR checks it (tcp_can_repair_sock)
 *   cap_sys_admin   setns() into a namespace, "ip netns add/del" (mount,
 *                   unshare), cgroup v2 directories
 *   cap_sys_ptrace  pidfd_getfd() to take a workload's sockets (migration)
 *   cap_kill        signal workloads that are not migrd's children
 *   cap_net_raw     packet sockets/filters used while a namespace moves
 *   cap_net_bind_service  a peer port below 1024 if configured
 *   cap_dac_override      cgroup.procs/cgroup.kill and /run/netns entries
 *                   that may belong to another owner
 *   cap_setuid, cap_setgid  start workloads as workload-user and
 *                   workload-group (launch.c)
 *
 * The permitted and bounding sets keep, besides, what CRIU needs for
 * checkpoint mode: it restores rlimits, pids, credentials, capabilities,
 * scheduling, mounts and a root, and reads other tasks' limits and
 * mappings.  They are never effective in migrd: a criu it runs as uid 0
 * gets them at exec, and the one that restores a peer's program runs
 * with no_new_privs, which every task it restores inherits (CRIU 3.17
 * does not restore that flag, and a restored program must not gain
 * privileges through a set-user-ID program); under no_new_privs an exec
 * gains only what the permitted set held, hence the permitted set.  A
 * workload running as uid 0 (workload-user root) may get them too, as
 * root always could before this daemon existed.
 *
 * cap_sys_chroot, cap_setuid and cap_setgid must stay in the bounding set
 * for the TLS process too: migrd execs it as root, and it chroots and
 * becomes channel-user before it reads the network (tlsd_sandbox.c).
 *
 * Everything else (cap_sys_module, cap_sys_rawio, ...) is dropped.  Two
 * more are used before this runs, at startup: cap_chown (control socket
 * to admin-group) and cap_setpcap (to shrink the bounding set); both stay
 * permitted among criu's.
 */
#include <errno.h>
#include <sys/prctl.h>

#include <sys/capability.h>

#include "log.h"
#include "migrd.h"

static const char *const kept_caps =
    "cap_net_admin,cap_sys_admin,cap_sys_ptrace,cap_kill,cap_net_raw,"
    "cap_net_bind_service,cap_dac_override,cap_setuid,cap_setgid=ep";

/* permitted (never effective) and bounding, for criu (checkpoint mode) */
static const char *const criu_caps =
    "cap_sys_resource,cap_checkpoint_restore,cap_setpcap,cap_sys_chroot,"
    "cap_fowner,cap_chown,cap_dac_read_search,cap_ipc_lock,cap_ipc_owner,"
    "cap_audit_control,cap_sys_nice,cap_sys_time,cap_fsetid,cap_mknod,"
    "cap_lease=p";

int
caps_drop(void)
{
	cap_t caps, criu;
	cap_value_t v;
	cap_flag_value_t f, fc;
	int rc = -1;

	if ((caps = cap_from_text(kept_caps)) == NULL ||
	    (criu = cap_from_text(criu_caps)) == NULL) {
		log_warn("%s: cap_from_text", __func__);
		cap_free(caps);
		return -1;
	}
	/* bounding set first: dropping it needs cap_setpcap, which goes */
	for (v = 0; v <= CAP_LAST_CAP; v++) {
		if (cap_get_flag(caps, v, CAP_PERMITTED, &f) == -1 ||
		    cap_get_flag(criu, v, CAP_PERMITTED, &fc) == -1)
			continue;
		/* already out (systemd's CapabilityBoundingSet=): nothing
		 * to do, and dropping again would need cap_setpcap */
		if (f == CAP_SET || fc == CAP_SET || !CAP_IS_SUPPORTED(v) ||
		    cap_get_bound(v) != 1)
			continue;
		if (cap_drop_bound(v) == -1 && errno != EINVAL) {
			log_warn("%s: cap_drop_bound(%d)", __func__,
			    (int)v);
			goto out_free;
		}
	}
	for (v = 0; v <= CAP_LAST_CAP; v++)
		if (CAP_IS_SUPPORTED(v) && cap_get_flag(criu, v, CAP_PERMITTED,
		    &fc) == 0 && fc == CAP_SET && cap_get_bound(v) == 1 &&
		    cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) == -1) {
			log_warn("%s: cap_set_flag", __func__);
			goto out_free;
		}
	if (cap_set_proc(caps) == -1) {
		log_warn("%s: cap_set_proc", __func__);
		goto out_free;
	}
	rc = 0;
out_free:
	cap_free(caps);
	cap_free(criu);
	return rc;
}

json_t *
caps_json(void)
{
	cap_t caps = cap_get_proc();
	char *s;
	json_t *j;

	if (caps == NULL)
		return json_string("?");
	s = cap_to_text(caps, NULL);
	j = json_string(s ? s : "?");
	cap_free(s);
	cap_free(caps);
	return j;
}
