// SPDX-License-Identifier: GPL-2.0
/*
 * traced: the pbtrace daemon. It owns every session's output file: it
 * learns of sessions through the "sessions" multicast group, maps each
 * kernel buffer read-only, copies sealed chunks to the file verbatim and
 * adds its own packets (config, system info, clocks, processes, stats).
 *
 * One thread, one poll() loop: the notification socket, a signalfd, the
 * reader fd of every streaming buffer, and per-session deadlines (all in
 * CLOCK_BOOTTIME ns, the clock of the trace).
 *
 * The kernel keeps sessions and buffers when traced dies, so a restarted
 * traced adopts every live session and appends to its file (docs/traced.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "genl.h"
#include "packets.h"
#include "reader.h"
#include "symbolize.h"
#include "writer.h"

#define NS_PER_MS 1000000ull
#define CLOCK_PERIOD_MS PBT_SNAPSHOT_INTERVAL_DEFAULT_MS	/* clock_snapshot */
#define DEFAULT_WRITE_PERIOD_MS 5000	/* Perfetto's file_write_period_ms default */
#define MIN_WRITE_PERIOD_MS 100		/* as Perfetto enforces */
#define MIN_STATS_PERIOD_MS 10
#define FINAL_RESERVE 8192		/* room kept for the closing packets */
#define DUP_WINDOW (4u << 20)		/* tail searched for a re-read chunk */
#define REMOTE_PERIOD_MS 250		/* relayed machines' queue, while running */
#define REMOTE_EOF_WAIT_MS 3000		/* at stop; the kernel gives up after 2 s */
#define REMOTE_RETRY_MS 20
#define PIDFILE "/run/pbtrace/traced.pid"
#define PROC "/proc"

typedef Perfetto__Protos__TraceConfig TraceConfig;

enum state {
	S_CONFIGURED,		/* created, kernel START not seen yet */
	S_WAIT_TRIGGER,		/* START_TRACING: we start it on the trigger */
	S_RUNNING,
	S_DONE,
};

struct buffer {
	struct pbt_reader rd;
	uint64_t bytes_read;	/* copied to the file by this traced */
	uint64_t chunks_skipped;	/* refused: file limit or write error */
	int check_dup;		/* reattached: first chunk may be in the file */
	int hup;		/* POLLHUP seen: stop polling it */
	int remote;		/* relayed machines record into it */
	int remote_eof;		/* READ_REMOTE said nothing more will come */
	uint64_t remote_bytes;	/* their records written to the file */
	uint64_t remote_skipped;	/* their records refused: file limit */
};

struct timers {
	uint64_t stop, stop_delay, trigger_timeout, write, flush, drain, clock;
	uint64_t proc_stats, meminfo, vmstat, stat, remote;
};

struct session {
	struct session *next;
	uint32_t id;
	char name[PBTRACE_NAME_MAX];
	enum state state;
	TraceConfig *cfg;		/* NULL when none was stored */
	void *cfg_raw;
	size_t cfg_len;
	uint64_t start_ns;		/* kernel's BOOTTIME start, 0 if not yet */
	uint32_t owner_uid, owner_gid;	/* its file is opened as them */
	struct pbt_writer w;
	struct pbt_seq seq;
	size_t nr_buffers;
	struct buffer bufs[PBTRACE_MAX_BUFFERS];
	int header_done, streaming, failed, full;
	int reattached;		/* the file was started by an earlier traced */
	int stacks;		/* a linux.perf source samples user stacks */
	int closing;		/* final packets: the size reserve is theirs */
	uint32_t duration_ms, write_period_ms, flush_period_ms, drain_period_ms;
	uint32_t clock_period_ms;
	uint32_t proc_stats_ms, meminfo_ms, vmstat_ms, stat_ms;
	uint64_t limit;
	uint64_t flushes_requested, flushes_succeeded;
	/* Why traced ended the session early, for the DESTROY notification
	 * (PBTRACE_A_SESSION_ERROR); "" when it did not. */
	char error[PBTRACE_ERROR_MAX];
	struct timers t;
};

static struct pbt_nl *nl;
static struct session *sessions;
/* READ_REMOTE's destination: one thread, so one buffer serves all. */
static uint8_t *remote_buf;
static int use_syslog;

static void logmsg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logmsg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fprintf(stderr, "traced: %s",
			prio <= LOG_ERR ? "error: " :
			prio == LOG_WARNING ? "warning: " : "");
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

static uint64_t now_ns(void)
{
	return pbt_boottime_ns();
}

static uint64_t after_ms(uint64_t from, uint32_t ms)
{
	return ms ? from + ms * NS_PER_MS : 0;
}

/* --- output ------------------------------------------------------------ */

/*
 * A group member's session is written as that member (docs/security.md):
 * around every path traced touches for it (open, unlink), the filesystem
 * uid, gid and groups become the owner's, so the kernel's own checks
 * decide as they would for the member, and a path the member may not
 * write fails here too. The fd then stays usable as root's. traced has
 * one thread, so setgroups() is this thread's alone.
 */
struct owner_creds {
	int switched;
	int nr_saved;
	gid_t *saved;
};

/* The owner's groups: its login groups if it has a passwd entry, else
 * only its gid (never more than the user has at login). */
static gid_t *owner_groups(uint32_t uid, uint32_t gid, int *n)
{
	struct passwd *pw = getpwuid(uid);
	gid_t *g;

	*n = 0;
	if (pw)
		getgrouplist(pw->pw_name, gid, NULL, n);
	if (*n < 1)
		*n = 1;
	g = calloc((size_t)*n, sizeof(*g));
	if (!g)
		return NULL;
	if (!pw || getgrouplist(pw->pw_name, gid, g, n) < 0) {
		g[0] = gid;
		*n = 1;
	}
	return g;
}

static void be_self(struct owner_creds *c)
{
	if (!c->switched)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	if (setgroups((size_t)c->nr_saved, c->saved) < 0)
		logmsg(LOG_ERR, "cannot restore traced's groups: %s", strerror(errno));
	free(c->saved);
	c->switched = 0;
}

static int be_owner(const struct session *s, struct owner_creds *c,
		    char *err, size_t errlen)
{
	gid_t *groups;
	int n, ok;

	memset(c, 0, sizeof(*c));
	if (s->owner_uid == geteuid())
		return 0;
	c->nr_saved = getgroups(0, NULL);
	c->saved = calloc((size_t)(c->nr_saved > 0 ? c->nr_saved : 1), sizeof(gid_t));
	groups = owner_groups(s->owner_uid, s->owner_gid, &n);
	if (!c->saved || !groups || c->nr_saved < 0 ||
	    getgroups(c->nr_saved, c->saved) < 0) {
		free(c->saved);
		free(groups);
		snprintf(err, errlen, "out of memory taking uid %u's credentials",
			 s->owner_uid);
		return -ENOMEM;
	}
	c->switched = 1;
	ok = setgroups((size_t)n, groups) == 0;
	free(groups);
	setfsgid(s->owner_gid);
	setfsuid(s->owner_uid);
	/* setfsuid() reports no error: ask what it is now (-1 changes nothing). */
	ok = ok && (uint32_t)setfsuid((uid_t)-1) == s->owner_uid &&
	     (uint32_t)setfsgid((gid_t)-1) == s->owner_gid;
	if (ok)
		return 0;
	be_self(c);
	snprintf(err, errlen,
		 "traced (uid %u) cannot take uid %u's credentials to write its session's file: run traced as root",
		 (unsigned int)geteuid(), s->owner_uid);
	return -EPERM;
}

/* pbt_writer_open as the session's owner. */
static int open_as_owner(struct session *s, const char *path, int append,
			 char *err, size_t errlen)
{
	struct owner_creds c;
	int ret = be_owner(s, &c, err, errlen);

	if (ret)
		return ret;
	ret = pbt_writer_open(&s->w, path, append, 0, err, errlen);
	be_self(&c);
	if (ret == -EACCES || ret == -EPERM)
		snprintf(err, errlen,
			 "cannot open output %.200s as its owner (uid %u, gid %u): %s; pick a path that user may write",
			 path, s->owner_uid, s->owner_gid, strerror(-ret));
	return ret;
}

/* The session ends early for err: said in the log and, with DESTROY,
 * to whoever waits for the file (tracectl record, stop --wait). */
static void set_error(struct session *s, const char *err)
{
	size_t n = strlen(err);

	if (s->error[0])
		return;
	/* Cut to what the kernel passes on (PBTRACE_ERROR_MAX). */
	if (n >= sizeof(s->error))
		n = sizeof(s->error) - 1;
	memcpy(s->error, err, n);
	s->error[n] = '\0';
}

static void fail_with(struct session *s, const char *err, const char *what)
{
	if (s->failed)
		return;
	s->failed = 1;
	set_error(s, err);
	logmsg(LOG_ERR, "session %u (%s): %s; ending the session%s", s->id,
	       s->name, err, what);
}

static void fail_session(struct session *s, const char *err)
{
	fail_with(s, err, "");
}

/* Write one record; a record that does not fit the file limit (keeping
 * @reserve bytes) is dropped whole. Returns 0 when written. */
static int emit_bytes(struct session *s, const void *p, size_t len,
		      uint64_t reserve)
{
	char err[512];
	int ret;

	if (s->failed || s->w.fd < 0)
		return -EIO;
	if (s->limit && s->w.size + len + reserve > s->limit) {
		if (!s->full)
			logmsg(LOG_NOTICE,
			       "session %u (%s): max_file_size_bytes %llu reached",
			       s->id, s->name, (unsigned long long)s->limit);
		s->full = 1;
		return -EFBIG;
	}
	ret = pbt_writer_write(&s->w, p, len, err, sizeof(err));
	if (ret < 0 && ret != -EFBIG)
		fail_with(s, err, " (the file keeps the whole records written before: a valid trace)");
	return ret;
}

static uint64_t reserve(const struct session *s)
{
	return s->limit > 4 * FINAL_RESERVE ? FINAL_RESERVE : 0;
}

/* Write a packet traced built; frees it. */
static int emit(struct session *s, int built, struct pbt_rec *r)
{
	int ret;

	if (built < 0) {
		logmsg(LOG_WARNING, "session %u: building a packet failed: %s",
		       s->id, strerror(-built));
		return built;
	}
	ret = emit_bytes(s, r->data, r->len, s->closing ? 0 : reserve(s));
	free(r->data);
	return ret;
}


/* --- kernel buffers ---------------------------------------------------- */

/* Copy one sealed chunk, unless it is the one a killed traced wrote but
 * never gave back (the kernel hands it out again). */
static void copy_chunk(struct session *s, struct buffer *b,
		       const struct pbtrace_chunk_req *req, const uint8_t *data)
{
	if (b->check_dup) {
		b->check_dup = 0;
		if (pbt_writer_tail_contains(&s->w, data, req->len, DUP_WINDOW)) {
			logmsg(LOG_INFO,
			       "session %u: chunk %llu already in the file before the restart, not written twice",
			       s->id, (unsigned long long)req->seq);
			return;
		}
	}
	if (emit_bytes(s, data, req->len, reserve(s)) == 0)
		b->bytes_read += req->len;
	else
		b->chunks_skipped++;
}

/* Hand every sealed chunk of the buffer to the file. */
static void drain_buffer(struct session *s, struct buffer *b)
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

	if (emit_bytes(s, remote_buf, len, reserve(s)) == 0) {
		b->remote_bytes += len;
		return;
	}
	while (!s->failed && off < len) {
		hdr = pbt_record_header(remote_buf + off, len - off, &payload);
		if (hdr <= 0)
			break;		/* cannot happen: checked whole */
		rec = (size_t)hdr + (size_t)payload;
		if (emit_bytes(s, remote_buf + off, rec, reserve(s)) == 0)
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

static void drain_remote(struct session *s, struct buffer *b)
{
	while (b->remote && !b->remote_eof && b->rd.fd >= 0 &&
	       read_remote_once(s, b))
		;
}

static void drain_all(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nr_buffers; i++) {
		drain_buffer(s, &s->bufs[i]);
		drain_remote(s, &s->bufs[i]);
	}
}

static int remote_pending(const struct session *s)
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
static void drain_remote_to_eof(struct session *s)
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

static int attach_buffers(struct session *s, const struct pbt_session_info *in,
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

static void write_kernel_stats(struct session *s, int end)
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
static void log_losses(struct session *s)
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

static void flush_kernel(struct session *s)
{
	int ret = pbt_nl_session_cmd(nl, PBTRACE_CMD_FLUSH_SESSION, s->id);

	s->flushes_requested++;
	if (ret == 0)
		s->flushes_succeeded++;
	else
		logmsg(LOG_WARNING, "session %u: flush: %s", s->id,
		       pbt_nl_error(nl));
}

/* --- traced's packets --------------------------------------------------- */

static void write_service_event(struct session *s, enum pbt_service_event ev,
				uint64_t ts)
{
	struct pbt_rec r;

	emit(s, pbt_pkt_service_event(&s->seq, ev, ts, &r), &r);
}

static void write_clock(struct session *s)
{
	struct pbt_rec r;

	emit(s, pbt_pkt_clock_snapshot(&s->seq, &r), &r);
}

static void write_process_tree(struct session *s)
{
	struct pbt_rec r;

	emit(s, pbt_pkt_process_tree(&s->seq, PROC, &r), &r);
}

/* What every trace starts with: the config, the machine, its clocks and
 * its processes, so the kernel's events that follow can be named. */
static void write_header(struct session *s)
{
	struct pbt_rec r;

	if (s->header_done)
		return;
	s->header_done = 1;
	if (s->cfg_raw)
		emit(s, pbt_pkt_trace_config(&s->seq, s->cfg_raw, s->cfg_len,
					     &r), &r);
	emit(s, pbt_pkt_system_info(&s->seq, &r), &r);
	write_clock(s);
	write_process_tree(s);
}

/* --- config ------------------------------------------------------------ */

static void read_data_source(struct session *s,
			     const Perfetto__Protos__DataSourceConfig *ds)
{
	const Perfetto__Protos__FtraceConfig *fc = ds->ftrace_config;

	/* Several linux.ftrace sources: the shortest period serves them all. */
	if (fc && ds->name && !strcmp(ds->name, "linux.ftrace") &&
	    fc->drain_period_ms &&
	    (!s->drain_period_ms || fc->drain_period_ms < s->drain_period_ms))
		s->drain_period_ms = fc->drain_period_ms;
	if (ds->process_stats_config && ds->process_stats_config->has_proc_stats_poll_ms)
		s->proc_stats_ms = ds->process_stats_config->proc_stats_poll_ms;
	if (ds->sys_stats_config) {
		const Perfetto__Protos__SysStatsConfig *ss = ds->sys_stats_config;

		s->meminfo_ms = ss->meminfo_period_ms;
		s->vmstat_ms = ss->vmstat_period_ms;
		s->stat_ms = ss->stat_period_ms;
	}
}

static uint32_t at_least(uint32_t ms, uint32_t min, const char *what,
			 struct session *s)
{
	if (!ms || ms >= min)
		return ms;
	logmsg(LOG_WARNING, "session %u: %s %u ms is below the minimum, using %u ms",
	       s->id, what, ms, min);
	return min;
}

static void read_config(struct session *s)
{
	const TraceConfig *c = s->cfg;
	size_t i;

	if (!c)
		return;
	s->duration_ms = c->duration_ms;
	s->streaming = c->write_into_file;
	s->limit = c->max_file_size_bytes;
	s->flush_period_ms = c->flush_period_ms;
	if (c->builtin_data_sources && c->builtin_data_sources->snapshot_interval_ms)
		s->clock_period_ms = at_least(c->builtin_data_sources->snapshot_interval_ms,
					      PBT_SNAPSHOT_INTERVAL_MIN_MS,
					      "snapshot_interval_ms", s);
	if (s->streaming)
		s->write_period_ms = c->file_write_period_ms ?
			at_least(c->file_write_period_ms, MIN_WRITE_PERIOD_MS,
				 "file_write_period_ms", s) :
			DEFAULT_WRITE_PERIOD_MS;
	for (i = 0; i < c->n_data_sources; i++)
		if (c->data_sources[i]->config)
			read_data_source(s, c->data_sources[i]->config);
	s->stacks = pbt_config_has_stacks(c);
	/* Draining only moves chunks to the file: without write_into_file
	 * the kernel buffer is the trace buffer until stop. */
	if (!s->streaming)
		s->drain_period_ms = 0;
	s->drain_period_ms = at_least(s->drain_period_ms, PBT_DRAIN_PERIOD_MIN_MS,
				      "drain_period_ms", s);
	s->proc_stats_ms = at_least(s->proc_stats_ms, MIN_STATS_PERIOD_MS,
				    "proc_stats_poll_ms", s);
	s->meminfo_ms = at_least(s->meminfo_ms, MIN_STATS_PERIOD_MS,
				 "meminfo_period_ms", s);
	s->vmstat_ms = at_least(s->vmstat_ms, MIN_STATS_PERIOD_MS,
				"vmstat_period_ms", s);
	s->stat_ms = at_least(s->stat_ms, MIN_STATS_PERIOD_MS,
			      "stat_period_ms", s);
}

static int trigger_mode(const struct session *s)
{
	if (!s->cfg || !s->cfg->trigger_config)
		return 0;
	return s->cfg->trigger_config->trigger_mode;
}

static const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *
find_trigger(const struct session *s, const char *name)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc;
	size_t i;

	if (!trigger_mode(s))
		return NULL;
	tc = s->cfg->trigger_config;
	for (i = 0; i < tc->n_triggers; i++)
		if (tc->triggers[i]->name && !strcmp(tc->triggers[i]->name, name))
			return tc->triggers[i];
	return NULL;
}

/* --- session life ------------------------------------------------------ */

static struct session *find_session(uint32_t id)
{
	struct session *s;

	for (s = sessions; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static void free_session(struct session *s)
{
	struct session **pp;
	size_t i;

	for (pp = &sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	for (i = 0; i < s->nr_buffers; i++)
		pbt_reader_close(&s->bufs[i].rd);
	pbt_writer_close(&s->w);
	if (s->cfg)
		perfetto__protos__trace_config__free_unpacked(s->cfg, NULL);
	free(s->cfg_raw);
	free(s);
}

static void arm_periodic(struct session *s, uint64_t now)
{
	struct timers *t = &s->t;

	t->clock = after_ms(now, s->clock_period_ms);
	t->write = s->streaming ? after_ms(now, s->write_period_ms) : 0;
	t->flush = after_ms(now, s->flush_period_ms);
	t->drain = after_ms(now, s->drain_period_ms);
	t->proc_stats = after_ms(now, s->proc_stats_ms);
	t->meminfo = after_ms(now, s->meminfo_ms);
	t->vmstat = after_ms(now, s->vmstat_ms);
	t->stat = after_ms(now, s->stat_ms);
	t->remote = remote_pending(s) ? after_ms(now, REMOTE_PERIOD_MS) : 0;
}

/* The kernel's BOOTTIME start of session @id, 0 if it cannot say. */
static uint64_t kernel_start_ns(uint32_t id)
{
	struct pbt_session_info si;
	uint64_t ns;

	if (pbt_nl_get_session(nl, id, &si) < 0)
		return 0;
	ns = si.start_ns;
	pbt_session_info_free(&si);
	return ns;
}

/*
 * The kernel is recording: start the clocks of the session. @start_ns is
 * the kernel's start when the caller knows it; else the kernel is asked,
 * since the service events below must not be later than the first event:
 * trace_processor drops every ftrace event before tracing_started
 * (FtraceParser::ParseFtraceEvent, drop_ftrace_data_before_ts_, counted
 * as ftrace_packet_before_tracing_start).
 */
static void begin_running(struct session *s, uint64_t start_ns)
{
	uint64_t now = now_ns();

	if (s->state == S_RUNNING || s->state == S_DONE)
		return;
	s->state = S_RUNNING;
	if (!start_ns)
		start_ns = kernel_start_ns(s->id);
	s->start_ns = start_ns && start_ns <= now ? start_ns : now;
	write_header(s);
	if (!s->reattached) {
		write_kernel_stats(s, 0);
		write_service_event(s, PBT_SVC_TRACING_STARTED, s->start_ns);
		write_service_event(s, PBT_SVC_ALL_DATA_SOURCES_STARTED, s->start_ns);
	}
	arm_periodic(s, now);
	/* duration_ms counts from the kernel's start, so a restarted traced
	 * still stops on time. */
	s->t.stop = after_ms(s->start_ns, s->duration_ms);
	if (trigger_mode(s) == PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING &&
	    s->cfg->trigger_config->trigger_timeout_ms)
		s->t.trigger_timeout = after_ms(s->start_ns,
						s->cfg->trigger_config->trigger_timeout_ms);
	logmsg(LOG_INFO, "session %u (%s): recording to %s%s", s->id, s->name,
	       s->w.path, s->streaming ? " (streaming)" : "");
}

static void log_machine(const struct session *s, const struct pbt_machine_info *m)
{
	const struct pbtrace_machine_stats *st = &m->st;
	int lossy = st->chunks_lost_relay || st->chunks_dropped ||
		    st->guest_events_lost || st->disconnects;

	logmsg(lossy ? LOG_WARNING : LOG_INFO,
	       "session %u: machine %u (%s): %llu chunks, %llu bytes, guest wrote %llu events; lost: %llu chunks on the wire, %llu dropped here (queue full or no clock round), %llu events on the guest, %llu disconnects (%llu ms without it)",
	       s->id, st->machine_id, m->name,
	       (unsigned long long)st->chunks, (unsigned long long)st->bytes,
	       (unsigned long long)st->guest_events_written,
	       (unsigned long long)st->chunks_lost_relay,
	       (unsigned long long)st->chunks_dropped,
	       (unsigned long long)st->guest_events_lost,
	       (unsigned long long)st->disconnects,
	       (unsigned long long)(st->gap_ns / NS_PER_MS));
}

/* Per relayed machine: what it lost, as trace_stats stamped with its
 * machine_id (docs/traced.md). Read after the remote EOF, so the guest's
 * own counters (its STOPPED frame) are in. */
static void write_machine_stats(struct session *s)
{
	struct pbt_session_info in;
	struct pbt_rec r;
	size_t i;

	if (pbt_nl_get_session(nl, s->id, &in) < 0) {
		logmsg(LOG_WARNING, "session %u: reading per-machine counters: %s",
		       s->id, pbt_nl_error(nl));
		return;
	}
	for (i = 0; i < in.nr_machines; i++) {
		emit(s, pbt_pkt_machine_stats(&s->seq, &in.machines[i].st, &r), &r);
		log_machine(s, &in.machines[i]);
	}
	pbt_session_info_free(&in);
}

/* Names for the user frames of a file with stacks (symbolize.h), read
 * back from the file. The binaries are opened as the session's owner: the
 * file names no function of a binary its owner could not read. */
static void write_symbols(struct session *s)
{
	struct pbt_sym_stats st;
	struct owner_creds c;
	uint8_t *out = NULL;
	size_t out_len = 0;
	char err[512];
	int ret, mapped;
	void *data;

	if (!s->stacks || s->failed || s->w.fd < 0 || !s->w.size)
		return;
	data = pbt_file_bytes(s->w.fd, s->w.size, &mapped);
	if (!data) {
		logmsg(LOG_WARNING, "session %u: reading %s back to name its user frames: %s; run 'tracectl symbolize %s'",
		       s->id, s->w.path, strerror(errno), s->w.path);
		return;
	}
	ret = be_owner(s, &c, err, sizeof(err));
	if (!ret) {
		ret = pbt_symbolize(data, s->w.size, &out, &out_len, &st, err,
				    sizeof(err));
		be_self(&c);
	}
	pbt_file_bytes_free(data, s->w.size, mapped);
	if (ret) {
		logmsg(LOG_WARNING, "session %u: naming user frames: %s; run 'tracectl symbolize %s'",
		       s->id, err, s->w.path);
		return;
	}
	if (out_len)
		emit_bytes(s, out, out_len, 0);
	free(out);
	logmsg(LOG_INFO, "session %u (%s): %u of %u user frames named, in %u binaries (%u not readable)",
	       s->id, s->name, st.named, st.frames, st.modules, st.unreadable);
}

/* Close the file with the packets that describe how the trace ended,
 * then free the kernel session (tracectl waits for that DESTROY). */
static void finish(struct session *s, const char *why)
{
	struct pbt_rec r;
	uint64_t skipped = 0;
	size_t i;
	int ret;

	if (s->state == S_DONE)
		return;
	s->state = S_DONE;
	write_header(s);
	if (!s->failed) {
		drain_all(s);
		drain_remote_to_eof(s);
	}
	for (i = 0; i < s->nr_buffers; i++)
		skipped += s->bufs[i].chunks_skipped + s->bufs[i].remote_skipped;
	s->closing = 1;	/* the closing packets may use the reserve */
	write_service_event(s, PBT_SVC_TRACING_DISABLED, 0);
	write_clock(s);
	write_kernel_stats(s, 1);
	write_machine_stats(s);
	write_symbols(s);
	/* Last and largest: names processes that started during the trace;
	 * dropped whole if the file limit leaves no room. */
	write_process_tree(s);
	emit(s, pbt_pkt_service_event(&s->seq,
				      PBT_SVC_READ_TRACING_BUFFERS_COMPLETED, 0, &r), &r);
	if (s->w.fd >= 0 && pbt_writer_sync(&s->w) < 0)
		logmsg(LOG_ERR, "session %u: fsync %s: %s", s->id, s->w.path,
		       strerror(errno));
	logmsg(s->failed ? LOG_ERR : LOG_INFO,
	       "session %u (%s): finished (%s); %s: %llu bytes%s", s->id,
	       s->name, why,
	       s->w.path ? s->w.path : "(no file)",
	       (unsigned long long)s->w.size,
	       skipped ? ", some chunks did not fit and were dropped" : "");
	ret = pbt_nl_destroy_session(nl, s->id, s->error);
	if (ret < 0 && ret != -ENOENT)	/* ENOENT: someone destroyed it */
		logmsg(LOG_WARNING, "session %u: destroy: %s", s->id,
		       pbt_nl_error(nl));
	if (ret == 1)
		logmsg(LOG_WARNING,
		       "session %u: pbtrace.ko does not take PBTRACE_A_SESSION_ERROR (older module): tracectl is not told why the session ended",
		       s->id);
	free_session(s);
}

/* traced decided the session is over (duration, size, trigger, error). */
static void stop_session(struct session *s, const char *why)
{
	if (s->state == S_DONE)
		return;
	if (pbt_nl_session_cmd(nl, PBTRACE_CMD_STOP_SESSION, s->id) < 0)
		logmsg(LOG_WARNING, "session %u: stop: %s", s->id,
		       pbt_nl_error(nl));
	finish(s, why);
}

static int load_config(struct session *s, const struct pbt_session_info *in)
{
	if (!in->config || !in->config_len)
		return 0;
	s->cfg = perfetto__protos__trace_config__unpack(NULL, in->config_len,
							in->config);
	if (!s->cfg) {
		logmsg(LOG_ERR, "session %u (%s): stored TraceConfig (%zu bytes) does not decode",
		       in->id, in->name, in->config_len);
		return -1;
	}
	s->cfg_raw = malloc(in->config_len);
	if (!s->cfg_raw)
		return -1;
	memcpy(s->cfg_raw, in->config, in->config_len);
	s->cfg_len = in->config_len;
	read_config(s);
	return 0;
}

static const char *output_path(const struct pbt_session_info *in,
			       const TraceConfig *cfg, char *buf, size_t len)
{
	if (in->output && *in->output)
		return in->output;
	if (cfg && cfg->output_path && *cfg->output_path)
		return cfg->output_path;
	snprintf(buf, len, "/var/tmp/pbtrace-%s.pftrace", in->name);
	logmsg(LOG_WARNING, "session %u (%s) has no output path, writing %s",
	       in->id, in->name, buf);
	return buf;
}

/* A session traced has no file open for: open it (@fresh truncates, else
 * append: a restart), map its buffers, and follow the kernel's state. */
static void adopt(const struct pbt_session_info *in, int fresh)
{
	struct session *s;
	char err[512], fallback[PATH_MAX];
	const char *path;

	/* This machine's relay records it for its host, which writes the
	 * file; reading its chunks here would take them from the relay. */
	if (in->relay)
		return;
	s = calloc(1, sizeof(*s));
	if (!s) {
		logmsg(LOG_ERR, "session %u: out of memory", in->id);
		return;
	}
	s->id = in->id;
	snprintf(s->name, sizeof(s->name), "%s", in->name);
	s->owner_uid = in->owner_uid;
	s->owner_gid = in->owner_gid;
	s->w.fd = -1;
	s->clock_period_ms = CLOCK_PERIOD_MS;
	s->seq.id = PBT_TRACED_SEQ_BASE + in->id;
	s->state = S_CONFIGURED;
	s->next = sessions;
	sessions = s;
	if (load_config(s, in) < 0) {
		fail_session(s, "cannot use the stored config");
		stop_session(s, "bad config");
		return;
	}
	path = output_path(in, s->cfg, fallback, sizeof(fallback));
	if (open_as_owner(s, path, !fresh, err, sizeof(err)) < 0) {
		fail_session(s, err);
		stop_session(s, "output not writable");
		return;
	}
	if (attach_buffers(s, in, s->w.size > 0) < 0) {
		/* The file is fine: it still gets traced's packets. */
		stop_session(s, "ended: cannot map the session's buffers");
		return;
	}
	if (s->w.size > 0) {
		/* A restart: the file has its header; mark the gap on our
		 * sequence and re-anchor the clocks. */
		s->header_done = 1;
		s->reattached = 1;
		s->seq.gap = 1;
		s->seq.started = 1;	/* not first_packet_on_sequence: it was in the file */
		logmsg(LOG_NOTICE,
		       "session %u (%s): reattached, appending to %s at %llu bytes%s",
		       s->id, s->name, path, (unsigned long long)s->w.size,
		       s->w.repaired ? " (cut a torn last record)" : "");
		write_clock(s);
		log_losses(s);
	}
	switch (in->state) {
	case PBTRACE_STATE_STARTED:
		begin_running(s, in->start_ns);
		break;
	case PBTRACE_STATE_STOPPED:
		finish(s, "stopped while traced was down");
		break;
	default:
		write_header(s);
		if (trigger_mode(s) == PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING) {
			s->state = S_WAIT_TRIGGER;
			s->t.trigger_timeout = after_ms(now_ns(),
							s->cfg->trigger_config->trigger_timeout_ms);
		}
		break;
	}
}

static void adopt_id(uint32_t id, int fresh)
{
	struct pbt_session_info in;
	int ret;

	if (find_session(id))
		return;
	memset(&in, 0, sizeof(in));
	ret = pbt_nl_get_session(nl, id, &in);
	if (ret == -ENOENT)
		return;		/* already gone: a queued notification */
	if (ret < 0) {
		logmsg(LOG_WARNING, "session %u: %s", id, pbt_nl_error(nl));
		return;
	}
	adopt(&in, fresh);
	pbt_session_info_free(&in);
}

/* Bring our sessions in line with the kernel's list: at startup (every
 * session is adopted, appending) and after lost notifications. */
static int sync_sessions(int fresh)
{
	struct pbt_session_info *list;
	struct session *s, *next;
	size_t n, i;

	if (pbt_nl_list_sessions(nl, &list, &n) < 0) {
		logmsg(LOG_ERR, "listing sessions: %s", pbt_nl_error(nl));
		return -1;
	}
	for (s = sessions; s; s = next) {
		next = s->next;
		for (i = 0; i < n && list[i].id != s->id; i++)
			;
		if (i == n) {
			logmsg(LOG_WARNING, "session %u (%s) was destroyed under us",
			       s->id, s->name);
			s->state = S_DONE;
			free_session(s);
		} else if (list[i].state == PBTRACE_STATE_STOPPED) {
			finish(s, "stopped");
			list[i].id = 0;	/* destroyed now: not to adopt again */
		} else if (list[i].state == PBTRACE_STATE_STARTED) {
			begin_running(s, list[i].start_ns);
		}
	}
	for (i = 0; i < n; i++)
		if (list[i].id && !find_session(list[i].id))
			adopt(&list[i], fresh);
	pbt_session_infos_free(list, n);
	return 0;
}

/* --- triggers ---------------------------------------------------------- */

static void on_trigger(struct session *s, const char *name)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *t =
		find_trigger(s, name);
	uint32_t delay;
	struct pbt_rec r;

	if (!t || s->state == S_DONE)
		return;
	delay = t->stop_delay_ms;
	if (s->state == S_WAIT_TRIGGER) {
		emit(s, pbt_pkt_trigger(&s->seq, name, 0, &r), &r);
		logmsg(LOG_INFO, "session %u: trigger %s starts tracing", s->id, name);
		s->t.trigger_timeout = 0;
		if (pbt_nl_session_cmd(nl, PBTRACE_CMD_START_SESSION, s->id) < 0) {
			fail_session(s, pbt_nl_error(nl));
			stop_session(s, "start on trigger failed");
			return;
		}
		begin_running(s, 0);
		return;
	}
	if (trigger_mode(s) != PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING ||
	    s->state != S_RUNNING || s->t.stop_delay)
		return;
	emit(s, pbt_pkt_trigger(&s->seq, name, delay, &r), &r);
	logmsg(LOG_INFO, "session %u: trigger %s stops tracing in %u ms", s->id,
	       name, delay);
	s->t.trigger_timeout = 0;
	s->t.stop_delay = now_ns() + delay * NS_PER_MS + 1;
}

/* --- notifications ----------------------------------------------------- */

/* The old file's path is the owner's to name: removed as the owner. */
static int unlink_as_owner(const struct session *s, const char *path)
{
	struct owner_creds c;
	char err[256];
	int ret;

	if (be_owner(s, &c, err, sizeof(err)) < 0) {
		logmsg(LOG_WARNING, "session %u (%s): not removing %s: %s",
		       s->id, s->name, path, err);
		return -1;
	}
	ret = unlink(path);
	be_self(&c);
	return ret;
}

/*
 * SET_SESSION: a session not started yet was described anew (tracectl
 * reconfigure). Nothing was recorded, the kernel replaced its buffers
 * (the old mappings now only report -ESTALE): start it over, from the
 * new description, and drop the header-only file of an old output.
 */
static void on_reconfigure(struct session *s)
{
	uint32_t id = s->id;
	char *old = s->w.path ? strdup(s->w.path) : NULL;
	struct session *n;

	logmsg(LOG_NOTICE, "session %u (%s): reconfigured before it started; rereading it",
	       id, s->name);
	s->state = S_DONE;
	free_session(s);
	adopt_id(id, 1);
	n = find_session(id);
	if (old && n && n->w.path && strcmp(old, n->w.path)) {
		if (unlink_as_owner(n, old) == 0)
			logmsg(LOG_NOTICE, "session %u (%s): output now %s; removed %s, which held only the old header",
			       id, n->name, n->w.path, old);
	}
	free(old);
}

static void on_notify(const struct pbt_notify *n)
{
	struct session *s = find_session(n->session_id);

	switch (n->cmd) {
	case PBTRACE_CMD_NEW_SESSION:
		adopt_id(n->session_id, 1);
		break;
	case PBTRACE_CMD_START_SESSION:
		if (!s)
			adopt_id(n->session_id, 1);
		else if (s->state == S_CONFIGURED || s->state == S_WAIT_TRIGGER)
			begin_running(s, 0);
		break;
	case PBTRACE_CMD_SET_SESSION:
		if (s)
			on_reconfigure(s);
		break;
	case PBTRACE_CMD_STOP_SESSION:
		if (s)
			finish(s, "stopped");
		break;
	case PBTRACE_CMD_DESTROY_SESSION:
		if (s) {
			logmsg(LOG_WARNING, "session %u (%s) destroyed before traced finished it",
			       s->id, s->name);
			s->state = S_DONE;
			free_session(s);
		}
		break;
	case PBTRACE_CMD_TRIGGER:
		for (s = sessions; s; ) {
			struct session *next = s->next;

			on_trigger(s, n->trigger);
			s = next;
		}
		break;
	default:
		break;
	}
}

static int read_notifications(void)
{
	struct pbt_notify n;
	int ret;

	while ((ret = pbt_nl_next_notify(nl, &n)) == 1)
		on_notify(&n);
	if (ret == -ENOBUFS) {
		logmsg(LOG_WARNING, "notifications were lost, re-reading sessions");
		return sync_sessions(1);
	}
	if (ret < 0) {
		logmsg(LOG_ERR, "notification socket: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/* --- timers ------------------------------------------------------------ */

/* A timer that came: the next one a period after when this one was due,
 * so a late wakeup does not shift every later one (no drift), but never
 * in the past, so a long stall does not fire a burst. */
static int due(uint64_t *t, uint64_t now, uint32_t period_ms)
{
	uint64_t next;

	if (!*t || *t > now)
		return 0;
	next = *t + period_ms * NS_PER_MS;
	*t = !period_ms ? 0 : next > now ? next : now + period_ms * NS_PER_MS;
	return 1;
}

static void run_stats_timers(struct session *s, uint64_t now)
{
	unsigned int what = 0;
	struct pbt_rec r;

	if (due(&s->t.proc_stats, now, s->proc_stats_ms))
		emit(s, pbt_pkt_process_stats(&s->seq, PROC, &r), &r);
	if (due(&s->t.meminfo, now, s->meminfo_ms))
		what |= PBT_SYS_MEMINFO;
	if (due(&s->t.vmstat, now, s->vmstat_ms))
		what |= PBT_SYS_VMSTAT;
	if (due(&s->t.stat, now, s->stat_ms))
		what |= PBT_SYS_STAT;
	if (what)
		emit(s, pbt_pkt_sys_stats(&s->seq, PROC, what, &r), &r);
}

/* Returns 1 when the session ended. */
static int run_timers(struct session *s, uint64_t now)
{
	size_t i;

	if (s->state == S_WAIT_TRIGGER) {
		if (due(&s->t.trigger_timeout, now, 0)) {
			stop_session(s, "trigger_timeout_ms passed without a start trigger");
			return 1;
		}
		return 0;
	}
	if (s->state != S_RUNNING)
		return 0;
	if (s->failed || s->full) {
		stop_session(s, s->failed ? "output failed" :
					    "max_file_size_bytes reached");
		return 1;
	}
	if (due(&s->t.stop, now, 0)) {
		stop_session(s, "duration_ms elapsed");
		return 1;
	}
	if (due(&s->t.stop_delay, now, 0)) {
		stop_session(s, "stop trigger");
		return 1;
	}
	if (due(&s->t.trigger_timeout, now, 0)) {
		stop_session(s, "trigger_timeout_ms passed without a stop trigger");
		return 1;
	}
	if (due(&s->t.clock, now, s->clock_period_ms))
		write_clock(s);
	if (due(&s->t.flush, now, s->flush_period_ms) && !s->t.write)
		flush_kernel(s);
	/* drain_period_ms: seal what the CPUs hold and copy it out, so the
	 * file is never more than that behind (streaming sessions only). */
	if (due(&s->t.drain, now, s->drain_period_ms)) {
		flush_kernel(s);
		drain_all(s);
	}
	if (due(&s->t.write, now, s->write_period_ms)) {
		flush_kernel(s);
		drain_all(s);
	}
	if (due(&s->t.remote, now, REMOTE_PERIOD_MS)) {
		for (i = 0; i < s->nr_buffers; i++)
			drain_remote(s, &s->bufs[i]);
	}
	run_stats_timers(s, now);
	if (s->failed || s->full) {
		stop_session(s, s->failed ? "output failed" :
					    "max_file_size_bytes reached");
		return 1;
	}
	return 0;
}

static uint64_t earliest(const struct session *s)
{
	const uint64_t *t = (const uint64_t *)&s->t;
	uint64_t min = 0;
	size_t i;

	for (i = 0; i < sizeof(s->t) / sizeof(uint64_t); i++)
		if (t[i] && (!min || t[i] < min))
			min = t[i];
	return min;
}

/* --- main loop --------------------------------------------------------- */

#define MAX_FDS (2 + PBTRACE_MAX_SESSIONS * PBTRACE_MAX_BUFFERS * 2)

struct pollset {
	struct pollfd fds[MAX_FDS];
	struct session *owner[MAX_FDS];
	struct buffer *buf[MAX_FDS];
	nfds_t n;
};

static void add_fd(struct pollset *ps, int fd, struct session *s,
		   struct buffer *b)
{
	if (ps->n == MAX_FDS)
		return;
	ps->fds[ps->n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	ps->owner[ps->n] = s;
	ps->buf[ps->n] = b;
	ps->n++;
}

/* Streaming sessions copy chunks as they are sealed; ring buffers are
 * only read at stop (that is what a flight recorder is). */
static int build_pollset(struct pollset *ps, int sigfd)
{
	uint64_t now = now_ns(), next = 0;
	struct session *s;
	size_t i;

	ps->n = 0;
	add_fd(ps, pbt_nl_notify_fd(nl), NULL, NULL);
	add_fd(ps, sigfd, NULL, NULL);
	for (s = sessions; s; s = s->next) {
		uint64_t t = earliest(s);

		if (t && (!next || t < next))
			next = t;
		if (s->state != S_RUNNING || !s->streaming)
			continue;
		for (i = 0; i < s->nr_buffers; i++)
			if (!s->bufs[i].hup)
				add_fd(ps, pbt_reader_fd(&s->bufs[i].rd), s,
				       &s->bufs[i]);
	}
	if (!next)
		return -1;
	if (next <= now)
		return 0;
	return (int)((next - now + NS_PER_MS - 1) / NS_PER_MS);
}

static int session_alive(const struct session *p)
{
	const struct session *s;

	for (s = sessions; s; s = s->next)
		if (s == p)
			return 1;
	return 0;
}

static void handle_buffers(struct pollset *ps)
{
	nfds_t i;

	for (i = 2; i < ps->n; i++) {
		struct session *s = ps->owner[i];

		if (!ps->fds[i].revents || !session_alive(s) ||
		    s->state != S_RUNNING)
			continue;
		if (ps->fds[i].revents & POLLIN) {
			drain_buffer(s, ps->buf[i]);
			drain_remote(s, ps->buf[i]);
		}
		if (ps->fds[i].revents & (POLLHUP | POLLERR)) {
			/* Stopped and fully read: the STOP notification may
			 * still be queued, the kernel's state settles it. */
			ps->buf[i]->hup = 1;
			if (sync_sessions(1) < 0)
				return;
		}
	}
}

static void handle_timers(void)
{
	uint64_t now = now_ns();
	struct session *s, *next;

	for (s = sessions; s; s = next) {
		next = s->next;
		run_timers(s, now);
	}
}

/* SIGTERM: leave sessions to the kernel, a restarted traced continues
 * them. Streaming sessions get what is sealed now. */
static void shutdown_all(void)
{
	while (sessions) {
		struct session *s = sessions;

		if (s->state == S_RUNNING && s->streaming && !s->failed)
			drain_all(s);
		if (s->w.fd >= 0)
			pbt_writer_sync(&s->w);
		logmsg(LOG_INFO, "session %u (%s) left running in the kernel",
		       s->id, s->name);
		free_session(s);
	}
}

static int loop(int sigfd)
{
	for (;;) {
		struct pollset ps;
		int timeout = build_pollset(&ps, sigfd);

		if (poll(ps.fds, ps.n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			logmsg(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (ps.fds[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si))
				logmsg(LOG_INFO, "signal %u, exiting", si.ssi_signo);
			shutdown_all();
			return 0;
		}
		if (ps.fds[0].revents & (POLLERR | POLLHUP)) {
			logmsg(LOG_ERR, "netlink socket closed: was the pbtrace module unloaded?");
			shutdown_all();
			return 1;
		}
		if ((ps.fds[0].revents & POLLIN) && read_notifications() < 0) {
			shutdown_all();
			return 1;
		}
		handle_buffers(&ps);
		handle_timers();
	}
}

/* --- startup ----------------------------------------------------------- */

static int setup_netlink(void)
{
	char err[256];
	uint32_t pid = 0;
	int ret;

	nl = pbt_nl_open(err, sizeof(err));
	if (!nl) {
		logmsg(LOG_ERR, "%s", err);
		return -1;
	}
	ret = pbt_nl_register_daemon(nl);
	if (ret == -EBUSY) {
		pbt_nl_daemon_pid(nl, &pid);
		logmsg(LOG_ERR, "another traced is already running (pid %u); stop it first",
		       pid);
		return -1;
	}
	if (ret < 0) {
		logmsg(LOG_ERR, "registering as the daemon: %s", pbt_nl_error(nl));
		return -1;
	}
	/* Subscribe before listing, so no session falls between the two. */
	if (pbt_nl_subscribe(nl) < 0) {
		logmsg(LOG_ERR, "joining the sessions multicast group: %s",
		       pbt_nl_error(nl));
		return -1;
	}
	return sync_sessions(0);
}

static int setup_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int write_pidfile(const char *path)
{
	char dir[PATH_MAX], *slash;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	f = fopen(path, "we");
	if (!f) {
		logmsg(LOG_ERR, "cannot write pidfile %s: %s", path,
		       strerror(errno));
		return -1;
	}
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f);
}

static int daemonize(void)
{
	int fd;

	if (daemon(0, 1) < 0) {
		logmsg(LOG_ERR, "daemon: %s", strerror(errno));
		return -1;
	}
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	openlog("traced", LOG_PID, LOG_DAEMON);
	use_syslog = 1;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: traced [--daemon] [--pidfile PATH]\n"
		"\n"
		"The pbtrace daemon: writes every pbtrace session's trace file.\n"
		"Sessions are made with tracectl; traced picks them up, copies the\n"
		"kernel's buffers to the session's output file and adds the\n"
		"config, system info, clock snapshots, process tree and stats.\n"
		"Sessions outlive traced: a restarted traced continues them.\n"
		"\n"
		"  -d, --daemon        detach, log to syslog, write a pidfile\n"
		"  -p, --pidfile PATH  pidfile for --daemon (default %s)\n"
		"  -h, --help          this text\n"
		"\n"
		"Needs CAP_SYS_ADMIN and the pbtrace module (modprobe pbtrace).\n",
		PIDFILE);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "daemon", no_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pidfile = PIDFILE;
	int detach = 0, sigfd, c, ret;

	while ((c = getopt_long(argc, argv, "dp:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			detach = 1;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "traced: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	setvbuf(stderr, NULL, _IOLBF, 0);
	/* Zeroed: valgrind does not see the kernel fill it through the
	 * pointer inside struct pbtrace_remote_read. */
	remote_buf = calloc(1, PBTRACE_REMOTE_READ_MIN);
	if (!remote_buf) {
		logmsg(LOG_ERR, "out of memory");
		return 1;
	}
	sigfd = setup_signals();
	if (sigfd < 0) {
		logmsg(LOG_ERR, "signalfd: %s", strerror(errno));
		return 1;
	}
	if (detach && (daemonize() < 0 || write_pidfile(pidfile) < 0))
		return 1;
	if (setup_netlink() < 0) {
		shutdown_all();
		pbt_nl_close(nl);
		return 1;
	}
	logmsg(LOG_INFO, "ready (pid %d)", (int)getpid());
	ret = loop(sigfd);
	pbt_nl_close(nl);
	close(sigfd);
	if (detach)
		unlink(pidfile);
	free(remote_buf);
	return ret;
}
