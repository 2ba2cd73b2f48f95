// SPDX-License-Identifier: GPL-2.0
/* traced: kernel buffers and relayed machines' queues, copied to the file. */
#include "traced.h"

/* --- kernel buffers ---------------------------------------------------- */

/* pbt_path_fn: the kernel pinned the file a sample of this buffer named. */
static int kernel_path(void *ctx, uint32_t major, uint32_t minor,
		       uint64_t ino, char *buf, size_t size)
{
	struct buffer *b = ctx;
	int ret = pbt_reader_mapping_path(&b->rd, major, minor, ino, buf, size);

	if (ret && ret != -ENOENT && !b->path_warned) {
		b->path_warned = 1;
		logmsg(LOG_WARNING,
		       "buffer %u: asking the kernel for the path of a sampled mapping: %s; such mappings keep their \"[inode ... dev ...]\" names",
		       b->rd.buffer, strerror(-ret));
	}
	return ret;
}

/*
 * A chunk with stack samples names its files' mappings by inode and
 * device (docs/stacks.md): their paths go in before it is written.
 * Returns what to write: @data, or *@mem (free it).
 */
static const uint8_t *with_paths(struct session *s, struct buffer *b,
				 const uint8_t *data, size_t *len,
				 uint8_t **mem)
{
	size_t out_len;
	int ret;

	*mem = NULL;
	if (!s->stacks)
		return data;
	ret = pbt_mapping_paths_rewrite(data, *len, kernel_path, b, mem,
					&out_len, &b->paths);
	if (ret < 0)
		logmsg(LOG_WARNING,
		       "session %u buffer %u: chunk of %zu bytes: cannot put its mappings' paths in (not whole records, or out of memory); written as it is",
		       s->id, b->rd.buffer, *len);
	if (ret != 1)
		return data;
	*len = out_len;
	return *mem;
}

/* Copy one sealed chunk, unless it is the one a killed traced wrote but
 * never gave back (the kernel hands it out again). */
static void copy_chunk(struct session *s, struct buffer *b,
		       const struct pbtrace_chunk_req *req, const uint8_t *data)
{
	size_t len = req->len;
	uint8_t *mem;

	/* Before the check: the file holds the chunk with its paths. */
	data = with_paths(s, b, data, &len, &mem);
	if (b->check_dup) {
		b->check_dup = 0;
		if (pbt_writer_tail_contains(&s->w, data, len, DUP_WINDOW)) {
			logmsg(LOG_INFO,
			       "session %u: chunk %llu already in the file before the restart, not written twice",
			       s->id, (unsigned long long)req->seq);
			free(mem);
			return;
		}
	}
	if (emit_bytes(s, data, len, file_reserve(s)) == 0)
		b->bytes_read += req->len;
	else
		b->chunks_skipped++;
	free(mem);
}

/* Hand every sealed chunk of the buffer to the file. */
void drain_buffer(struct session *s, struct buffer *b)
{
	for (;;) {
		struct pbtrace_chunk_req req;
		const uint8_t *data;
		int ret;

		if (b->rd.fd < 0)
			return;
		ret = pbt_reader_next(&b->rd, &req, &data);
		if (ret == -EAGAIN)
			return;
		if (ret < 0) {
			logmsg(LOG_WARNING, "session %u buffer %u: reading chunk: %s",
			       s->id, b->rd.buffer, strerror(-ret));
			return;
		}
		copy_chunk(s, b, &req, data);
		ret = pbt_reader_put(&b->rd, &req);
		if (ret < 0)
			logmsg(LOG_WARNING, "session %u buffer %u: returning chunk: %s",
			       s->id, b->rd.buffer, strerror(-ret));
	}
}

/* The module predates READ_REMOTE, or reading failed: no remote data
 * from this buffer, said once. */
static void remote_off(struct session *s, struct buffer *b, int err)
{
	b->remote = 0;
	if (err == -ENOTTY)
		logmsg(LOG_WARNING,
		       "session %u buffer %u: pbtrace.ko has no READ_REMOTE (older module): relayed machines' data is not recorded",
		       s->id, b->rd.buffer);
	else
		logmsg(LOG_WARNING,
		       "session %u buffer %u: reading relayed machines' data: %s; not reading it any more",
		       s->id, b->rd.buffer, strerror(-err));
}

/* The batch in one write; near max_file_size_bytes record by record, so
 * what fits is kept and only the rest is refused. */
static void write_remote(struct session *s, struct buffer *b, size_t len)
{
	size_t off = 0, rec;
	uint64_t payload;
	int hdr;

	if (emit_bytes(s, remote_buf, len, file_reserve(s)) == 0) {
		b->remote_bytes += len;
		return;
	}
	while (!s->failed && off < len) {
		hdr = pbt_record_header(remote_buf + off, len - off, &payload);
		if (hdr <= 0)
			break;		/* cannot happen: checked whole */
		rec = (size_t)hdr + (size_t)payload;
		if (emit_bytes(s, remote_buf + off, rec, file_reserve(s)) == 0)
			b->remote_bytes += rec;
		else
			b->remote_skipped++;
		off += rec;
	}
}

/* Write one READ_REMOTE batch: whole records, verbatim. Returns 1 when
 * more may be queued, 0 when not now (or never: EOF). */
static int read_remote_once(struct session *s, struct buffer *b)
{
	size_t len, whole;
	int eof, bad = 0, ret;

	ret = pbt_reader_read_remote(&b->rd, remote_buf, PBTRACE_REMOTE_READ_MIN,
				     &len, &eof);
	if (ret == -EAGAIN || ret == -EINTR)
		return 0;
	if (ret < 0) {
		remote_off(s, b, ret);
		return 0;
	}
	whole = pbt_records_prefix(remote_buf, len, &bad);
	if (whole != len)
		logmsg(LOG_WARNING,
		       "session %u buffer %u: the kernel handed %zu bytes of relayed records, only %zu are whole records; the rest is dropped",
		       s->id, b->rd.buffer, len, whole);
	if (whole)
		write_remote(s, b, whole);
	if (eof)
		b->remote_eof = 1;
	return !eof && len;
}

void drain_remote(struct session *s, struct buffer *b)
{
	while (b->remote && !b->remote_eof && b->rd.fd >= 0 &&
	       read_remote_once(s, b))
		;
}

void drain_all(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nr_buffers; i++) {
		drain_buffer(s, &s->bufs[i]);
		drain_remote(s, &s->bufs[i]);
	}
}

int remote_pending(const struct session *s)
{
	size_t i;

	for (i = 0; i < s->nr_buffers; i++)
		if (s->bufs[i].remote && !s->bufs[i].remote_eof)
			return 1;
	return 0;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * At stop the relayed machines still send their last chunks: read until
 * every buffer says EOF. The kernel says it within 2 s of the stop even
 * for a machine that never answers; the wait here is bounded anyway, so a
 * misbehaving module cannot hold traced's only thread.
 */
void drain_remote_to_eof(struct session *s)
{
	uint64_t end = now_ns() + REMOTE_EOF_WAIT_MS * NS_PER_MS;
	size_t i;

	for (;;) {
		for (i = 0; i < s->nr_buffers; i++)
			drain_remote(s, &s->bufs[i]);
		if (!remote_pending(s) || s->failed)
			return;
		if (now_ns() >= end)
			break;
		sleep_ms(REMOTE_RETRY_MS);
	}
	logmsg(LOG_WARNING,
	       "session %u (%s): relayed machines did not finish within %d ms of the stop; what they send later is not in the file",
	       s->id, s->name, REMOTE_EOF_WAIT_MS);
}

/* Does this buffer take data from relayed machines (a list without only
 * "host")? An older module reports no list: then it does not. */
static int names_remote(const struct pbt_buffer_info *bi)
{
	size_t i;

	for (i = 0; i < bi->nr_machines; i++)
		if (strcmp(bi->machines[i], PBTRACE_MACHINE_HOST))
			return 1;
	return 0;
}

int attach_buffers(struct session *s, const struct pbt_session_info *in,
			  int appended)
{
	char err[256];
	size_t i;

	for (i = 0; i < in->nr_buffers; i++) {
		struct buffer *b = &s->bufs[i];

		if (pbt_reader_open(&b->rd, s->id, (uint32_t)i, err,
				    sizeof(err)) < 0) {
			logmsg(LOG_ERR, "session %u (%s): %s", s->id, s->name,
			       err);
			set_error(s, err);
			return -1;
		}
		b->check_dup = appended;
		b->remote = names_remote(&in->buffers[i]);
		s->nr_buffers = i + 1;
	}
	return 0;
}

/* Kernel counters of every buffer, for ftrace_stats and trace_stats. */
static size_t collect_stats(struct session *s, struct pbt_buffer_stats *bs,
			    struct pbtrace_cpu_stats **cpus)
{
	size_t i;
	int c;

	for (i = 0; i < s->nr_buffers; i++) {
		const struct pbt_reader *rd = &s->bufs[i].rd;
		const struct pbtrace_mmap_header *h = pbt_reader_header(rd);

		cpus[i] = calloc(h->nr_cpus ? h->nr_cpus : 1, sizeof(**cpus));
		if (!cpus[i])
			return i;
		for (c = 0; c < (int)h->nr_cpus; c++)
			pbt_reader_stats(rd, c, &cpus[i][c]);
		bs[i].buffer_size = (uint64_t)h->nr_cpus * h->chunks_per_cpu *
				    h->chunk_size;
		bs[i].bytes_read = s->bufs[i].bytes_read;
		bs[i].nr_cpus = h->nr_cpus;
		bs[i].cpus = cpus[i];
	}
	return i;
}

void write_kernel_stats(struct session *s, int end)
{
	struct pbt_buffer_stats bs[PBTRACE_MAX_BUFFERS] = { 0 };
	struct pbtrace_cpu_stats *cpus[PBTRACE_MAX_BUFFERS] = { 0 };
	struct pbt_rec r;
	size_t n = collect_stats(s, bs, cpus), i;

	emit(s, pbt_pkt_ftrace_stats(&s->seq, end, bs, n, &r), &r);
	if (end)
		emit(s, pbt_pkt_trace_stats(&s->seq, bs, n, s->flushes_requested,
					    s->flushes_succeeded, &r), &r);
	for (i = 0; i < n; i++)
		free(cpus[i]);
}

/* After a restart: what the kernel could not keep so far (the same
 * counters end up in trace_stats). */
void log_losses(struct session *s)
{
	uint64_t over = 0, disc = 0, lost = 0;
	struct pbtrace_cpu_stats st;
	size_t i;
	int c;

	for (i = 0; i < s->nr_buffers; i++) {
		const struct pbtrace_mmap_header *h = pbt_reader_header(&s->bufs[i].rd);

		for (c = 0; c < (int)h->nr_cpus; c++) {
			pbt_reader_stats(&s->bufs[i].rd, c, &st);
			over += st.chunks_overwritten;
			disc += st.chunks_discarded;
			lost += st.lost_full + st.lost_too_large + st.lost_nmi +
				st.lost_overwritten;
		}
	}
	logmsg(over || disc ? LOG_WARNING : LOG_INFO,
	       "session %u (%s): kernel counts so far: %llu chunks overwritten, %llu discarded, %llu events lost",
	       s->id, s->name, (unsigned long long)over,
	       (unsigned long long)disc, (unsigned long long)lost);
}

void flush_kernel(struct session *s)
{
	int ret = pbt_nl_session_cmd(nl, PBTRACE_CMD_FLUSH_SESSION, s->id);

	s->flushes_requested++;
	if (ret == 0)
		s->flushes_succeeded++;
	else
		logmsg(LOG_WARNING, "session %u: flush: %s", s->id,
		       pbt_nl_error(nl));
}
