// SPDX-License-Identifier: GPL-2.0
/*
 * Trace file output (see writer.h). The one rule: the file always ends at
 * a record boundary, whatever fails, so what is on disk decodes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer.h"

#define TRACE_PACKET_TAG 0x0A	/* Trace.packet: field 1, length-delimited */

int pbt_record_header(const uint8_t *p, size_t n, uint64_t *payload)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return 0;
	if (p[0] != TRACE_PACKET_TAG)
		return -1;
	for (i = 1; i < n && i <= 10; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * (i - 1));
		if (!(p[i] & 0x80)) {
			*payload = v;
			return (int)i + 1;
		}
	}
	return i > 10 ? -1 : 0;
}

size_t pbt_records_prefix(const uint8_t *buf, size_t len, int *bad)
{
	size_t off = 0;

	*bad = 0;
	while (off < len) {
		uint64_t payload;
		int h = pbt_record_header(buf + off, len - off, &payload);

		if (h < 0)
			*bad = 1;
		if (h <= 0 || payload > len - off - (size_t)h)
			break;
		off += (size_t)h + payload;
	}
	return off;
}

/* Walk the records of an existing file; returns the offset just past the
 * last whole record, or -EBADMSG if the file is not a trace. */
static long long scan_file(int fd, uint64_t size)
{
	uint64_t off = 0;

	while (off < size) {
		uint8_t hdr[11];
		uint64_t payload;
		ssize_t n = pread(fd, hdr, sizeof(hdr), (off_t)off);
		int h;

		if (n < 0)
			return -errno;
		h = pbt_record_header(hdr, (size_t)n, &payload);
		if (h < 0)
			return -EBADMSG;
		if (h == 0 || payload > size - off - (uint64_t)h)
			break;
		off += (uint64_t)h + payload;
	}
	return (long long)off;
}

static int open_existing(struct pbt_writer *w, char *err, size_t errlen)
{
	struct stat st;
	long long end;

	if (fstat(w->fd, &st) < 0)
		return -errno;
	end = scan_file(w->fd, (uint64_t)st.st_size);
	if (end == -EBADMSG) {
		snprintf(err, errlen,
			 "%s exists and is not a trace file: refusing to append to it; move it away or pick another output path",
			 w->path);
		return -EBADMSG;
	}
	if (end < 0) {
		snprintf(err, errlen, "cannot read %s: %s", w->path,
			 strerror((int)-end));
		return (int)end;
	}
	if ((uint64_t)end < (uint64_t)st.st_size) {
		if (ftruncate(w->fd, (off_t)end) < 0)
			return -errno;
		w->repaired = (uint64_t)st.st_size - (uint64_t)end;
	}
	w->size = w->start_size = (uint64_t)end;
	return 0;
}

int pbt_writer_open(struct pbt_writer *w, const char *path, int append,
		    uint64_t limit, char *err, size_t errlen)
{
	/* Readable too: appending scans for a torn record, and a restart
	 * looks for a chunk it already wrote. */
	int flags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC;
	int ret;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->limit = limit;
	w->path = strdup(path);
	if (!w->path)
		return -ENOMEM;
	if (!append)
		flags |= O_TRUNC;
	w->fd = open(path, flags, 0600);
	if (w->fd < 0) {
		ret = -errno;
		snprintf(err, errlen,
			 "cannot open output %s: %s; check the directory exists and is writable by traced",
			 path, strerror(-ret));
		pbt_writer_close(w);
		return ret;
	}
	if (!append)
		return 0;
	ret = open_existing(w, err, errlen);
	if (ret < 0)
		pbt_writer_close(w);
	return ret;
}

int pbt_writer_write(struct pbt_writer *w, const void *buf, size_t len,
		     char *err, size_t errlen)
{
	const uint8_t *p = buf;
	size_t done = 0;

	if (w->limit && w->size + len > w->limit)
		return -EFBIG;
	while (done < len) {
		ssize_t n = write(w->fd, p + done, len - done);
		int e = errno;

		if (n < 0 && e == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				e = ENOSPC;
			/* Cut the torn record so the file still decodes. */
			if (done && ftruncate(w->fd, (off_t)w->size) < 0)
				e = errno;
			snprintf(err, errlen,
				 "writing %s failed after %llu bytes: %s",
				 w->path, (unsigned long long)w->size,
				 strerror(e));
			return -e;
		}
		done += (size_t)n;
	}
	w->size += len;
	w->written += len;
	return 0;
}

int pbt_writer_tail_contains(struct pbt_writer *w, const void *buf,
			     size_t len, size_t window)
{
	uint64_t from;
	uint8_t *tail;
	ssize_t n;
	int found;

	if (!len || w->size < len)
		return 0;
	if (window < len)
		window = len;
	if (window > w->size)
		window = (size_t)w->size;
	from = w->size - window;
	tail = malloc(window);
	if (!tail)
		return 0;
	n = pread(w->fd, tail, window, (off_t)from);
	found = n == (ssize_t)window && memmem(tail, window, buf, len);
	free(tail);
	return found;
}

int pbt_writer_sync(struct pbt_writer *w)
{
	if (w->fd >= 0 && fsync(w->fd) < 0)
		return -errno;
	return 0;
}

void pbt_writer_close(struct pbt_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	free(w->path);
	w->path = NULL;
}
