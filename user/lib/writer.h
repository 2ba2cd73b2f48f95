/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace file output. A trace file is a sequence of Trace.packet records
 * (byte 0x0A, varint length, packet), so appending whole records always
 * leaves a valid file. The writer only ever writes whole records: a record
 * that would pass max_file_size_bytes is refused, and a write that fails
 * half way (disk full) is cut back to the previous record boundary.
 */
#ifndef PBT_WRITER_H
#define PBT_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct pbt_writer {
	int fd;			/* -1 when closed */
	uint64_t size;		/* file size: always at a record boundary */
	uint64_t limit;		/* max file size in bytes, 0 for none */
	uint64_t written;	/* bytes this writer appended */
	uint64_t start_size;	/* size when opened (non-zero on reattach) */
	uint64_t repaired;	/* bytes of a torn last record cut at open */
	char *path;
};

/*
 * Open @path for writing. @append keeps what is there (a restarted traced
 * continuing a session): the file must hold Trace.packet records, a torn
 * last record is cut off. Otherwise the file is created or truncated.
 * Returns 0 or -errno with @err saying what failed and what to do.
 */
int pbt_writer_open(struct pbt_writer *w, const char *path, int append,
		    uint64_t limit, char *err, size_t errlen);

/*
 * Append @len bytes made of whole records. Returns 0, -EFBIG when the file
 * would pass its limit (nothing written), or -errno of a failed write
 * (file cut back to where it was; @err explains).
 */
int pbt_writer_write(struct pbt_writer *w, const void *buf, size_t len,
		     char *err, size_t errlen);

/* Does the last @window bytes of the file contain exactly these bytes?
 * Used after a restart to skip a chunk already written before the crash. */
int pbt_writer_tail_contains(struct pbt_writer *w, const void *buf,
			     size_t len, size_t window);

int pbt_writer_sync(struct pbt_writer *w);
void pbt_writer_close(struct pbt_writer *w);

/*
 * Parse a record header at @p (@n bytes available). Returns the header
 * length (tag + varint) and sets *payload, 0 if more bytes are needed, -1
 * if this is not a Trace.packet record.
 */
int pbt_record_header(const uint8_t *p, size_t n, uint64_t *payload);

/* Length of the longest prefix of @buf made of whole records; *bad is set
 * when a byte that cannot start a record was met. */
size_t pbt_records_prefix(const uint8_t *buf, size_t len, int *bad);

#endif /* PBT_WRITER_H */
