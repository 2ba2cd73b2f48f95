// SPDX-License-Identifier: GPL-2.0
/*
 * TraceConfig files: load, check, convert to a kernel session spec.
 *
 * Text configs go through textpb (positions kept, so a bad value is
 * reported at its line:column); binary ones through protobuf-c, whose
 * unknown_fields tell us what pbtrace's subset does not cover. Both end in
 * the same checks, written so each message says what to change.
 */
#define _GNU_SOURCE	/* vasprintf, open_memstream */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "syscalls.h"
#include "textpb.h"

/* A text config this large is certainly a mistake (wrong file). */
#define PBT_CONFIG_FILE_MAX (4 << 20)

#define DS_FTRACE "linux.ftrace"
#define DS_PROCESS_STATS "linux.process_stats"
#define DS_SYS_STATS "linux.sys_stats"

typedef Perfetto__Protos__TraceConfig__BufferConfig buffer_config;
typedef Perfetto__Protos__TraceConfig__DataSource data_source;
typedef Perfetto__Protos__DataSourceConfig ds_config;
typedef Perfetto__Protos__FtraceConfig ftrace_config;
typedef Perfetto__Protos__TraceConfig__TriggerConfig trigger_config;

/* What the checks need to word their messages. */
struct check {
	struct pbt_config *c;
	const char *name;		/* file name for messages */
	const struct textpb_error *tp;	/* positions; NULL for binary */
	char *err;
	size_t errlen;
};

/* Append a formatted line to the array *v of *n (dropped if out of memory). */
static void push_line(char ***v, size_t *n, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void push_line(char ***v, size_t *n, const char *fmt, va_list ap)
{
	char **w, *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return;
	w = realloc(*v, (*n + 1) * sizeof(*w));
	if (!w) {
		free(s);
		return;
	}
	*v = w;
	w[(*n)++] = s;
}

static void add_warning(struct pbt_config *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_warning(struct pbt_config *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	push_line(&c->warnings, &c->nr_warnings, fmt, ap);
	va_end(ap);
}

static void add_notice(struct pbt_config *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_notice(struct pbt_config *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	push_line(&c->notices, &c->nr_notices, fmt, ap);
	va_end(ap);
}

/* "file:line:col: " when the text said where m.field[index] was set,
 * else "file: ". */
static void where(const struct check *k, const void *m, const char *field,
		  size_t index, char *buf, size_t n)
{
	unsigned int line, col;

	if (k->tp && m && field &&
	    !textpb_find_pos(k->tp, m, field, index, &line, &col))
		snprintf(buf, n, "%s:%u:%u: ", k->name, line, col);
	else
		snprintf(buf, n, "%s: ", k->name);
}

#define PRE_MAX	512
#define MSG_MAX	768

/* Where m.field[index] was set, then the message: errors and warnings alike. */
static void vsay(const struct check *k, const void *m, const char *field,
		 size_t index, char *buf, size_t n, const char *fmt, va_list ap)
{
	char pre[PRE_MAX], msg[MSG_MAX];

	where(k, m, field, index, pre, sizeof(pre));
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(buf, n, "%s%s", pre, msg);
}

static __attribute__((format(printf, 6, 7)))
int fail(const struct check *k, const void *m, const char *field,
	 size_t index, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(k, m, field, index, k->err, k->errlen, fmt, ap);
	va_end(ap);
	return code;
}

static __attribute__((format(printf, 5, 6)))
void warn(const struct check *k, const void *m, const char *field,
	  size_t index, const char *fmt, ...)
{
	char line[PRE_MAX + MSG_MAX];	/* all of pre and msg */
	va_list ap;

	va_start(ap, fmt);
	vsay(k, m, field, index, line, sizeof(line), fmt, ap);
	va_end(ap);
	add_warning(k->c, "%s", line);
}

/* ---- input ---- */

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

enum pbt_config_format pbt_config_detect(const char *name, const void *data,
					 size_t len)
{
	static const char *const text_ext[] = {
		".pbtx", ".pbtxt", ".txtpb", ".textproto", ".txt", ".cfg",
	};
	static const char *const bin_ext[] = { ".pb", ".binpb", ".bin" };
	const unsigned char *p = data;
	size_t i;

	for (i = 0; name && i < sizeof(text_ext) / sizeof(text_ext[0]); i++)
		if (has_suffix(name, text_ext[i]))
			return PBT_CONFIG_TEXT;
	for (i = 0; name && i < sizeof(bin_ext) / sizeof(bin_ext[0]); i++)
		if (has_suffix(name, bin_ext[i]))
			return PBT_CONFIG_BINARY;
	/* Text is printable (UTF-8 allowed in comments and strings); every
	 * binary TraceConfig field tag of the common fields (buffers 0x0a,
	 * data_sources 0x12, duration_ms 0x18) is a control byte. */
	for (i = 0; i < len; i++)
		if ((p[i] < 0x20 && !strchr("\t\n\r\v\f", p[i])) || p[i] == 0x7f)
			return PBT_CONFIG_BINARY;
	return PBT_CONFIG_TEXT;
}

static int read_all(const char *path, char **out, size_t *len,
		    char *err, size_t errlen)
{
	bool std_in = !strcmp(path, "-");
	FILE *f = std_in ? stdin : fopen(path, "rb");
	size_t cap = 4096, n = 0, r;
	char *buf, *nb;

	if (!f) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot open config: %s", path,
			 strerror(e));
		return -e;
	}
	buf = malloc(cap);
	while (buf) {
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		if (cap >= PBT_CONFIG_FILE_MAX) {
			free(buf);
			if (!std_in)
				fclose(f);
			snprintf(err, errlen, "%s: config larger than %d MiB: is this the right file?",
				 path, PBT_CONFIG_FILE_MAX >> 20);
			return -EFBIG;
		}
		nb = realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	if (!buf || ferror(f)) {
		int e = buf ? EIO : ENOMEM;

		free(buf);
		if (!std_in)
			fclose(f);
		snprintf(err, errlen, "%s: cannot read config: %s", path,
			 strerror(e));
		return -e;
	}
	if (!std_in)
		fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

/* ---- binary configs: what the subset does not cover ---- */

static void walk_unknown(const struct check *k, const ProtobufCMessage *m,
			 const char *path)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	char sub[512];
	unsigned int i;
	size_t j, n;

	for (i = 0; i < m->n_unknown_fields; i++)
		warn(k, NULL, NULL, 0,
		     "field number %u in %s (%s) is not implemented by pbtrace; ignored",
		     m->unknown_fields[i].tag, d->name, path[0] ? path : "top level");
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m + f->offset;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			ProtobufCMessage *const *arr =
				*(ProtobufCMessage **const *)base;

			n = *(const size_t *)((const char *)m + f->quantifier_offset);
			for (j = 0; j < n; j++) {
				snprintf(sub, sizeof(sub), "%s%s%s[%zu]", path,
					 path[0] ? "." : "", f->name, j);
				walk_unknown(k, arr[j], sub);
			}
		} else if (*(ProtobufCMessage *const *)base) {
			snprintf(sub, sizeof(sub), "%s%s%s", path,
				 path[0] ? "." : "", f->name);
			walk_unknown(k, *(ProtobufCMessage *const *)base, sub);
		}
	}
}

/* ---- checks ---- */

static bool is_name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

/* "group/name" (or "group:name", as perf writes it) with [A-Za-z0-9_]
 * on both sides, as tracefs names them, or a glob over those names
 * ("tcp/\*", "sched/sched_wak*"): tracepoints.c expands it. */
static bool event_name_ok(const char *s)
{
	size_t sep = strcspn(s, "/:");
	const char *p;

	if (!s[sep] || !sep || !s[sep + 1] || strlen(s) >= PBTRACE_NAME_MAX)
		return false;
	for (p = s; *p; p++)
		if (p != s + sep && !is_name_char(*p) && !strchr("*?[]!", *p))
			return false;
	return true;
}

static int check_buffers(const struct check *k)
{
	const pbt_trace_config *tc = k->c->tc;
	size_t i;

	if (!tc->n_buffers)
		return fail(k, NULL, NULL, 0, -EINVAL,
			    "no buffers: add 'buffers { size_kb: 8192 }' (one per kernel buffer you want)");
	for (i = 0; i < tc->n_buffers; i++) {
		const buffer_config *b = tc->buffers[i];

		if (!b->has_size_kb || b->size_kb < PBT_BUFFER_MIN_KB)
			return fail(k, b, b->has_size_kb ? "size_kb" : NULL, 0, -EINVAL,
				    "buffers[%zu].size_kb is %u: pbtrace needs at least %u (KB, over all CPUs); set size_kb: 8192 for a typical trace",
				    i, b->size_kb, PBT_BUFFER_MIN_KB);
		if (b->has_fill_policy &&
		    (int)b->fill_policy != PBTRACE_FILL_UNSPECIFIED &&
		    (int)b->fill_policy != PBTRACE_FILL_RING_BUFFER &&
		    (int)b->fill_policy != PBTRACE_FILL_DISCARD)
			return fail(k, b, "fill_policy", 0, -EINVAL,
				    "buffers[%zu].fill_policy %d is not a fill policy: use RING_BUFFER or DISCARD",
				    i, (int)b->fill_policy);
	}
	return 0;
}

static int check_ftrace(const struct check *k, size_t ds, const ftrace_config *fc)
{
	size_t i;

	for (i = 0; i < fc->n_ftrace_events; i++) {
		const char *e = fc->ftrace_events[i];

		if (!event_name_ok(e))
			return fail(k, fc, "ftrace_events", i, -EINVAL,
				    "data_sources[%zu] ftrace_events[%zu] \"%s\" is not \"group/name\": write it as e.g. \"sched/sched_switch\", or a glob such as \"tcp/*\" ('tracectl list-events' lists them)",
				    ds, i, e);
	}
	if (fc->n_tids_to_trace > PBTRACE_MAX_PIDS)
		return fail(k, fc, "tids_to_trace", PBTRACE_MAX_PIDS, -EINVAL,
			    "data_sources[%zu] has %zu tids_to_trace: pbtrace can filter at most %d threads per buffer",
			    ds, fc->n_tids_to_trace, PBTRACE_MAX_PIDS);
	for (i = 0; i < fc->n_syscall_events; i++) {
		const char *e = fc->syscall_events[i];

		if (pbt_syscall_nr(e) < 0)
			return fail(k, fc, "syscall_events", i, -EINVAL,
				    "data_sources[%zu] syscall_events[%zu] \"%s\" is not a syscall of this machine's ABI: name it as Perfetto does, e.g. \"sys_openat\" (or \"openat\"), as in <asm/unistd.h>",
				    ds, i, e);
	}
	if (fc->n_atrace_categories || fc->n_atrace_apps)
		warn(k, fc, fc->n_atrace_categories ? "atrace_categories" : "atrace_apps", 0,
		     "data_sources[%zu] atrace_categories/atrace_apps: Android atrace is not implemented by pbtrace; ignored",
		     ds);
	if (fc->has_buffer_size_kb && fc->buffer_size_kb > PBT_BUFFER_MAX_KB)
		return fail(k, fc, "buffer_size_kb", 0, -EINVAL,
			    "data_sources[%zu] ftrace_config.buffer_size_kb %u (per CPU) is above pbtrace's %d KB per buffer: ask for less",
			    ds, fc->buffer_size_kb, PBT_BUFFER_MAX_KB);
	if (fc->drain_period_ms && !k->c->tc->write_into_file)
		warn(k, fc, "drain_period_ms", 0,
		     "data_sources[%zu] ftrace_config.drain_period_ms only applies with write_into_file: true (without it the kernel buffer is the trace buffer until the session stops); ignored",
		     ds);
	else if (fc->drain_period_ms && fc->drain_period_ms < PBT_DRAIN_PERIOD_MIN_MS)
		warn(k, fc, "drain_period_ms", 0,
		     "data_sources[%zu] ftrace_config.drain_period_ms %u is below pbtrace's minimum: traced drains every %d ms",
		     ds, fc->drain_period_ms, PBT_DRAIN_PERIOD_MIN_MS);
	if (!fc->n_ftrace_events && !fc->n_syscall_events)
		warn(k, fc, NULL, 0,
		     "data_sources[%zu] linux.ftrace has no ftrace_events or syscall_events pbtrace can record; it records nothing",
		     ds);
	return 0;
}

/* What traced does regardless of these settings (see traced.c). */
static void check_stats(const struct check *k, size_t ds, const ds_config *dc)
{
	const Perfetto__Protos__ProcessStatsConfig *p = dc->process_stats_config;
	const Perfetto__Protos__SysStatsConfig *s = dc->sys_stats_config;

	if (p && p->has_scan_all_processes_on_start && !p->scan_all_processes_on_start)
		warn(k, p, "scan_all_processes_on_start", 0,
		     "data_sources[%zu] scan_all_processes_on_start: false is not implemented: pbtrace always writes the process tree at start (names and tgids need it)",
		     ds);
	if (p && p->has_record_thread_names && !p->record_thread_names)
		warn(k, p, "record_thread_names", 0,
		     "data_sources[%zu] record_thread_names: false is not implemented: pbtrace always records thread names",
		     ds);
	if (s && s->n_stat_counters)
		warn(k, s, "stat_counters", 0,
		     "data_sources[%zu] stat_counters is not implemented by pbtrace: every part of /proc/stat it knows is reported",
		     ds);
}

/* Warns about a sub-config the data source of that name does not read. */
static void check_stray(const struct check *k, size_t ds, const ds_config *dc)
{
	const char *n = dc->name;

	if (dc->ftrace_config && strcmp(n, DS_FTRACE))
		warn(k, dc, "ftrace_config", 0,
		     "data_sources[%zu] \"%s\" has an ftrace_config, which only \"linux.ftrace\" reads; ignored",
		     ds, n);
	if (dc->process_stats_config && strcmp(n, DS_PROCESS_STATS))
		warn(k, dc, "process_stats_config", 0,
		     "data_sources[%zu] \"%s\" has a process_stats_config, which only \"linux.process_stats\" reads; ignored",
		     ds, n);
	if (dc->sys_stats_config && strcmp(n, DS_SYS_STATS))
		warn(k, dc, "sys_stats_config", 0,
		     "data_sources[%zu] \"%s\" has a sys_stats_config, which only \"linux.sys_stats\" reads; ignored",
		     ds, n);
}

/*
 * machine_name_filter: names as a relay sends them in its HELLO (printable
 * ASCII), "host" for this machine. "*" is pbtrace's own wildcard on the
 * netlink side; in a config trace_all_machines says it, as in Perfetto.
 */
static int check_machine_names(const struct check *k, size_t ds,
			       const data_source *d)
{
	size_t i, len;
	const char *m, *p;

	if (d->n_machine_name_filter > PBTRACE_MAX_MACHINE_NAMES)
		return fail(k, d, "machine_name_filter", PBTRACE_MAX_MACHINE_NAMES,
			    -EINVAL,
			    "data_sources[%zu] has %zu machine_name_filter entries: pbtrace takes at most %d machines per buffer; use trace_all_machines: true and no filter to record on every machine",
			    ds, d->n_machine_name_filter, PBTRACE_MAX_MACHINE_NAMES);
	for (i = 0; i < d->n_machine_name_filter; i++) {
		m = d->machine_name_filter[i];
		len = strlen(m);
		if (!len)
			return fail(k, d, "machine_name_filter", i, -EINVAL,
				    "data_sources[%zu] machine_name_filter[%zu] is empty: give a machine's name (its relay_name, default its 'uname -s') or \"host\" for this machine",
				    ds, i);
		if (len >= PBTRACE_NAME_MAX)
			return fail(k, d, "machine_name_filter", i, -EINVAL,
				    "data_sources[%zu] machine_name_filter[%zu] is %zu characters: pbtrace matches names of at most %d; give the guest a shorter relay_name",
				    ds, i, len, PBTRACE_NAME_MAX - 1);
		if (!strcmp(m, PBTRACE_MACHINE_ANY))
			return fail(k, d, "machine_name_filter", i, -EINVAL,
				    "data_sources[%zu] machine_name_filter[%zu] \"*\" is not a machine name: leave the filter out and set trace_all_machines: true to record on every machine",
				    ds, i);
		for (p = m; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
				return fail(k, d, "machine_name_filter", i, -EINVAL,
					    "data_sources[%zu] machine_name_filter[%zu] has byte 0x%02x: machine names are printable ASCII, as relays send them",
					    ds, i, (unsigned char)*p);
	}
	return 0;
}

static bool names_host(const data_source *d)
{
	size_t i;

	for (i = 0; i < d->n_machine_name_filter; i++)
		if (!strcmp(d->machine_name_filter[i], PBTRACE_MACHINE_HOST))
			return true;
	return false;
}

/* traced's own sources read this machine's /proc: they do not follow a
 * filter to other machines, and they do not stop for one either. */
static void check_machines_own(const struct check *k, size_t ds,
			       const data_source *d)
{
	if (!d->n_machine_name_filter || names_host(d))
		return;
	warn(k, d, "machine_name_filter", 0,
	     "data_sources[%zu] \"%s\" has a machine_name_filter without \"host\": traced records it on this machine only and regardless of the filter; relayed machines send only linux.ftrace data",
	     ds, d->config->name);
}

static int check_data_sources(const struct check *k)
{
	const pbt_trace_config *tc = k->c->tc;
	size_t i;
	int r;

	if (!tc->n_data_sources)
		return fail(k, NULL, NULL, 0, -EINVAL,
			    "no data_sources: add one with config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"sched/sched_switch\" } }");
	for (i = 0; i < tc->n_data_sources; i++) {
		const data_source *ds = tc->data_sources[i];
		const ds_config *dc = ds->config;

		if (!dc || !dc->name || !dc->name[0])
			return fail(k, tc, "data_sources", i, -EINVAL,
				    "data_sources[%zu] has no config { name: ... }: name it \"linux.ftrace\", \"linux.process_stats\" or \"linux.sys_stats\"",
				    i);
		if (dc->target_buffer >= tc->n_buffers)
			return fail(k, dc, "target_buffer", 0, -EINVAL,
				    "data_sources[%zu] (%s) target_buffer is %u but there %s only %zu buffer%s (0..%zu): add buffers or lower target_buffer",
				    i, dc->name, dc->target_buffer,
				    tc->n_buffers == 1 ? "is" : "are", tc->n_buffers,
				    tc->n_buffers == 1 ? "" : "s", tc->n_buffers - 1);
		check_stray(k, i, dc);
		check_stats(k, i, dc);
		r = check_machine_names(k, i, ds);
		if (r)
			return r;
		if (strcmp(dc->name, DS_FTRACE))
			check_machines_own(k, i, ds);
		if (!strcmp(dc->name, DS_FTRACE)) {
			if (dc->ftrace_config) {
				r = check_ftrace(k, i, dc->ftrace_config);
				if (r)
					return r;
			} else {
				warn(k, dc, "name", 0,
				     "data_sources[%zu] linux.ftrace has no ftrace_config; it records nothing",
				     i);
			}
		} else if (strcmp(dc->name, DS_PROCESS_STATS) &&
			   strcmp(dc->name, DS_SYS_STATS)) {
			warn(k, dc, "name", 0,
			     "data_sources[%zu] \"%s\" is not implemented by pbtrace (it has linux.ftrace, linux.process_stats, linux.sys_stats); ignored",
			     i, dc->name);
		}
	}
	return 0;
}

static int check_triggers(const struct check *k)
{
	const trigger_config *t = k->c->tc->trigger_config;
	size_t i;

	if (!t)
		return 0;
	switch (t->trigger_mode) {
	case PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING:
	case PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING:
		break;
	case PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__CLONE_SNAPSHOT:
		return fail(k, t, "trigger_mode", 0, -EINVAL,
			    "trigger_config.trigger_mode CLONE_SNAPSHOT is not implemented by pbtrace: use START_TRACING or STOP_TRACING");
	default:
		return fail(k, t, "trigger_mode", 0, -EINVAL,
			    "trigger_config needs trigger_mode: START_TRACING (record after a trigger) or STOP_TRACING (stop after a trigger)");
	}
	if (!t->n_triggers)
		return fail(k, t, "trigger_mode", 0, -EINVAL,
			    "trigger_config has no triggers: add triggers { name: \"NAME\" } and fire it with 'tracectl trigger NAME'");
	for (i = 0; i < t->n_triggers; i++) {
		const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *tr =
			t->triggers[i];

		if (!tr->name || !tr->name[0])
			return fail(k, t, "triggers", i, -EINVAL,
				    "trigger_config.triggers[%zu] has no name: add name: \"NAME\"",
				    i);
		if (strlen(tr->name) >= PBTRACE_NAME_MAX)
			return fail(k, tr, "name", 0, -EINVAL,
				    "trigger_config.triggers[%zu].name is longer than %d characters: shorten it",
				    i, PBTRACE_NAME_MAX - 1);
		if (tr->producer_name_regex)
			warn(k, tr, "producer_name_regex", 0,
			     "trigger_config.triggers[%zu].producer_name_regex is not implemented by pbtrace (any 'tracectl trigger' matches); ignored",
			     i);
	}
	if (!t->trigger_timeout_ms)
		return fail(k, t, NULL, 0, -EINVAL,
			    "trigger_config needs trigger_timeout_ms > 0: how long to wait for a trigger before the session ends");
	return 0;
}

static int check_session_name(const struct check *k, const char *s)
{
	const pbt_trace_config *tc = k->c->tc;
	const char *p;

	if (!s)
		return 0;
	if (!s[0] || strlen(s) >= PBTRACE_NAME_MAX)
		return fail(k, tc, "unique_session_name", 0, -EINVAL,
			    "unique_session_name must be 1 to %d characters",
			    PBTRACE_NAME_MAX - 1);
	for (p = s; *p; p++)
		if (!is_name_char(*p) && *p != '-' && *p != '.')
			return fail(k, tc, "unique_session_name", 0, -EINVAL,
				    "unique_session_name \"%s\" has '%c': use letters, digits, '_', '-' and '.'",
				    s, isprint((unsigned char)*p) ? *p : '?');
	return 0;
}

static int check_file_options(const struct check *k)
{
	const pbt_trace_config *tc = k->c->tc;

	if (tc->write_into_file && tc->file_write_period_ms &&
	    tc->file_write_period_ms < PBT_FILE_WRITE_PERIOD_MIN_MS)
		return fail(k, tc, "file_write_period_ms", 0, -EINVAL,
			    "file_write_period_ms is %u: the minimum is %d ms (as in Perfetto); use file_write_period_ms: %d or more",
			    tc->file_write_period_ms, PBT_FILE_WRITE_PERIOD_MIN_MS,
			    PBT_FILE_WRITE_PERIOD_MIN_MS);
	if (!tc->write_into_file && tc->has_file_write_period_ms)
		warn(k, tc, "file_write_period_ms", 0,
		     "file_write_period_ms only applies with write_into_file: true; ignored");
	if (tc->output_path && !tc->output_path[0])
		return fail(k, tc, "output_path", 0, -EINVAL,
			    "output_path is empty: give a file name or leave it out");
	if (tc->builtin_data_sources &&
	    tc->builtin_data_sources->snapshot_interval_ms &&
	    tc->builtin_data_sources->snapshot_interval_ms < PBT_SNAPSHOT_INTERVAL_MIN_MS)
		warn(k, tc->builtin_data_sources, "snapshot_interval_ms", 0,
		     "builtin_data_sources.snapshot_interval_ms %u is below pbtrace's minimum: traced writes a clock_snapshot every %d ms",
		     tc->builtin_data_sources->snapshot_interval_ms,
		     PBT_SNAPSHOT_INTERVAL_MIN_MS);
	return 0;
}

/* Distinct config buffers that enabled linux.ftrace sources target. */
static size_t kernel_buffers(const pbt_trace_config *tc, uint32_t *which)
{
	size_t i, j, n = 0;

	for (i = 0; i < tc->n_buffers; i++) {
		for (j = 0; j < tc->n_data_sources; j++) {
			const ds_config *dc = tc->data_sources[j]->config;
			const ftrace_config *fc = dc->ftrace_config;

			if (dc->target_buffer != i || strcmp(dc->name, DS_FTRACE) ||
			    !fc || (!fc->n_ftrace_events && !fc->n_syscall_events))
				continue;
			if (which && n < PBTRACE_MAX_BUFFERS)
				which[n] = (uint32_t)i;
			n++;
			break;
		}
	}
	return n;
}

static int check_all(const struct check *k)
{
	const pbt_trace_config *tc = k->c->tc;
	size_t nk;
	int r;

	r = check_buffers(k);
	if (!r)
		r = check_data_sources(k);
	if (!r)
		r = check_triggers(k);
	if (!r)
		r = check_session_name(k, tc->unique_session_name);
	if (!r)
		r = check_file_options(k);
	if (r)
		return r;
	nk = kernel_buffers(tc, NULL);
	if (!nk)
		return fail(k, NULL, NULL, 0, -EINVAL,
			    "no linux.ftrace data source with events: pbtrace records kernel events; add ftrace_config { ftrace_events: \"sched/sched_switch\" }");
	if (nk > PBTRACE_MAX_BUFFERS)
		return fail(k, NULL, NULL, 0, -EINVAL,
			    "linux.ftrace sources write into %zu different buffers: pbtrace supports at most %d; point several at one target_buffer",
			    nk, PBTRACE_MAX_BUFFERS);
	return 0;
}

/* ---- loading ---- */

static int parse_text(struct check *k, const char *data, size_t len,
		      bool positions)
{
	struct pbt_config *c = k->c;
	struct textpb_error tp = { 0 };
	size_t i;
	int r = 0;

	c->tc = (pbt_trace_config *)textpb_parse(
		&perfetto__protos__trace_config__descriptor, data, len, &tp);
	for (i = 0; i < tp.nr_warnings; i++)
		add_warning(c, "%s:%u:%u: %s", k->name, tp.warnings[i].line,
			    tp.warnings[i].col, tp.warnings[i].msg);
	if (tp.nr_warnings_dropped)
		add_warning(c, "%s: %zu more warnings not shown", k->name,
			    tp.nr_warnings_dropped);
	if (!c->tc) {
		snprintf(k->err, k->errlen, "%s:%u:%u: %s", k->name, tp.line,
			 tp.col, tp.msg);
		r = -EINVAL;
	} else {
		k->tp = positions ? &tp : NULL;
		r = check_all(k);
		k->tp = NULL;
	}
	textpb_error_free(&tp);
	if (r)
		return r;
	c->len = protobuf_c_message_get_packed_size(&c->tc->base);
	c->bytes = malloc(c->len ? c->len : 1);
	if (!c->bytes)
		return fail(k, NULL, NULL, 0, -ENOMEM, "out of memory");
	protobuf_c_message_pack(&c->tc->base, c->bytes);
	return 0;
}

static int parse_binary(struct check *k, const void *data, size_t len)
{
	struct pbt_config *c = k->c;

	c->tc = perfetto__protos__trace_config__unpack(NULL, len, data);
	if (!c->tc)
		return fail(k, NULL, NULL, 0, -EINVAL,
			    "not a valid binary TraceConfig (protobuf decoding failed); if it is a text config, name it .pbtx");
	walk_unknown(k, &c->tc->base, "");
	/* Kept verbatim: the trace_config packet shows what was asked for,
	 * including the fields pbtrace ignored. */
	c->bytes = malloc(len ? len : 1);
	if (!c->bytes)
		return fail(k, NULL, NULL, 0, -ENOMEM, "out of memory");
	memcpy(c->bytes, data, len);
	c->len = len;
	return check_all(k);
}

static int parse_any(const void *data, size_t len, const char *name,
		     enum pbt_config_format fmt, bool positions,
		     struct pbt_config *c, char *err, size_t errlen)
{
	struct check k = {
		.c = c, .name = name, .err = err, .errlen = errlen,
	};
	int r;

	memset(c, 0, sizeof(*c));
	if (fmt == PBT_CONFIG_AUTO)
		fmt = pbt_config_detect(name, data, len);
	c->format = fmt;
	r = fmt == PBT_CONFIG_TEXT ? parse_text(&k, data, len, positions) :
				     parse_binary(&k, data, len);
	if (!r && c->len > PBTRACE_MAX_CONFIG)
		r = fail(&k, NULL, NULL, 0, -E2BIG,
			 "config is %zu bytes serialized: the kernel keeps at most %d; drop fields pbtrace ignores",
			 c->len, PBTRACE_MAX_CONFIG);
	if (r) {
		char **w = c->warnings;
		size_t nw = c->nr_warnings;

		/* Warnings stay: they often explain the error. */
		c->warnings = NULL;
		c->nr_warnings = 0;
		pbt_config_free(c);
		c->warnings = w;
		c->nr_warnings = nw;
	}
	return r;
}

int pbt_config_parse(const void *data, size_t len, const char *name,
		     enum pbt_config_format fmt, struct pbt_config *c,
		     char *err, size_t errlen)
{
	return parse_any(data, len, name ? name : "<config>", fmt, true, c,
			 err, errlen);
}

int pbt_config_load(const char *path, enum pbt_config_format fmt,
		    struct pbt_config *c, char *err, size_t errlen)
{
	size_t len = 0;
	char *data = NULL;
	int r;

	memset(c, 0, sizeof(*c));
	r = read_all(path, &data, &len, err, errlen);
	if (r)
		return r;
	r = pbt_config_parse(data, len, strcmp(path, "-") ? path : "<stdin>",
			     fmt, c, err, errlen);
	free(data);
	return r;
}

void pbt_config_free(struct pbt_config *c)
{
	size_t i;

	if (c->tc)
		protobuf_c_message_free_unpacked(&c->tc->base, NULL);
	free(c->bytes);
	for (i = 0; i < c->nr_warnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	for (i = 0; i < c->nr_notices; i++)
		free(c->notices[i]);
	free(c->notices);
	memset(c, 0, sizeof(*c));
}

/* ---- conversion to a kernel session ---- */

static int add_event(struct pbt_buffer_spec *b, const char *e)
{
	size_t i;

	for (i = 0; i < b->nr_events; i++)
		if (!strcmp(b->events[i], e))
			return 0;
	if (b->nr_events >= PBT_MAX_EVENTS)
		return -1;
	b->events[b->nr_events++] = e;
	return 0;
}

static int add_syscall(struct pbt_buffer_spec *b, uint32_t nr)
{
	size_t i;

	for (i = 0; i < b->nr_syscalls; i++)
		if (b->syscalls[i] == nr)
			return 0;
	if (b->nr_syscalls >= PBTRACE_MAX_SYSCALLS)
		return -1;
	b->syscalls[b->nr_syscalls++] = nr;
	return 0;
}

/* The source asks for raw_syscalls events by name, i.e. for every syscall
 * (Perfetto: syscall_events narrows them when both are given). */
static bool wants_all_syscalls(const ftrace_config *fc)
{
	size_t i;

	if (fc->n_syscall_events)
		return false;
	for (i = 0; i < fc->n_ftrace_events; i++)
		if (!strncmp(fc->ftrace_events[i], "raw_syscalls/", 13))
			return true;
	return false;
}

static int add_syscalls(struct pbt_buffer_spec *b, const ftrace_config *fc)
{
	size_t i;
	int nr;

	for (i = 0; i < fc->n_syscall_events; i++) {
		nr = pbt_syscall_nr(fc->syscall_events[i]);
		if (nr < 0)	/* checked when loaded */
			continue;
		if (add_syscall(b, (uint32_t)nr))
			return -1;
	}
	return 0;
}

static int add_pid(struct pbt_buffer_spec *b, uint32_t pid)
{
	size_t i;

	for (i = 0; i < b->nr_pids; i++)
		if (b->pids[i] == pid)
			return 0;
	if (b->nr_pids >= PBTRACE_MAX_PIDS)
		return -1;
	b->pids[b->nr_pids++] = pid;
	return 0;
}

/* Events and threads of every linux.ftrace source writing into config
 * buffer cfg_buf. A source without tids_to_trace wants every thread, so
 * then the buffer is not narrowed at all. */
static int fill_buffer(struct pbt_config *c, struct pbt_buffer_spec *b,
		       uint32_t cfg_buf, char *err, size_t errlen)
{
	const pbt_trace_config *tc = c->tc;
	bool all_threads = false, all_syscalls = false;
	size_t i, j;

	for (i = 0; i < tc->n_data_sources; i++) {
		const ds_config *dc = tc->data_sources[i]->config;
		const ftrace_config *fc = dc->ftrace_config;
		int r = 0;

		if (dc->target_buffer != cfg_buf || strcmp(dc->name, DS_FTRACE) ||
		    !fc || (!fc->n_ftrace_events && !fc->n_syscall_events))
			continue;
		for (j = 0; j < fc->n_ftrace_events && !r; j++)
			r = add_event(b, fc->ftrace_events[j]);
		if (fc->n_syscall_events && !r)
			r = add_event(b, "raw_syscalls/sys_enter") ||
			    add_event(b, "raw_syscalls/sys_exit");
		if (r) {
			snprintf(err, errlen, "buffers[%u]: more than %d distinct events: pbtrace takes at most %d per buffer; split them over two buffers",
				 cfg_buf, PBT_MAX_EVENTS, PBT_MAX_EVENTS);
			return -EINVAL;
		}
		if (add_syscalls(b, fc)) {
			snprintf(err, errlen, "buffers[%u]: more than %d distinct syscall_events: pbtrace filters at most %d syscalls per buffer; leave syscall_events out and list raw_syscalls/sys_enter in ftrace_events to record every syscall",
				 cfg_buf, PBTRACE_MAX_SYSCALLS, PBTRACE_MAX_SYSCALLS);
			return -EINVAL;
		}
		/* Per buffer here: one source asking for full sched events
		 * gets them for the whole buffer (Perfetto's default: on). */
		if (fc->compact_sched && fc->compact_sched->has_enabled &&
		    !fc->compact_sched->enabled)
			b->full_sched = true;
		if (wants_all_syscalls(fc))
			all_syscalls = true;
		if (!fc->n_tids_to_trace)
			all_threads = true;
		for (j = 0; j < fc->n_tids_to_trace; j++) {
			if (add_pid(b, fc->tids_to_trace[j])) {
				snprintf(err, errlen, "buffers[%u]: more than %d distinct tids_to_trace: pbtrace filters at most %d threads per buffer",
					 cfg_buf, PBTRACE_MAX_PIDS, PBTRACE_MAX_PIDS);
				return -EINVAL;
			}
		}
	}
	if (all_threads && b->nr_pids) {
		add_warning(c, "buffers[%u]: tids_to_trace does not narrow this buffer, because another linux.ftrace source writes every thread into it",
			    cfg_buf);
		b->nr_pids = 0;
	}
	if (all_syscalls && b->nr_syscalls) {
		add_warning(c, "buffers[%u]: syscall_events does not narrow this buffer, because another linux.ftrace source lists raw_syscalls events without syscall_events (every syscall) for it",
			    cfg_buf);
		b->nr_syscalls = 0;
	}
	return 0;
}

static int add_machine(struct pbt_buffer_spec *b, const char *m)
{
	size_t i;

	for (i = 0; i < b->nr_machines; i++)
		if (!strcmp(b->machines[i], m))
			return 0;
	if (b->nr_machines >= PBTRACE_MAX_MACHINE_NAMES)
		return -1;
	b->machines[b->nr_machines++] = m;
	return 0;
}

static bool is_ftrace_source(const ds_config *dc, uint32_t cfg_buf)
{
	const ftrace_config *fc = dc->ftrace_config;

	return dc->target_buffer == cfg_buf && !strcmp(dc->name, DS_FTRACE) &&
	       fc && (fc->n_ftrace_events || fc->n_syscall_events);
}

/* The machines one source records on: its filter, else this machine and,
 * with trace_all_machines, every relayed one. */
static int add_source_machines(const pbt_trace_config *tc,
			       const data_source *d, struct pbt_buffer_spec *b)
{
	size_t i;
	int r = 0;

	if (!d->n_machine_name_filter)
		return add_machine(b, PBTRACE_MACHINE_HOST) ||
		       (tc->trace_all_machines &&
			add_machine(b, PBTRACE_MACHINE_ANY)) ? -1 : 0;
	for (i = 0; i < d->n_machine_name_filter && !r; i++)
		r = add_machine(b, d->machine_name_filter[i]);
	return r;
}

/*
 * PBTRACE_A_BUFFER_MACHINES of config buffer cfg_buf: the union over its
 * linux.ftrace sources. The kernel gives a buffer one event list, so every
 * machine of the union records the events of every source: warned about
 * when the sources name different machines.
 */
static int fill_machines(struct pbt_config *c, struct pbt_buffer_spec *b,
			 uint32_t cfg_buf, char *err, size_t errlen)
{
	const pbt_trace_config *tc = c->tc;
	struct pbt_buffer_spec one;
	size_t i, sources = 0, narrower = 0;

	b->nr_machines = 0;
	for (i = 0; i < tc->n_data_sources; i++) {
		const data_source *d = tc->data_sources[i];

		if (!is_ftrace_source(d->config, cfg_buf))
			continue;
		sources++;
		if (add_source_machines(tc, d, b)) {
			snprintf(err, errlen, "buffers[%u]: its linux.ftrace sources name more than %d distinct machines: pbtrace takes at most %d per buffer; use trace_all_machines: true without filters, or split the sources over two buffers",
				 cfg_buf, PBTRACE_MAX_MACHINE_NAMES,
				 PBTRACE_MAX_MACHINE_NAMES);
			return -EINVAL;
		}
	}
	for (i = 0; i < tc->n_data_sources; i++) {
		const data_source *d = tc->data_sources[i];

		if (!is_ftrace_source(d->config, cfg_buf))
			continue;
		one.nr_machines = 0;
		(void)add_source_machines(tc, d, &one);	/* a subset: fits */
		narrower += one.nr_machines < b->nr_machines;
	}
	if (sources > 1 && narrower)
		add_warning(c, "buffers[%u]: its linux.ftrace sources name different machines; each of those machines records the events of all of them (one event list per buffer): give each its own buffer to keep them apart",
			    cfg_buf);
	/* Only this machine is what no attribute means: leave it out, so
	 * an older module (no machine lists) takes the session too. */
	if (b->nr_machines == 1 && !strcmp(b->machines[0], PBTRACE_MACHINE_HOST))
		b->nr_machines = 0;
	return 0;
}

/*
 * The kernel buffer of config buffer cfg_buf: Perfetto's buffer_size_kb
 * sizes the per-CPU kernel buffer its ftrace events wait in; in pbtrace
 * that kernel buffer is the trace buffer itself, so it gets at least
 * buffer_size_kb per CPU (the largest its sources ask for): the larger of
 * buffers[].size_kb and buffer_size_kb * CPUs, said in a notice when
 * that grows it.
 */
static void buffer_size(struct pbt_config *c, const buffer_config *bc,
		       uint32_t cfg_buf, unsigned long cpus, uint32_t *size_kb)
{
	const pbt_trace_config *tc = c->tc;
	uint32_t per_cpu = 0;
	uint64_t want;
	size_t i;

	*size_kb = bc->size_kb;
	for (i = 0; i < tc->n_data_sources; i++) {
		const ds_config *dc = tc->data_sources[i]->config;

		if (is_ftrace_source(dc, cfg_buf) &&
		    dc->ftrace_config->buffer_size_kb > per_cpu)
			per_cpu = dc->ftrace_config->buffer_size_kb;
	}
	want = (uint64_t)per_cpu * cpus;
	if (want <= bc->size_kb)
		return;
	if (want > PBT_BUFFER_MAX_KB) {
		/* Perfetto would take it (its kernel buffers are separate);
		 * the kernel refuses more than this for one buffer. */
		*size_kb = bc->size_kb > PBT_BUFFER_MAX_KB ? bc->size_kb :
							    PBT_BUFFER_MAX_KB;
		add_notice(c, "buffers[%u]: %u KB, pbtrace's largest buffer, instead of ftrace_config.buffer_size_kb %u per CPU x %lu CPUs = %llu KB: in pbtrace the kernel buffer is the trace buffer",
			   cfg_buf, *size_kb, per_cpu, cpus,
			   (unsigned long long)want);
		return;
	}
	*size_kb = (uint32_t)want;
	add_notice(c, "buffers[%u]: %u KB (ftrace_config.buffer_size_kb %u per CPU x %lu CPUs) instead of size_kb %u: in pbtrace the kernel buffer is the trace buffer",
		   cfg_buf, *size_kb, per_cpu, cpus, bc->size_kb);
}

/* nr_cpu_ids, as the kernel splits a buffer: the last possible CPU + 1. */
long pbt_kernel_cpus(const char *possible)
{
	char buf[256], *p, *end;
	long last = -1, v;
	FILE *f;

	if (!possible) {
		f = fopen("/sys/devices/system/cpu/possible", "re");
		if (!f || !fgets(buf, sizeof(buf), f)) {
			if (f)
				fclose(f);
			return sysconf(_SC_NPROCESSORS_CONF);
		}
		fclose(f);
		possible = buf;
	}
	/* "0-3", "0,2-5", "0": the largest number is the last CPU. */
	for (p = (char *)possible; *p; p = end) {
		if (!isdigit((unsigned char)*p)) {	/* ',' '-' '\n' */
			end = p + 1;
			continue;
		}
		v = strtol(p, &end, 10);
		if (v > last)
			last = v;
	}
	return last >= 0 ? last + 1 : sysconf(_SC_NPROCESSORS_CONF);
}

int pbt_config_to_spec(struct pbt_config *c, struct pbt_session_spec *spec,
		       uint32_t kbuf_to_cfg[PBTRACE_MAX_BUFFERS],
		       unsigned int nr_cpus, char *err, size_t errlen)
{
	const pbt_trace_config *tc = c->tc;
	uint32_t which[PBTRACE_MAX_BUFFERS];
	size_t i, n = kernel_buffers(tc, which);
	long cpus = nr_cpus ? (long)nr_cpus : pbt_kernel_cpus(NULL);

	memset(spec, 0, sizeof(*spec));
	for (i = 0; i < c->nr_notices; i++)	/* from an earlier call */
		free(c->notices[i]);
	free(c->notices);
	c->notices = NULL;
	c->nr_notices = 0;
	if (!n || n > PBTRACE_MAX_BUFFERS) {
		snprintf(err, errlen, "config has %zu kernel buffers: pbtrace needs 1 to %d (was it checked by pbt_config_load?)",
			 n, PBTRACE_MAX_BUFFERS);
		return -EINVAL;
	}
	if (cpus < 1)
		cpus = 1;
	for (i = 0; i < n; i++) {
		const buffer_config *bc = tc->buffers[which[i]];
		struct pbt_buffer_spec *b = &spec->buffers[i];
		unsigned long need = 2UL * PBT_CHUNK_KB * (unsigned long)cpus;
		int r;

		buffer_size(c, bc, which[i], (unsigned long)cpus, &b->size_kb);
		/* The kernel splits size_kb over the CPUs and each CPU needs
		 * a chunk to write while another waits to be read. */
		if (b->size_kb < need) {
			snprintf(err, errlen, "buffers[%u].size_kb %u is too small for %ld CPUs: pbtrace needs 2 chunks of %d KB per CPU; use size_kb: %lu or more",
				 which[i], b->size_kb, cpus, PBT_CHUNK_KB, need);
			return -EINVAL;
		}
		b->fill_policy = (uint32_t)bc->fill_policy;
		r = fill_buffer(c, b, which[i], err, errlen);
		if (!r)
			r = fill_machines(c, b, which[i], err, errlen);
		if (r)
			return r;
		if (kbuf_to_cfg)
			kbuf_to_cfg[i] = which[i];
	}
	spec->nr_buffers = n;
	if (tc->unique_session_name)
		snprintf(c->name, sizeof(c->name), "%s", tc->unique_session_name);
	else if (!c->name[0])
		snprintf(c->name, sizeof(c->name), "pbtrace-%ld-%d",
			 (long)time(NULL), (int)getpid());
	spec->name = c->name;
	spec->config = c->bytes;
	spec->config_len = c->len;
	spec->output = tc->output_path;
	return 0;
}

/* ---- flags ---- */

int pbt_fill_policy_from_name(const char *s)
{
	if (!strcasecmp(s, "ring") || !strcasecmp(s, "ring_buffer") ||
	    !strcasecmp(s, "ringbuffer"))
		return PBTRACE_FILL_RING_BUFFER;
	if (!strcasecmp(s, "discard"))
		return PBTRACE_FILL_DISCARD;
	return -1;
}

/* A text format string literal for s. */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\%03o", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void flags_text(FILE *f, const struct pbt_config_flags *fl)
{
	size_t i;

	fprintf(f, "# tracectl flags as a TraceConfig\n");
	fprintf(f, "buffers {\n  size_kb: %u\n  fill_policy: %s\n}\n",
		fl->size_kb ? fl->size_kb : 8192,
		fl->fill_policy == PBTRACE_FILL_DISCARD ? "DISCARD" : "RING_BUFFER");
	fprintf(f, "data_sources {\n  config {\n    name: \"linux.ftrace\"\n    target_buffer: 0\n    ftrace_config {\n");
	for (i = 0; i < fl->nr_events; i++) {
		fprintf(f, "      ftrace_events: ");
		put_string(f, fl->events[i]);
		fputc('\n', f);
	}
	for (i = 0; i < fl->nr_pids; i++)
		fprintf(f, "      tids_to_trace: %u\n", fl->pids[i]);
	fprintf(f, "    }\n  }\n");
	for (i = 0; i < fl->nr_machines; i++) {
		fprintf(f, "  machine_name_filter: ");
		put_string(f, fl->machines[i]);
		fputc('\n', f);
	}
	fprintf(f, "}\n");
	/* Names and tgids for the threads the events mention. */
	fprintf(f, "data_sources {\n  config {\n    name: \"linux.process_stats\"\n    target_buffer: 0\n    process_stats_config {\n      scan_all_processes_on_start: true\n      record_thread_names: true\n    }\n  }\n}\n");
	if (fl->all_machines)
		fprintf(f, "trace_all_machines: true\n");
	if (fl->duration_ms)
		fprintf(f, "duration_ms: %u\n", fl->duration_ms);
	/*
	 * Streaming flushes at the write period too: flush_period_ms says so,
	 * or trace_processor flags the file (config_write_into_file_no_flush:
	 * the end of a streamed trace could be missing without flushes).
	 */
	if (fl->file_write_period_ms)
		fprintf(f, "write_into_file: true\nfile_write_period_ms: %u\nflush_period_ms: %u\n",
			fl->file_write_period_ms, fl->file_write_period_ms);
	if (fl->name) {
		fprintf(f, "unique_session_name: ");
		put_string(f, fl->name);
		fputc('\n', f);
	}
	if (fl->output) {
		fprintf(f, "output_path: ");
		put_string(f, fl->output);
		fputc('\n', f);
	}
}

int pbt_config_from_flags(const struct pbt_config_flags *fl,
			  struct pbt_config *c, char **text,
			  char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	memset(c, 0, sizeof(*c));
	if (!fl->nr_events) {
		snprintf(err, errlen, "no events given: name at least one, e.g. sched/sched_switch ('tracectl list-events' lists them)");
		return -EINVAL;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	flags_text(f, fl);
	if (fclose(f)) {
		free(buf);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* Positions in generated text would mean nothing to the user: the
	 * messages name the field (ftrace_events = the events given). */
	r = parse_any(buf, len, "tracectl flags", PBT_CONFIG_TEXT, false, c,
		      err, errlen);
	if (text && !r)
		*text = buf;
	else
		free(buf);
	return r;
}
