// SPDX-License-Identifier: GPL-2.0
/*
 * Any tracepoint by name (docs/generic-events.md): PBTRACE_A_TP parsed into
 * a buffer's parameters, and, while its session is started, one perf
 * kernel counter per online CPU per tracepoint whose overflow handler runs
 * inside the tracepoint itself (perf_trace_<call> -> perf_tp_event ->
 * __perf_event_overflow) with the ftrace record, which buffer.c encodes.
 * No ftrace ring buffer is involved.
 *
 * Whose policy: perf_event_create_kernel_counter() checks the *current*
 * task's right to raw tracepoint data (perf_trace_event_perm() ->
 * perf_allow_tracepoint(): perf_event_paranoid above -1 needs
 * CAP_PERFMON, then the LSM's perf_event_open hook, PERF_SECURITY_TRACEPOINT),
 * as for a CPU-wide perf_event_open(). Counters are created in a kworker
 * that takes on the session creator's credentials (override_creds()), so
 * those checks decide for that user exactly as for `perf record -a -e`,
 * whoever sends START. A group= member (docs/security.md) is refused
 * besides, whatever the sysctl says, dynamic events, printk/ and ftrace/
 * (told by the kernel's trace_event_call, not the name sent) and any
 * field that is not one of the kernel's own for that id.
 *
 * The id userspace sends is checked at NEW/SET_SESSION by creating a
 * disabled counter and comparing its tracepoint's group and name with the
 * one asked for, and again on the counters START creates: an id freed and
 * reused meanwhile (a kprobe event deleted, another created) is refused.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>
#include <net/netlink.h>

#include "pbtrace.h"
#include "compat.h"
#include "core/tp_encode.h"

/*
 * A FtraceEvent field number: protobuf's largest is 2^29 - 1 (a larger one
 * wraps the tag). NLA_POLICY_MAX takes an s16 bound (6.1), hence the range.
 */
static struct netlink_range_validation proto_id_range __ro_after_init = {
	.min = 1,
	.max = (1U << 29) - 1,
};

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
	[PBTRACE_A_TP_PROTO_ID]		= NLA_POLICY_FULL_RANGE(NLA_U32, &proto_id_range),
	[PBTRACE_A_TP_FLAGS]		= { .type = NLA_U32 },
	[PBTRACE_A_TP_FILTER]		= { .type = NLA_NUL_STRING, .len = PBTRACE_TP_FILTER_MAX - 1 },
	[PBTRACE_A_TP_PERIOD]		= NLA_POLICY_MIN(NLA_U32, 1),
	[PBTRACE_A_TP_FIELDS]		= { .type = NLA_NESTED },
};

#define PBT_TP_FLAGS_KNOWN (PBTRACE_TP_FTRACE | PBTRACE_TP_PERF_SAMPLE | \
			    PBTRACE_TP_KERNEL_STACK | PBTRACE_TP_USER_STACK)

static noinline_for_stack int parse_field(struct nlattr *attr,
					   struct pbt_tpf *f,
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
	struct pbt_tp *tps;		/* start: these, on every CPU of @up */
	u32 nr;
	const struct cpumask *up;
	const struct pbt_tp_params *check;	/* parse: this id */
	const struct cred *cred;	/* as whom; NULL: the kworker's own */
	bool member;			/* and refuse what is root's */
	int ret;
	const struct pbt_tp_params *failed;	/* start: the one refused */
	const char *why;		/* what did not match */
	char why_buf[48];		/* why, when it names a field */
	bool refused;			/* why is a member's refusal: EPERM */
};

static void tp_overflow(struct perf_event *event, struct perf_sample_data *data,
			struct pt_regs *regs);

/* Under @cred, if any: perf checks current's right to the raw data. */
static struct perf_event *create_counter(const struct pbt_tp_params *p,
					 int cpu, bool disabled, void *ctx,
					 const struct cred *cred)
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
	const struct cred *old = cred ? override_creds(cred) : NULL;
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, cpu, NULL, tp_overflow,
						 ctx);
	if (cred)
		revert_creds(old);
	return event;
}

/*
 * The head of the kernel's struct ftrace_event_field (kernel/trace/trace.h,
 * private): link, name, type, filter_type, offset, size are the same on
 * 6.1 and 6.12, and only they are read. trace_get_fields() lists the
 * event's own fields; the common_* ones are struct trace_entry's.
 */
struct pbt_kernel_field {
	struct list_head link;
	const char *name;
	const char *type;
	int filter_type;
	int offset;
	int size;
};

static const struct {
	const char *name;
	int offset, size;
} common_fields[] = {
	{ "common_type", offsetof(struct trace_entry, type),
	  sizeof_field(struct trace_entry, type) },
	{ "common_flags", offsetof(struct trace_entry, flags),
	  sizeof_field(struct trace_entry, flags) },
	{ "common_preempt_count", offsetof(struct trace_entry, preempt_count),
	  sizeof_field(struct trace_entry, preempt_count) },
	{ "common_pid", offsetof(struct trace_entry, pid),
	  sizeof_field(struct trace_entry, pid) },
};

static bool loc_kind(u8 kind)
{
	return kind >= PBTRACE_TPF_DATA_LOC_STR &&
	       kind <= PBTRACE_TPF_REL_LOC_BYTES;
}

/* Is @f, by name, offset and size, one of the kernel's fields of @call? */
static bool kernel_field(struct trace_event_call *call,
			 const struct pbt_tpf *f)
{
	struct pbt_kernel_field *k;
	bool loc;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(common_fields); i++)
		if (!strcmp(f->name, common_fields[i].name))
			return f->offset == common_fields[i].offset &&
			       f->size == common_fields[i].size &&
			       !loc_kind(f->kind);
	list_for_each_entry(k, trace_get_fields(call), link) {
		if (strcmp(f->name, k->name))
			continue;
		loc = !strncmp(k->type, "__data_loc ", 11) ||
		      !strncmp(k->type, "__rel_loc ", 10);
		return f->offset == k->offset && f->size == k->size &&
		       loc == loc_kind(f->kind);
	}
	return false;
}

/*
 * What a member may not record of @call, or NULL. Told by the kernel's
 * own description: a root-made event's flags and system, whatever name
 * it was asked for by.
 */
static const char *member_refusal(struct trace_event_call *call,
				  const struct pbt_tp_params *p, char *buf,
				  size_t len)
{
	u32 i;

	/* kprobes, uprobes, eprobes, synthetic, fprobes, user_events */
	if (call->flags & (TRACE_EVENT_FL_DYNAMIC | TRACE_EVENT_FL_UKPROBE |
			   TRACE_EVENT_FL_EPROBE))
		return "is a dynamic event: root only";
	if (!strcmp(call->class->system, "printk"))
		return "is the kernel log (printk): root only";
	for (i = 0; i < p->layout.nr_fields; i++) {
		if (kernel_field(call, &p->layout.fields[i]))
			continue;
		snprintf(buf, len, "field %.24s is not the kernel's",
			 p->layout.fields[i].name);
		return buf;
	}
	return NULL;
}

/*
 * NULL if @event is the tracepoint @p names, and one @tw's user may
 * record, else what differs. Short: a formatted extack holds 79
 * characters (NETLINK_MAX_FMTMSG_LEN).
 */
static const char *mismatch(struct perf_event *event,
			    const struct pbt_tp_params *p, struct tp_work *tw)
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
	if (!tw->member)
		return NULL;
	tw->refused = true;
	return member_refusal(call, p, tw->why_buf, sizeof(tw->why_buf));
}

/* The errno for what mismatch() said. */
static int mismatch_errno(const struct tp_work *tw)
{
	return tw->refused ? -EPERM : -EINVAL;
}

/* Why perf_event_create_kernel_counter() said @ret. */
static const char *create_error(int ret)
{
	if (ret == -ENOENT || ret == -EINVAL)
		return "is no tracepoint here (read its id again)";
	if (ret == -EPERM || ret == -EACCES)
		return "refused by perf (perf_event_paranoid, LSM)";
	return "cannot be attached to by perf";
}

static void check_work(struct work_struct *work)
{
	struct tp_work *tw = container_of(work, struct tp_work, work);
	struct perf_event *event;

	event = create_counter(tw->check, raw_smp_processor_id(), true, NULL,
			       tw->cred);
	if (IS_ERR(event)) {
		tw->ret = PTR_ERR(event);
		tw->why = create_error(tw->ret);
		return;
	}
	tw->why = mismatch(event, tw->check, tw);
	tw->ret = tw->why ? mismatch_errno(tw) : 0;
	perf_event_release_kernel(event);
}

static void release_cpu(struct pbt_tp *tp, int cpu)
{
	if (tp->events && tp->events[cpu]) {
		perf_event_release_kernel(tp->events[cpu]);
		tp->events[cpu] = NULL;
	}
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

/*
 * A counter on every CPU of @up that has none. Without cpus_read_lock():
 * creating a tracepoint counter takes event_mutex and tracepoints_mutex,
 * which nest outside the hotplug lock (lockdep saw the inversion), so
 * hotplug callbacks never create one either (run_hotplug() does, in a
 * kworker). perf itself refuses a CPU that is offline by now (-ENODEV,
 * under its context mutex): skipped, its online callback asks again.
 */
static int start_one(struct pbt_tp *tp, struct tp_work *tw,
		     const struct cpumask *up)
{
	struct perf_event *event;
	bool checked = false;
	int cpu;

	if (!tp->events)
		tp->events = kcalloc(nr_cpu_ids, sizeof(*tp->events),
				     GFP_KERNEL);
	if (!tp->events)
		return -ENOMEM;
	for_each_cpu(cpu, up) {
		if (tp->events[cpu])
			continue;
		event = create_counter(&tp->p, cpu, false, tp, tw->cred);
		if (IS_ERR(event) && PTR_ERR(event) == -ENODEV)
			continue;
		if (IS_ERR(event)) {
			tw->why = create_error(PTR_ERR(event));
			return PTR_ERR(event);
		}
		tp->events[cpu] = event;
		/*
		 * The id again, as at NEW: it may have been freed and given
		 * to another event since. One CPU's counter says for all.
		 */
		if (!checked) {
			tw->why = mismatch(event, &tp->p, tw);
			if (tw->why)
				return mismatch_errno(tw);
			checked = true;
		}
	}
	return 0;
}

static void start_work(struct work_struct *work)
{
	struct tp_work *tw = container_of(work, struct tp_work, work);
	u32 i;

	for (i = 0; i < tw->nr && !tw->ret; i++) {
		if (!(tw->tps[i].p.flags &
		      (PBTRACE_TP_FTRACE | PBTRACE_TP_PERF_SAMPLE)))
			continue;
		tw->ret = start_one(&tw->tps[i], tw, tw->up);
		if (tw->ret)
			tw->failed = &tw->tps[i].p;
	}
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

/*
 * CPU hotplug (docs/generic-events.md): a started buffer with tracepoints
 * is an instance of a multi-instance AP_ONLINE_DYN state. Its callbacks
 * run under the hotplug lock, where no counter may be created or freed
 * (event_mutex nests outside it), so they only note the CPU in @up and
 * @stale and queue @work, which brings the counters in line in a kworker,
 * under the session creator's credentials as START did. A CPU that went
 * down has its counter freed: perf detached it from the CPU's context at
 * CPUHP_AP_PERF_ONLINE, and every event its handler took is in the buffer
 * already (buffer.c seals the CPU's chunk on the way down).
 */
struct pbt_tp_run {
	struct hlist_node node;		/* the cpuhp instance */
	struct list_head link;		/* runs, under pbt_sessions_lock */
	struct pbt_buffer *b;
	const struct cred *cred;	/* get_cred()'d; NULL: the kernel's */
	bool member;
	struct work_struct work;
	struct mutex lock;		/* the counters: START's and work's */
	bool started;			/* START made them all: work may too */
	spinlock_t mask_lock;		/* @up and @stale, callbacks and work */
	cpumask_var_t up;		/* online, as the callbacks saw it */
	cpumask_var_t stale;		/* went down: free its counters */
	cpumask_var_t todo_up, todo_stale;	/* work's snapshot */
};

static LIST_HEAD(runs);
static enum cpuhp_state tp_hp_state = CPUHP_INVALID;

/* Counters of CPUs that came online after START, all sessions. */
static atomic64_t hp_created = ATOMIC64_INIT(0);
static atomic64_t hp_failed = ATOMIC64_INIT(0);
static atomic_t hp_pending = ATOMIC_INIT(0);	/* works queued, not done */

static struct pbt_tp_run *find_run(struct pbt_buffer *b)
{
	struct pbt_tp_run *run;

	lockdep_assert_held(&pbt_sessions_lock);
	list_for_each_entry(run, &runs, link)
		if (run->b == b)
			return run;
	return NULL;
}

static void queue_run(struct pbt_tp_run *run)
{
	if (queue_work(system_unbound_wq, &run->work))
		atomic_inc(&hp_pending);
}

static int tp_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct pbt_tp_run *run = hlist_entry(node, struct pbt_tp_run, node);

	spin_lock(&run->mask_lock);
	cpumask_set_cpu(cpu, run->up);
	spin_unlock(&run->mask_lock);
	queue_run(run);
	return 0;
}

static int tp_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct pbt_tp_run *run = hlist_entry(node, struct pbt_tp_run, node);

	spin_lock(&run->mask_lock);
	cpumask_clear_cpu(cpu, run->up);
	cpumask_set_cpu(cpu, run->stale);
	spin_unlock(&run->mask_lock);
	queue_run(run);
	return 0;
}

static void count_created(struct pbt_tp *tps, u32 nr, int *n)
{
	u32 i, cpu;

	*n = 0;
	for (i = 0; i < nr; i++)
		for (cpu = 0; tps[i].events && cpu < nr_cpu_ids; cpu++)
			*n += !!tps[i].events[cpu];
}

/*
 * The counters as the callbacks said: freed on CPUs that went down (also
 * those back up since: perf never reattaches a detached counter), made on
 * CPUs up without one. A CPU going down meanwhile is refused by perf, or
 * its new counter is detached and its offline callback queues us again.
 */
static void hotplug_work(struct work_struct *work)
{
	struct pbt_tp_run *run = container_of(work, struct pbt_tp_run, work);
	struct tp_work tw = { .cred = run->cred, .member = run->member };
	struct pbt_tp *tps;
	int cpu, before, after;
	u32 i, nr;

	mutex_lock(&run->lock);
	spin_lock(&run->mask_lock);
	cpumask_copy(run->todo_up, run->up);
	cpumask_copy(run->todo_stale, run->stale);
	cpumask_clear(run->stale);
	spin_unlock(&run->mask_lock);
	tps = pbt_buffer_tps(run->b, &nr);
	for (i = 0; run->started && i < nr; i++) {
		if (!tps[i].events)
			continue;
		for_each_cpu(cpu, run->todo_stale)
			release_cpu(&tps[i], cpu);
		for (cpu = 0; cpu < nr_cpu_ids; cpu++)
			if (tps[i].events[cpu] && !cpumask_test_cpu(cpu, run->todo_up))
				release_cpu(&tps[i], cpu);
	}
	count_created(tps, nr, &before);
	for (i = 0; run->started && i < nr; i++) {
		if (!tps[i].events)
			continue;
		tw.why = NULL;
		if (start_one(&tps[i], &tw, run->todo_up)) {
			atomic64_inc(&hp_failed);
			pr_warn_ratelimited("pbtrace: %s/%s: no counter on a CPU that came online: %s\n",
					    tps[i].p.layout.group,
					    tps[i].p.layout.name,
					    tw.why ? tw.why : "no memory");
		}
	}
	count_created(tps, nr, &after);
	if (after > before)
		atomic64_add(after - before, &hp_created);
	mutex_unlock(&run->lock);
	atomic_dec(&hp_pending);
}

static void free_run(struct pbt_tp_run *run)
{
	free_cpumask_var(run->up);
	free_cpumask_var(run->stale);
	free_cpumask_var(run->todo_up);
	free_cpumask_var(run->todo_stale);
	if (run->cred)
		put_cred(run->cred);
	kfree(run);
}

static struct pbt_tp_run *alloc_run(struct pbt_buffer *b,
				    const struct pbt_session_params *who)
{
	struct pbt_tp_run *run = kzalloc(sizeof(*run), GFP_KERNEL_ACCOUNT);

	if (!run)
		return NULL;
	if (!zalloc_cpumask_var(&run->up, GFP_KERNEL_ACCOUNT) ||
	    !zalloc_cpumask_var(&run->stale, GFP_KERNEL_ACCOUNT) ||
	    !zalloc_cpumask_var(&run->todo_up, GFP_KERNEL_ACCOUNT) ||
	    !zalloc_cpumask_var(&run->todo_stale, GFP_KERNEL_ACCOUNT)) {
		free_run(run);
		return NULL;
	}
	run->b = b;
	run->cred = who->cred ? get_cred(who->cred) : NULL;
	run->member = who->member;
	mutex_init(&run->lock);
	spin_lock_init(&run->mask_lock);
	INIT_WORK(&run->work, hotplug_work);
	return run;
}

/* No callback and no work after this; then the counters go. */
static void stop_run(struct pbt_tp_run *run)
{
	struct pbt_tp *tps;
	u32 nr;

	cpuhp_state_remove_instance_nocalls(tp_hp_state, &run->node);
	if (cancel_work_sync(&run->work))
		atomic_dec(&hp_pending);
	list_del(&run->link);
	tps = pbt_buffer_tps(run->b, &nr);
	release(tps, nr);
	free_run(run);
}

/*
 * Counters for every tracepoint of @b on every online CPU, and on every
 * CPU that comes online until the stop, under the session creator's
 * credentials (@who->cred), checked again as at NEW. Under
 * pbt_sessions_lock, which nests outside the hotplug lock.
 */
int pbt_tp_start(struct pbt_buffer *b, const struct pbt_session_params *who,
		 struct netlink_ext_ack *extack)
{
	struct tp_work tw = { .cred = who->cred, .member = who->member };
	const struct pbt_tp_params *p;
	struct pbt_tp_run *run;
	int ret;

	tw.tps = pbt_buffer_tps(b, &tw.nr);
	if (!tw.nr)
		return 0;
	run = alloc_run(b, who);
	if (!run)
		return -ENOMEM;
	/*
	 * From here on a CPU that comes or goes is in @up; the mask read
	 * with no hotplug under way (add_instance_cpuslocked is not
	 * exported) is what the callbacks that ran meanwhile left.
	 */
	ret = cpuhp_state_add_instance_nocalls(tp_hp_state, &run->node);
	if (ret) {
		free_run(run);
		return ret;
	}
	cpus_read_lock();
	spin_lock(&run->mask_lock);
	cpumask_copy(run->up, cpu_online_mask);
	spin_unlock(&run->mask_lock);
	cpus_read_unlock();
	list_add(&run->link, &runs);
	mutex_lock(&run->lock);
	spin_lock(&run->mask_lock);
	cpumask_copy(run->todo_up, run->up);
	spin_unlock(&run->mask_lock);
	tw.up = run->todo_up;
	run_in_kworker(&tw, start_work);
	run->started = !tw.ret;
	mutex_unlock(&run->lock);
	if (tw.ret) {
		stop_run(run);
		p = tw.failed;
		if (p && tw.why)
			PBT_ERR_MSG_ATTR_FMT(extack, NULL,
					     "start: a tracepoint's id is not it now, or perf refused it: read the ids again (tracefs)",
					     "start: %s/%s: id %u %s",
					     p->layout.group, p->layout.name,
					     p->id, tw.why);
		return tw.ret;
	}
	/* A CPU that came or went while START made them */
	queue_run(run);
	return 0;
}

/*
 * No handler starts after this; one already running may still be inside
 * buffer.c, so the caller syncs (pbt_probes_sync()) before it flushes.
 */
void pbt_tp_stop(struct pbt_buffer *b)
{
	struct pbt_tp_run *run = find_run(b);
	struct pbt_tp *tps;
	u32 nr;

	if (run) {
		stop_run(run);
		return;
	}
	tps = pbt_buffer_tps(b, &nr);
	release(tps, nr);
}

/*
 * "created C failed F pending P": counters made for CPUs that came online
 * after a START (all sessions), those perf refused, and hotplug works not
 * done yet. Tests wait for pending 0 before they count a new CPU's events.
 */
static int hotplug_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "created %lld failed %lld pending %d\n",
			  atomic64_read(&hp_created),
			  atomic64_read(&hp_failed),
			  atomic_read(&hp_pending));
}

static const struct kernel_param_ops hotplug_ops = {
	.get = hotplug_get,
};

module_param_cb(tp_hotplug, &hotplug_ops, NULL, 0444);
MODULE_PARM_DESC(tp_hotplug, "tracepoint counters made for CPUs that came online after START (read only)");

int pbt_tp_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "pbtrace/tp:online",
				      tp_cpu_online, tp_cpu_offline);
	if (ret < 0)
		return ret;
	tp_hp_state = ret;
	return 0;
}

void pbt_tp_exit(void)
{
	if (tp_hp_state != CPUHP_INVALID)
		cpuhp_remove_multi_state(tp_hp_state);
	tp_hp_state = CPUHP_INVALID;
}

static int check_id(struct nlattr *attr, const struct pbt_tp_params *p,
		    const struct pbt_session_params *who,
		    struct netlink_ext_ack *extack)
{
	struct tp_work tw = { .check = p, .cred = who->cred,
			      .member = who->member };

	run_in_kworker(&tw, check_work);
	if (tw.ret)
		PBT_ERR_MSG_ATTR_FMT(extack, attr,
				     "a tracepoint's id is not it, or it is refused (perf_event_paranoid, root-only events): docs/security.md",
				     "%s/%s: id %u %s",
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
 * Not inlined: with parse_field()'s and parse_tp()'s attribute tables in
 * one frame, KASAN's redzones take parse_tp() past the 2 KiB frame limit.
 */
static noinline_for_stack int parse_filter(struct nlattr *attr, struct pbt_tp_params *p,
			struct netlink_ext_ack *extack)
{
	struct pbt_filter_err err;

	if (!pbt_filter_compile(nla_data(attr), &p->layout, &p->filter, &err)) {
		nla_strscpy(p->filter_src, attr, sizeof(p->filter_src));
		return 0;
	}
	PBT_ERR_MSG_ATTR_FMT(extack, attr,
			     "filter: does not compile against the tracepoint's fields: tracectl shows where",
			     "filter: position %d: %s (%s/%s)",
			     err.pos, err.msg, p->layout.group, p->layout.name);
	return -EINVAL;
}

static int parse_tp(struct nlattr *attr, struct pbt_tp_params *p,
		    const struct pbt_session_params *who,
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
	/* Below the base are Perfetto's own events: a member's cannot pose */
	if (who->member && p->layout.proto_id < PBTRACE_TP_GENERIC_PROTO_BASE) {
		NL_SET_ERR_MSG_ATTR(extack, tb[PBTRACE_A_TP_PROTO_ID], "a member's tracepoint is written as a generic event: proto_id >= 65536 (PBTRACE_TP_GENERIC_PROTO_BASE)");
		return -EPERM;
	}
	p->period = tb[PBTRACE_A_TP_PERIOD] ?
		    nla_get_u32(tb[PBTRACE_A_TP_PERIOD]) : 1;
	ret = unsupported(tb, attr, p, extack);
	if (!ret && tb[PBTRACE_A_TP_FIELDS])
		ret = parse_fields(tb[PBTRACE_A_TP_FIELDS], &p->layout, extack);
	if (ret)
		return ret;
	if (pbt_tp_check(&p->layout, msg, sizeof(msg))) {
		PBT_ERR_MSG_ATTR_FMT(extack, attr,
				     "a tracepoint's fields cannot be encoded (offsets, kinds, proto ids): docs/generic-events.md",
				     "%s/%s: %s", p->layout.group,
				     p->layout.name, msg);
		return -EINVAL;
	}
	if (tb[PBTRACE_A_TP_FILTER]) {
		ret = parse_filter(tb[PBTRACE_A_TP_FILTER], p, extack);
		if (ret)
			return ret;
	}
	return check_id(attr, p, who, extack);
}

/*
 * A member's @n tracepoints need a counter each on every online CPU: past
 * its whole budget, refuse them before check_id() makes a counter for each
 * (in a kworker, under the genl mutex: seconds for 80 under TCG).
 * session.c's check_budget_locked() still counts what the uid holds.
 */
static int check_member_counters(struct nlattr *nest, u32 n,
				 const struct pbt_session_params *who,
				 struct netlink_ext_ack *extack)
{
	u64 counters = (u64)n * num_online_cpus();

	if (!who->member || counters <= who->limits.max_counters)
		return 0;
	PBT_ERR_MSG_ATTR_FMT(extack, nest,
			     "needs more counters (tracepoints x CPUs) than this uid has left (group_max_counters): fewer tracepoints",
			     "needs %llu counters (tracepoints x CPUs), a uid may hold %u (group_max_counters)",
			     counters, who->limits.max_counters);
	return -E2BIG;
}

/*
 * PBTRACE_A_BUFFER_TRACEPOINTS into bp->tps (kvmalloc'd, freed by
 * pbt_params_free()); @session_total counts them over the session's
 * buffers against PBTRACE_MAX_TRACEPOINTS.
 */
int pbt_tp_parse(struct nlattr *nest, struct pbt_buffer_params *bp,
		 u32 *session_total, const struct pbt_session_params *who,
		 struct netlink_ext_ack *extack)
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
		NL_SET_ERR_MSG_ATTR(extack, nest, "too many tracepoints: at most 2048 per session, all buffers");
		return -E2BIG;
	}
	ret = check_member_counters(nest, *session_total + n, who, extack);
	if (ret)
		return ret;
	bp->tps = kvcalloc(n, sizeof(*bp->tps), GFP_KERNEL_ACCOUNT);
	if (!bp->tps)
		return -ENOMEM;
	nla_for_each_nested(attr, nest, rem) {
		ret = parse_tp(attr, &bp->tps[bp->nr_tps], who, extack);
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
