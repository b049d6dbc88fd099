/* SPDX-License-Identifier: ISC */
/*
 * The folders CRIU's images live in while a migration runs (ckpt_priv.h):
 * STATE_DIR/ckpt/out-NS on the source, in-NS on the destination, and one
 * for each pass of memory pre-copy.  They go with the migration, and a
 * restarted migrd deletes whatever it finds (ckpt_purge()).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_priv.h"
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

void
ckpt_purge(void)
{
	char top[PATH_MAX + 16], p[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

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
ckpt_dir_make(const char *dir, char *why, size_t len)
{
	char top[PATH_MAX + 16];

	snprintf(top, sizeof(top), "%s/ckpt", migrd.conf.state_dir);
	if (mkdir(top, 0700) < 0 && errno != EEXIST) {
		snprintf(why, len, "mkdir %.200s: %s", top, strerror(errno));
		return -1;
	}
	ckpt_dir_remove(dir);
	if (mkdir(dir, 0700) < 0) {
		snprintf(why, len, "mkdir %.200s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* A new, empty images folder for m (whatever was there goes). */
int
ckpt_dir_fresh(struct mig *m, const char *side, char *why, size_t len)
{
	char top[PATH_MAX + 16];

	snprintf(top, sizeof(top), "%s/ckpt", migrd.conf.state_dir);
	if (mkdir(top, 0700) < 0 && errno != EEXIST) {
		snprintf(why, len, "mkdir %.200s: %s", top, strerror(errno));
		return -1;
	}
	ckpt_dir_path(m->ck_dir, sizeof(m->ck_dir), side, m->ns);
	ckpt_dir_remove(m->ck_dir);
	return 0;
}
