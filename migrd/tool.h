/*
 * Running ip(8) for what is not worth redoing by hand: "ip netns add/del"
 * (the /run/netns bind-mount dance) and "ip -j addr show" for ns show.
 * execv with an argument vector built from validated values only (no
 * shell), stdout and stderr captured with a size bound.  Links,
 * addresses and routes go over rtnetlink (common/rtnl.c).
 */
#ifndef MIGRD_TOOL_H
#define MIGRD_TOOL_H

#include <stddef.h>

int	tool_init(void);
/* Run ip with args (NULL-terminated, without "ip").  Returns its exit
 * status (0 = success) or -1; stdout to out, first stderr line to err. */
int	tool_ip(const char *const args[], char *out, size_t outlen,
	    char *err, size_t errlen);

#endif
