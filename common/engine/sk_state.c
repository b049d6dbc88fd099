/* SPDX-License-Identifier: ISC */
/*
 * struct sk_state: allocation, ownership of the queues, datagrams and
 * option values, and the name tables shared by the engine and the JSON
 * schema.
 */
#include <stdlib.h>
#include <string.h>

#include "sk_engine.h"

static const struct {
	enum sk_st	 st;
	const char	*name;
} sk_st_names[] = {
	{ SK_ST_ESTABLISHED,	"ESTABLISHED" },
	{ SK_ST_SYN_SENT,	"SYN_SENT" },
	{ SK_ST_SYN_RECV,	"SYN_RECV" },
	{ SK_ST_FIN_WAIT1,	"FIN_WAIT1" },
	{ SK_ST_FIN_WAIT2,	"FIN_WAIT2" },
	{ SK_ST_TIME_WAIT,	"TIME_WAIT" },
	{ SK_ST_CLOSE,		"CLOSE" },
	{ SK_ST_CLOSE_WAIT,	"CLOSE_WAIT" },
	{ SK_ST_LAST_ACK,	"LAST_ACK" },
	{ SK_ST_LISTEN,		"LISTEN" },
	{ SK_ST_CLOSING,	"CLOSING" },
	{ SK_ST_NEW_SYN_RECV,	"NEW_SYN_RECV" },
	{ SK_ST_BOUND,		"BOUND" },
	{ SK_ST_ENDED,		"ENDED" },
};

static const char *const sk_end_names[] = {
	[SK_END_NONE] = "none", [SK_END_FIN] = "fin", [SK_END_RESET] = "reset",
};

struct sk_state *
sk_state_new(void)
{
	struct sk_state *st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	st->data_size = sizeof(*st);
	return st;
}

void
sk_state_free(struct sk_state *st)
{
	uint32_t i;

	if (st == NULL)
		return;
	free(st->tcp.sndq);
	free(st->tcp.rcvq);
	for (i = 0; i < st->nopts && i < SK_OPTS_MAX; i++)
		free(st->opts[i].data);
	for (i = 0; i < st->udp.ndgrams && st->udp.dgrams != NULL; i++)
		free(st->udp.dgrams[i].data);
	free(st->udp.dgrams);
	free(st);
}

const char *
sk_st_name(enum sk_st st)
{
	size_t i;

	for (i = 0; i < sizeof(sk_st_names) / sizeof(sk_st_names[0]); i++)
		if (sk_st_names[i].st == st)
			return sk_st_names[i].name;
	return NULL;
}

int
sk_st_from_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(sk_st_names) / sizeof(sk_st_names[0]); i++)
		if (strcmp(sk_st_names[i].name, name) == 0)
			return (int)sk_st_names[i].st;
	return -1;
}

const char *
sk_proto_name(enum sk_proto p)
{
	switch (p) {
	case SK_PROTO_TCP:
		return "tcp";
	case SK_PROTO_UDP:
		return "udp";
	}
	return NULL;
}

const char *
sk_end_name(enum sk_end e)
{
	if ((unsigned)e >= sizeof(sk_end_names) / sizeof(sk_end_names[0]))
		return NULL;
	return sk_end_names[e];
}

int
sk_end_from_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(sk_end_names) / sizeof(sk_end_names[0]); i++)
		if (strcmp(sk_end_names[i], name) == 0)
			return (int)i;
	return -1;
}

bool
sk_st_fin_sent(enum sk_st st)
{
	return st == SK_ST_FIN_WAIT1 || st == SK_ST_FIN_WAIT2 ||
	    st == SK_ST_LAST_ACK || st == SK_ST_CLOSING;
}

bool
sk_st_fin_rcvd(enum sk_st st)
{
	return st == SK_ST_CLOSE_WAIT || st == SK_ST_LAST_ACK ||
	    st == SK_ST_CLOSING;
}

bool
sk_st_tcp_movable(enum sk_st st)
{
	switch (st) {
	case SK_ST_ESTABLISHED:
	case SK_ST_FIN_WAIT1:
	case SK_ST_FIN_WAIT2:
	case SK_ST_CLOSE_WAIT:
	case SK_ST_LAST_ACK:
	case SK_ST_CLOSING:
	case SK_ST_SYN_SENT:
	case SK_ST_LISTEN:
	case SK_ST_CLOSE:
	case SK_ST_BOUND:
	case SK_ST_ENDED:
		return true;
	default:
		return false;
	}
}

bool
sk_st_tcp_conn(enum sk_st st)
{
	return st == SK_ST_ESTABLISHED || sk_st_fin_sent(st) ||
	    sk_st_fin_rcvd(st);
}

uint16_t
sk_addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}
