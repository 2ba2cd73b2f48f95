// SPDX-License-Identifier: GPL-2.0
/*
 * A session buffer's setup and teardown: its cost, its one vmalloc area
 * (buffer.h has the layout and the chunk states), its filters and
 * tracepoints, and CPU hotplug. The probes' side is write.c and chunk.c,
 * sealing from outside flush.c, the readers' side reader.c.
 */
#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <asm/unistd.h>

#include "buffer.h"
#include "compat.h"
#include "core/tp_encode.h"

static LIST_HEAD(all_buffers);
static DEFINE_SPINLOCK(all_buffers_lock);
/* Bytes of every buffer's vmalloc area, for admit_bytes(). */
static atomic64_t all_buffers_bytes = ATOMIC64_INIT(0);
static int hp_state = -1;

/*
 * Every allocation a buffer keeps is charged to the memcg of the task that
 * creates it (the NEW/SET_SESSION caller, docs/security.md).
 */
static void *vzalloc_account(size_t size)
{
	return __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
}

/* @tp's layout compiled for the probe, when it compiles (tp_encode.h). */
static int init_fast(struct pbt_tp *tp)
{
	u32 nr = pbt_tp_fast_compile(&tp->p.layout, NULL);

	if (!nr)
		return 0;
	tp->fast = kmalloc(pbt_tp_fast_size(nr), GFP_KERNEL_ACCOUNT);
	if (!tp->fast)
		return -ENOMEM;
	pbt_tp_fast_compile(&tp->p.layout, tp->fast);
	return 0;
}

/*
 * The buffer's own copy of its tracepoints, each compiled for the probe
 * where it can be, each generic one with its descriptor built once here,
 * and a bit per tracepoint per writer.
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
		if (init_fast(tp))
			goto nomem;
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

	for (i = 0; b->tps && i < b->nr_tps; i++) {
		kfree(b->tps[i].desc);
		kfree(b->tps[i].fast);
	}
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

/*
 * The bytes of the tracepoints' compiled layouts and generic descriptors
 * (init_tps() keeps them).
 */
static u64 desc_cost(const struct pbt_buffer_params *p, u8 *tmp)
{
	u64 bytes = 0;
	u32 i, nr;

	for (i = 0; i < p->nr_tps; i++) {
		nr = pbt_tp_fast_compile(&p->tps[i].layout, NULL);
		if (nr)
			bytes += kmalloc_cost(pbt_tp_fast_size(nr));
		if (p->tps[i].layout.proto_id >= PBTRACE_TP_GENERIC_PROTO_BASE)
			bytes += kmalloc_cost(pbt_tp_descriptor(&p->tps[i].layout,
								tmp, PBT_TP_DESC_MAX));
	}
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
	init_irq_work(&b->wake_work, pbt_wake_readers);
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
		INIT_CSD(&b->w[cpu].flush_csd, pbt_flush_csd_fn, &b->w[cpu]);
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
		pbt_flush_csd_wait(&b->w[cpu]);
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
			pbt_flush_cpu(b, cpu);
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

	pbt_write_init();
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
