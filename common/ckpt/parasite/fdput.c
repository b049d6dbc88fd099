/* SPDX-License-Identifier: ISC */
/*
 * The code fdput.c runs inside a stopped task (through compel): take
 * the descriptor sent over compel's socket, put it at the number asked
 * with the placeholder's file status and descriptor flags, and add it to
 * each epoll set that watched the placeholder, with the same events and
 * data.  Freestanding: compel's std plugin has the syscalls it needs but
 * epoll_ctl, which is issued directly (x86-64).  Debian's compel headers
 * lack what its syscall.h includes, so the three used are declared here
 * as std.lib.a defines them.
 */
#include <compel/infect-rpc.h>
#include <compel/plugins/plugin-fds.h>

#include "../fdput_proto.h"

long	sys_close(int fd);
long	sys_dup2(int oldfd, int newfd);
long	sys_fcntl(int fd, int type, long arg);

#define F_GETFD_		1
#define F_SETFD_		2
#define F_GETFL_		3
#define F_SETFL_		4
#define SETFL_MASK		(02000 | 020000 | 040000 | 04000 | 01000000)
#define EPOLL_CTL_ADD_		1
#define EPOLL_CTL_MOD_		3
#define EEXIST_			17
#define NR_EPOLL_CTL		233

struct epoll_event_ {
	unsigned int		events;
	unsigned long long	data;
} __attribute__((packed));

static long
epoll_ctl_(int epfd, int op, int fd, struct epoll_event_ *ev)
{
	long ret;
	register long r10 __asm__("r10") = (long)ev;

	__asm__ volatile("syscall"
	    : "=a"(ret)
	    : "0"((long)NR_EPOLL_CTL), "D"((long)epfd), "S"((long)op),
	      "d"((long)fd), "r"(r10)
	    : "rcx", "r11", "memory");
	return ret;
}

static int
put(struct fdput_args *a)
{
	long fl, fdfl, r;
	int fd, i;

	if ((fd = fds_recv_fd()) < 0) {
		a->step = FDPUT_RECV;
		a->err = fd;
		return -1;
	}
	/* the placeholder's flags, if there is one (-EBADF if not) */
	fl = sys_fcntl(a->target, F_GETFL_, 0);
	fdfl = sys_fcntl(a->target, F_GETFD_, 0);
	if (fd != a->target) {
		r = sys_dup2(fd, a->target);
		sys_close(fd);
		if (r < 0) {
			a->step = FDPUT_DUP;
			a->err = r;
			return -1;
		}
	}
	if ((fl >= 0 && (r = sys_fcntl(a->target, F_SETFL_,
	    fl & SETFL_MASK)) < 0) ||
	    (fdfl >= 0 && (r = sys_fcntl(a->target, F_SETFD_, fdfl)) < 0)) {
		a->step = FDPUT_FLAGS;
		a->err = r;
		return -1;
	}
	for (i = 0; i < a->nep && i < FDPUT_EP_MAX; i++) {
		struct epoll_event_ ev = { a->ep[i].events, a->ep[i].data };

		r = epoll_ctl_(a->ep[i].epfd, EPOLL_CTL_ADD_, a->target, &ev);
		if (r == -EEXIST_)
			r = epoll_ctl_(a->ep[i].epfd, EPOLL_CTL_MOD_, a->target,
			    &ev);
		if (r < 0) {
			a->step = FDPUT_EPOLL;
			a->err = r;
			return -1;
		}
	}
	a->step = FDPUT_OK;
	a->err = 0;
	return 0;
}

int
parasite_daemon_cmd(int cmd, void *args)
{
	if (cmd == FDPUT_CMD_PUT)
		return put(args) < 0;
	return 0;
}

/* compel's std plugin calls these; nothing to do here */
int
compel_main(void *arg, unsigned int size)
{
	(void)arg;
	(void)size;
	return 0;
}

int
parasite_trap_cmd(int cmd, void *args)
{
	(void)cmd;
	(void)args;
	return 0;
}

void
parasite_cleanup(void)
{
}
