/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The relay's proofs computed with OpenSSL's HMAC-SHA256, not the
 * kernel's, so the host's checks are judged by an implementation of their
 * own (docs/relay-protocol.md, "Keys"). For relay_many and relay_fleet,
 * which link -lcrypto.
 */
#ifndef PBTRACE_RELAY_AUTH_H
#define PBTRACE_RELAY_AUTH_H

#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

static inline void hmac(const uint8_t *key, const void *data, size_t n,
			uint8_t *mac)
{
	unsigned int len = 32;

	HMAC(EVP_sha256(), key, 32, data, n, mac, &len);
}

/* HMAC(key, label || a (32) || b (32) || c (@c_len)). */
static inline void proof(const uint8_t *key, const char *label,
			 const uint8_t *a, const uint8_t *b, const uint8_t *c,
			 size_t c_len, uint8_t *mac)
{
	uint8_t buf[1024];
	size_t n = strlen(label);

	memcpy(buf, label, n);
	memcpy(buf + n, a, 32);
	memcpy(buf + n + 32, b, 32);
	if (c_len)
		memcpy(buf + n + 64, c, c_len);
	hmac(key, buf, n + 64 + c_len, mac);
}

#endif
