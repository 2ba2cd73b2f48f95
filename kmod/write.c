// SPDX-License-Identifier: GPL-2.0
/*
 * The probes' side of a buffer: which buffers want an event, and one
 * event, packet or tracepoint record into this CPU's open chunk, sealing
 * a full one (chunk.c) and trying once more in a new one.
 */
#include <linux/bitmap.h>
#include <linux/hardirq.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <asm/unistd.h>

#include "buffer.h"
#include "compat.h"
#include "core/tp_encode.h"
#include "pbtrace_fields.h"

/* What probes see: an immutable set, swapped under RCU (two alternate). */
struct pbt_active_set {
	unsigned int nr;
	struct pbt_buffer *b[PBT_MAX_ACTIVE];
};

static struct pbt_active_set active_sets[2];
static struct pbt_active_set __rcu *active_set;
static DEFINE_PER_CPU(int, pbt_nesting);

/* The event's head: its tag and length, timestamp and pid, at most. */
#define PBT_EVENT_HEAD_MAX (1 + PBT_WIDE_EVENT_WIDTH + 1 + PB_VARINT_MAX + 1 + 5)

/*
 * One FtraceEvent into the open chunk; false (nothing written) if full.
 * The head is written with one check of the room for all of it (each
 * field's own check and store cost the storm 8 instructions an event,
 * tools/bench/run); near the chunk's end, field by field as before.
 */
static __always_inline bool encode_width(struct pb_buf *pb, u64 ts, pid_t pid,
					 pbt_encode_fn encode, const void *arg,
					 unsigned int width)
{
	u8 *start = pb->p;
	u8 *len, *p;

	/* Each tag is one byte. */
	BUILD_BUG_ON((PB_FTRACEEVENTBUNDLE_EVENT << 3) > 0x7f ||
		     (PB_FTRACEEVENT_PID << 3) > 0x7f);
	if (likely(!pb->overflow && pb->end - start >= PBT_EVENT_HEAD_MAX)) {
		p = start;
		*p++ = pb_tag(PB_FTRACEEVENTBUNDLE_EVENT, PB_WT_LEN);
		len = p;
		p += width;
		*p++ = pb_tag(PB_FTRACEEVENT_TIMESTAMP, PB_WT_VARINT);
		p = pb_put_varint(p, ts);
		*p++ = pb_tag(PB_FTRACEEVENT_PID, PB_WT_VARINT);
		pb->p = pb_put_varint(p, (u32)pid);
	} else {
		len = pb_nest_begin(pb, PB_FTRACEEVENTBUNDLE_EVENT, width);
		pb_varint(pb, PB_FTRACEEVENT_TIMESTAMP, ts);
		pb_varint(pb, PB_FTRACEEVENT_PID, (u32)pid);
	}
	encode(pb, arg);
	if (!pb->overflow)
		pb_nest_end(pb, len, width);
	if (pb->overflow) {
		pb->p = start;
		pb->overflow = false;
		return false;
	}
	return true;
}

/* A constant width each, so that patching the length stays a store. */
static __always_inline bool encode_event(struct pb_buf *pb, u64 ts, pid_t pid,
					 pbt_encode_fn encode, const void *arg,
					 int id)
{
	if (unlikely(id == PBT_EV_SCHED_PROCESS_EXEC ||
		     id >= PBT_EV_SYS_STRINGS))
		return encode_width(pb, ts, pid, encode, arg,
				    PBT_WIDE_EVENT_WIDTH);
	return encode_width(pb, ts, pid, encode, arg, PBT_EVENT_WIDTH);
}

static void cs_note_switch(struct pbt_compact *cs,
			   const struct pbt_sched_rec *r)
{
	pbt_cs_note_switch(cs, r->comm, r->pid, r->prio);
}

/*
 * What trace_processor infers (the prev task of a switch from the CPU's
 * last switch, a waking's waker from its next_pid) is what happened: else
 * the event goes in full. A task that exec'd or was renamed, or whose prio
 * changed, while it ran differs from what the last switch said of it.
 */
static bool cs_inferable(const struct pbt_compact *cs, bool sw, pid_t pid,
			 const struct pbt_sched_rec *r)
{
	if (!sw)
		return pid == cs->last_pid;
	return r->prev_pid == cs->last_pid && r->prev_prio == cs->last_prio &&
	       pbt_cs_same_comm(cs, r->prev_comm);
}

/*
 * Add a sched_switch or sched_waking to the open chunk's CompactSched, in
 * room taken from the end of the chunk (full events then overflow where
 * the columns would not fit). False: write it in full. A chunk's events
 * up to its first sched_switch are written in full, and so is the rest of
 * a chunk after a loss: trace_processor takes a compact switch's prev
 * task and a compact waking's waker from the CPU's previous switch, which
 * the chunk itself must then hold (in a ring buffer the chunk before may
 * be gone). A full intern table, column or chunk seals the chunk.
 */
static bool write_compact(struct pbt_buffer *b, struct pbt_writer *w,
			  u32 cpu, int id, u64 ts, pid_t pid,
			  const struct pbt_sched_rec *r)
{
	struct pbt_compact *cs = w->cs;
	bool sw = id == PBT_EV_SCHED_SWITCH, first = !cs->reserved;
	struct pbt_cs_event e = {
		.ts = ts, .comm = r->comm, .prev_state = r->prev_state,
		.pid = r->pid, .prio = r->prio, .target_cpu = r->target_cpu,
	};
	u32 need;

	if (!w->chunk || !w->switched || w->lost ||
	    !cs_inferable(cs, sw, pid, r))
		return false;
	need = pbt_cs_add(cs, sw, &e, w->pb.end - w->pb.p);
	if (!need) {
		pbt_seal_chunk(b, w, cpu);
		return false;
	}
	if (sw)
		cs_note_switch(cs, r);
	w->pb.end -= need;
	w->events++;
	stat_add(&b->stats[cpu].events_written, 1);
	/* The headers are counted at seal, at their real size. */
	stat_add(&b->stats[cpu].bytes_written, need - (first ? CS_HEADERS : 0));
	return true;
}

/*
 * Room for a generic event's descriptor at the chunk's end, taken by the
 * first event of its kind in a chunk; false if the chunk has no such room.
 * *@taken says whether this call took it, for put_desc() to give back.
 */
static bool take_desc(struct pbt_writer *w, const struct pbt_tp *tp,
		      bool *taken)
{
	u32 need;

	*taken = false;
	if (!tp->desc || test_bit(tp->index, w->tp_used))
		return true;
	need = 1 + pb_varint_size(tp->desc_len) + tp->desc_len;
	if (w->pb.end - w->pb.p < need)
		return false;
	w->pb.end -= need;
	w->tp_reserved += need;
	__set_bit(tp->index, w->tp_used);
	*taken = true;
	return true;
}

/*
 * The event that took the descriptor's room did not fit: give the room
 * back, so that the chunk never seals a descriptor no event of it uses.
 */
static void put_desc(struct pbt_writer *w, const struct pbt_tp *tp)
{
	u32 need = 1 + pb_varint_size(tp->desc_len) + tp->desc_len;

	w->pb.end += need;
	w->tp_reserved -= need;
	__clear_bit(tp->index, w->tp_used);
}

/*
 * One FtraceEvent into the open chunk, with a generic event's (@tp, else
 * NULL) descriptor room taken with it; false, and nothing taken, if full.
 */
static __always_inline bool try_event(struct pbt_writer *w, u64 ts, pid_t pid,
				      pbt_encode_fn encode, const void *arg,
				      int id, const struct pbt_tp *tp)
{
	bool taken;

	if (!tp)
		return encode_event(&w->pb, ts, pid, encode, arg, id);
	if (!take_desc(w, tp, &taken))
		return false;
	if (encode_width(&w->pb, ts, pid, encode, arg, PBT_WIDE_EVENT_WIDTH))
		return true;
	if (taken)
		put_desc(w, tp);
	return false;
}

static __always_inline bool written(struct pbtrace_cpu_stats *st,
				    struct pbt_writer *w, const u8 *start)
{
	w->events++;
	stat_add(&st->events_written, 1);
	stat_add(&st->bytes_written, w->pb.p - start);
	return true;
}

/*
 * write_full()'s way when the event is not in the open chunk: open one,
 * or seal the full one, and try once in the new one: the one
 * seal-and-retry path, native and generic. Out of line, so that the
 * probe's path is the first try alone (a loop around both cost the
 * storm 12 instructions an event, tools/bench/run).
 */
static noinline bool write_retry(struct pbt_buffer *b, struct pbt_writer *w,
				 u32 cpu, u64 ts, pid_t pid,
				 pbt_encode_fn encode, const void *arg,
				 int id, const struct pbt_tp *tp)
{
	struct pbtrace_cpu_stats *st = &b->stats[cpu];
	u8 *start;

	if (w->chunk) {
		/* An event that does not fit an empty chunk never will. */
		if (!w->events)
			return count_lost(w, &st->lost_too_large);
		pbt_seal_chunk(b, w, cpu);
	}
	if (!pbt_open_chunk(b, w, cpu))
		return count_lost(w, &st->lost_full);
	start = w->pb.p;
	if (try_event(w, ts, pid, encode, arg, id, tp))
		return written(st, w, start);
	return count_lost(w, &st->lost_too_large);
}

/*
 * One FtraceEvent, native or generic (@tp), into the open chunk, else
 * by write_retry(). False if it could not be written.
 */
static __always_inline bool write_full(struct pbt_buffer *b,
				       struct pbt_writer *w, u32 cpu, u64 ts,
				       pid_t pid, pbt_encode_fn encode,
				       const void *arg, int id,
				       const struct pbt_tp *tp)
{
	u8 *start = w->pb.p;

	if (likely(w->chunk) && try_event(w, ts, pid, encode, arg, id, tp))
		return written(&b->stats[cpu], w, start);
	return write_retry(b, w, cpu, ts, pid, encode, arg, id, tp);
}

/*
 * Room kept for the bundle packet's headers behind a standalone packet:
 * record and bundle tags and lengths, sequence id, flags, cpu, lost_events.
 */
#define PBT_BUNDLE_HEADERS 32

/*
 * @fn's packet after the closed bundle; true if it is in the chunk. On
 * failure the chunk is as it was when it holds no event (an unwritten
 * bundle's lengths are patched again at the next close); else it is
 * sealed at the closed bundle, for the caller to retry in a new one.
 */
static bool put_packet(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu,
		       pbt_packet_fn fn, void *arg)
{
	struct pb_buf *pb = &w->pb;
	bool ok, room;
	u8 *start, *len;

	pbt_close_bundle(b, w, cpu);
	start = pb->p;
	/* Never below p: pb_room() compares end - p as unsigned. */
	room = pb->end - pb->p >= PBT_BUNDLE_HEADERS;
	if (room)
		pb->end -= PBT_BUNDLE_HEADERS;
	else
		pb->overflow = true;
	len = pb_nest_begin(pb, PB_TRACE_PACKET, PBT_OUTER_WIDTH);
	pb_varint(pb, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID,
		  b->seq_base + cpu);
	ok = !pb->overflow && fn(pb, w->scratch, !w->interned, cpu, arg);
	pb_nest_end(pb, len, PBT_OUTER_WIDTH);
	if (room)
		pb->end += PBT_BUNDLE_HEADERS;
	if (!ok || pb->overflow) {
		pb->p = start;
		pb->overflow = false;
		/* What @fn interned is not in the chunk: it starts again. */
		w->interned = false;
		if (w->events)
			pbt_publish_chunk(b, w, cpu);
		return false;
	}
	w->interned = true;
	/* The new bundle infers nothing from the closed one's sched events. */
	w->switched = false;
	if (w->cs)
		pbt_cs_reset(w->cs);
	pbt_open_bundle(b, w, cpu);
	w->events++;
	stat_add(&b->stats[cpu].events_written, 1);
	stat_add(&b->stats[cpu].bytes_written, pb->p - start);
	return true;
}

/* pbt_buffer_packet() on this CPU's writer, from enter_writer(). */
static bool write_packet(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu,
			 pbt_packet_fn fn, void *arg)
{
	struct pbtrace_cpu_stats *st = &b->stats[cpu];

	if (!w->chunk && !pbt_open_chunk(b, w, cpu))
		goto lost_full;
	if (put_packet(b, w, cpu, fn, arg))
		return true;
	/* A packet that does not fit an empty chunk never will. */
	if (w->chunk)
		goto too_large;
	if (!pbt_open_chunk(b, w, cpu))
		goto lost_full;
	if (put_packet(b, w, cpu, fn, arg))
		return true;
too_large:
	return count_lost(w, &st->lost_too_large);
lost_full:
	return count_lost(w, &st->lost_full);
}

/*
 * sched_switch or sched_waking into a compact sched buffer: compact if it
 * can be, else in full. Out of line, so that the other events' path pays
 * one compare for it.
 */
static noinline void write_sched(struct pbt_buffer *b, struct pbt_writer *w,
				 u32 cpu, u64 ts, pid_t pid,
				 pbt_encode_fn encode, const void *arg, int id)
{
	if (write_compact(b, w, cpu, id, ts, pid, arg))
		return;
	if (write_full(b, w, cpu, ts, pid, encode, arg, id, NULL) &&
	    id == PBT_EV_SCHED_SWITCH) {
		w->switched = true;
		cs_note_switch(w->cs, arg);
	}
}

static void write_event(struct pbt_buffer *b, u32 cpu, u64 ts, pid_t pid,
			pbt_encode_fn encode, const void *arg, int id)
{
	struct pbt_writer *w = &b->w[cpu];

	fold_nmi(b, w, cpu);
	if (unlikely(pbt_event_compact(id)) && w->cs)
		write_sched(b, w, cpu, ts, pid, encode, arg, id);
	else
		write_full(b, w, cpu, ts, pid, encode, arg, id, NULL);
}

static __always_inline bool followed(const struct pbt_buffer *b, pid_t pid)
{
	return (u32)pid < PID_MAX_LIMIT && test_bit(pid, b->followed);
}

/*
 * The syscall filter is one test of b->syscalls for a buffer without one;
 * @nr only matters for raw_syscalls (a number outside the table, e.g. -1
 * of a task not in a syscall, is never in a filter).
 */
static __always_inline bool pid_wanted(const struct pbt_buffer *b, pid_t pid,
				       pid_t also)
{
	u32 i;

	if (!b->nr_pids)
		return true;
	if (b->followed)
		return followed(b, pid) || (also && followed(b, also));
	for (i = 0; i < b->nr_pids; i++)
		if (b->pids[i] == pid || b->pids[i] == also)
			return true;
	return false;
}

static __always_inline bool wants(const struct pbt_buffer *b, int id,
				  pid_t pid, pid_t also, long nr)
{
	if (!(b->events & BIT_ULL(id)))
		return false;
	if (unlikely(b->syscalls) &&
	    (id == PBT_EV_SYS_ENTER || id == PBT_EV_SYS_EXIT ||
	     id >= PBT_EV_SYS_STRINGS) &&
	    (nr < 0 || nr >= NR_syscalls || !test_bit(nr, b->syscalls)))
		return false;
	if (!pid_wanted(b, pid, also))
		return false;
	/* A member's buffer: the strings, or what says they are left out. */
	return likely(id < PBT_EV_SYS_STRINGS) ||
	       pbt_buffer_may_read(b) == (id == PBT_EV_SYS_STRINGS);
}

static void count_nested(const struct pbt_active_set *set, int id, pid_t pid,
			 pid_t also, long nr, u32 cpu)
{
	unsigned int i;

	for (i = 0; i < set->nr; i++)
		if (wants(set->b[i], id, pid, also, nr) &&
		    cpu < set->b[i]->nr_cpus)
			atomic_inc(&set->b[i]->w[cpu].nmi_lost);
}

static DEFINE_PER_CPU(u64, pbt_enter_ts);

/*
 * A sys_enter's strings carry its timestamp, so that the two join on it:
 * probes.c writes them right after it, on the same CPU with preemption off.
 */
static __always_inline u64 event_ts(int id)
{
	u64 ts;

	if (unlikely(id >= PBT_EV_SYS_STRINGS))
		return __this_cpu_read(pbt_enter_ts);
	ts = ktime_get_boot_fast_ns();
	if (id == PBT_EV_SYS_ENTER)
		__this_cpu_write(pbt_enter_ts, ts);
	return ts;
}

/*
 * One body for every probe: a second inlined copy for pbt_emit() made the
 * compiler call write_event() and wants() out of line, 35 instructions
 * more per event (tools/bench/run, storm). A fifth argument for the
 * compact sched record cost 8 more (registers spilled): sched events
 * carry it in @arg instead (pbt_event_compact()).
 */
void pbt_emit_for(int id, long nr, pid_t also, pbt_encode_fn encode,
		  const void *arg)
{
	const struct pbt_active_set *set;
	pid_t pid = current->pid;
	unsigned long flags;
	unsigned int i;
	int *nesting;
	u64 ts = 0;
	u32 cpu;

	/* Also what keeps us on this CPU on kernels with preemptible probes. */
	local_irq_save(flags);
	set = rcu_dereference_sched(active_set);
	if (!set || !set->nr)
		goto out;
	cpu = smp_processor_id();
	nesting = this_cpu_ptr(&pbt_nesting);
	if (unlikely(in_nmi() || *nesting)) {
		count_nested(set, id, pid, also, nr, cpu);
		goto out;
	}
	*nesting = 1;
	for (i = 0; i < set->nr; i++) {
		struct pbt_buffer *b = set->b[i];

		if (!wants(b, id, pid, also, nr) || cpu >= b->nr_cpus)
			continue;
		/* Read once, and only for an event some buffer keeps. */
		if (!ts)
			ts = event_ts(id);
		write_event(b, cpu, ts, pid, encode, arg, id);
	}
	if (static_branch_unlikely(&pbt_fault_recurse))
		pbt_emit_for(id, nr, also, encode, arg);	/* dropped and counted */
	*nesting = 0;
out:
	local_irq_restore(flags);
}

/*
 * This CPU's writer of @b for a probe of that one buffer (a tracepoint's
 * counter, a stack sample), with pbt_emit_for()'s discipline: called with
 * interrupts off; NULL when @b is not recording here or not for @pid, or
 * in an NMI or a nested probe (counted in nmi_lost, nothing written).
 * Else the nesting mark is set and earlier NMI drops are folded into the
 * stats: end with leave_writer().
 */
static struct pbt_writer *enter_writer(struct pbt_buffer *b, pid_t pid,
				       u32 *cpu)
{
	struct pbt_writer *w;
	int *nesting;

	*cpu = smp_processor_id();
	if (!READ_ONCE(b->active) || *cpu >= b->nr_cpus ||
	    !pid_wanted(b, pid, 0))
		return NULL;
	w = &b->w[*cpu];
	nesting = this_cpu_ptr(&pbt_nesting);
	if (unlikely(in_nmi() || *nesting)) {
		atomic_inc(&w->nmi_lost);
		return NULL;
	}
	*nesting = 1;
	fold_nmi(b, w, *cpu);
	return w;
}

static void leave_writer(void)
{
	__this_cpu_write(pbt_nesting, 0);
}

struct pbt_tp_rec {
	const struct pbt_tp *tp;
	const void *rec;
	u32 size;
};

/* The FtraceEvent's <proto_id> field: the record's fields, as laid out. */
static void encode_tp(struct pb_buf *pb, const void *arg)
{
	const struct pbt_tp_rec *r = arg;
	u8 *len;

	len = pb_nest_begin(pb, r->tp->p.layout.proto_id, PBT_TP_BODY_WIDTH);
	pbt_tp_encode_fast(pb, r->tp->fast, &r->tp->p.layout, r->rec, r->size);
	pb_nest_end(pb, len, PBT_TP_BODY_WIDTH);
}

/*
 * A tracepoint's record into its one buffer, from its perf counter's
 * overflow handler (tracepoint.c), with pbt_emit_for()'s discipline:
 * interrupts off on this CPU's writer, NMIs and nesting counted, not
 * written. The buffer's pid filter applies.
 */
void pbt_emit_tp(struct pbt_tp *tp, const void *rec, u32 size)
{
	struct pbt_tp_rec r = { .tp = tp, .rec = rec, .size = size };
	struct pbt_buffer *b = tp->b;
	pid_t pid = current->pid;
	struct pbt_writer *w;
	unsigned long flags;
	u32 cpu;

	local_irq_save(flags);
	w = enter_writer(b, pid, &cpu);
	if (w) {
		write_full(b, w, cpu, ktime_get_boot_fast_ns(), pid, encode_tp,
			   &r, -1, tp);
		leave_writer();
	}
	local_irq_restore(flags);
}

/*
 * A standalone TracePacket (stack.c's PerfSample) amid this CPU's
 * FtraceEvents: the open bundle's packet is closed as at seal, @fn writes
 * the new packet's fields after its sequence id, and a new bundle packet
 * opens behind it. @fn gets this CPU's scratch and whether its packet is
 * the chunk's first to intern (it then forgets what it interned and sets
 * SEQ_INCREMENTAL_STATE_CLEARED): a chunk refers only to what it holds.
 * @fn returns false when its tables are full: the chunk is sealed and
 * @fn called again on a new one. From a probe, with pbt_emit_tp()'s
 * discipline (interrupts off, NMIs and nesting counted, the pid filter).
 */
bool pbt_buffer_packet(struct pbt_buffer *b, pbt_packet_fn fn, void *arg)
{
	struct pbt_writer *w;
	unsigned long flags;
	bool ok = false;
	u32 cpu;

	if (!b->scratch)
		return false;
	local_irq_save(flags);
	w = enter_writer(b, current->pid, &cpu);
	if (w) {
		ok = write_packet(b, w, cpu, fn, arg);
		leave_writer();
	}
	local_irq_restore(flags);
	return ok;
}

bool pbt_buffer_may_read(const struct pbt_buffer *b)
{
	return !b->member || pbt_may_read(b->owner_uid, b->owner_gid);
}

void *pbt_buffer_scratch(struct pbt_buffer *b, u32 cpu)
{
	if (!b->scratch || cpu >= b->nr_cpus)
		return NULL;
	return b->scratch + (size_t)cpu * b->scratch_size;
}

/*
 * The pid filter alone, for tracepoint.c: it runs before a tracepoint's
 * filter expression, so a member's filter costs nothing on the hits of
 * tasks its session does not record.
 */
bool pbt_buffer_wants_pid(struct pbt_buffer *b, pid_t pid)
{
	return pid_wanted(b, pid, 0);
}

struct pbt_tp *pbt_buffer_tps(struct pbt_buffer *b, u32 *nr)
{
	*nr = b->nr_tps;
	return b->tps;
}

/*
 * follow_forks: a child joins every filter its parent is in before it first
 * runs (sched_process_fork fires ahead of wake_up_new_task), and leaves at
 * sched_process_free, after its last event, so a reused pid is not traced.
 * Atomic bit operations: forks on other CPUs flip bits of the same map.
 */
void pbt_follow_fork(pid_t parent, pid_t child)
{
	const struct pbt_active_set *set;
	unsigned int i;

	if ((u32)child >= PID_MAX_LIMIT)
		return;
	preempt_disable_notrace();
	set = rcu_dereference_sched(active_set);
	for (i = 0; set && i < set->nr; i++) {
		struct pbt_buffer *b = set->b[i];

		if (b->followed && followed(b, parent))
			set_bit(child, b->followed);
	}
	preempt_enable_notrace();
}

void pbt_follow_free(pid_t pid)
{
	const struct pbt_active_set *set;
	unsigned int i;

	if ((u32)pid >= PID_MAX_LIMIT)
		return;
	preempt_disable_notrace();
	set = rcu_dereference_sched(active_set);
	for (i = 0; set && i < set->nr; i++)
		if (set->b[i]->followed)
			clear_bit(pid, set->b[i]->followed);
	preempt_enable_notrace();
}

/* Swap in a new active set; the old one is reusable after a grace period. */
static void publish(struct pbt_buffer *add, struct pbt_buffer *remove)
{
	struct pbt_active_set *cur, *next;
	unsigned int i;

	lockdep_assert_held(&pbt_sessions_lock);
	cur = rcu_dereference_protected(active_set,
					lockdep_is_held(&pbt_sessions_lock));
	next = cur == &active_sets[0] ? &active_sets[1] : &active_sets[0];
	next->nr = 0;
	for (i = 0; cur && i < cur->nr; i++)
		if (cur->b[i] != remove)
			next->b[next->nr++] = cur->b[i];
	if (add && next->nr < PBT_MAX_ACTIVE)
		next->b[next->nr++] = add;
	rcu_assign_pointer(active_set, next);
	synchronize_rcu();
}

void pbt_buffer_activate(struct pbt_buffer *b)
{
	if (b->active)
		return;
	b->active = true;
	publish(b, NULL);
}

void pbt_buffer_deactivate(struct pbt_buffer *b)
{
	if (!b->active)
		return;
	b->active = false;
	publish(NULL, b);
}

void pbt_write_init(void)
{
	rcu_assign_pointer(active_set, &active_sets[0]);
}
