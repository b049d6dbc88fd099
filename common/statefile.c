/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "statefile.h"

/* fsync the directory that holds path, so a rename in it is durable. */
static int
sync_dir(const char *path, char *err, size_t errlen)
{
	char copy[PATH_MAX];
	int fd, rc = 0;

	snprintf(copy, sizeof(copy), "%s", path);
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		errbuf_errno(err, errlen, "open the directory of %s", path);
		return -1;
	}
	if (fsync(fd) < 0) {
		errbuf_errno(err, errlen, "fsync the directory of %s", path);
		rc = -1;
	}
	close(fd);
	return rc;
}

int
statefile_write(const char *path, const json_t *doc, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char tmp[PATH_MAX];
	int fd;

	/* ".NAME.tmp" beside path: the rename stays in one directory */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp",
	    slash ? (int)(slash - path + 1) : 0, path,
	    slash ? slash + 1 : path) >= sizeof(tmp)) {
		errbuf(err, errlen, "%s: path too long", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		errbuf_errno(err, errlen, "%s", tmp);
		return -1;
	}
	if (json_dumpfd(doc, fd, JSON_INDENT(1)) < 0 || write(fd, "\n", 1) != 1) {
		errbuf_errno(err, errlen, "write %s", tmp);
		goto out_unlink;
	}
	if (fsync(fd) < 0) {
		errbuf_errno(err, errlen, "fsync %s", tmp);
		goto out_unlink;
	}
	if (close(fd) < 0) {
		fd = -1;
		errbuf_errno(err, errlen, "close %s", tmp);
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		errbuf_errno(err, errlen, "rename %s", tmp);
		goto out_unlink;
	}
	return sync_dir(path, err, errlen);

out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}

int
statefile_read(const char *path, size_t max, json_t **doc, char *err,
    size_t errlen)
{
	json_error_t jerr;
	struct stat st;

	*doc = NULL;
	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			return 1;
		errbuf_errno(err, errlen, "%s", path);
		return -1;
	}
	if ((size_t)st.st_size > max) {
		errbuf(err, errlen, "%s: %lld bytes, more than %zu", path,
		    (long long)st.st_size, max);
		return -1;
	}
	*doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (*doc == NULL) {
		errbuf(err, errlen, "%s:%d: %s", path, jerr.line, jerr.text);
		return -1;
	}
	if (!json_is_object(*doc)) {
		errbuf(err, errlen, "%s: not a JSON object", path);
		json_decref(*doc);
		*doc = NULL;
		return -1;
	}
	return 0;
}
