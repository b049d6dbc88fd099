/* SPDX-License-Identifier: ISC */
/*
 * migctl evacuate HOST [parallel N]: move every namespace the local
 * migrd manages to HOST, N at a time, each through a "migrate" of its
 * own control connection.  Progress lines name their namespace; a table
 * sums up.  The exit status: 0 when every namespace moved, 17 when one
 * is in doubt, else the code of the first that stayed.
 */
#ifndef MIGCTL_EVACUATE_H
#define MIGCTL_EVACUATE_H

#include "output.h"

int	evacuate(const char *sock, const char *host, int parallel,
	    const struct output *out);

#endif
