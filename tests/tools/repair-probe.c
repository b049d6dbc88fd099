/* SPDX-License-Identifier: ISC */
/*
 * repair-probe: try setsockopt(TCP_REPAIR, 1) on a fresh TCP socket and
 * print "ok" or the errno name.  With --drop-net-admin, first remove
 * CAP_NET_ADMIN from the effective and permitted sets (libcap).
 * Exit 0 when the result is the one named by --expect (ok|EPERM|...).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <unistd.h>

static int
drop_net_admin(void)
{
	cap_value_t v = CAP_NET_ADMIN;
	cap_t caps = cap_get_proc();
	int rc = -1;

	if (caps == NULL)
		return -1;
	if (cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_CLEAR) == 0 &&
	    cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_CLEAR) == 0 &&
	    cap_set_proc(caps) == 0)
		rc = 0;
	cap_free(caps);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *expect = "ok", *got;
	int i, fd, one = 1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--drop-net-admin") == 0) {
			if (drop_net_admin() < 0) {
				perror("repair-probe: drop CAP_NET_ADMIN");
				return 2;
			}
		} else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
			expect = argv[++i];
		} else {
			fprintf(stderr, "usage: repair-probe [--drop-net-admin] [--expect ok|ERRNO]\n");
			return 2;
		}
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		perror("repair-probe: socket");
		return 2;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &one, sizeof(one)) == 0)
		got = "ok";
	else
		got = strerrorname_np(errno);
	printf("%s\n", got ? got : "unknown");
	close(fd);
	return strcmp(got ? got : "", expect) == 0 ? 0 : 1;
}
