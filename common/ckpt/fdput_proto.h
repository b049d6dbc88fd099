/* SPDX-License-Identifier: ISC */
/*
 * What fdput.c and its parasite (parasite/fdput.c) say to each other:
 * one command, PUT, with its arguments in the area compel shares with
 * the parasite; the descriptor itself follows over compel's transport
 * socket.  Included by freestanding code: fixed-size types only.
 */
#ifndef MIGR_FDPUT_PROTO_H
#define MIGR_FDPUT_PROTO_H

#define FDPUT_CMD_PUT	(PARASITE_USER_CMDS + 1)
#define FDPUT_EP_MAX	32	/* epoll sets watching one descriptor */

struct fdput_ep {
	int			epfd;	/* in the task */
	unsigned int		events;
	unsigned long long	data;
};

struct fdput_args {
	int		target;		/* the number the descriptor takes */
	int		nep;
	struct fdput_ep	ep[FDPUT_EP_MAX];
	/* answers */
	int		step;		/* where it failed (enum fdput_step) */
	long		err;		/* the syscall's -errno there */
};

enum fdput_step {
	FDPUT_OK, FDPUT_RECV, FDPUT_DUP, FDPUT_FLAGS, FDPUT_EPOLL,
};

#endif
