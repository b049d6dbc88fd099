/* SPDX-License-Identifier: ISC */
/*
 * TLS 1.3 with mutual certificate authentication for the peer channel.
 * OpenSSL does the protocol; libevent's bufferevent_openssl drives it.
 */
#ifndef MIGRD_TLS_H
#define MIGRD_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

SSL_CTX	*tls_ctx_new(const char *cert, const char *key, const char *ca);
/* 1 if the peer's verified certificate names host (SAN DNS, else CN). */
int	 tls_peer_matches(SSL *ssl, const char *host);
/* "CN=..., issuer CN=..." of the peer certificate, for logs. */
void	 tls_peer_describe(SSL *ssl, char *buf, size_t len);
/* Last OpenSSL error(s) and the verify result, for logs. */
void	 tls_error_string(SSL *ssl, unsigned long err, char *buf, size_t len);

#endif
