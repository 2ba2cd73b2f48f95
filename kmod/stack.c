// SPDX-License-Identifier: GPL-2.0
/*
 * Call stacks on events: capture the stack of the task a tracepoint fired
 * in and write it as a Perfetto PerfSample packet (linux.perf data source),
 * its frames, mappings and callstack interned per chunk.
 *
 * Kernel frames come from stack_trace_save() (stack_trace_save_regs() is
 * not exported), with the tracer's own frames dropped, and are named here
 * (sprint_symbol) once per chunk. User frames are a frame-pointer walk of
 * the task's user stack with copy_from_user_nofault(); their mapping comes
 * from find_vma() under mmap_read_trylock(). A file's mapping is named by
 * its identity only, "[inode INO dev MAJ:MIN]", and the file pinned: its
 * path is looked up in process context, when traced asks for it
 * (pbt_stack_file_path(), PBTRACE_IOC_MAPPING_PATH) as it copies the
 * chunk. d_path() here could spin forever on mount_lock or rename_lock,
 * which the task this probe interrupted may hold for write. userspace
 * names the frames (ModuleSymbols). Everything is bounded and nothing
 * sleeps: the caller runs with interrupts off (docs/stacks.md).
 */
#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "pbtrace.h"
#include "core/pb.h"
#include "pbtrace_fields.h"

#define STK_DEPTH 64		/* frames kept of each of kernel and user */
/* Intern tables, open addressing; at 3/4 full the chunk is sealed. */
#define STK_FRAMES 512
#define STK_STRINGS 512
#define STK_MAPPINGS 64
#define STK_STACKS 256
#define STK_FILES 128		/* files pinned per CPU, for their paths */
#define STK_NAME_LEN 64		/* "[inode INO dev MAJ:MIN]" */

enum stk_kind { STK_FRAME, STK_NAME, STK_PATH, STK_MAPPING, STK_STACK, STK_NR };

struct stk_ent {
	u64 key;
	u64 aux;		/* second half of the key (0 if none) */
	u32 iid;		/* 0: empty slot */
};

struct stk_table {
	struct stk_ent *e;
	u32 size;
};

/*
 * A file a mapping of this CPU's samples is in, pinned until the buffer
 * is destroyed, so that traced can ask for its path when it copies the
 * chunk, even after the process exited or unmapped it (as perf's MMAP
 * records keep it).
 */
struct stk_file {
	struct file *file;
	unsigned long ino;
	dev_t dev;
};

/* One buffer's per-CPU scratch (pbt_buffer_packet()'s), see pbtrace.h. */
struct pbt_stack_scratch {
	u32 next_iid[STK_NR];
	u32 used[STK_NR];
	struct stk_ent frames[STK_FRAMES];
	struct stk_ent strings[STK_STRINGS];	/* names and paths */
	struct stk_ent mappings[STK_MAPPINGS];
	struct stk_ent stacks[STK_STACKS];
	/* The sample being written, captured before its packet. */
	unsigned long kips[STK_DEPTH];
	u64 uips[STK_DEPTH];
	u32 nr_k, nr_u;
	u64 fids[2 * STK_DEPTH];
	char sym[KSYM_SYMBOL_LEN];
	char name[STK_NAME_LEN];
	/*
	 * Only added to, by this CPU's writer; read from any CPU by
	 * pbt_stack_file_path(): an entry is whole before nr_files counts
	 * it (release/acquire). Not cleared with the chunk's tables.
	 */
	struct stk_file files[STK_FILES];
	u32 nr_files;
};

/* What one sample's packet needs beyond the scratch. */
struct stk_sample {
	struct pbt_stack_scratch *s;
	struct pt_regs *regs;	/* perf's, or NULL */
	u32 flags;		/* PBTRACE_TP_*_STACK */
	bool omitted;		/* user frames left out: pbt_buffer_may_read() */
	bool captured;		/* into s: a retry in a new chunk reuses it */
	u64 ts;
	u32 cpu, count;
	pid_t pid, tid;
	struct mm_struct *mm;	/* mmap_lock read-held, or NULL */
};

/*
 * mmap_lock is released from an irq_work, as BPF's stack maps do: an
 * up_read() here could wake a writer from inside the scheduler (the
 * caller may hold a runqueue lock). One pending release per CPU; while
 * it is pending, user frames go without mappings (counted).
 */
struct stk_unlock {
	struct irq_work work;
	struct mm_struct *mm;
};

static DEFINE_PER_CPU(struct stk_unlock, stk_unlock);
static unsigned long tp_event_size;	/* perf_tp_event's, from kallsyms */
static atomic64_t stk_no_mapping = ATOMIC64_INIT(0);
static atomic64_t stk_unpinned = ATOMIC64_INIT(0);

static void stk_unlock_fn(struct irq_work *work)
{
	struct stk_unlock *u = container_of(work, struct stk_unlock, work);

	mmap_read_unlock_non_owner(u->mm);
}

size_t pbt_stack_scratch_size(void)
{
	return sizeof(struct pbt_stack_scratch);
}

u64 pbt_stack_no_mapping(void)
{
	return atomic64_read(&stk_no_mapping);
}

u64 pbt_stack_unpinned(void)
{
	return atomic64_read(&stk_unpinned);
}

/* The buffer is gone: no writer, no reader. Process context. */
void pbt_stack_scratch_release(void *scratch)
{
	struct pbt_stack_scratch *s = scratch;
	u32 i;

	for (i = 0; i < s->nr_files; i++)
		fput(s->files[i].file);
	s->nr_files = 0;
}

/*
 * The path of the file (@dev, @ino) that a sample in @b named, as d_path()
 * gives it to the caller (relative to its root, as /proc/PID/maps shows
 * it): into @buf, *@path pointing into it. -ENOENT if no sample pinned
 * it. Process context: the caller holds a reference on @b.
 */
int pbt_stack_file_path(struct pbt_buffer *b, dev_t dev, unsigned long ino,
			char *buf, int size, char **path)
{
	struct pbt_stack_scratch *s;
	u32 cpu, i, n;
	char *p;

	for (cpu = 0; (s = pbt_buffer_scratch(b, cpu)); cpu++) {
		/* Pairs with the release in pin_file(). */
		n = smp_load_acquire(&s->nr_files);
		for (i = 0; i < n; i++) {
			if (s->files[i].ino != ino || s->files[i].dev != dev)
				continue;
			p = d_path(&s->files[i].file->f_path, buf, size);
			if (IS_ERR(p))
				return PTR_ERR(p);
			*path = p;
			return 0;
		}
	}
	return -ENOENT;
}

/* perf_tp_event's size, from "perf_tp_event+0x0/0x2c0": no kallsyms API for it. */
void pbt_stack_init(void)
{
	char buf[KSYM_SYMBOL_LEN];
	const char *slash;
	int cpu;

	for_each_possible_cpu(cpu)
		init_irq_work(&per_cpu(stk_unlock, cpu).work, stk_unlock_fn);
	sprint_symbol(buf, (unsigned long)perf_tp_event);
	slash = strchr(buf, '/');
	if (!slash || kstrtoul(slash + 1, 16, &tp_event_size))
		tp_event_size = 0;
}

void pbt_stack_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu(stk_unlock, cpu).work);
}

static bool in_tp_event(unsigned long ip)
{
	unsigned long start = (unsigned long)perf_tp_event;

	return ip >= start && ip < start + tp_event_size;
}

/*
 * Kernel frames, innermost first, from the tracepoint's caller on: for a
 * kernel-mode @regs, from regs->ip (perf_fetch_caller_regs()' return
 * address into the caller); else (syscalls' events pass the task's user
 * regs) from the frame after the perf probe that called perf_tp_event().
 */
static void capture_kernel(struct pbt_stack_scratch *s, struct pt_regs *regs)
{
	unsigned int n, i, from = 0;

	n = stack_trace_save(s->kips, STK_DEPTH, 0);
	for (i = 0; i < n; i++) {
		if (regs && !user_mode(regs) &&
		    s->kips[i] == instruction_pointer(regs)) {
			from = i;
			break;
		}
		if (in_tp_event(s->kips[i]))
			from = min(i + 2, n);
	}
	/* And pbtrace's own frames, which a caller without perf has. */
	while (from < n && within_module(s->kips[from], THIS_MODULE))
		from++;
	memmove(s->kips, s->kips + from, (n - from) * sizeof(s->kips[0]));
	s->nr_k = n - from;
}

/*
 * User frames, innermost first: the pc where the task entered the kernel,
 * then the return addresses of the frame-pointer chain, which must be
 * 8-aligned and grow strictly upwards from the stack pointer. The caller
 * of a function without a frame (a libc syscall wrapper) is not on the
 * chain: its return address is only at the stack pointer.
 */
static void capture_user(struct pbt_stack_scratch *s)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long fp, frame[2];

	s->nr_u = 0;
	if (!in_task() || !current->mm || (current->flags & PF_KTHREAD) ||
	    !user_64bit_mode(regs))
		return;
	s->uips[s->nr_u++] = regs->ip;
	fp = regs->bp;
	if (fp < regs->sp)
		return;
	while (s->nr_u < STK_DEPTH && fp && !(fp & 7)) {
		if (copy_from_user_nofault(frame, (const void __user *)fp,
					   sizeof(frame)))
			break;
		if (!frame[1])
			break;
		s->uips[s->nr_u++] = frame[1];
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
}

static struct stk_table table_of(struct pbt_stack_scratch *s, int kind)
{
	switch (kind) {
	case STK_FRAME:
		return (struct stk_table){ s->frames, STK_FRAMES };
	case STK_MAPPING:
		return (struct stk_table){ s->mappings, STK_MAPPINGS };
	case STK_STACK:
		return (struct stk_table){ s->stacks, STK_STACKS };
	default:
		return (struct stk_table){ s->strings, STK_STRINGS };
	}
}

static u64 mix(u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/*
 * The iid of (@key, @aux) in @kind's table: *@fresh if it was added now.
 * 0 if the table is 3/4 full (the chunk is sealed and the sample retried).
 */
static u32 intern(struct pbt_stack_scratch *s, int kind, u64 key, u64 aux,
		  bool *fresh)
{
	struct stk_table t = table_of(s, kind);
	u32 i, n, used = s->used[STK_NAME] + s->used[STK_PATH];

	if (kind != STK_NAME && kind != STK_PATH)
		used = s->used[kind];
	/* Names and paths share a table; the key tells them apart. */
	aux = aux * 2 + (kind == STK_PATH);
	*fresh = false;
	i = mix(key ^ mix(aux)) & (t.size - 1);
	for (n = 0; n < t.size; n++, i = (i + 1) & (t.size - 1)) {
		struct stk_ent *e = &t.e[i];

		if (!e->iid)
			break;
		if (e->key == key && e->aux == aux)
			return e->iid;
	}
	if (used + 1 > t.size * 3 / 4)
		return 0;
	t.e[i] = (struct stk_ent){ .key = key, .aux = aux,
				   .iid = ++s->next_iid[kind] };
	s->used[kind]++;
	*fresh = true;
	return t.e[i].iid;
}

static u64 hash_str(const char *p)
{
	u64 h = 0xcbf29ce484222325ULL;

	while (*p)
		h = (h ^ (u8)*p++) * 0x100000001b3ULL;
	return h;
}

static u32 intern_str(struct pb_buf *pb, struct pbt_stack_scratch *s,
		      int kind, const char *str)
{
	u32 field = kind == STK_PATH ? PB_INTERNEDDATA_MAPPING_PATHS :
				       PB_INTERNEDDATA_FUNCTION_NAMES;
	bool fresh;
	u8 *len;
	u32 iid;

	iid = intern(s, kind, hash_str(str), strlen(str), &fresh);
	if (fresh) {
		len = pb_nest_begin(pb, field, 2);
		pb_varint(pb, PB_INTERNEDSTRING_IID, iid);
		pb_string(pb, PB_INTERNEDSTRING_STR, str);
		pb_nest_end(pb, len, 2);
	}
	return iid;
}

/* Mapping path "kernel", start = end = 0: trace_processor's kernel mapping. */
static u32 kernel_mapping(struct pb_buf *pb, struct pbt_stack_scratch *s)
{
	bool fresh;
	u32 iid, path;
	u8 *len;

	iid = intern(s, STK_MAPPING, 0, 0, &fresh);
	if (!iid || !fresh)
		return iid;
	path = intern_str(pb, s, STK_PATH, "kernel");
	if (!path)
		return 0;
	len = pb_nest_begin(pb, PB_INTERNEDDATA_MAPPINGS, 1);
	pb_varint(pb, PB_MAPPING_IID, iid);
	pb_varint(pb, PB_MAPPING_PATH_STRING_IDS, path);
	pb_nest_end(pb, len, 1);
	return iid;
}

static void put_frame(struct pb_buf *pb, u32 iid, u32 name, u32 mapping,
		      u64 rel_pc)
{
	u8 *len = pb_nest_begin(pb, PB_INTERNEDDATA_FRAMES, 1);

	pb_varint(pb, PB_FRAME_IID, iid);
	if (name)
		pb_varint(pb, PB_FRAME_FUNCTION_NAME_ID, name);
	if (mapping) {
		pb_varint(pb, PB_FRAME_MAPPING_ID, mapping);
		pb_varint(pb, PB_FRAME_REL_PC, rel_pc);
	}
	pb_nest_end(pb, len, 1);
}

/*
 * A kernel frame: named by kallsyms, rel_pc its offset in the function
 * ("name+0x1a/0x80"), so that the file holds no kernel address.
 */
static u32 kernel_frame(struct pb_buf *pb, struct pbt_stack_scratch *s,
			unsigned long ip)
{
	u32 iid, name, mapping;
	unsigned long off = 0;
	bool fresh;
	char *plus;

	iid = intern(s, STK_FRAME, ip, U32_MAX, &fresh);
	if (!iid || !fresh)
		return iid;
	mapping = kernel_mapping(pb, s);
	sprint_symbol(s->sym, ip);
	/*
	 * No symbol (sprint_symbol() then prints the address, "0x..."; no
	 * symbol starts with a digit): "[unknown]" at offset 0, as perf names
	 * it, never the address, which would defeat KASLR.
	 */
	if (s->sym[0] == '0' && s->sym[1] == 'x')
		strscpy(s->sym, "[unknown]", sizeof(s->sym));
	plus = strchr(s->sym, '+');
	if (plus) {
		char *slash = strchr(plus, '/');

		if (slash)
			*slash = '\0';
		if (kstrtoul(plus + 1, 16, &off))
			off = 0;
		*plus = '\0';
	}
	name = intern_str(pb, s, STK_NAME, s->sym);
	if (!mapping || !name)
		return 0;
	put_frame(pb, iid, name, mapping, off);
	return iid;
}

/*
 * Keep @file for pbt_stack_file_path(): get_file() only counts a
 * reference the mapping holds already. Once per file and CPU; when the
 * table is full the mapping keeps its identity name (counted).
 */
static void pin_file(struct pbt_stack_scratch *s, struct file *file)
{
	struct inode *inode = file_inode(file);
	dev_t dev = inode->i_sb->s_dev;
	u32 i, n = s->nr_files;

	for (i = 0; i < n; i++)
		if (s->files[i].ino == inode->i_ino && s->files[i].dev == dev)
			return;
	if (n == STK_FILES) {
		atomic64_inc(&stk_unpinned);
		return;
	}
	s->files[n] = (struct stk_file){ .file = get_file(file),
					 .ino = inode->i_ino, .dev = dev };
	/* The entry is whole before a reader on another CPU counts it. */
	smp_store_release(&s->nr_files, n + 1);
}

/*
 * A mapping: start, end, file offset and, for a file, its identity as
 * /proc/PID/maps prints it. No path lookup here (see the top).
 */
static u32 user_mapping(struct pb_buf *pb, struct pbt_stack_scratch *s,
			struct vm_area_struct *vma)
{
	const char *name = "[anon]";
	u32 iid, path_iid;
	bool fresh;
	u8 *len;

	iid = intern(s, STK_MAPPING, vma->vm_start,
		     (unsigned long)vma->vm_file, &fresh);
	if (!iid || !fresh)
		return iid;
	if (vma->vm_file) {
		struct inode *inode = file_inode(vma->vm_file);

		snprintf(s->name, sizeof(s->name), "[inode %lu dev %02x:%02x]",
			 inode->i_ino, MAJOR(inode->i_sb->s_dev),
			 MINOR(inode->i_sb->s_dev));
		name = s->name;
		pin_file(s, vma->vm_file);
	}
	path_iid = intern_str(pb, s, STK_PATH, name);
	if (!path_iid)
		return 0;
	len = pb_nest_begin(pb, PB_INTERNEDDATA_MAPPINGS, 1);
	pb_varint(pb, PB_MAPPING_IID, iid);
	pb_varint(pb, PB_MAPPING_EXACT_OFFSET, (u64)vma->vm_pgoff << PAGE_SHIFT);
	pb_varint(pb, PB_MAPPING_START, vma->vm_start);
	pb_varint(pb, PB_MAPPING_END, vma->vm_end);
	pb_varint(pb, PB_MAPPING_PATH_STRING_IDS, path_iid);
	pb_nest_end(pb, len, 1);
	return iid;
}

/*
 * A user frame: rel_pc is the pc's offset in the mapped file (Perfetto's
 * definition, with start_offset 0), what userspace looks up in the ELF.
 * Without the mmap lock the frame has no mapping: a bare address.
 */
static u32 user_frame(struct pb_buf *pb, struct stk_sample *smp, u64 ip)
{
	struct pbt_stack_scratch *s = smp->s;
	struct vm_area_struct *vma = NULL;
	u32 iid, mapping = 0;
	u64 rel_pc = ip;
	bool fresh;

	if (smp->mm)
		vma = find_vma(smp->mm, ip);
	if (vma && ip < vma->vm_start)
		vma = NULL;
	if (vma) {
		mapping = user_mapping(pb, s, vma);
		if (!mapping)
			return 0;
		rel_pc = ip - vma->vm_start + ((u64)vma->vm_pgoff << PAGE_SHIFT);
	}
	iid = intern(s, STK_FRAME, ip, mapping, &fresh);
	if (!iid || !fresh)
		return iid;
	put_frame(pb, iid, 0, mapping, rel_pc);
	return iid;
}

/* The callstack's frames, outermost first: user, then kernel. */
static u32 frames_of(struct pb_buf *pb, struct stk_sample *smp)
{
	struct pbt_stack_scratch *s = smp->s;
	u32 n = 0, i, iid;

	for (i = s->nr_u; i-- > 0;) {
		iid = user_frame(pb, smp, s->uips[i]);
		if (!iid)
			return 0;
		s->fids[n++] = iid;
	}
	for (i = s->nr_k; i-- > 0;) {
		iid = kernel_frame(pb, s, s->kips[i]);
		if (!iid)
			return 0;
		s->fids[n++] = iid;
	}
	return n;
}

static u32 callstack(struct pb_buf *pb, struct stk_sample *smp, bool *full)
{
	struct pbt_stack_scratch *s = smp->s;
	u64 h = 0x9e3779b97f4a7c15ULL;
	u32 n, i, iid;
	bool fresh;
	u8 *len;

	n = frames_of(pb, smp);
	*full = !n && (s->nr_u || s->nr_k);
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		h = mix(h ^ s->fids[i]) + i;
	iid = intern(s, STK_STACK, h, n, &fresh);
	*full = !iid;
	if (!iid || !fresh)
		return iid;
	len = pb_nest_begin(pb, PB_INTERNEDDATA_CALLSTACKS, 2);
	pb_varint(pb, PB_CALLSTACK_IID, iid);
	for (i = 0; i < n; i++)	/* not packed: Perfetto's field is not */
		pb_varint(pb, PB_CALLSTACK_FRAME_IDS, s->fids[i]);
	pb_nest_end(pb, len, 2);
	return iid;
}

static void reset(struct pbt_stack_scratch *s)
{
	memset(s->next_iid, 0, sizeof(s->next_iid));
	memset(s->used, 0, sizeof(s->used));
	memset(s->frames, 0, sizeof(s->frames));
	memset(s->strings, 0, sizeof(s->strings));
	memset(s->mappings, 0, sizeof(s->mappings));
	memset(s->stacks, 0, sizeof(s->stacks));
}

/* The mmap lock for the user frames' mappings, or NULL (see stk_unlock). */
static struct mm_struct *lock_mm(void)
{
	struct stk_unlock *u = this_cpu_ptr(&stk_unlock);
	struct mm_struct *mm = current->mm;

	/* PREEMPT_RT runs irq_work in a thread: no lock across to it. */
	if (IS_ENABLED(CONFIG_PREEMPT_RT) || !mm ||
	    irq_work_is_busy(&u->work) || !mmap_read_trylock(mm))
		return NULL;
	return mm;
}

/* The stacks, once, into this CPU's scratch (the writer is ours). */
static void capture(struct stk_sample *smp, u32 cpu)
{
	struct pbt_stack_scratch *s = smp->s;

	smp->captured = true;
	smp->cpu = cpu;
	smp->ts = ktime_get_boot_fast_ns();
	s->nr_k = 0;
	s->nr_u = 0;
	if (smp->flags & PBTRACE_TP_KERNEL_STACK)
		capture_kernel(s, smp->regs);
	if (smp->flags & PBTRACE_TP_USER_STACK)
		capture_user(s);
	if (s->nr_u) {
		smp->mm = lock_mm();
		if (!smp->mm)
			atomic64_inc(&stk_no_mapping);
	}
}

/* pbt_buffer_packet()'s writer: interned_data, then the PerfSample. */
static bool write_sample(struct pb_buf *pb, void *scratch, bool cleared,
			 u32 cpu, void *arg)
{
	struct stk_sample *smp = arg;
	u8 *data, *start, *len;
	bool full;
	u32 cs;

	smp->s = scratch;
	if (!smp->captured)
		capture(smp, cpu);
	if (cleared)
		reset(smp->s);
	pb_varint(pb, PB_TRACEPACKET_TIMESTAMP, smp->ts);
	pb_varint(pb, PB_TRACEPACKET_SEQUENCE_FLAGS, cleared ?
		  PB_TRACEPACKET_SEQUENCEFLAGS_SEQ_INCREMENTAL_STATE_CLEARED |
		  PB_TRACEPACKET_SEQUENCEFLAGS_SEQ_NEEDS_INCREMENTAL_STATE :
		  PB_TRACEPACKET_SEQUENCEFLAGS_SEQ_NEEDS_INCREMENTAL_STATE);
	start = pb->p;
	data = pb_nest_begin(pb, PB_TRACEPACKET_INTERNED_DATA, 3);
	cs = callstack(pb, smp, &full);
	if (full)
		return false;
	if (pb->p == data + 3)
		pb->p = start;	/* nothing new: no interned_data */
	else
		pb_nest_end(pb, data, 3);
	len = pb_nest_begin(pb, PB_TRACEPACKET_PERF_SAMPLE, 1);
	pb_varint(pb, PB_PERFSAMPLE_CPU, smp->cpu);
	pb_varint(pb, PB_PERFSAMPLE_PID, (u32)smp->pid);
	pb_varint(pb, PB_PERFSAMPLE_TID, (u32)smp->tid);
	if (cs)
		pb_varint(pb, PB_PERFSAMPLE_CALLSTACK_IID, cs);
	if (smp->omitted)
		pb_varint(pb, PB_PERFSAMPLE_UNWIND_ERROR,
			  PB_PROFILING_STACKUNWINDERROR_UNWIND_ERROR_PTRACE_CALL);
	pb_varint(pb, PB_PERFSAMPLE_CPU_MODE, PB_PROFILING_CPUMODE_MODE_KERNEL);
	pb_varint(pb, PB_PERFSAMPLE_TIMEBASE_COUNT, smp->count);
	pb_nest_end(pb, len, 1);
	return true;
}

static void unlock_mm(struct mm_struct *mm)
{
	struct stk_unlock *u = this_cpu_ptr(&stk_unlock);

	if (!mm)
		return;
	u->mm = mm;
	/* Released for lockdep now; the irq_work drops the lock itself. */
	rwsem_release(&mm->mmap_lock.dep_map, _RET_IP_);
	irq_work_queue(&u->work);
}

/*
 * A PerfSample of the current task into @b on this CPU (pbtrace.h): the
 * stacks are taken inside pbt_buffer_packet(), which owns the writer and
 * this CPU's scratch while they are. The caller keeps preemption off.
 */
void pbt_stack_sample(struct pbt_buffer *b, struct pt_regs *regs, u32 flags,
		      u32 count)
{
	struct stk_sample smp = {
		.regs = regs, .flags = flags, .count = count ? count : 1,
		.pid = current->tgid, .tid = current->pid,
	};

	/*
	 * A member's sample of a task it may not read: kernel frames only
	 * (perf's counter, created as the member, decided those), no word of
	 * the task's stack and no mapping of it; the sample says so.
	 */
	if ((flags & PBTRACE_TP_USER_STACK) && !pbt_buffer_may_read(b)) {
		smp.flags &= ~PBTRACE_TP_USER_STACK;
		smp.omitted = true;
	}
	pbt_buffer_packet(b, write_sample, &smp);
	unlock_mm(smp.mm);
}
