/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

union fdpass_cmsg {
	struct cmsghdr	hdr;
	char		buf[CMSG_SPACE(sizeof(int))];
};

ssize_t
fdpass_send(int sock, const void *buf, size_t len, int fd, int flags)
{
	union fdpass_cmsg cm;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (fd != -1) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return n;
}

ssize_t
fdpass_recv(int sock, void *buf, size_t len, int *fd, int flags)
{
	union fdpass_cmsg cm;
	struct iovec iov = { buf, len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf)
	};
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)) && *fd == -1)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if ((size_t)n != len || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		if (*fd != -1)
			close(*fd);
		*fd = -1;
		errno = EBADMSG;
		return -1;
	}
	return n;
}
