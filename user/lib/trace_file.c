// SPDX-License-Identifier: GPL-2.0
/*
 * A trace is a run of Trace.packet records (field 1, length-delimited),
 * read one by one so that a big file never sits unpacked whole: by
 * protobuf-c (trace_next_packet) or, for the syscall view's few messages,
 * by hand in place (tf_*, trace_file.h says what they promise).
 *
 * The hand-written reader follows protobuf-c's rules where protobuf-c
 * would read the same bytes: a scalar it reads must have its wire type (a
 * bool any), a singular field's last value wins, a oneof's last member
 * wins whole (protobuf-c frees the earlier one), an optional message met
 * twice is merged (each later field wins). Fields it does not read are
 * only stepped over, so it refuses less than protobuf-c does: bytes
 * protobuf-c would refuse in a message the view never looks at (an event
 * of another kind, a config) do not cost the view the packet.
 *
 * Who needs a packet's bytes rather than its fields (tracectl merge copies
 * records) walks records and their top-level fields without unpacking
 * (trace_packet_fields(), trace_packet_strip_machine()).
 */
#include <string.h>

#include "trace_file.h"

/* Field numbers of the messages read here (proto/trace.proto);
 * trace_read_test.c checks each against protobuf-c's descriptors. */
enum {
	TP_TIMESTAMP = 8, TP_SEQ = 10, TP_MACHINE_ID = 98,
	BUNDLE_CPU = 1, BUNDLE_EVENT = 2, BUNDLE_LOST_EVENTS = 3,
	FE_TIMESTAMP = 1, FE_PID = 2, FE_COMMON_FLAGS = 5,
	ENTER_ID = 1, ENTER_ARGS = 2,
	EXIT_ID = 1, EXIT_RET = 2,
	GEN_EVENT_NAME = 1, GEN_FIELD = 2, GF_NAME = 1,
	SWITCH_NEXT_COMM = 5, SWITCH_NEXT_PID = 6,
	NEWTASK_PID = 1, NEWTASK_COMM = 2, NEWTASK_CLONE_FLAGS = 3,
	RENAME_PID = 1, RENAME_NEWCOMM = 3,
	EXEC_FILENAME = 1, EXEC_PID = 2,
	EXIT_COMM = 1, EXIT_PID = 2, EXIT_TGID = 3,
	FORK_CHILD_COMM = 3, FORK_CHILD_PID = 4,
	TREE_PROCESSES = 1, TREE_THREADS = 2,
	PROC_PID = 1, PROC_CMDLINE = 3,
	THREAD_TID = 1, THREAD_NAME = 2, THREAD_TGID = 3,
	FSTATS_PHASE = 1, FSTATS_CPU_STATS = 2,
	CPUSTATS_OVERRUN = 3, CPUSTATS_DROPPED = 8,
	SI_UTSNAME = 1, SI_MACHINE_NAME = 17,
	UTS_RELEASE = 3, UTS_MACHINE = 4,
};

int trace_next_record(const uint8_t **p, const uint8_t *end,
		      const uint8_t **body, size_t *len)
{
	const uint8_t *q = *p;
	uint64_t tag, n;

	/* A varint that stops short of end is still being written; ten
	 * bytes with the continuation bit set are no varint. */
	if (!pbr_varint_at(&q, end, &tag))
		return end - q >= 10 ? -1 : 0;
	if (tag != 0x0a)
		return -1;
	if (!pbr_varint_at(&q, end, &n))
		return end - q >= 10 ? -1 : 0;
	if (n > (uint64_t)(end - q))
		return 0;
	*body = q;
	*len = (size_t)n;
	*p = q + n;
	return 1;
}

int trace_next_packet(const uint8_t **p, const uint8_t *end,
		      Perfetto__Protos__TracePacket **pkt)
{
	const uint8_t *q = *p, *body;
	size_t n;
	int ret;

	ret = trace_next_record(&q, end, &body, &n);
	if (ret <= 0)
		return ret;
	*pkt = perfetto__protos__trace_packet__unpack(NULL, n, body);
	if (!*pkt)
		return -1;
	*p = q;
	return 1;
}

static bool fail(struct tf_error *err, const uint8_t *at, const char *what)
{
	err->at = at;
	err->what = what;
	return false;
}

/* The next field, or false with err set: the bytes break the format. */
static inline __attribute__((always_inline))
bool next(struct pbr *r, struct pbr_field *f, struct tf_error *err,
		 const char *msg)
{
	if (pbr_field(r, f))
		return true;
	return fail(err, r->p, msg);
}

/* A scalar the reader uses must have its type's wire type (protobuf-c
 * refuses the message otherwise). */
static bool want(const struct pbr_field *f, uint8_t wire,
		 struct tf_error *err, const char *what)
{
	return f->wire == wire || fail(err, f->at, what);
}

static struct tf_str str_of(const struct pbr_field *f)
{
	struct tf_str s = {
		(const char *)f->body, pbr_strlen(f->body, f->body_end)
	};

	return s;
}

/* Whether @num is in the same oneof as @member of @desc (protobuf-c's
 * descriptor is the schema; a number it does not know is an unknown
 * field, which replaces nothing). */
static bool is_member(const ProtobufCMessageDescriptor *desc, uint32_t num,
		      uint32_t member)
{
	const ProtobufCFieldDescriptor *fd, *ref;

	fd = protobuf_c_message_descriptor_get_field(desc, num);
	ref = protobuf_c_message_descriptor_get_field(desc, member);
	return fd && ref && (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
	       fd->quantifier_offset == ref->quantifier_offset;
}

bool tf_packet(const uint8_t *p, const uint8_t *end, struct tf_packet *pk,
	       struct tf_error *err)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;

	memset(pk, 0, sizeof(*pk));
	while (pbr_more(&r)) {
		if (!next(&r, &f, err, "TracePacket: a field"))
			return false;
		switch (f.num) {
		case TP_SEQ:
			if (!want(&f, PBR_VARINT, err, "TracePacket.trusted_packet_sequence_id"))
				return false;
			pk->seq = (uint32_t)f.v;
			pk->has_seq = true;
			break;
		case TP_MACHINE_ID:
			if (!want(&f, PBR_VARINT, err, "TracePacket.machine_id"))
				return false;
			pk->machine_id = (uint32_t)f.v;
			pk->has_machine_id = true;
			break;
		case TP_TIMESTAMP:
			break;
		case TF_FTRACE_EVENTS:
		case TF_PROCESS_TREE:
		case TF_FTRACE_STATS:
		case TF_SYSTEM_INFO:
			if (!want(&f, PBR_LEN, err, "TracePacket: a data message"))
				return false;
			pk->data = f.num;
			pk->msg = f.body;
			pk->msg_end = f.body_end;
			break;
		default:
			/* another data member replaces ours, as in protobuf-c */
			if (is_member(&perfetto__protos__trace_packet__descriptor,
				      f.num, TF_FTRACE_EVENTS)) {
				pk->data = f.num;
				pk->msg = f.body;
				pk->msg_end = f.body_end;
			}
			break;
		}
	}
	return true;
}

void tf_bundle_begin(struct tf_bundle *b, const struct tf_packet *pk)
{
	b->r = pbr_init(pk->msg, pk->msg_end);
	b->has_cpu = b->lost_events = false;
	b->cpu = 0;
	b->skip_calls = b->skip_tasks = false;
}

bool tf_bundle_cpu(const struct tf_packet *pk, bool *has_cpu, uint32_t *cpu,
		   struct tf_error *err)
{
	struct pbr r = pbr_init(pk->msg, pk->msg_end);
	struct pbr_field f;

	*has_cpu = false;
	*cpu = 0;
	while (pbr_more(&r)) {
		if (!next(&r, &f, err, "FtraceEventBundle: a field"))
			return false;
		if (f.num != BUNDLE_CPU)
			continue;
		if (!want(&f, PBR_VARINT, err, "FtraceEventBundle.cpu"))
			return false;
		*cpu = (uint32_t)f.v;
		*has_cpu = true;
	}
	return true;
}

/* sys_enter: id, and args packed or not (both are protobuf). */
static bool read_sys_enter(struct pbr *r, struct tf_event *e,
			   struct tf_error *err)
{
	struct pbr_field f;
	uint64_t v;

	while (pbr_more(r)) {
		if (!next(r, &f, err, "SysEnterFtraceEvent: a field"))
			return false;
		if (f.num == ENTER_ID) {
			if (!want(&f, PBR_VARINT, err, "SysEnterFtraceEvent.id"))
				return false;
			e->sys_enter.id = (int64_t)f.v;
		} else if (f.num == ENTER_ARGS && f.wire == PBR_LEN) {
			const uint8_t *q = f.body;

			while (q < f.body_end) {
				if (!pbr_varint_at(&q, f.body_end, &v))
					return fail(err, q, "SysEnterFtraceEvent.args: a packed value");
				if (e->sys_enter.nr_args < TF_MAX_ARGS)
					e->sys_enter.args[e->sys_enter.nr_args] = v;
				e->sys_enter.nr_args++;
			}
		} else if (f.num == ENTER_ARGS) {
			if (!want(&f, PBR_VARINT, err, "SysEnterFtraceEvent.args"))
				return false;
			if (e->sys_enter.nr_args < TF_MAX_ARGS)
				e->sys_enter.args[e->sys_enter.nr_args] = f.v;
			e->sys_enter.nr_args++;
		}
	}
	return true;
}

static bool read_sys_exit(struct pbr *r, struct tf_event *e,
			  struct tf_error *err)
{
	struct pbr_field f;

	while (pbr_more(r)) {
		if (!next(r, &f, err, "SysExitFtraceEvent: a field"))
			return false;
		if (f.num != EXIT_ID && f.num != EXIT_RET)
			continue;
		if (!want(&f, PBR_VARINT, err, "SysExitFtraceEvent: id or ret"))
			return false;
		if (f.num == EXIT_ID)
			e->sys_exit.id = (int64_t)f.v;
		else
			e->sys_exit.ret = (int64_t)f.v;
	}
	return true;
}

int tf_generic_field(struct pbr *r, struct tf_gfield *gf, struct tf_error *err)
{
	struct pbr_field f, v;
	struct pbr in;

	/* the next GenericFtraceEvent.field, stepping over the rest */
	do {
		if (!pbr_more(r))
			return 0;
		if (!next(r, &f, err, "GenericFtraceEvent: a field"))
			return -1;
	} while (f.num != GEN_FIELD);
	if (!want(&f, PBR_LEN, err, "GenericFtraceEvent.field"))
		return -1;
	memset(gf, 0, sizeof(*gf));
	in = pbr_init(f.body, f.body_end);
	while (pbr_more(&in)) {
		if (!next(&in, &v, err, "GenericFtraceEvent.Field: a field"))
			return -1;
		switch (v.num) {
		case GF_NAME:
			if (!want(&v, PBR_LEN, err, "GenericFtraceEvent.Field.name"))
				return -1;
			gf->name = str_of(&v);
			break;
		case TF_GF_STR:
			if (!want(&v, PBR_LEN, err, "GenericFtraceEvent.Field.str_value"))
				return -1;
			gf->value = v.num;
			gf->str = str_of(&v);
			break;
		case TF_GF_INT:
		case TF_GF_UINT:
			if (!want(&v, PBR_VARINT, err, "GenericFtraceEvent.Field: int_value or uint_value"))
				return -1;
			gf->value = v.num;
			gf->u = v.v;
			gf->str.s = NULL;	/* the string member is gone */
			gf->str.len = 0;
			break;
		default:
			break;
		}
	}
	return 1;
}

static bool read_generic(struct pbr *r, struct tf_event *e,
			 struct tf_error *err)
{
	struct pbr walk = *r;
	struct pbr_field f;
	struct tf_gfield gf;
	int ret;

	e->generic.msg = r->p;
	e->generic.msg_end = r->end;
	while (pbr_more(r)) {
		if (!next(r, &f, err, "GenericFtraceEvent: a field"))
			return false;
		if (f.num == GEN_EVENT_NAME) {
			if (!want(&f, PBR_LEN, err, "GenericFtraceEvent.event_name"))
				return false;
			e->generic.event_name = str_of(&f);
		}
	}
	/* the fields are checked now: whoever walks them later cannot fail */
	while ((ret = tf_generic_field(&walk, &gf, err)) > 0)
		;
	return ret == 0;
}

/* The task-naming events: which of their fields are the task's. */
struct task_fields {
	uint32_t pid, comm, tgid, clone_flags;
	const char *what;
};

static const struct task_fields *task_fields(uint32_t kind)
{
	static const struct task_fields sw = {
		SWITCH_NEXT_PID, SWITCH_NEXT_COMM, 0, 0, "SchedSwitchFtraceEvent" };
	static const struct task_fields nt = {
		NEWTASK_PID, NEWTASK_COMM, 0, NEWTASK_CLONE_FLAGS, "TaskNewtaskFtraceEvent" };
	static const struct task_fields rn = {
		RENAME_PID, RENAME_NEWCOMM, 0, 0, "TaskRenameFtraceEvent" };
	static const struct task_fields ex = {
		EXEC_PID, EXEC_FILENAME, 0, 0, "SchedProcessExecFtraceEvent" };
	static const struct task_fields et = {
		EXIT_PID, EXIT_COMM, EXIT_TGID, 0, "SchedProcessExitFtraceEvent" };
	static const struct task_fields fk = {
		FORK_CHILD_PID, FORK_CHILD_COMM, 0, 0, "SchedProcessForkFtraceEvent" };

	switch (kind) {
	case TF_EV_SCHED_SWITCH: return &sw;
	case TF_EV_NEWTASK: return &nt;
	case TF_EV_RENAME: return &rn;
	case TF_EV_EXEC: return &ex;
	case TF_EV_EXIT: return &et;
	case TF_EV_FORK: return &fk;
	default: return NULL;
	}
}

static bool read_task(struct pbr *r, struct tf_event *e, struct tf_error *err)
{
	const struct task_fields *tf = task_fields(e->kind);
	struct pbr_field f;

	while (pbr_more(r)) {
		if (!next(r, &f, err, tf->what))
			return false;
		if (f.num == tf->comm) {
			if (!want(&f, PBR_LEN, err, tf->what))
				return false;
			e->task.comm = str_of(&f);
		} else if (f.num == tf->pid || f.num == tf->tgid ||
			   f.num == tf->clone_flags) {
			if (!want(&f, PBR_VARINT, err, tf->what))
				return false;
			if (f.num == tf->pid)
				e->task.pid = (int32_t)f.v;
			else if (f.num == tf->tgid)
				e->task.tgid = (int32_t)f.v;
			else
				e->task.clone_flags = f.v;
		}
	}
	return true;
}

/* A oneof member of FtraceEvent (the kinds read here are). */
static bool is_event_member(uint32_t num)
{
	switch (num) {
	case TF_EV_SYS_ENTER:
	case TF_EV_SYS_EXIT:
	case TF_EV_GENERIC:
	case TF_EV_SCHED_SWITCH:
	case TF_EV_NEWTASK:
	case TF_EV_RENAME:
	case TF_EV_EXEC:
	case TF_EV_EXIT:
	case TF_EV_FORK:
		return true;
	default:
		return is_member(&perfetto__protos__ftrace_event__descriptor,
				 num, TF_EV_SYS_ENTER);
	}
}

/*
 * A field's tag (one or two bytes: FtraceEvent's fields and members are
 * below 2048) and, for varints, where the value is, without decoding it.
 * false: take the general path.
 */
static inline bool quick_tag(const uint8_t **pp, const uint8_t *end,
			     uint32_t *num, uint8_t *wire)
{
	const uint8_t *p = *pp;

	if (end - p < 2 || !(p[0] & 0xf8))
		return false;
	*wire = p[0] & 7;
	if (!(p[0] & 0x80)) {
		*num = p[0] >> 3;
		*pp = p + 1;
		return true;
	}
	if (p[1] & 0x80)
		return false;
	*num = ((p[0] & 0x7f) >> 3) | (uint32_t)p[1] << 4;
	*pp = p + 2;
	return true;
}

/*
 * One FtraceEvent: 1 when of a kind read here, 0 another, -1 bad bytes.
 * The walk notes where timestamp, pid and the last oneof member are and
 * decodes timestamp and pid only for an event it returns: most events of
 * a bundle are of kinds a caller skips (the names pass skips the calls).
 */
static int read_event(const struct tf_bundle *b, const uint8_t *p,
		      const uint8_t *end, struct tf_event *e,
		      struct tf_error *err)
{
	const uint8_t *ts = NULL, *pid = NULL, *q;
	struct pbr r = pbr_init(p, end), m;
	struct pbr_field f, member = { 0 };
	uint64_t v;
	uint32_t num;
	uint8_t wire;
	bool ok;

	while (r.p < end) {
		q = r.p;
		if (quick_tag(&q, end, &num, &wire) && wire == PBR_VARINT &&
		    (num == FE_TIMESTAMP || num == FE_PID)) {
			if (num == FE_TIMESTAMP)
				ts = q;
			else
				pid = q;
			if (!pbr_skip_varint(&q, end))
				return fail(err, r.p, "FtraceEvent: a field"), -1;
			r.p = q;
			continue;
		}
		if (!next(&r, &f, err, "FtraceEvent: a field"))
			return -1;
		switch (f.num) {
		case FE_TIMESTAMP:
			return fail(err, f.at, "FtraceEvent.timestamp"), -1;
		case FE_PID:
			return fail(err, f.at, "FtraceEvent.pid"), -1;
		case FE_COMMON_FLAGS:
			break;
		default:
			if (is_event_member(f.num))
				member = f;
			break;
		}
	}
	e->kind = member.num;
	switch (member.num) {
	case TF_EV_SYS_ENTER:
	case TF_EV_SYS_EXIT:
	case TF_EV_GENERIC:
		if (b->skip_calls)
			return 0;
		break;
	default:
		if (!task_fields(member.num) || b->skip_tasks)
			return 0;
		break;
	}
	if (!want(&member, PBR_LEN, err, "FtraceEvent: the event's message"))
		return -1;
	e->timestamp = ts && pbr_varint_at(&ts, end, &v) ? v : 0;
	e->pid = pid && pbr_varint_at(&pid, end, &v) ? (uint32_t)v : 0;
	m = pbr_init(member.body, member.body_end);
	switch (member.num) {
	case TF_EV_SYS_ENTER:
		e->sys_enter.id = 0;
		e->sys_enter.nr_args = 0;
		ok = read_sys_enter(&m, e, err);
		break;
	case TF_EV_SYS_EXIT:
		e->sys_exit.id = e->sys_exit.ret = 0;
		ok = read_sys_exit(&m, e, err);
		break;
	case TF_EV_GENERIC:
		memset(&e->generic, 0, sizeof(e->generic));
		ok = read_generic(&m, e, err);
		break;
	default:
		memset(&e->task, 0, sizeof(e->task));
		ok = read_task(&m, e, err);
		break;
	}
	return ok ? 1 : -1;
}

int tf_bundle_next(struct tf_bundle *b, struct tf_event *e,
		   struct tf_error *err)
{
	struct pbr_field f;
	int ret;

	while (pbr_more(&b->r)) {
		if (!next(&b->r, &f, err, "FtraceEventBundle: a field"))
			return -1;
		switch (f.num) {
		case BUNDLE_EVENT:
			if (!want(&f, PBR_LEN, err, "FtraceEventBundle.event"))
				return -1;
			ret = read_event(b, f.body, f.body_end, e, err);
			if (ret)
				return ret;
			break;
		case BUNDLE_CPU:
			if (!want(&f, PBR_VARINT, err, "FtraceEventBundle.cpu"))
				return -1;
			b->cpu = (uint32_t)f.v;
			b->has_cpu = true;
			break;
		case BUNDLE_LOST_EVENTS:
			b->lost_events = pbr_bool(&f);
			break;
		default:
			break;
		}
	}
	return 0;
}

void tf_tree_begin(struct tf_tree *t, const struct tf_packet *pk)
{
	t->r = pbr_init(pk->msg, pk->msg_end);
	t->msg = pk->msg;
	t->pass = 0;
}

static bool read_proc(const struct pbr_field *outer, struct tf_proc *p,
		      struct tf_error *err)
{
	struct pbr r = pbr_init(outer->body, outer->body_end);
	bool thread = outer->num == TREE_THREADS;
	struct pbr_field f;

	memset(p, 0, sizeof(*p));
	p->is_thread = thread;
	while (pbr_more(&r)) {
		if (!next(&r, &f, err, thread ? "ProcessTree.Thread: a field" :
					       "ProcessTree.Process: a field"))
			return false;
		if (f.num == (thread ? THREAD_TID : PROC_PID) ||
		    (thread && f.num == THREAD_TGID)) {
			if (!want(&f, PBR_VARINT, err, thread ? "ProcessTree.Thread: tid or tgid" :
								 "ProcessTree.Process.pid"))
				return false;
			if (f.num == THREAD_TGID)
				p->tgid = (int32_t)f.v;
			else
				p->tid = (int32_t)f.v;
		} else if (f.num == (thread ? THREAD_NAME : PROC_CMDLINE)) {
			if (!want(&f, PBR_LEN, err, thread ? "ProcessTree.Thread.name" :
							      "ProcessTree.Process.cmdline"))
				return false;
			/* a thread's last name; a process's first cmdline */
			if (thread || !p->name.s)
				p->name = str_of(&f);
		}
	}
	if (!thread)
		p->tgid = p->tid;
	return true;
}

int tf_tree_next(struct tf_tree *t, struct tf_proc *p, struct tf_error *err)
{
	struct pbr_field f;
	uint32_t want_num;

	for (;;) {
		want_num = t->pass ? TREE_THREADS : TREE_PROCESSES;
		if (!pbr_more(&t->r)) {
			if (t->pass)
				return 0;
			t->pass = 1;	/* the threads after every process */
			t->r.p = t->msg;
			continue;
		}
		if (!next(&t->r, &f, err, "ProcessTree: a field"))
			return -1;
		if (f.num == TREE_PROCESSES || f.num == TREE_THREADS) {
			if (!want(&f, PBR_LEN, err, "ProcessTree: a process or thread"))
				return -1;
			if (f.num == want_num)
				return read_proc(&f, p, err) ? 1 : -1;
		}
	}
}

bool tf_ftrace_stats(const struct tf_packet *pk, struct tf_ftrace_stats *st,
		     struct tf_error *err)
{
	struct pbr r = pbr_init(pk->msg, pk->msg_end), c;
	struct pbr_field f, g;
	uint64_t overrun, dropped;

	memset(st, 0, sizeof(*st));
	while (pbr_more(&r)) {
		if (!next(&r, &f, err, "FtraceStats: a field"))
			return false;
		if (f.num == FSTATS_PHASE) {
			if (!want(&f, PBR_VARINT, err, "FtraceStats.phase"))
				return false;
			st->phase = (int32_t)f.v;
			st->has_phase = true;
		} else if (f.num == FSTATS_CPU_STATS) {
			if (!want(&f, PBR_LEN, err, "FtraceStats.cpu_stats"))
				return false;
			overrun = dropped = 0;
			c = pbr_init(f.body, f.body_end);
			while (pbr_more(&c)) {
				if (!next(&c, &g, err, "FtraceCpuStats: a field"))
					return false;
				if (g.num != CPUSTATS_OVERRUN && g.num != CPUSTATS_DROPPED)
					continue;
				if (!want(&g, PBR_VARINT, err, "FtraceCpuStats: overrun or dropped_events"))
					return false;
				if (g.num == CPUSTATS_OVERRUN)
					overrun = g.v;
				else
					dropped = g.v;
			}
			st->lost += overrun + dropped;
		}
	}
	return true;
}

bool tf_system_info(const struct tf_packet *pk, struct tf_system_info *si,
		    struct tf_error *err)
{
	struct pbr r = pbr_init(pk->msg, pk->msg_end), u;
	struct pbr_field f, g;

	memset(si, 0, sizeof(*si));
	while (pbr_more(&r)) {
		if (!next(&r, &f, err, "SystemInfo: a field"))
			return false;
		if (f.num == SI_MACHINE_NAME) {
			if (!want(&f, PBR_LEN, err, "SystemInfo.machine_name"))
				return false;
			si->machine_name = str_of(&f);
		} else if (f.num == SI_UTSNAME) {
			/* met twice, protobuf-c merges: later fields win */
			if (!want(&f, PBR_LEN, err, "SystemInfo.utsname"))
				return false;
			si->has_utsname = true;
			u = pbr_init(f.body, f.body_end);
			while (pbr_more(&u)) {
				if (!next(&u, &g, err, "Utsname: a field"))
					return false;
				if (g.num != UTS_RELEASE && g.num != UTS_MACHINE)
					continue;
				if (!want(&g, PBR_LEN, err, "Utsname: release or machine"))
					return false;
				if (g.num == UTS_RELEASE)
					si->release = str_of(&g);
				else
					si->machine = str_of(&g);
			}
		}
	}
	return true;
}

/* ---- top-level fields, for tracectl merge ---- */

#define WIRE_VARINT 0
#define WIRE_I64 1
#define WIRE_LEN 2
#define WIRE_I32 5

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
		shift += 7;
	}
	return *p < end ? -1 : 0;	/* over 64 bits, or cut short */
}

/*
 * One top-level field at *p: its number, wire type and where it ends; the
 * value of a varint in *v. 1, or -1 where the bytes are no field.
 */
static int next_field(const uint8_t **p, const uint8_t *end, uint32_t *nr,
		      uint64_t *v)
{
	uint64_t tag, n;

	if (read_varint(p, end, &tag) <= 0 || !(tag >> 3) || tag >> 32)
		return -1;
	*nr = (uint32_t)(tag >> 3);
	switch (tag & 7) {
	case WIRE_VARINT:
		return read_varint(p, end, v) > 0 ? 1 : -1;
	case WIRE_I64:
		n = 8;
		break;
	case WIRE_I32:
		n = 4;
		break;
	case WIRE_LEN:
		if (read_varint(p, end, &n) <= 0)
			return -1;
		break;
	default:
		return -1;	/* groups: never in a trace */
	}
	if (n > (uint64_t)(end - *p))
		return -1;
	*p += n;
	*v = 0;
	return 1;
}

/* TracePacket.machine_id's number, as proto/trace.proto gives it. */
static uint32_t machine_id_field(void)
{
	static uint32_t nr;

	if (!nr)
		nr = protobuf_c_message_descriptor_get_field_by_name(
			&perfetto__protos__trace_packet__descriptor, "machine_id")->id;
	return nr;
}

int trace_packet_fields(const uint8_t *pkt, size_t len,
			struct trace_fields *f)
{
	const uint8_t *p = pkt, *end = pkt + len;
	uint32_t nr;
	uint64_t v;

	memset(f, 0, sizeof(*f));
	while (p < end) {
		if (next_field(&p, end, &nr, &v) < 0)
			return -1;
		if (nr == machine_id_field())
			f->machine_id = (uint32_t)v;
		else if (nr < 64 * sizeof(f->has) / sizeof(f->has[0]))
			f->has[nr / 64] |= 1ull << (nr % 64);
	}
	return 0;
}

bool trace_fields_has(const struct trace_fields *f, uint32_t nr)
{
	return nr < 64 * sizeof(f->has) / sizeof(f->has[0]) &&
	       (f->has[nr / 64] >> (nr % 64) & 1);
}

size_t trace_packet_strip_machine(const uint8_t *pkt, size_t len,
				  uint8_t *out)
{
	const uint8_t *p = pkt, *end = pkt + len, *field;
	size_t n = 0;
	uint32_t nr;
	uint64_t v;

	while (p < end) {
		field = p;
		if (next_field(&p, end, &nr, &v) < 0)
			return (size_t)-1;
		if (nr == machine_id_field())
			continue;
		if (out)
			memmove(out + n, field, (size_t)(p - field));
		n += (size_t)(p - field);
	}
	return n;
}

size_t trace_record_header(uint8_t *out, size_t len)
{
	size_t n = 0;
	uint64_t v = len;

	out[n++] = 0x0a;
	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}
