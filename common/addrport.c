/* SPDX-License-Identifier: ISC */
/*
 * "ADDR:PORT" text and socket addresses (addrport.h).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "addrport.h"
#include "log.h"

int
sa_format(const struct sockaddr_storage *ss, char *ip, size_t iplen)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

	if (ss->ss_family == AF_INET6) {
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], ip,
			    iplen);
		} else
			inet_ntop(AF_INET6, &s6->sin6_addr, ip, iplen);
		return ntohs(s6->sin6_port);
	}
	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &s4->sin_addr, ip, iplen);
		return ntohs(s4->sin_port);
	}
	snprintf(ip, iplen, "?");
	return -1;
}

int
local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	return sa_format(&ss, ip, sizeof(ip));
}

int
addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (colon == NULL || (hl = (size_t)(colon - s)) == 0 ||
	    hl >= sizeof(host))
		goto bad;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 1 || port > 65535)
		goto bad;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			goto bad;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			goto bad;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
	}
	return 0;
bad:
	log_warnx("bad address '%s' (want A.B.C.D:PORT or [V6]:PORT)", s);
	return -1;
}
