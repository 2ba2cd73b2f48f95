// SPDX-License-Identifier: GPL-2.0
/*
 * A buffer's live watermark (PBTRACE_A_BUFFER_WATERMARK_MS): a time W and
 * a seal count S such that every event of the buffer stamped before W is
 * in a sealed chunk whose seq is below S, or was counted lost. A reader
 * that holds every chunk below S may print in time order up to W and will
 * never meet an earlier event afterwards, from any CPU. (perf's readers
 * wake on a byte watermark and order CPUs by rounds of what they read;
 * ftrace merges what is committed; an event still being written on
 * another CPU may sort in later for both.)
 *
 * A round, at most once a period, and only when some CPU wrote since the
 * last one began:
 *
 *  1. T: the probes' clock; then synchronize_rcu(), or with
 *     PBTRACE_A_BUFFER_WATERMARK_EXPEDITED synchronize_rcu_expedited():
 *     the same guarantee, an IPI to each CPU that is neither idle nor in
 *     nohz_full user mode instead of waiting for their ticks, so a few ms
 *     rather than ~1.5 normal grace periods, and far less under CPU load
 *     (rcupdate.rcu_normal=1 makes it normal again). A probe writes with
 *     interrupts (or preemption) off from before it reads the clock until
 *     after its commit: one RCU read side. Once the grace period is over,
 *     every event stamped before T is committed and visible here, whichever
 *     CPU wrote it: an idle CPU, which RCU knows to be idle without waking
 *     it; a writer that an interrupt cut into (both commit before the
 *     grace period ends); sys_enter and its strings, written one after the
 *     other under one preempt_disable(). NMIs never write (counted lost).
 *  2. pbt_buffer_seal_written(): a CPU whose committed count is the count
 *     its last seal recorded holds nothing unsealed, and says so for two
 *     loads; the others seal their open chunk themselves (the flush IPI),
 *     offline ones are sealed directly (cpus_read_lock keeps them down).
 *  3. (T - PBT_WM_SKEW_NS, S) goes into the mapping and the round history.
 *
 * The read watermark (GET_WATERMARK's, what tracectl trace prints up to)
 * is the newest kept round whose chunks below S have all been read and
 * put back (or overwritten): traced puts a chunk back after it wrote it
 * to its file, so whoever reads that file may print up to it.
 */
#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "pbtrace.h"

/*
 * How far two CPUs' readings of ktime_get_boot_fast_ns() may disagree:
 * the fast clock may read a few ns behind across a timekeeping update
 * (its kerneldoc), and the TSCs Linux keeps using agree to within
 * hundreds of cycles (else it marks them unstable). So an event stamped
 * after T on another CPU is still at or above W.
 */
#define PBT_WM_SKEW_NS (50 * NSEC_PER_USEC)
#define PBT_WM_ROUNDS 16	/* finished rounds kept for read queries */

/*
 * Rounds run on their own unbound, high-priority workqueue: a round is a
 * few loads, a grace period's sleep and a few IPIs, and on a CPU-bound
 * machine a normal kworker would wait behind the load at every period,
 * delaying every line a live view prints. Unbound, so the period's timer
 * goes to a CPU that is awake rather than waking an idle one.
 */
static struct workqueue_struct *wm_wq;

struct pbt_wm_round {
	u64 ns;			/* every event stamped before it ... */
	u64 seq;		/* ... is in a chunk with a seq below this */
};

struct pbt_watermark {
	struct pbt_buffer *b;
	struct delayed_work work;
	unsigned long period;		/* jiffies, at least 1 */
	bool expedited;			/* synchronize_rcu_expedited() */
	unsigned long last_start;	/* jiffies, the last round's */
	u64 done_written;		/* events written when it began */
	atomic_t kicked;		/* a round now, new events or not */
	bool stopped;			/* no kick requeues it (sessions lock) */
	spinlock_t lock;		/* rounds, nr, read_ns */
	struct pbt_wm_round rounds[PBT_WM_ROUNDS];	/* [0] the newest */
	unsigned int nr;
	u64 read_ns;			/* the highest read watermark told */
};

/* A finished round, for readers of the mapping and for read queries. */
static void record(struct pbt_watermark *wm, u64 ns, u64 seq)
{
	spin_lock(&wm->lock);
	/* The work may run on another CPU each time: never back. */
	if (wm->nr && ns < wm->rounds[0].ns)
		ns = wm->rounds[0].ns;
	memmove(&wm->rounds[1], &wm->rounds[0],
		(PBT_WM_ROUNDS - 1) * sizeof(wm->rounds[0]));
	wm->rounds[0] = (struct pbt_wm_round){ .ns = ns, .seq = seq };
	if (wm->nr < PBT_WM_ROUNDS)
		wm->nr++;
	spin_unlock(&wm->lock);
	/* One writer: rounds run in this work, the last in stop after it. */
	pbt_buffer_publish_watermark(wm->b, ns, seq);
}

static void run_round(struct pbt_watermark *wm, u64 written)
{
	u64 t, seq;

	wm->last_start = jiffies;
	t = ktime_get_boot_fast_ns();
	if (wm->expedited)
		synchronize_rcu_expedited();
	else
		synchronize_rcu();
	if (pbt_buffer_seal_written(wm->b, &seq))
		return;		/* a CPU did not answer: claim nothing yet */
	/*
	 * What the count held was committed, so stamped, before T: with
	 * nothing new after, this round covers it and none is due.
	 */
	wm->done_written = written;
	record(wm, t > PBT_WM_SKEW_NS ? t - PBT_WM_SKEW_NS : 0, seq);
}

static void round_work(struct work_struct *work)
{
	struct pbt_watermark *wm = container_of(to_delayed_work(work),
						struct pbt_watermark, work);
	u64 written = pbt_buffer_written(wm->b);
	unsigned long next = wm->period;

	/* No CPU wrote since the last round began: nothing to claim. */
	if (atomic_xchg(&wm->kicked, 0) || written != wm->done_written) {
		run_round(wm, written);
		next = wm->last_start + wm->period - jiffies;
		if ((long)next < 0 || next > wm->period)
			next = 0;	/* the round took a period: next one now */
	}
	queue_delayed_work(wm_wq, &wm->work, next);
}

struct pbt_watermark *pbt_watermark_start(struct pbt_buffer *b, u32 period_ms,
					  bool expedited)
{
	struct pbt_watermark *wm = kzalloc(sizeof(*wm), GFP_KERNEL_ACCOUNT);

	if (!wm)
		return NULL;
	wm->b = b;
	wm->period = max(1UL, msecs_to_jiffies(period_ms));
	wm->expedited = expedited;
	spin_lock_init(&wm->lock);
	INIT_DELAYED_WORK(&wm->work, round_work);
	queue_delayed_work(wm_wq, &wm->work, wm->period);
	return wm;
}

/*
 * FLUSH_SESSION: a round at once, even with nothing new written, so the
 * watermark passes the moment of the flush (a reader that saw its command
 * exit asks for it, to print the last lines without waiting). Under
 * pbt_sessions_lock, as stop: no kick after it.
 */
void pbt_watermark_kick(struct pbt_watermark *wm)
{
	if (!wm || wm->stopped)
		return;
	atomic_set(&wm->kicked, 1);
	mod_delayed_work(wm_wq, &wm->work, 0);
}

/*
 * After the session's final flush: no probe writes and every CPU is
 * sealed, so every event is below the last seq, whatever its time.
 */
void pbt_watermark_stop(struct pbt_watermark *wm)
{
	if (!wm)
		return;
	wm->stopped = true;
	cancel_delayed_work_sync(&wm->work);
	record(wm, U64_MAX, pbt_buffer_seq_end(wm->b));
}

void pbt_watermark_free(struct pbt_watermark *wm)
{
	if (!wm)
		return;
	cancel_delayed_work_sync(&wm->work);
	kfree(wm);
}

void pbt_watermark_read(struct pbt_watermark *wm, u64 *published, u64 *read)
{
	struct pbt_wm_round r[PBT_WM_ROUNDS];
	unsigned int i, nr;
	u64 unread, best = 0;

	spin_lock(&wm->lock);
	nr = wm->nr;
	memcpy(r, wm->rounds, nr * sizeof(r[0]));
	spin_unlock(&wm->lock);
	/*
	 * Looked at after the copy: a kept round's chunks were all sealed
	 * before it was kept, so none of them can be missed here.
	 */
	unread = pbt_buffer_unread_seq(wm->b);
	for (i = 0; i < nr; i++) {
		if (r[i].seq <= unread) {
			best = r[i].ns;
			break;
		}
	}
	spin_lock(&wm->lock);
	if (best > wm->read_ns)
		wm->read_ns = best;
	*read = wm->read_ns;
	*published = wm->nr ? wm->rounds[0].ns : 0;
	spin_unlock(&wm->lock);
}

int pbt_watermarks_init(void)
{
	wm_wq = alloc_workqueue("pbtrace_wm", WQ_UNBOUND | WQ_HIGHPRI, 0);
	return wm_wq ? 0 : -ENOMEM;
}

/* After every session is gone: no round is queued any more. */
void pbt_watermarks_exit(void)
{
	if (wm_wq)
		destroy_workqueue(wm_wq);
	wm_wq = NULL;
}

/* What pbt_watermark_start() allocates, for a member's budget. */
u64 pbt_watermark_cost(void)
{
	return kmalloc_size_roundup(sizeof(struct pbt_watermark));
}
