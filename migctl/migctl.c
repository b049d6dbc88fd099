/* SPDX-License-Identifier: ISC */
/*
 * migctl: send one command to migrd over its control socket, print the
 * result, exit with the result code.  A migration's progress frames come
 * before its result and are printed as they arrive.
 *
 *	migctl [-j] [-s socket] command [argument ...]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "evacuate.h"
#include "frame.h"
#include "log.h"
#include "version.h"
#include "migrd-protocol.h"
#include "output.h"
#include "parser.h"

/* Read frames up to the command's MSG_RESULT, printing progress frames
 * on the way (migrate only).  0 with *reply set, else -1 after saying
 * why. */
static int
read_result(int fd, const struct output *out, enum action a, int sent,
    json_t **reply)
{
	uint16_t type;
	json_t *msg;
	int first;

	for (first = 1;; first = 0) {
		if (ctl_read(fd, first ? sent : 0, &type, &msg) == -1)
			return -1;
		if (type == MSG_RESULT) {
			*reply = msg;
			return 0;
		}
		if (type != MSG_CTL_PROGRESS || a != A_MIGRATE) {
			fprintf(stderr, "migctl: bad reply from migrd: "
			    "unexpected %s\n", migr_msgname(type));
			json_decref(msg);
			return -1;
		}
		if (out->progress(msg) == -1) {
			fprintf(stderr, "migctl: malformed progress from "
			    "migrd\n");
			json_decref(msg);
			return -1;
		}
		json_decref(msg);
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct output *out = &text_output;
	const char *sock = MIGR_CONTROL_SOCKET;
	struct parse_result res;
	json_t *req, *reply = NULL, *data;
	int code;
	const char *message;
	uint16_t type;
	int ch, fd, rc, sent;

	log_procinit("migctl");
	log_init(LOG_TO_STDERR, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	/* "+": stop at the first command word, so "run NS -- cmd -x" works */
	while ((ch = getopt_long(argc, argv, "+hjs:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			parser_usage(stdout);
			return 0;
		case 'j':
			out = &json_output;
			break;
		case 'V':
			printf("migctl %s (protocol %d)\n", MIGR_VERSION,
			    MIGR_PROTO_VERSION);
			return 0;
		case 's':
			sock = optarg;
			break;
		default:
			parser_usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		parser_usage(stderr);
		return 2;
	}
	if ((rc = parse(argc, argv, &res)) != 0)
		return rc;
	/* many migrations, each on a connection of its own */
	if (res.action == A_EVACUATE)
		return evacuate(sock, res.host, res.parallel, out);
	if ((req = parse_request(&res, &type)) == NULL) {
		fprintf(stderr, "migctl: cannot build the request\n");
		return RES_ERROR;
	}
	if ((fd = ctl_connect(sock)) == -1) {
		json_decref(req);
		return errno == EACCES ? RES_DENIED : RES_ERROR;
	}
	/* migrd may answer and close before reading (a refused caller):
	 * a failed write is reported only if no result can be read */
	sent = frame_write_fd(fd, type, req, MIGR_FRAME_MAX);
	if (read_result(fd, out, res.action, sent, &reply) == -1) {
		rc = RES_ERROR;
		goto out_close;
	}
	if (ctl_result(reply, &code, &message) == -1) {
		fprintf(stderr, "migctl: malformed result from migrd\n");
		rc = RES_ERROR;
		goto out_close;
	}
	data = json_object_get(reply, "data");
	out->result(res.action, code, message, data);
	rc = code;
out_close:
	json_decref(reply);
	json_decref(req);
	close(fd);
	return rc;
}
