// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs.c on real format files of both kernels Debian ships
 * (tests/fixtures/tracefs-6.1, tracefs-6.12: copied from guests' tracefs)
 * and on broken ones; tp_native.c against trace.proto's numbers, which
 * are written out here from proto/trace.proto as the referee.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tracefs.h"
#include "tracepoints.h"

#define FIX "tests/fixtures"

static const char *const kernels[] = { "tracefs-6.1", "tracefs-6.12" };

static const struct pbt_tpf *field(const struct pbt_tp_layout *l, const char *n)
{
	uint16_t i;

	for (i = 0; i < l->nr_fields; i++)
		if (!strcmp(l->fields[i].name, n))
			return &l->fields[i];
	return NULL;
}

/* name kind size signed elem proto_id proto_type, for one field */
static bool is(const struct pbt_tp_layout *l, const char *n, int kind,
	       int size, int sig, int elem, int id, int type)
{
	const struct pbt_tpf *f = field(l, n);

	if (!f) {
		printf("# %s/%s: no field %s\n", l->group, l->name, n);
		return false;
	}
	if (f->kind == kind && (size < 0 || f->size == size) &&
	    f->is_signed == sig && f->elem_size == elem &&
	    f->proto_id == id && f->proto_type == type)
		return true;
	printf("# %s: kind %u size %u signed %u elem %u id %u type %u\n", n,
	       f->kind, f->size, f->is_signed, f->elem_size, f->proto_id,
	       f->proto_type);
	return false;
}

static int load(const char *k, const char *g, const char *n,
		struct pbt_tp_layout *l, char *err, size_t len)
{
	char root[256];

	memset(l, 0, sizeof(*l));
	snprintf(root, sizeof(root), FIX "/%s", k);
	pbt_tracefs_set_root(root);
	return pbt_tracefs_layout(g, n, l, err, len);
}

static void test_common(const char *k)
{
	struct pbt_tp_layout l;
	char err[512];
	int id = load(k, "sched", "sched_switch", &l, err, sizeof(err));

	tap(id > 0 && !err[0] && l.nr_fields == 11 &&
	    !strcmp(l.group, "sched") && !strcmp(l.name, "sched_switch"),
	    "%s: sched_switch parses: id %d, 4 common + 7 fields (%u) %s", k,
	    id, l.nr_fields, err);
	tap(id > 0 && is(&l, "common_type", PBTRACE_TPF_INT, 2, 0, 0, 0, PBT_PB_TYPE_UINT64) &&
	    is(&l, "common_pid", PBTRACE_TPF_INT, 4, 1, 0, 0, PBT_PB_TYPE_INT64) &&
	    l.fields[3].offset == 4,
	    "%s: common fields kept, proto_id 0, at their offsets", k);
	tap(id > 0 && is(&l, "prev_comm", PBTRACE_TPF_CHARS, 16, 0, 0, 1, PBT_PB_TYPE_STRING) &&
	    is(&l, "prev_pid", PBTRACE_TPF_INT, 4, 1, 0, 2, PBT_PB_TYPE_INT64) &&
	    is(&l, "prev_state", PBTRACE_TPF_INT, 8, 1, 0, 4, PBT_PB_TYPE_INT64) &&
	    is(&l, "next_prio", PBTRACE_TPF_INT, 4, 1, 0, 7, PBT_PB_TYPE_INT64) &&
	    field(&l, "prev_comm")->offset == 8,
	    "%s: sched_switch: char[16] -> string, ints -> int64, ids 1..7 in order", k);

	id = load(k, "sock", "inet_sock_set_state", &l, err, sizeof(err));
	tap(id > 0 && is(&l, "skaddr", PBTRACE_TPF_INT, 8, 0, 0, 1, PBT_PB_TYPE_UINT64) &&
	    is(&l, "sport", PBTRACE_TPF_INT, 2, 0, 0, 4, PBT_PB_TYPE_UINT64) &&
	    is(&l, "saddr", PBTRACE_TPF_ARRAY, 4, 0, 1, 8, PBT_PB_TYPE_UINT64) &&
	    is(&l, "daddr_v6", PBTRACE_TPF_ARRAY, 16, 0, 1, 11, PBT_PB_TYPE_UINT64),
	    "%s: inet_sock_set_state: const void * -> uint64, __u8 saddr[4] -> 4 repeated uint64", k);

	id = load(k, "irq", "irq_handler_entry", &l, err, sizeof(err));
	tap(id > 0 && is(&l, "name", PBTRACE_TPF_DATA_LOC_STR, 4, 0, 0, 2, PBT_PB_TYPE_STRING),
	    "%s: __data_loc char[] -> string", k);

	id = load(k, "raw_syscalls", "sys_enter", &l, err, sizeof(err));
	tap(id > 0 && is(&l, "id", PBTRACE_TPF_INT, 8, 1, 0, 1, PBT_PB_TYPE_INT64) &&
	    is(&l, "args", PBTRACE_TPF_ARRAY, 48, 0, 8, 2, PBT_PB_TYPE_UINT64),
	    "%s: unsigned long args[6] -> 6 repeated uint64 of 8 bytes", k);

	id = load(k, "signal", "signal_generate", &l, err, sizeof(err));
	tap(id > 0 && is(&l, "sig", PBTRACE_TPF_INT, 4, 1, 0, 1, PBT_PB_TYPE_INT64) &&
	    is(&l, "comm", PBTRACE_TPF_CHARS, 16, 0, 0, 4, PBT_PB_TYPE_STRING) &&
	    is(&l, "result", PBTRACE_TPF_INT, 4, 1, 0, 7, PBT_PB_TYPE_INT64),
	    "%s: signal_generate: 7 fields, comm a string", k);

	id = load(k, "net", "netif_receive_skb_entry", &l, err, sizeof(err));
	tap(id > 0 && !err[0] && l.nr_fields > 20 &&
	    is(&l, "name", PBTRACE_TPF_DATA_LOC_STR, 4, 0, 0, 1, PBT_PB_TYPE_STRING),
	    "%s: netif_receive_skb_entry: %u fields, no warning", k, l.nr_fields);

	id = load(k, "i2c", "i2c_write", &l, err, sizeof(err));
	tap(id > 0 && is(&l, "buf", PBTRACE_TPF_DATA_LOC_BYTES, 4, 0, 0, 6, PBT_PB_TYPE_BYTES),
	    "%s: __data_loc __u8[] -> bytes", k);
}

static void test_native(const char *k)
{
	struct pbt_tp_layout l;
	char err[512];
	int id = load(k, "sched", "sched_switch", &l, err, sizeof(err));

	/* proto/trace.proto: FtraceEvent.sched_switch = 4,
	 * SchedSwitchFtraceEvent prev_comm 1 string ... next_prio 7 int32 */
	tap(id > 0 && pbt_tp_native_ids(&l) == 1 && l.proto_id == 4 &&
	    is(&l, "prev_comm", PBTRACE_TPF_CHARS, 16, 0, 0, 1, 9) &&
	    is(&l, "prev_pid", PBTRACE_TPF_INT, 4, 1, 0, 2, 5) &&
	    is(&l, "prev_state", PBTRACE_TPF_INT, 8, 1, 0, 4, 3) &&
	    is(&l, "next_comm", PBTRACE_TPF_CHARS, 16, 0, 0, 5, 9) &&
	    is(&l, "next_pid", PBTRACE_TPF_INT, 4, 1, 0, 6, 5) &&
	    is(&l, "next_prio", PBTRACE_TPF_INT, 4, 1, 0, 7, 5) &&
	    is(&l, "common_pid", PBTRACE_TPF_INT, 4, 1, 0, 0, PBT_PB_TYPE_INT64),
	    "%s: sched_switch natively: FtraceEvent 4, SchedSwitchFtraceEvent's numbers and types", k);

	/* SchedWakeupFtraceEvent: comm 1, pid 2, prio 3, success 4,
	 * target_cpu 5; the format has no success, so target_cpu is the
	 * 4th field but keeps number 5. */
	id = load(k, "sched", "sched_wakeup", &l, err, sizeof(err));
	tap(id > 0 && pbt_tp_native_ids(&l) == 1 && l.proto_id == 17 &&
	    is(&l, "target_cpu", PBTRACE_TPF_INT, 4, 1, 0, 5, 5) &&
	    is(&l, "comm", PBTRACE_TPF_CHARS, 16, 0, 0, 1, 9),
	    "%s: sched_wakeup natively: FtraceEvent 17, target_cpu 5 (not its position 4)", k);

	/* SysEnterFtraceEvent: id 1 int64, repeated uint64 args 2 */
	id = load(k, "raw_syscalls", "sys_enter", &l, err, sizeof(err));
	tap(id > 0 && pbt_tp_native_ids(&l) == 1 && l.proto_id == 329 &&
	    is(&l, "id", PBTRACE_TPF_INT, 8, 1, 0, 1, 3) &&
	    is(&l, "args", PBTRACE_TPF_ARRAY, 48, 0, 8, 2, 4),
	    "%s: sys_enter natively: FtraceEvent 329, id 1, args 2", k);

	id = load(k, "signal", "signal_generate", &l, err, sizeof(err));
	tap(id > 0 && pbt_tp_native_ids(&l) == 0 && l.proto_id == 0 &&
	    field(&l, "sig")->proto_id == 1,
	    "%s: signal_generate is not native: left as it was", k);
}

static int n_listed, n_found;

static int count(const char *g, const char *nm, void *arg)
{
	(void)arg;
	n_listed++;
	n_found += !strcmp(g, "signal") && !strcmp(nm, "signal_generate");
	return 0;
}

static void test_list(const char *k)
{
	char root[256], path[300], err[512], line[256];
	size_t lines = 0;
	FILE *f;

	n_listed = n_found = 0;
	snprintf(root, sizeof(root), FIX "/%s", k);
	snprintf(path, sizeof(path), "%s/available_events", root);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		lines++;
	if (f)
		fclose(f);
	pbt_tracefs_set_root(root);
	tap(!pbt_tracefs_list(count, NULL, err, sizeof(err)) && lines > 1000 &&
	    (size_t)n_listed == lines && n_found == 1,
	    "%s: list gives every line of available_events (%d of %zu), signal/signal_generate once",
	    k, n_listed, lines);
}

static int parse(const char *text, struct pbt_tp_layout *l, char *err, size_t len)
{
	return pbt_tracefs_parse(text, strlen(text), "g", "e", l, err, len);
}

#define HDR "name: e\nID: 7\nformat:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static void test_bad(void)
{
	static const char *const bad[] = {
		"", "\n\n\n", "name: e\n", "name: e\nID: x\nformat:\n",
		"name: e\nID: 1\nformat:\n\tfield:int a;\toffset:0;\n",
		"name: e\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:2;\n",
		"name: e\nID: 1\nformat:\n\tfield:int a;\toffset:65535;\tsize:4;\tsigned:0;\n",
		"name: e\nID: 1\nformat:\n\tfield:int a\toffset:0;\tsize:4;\tsigned:0;\n",
		"name: e\nID: 1\nformat:\n\tfield:int;\toffset:0;\tsize:4;\tsigned:0;\n",
		"name: e\nID: 1\nformat:\n\tfield:[];\toffset:0;\tsize:4;\tsigned:0;\n",
		"name: e\nID: 1\nformat:\n\tfield:int 9a;\toffset:0;\tsize:4;\tsigned:0;\n",
		"name: other\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:0;\n",
		"name: e\nID: 1\nformat:\nprint fmt: \"\"\n",
		"garbage\n", "name: e\nID: -1\n",
	};
	struct pbt_tp_layout l;
	char err[512];
	size_t i;
	int r;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = parse(bad[i], &l, err, sizeof(err));
		tap(r == -EINVAL && strstr(err, "events/g/e/format line") &&
		    !l.nr_fields,
		    "bad format %zu refused: %s", i, err);
	}
	r = parse(HDR "\tfield:u8 x[(int)sizeof(struct y)];\toffset:8;\tsize:6;\tsigned:0;\n"
		  "\tfield:char buf[];\toffset:14;\tsize:0;\tsigned:0;\n"
		  "\tfield:__rel_loc char[] s;\toffset:16;\tsize:4;\tsigned:0;\n"
		  "\tfield:__rel_loc u32[] r;\toffset:20;\tsize:4;\tsigned:0;\n"
		  "\tfield:struct foo f;\toffset:24;\tsize:12;\tsigned:0;\n"
		  "\tfield:bool b;\toffset:36;\tsize:1;\tsigned:1;\n"
		  "\tfield:__data_loc char[] d;\toffset:40;\tsize:8;\tsigned:0;\n"
		  "print fmt: \"\"\n", &l, err, sizeof(err));
	tap(r == 7 && !err[0] && l.nr_fields == 9 &&
	    is(&l, "x", PBTRACE_TPF_ARRAY, 6, 0, 1, 1, PBT_PB_TYPE_UINT64) &&
	    is(&l, "buf", PBTRACE_TPF_CHARS, 0, 0, 0, 2, PBT_PB_TYPE_STRING) &&
	    is(&l, "s", PBTRACE_TPF_REL_LOC_STR, 4, 0, 0, 3, PBT_PB_TYPE_STRING) &&
	    is(&l, "r", PBTRACE_TPF_REL_LOC_BYTES, 4, 0, 0, 4, PBT_PB_TYPE_BYTES) &&
	    is(&l, "f", PBTRACE_TPF_BYTES, 12, 0, 0, 5, PBT_PB_TYPE_BYTES) &&
	    is(&l, "b", PBTRACE_TPF_INT, 1, 0, 0, 6, PBT_PB_TYPE_UINT64) &&
	    is(&l, "d", PBTRACE_TPF_BYTES, 8, 0, 0, 7, PBT_PB_TYPE_BYTES),
	    "odd types: u8[expr], char[] (size 0), __rel_loc, struct, bool, __data_loc of 8 bytes");
}

/* 2 common + n fields named f1..fn */
static char *many(int n)
{
	size_t cap = 200 + (size_t)n * 64, len;
	char *s = malloc(cap);
	int i;

	len = (size_t)snprintf(s, cap, "%s", HDR);
	for (i = 1; i <= n; i++)
		len += (size_t)snprintf(s + len, cap - len,
					"\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n",
					i, 4 + 4 * i);
	return s;
}

static void test_limits(void)
{
	struct pbt_tp_layout l;
	char err[1024], *s = many(34);
	int r = parse(s, &l, err, sizeof(err));

	tap(r == 7 && l.nr_fields == 36 && field(&l, "f31")->proto_id == 31 &&
	    field(&l, "f32")->proto_id == 0 && field(&l, "f34")->proto_id == 0 &&
	    strstr(err, "f32, f33, f34") && strstr(err, "below 32"),
	    "34 fields: f1..f31 get ids 1..31, f32..f34 kept unwritten, warned: %s", err);
	free(s);
	s = many(45);
	r = parse(s, &l, err, sizeof(err));
	tap(r == 7 && l.nr_fields == PBTRACE_TP_MAX_FIELDS &&
	    strstr(err, "f39, f40, f41, f42, f43, f44, f45") &&
	    strstr(err, "neither written nor filterable"),
	    "45 fields: the first %d kept, the others dropped and named: %s",
	    PBTRACE_TP_MAX_FIELDS, err);
	free(s);
}

static void test_names(void)
{
	char g[PBTRACE_NAME_MAX], n[PBTRACE_NAME_MAX], err[512];
	struct pbt_tp_layout l;
	int r;

	tap(!pbt_tracefs_split("tcp/tcp_probe", g, n) && !strcmp(g, "tcp") &&
	    !strcmp(n, "tcp_probe") && !pbt_tracefs_split("sock:inet_sock_set_state", g, n) &&
	    !strcmp(g, "sock") && !strcmp(n, "inet_sock_set_state"),
	    "group/name and group:name split");
	tap(pbt_tracefs_split("tcp", g, n) && pbt_tracefs_split("/x", g, n) &&
	    pbt_tracefs_split("x/", g, n) && pbt_tracefs_split("a/b/c", g, n) &&
	    pbt_tracefs_split("a:b/c", g, n),
	    "names without one separator and two parts refused");
	pbt_tracefs_set_root(FIX "/tracefs-6.1");
	r = pbt_tracefs_layout("nosuch", "event", &l, err, sizeof(err));
	tap(r == -ENOENT && strstr(err, "no tracepoint nosuch/event") &&
	    strstr(err, "tracectl list-events"),
	    "a tracepoint this kernel lacks: %s", err);
	r = pbt_tracefs_layout("..", "sched", &l, err, sizeof(err));
	tap(r == -EINVAL, "\"../sched\" is not a name: %s", err);
	pbt_tracefs_set_root(NULL);
	if (access("/sys/kernel/tracing/available_events", F_OK) &&
	    access("/sys/kernel/debug/tracing/available_events", F_OK)) {
		r = pbt_tracefs_layout("sched", "sched_switch", &l, err, sizeof(err));
		tap(r == -ENOENT && strstr(err, "/sys/kernel/tracing") &&
		    strstr(err, "/sys/kernel/debug/tracing") &&
		    strstr(err, "mount -t tracefs nodev /sys/kernel/tracing"),
		    "no tracefs: both paths and the mount command named: %s", err);
	} else {
		tap(true, "# SKIP this host has tracefs mounted");
	}
}

/* What LIST_EVENTS would say: a few native events, one the module knows
 * but the kernel lacks. */
static int native(const char *name, void *arg)
{
	static const char *const yes[] = {
		"sched/sched_switch", "raw_syscalls/sys_enter", "raw_syscalls/sys_exit",
	};
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcmp(yes[i], name))
			return 1;
	return strcmp(name, "power/gone") ? -1 : 0;
}

static const struct pbt_tp_spec *tp(const struct pbt_buffer_spec *b, const char *n)
{
	size_t i;

	for (i = 0; i < b->nr_tps; i++)
		if (!strcmp(b->tps[i].layout->name, n))
			return &b->tps[i];
	return NULL;
}

static bool has(const struct pbt_buffer_spec *b, const char *e)
{
	size_t i;

	for (i = 0; i < b->nr_events; i++)
		if (!strcmp(b->events[i], e))
			return true;
	return false;
}

static int resolve(struct pbt_session_spec *s, const char *const *ev, size_t n,
		   char *err, size_t len)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->nr_buffers = 2;
	for (i = 0; i < n; i++)
		s->buffers[0].events[s->buffers[0].nr_events++] = ev[i];
	s->buffers[1].events[s->buffers[1].nr_events++] = "signal/signal_generate";
	return pbt_spec_resolve_events(s, native, NULL, NULL, err, len);
}

static void test_resolve(const char *k)
{
	static const char *const ev[] = {
		"sched/sched_switch", "signal:signal_generate",
		"sock/inet_sock_set_state", "signal/*", "raw_syscalls:sys_e*",
	};
	const struct pbt_tp_spec *g, *d, *i, *g1;
	struct pbt_session_spec s;
	char root[256], err[512];
	int r;

	snprintf(root, sizeof(root), FIX "/%s", k);
	pbt_tracefs_set_root(root);
	r = resolve(&s, ev, 5, err, sizeof(err));
	g = tp(&s.buffers[0], "signal_generate");
	d = tp(&s.buffers[0], "signal_deliver");
	i = tp(&s.buffers[0], "inet_sock_set_state");
	g1 = tp(&s.buffers[1], "signal_generate");
	tap(!r && s.buffers[0].nr_events == 3 &&
	    !strcmp(s.buffers[0].events[0], "sched/sched_switch") &&
	    has(&s.buffers[0], "raw_syscalls/sys_enter") &&
	    has(&s.buffers[0], "raw_syscalls/sys_exit") &&
	    s.buffers[0].nr_tps == 3 && g && d && i,
	    "%s: native names stay events (globs expanded), others become 3 tracepoints: %s",
	    k, err);
	tap(g && i && d && g->layout->proto_id == PBTRACE_TP_GENERIC_PROTO_BASE &&
	    i->layout->proto_id == PBTRACE_TP_GENERIC_PROTO_BASE + 1 &&
	    d->layout->proto_id == PBTRACE_TP_GENERIC_PROTO_BASE + 2 &&
	    g->flags == PBTRACE_TP_FTRACE && g->id > 0 && g->id != i->id &&
	    !strcmp(g->layout->group, "signal") && g->layout->nr_fields == 11,
	    "%s: each tracepoint has its tracefs id, layout, PBTRACE_TP_FTRACE and its own generic id", k);
	tap(!r && s.buffers[1].nr_events == 0 && s.buffers[1].nr_tps == 1 && g1 && g &&
	    g1->layout->proto_id == g->layout->proto_id,
	    "%s: the same event in another buffer keeps its generic id", k);
	pbt_spec_resolved_free(&s);
}

static void test_resolve_errors(void)
{
	static const char *const cases[][2] = {
		{ "nosuch/event", "unknown event 'nosuch/event': this kernel has no tracepoint nosuch/event; 'tracectl list-events' lists" },
		{ "tcp/nope*", "'tcp/nope*' matches no tracepoint of this kernel; 'tracectl list-events' lists" },
		{ "power:gone", "event 'power:gone' is not available in this kernel (no such tracepoint)" },
		{ "sched", "'sched' is not a tracepoint name" },
	};
	struct pbt_session_spec s;
	char err[512];
	size_t i;
	int r;

	pbt_tracefs_set_root(FIX "/tracefs-6.1");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *ev[] = { "sched/sched_switch", "signal/signal_generate", cases[i][0] };

		r = resolve(&s, ev, 3, err, sizeof(err));
		tap(r < 0 && strstr(err, cases[i][1]) && s.buffers[0].nr_events == 3 &&
		    !s.buffers[0].tps && !s.buffers[1].tps,
		    "%s refused, spec unchanged: %s", cases[i][0], err);
	}
}

int main(void)
{
	size_t k;

	for (k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		test_common(kernels[k]);
		test_native(kernels[k]);
		test_list(kernels[k]);
		test_resolve(kernels[k]);
	}
	test_resolve_errors();
	test_bad();
	test_limits();
	test_names();
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
