// SPDX-License-Identifier: GPL-2.0
/*
 * The readers' side of a buffer (device.c, the relay): the oldest sealed
 * chunk taken, put back read or unread, and what is still unread.
 */
#include <linux/bitmap.h>
#include <linux/irq_work.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "buffer.h"

void pbt_wake_readers(struct irq_work *work)
{
	struct pbt_buffer *b = container_of(work, struct pbt_buffer, wake_work);

	wake_up_interruptible(b->wq);
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
		/* Acquire: pairs with pbt_publish_chunk(): seq is the sealed one. */
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
		/* Acquire: pairs with pbt_seal_chunk(): seq is the sealed one. */
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

		/* Acquire: pairs with pbt_seal_chunk(): seq is the sealed one. */
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
