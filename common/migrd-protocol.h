/* SPDX-License-Identifier: ISC */
/*
 * The one wire header shared by migrd, migctl and peer migrds.
 *
 * Every message on the control socket and on the peer channel is a frame:
 * an 8-byte header (struct frame_hdr in frame.h: type, version, payload
 * length, all in network byte order) followed by exactly `len` bytes of
 * UTF-8 JSON holding one object.  docs/protocol-channel.md describes each
 * message with examples.
 */
#ifndef MIGRD_PROTOCOL_H
#define MIGRD_PROTOCOL_H

/* Bump on any change of this file, frame.h or a payload's meaning. */
#define MIGR_PROTO_VERSION	6

#define MIGR_FRAME_HDR_LEN	8
/* Largest payload anyone may send; the configured limit may be lower. */
#define MIGR_FRAME_MAX		(1024 * 1024)
/* Default payload limit (migrd.conf "max-message"). */
#define MIGR_FRAME_DEFAULT	(64 * 1024)

#define MIGR_PEER_PORT		7780
#define MIGR_CONTROL_SOCKET	"/run/migrd/migrd.sock"
#define MIGR_CONFIG_FILE	"/etc/migrd/migrd.conf"

/* Message types.  Numbers are on the wire: append only. */
enum migr_msg {
	MSG_NONE = 0,		/* never sent */
	MSG_RESULT = 1,		/* both: {code, message[, data]} ends a command */
	MSG_HELLO = 2,		/* peer: {version, host, peer, capabilities} */
	MSG_HEARTBEAT = 3,	/* peer: {seq} */
	MSG_CTL_STATUS = 4,	/* control: {} */
	MSG_CTL_PEERS = 5,	/* control: {} */
	MSG_CTL_NS_LIST = 6,	/* control: {} */
	MSG_CTL_NS_SHOW = 7,	/* control: {ns} */
	MSG_CTL_NS_CREATE = 8,	/* control: {ns, addrs[], mac?, routes[]} */
	MSG_CTL_NS_DELETE = 9,	/* control: {ns} */
	MSG_CTL_RUN = 10,	/* control: {ns, argv[]} */
	MSG_CTL_MIGRATE = 11,	/* control: {ns, host} */
	MSG_CTL_HISTORY = 12,	/* control: {} */
	/* peer: one migration; every payload carries its "mig" id */
	MSG_MIG_PREPARE = 13,	/* {mig, ns, from, namespace, records[],
				   workload} */
	MSG_MIG_PREPARED = 14,	/* {mig, build_ms} */
	MSG_MIG_REFUSED = 15,	/* {mig, reason} */
	MSG_MIG_RECORD = 16,	/* {mig, seq, record} one socket */
	MSG_MIG_DUMP_DONE = 17,	/* {mig, records} the last was sent */
	MSG_MIG_READY = 18,	/* {mig, sockets, restore_ms} */
	MSG_MIG_FAILED = 19,	/* {mig, reason} */
	MSG_MIG_COMMIT = 20,	/* {mig} */
	MSG_MIG_COMMITTED = 21,	/* {mig, live_ms, pid} */
	MSG_MIG_ABORT = 22,	/* {mig} */
	MSG_MIG_ABORTED = 23,	/* {mig} */
	/* control */
	MSG_CTL_CANCEL = 24,	/* {ns} */
	MSG_CTL_RESOLVE = 25,	/* {ns, outcome: "rollback" | "done"} */
	MSG_CTL_PROGRESS = 26,	/* migrd -> migctl: {phase, at_ms, text} */
	MSG_MIG_CHUNK = 27,	/* peer: {mig, seq, chunk} a part of record
				   seq too large to travel inline; a
				   queue's bytes as a binary tail
				   (capability "raw-chunks") */
	MSG_CTL_CHECK = 28,	/* control: {ns[, host]} */
	MSG_MIG_CHECK = 29,	/* peer: {mig, ns, from, namespace, records[],
				   workload}: could you take it? */
	MSG_MIG_CHECKED = 30,	/* peer: {mig, ok, reason} */
	MSG_MIG_FORGET = 31,	/* peer, source -> destination: {mig} it
				   knows how that migration ended */
	MSG_MIG_PACKETS = 32,	/* peer, source -> destination: {mig,
				   packets[], overflow} what reached the
				   locked namespace, to replay */
	MSG_MIG_IMAGE = 33,	/* peer, source -> destination, checkpoint
				   mode: {mig, name, off, data} a piece of
				   one of CRIU's images, or {mig, name, off}
				   and the piece as a binary tail (frame.h,
				   capability "raw-images") */
	MSG__MAX
};

#define MSG_IS_MIG(t)	(((t) >= MSG_MIG_PREPARE && (t) <= MSG_MIG_ABORTED) || \
			 (t) == MSG_MIG_CHUNK || (t) == MSG_MIG_CHECK || \
			 (t) == MSG_MIG_CHECKED || (t) == MSG_MIG_FORGET || \
			 (t) == MSG_MIG_PACKETS || (t) == MSG_MIG_IMAGE)
/* the types whose frames may carry a binary tail (frame.h) */
/* the types that may be above max-message (up to MIGR_FRAME_MAX) */
#define MSG_BULK(t)	((t) == MSG_MIG_RECORD || (t) == MSG_MIG_CHUNK || \
			 (t) == MSG_MIG_IMAGE)
#define MSG_TAIL_OK(t)	((t) == MSG_MIG_IMAGE || (t) == MSG_MIG_CHUNK)
#define MSG_IS_PEER(t)	((t) == MSG_RESULT || (t) == MSG_HELLO || \
			 (t) == MSG_HEARTBEAT || MSG_IS_MIG(t))
/* a request migctl may send */
#define MSG_IS_CTL(t)	(((t) >= MSG_CTL_STATUS && (t) <= MSG_CTL_HISTORY) || \
			 (t) == MSG_CTL_CANCEL || (t) == MSG_CTL_RESOLVE || \
			 (t) == MSG_CTL_CHECK)

/*
 * A socket record carries at most MIGR_RECORD_INLINE bytes of each queue
 * (and of its datagrams) inline; larger parts follow in MSG_MIG_CHUNK
 * frames of at most MIGR_CHUNK_BYTES bytes each (a binary tail, or
 * base64 in JSON to a peer without "raw-chunks"), so no
 * frame exceeds MIGR_FRAME_MAX.  Frames above max-message are accepted
 * only as records, chunks and checkpoint images (MSG_MIG_IMAGE, pieces
 * of at most 256 KiB) from the peer of a prepared migration.
 */
#define MIGR_RECORD_INLINE	(128 * 1024)
/* To a peer that takes a chunk's bytes as a binary tail ("raw-chunks"),
 * a queue goes inline only up to this: base64 and a JSON string cost
 * more to write and scan than a frame of its own. */
#define MIGR_RECORD_INLINE_RAW	(4 * 1024)
#define MIGR_CHUNK_BYTES	(384 * 1024)

/* Result codes.  Numbers are on the wire and are migctl's exit status. */
enum migr_result {
	RES_OK = 0,
	RES_ERROR = 1,			/* unspecified failure, see message */
	RES_BAD_REQUEST = 2,		/* malformed frame or payload */
	RES_DENIED = 3,			/* caller is neither root nor admin */
	RES_UNKNOWN_COMMAND = 4,
	RES_BAD_VERSION = 5,
	RES_TOO_BIG = 6,
	RES_INVALID_ARGUMENT = 7,
	RES_NO_SUCH_NS = 8,
	RES_NS_EXISTS = 9,
	RES_UNKNOWN_PEER = 10,
	RES_PEER_DOWN = 11,
	RES_SYSTEM = 12,		/* a system call or tool failed */
	RES_NOT_IMPLEMENTED = 13,
	RES_LIMIT = 14,			/* a configured limit was reached */
	RES_REFUSED = 15,		/* refused before any freeze: unchanged */
	RES_ROLLED_BACK = 16,		/* failed after the freeze, rolled back:
					   the service runs here as before */
	RES_IN_DOUBT = 17,		/* no word after COMMIT: locked here,
					   see "migctl resolve" */
	RES_BUSY = 18,			/* a migration of this ns is under way */
	RES__MAX
};

/* Parallel to enum migr_result; defined in frame.c. */
extern const char *const migr_result_str[RES__MAX];
const char	*migr_strresult(int code);
const char	*migr_msgname(int type);

#endif
