/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the unit tests that hand bytes to protoc share: files in and out,
 * and a hex dump into the TAP log.
 */
#ifndef _PBT_UNIT_BLOB_H
#define _PBT_UNIT_BLOB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct blob {
	uint8_t *p;
	size_t n;
};

static inline void diag_hex(const char *what, const uint8_t *p, size_t n)
{
	size_t i;

	printf("# %s (%zu bytes):", what, n);
	for (i = 0; i < n; i++)
		printf("%s%02x", i % 32 ? " " : "\n#   ", p[i]);
	printf("\n");
}

static inline int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ret;

	if (!f)
		return -1;
	ret = fwrite(p, 1, n, f) == n ? 0 : -1;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* Read a whole file, NUL-terminated so text can be used as a string. */
static inline int read_file(const char *path, struct blob *b)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096;

	b->n = 0;
	b->p = NULL;
	if (!f)
		return -1;
	b->p = malloc(cap);
	while (b->p) {
		b->n += fread(b->p + b->n, 1, cap - b->n - 1, f);
		if (b->n < cap - 1)
			break;
		cap *= 2;
		b->p = realloc(b->p, cap);
	}
	fclose(f);
	if (!b->p)
		return -1;
	b->p[b->n] = 0;
	return 0;
}

#endif /* _PBT_UNIT_BLOB_H */
