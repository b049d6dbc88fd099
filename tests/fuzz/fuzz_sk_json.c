/*
 * libFuzzer target for the record decoder (common/sk_json.c): any input
 * must be refused with a message or decoded; a decoded record must
 * re-encode, and the re-encoded text must decode to the same text again
 * (the encoding is canonical).  Sanitizers catch the rest.
 *
 *   tests/fuzz/run.sh [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sk_json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
quiet(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)msg;
	(void)arg;
}

static char *
encode(const struct sk_record *rec)
{
	json_t *j = NULL;
	char *s;

	switch (rec->type) {
	case SK_REC_SOCKET:
		j = sk_json_encode(rec->u.sock);
		break;
	case SK_REC_LINK:
		j = sk_json_encode_link(&rec->u.link);
		break;
	case SK_REC_ADDR:
		j = sk_json_encode_addr(&rec->u.addr);
		break;
	case SK_REC_ROUTE:
		j = sk_json_encode_route(&rec->u.route);
		break;
	}
	if (j == NULL)
		abort();	/* whatever decodes must encode */
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	if (s == NULL)
		abort();
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sk_json_limits lim = { 1 << 16 };
	struct sk_record rec, again;
	char err[256], *t1, *t2;

	log_set_sink(quiet, NULL);
	if (sk_json_parse((const char *)data, size, &lim, &rec, err,
	    sizeof(err)) < 0) {
		/* A refusal always says why. */
		if (err[0] == '\0' || strchr(err, ':') == NULL)
			abort();
		return 0;
	}
	t1 = encode(&rec);
	sk_record_clear(&rec);
	if (sk_json_parse(t1, strlen(t1), &lim, &again, err, sizeof(err)) < 0) {
		fprintf(stderr, "re-encoded record refused: %s\n%s\n", err, t1);
		abort();
	}
	t2 = encode(&again);
	sk_record_clear(&again);
	if (strcmp(t1, t2) != 0) {
		fprintf(stderr, "not canonical:\n%s\n%s\n", t1, t2);
		abort();
	}
	free(t1);
	free(t2);
	return 0;
}
