/* SPDX-License-Identifier: ISC */
/* Strict base64 around OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "sk_b64.h"

static int
sk_b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

size_t
sk_b64_enclen(size_t n)
{
	return (n + 2) / 3 * 4;
}

char *
sk_b64_encode(const uint8_t *buf, size_t n)
{
	char *out;

	if (n > INT_MAX / 4 * 3 - 3)
		return NULL;
	if ((out = malloc(sk_b64_enclen(n) + 1)) == NULL)
		return NULL;
	if (n == 0)
		out[0] = '\0';
	else
		EVP_EncodeBlock((unsigned char *)out, buf, (int)n);
	return out;
}

int
sk_b64_decode(const char *text, size_t len, uint8_t **out, size_t *outlen,
    char *why, size_t whylen)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t i, pad = 0, n;
	uint8_t *buf;
	int v, got;

	*out = NULL;
	*outlen = 0;
	if (len == 0)
		return 0;
	if (len % 4 != 0 || len > (size_t)INT_MAX) {
		snprintf(why, whylen, "base64 length %zu not a multiple of 4",
		    len);
		return -1;
	}
	if (t[len - 1] == '=')
		pad = t[len - 2] == '=' ? 2 : 1;
	for (i = 0; i < len - pad; i++) {
		if (sk_b64_val(t[i]) < 0) {
			snprintf(why, whylen, "invalid base64 character at "
			    "offset %zu", i);
			return -1;
		}
	}
	/* Bits the padding leaves unused must be zero (canonical form). */
	v = sk_b64_val(t[len - pad - 1]);
	if ((pad == 1 && (v & 0x03)) || (pad == 2 && (v & 0x0f))) {
		snprintf(why, whylen, "non-canonical base64 padding");
		return -1;
	}
	n = len / 4 * 3;
	/* EVP_DecodeBlock writes whole groups: room for n bytes. */
	if ((buf = malloc(n)) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	got = EVP_DecodeBlock(buf, t, (int)len);
	if (got < 0 || (size_t)got != n) {
		free(buf);
		snprintf(why, whylen, "invalid base64");
		return -1;
	}
	*outlen = n - pad;
	if (*outlen == 0) {
		free(buf);
		return 0;
	}
	*out = buf;
	return 0;
}
