/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "frame.h"
#include "migrd-protocol.h"

int
ctl_connect(const char *path)
{
	struct sockaddr_un sun;
	struct timeval tv = { CTL_TIMEOUT, 0 };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "migctl: %s: path too long\n", path);
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		fprintf(stderr, "migctl: socket: %s\n", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int e = errno;

		fprintf(stderr, "migctl: connect %s: %s%s\n", path,
		    strerror(e), e == EACCES ? " (root or the admin group "
		    "only)" : e == ENOENT || e == ECONNREFUSED ?
		    " (is migrd running?)" : "");
		close(fd);
		errno = e;
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

int
ctl_read(int fd, int sent, uint16_t *type, json_t **msg)
{
	struct frame_hdr h;
	int st;

	errno = 0;
	st = frame_read_fd(fd, MIGR_FRAME_MAX, &h, msg);
	if (st != FRAME_OK) {
		if (sent == -1)
			fprintf(stderr, "migctl: request not sent\n");
		else if (st == FRAME_IO && (errno == EAGAIN ||
		    errno == EWOULDBLOCK))
			fprintf(stderr, "migctl: no word from migrd in %d "
			    "seconds\n", CTL_TIMEOUT);
		else
			fprintf(stderr, "migctl: bad reply from migrd: %s\n",
			    frame_strstatus(st));
		return -1;
	}
	*type = h.type;
	return 0;
}

int
ctl_result(json_t *m, int *code, const char **message)
{
	json_int_t c;

	if (json_unpack(m, "{s:I,s:s}", "code", &c, "message", message) ==
	    -1 || c < 0 || c >= RES__MAX)
		return -1;
	*code = (int)c;
	return 0;
}
