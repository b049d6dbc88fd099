#ifndef MIGR_WORKLOAD_ADDR_H
#define MIGR_WORKLOAD_ADDR_H

#include <sys/socket.h>

/* Parse "A.B.C.D:PORT" or "[V6]:PORT" into ss; 0 or -1. */
int	addr_parse(const char *, struct sockaddr_storage *, socklen_t *);

#endif
