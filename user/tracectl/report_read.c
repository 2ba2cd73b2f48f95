// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl report's reader: a finished trace file into the syscall view
 * (syscalls_view.h) in bounded memory, whatever the file's size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "syscalls_view.h"
#include "trace_file.h"

static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("tracectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Reading a finished file in bounded memory.
 *
 * A file holds each CPU's chunks in that CPU's time order, but the CPUs'
 * chunks interleave as traced happened to copy them (a --ring file holds
 * one CPU's whole ring, then the next one's), and enter and exit of one
 * call may be on two CPUs. So the file is read twice:
 *  1. the index, in REPORT_BLOCK reads: every record's offset and length,
 *     queued per stream (a machine's buffer's CPU: machine_id,
 *     trusted_packet_sequence_id and the bundle's cpu). What is not
 *     events (process tree, system_info, stats) and the threads' names
 *     (each bundle's task events) go to the view here, in file order, as
 *     a whole-file read gives them, before any line is printed (of a
 *     file of up to REPORT_INDEX_MAX chunks: past them, as the index goes);
 *  2. the streams' chunks, always the next one of the stream whose
 *     newest event is oldest. Each stream only moves forward in time, so
 *     every event older than every stream's newest is in the view already
 *     and can be paired and printed (sv_flush). What waits is at most
 *     REPORT_FLUSH events or twice a chunk per stream, whichever is more,
 *     and one chunk.
 * An index entry is 16 bytes per chunk; past REPORT_INDEX_MAX of them the
 * index is filled again as it drains. A stream whose next chunk is past
 * that point in the file cannot hold the others back: they go on, and
 * its events that come too late are counted (sv_counts.late) and said.
 */
#define REPORT_BLOCK (1 << 20)		/* index reads */
#define REPORT_RECORD_MAX (64u << 20)	/* largest record read */
#define REPORT_INDEX_MAX (2u << 20)	/* entries: 32 MiB */
#define REPORT_FLUSH 65536		/* events held before pairing */
#define REPORT_PROGRESS_MS 200

struct rs_entry {
	uint64_t off;			/* a record: tag, length, TracePacket */
	uint32_t len;
};

struct rs_stream {
	uint32_t machine, seq, cpu;
	bool has_seq, has_cpu;
	struct rs_entry *q;		/* chunks not read yet */
	size_t head, n, cap;
	uint64_t newest;		/* latest event fed */
	bool stalled;			/* its next chunk is past the index */
};

struct rs {
	const char *path;
	int fd;
	uint64_t size;
	struct sv_view *v;
	uint8_t *buf;			/* the index's read block */
	size_t buf_cap;
	uint64_t buf_off;		/* file offset of buf[0] */
	size_t buf_len;
	uint64_t scan;			/* the index's next record */
	bool scan_done;
	uint64_t bad_at;		/* no record from here on */
	bool bad, cut;
	struct rs_stream *streams;
	size_t nr_streams;
	size_t queued;			/* index entries in all queues */
	uint8_t *pkt;			/* a chunk being read */
	size_t pkt_cap;
	uint64_t read_bytes;		/* chunks read, for progress */
	bool progress;
	uint64_t shown_ms;
	int err;			/* 1 after a read error */
	size_t index_max;		/* entries the index may hold */
};

static void progress(struct rs *r, bool last)
{
	uint64_t now;
	double done;

	if (!r->progress)
		return;
	now = monotonic_ms();
	if (!last && now - r->shown_ms < REPORT_PROGRESS_MS)
		return;
	r->shown_ms = now;
	if (last) {
		fputs("\r\033[K", stderr);
		return;
	}
	/* both passes, as one: the index is the first half of the work */
	done = r->size ? (r->scan + r->read_bytes) / 2.0 / r->size : 1;
	fprintf(stderr, "\r\033[Kreport: %s: %s %.1f of %.1f MiB (%.0f%%)",
		r->path, r->scan_done ? "reading" : "indexing",
		(r->scan_done ? r->read_bytes : r->scan) / 1048576.0,
		r->size / 1048576.0, 100 * done);
}

static struct rs_stream *stream_of(struct rs *r, const struct tf_packet *pk,
				   bool has_cpu, uint32_t cpu)
{
	uint32_t m = pk->has_machine_id ? pk->machine_id : 0;
	struct rs_stream *s, *grow;
	size_t i;

	for (i = 0; i < r->nr_streams; i++) {
		s = &r->streams[i];
		if (s->machine == m && s->seq == pk->seq &&
		    s->has_seq == pk->has_seq && s->cpu == cpu &&
		    s->has_cpu == has_cpu)
			return s;
	}
	grow = realloc(r->streams, (r->nr_streams + 1) * sizeof(*grow));
	if (!grow)
		return NULL;
	r->streams = grow;
	s = &r->streams[r->nr_streams++];
	memset(s, 0, sizeof(*s));
	s->machine = m;
	s->seq = pk->seq;
	s->has_seq = pk->has_seq;
	s->cpu = cpu;
	s->has_cpu = has_cpu;
	sv_add_machine(r->v, m);	/* sections in file order */
	return s;
}

static bool enqueue(struct rs_stream *s, uint64_t off, size_t len)
{
	struct rs_entry *grow;

	if (s->head && s->head == s->n)
		s->head = s->n = 0;
	if (s->n == s->cap) {
		if (s->head) {		/* room at the front: use it */
			memmove(s->q, s->q + s->head,
				(s->n - s->head) * sizeof(*s->q));
			s->n -= s->head;
			s->head = 0;
		} else {
			size_t cap = s->cap ? s->cap * 2 : 64;

			grow = realloc(s->q, cap * sizeof(*grow));
			if (!grow)
				return false;
			s->q = grow;
			s->cap = cap;
		}
	}
	s->q[s->n].off = off;
	s->q[s->n++].len = (uint32_t)len;
	s->stalled = false;
	return true;
}

/* The record at r->scan in memory: 1, 0 at the end of the file, -1 when
 * it is no record (r->bad), too large, or cannot be read (r->err). *rec
 * and *rec_len are the whole record, *body and *len its TracePacket. */
static int scan_record(struct rs *r, const uint8_t **rec, size_t *rec_len,
		       const uint8_t **body, size_t *len)
{
	const uint8_t *p;
	bool larger;
	uint8_t *grow;
	size_t want;
	ssize_t got;
	int ret;

	for (;;) {
		larger = false;
		if (r->buf && r->scan >= r->buf_off &&
		    r->scan <= r->buf_off + r->buf_len) {
			p = r->buf + (r->scan - r->buf_off);
			*rec = p;
			ret = trace_next_record(&p, r->buf + r->buf_len, body, len);
			if (ret > 0) {
				*rec_len = (size_t)(p - *rec);
				r->scan = r->buf_off + (uint64_t)(p - r->buf);
				return 1;
			}
			if (ret < 0) {
				r->bad = true;
				r->bad_at = r->scan;
				return -1;
			}
			if (r->buf_off + r->buf_len >= r->size) {
				r->cut = r->scan < r->size;	/* inside one */
				return 0;
			}
			/* a record longer than the block it starts */
			larger = r->buf_len && r->scan == r->buf_off &&
				 r->buf_len == r->buf_cap;
		}
		want = larger ? 2 * r->buf_cap : REPORT_BLOCK;
		if (want > REPORT_RECORD_MAX + 16) {
			say("%s: the packet at byte %llu is larger than %u MiB, which report does not read; the calls before it are shown",
			     r->path, (unsigned long long)r->scan,
			     REPORT_RECORD_MAX >> 20);
			r->err = 1;
			return -1;
		}
		if (want > r->buf_cap) {
			grow = realloc(r->buf, want);
			if (!grow) {
				say("out of memory reading %s", r->path);
				r->err = 1;
				return -1;
			}
			r->buf = grow;
			r->buf_cap = want;
		}
		got = pread(r->fd, r->buf, r->buf_cap, (off_t)r->scan);
		if (got < 0) {
			say("cannot read %s: %s", r->path, strerror(errno));
			r->err = 1;
			return -1;
		}
		r->buf_off = r->scan;
		r->buf_len = (size_t)got;
		if (r->buf_off + r->buf_len > r->size)	/* it grew: not ours */
			r->buf_len = (size_t)(r->size - r->buf_off);
		if (!got) {		/* shorter than it was */
			r->cut = r->scan < r->size;
			return 0;
		}
	}
}

/* Index records until stream @until has a chunk queued (SIZE_MAX: as
 * far as the index's room goes), the end of the file, or bytes that are
 * no record. It may find new streams: r->streams moves. */
static void scan(struct rs *r, size_t until)
{
	const uint8_t *rec, *body;
	struct rs_stream *s;
	struct tf_packet pk;
	struct tf_error err;
	size_t rec_len, len;
	uint64_t at;
	uint32_t cpu;
	bool has_cpu;

	while (!r->scan_done && r->queued < r->index_max) {
		at = r->scan;
		if (scan_record(r, &rec, &rec_len, &body, &len) <= 0) {
			r->scan_done = true;
			break;
		}
		progress(r, false);
		if (!tf_packet(body, body + len, &pk, &err) ||
		    pk.data != TF_FTRACE_EVENTS ||
		    !tf_bundle_cpu(&pk, &has_cpu, &cpu, &err)) {
			/* not events (or unreadable: it says so): the view
			 * takes it now, in file order, as a whole-file read */
			sv_feed_packet(r->v, rec, rec_len, at);
			continue;
		}
		sv_feed_names(r->v, rec, rec_len);	/* the threads' names */
		s = stream_of(r, &pk, has_cpu, cpu);
		if (!s || !enqueue(s, at, rec_len)) {
			say("out of memory indexing %s", r->path);
			r->err = 1;
			r->scan_done = true;
			break;
		}
		r->queued++;
		if ((size_t)(s - r->streams) == until)
			break;
	}
}

/*
 * Whether stream s may still get events before the others go on: it has
 * a chunk queued, or the file goes on and the index has not filled up
 * looking for its next one. A stream stalled so holds nobody back: what
 * it has further on comes late (counted).
 */
static bool live(struct rs *r, const struct rs_stream *s)
{
	return s->head < s->n || (!r->scan_done && !s->stalled);
}

/* The stream whose newest event is oldest, among those with a chunk
 * queued; a stream whose queue is empty while the file goes on is
 * indexed on until it has one. */
static struct rs_stream *laggard(struct rs *r)
{
	size_t i, best = SIZE_MAX;
	struct rs_stream *s;

	for (i = 0; i < r->nr_streams; i++) {
		s = &r->streams[i];
		if (s->head == s->n && !r->scan_done) {
			scan(r, i);
			s = &r->streams[i];
			/* the index filled up before s had a chunk */
			s->stalled = s->head == s->n && !r->scan_done;
		}
		if (s->head == s->n)
			continue;
		if (best == SIZE_MAX || s->newest < r->streams[best].newest)
			best = i;
	}
	return best == SIZE_MAX ? NULL : &r->streams[best];
}

/* What every stream that may still get events has reached. */
static uint64_t horizon(struct rs *r)
{
	uint64_t h = UINT64_MAX;
	size_t i;

	for (i = 0; i < r->nr_streams; i++)
		if (live(r, &r->streams[i]) && r->streams[i].newest < h)
			h = r->streams[i].newest;
	return h;
}

static int read_chunk(struct rs *r, const struct rs_entry *e)
{
	uint8_t *grow;
	ssize_t got;

	if (e->len > r->pkt_cap) {
		grow = realloc(r->pkt, e->len);
		if (!grow) {
			say("out of memory reading %s", r->path);
			return -1;
		}
		r->pkt = grow;
		r->pkt_cap = e->len;
	}
	got = pread(r->fd, r->pkt, e->len, (off_t)e->off);
	if (got != (ssize_t)e->len) {
		say("cannot read %s at byte %llu: %s", r->path,
		     (unsigned long long)e->off,
		     got < 0 ? strerror(errno) : "the file got shorter");
		return -1;
	}
	return 0;
}

static void merge(struct rs *r, size_t hold)
{
	size_t flush_at = hold;
	struct rs_stream *s;
	struct rs_entry e;
	uint64_t newest;

	while (!r->err && (s = laggard(r))) {
		e = s->q[s->head++];
		r->queued--;
		if (read_chunk(r, &e)) {
			r->err = 1;
			break;
		}
		r->read_bytes += e.len;
		if (sv_feed_packet(r->v, r->pkt, e.len, e.off)) {
			newest = sv_last_ts(r->v);
			if (newest > s->newest)
				s->newest = newest;
		}
		progress(r, false);
		if (sv_queued(r->v) >= flush_at) {
			sv_flush(r->v, horizon(r));
			/* what could not go yet is the streams' last chunks:
			 * wait for as much again before the next pass */
			flush_at = 2 * sv_queued(r->v);
			if (flush_at < hold)
				flush_at = hold;
		}
	}
}

/* What went wrong in the file, after everything that could be shown. */
static int report_problems(struct rs *r)
{
	struct sv_counts c;
	const char *what;
	uint64_t off, at;
	int ret = r->err;

	sv_get_counts(r->v, &c);
	if (sv_first_bad(r->v, &off, &at, &what)) {
		say("%s: %llu packet%s could not be read and %s left out: the first, at byte %llu, breaks at byte %llu (%s)",
		    r->path, (unsigned long long)c.bad_packets,
		    c.bad_packets == 1 ? "" : "s",
		    c.bad_packets == 1 ? "its events are" : "their events are",
		    (unsigned long long)off, (unsigned long long)at, what);
		ret = 1;
	}
	if (r->bad) {
		say("%s is not a valid trace from byte %llu on (not a TracePacket): the calls before it are shown",
		     r->path, (unsigned long long)r->bad_at);
		ret = 1;
	} else if (r->cut) {
		say("warning: %s ends inside a packet at byte %llu (cut short, or still being written): shown up to there",
		     r->path, (unsigned long long)r->scan);
	}
	if (c.late)
		say("warning: %s: %llu events came after later ones of other CPUs were shown (chunks out of time order, or a stream past the index's %zu chunks): their calls may show as pending or continued",
		     r->path, (unsigned long long)c.late, r->index_max);
	return ret;
}

int sv_report_file(const struct sv_opts *o, const char *path, int fd,
		   bool show_progress, struct sv_counts *counts)
{
	struct rs r = { .path = path, .fd = fd };
	struct stat st;
	size_t i;
	int ret;

	if (fstat(fd, &st)) {
		say("cannot read %s: %s", path, strerror(errno));
		return 1;
	}
	r.size = (uint64_t)st.st_size;
	r.v = sv_new(o);
	if (!r.v) {
		say("out of memory");
		return 1;
	}
	r.progress = show_progress;
	r.index_max = o->index_max ? o->index_max : REPORT_INDEX_MAX;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	scan(&r, SIZE_MAX);
	merge(&r, o->hold ? o->hold : REPORT_FLUSH);
	progress(&r, true);
	sv_finish(r.v);
	ret = report_problems(&r);
	if (counts)
		sv_get_counts(r.v, counts);
	for (i = 0; i < r.nr_streams; i++)
		free(r.streams[i].q);
	free(r.streams);
	free(r.buf);
	free(r.pkt);
	sv_free(r.v);
	return ret;
}

