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
#include "trace_dump.h"

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
