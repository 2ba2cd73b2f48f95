// SPDX-License-Identifier: GPL-2.0
/*
 * Sealing from outside the probes: a flush (stop, FLUSH_SESSION), a CPU
 * going down, and watermark.c's rounds. Each CPU's chunk is sealed on
 * that CPU, or by the flusher once it is offline.
 */
#include <linux/cpu.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/swait.h>

#include "buffer.h"

/* Seal a CPU's open chunk if it holds events; no probe may write it now. */
void pbt_flush_cpu(struct pbt_buffer *b, u32 cpu)
{
	struct pbt_writer *w = &b->w[cpu];

	fold_nmi(b, w, cpu);
	if (w->chunk && w->events)
		pbt_seal_chunk(b, w, cpu);
}

/*
 * A flush of a started buffer seals each CPU's chunk on that CPU, from an
 * async IPI (irqs off, so it cannot interleave with a probe there), and
 * the flusher sleeps until every CPU has done it. Nothing spins with
 * preemption off waiting for another CPU to answer, and a CPU that does
 * not answer within a second costs a late seal, not a frozen caller.
 */
void pbt_flush_csd_fn(void *info)
{
	struct pbt_writer *w = info;
	struct pbt_buffer *b = w->b;

	pbt_flush_cpu(b, smp_processor_id());
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
		/* Acquire: pairs with pbt_flush_csd_fn(). */
		if (smp_load_acquire(&b->w[cpu].flushed_gen) != gen)
			return false;
	}
	return true;
}

/* Sleep until no flush IPI of this writer is in flight. */
void pbt_flush_csd_wait(struct pbt_writer *w)
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
			pbt_flush_csd_wait(&b->w[cpu]);
			pbt_flush_cpu(b, cpu);
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
 * (pairs with pbt_publish_chunk()) makes the seal's chunk and seq visible.
 */
static bool unsealed(struct pbt_buffer *b, u32 cpu)
{
	u64 written = READ_ONCE(b->stats[cpu].events_written);

	/* Acquire: pairs with pbt_publish_chunk(), as said above. */
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
		pbt_flush_csd_wait(w);
		pbt_flush_cpu(b, cpu);
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
