/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <fcntl.h>
#include <sys/select.h>
#include <unistd.h>

#include "log.h"
#include "lowfd.h"

static int	reserved[LOWFD_RESERVED];
static int	nreserved;		/* numbers in reserved[] */
static int	held;			/* 1: they are open on /dev/null */

int
lowfd_reserve(void)
{
	int fd;

	while (nreserved < LOWFD_RESERVED) {
		if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
			log_warn("%s: /dev/null", __func__);
			return -1;
		}
		if (fd >= FD_SETSIZE) {
			close(fd);
			log_warnx("%s: no descriptor below %d is free",
			    __func__, FD_SETSIZE);
			return -1;
		}
		reserved[nreserved++] = fd;
	}
	held = 1;
	return 0;
}

void
lowfd_release(void)
{
	int i;

	if (!held)
		return;
	for (i = 0; i < nreserved; i++)
		close(reserved[i]);
	held = 0;
}

void
lowfd_retake(void)
{
	int i, n = 0, nul, keep_nul = 0;

	if (held || nreserved == 0)
		return;
	if ((nul = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		log_warn("%s: /dev/null", __func__);
		nreserved = 0;
		return;
	}
	for (i = 0; i < nreserved; i++) {
		int fd = reserved[i];

		if (fd == nul) {		/* the open took this one */
			keep_nul = 1;
			reserved[n++] = fd;
		} else if (fcntl(fd, F_GETFD) == -1 && errno == EBADF &&
		    dup3(nul, fd, O_CLOEXEC) == fd) {
			reserved[n++] = fd;
		}
		/* else the library kept the number: it is its own now */
	}
	if (!keep_nul)
		close(nul);
	if (n < nreserved)
		log_debug("%s: %d of %d low descriptors reserved again",
		    __func__, n, nreserved);
	nreserved = n;
	held = 1;
}

int
lowfd_count(void)
{
	return held ? nreserved : 0;
}
