// SPDX-License-Identifier: GPL-2.0
/*
 * A chunk's life on its CPU's writer: taken from the ring, opened with its
 * Trace.packet and FtraceEventBundle headers, closed with the CompactSched
 * and descriptors it gathered, and published to the reader (buffer.h has
 * the states).
 */
#include <linux/bitmap.h>
#include <linux/irq_work.h>

#include "buffer.h"
#include "pbtrace_fields.h"

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
void pbt_open_bundle(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
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
bool pbt_open_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
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
	pbt_open_bundle(b, w, cpu);
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
void pbt_close_bundle(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	if (w->cs && w->cs->reserved)
		append_compact(b, w, cpu);
	if (w->tp_reserved)
		append_descriptors(b, w, cpu);
	pb_nest_end(&w->pb, w->bundle_len, PBT_OUTER_WIDTH);
	pb_nest_end(&w->pb, w->packet_len, PBT_OUTER_WIDTH);
}

/* Publish the meta, then the state (release): the chunk is the reader's. */
void pbt_publish_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
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

void pbt_seal_chunk(struct pbt_buffer *b, struct pbt_writer *w, u32 cpu)
{
	pbt_close_bundle(b, w, cpu);
	pbt_publish_chunk(b, w, cpu);
}
