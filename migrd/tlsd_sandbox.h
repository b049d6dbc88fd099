/* SPDX-License-Identifier: ISC */
/*
 * The TLS process gives up everything it does not need once its TLS
 * context is loaded (tlsd_sandbox.c says what and why).
 */
#ifndef MIGRD_TLSD_SANDBOX_H
#define MIGRD_TLSD_SANDBOX_H

#include "tlsd.h"

/* 0, or -1 with the reason logged: the process must then exit. */
int	tlsd_sandbox(const struct tlsd_init *ini);
/* MIGRD_TLS_PROBE set (lab test 089): try what the sandbox forbids,
 * and log each result. */
void	tlsd_sandbox_probe(void);
/* Only the standard descriptors and fd stay open: 0 or -1. */
int	tlsd_close_others(int fd);

#endif
