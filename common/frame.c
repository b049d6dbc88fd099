/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"
#include "migrd-protocol.h"

const char *const migr_result_str[RES__MAX] = {
	[RES_OK] = "ok",
	[RES_ERROR] = "error",
	[RES_BAD_REQUEST] = "bad request",
	[RES_DENIED] = "permission denied",
	[RES_UNKNOWN_COMMAND] = "unknown command",
	[RES_BAD_VERSION] = "protocol version mismatch",
	[RES_TOO_BIG] = "message too big",
	[RES_INVALID_ARGUMENT] = "invalid argument",
	[RES_NO_SUCH_NS] = "no such namespace",
	[RES_NS_EXISTS] = "namespace exists",
	[RES_UNKNOWN_PEER] = "unknown peer",
	[RES_PEER_DOWN] = "peer not connected",
	[RES_SYSTEM] = "system error",
	[RES_NOT_IMPLEMENTED] = "not implemented yet",
	[RES_LIMIT] = "limit reached",
	[RES_REFUSED] = "refused, nothing changed",
	[RES_ROLLED_BACK] = "failed and rolled back",
	[RES_IN_DOUBT] = "in doubt",
	[RES_BUSY] = "migration under way",
};

static const char *const msg_names[MSG__MAX] = {
	[MSG_NONE] = "none",
	[MSG_RESULT] = "result",
	[MSG_HELLO] = "hello",
	[MSG_HEARTBEAT] = "heartbeat",
	[MSG_CTL_STATUS] = "status",
	[MSG_CTL_PEERS] = "peers",
	[MSG_CTL_NS_LIST] = "ns-list",
	[MSG_CTL_NS_SHOW] = "ns-show",
	[MSG_CTL_NS_CREATE] = "ns-create",
	[MSG_CTL_NS_DELETE] = "ns-delete",
	[MSG_CTL_RUN] = "run",
	[MSG_CTL_MIGRATE] = "migrate",
	[MSG_CTL_HISTORY] = "history",
	[MSG_MIG_PREPARE] = "mig-prepare",
	[MSG_MIG_PREPARED] = "mig-prepared",
	[MSG_MIG_REFUSED] = "mig-refused",
	[MSG_MIG_RECORD] = "mig-record",
	[MSG_MIG_DUMP_DONE] = "mig-dump-done",
	[MSG_MIG_READY] = "mig-ready",
	[MSG_MIG_FAILED] = "mig-failed",
	[MSG_MIG_COMMIT] = "mig-commit",
	[MSG_MIG_COMMITTED] = "mig-committed",
	[MSG_MIG_ABORT] = "mig-abort",
	[MSG_MIG_ABORTED] = "mig-aborted",
	[MSG_CTL_CANCEL] = "cancel",
	[MSG_CTL_RESOLVE] = "resolve",
	[MSG_CTL_PROGRESS] = "progress",
	[MSG_MIG_CHUNK] = "mig-chunk",
	[MSG_CTL_CHECK] = "check",
	[MSG_MIG_CHECK] = "mig-check",
	[MSG_MIG_CHECKED] = "mig-checked",
	[MSG_MIG_FORGET] = "mig-forget",
	[MSG_MIG_PACKETS] = "mig-packets",
	[MSG_MIG_IMAGE] = "mig-image",
};

const char *
migr_strresult(int code)
{
	if (code < 0 || code >= RES__MAX || migr_result_str[code] == NULL)
		return "unknown result code";
	return migr_result_str[code];
}

const char *
migr_msgname(int type)
{
	if (type < 0 || type >= MSG__MAX || msg_names[type] == NULL)
		return "unknown";
	return msg_names[type];
}

const char *
frame_strstatus(int status)
{
	switch (status) {
	case FRAME_OK:		return "ok";
	case FRAME_PARTIAL:	return "partial frame";
	case FRAME_TOO_BIG:	return "frame too big";
	case FRAME_BAD_VERSION:	return "protocol version mismatch";
	case FRAME_BAD_TYPE:	return "unknown message type";
	case FRAME_BAD_PAYLOAD:	return "payload is not a JSON object";
	case FRAME_IO:		return "connection closed or I/O error";
	}
	return "unknown frame status";
}

int
frame_status_result(int status)
{
	switch (status) {
	case FRAME_OK:		return RES_OK;
	case FRAME_TOO_BIG:	return RES_TOO_BIG;
	case FRAME_BAD_VERSION:	return RES_BAD_VERSION;
	case FRAME_BAD_TYPE:	return RES_UNKNOWN_COMMAND;
	default:		return RES_BAD_REQUEST;
	}
}

void
frame_hdr_pack(uint8_t out[8], uint16_t type, uint32_t len)
{
	uint16_t t = htons(type), v = htons(MIGR_PROTO_VERSION);
	uint32_t l = htonl(len);

	memcpy(out, &t, 2);
	memcpy(out + 2, &v, 2);
	memcpy(out + 4, &l, 4);
}

int
frame_hdr_check(const uint8_t *buf, size_t avail, size_t max,
    struct frame_hdr *h)
{
	uint16_t t, v;
	uint32_t l;

	if (avail < MIGR_FRAME_HDR_LEN)
		return FRAME_PARTIAL;
	memcpy(&t, buf, 2);
	memcpy(&v, buf + 2, 2);
	memcpy(&l, buf + 4, 4);
	h->type = ntohs(t);
	h->version = ntohs(v);
	h->len = ntohl(l);
	/* version first: a newer peer may use types we do not know */
	if (h->version != MIGR_PROTO_VERSION)
		return FRAME_BAD_VERSION;
	if (h->type == MSG_NONE || h->type >= MSG__MAX)
		return FRAME_BAD_TYPE;
	if (max > MIGR_FRAME_MAX)
		max = MIGR_FRAME_MAX;
	if (h->len > max)
		return FRAME_TOO_BIG;
	if (h->len == 0)
		return FRAME_BAD_PAYLOAD;
	return FRAME_OK;
}

int
frame_decode_payload(const void *buf, size_t len, json_t **out)
{
	json_error_t jerr;
	json_t *j;

	*out = NULL;
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (j == NULL)
		return FRAME_BAD_PAYLOAD;
	if (!json_is_object(j)) {
		json_decref(j);
		return FRAME_BAD_PAYLOAD;
	}
	*out = j;
	return FRAME_OK;
}

int
frame_decode(uint16_t type, const void *buf, size_t len, json_t **out)
{
	const char *nul = memchr(buf, '\0', len);
	json_t *raw;
	size_t n;
	int st;

	if (nul == NULL)
		return frame_decode_payload(buf, len, out);
	*out = NULL;
	if (!MSG_TAIL_OK(type))
		return FRAME_BAD_PAYLOAD;
	n = (size_t)(nul - (const char *)buf);
	if ((st = frame_decode_payload(buf, n, out)) != FRAME_OK)
		return st;
	if (json_object_get(*out, "raw") != NULL ||
	    (raw = json_stringn_nocheck(nul + 1, len - n - 1)) == NULL ||
	    json_object_set_new(*out, "raw", raw) == -1) {
		json_decref(*out);
		*out = NULL;
		return FRAME_BAD_PAYLOAD;
	}
	return FRAME_OK;
}

int
frame_serialise(uint16_t type, const json_t *payload, size_t max, char **out,
    size_t *outlen)
{
	return frame_serialise_tail(type, payload, NULL, 0, max, out, outlen);
}

int
frame_serialise_tail(uint16_t type, const json_t *payload, const void *tail,
    size_t taillen, size_t max, char **out, size_t *outlen)
{
	char *s, *st;
	size_t n;

	if (tail != NULL && !MSG_TAIL_OK(type)) {
		log_warnx("%s: %s takes no tail", __func__,
		    migr_msgname(type));
		return -1;
	}
	if (payload != NULL)
		s = json_dumps(payload, JSON_COMPACT);
	else
		s = strdup("{}");
	if (s == NULL) {
		log_warnx("%s: cannot serialise payload", __func__);
		return -1;
	}
	n = strlen(s);
	if (max > MIGR_FRAME_MAX)
		max = MIGR_FRAME_MAX;
	if (n > max || (tail != NULL && taillen >= max - n)) {
		log_warnx("%s: %s payload of %zu bytes and a tail of %zu "
		    "exceed %zu", __func__, migr_msgname(type), n, taillen,
		    max);
		free(s);
		return -1;
	}
	if (tail != NULL) {
		if ((st = realloc(s, n + 1 + taillen + 1)) == NULL) {
			log_warn("%s: realloc", __func__);
			free(s);
			return -1;
		}
		s = st;
		s[n] = '\0';
		memcpy(s + n + 1, tail, taillen);
		n += 1 + taillen;
	}
	*out = s;
	*outlen = n;
	return 0;
}

int
frame_pack(uint16_t type, const json_t *payload, size_t max, uint8_t **out,
    size_t *outlen)
{
	return frame_pack_tail(type, payload, NULL, 0, max, out, outlen);
}

int
frame_pack_tail(uint16_t type, const json_t *payload, const void *tail,
    size_t taillen, size_t max, uint8_t **out, size_t *outlen)
{
	char *s;
	size_t n;
	uint8_t *buf;

	if (frame_serialise_tail(type, payload, tail, taillen, max, &s,
	    &n) == -1)
		return -1;
	if ((buf = malloc(MIGR_FRAME_HDR_LEN + n)) == NULL) {
		log_warn("%s: malloc", __func__);
		free(s);
		return -1;
	}
	frame_hdr_pack(buf, type, (uint32_t)n);
	memcpy(buf + MIGR_FRAME_HDR_LEN, s, n);
	free(s);
	*out = buf;
	*outlen = MIGR_FRAME_HDR_LEN + n;
	return 0;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
read_all(int fd, uint8_t *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		r = read(fd, p, n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int
frame_write_fd(int fd, uint16_t type, const json_t *payload, size_t max)
{
	uint8_t *buf;
	size_t len;
	int rc;

	if (frame_pack(type, payload, max, &buf, &len) == -1)
		return -1;
	rc = write_all(fd, buf, len);
	if (rc == -1)
		log_warn("%s: write", __func__);
	free(buf);
	return rc;
}

int
frame_read_fd(int fd, size_t max, struct frame_hdr *h, json_t **payload)
{
	uint8_t hdr[MIGR_FRAME_HDR_LEN];
	uint8_t *buf;
	int st;

	*payload = NULL;
	if (read_all(fd, hdr, sizeof(hdr)) == -1)
		return FRAME_IO;
	if ((st = frame_hdr_check(hdr, sizeof(hdr), max, h)) != FRAME_OK)
		return st;
	if ((buf = malloc(h->len)) == NULL)
		return FRAME_IO;
	if (read_all(fd, buf, h->len) == -1) {
		free(buf);
		return FRAME_IO;
	}
	st = frame_decode(h->type, buf, h->len, payload);
	free(buf);
	return st;
}
