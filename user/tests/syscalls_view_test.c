// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of tracectl's syscall view (user/tracectl/syscalls_view.c):
 * pairing across CPUs out of order, the summary's maths against numbers
 * worked out by hand (perf trace -s's stddev of the mean), sorting,
 * pending and continued calls, string arguments (read, unreadable, cut at
 * the bound), filters, and a file fed in pieces. Traces are built with
 * protobuf-c as traced writes them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syscalls.h"
#include "trace_file.h"
#include "../tracectl/syscalls_view.h"
#include "tap.h"
#include "trace.pb-c.h"

typedef Perfetto__Protos__FtraceEvent fev;

static uint8_t trace[1 << 20];
static size_t trace_len;
static int nr_openat, nr_getppid, nr_read, nr_exit_group;
static uint32_t cur_machine;	/* the packets' machine_id; 0: none */

static void add_packet(Perfetto__Protos__TracePacket *p)
{
	size_t len;

	if (cur_machine) {
		p->has_machine_id = true;
		p->machine_id = cur_machine;
	}
	len = perfetto__protos__trace_packet__get_packed_size(p);
	trace[trace_len++] = 0x0a;
	while (len >= 0x80) {
		trace[trace_len++] = (uint8_t)(len | 0x80);
		len >>= 7;
	}
	trace[trace_len++] = (uint8_t)len;
	trace_len += perfetto__protos__trace_packet__pack(p, trace + trace_len);
}

/* One Trace.packet record holding one bundle of these events. */
static void add_bundle(uint32_t cpu, fev **ev, size_t n)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceEventBundle b =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;

	b.has_cpu = true;
	b.cpu = cpu;
	b.event = ev;
	b.n_event = n;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	p.ftrace_events = &b;
	add_packet(&p);
}

/* A relayed machine's system_info, as the host writes it. */
static void add_machine_name(const char *name)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;

	si.machine_name = (char *)name;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO;
	p.system_info = &si;
	add_packet(&p);
}

/* The events live as long as the test: an arena, so nothing leaks. */
static void *zalloc(size_t n, size_t size)
{
	static _Alignas(16) uint8_t arena[1 << 20];
	static size_t used;
	void *p = arena + used;

	used += (n * size + 15) & ~(size_t)15;
	if (used > sizeof(arena))
		abort();
	return p;
}

static fev *event(uint64_t ts, uint32_t pid)
{
	fev *e = zalloc(1, sizeof(*e));

	perfetto__protos__ftrace_event__init(e);
	e->has_timestamp = e->has_pid = true;
	e->timestamp = ts;
	e->pid = pid;
	return e;
}

static fev *enter(uint64_t ts, uint32_t pid, int id, uint64_t a0,
		  uint64_t a1, uint64_t a2)
{
	fev *e = event(ts, pid);
	Perfetto__Protos__SysEnterFtraceEvent *s = zalloc(1, sizeof(*s));

	perfetto__protos__sys_enter_ftrace_event__init(s);
	s->has_id = true;
	s->id = id;
	s->n_args = 6;
	s->args = zalloc(6, sizeof(uint64_t));
	s->args[0] = a0;
	s->args[1] = a1;
	s->args[2] = a2;
	e->event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_ENTER;
	e->sys_enter = s;
	return e;
}

static fev *sys_exit(uint64_t ts, uint32_t pid, int id, int64_t ret)
{
	fev *e = event(ts, pid);
	Perfetto__Protos__SysExitFtraceEvent *s = zalloc(1, sizeof(*s));

	perfetto__protos__sys_exit_ftrace_event__init(s);
	s->has_id = s->has_ret = true;
	s->id = id;
	s->ret = ret;
	e->event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_EXIT;
	e->sys_exit = s;
	return e;
}

/* The lead's string event: str (read), ptr (fault) or truncated. */
static fev *strings(uint64_t ts, uint32_t pid, const char *name,
		    const char *str, uint64_t ptr, bool truncated)
{
	fev *e = event(ts, pid);
	Perfetto__Protos__GenericFtraceEvent *g = zalloc(1, sizeof(*g));
	Perfetto__Protos__GenericFtraceEvent__Field **f = zalloc(2, sizeof(*f));
	size_t i;

	perfetto__protos__generic_ftrace_event__init(g);
	for (i = 0; i < 2; i++) {
		f[i] = zalloc(1, sizeof(*f[i]));
		perfetto__protos__generic_ftrace_event__field__init(f[i]);
	}
	g->event_name = "sys_enter_openat";
	f[0]->name = (char *)name;
	if (str) {
		f[0]->value_case = PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_STR_VALUE;
		f[0]->str_value = (char *)str;
	} else {
		f[0]->value_case = PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_UINT_VALUE;
		f[0]->uint_value = ptr;
	}
	f[1]->name = "filename_truncated";
	f[1]->value_case = PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_UINT_VALUE;
	f[1]->uint_value = 1;
	g->field = f;
	g->n_field = truncated ? 2 : 1;
	e->event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC;
	e->generic = g;
	return e;
}

#define BUNDLE(cpu, ...) do { \
	fev *evs_[] = { __VA_ARGS__ }; \
	add_bundle(cpu, evs_, sizeof(evs_) / sizeof(evs_[0])); \
} while (0)

static char *out_buf;
static size_t out_len;

static struct sv_view *view(FILE **f, bool summary, void (*tweak)(struct sv_opts *))
{
	struct sv_opts o = { .lines = true, .summary = summary };

	*f = open_memstream(&out_buf, &out_len);
	o.out = *f;
	if (tweak)
		tweak(&o);
	return sv_new(&o);
}

static char *run(bool summary, void (*tweak)(struct sv_opts *),
		 struct sv_counts *c, struct sv_view **keep)
{
	uint64_t bad = 0;
	FILE *f;
	struct sv_view *v = view(&f, summary, tweak);

	tap(sv_feed(v, trace, trace_len, &bad) == (long)trace_len,
	    "the whole trace is taken");
	sv_finish(v);
	sv_get_counts(v, c);
	fclose(f);
	if (keep)
		*keep = v;
	else
		sv_free(v);
	return out_buf;
}

/*
 * tid 10 on CPUs 0 and 1: three openat of 1, 2, 3 us, the one with the
 * error's exit in a bundle written before its enter's; two getppid of
 * 10 us (0.9 us for the failed one); an openat whose name is unreadable and one cut at the bound; a
 * read still pending; an exit whose enter is before the trace; tid 11
 * ends in exit_group; tid 12 returns from a signal handler.
 */
static void build(void)
{
	static char longname[SV_STR_MAX + 1];

	memset(longname, 'a', SV_STR_MAX);
	BUNDLE(1, sys_exit(3000, 10, nr_openat, -2));
	BUNDLE(0, sys_exit(500, 10, nr_read, 7),
	       enter(1000, 10, nr_openat, (uint64_t)-100, 0x1000, O_RDONLY | O_CLOEXEC),
	       strings(1000, 10, "filename", "/etc/passwd", 0, false),
	       sys_exit(2000, 10, nr_openat, 3),
	       enter(2100, 10, nr_openat, 5, 0x2000, O_WRONLY | O_CREAT));
	BUNDLE(0, enter(9000, 10, pbt_syscall_nr("pipe2"), 0x6000, O_CLOEXEC | O_NONBLOCK, 0),
	       sys_exit(9001, 10, pbt_syscall_nr("pipe2"), 0),
	       enter(10000, 10, nr_openat, (uint64_t)-100, 0x3000, 0),
	       sys_exit(13000, 10, nr_openat, 4),
	       enter(20000, 10, nr_getppid, 0, 0, 0),
	       sys_exit(30000, 10, nr_getppid, 1),
	       enter(40000, 10, nr_getppid, 0, 0, 0),
	       sys_exit(50000, 10, nr_getppid, 1));
	BUNDLE(1, enter(60000, 10, nr_openat, (uint64_t)-100, 0xdead, 0),
	       strings(60000, 10, "filename", NULL, 0xdead, false),
	       sys_exit(60100, 10, nr_openat, -14),
	       enter(70000, 10, nr_openat, (uint64_t)-100, 0x4000, 0),
	       strings(70000, 10, "filename", longname, 0, true),
	       sys_exit(70100, 10, nr_openat, -36),
	       enter(80000, 10, nr_read, 3, 0x5000, 100),
	       enter(90000, 11, nr_exit_group, 0, 0, 0));
	/* rt_sigreturn's exit: the kernel's syscall number there is -1 */
	BUNDLE(0, enter(95000, 12, pbt_syscall_nr("rt_sigreturn"), 0, 0, 0),
	       sys_exit(95100, 12, -1, 0));
}

static void test_calls(void)
{
	struct sv_counts c;
	struct sv_view *v;
	const struct sv_stat *s;
	char *out = run(true, NULL, &c, &v);

	printf("# view output:\n%s", out);
	s = sv_stat_of(v, 0, 10, nr_openat);
	/* openat: 1 us (= 3), 0.9 us (ENOENT: enter 2100, its exit at 3000
	 * in the bundle before), 3 us, 0.1 us (fault), 0.1 us (too long) */
	tap(s && s->calls == 5 && s->errors == 3, "openat: 5 calls, 3 errors (got %llu, %llu)",
	    s ? (unsigned long long)s->calls : 0, s ? (unsigned long long)s->errors : 0);
	tap(s && s->total == 1000 + 900 + 3000 + 100 + 100 && s->min == 100 &&
	    s->max == 3000, "openat: total 5.1 us, min 0.1, max 3 (got %llu %llu %llu)",
	    s ? (unsigned long long)s->total : 0, s ? (unsigned long long)s->min : 0,
	    s ? (unsigned long long)s->max : 0);
	/* mean 1020 ns, sample variance 5628000 / 4; of the mean / 5 */
	tap(s && fabs(sv_stddev_pct(s) - 100.0 * sqrt(5628000.0 / 4 / 5) / 1020) < 1e-9,
	    "openat: stddev 52.01%% (got %.4f)", s ? sv_stddev_pct(s) : -1);
	s = sv_stat_of(v, 0, 10, nr_getppid);
	tap(s && s->calls == 2 && !s->errors && s->total == 20000 &&
	    sv_stddev_pct(s) == 0, "getppid: 2 calls of 10 us, stddev 0%%");
	tap(strstr(out, "openat(dfd: AT_FDCWD, filename: \"/etc/passwd\", flags: O_RDONLY|O_CLOEXEC") &&
	    strstr(out, ") = 3\n"), "openat line: AT_FDCWD, the path quoted, flags symbolic, = 3");
	tap(strstr(out, "(  0.001 ms): :/10 openat(dfd: 5, filename: 0x2000, flags: O_WRONLY|O_CREAT") &&
	    strstr(out, "= -1 ENOENT"), "failed openat: no string in the file: the pointer; = -1 ENOENT");
	tap(strstr(out, "filename: 0xdead (fault)") != NULL, "unreadable name: 0xdead (fault)");
	tap(strstr(out, "pipe2(fildes: 0x6000, flags: O_NONBLOCK|O_CLOEXEC) = 0") != NULL,
	    "pipe2's flags: O_NONBLOCK|O_CLOEXEC");
	tap(strstr(out, "aaaa\"...") && !strstr(out, "aaaaaaaaa\"...\n"),
	    "name at the bound: quoted, then ...");
	tap(strstr(out, "read(fd: 3, buf: 0x5000, count: 100) ... [pending]") != NULL &&
	    c.pending == 1, "read without exit: [pending], counted");
	tap(strstr(out, "... [continued]: read() = 7") && c.unpaired_exits == 1,
	    "exit before the trace's enter: [continued]");
	tap(strstr(out, ":/11 exit_group(error_code: 0)\n") != NULL,
	    "exit_group: shown without a result, not pending");
	s = sv_stat_of(v, 0, 12, pbt_syscall_nr("rt_sigreturn"));
	tap(strstr(out, ":/12 rt_sigreturn() = 0\n") && s && s->calls == 1,
	    "rt_sigreturn: its exit (syscall number -1) completes it, counted as strace -c does");
	tap(c.strings == 3 && c.faults == 1 && c.truncated == 1,
	    "string counts: 3 read, 1 fault, 1 truncated");
	tap(strstr(out, "getppid") < strstr(out, "     openat "),
	    "summary sorted by total: getppid (20 us) before openat (5.1 us)");
	tap(strstr(out, "     openat                 5       3        0.005") != NULL,
	    "all-threads table: openat 5 calls 3 errors");
	sv_free(v);
	free(out);
}

static void test_stddev(void)
{
	struct sv_stat s = { 0 };
	double d[] = { 1000, 2000, 3000 }, pct;
	size_t i;

	for (i = 0; i < 3; i++) {
		double x = d[i] - s.mean;

		s.calls++;
		s.mean += x / s.calls;
		s.m2 += x * (d[i] - s.mean);
	}
	/* sample variance 1e6; of the mean 1e6 / 3; relative to 2000 */
	pct = sv_stddev_pct(&s);
	tap(fabs(pct - 100.0 * sqrt(1e6 / 3) / 2000) < 1e-9,
	    "stddev of 1,2,3 us: 28.87%% as perf computes it (got %.4f)", pct);
}

static void only_openat(struct sv_opts *o)
{
	char err[256];

	sv_parse_syscalls("openat", &o->filter, err, sizeof(err));
}

static void not_openat(struct sv_opts *o)
{
	char err[256];

	sv_parse_syscalls("!openat,read", &o->filter, err, sizeof(err));
}

static void failures(struct sv_opts *o)
{
	o->filter.failure = true;
}

static void slow(struct sv_opts *o)
{
	o->filter.min_duration_ns = 5000;	/* 5 us */
}

static void pid11(struct sv_opts *o)
{
	o->filter.pids[o->filter.nr_pids++] = 11;
}

static void test_filters(void)
{
	struct sv_counts c;
	char err[256];
	char *out;
	struct sv_filter f = { 0 };

	out = run(false, only_openat, &c, NULL);
	tap(!strstr(out, "getppid") && strstr(out, "openat"), "-e openat: openat only");
	free(out);
	out = run(false, not_openat, &c, NULL);
	tap(strstr(out, "getppid") && !strstr(out, "openat(") && !strstr(out, "read("),
	    "-e '!openat,read': all but those");
	free(out);
	out = run(false, failures, &c, NULL);
	tap(strstr(out, "ENOENT") && !strstr(out, "= 3\n") && !strstr(out, "getppid"),
	    "--failure: failed calls only");
	free(out);
	out = run(false, slow, &c, NULL);
	tap(strstr(out, "getppid") && !strstr(out, "openat("),
	    "--duration 0.005: the 10 us getppid calls, not the openat ones");
	free(out);
	out = run(false, pid11, &c, NULL);
	tap(strstr(out, "exit_group") && !strstr(out, ":/10 "), "-p 11: thread 11 only");
	free(out);
	tap(sv_parse_syscalls("openat,nosuchcall", &f, err, sizeof(err)) < 0 &&
	    strstr(err, "nosuchcall"), "-e with an unknown name: refused, named (%s)", err);
}

/* A growing file: fed in two pieces cut inside a packet, flushed up to a
 * time, then the rest: the same lines as all at once. */
static void test_pieces(void)
{
	uint64_t bad = 0;
	size_t cut = trace_len / 2;
	long used;
	FILE *f;
	struct sv_view *v = view(&f, false, NULL);
	char *whole, *pieces;
	struct sv_counts c;

	used = sv_feed(v, trace, cut, &bad);
	tap(used > 0 && (size_t)used < cut, "a packet cut short is left for later (%ld of %zu)",
	    used, cut);
	sv_flush(v, 15000);
	fflush(f);
	tap(strstr(out_buf, "= 4\n") && !strstr(out_buf, "getppid"),
	    "flush up to 15 us: the calls before, not those after");
	tap(sv_feed(v, trace + used, trace_len - used, &bad) == (long)(trace_len - used),
	    "the rest is taken");
	sv_finish(v);
	fclose(f);
	sv_free(v);
	pieces = out_buf;
	whole = run(false, NULL, &c, NULL);
	tap(pieces && !strcmp(pieces, whole), "pieces print what the whole file prints");
	free(whole);
	free(pieces);
	{
		/* a record whose packet is unreadable, then bytes that are no
		 * record */
		uint8_t junk[] = { 0x0a, 0x02, 0xff, 0xff, 0x12, 0x00 };
		const char *what = NULL;
		uint64_t off = 99;
		uint64_t at = 99;

		bool refused, said;

		v = view(&f, false, NULL);
		refused = sv_feed(v, junk, sizeof(junk), &bad) < 0;
		tap(refused && bad == 4,
		    "bytes that are no Trace.packet record: refused where they start (byte %llu)",
		    (unsigned long long)bad);
		sv_get_counts(v, &c);
		said = sv_first_bad(v, &off, &at, &what);
		tap(c.bad_packets == 1 && said && off == 0 && at == 2 && what &&
		    strstr(what, "TracePacket"),
		    "a record whose TracePacket is unreadable: skipped, counted, where and what said (record at byte %llu, broken at %llu: %s)",
		    (unsigned long long)off, (unsigned long long)at,
		    what ? what : "-");
		sv_finish(v);
		fclose(f);
		sv_free(v);
		free(out_buf);
	}
}

/* ---- real traces (tests/fixtures/traces, record.sh there) ---- */

#ifndef FIXTURES
#define FIXTURES "tests/fixtures/traces"
#endif

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* The whole file fed at once, as trace's last read (and report before). */
static char *whole_file(const char *path, void (*tweak)(struct sv_opts *))
{
	uint64_t bad = 0;
	size_t len = 0;
	uint8_t *data = slurp(path, &len);
	struct sv_view *v;
	FILE *f;

	if (!data)
		return NULL;
	v = view(&f, true, tweak);
	sv_feed(v, data, len, &bad);
	sv_finish(v);
	fclose(f);
	sv_free(v);
	free(data);
	return out_buf;
}

/* tracectl report's reader, flushing after every @hold events. */
static char *streamed(const char *path, void (*tweak)(struct sv_opts *),
		      size_t hold, struct sv_counts *c, int *ret)
{
	struct sv_opts o = { .lines = true, .summary = true, .hold = hold };
	int fd = open(path, O_RDONLY);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = open_memstream(&out_buf, &out_len);
	o.out = f;
	if (tweak)
		tweak(&o);
	*ret = sv_report_file(&o, path, fd, false, c);
	fclose(f);
	close(fd);
	return out_buf;
}

/*
 * What report may hold: the events of a chunk per stream (a machine's
 * CPU), twice (a pass that pairs too little doubles the next one's
 * wait), and one chunk more. Worked out from the file itself.
 */
static uint64_t hold_bound(const char *path)
{
	struct { uint32_t m, seq, cpu; uint64_t max; } st[64];
	const uint8_t *p, *end, *body;
	uint64_t sum = 0, most = 0, n;
	size_t len = 0, nr = 0, i, blen;
	uint8_t *data = slurp(path, &len);
	struct tf_packet pk;
	struct tf_bundle b;
	struct tf_event e;
	struct tf_error err;

	if (!data)
		return 0;
	p = data;
	end = data + len;
	while (trace_next_record(&p, end, &body, &blen) > 0) {
		if (!tf_packet(body, body + blen, &pk, &err) ||
		    pk.data != TF_FTRACE_EVENTS)
			continue;
		tf_bundle_begin(&b, &pk);
		b.skip_tasks = true;
		n = 0;
		while (tf_bundle_next(&b, &e, &err) > 0)
			n++;
		for (i = 0; i < nr; i++)
			if (st[i].m == pk.machine_id && st[i].seq == pk.seq &&
			    st[i].cpu == b.cpu)
				break;
		if (i == nr && nr < 64) {
			st[nr].m = pk.machine_id;
			st[nr].seq = pk.seq;
			st[nr].cpu = b.cpu;
			st[nr++].max = 0;
		}
		if (i < nr && n > st[i].max)
			st[i].max = n;
	}
	for (i = 0; i < nr; i++) {
		sum += st[i].max;
		if (st[i].max > most)
			most = st[i].max;
	}
	free(data);
	return 2 * sum + most + 1;
}

static void pid_first(struct sv_opts *o)
{
	o->filter.pids[o->filter.nr_pids++] = 152;	/* work.pftrace's */
}

/*
 * report reads each CPU's chunks in turn and pairs what every CPU has
 * passed; it must print what reading the whole file at once prints, on
 * each real trace (CPUs interleaved, a --ring file's CPU after CPU, two
 * machines), with every filter, whether it pairs after every chunk or
 * only at the end, and hold fewer events than the file has.
 */
static void test_fixtures(void)
{
	static const char *const names[] = {
		"work.pftrace", "mcpu.pftrace", "ring.pftrace", "machines.pftrace",
	};
	static void (*const tweaks[])(struct sv_opts *) = {
		NULL, only_openat, not_openat, failures, slow, pid_first,
	};
	static const size_t holds[] = { 1, 0 };
	char path[512], *whole, *str;
	struct sv_counts c;
	size_t i, j, k, runs, same;
	uint64_t held = 0, events = 0, bound;
	int ret;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", FIXTURES, names[i]);
		runs = same = 0;
		for (j = 0; j < sizeof(tweaks) / sizeof(tweaks[0]); j++) {
			whole = whole_file(path, tweaks[j]);
			for (k = 0; k < sizeof(holds) / sizeof(holds[0]); k++) {
				memset(&c, 0, sizeof(c));
				ret = -1;
				str = streamed(path, tweaks[j], holds[k], &c, &ret);
				runs++;
				if (whole && str && !ret && !strcmp(whole, str))
					same++;
				else if (whole && str && same == runs - 1) {
					size_t at = 0;

					while (whole[at] && whole[at] == str[at])
						at++;
					printf("# %s, filter %zu, hold %zu: differs at byte %zu (exit %d): %.80s\n",
					       names[i], j, holds[k], at, ret, str + at);
				}
				if (!j && k == 0) {
					held = c.held_max;
					events = c.events;
				}
				free(str);
			}
			free(whole);
		}
		tap(runs && same == runs,
		    "%s: report prints what the whole file at once prints (%zu of %zu runs: 6 filters, paired after every chunk and at the end)",
		    names[i], same, runs);
		bound = hold_bound(path);
		tap(events && held <= bound,
		    "%s: paired after every chunk, at most %llu of its %llu events held at once (bound: %llu, twice a chunk per CPU and one more)",
		    names[i], (unsigned long long)held,
		    (unsigned long long)events, (unsigned long long)bound);
	}
}

/* A relayed machine's calls: its own section, its lines named. */
static void test_machines(void)
{
	struct sv_counts c;
	const struct sv_stat *s;
	struct sv_view *v;
	char *out;

	cur_machine = 1;
	add_machine_name("guest1");
	BUNDLE(0, enter(5000, 10, nr_getppid, 0, 0, 0),
	       sys_exit(9000, 10, nr_getppid, 1));
	cur_machine = 0;
	out = run(true, NULL, &c, &v);
	s = sv_stat_of(v, 1, 10, nr_getppid);
	tap(s && s->calls == 1 && s->total == 4000,
	    "guest1's tid 10 is not this machine's tid 10: its own getppid of 4 us");
	s = sv_stat_of(v, 0, 10, nr_getppid);
	tap(s && s->calls == 2, "this machine's tid 10 keeps its 2 getppid");
	tap(strstr(out, "guest1:      0.004 (  0.004 ms): :/10 getppid() = 1") != NULL,
	    "guest1's line carries its name");
	tap(strstr(out, "=== machine guest1 (id 1) ===") &&
	    strstr(out, "=== machine host (id 0) ===") &&
	    strstr(out, "host:      0.001 (  0.001 ms): :/10 openat("),
	    "one summary section per machine; this one's lines say host");
	sv_free(v);
	free(out);
}

/*
 * The index full (a file of more than 2 Mi chunks; here 3 at a time): a
 * stream whose next chunk is further on than the index reaches holds
 * nobody back. The read ends, holds no more than its bound, says how
 * many events came late; where none did, it prints what the whole file
 * does.
 */
static void test_index_full(void)
{
	static const char *const names[] = { "mcpu.pftrace", "ring.pftrace" };
	struct sv_opts o = { .lines = true, .summary = true, .hold = 1,
			     .index_max = 3 };
	char path[512], *whole;
	struct sv_counts c;
	uint64_t bound;
	size_t i;
	FILE *f;
	int fd, ret;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", FIXTURES, names[i]);
		whole = whole_file(path, NULL);
		bound = hold_bound(path);
		fd = open(path, O_RDONLY);
		f = open_memstream(&out_buf, &out_len);
		o.out = f;
		memset(&c, 0, sizeof(c));
		ret = sv_report_file(&o, path, fd, false, &c);
		fclose(f);
		close(fd);
		tap(!ret && c.held_max <= bound && c.calls &&
		    (c.late || (whole && !strcmp(whole, out_buf))),
		    "%s, 3 chunks indexed at a time: read to the end, %llu calls, at most %llu events held (bound %llu), %llu late%s",
		    names[i], (unsigned long long)c.calls,
		    (unsigned long long)c.held_max, (unsigned long long)bound,
		    (unsigned long long)c.late,
		    c.late ? " (said)" : ", the whole file's output");
		free(whole);
		free(out_buf);
	}
}

static void per_machine(struct sv_opts *o)
{
	o->per_machine = true;
}

static void only_m500(struct sv_opts *o)
{
	o->filter.machines[0] = "m500";
	o->filter.nr_machines = 1;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/*
 * 1,000 relayed machines (ids 1..999 and 520191, the largest there is),
 * machine i's tid 10 one getppid of i us: -s sums them up in one table of
 * the busiest, --per-machine gives each its section, --machine one of them.
 */
static void test_fleet(void)
{
	char name[32], *out;
	struct sv_counts c;
	uint32_t i, id;

	trace_len = 0;
	for (i = 1; i <= 1000; i++) {
		id = i < 1000 ? i : 520191;
		cur_machine = id;
		snprintf(name, sizeof(name), "m%u", i);
		add_machine_name(name);
		BUNDLE(0, enter(1000, 10, nr_getppid, 0, 0, 0),
		       sys_exit(1000 + 1000 * i, 10, nr_getppid, 1));
	}
	cur_machine = 0;
	out = run(true, NULL, &c, NULL);
	tap(c.calls == 1000 && count(out, "getppid() = 1") == 1000,
	    "1,000 machines' calls, a line each (%llu calls)",
	    (unsigned long long)c.calls);
	tap(strstr(out, " Summary of events: 1000 machines, 1000 with calls, 1000 calls") &&
	    !strstr(out, "=== machine"),
	    "-s: one summary for all, no section each");
	tap(strstr(out, "     m1000                          520191        1       0        1.000        1\n"
			"     m999                              999        1       0        0.999        1\n") &&
	    strstr(out, "     m991                              991        1") &&
	    !strstr(out, "     m990 ") && strstr(out, "... 990 more machines with calls"),
	    "the 10 busiest by total time, the largest id among them, then the rest counted");
	tap(strstr(out, " All machines, per syscall (as strace -c):") &&
	    strstr(out, "     getppid             1000       0      500.500"),
	    "strace -c's table of all the machines: 1000 calls, 500.5 ms in all");
	free(out);
	out = run(true, per_machine, &c, NULL);
	tap(count(out, "=== machine m") == 1000 &&
	    strstr(out, "=== machine m1000 (id 520191) ==="),
	    "--per-machine: a section each (%zu)", count(out, "=== machine m"));
	free(out);
	out = run(true, only_m500, &c, NULL);
	tap(c.calls == 1 && count(out, "getppid() = 1") == 1 &&
	    strstr(out, "m500:      0.000 (  0.500 ms): :/10 getppid() = 1") &&
	    count(out, "=== machine") == 1 && strstr(out, "=== machine m500 (id 500) ==="),
	    "--machine m500: its line and its section only");
	free(out);
}

int main(void)
{
	nr_openat = pbt_syscall_nr("openat");
	nr_getppid = pbt_syscall_nr("getppid");
	nr_read = pbt_syscall_nr("read");
	nr_exit_group = pbt_syscall_nr("exit_group");
	build();
	test_calls();
	test_stddev();
	test_filters();
	test_pieces();
	test_machines();
	test_fixtures();
	test_index_full();
	test_fleet();
	/* for a look with valgrind: tracectl report -s on the same bytes */
	if (getenv("SV_TEST_DUMP")) {
		FILE *f = fopen(getenv("SV_TEST_DUMP"), "w");

		tap(f && fwrite(trace, 1, trace_len, f) == trace_len && !fclose(f),
		    "trace written to $SV_TEST_DUMP");
	}
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
