/* SPDX-License-Identifier: ISC */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credcheck.h"
#include "errbuf.h"

/* Four ids ("Uid:\tR\tE\tS\tFS") all equal to want. */
static int
ids_are(const char *rest, unsigned long want)
{
	unsigned long v[4];

	return sscanf(rest, "%lu %lu %lu %lu", &v[0], &v[1], &v[2],
	    &v[3]) == 4 && v[0] == want && v[1] == want && v[2] == want &&
	    v[3] == want;
}

/* "Groups:\t..." with nothing but want (or nothing at all). */
static int
groups_are(const char *rest, unsigned long want)
{
	const char *p = rest;
	char *end;

	for (;;) {
		unsigned long g;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0')
			return 1;
		errno = 0;
		g = strtoul(p, &end, 10);
		if (end == p || errno != 0 || g != want)
			return 0;
		p = end;
	}
}

/* rest of a status line, its runs of blanks made one space, trimmed */
static char *
squeeze(char *rest)
{
	char *r = rest, *w = rest;

	while (*r == ' ' || *r == '\t')
		r++;
	for (; *r != '\0' && *r != '\n'; r++) {
		if ((*r == ' ' || *r == '\t') && (w > rest && w[-1] == ' '))
			continue;
		*w++ = *r == '\t' ? ' ' : *r;
	}
	while (w > rest && w[-1] == ' ')
		w--;
	*w = '\0';
	return rest;
}

int
credcheck_task(pid_t tid, uid_t uid, gid_t gid, uint64_t allowed, char *err,
    size_t errlen)
{
	char path[64], line[256], comm[32] = "?";
	unsigned seen = 0;
	int bad = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((f = fopen(path, "re")) == NULL) {
		errbuf_errno(err, errlen, "%s", path);
		return -1;
	}
	while (!bad && fgets(line, sizeof(line), f) != NULL) {
		char *rest = strchr(line, ':');
		uint64_t caps;

		if (rest == NULL)
			continue;
		*rest++ = '\0';
		if (strcmp(line, "Name") == 0) {
			sscanf(rest, " %31s", comm);
		} else if (strcmp(line, "Uid") == 0 ||
		    strcmp(line, "Gid") == 0) {
			int u = line[0] == 'U';
			unsigned long want = u ? uid : gid;

			seen |= u ? 1 : 2;
			if (!ids_are(rest, want)) {
				errbuf(err, errlen, "task %d (%s): %cids %s "
				    "not all %lu", (int)tid, comm, u ? 'u' : 'g',
				    squeeze(rest), want);
				bad = 1;
			}
		} else if (strcmp(line, "Groups") == 0) {
			seen |= 4;
			if (!groups_are(rest, gid)) {
				errbuf(err, errlen, "task %d (%s): "
				    "supplementary groups %s", (int)tid, comm,
				    squeeze(rest));
				bad = 1;
			}
		} else if (strcmp(line, "CapInh") == 0 ||
		    strcmp(line, "CapPrm") == 0 ||
		    strcmp(line, "CapEff") == 0 ||
		    strcmp(line, "CapAmb") == 0) {
			seen |= strcmp(line, "CapEff") == 0 ? 8 : 0;
			if (sscanf(rest, " %" SCNx64, &caps) != 1 ||
			    (caps & ~allowed) != 0) {
				errbuf(err, errlen, "task %d (%s): %s "
				    "capabilities %s beyond %016" PRIx64,
				    (int)tid, comm, line, squeeze(rest),
				    allowed);
				bad = 1;
			}
		} else if (strcmp(line, "NoNewPrivs") == 0) {
			seen |= 16;
			if (atoi(rest) != 1) {
				errbuf(err, errlen, "task %d (%s): may gain "
				    "privileges (NoNewPrivs not set)",
				    (int)tid, comm);
				bad = 1;
			}
		}
	}
	fclose(f);
	if (!bad && seen != 31) {
		errbuf(err, errlen, "task %d: %s lacks a field", (int)tid,
		    path);
		bad = 1;
	}
	return bad ? -1 : 0;
}

/* The parent of pid, from /proc/PID/stat (its 4th field), or -1. */
static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* the command name may hold anything: the fields go on after the
	 * last ')' */
	if (p == NULL || (p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Is pid root or below it?  (A walk up: a tree is shallow.) */
static int
descends(pid_t pid, pid_t root)
{
	int depth;

	for (depth = 0; depth < 4096 && pid > 1; depth++) {
		if (pid == root)
			return 1;
		pid = parent_of(pid);
	}
	return pid == root;
}

/* Every thread of process pid. */
static int
check_threads(pid_t pid, uid_t uid, gid_t gid, uint64_t allowed, char *err,
    size_t errlen)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL) {
		errbuf_errno(err, errlen, "%s", path);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			rc = credcheck_task((pid_t)atoi(de->d_name), uid, gid,
			    allowed, err, errlen);
	closedir(d);
	return rc;
}

int
credcheck_tree(pid_t root, uid_t uid, gid_t gid, uint64_t allowed, char *err,
    size_t errlen)
{
	struct dirent *de;
	DIR *d;
	int rc;

	if ((rc = check_threads(root, uid, gid, allowed, err, errlen)) < 0)
		return -1;
	if ((d = opendir("/proc")) == NULL) {
		errbuf_errno(err, errlen, "/proc");
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0 || pid == root || !descends(pid, root))
			continue;
		rc = check_threads(pid, uid, gid, allowed, err, errlen);
	}
	closedir(d);
	return rc;
}
