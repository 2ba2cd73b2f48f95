// SPDX-License-Identifier: GPL-2.0
/*
 * ustar writer (tar.h). The header's layout, from the standard:
 *
 *   name 100, mode 8, uid 8, gid 8, size 12, mtime 12, chksum 8,
 *   typeflag 1, linkname 100, magic 6 ("ustar\0"), version 2 ("00"),
 *   uname 32, gname 32, devmajor 8, devminor 8, prefix 155, pad 12
 *
 * Numbers are octal, zero-padded, ending in a NUL; chksum is the sum of
 * the header's bytes with chksum itself taken as eight spaces, written as
 * six digits, a NUL and a space.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tar.h"

#define OFF_NAME 0
#define OFF_MODE 100
#define OFF_UID 108
#define OFF_GID 116
#define OFF_SIZE 124
#define OFF_MTIME 136
#define OFF_CHKSUM 148
#define OFF_TYPEFLAG 156
#define OFF_MAGIC 257
#define OFF_VERSION 263

/* @v in the @len bytes at @p: octal digits and a NUL; 0 if it fits. */
static int octal(uint8_t *p, size_t len, uint64_t v)
{
	size_t i = len - 1;

	p[i] = '\0';
	while (i--) {
		p[i] = (uint8_t)('0' + (v & 7));
		v >>= 3;
	}
	return v ? -1 : 0;
}

/* Too large for 11 octal digits (8 GiB): GNU's base-256, the first byte
 * 0x80, the rest the value big-endian. */
static void base256(uint8_t *p, size_t len, uint64_t v)
{
	size_t i = len;

	while (i-- > 1) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
	p[0] = 0x80;
}

int pbt_tar_header(uint8_t hdr[PBT_TAR_BLOCK], const char *name,
		   uint64_t size, uint64_t mtime)
{
	size_t n = strlen(name), i;
	unsigned int sum = 0;

	if (!n || n > PBT_TAR_NAME_MAX || strchr(name, '/'))
		return -1;
	memset(hdr, 0, PBT_TAR_BLOCK);
	memcpy(hdr + OFF_NAME, name, n);	/* a NUL only if shorter */
	octal(hdr + OFF_MODE, 8, 0644);
	octal(hdr + OFF_UID, 8, 0);
	octal(hdr + OFF_GID, 8, 0);
	if (octal(hdr + OFF_SIZE, 12, size))
		base256(hdr + OFF_SIZE, 12, size);
	if (octal(hdr + OFF_MTIME, 12, mtime))
		octal(hdr + OFF_MTIME, 12, 0);
	hdr[OFF_TYPEFLAG] = '0';
	memcpy(hdr + OFF_MAGIC, "ustar", 6);
	memcpy(hdr + OFF_VERSION, "00", 2);
	memset(hdr + OFF_CHKSUM, ' ', 8);
	for (i = 0; i < PBT_TAR_BLOCK; i++)
		sum += hdr[i];
	octal(hdr + OFF_CHKSUM, 7, sum);
	hdr[OFF_CHKSUM + 7] = ' ';
	return 0;
}

static int put(struct pbt_tar *t, const void *p, size_t n)
{
	const uint8_t *b = p;
	ssize_t w;

	while (n) {
		w = write(t->fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(t->err, sizeof(t->err), "writing at byte %llu: %s",
				 (unsigned long long)t->off,
				 w < 0 ? strerror(errno) : "nothing written");
			return -1;
		}
		b += w;
		n -= (size_t)w;
		t->off += (uint64_t)w;
	}
	return 0;
}

static int zeros(struct pbt_tar *t, size_t n)
{
	static const uint8_t z[PBT_TAR_BLOCK];
	size_t k;

	while (n) {
		k = n < sizeof(z) ? n : sizeof(z);
		if (put(t, z, k))
			return -1;
		n -= k;
	}
	return 0;
}

int pbt_tar_begin(struct pbt_tar *t, const char *name, uint64_t size,
		  uint64_t mtime)
{
	uint8_t hdr[PBT_TAR_BLOCK];

	if (t->left) {
		snprintf(t->err, sizeof(t->err), "member before '%s' is short by %llu bytes",
			 name, (unsigned long long)t->left);
		return -1;
	}
	if (pbt_tar_header(hdr, name, size, mtime)) {
		snprintf(t->err, sizeof(t->err),
			 "'%s' cannot be a ustar member name (1..%d bytes, no '/')",
			 name, PBT_TAR_NAME_MAX);
		return -1;
	}
	t->left = size;
	return put(t, hdr, sizeof(hdr));
}

int pbt_tar_write(struct pbt_tar *t, const void *p, size_t n)
{
	if (n > t->left) {
		snprintf(t->err, sizeof(t->err), "member longer than its header says");
		return -1;
	}
	t->left -= n;
	return put(t, p, n);
}

int pbt_tar_end(struct pbt_tar *t)
{
	if (t->left) {
		snprintf(t->err, sizeof(t->err), "member short by %llu bytes",
			 (unsigned long long)t->left);
		return -1;
	}
	return zeros(t, (PBT_TAR_BLOCK - t->off % PBT_TAR_BLOCK) % PBT_TAR_BLOCK);
}

int pbt_tar_finish(struct pbt_tar *t)
{
	if (t->left || t->off % PBT_TAR_BLOCK) {
		snprintf(t->err, sizeof(t->err), "last member not ended");
		return -1;
	}
	if (zeros(t, 2 * PBT_TAR_BLOCK))
		return -1;
	return zeros(t, (PBT_TAR_RECORD - t->off % PBT_TAR_RECORD) % PBT_TAR_RECORD);
}
