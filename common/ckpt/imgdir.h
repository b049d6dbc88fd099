/* SPDX-License-Identifier: ISC */
/*
 * CRIU's images as checkpoint mode moves them: the regular files of one
 * flat folder (criu dump -D), read whole on the source and written on
 * the destination from what a peer sends, which is hostile input until
 * proven otherwise.  The destination takes files one after another, each
 * whole and in order, their names strictly increasing (the source lists
 * them sorted), so no name comes twice and nothing needs remembering; a
 * name is 1 to IMGDIR_NAME_MAX of [A-Za-z0-9._-] not starting with '.',
 * so none leaves the folder; bytes and files are bounded by the caller.
 *
 *	source:      imgdir_list(), then imgdir_read() of each file in turn
 *	destination: imgdir_rx_open(), imgdir_rx_put() for each piece,
 *	             imgdir_rx_finish(); imgdir_rx_discard() on failure or
 *	             once restored, imgdir_rx_close() to let go of the folder
 */
#ifndef MIGR_IMGDIR_H
#define MIGR_IMGDIR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IMGDIR_NAME_MAX	64

struct imgdir_file {
	char		name[IMGDIR_NAME_MAX + 1];
	uint64_t	size;
};

/* 1 if a peer may name a file so, 0 if not. */
int	imgdir_name_ok(const char *name);

/*
 * The regular files of dir, sorted by name, in *files (free()).  -1 with
 * err if dir holds anything else (a folder, a link), a name not allowed,
 * or more than max files.
 */
int	imgdir_list(const char *dir, size_t max, struct imgdir_file **files,
	    size_t *n, char *err, size_t errlen);

/* Up to len bytes of dir/name from off; how many (0 at the end), or -1. */
ssize_t	imgdir_read(const char *dir, const char *name, uint64_t off, void *buf,
	    size_t len, char *err, size_t errlen);

struct imgdir_rx {
	char		path[PATH_MAX];
	int		dirfd;
	uint64_t	max_bytes, bytes;
	size_t		max_files, nfiles;
	int		fd;			/* the file being written */
	char		cur[IMGDIR_NAME_MAX + 1];
	uint64_t	off;			/* its size so far */
};

/* Create dir (mode 0700; it must not exist) to take files into. */
int	imgdir_rx_open(struct imgdir_rx *, const char *dir, uint64_t max_bytes,
	    size_t max_files, char *err, size_t errlen);
/*
 * len bytes of file name at offset off: the file being written goes on
 * at its end (off is its size so far), or a new name, greater than the
 * last, starts at 0 and ends the last.  -1 with err on anything else, or
 * past a bound; nothing of it is written then.
 */
int	imgdir_rx_put(struct imgdir_rx *, const char *name, uint64_t off,
	    const void *data, size_t len, char *err, size_t errlen);
/* The last file is whole: nfiles files were taken. */
int	imgdir_rx_finish(struct imgdir_rx *, char *err, size_t errlen);
/* Remove every file taken and the folder. */
void	imgdir_rx_discard(struct imgdir_rx *);
/* Let go of the folder (it stays). */
void	imgdir_rx_close(struct imgdir_rx *);

#endif
