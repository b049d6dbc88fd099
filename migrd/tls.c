/* SPDX-License-Identifier: ISC */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "tls.h"

static void
log_ssl_errors(const char *what)
{
	unsigned long e;
	char buf[256];

	while ((e = ERR_get_error()) != 0) {
		ERR_error_string_n(e, buf, sizeof(buf));
		log_warnx("%s: %s", what, buf);
	}
}

SSL_CTX *
tls_ctx_new(const char *cert, const char *key, const char *ca)
{
	SSL_CTX *ctx;

	if ((ctx = SSL_CTX_new(TLS_method())) == NULL) {
		log_ssl_errors(__func__);
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
		goto fail_ctx;
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		log_warnx("%s: cannot load certificate %s", __func__, cert);
		goto fail_ctx;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		log_warnx("%s: cannot load key %s", __func__, key);
		goto fail_ctx;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		log_warnx("%s: key %s does not match certificate %s",
		    __func__, key, cert);
		goto fail_ctx;
	}
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		log_warnx("%s: cannot load CA %s", __func__, ca);
		goto fail_ctx;
	}
	/* both directions: a peer without a certificate from our CA fails */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_verify_depth(ctx, 4);
	return ctx;

fail_ctx:
	log_ssl_errors(__func__);
	SSL_CTX_free(ctx);
	return NULL;
}

int
tls_peer_matches(SSL *ssl, const char *host)
{
	X509 *x;
	int ok;

	if (SSL_get_verify_result(ssl) != X509_V_OK)
		return 0;
	if ((x = SSL_get0_peer_certificate(ssl)) == NULL)
		return 0;
	ok = X509_check_host(x, host, strlen(host), 0, NULL) == 1;
	return ok;
}

void
tls_peer_describe(SSL *ssl, char *buf, size_t len)
{
	X509 *x;
	char sub[128] = "?", iss[128] = "?";

	if (ssl == NULL || (x = SSL_get0_peer_certificate(ssl)) == NULL) {
		snprintf(buf, len, "no certificate");
		return;
	}
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName,
	    sub, sizeof(sub));
	X509_NAME_get_text_by_NID(X509_get_issuer_name(x), NID_commonName,
	    iss, sizeof(iss));
	snprintf(buf, len, "CN=%s issuer CN=%s", sub, iss);
}

void
tls_error_string(SSL *ssl, unsigned long err, char *buf, size_t len)
{
	char e[256] = "";
	long v;
	unsigned long more;

	if (err != 0)
		ERR_error_string_n(err, e, sizeof(e));
	while ((more = ERR_get_error()) != 0 && e[0] == '\0')
		ERR_error_string_n(more, e, sizeof(e));
	if (ssl != NULL && (v = SSL_get_verify_result(ssl)) != X509_V_OK)
		snprintf(buf, len, "%s%scertificate verify: %s", e,
		    e[0] ? "; " : "", X509_verify_cert_error_string(v));
	else
		snprintf(buf, len, "%s", e[0] ? e : "connection closed");
}
