/* SPDX-License-Identifier: ISC */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nsarg.h"

int
nsarg_name(const char *s, char *err, size_t errlen)
{
	size_t i, n;

	if (s == NULL || (n = strlen(s)) == 0) {
		snprintf(err, errlen, "namespace name is empty");
		return -1;
	}
	if (n > NSARG_NAME_MAX) {
		snprintf(err, errlen, "namespace name '%.32s' is longer "
		    "than %d characters", s, NSARG_NAME_MAX);
		return -1;
	}
	for (i = 0; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9'))
			continue;
		if (i > 0 && (c == '-' || c == '_'))
			continue;
		snprintf(err, errlen, "namespace name '%s': only letters, "
		    "digits, '-' and '_' (not first) are allowed", s);
		return -1;
	}
	return 0;
}

static int
parse_plen(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || v > max || (s[0] == '0' && s[1] != '\0'))
		return -1;
	*out = (unsigned)v;
	return 0;
}

int
nsarg_addr(const char *s, struct nsarg_addr *a, char *err, size_t errlen)
{
	char buf[64], *slash;
	char ntop[INET6_ADDRSTRLEN];

	memset(a, 0, sizeof(*a));
	if (s == NULL || strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "address is missing or too long");
		return -1;
	}
	strcpy(buf, s);
	if ((slash = strchr(buf, '/')) == NULL) {
		snprintf(err, errlen, "address '%s' needs a prefix length "
		    "(ADDR/PLEN)", s);
		return -1;
	}
	*slash++ = '\0';
	if (inet_pton(AF_INET, buf, a->addr) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, a->addr) == 1)
		a->family = AF_INET6;
	else {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address",
		    buf);
		return -1;
	}
	if (parse_plen(slash, a->family == AF_INET ? 32 : 128, &a->plen)) {
		snprintf(err, errlen, "bad prefix length '%s' in '%s'",
		    slash, s);
		return -1;
	}
	inet_ntop(a->family, a->addr, ntop, sizeof(ntop));
	snprintf(a->text, sizeof(a->text), "%s/%u", ntop, a->plen);
	return 0;
}

int
nsarg_mac(const char *s, uint8_t mac[6], char *err, size_t errlen)
{
	unsigned v[6];
	int i, n = -1;

	if (s == NULL || strlen(s) != 17 ||
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &v[0], &v[1], &v[2],
	    &v[3], &v[4], &v[5], &n) != 6 || n != 17) {
		snprintf(err, errlen, "MAC '%s' is not of the form "
		    "xx:xx:xx:xx:xx:xx", s ? s : "");
		return -1;
	}
	for (i = 0; i < 17; i++) {
		char c = s[i];
		int hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		    (c >= 'A' && c <= 'F');

		if ((i % 3 == 2) ? c != ':' : !hex) {
			snprintf(err, errlen, "MAC '%s' is not of the form "
			    "xx:xx:xx:xx:xx:xx", s);
			return -1;
		}
	}
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	if (mac[0] & 1) {
		snprintf(err, errlen, "MAC '%s' is a multicast address", s);
		return -1;
	}
	if ((mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0) {
		snprintf(err, errlen, "MAC '%s' is all zeros", s);
		return -1;
	}
	return 0;
}

int
nsarg_route(const char *s, struct nsarg_route *r, char *err, size_t errlen)
{
	char buf[128], *comma;

	memset(r, 0, sizeof(*r));
	if (s == NULL || strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "route is missing or too long");
		return -1;
	}
	strcpy(buf, s);
	if ((comma = strchr(buf, ',')) == NULL) {
		snprintf(err, errlen, "route '%s' must be DEST,GATEWAY "
		    "(DEST is default or ADDR/PLEN)", s);
		return -1;
	}
	*comma++ = '\0';
	if (inet_pton(AF_INET, comma, r->gw) == 1)
		r->family = AF_INET;
	else if (inet_pton(AF_INET6, comma, r->gw) == 1)
		r->family = AF_INET6;
	else {
		snprintf(err, errlen, "route gateway '%s' is not an address",
		    comma);
		return -1;
	}
	inet_ntop(r->family, r->gw, r->gw_text, sizeof(r->gw_text));
	if (strcmp(buf, "default") == 0)
		r->is_default = 1;
	else {
		if (nsarg_addr(buf, &r->dst, err, errlen) == -1)
			return -1;
		if (r->dst.family != r->family) {
			snprintf(err, errlen, "route '%s' mixes IPv4 and "
			    "IPv6", s);
			return -1;
		}
	}
	snprintf(r->text, sizeof(r->text), "%s,%s",
	    r->is_default ? "default" : r->dst.text, r->gw_text);
	return 0;
}

int
nsarg_argv(const char *const *argv, size_t argc, char *err, size_t errlen)
{
	size_t i;

	if (argc == 0) {
		snprintf(err, errlen, "no command given");
		return -1;
	}
	if (argc > NSARG_ARGV_MAX) {
		snprintf(err, errlen, "more than %d arguments", NSARG_ARGV_MAX);
		return -1;
	}
	if (argv[0][0] != '/') {
		snprintf(err, errlen, "command '%s' must be an absolute path",
		    argv[0]);
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (strlen(argv[i]) >= NSARG_ARG_LEN) {
			snprintf(err, errlen, "argument %zu is longer than %d",
			    i, NSARG_ARG_LEN - 1);
			return -1;
		}
	}
	return 0;
}
