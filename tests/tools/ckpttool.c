/* SPDX-License-Identifier: ISC */
/*
 * ckpttool: checkpoint mode's pieces (common/ckpt) from a shell, for the
 * lab test of the hand-over (063).
 *
 *   ckpttool check PID UID GID
 *	is every task of the tree under PID fit to run as UID/GID
 *	(credcheck_tree())?
 *   ckpttool put PID OURS:TARGET...
 *	each descriptor OURS of this process goes to number TARGET of
 *	PID, with the placeholder's flags and epoll interest (fdput())
 *
 * Exit status: 0 done (or fit), 1 failed or not fit (the reason on
 * stderr), 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credcheck.h"
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

static int
usage(void)
{
	fprintf(stderr, "usage: ckpttool check PID UID GID\n"
	    "       ckpttool put PID OURS:TARGET...\n");
	return 2;
}

static int
put(pid_t pid, int argc, char **argv)
{
	struct fdput_item it[ITEMS_MAX];
	char err[512], *colon;
	long a, b;
	int i, n = 0;

	if (argc < 1 || argc > ITEMS_MAX)
		return usage();
	for (i = 0; i < argc; i++) {
		if ((colon = strchr(argv[i], ':')) == NULL)
			return usage();
		*colon = '\0';
		if (number(argv[i], 1 << 20, &a) < 0 ||
		    number(colon + 1, 1 << 20, &b) < 0)
			return usage();
		it[n].fd = (int)a;
		it[n++].target = (int)b;
	}
	if (fdput(pid, it, (size_t)n, err, sizeof(err)) < 0) {
		fprintf(stderr, "ckpttool: %s\n", err);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char err[512];
	long pid, uid, gid;

	log_init(LOG_TO_STDERR, 0, 0);
	if (argc < 3 || number(argv[2], 1L << 30, &pid) < 0)
		return usage();
	if (strcmp(argv[1], "put") == 0)
		return put((pid_t)pid, argc - 3, argv + 3);
	if (strcmp(argv[1], "check") != 0 || argc != 5 ||
	    number(argv[3], 1L << 31, &uid) < 0 ||
	    number(argv[4], 1L << 31, &gid) < 0)
		return usage();
	if (credcheck_tree((pid_t)pid, (uid_t)uid, (gid_t)gid, 0, err,
	    sizeof(err)) < 0) {
		fprintf(stderr, "ckpttool: not fit to run here: %s\n", err);
		return 1;
	}
	return 0;
}
