// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what over the pbtrace family (docs/security.md): CAP_SYS_ADMIN
 * everything; CAP_PERFMON look at every session; a member of the module's
 * group= gid create, run and look at its own sessions, within the budget
 * of the group_max_* parameters that session.c checks. The checks run in
 * pre_doit and in the dumps' start callbacks, before anything of the
 * request is read.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/moduleparam.h>
#include <linux/uidgid.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "pbtrace.h"
#include "compat.h"
#include "netlink.h"

/*
 * Tracing without root: members of this gid run their own sessions
 * (docs/security.md). The kernel cannot resolve a group name, so
 * make install and DKMS write the pbtrace group's gid into modprobe.d;
 * root may change it at run time in /sys/module/pbtrace/parameters.
 */
static int group = -1;
module_param(group, int, 0644);
MODULE_PARM_DESC(group, "gid whose members may run their own sessions without root (default -1: nobody)");
/*
 * A member's budget (session.c checks it, docs/security.md has the
 * numbers): all of one uid's sessions together.
 */
static unsigned int group_max_kb = 65536;
module_param(group_max_kb, uint, 0644);
MODULE_PARM_DESC(group_max_kb, "most KiB of kernel memory one group member's sessions hold together, as allocated: rings, tables, perf counters (default 65536)");
static unsigned int group_max_sessions = PBTRACE_MAX_SESSIONS / 4;
module_param(group_max_sessions, uint, 0644);
MODULE_PARM_DESC(group_max_sessions, "most sessions of one group member (default 2 of the members' 4)");
static unsigned int group_max_counters = 1024;
module_param(group_max_counters, uint, 0644);
MODULE_PARM_DESC(group_max_counters, "most perf counters (tracepoints x online CPUs) of one group member's sessions (default 1024)");

static bool in_trace_group(void)
{
	int gid = READ_ONCE(group);
	kgid_t kgid;

	if (gid < 0)
		return false;
	kgid = make_kgid(&init_user_ns, gid);
	return gid_valid(kgid) && in_egroup_p(kgid);
}

/* CAP_PERFMON looks at every session; CAP_SYS_ADMIN implies it. */
bool pbt_nl_sees_all(struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_PERFMON) ||
	       netlink_capable(skb, CAP_SYS_ADMIN);
}

/* A refusal that says what would be enough. */
static int refuse(struct netlink_ext_ack *extack, bool change)
{
	int gid = READ_ONCE(group);

	if (gid >= 0)
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "needs CAP_SYS_ADMIN or the group pbtrace was loaded with (group=): docs/security.md",
				     "needs CAP_SYS_ADMIN or group %d (pbtrace group=): docs/security.md",
				     gid);
	else if (change)
		NL_SET_ERR_MSG(extack, "needs CAP_SYS_ADMIN: run as root, or load pbtrace with group=GID so that group may trace (docs/security.md)");
	else
		NL_SET_ERR_MSG(extack, "needs CAP_PERFMON or CAP_SYS_ADMIN: run as root, or load pbtrace with group=GID so that group may trace (docs/security.md)");
	return -EPERM;
}

/* Dumps: CAP_PERFMON, or a member, who then sees only its own sessions. */
int pbt_nl_may_read(struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	if (pbt_nl_sees_all(skb))
		return 0;
	if (in_trace_group())
		return 0;
	if (READ_ONCE(group) >= 0)
		NL_SET_ERR_MSG(extack, "needs CAP_PERFMON or CAP_SYS_ADMIN, or membership in pbtrace's group= gid: docs/security.md");
	else
		refuse(extack, false);
	return -EPERM;
}

/* One answer for a session that is not there and one that is not yours. */
int pbt_nl_no_session(struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack, "no session with this id: 'tracectl status' lists them");
	return -ENOENT;
}

/*
 * A member names a session: it must be one the member created. Another
 * user's is answered as one that does not exist, here, before anything of
 * the request is read, so that nothing tells the two apart: a member
 * learns neither which ids are live nor whose they are.
 */
static int check_owner(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[PBTRACE_A_SESSION_ID];
	struct pbt_session *s;
	int ret = 0;

	if (!attr)
		return 0;	/* NEW, or the handler says the id is missing */
	s = pbt_session_get(nla_get_u32(attr));
	if (!s || !uid_eq(s->params.owner_uid, current_euid()))
		ret = pbt_nl_no_session(info->extack);
	pbt_session_put(s);
	return ret;
}

/* What PBT_ADMIN and PBT_OWN (netlink.h) ask of a command's sender. */
int pbt_pre_doit(const struct pbt_genl_split_ops *ops,
		 struct sk_buff *skb, struct genl_info *info)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	if (ops->internal_flags & PBT_ADMIN) {
		NL_SET_ERR_MSG(info->extack, "needs CAP_SYS_ADMIN: run as root");
		return -EPERM;
	}
	if (!(ops->internal_flags & PBT_OWN) && pbt_nl_sees_all(skb))
		return 0;
	if (!in_trace_group())
		return refuse(info->extack, ops->internal_flags & PBT_OWN);
	return check_owner(info);
}

/*
 * What a member may not ask for: relayed machines (a member's session
 * would take guests from root's sessions). What it may hold is its
 * budget, @p->limits (pbt_nl_who_asks()), which session.c checks against
 * what the uid holds.
 */
int pbt_nl_member_limits(struct sk_buff *skb, struct genl_info *info,
			 struct pbt_session_params *p)
{
	u32 i;

	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	for (i = 0; i < p->nr_buffers; i++) {
		if (p->buffers[i].nr_machines) {
			NL_SET_ERR_MSG(info->extack, "relayed machines (machines lists) need CAP_SYS_ADMIN: a group member's session records this machine only");
			return -EPERM;
		}
	}
	return 0;
}

/*
 * Whose request @p is (before it is parsed: its tracepoints are checked
 * as that user's): the credentials perf decides by, kept by a new session
 * for its START, and whether root's rules or a member's apply.
 */
void pbt_nl_who_asks(struct sk_buff *skb, struct pbt_session_params *p)
{
	p->cred = get_current_cred();
	p->member = !netlink_capable(skb, CAP_SYS_ADMIN);
	if (!p->member)
		return;
	/* Known before parsing: pbt_tp_parse() refuses too many at once. */
	p->limits = (struct pbt_limits) {
		.max_bytes = (u64)READ_ONCE(group_max_kb) * 1024,
		.max_sessions = READ_ONCE(group_max_sessions),
		.max_counters = READ_ONCE(group_max_counters),
		.max_filter_cost = PBT_FILTER_MEMBER_COST,
		.max_filters_cost = PBT_FILTER_MEMBER_SESSION_COST,
	};
}
