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

enum { EV_ENTER, EV_STRS, EV_EXIT };	/* sort order at one timestamp */

#define SV_COMM_MAX 16			/* the kernel's TASK_COMM_LEN */

struct sv_event {
	uint64_t ts;
	uint32_t machine;
	int32_t tid;			/* the event's own pid */
	int64_t id;
	uint8_t kind, nr_args;
	union {
		uint64_t args[6];	/* EV_ENTER */
		int64_t ret;		/* EV_EXIT */
		struct {		/* EV_STRS */
			struct sv_str *strs;
			size_t nr_strs;
		} s;
	} u;
};

struct sv_open {
	bool open;
	struct sv_event enter;
	struct sv_str *strs;		/* its string arguments */
	size_t nr_strs;
};

/* A thread's calls of one syscall (a thread makes few kinds of call). */
struct sv_tstat {
	unsigned int id;
	struct sv_stat s;
};

struct sv_thread {
	struct sv_thread *next;		/* hash chain */
	uint32_t machine;
	int32_t tid, tgid;
	char comm[32];
	struct sv_open call;
	struct sv_tstat *stats;		/* by id, nr_stats of them */
	unsigned int nr_stats, stats_cap;
	unsigned int last_stat;		/* the one used last */
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
	struct sv_event *tmp;		/* merge space, tmp_cap entries */
	size_t tmp_cap;
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
	uint64_t fed;			/* bytes sv_feed() took so far */
	uint64_t last_ts;		/* the latest event of the last packet */
	uint64_t flushed_to;		/* sv_flush()'s last until_ts */
	uint64_t first_bad;		/* the first unreadable packet's record */
	uint64_t first_bad_at;		/* the field that breaks it */
	const char *first_bad_what;
	bool names_given;		/* sv_feed_names() reads task events */
	struct sv_name *names;		/* a bundle's, until it is all read */
	size_t nr_names, names_cap;
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

static void free_event(struct sv_event *e)
{
	if (e->kind == EV_STRS)
		free_strs(e->u.s.strs, e->u.s.nr_strs);
	e->kind = EV_ENTER;	/* nothing of its own left */
}

void sv_free(struct sv_view *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++)
		free_event(&v->ev[i]);
	for (i = 0; i < v->nr_threads; i++) {
		free_strs(v->threads[i]->call.strs, v->threads[i]->call.nr_strs);
		free(v->threads[i]->stats);
		free(v->threads[i]);
	}
	free(v->threads);
	free(v->names);
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

/* A name as the view keeps it: a path's last part, at most 15 bytes. */
static void comm_of(char *dst, size_t size, struct tf_str s)
{
	const char *base = s.s;
	size_t i, n;

	for (i = 0; i < s.len; i++)
		if (s.s[i] == '/')
			base = s.s + i + 1;
	n = s.len - (size_t)(base - s.s);
	if (n > SV_COMM_MAX - 1)
		n = SV_COMM_MAX - 1;
	if (n >= size)
		n = size - 1;
	memcpy(dst, base, n);
	dst[n] = 0;
}

static void set_comm(struct sv_view *v, uint32_t m, int32_t tid,
		     const char *comm, int32_t tgid)
{
	struct sv_thread *t = tid > 0 ? thread(v, m, tid) : NULL;

	if (!t)
		return;
	if (*comm)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
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
	v->c.events++;
	return &v->ev[v->n++];
}

/* The string arguments of a sys_enter (docs/tracectl.md). */
static void add_strings(struct sv_event *e, const struct tf_event *te)
{
	struct pbr r = pbr_init(te->generic.msg, te->generic.msg_end);
	struct tf_error err;
	struct tf_gfield f;
	struct sv_str *s;
	size_t n = 0, cap = 0;

	e->u.s.strs = NULL;
	e->u.s.nr_strs = 0;
	while (tf_generic_field(&r, &f, &err) > 0)
		cap++;
	s = calloc(cap ? cap : 1, sizeof(*s));
	if (!s)
		return;
	r = pbr_init(te->generic.msg, te->generic.msg_end);
	while (tf_generic_field(&r, &f, &err) > 0) {
		const char *name = f.name.s ? f.name.s : "";
		size_t len = f.name.len;

		if (len > 10 && !memcmp(name + len - 10, "_truncated", 10)) {
			if (n && strlen(s[n - 1].name) >= len - 10 &&
			    !memcmp(s[n - 1].name, name, len - 10))
				s[n - 1].truncated = true;
			continue;
		}
		snprintf(s[n].name, sizeof(s[n].name), "%.*s", (int)len, name);
		if (f.value == TF_GF_STR)
			s[n].value = strndup(f.str.s ? f.str.s : "",
					     f.str.len < SV_STR_MAX ? f.str.len : SV_STR_MAX);
		else if (f.value == TF_GF_UINT)
			s[n].ptr = f.u;
		n++;
	}
	e->u.s.strs = s;
	e->u.s.nr_strs = n;
}

static bool is_sys_enter_strings(const struct tf_event *te)
{
	const struct tf_str *n = &te->generic.event_name;

	return n->len >= 10 && !memcmp(n->s, "sys_enter_", 10);
}

/*
 * A name a thread got (exec, rename, fork, newtask) or has (a switch's
 * next, exit): kept until the bundle is read whole, then set in file
 * order, before any line is printed, as a whole-file read names threads:
 * each thread by the last name the file gives it.
 */
struct sv_name {
	uint32_t machine;
	int32_t tid, tgid, parent;	/* parent: newtask's, CLONE_THREAD */
	char comm[SV_COMM_MAX];
};

static void add_name(struct sv_view *v, uint32_t m, const struct tf_event *te)
{
	struct sv_name *n, *grow;

	if (v->nr_names == v->names_cap) {
		size_t cap = v->names_cap ? v->names_cap * 2 : 64;

		grow = realloc(v->names, cap * sizeof(*grow));
		if (!grow)
			return;
		v->names = grow;
		v->names_cap = cap;
	}
	n = &v->names[v->nr_names++];
	n->machine = m;
	n->tid = te->task.pid;
	n->tgid = te->kind == TF_EV_EXIT ? te->task.tgid : 0;
	n->parent = te->kind == TF_EV_NEWTASK &&
		    (te->task.clone_flags & 0x10000) ? (int32_t)te->pid : 0;
	n->comm[0] = 0;
	if (te->task.comm.len)
		comm_of(n->comm, sizeof(n->comm), te->task.comm);
}

static void set_names(struct sv_view *v)
{
	struct sv_thread *parent;
	struct sv_name *n;
	size_t i;

	for (i = 0; i < v->nr_names; i++) {
		n = &v->names[i];
		parent = n->parent ? thread(v, n->machine, n->parent) : NULL;
		set_comm(v, n->machine, n->tid, n->comm,
			 parent ? parent->tgid : n->tgid);
	}
	v->nr_names = 0;
}

static void add_event(struct sv_view *v, uint32_t m, const struct tf_event *te)
{
	struct sv_event *e;
	size_t i;

	switch (te->kind) {
	case TF_EV_SYS_ENTER:
	case TF_EV_SYS_EXIT:
		break;
	case TF_EV_GENERIC:
		if (!is_sys_enter_strings(te))
			return;
		break;
	default:
		if (!v->names_given)
			add_name(v, m, te);
		return;
	}
	e = new_event(v);
	if (!e)
		return;
	e->ts = te->timestamp;
	e->machine = m;
	e->tid = (int32_t)te->pid;
	e->id = 0;
	e->nr_args = 0;
	if (te->timestamp > v->last_ts)
		v->last_ts = te->timestamp;
	if (te->timestamp < v->flushed_to)
		v->c.late++;	/* after later calls were shown */
	switch (te->kind) {
	case TF_EV_SYS_ENTER:
		e->kind = EV_ENTER;
		e->id = te->sys_enter.id;
		e->nr_args = te->sys_enter.nr_args > 6 ? 6 : te->sys_enter.nr_args;
		for (i = 0; i < 6; i++)
			e->u.args[i] = i < e->nr_args ? te->sys_enter.args[i] : 0;
		break;
	case TF_EV_SYS_EXIT:
		e->kind = EV_EXIT;
		e->id = te->sys_exit.id;
		e->u.ret = te->sys_exit.ret;
		break;
	default:
		e->kind = EV_STRS;
		add_strings(e, te);
		break;
	}
}

/* A packet's bytes that break the format: none of its events are kept
 * (as protobuf-c refuses it whole), and the first is remembered. */
static void bad_packet(struct sv_view *v, uint64_t off, const uint8_t *rec,
		       const struct tf_error *err)
{
	if (!v->c.bad_packets++) {
		v->first_bad = off;
		v->first_bad_what = err->what;
		v->first_bad_at = off + (uint64_t)(err->at - rec);
	}
}

static bool add_bundle(struct sv_view *v, uint32_t m, const struct tf_packet *pk,
		       struct tf_error *err)
{
	size_t n0 = v->n, i;
	struct tf_bundle b;
	struct tf_event te;
	int ret;

	tf_bundle_begin(&b, pk);
	b.skip_tasks = v->names_given;
	v->nr_names = 0;
	while ((ret = tf_bundle_next(&b, &te, err)) > 0)
		add_event(v, m, &te);
	if (ret < 0) {
		for (i = n0; i < v->n; i++)
			free_event(&v->ev[i]);
		v->n = n0;
		if (v->sorted > n0)
			v->sorted = n0;
		v->nr_names = 0;
		return false;
	}
	set_names(v);
	if (b.lost_events)	/* each machine gets a section */
		machine(v, m)->lost_bundles++;
	else
		machine(v, m);
	return true;
}

static bool add_process_tree(struct sv_view *v, uint32_t m,
			     const struct tf_packet *pk, struct tf_error *err)
{
	char comm[SV_COMM_MAX];
	struct tf_tree t;
	struct tf_proc p;
	int ret;

	tf_tree_begin(&t, pk);		/* all of it is read, or nothing */
	while ((ret = tf_tree_next(&t, &p, err)) > 0)
		;
	if (ret < 0)
		return false;
	tf_tree_begin(&t, pk);
	while (tf_tree_next(&t, &p, err) > 0) {
		comm[0] = 0;
		if (p.name.len)
			comm_of(comm, sizeof(comm), p.name);
		set_comm(v, m, p.tid, comm, p.tgid);
	}
	return true;
}

/* The kernel's own count of what it could not record (end of trace). */
static bool add_ftrace_stats(struct sv_view *v, uint32_t m,
			     const struct tf_packet *pk, struct tf_error *err)
{
	struct tf_ftrace_stats st;

	if (!tf_ftrace_stats(pk, &st, err))
		return false;
	if (st.has_phase &&
	    st.phase == PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE)
		machine(v, m)->lost_events = st.lost;
	return true;
}

static bool add_system_info(struct sv_view *v, uint32_t m,
			    const struct tf_packet *pk, struct tf_error *err)
{
	struct tf_system_info si;
	struct sv_machine *mm;

	if (!tf_system_info(pk, &si, err))
		return false;
	mm = machine(v, m);
	/* This machine stays "host", the word configs use for it, whatever
	 * name traced gave it. */
	if (m && si.machine_name.len)
		snprintf(mm->name, sizeof(mm->name), "%.*s",
			 (int)si.machine_name.len, si.machine_name.s);
	else if (m && !mm->name[0] && si.has_utsname && si.release.s)
		snprintf(mm->name, sizeof(mm->name), "%.*s %.*s",
			 (int)si.machine.len, si.machine.s ? si.machine.s : "",
			 (int)si.release.len, si.release.s);
	return true;
}

/* The TracePacket of one whole record at rec. */
static const uint8_t *record_body(const uint8_t *rec, size_t len, size_t *n)
{
	const uint8_t *p = rec, *body;

	return trace_next_record(&p, rec + len, &body, n) > 0 &&
	       p == rec + len ? body : NULL;
}

bool sv_feed_packet(struct sv_view *v, const uint8_t *rec, size_t rec_len,
		    uint64_t off)
{
	struct tf_packet pk;
	struct tf_error err = { rec, "Trace.packet: not one whole record" };
	const uint8_t *body;
	size_t len;
	uint32_t m;
	bool ok;

	v->last_ts = 0;
	body = record_body(rec, rec_len, &len);
	if (!body || !tf_packet(body, body + len, &pk, &err)) {
		bad_packet(v, off, rec, &err);
		return false;
	}
	m = pk.has_machine_id ? pk.machine_id : 0;
	switch (pk.data) {
	case TF_FTRACE_EVENTS:
		ok = add_bundle(v, m, &pk, &err);
		break;
	case TF_PROCESS_TREE:
		ok = add_process_tree(v, m, &pk, &err);
		break;
	case TF_FTRACE_STATS:
		ok = add_ftrace_stats(v, m, &pk, &err);
		break;
	case TF_SYSTEM_INFO:
		ok = add_system_info(v, m, &pk, &err);
		break;
	default:
		ok = true;
		break;
	}
	if (!ok)
		bad_packet(v, off, rec, &err);
	return ok;
}

long sv_feed(struct sv_view *v, const uint8_t *data, size_t len,
	     uint64_t *bad_offset)
{
	const uint8_t *p = data, *end = data + len, *body, *at;
	size_t n;
	int ret;

	while (p < end) {
		at = p;
		ret = trace_next_record(&p, end, &body, &n);
		if (ret == 0)
			break;			/* cut short: the rest later */
		if (ret < 0) {
			*bad_offset = p - data;
			v->fed += p - data;
			return -1;
		}
		sv_feed_packet(v, at, (size_t)(p - at),
			       v->fed + (uint64_t)(at - data));
	}
	v->fed += p - data;
	return p - data;
}

bool sv_feed_names(struct sv_view *v, const uint8_t *rec, size_t rec_len)
{
	const uint8_t *body = record_body(rec, rec_len, &rec_len);
	struct tf_packet pk;
	struct tf_bundle b;
	struct tf_error err;
	struct tf_event te;
	uint32_t m;
	int ret;

	v->names_given = true;
	if (!body || !tf_packet(body, body + rec_len, &pk, &err) ||
	    pk.data != TF_FTRACE_EVENTS)
		return false;
	m = pk.has_machine_id ? pk.machine_id : 0;
	tf_bundle_begin(&b, &pk);
	b.skip_calls = true;
	v->nr_names = 0;
	while ((ret = tf_bundle_next(&b, &te, &err)) > 0)
		if (te.kind != TF_EV_SYS_ENTER && te.kind != TF_EV_SYS_EXIT &&
		    te.kind != TF_EV_GENERIC)
			add_name(v, m, &te);
	if (ret < 0) {		/* sv_feed_packet() will say so */
		v->nr_names = 0;
		return false;
	}
	set_names(v);
	return true;
}

void sv_add_machine(struct sv_view *v, uint32_t machine_id)
{
	machine(v, machine_id);
}

size_t sv_queued(const struct sv_view *v)
{
	return v->n;
}

uint64_t sv_last_ts(const struct sv_view *v)
{
	return v->last_ts;
}

bool sv_first_bad(const struct sv_view *v, uint64_t *off, uint64_t *at,
		  const char **what)
{
	if (!v->c.bad_packets)
		return false;
	*off = v->first_bad;
	*at = v->first_bad_at;
	*what = v->first_bad_what;
	return true;
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

/*
 * printf("%*.3f", width, ns / 1e6) without the double: the same text.
 * %.3f rounds the double's exact value. Below 2^53 ns (104 days) ns is
 * exact as a double and ns / 1e6 is within 2^-53 of the true quotient,
 * closer than the nearest rounding boundary (at least 1 ns away unless
 * exactly on it), so rounding the integer gives the same digits. Exactly
 * on a half the double's own rounding decides, and past 2^53 ns the
 * double is not exact: printf formats those.
 */
static char *put_ms(char *b, uint64_t ns, int width)
{
	uint64_t us = ns / 1000, ms;
	unsigned int frac;
	char digits[24];
	int n = 0, pad;

	if (ns % 1000 == 500 || ns >> 53)
		return b + sprintf(b, "%*.3f", width, ns / 1e6);
	us += ns % 1000 > 500;
	ms = us / 1000;
	frac = (unsigned int)(us % 1000);
	do {
		digits[n++] = (char)('0' + ms % 10);
		ms /= 10;
	} while (ms);
	for (pad = width - (n + 4); pad > 0; pad--)
		*b++ = ' ';
	while (n)
		*b++ = digits[--n];
	*b++ = '.';
	*b++ = (char)('0' + frac / 100);
	*b++ = (char)('0' + frac / 10 % 10);
	*b++ = (char)('0' + frac % 10);
	return b;
}

static void print_head(struct sv_view *v, const struct sv_thread *t,
		       uint64_t ts, const uint64_t *dur)
{
	char line[160], *b = line;
	FILE *f = v->o.out;

	if (v->nr_machines > 1 || t->machine) {
		fputs(machine_name(machine(v, t->machine)), f);
		fputs(": ", f);
	}
	b = put_ms(b, ts >= v->base_ts ? ts - v->base_ts : 0, 10);
	if (dur) {
		memcpy(b, " (", 2);
		b = put_ms(b + 2, *dur, 7);
		memcpy(b, " ms): ", 6);
		b += 6;
	} else {
		memcpy(b, " (         ): ", 14);
		b += 14;
	}
	b += snprintf(b, line + sizeof(line) - b, "%s/%d ",
		      t->comm[0] ? t->comm : ":", t->tid);
	fwrite(line, 1, (size_t)(b - line), f);
}

static void print_call(struct sv_view *v, const struct sv_open *call)
{
	const struct sv_event *e = &call->enter;
	struct sv_call_fmt c = {
		.name = sys_name(e->id), .id = (unsigned int)e->id,
		.nr_args = e->nr_args, .strs = call->strs,
		.nr_strs = call->nr_strs,
	};

	memcpy(c.args, e->u.args, sizeof(c.args));
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

/* A thread's cell for syscall id, made on its first call (NULL: none). */
static struct sv_stat *tstat(const struct sv_thread *t, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < t->nr_stats; i++)
		if (t->stats[i].id == id)
			return &t->stats[i].s;
	return NULL;
}

/* A storm of one call: the cell used last first. */
static struct sv_stat *tstat_hot(struct sv_thread *t, unsigned int id)
{
	unsigned int i;

	if (t->last_stat < t->nr_stats && t->stats[t->last_stat].id == id)
		return &t->stats[t->last_stat].s;
	for (i = 0; i < t->nr_stats; i++)
		if (t->stats[i].id == id) {
			t->last_stat = i;
			return &t->stats[i].s;
		}
	return NULL;
}

static struct sv_stat *new_tstat(struct sv_thread *t, unsigned int id)
{
	struct sv_tstat *grow;

	if (t->nr_stats == t->stats_cap) {
		unsigned int cap = t->stats_cap ? t->stats_cap * 2 : 8;

		grow = realloc(t->stats, cap * sizeof(*grow));
		if (!grow)
			return NULL;
		t->stats = grow;
		t->stats_cap = cap;
	}
	memset(&t->stats[t->nr_stats], 0, sizeof(t->stats[0]));
	t->stats[t->nr_stats].id = id;
	return &t->stats[t->nr_stats++].s;
}

/* A thread's cells as an array by id (SV_NR_MAX), for the tables. */
static struct sv_stat *dense_stats(const struct sv_thread *t)
{
	struct sv_stat *all = calloc(SV_NR_MAX, sizeof(*all));
	unsigned int i;

	for (i = 0; all && i < t->nr_stats; i++)
		all[t->stats[i].id] = t->stats[i].s;
	return all;
}

static void account(struct sv_view *v, struct sv_thread *t, int64_t id,
		    uint64_t dur, bool err)
{
	struct sv_stat *s;
	double d;

	if (id < 0 || id >= SV_NR_MAX)
		return;
	s = tstat_hot(t, (unsigned int)id);
	if (!s)
		s = new_tstat(t, (unsigned int)id);
	if (!s)
		return;
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
	free_strs(t->call.strs, t->call.nr_strs);
	t->call.strs = NULL;
	t->call.nr_strs = 0;
	t->call.open = false;
}

static void complete(struct sv_view *v, struct sv_thread *t,
		     const struct sv_event *x)
{
	const struct sv_event *e = &t->call.enter;
	uint64_t dur = x->ts - e->ts;
	bool err = is_error(x->u.ret);

	account(v, t, e->id, dur, err);
	if (v->o.lines && dur >= v->o.filter.min_duration_ns &&
	    (!v->o.filter.failure || err)) {
		print_head(v, t, e->ts, &dur);
		print_call(v, &t->call);
		print_ret(v, e->id, x->u.ret);
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
	    (v->o.filter.failure && !is_error(x->u.ret)))
		return;
	print_head(v, t, x->ts, NULL);
	if (name)
		fprintf(v->o.out, "... [continued]: %s()", name);
	else
		fprintf(v->o.out, "... [continued]: syscall_%" PRId64 "()", x->id);
	print_ret(v, x->id, x->u.ret);
}

static void take_strings(struct sv_view *v, struct sv_thread *t,
			 struct sv_event *e)
{
	struct sv_str *strs = e->u.s.strs;
	size_t i, n = e->u.s.nr_strs;

	for (i = 0; i < n; i++) {
		v->c.strings++;
		v->c.faults += !strs[i].value;
		v->c.truncated += strs[i].truncated;
	}
	if (t->call.open && t->call.enter.ts == e->ts && !t->call.strs) {
		t->call.strs = strs;
		t->call.nr_strs = n;
	} else {
		free_strs(strs, n);
	}
	e->kind = EV_ENTER;	/* they are the call's now, or gone */
}

static void process(struct sv_view *v, struct sv_event *e)
{
	struct sv_thread *t = thread(v, e->machine, e->tid);

	if (!t || (e->kind != EV_STRS && !selected(v, t, e->id))) {
		free_event(e);
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
	} else if (t->call.open && (t->call.enter.id == e->id || e->id == -1)) {
		/* -1: the call set the syscall number aside as it returned:
		 * rt_sigreturn restores the interrupted registers, orig_ax
		 * -1 among them, so its exit cannot name it */
		complete(v, t, e);
	} else {
		if (t->call.open)
			drop_open(t);
		continued(v, t, e);
	}
}

static bool ev_before(const struct sv_event *x, const struct sv_event *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->machine != y->machine)
		return x->machine < y->machine;
	if (x->tid != y->tid)
		return x->tid < y->tid;
	return x->kind < y->kind;
}

/* Runs a and b (a ends where b starts) of src merged into dst. */
static void merge2(const struct sv_event *src, struct sv_event *dst,
		   size_t a, size_t b, size_t end)
{
	size_t i = a, j = b, k = a;

	while (i < b && j < end)
		dst[k++] = ev_before(&src[j], &src[i]) ? src[j++] : src[i++];
	memcpy(dst + k, src + i, (b - i) * sizeof(*dst));
	k += b - i;
	memcpy(dst + k, src + j, (end - j) * sizeof(*dst));
}

/*
 * nr runs of src (run[i] starts one, the next one or n ends it) merged
 * into dst in one pass: a heap of the runs by their next event, ties to
 * the earlier run (so equal keys keep their order). run[] is reused as
 * the runs' cursors, end[] as their ends.
 */
static void merge_k(const struct sv_event *src, struct sv_event *dst,
		    size_t *run, size_t *end, size_t nr, size_t n)
{
	size_t i, k = 0, top, c, h, len = nr;
	size_t *heap = end + nr;	/* run numbers */

#define RUN_BEFORE(x, y) (ev_before(&src[run[x]], &src[run[y]]) || \
			  (!ev_before(&src[run[y]], &src[run[x]]) && (x) < (y)))
	for (i = 0; i < nr; i++) {
		end[i] = i + 1 < nr ? run[i + 1] : n;
		heap[i] = i;
	}
	for (i = len / 2; i-- > 0;) {		/* heapify */
		for (h = i; (c = 2 * h + 1) < len; h = c) {
			if (c + 1 < len && RUN_BEFORE(heap[c + 1], heap[c]))
				c++;
			if (!RUN_BEFORE(heap[c], heap[h]))
				break;
			top = heap[h];
			heap[h] = heap[c];
			heap[c] = top;
		}
	}
	while (len) {
		top = heap[0];
		dst[k++] = src[run[top]++];
		if (run[top] == end[top])
			heap[0] = heap[--len];
		for (h = 0; (c = 2 * h + 1) < len; h = c) {
			if (c + 1 < len && RUN_BEFORE(heap[c + 1], heap[c]))
				c++;
			if (!RUN_BEFORE(heap[c], heap[h]))
				break;
			top = heap[h];
			heap[h] = heap[c];
			heap[c] = top;
		}
	}
#undef RUN_BEFORE
}

/*
 * A natural merge sort: events come as ordered runs (each CPU's chunk is
 * in time order, and what was left from the last flush is sorted), so
 * the runs are found and merged in one pass, where a general sort pays
 * log2(events) passes. Equal keys keep their order.
 */
static void sort_events(struct sv_view *v)
{
	size_t *run, nr = 0, i, cap = 64;
	struct sv_event *swap;

	if (v->sorted < 1)
		v->sorted = 1;
	if (v->sorted >= v->n)
		return;
	if (!ev_before(&v->ev[v->sorted], &v->ev[v->sorted - 1])) {
		for (i = v->sorted + 1; i < v->n; i++)
			if (ev_before(&v->ev[i], &v->ev[i - 1]))
				break;
		if (i == v->n) {	/* appended in order: nothing to do */
			v->sorted = v->n;
			return;
		}
	}
	if (v->tmp_cap < v->cap) {
		swap = realloc(v->tmp, v->cap * sizeof(*swap));
		if (!swap)
			goto fallback;
		v->tmp = swap;
		v->tmp_cap = v->cap;
	}
	run = malloc(3 * cap * sizeof(*run));	/* starts, ends, heap */
	if (!run)
		goto fallback;
	run[nr++] = 0;
	for (i = v->sorted; i < v->n; i++) {
		if (!ev_before(&v->ev[i], &v->ev[i - 1]))
			continue;
		if (nr == cap) {
			size_t *grow = realloc(run, 3 * 2 * cap * sizeof(*run));

			if (!grow) {
				free(run);
				goto fallback;
			}
			run = grow;
			cap *= 2;
		}
		run[nr++] = i;
	}
	if (nr == 2)
		merge2(v->ev, v->tmp, run[0], run[1], v->n);
	else
		merge_k(v->ev, v->tmp, run, run + cap, nr, v->n);
	free(run);
	swap = v->ev;		/* the merged copy is the array now */
	v->ev = v->tmp;
	v->tmp = swap;
	i = v->cap;
	v->cap = v->tmp_cap;
	v->tmp_cap = i;
	v->sorted = v->n;
	return;
fallback:			/* no memory for the runs: sort in place */
	qsort(v->ev, v->n, sizeof(*v->ev), by_time);
	v->sorted = v->n;
}

void sv_flush(struct sv_view *v, uint64_t until_ts)
{
	size_t i, rest;

	if (v->n > v->c.held_max)
		v->c.held_max = v->n;
	if (v->n)
		sort_events(v);
	for (i = 0; i < v->n && v->ev[i].ts < until_ts; i++)
		process(v, &v->ev[i]);
	if (until_ts > v->flushed_to && until_ts != UINT64_MAX)
		v->flushed_to = until_ts;
	rest = v->n - i;
	if (rest && i)
		memmove(v->ev, v->ev + i, rest * sizeof(*v->ev));
	v->n = v->sorted = rest;
	fflush(v->o.out);
}

size_t sv_held(const struct sv_view *v)
{
	return v->n;
}

static int by_enter_time(const void *a, const void *b)
{
	const struct sv_thread *x = *(struct sv_thread *const *)a;
	const struct sv_thread *y = *(struct sv_thread *const *)b;

	if (x->call.enter.ts != y->call.enter.ts)
		return x->call.enter.ts < y->call.enter.ts ? -1 : 1;
	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
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
		print_call(v, &open[i]->call);
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
	struct sv_stat *stats = dense_stats(t);
	unsigned int ids[SV_NR_MAX];
	size_t i, n;

	if (!stats)
		return;
	n = sorted_ids(stats, ids);

	fprintf(f, "     syscall            calls  errors  total(msec)   min(msec)   avg(msec)   max(msec)  stddev(%%)\n");
	fprintf(f, "     --------------- -------- ------- ------------ ----------- ----------- ----------- ----------\n");
	for (i = 0; i < n; i++) {
		const struct sv_stat *s = &stats[ids[i]];

		fputs("     ", f);
		print_name(f, ids[i], 15);
		fprintf(f, " %8" PRIu64 " %7" PRIu64 " %12.3f %11.3f %11.3f %11.3f %9.2f%%\n",
			s->calls, s->errors, s->total / 1e6, s->min / 1e6,
			s->mean / 1e6, s->max / 1e6, sv_stddev_pct(s));
	}
	free(stats);
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
	unsigned int ids[SV_NR_MAX], j;
	size_t i, n;

	if (!all)
		return;
	for (i = sl.lo; i < sl.hi; i++) {
		const struct sv_thread *t = v->threads[i];

		for (j = 0; j < t->nr_stats; j++) {
			const struct sv_tstat *ts = &t->stats[j];

			all[ts->id].calls += ts->s.calls;
			all[ts->id].errors += ts->s.errors;
			all[ts->id].total += ts->s.total;
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
			size_t k;

			if (!t->calls)
				continue;
			m[i].threads++;
			m[i].calls += t->calls;
			m[i].total += t->total;
			for (k = 0; k < t->nr_stats; k++)
				m[i].errors += t->stats[k].s.errors;
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
			return tstat(v->threads[i], nr);
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
