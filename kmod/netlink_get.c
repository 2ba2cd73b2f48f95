// SPDX-License-Identifier: GPL-2.0
/*
 * Looking at sessions: GET_SESSION (one, or a dump of all); what it leaves
 * out because it would outgrow a message or a nest, in dumps of one
 * session paged over messages: GET_CPU_STATS, GET_SESSION_TRACEPOINTS
 * (and GET_SESSION_MACHINES' start; its dump is netlink_machines.c's);
 * GET_WATERMARK, small for a live reader; and LIST_EVENTS. A member sees
 * its own sessions only.
 */

#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/limits.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <asm/unistd.h>

#include "pbtrace.h"
#include "compat.h"
#include "netlink.h"

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
	    nla_put_u32(msg, PBTRACE_A_DAEMON_PID, pbt_nl_current_daemon_pid()))
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

int pbt_nl_get_session(struct sk_buff *skb, struct genl_info *info)
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

int pbt_nl_get_session_start(struct netlink_callback *cb)
{
	/* One session must fit one dump message, config and all. */
	cb->min_dump_alloc = session_msg_size();
	cb->args[0] = 0;	/* last session id sent */
	/* A member (no CAP_PERFMON) lists only the sessions it created. */
	cb->args[1] = !pbt_nl_sees_all(cb->skb);
	cb->args[2] = from_kuid_munged(&init_user_ns, current_euid());
	return pbt_nl_may_read(cb->skb, cb->extack);
}

static bool dump_shows(struct netlink_callback *cb, struct pbt_session *s)
{
	return !cb->args[1] ||
	       from_kuid_munged(&init_user_ns, s->params.owner_uid) == cb->args[2];
}

int pbt_nl_get_session_dump(struct sk_buff *skb,
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
int pbt_nl_session_dump_start(struct netlink_callback *cb)
{
	/* Checked against pbt_policy already: a u32 if there. */
	const struct nlattr *id = nlmsg_find_attr(cb->nlh, GENL_HDRLEN,
						  PBTRACE_A_SESSION_ID);
	struct pbt_session *s;
	int ret = pbt_nl_may_read(cb->skb, cb->extack);

	if (ret)
		return ret;
	if (!id) {
		NL_SET_ERR_MSG(cb->extack, "needs a session id: 'tracectl status' lists them");
		return -EINVAL;
	}
	s = pbt_session_get(nla_get_u32(id));
	/* A member (no CAP_PERFMON) looks at its own sessions only. */
	if (!s || (!pbt_nl_sees_all(cb->skb) &&
		   !uid_eq(s->params.owner_uid, current_euid())))
		ret = pbt_nl_no_session(cb->extack);
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

/*
 * A dump of session cb->args[0]'s buffers, buffer cb->args[1] on, as
 * messages @fill writes, until @skb is full or the buffers are done.
 */
/*
 * The session a per-session dump began on (cb->args[0]). Destroyed since:
 * NULL, and the dump ends in -ENOENT, not in a list cut short.
 */
struct pbt_session *pbt_nl_dump_session(struct netlink_callback *cb)
{
	struct pbt_session *s = pbt_session_get(cb->args[0]);

	if (!s)
		NL_SET_ERR_MSG(cb->extack, "the session was destroyed during the dump");
	return s;
}

static int dump_buffers(struct sk_buff *skb, struct netlink_callback *cb,
			int (*fill)(struct sk_buff *skb,
				    struct netlink_callback *cb,
				    struct pbt_session *s))
{
	struct pbt_session *s = pbt_nl_dump_session(cb);
	int ret = 0;

	if (!s)
		return -ENOENT;
	mutex_lock(&pbt_sessions_lock);
	while (!ret && cb->args[1] < s->params.nr_buffers)
		ret = fill(skb, cb, s);
	mutex_unlock(&pbt_sessions_lock);
	pbt_session_put(s);
	/* A message that does not fit an empty skb would loop forever. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

int pbt_nl_cpu_stats_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	return dump_buffers(skb, cb, fill_cpu_stats);
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

int pbt_nl_tps_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	return dump_buffers(skb, cb, fill_tps);
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
int pbt_nl_get_watermark(struct sk_buff *skb, struct genl_info *info)
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

int pbt_nl_list_events_start(struct netlink_callback *cb)
{
	cb->args[0] = 0;	/* next event id */
	return pbt_nl_may_read(cb->skb, cb->extack);
}

int pbt_nl_list_events_dump(struct sk_buff *skb,
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
