/* SPDX-License-Identifier: ISC */
/*
 * fdputtool: fdput() (common/ckpt) from a shell, for the lab test of
 * checkpoint mode's hand-over (062): put our descriptors into a task.
 *
 *   fdputtool PID OURS:TARGET...
 *	each descriptor OURS of this process goes to number TARGET of
 *	PID, with the placeholder's flags and epoll interest
 *
 * Exit status: 0 done, 1 failed (the reason on stderr), 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdput.h"
#include "log.h"

#define ITEMS_MAX	256

static int
number(const char *s, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno == 0 && end != s && *v >= 0 && *v <= max ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct fdput_item it[ITEMS_MAX];
	char err[512], *colon;
	long pid, a, b;
	int i, n = 0;

	log_init(LOG_TO_STDERR, 0, 0);
	if (argc < 3 || argc - 2 > ITEMS_MAX ||
	    number(argv[1], 1L << 30, &pid) < 0) {
		fprintf(stderr, "usage: fdputtool PID OURS:TARGET...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if ((colon = strchr(argv[i], ':')) == NULL) {
			fprintf(stderr, "fdputtool: %s: not OURS:TARGET\n",
			    argv[i]);
			return 2;
		}
		*colon = '\0';
		if (number(argv[i], 1 << 20, &a) < 0 ||
		    number(colon + 1, 1 << 20, &b) < 0) {
			fprintf(stderr, "fdputtool: bad descriptor number\n");
			return 2;
		}
		it[n].fd = (int)a;
		it[n++].target = (int)b;
	}
	if (fdput((pid_t)pid, it, (size_t)n, err, sizeof(err)) < 0) {
		fprintf(stderr, "fdputtool: %s\n", err);
		return 1;
	}
	return 0;
}
