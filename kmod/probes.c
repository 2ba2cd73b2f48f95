// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint probes. Each probe has the exact prototype of its tracepoint
 * (version differences in compat.h) and hands pbt_emit() a small encoder
 * that writes the matching Perfetto FtraceEvent oneof field with the same
 * fields the kernel's own ftrace event records. Tracepoints are found with
 * for_each_kernel_tracepoint() and registered only while a started session
 * wants them (refcounted, under pbt_sessions_lock).
 */
#include <linux/binfmts.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/blktrace_api.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/syscall.h>

#include "pbtrace.h"
#include "compat.h"
#include "core/pb.h"
#include "pbtrace_fields.h"
/* gen/pbtrace_arity.h's table of the string arguments each syscall takes. */
struct pbt_syscall_strs {
	const char *event;		/* "sys_enter_openat" */
	u8 nr;				/* how many, up to 3 */
	u8 arg[3];			/* which arguments */
	const char *name[3];		/* as the prototype names them */
};

#include "pbtrace_arity.h"

/*
 * Length prefix of the oneof message: every message here but exec's stays
 * below 128 bytes (two comms, a few varints, or six 10-byte args), so one
 * byte. Exec's filename may be a whole path.
 */
#define MSG_WIDTH 1
#define EXEC_WIDTH 2
#define IRQ_NAME_MAX 48
/* As include/trace/events/block.h (not a header we may include twice). */
#define PBT_RWBS_LEN 8

struct pbt_probe {
	struct tracepoint *tp;
	void *fn;
	unsigned int users;
};

static struct pbt_probe probes[PBT_NR_EVENTS];

/* sched_switch */

struct switch_args {
	struct pbt_sched_rec rec;	/* first: see pbt_event_compact() */
	bool preempt;
	struct task_struct *prev, *next;
	unsigned int prev_state;
};

/* What the kernel's sched_switch event records as prev_state. */
static long switch_state(const struct switch_args *a)
{
	unsigned int state;

	if (a->preempt)
		return TASK_REPORT_MAX;
	state = pbt_state_index(a->prev, a->prev_state);
	return state ? (1 << (state - 1)) : state;
}

static void enc_switch(struct pb_buf *pb, const void *arg)
{
	const struct switch_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SCHED_SWITCH, MSG_WIDTH);

	pb_strn(pb, PB_SCHEDSWITCHFTRACEEVENT_PREV_COMM, a->prev->comm,
		TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDSWITCHFTRACEEVENT_PREV_PID, a->prev->pid);
	pb_sint(pb, PB_SCHEDSWITCHFTRACEEVENT_PREV_PRIO, a->prev->prio);
	pb_sint(pb, PB_SCHEDSWITCHFTRACEEVENT_PREV_STATE, switch_state(a));
	pb_strn(pb, PB_SCHEDSWITCHFTRACEEVENT_NEXT_COMM, a->next->comm,
		TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDSWITCHFTRACEEVENT_NEXT_PID, a->next->pid);
	pb_sint(pb, PB_SCHEDSWITCHFTRACEEVENT_NEXT_PRIO, a->next->prio);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_sched_switch(void *data,
			       PBT_SWITCH_PROTO(preempt, prev, next, prev_state))
{
	struct switch_args a = {
		.preempt = preempt, .prev = prev, .next = next,
		.prev_state = PBT_SWITCH_PREV_STATE(prev, prev_state),
	};

	BUILD_BUG_ON(offsetof(struct switch_args, rec));
	a.rec = (struct pbt_sched_rec) {
		.comm = next->comm, .prev_state = switch_state(&a),
		.pid = next->pid, .prio = next->prio,
		.prev_comm = prev->comm, .prev_pid = prev->pid,
		.prev_prio = prev->prio,
	};
	pbt_emit_for(PBT_EV_SCHED_SWITCH, -1, next->pid, enc_switch, &a);
}

/*
 * sched_waking, sched_wakeup, sched_wakeup_new share one layout (the same
 * field numbers in Perfetto's three messages), only the oneof field differs.
 * Only sched_waking has a compact form: trace_processor reads the waking_*
 * columns as sched_waking, so wakeup and wakeup_new stay full events.
 */
struct wakeup_args {
	struct pbt_sched_rec rec;	/* sched_waking: pbt_event_compact() */
	struct task_struct *p;
	u32 field;
};

static void enc_wakeup(struct pb_buf *pb, const void *arg)
{
	const struct wakeup_args *a = arg;
	u8 *len = pb_nest_begin(pb, a->field, MSG_WIDTH);

	BUILD_BUG_ON(PB_SCHEDWAKINGFTRACEEVENT_PID != PB_SCHEDWAKEUPFTRACEEVENT_PID ||
		     PB_SCHEDWAKEUPNEWFTRACEEVENT_TARGET_CPU !=
		     PB_SCHEDWAKEUPFTRACEEVENT_TARGET_CPU);
	pb_strn(pb, PB_SCHEDWAKEUPFTRACEEVENT_COMM, a->p->comm, TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDWAKEUPFTRACEEVENT_PID, a->p->pid);
	pb_sint(pb, PB_SCHEDWAKEUPFTRACEEVENT_PRIO, a->p->prio);
	pb_sint(pb, PB_SCHEDWAKEUPFTRACEEVENT_TARGET_CPU, task_cpu(a->p));
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_sched_waking(void *data, struct task_struct *p)
{
	struct wakeup_args a = {
		.rec = {
			.comm = p->comm, .pid = p->pid, .prio = p->prio,
			.target_cpu = task_cpu(p),
		},
		.p = p, .field = PB_FTRACEEVENT_SCHED_WAKING,
	};

	BUILD_BUG_ON(offsetof(struct wakeup_args, rec));
	pbt_emit_for(PBT_EV_SCHED_WAKING, -1, p->pid, enc_wakeup, &a);
}

static void probe_sched_wakeup(void *data, struct task_struct *p)
{
	struct wakeup_args a = { .p = p, .field = PB_FTRACEEVENT_SCHED_WAKEUP };

	pbt_emit_for(PBT_EV_SCHED_WAKEUP, -1, p->pid, enc_wakeup, &a);
}

static void probe_sched_wakeup_new(void *data, struct task_struct *p)
{
	struct wakeup_args a = {
		.p = p, .field = PB_FTRACEEVENT_SCHED_WAKEUP_NEW,
	};

	pbt_emit_for(PBT_EV_SCHED_WAKEUP_NEW, -1, p->pid, enc_wakeup, &a);
}

/* sched_process_fork */

struct fork_args {
	struct task_struct *parent, *child;
};

static void enc_fork(struct pb_buf *pb, const void *arg)
{
	const struct fork_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SCHED_PROCESS_FORK,
				MSG_WIDTH);

	pb_strn(pb, PB_SCHEDPROCESSFORKFTRACEEVENT_PARENT_COMM,
		a->parent->comm, TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDPROCESSFORKFTRACEEVENT_PARENT_PID, a->parent->pid);
	pb_strn(pb, PB_SCHEDPROCESSFORKFTRACEEVENT_CHILD_COMM,
		a->child->comm, TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDPROCESSFORKFTRACEEVENT_CHILD_PID, a->child->pid);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_sched_process_fork(void *data, struct task_struct *parent,
				     struct task_struct *child)
{
	struct fork_args a = { parent, child };

	pbt_follow_fork(parent->pid, child->pid);
	pbt_emit(PBT_EV_SCHED_PROCESS_FORK, enc_fork, &a);
}

/* sched_process_exec */

struct exec_args {
	struct task_struct *p;
	pid_t old_pid;
	struct linux_binprm *bprm;
};

static void enc_exec(struct pb_buf *pb, const void *arg)
{
	const struct exec_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SCHED_PROCESS_EXEC,
				EXEC_WIDTH);

	pb_strn(pb, PB_SCHEDPROCESSEXECFTRACEEVENT_FILENAME,
		a->bprm->filename, PATH_MAX);
	pb_sint(pb, PB_SCHEDPROCESSEXECFTRACEEVENT_PID, a->p->pid);
	pb_sint(pb, PB_SCHEDPROCESSEXECFTRACEEVENT_OLD_PID, a->old_pid);
	pb_nest_end(pb, len, EXEC_WIDTH);
}

static void probe_sched_process_exec(void *data, struct task_struct *p,
				     pid_t old_pid, struct linux_binprm *bprm)
{
	struct exec_args a = { p, old_pid, bprm };

	pbt_emit(PBT_EV_SCHED_PROCESS_EXEC, enc_exec, &a);
}

/* sched_process_exit, sched_process_free: comm, pid, prio */

static void enc_exit(struct pb_buf *pb, const void *arg)
{
	const struct task_struct *p = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SCHED_PROCESS_EXIT,
				MSG_WIDTH);

	pb_strn(pb, PB_SCHEDPROCESSEXITFTRACEEVENT_COMM, p->comm,
		TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDPROCESSEXITFTRACEEVENT_PID, p->pid);
	pb_sint(pb, PB_SCHEDPROCESSEXITFTRACEEVENT_TGID, p->tgid);
	pb_sint(pb, PB_SCHEDPROCESSEXITFTRACEEVENT_PRIO, p->prio);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_sched_process_exit(void *data, PBT_EXIT_PROTO(p))
{
	pbt_emit(PBT_EV_SCHED_PROCESS_EXIT, enc_exit, p);
}

static void enc_free(struct pb_buf *pb, const void *arg)
{
	const struct task_struct *p = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SCHED_PROCESS_FREE,
				MSG_WIDTH);

	pb_strn(pb, PB_SCHEDPROCESSFREEFTRACEEVENT_COMM, p->comm,
		TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDPROCESSFREEFTRACEEVENT_PID, p->pid);
	pb_sint(pb, PB_SCHEDPROCESSFREEFTRACEEVENT_PRIO, p->prio);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_sched_process_free(void *data, struct task_struct *p)
{
	pbt_emit(PBT_EV_SCHED_PROCESS_FREE, enc_free, p);
	pbt_follow_free(p->pid);
}

/* sched_migrate_task */

struct migrate_args {
	struct task_struct *p;
	int dest_cpu;
};

static void enc_migrate(struct pb_buf *pb, const void *arg)
{
	const struct migrate_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SCHED_MIGRATE_TASK,
				MSG_WIDTH);

	pb_strn(pb, PB_SCHEDMIGRATETASKFTRACEEVENT_COMM, a->p->comm,
		TASK_COMM_LEN);
	pb_sint(pb, PB_SCHEDMIGRATETASKFTRACEEVENT_PID, a->p->pid);
	pb_sint(pb, PB_SCHEDMIGRATETASKFTRACEEVENT_PRIO, a->p->prio);
	pb_sint(pb, PB_SCHEDMIGRATETASKFTRACEEVENT_ORIG_CPU, task_cpu(a->p));
	pb_sint(pb, PB_SCHEDMIGRATETASKFTRACEEVENT_DEST_CPU, a->dest_cpu);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_sched_migrate_task(void *data, struct task_struct *p,
				     int dest_cpu)
{
	struct migrate_args a = { p, dest_cpu };

	pbt_emit(PBT_EV_SCHED_MIGRATE_TASK, enc_migrate, &a);
}

/* task_newtask, task_rename */

struct newtask_args {
	struct task_struct *task;
	u64 clone_flags;
};

static void enc_newtask(struct pb_buf *pb, const void *arg)
{
	const struct newtask_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_TASK_NEWTASK, MSG_WIDTH);

	pb_sint(pb, PB_TASKNEWTASKFTRACEEVENT_PID, a->task->pid);
	pb_strn(pb, PB_TASKNEWTASKFTRACEEVENT_COMM, a->task->comm,
		TASK_COMM_LEN);
	pb_varint(pb, PB_TASKNEWTASKFTRACEEVENT_CLONE_FLAGS, a->clone_flags);
	pb_sint(pb, PB_TASKNEWTASKFTRACEEVENT_OOM_SCORE_ADJ,
		a->task->signal->oom_score_adj);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_task_newtask(void *data,
			       PBT_NEWTASK_PROTO(task, clone_flags))
{
	struct newtask_args a = { task, clone_flags };

	pbt_emit(PBT_EV_TASK_NEWTASK, enc_newtask, &a);
}

struct rename_args {
	struct task_struct *task;
	const char *comm;
};

static void enc_rename(struct pb_buf *pb, const void *arg)
{
	const struct rename_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_TASK_RENAME, MSG_WIDTH);

	pb_sint(pb, PB_TASKRENAMEFTRACEEVENT_PID, a->task->pid);
	pb_strn(pb, PB_TASKRENAMEFTRACEEVENT_OLDCOMM, a->task->comm,
		TASK_COMM_LEN);
	/* The kernel truncates the new name to TASK_COMM_LEN - 1 too. */
	pb_strn(pb, PB_TASKRENAMEFTRACEEVENT_NEWCOMM, a->comm,
		TASK_COMM_LEN - 1);
	pb_sint(pb, PB_TASKRENAMEFTRACEEVENT_OOM_SCORE_ADJ,
		a->task->signal->oom_score_adj);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_task_rename(void *data, struct task_struct *task,
			      const char *comm)
{
	struct rename_args a = { task, comm };

	pbt_emit(PBT_EV_TASK_RENAME, enc_rename, &a);
}

/*
 * raw_syscalls: sys_enter (id + the syscall's arguments, repeated not
 * packed), sys_exit. Only as many arguments as the syscall takes
 * (gen/pbtrace_arity.h, from this kernel's prototypes; 6 where unknown):
 * the other registers hold whatever the caller left there, up to 10
 * bytes each of noise (getppid's six cost 20-40 bytes an event).
 */

struct sys_enter_args {
	long id;
	unsigned long args[6];
};

static unsigned int sys_arity(long id)
{
	return id >= 0 && id < PBT_ARITY_NR ? pbt_syscall_arity[id] : 6;
}

static void enc_sys_enter(struct pb_buf *pb, const void *arg)
{
	const struct sys_enter_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SYS_ENTER, MSG_WIDTH);
	unsigned int i, n = sys_arity(a->id);

	pb_sint(pb, PB_SYSENTERFTRACEEVENT_ID, a->id);
	for (i = 0; i < n; i++)
		pb_varint(pb, PB_SYSENTERFTRACEEVENT_ARGS, a->args[i]);
	pb_nest_end(pb, len, MSG_WIDTH);
}

/*
 * A syscall's strings (paths, names), read from user memory in the probe as
 * strace and perf trace show them: a GenericFtraceEvent after the sys_enter
 * (trace_processor lists it in ftrace_event with its fields as args), each
 * string as a field named as in the prototype. At most STR_MAX bytes each:
 * a longer one is cut there and followed by "<name>_truncated" = 1. A
 * pointer that cannot be read without a page fault (never sleeping here)
 * is written as its value instead (uint_value).
 */
#define STR_MAX 256
#define STR_WIDTH 2			/* lengths up to 16383 */

static const struct pbt_syscall_strs *sys_strs(long id)
{
	if (id < 0 || id >= PBT_ARITY_NR || !pbt_syscall_strs[id].nr)
		return NULL;
	return &pbt_syscall_strs[id];
}

/*
 * Up to @max bytes of the string at @src, a page at a time, so that one
 * ending just before an unmapped page still reads. Returns its length,
 * @max if it has no NUL within @max bytes, or -EFAULT.
 */
static long user_str(u8 *dst, unsigned long src, size_t max)
{
	size_t done = 0, n;
	u8 *nul;

	while (done < max) {
		n = min_t(size_t, max - done,
			  PAGE_SIZE - offset_in_page(src + done));
		if (copy_from_user_nofault(dst + done,
					   (const void __user *)(src + done), n))
			return -EFAULT;
		nul = memchr(dst + done, 0, n);
		if (nul)
			return nul - dst;
		done += n;
	}
	return max;
}

/* A field "<name><suffix>" = 1: "filename_truncated", "filename_omitted". */
static void enc_flag(struct pb_buf *pb, const char *name, const char *suffix)
{
	u8 *field = pb_nest_begin(pb, PB_GENERICFTRACEEVENT_FIELD, 1);
	u8 *str = pb_nest_begin(pb, PB_GENERICFTRACEEVENT_FIELD_NAME, 1);
	size_t n = strlen(name), m = strlen(suffix);

	if (!pb_room(pb, n + m + 1))
		return;
	memcpy(pb->p, name, n);
	memcpy(pb->p + n, suffix, m);
	pb->p += n + m;
	pb_nest_end(pb, str, 1);
	pb_varint(pb, PB_GENERICFTRACEEVENT_FIELD_UINT_VALUE, 1);
	pb_nest_end(pb, field, 1);
}

static void enc_str_field(struct pb_buf *pb, const char *name,
			  unsigned long src)
{
	u8 *field = pb_nest_begin(pb, PB_GENERICFTRACEEVENT_FIELD, STR_WIDTH);
	u8 *mark, *str;
	long n;

	pb_string(pb, PB_GENERICFTRACEEVENT_FIELD_NAME, name);
	/* The copy goes straight into the chunk: room for STR_MAX + 1. */
	if (!pb_room(pb, 1 + STR_WIDTH + STR_MAX + 1))
		return;
	mark = pb->p;
	str = pb_nest_begin(pb, PB_GENERICFTRACEEVENT_FIELD_STR_VALUE,
			    STR_WIDTH);
	n = user_str(pb->p, src, STR_MAX + 1);
	if (n < 0) {
		pb_rewind(pb, mark);
		pb_varint(pb, PB_GENERICFTRACEEVENT_FIELD_UINT_VALUE, src);
	} else {
		pb->p += min_t(long, n, STR_MAX);
		pb_nest_end(pb, str, STR_WIDTH);
	}
	pb_nest_end(pb, field, STR_WIDTH);
	if (n > STR_MAX)
		enc_flag(pb, name, "_truncated");
}

static void enc_sys_strings(struct pb_buf *pb, const void *arg)
{
	const struct sys_enter_args *a = arg;
	const struct pbt_syscall_strs *t = sys_strs(a->id);
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_GENERIC, STR_WIDTH);
	unsigned int i;

	pb_string(pb, PB_GENERICFTRACEEVENT_EVENT_NAME, t->event);
	for (i = 0; i < t->nr; i++)
		enc_str_field(pb, t->name[i], a->args[t->arg[i]]);
	pb_nest_end(pb, len, STR_WIDTH);
}

/*
 * PBT_EV_SYS_STRINGS_OMITTED: what a member's buffer gets instead of the
 * strings of a task the member may not read (pbt_may_read()): the same
 * event, each string argument "<name>_omitted" = 1 and no byte of it.
 */
static void enc_sys_strings_omitted(struct pb_buf *pb, const void *arg)
{
	const struct sys_enter_args *a = arg;
	const struct pbt_syscall_strs *t = sys_strs(a->id);
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_GENERIC, STR_WIDTH);
	unsigned int i;

	pb_string(pb, PB_GENERICFTRACEEVENT_EVENT_NAME, t->event);
	for (i = 0; i < t->nr; i++)
		enc_flag(pb, t->name[i], "_omitted");
	pb_nest_end(pb, len, STR_WIDTH);
}

static void probe_sys_enter(void *data, struct pt_regs *regs, long id)
{
	struct sys_enter_args a = { .id = id };

	syscall_get_arguments(current, regs, a.args);
	if (likely(!sys_strs(id))) {
		pbt_emit_syscall(PBT_EV_SYS_ENTER, id, enc_sys_enter, &a);
		return;
	}
	/*
	 * One CPU for both: the strings take the sys_enter's timestamp. One
	 * RCU read side too, so a live watermark's grace period waits for
	 * the second (watermark.c); interrupts may come in between.
	 */
	preempt_disable_notrace();
	pbt_emit_syscall(PBT_EV_SYS_ENTER, id, enc_sys_enter, &a);
	if (static_branch_unlikely(&pbt_fault_strings_key))
		udelay(READ_ONCE(pbt_fault_strings_us));
	pbt_emit_syscall(PBT_EV_SYS_STRINGS, id, enc_sys_strings, &a);
	/* Only members' buffers of members that may not read this task. */
	pbt_emit_syscall(PBT_EV_SYS_STRINGS_OMITTED, id,
			 enc_sys_strings_omitted, &a);
	preempt_enable_notrace();
}

struct sys_exit_args {
	long id, ret;
};

static void enc_sys_exit(struct pb_buf *pb, const void *arg)
{
	const struct sys_exit_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_SYS_EXIT, MSG_WIDTH);

	pb_sint(pb, PB_SYSEXITFTRACEEVENT_ID, a->id);
	pb_sint(pb, PB_SYSEXITFTRACEEVENT_RET, a->ret);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	struct sys_exit_args a = { syscall_get_nr(current, regs), ret };

	pbt_emit_syscall(PBT_EV_SYS_EXIT, a.id, enc_sys_exit, &a);
}

/* irq */

struct irq_args {
	int irq;
	struct irqaction *action;
	int ret;
};

static void enc_irq_entry(struct pb_buf *pb, const void *arg)
{
	const struct irq_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_IRQ_HANDLER_ENTRY,
				MSG_WIDTH);

	pb_sint(pb, PB_IRQHANDLERENTRYFTRACEEVENT_IRQ, a->irq);
	pb_strn(pb, PB_IRQHANDLERENTRYFTRACEEVENT_NAME,
		a->action->name ? a->action->name : "(null)", IRQ_NAME_MAX);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_irq_handler_entry(void *data, int irq,
				    struct irqaction *action)
{
	struct irq_args a = { irq, action, 0 };

	pbt_emit(PBT_EV_IRQ_HANDLER_ENTRY, enc_irq_entry, &a);
}

static void enc_irq_exit(struct pb_buf *pb, const void *arg)
{
	const struct irq_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_IRQ_HANDLER_EXIT,
				MSG_WIDTH);

	pb_sint(pb, PB_IRQHANDLEREXITFTRACEEVENT_IRQ, a->irq);
	pb_sint(pb, PB_IRQHANDLEREXITFTRACEEVENT_RET, a->ret);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_irq_handler_exit(void *data, int irq,
				   struct irqaction *action, int ret)
{
	struct irq_args a = { irq, action, ret };

	pbt_emit(PBT_EV_IRQ_HANDLER_EXIT, enc_irq_exit, &a);
}

/* softirq_entry/exit/raise: one vec field, same number in all three */

struct softirq_args {
	u32 field;
	unsigned int vec;
};

static void enc_softirq(struct pb_buf *pb, const void *arg)
{
	const struct softirq_args *a = arg;
	u8 *len = pb_nest_begin(pb, a->field, MSG_WIDTH);

	BUILD_BUG_ON(PB_SOFTIRQENTRYFTRACEEVENT_VEC != PB_SOFTIRQEXITFTRACEEVENT_VEC ||
		     PB_SOFTIRQENTRYFTRACEEVENT_VEC != PB_SOFTIRQRAISEFTRACEEVENT_VEC);
	pb_varint(pb, PB_SOFTIRQENTRYFTRACEEVENT_VEC, a->vec);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_softirq_entry(void *data, unsigned int vec_nr)
{
	struct softirq_args a = { PB_FTRACEEVENT_SOFTIRQ_ENTRY, vec_nr };

	pbt_emit(PBT_EV_SOFTIRQ_ENTRY, enc_softirq, &a);
}

static void probe_softirq_exit(void *data, unsigned int vec_nr)
{
	struct softirq_args a = { PB_FTRACEEVENT_SOFTIRQ_EXIT, vec_nr };

	pbt_emit(PBT_EV_SOFTIRQ_EXIT, enc_softirq, &a);
}

static void probe_softirq_raise(void *data, unsigned int vec_nr)
{
	struct softirq_args a = { PB_FTRACEEVENT_SOFTIRQ_RAISE, vec_nr };

	pbt_emit(PBT_EV_SOFTIRQ_RAISE, enc_softirq, &a);
}

/* block */

static void fill_rwbs(char *rwbs, struct request *rq)
{
	memset(rwbs, 0, PBT_RWBS_LEN);
#ifdef CONFIG_BLK_DEV_IO_TRACE
	blk_fill_rwbs(rwbs, rq->cmd_flags);
#endif
}

static void enc_rq_issue(struct pb_buf *pb, const void *arg)
{
	struct request *rq = (struct request *)arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_BLOCK_RQ_ISSUE, MSG_WIDTH);
	char rwbs[PBT_RWBS_LEN];

	fill_rwbs(rwbs, rq);
	pb_varint(pb, PB_BLOCKRQISSUEFTRACEEVENT_DEV, pbt_rq_devt(rq));
	pb_varint(pb, PB_BLOCKRQISSUEFTRACEEVENT_SECTOR,
		  blk_rq_trace_sector(rq));
	pb_varint(pb, PB_BLOCKRQISSUEFTRACEEVENT_NR_SECTOR,
		  blk_rq_trace_nr_sectors(rq));
	pb_varint(pb, PB_BLOCKRQISSUEFTRACEEVENT_BYTES, blk_rq_bytes(rq));
	pb_strn(pb, PB_BLOCKRQISSUEFTRACEEVENT_RWBS, rwbs, PBT_RWBS_LEN);
	pb_strn(pb, PB_BLOCKRQISSUEFTRACEEVENT_COMM, current->comm,
		TASK_COMM_LEN);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_block_rq_issue(void *data, struct request *rq)
{
	pbt_emit(PBT_EV_BLOCK_RQ_ISSUE, enc_rq_issue, rq);
}

struct rq_complete_args {
	struct request *rq;
	int error;
	unsigned int nr_bytes;
};

static void enc_rq_complete(struct pb_buf *pb, const void *arg)
{
	const struct rq_complete_args *a = arg;
	u8 *len = pb_nest_begin(pb, PB_FTRACEEVENT_BLOCK_RQ_COMPLETE,
				MSG_WIDTH);
	char rwbs[PBT_RWBS_LEN];

	fill_rwbs(rwbs, a->rq);
	pb_varint(pb, PB_BLOCKRQCOMPLETEFTRACEEVENT_DEV, pbt_rq_devt(a->rq));
	pb_varint(pb, PB_BLOCKRQCOMPLETEFTRACEEVENT_SECTOR,
		  blk_rq_pos(a->rq));
	pb_varint(pb, PB_BLOCKRQCOMPLETEFTRACEEVENT_NR_SECTOR,
		  a->nr_bytes >> 9);
	pb_strn(pb, PB_BLOCKRQCOMPLETEFTRACEEVENT_RWBS, rwbs, PBT_RWBS_LEN);
	pb_sint(pb, PB_BLOCKRQCOMPLETEFTRACEEVENT_ERROR,
		a->error);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_block_rq_complete(void *data,
				    PBT_RQ_COMPLETE_PROTO(rq, error, nr_bytes))
{
	struct rq_complete_args a = { rq, pbt_rq_errno(error), nr_bytes };

	pbt_emit(PBT_EV_BLOCK_RQ_COMPLETE, enc_rq_complete, &a);
}

/* power: cpu_frequency and cpu_idle (state, cpu_id) */

struct cpu_args {
	u32 field;
	unsigned int state, cpu_id;
};

static void enc_cpu(struct pb_buf *pb, const void *arg)
{
	const struct cpu_args *a = arg;
	u8 *len = pb_nest_begin(pb, a->field, MSG_WIDTH);

	BUILD_BUG_ON(PB_CPUFREQUENCYFTRACEEVENT_STATE != PB_CPUIDLEFTRACEEVENT_STATE ||
		     PB_CPUFREQUENCYFTRACEEVENT_CPU_ID != PB_CPUIDLEFTRACEEVENT_CPU_ID);
	pb_varint(pb, PB_CPUIDLEFTRACEEVENT_STATE, a->state);
	pb_varint(pb, PB_CPUIDLEFTRACEEVENT_CPU_ID, a->cpu_id);
	pb_nest_end(pb, len, MSG_WIDTH);
}

static void probe_cpu_frequency(void *data, unsigned int frequency,
				unsigned int cpu_id)
{
	struct cpu_args a = { PB_FTRACEEVENT_CPU_FREQUENCY, frequency, cpu_id };

	pbt_emit(PBT_EV_CPU_FREQUENCY, enc_cpu, &a);
}

static void probe_cpu_idle(void *data, unsigned int state, unsigned int cpu_id)
{
	struct cpu_args a = { PB_FTRACEEVENT_CPU_IDLE, state, cpu_id };

	pbt_emit(PBT_EV_CPU_IDLE, enc_cpu, &a);
}

static void *const probe_fns[PBT_NR_EVENTS] = {
	[PBT_EV_SCHED_SWITCH] = probe_sched_switch,
	[PBT_EV_SCHED_WAKING] = probe_sched_waking,
	[PBT_EV_SCHED_WAKEUP] = probe_sched_wakeup,
	[PBT_EV_SCHED_WAKEUP_NEW] = probe_sched_wakeup_new,
	[PBT_EV_SCHED_PROCESS_FORK] = probe_sched_process_fork,
	[PBT_EV_SCHED_PROCESS_EXEC] = probe_sched_process_exec,
	[PBT_EV_SCHED_PROCESS_EXIT] = probe_sched_process_exit,
	[PBT_EV_SCHED_PROCESS_FREE] = probe_sched_process_free,
	[PBT_EV_SCHED_MIGRATE_TASK] = probe_sched_migrate_task,
	[PBT_EV_TASK_NEWTASK] = probe_task_newtask,
	[PBT_EV_TASK_RENAME] = probe_task_rename,
	[PBT_EV_SYS_ENTER] = probe_sys_enter,
	[PBT_EV_SYS_EXIT] = probe_sys_exit,
	[PBT_EV_IRQ_HANDLER_ENTRY] = probe_irq_handler_entry,
	[PBT_EV_IRQ_HANDLER_EXIT] = probe_irq_handler_exit,
	[PBT_EV_SOFTIRQ_ENTRY] = probe_softirq_entry,
	[PBT_EV_SOFTIRQ_EXIT] = probe_softirq_exit,
	[PBT_EV_SOFTIRQ_RAISE] = probe_softirq_raise,
	[PBT_EV_BLOCK_RQ_ISSUE] = probe_block_rq_issue,
	[PBT_EV_BLOCK_RQ_COMPLETE] = probe_block_rq_complete,
	[PBT_EV_CPU_FREQUENCY] = probe_cpu_frequency,
	[PBT_EV_CPU_IDLE] = probe_cpu_idle,
};

static void find_tracepoint(struct tracepoint *tp, void *priv)
{
	int id;

	for (id = 0; id < PBT_NR_EVENTS; id++)
		if (!probes[id].tp && !strcmp(tp->name, pbt_event_tp_name(id)))
			probes[id].tp = tp;
}

int pbt_probes_init(void)
{
	int id;

	for (id = 0; id < PBT_NR_EVENTS; id++)
		probes[id].fn = probe_fns[id];
	for_each_kernel_tracepoint(find_tracepoint, NULL);
	for (id = 0; id < PBT_NR_EVENTS; id++)
		if (!probes[id].tp)
			pr_info("pbtrace: %s not in this kernel, reported unavailable\n",
				pbt_event_name(id));
	return 0;
}

/* Sessions have put every probe by now; this only checks it. */
void pbt_probes_exit(void)
{
	int id;

	for (id = 0; id < PBT_NR_EVENTS; id++) {
		if (probes[id].users && probes[id].tp)
			tracepoint_probe_unregister(probes[id].tp,
						    probes[id].fn, NULL);
		probes[id].users = 0;
	}
	pbt_probes_sync();
}

bool pbt_probe_found(int id)
{
	return id >= 0 && id < PBT_NR_EVENTS && probes[id].tp;
}

int pbt_probe_get(int id)
{
	struct pbt_probe *p;
	int ret;

	lockdep_assert_held(&pbt_sessions_lock);
	if (id < 0 || id >= PBT_NR_EVENTS)
		return -EINVAL;
	p = &probes[id];
	if (!p->tp)
		return -ENOENT;
	if (p->users++)
		return 0;
	ret = tracepoint_probe_register(p->tp, p->fn, NULL);
	if (ret)
		p->users = 0;
	return ret;
}

void pbt_probe_put(int id)
{
	struct pbt_probe *p;

	lockdep_assert_held(&pbt_sessions_lock);
	if (id < 0 || id >= PBT_NR_EVENTS)
		return;
	p = &probes[id];
	if (!p->tp || WARN_ON_ONCE(!p->users))
		return;
	if (!--p->users)
		tracepoint_probe_unregister(p->tp, p->fn, NULL);
}

void pbt_probes_sync(void)
{
	tracepoint_synchronize_unregister();
}
