/* SPDX-License-Identifier: ISC */
/*
 * Base64 (RFC 4648, standard alphabet, padded) for queue bytes in the
 * socket records.  OpenSSL does the coding; the decoder first checks
 * the text strictly itself (length a multiple of 4, alphabet, padding
 * only at the end, unused bits zero), since EVP_DecodeBlock accepts
 * whitespace and does not report the padding.
 */
#ifndef MIGR_SK_B64_H
#define MIGR_SK_B64_H

#include <stddef.h>
#include <stdint.h>

/* Encoded length of n bytes, without the terminating NUL. */
size_t	sk_b64_enclen(size_t n);
/* NUL-terminated text in a new buffer; NULL on allocation failure. */
char	*sk_b64_encode(const uint8_t *buf, size_t n);
/*
 * Decode text of length len into a new buffer (*out, NULL when the
 * result is empty).  -1 with a reason in why when the text is not
 * strict base64.
 */
int	 sk_b64_decode(const char *text, size_t len, uint8_t **out,
	    size_t *outlen, char *why, size_t whylen);

#endif
