// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl's syscall view (syscalls_view.h): collect raw_syscalls events
 * from a trace, sort, pair per thread, print and summarize.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"
#include "syscalls_view.h"
#include "trace_file.h"
#include "trace.pb-c.h"

typedef Perfetto__Protos__FtraceEvent pbt_fevent;

enum { EV_ENTER, EV_STRS, EV_EXIT };	/* sort order at one timestamp */

struct sv_event {
	uint64_t ts;
	uint32_t machine;
	int32_t tid;
	uint8_t kind, nr_args;
	int64_t id, ret;
	uint64_t args[6];
	struct sv_str *strs;		/* EV_STRS */
	size_t nr_strs;
};

struct sv_open {
	bool open;
	struct sv_event enter;		/* its strs attached */
};

struct sv_thread {
	struct sv_thread *next;		/* hash chain */
	uint32_t machine;
	int32_t tid, tgid;
	char comm[32];
	struct sv_open call;
	struct sv_stat *stats;		/* SV_NR_MAX, on the first call */
	uint64_t calls, total;
};

struct sv_machine {
	uint32_t id;
	char name[80];
	uint64_t lost_events, lost_bundles;
	size_t lo, hi;			/* its threads, once sorted (sv_finish) */
};

#define SV_BUCKETS 4096

struct sv_view {
	struct sv_opts o;
	struct sv_event *ev;		/* not processed yet */
	size_t n, cap;
	size_t sorted;			/* ev[0..sorted) is in order */
	struct sv_event *tmp;		/* merge space, cap entries */
	struct sv_thread *bucket[SV_BUCKETS];
	struct sv_thread **threads;
	size_t nr_threads, threads_cap;
	struct sv_machine *machines;	/* in the order they came */
	size_t nr_machines, machines_cap;
	uint32_t *slot;			/* machine id -> index + 1, 0: none */
	size_t nr_slots;
	struct sv_machine spare;	/* when memory ran out */
	uint64_t base_ts;		/* the first event processed: time 0 */
	bool have_base;
	struct sv_counts c;
};

struct sv_view *sv_new(const struct sv_opts *o)
{
	struct sv_view *v = calloc(1, sizeof(*v));

	if (v)
		v->o = *o;
	return v;
}

static void free_strs(struct sv_str *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].value);
	free(s);
}

void sv_free(struct sv_view *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++)
		free_strs(v->ev[i].strs, v->ev[i].nr_strs);
	for (i = 0; i < v->nr_threads; i++) {
		free_strs(v->threads[i]->call.enter.strs,
			  v->threads[i]->call.enter.nr_strs);
		free(v->threads[i]->stats);
		free(v->threads[i]);
	}
	free(v->threads);
	free(v->ev);
	free(v->tmp);
	free(v->machines);
	free(v->slot);
	free(v);
}

/* Machine ids are small (the host gives the lowest free): an index each. */
static struct sv_machine *machine(struct sv_view *v, uint32_t id)
{
	struct sv_machine *grow;
	uint32_t *slots;
	size_t n;

	if (id < v->nr_slots && v->slot[id])
		return &v->machines[v->slot[id] - 1];
	if (id >= v->nr_slots) {
		n = id < 64 ? 64 : 2 * (size_t)id;
		slots = realloc(v->slot, n * sizeof(*slots));
		if (!slots)
			return &v->spare;
		memset(slots + v->nr_slots, 0, (n - v->nr_slots) * sizeof(*slots));
		v->slot = slots;
		v->nr_slots = n;
	}
	if (v->nr_machines == v->machines_cap) {
		n = v->machines_cap ? 2 * v->machines_cap : 16;
		grow = realloc(v->machines, n * sizeof(*grow));
		if (!grow)
			return &v->spare;
		v->machines = grow;
		v->machines_cap = n;
	}
	memset(&v->machines[v->nr_machines], 0, sizeof(v->machines[0]));
	v->machines[v->nr_machines].id = id;
	v->slot[id] = (uint32_t)++v->nr_machines;
	return &v->machines[v->nr_machines - 1];
}

/* system_info's name; this machine's packets carry no machine_id. */
static const char *machine_name(struct sv_machine *mm)
{
	if (mm->name[0])
		return mm->name;
	if (mm->id)
		snprintf(mm->name, sizeof(mm->name), "machine%u", mm->id);
	else
		snprintf(mm->name, sizeof(mm->name), "host");
	return mm->name;
}

static struct sv_thread *thread(struct sv_view *v, uint32_t m, int32_t tid)
{
	unsigned int h = ((uint32_t)tid * 2654435761u + m) % SV_BUCKETS;
	struct sv_thread *t, **grow;

	for (t = v->bucket[h]; t; t = t->next)
		if (t->tid == tid && t->machine == m)
			return t;
	if (v->nr_threads == v->threads_cap) {
		size_t cap = v->threads_cap ? v->threads_cap * 2 : 64;

		grow = realloc(v->threads, cap * sizeof(*grow));
		if (!grow)
			return NULL;
		v->threads = grow;
		v->threads_cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->machine = m;
	t->tid = tid;
	t->tgid = tid;
	t->next = v->bucket[h];
	v->bucket[h] = t;
	v->threads[v->nr_threads++] = t;
	return t;
}

static void set_comm(struct sv_view *v, uint32_t m, int32_t tid,
		     const char *comm, int32_t tgid)
{
	struct sv_thread *t = tid > 0 ? thread(v, m, tid) : NULL;

	if (!t)
		return;
	if (comm && *comm) {
		const char *base = strrchr(comm, '/');

		snprintf(t->comm, sizeof(t->comm), "%.15s", base ? base + 1 : comm);
	}
	if (tgid > 0)
		t->tgid = tgid;
}

static struct sv_event *new_event(struct sv_view *v)
{
	struct sv_event *grow;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 4096;

		grow = realloc(v->ev, cap * sizeof(*grow));
		if (!grow)
			return NULL;
		v->ev = grow;
		v->cap = cap;
	}
	memset(&v->ev[v->n], 0, sizeof(v->ev[0]));
	return &v->ev[v->n++];
}

/* The string arguments of a sys_enter (docs/tracectl.md). */
static void add_strings(struct sv_event *e,
			const Perfetto__Protos__GenericFtraceEvent *g)
{
	size_t i, n = 0;

	e->strs = calloc(g->n_field ? g->n_field : 1, sizeof(*e->strs));
	if (!e->strs)
		return;
	for (i = 0; i < g->n_field; i++) {
		const Perfetto__Protos__GenericFtraceEvent__Field *f = g->field[i];
		const char *name = f->name ? f->name : "";
		size_t len = strlen(name);

		if (len > 10 && !strcmp(name + len - 10, "_truncated")) {
			if (n && !strncmp(e->strs[n - 1].name, name, len - 10))
				e->strs[n - 1].truncated = true;
			continue;
		}
		snprintf(e->strs[n].name, sizeof(e->strs[n].name), "%s", name);
		if (f->value_case == PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_STR_VALUE)
			e->strs[n].value = strndup(f->str_value, SV_STR_MAX);
		else if (f->value_case == PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_UINT_VALUE)
			e->strs[n].ptr = f->uint_value;
		n++;
	}
	e->nr_strs = n;
}

static void add_sys_event(struct sv_view *v, uint32_t m, const pbt_fevent *fe)
{
	struct sv_event *e;
	size_t i;

	if (fe->event_case == PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC &&
	    (!fe->generic->event_name ||
	     strncmp(fe->generic->event_name, "sys_enter_", 10)))
		return;
	e = new_event(v);
	if (!e)
		return;
	e->ts = fe->timestamp;
	e->machine = m;
	e->tid = (int32_t)fe->pid;
	switch (fe->event_case) {
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_ENTER:
		e->kind = EV_ENTER;
		e->id = fe->sys_enter->id;
		e->nr_args = fe->sys_enter->n_args > 6 ? 6 : fe->sys_enter->n_args;
		for (i = 0; i < e->nr_args; i++)
			e->args[i] = fe->sys_enter->args[i];
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_EXIT:
		e->kind = EV_EXIT;
		e->id = fe->sys_exit->id;
		e->ret = fe->sys_exit->ret;
		break;
	default:
		e->kind = EV_STRS;
		add_strings(e, fe->generic);
		break;
	}
}

/* Names and processes of threads: whatever the file has. */
static void add_task_event(struct sv_view *v, uint32_t m, const pbt_fevent *fe)
{
	switch (fe->event_case) {
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK:
		set_comm(v, m, fe->sched_process_fork->child_pid,
			 fe->sched_process_fork->child_comm, 0);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK: {
		struct sv_thread *parent = thread(v, m, (int32_t)fe->pid);
		bool same_process = fe->task_newtask->clone_flags & 0x10000;

		set_comm(v, m, fe->task_newtask->pid, fe->task_newtask->comm,
			 same_process && parent ? parent->tgid : 0);
		break;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC:
		set_comm(v, m, fe->sched_process_exec->pid,
			 fe->sched_process_exec->filename, 0);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME:
		set_comm(v, m, fe->task_rename->pid, fe->task_rename->newcomm, 0);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT:
		set_comm(v, m, fe->sched_process_exit->pid,
			 fe->sched_process_exit->comm,
			 fe->sched_process_exit->tgid);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH:
		set_comm(v, m, fe->sched_switch->next_pid,
			 fe->sched_switch->next_comm, 0);
		break;
	default:
		break;
	}
}

static void add_bundle(struct sv_view *v, uint32_t m,
		       const Perfetto__Protos__FtraceEventBundle *b)
{
	struct sv_machine *mm = machine(v, m);	/* each gets a section */
	size_t i;

	if (b->has_lost_events && b->lost_events)
		mm->lost_bundles++;
	for (i = 0; i < b->n_event; i++) {
		const pbt_fevent *fe = b->event[i];

		if (fe->event_case == PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_ENTER ||
		    fe->event_case == PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_EXIT ||
		    fe->event_case == PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC)
			add_sys_event(v, m, fe);
		else
			add_task_event(v, m, fe);
	}
}

static void add_process_tree(struct sv_view *v, uint32_t m,
			     const Perfetto__Protos__ProcessTree *pt)
{
	size_t i;

	for (i = 0; i < pt->n_processes; i++) {
		const Perfetto__Protos__ProcessTree__Process *p = pt->processes[i];

		set_comm(v, m, p->pid, p->n_cmdline ? p->cmdline[0] : NULL,
			 p->pid);
	}
	for (i = 0; i < pt->n_threads; i++)
		set_comm(v, m, pt->threads[i]->tid, pt->threads[i]->name,
			 pt->threads[i]->tgid);
}

/* The kernel's own count of what it could not record (end of trace). */
static void add_ftrace_stats(struct sv_view *v, uint32_t m,
			     const Perfetto__Protos__FtraceStats *st)
{
	uint64_t lost = 0;
	size_t i;

	if (!st->has_phase ||
	    st->phase != PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE)
		return;
	for (i = 0; i < st->n_cpu_stats; i++)
		lost += st->cpu_stats[i]->overrun + st->cpu_stats[i]->dropped_events;
	machine(v, m)->lost_events = lost;
}

static void add_packet(struct sv_view *v, const Perfetto__Protos__TracePacket *p)
{
	uint32_t m = p->has_machine_id ? p->machine_id : 0;
	const Perfetto__Protos__SystemInfo *si = p->system_info;
	struct sv_machine *mm;

	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS:
		add_bundle(v, m, p->ftrace_events);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE:
		add_process_tree(v, m, p->process_tree);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS:
		add_ftrace_stats(v, m, p->ftrace_stats);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO:
		mm = machine(v, m);
		if (si->machine_name && *si->machine_name)
			snprintf(mm->name, sizeof(mm->name), "%s", si->machine_name);
		else if (m && !mm->name[0] && si->utsname && si->utsname->release)
			snprintf(mm->name, sizeof(mm->name), "%s %s",
				 si->utsname->machine ? si->utsname->machine : "",
				 si->utsname->release);
		break;
	default:
		break;
	}
}

long sv_feed(struct sv_view *v, const uint8_t *data, size_t len,
	     uint64_t *bad_offset)
{
	const uint8_t *p = data, *end = data + len;
	Perfetto__Protos__TracePacket *pkt;
	int ret;

	while (p < end) {
		ret = trace_next_packet(&p, end, &pkt);
		if (ret == 0)
			break;			/* cut short: the rest later */
		if (ret < 0) {
			*bad_offset = p - data;
			return -1;
		}
		add_packet(v, pkt);
		perfetto__protos__trace_packet__free_unpacked(pkt, NULL);
	}
	return p - data;
}

static int by_time(const void *a, const void *b)
{
	const struct sv_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

/* --machine: is machine @m one of those asked for? */
static bool machine_wanted(struct sv_view *v, uint32_t m)
{
	const struct sv_filter *f = &v->o.filter;
	const char *name;
	size_t i;

	if (!f->nr_machines)
		return true;
	name = machine_name(machine(v, m));
	for (i = 0; i < f->nr_machines; i++)
		if (!strcmp(f->machines[i], name))
			return true;
	return false;
}

static bool selected(struct sv_view *v, const struct sv_thread *t,
		     int64_t id)
{
	const struct sv_filter *f = &v->o.filter;
	size_t i;

	if (!machine_wanted(v, t->machine))
		return false;
	for (i = 0; i < f->nr_hide; i++)
		if (t->tid == f->hide[i] || t->tgid == f->hide[i])
			return false;
	if (f->nr_pids) {
		for (i = 0; i < f->nr_pids; i++)
			if (t->tid == f->pids[i] || t->tgid == f->pids[i])
				break;
		if (i == f->nr_pids)
			return false;
	}
	if (f->has_set && id >= 0 && id < SV_NR_MAX && f->set[id] == f->exclude)
		return false;
	return true;
}

static const char *sys_name(int64_t id)
{
	return id >= 0 && id < SV_NR_MAX ? pbt_syscall_name((unsigned int)id) : NULL;
}

/* The kernel's restart codes, which userspace names do not cover. */
static const char *kernel_errname(int64_t ret)
{
	switch (ret) {
	case -512: return "ERESTARTSYS";
	case -513: return "ERESTARTNOINTR";
	case -514: return "ERESTARTNOHAND";
	case -516: return "ERESTART_RESTARTBLOCK";
	default: return NULL;
	}
}

static void print_head(struct sv_view *v, const struct sv_thread *t,
		       uint64_t ts, const uint64_t *dur)
{
	FILE *f = v->o.out;

	if (v->nr_machines > 1 || t->machine)
		fprintf(f, "%s: ", machine_name(machine(v, t->machine)));
	fprintf(f, "%10.3f ", ts >= v->base_ts ? (ts - v->base_ts) / 1e6 : 0.0);
	if (dur)
		fprintf(f, "(%7.3f ms): ", *dur / 1e6);
	else
		fputs("(         ): ", f);
	fprintf(f, "%s/%d ", t->comm[0] ? t->comm : ":", t->tid);
}

static void print_call(struct sv_view *v,
		       const struct sv_event *e)
{
	struct sv_call_fmt c = {
		.name = sys_name(e->id), .id = (unsigned int)e->id,
		.nr_args = e->nr_args, .strs = e->strs, .nr_strs = e->nr_strs,
	};

	memcpy(c.args, e->args, sizeof(c.args));
	sv_fmt_args(v->o.out, &c);
}

static void print_ret(struct sv_view *v, int64_t id, int64_t ret)
{
	const char *k = kernel_errname(ret);

	fputc(' ', v->o.out);
	if (k)
		fprintf(v->o.out, "= -1 %s", k);
	else
		sv_fmt_ret(v->o.out, sys_name(id), ret);
	fputc('\n', v->o.out);
	v->c.printed++;
}

static bool is_error(int64_t ret)
{
	return ret < 0 && ret >= -4095;
}

static void account(struct sv_view *v, struct sv_thread *t, int64_t id,
		    uint64_t dur, bool err)
{
	struct sv_stat *s;
	double d;

	if (id < 0 || id >= SV_NR_MAX)
		return;
	if (!t->stats)
		t->stats = calloc(SV_NR_MAX, sizeof(*t->stats));
	if (!t->stats)
		return;
	s = &t->stats[id];
	s->calls++;
	s->errors += err;
	s->total += dur;
	if (s->calls == 1 || dur < s->min)
		s->min = dur;
	if (dur > s->max)
		s->max = dur;
	d = (double)dur - s->mean;
	s->mean += d / s->calls;
	s->m2 += d * ((double)dur - s->mean);
	t->calls++;
	t->total += dur;
	v->c.calls++;
}

static void drop_open(struct sv_thread *t)
{
	free_strs(t->call.enter.strs, t->call.enter.nr_strs);
	t->call.enter.strs = NULL;
	t->call.enter.nr_strs = 0;
	t->call.open = false;
}

static void complete(struct sv_view *v, struct sv_thread *t,
		     const struct sv_event *x)
{
	const struct sv_event *e = &t->call.enter;
	uint64_t dur = x->ts - e->ts;
	bool err = is_error(x->ret);

	account(v, t, e->id, dur, err);
	if (v->o.lines && dur >= v->o.filter.min_duration_ns &&
	    (!v->o.filter.failure || err)) {
		print_head(v, t, e->ts, &dur);
		print_call(v, e);
		print_ret(v, e->id, x->ret);
	}
	drop_open(t);
}

/* An exit whose enter was before the trace (or lost): perf's continued. */
static void continued(struct sv_view *v, struct sv_thread *t,
		      const struct sv_event *x)
{
	const char *name = sys_name(x->id);

	v->c.unpaired_exits++;
	if (!v->o.lines || v->o.filter.min_duration_ns ||
	    (v->o.filter.failure && !is_error(x->ret)))
		return;
	print_head(v, t, x->ts, NULL);
	if (name)
		fprintf(v->o.out, "... [continued]: %s()", name);
	else
		fprintf(v->o.out, "... [continued]: syscall_%" PRId64 "()", x->id);
	print_ret(v, x->id, x->ret);
}

static void take_strings(struct sv_view *v, struct sv_thread *t,
			 struct sv_event *e)
{
	size_t i;

	for (i = 0; i < e->nr_strs; i++) {
		v->c.strings++;
		v->c.faults += !e->strs[i].value;
		v->c.truncated += e->strs[i].truncated;
	}
	if (t->call.open && t->call.enter.ts == e->ts && !t->call.enter.strs) {
		t->call.enter.strs = e->strs;
		t->call.enter.nr_strs = e->nr_strs;
	} else {
		free_strs(e->strs, e->nr_strs);
	}
	e->strs = NULL;
	e->nr_strs = 0;
}

static void process(struct sv_view *v, struct sv_event *e)
{
	struct sv_thread *t = thread(v, e->machine, e->tid);

	if (!t || (e->kind != EV_STRS && !selected(v, t, e->id))) {
		free_strs(e->strs, e->nr_strs);
		e->strs = NULL;
		return;
	}
	if (e->kind == EV_STRS) {
		take_strings(v, t, e);
		return;
	}
	if (!v->have_base) {
		v->base_ts = e->ts;
		v->have_base = true;
	}
	if (e->kind == EV_ENTER) {
		if (t->call.open)	/* its exit was lost */
			drop_open(t);
		t->call.enter = *e;
		t->call.open = true;
	} else if (t->call.open && t->call.enter.id == e->id) {
		complete(v, t, e);
	} else {
		if (t->call.open)
			drop_open(t);
		continued(v, t, e);
	}
}

/*
 * What was left from the last flush is in order already: only what came
 * since is sorted, then the two runs are merged, so a live view under a
 * syscall storm does not sort its whole hold-back every tick.
 */
static void sort_events(struct sv_view *v)
{
	size_t i = 0, j = v->sorted, k = 0;
	struct sv_event *grow;

	qsort(v->ev + v->sorted, v->n - v->sorted, sizeof(*v->ev), by_time);
	if (v->sorted && v->sorted < v->n) {
		grow = realloc(v->tmp, v->cap * sizeof(*grow));
		if (!grow) {		/* sort it all in place instead */
			qsort(v->ev, v->n, sizeof(*v->ev), by_time);
			v->sorted = v->n;
			return;
		}
		v->tmp = grow;
		while (i < v->sorted || j < v->n) {
			if (j == v->n || (i < v->sorted && by_time(&v->ev[i], &v->ev[j]) <= 0))
				v->tmp[k++] = v->ev[i++];
			else
				v->tmp[k++] = v->ev[j++];
		}
		memcpy(v->ev, v->tmp, v->n * sizeof(*v->ev));
	}
	v->sorted = v->n;
}

void sv_flush(struct sv_view *v, uint64_t until_ts)
{
	size_t i, rest;

	if (v->n)
		sort_events(v);
	for (i = 0; i < v->n && v->ev[i].ts < until_ts; i++)
		process(v, &v->ev[i]);
	rest = v->n - i;
	if (rest && i)
		memmove(v->ev, v->ev + i, rest * sizeof(*v->ev));
	v->n = v->sorted = rest;
	fflush(v->o.out);
}

static int by_enter_time(const void *a, const void *b)
{
	const struct sv_thread *x = *(struct sv_thread *const *)a;
	const struct sv_thread *y = *(struct sv_thread *const *)b;

	if (x->call.enter.ts != y->call.enter.ts)
		return x->call.enter.ts < y->call.enter.ts ? -1 : 1;
	return x->tid - y->tid;
}

/* Calls without an exit at the end, oldest first. exit and exit_group
 * never return: shown as perf does, without a result. */
static void print_pending(struct sv_view *v)
{
	struct sv_thread **open = calloc(v->nr_threads + 1, sizeof(*open));
	size_t i, n = 0;

	if (!open)
		return;
	for (i = 0; i < v->nr_threads; i++)
		if (v->threads[i]->call.open)
			open[n++] = v->threads[i];
	qsort(open, n, sizeof(*open), by_enter_time);
	for (i = 0; i < n; i++) {
		const char *name = sys_name(open[i]->call.enter.id);
		bool no_return = name && (!strcmp(name, "exit") ||
					  !strcmp(name, "exit_group"));

		if (!no_return)
			v->c.pending++;
		if (!v->o.lines || v->o.filter.min_duration_ns ||
		    v->o.filter.failure)
			continue;
		print_head(v, open[i], open[i]->call.enter.ts, NULL);
		print_call(v, &open[i]->call.enter);
		fputs(no_return ? "\n" : " ... [pending]\n", v->o.out);
	}
	free(open);
}

double sv_stddev_pct(const struct sv_stat *s)
{
	double var;

	if (s->calls < 2 || s->mean <= 0)
		return 0;
	var = s->m2 / (double)(s->calls - 1);
	return 100.0 * sqrt(var / (double)s->calls) / s->mean;
}

static const struct sv_stat *sort_stats;

static int by_total(const void *a, const void *b)
{
	const struct sv_stat *x = &sort_stats[*(const unsigned int *)a];
	const struct sv_stat *y = &sort_stats[*(const unsigned int *)b];

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return (int)*(const unsigned int *)a - (int)*(const unsigned int *)b;
}

/* The ids with calls in stats, by total time, most first. */
static size_t sorted_ids(const struct sv_stat *stats, unsigned int *ids)
{
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < SV_NR_MAX; i++)
		if (stats[i].calls)
			ids[n++] = i;
	sort_stats = stats;
	qsort(ids, n, sizeof(*ids), by_total);
	return n;
}

static void print_name(FILE *f, unsigned int id, int width)
{
	const char *name = sys_name(id);
	char buf[32];

	if (!name) {
		snprintf(buf, sizeof(buf), "syscall_%u", id);
		name = buf;
	}
	fprintf(f, "%-*s", width, name);
}

static void print_thread_table(FILE *f, const struct sv_thread *t)
{
	unsigned int ids[SV_NR_MAX];
	size_t i, n = sorted_ids(t->stats, ids);

	fprintf(f, "     syscall            calls  errors  total(msec)   min(msec)   avg(msec)   max(msec)  stddev(%%)\n");
	fprintf(f, "     --------------- -------- ------- ------------ ----------- ----------- ----------- ----------\n");
	for (i = 0; i < n; i++) {
		const struct sv_stat *s = &t->stats[ids[i]];

		fputs("     ", f);
		print_name(f, ids[i], 15);
		fprintf(f, " %8" PRIu64 " %7" PRIu64 " %12.3f %11.3f %11.3f %11.3f %9.2f%%\n",
			s->calls, s->errors, s->total / 1e6, s->min / 1e6,
			s->mean / 1e6, s->max / 1e6, sv_stddev_pct(s));
	}
}

/* The threads of one machine: threads[lo, hi) once sv_finish sorted them. */
struct sv_slice {
	size_t lo, hi;
};

static uint64_t process_total(const struct sv_view *v, struct sv_slice sl,
			      const struct sv_thread *t)
{
	uint64_t sum = 0;
	size_t i;

	for (i = sl.lo; i < sl.hi; i++)
		if (v->threads[i]->tgid == t->tgid)
			sum += v->threads[i]->total;
	return sum;
}

struct sv_row {
	struct sv_thread *t;
	uint64_t ptotal;
};

static int by_process(const void *a, const void *b)
{
	const struct sv_row *x = a, *y = b;

	if (x->ptotal != y->ptotal)
		return x->ptotal > y->ptotal ? -1 : 1;
	if (x->t->tgid != y->t->tgid)
		return x->t->tgid - y->t->tgid;
	if (x->t->total != y->t->total)
		return x->t->total > y->t->total ? -1 : 1;
	return x->t->tid - y->t->tid;
}

static const char *process_comm(const struct sv_view *v, struct sv_slice sl,
				const struct sv_thread *t)
{
	size_t i;

	for (i = sl.lo; i < sl.hi; i++)
		if (v->threads[i]->tid == t->tgid && v->threads[i]->comm[0])
			return v->threads[i]->comm;
	return t->comm[0] ? t->comm : ":";
}

static void print_process_head(struct sv_view *v, struct sv_slice sl,
			       const struct sv_row *rows, size_t i, size_t n)
{
	uint64_t calls = 0;
	size_t j, threads = 0;

	for (j = i; j < n && rows[j].t->tgid == rows[i].t->tgid; j++) {
		calls += rows[j].t->calls;
		threads++;
	}
	fprintf(v->o.out, "\n %s (%d): %zu thread%s, %" PRIu64 " calls, %.3f msec\n",
		process_comm(v, sl, rows[i].t), rows[i].t->tgid, threads,
		threads == 1 ? "" : "s", calls, rows[i].ptotal / 1e6);
}

/* strace -c's view: every thread of the slice together. */
static void print_all_threads(struct sv_view *v, struct sv_slice sl,
			      const char *what)
{
	struct sv_stat *all = calloc(SV_NR_MAX, sizeof(*all));
	unsigned int ids[SV_NR_MAX], id;
	size_t i, n;

	if (!all)
		return;
	for (i = sl.lo; i < sl.hi; i++) {
		const struct sv_thread *t = v->threads[i];

		if (!t->stats)
			continue;
		for (id = 0; id < SV_NR_MAX; id++) {
			all[id].calls += t->stats[id].calls;
			all[id].errors += t->stats[id].errors;
			all[id].total += t->stats[id].total;
		}
	}
	n = sorted_ids(all, ids);
	fprintf(v->o.out, "\n %s, per syscall (as strace -c):\n", what);
	fprintf(v->o.out, "     syscall            calls  errors  total(msec)  usecs/call\n");
	fprintf(v->o.out, "     --------------- -------- ------- ------------ -----------\n");
	for (i = 0; i < n; i++) {
		const struct sv_stat *s = &all[ids[i]];

		fputs("     ", v->o.out);
		print_name(v->o.out, ids[i], 15);
		fprintf(v->o.out, " %8" PRIu64 " %7" PRIu64 " %12.3f %11.0f\n",
			s->calls, s->errors, s->total / 1e6,
			s->total / 1e3 / (double)s->calls);
	}
	free(all);
}

static void print_machine_summary(struct sv_view *v, struct sv_slice sl)
{
	struct sv_row *rows = calloc(sl.hi - sl.lo + 1, sizeof(*rows));
	size_t i, n = 0;

	if (!rows)
		return;
	for (i = sl.lo; i < sl.hi; i++)
		if (v->threads[i]->calls) {
			rows[n].t = v->threads[i];
			rows[n++].ptotal = process_total(v, sl, v->threads[i]);
		}
	qsort(rows, n, sizeof(*rows), by_process);
	for (i = 0; i < n; i++) {
		if (!i || rows[i].t->tgid != rows[i - 1].t->tgid)
			print_process_head(v, sl, rows, i, n);
		fprintf(v->o.out, "   %s/%d: %" PRIu64 " calls, %.3f msec\n",
			rows[i].t->comm[0] ? rows[i].t->comm : ":", rows[i].t->tid,
			rows[i].t->calls, rows[i].t->total / 1e6);
		print_thread_table(v->o.out, rows[i].t);
	}
	print_all_threads(v, sl, "All threads");
	free(rows);
}

static void print_losses(struct sv_view *v, const struct sv_machine *mm)
{
	fprintf(v->o.out, "\n lost: %" PRIu64 " events (the kernel's count at the end of the trace), %" PRIu64 " bundles marked lost_events\n",
		mm->lost_events, mm->lost_bundles);
}

static int by_thread_machine(const void *a, const void *b)
{
	const struct sv_thread *x = *(struct sv_thread *const *)a;
	const struct sv_thread *y = *(struct sv_thread *const *)b;

	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
	return x->tid - y->tid;
}

/* Each machine's threads, contiguous: the summary walks one at a time. */
static void slice_threads(struct sv_view *v)
{
	size_t i, j;

	if (v->nr_threads > 1)
		qsort(v->threads, v->nr_threads, sizeof(*v->threads),
		      by_thread_machine);
	for (i = 0; i < v->nr_machines; i++)
		v->machines[i].lo = v->machines[i].hi = 0;
	for (i = 0; i < v->nr_threads; i = j) {
		struct sv_machine *mm = machine(v, v->threads[i]->machine);

		for (j = i; j < v->nr_threads &&
		     v->threads[j]->machine == v->threads[i]->machine; j++)
			;
		mm->lo = i;
		mm->hi = j;
	}
}

struct sv_total {
	const struct sv_machine *mm;
	uint64_t calls, errors, total;
	size_t threads;
};

static int by_machine_total(const void *a, const void *b)
{
	const struct sv_total *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->mm->id < y->mm->id ? -1 : x->mm->id > y->mm->id;
}

/*
 * Many machines: one table of the busiest SV_TOP by total time, the rest
 * counted, and strace -c's view of every machine together.
 */
static void print_fleet_summary(struct sv_view *v)
{
	struct sv_total *m = calloc(v->nr_machines, sizeof(*m));
	struct sv_slice all = { 0, v->nr_threads };
	size_t i, j, busy = 0;
	uint64_t calls = 0;

	if (!m)
		return;
	for (i = 0; i < v->nr_machines; i++) {
		const struct sv_machine *mm = &v->machines[i];

		m[i].mm = mm;
		for (j = mm->lo; j < mm->hi; j++) {
			const struct sv_thread *t = v->threads[j];
			unsigned int id;

			if (!t->calls)
				continue;
			m[i].threads++;
			m[i].calls += t->calls;
			m[i].total += t->total;
			for (id = 0; t->stats && id < SV_NR_MAX; id++)
				m[i].errors += t->stats[id].errors;
		}
		busy += m[i].calls > 0;
		calls += m[i].calls;
	}
	qsort(m, v->nr_machines, sizeof(*m), by_machine_total);
	fprintf(v->o.out, "\n Summary of events: %zu machines, %zu with calls, %" PRIu64 " calls (--machine NAME or --per-machine for their sections)\n\n",
		v->nr_machines, busy, calls);
	fprintf(v->o.out, "     machine                            id    calls  errors  total(msec)  threads\n");
	fprintf(v->o.out, "     ------------------------------ ------ -------- ------- ------------ --------\n");
	for (i = 0; i < v->nr_machines && i < SV_TOP && m[i].calls; i++)
		fprintf(v->o.out, "     %-30.30s %6u %8" PRIu64 " %7" PRIu64 " %12.3f %8zu\n",
			machine_name((struct sv_machine *)m[i].mm), m[i].mm->id,
			m[i].calls, m[i].errors, m[i].total / 1e6,
			m[i].threads);
	if (busy > SV_TOP)
		fprintf(v->o.out, "     ... %zu more machines with calls\n",
			busy - SV_TOP);
	print_all_threads(v, all, "All machines");
	free(m);
}

/*
 * Losses of many machines: the machines that lost anything, the first few
 * by name, and the totals.
 */
static void print_fleet_losses(struct sv_view *v)
{
	uint64_t events = 0, bundles = 0;
	size_t i, n = 0;

	for (i = 0; i < v->nr_machines; i++) {
		const struct sv_machine *mm = &v->machines[i];

		if (!mm->lost_events && !mm->lost_bundles)
			continue;
		if (n++ < SV_SECTIONS)
			fprintf(v->o.out, " lost on %s: %" PRIu64 " events, %" PRIu64 " bundles marked lost_events\n",
				machine_name(&v->machines[i]), mm->lost_events,
				mm->lost_bundles);
		events += mm->lost_events;
		bundles += mm->lost_bundles;
	}
	if (n > SV_SECTIONS)
		fprintf(v->o.out, " ... and on %zu more machines\n",
			n - SV_SECTIONS);
	if (n || v->o.summary)
		fprintf(v->o.out, "\n lost: %" PRIu64 " events (the kernel's count at the end of the trace), %" PRIu64 " bundles marked lost_events, on %zu of %zu machines\n",
			events, bundles, n, v->nr_machines);
}

void sv_finish(struct sv_view *v)
{
	bool sections;
	size_t i;

	sv_flush(v, UINT64_MAX);
	print_pending(v);
	if (!v->nr_machines)
		machine(v, 0);
	slice_threads(v);
	for (i = 0; i < v->nr_machines; i++) {
		if (!machine_wanted(v, v->machines[i].id))
			continue;
		v->c.lost_events += v->machines[i].lost_events;
		v->c.lost_bundles += v->machines[i].lost_bundles;
	}
	sections = v->nr_machines <= SV_SECTIONS || v->o.per_machine ||
		   v->o.filter.nr_machines;
	for (i = 0; sections && i < v->nr_machines; i++) {
		struct sv_machine *mm = &v->machines[i];
		struct sv_slice sl = { mm->lo, mm->hi };

		if (!machine_wanted(v, mm->id))
			continue;
		if (v->o.summary) {
			if (v->nr_machines > 1 || mm->id)
				fprintf(v->o.out, "\n=== machine %s (id %u) ===\n",
					machine_name(mm), mm->id);
			fprintf(v->o.out, "\n Summary of events:\n");
			print_machine_summary(v, sl);
		}
		if (v->o.summary || mm->lost_events || mm->lost_bundles)
			print_losses(v, mm);
	}
	if (!sections) {
		if (v->o.summary)
			print_fleet_summary(v);
		print_fleet_losses(v);
	}
	if (v->c.pending || v->c.unpaired_exits || v->c.faults || v->c.truncated)
		fprintf(v->o.out, " %" PRIu64 " calls pending at the end, %" PRIu64 " exits without their enter (begun before the trace), %" PRIu64 " string arguments unreadable, %" PRIu64 " cut at %d bytes\n",
			v->c.pending, v->c.unpaired_exits, v->c.faults,
			v->c.truncated, SV_STR_MAX);
	fflush(v->o.out);
}

void sv_get_counts(const struct sv_view *v, struct sv_counts *c)
{
	*c = v->c;
}

const struct sv_stat *sv_stat_of(const struct sv_view *v, uint32_t m,
				 int32_t tid, unsigned int nr)
{
	size_t i;

	if (nr >= SV_NR_MAX)
		return NULL;
	for (i = 0; i < v->nr_threads; i++)
		if (v->threads[i]->machine == m && v->threads[i]->tid == tid)
			return v->threads[i]->stats ? &v->threads[i]->stats[nr] : NULL;
	return NULL;
}

int sv_parse_syscalls(const char *list, struct sv_filter *f, char *err,
		      size_t errlen)
{
	char *copy, *tok, *save = NULL;
	int nr;

	f->exclude = *list == '!';
	if (f->exclude)
		list++;
	copy = strdup(list);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		nr = pbt_syscall_nr(tok);
		if (nr < 0 || nr >= SV_NR_MAX) {
			snprintf(err, errlen, "unknown syscall '%s' in -e: names as in 'man 2 syscalls' (openat, read), comma-separated; '!a,b' excludes",
				 tok);
			free(copy);
			return -1;
		}
		f->set[nr] = true;
		f->has_set = true;
	}
	free(copy);
	if (!f->has_set) {
		snprintf(err, errlen, "-e wants syscall names, e.g. -e openat,read or -e '!futex'");
		return -1;
	}
	return 0;
}
