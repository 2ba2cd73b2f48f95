// SPDX-License-Identifier: GPL-2.0
/*
 * The "pbtrace" generic netlink family: the command/attribute tree is
 * documented in include/uapi/linux/pbtrace.h. This file only translates
 * between attributes and session.c; it keeps one piece of state of its
 * own, the daemon's socket, so it can tell when traced goes away.
 *
 * Every attribute has a policy and validation is strict: an attribute the
 * policy does not name, a string without its NUL or a nest without
 * NLA_F_NESTED fails the request before any handler runs.
 */

#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <asm/unistd.h>

#include "pbtrace.h"
#include "compat.h"
#include "relay/relay.h"

#define PBT_DEFAULT_CHUNK_KB 16
#define PBT_MAX_SIZE_KB (1024 * 1024)	/* 1 GiB per buffer is plenty */

static struct genl_family pbt_family;
static bool family_registered;

/* The daemon's socket: set by REGISTER_DAEMON, cleared when it closes. */
static DEFINE_SPINLOCK(daemon_lock);
static u32 daemon_portid;
static u32 daemon_pid;

static const struct nla_policy event_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_EVENT_NAME]		= { .type = NLA_NUL_STRING, .len = PBTRACE_NAME_MAX - 1 },
};

static const struct nla_policy pid_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_PID]			= NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy syscall_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_SYSCALL_NR]		= { .type = NLA_U32 },
};

static const struct nla_policy machine_name_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_MACHINE_NAME]	= { .type = NLA_NUL_STRING, .len = PBTRACE_NAME_MAX - 1 },
};

static const struct nla_policy buffer_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_BUFFER_SIZE_KB]	= { .type = NLA_U32 },
	[PBTRACE_A_BUFFER_CHUNK_KB]	= NLA_POLICY_RANGE(NLA_U32, 4, 256),
	[PBTRACE_A_BUFFER_FILL_POLICY]	= NLA_POLICY_MAX(NLA_U32, PBTRACE_FILL_DISCARD),
	[PBTRACE_A_BUFFER_EVENTS]	= NLA_POLICY_NESTED(event_policy),
	[PBTRACE_A_BUFFER_PIDS]		= NLA_POLICY_NESTED(pid_policy),
	[PBTRACE_A_BUFFER_SYSCALLS]	= NLA_POLICY_NESTED(syscall_policy),
	[PBTRACE_A_BUFFER_MACHINES]	= NLA_POLICY_NESTED(machine_name_policy),
	[PBTRACE_A_BUFFER_FULL_SCHED]	= { .type = NLA_FLAG },
	[PBTRACE_A_BUFFER_FOLLOW_FORKS]	= { .type = NLA_FLAG },
	[PBTRACE_A_BUFFER_WATERMARK_MS]	= NLA_POLICY_RANGE(NLA_U32, 1, 10000),
	[PBTRACE_A_BUFFER_WATERMARK_EXPEDITED] = { .type = NLA_FLAG },
	/* each PBTRACE_A_TP checked by tracepoint.c's policies */
	[PBTRACE_A_BUFFER_TRACEPOINTS]	= { .type = NLA_NESTED },
};

/* One entry of the names table (PBTRACE_CMD_LOAD_NAMES). */
static const struct nla_policy name_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_MACHINE_NAME]	= { .type = NLA_NUL_STRING, .len = PBTRACE_NAME_MAX - 1 },
	[PBTRACE_A_NAME_CID]		= { .type = NLA_U32 },
	[PBTRACE_A_NAME_KEY]		= NLA_POLICY_RANGE(NLA_BINARY, 16, PBTRACE_NAME_KEY_MAX),
	[PBTRACE_A_NAME_LINE]		= { .type = NLA_U32 },
};

static const struct nla_policy pbt_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_SESSION_ID]		= { .type = NLA_U32 },
	[PBTRACE_A_SESSION_NAME]	= { .type = NLA_NUL_STRING, .len = PBTRACE_NAME_MAX - 1 },
	[PBTRACE_A_SESSION_CONFIG]	= { .type = NLA_BINARY, .len = PBTRACE_MAX_CONFIG },
	[PBTRACE_A_SESSION_OUTPUT]	= { .type = NLA_NUL_STRING, .len = PATH_MAX - 1 },
	[PBTRACE_A_SESSION_BUFFERS]	= NLA_POLICY_NESTED_ARRAY(buffer_policy),
	[PBTRACE_A_TRIGGER_NAME]	= { .type = NLA_NUL_STRING, .len = PBTRACE_NAME_MAX - 1 },
	[PBTRACE_A_SESSION_ERROR]	= { .type = NLA_NUL_STRING, .len = PBTRACE_ERROR_MAX - 1 },
	[PBTRACE_A_BUFFER_INDEX]	= { .type = NLA_U32 },
	/* ADD_TRACEPOINTS; each PBTRACE_A_TP checked by tracepoint.c's */
	[PBTRACE_A_BUFFER_TRACEPOINTS]	= { .type = NLA_NESTED },
	[PBTRACE_A_LOAD_ID]		= { .type = NLA_U32 },
	[PBTRACE_A_LOAD_COMMIT]		= { .type = NLA_FLAG },
	[PBTRACE_A_NAMES]		= NLA_POLICY_NESTED_ARRAY(name_policy),
};

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
static bool sees_all(struct sk_buff *skb)
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
static int may_read(struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	if (sees_all(skb))
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
static int no_session(struct netlink_ext_ack *extack)
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
		ret = no_session(info->extack);
	pbt_session_put(s);
	return ret;
}

/*
 * Who may do what: CAP_SYS_ADMIN everything; CAP_PERFMON look at every
 * session; a member of group= create, run and look at its own sessions
 * (PBT_OWN commands and looks). GENL_ADMIN_PERM would check CAP_NET_ADMIN
 * instead, and fail before any extack could say what is missing, so the
 * checks are ours.
 */
#define PBT_ADMIN BIT(0)	/* genl_ops.internal_flags: root only */
#define PBT_OWN BIT(1)		/* root, or a member on its own session */

static int pbt_pre_doit(const struct pbt_genl_split_ops *ops,
			struct sk_buff *skb, struct genl_info *info)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	if (ops->internal_flags & PBT_ADMIN) {
		NL_SET_ERR_MSG(info->extack, "needs CAP_SYS_ADMIN: run as root");
		return -EPERM;
	}
	if (!(ops->internal_flags & PBT_OWN) && sees_all(skb))
		return 0;
	if (!in_trace_group())
		return refuse(info->extack, ops->internal_flags & PBT_OWN);
	return check_owner(info);
}

/*
 * What a member may not ask for: relayed machines (a member's session
 * would take guests from root's sessions). What it may hold is its
 * budget, @p->limits, which session.c checks against what the uid holds.
 */
static int member_limits(struct sk_buff *skb, struct genl_info *info,
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
	p->limits = (struct pbt_limits) {
		.max_bytes = (u64)READ_ONCE(group_max_kb) * 1024,
		.max_sessions = READ_ONCE(group_max_sessions),
		.max_counters = READ_ONCE(group_max_counters),
		.max_filter_cost = PBT_FILTER_MEMBER_COST,
		.max_filters_cost = PBT_FILTER_MEMBER_SESSION_COST,
	};
	return 0;
}

static int parse_events(struct nlattr *nest, struct pbt_buffer_params *bp,
			struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	int rem, id;

	nla_for_each_nested(attr, nest, rem) {
		id = pbt_event_lookup(nla_data(attr));
		if (id < 0) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "unknown event: 'tracectl list-events' shows the known ones");
			return -ENOENT;
		}
		if (!pbt_event_available(id)) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "event's tracepoint is missing in this kernel: 'tracectl list-events' marks the available ones");
			return -EOPNOTSUPP;
		}
		bp->events |= BIT_ULL(id);
	}
	if (!bp->events) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "buffer needs at least one event");
		return -EINVAL;
	}
	return 0;
}

static int parse_pids(struct nlattr *nest, struct pbt_buffer_params *bp,
		      struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	int rem;

	nla_for_each_nested(attr, nest, rem) {
		if (bp->nr_pids == PBTRACE_MAX_PIDS) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "too many pids: at most 64 per buffer");
			return -E2BIG;
		}
		bp->pids[bp->nr_pids++] = nla_get_u32(attr);
	}
	return 0;
}

/*
 * The syscalls raw_syscalls records, as a bitmap the probes test. An empty
 * list would record nothing: refused, leave it out for every syscall.
 */
static int parse_syscalls(struct nlattr *nest, struct pbt_buffer_params *bp,
			  struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	int rem, n = 0;
	u32 nr;

	bp->syscalls = bitmap_zalloc(NR_syscalls, GFP_KERNEL_ACCOUNT);
	if (!bp->syscalls)
		return -ENOMEM;
	nla_for_each_nested(attr, nest, rem) {
		if (n++ == PBTRACE_MAX_SYSCALLS) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "too many syscalls: at most 512 per buffer");
			return -E2BIG;
		}
		nr = nla_get_u32(attr);
		if (nr >= NR_syscalls) {
			PBT_ERR_MSG_ATTR_FMT(extack, attr,
					     "a syscall number is not below NR_syscalls: use this kernel's numbers",
					     "syscall number %u is not below NR_syscalls (%u)",
					     nr, (unsigned int)NR_syscalls);
			return -EINVAL;
		}
		set_bit(nr, bp->syscalls);
	}
	if (!n) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "buffer syscalls list is empty: leave it out to record every syscall");
		return -EINVAL;
	}
	return 0;
}

/* "host", "*" or a relayed machine's name; absent means "host" only. */
static int parse_machines(struct nlattr *nest, struct pbt_buffer_params *bp,
			  struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	int rem;

	nla_for_each_nested(attr, nest, rem) {
		if (bp->nr_machines == PBTRACE_MAX_MACHINE_NAMES) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "too many machine names: at most 8 per buffer (\"*\" means every relayed machine)");
			return -E2BIG;
		}
		if (!nla_strscpy(bp->machines[bp->nr_machines], attr,
				 PBTRACE_NAME_MAX)) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "machine name must not be empty: use \"host\", \"*\" or a relay_name");
			return -EINVAL;
		}
		bp->nr_machines++;
	}
	if (!bp->nr_machines) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "buffer machines list is empty: leave it out for this machine only");
		return -EINVAL;
	}
	return 0;
}

static int check_sizes(struct nlattr *attr, struct pbt_buffer_params *bp,
		       struct netlink_ext_ack *extack)
{
	if (!is_power_of_2(bp->chunk_kb)) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "buffer chunk_kb must be a power of two (4..256)");
		return -EINVAL;
	}
	if ((u64)bp->chunk_kb * nr_cpu_ids > bp->size_kb) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "buffer size_kb must be at least chunk_kb * nr_cpus: raise size_kb or lower chunk_kb");
		return -EINVAL;
	}
	if (bp->size_kb > PBT_MAX_SIZE_KB) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "buffer size_kb is above 1048576 (1 GiB): ask for less");
		return -EINVAL;
	}
	return 0;
}

static int parse_buffer(struct nlattr *attr, struct pbt_buffer_params *bp,
			u32 *nr_tps, const struct pbt_session_params *who,
			struct netlink_ext_ack *extack)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	int ret;

	if (nla_type(attr) != PBTRACE_A_BUFFER) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "buffers must hold only PBTRACE_A_BUFFER nests");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, PBTRACE_A_MAX, attr, buffer_policy, extack);
	if (ret)
		return ret;
	if (NL_REQ_ATTR_CHECK(extack, attr, tb, PBTRACE_A_BUFFER_SIZE_KB)) {
		NL_SET_ERR_MSG(extack, "buffer needs size_kb");
		return -EINVAL;
	}
	if (!tb[PBTRACE_A_BUFFER_TRACEPOINTS] &&
	    NL_REQ_ATTR_CHECK(extack, attr, tb, PBTRACE_A_BUFFER_EVENTS)) {
		NL_SET_ERR_MSG(extack, "buffer needs events or tracepoints");
		return -EINVAL;
	}
	bp->size_kb = nla_get_u32(tb[PBTRACE_A_BUFFER_SIZE_KB]);
	bp->chunk_kb = PBT_DEFAULT_CHUNK_KB;
	if (tb[PBTRACE_A_BUFFER_CHUNK_KB])
		bp->chunk_kb = nla_get_u32(tb[PBTRACE_A_BUFFER_CHUNK_KB]);
	bp->fill_policy = PBTRACE_FILL_RING_BUFFER;
	if (tb[PBTRACE_A_BUFFER_FILL_POLICY] &&
	    nla_get_u32(tb[PBTRACE_A_BUFFER_FILL_POLICY]))
		bp->fill_policy = nla_get_u32(tb[PBTRACE_A_BUFFER_FILL_POLICY]);
	bp->full_sched = nla_get_flag(tb[PBTRACE_A_BUFFER_FULL_SCHED]);
	bp->follow_forks = nla_get_flag(tb[PBTRACE_A_BUFFER_FOLLOW_FORKS]);
	if (tb[PBTRACE_A_BUFFER_WATERMARK_MS])
		bp->watermark_ms = nla_get_u32(tb[PBTRACE_A_BUFFER_WATERMARK_MS]);
	bp->watermark_expedited =
		nla_get_flag(tb[PBTRACE_A_BUFFER_WATERMARK_EXPEDITED]);
	ret = check_sizes(attr, bp, extack);
	if (!ret && bp->watermark_expedited && !bp->watermark_ms) {
		NL_SET_ERR_MSG_ATTR(extack, tb[PBTRACE_A_BUFFER_WATERMARK_EXPEDITED],
				    "watermark_expedited needs a watermark period (PBTRACE_A_BUFFER_WATERMARK_MS)");
		ret = -EINVAL;
	}
	if (!ret && tb[PBTRACE_A_BUFFER_EVENTS])
		ret = parse_events(tb[PBTRACE_A_BUFFER_EVENTS], bp, extack);
	if (!ret && tb[PBTRACE_A_BUFFER_TRACEPOINTS])
		ret = pbt_tp_parse(tb[PBTRACE_A_BUFFER_TRACEPOINTS], bp, nr_tps,
				   who, extack);
	if (!ret && tb[PBTRACE_A_BUFFER_PIDS])
		ret = parse_pids(tb[PBTRACE_A_BUFFER_PIDS], bp, extack);
	if (!ret && bp->follow_forks && !bp->nr_pids) {
		NL_SET_ERR_MSG_ATTR(extack, tb[PBTRACE_A_BUFFER_FOLLOW_FORKS],
				    "follow_forks needs a pid filter (PBTRACE_A_BUFFER_PIDS) to start from");
		ret = -EINVAL;
	}
	if (!ret && tb[PBTRACE_A_BUFFER_SYSCALLS])
		ret = parse_syscalls(tb[PBTRACE_A_BUFFER_SYSCALLS], bp, extack);
	if (!ret && tb[PBTRACE_A_BUFFER_MACHINES])
		ret = parse_machines(tb[PBTRACE_A_BUFFER_MACHINES], bp, extack);
	return ret;
}

static int parse_buffers(struct nlattr *nest, struct pbt_session_params *p,
			 struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	int rem, ret;
	u32 nr_tps = 0;

	nla_for_each_nested(attr, nest, rem) {
		if (p->nr_buffers == PBTRACE_MAX_BUFFERS) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "too many buffers: at most 4 per session");
			return -E2BIG;
		}
		ret = parse_buffer(attr, &p->buffers[p->nr_buffers], &nr_tps, p,
				   extack);
		if (ret)
			return ret;
		p->nr_buffers++;
	}
	if (!p->nr_buffers) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "session needs at least one buffer");
		return -EINVAL;
	}
	return 0;
}

/*
 * Copies output, config and buffers, those present, out of the request
 * into p (NEW and SET); sets their PBT_SET_* bits in *what.
 */
static int parse_contents(struct genl_info *info, struct pbt_session_params *p,
			  unsigned int *what)
{
	struct nlattr **attrs = info->attrs;
	struct nlattr *attr;

	*what = 0;
	attr = attrs[PBTRACE_A_SESSION_OUTPUT];
	if (attr) {
		p->output = nla_strdup(attr, GFP_KERNEL_ACCOUNT);
		if (!p->output)
			return -ENOMEM;
	}
	attr = attrs[PBTRACE_A_SESSION_CONFIG];
	if (attr && nla_len(attr)) {
		p->config = kvmalloc(nla_len(attr), GFP_KERNEL_ACCOUNT);
		if (!p->config)
			return -ENOMEM;
		memcpy(p->config, nla_data(attr), nla_len(attr));
		p->config_len = nla_len(attr);
	}
	if (attrs[PBTRACE_A_SESSION_OUTPUT])
		*what |= PBT_SET_OUTPUT;
	if (attrs[PBTRACE_A_SESSION_CONFIG])
		*what |= PBT_SET_CONFIG;
	if (!attrs[PBTRACE_A_SESSION_BUFFERS])
		return 0;
	*what |= PBT_SET_BUFFERS;
	return parse_buffers(attrs[PBTRACE_A_SESSION_BUFFERS], p, info->extack);
}

/*
 * Whose request @p is (before it is parsed: its tracepoints are checked
 * as that user's): the credentials perf decides by, kept by a new session
 * for its START, and whether root's rules or a member's apply.
 */
static void who_asks(struct sk_buff *skb, struct pbt_session_params *p)
{
	p->cred = get_current_cred();
	p->member = !netlink_capable(skb, CAP_SYS_ADMIN);
}

static int parse_session(struct genl_info *info, struct pbt_session_params *p)
{
	struct nlattr *attr;
	unsigned int what;

	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_SESSION_NAME)) {
		NL_SET_ERR_MSG(info->extack, "session needs a name");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_SESSION_BUFFERS)) {
		NL_SET_ERR_MSG(info->extack, "session needs buffers");
		return -EINVAL;
	}
	attr = info->attrs[PBTRACE_A_SESSION_NAME];
	if (!nla_strscpy(p->name, attr, sizeof(p->name))) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "session name must not be empty");
		return -EINVAL;
	}
	return parse_contents(info, p, &what);
}

static int pbt_nl_new_session(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session_params *p;
	struct sk_buff *reply;
	void *hdr;
	u32 id;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	reply = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!p || !reply) {
		ret = -ENOMEM;
		goto out;
	}
	who_asks(skb, p);
	ret = parse_session(info, p);
	if (!ret)
		ret = member_limits(skb, info, p);
	if (ret)
		goto out;
	p->owner_uid = current_euid();
	p->owner_gid = current_egid();
	ret = pbt_session_new(p, &id, info->extack);
	if (ret)
		goto out;
	hdr = genlmsg_put_reply(reply, info, &pbt_family, 0,
				PBTRACE_CMD_NEW_SESSION);
	if (!hdr || nla_put_u32(reply, PBTRACE_A_SESSION_ID, id)) {
		pbt_session_destroy(id, NULL);
		ret = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(reply, hdr);
	kfree(p);
	return genlmsg_reply(reply, info);

out:
	if (p)
		pbt_params_free(p);
	kfree(p);
	nlmsg_free(reply);
	return ret;
}

/* The PBTRACE_A_SESSION_ID a command needs. */
static int session_id(struct genl_info *info, u32 *id)
{
	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_SESSION_ID)) {
		NL_SET_ERR_MSG(info->extack, "needs a session id");
		return -EINVAL;
	}
	*id = nla_get_u32(info->attrs[PBTRACE_A_SESSION_ID]);
	return 0;
}

/* SET_SESSION: a CONFIGURED session's config, output and/or buffers. */
static int pbt_nl_set_session(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session_params *p;
	struct pbt_session *s;
	unsigned int what;
	u32 id;
	int ret;

	ret = session_id(info, &id);
	if (ret)
		return ret;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	who_asks(skb, p);
	ret = parse_contents(info, p, &what);
	if (!ret && (what & PBT_SET_BUFFERS))
		ret = member_limits(skb, info, p);
	if (!ret && !what) {
		NL_SET_ERR_MSG(info->extack, "nothing to change: give config, output and/or buffers");
		ret = -EINVAL;
	}
	/* The name is the session's identity: the same one may be repeated. */
	if (!ret && info->attrs[PBTRACE_A_SESSION_NAME]) {
		s = pbt_session_get(id);
		if (s && nla_strcmp(info->attrs[PBTRACE_A_SESSION_NAME],
				    s->params.name)) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[PBTRACE_A_SESSION_NAME],
					    "a session's name cannot change: create a new session instead");
			ret = -EINVAL;
		}
		pbt_session_put(s);
	}
	if (ret) {
		pbt_params_free(p);
		kfree(p);
		return ret;
	}
	ret = pbt_session_set(id, p, what, info->extack);
	kfree(p);
	return ret;
}

/* ADD_TRACEPOINTS: a piece of a session's tracepoints (pbt_session_add_tps). */
static int pbt_nl_add_tps(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session_params *who;
	struct pbt_buffer_params *bp;
	u32 id, index, total = 0;
	int ret;

	ret = session_id(info, &id);
	if (ret)
		return ret;
	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_BUFFER_INDEX) ||
	    GENL_REQ_ATTR_CHECK(info, PBTRACE_A_BUFFER_TRACEPOINTS)) {
		NL_SET_ERR_MSG(info->extack, "add tracepoints needs a buffer index and tracepoints");
		return -EINVAL;
	}
	index = nla_get_u32(info->attrs[PBTRACE_A_BUFFER_INDEX]);
	who = kzalloc(sizeof(*who), GFP_KERNEL);
	bp = kzalloc(sizeof(*bp), GFP_KERNEL);
	if (!who || !bp) {
		ret = -ENOMEM;
		goto out;
	}
	who_asks(skb, who);
	ret = pbt_tp_parse(info->attrs[PBTRACE_A_BUFFER_TRACEPOINTS], bp,
			   &total, who, info->extack);
	if (!ret)
		ret = pbt_session_add_tps(id, index, bp, info->extack);
out:
	if (bp)
		kvfree(bp->tps);
	if (who)
		put_cred(who->cred);
	kfree(bp);
	kfree(who);
	return ret;
}

static void explain_session_error(u8 cmd, int ret,
				  struct netlink_ext_ack *extack)
{
	if (extack->_msg)	/* said already (a tracepoint at START) */
		return;
	if (ret == -ENOENT)
		no_session(extack);
	else if (cmd == PBTRACE_CMD_START_SESSION && ret == -EALREADY)
		NL_SET_ERR_MSG(extack, "session is already started");
	else if (cmd == PBTRACE_CMD_START_SESSION && ret == -EINVAL)
		NL_SET_ERR_MSG(extack, "a stopped session cannot start again: create a new one");
	else if (cmd == PBTRACE_CMD_START_SESSION)
		NL_SET_ERR_MSG(extack, "cannot register the tracepoint probes: see dmesg");
	else if (cmd == PBTRACE_CMD_STOP_SESSION && ret == -EALREADY)
		NL_SET_ERR_MSG(extack, "session is already stopped");
}

/* START, STOP, FLUSH, DESTROY: the same shape, one session id. */
static int pbt_nl_session_op(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	u32 id;
	int ret;

	ret = session_id(info, &id);
	if (ret)
		return ret;
	switch (cmd) {
	case PBTRACE_CMD_START_SESSION:
		ret = pbt_session_start(id, info->extack);
		break;
	case PBTRACE_CMD_STOP_SESSION:
		ret = pbt_session_stop(id);
		break;
	case PBTRACE_CMD_FLUSH_SESSION:
		ret = pbt_session_flush(id);
		break;
	default:
		ret = pbt_session_destroy(id, info->attrs[PBTRACE_A_SESSION_ERROR] ?
					  nla_data(info->attrs[PBTRACE_A_SESSION_ERROR]) :
					  NULL);
		break;
	}
	if (ret)
		explain_session_error(cmd, ret, info->extack);
	return ret;
}

static u32 current_daemon_pid(void)
{
	u32 pid;

	spin_lock_bh(&daemon_lock);
	pid = daemon_pid;
	spin_unlock_bh(&daemon_lock);
	return pid;
}

static int put_events(struct sk_buff *msg, u64 events)
{
	struct nlattr *nest;
	int ev;

	nest = nla_nest_start(msg, PBTRACE_A_BUFFER_EVENTS);
	if (!nest)
		return -EMSGSIZE;
	for (ev = 0; ev < PBT_NR_EVENTS; ev++)
		if ((events & BIT_ULL(ev)) &&
		    nla_put_string(msg, PBTRACE_A_EVENT_NAME, pbt_event_name(ev)))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_pids(struct sk_buff *msg, const struct pbt_buffer_params *bp)
{
	struct nlattr *nest;
	u32 i;

	if (!bp->nr_pids)
		return 0;
	nest = nla_nest_start(msg, PBTRACE_A_BUFFER_PIDS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < bp->nr_pids; i++)
		if (nla_put_u32(msg, PBTRACE_A_PID, bp->pids[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_syscalls(struct sk_buff *msg, const struct pbt_buffer_params *bp)
{
	struct nlattr *nest;
	unsigned int nr;

	if (!bp->syscalls)
		return 0;
	nest = nla_nest_start(msg, PBTRACE_A_BUFFER_SYSCALLS);
	if (!nest)
		return -EMSGSIZE;
	for_each_set_bit(nr, bp->syscalls, NR_syscalls)
		if (nla_put_u32(msg, PBTRACE_A_SYSCALL_NR, nr))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_machine_names(struct sk_buff *msg,
			     const struct pbt_buffer_params *bp)
{
	struct nlattr *nest;
	u32 i;

	if (!bp->nr_machines)
		return 0;
	nest = nla_nest_start(msg, PBTRACE_A_BUFFER_MACHINES);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < bp->nr_machines; i++)
		if (nla_put_string(msg, PBTRACE_A_MACHINE_NAME, bp->machines[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_buffer(struct sk_buff *msg, struct pbt_session *s,
		      unsigned int i)
{
	const struct pbt_buffer_params *bp = &s->params.buffers[i];
	struct nlattr *nest;

	nest = nla_nest_start(msg, PBTRACE_A_BUFFER);
	if (!nest ||
	    nla_put_u32(msg, PBTRACE_A_BUFFER_SIZE_KB, bp->size_kb) ||
	    nla_put_u32(msg, PBTRACE_A_BUFFER_CHUNK_KB, bp->chunk_kb) ||
	    nla_put_u32(msg, PBTRACE_A_BUFFER_FILL_POLICY, bp->fill_policy) ||
	    put_events(msg, bp->events) || put_pids(msg, bp) ||
	    put_syscalls(msg, bp) || put_machine_names(msg, bp) ||
	    (bp->full_sched && nla_put_flag(msg, PBTRACE_A_BUFFER_FULL_SCHED)) ||
	    (bp->follow_forks &&
	     nla_put_flag(msg, PBTRACE_A_BUFFER_FOLLOW_FORKS)) ||
	    (bp->watermark_ms &&
	     nla_put_u32(msg, PBTRACE_A_BUFFER_WATERMARK_MS, bp->watermark_ms)) ||
	    (bp->watermark_expedited &&
	     nla_put_flag(msg, PBTRACE_A_BUFFER_WATERMARK_EXPEDITED)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_session(struct sk_buff *msg, struct pbt_session *s)
{
	const struct pbt_session_params *p = &s->params;
	struct nlattr *nest;
	unsigned int i;

	if (nla_put_u32(msg, PBTRACE_A_SESSION_ID, s->id) ||
	    nla_put_string(msg, PBTRACE_A_SESSION_NAME, p->name) ||
	    nla_put_u32(msg, PBTRACE_A_SESSION_STATE, s->state) ||
	    nla_put_u64_64bit(msg, PBTRACE_A_SESSION_START_NS, s->start_ns,
			      PBTRACE_A_PAD) ||
	    nla_put_u64_64bit(msg, PBTRACE_A_SESSION_STOP_NS, s->stop_ns,
			      PBTRACE_A_PAD) ||
	    nla_put_u32(msg, PBTRACE_A_DAEMON_PID, current_daemon_pid()))
		return -EMSGSIZE;
	if (p->output && nla_put_string(msg, PBTRACE_A_SESSION_OUTPUT, p->output))
		return -EMSGSIZE;
	if (p->config_len &&
	    nla_put(msg, PBTRACE_A_SESSION_CONFIG, p->config_len, p->config))
		return -EMSGSIZE;
	if (p->relay && nla_put_u8(msg, PBTRACE_A_SESSION_RELAY, 1))
		return -EMSGSIZE;
	if (nla_put_u32(msg, PBTRACE_A_SESSION_OWNER_UID,
			from_kuid_munged(&init_user_ns, p->owner_uid)) ||
	    nla_put_u32(msg, PBTRACE_A_SESSION_OWNER_GID,
			from_kgid_munged(&init_user_ns, p->owner_gid)))
		return -EMSGSIZE;
	nest = nla_nest_start(msg, PBTRACE_A_SESSION_BUFFERS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < p->nr_buffers; i++)
		if (put_buffer(msg, s, i))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int fill_session(struct sk_buff *msg, struct pbt_session *s,
			u32 portid, u32 seq, int flags)
{
	void *hdr;
	int ret;

	hdr = genlmsg_put(msg, portid, seq, &pbt_family, flags,
			  PBTRACE_CMD_GET_SESSION);
	if (!hdr)
		return -EMSGSIZE;
	/* The lock keeps state, times and buffers consistent with each other. */
	mutex_lock(&pbt_sessions_lock);
	ret = put_session(msg, s);
	mutex_unlock(&pbt_sessions_lock);
	if (ret) {
		genlmsg_cancel(msg, hdr);
		return ret;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

/*
 * Upper bound of one session message: config and output dominate. It
 * does not grow with the CPUs or the relayed machines: their counters are
 * GET_CPU_STATS' and GET_SESSION_MACHINES'.
 */
static size_t session_msg_size(void)
{
	size_t buffer = nla_total_size(0) + 5 * nla_total_size(4) +
			nla_total_size(0) + PBT_NR_EVENTS * nla_total_size(PBTRACE_NAME_MAX) +
			nla_total_size(0) + PBTRACE_MAX_PIDS * nla_total_size(4) +
			nla_total_size(0) + PBTRACE_MAX_SYSCALLS * nla_total_size(4) +
			nla_total_size(0) + PBTRACE_MAX_MACHINE_NAMES *
			nla_total_size(PBTRACE_NAME_MAX);

	return NLMSG_GOODSIZE + nla_total_size(PBTRACE_MAX_CONFIG) +
	       nla_total_size(PATH_MAX) + PBTRACE_MAX_BUFFERS * buffer;
}

static int pbt_nl_get_session(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session *s;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_SESSION_ID)) {
		NL_SET_ERR_MSG(info->extack, "needs a session id, or ask with NLM_F_DUMP for all");
		return -EINVAL;
	}
	s = pbt_session_get(nla_get_u32(info->attrs[PBTRACE_A_SESSION_ID]));
	if (!s) {
		NL_SET_ERR_MSG(info->extack, "no session with this id: 'tracectl status' lists them");
		return -ENOENT;
	}
	msg = genlmsg_new(session_msg_size(), GFP_KERNEL);
	ret = msg ? fill_session(msg, s, info->snd_portid, info->snd_seq, 0) :
		    -ENOMEM;
	pbt_session_put(s);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int pbt_nl_get_session_start(struct netlink_callback *cb)
{
	/* One session must fit one dump message, config and all. */
	cb->min_dump_alloc = session_msg_size();
	cb->args[0] = 0;	/* last session id sent */
	/* A member (no CAP_PERFMON) lists only the sessions it created. */
	cb->args[1] = !sees_all(cb->skb);
	cb->args[2] = from_kuid_munged(&init_user_ns, current_euid());
	return may_read(cb->skb, cb->extack);
}

static bool dump_shows(struct netlink_callback *cb, struct pbt_session *s)
{
	return !cb->args[1] ||
	       from_kuid_munged(&init_user_ns, s->params.owner_uid) == cb->args[2];
}

static int pbt_nl_get_session_dump(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct pbt_session *s;
	int ret = 0;

	while ((s = pbt_session_get_next(cb->args[0]))) {
		ret = !dump_shows(cb, s) ? 0 :
		      fill_session(skb, s, NETLINK_CB(cb->skb).portid,
				   cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (!ret)
			cb->args[0] = s->id;
		pbt_session_put(s);
		if (ret)
			break;
	}
	/* A session that does not fit an empty message would loop forever. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

/*
 * GET_CPU_STATS, paged: one struct per possible CPU and buffer is 92 bytes
 * each, which on a large host outgrows the 64 KiB a nest can say (its
 * length is 16 bits) and the message GET_SESSION could allocate. So each
 * message holds a run of one buffer's CPUs, at most CPU_STATS_PER_MSG.
 * cb->args: [0] session id, [1] buffer, [2] the next CPU to send.
 */
#define CPU_STATS_PER_MSG 256

/* GET_CPU_STATS, GET_SESSION_MACHINES: a dump of one session's counters. */
static int pbt_nl_session_dump_start(struct netlink_callback *cb)
{
	/* Checked against pbt_policy already: a u32 if there. */
	const struct nlattr *id = nlmsg_find_attr(cb->nlh, GENL_HDRLEN,
						  PBTRACE_A_SESSION_ID);
	struct pbt_session *s;
	int ret = may_read(cb->skb, cb->extack);

	if (ret)
		return ret;
	if (!id) {
		NL_SET_ERR_MSG(cb->extack, "needs a session id: 'tracectl status' lists them");
		return -EINVAL;
	}
	s = pbt_session_get(nla_get_u32(id));
	/* A member (no CAP_PERFMON) looks at its own sessions only. */
	if (!s || (!sees_all(cb->skb) &&
		   !uid_eq(s->params.owner_uid, current_euid())))
		ret = no_session(cb->extack);
	pbt_session_put(s);
	if (ret)
		return ret;
	cb->args[0] = nla_get_u32(id);
	cb->args[1] = 0;
	cb->args[2] = 0;
	return 0;
}

/* One message of buffer cb->args[1]'s CPUs; -EMSGSIZE when @skb is full. */
static int fill_cpu_stats(struct sk_buff *skb, struct netlink_callback *cb,
			  struct pbt_session *s)
{
	struct pbt_buffer *b = s->buffers[cb->args[1]];
	struct pbtrace_cpu_stats st;
	struct nlattr *nest;
	int cpu, n = 0;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &pbt_family, NLM_F_MULTI, PBTRACE_CMD_GET_CPU_STATS);
	if (!hdr)
		return -EMSGSIZE;
	nest = NULL;
	if (!nla_put_u32(skb, PBTRACE_A_SESSION_ID, s->id) &&
	    !nla_put_u32(skb, PBTRACE_A_BUFFER_INDEX, cb->args[1]))
		nest = nla_nest_start(skb, PBTRACE_A_BUFFER_CPUS);
	if (!nest)
		goto full;
	for (cpu = cpumask_next(cb->args[2] - 1, cpu_possible_mask);
	     cpu < nr_cpu_ids && n < CPU_STATS_PER_MSG;
	     cpu = cpumask_next(cpu, cpu_possible_mask), n++) {
		memset(&st, 0, sizeof(st));
		pbt_buffer_stats(b, cpu, &st);
		if (nla_put(skb, PBTRACE_A_CPU_STATS, sizeof(st), &st))
			break;
	}
	if (!n)
		goto full;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	cb->args[2] = cpu;
	if (cpu >= nr_cpu_ids) {
		cb->args[1]++;
		cb->args[2] = 0;
	}
	return 0;
full:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int pbt_nl_cpu_stats_dump(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct pbt_session *s = pbt_session_get(cb->args[0]);
	int ret = 0;

	if (!s)			/* destroyed since start: the dump ends */
		return 0;
	mutex_lock(&pbt_sessions_lock);
	while (!ret && cb->args[1] < s->params.nr_buffers)
		ret = fill_cpu_stats(skb, cb, s);
	mutex_unlock(&pbt_sessions_lock);
	pbt_session_put(s);
	/* A message that does not fit an empty skb would loop forever. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

/*
 * GET_SESSION_TRACEPOINTS: one PBTRACE_A_TP as NEW_SESSION had it, without
 * its layout (tracefs has it): what the session records and how.
 */
static int put_tp_echo(struct sk_buff *skb, const struct pbt_tp_params *tp)
{
	struct nlattr *nest = nla_nest_start(skb, PBTRACE_A_TP);
	char name[2 * PBTRACE_NAME_MAX];

	snprintf(name, sizeof(name), "%s/%s", tp->layout.group, tp->layout.name);
	if (!nest || nla_put_string(skb, PBTRACE_A_TP_NAME, name) ||
	    nla_put_u32(skb, PBTRACE_A_TP_ID, tp->id) ||
	    nla_put_u32(skb, PBTRACE_A_TP_FLAGS, tp->flags) ||
	    nla_put_u32(skb, PBTRACE_A_TP_PROTO_ID, tp->layout.proto_id) ||
	    nla_put_u32(skb, PBTRACE_A_TP_PERIOD, tp->period) ||
	    (tp->filter_src[0] &&
	     nla_put_string(skb, PBTRACE_A_TP_FILTER, tp->filter_src))) {
		if (nest)
			nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * A nest says at most 64 KiB; a dump's skb is at most 32 KiB today, but
 * the nest must not depend on it.
 */
#define TP_ECHO_NEST_MAX (60 * 1024)

/*
 * One message of buffer cb->args[1]'s tracepoints from cb->args[2];
 * -EMSGSIZE when @skb is full.
 */
static int fill_tps(struct sk_buff *skb, struct netlink_callback *cb,
		    struct pbt_session *s)
{
	const struct pbt_buffer_params *bp = &s->params.buffers[cb->args[1]];
	struct nlattr *nest = NULL;
	u32 i = cb->args[2];
	void *hdr;

	if (i >= bp->nr_tps) {		/* none (left) in this buffer */
		cb->args[1]++;
		cb->args[2] = 0;
		return 0;
	}
	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &pbt_family, NLM_F_MULTI,
			  PBTRACE_CMD_GET_SESSION_TRACEPOINTS);
	if (!hdr)
		return -EMSGSIZE;
	if (!nla_put_u32(skb, PBTRACE_A_SESSION_ID, s->id) &&
	    !nla_put_u32(skb, PBTRACE_A_BUFFER_INDEX, cb->args[1]))
		nest = nla_nest_start(skb, PBTRACE_A_BUFFER_TRACEPOINTS);
	if (!nest)
		goto full;
	for (; i < bp->nr_tps; i++) {
		if ((u8 *)skb_tail_pointer(skb) - (u8 *)nest > TP_ECHO_NEST_MAX ||
		    put_tp_echo(skb, &bp->tps[i]))
			break;
	}
	if (i == cb->args[2])
		goto full;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	cb->args[2] = i;
	return 0;
full:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int pbt_nl_tps_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct pbt_session *s = pbt_session_get(cb->args[0]);
	int ret = 0;

	if (!s)			/* destroyed since start: the dump ends */
		return 0;
	mutex_lock(&pbt_sessions_lock);
	while (!ret && cb->args[1] < s->params.nr_buffers)
		ret = fill_tps(skb, cb, s);
	mutex_unlock(&pbt_sessions_lock);
	pbt_session_put(s);
	/* A message that does not fit an empty skb would loop forever. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

/* One buffer's watermarks; nothing for a buffer without one (yet). */
static int put_watermark(struct sk_buff *msg, struct pbt_session *s,
			 unsigned int i)
{
	struct nlattr *nest;
	u64 published, read;

	if (!s->wm[i])
		return 0;
	pbt_watermark_read(s->wm[i], &published, &read);
	nest = nla_nest_start(msg, PBTRACE_A_BUFFER);
	if (!nest || nla_put_u32(msg, PBTRACE_A_BUFFER_INDEX, i) ||
	    nla_put_u64_64bit(msg, PBTRACE_A_BUFFER_WATERMARK_NS, published,
			      PBTRACE_A_PAD) ||
	    nla_put_u64_64bit(msg, PBTRACE_A_BUFFER_READ_NS, read,
			      PBTRACE_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_watermarks(struct sk_buff *msg, struct pbt_session *s)
{
	struct nlattr *nest;
	unsigned int i;

	if (nla_put_u32(msg, PBTRACE_A_SESSION_ID, s->id) ||
	    nla_put_u32(msg, PBTRACE_A_SESSION_STATE, s->state))
		return -EMSGSIZE;
	nest = nla_nest_start(msg, PBTRACE_A_SESSION_BUFFERS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < s->params.nr_buffers; i++)
		if (put_watermark(msg, s, i))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * GET_WATERMARK: what a live reader of the file may print up to. Asked
 * every few ms while events flow (tracectl trace), so it is small: no
 * config, no buffers' settings.
 */
static int pbt_nl_get_watermark(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session *s;
	struct sk_buff *msg;
	void *hdr;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_SESSION_ID)) {
		NL_SET_ERR_MSG(info->extack, "needs a session id: 'tracectl status' lists them");
		return -EINVAL;
	}
	s = pbt_session_get(nla_get_u32(info->attrs[PBTRACE_A_SESSION_ID]));
	if (!s) {
		NL_SET_ERR_MSG(info->extack, "no session with this id: 'tracectl status' lists them");
		return -ENOENT;
	}
	ret = -ENOMEM;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	hdr = msg ? genlmsg_put_reply(msg, info, &pbt_family, 0,
				      PBTRACE_CMD_GET_WATERMARK) : NULL;
	if (hdr) {
		/* The lock: the state and the watermarks (set at start). */
		mutex_lock(&pbt_sessions_lock);
		ret = put_watermarks(msg, s);
		mutex_unlock(&pbt_sessions_lock);
	}
	pbt_session_put(s);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * GET_SESSION_MACHINES, paged: a session may have seen thousands of
 * machines, at about 200 bytes each. cb->args: [0] session id, [1] the
 * last machine id sent, [2] set once every one is.
 */
#define MACHINES_PER_MSG 128

static int put_session_machine(struct sk_buff *skb,
			       const struct pbt_machine_view *v)
{
	struct nlattr *m = nla_nest_start(skb, PBTRACE_A_MACHINE);

	if (!m)
		return -EMSGSIZE;
	if (nla_put_string(skb, PBTRACE_A_MACHINE_NAME, v->name) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_PEER, v->peer) ||
	    nla_put(skb, PBTRACE_A_MACHINE_STATS, sizeof(v->st), &v->st)) {
		nla_nest_cancel(skb, m);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, m);
	return 0;
}

/* One message of the session's machines after cb->args[1]. */
static int fill_session_machines(struct sk_buff *skb,
				 struct netlink_callback *cb,
				 struct pbt_session *s)
{
	struct pbt_machine_view v;
	struct nlattr *nest = NULL;
	u32 id = cb->args[1];
	bool more = true;
	void *hdr;
	int n = 0;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &pbt_family, NLM_F_MULTI,
			  PBTRACE_CMD_GET_SESSION_MACHINES);
	if (!hdr)
		return -EMSGSIZE;
	if (!nla_put_u32(skb, PBTRACE_A_SESSION_ID, s->id))
		nest = nla_nest_start(skb, PBTRACE_A_SESSION_MACHINES);
	if (!nest)
		goto full;
	while (n < MACHINES_PER_MSG) {
		more = pbt_remote_machine_next(s, &id, &v);
		if (!more || put_session_machine(skb, &v))
			break;
		cb->args[1] = id;
		n++;
	}
	if (!more)
		cb->args[2] = 1;	/* every machine is sent */
	if (!n)
		goto full;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
full:
	genlmsg_cancel(skb, hdr);
	return more ? -EMSGSIZE : 0;
}

static int pbt_nl_session_machines_dump(struct sk_buff *skb,
					struct netlink_callback *cb)
{
	struct pbt_session *s = pbt_session_get(cb->args[0]);
	int ret = 0;

	if (!s)			/* destroyed since start: the dump ends */
		return 0;
	while (!ret && !cb->args[2])
		ret = fill_session_machines(skb, cb, s);
	pbt_session_put(s);
	/* A message that does not fit an empty skb would loop forever. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

/* GET_MACHINES and GET_NAMES show guests' names and CIDs: root's. */
static int pbt_nl_endpoint_dump_start(struct netlink_callback *cb)
{
	cb->args[0] = 0;	/* the last machine id, the next name index */
	if (netlink_capable(cb->skb, CAP_SYS_ADMIN))
		return 0;
	NL_SET_ERR_MSG(cb->extack, "needs CAP_SYS_ADMIN: guests' names, kernels and CIDs are root's (docs/security.md)");
	return -EPERM;
}

static int put_endpoint_machine(struct sk_buff *skb,
				const struct pbt_endpoint_machine_view *v)
{
	if (nla_put(skb, PBTRACE_A_ENDPOINT_MACHINE, sizeof(v->m), &v->m) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_NAME, v->name) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_CLAIMED, v->claimed) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_PEER, v->peer) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_SYSNAME, v->sysname) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_RELEASE, v->release) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_ARCH, v->arch))
		return -EMSGSIZE;
	return 0;
}

static int pbt_nl_machines_dump(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct pbt_endpoint_machine_view *v;
	u32 id = cb->args[0];
	void *hdr;

	v = kmalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	while (pbt_endpoint_machine_next(&id, v)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &pbt_family, NLM_F_MULTI,
				  PBTRACE_CMD_GET_MACHINES);
		if (!hdr)
			break;
		if (put_endpoint_machine(skb, v)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = id;
	}
	kfree(v);
	return skb->len;
}

/* The names table by index; a load meanwhile marks the dump interrupted. */
static int pbt_nl_names_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct pbt_name_view v;
	void *hdr;
	u64 gen;

	for (; pbt_names_get(cb->args[0], &v, &gen); cb->args[0]++) {
		cb->seq = (u32)gen;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &pbt_family, NLM_F_MULTI,
				  PBTRACE_CMD_GET_NAMES);
		if (!hdr)
			break;
		genl_dump_check_consistent(cb, hdr);
		if (nla_put_string(skb, PBTRACE_A_MACHINE_NAME, v.name) ||
		    nla_put_u32(skb, PBTRACE_A_NAME_FLAGS, v.flags) ||
		    (!(v.flags & PBTRACE_NAME_KEYED) &&
		     nla_put_u32(skb, PBTRACE_A_NAME_CID, v.cid)) ||
		    (v.line && nla_put_u32(skb, PBTRACE_A_NAME_LINE, v.line))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	return skb->len;
}

/* One PBTRACE_A_NAME of a LOAD_NAMES request into @e (pointing into it). */
static int parse_name(struct nlattr *attr, struct pbt_name_entry *e,
		      struct netlink_ext_ack *extack)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	int ret;

	if (nla_type(attr) != PBTRACE_A_NAME) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "names must hold only PBTRACE_A_NAME nests");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, PBTRACE_A_MAX, attr, name_policy, extack);
	if (ret)
		return ret;
	if (NL_REQ_ATTR_CHECK(extack, attr, tb, PBTRACE_A_MACHINE_NAME)) {
		NL_SET_ERR_MSG(extack, "a names entry needs PBTRACE_A_MACHINE_NAME");
		return -EINVAL;
	}
	e->name = nla_data(tb[PBTRACE_A_MACHINE_NAME]);
	e->has_cid = tb[PBTRACE_A_NAME_CID];
	if (e->has_cid)
		e->cid = nla_get_u32(tb[PBTRACE_A_NAME_CID]);
	if (tb[PBTRACE_A_NAME_KEY]) {
		e->key = nla_data(tb[PBTRACE_A_NAME_KEY]);
		e->key_len = nla_len(tb[PBTRACE_A_NAME_KEY]);
	}
	if (tb[PBTRACE_A_NAME_LINE])
		e->line = nla_get_u32(tb[PBTRACE_A_NAME_LINE]);
	return 0;
}

/* The request's keys, once the table has its copies: not left in the skb. */
static void zero_keys(struct pbt_name_entry *e, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (e[i].key)
			memzero_explicit((void *)e[i].key, e[i].key_len);
}

static int put_load_reply(struct genl_info *info,
			  const struct pbt_names_result *res, bool commit)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	void *hdr;

	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &pbt_family, 0,
				PBTRACE_CMD_LOAD_NAMES);
	if (!hdr || nla_put_u32(msg, PBTRACE_A_LOAD_ID, res->id) ||
	    (commit && (nla_put_u32(msg, PBTRACE_A_NAMES_COUNT, res->count) ||
			nla_put_u32(msg, PBTRACE_A_NAMES_EVICTED, res->evicted)))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* LOAD_NAMES: a piece of a new names table, maybe its last (commit). */
static int pbt_nl_load_names(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *names = info->attrs[PBTRACE_A_NAMES], *attr;
	bool commit = nla_get_flag(info->attrs[PBTRACE_A_LOAD_COMMIT]);
	struct pbt_names_result res = {};
	struct pbt_name_entry *e = NULL;
	u32 n = 0, cap = 0;
	int rem, ret = 0;

	if (info->attrs[PBTRACE_A_LOAD_ID])
		res.id = nla_get_u32(info->attrs[PBTRACE_A_LOAD_ID]);
	if (names) {
		nla_for_each_nested(attr, names, rem)
			cap++;
		e = kvcalloc(max(cap, 1u), sizeof(*e), GFP_KERNEL);
		if (!e)
			return -ENOMEM;
		nla_for_each_nested(attr, names, rem) {
			ret = parse_name(attr, &e[n], info->extack);
			if (ret)
				break;
			n++;
		}
	}
	if (!ret)
		ret = pbt_names_load(info->snd_portid, e, n, commit, &res,
				     info->extack);
	else		/* a bad piece ends its load, as in pbt_names_load */
		pbt_names_abort(info->snd_portid, res.id);
	zero_keys(e, n);
	kvfree(e);
	return ret ? ret : put_load_reply(info, &res, commit);
}

static int pbt_nl_list_events_start(struct netlink_callback *cb)
{
	cb->args[0] = 0;	/* next event id */
	return may_read(cb->skb, cb->extack);
}

static int pbt_nl_list_events_dump(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	void *hdr;
	int ev;

	for (ev = cb->args[0]; ev < PBT_NR_EVENTS; ev++) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &pbt_family, NLM_F_MULTI,
				  PBTRACE_CMD_LIST_EVENTS);
		if (!hdr)
			break;
		if (nla_put_string(skb, PBTRACE_A_EVENT_NAME, pbt_event_name(ev)) ||
		    nla_put_u8(skb, PBTRACE_A_EVENT_AVAILABLE,
			       pbt_event_available(ev))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	cb->args[0] = ev;
	return skb->len;
}

static void multicast(struct sk_buff *msg)
{
	/* -ESRCH only means nobody listens: not an error for the sender. */
	genlmsg_multicast(&pbt_family, msg, 0, 0, GFP_KERNEL);
}

static struct sk_buff *notify_msg(u8 cmd, void **hdr)
{
	struct sk_buff *msg;

	if (!READ_ONCE(family_registered))
		return NULL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		pr_warn_ratelimited("pbtrace: notification %u lost: out of memory\n", cmd);
		return NULL;
	}
	*hdr = genlmsg_put(msg, 0, 0, &pbt_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/*
 * A session change (session.c calls it through pbt_session_observe()), or
 * DAEMON_GONE with no session: DESTROY's carries why the session ended.
 */
static void pbt_netlink_notify(u8 cmd, u32 session_id, const char *error)
{
	struct sk_buff *msg;
	void *hdr;

	msg = notify_msg(cmd, &hdr);
	if (!msg)
		return;
	if ((session_id && nla_put_u32(msg, PBTRACE_A_SESSION_ID, session_id)) ||
	    (error && nla_put_string(msg, PBTRACE_A_SESSION_ERROR, error))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	multicast(msg);
}

static int pbt_nl_trigger(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct nlattr *attr;
	void *hdr;

	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_TRIGGER_NAME)) {
		NL_SET_ERR_MSG(info->extack, "trigger needs a name");
		return -EINVAL;
	}
	attr = info->attrs[PBTRACE_A_TRIGGER_NAME];
	if (!*(char *)nla_data(attr)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "trigger name must not be empty");
		return -EINVAL;
	}
	msg = notify_msg(PBTRACE_CMD_TRIGGER, &hdr);
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, PBTRACE_A_TRIGGER_NAME, nla_data(attr))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	multicast(msg);
	return 0;
}

static int pbt_nl_register_daemon(struct sk_buff *skb, struct genl_info *info)
{
	int ret = 0;

	spin_lock_bh(&daemon_lock);
	if (daemon_portid && daemon_portid != info->snd_portid) {
		NL_SET_ERR_MSG(info->extack, "another traced is registered: stop it first");
		ret = -EBUSY;
	} else {
		daemon_portid = info->snd_portid;
		daemon_pid = task_tgid_nr(current);
	}
	spin_unlock_bh(&daemon_lock);
	return ret;
}

static int pbt_nl_get_status(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &pbt_family, 0, PBTRACE_CMD_GET_STATUS);
	if (!hdr || nla_put_u32(msg, PBTRACE_A_DAEMON_PID, current_daemon_pid())) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static void daemon_gone_work_fn(struct work_struct *work)
{
	pbt_netlink_notify(PBTRACE_CMD_DAEMON_GONE, 0, NULL);
}

static DECLARE_WORK(daemon_gone_work, daemon_gone_work_fn);

/*
 * Called when any netlink socket is released. Sessions and buffers stay:
 * a restarted traced reattaches; the multicast lets others know meanwhile.
 */
static int pbt_netlink_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct netlink_notify *n = ptr;
	bool gone = false;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	spin_lock_bh(&daemon_lock);
	if (daemon_portid && n->portid == daemon_portid) {
		daemon_portid = 0;
		daemon_pid = 0;
		gone = true;
	}
	spin_unlock_bh(&daemon_lock);
	/* Notifier context: leave the allocation and multicast to a worker. */
	if (gone)
		schedule_work(&daemon_gone_work);
	pbt_names_socket_closed(n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block pbt_netlink_notifier = {
	.notifier_call = pbt_netlink_event,
};

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

static struct genl_family pbt_family __ro_after_init = {
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
	WRITE_ONCE(family_registered, true);
	pbt_session_observe(pbt_netlink_notify);
	return 0;
}

void pbt_netlink_exit(void)
{
	pbt_session_observe(NULL);
	netlink_unregister_notifier(&pbt_netlink_notifier);
	cancel_work_sync(&daemon_gone_work);
	WRITE_ONCE(family_registered, false);
	genl_unregister_family(&pbt_family);
}
