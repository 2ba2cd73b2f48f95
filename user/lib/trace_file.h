/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a .pftrace: a run of Trace.packet records (field 1,
 * length-delimited). Two readers of a record's TracePacket:
 *  - trace_next_packet(): protobuf-c unpacks it whole (summary, symbolize:
 *    every field, few packets);
 *  - tf_*(): a hand-written reader of the few messages the syscall view
 *    reads, in place over the file's bytes (pbread.h): no allocation, no
 *    copy, fields it does not read are stepped over unread. For any input
 *    both accept, it gives exactly what protobuf-c gives (last value of a
 *    repeated singular field, the last member of a oneof, a string up to
 *    its first NUL); user/tests/trace_read_test.c compares the two on real
 *    traces and tools/fuzz/trace_read_fuzz.c on anything.
 * Every tf_ function bounds-checks each byte it reads; on bytes that break
 * the wire format it returns false (-1) with err->at the byte where the
 * broken field starts and err->what naming it.
 * A record's top-level fields, read without unpacking, serve tracectl
 * merge (trace_packet_fields(), trace_packet_strip_machine()).
 */
#ifndef PBT_TRACE_FILE_H
#define PBT_TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pbread.h"
#include "trace.pb-c.h"

/*
 * The record at *p: its TracePacket's bytes [*body, *body + *len) and *p
 * moved past it: 1. A record cut short by @end (a file still being
 * written): 0, *p unmoved. Bytes that are no Trace.packet record: -1.
 */
int trace_next_record(const uint8_t **p, const uint8_t *end,
		      const uint8_t **body, size_t *len);

/*
 * As trace_next_record(), the TracePacket unpacked by protobuf-c into *pkt
 * (free it with perfetto__protos__trace_packet__free_unpacked); -1 also
 * when protobuf-c cannot unpack it.
 */
int trace_next_packet(const uint8_t **p, const uint8_t *end,
		      Perfetto__Protos__TracePacket **pkt);

struct tf_error {
	const uint8_t *at;		/* where the bad field starts */
	const char *what;		/* "FtraceEvent.sys_enter: args", ... */
};

/* A string field as protobuf-c's C string reads it: up to its first NUL.
 * Absent: s NULL, len 0. Not NUL-terminated. */
struct tf_str {
	const char *s;
	size_t len;
};

/* TracePacket's data members the view reads (their field numbers). */
enum {
	TF_FTRACE_EVENTS = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS,
	TF_PROCESS_TREE = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE,
	TF_FTRACE_STATS = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS,
	TF_SYSTEM_INFO = PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO,
};

struct tf_packet {
	uint32_t data;			/* the data member's number; 0: none */
	const uint8_t *msg, *msg_end;	/* its message's bytes */
	bool has_machine_id, has_seq;
	uint32_t machine_id;
	uint32_t seq;			/* trusted_packet_sequence_id */
};

/* A TracePacket's header fields and which data it holds. */
bool tf_packet(const uint8_t *p, const uint8_t *end, struct tf_packet *pk,
	       struct tf_error *err);

/* FtraceEvent's members the view reads (their field numbers). */
enum {
	TF_EV_SCHED_SWITCH = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH,
	TF_EV_NEWTASK = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK,
	TF_EV_RENAME = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME,
	TF_EV_EXEC = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC,
	TF_EV_EXIT = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT,
	TF_EV_FORK = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK,
	TF_EV_GENERIC = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC,
	TF_EV_SYS_ENTER = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_ENTER,
	TF_EV_SYS_EXIT = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SYS_EXIT,
};

#define TF_MAX_ARGS 6			/* sys_enter args kept; more are counted */

/* One FtraceEvent of a kind above, its fields as protobuf-c gives them. */
struct tf_event {
	uint64_t timestamp;
	uint32_t pid;
	uint32_t kind;			/* TF_EV_* */
	union {
		struct {
			int64_t id;
			size_t nr_args;		/* in the file */
			uint64_t args[TF_MAX_ARGS];	/* the first ones */
		} sys_enter;
		struct {
			int64_t id, ret;
		} sys_exit;
		struct {
			struct tf_str event_name;
			const uint8_t *msg, *msg_end;	/* tf_generic_field() */
		} generic;
		/*
		 * The task the event names: fork's child_pid/child_comm,
		 * newtask's pid/comm/clone_flags, exec's pid/filename, rename's
		 * pid/newcomm, exit's pid/comm/tgid, switch's next_pid/next_comm.
		 */
		struct {
			int32_t pid, tgid;
			struct tf_str comm;
			uint64_t clone_flags;
		} task;
	};
};

struct tf_bundle {
	struct pbr r;
	bool has_cpu, lost_events;	/* final once tf_bundle_next() is 0 */
	uint32_t cpu;
	/* set after tf_bundle_begin(): events of these kinds are stepped
	 * over, their messages unread (and unchecked) */
	bool skip_calls;		/* sys_enter, sys_exit, generic */
	bool skip_tasks;		/* the task-naming kinds */
};

/* Iterating a TF_FTRACE_EVENTS packet's events. */
void tf_bundle_begin(struct tf_bundle *b, const struct tf_packet *pk);

/* The next event of a kind the view reads: 1; the end: 0; bad bytes: -1.
 * A generic event's fields are checked here, so tf_generic_field() on
 * them cannot fail. */
int tf_bundle_next(struct tf_bundle *b, struct tf_event *e,
		   struct tf_error *err);

/* The bundle's cpu alone (its events stepped over, not read). */
bool tf_bundle_cpu(const struct tf_packet *pk, bool *has_cpu, uint32_t *cpu,
		   struct tf_error *err);

/* GenericFtraceEvent.Field: name and its value member (0: none, or one
 * of the TF_GF_* numbers). */
enum { TF_GF_STR = 3, TF_GF_INT = 4, TF_GF_UINT = 5 };
struct tf_gfield {
	struct tf_str name;
	uint32_t value;
	struct tf_str str;
	uint64_t u;			/* TF_GF_INT or TF_GF_UINT */
};

/* Walk a generic event's fields from r = pbr_init(msg, msg_end): 1, 0 at
 * the end, -1 on bad bytes. */
int tf_generic_field(struct pbr *r, struct tf_gfield *f, struct tf_error *err);

/* ProcessTree: every process (pid, cmdline[0], tgid = pid), then every
 * thread (tid, name, tgid), as protobuf-c's two arrays hold them. */
struct tf_proc {
	bool is_thread;
	int32_t tid, tgid;
	struct tf_str name;
};
struct tf_tree {
	struct pbr r;
	const uint8_t *msg;
	int pass;			/* 0: processes, 1: threads */
};
void tf_tree_begin(struct tf_tree *t, const struct tf_packet *pk);
int tf_tree_next(struct tf_tree *t, struct tf_proc *p, struct tf_error *err);

/* FtraceStats: its phase and what every CPU lost (overrun + dropped). */
struct tf_ftrace_stats {
	bool has_phase;
	int32_t phase;
	uint64_t lost;
};
bool tf_ftrace_stats(const struct tf_packet *pk, struct tf_ftrace_stats *st,
		     struct tf_error *err);

/* SystemInfo: the machine's names. */
struct tf_system_info {
	struct tf_str machine_name;
	bool has_utsname;
	struct tf_str release, machine;	/* utsname's */
};
bool tf_system_info(const struct tf_packet *pk, struct tf_system_info *si,
		    struct tf_error *err);

/* What a TracePacket holds at its top level, read without unpacking it. */
struct trace_fields {
	uint32_t machine_id;	/* 0: the recording machine */
	uint64_t has[2];	/* bit N: field N (< 128) is present */
};

/* 0, or -1 if the bytes are no protobuf message. */
int trace_packet_fields(const uint8_t *pkt, size_t len,
			struct trace_fields *f);
bool trace_fields_has(const struct trace_fields *f, uint32_t nr);

/*
 * The packet without its machine_id, every other field byte for byte, in
 * @out (room for @len bytes; may be @pkt itself; NULL: only measure): its
 * length, or (size_t)-1 if the bytes are no protobuf message.
 */
size_t trace_packet_strip_machine(const uint8_t *pkt, size_t len,
				  uint8_t *out);

/* The tag and length that make @len packet bytes a record: at most 11. */
#define TRACE_RECORD_HEADER_MAX 11
size_t trace_record_header(uint8_t *out, size_t len);

#endif
