/* SPDX-License-Identifier: ISC */
/*
 * Validation of the arguments of "ns create" and "run", shared by migctl
 * (to fail early with a clear message) and migrd (which decides).  Each
 * returns 0, or -1 with a one-line reason in err.
 */
#ifndef MIGR_NSARG_H
#define MIGR_NSARG_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* "v" + name must fit IFNAMSIZ - 1 for the host-side veth. */
#define NSARG_NAME_MAX	14
#define NSARG_ADDRS_MAX	16
#define NSARG_ROUTES_MAX 16
#define NSARG_ARGV_MAX	64
#define NSARG_ARG_LEN	1024

struct nsarg_addr {
	int		family;		/* AF_INET or AF_INET6 */
	uint8_t		addr[16];
	unsigned	plen;
	char		text[64];	/* canonical "ADDR/PLEN" */
};

struct nsarg_route {
	int		family;
	int		is_default;
	struct nsarg_addr dst;		/* unused if is_default */
	uint8_t		gw[16];		/* unused if dev_only */
	int		dev_only;	/* no gateway: on-link (records only) */
	uint32_t	metric;		/* 0: the kernel's default */
	char		gw_text[48];
	char		text[128];	/* canonical "DEST,GW" */
};

int	nsarg_name(const char *s, char *err, size_t errlen);
int	nsarg_addr(const char *s, struct nsarg_addr *a, char *err,
	    size_t errlen);
int	nsarg_mac(const char *s, uint8_t mac[6], char *err, size_t errlen);
int	nsarg_route(const char *s, struct nsarg_route *r, char *err,
	    size_t errlen);
int	nsarg_argv(const char *const *argv, size_t argc, char *err,
	    size_t errlen);

#endif
