/* SPDX-License-Identifier: GPL-2.0 */
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
#ifndef PBT_BUFFER_H
#define PBT_BUFFER_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/swait.h>
#include <linux/wait.h>

#include "pbtrace.h"
#include "core/pb.h"
#include "core/compact.h"

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

static inline void stat_add(__u64 *p, u64 v)
{
	WRITE_ONCE(*p, *p + v);
}

/* An event not written: counted once, and the next packet says so. */
static inline bool count_lost(struct pbt_writer *w, __u64 *counter)
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
static inline void fold_nmi(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	int n;

	if (likely(!atomic_read(&w->nmi_lost)))
		return;
	n = atomic_xchg(&w->nmi_lost, 0);
	stat_add(&b->stats[cpu].lost_nmi, n);
	w->lost = true;
}

/* chunk.c: a chunk's life on its CPU's writer. */
void pbt_open_bundle(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu);
bool pbt_open_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu);
void pbt_close_bundle(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu);
void pbt_publish_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu);
void pbt_seal_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu);

/* write.c: the probes' side. */
void pbt_write_init(void);

/* flush.c: sealing from outside the probes. */
void pbt_flush_cpu(struct pbt_buffer *b, u32 cpu);
void pbt_flush_csd_fn(void *info);
void pbt_flush_csd_wait(struct pbt_writer *w);

/* reader.c: the readers' side. */
void pbt_wake_readers(struct irq_work *work);

#endif /* PBT_BUFFER_H */
