// SPDX-License-Identifier: GPL-2.0
/*
 * Chunk reader for /dev/pbtrace (see reader.h). The kernel does the state
 * changes; we only ask for the oldest sealed chunk and give it back, and read
 * counters straight from the read-only mapping.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader.h"

static void set_err(char *err, size_t errlen, const char *fmt, int e,
		    uint32_t session_id, uint32_t buffer)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, session_id, buffer, strerror(e));
}

static int open_device(char *err, size_t errlen)
{
	int fd = open(PBT_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	int e = errno;

	if (fd >= 0)
		return fd;
	if (e == ENOENT || e == ENODEV || e == ENXIO)
		snprintf(err, errlen,
			 "pbtrace module not loaded: %s missing (%s); run 'modprobe pbtrace'",
			 PBT_DEVICE_PATH, strerror(e));
	else if (e == EACCES || e == EPERM)
		snprintf(err, errlen,
			 "permission denied: need CAP_SYS_ADMIN to open %s (%s)",
			 PBT_DEVICE_PATH, strerror(e));
	else
		snprintf(err, errlen, "cannot open %s: %s", PBT_DEVICE_PATH,
			 strerror(e));
	return -e;
}

static int attach(struct pbt_reader *r, struct pbtrace_attach *at, char *err,
		  size_t errlen)
{
	int e;

	if (ioctl(r->fd, PBTRACE_IOC_ATTACH, at) == 0)
		return 0;
	e = errno;
	if (e == ENOENT)
		set_err(err, errlen,
			"no such session: id %u (buffer %u): %s; list sessions with 'tracectl status'",
			e, r->session_id, r->buffer);
	else if (e == EINVAL)
		set_err(err, errlen,
			"session %u has no buffer %u (%s)", e, r->session_id,
			r->buffer);
	else if (e == EPERM || e == EACCES)
		set_err(err, errlen,
			"permission denied attaching to session %u buffer %u: %s; need CAP_SYS_ADMIN",
			e, r->session_id, r->buffer);
	else
		set_err(err, errlen, "attach to session %u buffer %u failed: %s",
			e, r->session_id, r->buffer);
	return -e;
}

static int check_header(const struct pbt_reader *r, char *err, size_t errlen)
{
	const struct pbtrace_mmap_header *h = pbt_reader_header(r);

	if (h->magic != PBTRACE_MMAP_MAGIC || h->version != PBTRACE_MMAP_VERSION) {
		snprintf(err, errlen,
			 "mapping has magic 0x%x version %u, expected 0x%x version %u: module and tools do not match",
			 h->magic, h->version, PBTRACE_MMAP_MAGIC,
			 PBTRACE_MMAP_VERSION);
		return -EPROTO;
	}
	if (h->mmap_size != r->map_size) {
		snprintf(err, errlen,
			 "mapping size %llu differs from attach size %zu",
			 (unsigned long long)h->mmap_size, r->map_size);
		return -EPROTO;
	}
	return 0;
}

int pbt_reader_open(struct pbt_reader *r, uint32_t session_id, uint32_t buffer,
		    char *err, size_t errlen)
{
	struct pbtrace_attach at = { .session_id = session_id, .buffer = buffer };
	void *map;
	int ret;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->session_id = session_id;
	r->buffer = buffer;
	if (!err || !errlen) {
		static char dummy[2];

		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';

	ret = open_device(err, errlen);
	if (ret < 0)
		return ret;
	r->fd = ret;

	ret = attach(r, &at, err, errlen);
	if (ret < 0)
		goto fail;

	map = mmap(NULL, at.mmap_size, PROT_READ, MAP_SHARED, r->fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		snprintf(err, errlen, "mmap of session %u buffer %u (%llu bytes) failed: %s",
			 session_id, buffer, (unsigned long long)at.mmap_size,
			 strerror(-ret));
		goto fail;
	}
	r->map = map;
	r->map_size = at.mmap_size;

	ret = check_header(r, err, errlen);
	if (ret < 0)
		goto fail;
	return 0;

fail:
	pbt_reader_close(r);
	return ret;
}

const struct pbtrace_mmap_header *pbt_reader_header(const struct pbt_reader *r)
{
	return (const struct pbtrace_mmap_header *)r->map;
}

int pbt_reader_next(struct pbt_reader *r, struct pbtrace_chunk_req *req,
		    const uint8_t **data)
{
	memset(req, 0, sizeof(*req));
	if (ioctl(r->fd, PBTRACE_IOC_GET_CHUNK, req) < 0)
		return -errno;
	/* The kernel is trusted, but a bad offset must not become a wild read. */
	if (req->offset > r->map_size || req->len > r->map_size - req->offset)
		return -EPROTO;
	*data = r->map + req->offset;
	return 0;
}

int pbt_reader_put(struct pbt_reader *r, const struct pbtrace_chunk_req *req)
{
	struct pbtrace_chunk_req put = *req;

	if (ioctl(r->fd, PBTRACE_IOC_PUT_CHUNK, &put) < 0)
		return -errno;
	return 0;
}

int pbt_reader_read_remote(struct pbt_reader *r, void *buf, size_t size,
			   size_t *len, int *eof)
{
	struct pbtrace_remote_read rr = {
		.buf = (uintptr_t)buf,
		.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
	};

	*len = 0;
	*eof = 0;
	if (size < PBTRACE_REMOTE_READ_MIN)
		return -EINVAL;
	if (ioctl(r->fd, PBTRACE_IOC_READ_REMOTE, &rr) < 0)
		return errno == EINVAL ? -ENOTTY : -errno;
	/* Trusted, but a length past the buffer must not become a wild write
	 * to the file. */
	if (rr.len > rr.size)
		return -EPROTO;
	*len = rr.len;
	*eof = !!(rr.flags & PBTRACE_REMOTE_EOF);
	return 0;
}

int pbt_reader_mapping_path(struct pbt_reader *r, uint32_t major,
			    uint32_t minor, uint64_t ino, char *buf,
			    size_t size)
{
	struct pbtrace_mapping_path mp = {
		.ino = ino, .dev_major = major, .dev_minor = minor,
		.buf = (uintptr_t)buf,
		.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
	};

	if (!size)
		return -EINVAL;
	if (ioctl(r->fd, PBTRACE_IOC_MAPPING_PATH, &mp) < 0)
		return errno == EINVAL ? -ENOTTY : -errno;
	if (mp.len >= size || memchr(buf, '\0', mp.len))
		return -EPROTO;
	buf[mp.len] = '\0';
	return 0;
}

int pbt_reader_fd(const struct pbt_reader *r)
{
	return r->fd;
}

void pbt_reader_stats(const struct pbt_reader *r, int cpu,
		      struct pbtrace_cpu_stats *out)
{
	const struct pbtrace_mmap_header *h = pbt_reader_header(r);
	const struct pbtrace_cpu_stats *s;

	memset(out, 0, sizeof(*out));
	if (!r->map || cpu < 0 || (uint32_t)cpu >= h->nr_cpus)
		return;
	s = (const void *)(r->map + h->stats_offset);
	/* The writer updates these on its own CPU; a torn read of one counter
	 * cannot happen on 64-bit, and each is monotonic. */
	memcpy(out, &s[cpu], sizeof(*out));
}

void pbt_reader_close(struct pbt_reader *r)
{
	if (r->map)
		munmap((void *)r->map, r->map_size);
	if (r->fd >= 0)
		close(r->fd);
	r->map = NULL;
	r->map_size = 0;
	r->fd = -1;
}
