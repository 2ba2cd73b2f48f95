/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chunk reader for /dev/pbtrace: attach to one buffer of a session, map it
 * read-only, hand out sealed chunks (already complete Trace.packet bytes)
 * and give them back. Used by traced and the data-plane tests.
 *
 *	struct pbt_reader r;
 *	char err[256];
 *	if (pbt_reader_open(&r, session_id, 0, err, sizeof(err)) < 0)
 *		die("%s", err);
 *	for (;;) {
 *		struct pbtrace_chunk_req req;
 *		const uint8_t *data;
 *		int ret = pbt_reader_next(&r, &req, &data);
 *		if (ret == -EAGAIN) { poll(pbt_reader_fd(&r), POLLIN); continue; }
 *		if (ret < 0) break;
 *		write(out, data, req.len);
 *		pbt_reader_put(&r, &req);
 *	}
 *	pbt_reader_close(&r);
 */
#ifndef PBT_READER_H
#define PBT_READER_H

#include <stddef.h>
#include <stdint.h>
#include <linux/pbtrace.h>

#define PBT_DEVICE_PATH "/dev/pbtrace"

struct pbt_reader {
	int fd;				/* /dev/pbtrace, -1 when closed */
	const uint8_t *map;		/* read-only mapping of the buffer */
	size_t map_size;
	uint32_t session_id;
	uint32_t buffer;
};

/*
 * Open /dev/pbtrace, attach to @buffer of @session_id and map it. Returns 0
 * or a negative errno; on error @err holds a message naming the cause and
 * what to do ("pbtrace module not loaded", "permission denied: need
 * CAP_SYS_ADMIN", "no such session", ...). @r is then closed (fd == -1).
 */
int pbt_reader_open(struct pbt_reader *r, uint32_t session_id, uint32_t buffer,
		    char *err, size_t errlen);

/* Header at offset 0 of the mapping (layout, chunk size, sequence ids). */
const struct pbtrace_mmap_header *pbt_reader_header(const struct pbt_reader *r);

/*
 * Take the oldest sealed chunk. Returns 0 and fills @req and @data (pointing
 * at req->len valid bytes inside the mapping), -EAGAIN when no chunk is
 * sealed, another negative errno on error. The bytes stay valid until
 * pbt_reader_put().
 */
int pbt_reader_next(struct pbt_reader *r, struct pbtrace_chunk_req *req,
		    const uint8_t **data);

/* Give a chunk back to the kernel once its bytes are written out. */
int pbt_reader_put(struct pbt_reader *r, const struct pbtrace_chunk_req *req);

/* The fd to poll: POLLIN when a chunk is sealed, POLLHUP when the session
 * is stopped and everything was read. */
int pbt_reader_fd(const struct pbt_reader *r);

/* Per-CPU counters of the buffer, read from the mapping (cpu < nr_cpus).
 * A CPU out of range reads as all zeros. */
void pbt_reader_stats(const struct pbt_reader *r, int cpu,
		      struct pbtrace_cpu_stats *out);

/*
 * What relayed machines sent for this buffer (PBTRACE_IOC_READ_REMOTE):
 * whole Trace.packet records, already stamped by the kernel, into @buf
 * (@size >= PBTRACE_REMOTE_READ_MIN). Returns 0 with *len bytes and
 * *eof set once nothing more will come, -EAGAIN when nothing is queued
 * yet, -ENOTTY when the module predates READ_REMOTE (it returns ENOTTY or
 * EINVAL for an unknown ioctl: both read as "no remote data"), another
 * -errno on error.
 */
int pbt_reader_read_remote(struct pbt_reader *r, void *buf, size_t size,
			   size_t *len, int *eof);

/*
 * The path of the file a stack sample of this buffer named
 * "[inode @ino dev @major:@minor]" (PBTRACE_IOC_MAPPING_PATH), into @buf
 * of @size bytes, NUL-terminated. Returns 0, -ENOENT when no sample of
 * this buffer pinned it, -ENOTTY from an older module, another -errno.
 */
int pbt_reader_mapping_path(struct pbt_reader *r, uint32_t major,
			    uint32_t minor, uint64_t ino, char *buf,
			    size_t size);

/* Unmap and close; chunks still held go back to the kernel as unread. */
void pbt_reader_close(struct pbt_reader *r);

#endif /* PBT_READER_H */
