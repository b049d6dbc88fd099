/* SPDX-License-Identifier: ISC */
/*
 * sktool: drive the socket state engine (common/engine/sk_engine.h) from a
 * shell, for the lab tests.
 *
 *   sktool check --pid PID --fd N
 *	exit 0 when the socket can be moved, else print why and exit 1
 *   sktool dump --pid PID --fd N [--id ID] [--accept] [--rollback]
 *	pause and save the socket (pidfd_getfd), print one JSON record
 *	per line; --accept also dumps the connections waiting in a
 *	listener's accept queue (parent = ID); the socket is left in
 *	repair mode (kill its owner next) unless --rollback
 *   sktool restore [--in FILE] [--unlock SHELLCMD] [--resume] [--no-probe]
 *	[-- CMD ARG...]
 *	restore every record read (stdin by default), run SHELLCMD (the
 *	test's stand-in for the daemon unlocking the namespace), resume
 *	the sockets when asked, then run CMD with the restored sockets as fds 3, 4, ...
 *	(SKTOOL_NFDS in its environment); without CMD, print the fds'
 *	local addresses and wait for a signal
 *   sktool validate [--max-queue N] < FILE
 *	decode each record strictly, print "ok TYPE" or the refusal
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "sk_json.h"
#include "sk_engine.h"

#define SKTOOL_MAX_SOCKS	64
#define SKTOOL_MAX_LINE		(80u * 1024 * 1024)

#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

static void
usage(void)
{
	fprintf(stderr,
	    "usage: sktool check --pid PID --fd N\n"
	    "       sktool dump --pid PID --fd N [--id ID] [--accept] "
	    "[--rollback]\n"
	    "       sktool restore [--in FILE] [--unlock SHELLCMD] [--resume] "
	    "[--no-probe] [-- CMD ...]\n"
	    "       sktool validate [--max-queue N] < FILE\n");
	exit(2);
}

static long
num(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0' || v < 0 || v > max) {
		fprintf(stderr, "sktool: bad number %s\n", s);
		exit(2);
	}
	return v;
}

static int
grab_fd(long pid, long fd)
{
	int pfd, out;

	if ((pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0)) < 0) {
		log_warn("pidfd_open %ld", pid);
		return -1;
	}
	out = (int)syscall(SYS_pidfd_getfd, pfd, (int)fd, 0);
	if (out < 0)
		log_warn("pidfd_getfd %ld/%ld", pid, fd);
	close(pfd);
	return out;
}

static int
print_state(struct sk_state *st)
{
	json_t *j;
	char *s;

	if ((j = sk_json_encode(st)) == NULL)
		return -1;
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (s == NULL)
		return -1;
	printf("%s\n", s);
	free(s);
	return 0;
}

static int
dump_one(int fd, uint64_t id, uint64_t parent, int has_parent, int rollback)
{
	struct sk_handle *h;
	struct sk_state *st;

	if ((h = sk_pause(fd)) == NULL)
		return -1;
	if (sk_save(h, &st) < 0) {
		sk_rollback(h);
		return -1;
	}
	st->id = id;
	if (has_parent) {
		st->parent_id = parent;
		st->flags |= SK_F_PARENT;
	}
	if (print_state(st) < 0) {
		sk_state_free(st);
		sk_rollback(h);
		return -1;
	}
	sk_state_free(st);
	return rollback ? sk_rollback(h) : sk_release(h);
}

static int
cmd_dump(int argc, char **argv, int check_only)
{
	static const struct option lo[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "fd", required_argument, NULL, 'f' },
		{ "id", required_argument, NULL, 'i' },
		{ "accept", no_argument, NULL, 'a' },
		{ "rollback", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct sk_handle *h;
	struct sk_state *st;
	char why[256];
	long pid = -1, tfd = -1, id = 1;
	int c, fd, accept_q = 0, rollback = 0, kids[SKTOOL_MAX_SOCKS];
	size_t nkids = 0, i;
	int rc = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'p': pid = num(optarg, INT_MAX); break;
		case 'f': tfd = num(optarg, INT_MAX); break;
		case 'i': id = num(optarg, LONG_MAX); break;
		case 'a': accept_q = 1; break;
		case 'r': rollback = 1; break;
		default: usage();
		}
	}
	if (pid < 0 || tfd < 0)
		usage();
	if ((fd = grab_fd(pid, tfd)) < 0)
		return 1;
	if (check_only) {
		if (sk_check(fd, why, sizeof(why)) < 0) {
			printf("%s\n", why);
			return 1;
		}
		printf("movable\n");
		return 0;
	}
	if (!accept_q)
		return dump_one(fd, (uint64_t)id, 0, 0, rollback) < 0;

	if ((h = sk_pause(fd)) == NULL)
		return 1;
	if (sk_save(h, &st) < 0) {
		sk_rollback(h);
		return 1;
	}
	st->id = (uint64_t)id;
	if (st->state == SK_ST_LISTEN &&
	    sk_accept_pending(h, kids, SKTOOL_MAX_SOCKS, &nkids) < 0)
		rc = 1;
	if (print_state(st) < 0)
		rc = 1;
	sk_state_free(st);
	for (i = 0; i < nkids; i++)
		if (dump_one(kids[i], (uint64_t)id + 1 + i, (uint64_t)id, 1,
		    rollback) < 0)
			rc = 1;
	if (rollback)
		sk_rollback(h);
	else
		sk_release(h);
	return rc;
}

static char *
read_line(FILE *f, size_t *len)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if ((n = getline(&line, &cap, f)) <= 0) {
		free(line);
		return NULL;
	}
	if ((size_t)n > SKTOOL_MAX_LINE) {
		free(line);
		errno = EMSGSIZE;
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	*len = (size_t)n;
	return line;
}

static int
cmd_restore(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "in", required_argument, NULL, 'i' },
		{ "resume", no_argument, NULL, 'r' },
		{ "no-probe", no_argument, NULL, 'n' },
		{ "unlock", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	const char *unlock = NULL;
	struct sk_handle *hs[SKTOOL_MAX_SOCKS];
	int fds[SKTOOL_MAX_SOCKS];
	struct sk_record rec;
	char err[256], *line, envbuf[16];
	FILE *in = stdin;
	size_t len, n = 0, i;
	int c, resume = 0, flags = 0, fd, lineno = 0;

	while ((c = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			if ((in = fopen(optarg, "r")) == NULL)
				fatal("%s", optarg);
			break;
		case 'r': resume = 1; break;
		case 'n': flags |= SK_RESUME_NO_PROBE; break;
		case 'u': unlock = optarg; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;

	while ((line = read_line(in, &len)) != NULL) {
		lineno++;
		if (len == 0) {
			free(line);
			continue;
		}
		if (sk_json_parse(line, len, NULL, &rec, err, sizeof(err)) < 0)
			fatalx("record %d refused: %s", lineno, err);
		free(line);
		if (rec.type != SK_REC_SOCKET) {
			sk_record_clear(&rec);
			continue;
		}
		if (n == SKTOOL_MAX_SOCKS)
			fatalx("too many sockets");
		if ((hs[n] = sk_restore(rec.u.sock)) == NULL)
			fatalx("record %d: restore failed", lineno);
		n++;
		sk_record_clear(&rec);
	}
	if (unlock != NULL && system(unlock) != 0)
		fatalx("unlock command failed: %s", unlock);
	for (i = 0; resume && i < n; i++)
		if (sk_resume(hs[i], flags) < 0)
			fatalx("resume of socket %zu failed", i);
	/* Park the sockets high, then move them to 3, 4, ... for CMD. */
	for (i = 0; i < n; i++) {
		fd = sk_detach(hs[i]);
		if ((fds[i] = fcntl(fd, F_DUPFD_CLOEXEC, 3 + n + 64)) < 0)
			fatal("fcntl");
		close(fd);
	}
	if (argc == 0) {
		printf("restored %zu\n", n);
		fflush(stdout);
		pause();
		return 0;
	}
	for (i = 0; i < n; i++) {
		/* dup2 leaves FD_CLOEXEC off on the new descriptor. */
		if (dup2(fds[i], (int)(3 + i)) < 0)
			fatal("dup2");
	}
	snprintf(envbuf, sizeof(envbuf), "%zu", n);
	setenv("SKTOOL_NFDS", envbuf, 1);
	execvp(argv[0], argv);
	fatal("exec %s", argv[0]);
}

static int
cmd_validate(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "max-queue", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *names[] = { "?", "socket", "link", "addr",
	    "route" };
	struct sk_json_limits lim = { 0 };
	struct sk_record rec;
	char err[256], *line;
	size_t len;
	int c, bad = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c != 'm')
			usage();
		lim.max_queue = (uint32_t)num(optarg, UINT32_MAX);
	}
	while ((line = read_line(stdin, &len)) != NULL) {
		if (sk_json_parse(line, len, &lim, &rec, err,
		    sizeof(err)) < 0) {
			printf("refused %s\n", err);
			bad = 1;
		} else {
			printf("ok %s\n", names[rec.type]);
			sk_record_clear(&rec);
		}
		free(line);
	}
	return bad;
}

int
main(int argc, char **argv)
{
	log_init(LOG_TO_STDERR, 1, 0);
	sk_set_log(log_msg, NULL);
	log_procinit("sktool");
	if (argc < 2)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "check") == 0)
		return cmd_dump(argc - 1, argv + 1, 1);
	if (strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1, 0);
	if (strcmp(argv[1], "restore") == 0)
		return cmd_restore(argc - 1, argv + 1);
	if (strcmp(argv[1], "validate") == 0)
		return cmd_validate(argc - 1, argv + 1);
	usage();
}
