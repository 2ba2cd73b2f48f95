/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the syscall view takes from one TracePacket, as text, read once by
 * protobuf-c (the unpacker the view used before) and once by the
 * hand-written reader (trace_file.h): sequence and machine, the bundle's
 * cpu and loss flag, each sys_enter, sys_exit, generic and task-naming
 * event with all its fields, process trees, ftrace stats, system_info.
 * The same bytes must give the same text. Shared by trace_read_test.c and
 * tools/fuzz/trace_read_fuzz.c.
 */
#ifndef PBT_TRACE_DUMP_H
#define PBT_TRACE_DUMP_H

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_file.h"

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

#endif
