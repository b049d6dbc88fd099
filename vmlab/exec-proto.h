/* SPDX-License-Identifier: ISC */
/*
 * Wire format between the host's lab-exec and a guest's migr-agent, over
 * one virtio-serial port.  Both ends are ours and run the same build, so
 * integers travel in host byte order.
 *
 * host -> guest:  struct exec_req, then req.len bytes of a /bin/sh -c
 *                 command line.
 * guest -> host:  struct exec_frame, then frame.len bytes, repeated:
 *                 EXEC_STDOUT / EXEC_STDERR carry output; EXEC_EXIT
 *                 carries an int32 status (exit code, or 128 + signal)
 *                 and ends the exchange.
 * Every frame echoes the request id, so frames left over from an
 * abandoned exchange are recognised and skipped.
 */
#ifndef MIGR_EXEC_PROTO_H
#define MIGR_EXEC_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define EXEC_MAGIC	0x3158474dU	/* "MGX1" */
#define EXEC_CMD_MAX	(64 * 1024)
#define EXEC_CHUNK	(16 * 1024)

enum exec_frame_type {
	EXEC_STDOUT = 1,
	EXEC_STDERR = 2,
	EXEC_EXIT = 3,
};

struct exec_req {
	uint32_t magic;
	uint32_t id;
	uint32_t timeout_s;	/* 0: no limit; else SIGKILL the group */
	uint32_t len;
};

struct exec_frame {
	uint32_t magic;
	uint32_t id;
	uint32_t type;
	uint32_t len;
};

/* Read or write exactly len bytes: 0, or -1 on error or end of file. */
int	exec_read_full(int fd, void *buf, size_t len);
int	exec_write_full(int fd, const void *buf, size_t len);

#endif
