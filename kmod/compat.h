/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels pbtrace builds for (5.15 .. current)
 * lives here, so the rest of the module reads the same everywhere. Each
 * entry names the upstream change that made it necessary. Where the new
 * name is a macro it is tested directly, which also covers stable kernels
 * that got it backported; otherwise by version.
 */
#ifndef _PBTRACE_COMPAT_H
#define _PBTRACE_COMPAT_H

#include <linux/version.h>
#include <linux/sched.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/timer.h>
#include <net/genetlink.h>

/*
 * sched_switch gained its prev_state argument in 5.18 ("sched/tracing:
 * Don't re-read p->state when emitting sched_switch event"); before, the
 * probe reads prev->__state itself.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#define PBT_SWITCH_PROTO(preempt, prev, next, prev_state)		\
	bool preempt, struct task_struct *prev, struct task_struct *next,	\
	unsigned int prev_state
#define PBT_SWITCH_PREV_STATE(prev, prev_state) (prev_state)
/* The index the kernel's own sched_switch event derives prev_state from. */
#define pbt_state_index(prev, prev_state) \
	__task_state_index(prev_state, (prev)->exit_state)
#else
#define PBT_SWITCH_PROTO(preempt, prev, next, prev_state)		\
	bool preempt, struct task_struct *prev, struct task_struct *next
#define PBT_SWITCH_PREV_STATE(prev, prev_state) READ_ONCE((prev)->__state)
#define pbt_state_index(prev, prev_state) task_state_index(prev)
#endif

/*
 * The request's disk: rq->rq_disk until 5.17 ("block: remove the ->rq_disk
 * field in struct request"), rq->q->disk since, as the kernel's own
 * block_rq_* events read it.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 17, 0)
#define pbt_rq_devt(rq) ((rq)->q->disk ? disk_devt((rq)->q->disk) : 0)
#else
#define pbt_rq_devt(rq) ((rq)->rq_disk ? disk_devt((rq)->rq_disk) : 0)
#endif

/*
 * block_rq_complete passes a blk_status_t since 5.18 ("block: introduce
 * block_rq_error tracepoint"); before, the errno itself as an int.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#define PBT_RQ_COMPLETE_PROTO(rq, error, nr_bytes) \
	struct request *rq, blk_status_t error, unsigned int nr_bytes
#define pbt_rq_errno(error) blk_status_to_errno(error)
#else
#define PBT_RQ_COMPLETE_PROTO(rq, error, nr_bytes) \
	struct request *rq, int error, unsigned int nr_bytes
#define pbt_rq_errno(error) (error)
#endif

/*
 * From 6.13 ("tracing: Allow system call tracepoints to handle page
 * faults") the raw_syscalls probes run preemptible, under SRCU-tasks-trace
 * rather than with preemption off, and later kernels may extend that to
 * other tracepoints. No version test is needed: every probe reaches the
 * per-CPU buffers only through pbt_emit_syscall(), which disables
 * interrupts (and so pins itself to the CPU) before it reads the CPU
 * number, the active set or the nesting flag, on every kernel.
 */

/*
 * task_newtask passes clone_flags as u64 since 6.18 ("copy_process: pass
 * clone_flags as u64 across calltree"); unsigned long before (the same
 * register on 64-bit, not on 32-bit).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
#define PBT_NEWTASK_PROTO(task, clone_flags) \
	struct task_struct *task, u64 clone_flags
#else
#define PBT_NEWTASK_PROTO(task, clone_flags) \
	struct task_struct *task, unsigned long clone_flags
#endif

/*
 * sched_process_exit gained group_dead in 6.16 ("sched/tracepoints: Move
 * and extend the sched_process_exit() tracepoint").
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define PBT_EXIT_PROTO(p) struct task_struct *p, bool group_dead
#else
#define PBT_EXIT_PROTO(p) struct task_struct *p
#endif

/*
 * vma->vm_flags became read-only, written through vm_flags_set/clear(), in
 * 6.3 ("mm: introduce vma->vm_flags wrapper functions").
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define pbt_vm_flags_set(vma, f) vm_flags_set(vma, f)
#define pbt_vm_flags_clear(vma, f) vm_flags_clear(vma, f)
#else
#define pbt_vm_flags_set(vma, f) ((vma)->vm_flags |= (f))
#define pbt_vm_flags_clear(vma, f) ((vma)->vm_flags &= ~(f))
#endif

/*
 * timer_delete_sync() is the name since 6.2 ("timers: Rename
 * del_timer_sync() to timer_delete_sync()", also in later 5.15.y/6.1.y);
 * current kernels no longer have del_timer_sync().
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define timer_delete_sync(timer) del_timer_sync(timer)
#endif

/*
 * from_timer() became timer_container_of() in 6.16 ("treewide, timers:
 * Rename from_timer() to timer_container_of()"), and from_timer() is gone.
 */
#ifndef timer_container_of
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

/*
 * kernel_bind() and kernel_connect() take a struct sockaddr_unsized since
 * 6.19 ("net: Convert proto_ops bind() callbacks to use sockaddr_unsized",
 * and the same for connect()).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
#define pbt_sockaddr sockaddr_unsized
#else
#define pbt_sockaddr sockaddr
#endif

/*
 * The family's pre_doit/post_doit get the command as a struct genl_split_ops
 * since 6.2 ("genetlink: introduce split op representation"); before, as
 * the struct genl_ops it was registered with. Both carry internal_flags.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define pbt_genl_split_ops genl_split_ops
#else
#define pbt_genl_split_ops genl_ops
#endif

/*
 * Joining a genetlink multicast group can be restricted to CAP_SYS_ADMIN
 * with GENL_MCAST_CAP_SYS_ADMIN from 6.8 ("genetlink: Use internal flags
 * for multicast groups", backported to 5.15.y and 6.1.y). Without it
 * anyone may join, as before.
 */
#ifdef GENL_MCAST_CAP_SYS_ADMIN
#define PBT_MCAST_FLAGS GENL_MCAST_CAP_SYS_ADMIN
#else
#define PBT_MCAST_FLAGS 0
#endif

/*
 * An extack message that names values:
 * PBT_ERR_MSG_ATTR_FMT(extack, attr, msg, fmt, ...). From 6.2
 * NL_SET_ERR_MSG_FMT ("netlink: add support for formatted extack
 * messages") formats fmt into the extack itself, which lives on
 * netlink_rcv_skb()'s stack: one per request. Before, there is no room
 * per request, and a buffer of ours would be shared: genl_rcv_msg() drops
 * genl_mutex when the handler returns, and netlink_rcv_skb() copies the
 * message into the ack (netlink_ack()) only after, so a second caller's
 * handler could rewrite it first and the first caller receive the second's
 * text. So before 6.2 the ack carries msg, a string literal that says the
 * same without the values (NL_SET_ERR_MSG_ATTR refuses anything else), and
 * the formatted text goes to the debug log (dynamic debug, ratelimited).
 */
#ifdef NL_SET_ERR_MSG_FMT
#define PBT_ERR_MSG_ATTR_FMT(extack, attr, msg, fmt, ...) \
	NL_SET_ERR_MSG_ATTR_FMT(extack, attr, fmt, ##__VA_ARGS__)
#else
#define PBT_ERR_MSG_ATTR_FMT(extack, attr, msg, fmt, ...) do {	\
	NL_SET_ERR_MSG_ATTR(extack, attr, msg);				\
	net_dbg_ratelimited("pbtrace: " fmt "\n", ##__VA_ARGS__);	\
} while (0)
#endif

#endif /* _PBTRACE_COMPAT_H */
