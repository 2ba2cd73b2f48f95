/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Relay frames written by hand from docs/relay-protocol.md, for the test
 * peers (relay_hostile.c, relay_fake.c). They do not use kmod/core/frame.c
 * on purpose: a hostile peer must be able to write what that encoder never
 * would. Every integer is little endian; a frame is a 16-byte header, then
 * its payload.
 */
#ifndef PBTRACE_RELAY_WIRE_H
#define PBTRACE_RELAY_WIRE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline size_t put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
	return 4;
}

static inline uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Magic "PBTR", version 2, @type, no flags, payload length, sequence. */
static inline size_t header(uint8_t *p, uint8_t type, uint32_t len,
			    uint32_t seq)
{
	memcpy(p, "PBTR", 4);
	p[4] = 2;
	p[5] = type;
	p[6] = p[7] = 0;
	put32(p + 8, len);
	put32(p + 12, seq);
	return 16;
}

/* A length byte, then the bytes: the protocol's string. */
static inline size_t str(uint8_t *p, const char *s)
{
	p[0] = (uint8_t)strlen(s);
	memcpy(p + 1, s, p[0]);
	return 1 + p[0];
}

/*
 * Relay @i's key, the fleet's rule (relay_many, relay_fleet, and the
 * machines files their tests write): @hex is 56 hex digits, then @i as 8
 * more; or 64 digits, one key for every relay. 0, or -1 if @hex is not.
 */
static inline int relay_fleet_key(const char *hex, uint32_t i, uint8_t key[32])
{
	size_t n = strlen(hex), k;
	unsigned int v;

	if (n != 56 && n != 64)
		return -1;
	for (k = 0; k < n / 2; k++) {
		if (sscanf(hex + 2 * k, "%2x", &v) != 1)
			return -1;
		key[k] = (uint8_t)v;
	}
	if (n == 56) {		/* big-endian, as the digits read */
		key[28] = (uint8_t)(i >> 24);
		key[29] = (uint8_t)(i >> 16);
		key[30] = (uint8_t)(i >> 8);
		key[31] = (uint8_t)i;
	}
	return 0;
}

#endif
