// SPDX-License-Identifier: GPL-2.0
/*
 * The "pbtrace" generic netlink family: the command/attribute tree is
 * documented in include/uapi/linux/pbtrace.h, the files that handle it in
 * netlink.h. This file is the family itself: which handler each command
 * has and who may send it (PBT_ADMIN, PBT_OWN), the multicast group, and
 * registration. Its policy is netlink_parse.c's.
 */

#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>

#include "pbtrace.h"
#include "compat.h"
#include "netlink.h"

/* Notifications wait for the family: netlink_notify.c's notify_msg(). */
bool pbt_family_registered;

static const struct genl_ops pbt_ops[] = {
	{
		.cmd = PBTRACE_CMD_NEW_SESSION,
		.doit = pbt_nl_new_session,
		.internal_flags = PBT_OWN,
	}, {
		.cmd = PBTRACE_CMD_SET_SESSION,
		.doit = pbt_nl_set_session,
		.internal_flags = PBT_OWN,
	}, {
		.cmd = PBTRACE_CMD_START_SESSION,
		.doit = pbt_nl_session_op,
		.internal_flags = PBT_OWN,
	}, {
		.cmd = PBTRACE_CMD_STOP_SESSION,
		.doit = pbt_nl_session_op,
		.internal_flags = PBT_OWN,
	}, {
		.cmd = PBTRACE_CMD_FLUSH_SESSION,
		.doit = pbt_nl_session_op,
		.internal_flags = PBT_OWN,
	}, {
		.cmd = PBTRACE_CMD_DESTROY_SESSION,
		.doit = pbt_nl_session_op,
		.internal_flags = PBT_OWN,
	}, {
		.cmd = PBTRACE_CMD_GET_SESSION,
		.doit = pbt_nl_get_session,
		.start = pbt_nl_get_session_start,
		.dumpit = pbt_nl_get_session_dump,
	}, {
		.cmd = PBTRACE_CMD_GET_CPU_STATS,
		.start = pbt_nl_session_dump_start,
		.dumpit = pbt_nl_cpu_stats_dump,
	}, {
		.cmd = PBTRACE_CMD_GET_WATERMARK,
		.doit = pbt_nl_get_watermark,
	}, {
		.cmd = PBTRACE_CMD_GET_SESSION_MACHINES,
		.start = pbt_nl_session_dump_start,
		.dumpit = pbt_nl_session_machines_dump,
	}, {
		.cmd = PBTRACE_CMD_ADD_TRACEPOINTS,
		.doit = pbt_nl_add_tps,
		.internal_flags = PBT_OWN,
	}, {
		.cmd = PBTRACE_CMD_GET_SESSION_TRACEPOINTS,
		.start = pbt_nl_session_dump_start,
		.dumpit = pbt_nl_tps_dump,
	}, {
		.cmd = PBTRACE_CMD_GET_MACHINES,
		.start = pbt_nl_endpoint_dump_start,
		.dumpit = pbt_nl_machines_dump,
	}, {
		.cmd = PBTRACE_CMD_GET_NAMES,
		.start = pbt_nl_endpoint_dump_start,
		.dumpit = pbt_nl_names_dump,
	}, {
		.cmd = PBTRACE_CMD_LOAD_NAMES,
		.doit = pbt_nl_load_names,
		.internal_flags = PBT_ADMIN,
	}, {
		.cmd = PBTRACE_CMD_TRIGGER,
		.doit = pbt_nl_trigger,
		.internal_flags = PBT_ADMIN,
	}, {
		.cmd = PBTRACE_CMD_LIST_EVENTS,
		.start = pbt_nl_list_events_start,
		.dumpit = pbt_nl_list_events_dump,
	}, {
		.cmd = PBTRACE_CMD_REGISTER_DAEMON,
		.doit = pbt_nl_register_daemon,
		.internal_flags = PBT_ADMIN,
	}, {
		.cmd = PBTRACE_CMD_GET_STATUS,
		.doit = pbt_nl_get_status,
	},
};

static const struct genl_multicast_group pbt_mcgrps[] = {
	/* Joining needs CAP_SYS_ADMIN where the kernel can say so. */
	{ .name = PBTRACE_MCGRP_SESSIONS, .flags = PBT_MCAST_FLAGS },
};

struct genl_family pbt_family __ro_after_init = {
	.name = PBTRACE_GENL_NAME,
	.version = PBTRACE_GENL_VERSION,
	.maxattr = PBTRACE_A_MAX,
	.policy = pbt_policy,
	.pre_doit = pbt_pre_doit,
	.ops = pbt_ops,
	.n_ops = ARRAY_SIZE(pbt_ops),
	.mcgrps = pbt_mcgrps,
	.n_mcgrps = ARRAY_SIZE(pbt_mcgrps),
	.module = THIS_MODULE,
	.netnsok = false,
	.parallel_ops = false,
};

int pbt_netlink_init(void)
{
	int ret;

	ret = netlink_register_notifier(&pbt_netlink_notifier);
	if (ret)
		return ret;
	ret = genl_register_family(&pbt_family);
	if (ret) {
		netlink_unregister_notifier(&pbt_netlink_notifier);
		return ret;
	}
	WRITE_ONCE(pbt_family_registered, true);
	pbt_session_observe(pbt_netlink_notify);
	return 0;
}

void pbt_netlink_exit(void)
{
	pbt_session_observe(NULL);
	netlink_unregister_notifier(&pbt_netlink_notifier);
	cancel_work_sync(&pbt_daemon_gone_work);
	WRITE_ONCE(pbt_family_registered, false);
	genl_unregister_family(&pbt_family);
}
