/* SPDX-License-Identifier: ISC */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "imgdir.h"

int
imgdir_name_ok(const char *name)
{
	size_t i;

	if (name == NULL || name[0] == '\0' || name[0] == '.')
		return 0;
	for (i = 0; name[i] != '\0'; i++) {
		char c = name[i];

		if (i == IMGDIR_NAME_MAX)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '-'))
			return 0;
	}
	return 1;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct imgdir_file *)a)->name,
	    ((const struct imgdir_file *)b)->name);
}

int
imgdir_list(const char *dir, size_t max, struct imgdir_file **files,
    size_t *n, char *err, size_t errlen)
{
	struct imgdir_file *v = NULL, *nv;
	size_t cap = 0, k = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int dfd;

	*files = NULL;
	*n = 0;
	if ((d = opendir(dir)) == NULL) {
		errbuf_errno(err, errlen, "%s", dir);
		return -1;
	}
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (!imgdir_name_ok(de->d_name)) {
			errbuf(err, errlen, "%s: a file named %.80s cannot "
			    "be sent", dir, de->d_name);
			goto fail;
		}
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			errbuf_errno(err, errlen, "%s/%s", dir, de->d_name);
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			errbuf(err, errlen, "%s/%s is not a regular file", dir,
			    de->d_name);
			goto fail;
		}
		if (k == max) {
			errbuf(err, errlen, "%s holds more than %zu files",
			    dir, max);
			goto fail;
		}
		if (k == cap) {
			cap = cap ? 2 * cap : 32;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				errbuf(err, errlen, "out of memory");
				goto fail;
			}
			v = nv;
		}
		snprintf(v[k].name, sizeof(v[k].name), "%.64s", de->d_name);
		v[k++].size = (uint64_t)st.st_size;
	}
	closedir(d);
	if (k > 0)
		qsort(v, k, sizeof(*v), by_name);
	*files = v;
	*n = k;
	return 0;
fail:
	closedir(d);
	free(v);
	return -1;
}

ssize_t
imgdir_read(const char *dir, const char *name, uint64_t off, void *buf,
    size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX];
	ssize_t r;
	int fd;

	if (!imgdir_name_ok(name) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		errbuf(err, errlen, "%s: not a file name to send", name);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		errbuf_errno(err, errlen, "%s", path);
		return -1;
	}
	while ((r = pread(fd, buf, len, (off_t)off)) < 0 && errno == EINTR)
		;
	if (r < 0)
		errbuf_errno(err, errlen, "%s", path);
	close(fd);
	return r;
}

int
imgdir_rx_open(struct imgdir_rx *rx, const char *dir, uint64_t max_bytes,
    size_t max_files, char *err, size_t errlen)
{
	memset(rx, 0, sizeof(*rx));
	rx->dirfd = rx->fd = -1;
	if ((size_t)snprintf(rx->path, sizeof(rx->path), "%s", dir) >=
	    sizeof(rx->path)) {
		errbuf(err, errlen, "folder name too long");
		return -1;
	}
	if (mkdir(dir, 0700) < 0) {
		errbuf_errno(err, errlen, "mkdir %s", dir);
		return -1;
	}
	if ((rx->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0) {
		errbuf_errno(err, errlen, "%s", dir);
		rmdir(dir);
		return -1;
	}
	rx->max_bytes = max_bytes;
	rx->max_files = max_files;
	return 0;
}

/* The file being written is whole. */
static int
end_file(struct imgdir_rx *rx, char *err, size_t errlen)
{
	int rc = 0;

	if (rx->fd < 0)
		return 0;
	if (close(rx->fd) < 0) {
		errbuf_errno(err, errlen, "%s/%s", rx->path, rx->cur);
		rc = -1;
	}
	rx->fd = -1;
	return rc;
}

int
imgdir_rx_put(struct imgdir_rx *rx, const char *name, uint64_t off,
    const void *data, size_t len, char *err, size_t errlen)
{
	const char *p = data;
	int same;

	if (rx->dirfd < 0) {
		errbuf(err, errlen, "no folder to take files into");
		return -1;
	}
	if (!imgdir_name_ok(name)) {
		errbuf(err, errlen, "image file name not allowed");
		return -1;
	}
	same = rx->cur[0] != '\0' && strcmp(name, rx->cur) == 0;
	if (same ? off != rx->off : off != 0) {
		errbuf(err, errlen, "%s: piece at %llu, expected %llu", name,
		    (unsigned long long)off,
		    (unsigned long long)(same ? rx->off : 0));
		return -1;
	}
	if (!same && rx->cur[0] != '\0' && strcmp(name, rx->cur) <= 0) {
		errbuf(err, errlen, "%s after %s: image files out of order",
		    name, rx->cur);
		return -1;
	}
	if (len > rx->max_bytes - rx->bytes) {
		errbuf(err, errlen, "images above %llu bytes",
		    (unsigned long long)rx->max_bytes);
		return -1;
	}
	if (!same) {
		if (rx->nfiles == rx->max_files) {
			errbuf(err, errlen, "more than %zu image files",
			    rx->max_files);
			return -1;
		}
		if (end_file(rx, err, errlen) < 0)
			return -1;
		rx->fd = openat(rx->dirfd, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (rx->fd < 0) {
			errbuf_errno(err, errlen, "%s/%s", rx->path, name);
			return -1;
		}
		snprintf(rx->cur, sizeof(rx->cur), "%s", name);
		rx->off = 0;
		rx->nfiles++;
	}
	while (len > 0) {
		ssize_t w = write(rx->fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			errbuf_errno(err, errlen, "%s/%s", rx->path, name);
			return -1;
		}
		p += w;
		len -= (size_t)w;
		rx->off += (uint64_t)w;
		rx->bytes += (uint64_t)w;
	}
	return 0;
}

int
imgdir_rx_finish(struct imgdir_rx *rx, char *err, size_t errlen)
{
	return end_file(rx, err, errlen);
}

void
imgdir_rx_discard(struct imgdir_rx *rx)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if (rx->dirfd < 0)
		return;
	/* every file, whatever its name: the folder was ours alone */
	if ((fd = dup(rx->dirfd)) >= 0 && (d = fdopendir(fd)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0)
				(void)unlinkat(rx->dirfd, de->d_name, 0);
		closedir(d);
	} else if (fd >= 0) {
		close(fd);
	}
	(void)rmdir(rx->path);
	imgdir_rx_close(rx);
}

void
imgdir_rx_close(struct imgdir_rx *rx)
{
	if (rx->fd >= 0)
		close(rx->fd);
	if (rx->dirfd >= 0)
		close(rx->dirfd);
	rx->fd = rx->dirfd = -1;
}
