// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of the hand-written TracePacket reader (user/lib/trace_file.c,
 * pbread.h) against protobuf-c, the decoder of record, summary and the
 * rest: on real traces recorded by pbtrace (tests/fixtures/traces, made
 * by record.sh there), every packet both read, and what the syscall view
 * takes from each (sequence, machine, the bundle's cpu and loss flag,
 * every sys_enter, sys_exit, generic and task-naming event with every
 * field, process trees, ftrace stats, system_info) printed by each reader
 * must be the same text. Then the same files with bytes broken on purpose
 * (a fixed seed: the same cases every run): neither may crash or read out
 * of bounds (ASan), and wherever both accept a packet they must agree.
 * Also: the field numbers the reader uses are protobuf-c's, and bytes
 * that break each wire rule are refused with where and what.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "trace_file.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures/traces"
#endif

static const char *const files[] = {
	"work.pftrace", "mcpu.pftrace", "ring.pftrace", "machines.pftrace",
};

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

static void put_str(FILE *o, const char *s, size_t len)
{
	size_t i;

	if (!s) {
		fputs(" -", o);
		return;
	}
	fputs(" \"", o);
	for (i = 0; i < len; i++)
		fprintf(o, (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"') ? "%c" : "\\x%02x",
			(unsigned char)s[i]);
	fputc('"', o);
}

static void put_cstr(FILE *o, const char *s)
{
	put_str(o, s, s ? strlen(s) : 0);
}

static void put_tstr(FILE *o, struct tf_str s)
{
	put_str(o, s.s, s.len);
}

/* ---- protobuf-c: what the view took before the hand-written reader ---- */

static void pbc_task(FILE *o, const Perfetto__Protos__FtraceEvent *e)
{
	int32_t pid = 0, tgid = 0;
	const char *comm = NULL;
	uint64_t flags = 0;

	switch (e->event_case) {
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH:
		pid = e->sched_switch->next_pid;
		comm = e->sched_switch->next_comm;
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK:
		pid = e->task_newtask->pid;
		comm = e->task_newtask->comm;
		flags = e->task_newtask->clone_flags;
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME:
		pid = e->task_rename->pid;
		comm = e->task_rename->newcomm;
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC:
		pid = e->sched_process_exec->pid;
		comm = e->sched_process_exec->filename;
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT:
		pid = e->sched_process_exit->pid;
		comm = e->sched_process_exit->comm;
		tgid = e->sched_process_exit->tgid;
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK:
		pid = e->sched_process_fork->child_pid;
		comm = e->sched_process_fork->child_comm;
		break;
	default:
		return;
	}
	fprintf(o, " task %d %d %llu", pid, tgid, (unsigned long long)flags);
	put_cstr(o, comm);
}

static void pbc_event(FILE *o, const Perfetto__Protos__FtraceEvent *e)
{
	size_t i;

	switch (e->event_case) {
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_ENTER:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_EXIT:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT:
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK:
		break;
	default:
		return;		/* not a kind the view reads */
	}
	fprintf(o, "E %llu %u %u", (unsigned long long)e->timestamp, e->pid,
		(unsigned int)e->event_case);
	switch (e->event_case) {
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_ENTER:
		fprintf(o, " enter %lld %zu", (long long)e->sys_enter->id,
			e->sys_enter->n_args);
		for (i = 0; i < e->sys_enter->n_args && i < TF_MAX_ARGS; i++)
			fprintf(o, " %llx", (unsigned long long)e->sys_enter->args[i]);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_EXIT:
		fprintf(o, " exit %lld %lld", (long long)e->sys_exit->id,
			(long long)e->sys_exit->ret);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC:
		fputs(" generic", o);
		put_cstr(o, e->generic->event_name);
		for (i = 0; i < e->generic->n_field; i++) {
			const Perfetto__Protos__GenericFtraceEvent__Field *f =
				e->generic->field[i];

			fputs(" [", o);
			put_cstr(o, f->name);
			fprintf(o, " %u", (unsigned int)f->value_case);
			if (f->value_case == PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_STR_VALUE)
				put_cstr(o, f->str_value);
			else if (f->value_case == PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_UINT_VALUE)
				fprintf(o, " %llu", (unsigned long long)f->uint_value);
			else if (f->value_case == PERFETTO__PROTOS__GENERIC_FTRACE_EVENT__FIELD__VALUE_INT_VALUE)
				fprintf(o, " %llu", (unsigned long long)f->int_value);
			fputc(']', o);
		}
		break;
	default:
		pbc_task(o, e);
		break;
	}
	fputc('\n', o);
}

static void pbc_packet(FILE *o, const Perfetto__Protos__TracePacket *p)
{
	size_t i;

	fprintf(o, "P data %u", (unsigned int)p->data_case);
	if (p->has_machine_id)
		fprintf(o, " machine %u", p->machine_id);
	if (p->optional_trusted_packet_sequence_id_case)
		fprintf(o, " seq %u", p->trusted_packet_sequence_id);
	fputc('\n', o);
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS: {
		const Perfetto__Protos__FtraceEventBundle *b = p->ftrace_events;

		for (i = 0; i < b->n_event; i++)
			pbc_event(o, b->event[i]);
		fprintf(o, "B cpu %d %u lost %d\n", b->has_cpu, b->cpu,
			b->has_lost_events && b->lost_events);
		break;
	}
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE: {
		const Perfetto__Protos__ProcessTree *t = p->process_tree;

		for (i = 0; i < t->n_processes; i++) {
			fprintf(o, "T process %d %d", t->processes[i]->pid,
				t->processes[i]->pid);
			put_cstr(o, t->processes[i]->n_cmdline ?
				 t->processes[i]->cmdline[0] : NULL);
			fputc('\n', o);
		}
		for (i = 0; i < t->n_threads; i++) {
			fprintf(o, "T thread %d %d", t->threads[i]->tid,
				t->threads[i]->tgid);
			put_cstr(o, t->threads[i]->name);
			fputc('\n', o);
		}
		break;
	}
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS: {
		const Perfetto__Protos__FtraceStats *st = p->ftrace_stats;
		uint64_t lost = 0;

		for (i = 0; i < st->n_cpu_stats; i++)
			lost += st->cpu_stats[i]->overrun + st->cpu_stats[i]->dropped_events;
		fprintf(o, "S %d %d %llu\n", st->has_phase, (int)st->phase,
			(unsigned long long)lost);
		break;
	}
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO: {
		const Perfetto__Protos__SystemInfo *si = p->system_info;

		fputs("I", o);
		put_cstr(o, si->machine_name);
		fprintf(o, " %d", si->utsname != NULL);
		put_cstr(o, si->utsname ? si->utsname->release : NULL);
		put_cstr(o, si->utsname ? si->utsname->machine : NULL);
		fputc('\n', o);
		break;
	}
	default:
		break;
	}
}

/* ---- the hand-written reader: the same text ---- */

static bool tf_event_out(FILE *o, const struct tf_event *e, struct tf_error *err)
{
	struct tf_gfield gf;
	struct pbr r;
	size_t i;
	int ret;

	fprintf(o, "E %llu %u %u", (unsigned long long)e->timestamp, e->pid,
		e->kind);
	switch (e->kind) {
	case TF_EV_SYS_ENTER:
		fprintf(o, " enter %lld %zu", (long long)e->sys_enter.id,
			e->sys_enter.nr_args);
		for (i = 0; i < e->sys_enter.nr_args && i < TF_MAX_ARGS; i++)
			fprintf(o, " %llx", (unsigned long long)e->sys_enter.args[i]);
		break;
	case TF_EV_SYS_EXIT:
		fprintf(o, " exit %lld %lld", (long long)e->sys_exit.id,
			(long long)e->sys_exit.ret);
		break;
	case TF_EV_GENERIC:
		fputs(" generic", o);
		put_tstr(o, e->generic.event_name);
		r = pbr_init(e->generic.msg, e->generic.msg_end);
		while ((ret = tf_generic_field(&r, &gf, err)) > 0) {
			fputs(" [", o);
			put_tstr(o, gf.name);
			fprintf(o, " %u", gf.value);
			if (gf.value == TF_GF_STR)
				put_tstr(o, gf.str);
			else if (gf.value)
				fprintf(o, " %llu", (unsigned long long)gf.u);
			fputc(']', o);
		}
		if (ret < 0)
			return false;	/* tf_bundle_next said they were fine */
		break;
	default:
		fprintf(o, " task %d %d %llu", e->task.pid, e->task.tgid,
			(unsigned long long)e->task.clone_flags);
		put_tstr(o, e->task.comm);
		break;
	}
	fputc('\n', o);
	return true;
}

static bool tf_out(FILE *o, const uint8_t *body, size_t len, struct tf_error *err)
{
	struct tf_packet pk;
	struct tf_bundle b;
	struct tf_event e;
	struct tf_tree t;
	struct tf_proc p;
	struct tf_ftrace_stats st;
	struct tf_system_info si;
	int ret;

	if (!tf_packet(body, body + len, &pk, err))
		return false;
	fprintf(o, "P data %u", pk.data);
	if (pk.has_machine_id)
		fprintf(o, " machine %u", pk.machine_id);
	if (pk.has_seq)
		fprintf(o, " seq %u", pk.seq);
	fputc('\n', o);
	switch (pk.data) {
	case TF_FTRACE_EVENTS:
		tf_bundle_begin(&b, &pk);
		while ((ret = tf_bundle_next(&b, &e, err)) > 0)
			if (!tf_event_out(o, &e, err))
				return false;
		if (ret < 0)
			return false;
		fprintf(o, "B cpu %d %u lost %d\n", b.has_cpu, b.cpu, b.lost_events);
		break;
	case TF_PROCESS_TREE:
		tf_tree_begin(&t, &pk);
		while ((ret = tf_tree_next(&t, &p, err)) > 0) {
			fprintf(o, "T %s %d %d", p.is_thread ? "thread" : "process",
				p.tid, p.tgid);
			put_tstr(o, p.name);
			fputc('\n', o);
		}
		if (ret < 0)
			return false;
		break;
	case TF_FTRACE_STATS:
		if (!tf_ftrace_stats(&pk, &st, err))
			return false;
		fprintf(o, "S %d %d %llu\n", st.has_phase, st.phase,
			(unsigned long long)st.lost);
		break;
	case TF_SYSTEM_INFO:
		if (!tf_system_info(&pk, &si, err))
			return false;
		fputs("I", o);
		put_tstr(o, si.machine_name);
		fprintf(o, " %d", si.has_utsname);
		put_tstr(o, si.release);
		put_tstr(o, si.machine);
		fputc('\n', o);
		break;
	default:
		break;
	}
	return true;
}

/* ---- one packet by both ---- */

struct both {
	char *pbc, *tf;
	bool pbc_ok, tf_ok;
	struct tf_error err;
};

static void read_both(const uint8_t *body, size_t len, struct both *r)
{
	Perfetto__Protos__TracePacket *p;
	size_t n;
	FILE *o;

	o = open_memstream(&r->pbc, &n);
	p = perfetto__protos__trace_packet__unpack(NULL, len, body);
	r->pbc_ok = p != NULL;
	if (p) {
		pbc_packet(o, p);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	fclose(o);
	o = open_memstream(&r->tf, &n);
	r->tf_ok = tf_out(o, body, len, &r->err);
	fclose(o);
}

struct tally {
	size_t packets, events, both_ok, agree, pbc_only, tf_only, neither;
	char first[512];
};

static void tally(const uint8_t *data, const uint8_t *body, size_t n,
		  struct tally *t)
{
	struct both r;

	{
		read_both(body, n, &r);
		t->packets++;
		if (r.pbc_ok && r.tf_ok) {
			const char *s;

			t->both_ok++;
			for (s = r.tf; (s = strstr(s, "\nE ")); s++)
				t->events++;
			if (!strcmp(r.pbc, r.tf))
				t->agree++;
			else if (!t->first[0])
				snprintf(t->first, sizeof(t->first),
					 "packet at %zu:\n# pbc: %.200s\n# tf:  %.200s",
					 (size_t)(body - data), r.pbc, r.tf);
		} else if (r.pbc_ok) {
			t->pbc_only++;
			if (!t->first[0])
				snprintf(t->first, sizeof(t->first),
					 "packet at %zu: protobuf-c reads it, the reader refuses: %s at its byte %ld",
					 (size_t)(body - data), r.err.what,
					 (long)(r.err.at - body));
		} else if (r.tf_ok) {
			t->tf_only++;
		} else {
			t->neither++;
		}
		free(r.pbc);
		free(r.tf);
	}
}

static void walk(const uint8_t *data, size_t len, struct tally *t)
{
	const uint8_t *p = data, *end = data + len, *body;
	size_t n;

	while (trace_next_record(&p, end, &body, &n) > 0)
		tally(data, body, n, t);
}

static void walk_one(const uint8_t *body, size_t n, struct tally *t)
{
	tally(body, body, n, t);
}

static void test_real(const char *name)
{
	char path[512];
	struct tally t = { 0 };
	uint8_t *data;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	data = slurp(path, &len);
	if (!data) {
		tap(false, "%s: readable", path);
		return;
	}
	walk(data, len, &t);
	tap(t.packets > 0 && t.both_ok == t.packets && t.agree == t.packets,
	    "%s: all %zu packets read by both, the same %zu events and fields (%zu differ, %zu refused)",
	    name, t.packets, t.events, t.both_ok - t.agree,
	    t.packets - t.both_ok);
	if (t.first[0])
		printf("# %s\n", t.first);
	free(data);
}

/* xorshift: the same broken bytes every run */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * Broken packets: one record's TracePacket at a time, bytes overwritten,
 * flipped, dropped (its lengths then overrun) or the packet cut short,
 * 1 to 8 edits; both readers read it.
 */
static void test_broken(const char *name, int cases)
{
	const uint8_t *p, *end, *body;
	const uint8_t *rec[4096];
	size_t rec_len[4096], nr = 0, len = 0, n, i, at, k;
	struct tally all = { 0 };
	char path[512];
	uint8_t *data, *copy = NULL;
	int c;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	data = slurp(path, &len);
	if (!data) {
		tap(false, "%s: readable", path);
		return;
	}
	p = data;
	end = data + len;
	while (nr < 4096 && trace_next_record(&p, end, &body, &n) > 0) {
		rec[nr] = body;
		rec_len[nr++] = n;
	}
	for (c = 0; c < cases && nr; c++) {
		k = rnd() % nr;
		n = rec_len[k];
		free(copy);
		copy = malloc(n + 1);
		if (!copy)
			break;
		memcpy(copy, rec[k], n);
		for (i = 0; n && i < 1 + rnd() % 8; i++) {
			at = rnd() % n;
			switch (rnd() % 5) {
			case 0:
			case 1:
				copy[at] = (uint8_t)rnd();
				break;
			case 2:
				copy[at] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 3:
				memmove(copy + at, copy + at + 1, n - at - 1);
				n--;
				break;
			default:
				n = at;
				break;
			}
		}
		walk_one(copy, n, &all);
	}
	tap(nr && all.both_ok == all.agree && !all.pbc_only,
	    "%s, %d broken packets: where both read one they agree (%zu), never only protobuf-c reads one (%zu); only the reader %zu, neither %zu",
	    name, cases, all.agree, all.pbc_only, all.tf_only, all.neither);
	if (all.first[0])
		printf("# %s\n", all.first);
	free(data);
	free(copy);
}

/* The reader's field numbers (trace_file.c) are the schema's. */
static void test_numbers(void)
{
	static const struct {
		const ProtobufCMessageDescriptor *d;
		const char *field;
		unsigned int num;
	} f[] = {
		{ &perfetto__protos__trace_packet__descriptor, "timestamp", 8 },
		{ &perfetto__protos__trace_packet__descriptor, "trusted_packet_sequence_id", 10 },
		{ &perfetto__protos__trace_packet__descriptor, "machine_id", 98 },
		{ &perfetto__protos__trace_packet__descriptor, "ftrace_events", TF_FTRACE_EVENTS },
		{ &perfetto__protos__ftrace_event_bundle__descriptor, "cpu", 1 },
		{ &perfetto__protos__ftrace_event_bundle__descriptor, "event", 2 },
		{ &perfetto__protos__ftrace_event_bundle__descriptor, "lost_events", 3 },
		{ &perfetto__protos__ftrace_event__descriptor, "timestamp", 1 },
		{ &perfetto__protos__ftrace_event__descriptor, "pid", 2 },
		{ &perfetto__protos__ftrace_event__descriptor, "common_flags", 5 },
		{ &perfetto__protos__sys_enter_ftrace_event__descriptor, "id", 1 },
		{ &perfetto__protos__sys_enter_ftrace_event__descriptor, "args", 2 },
		{ &perfetto__protos__sys_exit_ftrace_event__descriptor, "id", 1 },
		{ &perfetto__protos__sys_exit_ftrace_event__descriptor, "ret", 2 },
		{ &perfetto__protos__generic_ftrace_event__descriptor, "event_name", 1 },
		{ &perfetto__protos__generic_ftrace_event__descriptor, "field", 2 },
		{ &perfetto__protos__generic_ftrace_event__field__descriptor, "name", 1 },
		{ &perfetto__protos__generic_ftrace_event__field__descriptor, "str_value", TF_GF_STR },
		{ &perfetto__protos__generic_ftrace_event__field__descriptor, "int_value", TF_GF_INT },
		{ &perfetto__protos__generic_ftrace_event__field__descriptor, "uint_value", TF_GF_UINT },
		{ &perfetto__protos__sched_switch_ftrace_event__descriptor, "next_comm", 5 },
		{ &perfetto__protos__sched_switch_ftrace_event__descriptor, "next_pid", 6 },
		{ &perfetto__protos__task_newtask_ftrace_event__descriptor, "pid", 1 },
		{ &perfetto__protos__task_newtask_ftrace_event__descriptor, "comm", 2 },
		{ &perfetto__protos__task_newtask_ftrace_event__descriptor, "clone_flags", 3 },
		{ &perfetto__protos__task_rename_ftrace_event__descriptor, "pid", 1 },
		{ &perfetto__protos__task_rename_ftrace_event__descriptor, "newcomm", 3 },
		{ &perfetto__protos__sched_process_exec_ftrace_event__descriptor, "filename", 1 },
		{ &perfetto__protos__sched_process_exec_ftrace_event__descriptor, "pid", 2 },
		{ &perfetto__protos__sched_process_exit_ftrace_event__descriptor, "comm", 1 },
		{ &perfetto__protos__sched_process_exit_ftrace_event__descriptor, "pid", 2 },
		{ &perfetto__protos__sched_process_exit_ftrace_event__descriptor, "tgid", 3 },
		{ &perfetto__protos__sched_process_fork_ftrace_event__descriptor, "child_comm", 3 },
		{ &perfetto__protos__sched_process_fork_ftrace_event__descriptor, "child_pid", 4 },
		{ &perfetto__protos__process_tree__descriptor, "processes", 1 },
		{ &perfetto__protos__process_tree__descriptor, "threads", 2 },
		{ &perfetto__protos__process_tree__process__descriptor, "pid", 1 },
		{ &perfetto__protos__process_tree__process__descriptor, "cmdline", 3 },
		{ &perfetto__protos__process_tree__thread__descriptor, "tid", 1 },
		{ &perfetto__protos__process_tree__thread__descriptor, "name", 2 },
		{ &perfetto__protos__process_tree__thread__descriptor, "tgid", 3 },
		{ &perfetto__protos__ftrace_stats__descriptor, "phase", 1 },
		{ &perfetto__protos__ftrace_stats__descriptor, "cpu_stats", 2 },
		{ &perfetto__protos__ftrace_cpu_stats__descriptor, "overrun", 3 },
		{ &perfetto__protos__ftrace_cpu_stats__descriptor, "dropped_events", 8 },
		{ &perfetto__protos__system_info__descriptor, "utsname", 1 },
		{ &perfetto__protos__system_info__descriptor, "machine_name", 17 },
		{ &perfetto__protos__utsname__descriptor, "release", 3 },
		{ &perfetto__protos__utsname__descriptor, "machine", 4 },
	};
	size_t i, bad = 0;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		const ProtobufCFieldDescriptor *fd =
			protobuf_c_message_descriptor_get_field_by_name(f[i].d, f[i].field);

		if (!fd || fd->id != f[i].num) {
			printf("# %s.%s is %u in the schema, %u in the reader\n",
			       f[i].d->name, f[i].field, fd ? fd->id : 0, f[i].num);
			bad++;
		}
	}
	tap(!bad, "the reader's %zu field numbers are the schema's", i);
}

/* Each wire rule broken: refused, where and what said. */
static void test_rules(void)
{
	static const struct {
		const char *name;
		uint8_t b[16];
		size_t len;
		long at;
	} c[] = {
		/* FtraceEventBundle { event { timestamp: <broken> } } */
		{ "varint of 11 bytes", { 0x0a, 0x0e, 0x12, 0x0c, 0x08, 0xff, 0xff, 0xff,
		  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 16, 4 },
		{ "length past the end", { 0x0a, 0x04, 0x12, 0x05, 0x08, 0x01 }, 6, 2 },
		{ "wire type 3 (group)", { 0x0a, 0x03, 0x12, 0x01, 0x0b }, 5, 4 },
		{ "field 0", { 0x0a, 0x03, 0x12, 0x01, 0x00 }, 5, 4 },
		{ "timestamp as a length", { 0x0a, 0x04, 0x12, 0x02, 0x0a, 0x00 }, 6, 4 },
		{ "tag of 6 bytes", { 0x0a, 0x08, 0x12, 0x06, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10, 4 },
	};
	struct tf_packet pk;
	struct tf_bundle b;
	struct tf_event e;
	struct tf_error err;
	Perfetto__Protos__TracePacket *p;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		bool ok = tf_packet(c[i].b, c[i].b + c[i].len, &pk, &err);
		int ret = -1;

		if (ok) {
			tf_bundle_begin(&b, &pk);
			ret = tf_bundle_next(&b, &e, &err);
		}
		p = perfetto__protos__trace_packet__unpack(NULL, c[i].len, c[i].b);
		tap(ret < 0 && err.what && err.at - c[i].b == c[i].at && !p,
		    "%s: refused at byte %ld (%s), as protobuf-c refuses it",
		    c[i].name, (long)(err.at - c[i].b), err.what ? err.what : "?");
		if (p)
			perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
}

int main(void)
{
	size_t i;

	test_numbers();
	test_rules();
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		test_real(files[i]);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		test_broken(files[i], 2000);
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
