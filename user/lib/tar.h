/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A POSIX ustar archive writer (IEEE Std 1003.1, pax "ustar Interchange
 * Format"), just enough for tracectl merge: regular files, mode 0644,
 * owned by 0:0, names up to 100 bytes. Sizes of 8 GiB and more are stored
 * base-256, as GNU tar does (and trace_processor's reader reads).
 */
#ifndef PBT_TAR_H
#define PBT_TAR_H

#include <stddef.h>
#include <stdint.h>

#define PBT_TAR_BLOCK 512
#define PBT_TAR_RECORD (20 * PBT_TAR_BLOCK)	/* tar's default blocking */
#define PBT_TAR_NAME_MAX 100

/*
 * The header block of a member @name of @size bytes modified at @mtime
 * (seconds since the epoch): 0, or -1 if the name is empty, longer than
 * PBT_TAR_NAME_MAX or holds a '/'.
 */
int pbt_tar_header(uint8_t hdr[PBT_TAR_BLOCK], const char *name,
		   uint64_t size, uint64_t mtime);

struct pbt_tar {
	int fd;
	uint64_t off;		/* bytes written */
	uint64_t left;		/* of the member being written */
	char err[256];		/* what failed */
};

/* Every call: 0, or -1 with t->err saying what failed. */
int pbt_tar_begin(struct pbt_tar *t, const char *name, uint64_t size,
		  uint64_t mtime);
int pbt_tar_write(struct pbt_tar *t, const void *p, size_t n);
/* Pads the member to a block; it must have had all its bytes. */
int pbt_tar_end(struct pbt_tar *t);
/* The two zero blocks that end an archive, padded to PBT_TAR_RECORD. */
int pbt_tar_finish(struct pbt_tar *t);

#endif
