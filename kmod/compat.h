/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels pbtrace builds for (5.15 .. 6.x)
 * lives here, so the probes and the buffer code read the same everywhere.
 */
#ifndef _PBTRACE_COMPAT_H
#define _PBTRACE_COMPAT_H

#include <linux/version.h>
#include <linux/sched.h>
#include <net/genetlink.h>

/*
 * sched_switch gained its prev_state argument in 5.18 (before, the probe
 * read prev->__state itself). PBT_SWITCH_PROTO/PBT_SWITCH_PREV_STATE hide it.
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
 * The request's disk: rq->rq_disk until 5.16 dropped it for rq->q->disk.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 16, 0)
#define pbt_rq_devt(rq) ((rq)->q->disk ? disk_devt((rq)->q->disk) : 0)
#else
#define pbt_rq_devt(rq) ((rq)->rq_disk ? disk_devt((rq)->rq_disk) : 0)
#endif

/*
 * From 6.13 tracepoint probes run with preemption enabled (under SRCU). Our
 * probes disable interrupts around every per-CPU write (pbt_emit), which also
 * pins them to the CPU, so no version check is needed there; this marker
 * documents the assumption for readers grepping for it.
 */
#define PBT_PROBES_MAY_BE_PREEMPTIBLE \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0))

/* sched_process_exit gained a group_dead argument in 6.16. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define PBT_EXIT_PROTO(p) struct task_struct *p, bool group_dead
#else
#define PBT_EXIT_PROTO(p) struct task_struct *p
#endif

/* vm_flags became read-only with accessors in 6.3. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define pbt_vm_flags_set(vma, f) vm_flags_set(vma, f)
#define pbt_vm_flags_clear(vma, f) vm_flags_clear(vma, f)
#else
#define pbt_vm_flags_set(vma, f) ((vma)->vm_flags |= (f))
#define pbt_vm_flags_clear(vma, f) ((vma)->vm_flags &= ~(f))
#endif

/* no_llseek went away in 6.12 (NULL means the same since). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define no_llseek NULL
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
 * Joining a genetlink multicast group could be restricted to CAP_SYS_ADMIN
 * from 6.7 (GENL_MCAST_CAP_SYS_ADMIN, backported to the stable kernels,
 * 6.1.x among them). Without it anyone may join, as before.
 */
#ifdef GENL_MCAST_CAP_SYS_ADMIN
#define PBT_MCAST_FLAGS GENL_MCAST_CAP_SYS_ADMIN
#else
#define PBT_MCAST_FLAGS 0
#endif

/*
 * An extack message that names a value: NL_SET_ERR_MSG_FMT from 6.2.
 * Before, the message goes through pbt_extack_buf (netlink.c), which only
 * our doit handlers use: the family is not parallel_ops, so genl_mutex
 * serializes them until the ack carrying the message is sent.
 */
#ifdef NL_SET_ERR_MSG_FMT
#define PBT_ERR_MSG_ATTR_FMT(extack, attr, fmt, ...) \
	NL_SET_ERR_MSG_ATTR_FMT(extack, attr, fmt, ##__VA_ARGS__)
#else
#define PBT_EXTACK_BUF_LEN 80
extern char pbt_extack_buf[PBT_EXTACK_BUF_LEN];
#define PBT_ERR_MSG_ATTR_FMT(extack, attr, fmt, ...) do {		\
	struct netlink_ext_ack *__ea = (extack);			\
									\
	if (__ea) {							\
		snprintf(pbt_extack_buf, sizeof(pbt_extack_buf), fmt,	\
			 ##__VA_ARGS__);				\
		__ea->_msg = pbt_extack_buf;				\
		__ea->bad_attr = (attr);				\
	}								\
} while (0)
#endif

#endif /* _PBTRACE_COMPAT_H */
