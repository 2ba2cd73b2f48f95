// SPDX-License-Identifier: GPL-2.0
/*
 * The events pbtrace can trace: "group/name" <-> enum pbt_event_id, and
 * whether this kernel has the tracepoint (probes.c finds them at load).
 */
#include <linux/errno.h>
#include <linux/string.h>

#include "pbtrace.h"

static const char *const event_names[PBT_NR_EVENTS] = {
	[PBT_EV_SCHED_SWITCH] = "sched/sched_switch",
	[PBT_EV_SCHED_WAKING] = "sched/sched_waking",
	[PBT_EV_SCHED_WAKEUP] = "sched/sched_wakeup",
	[PBT_EV_SCHED_WAKEUP_NEW] = "sched/sched_wakeup_new",
	[PBT_EV_SCHED_PROCESS_FORK] = "sched/sched_process_fork",
	[PBT_EV_SCHED_PROCESS_EXEC] = "sched/sched_process_exec",
	[PBT_EV_SCHED_PROCESS_EXIT] = "sched/sched_process_exit",
	[PBT_EV_SCHED_PROCESS_FREE] = "sched/sched_process_free",
	[PBT_EV_SCHED_MIGRATE_TASK] = "sched/sched_migrate_task",
	[PBT_EV_TASK_NEWTASK] = "task/task_newtask",
	[PBT_EV_TASK_RENAME] = "task/task_rename",
	[PBT_EV_SYS_ENTER] = "raw_syscalls/sys_enter",
	[PBT_EV_SYS_EXIT] = "raw_syscalls/sys_exit",
	[PBT_EV_IRQ_HANDLER_ENTRY] = "irq/irq_handler_entry",
	[PBT_EV_IRQ_HANDLER_EXIT] = "irq/irq_handler_exit",
	[PBT_EV_SOFTIRQ_ENTRY] = "irq/softirq_entry",
	[PBT_EV_SOFTIRQ_EXIT] = "irq/softirq_exit",
	[PBT_EV_SOFTIRQ_RAISE] = "irq/softirq_raise",
	[PBT_EV_BLOCK_RQ_ISSUE] = "block/block_rq_issue",
	[PBT_EV_BLOCK_RQ_COMPLETE] = "block/block_rq_complete",
	[PBT_EV_CPU_FREQUENCY] = "power/cpu_frequency",
	[PBT_EV_CPU_IDLE] = "power/cpu_idle",
};

int pbt_event_lookup(const char *name)
{
	int id;

	for (id = 0; id < PBT_NR_EVENTS; id++)
		if (!strcmp(event_names[id], name))
			return id;
	return -ENOENT;
}

const char *pbt_event_name(int id)
{
	if (id < 0 || id >= PBT_NR_EVENTS)
		return NULL;
	return event_names[id];
}

/* The tracepoint name within its group, as the kernel registers it. */
const char *pbt_event_tp_name(int id)
{
	const char *name = pbt_event_name(id);
	const char *slash = name ? strchr(name, '/') : NULL;

	return slash ? slash + 1 : name;
}

bool pbt_event_available(int id)
{
	return id >= 0 && id < PBT_NR_EVENTS && pbt_probe_found(id);
}
