// SPDX-License-Identifier: GPL-2.0
/*
 * Any tracepoint by name (docs/generic-events.md): PBTRACE_A_TP parsed into
 * a buffer's parameters, and, while its session is started, one perf
 * kernel counter per online CPU per tracepoint whose overflow handler runs
 * inside the tracepoint itself (perf_trace_<call> -> perf_tp_event ->
 * __perf_event_overflow) with the ftrace record, which buffer.c encodes.
 * No ftrace ring buffer is involved.
 *
 * Counters are created from a kworker (full capabilities): with
 * PERF_SAMPLE_RAW, perf_trace_event_perm() checks the *current* task's
 * perfmon capability, and a session of a group= member (docs/security.md)
 * must work as root's does. The id userspace sends is checked at
 * NEW/SET_SESSION by creating a disabled counter and comparing its
 * tracepoint's group and name with the one asked for.
 */
#include <linux/cpu.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>
#include <net/netlink.h>

#include "pbtrace.h"
#include "compat.h"
#include "core/tp_encode.h"

/* NLA_POLICY_MAX takes an s16 bound (6.1): nothing above 8192 here. */
static const struct nla_policy tpf_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_TPF_NAME]		= { .type = NLA_NUL_STRING, .len = PBT_TPF_NAME_MAX - 1 },
	[PBTRACE_A_TPF_OFFSET]		= NLA_POLICY_MAX(NLA_U32, PBT_TP_RECORD_MAX),
	[PBTRACE_A_TPF_SIZE]		= NLA_POLICY_MAX(NLA_U32, PBT_TP_RECORD_MAX),
	[PBTRACE_A_TPF_KIND]		= NLA_POLICY_MAX(NLA_U32, U8_MAX),
	[PBTRACE_A_TPF_SIGNED]		= { .type = NLA_FLAG },
	[PBTRACE_A_TPF_ELEM_SIZE]	= NLA_POLICY_MAX(NLA_U32, 8),
	[PBTRACE_A_TPF_PROTO_ID]	= NLA_POLICY_MAX(NLA_U32, U8_MAX),
	[PBTRACE_A_TPF_PROTO_TYPE]	= NLA_POLICY_MAX(NLA_U32, PBT_PT_SINT64),
};

static const struct nla_policy tp_policy[PBTRACE_A_MAX + 1] = {
	[PBTRACE_A_TP_NAME]		= { .type = NLA_NUL_STRING, .len = 2 * PBTRACE_NAME_MAX },
	[PBTRACE_A_TP_ID]		= { .type = NLA_U32 },
	[PBTRACE_A_TP_PROTO_ID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[PBTRACE_A_TP_FLAGS]		= { .type = NLA_U32 },
	[PBTRACE_A_TP_FILTER]		= { .type = NLA_NUL_STRING, .len = PBTRACE_TP_FILTER_MAX - 1 },
	[PBTRACE_A_TP_PERIOD]		= NLA_POLICY_MIN(NLA_U32, 1),
	[PBTRACE_A_TP_FIELDS]		= { .type = NLA_NESTED },
};

#define PBT_TP_FLAGS_KNOWN (PBTRACE_TP_FTRACE | PBTRACE_TP_PERF_SAMPLE | \
			    PBTRACE_TP_KERNEL_STACK | PBTRACE_TP_USER_STACK)

static int parse_field(struct nlattr *attr, struct pbt_tpf *f,
		       struct netlink_ext_ack *extack)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	int ret;

	if (nla_type(attr) != PBTRACE_A_TP_FIELD) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "tracepoint fields must hold only PBTRACE_A_TP_FIELD nests");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, PBTRACE_A_MAX, attr, tpf_policy, extack);
	if (ret)
		return ret;
	if (!tb[PBTRACE_A_TPF_NAME] || !tb[PBTRACE_A_TPF_OFFSET] ||
	    !tb[PBTRACE_A_TPF_SIZE] || !tb[PBTRACE_A_TPF_KIND]) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "tracepoint field needs name, offset, size and kind");
		return -EINVAL;
	}
	nla_strscpy(f->name, tb[PBTRACE_A_TPF_NAME], sizeof(f->name));
	f->offset = nla_get_u32(tb[PBTRACE_A_TPF_OFFSET]);
	f->size = nla_get_u32(tb[PBTRACE_A_TPF_SIZE]);
	f->kind = nla_get_u32(tb[PBTRACE_A_TPF_KIND]);
	f->is_signed = nla_get_flag(tb[PBTRACE_A_TPF_SIGNED]);
	if (tb[PBTRACE_A_TPF_ELEM_SIZE])
		f->elem_size = nla_get_u32(tb[PBTRACE_A_TPF_ELEM_SIZE]);
	if (tb[PBTRACE_A_TPF_PROTO_ID])
		f->proto_id = nla_get_u32(tb[PBTRACE_A_TPF_PROTO_ID]);
	if (tb[PBTRACE_A_TPF_PROTO_TYPE])
		f->proto_type = nla_get_u32(tb[PBTRACE_A_TPF_PROTO_TYPE]);
	return 0;
}

static int parse_fields(struct nlattr *nest, struct pbt_tp_layout *l,
			struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	int rem, ret;

	nla_for_each_nested(attr, nest, rem) {
		if (l->nr_fields == PBTRACE_TP_MAX_FIELDS) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "too many tracepoint fields: at most 40, common_* included");
			return -E2BIG;
		}
		ret = parse_field(attr, &l->fields[l->nr_fields], extack);
		if (ret)
			return ret;
		l->nr_fields++;
	}
	return 0;
}

/* "group/name" into the layout; false if it is not of that form. */
static bool split_name(const char *s, struct pbt_tp_layout *l)
{
	const char *slash = strchr(s, '/');
	size_t g;

	if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/'))
		return false;
	g = slash - s;
	if (g >= sizeof(l->group) || strlen(slash + 1) >= sizeof(l->name))
		return false;
	memcpy(l->group, s, g);
	l->group[g] = 0;
	strscpy(l->name, slash + 1, sizeof(l->name));
	return true;
}

/* The counter's context, and the kworker that creates counters. */
struct tp_work {
	struct work_struct work;
	struct pbt_tp *tps;		/* start: these, on every online CPU */
	u32 nr;
	const struct pbt_tp_params *check;	/* parse: this id */
	int ret;
	const char *why;		/* check: what did not match */
};

static void tp_overflow(struct perf_event *event, struct perf_sample_data *data,
			struct pt_regs *regs);

static struct perf_event *create_counter(const struct pbt_tp_params *p,
					 int cpu, bool disabled, void *ctx)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = p->id,
		.sample_period = 1,
		/* 6.12 keeps the record for the handler only when asked */
		.sample_type = PERF_SAMPLE_RAW,
		.disabled = disabled,
	};

	return perf_event_create_kernel_counter(&attr, cpu, NULL, tp_overflow,
						ctx);
}

/*
 * NULL if @event is the tracepoint @p names, else what differs. Short:
 * a formatted extack holds 79 characters (NETLINK_MAX_FMTMSG_LEN).
 */
static const char *mismatch(struct perf_event *event,
			    const struct pbt_tp_params *p)
{
	struct trace_event_call *call = event->tp_event;

	if (!call || !call->class || !call->class->system)
		return "is not a tracepoint's";
	if (strcmp(call->class->system, p->layout.group) ||
	    strcmp(trace_event_name(call), p->layout.name))
		return "is another tracepoint's (read its id again)";
	/* perf runs the function tracer's events from ftrace itself */
	if (!strcmp(call->class->system, "ftrace"))
		return "is an ftrace/ event, which cannot be recorded";
	return NULL;
}

static void check_work(struct work_struct *work)
{
	struct tp_work *tw = container_of(work, struct tp_work, work);
	struct perf_event *event;

	event = create_counter(tw->check, raw_smp_processor_id(), true, NULL);
	if (IS_ERR(event)) {
		tw->ret = PTR_ERR(event);
		tw->why = tw->ret == -ENOENT || tw->ret == -EINVAL ?
			  "is no tracepoint here (read its id again)" :
			  tw->ret == -EPERM || tw->ret == -EACCES ?
			  "refused by perf (perfmon capability)" :
			  "cannot be attached to by perf";
		return;
	}
	tw->why = mismatch(event, tw->check);
	tw->ret = tw->why ? -EINVAL : 0;
	perf_event_release_kernel(event);
}

static void release(struct pbt_tp *tps, u32 nr)
{
	u32 i, cpu;

	for (i = 0; i < nr; i++) {
		if (!tps[i].events)
			continue;
		for (cpu = 0; cpu < nr_cpu_ids; cpu++)
			if (tps[i].events[cpu])
				perf_event_release_kernel(tps[i].events[cpu]);
		kfree(tps[i].events);
		tps[i].events = NULL;
	}
}

static int start_one(struct pbt_tp *tp)
{
	struct perf_event *event;
	int cpu;

	tp->events = kcalloc(nr_cpu_ids, sizeof(*tp->events), GFP_KERNEL);
	if (!tp->events)
		return -ENOMEM;
	/*
	 * Without cpus_read_lock(): creating a tracepoint counter takes
	 * event_mutex and tracepoints_mutex, which nest outside the hotplug
	 * lock (lockdep saw the inversion). perf itself refuses a CPU that is
	 * offline by now (-ENODEV, under its context mutex): skipped. A CPU
	 * that comes online later has no counter: docs/generic-events.md.
	 */
	for_each_online_cpu(cpu) {
		event = create_counter(&tp->p, cpu, false, tp);
		if (IS_ERR(event) && PTR_ERR(event) == -ENODEV && !cpu_online(cpu))
			continue;
		if (IS_ERR(event))
			return PTR_ERR(event);
		tp->events[cpu] = event;
	}
	return 0;
}

static void start_work(struct work_struct *work)
{
	struct tp_work *tw = container_of(work, struct tp_work, work);
	u32 i;

	for (i = 0; i < tw->nr && !tw->ret; i++)
		if (tw->tps[i].p.flags &
		    (PBTRACE_TP_FTRACE | PBTRACE_TP_PERF_SAMPLE))
			tw->ret = start_one(&tw->tps[i]);
	if (tw->ret)
		release(tw->tps, tw->nr);
}

/* Run @fn in a kworker and wait for it. */
static void run_in_kworker(struct tp_work *tw, work_func_t fn)
{
	INIT_WORK_ONSTACK(&tw->work, fn);
	queue_work(system_unbound_wq, &tw->work);
	flush_work(&tw->work);
	destroy_work_on_stack(&tw->work);
}

/*
 * A PerfSample every period-th hit (one counter for all CPUs: a period
 * counts the tracepoint's hits, as perf's sample_period does per event),
 * standing for that many; @regs are the tracepoint caller's
 * (perf_fetch_caller_regs), or the task's user regs for syscalls' events.
 */
static void sample(struct pbt_tp *tp, struct pt_regs *regs)
{
	u32 period = tp->p.period ? tp->p.period : 1;

	if (period > 1 && atomic_inc_return(&tp->hits) % period)
		return;
	pbt_stack_sample(tp->b, regs, tp->p.flags, period);
}

/*
 * The probe: runs in the tracepoint, preemption off, any context. The
 * record is the ftrace one (struct trace_entry first), as tracefs's
 * format file describes it.
 */
static void tp_overflow(struct perf_event *event, struct perf_sample_data *data,
			struct pt_regs *regs)
{
	struct pbt_tp *tp = event->overflow_handler_context;
	struct perf_raw_record *raw;

	if (unlikely(!tp || !(data->sample_flags & PERF_SAMPLE_RAW)))
		return;
	raw = data->raw;
	/*
	 * The pid filter first: a task the buffer does not record never
	 * runs the expression (its cost, docs/security.md). Then the
	 * expression, before anything is written: a hit filtered out costs
	 * no byte.
	 */
	if (!pbt_buffer_wants_pid(tp->b, current->pid))
		return;
	if (tp->p.filter.nr_insns &&
	    !pbt_filter_match(&tp->p.filter, raw->frag.data, raw->frag.size))
		return;
	if (tp->p.flags & PBTRACE_TP_FTRACE)
		pbt_emit_tp(tp, raw->frag.data, raw->frag.size);
	if (tp->p.flags & PBTRACE_TP_PERF_SAMPLE)
		sample(tp, regs);
}

/* Counters for every tracepoint of @b on every online CPU. */
int pbt_tp_start(struct pbt_buffer *b)
{
	struct tp_work tw = { };

	tw.tps = pbt_buffer_tps(b, &tw.nr);
	if (!tw.nr)
		return 0;
	run_in_kworker(&tw, start_work);
	return tw.ret;
}

/*
 * No handler starts after this; one already running may still be inside
 * buffer.c, so the caller syncs (pbt_probes_sync()) before it flushes.
 */
void pbt_tp_stop(struct pbt_buffer *b)
{
	struct pbt_tp *tps;
	u32 nr;

	tps = pbt_buffer_tps(b, &nr);
	release(tps, nr);
}

static int check_id(struct nlattr *attr, const struct pbt_tp_params *p,
		    struct netlink_ext_ack *extack)
{
	struct tp_work tw = { .check = p };

	run_in_kworker(&tw, check_work);
	if (tw.ret)
		PBT_ERR_MSG_ATTR_FMT(extack, attr, "%s/%s: id %u %s",
				     p->layout.group, p->layout.name, p->id,
				     tw.why);
	return tw.ret;
}

/* What this module cannot do yet (STACKS adds it). */
static int unsupported(struct nlattr **tb, struct nlattr *attr,
		       const struct pbt_tp_params *p,
		       struct netlink_ext_ack *extack)
{
	if (p->flags & ~PBT_TP_FLAGS_KNOWN) {
		NL_SET_ERR_MSG_ATTR(extack, tb[PBTRACE_A_TP_FLAGS], "unknown tracepoint flags: PBTRACE_TP_* only");
		return -EINVAL;
	}
	if (!(p->flags & (PBTRACE_TP_FTRACE | PBTRACE_TP_PERF_SAMPLE))) {
		NL_SET_ERR_MSG_ATTR(extack, tb[PBTRACE_A_TP_FLAGS], "tracepoint writes nothing: set PBTRACE_TP_FTRACE (the event) and/or PBTRACE_TP_PERF_SAMPLE (a stack sample)");
		return -EINVAL;
	}
	if ((p->flags & (PBTRACE_TP_KERNEL_STACK | PBTRACE_TP_USER_STACK)) &&
	    !(p->flags & PBTRACE_TP_PERF_SAMPLE)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[PBTRACE_A_TP_FLAGS], "PBTRACE_TP_KERNEL_STACK/_USER_STACK go into a PerfSample: set PBTRACE_TP_PERF_SAMPLE too");
		return -EINVAL;
	}
	return 0;
}

/*
 * PBTRACE_A_TP_FILTER against the layout: a bad one is refused here, with
 * its position first (extack messages stop at 80 bytes), never at start.
 */
static int parse_filter(struct nlattr *attr, struct pbt_tp_params *p,
			struct netlink_ext_ack *extack)
{
	struct pbt_filter_err err;

	if (!pbt_filter_compile(nla_data(attr), &p->layout, &p->filter, &err))
		return 0;
	PBT_ERR_MSG_ATTR_FMT(extack, attr, "filter: position %d: %s (%s/%s)",
			     err.pos, err.msg, p->layout.group, p->layout.name);
	return -EINVAL;
}

static int parse_tp(struct nlattr *attr, struct pbt_tp_params *p,
		    struct netlink_ext_ack *extack)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	char msg[80];
	int ret;

	if (nla_type(attr) != PBTRACE_A_TP) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "tracepoints must hold only PBTRACE_A_TP nests");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, PBTRACE_A_MAX, attr, tp_policy, extack);
	if (ret)
		return ret;
	if (!tb[PBTRACE_A_TP_NAME] || !tb[PBTRACE_A_TP_ID] ||
	    !tb[PBTRACE_A_TP_FLAGS] || !tb[PBTRACE_A_TP_PROTO_ID]) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "tracepoint needs name, id, flags and proto_id");
		return -EINVAL;
	}
	if (!split_name(nla_data(tb[PBTRACE_A_TP_NAME]), &p->layout)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[PBTRACE_A_TP_NAME], "tracepoint name must be \"group/name\", each below 64 bytes");
		return -EINVAL;
	}
	p->id = nla_get_u32(tb[PBTRACE_A_TP_ID]);
	p->flags = nla_get_u32(tb[PBTRACE_A_TP_FLAGS]);
	p->layout.proto_id = nla_get_u32(tb[PBTRACE_A_TP_PROTO_ID]);
	p->period = tb[PBTRACE_A_TP_PERIOD] ?
		    nla_get_u32(tb[PBTRACE_A_TP_PERIOD]) : 1;
	ret = unsupported(tb, attr, p, extack);
	if (!ret && tb[PBTRACE_A_TP_FIELDS])
		ret = parse_fields(tb[PBTRACE_A_TP_FIELDS], &p->layout, extack);
	if (ret)
		return ret;
	if (pbt_tp_check(&p->layout, msg, sizeof(msg))) {
		PBT_ERR_MSG_ATTR_FMT(extack, attr, "%s/%s: %s", p->layout.group,
				     p->layout.name, msg);
		return -EINVAL;
	}
	if (tb[PBTRACE_A_TP_FILTER]) {
		ret = parse_filter(tb[PBTRACE_A_TP_FILTER], p, extack);
		if (ret)
			return ret;
	}
	return check_id(attr, p, extack);
}

/*
 * PBTRACE_A_BUFFER_TRACEPOINTS into bp->tps (kvmalloc'd, freed by
 * pbt_params_free()); @session_total counts them over the session's
 * buffers against PBTRACE_MAX_TRACEPOINTS.
 */
int pbt_tp_parse(struct nlattr *nest, struct pbt_buffer_params *bp,
		 u32 *session_total, struct netlink_ext_ack *extack)
{
	struct nlattr *attr;
	int rem, ret, n = 0;

	nla_for_each_nested(attr, nest, rem)
		n++;
	if (!n) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "buffer tracepoints list is empty: leave it out");
		return -EINVAL;
	}
	if (*session_total + n > PBTRACE_MAX_TRACEPOINTS) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "too many tracepoints: at most 256 per session, all buffers");
		return -E2BIG;
	}
	bp->tps = kvcalloc(n, sizeof(*bp->tps), GFP_KERNEL_ACCOUNT);
	if (!bp->tps)
		return -ENOMEM;
	nla_for_each_nested(attr, nest, rem) {
		ret = parse_tp(attr, &bp->tps[bp->nr_tps], extack);
		if (ret)
			return ret;
		/* stack.c's intern tables and capture, per CPU */
		if (bp->tps[bp->nr_tps].flags & PBTRACE_TP_PERF_SAMPLE)
			bp->scratch_size = pbt_stack_scratch_size();
		bp->nr_tps++;
	}
	*session_total += n;
	return 0;
}

/*
 * What one counter of a tracepoint on one CPU takes, for a member's budget:
 * perf's struct perf_event (from its own slab cache, which is not
 * accounted to any memcg: perf record's counters are not either) and its
 * slot in the tracepoint's array. An estimate from the struct's size: the
 * event's share of perf's per-tracepoint, per-CPU lists is not in it.
 */
u64 pbt_tp_counter_cost(void)
{
	return ALIGN(sizeof(struct perf_event), sizeof(long)) +
	       sizeof(struct perf_event *);
}
