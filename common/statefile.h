/* SPDX-License-Identifier: ISC */
/*
 * migrd's durable state: one JSON document per file, replaced whole.
 *
 * statefile_write() writes a temporary file beside path, fsyncs it,
 * renames it over path and fsyncs the directory: a crash at any instant
 * leaves either the old document or the new one, and a return of 0 means
 * the new one survives a power cut.  A failure (a full disk, no fd left)
 * leaves the old document in place and returns -1 with the reason in
 * err: the caller must treat the state as not written.
 *
 * statefile_read() returns 0 and the document, 1 when there is no file
 * (a first start), or -1 with the reason in err when a file is there but
 * cannot be read or parsed, or is larger than max: the caller must not
 * go on as if it were empty (nor overwrite it).
 */
#ifndef MIGR_STATEFILE_H
#define MIGR_STATEFILE_H

#include <stddef.h>

#include <jansson.h>

int	statefile_write(const char *path, const json_t *doc, char *err,
	    size_t errlen);
int	statefile_read(const char *path, size_t max, json_t **doc, char *err,
	    size_t errlen);

#endif
