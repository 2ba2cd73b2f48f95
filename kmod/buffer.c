// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU rings of chunks, one vmalloc area per session buffer laid
 * out as struct pbtrace_mmap_header describes, so userspace maps it read-only
 * and copies sealed chunks to the trace file verbatim.
 *
 * Each CPU writes only its own ring, with interrupts off, so interrupt and
 * softirq nesting cannot interleave two events. NMIs and probe recursion
 * never write: they bump an atomic counter that the writer folds into the
 * mapped stats. The chunk state word is the only thing shared with the
 * reader; transitions are:
 *
 *   FREE -> WRITING            writer opens a chunk (only the writer)
 *   WRITING -> SEALED          writer seals (store-release after meta)
 *   SEALED -> WRITING          writer overwrites (RING_BUFFER), cmpxchg
 *   SEALED -> READING          reader takes the oldest, cmpxchg
 *   READING -> FREE | SEALED   reader puts it back read, or unread
 *
 * See docs/data-plane.md for the loss accounting and concurrency argument.
 */
#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/hardirq.h>
#include <linux/irq_work.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/swait.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <asm/unistd.h>

#include "pbtrace.h"
#include "compat.h"
#include "core/pb.h"
#include "core/compact.h"
#include "core/tp_encode.h"
#include "pbtrace_fields.h"

/* Length prefixes reserved for packet and bundle (chunks up to 256 KiB). */
#define PBT_OUTER_WIDTH 4
/*
 * For one FtraceEvent: one byte (up to 127) for every event but exec.
 * Their oneof messages are below 128 bytes already (probes.c MSG_WIDTH)
 * and below 72 in the worst case (sys_enter's six 10-byte arguments); the
 * event adds at most 21 (timestamp, pid, tags). Exec's filename and a
 * syscall's strings (up to 3 x 256 bytes) need two. Saves a byte on nearly
 * every event.
 */
#define PBT_EVENT_WIDTH 1
#define PBT_WIDE_EVENT_WIDTH 2
/*
 * Any tracepoint's message inside its FtraceEvent: up to 16383 bytes, as
 * the event (records are at most 8 KiB; a layout that makes more of one
 * loses the event as too large).
 */
#define PBT_TP_BODY_WIDTH 2
#define PBT_TP_DESC_MAX 4096		/* 40 fields of 47-byte names: < 2600 */

#define PBT_MAX_BUFFER_BYTES (1ULL << 30)
#define PBT_MAX_ACTIVE (PBTRACE_MAX_SESSIONS * PBTRACE_MAX_BUFFERS)

/* Kernel-private state of one CPU's writer; never mapped. */
struct pbt_writer {
	u8 *chunk;		/* open chunk, NULL when none is open */
	u32 cur;		/* its index in this CPU's ring */
	u32 next;		/* where to look for the next chunk */
	u32 events;		/* events in the open chunk */
	bool lost;		/* loss since the last chunk: flag the next one */
	bool started;		/* first chunk of the sequence was written */
	bool refused;		/* chunks_discarded already counted for this gap */
	bool switched;		/* the open chunk holds a sched_switch */
	bool interned;		/* a packet of the open chunk interned data */
	struct pb_buf pb;
	struct pbt_compact *cs;	/* NULL: this buffer writes sched in full */
	/* Tracepoints whose descriptor the open chunk carries, and its room. */
	unsigned long *tp_used;	/* nr_tps bits, NULL without tracepoints */
	u32 tp_reserved;
	u8 *packet_len;		/* length prefixes patched at seal */
	u8 *bundle_len;
	atomic_t nmi_lost;	/* NMI/recursion drops not yet in the stats */
	call_single_data_t flush_csd;	/* seals on this CPU for a flush */
	atomic_t flush_busy;	/* flush_csd queued and not yet done */
	struct pbt_buffer *b;
	u32 flushed_gen;	/* last flush generation done here */
	void *scratch;		/* pbt_buffer_packet()'s writer's, or NULL */
	/*
	 * stats.events_written when this CPU last sealed: equal to it, every
	 * event committed here is in a sealed chunk (pbt_buffer_seal_written()
	 * reads both from another CPU; release/acquire with the seal).
	 */
	u64 sealed_written;
} ____cacheline_aligned_in_smp;

struct pbt_buffer {
	void *vmem;
	size_t vsize;
	struct pbtrace_mmap_header *hdr;
	struct pbtrace_cpu_stats *stats;
	struct pbtrace_chunk_meta *meta;
	u8 *data;
	u32 nr_cpus;
	u32 chunks_per_cpu;
	u32 chunk_size;
	u32 fill_policy;
	u32 seq_base;
	u64 events;			/* BIT_ULL(event id) */
	u32 nr_pids;
	pid_t pids[PBTRACE_MAX_PIDS];
	unsigned long *followed;	/* follow_forks: PID_MAX_LIMIT bits */
	unsigned long *syscalls;	/* NULL: every syscall; NR_syscalls bits */
	bool member;			/* strings, stacks: pbt_buffer_may_read() */
	kuid_t owner_uid;
	kgid_t owner_gid;
	struct pbt_compact *cs;		/* [nr_cpus], NULL: full sched events */
	u8 *scratch;			/* [nr_cpus][scratch_size], or NULL */
	u32 scratch_size;
	struct pbt_tp *tps;		/* [nr_tps], tracepoint.c's counters */
	u32 nr_tps;
	unsigned long *tp_used;		/* every writer's bits, one block */
	atomic64_t seq;			/* seal order */
	struct pbt_writer *w;		/* [nr_cpus] */
	struct irq_work wake_work;
	wait_queue_head_t *wq;
	struct swait_queue_head flush_wq; /* flusher waits for every CPU */
	u32 flush_gen;
	struct mutex flush_lock;	/* one flusher: stop, FLUSH, watermark */
	spinlock_t read_lock;		/* chunks_read updates by readers */
	u32 *rd;			/* [nr_cpus] reader cursors, see oldest_of_cpu() */
	unsigned long *ungot;		/* chunks put back unread, not yet retaken */
	atomic_t nr_ungot;
	struct list_head node;		/* all_buffers, for CPU hotplug */
	bool active;
	bool retired;			/* replaced by SET_SESSION */
	unsigned int readers;		/* attached fds, pbt_sessions_lock */
};

/* What probes see: an immutable set, swapped under RCU (two alternate). */
struct pbt_active_set {
	unsigned int nr;
	struct pbt_buffer *b[PBT_MAX_ACTIVE];
};

static struct pbt_active_set active_sets[2];
static struct pbt_active_set __rcu *active_set;
static DEFINE_PER_CPU(int, pbt_nesting);

static LIST_HEAD(all_buffers);
static DEFINE_SPINLOCK(all_buffers_lock);
/* Bytes of every buffer's vmalloc area, for admit_bytes(). */
static atomic64_t all_buffers_bytes = ATOMIC64_INIT(0);
static int hp_state = -1;

static inline void stat_add(__u64 *p, u64 v)
{
	WRITE_ONCE(*p, *p + v);
}

/* An event not written: counted once, and the next packet says so. */
static bool count_lost(struct pbt_writer *w, __u64 *counter)
{
	stat_add(counter, 1);
	w->lost = true;
	return false;
}

static inline struct pbtrace_chunk_meta *chunk_meta(struct pbt_buffer *b,
						    u32 cpu, u32 idx)
{
	return &b->meta[cpu * b->chunks_per_cpu + idx];
}

static inline u8 *chunk_data(struct pbt_buffer *b, u32 index)
{
	return b->data + (size_t)index * b->chunk_size;
}

/* Drops counted by NMIs or recursion land in the mapped stats here. */
static void fold_nmi(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	int n;

	if (likely(!atomic_read(&w->nmi_lost)))
		return;
	n = atomic_xchg(&w->nmi_lost, 0);
	stat_add(&b->stats[cpu].lost_nmi, n);
	w->lost = true;
}

/*
 * The next chunk of this CPU's ring, in ring order from w->next: a free one,
 * or (RING_BUFFER) the oldest sealed one, whose events are then lost. A
 * chunk the reader holds is skipped. Returns the index or -1.
 */
static int take_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	struct pbtrace_cpu_stats *st = &b->stats[cpu];
	struct pbtrace_chunk_meta *m;
	u32 k, idx, state;

	for (k = 0; k < b->chunks_per_cpu; k++) {
		idx = (w->next + k) % b->chunks_per_cpu;
		m = chunk_meta(b, cpu, idx);
		/* Acquire: our writes to a FREE chunk follow the reader's put. */
		state = smp_load_acquire(&m->state);
		if (state == PBTRACE_CHUNK_FREE) {
			WRITE_ONCE(m->state, PBTRACE_CHUNK_WRITING);
			return idx;
		}
		if (state != PBTRACE_CHUNK_SEALED)
			continue;	/* READING: the reader has it */
		if (b->fill_policy == PBTRACE_FILL_DISCARD)
			break;
		if (cmpxchg(&m->state, PBTRACE_CHUNK_SEALED,
			    PBTRACE_CHUNK_WRITING) != PBTRACE_CHUNK_SEALED)
			continue;	/* the reader just took it */
		stat_add(&st->chunks_overwritten, 1);
		stat_add(&st->lost_overwritten, m->events);
		w->lost = true;
		return idx;
	}
	if (!w->refused) {
		stat_add(&st->chunks_discarded, 1);
		w->refused = true;
	}
	return -1;
}

/* The Trace.packet record of a chunk's (next) FtraceEventBundle. */
static void open_bundle(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	struct pb_buf *pb = &w->pb;

	w->packet_len = pb_nest_begin(pb, PB_TRACE_PACKET, PBT_OUTER_WIDTH);
	pb_varint(pb, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID,
		  b->seq_base + cpu);
	if (w->lost)
		pb_varint(pb, PB_TRACEPACKET_PREVIOUS_PACKET_DROPPED, 1);
	if (!w->started)
		pb_varint(pb, PB_TRACEPACKET_SEQUENCE_FLAGS,
			  PB_TRACEPACKET_SEQUENCEFLAGS_SEQ_INCREMENTAL_STATE_CLEARED);
	w->bundle_len = pb_nest_begin(pb, PB_TRACEPACKET_FTRACE_EVENTS,
				      PBT_OUTER_WIDTH);
	pb_varint(pb, PB_FTRACEEVENTBUNDLE_CPU, cpu);
	if (w->lost)
		pb_varint(pb, PB_FTRACEEVENTBUNDLE_LOST_EVENTS, 1);
	w->lost = false;
	w->started = true;
}

/* Start a chunk: Trace.packet record, TracePacket header, bundle header. */
static bool open_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	int idx = take_chunk(b, w, cpu);
	struct pb_buf *pb = &w->pb;

	if (idx < 0)
		return false;
	w->cur = idx;
	w->chunk = chunk_data(b, cpu * b->chunks_per_cpu + idx);
	w->events = 0;
	w->refused = false;
	w->switched = false;
	w->interned = false;
	if (w->cs)
		pbt_cs_reset(w->cs);
	pb_init(pb, w->chunk, b->chunk_size);
	open_bundle(b, w, cpu);
	/*
	 * The packet and bundle headers count as written: every byte of a
	 * chunk a reader gets is in bytes_written (the lengths are reserved
	 * here at their full width, so sealing adds nothing).
	 */
	stat_add(&b->stats[cpu].bytes_written, pb_len(pb, w->chunk));
	WRITE_ONCE(b->stats[cpu].online, 1);
	return true;
}

/*
 * Append the gathered CompactSched to the bundle, into the room kept free
 * for it. The value bytes were counted per event, the rest counts here,
 * so the stats count what the chunk holds.
 */
static void append_compact(struct pbt_buffer *b, struct pbt_writer *w,
			   u32 cpu)
{
	struct pbt_compact *cs = w->cs;
	u8 *start = w->pb.p;

	w->pb.end += cs->reserved;
	pbt_cs_write(&w->pb, cs);
	stat_add(&b->stats[cpu].bytes_written,
		 pb_len(&w->pb, start) - (cs->reserved - CS_HEADERS));
	cs->reserved = 0;
}

/*
 * One GenericEventDescriptor per tracepoint kind the chunk used, into the
 * room each took from the chunk's end when it was first written (as
 * CompactSched's columns): a chunk describes its own events, so a chunk
 * the ring overwrote takes no other chunk's descriptions with it.
 */
static void append_descriptors(struct pbt_buffer *b, struct pbt_writer *w,
			       u32 cpu)
{
	u8 *start = w->pb.p;
	u32 i;

	w->pb.end += w->tp_reserved;
	for_each_set_bit(i, w->tp_used, b->nr_tps)
		pb_bytes(&w->pb, PB_FTRACEEVENTBUNDLE_GENERIC_EVENT_DESCRIPTORS,
			 b->tps[i].desc, b->tps[i].desc_len);
	stat_add(&b->stats[cpu].bytes_written, pb_len(&w->pb, start));
	bitmap_zero(w->tp_used, b->nr_tps);
	w->tp_reserved = 0;
}

/* End the open bundle's packet: what seal and a standalone packet do. */
static void close_bundle(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	if (w->cs && w->cs->reserved)
		append_compact(b, w, cpu);
	if (w->tp_reserved)
		append_descriptors(b, w, cpu);
	pb_nest_end(&w->pb, w->bundle_len, PBT_OUTER_WIDTH);
	pb_nest_end(&w->pb, w->packet_len, PBT_OUTER_WIDTH);
}

/* Publish the meta, then the state (release): the chunk is the reader's. */
static void publish_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	struct pbtrace_chunk_meta *m = chunk_meta(b, cpu, w->cur);

	WRITE_ONCE(m->used, pb_len(&w->pb, w->chunk));
	WRITE_ONCE(m->events, w->events);
	WRITE_ONCE(m->cpu, cpu);
	WRITE_ONCE(m->seq, atomic64_inc_return(&b->seq));
	/* Release: a reader that sees SEALED sees the bytes and meta too. */
	smp_store_release(&m->state, PBTRACE_CHUNK_SEALED);
	/* Every event committed here so far is sealed now (see unsealed()). */
	smp_store_release(&w->sealed_written, b->stats[cpu].events_written);
	stat_add(&b->stats[cpu].chunks_sealed, 1);
	w->next = (w->cur + 1) % b->chunks_per_cpu;
	w->chunk = NULL;
	/* Never wake from probe context: the wait queue lock is not ours. */
	irq_work_queue(&b->wake_work);
}

static void seal_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	close_bundle(b, w, cpu);
	publish_chunk(b, w, cpu);
}

/* One FtraceEvent into the open chunk; false (nothing written) if full. */
static __always_inline bool encode_width(struct pb_buf *pb, u64 ts, pid_t pid,
					 pbt_encode_fn encode, const void *arg,
					 unsigned int width)
{
	u8 *start = pb->p;
	u8 *len;

	len = pb_nest_begin(pb, PB_FTRACEEVENTBUNDLE_EVENT, width);
	pb_varint(pb, PB_FTRACEEVENT_TIMESTAMP, ts);
	pb_varint(pb, PB_FTRACEEVENT_PID, (u32)pid);
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
static bool encode_event(struct pb_buf *pb, u64 ts, pid_t pid,
			 pbt_encode_fn encode, const void *arg, int id)
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
		seal_chunk(b, w, cpu);
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

/* One FtraceEvent, sealing a full chunk; false if it could not be written. */
static __always_inline bool write_full(struct pbt_buffer *b,
				       struct pbt_writer *w, u32 cpu, u64 ts,
				       pid_t pid, pbt_encode_fn encode,
				       const void *arg, int id)
{
	struct pbtrace_cpu_stats *st = &b->stats[cpu];
	u8 *start;

	if (!w->chunk && !open_chunk(b, w, cpu))
		goto lost_full;
	start = w->pb.p;
	if (!encode_event(&w->pb, ts, pid, encode, arg, id)) {
		/* An event that does not fit an empty chunk never will. */
		if (!w->events)
			goto too_large;
		seal_chunk(b, w, cpu);
		if (!open_chunk(b, w, cpu))
			goto lost_full;
		start = w->pb.p;
		if (!encode_event(&w->pb, ts, pid, encode, arg, id))
			goto too_large;
	}
	w->events++;
	stat_add(&st->events_written, 1);
	stat_add(&st->bytes_written, w->pb.p - start);
	return true;

lost_full:
	return count_lost(w, &st->lost_full);
too_large:
	return count_lost(w, &st->lost_too_large);
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

	close_bundle(b, w, cpu);
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
			publish_chunk(b, w, cpu);
		return false;
	}
	w->interned = true;
	/* The new bundle infers nothing from the closed one's sched events. */
	w->switched = false;
	if (w->cs)
		pbt_cs_reset(w->cs);
	open_bundle(b, w, cpu);
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

	if (!w->chunk && !open_chunk(b, w, cpu))
		goto lost_full;
	if (put_packet(b, w, cpu, fn, arg))
		return true;
	/* A packet that does not fit an empty chunk never will. */
	if (w->chunk)
		goto too_large;
	if (!open_chunk(b, w, cpu))
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
	if (write_full(b, w, cpu, ts, pid, encode, arg, id) &&
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
		write_full(b, w, cpu, ts, pid, encode, arg, id);
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
	pbt_tp_encode(pb, &r->tp->p.layout, r->rec, r->size);
	pb_nest_end(pb, len, PBT_TP_BODY_WIDTH);
}

/*
 * The first event of a generic kind in a chunk takes room for its
 * descriptor from the chunk's end; false if the chunk has no such room.
 */
static bool tp_described(struct pbt_writer *w, const struct pbt_tp *tp)
{
	u32 need;

	if (!tp->desc || test_bit(tp->index, w->tp_used))
		return true;
	need = 1 + pb_varint_size(tp->desc_len) + tp->desc_len;
	if (w->pb.end - w->pb.p < need)
		return false;
	w->pb.end -= need;
	w->tp_reserved += need;
	__set_bit(tp->index, w->tp_used);
	return true;
}

/* As write_full(), with the descriptor's room taken in each chunk tried. */
static void write_tp(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu,
		     u64 ts, pid_t pid, const struct pbt_tp_rec *r)
{
	struct pbtrace_cpu_stats *st = &b->stats[cpu];
	int tries;
	u8 *start;

	for (tries = 0; tries < 2; tries++) {
		if (!w->chunk && !open_chunk(b, w, cpu)) {
			count_lost(w, &st->lost_full);
			return;
		}
		start = w->pb.p;
		if (tp_described(w, r->tp) &&
		    encode_width(&w->pb, ts, pid, encode_tp, r,
				 PBT_WIDE_EVENT_WIDTH)) {
			w->events++;
			stat_add(&st->events_written, 1);
			stat_add(&st->bytes_written, w->pb.p - start);
			return;
		}
		/* An event that does not fit an empty chunk never will. */
		if (!w->events)
			break;
		seal_chunk(b, w, cpu);
	}
	count_lost(w, &st->lost_too_large);
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
		write_tp(b, w, cpu, ktime_get_boot_fast_ns(), pid, &r);
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

void *pbt_buffer_scratch(struct pbt_buffer *b, u32 cpu)
{
	if (!b->scratch || cpu >= b->nr_cpus)
		return NULL;
	return b->scratch + (size_t)cpu * b->scratch_size;
}

bool pbt_buffer_may_read(const struct pbt_buffer *b)
{
	return !b->member || pbt_may_read(b->owner_uid, b->owner_gid);
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

static void wake_readers(struct irq_work *work)
{
	struct pbt_buffer *b = container_of(work, struct pbt_buffer, wake_work);

	wake_up_interruptible(b->wq);
}

/* Seal a CPU's open chunk if it holds events; no probe may write it now. */
static void flush_cpu(struct pbt_buffer *b, u32 cpu)
{
	struct pbt_writer *w = &b->w[cpu];

	fold_nmi(b, w, cpu);
	if (w->chunk && w->events)
		seal_chunk(b, w, cpu);
}

/*
 * A flush of a started buffer seals each CPU's chunk on that CPU, from an
 * async IPI (irqs off, so it cannot interleave with a probe there), and
 * the flusher sleeps until every CPU has done it. Nothing spins with
 * preemption off waiting for another CPU to answer, and a CPU that does
 * not answer within a second costs a late seal, not a frozen caller.
 */
static void flush_csd_fn(void *info)
{
	struct pbt_writer *w = info;
	struct pbt_buffer *b = w->b;

	flush_cpu(b, smp_processor_id());
	/* Release: a flusher that sees the generation sees the seal. */
	smp_store_release(&w->flushed_gen, READ_ONCE(b->flush_gen));
	/*
	 * An swait queue: its raw lock may be taken in this hard interrupt
	 * also under PREEMPT_RT (mainline since 6.12), where a wait queue's
	 * spinlock_t sleeps. Flushes are serialized: one waiter at most.
	 */
	swake_up_one(&b->flush_wq);
	atomic_set_release(&w->flush_busy, 0);
}

static bool flushed_all(struct pbt_buffer *b, u32 gen)
{
	u32 cpu;

	for_each_online_cpu(cpu) {
		if (cpu >= b->nr_cpus)
			continue;
		/* Acquire: pairs with flush_csd_fn(). */
		if (smp_load_acquire(&b->w[cpu].flushed_gen) != gen)
			return false;
	}
	return true;
}

/* Sleep until no flush IPI of this writer is in flight. */
static void flush_csd_wait(struct pbt_writer *w)
{
	while (atomic_read_acquire(&w->flush_busy))
		schedule_timeout_uninterruptible(1);
}

static void flush_started(struct pbt_buffer *b)
{
	u32 cpu, gen = READ_ONCE(b->flush_gen) + 1;
	struct pbt_writer *w;

	WRITE_ONCE(b->flush_gen, gen);
	for_each_online_cpu(cpu) {
		if (cpu >= b->nr_cpus)
			continue;
		w = &b->w[cpu];
		/* In flight since a flush that timed out: seals when it runs. */
		if (atomic_cmpxchg(&w->flush_busy, 0, 1)) {
			WRITE_ONCE(w->flushed_gen, gen);
			continue;
		}
		if (smp_call_function_single_async(cpu, &w->flush_csd)) {
			atomic_set(&w->flush_busy, 0);
			WRITE_ONCE(w->flushed_gen, gen);
		}
	}
	if (!swait_event_timeout_exclusive(b->flush_wq, flushed_all(b, gen), HZ))
		pr_warn_ratelimited("pbtrace: flush: a CPU did not answer in 1 s, its open chunk is sealed later\n");
}

/*
 * Once deactivated (and the probes synced, see pbtrace.h) no probe writes
 * any more: every CPU is sealed from here. Offline CPUs have no probe
 * either. Serialized by pbt_sessions_lock.
 */
void pbt_buffer_flush(struct pbt_buffer *b)
{
	u32 cpu;

	mutex_lock(&b->flush_lock);
	cpus_read_lock();
	if (b->active)
		flush_started(b);
	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		if (!b->active || !cpu_online(cpu)) {
			/* Never two sealers: a late flush IPI goes first. */
			flush_csd_wait(&b->w[cpu]);
			flush_cpu(b, cpu);
		}
		WRITE_ONCE(b->stats[cpu].online, cpu_online(cpu));
	}
	cpus_read_unlock();
	mutex_unlock(&b->flush_lock);
	wake_up_interruptible(b->wq);
}

/*
 * What watermark.c's rounds ask of the buffer. They never write a chunk
 * themselves: sealing stays with the CPU that owns the ring (or with the
 * flusher once that CPU is offline), as for any flush.
 */

/* Events committed on every CPU so far: a round is due when it moved. */
u64 pbt_buffer_written(struct pbt_buffer *b)
{
	u64 sum = 0;
	u32 cpu;

	for_each_possible_cpu(cpu)
		if (cpu < b->nr_cpus)
			sum += READ_ONCE(b->stats[cpu].events_written);
	return sum;
}

/*
 * Does @cpu hold a committed event no chunk has sealed yet? Asked from
 * another CPU without interrupting it: an idle CPU answers for two loads.
 * Exact for every event whose commit the caller can see (after its grace
 * period, every event stamped before its time): equal counts mean the
 * seal that recorded the count came after that commit, and the acquire
 * (pairs with publish_chunk()) makes the seal's chunk and seq visible.
 */
static bool unsealed(struct pbt_buffer *b, u32 cpu)
{
	u64 written = READ_ONCE(b->stats[cpu].events_written);

	/* Acquire: pairs with publish_chunk(), as said above. */
	return smp_load_acquire(&b->w[cpu].sealed_written) != written;
}

/* One CPU of pbt_buffer_seal_written(); false if it cannot be claimed. */
static bool seal_written_cpu(struct pbt_buffer *b, u32 cpu, u32 gen)
{
	struct pbt_writer *w = &b->w[cpu];

	if (!unsealed(b, cpu)) {
		WRITE_ONCE(w->flushed_gen, gen);
		return true;
	}
	if (!cpu_online(cpu)) {
		/* It runs nothing and stays down (cpus_read_lock). */
		flush_csd_wait(w);
		flush_cpu(b, cpu);
		WRITE_ONCE(w->flushed_gen, gen);
		return true;
	}
	/* A late IPI of an earlier flush seals it when it runs: not ours. */
	if (atomic_cmpxchg(&w->flush_busy, 0, 1)) {
		WRITE_ONCE(w->flushed_gen, gen);
		return false;
	}
	if (smp_call_function_single_async(cpu, &w->flush_csd)) {
		atomic_set(&w->flush_busy, 0);
		WRITE_ONCE(w->flushed_gen, gen);
		return false;
	}
	return true;
}

/*
 * A watermark round's seal: every CPU holding an unsealed event seals its
 * open chunk, an online one on itself by the flush IPI (no other CPU gets
 * one), an offline one here. The caller waited for an RCU grace period
 * after taking its time T, so every event stamped before T is committed;
 * when this returns 0, each of them is in a sealed chunk with a seq below
 * *seq_end, or was counted lost. -EBUSY: a CPU did not seal within a
 * second (it does later); nothing may be claimed for this round.
 */
int pbt_buffer_seal_written(struct pbt_buffer *b, u64 *seq_end)
{
	bool all = true;
	u32 cpu, gen;

	mutex_lock(&b->flush_lock);
	cpus_read_lock();
	gen = READ_ONCE(b->flush_gen) + 1;
	WRITE_ONCE(b->flush_gen, gen);
	for_each_possible_cpu(cpu)
		if (cpu < b->nr_cpus && !seal_written_cpu(b, cpu, gen))
			all = false;
	if (!swait_event_timeout_exclusive(b->flush_wq, flushed_all(b, gen), HZ))
		all = false;
	/*
	 * Every seal above is visible here (acquire in flushed_all() and
	 * unsealed()), and each took its seq before: none is at seq_end.
	 */
	*seq_end = atomic64_read(&b->seq) + 1;
	cpus_read_unlock();
	mutex_unlock(&b->flush_lock);
	return all ? 0 : -EBUSY;
}

/* Every chunk sealed so far has a seq below this. */
u64 pbt_buffer_seq_end(struct pbt_buffer *b)
{
	return atomic64_read(&b->seq) + 1;
}

/*
 * The lowest seq of a chunk sealed and not yet given back (SEALED or
 * READING), U64_MAX if none: every chunk sealed below it has been read
 * and put back, or overwritten (counted lost). O(chunks), for watermark
 * queries, never on the data path.
 */
u64 pbt_buffer_unread_seq(struct pbt_buffer *b)
{
	u32 i, n = pbt_buffer_nr_chunks(b), state;
	u64 low = U64_MAX, seq;

	for (i = 0; i < n; i++) {
		/* Acquire: pairs with publish_chunk(): seq is the sealed one. */
		state = smp_load_acquire(&b->meta[i].state);
		if (state != PBTRACE_CHUNK_SEALED &&
		    state != PBTRACE_CHUNK_READING)
			continue;
		seq = READ_ONCE(b->meta[i].seq);
		if (seq < low)
			low = seq;
	}
	return low;
}

/*
 * The watermark in the mapping for its readers, under a sequence count
 * (odd while it changes) as the kernel's seqcount, but in shared memory.
 * One writer: watermark.c serializes its rounds and the stop.
 */
void pbt_buffer_publish_watermark(struct pbt_buffer *b, u64 ns, u64 seq)
{
	struct pbtrace_mmap_header *h = b->hdr;
	u32 gen = h->watermark_gen;

	WRITE_ONCE(h->watermark_gen, gen + 1);
	smp_wmb();	/* odd before the values: pairs with a reader's rmb */
	WRITE_ONCE(h->watermark_ns, ns);
	WRITE_ONCE(h->watermark_seq, seq);
	smp_wmb();	/* the values before even again */
	WRITE_ONCE(h->watermark_gen, gen + 2);
}

/*
 * Every allocation a buffer keeps is charged to the memcg of the task that
 * creates it (the NEW/SET_SESSION caller, docs/security.md).
 */
static void *vzalloc_account(size_t size)
{
	return __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
}

/*
 * The buffer's own copy of its tracepoints, each generic one with its
 * descriptor built once here, and a bit per tracepoint per writer.
 */
static int init_tps(struct pbt_buffer *b, const struct pbt_buffer_params *p)
{
	size_t longs = BITS_TO_LONGS(p->nr_tps);
	struct pbt_tp *tp;
	u8 *tmp;
	u32 i;

	if (!p->nr_tps)
		return 0;
	b->tps = kvcalloc(p->nr_tps, sizeof(*b->tps), GFP_KERNEL_ACCOUNT);
	b->tp_used = kcalloc(array_size(b->nr_cpus, longs), sizeof(long),
			     GFP_KERNEL_ACCOUNT);
	tmp = kmalloc(PBT_TP_DESC_MAX, GFP_KERNEL);
	if (!b->tps || !b->tp_used || !tmp)
		goto nomem;
	b->nr_tps = p->nr_tps;
	for (i = 0; i < p->nr_tps; i++) {
		tp = &b->tps[i];
		tp->p = p->tps[i];
		tp->b = b;
		tp->index = i;
		if (tp->p.layout.proto_id < PBTRACE_TP_GENERIC_PROTO_BASE)
			continue;	/* Perfetto's own message: no descriptor */
		tp->desc_len = pbt_tp_descriptor(&tp->p.layout, tmp,
						 PBT_TP_DESC_MAX);
		tp->desc = kmemdup(tmp, tp->desc_len, GFP_KERNEL_ACCOUNT);
		if (!tp->desc_len || !tp->desc)
			goto nomem;
	}
	for (i = 0; i < b->nr_cpus; i++)
		b->w[i].tp_used = b->tp_used + i * longs;
	kfree(tmp);
	return 0;
nomem:
	kfree(tmp);
	return -ENOMEM;
}

static void free_tps(struct pbt_buffer *b)
{
	u32 i;

	for (i = 0; b->tps && i < b->nr_tps; i++)
		kfree(b->tps[i].desc);
	kvfree(b->tps);
	kfree(b->tp_used);
}

static int check_params(const struct pbt_buffer_params *p, u32 *chunk_size)
{
	u32 kb = p->chunk_kb ? p->chunk_kb : 16;

	if (kb < 4 || kb > 256 || !is_power_of_2(kb))
		return -EINVAL;
	if (!p->size_kb || p->nr_pids > PBTRACE_MAX_PIDS)
		return -EINVAL;
	if ((u64)p->size_kb * 1024 > PBT_MAX_BUFFER_BYTES)
		return -E2BIG;
	*chunk_size = kb * 1024;
	return 0;
}

/*
 * A pid filter that follows forks keeps a bit per possible pid (512 KiB at
 * PID_MAX_LIMIT): fork and free flip one bit each from probe context, where
 * a list could neither grow nor be searched in bounded time.
 */
static int init_pids(struct pbt_buffer *b, const struct pbt_buffer_params *p)
{
	u32 i;

	b->nr_pids = p->nr_pids;
	for (i = 0; i < p->nr_pids; i++)
		b->pids[i] = p->pids[i];
	if (!p->follow_forks)
		return 0;
	b->followed = vzalloc_account(BITS_TO_LONGS(PID_MAX_LIMIT) * sizeof(long));
	if (!b->followed)
		return -ENOMEM;
	for (i = 0; i < p->nr_pids; i++)
		if ((u32)p->pids[i] < PID_MAX_LIMIT)
			set_bit(p->pids[i], b->followed);
	return 0;
}

/*
 * All buffers together may take half the RAM, a new one half of what is
 * available now. Past that, vmalloc warns, or wakes the OOM killer, which
 * kills processes to make room for a trace buffer.
 */
static int admit_bytes(u64 bytes)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;
	u64 avail = (u64)si_mem_available() << PAGE_SHIFT;

	if (bytes > avail / 2)
		return -ENOMEM;
	if (atomic64_add_return(bytes, &all_buffers_bytes) > ram / 2) {
		atomic64_sub(bytes, &all_buffers_bytes);
		return -ENOMEM;
	}
	return 0;
}

static void free_vmem(struct pbt_buffer *b)
{
	if (!b->vmem)
		return;
	vfree(b->vmem);
	atomic64_sub(b->vsize, &all_buffers_bytes);
}

/* Where the parts of a buffer's mappable area are, and its size. */
struct pbt_ring_geom {
	u32 chunks_per_cpu;
	u64 stats_off, chunks_off, data_off, total;
};

static void ring_geom(const struct pbt_buffer_params *p, u32 chunk_size,
		      struct pbt_ring_geom *g)
{
	u64 per_cpu = (u64)p->size_kb * 1024 / num_possible_cpus();
	u32 nr_chunks;

	g->chunks_per_cpu = max_t(u64, 2, per_cpu / chunk_size);
	nr_chunks = nr_cpu_ids * g->chunks_per_cpu;
	g->stats_off = ALIGN(sizeof(struct pbtrace_mmap_header), 64);
	g->chunks_off = ALIGN(g->stats_off +
			      nr_cpu_ids * sizeof(struct pbtrace_cpu_stats), 64);
	g->data_off = PAGE_ALIGN(g->chunks_off +
				 nr_chunks * sizeof(struct pbtrace_chunk_meta));
	g->total = g->data_off + (u64)nr_chunks * chunk_size;
}

/*
 * Header, stats, chunk table, page-aligned data: one mappable area,
 * charged to the caller's memcg (vmalloc_user() cannot be: its pages are
 * mapped one by one, pbt_mmap()).
 */
static int layout(struct pbt_buffer *b, const struct pbt_buffer_params *p)
{
	struct pbt_ring_geom g;

	ring_geom(p, b->chunk_size, &g);
	b->nr_cpus = nr_cpu_ids;
	b->chunks_per_cpu = g.chunks_per_cpu;
	if (g.total > PBT_MAX_BUFFER_BYTES + g.data_off)
		return -E2BIG;

	if (admit_bytes(g.total))
		return -ENOMEM;
	b->vsize = g.total;
	/*
	 * Past the memcg's limit: ENOMEM and the extack say so, not its OOM
	 * killer, nor a warning a member could fill the kernel log with.
	 */
	b->vmem = __vmalloc(g.total, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
			    __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!b->vmem) {
		atomic64_sub(g.total, &all_buffers_bytes);
		return -ENOMEM;
	}
	b->hdr = b->vmem;
	b->stats = b->vmem + g.stats_off;
	b->meta = b->vmem + g.chunks_off;
	b->data = b->vmem + g.data_off;
	*b->hdr = (struct pbtrace_mmap_header) {
		.magic = PBTRACE_MMAP_MAGIC,
		.version = PBTRACE_MMAP_VERSION,
		.nr_cpus = b->nr_cpus,
		.chunks_per_cpu = b->chunks_per_cpu,
		.chunk_size = b->chunk_size,
		.fill_policy = b->fill_policy,
		.sequence_id_base = b->seq_base,
		.stats_offset = g.stats_off,
		.chunks_offset = g.chunks_off,
		.data_offset = g.data_off,
		.mmap_size = g.total,
		.watermark_ms = p->watermark_ms,
	};
	return 0;
}

/* What vmalloc really takes for @size: its pages and their array. */
static u64 vmalloc_cost(u64 size)
{
	u64 pages = PAGE_ALIGN(size) >> PAGE_SHIFT;

	return (pages << PAGE_SHIFT) +
	       kmalloc_size_roundup(pages * sizeof(struct page *));
}

/* What kmalloc (or kvmalloc's first try) really takes for @size. */
static u64 kmalloc_cost(u64 size)
{
	return size ? kmalloc_size_roundup(size) : 0;
}

/* The bytes of a generic tracepoint's descriptor (init_tps() keeps them). */
static u64 desc_cost(const struct pbt_buffer_params *p, u8 *tmp)
{
	u64 bytes = 0;
	u32 i;

	for (i = 0; i < p->nr_tps; i++)
		if (p->tps[i].layout.proto_id >= PBTRACE_TP_GENERIC_PROTO_BASE)
			bytes += kmalloc_cost(pbt_tp_descriptor(&p->tps[i].layout,
								tmp, PBT_TP_DESC_MAX));
	return bytes;
}

/*
 * Every byte pbt_buffer_create() will allocate for @p, at the size the
 * allocators really take (kmalloc's size classes, vmalloc's pages and
 * their array), held until destroy: what a member's budget counts
 * (session.c). The perf counters of its tracepoints are tracepoint.c's.
 * 0 for parameters create would refuse.
 */
u64 pbt_buffer_cost(const struct pbt_buffer_params *p)
{
	u32 chunk_size, n = nr_cpu_ids, nr_chunks;
	struct pbt_ring_geom g;
	u64 bytes;
	u8 *tmp;

	if (check_params(p, &chunk_size))
		return 0;
	ring_geom(p, chunk_size, &g);
	nr_chunks = n * g.chunks_per_cpu;
	bytes = kmalloc_cost(sizeof(struct pbt_buffer)) +
		vmalloc_cost(g.total) +
		kmalloc_cost(array_size(n, sizeof(struct pbt_writer))) +
		kmalloc_cost(array_size(n, sizeof(u32))) +
		kmalloc_cost(BITS_TO_LONGS(nr_chunks) * sizeof(long));
	if (p->follow_forks)
		bytes += vmalloc_cost(BITS_TO_LONGS(PID_MAX_LIMIT) * sizeof(long));
	if (p->syscalls)
		bytes += kmalloc_cost(BITS_TO_LONGS(NR_syscalls) * sizeof(long));
	if (!p->full_sched)
		bytes += vmalloc_cost(array_size(n, sizeof(struct pbt_compact)));
	if (p->scratch_size)
		bytes += vmalloc_cost(array_size(n, ALIGN(p->scratch_size,
							  SMP_CACHE_BYTES)));
	if (!p->nr_tps)
		return bytes;
	bytes += kmalloc_cost(array_size(p->nr_tps, sizeof(struct pbt_tp))) +
		 kmalloc_cost(array_size(n, BITS_TO_LONGS(p->nr_tps)) *
			      sizeof(long));
	tmp = kmalloc(PBT_TP_DESC_MAX, GFP_KERNEL);
	if (!tmp)	/* as if each took the most it may */
		return bytes + p->nr_tps * kmalloc_cost(PBT_TP_DESC_MAX);
	bytes += desc_cost(p, tmp);
	kfree(tmp);
	return bytes;
}

struct pbt_buffer *pbt_buffer_create(const struct pbt_buffer_params *p,
				     u32 sequence_id_base, wait_queue_head_t *wq)
{
	struct pbt_buffer *b;
	u32 cpu, i;
	int ret;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	ret = check_params(p, &b->chunk_size);
	if (ret)
		goto err;
	b->fill_policy = p->fill_policy == PBTRACE_FILL_DISCARD ?
			 PBTRACE_FILL_DISCARD : PBTRACE_FILL_RING_BUFFER;
	b->seq_base = sequence_id_base;
	b->events = p->events;
	if (p->events & BIT_ULL(PBT_EV_SYS_ENTER))
		b->events |= BIT_ULL(PBT_EV_SYS_STRINGS);
	if ((p->events & BIT_ULL(PBT_EV_SYS_ENTER)) && p->member)
		b->events |= BIT_ULL(PBT_EV_SYS_STRINGS_OMITTED);
	b->member = p->member;
	b->owner_uid = p->owner_uid;
	b->owner_gid = p->owner_gid;
	ret = init_pids(b, p);
	if (ret)
		goto err;
	if (p->syscalls) {
		b->syscalls = bitmap_zalloc(NR_syscalls, GFP_KERNEL_ACCOUNT);
		if (!b->syscalls) {
			ret = -ENOMEM;
			goto err;
		}
		bitmap_copy(b->syscalls, p->syscalls, NR_syscalls);
	}
	b->wq = wq;
	atomic64_set(&b->seq, 0);
	spin_lock_init(&b->read_lock);
	init_irq_work(&b->wake_work, wake_readers);
	init_swait_queue_head(&b->flush_wq);
	mutex_init(&b->flush_lock);

	ret = layout(b, p);
	if (ret)
		goto err;
	b->w = kcalloc(b->nr_cpus, sizeof(*b->w), GFP_KERNEL_ACCOUNT);
	b->rd = kcalloc(b->nr_cpus, sizeof(*b->rd), GFP_KERNEL_ACCOUNT);
	b->ungot = bitmap_zalloc(pbt_buffer_nr_chunks(b), GFP_KERNEL_ACCOUNT);
	if (!p->full_sched)
		b->cs = vzalloc_account(array_size(b->nr_cpus, sizeof(*b->cs)));
	b->scratch_size = ALIGN(p->scratch_size, SMP_CACHE_BYTES);
	if (b->scratch_size)
		b->scratch = vzalloc_account(array_size(b->nr_cpus,
						    b->scratch_size));
	if (!b->w || !b->rd || !b->ungot || (!p->full_sched && !b->cs) ||
	    (b->scratch_size && !b->scratch)) {
		ret = -ENOMEM;
		goto err;
	}
	ret = init_tps(b, p);
	if (ret)
		goto err;
	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		b->w[cpu].b = b;
		b->w[cpu].cs = b->cs ? &b->cs[cpu] : NULL;
		if (b->scratch)
			b->w[cpu].scratch = b->scratch +
					    (size_t)cpu * b->scratch_size;
		INIT_CSD(&b->w[cpu].flush_csd, flush_csd_fn, &b->w[cpu]);
		b->stats[cpu].cpu = cpu;
		b->stats[cpu].online = cpu_online(cpu);
		for (i = 0; i < b->chunks_per_cpu; i++)
			chunk_meta(b, cpu, i)->cpu = cpu;
	}
	spin_lock(&all_buffers_lock);
	list_add(&b->node, &all_buffers);
	spin_unlock(&all_buffers_lock);
	return b;

err:
	vfree(b->scratch);
	free_tps(b);
	vfree(b->cs);
	bitmap_free(b->ungot);
	kfree(b->rd);
	kfree(b->w);
	bitmap_free(b->syscalls);
	vfree(b->followed);
	free_vmem(b);
	kfree(b);
	return ERR_PTR(ret);
}

void pbt_buffer_destroy(struct pbt_buffer *b)
{
	u32 cpu;

	if (!b)
		return;
	WARN_ON_ONCE(b->active);
	spin_lock(&all_buffers_lock);
	list_del(&b->node);
	spin_unlock(&all_buffers_lock);
	for (cpu = 0; cpu < b->nr_cpus; cpu++)
		flush_csd_wait(&b->w[cpu]);
	irq_work_sync(&b->wake_work);
	free_tps(b);
	bitmap_free(b->syscalls);
	bitmap_free(b->ungot);
	/* The scratch is stack.c's only: the files its samples pinned. */
	for (cpu = 0; b->scratch && cpu < b->nr_cpus; cpu++)
		pbt_stack_scratch_release(pbt_buffer_scratch(b, cpu));
	vfree(b->scratch);
	vfree(b->cs);
	kfree(b->rd);
	kfree(b->w);
	vfree(b->followed);
	free_vmem(b);
	kfree(b);
}

unsigned int pbt_buffer_readers(struct pbt_buffer *b, int delta)
{
	lockdep_assert_held(&pbt_sessions_lock);
	b->readers += delta;
	return b->readers;
}

void pbt_buffer_retire(struct pbt_buffer *b)
{
	lockdep_assert_held(&pbt_sessions_lock);
	WRITE_ONCE(b->retired, true);
}

bool pbt_buffer_retired(struct pbt_buffer *b)
{
	return READ_ONCE(b->retired);
}

void pbt_buffer_stats(struct pbt_buffer *b, int cpu,
		      struct pbtrace_cpu_stats *out)
{
	if (cpu < 0 || cpu >= b->nr_cpus) {
		memset(out, 0, sizeof(*out));
		return;
	}
	memcpy(out, &b->stats[cpu], sizeof(*out));
	/* Drops not yet folded in by the writer still count. */
	out->lost_nmi += atomic_read(&b->w[cpu].nmi_lost);
}

void *pbt_buffer_vmem(struct pbt_buffer *b, size_t *size)
{
	*size = b->vsize;
	return b->vmem;
}

u32 pbt_buffer_nr_chunks(struct pbt_buffer *b)
{
	return b->nr_cpus * b->chunks_per_cpu;
}

/*
 * Reading in O(1) per chunk. A CPU's writer fills its ring in ring order,
 * so its sealed chunks are in seal order from the writer's position on,
 * and the reader, oldest first, leaves the chunks it has read behind its
 * cursor rd. The oldest unread chunk of a CPU is then one of two:
 *
 *  - the first sealed chunk from rd on, before the writer's position
 *    (the writer is ahead of the reader: the usual case);
 *  - the first sealed chunk from the writer's position on, past the ones
 *    the writer and readers hold (the writer lapped the reader and
 *    overwrote what was behind rd, RING_BUFFER), not past a free one.
 *
 * Both walks stop within the few chunks someone holds, so a drained ring
 * costs nothing to look at. A chunk put back unread (a reader died) is
 * out of ring order: while any is, that CPU's ring is scanned whole.
 */
static int first_sealed(struct pbt_buffer *b, u32 cpu, u32 from, u32 stop,
			bool stop_at_free)
{
	u32 k, idx, state;

	for (k = 0; k < b->chunks_per_cpu; k++) {
		idx = (from + k) % b->chunks_per_cpu;
		if (k && idx == stop)
			break;
		/* Acquire: pairs with seal_chunk(): seq is the sealed one. */
		state = smp_load_acquire(&chunk_meta(b, cpu, idx)->state);
		if (state == PBTRACE_CHUNK_SEALED)
			return idx;
		if (state == PBTRACE_CHUNK_FREE && stop_at_free)
			break;
	}
	return -1;
}

static int lowest_seq_of_cpu(struct pbt_buffer *b, u32 cpu)
{
	u64 best_seq = U64_MAX;
	int best = -1;
	u32 i;

	for (i = 0; i < b->chunks_per_cpu; i++) {
		struct pbtrace_chunk_meta *m = chunk_meta(b, cpu, i);

		/* Acquire: pairs with seal_chunk(): seq is the sealed one. */
		if (smp_load_acquire(&m->state) == PBTRACE_CHUNK_SEALED &&
		    READ_ONCE(m->seq) < best_seq) {
			best_seq = READ_ONCE(m->seq);
			best = i;
		}
	}
	return best;
}

/* Index in this CPU's ring of its oldest sealed chunk, or -1. */
static int oldest_of_cpu(struct pbt_buffer *b, u32 cpu, u64 *seq)
{
	u32 wn = READ_ONCE(b->w[cpu].next) % b->chunks_per_cpu;
	u32 rd = READ_ONCE(b->rd[cpu]) % b->chunks_per_cpu;
	int ahead, lapped, best;

	if (atomic_read(&b->nr_ungot)) {
		best = lowest_seq_of_cpu(b, cpu);
	} else {
		ahead = rd == wn ? -1 : first_sealed(b, cpu, rd, wn, false);
		lapped = first_sealed(b, cpu, wn, wn, true);
		best = ahead;
		if (best < 0 || (lapped >= 0 &&
				 READ_ONCE(chunk_meta(b, cpu, lapped)->seq) <
				 READ_ONCE(chunk_meta(b, cpu, ahead)->seq)))
			best = lapped;
	}
	if (best >= 0)
		*seq = READ_ONCE(chunk_meta(b, cpu, best)->seq);
	return best;
}

/* The sealed chunk with the lowest seq of all CPUs, or -1: O(CPUs). */
static int oldest_sealed(struct pbt_buffer *b, u64 *seq)
{
	u64 best_seq = U64_MAX, s;
	int best = -1, i;
	u32 cpu;

	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		i = oldest_of_cpu(b, cpu, &s);
		if (i >= 0 && s < best_seq) {
			best_seq = s;
			best = cpu * b->chunks_per_cpu + i;
		}
	}
	*seq = best_seq;
	return best;
}

/* A chunk taken: the cursor moves past it; a retaken put-back one counts. */
static void taken(struct pbt_buffer *b, u32 index)
{
	u32 cpu = index / b->chunks_per_cpu;

	WRITE_ONCE(b->rd[cpu], (index % b->chunks_per_cpu + 1) % b->chunks_per_cpu);
	if (unlikely(atomic_read(&b->nr_ungot)) &&
	    test_and_clear_bit(index, b->ungot))
		atomic_dec(&b->nr_ungot);
}

int pbt_buffer_get_chunk(struct pbt_buffer *b, struct pbtrace_chunk_req *req)
{
	struct pbtrace_chunk_meta *m;
	int i, tries;
	u64 seq;

	for (tries = 0; tries < 16; tries++) {
		i = oldest_sealed(b, &seq);
		if (i < 0)
			return -EAGAIN;
		m = &b->meta[i];
		if (cmpxchg(&m->state, PBTRACE_CHUNK_SEALED,
			    PBTRACE_CHUNK_READING) != PBTRACE_CHUNK_SEALED)
			continue;
		/*
		 * Overwritten and resealed since we looked: it is now the
		 * newest of its CPU, so older ones must go first.
		 */
		if (READ_ONCE(m->seq) != seq && tries < 15) {
			cmpxchg(&m->state, PBTRACE_CHUNK_READING,
				PBTRACE_CHUNK_SEALED);
			continue;
		}
		taken(b, i);
		req->index = i;
		req->cpu = i / b->chunks_per_cpu;
		req->offset = b->hdr->data_offset + (u64)i * b->chunk_size;
		req->len = READ_ONCE(m->used);
		req->events = READ_ONCE(m->events);
		req->seq = READ_ONCE(m->seq);
		return 0;
	}
	return -EAGAIN;
}

int pbt_buffer_put_chunk(struct pbt_buffer *b, u32 index)
{
	struct pbtrace_chunk_meta *m;

	if (index >= pbt_buffer_nr_chunks(b))
		return -EINVAL;
	m = &b->meta[index];
	if (cmpxchg(&m->state, PBTRACE_CHUNK_READING,
		    PBTRACE_CHUNK_FREE) != PBTRACE_CHUNK_READING)
		return -EINVAL;
	spin_lock(&b->read_lock);
	stat_add(&b->stats[index / b->chunks_per_cpu].chunks_read, 1);
	spin_unlock(&b->read_lock);
	return 0;
}

void pbt_buffer_unget_chunk(struct pbt_buffer *b, u32 index)
{
	if (index >= pbt_buffer_nr_chunks(b))
		return;
	/*
	 * Counted before it is visible as sealed (cmpxchg is fully ordered),
	 * so no reader walks past it in ring order.
	 */
	if (!test_and_set_bit(index, b->ungot))
		atomic_inc(&b->nr_ungot);
	if (cmpxchg(&b->meta[index].state, PBTRACE_CHUNK_READING,
		    PBTRACE_CHUNK_SEALED) != PBTRACE_CHUNK_READING &&
	    test_and_clear_bit(index, b->ungot))
		atomic_dec(&b->nr_ungot);
	wake_up_interruptible(b->wq);
}

bool pbt_buffer_has_sealed(struct pbt_buffer *b)
{
	u64 seq;

	return oldest_sealed(b, &seq) >= 0;
}

/*
 * CPU hotplug. Buffers exist for every possible CPU; a CPU going down seals
 * its open chunk (so its data is readable at once) and is marked offline.
 */
static int cpu_online_cb(unsigned int cpu)
{
	struct pbt_buffer *b;

	spin_lock(&all_buffers_lock);
	list_for_each_entry(b, &all_buffers, node)
		if (cpu < b->nr_cpus)
			WRITE_ONCE(b->stats[cpu].online, 1);
	spin_unlock(&all_buffers_lock);
	return 0;
}

static int cpu_offline_cb(unsigned int cpu)
{
	struct pbt_buffer *b;
	unsigned long flags;

	spin_lock(&all_buffers_lock);
	list_for_each_entry(b, &all_buffers, node) {
		if (cpu >= b->nr_cpus)
			continue;
		/*
		 * Teardown of a dynamic AP state runs on the dying CPU itself.
		 * Interrupts off around the seal, as for a probe: the spinlock
		 * does not disable them under PREEMPT_RT.
		 */
		if (cpu == smp_processor_id()) {
			local_irq_save(flags);
			flush_cpu(b, cpu);
			local_irq_restore(flags);
		}
		WRITE_ONCE(b->stats[cpu].online, 0);
	}
	spin_unlock(&all_buffers_lock);
	return 0;
}

int pbt_buffers_init(void)
{
	int ret;

	rcu_assign_pointer(active_set, &active_sets[0]);
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "pbtrace:online",
					cpu_online_cb, cpu_offline_cb);
	if (ret < 0)
		return ret;
	hp_state = ret;
	return 0;
}

void pbt_buffers_exit(void)
{
	if (hp_state >= 0)
		cpuhp_remove_state_nocalls(hp_state);
	hp_state = -1;
}
