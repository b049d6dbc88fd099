/* SPDX-License-Identifier: ISC */
/*
 * The folders CRIU's images live in while a migration runs (ckpt_priv.h):
 * STATE_DIR/ckpt/out-NS on the source, in-NS on the destination, and one
 * for each pass of memory pre-copy.  They go with the migration, and a
 * restarted migrd deletes whatever it finds (ckpt_purge()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_priv.h"
#include "clock.h"
#include "config.h"
#include "log.h"
#include "mig_priv.h"
#include "migrd.h"

/* STATE_DIR/ckpt/{out,in}-NS: a name a peer cannot choose. */
void
ckpt_dir_path(char *buf, size_t len, const char *side, const char *ns)
{
	snprintf(buf, len, "%s/ckpt/%s-%s", migrd.conf.state_dir, side, ns);
}

void
ckpt_pass_dir(char *buf, size_t len, const char *side, const char *ns,
    int pass)
{
	snprintf(buf, len, "%s/ckpt/%sp%d-%s", migrd.conf.state_dir, side,
	    pass, ns);
}

void
ckpt_pass_rel(char *buf, size_t len, const char *side, const char *ns,
    int pass)
{
	snprintf(buf, len, "../%sp%d-%s", side, pass, ns);
}

/* A folder of files (CRIU's images), and the folder. */
void
ckpt_dir_remove(const char *dir)
{
	struct dirent *e;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    unlinkat(dirfd(d), e->d_name, 0) < 0)
			log_warn("%s/%s", dir, e->d_name);
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT)
		log_warn("rmdir %s", dir);
}

/* Is pid a criu working on an images folder of ours? */
static int
our_criu(const char *pid, const char *top, size_t toplen)
{
	char path[300], buf[4096];
	const char *a, *base;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	base = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
	if (strcmp(base, "criu") != 0)
		return 0;
	for (a = buf; a < buf + n; a += strlen(a) + 1)
		if (strncmp(a, top, toplen) == 0)
			return 1;
	return 0;
}

void
ckpt_wait_criu(int ms)
{
	char top[PATH_MAX + 16];
	struct dirent *e;
	double t0 = mono_ms();
	int found;
	DIR *d;

	snprintf(top, sizeof(top), "%s/ckpt/", migrd.conf.state_dir);
	do {
		if ((d = opendir("/proc")) == NULL)
			return;
		found = 0;
		while (!found && (e = readdir(d)) != NULL)
			found = e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
			    our_criu(e->d_name, top, strlen(top));
		closedir(d);
		if (!found)
			return;
		if (mono_ms() - t0 < 100)
			log_info("a criu a dead migrd left is still at work: "
			    "waiting for it");
		usleep(100000);
	} while (mono_ms() - t0 < ms);
	log_warnx("a criu a dead migrd left still runs after %d ms: going on",
	    ms);
}

void
ckpt_purge(void)
{
	char top[PATH_MAX + 16], p[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

	/* a dump it left must end first: it leaves the program stopped,
	 * and a rollback continues it only if it comes after */
	ckpt_wait_criu(CK_LEFTOVER_MS);
	snprintf(top, sizeof(top), "%s/ckpt", migrd.conf.state_dir);
	if ((d = opendir(top)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", top, e->d_name);
		log_info("removing checkpoint images left in %s", p);
		ckpt_dir_remove(p);
	}
	closedir(d);
}

int
ckpt_dir_clear(const char *dir, char *why, size_t len)
{
	char top[PATH_MAX + 16];

	snprintf(top, sizeof(top), "%s/ckpt", migrd.conf.state_dir);
	if (mkdir(top, 0700) < 0 && errno != EEXIST) {
		snprintf(why, len, "mkdir %.200s: %s", top, strerror(errno));
		return -1;
	}
	ckpt_dir_remove(dir);
	return 0;
}

int
ckpt_dir_make(const char *dir, char *why, size_t len)
{
	if (ckpt_dir_clear(dir, why, len) < 0)
		return -1;
	if (mkdir(dir, 0700) < 0) {
		snprintf(why, len, "mkdir %.200s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}
