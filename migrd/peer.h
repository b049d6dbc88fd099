/*
 * The peer channel: one TLS session per configured peer.  The host whose
 * name sorts first dials, the other accepts, so a pair has one session.
 * hello (version, names, capabilities) must come first; heartbeats
 * detect a dead peer; the dialer reconnects with exponential backoff.
 */
#ifndef MIGRD_PEER_H
#define MIGRD_PEER_H

#include <jansson.h>

int	 peer_init(void);		/* listener + dialers */
void	 peer_shutdown(void);
json_t	*peer_list_json(void);
int	 peer_is_up(const char *name);

#endif
