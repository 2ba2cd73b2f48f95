// SPDX-License-Identifier: GPL-2.0
/*
 * The family's policies, and a session's attributes (name, output, config,
 * buffers) parsed into struct pbt_session_params for NEW and SET_SESSION.
 * Nothing is kept here: on an error the caller frees what was filled in
 * (pbt_params_free()).
 *
 * Every attribute has a policy and validation is strict: an attribute the
 * policy does not name, a string without its NUL or a nest without
 * NLA_F_NESTED fails the request before any handler runs.
 */

#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <asm/unistd.h>

#include "pbtrace.h"
#include "compat.h"
#include "netlink.h"

#define PBT_DEFAULT_CHUNK_KB 16
#define PBT_MAX_SIZE_KB (1024 * 1024)	/* 1 GiB per buffer is plenty */

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
const struct nla_policy pbt_name_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_MACHINE_NAME]	= { .type = NLA_NUL_STRING, .len = PBTRACE_NAME_MAX - 1 },
	[PBTRACE_A_NAME_CID]		= { .type = NLA_U32 },
	[PBTRACE_A_NAME_KEY]		= NLA_POLICY_RANGE(NLA_BINARY, 16, PBTRACE_NAME_KEY_MAX),
	[PBTRACE_A_NAME_LINE]		= { .type = NLA_U32 },
};

const struct nla_policy pbt_policy[PBTRACE_A_MAX + 1] = {
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
	[PBTRACE_A_NAMES]		= NLA_POLICY_NESTED_ARRAY(pbt_name_policy),
};

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
int pbt_nl_parse_contents(struct genl_info *info, struct pbt_session_params *p,
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

int pbt_nl_parse_session(struct genl_info *info, struct pbt_session_params *p)
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
	return pbt_nl_parse_contents(info, p, &what);
}
