/* SPDX-License-Identifier: ISC */
/*
 * What the TLS process keeps, once its key is loaded: its descriptors
 * (the channel to migrd, the event loop's, the sessions'), and nothing
 * else.
 *
 *   root       an empty directory migrd made (chroot): no file to read,
 *              the key's directory included
 *   uid, gid   channel-user's, no supplementary group; a uid that runs
 *              nothing else (not workload-user's: migrd refuses that),
 *              so no other process can signal or trace it
 *   caps       none: setresuid() from root clears them, and it is
 *              checked
 *   no_new_privs, not dumpable (no ptrace, no core with the key in it)
 *   RLIMIT_NPROC 0: it cannot fork; RLIMIT_CORE 0
 *   seccomp    the system calls a relay makes (the list below) and
 *              no other: no socket() but socketpair(AF_UNIX), no open,
 *              no exec, no ptrace, no mount.  Any other call fails with
 *              EPERM rather than killing the process: every session of
 *              this host goes through it, and a library that probes
 *              something new must not take them all down.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <seccomp.h>

#include "log.h"
#include "tlsd_sandbox.h"

int
tlsd_close_others(int fd)
{
	if (fd != 3) {
		if (dup2(fd, 3) == -1)
			return -1;
		close(fd);
	}
	return close_range(4, ~0u, 0);
}

static int
no_caps_left(void)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t v;
	cap_value_t i;
	int ok = 1;

	if (caps == NULL)
		return 0;
	for (i = 0; i <= CAP_LAST_CAP && ok; i++) {
		if (cap_get_flag(caps, i, CAP_PERMITTED, &v) == -1 ||
		    v == CAP_SET)
			ok = 0;
		if (cap_get_flag(caps, i, CAP_EFFECTIVE, &v) == -1 ||
		    v == CAP_SET)
			ok = 0;
	}
	cap_free(caps);
	return ok;
}

/* what libevent, OpenSSL, glibc's malloc and stdio/syslog logging
 * call once the process is set up (and the sanitizers, in test builds) */
static const int allowed[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(recvfrom),
	SCMP_SYS(sendto), SCMP_SYS(close), SCMP_SYS(shutdown), SCMP_SYS(dup),
	SCMP_SYS(fcntl), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_ctl),
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getrandom),
	SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap),
	SCMP_SYS(mprotect), SCMP_SYS(madvise), SCMP_SYS(futex),
	SCMP_SYS(newfstatat), SCMP_SYS(fstat), SCMP_SYS(lseek),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(sigaltstack), SCMP_SYS(sched_yield), SCMP_SYS(nanosleep),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(restart_syscall),
	SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(tgkill),
};

static int
filter_syscalls(void)
{
	const struct scmp_arg_cmp unix_only = {
		.arg = 0, .op = SCMP_CMP_EQ, .datum_a = AF_UNIX, .datum_b = 0
	};
	scmp_filter_ctx f;
	size_t i;
	int rc = -1;

	if ((f = seccomp_init(SCMP_ACT_ERRNO(EPERM))) == NULL) {
		log_warnx("tls: seccomp_init failed");
		return -1;
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed[i], 0) < 0)
			goto out;
	/* a session's plaintext: a unix socketpair, nothing else */
	if (seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1,
	    unix_only) < 0)
		goto out;
	if (seccomp_load(f) < 0)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		log_warnx("tls: cannot load the system call filter");
	seccomp_release(f);
	return rc;
}

int
tlsd_sandbox(const struct tlsd_init *ini)
{
	struct rlimit zero = { 0, 0 };
	struct stat st;
	uid_t r, e, s;

	if (lstat(ini->root, &st) == -1) {
		log_warn("tls: %s", ini->root);
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_warnx("tls: %s is not a directory that only root may "
		    "write", ini->root);
		return -1;
	}
	if (chroot(ini->root) == -1 || chdir("/") == -1) {
		log_warn("tls: chroot %s", ini->root);
		return -1;
	}
	if (ini->uid == 0) {
		log_warnx("tls: channel-user may not be root");
		return -1;
	}
	if (setgroups(1, &ini->gid) == -1 ||
	    setresgid(ini->gid, ini->gid, ini->gid) == -1 ||
	    setresuid(ini->uid, ini->uid, ini->uid) == -1) {
		log_warn("tls: becoming uid %u gid %u", (unsigned)ini->uid,
		    (unsigned)ini->gid);
		return -1;
	}
	if (getresuid(&r, &e, &s) == -1 || r != ini->uid || e != ini->uid ||
	    s != ini->uid || setuid(0) != -1) {
		log_warnx("tls: still able to be root");
		return -1;
	}
	if (!no_caps_left()) {
		log_warnx("tls: capabilities left after setresuid");
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		log_warn("tls: prctl");
		return -1;
	}
	if (setrlimit(RLIMIT_NPROC, &zero) == -1 ||
	    setrlimit(RLIMIT_CORE, &zero) == -1) {
		log_warn("tls: setrlimit");
		return -1;
	}
	return filter_syscalls();
}

void
tlsd_sandbox_probe(void)
{
	char *const argv[] = { "sh", NULL };
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	log_warnx("tls: probe: socket(AF_INET): %s",
	    fd == -1 ? strerror(errno) : "allowed");
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	log_warnx("tls: probe: socket(AF_UNIX): %s",
	    fd == -1 ? strerror(errno) : "allowed");
	fd = openat(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY);
	log_warnx("tls: probe: open(\".\"): %s",
	    fd == -1 ? strerror(errno) : "allowed");
	execve("/proc/self/exe", argv, NULL);
	log_warnx("tls: probe: execve: %s", strerror(errno));
	log_warnx("tls: probe: fork: %s", fork() == -1 ? strerror(errno) :
	    "allowed");
}
