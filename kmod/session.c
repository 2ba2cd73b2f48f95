// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: a named set of buffers and the events each one wants. Control
 * operations run under pbt_sessions_lock; probes never see a session, only
 * the buffers a started session publishes to them (see buffer.c).
 *
 * A session lives on the registry list from NEW to DESTROY. Readers of
 * /dev/pbtrace hold their own reference, so a destroyed session's buffers
 * stay mapped until the last reader lets go.
 */

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/err.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/moduleparam.h>
#include <linux/cpumask.h>
#include <net/netlink.h>
#include <asm/unistd.h>

#include "pbtrace.h"
#include "compat.h"

DEFINE_MUTEX(pbt_sessions_lock);

/* netlink_notify.c's multicast; see pbt_session_observe(). */
static pbt_session_observer observer;

void pbt_session_observe(pbt_session_observer fn)
{
	mutex_lock(&pbt_sessions_lock);
	WRITE_ONCE(observer, fn);
	mutex_unlock(&pbt_sessions_lock);
}

static void changed(u8 cmd, u32 id, const char *error)
{
	pbt_session_observer fn = READ_ONCE(observer);

	lockdep_assert_held(&pbt_sessions_lock);
	if (fn)
		fn(cmd, id, error);
}
static LIST_HEAD(sessions);
static u32 last_id;
static unsigned long used_slots;	/* bit per live session, for sequence ids */

/*
 * Kernel buffers write trusted_packet_sequence_id = base + cpu. Each buffer
 * of each slot gets a range of nr_cpu_ids ids. The slot is unique among live
 * sessions (not the ever growing id), so every id stays below
 * PBTRACE_SEQ_ID_USER_BASE, where traced's own ids start, on any machine.
 */
static u32 sequence_id_base(unsigned int slot, unsigned int buffer)
{
	BUILD_BUG_ON((u64)PBTRACE_MAX_SESSIONS * PBTRACE_MAX_BUFFERS * CONFIG_NR_CPUS >=
		     PBTRACE_SEQ_ID_USER_BASE);
	return (slot * PBTRACE_MAX_BUFFERS + buffer) * nr_cpu_ids + 1;
}

static struct pbt_session *find_locked(u32 id)
{
	struct pbt_session *s;

	lockdep_assert_held(&pbt_sessions_lock);
	list_for_each_entry(s, &sessions, node)
		if (s->id == id)
			return s;
	return NULL;
}

static struct pbt_session *find_name_locked(const char *name)
{
	struct pbt_session *s;

	list_for_each_entry(s, &sessions, node)
		if (!strcmp(s->params.name, name))
			return s;
	return NULL;
}

/* Frees what p owns (output, config, syscall filters), not p itself. */
void pbt_params_free(struct pbt_session_params *p)
{
	unsigned int i;

	kfree(p->output);
	kvfree(p->config);
	put_cred(p->cred);
	p->output = NULL;
	p->config = NULL;
	p->cred = NULL;
	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
		bitmap_free(p->buffers[i].syscalls);
		p->buffers[i].syscalls = NULL;
		kvfree(p->buffers[i].tps);
		p->buffers[i].tps = NULL;
		p->buffers[i].nr_tps = 0;
	}
}

/* Moves p into the session: p keeps no allocation. */
static void take_params(struct pbt_session_params *dst,
			struct pbt_session_params *p)
{
	unsigned int i;

	*dst = *p;
	p->output = NULL;
	p->config = NULL;
	p->cred = NULL;
	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
		p->buffers[i].syscalls = NULL;
		p->buffers[i].tps = NULL;
		p->buffers[i].nr_tps = 0;
	}
}

/* The live watermarks: their work reads the buffers, so they go first. */
static void free_watermarks(struct pbt_session *s)
{
	unsigned int i;

	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
		pbt_watermark_free(s->wm[i]);
		s->wm[i] = NULL;
	}
}

static void session_release(struct kref *ref)
{
	struct pbt_session *s = container_of(ref, struct pbt_session, ref);
	unsigned int i;

	free_watermarks(s);
	for (i = 0; i < s->params.nr_buffers; i++)
		if (s->buffers[i])
			pbt_buffer_destroy(s->buffers[i]);
	pbt_remote_destroy(s->remote);
	pbt_params_free(&s->params);
	kfree(s);
}

void pbt_session_put(struct pbt_session *s)
{
	if (s)
		kref_put(&s->ref, session_release);
}

struct pbt_session *pbt_session_get(u32 id)
{
	struct pbt_session *s;

	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	if (s)
		kref_get(&s->ref);
	mutex_unlock(&pbt_sessions_lock);
	return s;
}

/* The live session with the smallest id above after_id, for dumps. */
struct pbt_session *pbt_session_get_next(u32 after_id)
{
	struct pbt_session *s, *best = NULL;

	mutex_lock(&pbt_sessions_lock);
	list_for_each_entry(s, &sessions, node)
		if (s->id > after_id && (!best || s->id < best->id))
			best = s;
	if (best)
		kref_get(&best->ref);
	mutex_unlock(&pbt_sessions_lock);
	return best;
}

/*
 * ---- A member's budget (docs/security.md) ----
 *
 * What a session holds is what the kernel really allocates for it, at the
 * allocators' sizes: its buffers (pbt_buffer_cost()), the copies of its
 * parameters, and a perf counter per tracepoint per online CPU from its
 * start on (an estimate: pbt_tp_counter_cost()). It is reserved at NEW
 * and SET_SESSION, before anything is allocated, against the limits of the
 * caller (netlink_access.c): a group member's sessions together, per uid.
 */

/* Members' sessions together: the other half of the slots stays root's. */
#define PBT_MEMBER_MAX_SESSIONS (PBTRACE_MAX_SESSIONS / 2)

/* What one uid's live sessions hold, @skip left out. */
struct pbt_usage {
	u32 sessions;
	u32 counters;
	u64 bytes;
};

static void usage_locked(kuid_t uid, const struct pbt_session *skip,
			 struct pbt_usage *u)
{
	struct pbt_session *s;

	lockdep_assert_held(&pbt_sessions_lock);
	memset(u, 0, sizeof(*u));
	list_for_each_entry(s, &sessions, node) {
		if (s == skip || !uid_eq(s->params.owner_uid, uid))
			continue;
		u->sessions++;
		u->counters += s->counters;
		u->bytes += s->bytes;
	}
}

static u32 member_sessions_locked(void)
{
	struct pbt_session *s;
	u32 n = 0;

	list_for_each_entry(s, &sessions, node)
		n += s->params.member;
	return n;
}

static u64 kmalloc_bytes(size_t size)
{
	return size ? kmalloc_size_roundup(size) : 0;
}

/* The perf counters @bp's tracepoints take: only a local buffer has any. */
static u32 buffer_counters(const struct pbt_buffer_params *bp)
{
	return pbt_buffer_local(bp) ? bp->nr_tps * num_online_cpus() : 0;
}

static u32 params_counters(const struct pbt_session_params *p)
{
	u32 i, n = 0;

	for (i = 0; i < p->nr_buffers; i++)
		n += buffer_counters(&p->buffers[i]);
	return n;
}

/*
 * A buffer, the parameters' own copies of its syscall filter and
 * tracepoints, their counters' arrays (tracepoint.c), and a watermark.
 */
static u64 buffer_bytes(const struct pbt_buffer_params *bp)
{
	u64 bytes = pbt_buffer_cost(bp);

	if (bp->syscalls)
		bytes += kmalloc_bytes(BITS_TO_LONGS(NR_syscalls) * sizeof(long));
	bytes += kmalloc_bytes(array_size(bp->nr_tps, sizeof(*bp->tps)));
	if (pbt_buffer_local(bp))
		bytes += bp->nr_tps *
			 kmalloc_bytes(nr_cpu_ids * sizeof(struct perf_event *));
	if (bp->watermark_ms)
		bytes += pbt_watermark_cost();
	return bytes;
}

/* Everything a session of @bufs, @output and @config_len bytes holds. */
static u64 session_bytes(const struct pbt_session_params *bufs,
			 const char *output, u32 config_len)
{
	u64 bytes = kmalloc_bytes(sizeof(struct pbt_session)) +
		    pbt_remote_cost() + kmalloc_bytes(config_len) +
		    params_counters(bufs) * pbt_tp_counter_cost();
	u32 i;

	if (output)
		bytes += kmalloc_bytes(strlen(output) + 1);
	for (i = 0; i < bufs->nr_buffers; i++)
		bytes += buffer_bytes(&bufs->buffers[i]);
	return bytes;
}

/*
 * The same tracepoint twice in a session is refused for everyone: each
 * copy runs its counter's handler and filter on every hit. Twice in one
 * buffer, or in two buffers this machine records (a buffer only for
 * relayed machines registers nothing here).
 */
static const struct pbt_tp_params *
duplicate_in(const struct pbt_buffer_params *bp, u32 from,
	     const struct pbt_tp_params *tp)
{
	u32 k;

	for (k = from; k < bp->nr_tps; k++)
		if (bp->tps[k].id == tp->id)
			return &bp->tps[k];
	return NULL;
}

static int check_duplicates(const struct pbt_session_params *p,
			    struct netlink_ext_ack *extack)
{
	const struct pbt_buffer_params *a, *b;
	const struct pbt_tp_params *tp;
	u32 i, j, k;

	for (i = 0; i < p->nr_buffers; i++) {
		a = &p->buffers[i];
		for (k = 0; k < a->nr_tps; k++) {
			tp = &a->tps[k];
			if (duplicate_in(a, k + 1, tp))
				goto dup;
			for (j = i + 1; pbt_buffer_local(a) && j < p->nr_buffers; j++) {
				b = &p->buffers[j];
				if (pbt_buffer_local(b) && duplicate_in(b, 0, tp))
					goto dup;
			}
		}
	}
	return 0;
dup:
	PBT_ERR_MSG_ATTR_FMT(extack, NULL,
			     "a tracepoint is in the session twice: list it once (join filters with ||)",
			     "%s/%s is in the session twice: list it once (join filters with ||)",
			     tp->layout.group, tp->layout.name);
	return -EINVAL;
}

/* A member's filters: their cost per hit (pbt_filter_cost()), bounded. */
static int check_filters(const struct pbt_session_params *p,
			 const struct pbt_limits *l,
			 struct netlink_ext_ack *extack)
{
	const struct pbt_tp_params *tp;
	u64 cost, total = 0;
	u32 i, k;

	for (i = 0; i < p->nr_buffers; i++) {
		for (k = 0; k < p->buffers[i].nr_tps; k++) {
			tp = &p->buffers[i].tps[k];
			cost = pbt_filter_cost(&tp->filter);
			if (cost > l->max_filter_cost) {
				PBT_ERR_MSG_ATTR_FMT(extack, NULL,
						     "a filter costs more than a member's may: shorter '~' patterns, fewer tests (docs/security.md)",
						     "filter cost %llu > %llu a member's may (docs/security.md): %s/%s",
						     cost, l->max_filter_cost,
						     tp->layout.group,
						     tp->layout.name);
				return -E2BIG;
			}
			total += cost;
		}
	}
	if (total > l->max_filters_cost) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "filters cost more together than a member's session's may: fewer or simpler filters (docs/security.md)",
				     "filters cost %llu together > %llu a member's session's may",
				     total, l->max_filters_cost);
		return -E2BIG;
	}
	return 0;
}

/*
 * @s (NULL for a new session) of @uid would hold @bytes and @counters:
 * within the member's limits, with what the uid's other sessions hold?
 */
static int check_budget_locked(const struct pbt_session *s, kuid_t uid,
			       const struct pbt_session_params *p, u64 bytes,
			       u32 counters, struct netlink_ext_ack *extack)
{
	const struct pbt_limits *l = &p->limits;
	u32 id = from_kuid_munged(&init_user_ns, uid);
	struct pbt_usage u;

	if (!p->member)
		return 0;
	usage_locked(uid, s, &u);
	if (!s && member_sessions_locked() >= PBT_MEMBER_MAX_SESSIONS) {
		NL_SET_ERR_MSG(extack, "group members hold 4 sessions already, the most they may (the other 4 are root's): stop one first");
		return -ENOSPC;
	}
	if (!s && u.sessions >= l->max_sessions) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "this uid holds the sessions a member may (group_max_sessions): stop one first",
				     "uid %u holds %u sessions, a member may hold %u (group_max_sessions)",
				     id, u.sessions, l->max_sessions);
		return -ENOSPC;
	}
	if ((u64)u.counters + counters > l->max_counters) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "needs more counters (tracepoints x CPUs) than this uid has left (group_max_counters): fewer tracepoints",
				     "needs %u counters (tracepoints x CPUs), uid %u holds %u of %u",
				     counters, id, u.counters, l->max_counters);
		return -E2BIG;
	}
	if (u.bytes + bytes > l->max_bytes) {
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "needs more KiB than this uid has left (group_max_kb): smaller buffers, or stop a session",
				     "needs %llu KiB, uid %u holds %llu of %llu (group_max_kb)",
				     DIV_ROUND_UP(bytes, 1024), id,
				     DIV_ROUND_UP(u.bytes, 1024),
				     l->max_bytes / 1024);
		return -ENOMEM;
	}
	return 0;
}

/* Checks that need no lock: duplicates (everyone), filters (members). */
static int check_request(const struct pbt_session_params *p,
			 struct netlink_ext_ack *extack)
{
	int ret = check_duplicates(p, extack);

	if (!ret && p->member)
		ret = check_filters(p, &p->limits, extack);
	return ret;
}

/*
 * /sys/module/pbtrace/parameters/group_usage (0400): what each uid's
 * sessions hold, as the budget counts it: "uid U sessions N bytes B
 * counters C member M", one line per uid with a live session.
 */
static int usage_get(char *buf, const struct kernel_param *kp)
{
	struct pbt_session *s, *t;
	struct pbt_usage u;
	int len = 0;

	mutex_lock(&pbt_sessions_lock);
	list_for_each_entry(s, &sessions, node) {
		list_for_each_entry(t, &sessions, node)
			if (uid_eq(t->params.owner_uid, s->params.owner_uid))
				break;
		if (t != s)
			continue;	/* that uid's line is written */
		usage_locked(s->params.owner_uid, NULL, &u);
		len += scnprintf(buf + len, PAGE_SIZE - len,
				 "uid %u sessions %u bytes %llu counters %u member %d\n",
				 from_kuid_munged(&init_user_ns, s->params.owner_uid),
				 u.sessions, u.bytes, u.counters,
				 s->params.member);
	}
	mutex_unlock(&pbt_sessions_lock);
	return len;
}

static const struct kernel_param_ops usage_ops = {
	.get = usage_get,
};
module_param_cb(group_usage, &usage_ops, NULL, 0400);
MODULE_PARM_DESC(group_usage, "what each uid's sessions hold: bytes of kernel memory as allocated, perf counters (read only)");

/*
 * May a member (@uid, @gid: its session's owner) read the current task's
 * memory, its syscalls' strings and its user stack? In the spirit of
 * ptrace_may_access(PTRACE_MODE_READ_REALCREDS), which cannot be called
 * here: it takes task_lock() and calls the LSM's ptrace hook, and this
 * runs in probes (interrupts may be off, nothing may sleep). So only its
 * first rules, the cheap ones: the task's real, effective and saved uids
 * and gids are the member's, and its mm is dumpable (SUID_DUMP_USER: not
 * after a setuid or setgid exec, nor after prctl(PR_SET_DUMPABLE, 0)). No
 * capability and no LSM is asked (docs/security.md says what that
 * means). The task's objective credentials, as ptrace reads its target's:
 * only current changes them, so they are read without RCU.
 */
bool pbt_may_read(kuid_t uid, kgid_t gid)
{
	const struct cred *c = current_real_cred();
	struct mm_struct *mm = current->mm;

	return mm && get_dumpable(mm) == SUID_DUMP_USER &&
	       uid_eq(c->uid, uid) && uid_eq(c->euid, uid) &&
	       uid_eq(c->suid, uid) && gid_eq(c->gid, gid) &&
	       gid_eq(c->egid, gid) && gid_eq(c->sgid, gid);
}

/* A buffer of @s is its owner's: what pbt_may_read() is asked with. */
static void own_buffer(struct pbt_buffer_params *bp,
		       const struct pbt_session_params *sp)
{
	bp->member = sp->member;
	bp->owner_uid = sp->owner_uid;
	bp->owner_gid = sp->owner_gid;
}

static int create_buffers(struct pbt_session *s, unsigned int slot)
{
	struct pbt_buffer *b;
	unsigned int i;

	for (i = 0; i < s->params.nr_buffers; i++) {
		own_buffer(&s->params.buffers[i], &s->params);
		b = pbt_buffer_create(&s->params.buffers[i],
				      sequence_id_base(slot, i), &s->wq);
		if (IS_ERR_OR_NULL(b))
			return b ? PTR_ERR(b) : -ENOMEM;
		s->buffers[i] = b;
	}
	return 0;
}

/*
 * Takes ownership of p's allocations (output, config, syscall filters)
 * whatever the outcome, so the caller never frees them twice.
 */
int pbt_session_new(struct pbt_session_params *p, u32 *id,
		    struct netlink_ext_ack *extack)
{
	struct pbt_session *s;
	unsigned int slot;
	int ret;

	ret = check_request(p, extack);
	if (ret) {
		pbt_params_free(p);
		return ret;
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s) {
		pbt_params_free(p);
		return -ENOMEM;
	}
	kref_init(&s->ref);
	init_waitqueue_head(&s->wq);
	INIT_LIST_HEAD(&s->node);
	take_params(&s->params, p);
	s->state = PBTRACE_STATE_CONFIGURED;
	s->remote = pbt_remote_create(s);
	if (!s->remote) {
		pbt_session_put(s);
		return -ENOMEM;
	}

	mutex_lock(&pbt_sessions_lock);
	if (find_name_locked(s->params.name)) {
		NL_SET_ERR_MSG(extack, "session name already in use: pick another name or destroy that session");
		ret = -EEXIST;
		goto err_unlock;
	}
	slot = find_first_zero_bit(&used_slots, PBTRACE_MAX_SESSIONS);
	if (slot >= PBTRACE_MAX_SESSIONS) {
		NL_SET_ERR_MSG(extack, "too many sessions: destroy one first (at most 8 live)");
		ret = -ENOSPC;
		goto err_unlock;
	}
	s->bytes = session_bytes(&s->params, s->params.output,
				 s->params.config_len);
	s->counters = params_counters(&s->params);
	ret = check_budget_locked(NULL, s->params.owner_uid, &s->params,
				  s->bytes, s->counters, extack);
	if (ret)
		goto err_unlock;
	ret = create_buffers(s, slot);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot allocate the buffers: ask for smaller size_kb (all buffers together may take half the RAM, a new one half the memory available)");
		goto err_unlock;
	}
	set_bit(slot, &used_slots);
	s->slot = slot;
	s->id = ++last_id;
	list_add_tail(&s->node, &sessions);
	*id = s->id;
	changed(PBTRACE_CMD_NEW_SESSION, s->id, NULL);
	mutex_unlock(&pbt_sessions_lock);
	return 0;

err_unlock:
	mutex_unlock(&pbt_sessions_lock);
	pbt_session_put(s);
	return ret;
}

/*
 * SET_SESSION. The new buffers are built before anything changes, so a
 * failure leaves the session as it was. A reader attached to an old buffer
 * keeps it (retired: it never gets data, its poll says EPOLLERR) until it
 * closes; an old buffer nobody holds is freed here.
 */
int pbt_session_set(u32 id, struct pbt_session_params *p, unsigned int what,
		    struct netlink_ext_ack *extack)
{
	struct pbt_buffer *nb[PBTRACE_MAX_BUFFERS] = {};
	struct pbt_buffer *old[PBTRACE_MAX_BUFFERS] = {};
	struct pbt_session *s;
	unsigned int i, nr_old = 0;
	u32 counters;
	int ret = 0;
	u64 bytes;

	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	if (!s) {
		NL_SET_ERR_MSG(extack, "no session with this id: 'tracectl status' lists them");
		ret = -ENOENT;
		goto out;
	}
	if (s->params.relay) {
		NL_SET_ERR_MSG(extack, "this session records for the relay's host: only the host can change it");
		ret = -EBUSY;
		goto out;
	}
	if (s->state != PBTRACE_STATE_CONFIGURED) {
		NL_SET_ERR_MSG(extack, "session has started (or stopped): only a session that has not started can be changed");
		ret = -EBUSY;
		goto out;
	}
	if (what & PBT_SET_BUFFERS) {
		ret = check_request(p, extack);
		if (ret)
			goto out;
	}
	bytes = session_bytes(what & PBT_SET_BUFFERS ? p : &s->params,
			      what & PBT_SET_OUTPUT ? p->output : s->params.output,
			      what & PBT_SET_CONFIG ? p->config_len :
			      s->params.config_len);
	counters = params_counters(what & PBT_SET_BUFFERS ? p : &s->params);
	/* New buffers come with the caller's limits, else the session's. */
	ret = check_budget_locked(s, s->params.owner_uid,
				  what & PBT_SET_BUFFERS ? p : &s->params,
				  bytes, counters, extack);
	if (ret)
		goto out;
	for (i = 0; (what & PBT_SET_BUFFERS) && i < p->nr_buffers; i++) {
		/* The session's owner's, whoever sends SET. */
		own_buffer(&p->buffers[i], &s->params);
		nb[i] = pbt_buffer_create(&p->buffers[i],
					  sequence_id_base(s->slot, i), &s->wq);
		if (IS_ERR(nb[i])) {
			ret = PTR_ERR(nb[i]);
			nb[i] = NULL;
			NL_SET_ERR_MSG(extack, "cannot allocate the new buffers: ask for smaller size_kb (all buffers together may take half the RAM, a new one half the memory available; the session is unchanged)");
			goto out;
		}
	}

	/* Nothing fails from here: p takes what the session gives up. */
	s->bytes = bytes;
	s->counters = counters;
	if (what & PBT_SET_CONFIG) {
		swap(s->params.config, p->config);
		swap(s->params.config_len, p->config_len);
	}
	if (what & PBT_SET_OUTPUT)
		swap(s->params.output, p->output);
	if (what & PBT_SET_BUFFERS) {
		nr_old = s->params.nr_buffers;
		for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
			old[i] = s->buffers[i];
			s->buffers[i] = nb[i];
			nb[i] = NULL;
			swap(s->params.buffers[i], p->buffers[i]);
		}
		s->params.nr_buffers = p->nr_buffers;
		pbt_remote_resize(s->remote);
		for (i = 0; i < nr_old; i++) {
			if (old[i] && pbt_buffer_readers(old[i], 0)) {
				pbt_buffer_retire(old[i]);
				old[i] = NULL;
			}
		}
		/* Readers of a retired buffer learn it from poll. */
		wake_up_all(&s->wq);
	}
	changed(PBTRACE_CMD_SET_SESSION, id, NULL);
out:
	mutex_unlock(&pbt_sessions_lock);
	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
		pbt_buffer_destroy(nb[i]);
		pbt_buffer_destroy(old[i]);
	}
	pbt_params_free(p);
	return ret;
}

struct pbt_buffer *pbt_session_attach(u32 id, u32 buffer,
				      struct pbt_session **sp)
{
	struct pbt_session *s;
	struct pbt_buffer *b;

	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	if (!s) {
		b = ERR_PTR(-ENOENT);
	} else if (buffer >= s->params.nr_buffers || !s->buffers[buffer]) {
		b = ERR_PTR(-EINVAL);
	} else {
		b = s->buffers[buffer];
		pbt_buffer_readers(b, 1);
		kref_get(&s->ref);
		*sp = s;
	}
	mutex_unlock(&pbt_sessions_lock);
	return b;
}

/* The reader's session reference is still held: the caller puts it. */
void pbt_session_detach(struct pbt_session *s, struct pbt_buffer *b)
{
	bool gone;

	mutex_lock(&pbt_sessions_lock);
	gone = !pbt_buffer_readers(b, -1) && pbt_buffer_retired(b);
	mutex_unlock(&pbt_sessions_lock);
	if (gone)
		pbt_buffer_destroy(b);
}

static void put_probes(u64 events)
{
	int ev;

	for (ev = 0; ev < PBT_NR_EVENTS; ev++)
		if (events & BIT_ULL(ev))
			pbt_probe_put(ev);
}

static int get_probes(u64 events)
{
	int ev, ret;

	for (ev = 0; ev < PBT_NR_EVENTS; ev++) {
		if (!(events & BIT_ULL(ev)))
			continue;
		ret = pbt_probe_get(ev);
		if (ret) {
			put_probes(events & (BIT_ULL(ev) - 1));
			return ret;
		}
	}
	return 0;
}

/*
 * The probes a buffer needs here: its events, and fork and free for a pid
 * filter that follows forks (recorded only if asked for). A buffer only for
 * relayed machines registers nothing here.
 */
static u64 local_events(const struct pbt_buffer_params *bp)
{
	u64 follow = BIT_ULL(PBT_EV_SCHED_PROCESS_FORK) |
		     BIT_ULL(PBT_EV_SCHED_PROCESS_FREE);

	if (!pbt_buffer_local(bp))
		return 0;
	return bp->events | (bp->follow_forks ? follow : 0);
}

static void put_all_probes(struct pbt_session *s, unsigned int nr_buffers)
{
	unsigned int i;

	for (i = 0; i < nr_buffers; i++)
		put_probes(local_events(&s->params.buffers[i]));
}

static void stop_tracepoints(struct pbt_session *s)
{
	unsigned int i;

	for (i = 0; i < s->params.nr_buffers; i++)
		pbt_tp_stop(s->buffers[i]);
}

/* Any tracepoint's counters, once its buffer is active (tracepoint.c). */
static int start_tracepoints(struct pbt_session *s,
			     struct netlink_ext_ack *extack)
{
	unsigned int i;
	int ret;

	for (i = 0; i < s->params.nr_buffers; i++) {
		if (!pbt_buffer_local(&s->params.buffers[i]))
			continue;
		ret = pbt_tp_start(s->buffers[i], &s->params, extack);
		if (ret) {
			stop_tracepoints(s);
			return ret;
		}
	}
	return 0;
}

/* A round every watermark_ms while started (watermark.c), local buffers. */
static int start_watermarks(struct pbt_session *s)
{
	const struct pbt_buffer_params *bp;
	unsigned int i;

	for (i = 0; i < s->params.nr_buffers; i++) {
		bp = &s->params.buffers[i];
		if (!bp->watermark_ms || !pbt_buffer_local(bp))
			continue;
		s->wm[i] = pbt_watermark_start(s->buffers[i], bp->watermark_ms,
					       bp->watermark_expedited);
		if (!s->wm[i]) {
			free_watermarks(s);
			return -ENOMEM;
		}
	}
	return 0;
}

static int start_locked(struct pbt_session *s, struct netlink_ext_ack *extack)
{
	unsigned int i;
	int ret;

	if (s->state == PBTRACE_STATE_STARTED)
		return -EALREADY;
	if (s->state != PBTRACE_STATE_CONFIGURED)
		return -EINVAL;
	/* First: it only fails for memory, and its rounds are safe at once. */
	ret = start_watermarks(s);
	if (ret)
		return ret;

	/*
	 * The start is before the first event: a buffer records from its
	 * activation (probes another session registered already run), and
	 * trace_processor drops ftrace events before traced's
	 * tracing_started, which is stamped with this. Taken once: a second
	 * stamp after the activation made trace_processor skip the events in
	 * between (compact_sched_switch_skipped).
	 */
	s->start_ns = ktime_get_boottime_ns();
	/* Buffers first, then probes: an event never finds no buffer ready. */
	for (i = 0; i < s->params.nr_buffers; i++)
		if (pbt_buffer_local(&s->params.buffers[i]))
			pbt_buffer_activate(s->buffers[i]);
	for (i = 0; i < s->params.nr_buffers; i++) {
		ret = get_probes(local_events(&s->params.buffers[i]));
		if (ret)
			goto err;
	}
	ret = start_tracepoints(s, extack);
	if (ret) {
		i = s->params.nr_buffers;
		goto err;
	}
	s->state = PBTRACE_STATE_STARTED;
	pbt_remote_start(s->remote);
	return 0;

err:
	s->start_ns = 0;
	put_all_probes(s, i);
	for (i = 0; i < s->params.nr_buffers; i++)
		pbt_buffer_deactivate(s->buffers[i]);
	pbt_probes_sync();
	free_watermarks(s);
	return ret;
}

int pbt_session_start(u32 id, struct netlink_ext_ack *extack)
{
	struct pbt_session *s;
	int ret;

	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	ret = s ? start_locked(s, extack) : -ENOENT;
	if (!ret)
		changed(PBTRACE_CMD_START_SESSION, id, NULL);
	mutex_unlock(&pbt_sessions_lock);
	return ret;
}

static void flush_all(struct pbt_session *s)
{
	unsigned int i;

	for (i = 0; i < s->params.nr_buffers; i++)
		pbt_buffer_flush(s->buffers[i]);
	wake_up_all(&s->wq);
}

/*
 * Unpublish, then wait until no probe can still be inside one of our
 * buffers, then seal: after this the buffers only change by reading.
 * A session that never started (e.g. waiting for a START_TRACING trigger)
 * stops too, so "stop" always ends a session the same way for traced.
 */
static int stop_locked(struct pbt_session *s)
{
	unsigned int i;

	if (s->state == PBTRACE_STATE_STOPPED)
		return -EALREADY;
	pbt_remote_stop(s->remote);
	if (s->state == PBTRACE_STATE_CONFIGURED) {
		s->stop_ns = ktime_get_boottime_ns();
		s->state = PBTRACE_STATE_STOPPED;
		wake_up_all(&s->wq);
		return 0;
	}
	for (i = 0; i < s->params.nr_buffers; i++)
		pbt_buffer_deactivate(s->buffers[i]);
	put_all_probes(s, s->params.nr_buffers);
	stop_tracepoints(s);
	/* No probe and no counter handler is inside a buffer after this. */
	pbt_probes_sync();
	s->stop_ns = ktime_get_boottime_ns();
	s->state = PBTRACE_STATE_STOPPED;
	flush_all(s);
	/* Every CPU sealed, nothing writes: the watermarks say "all". */
	for (i = 0; i < s->params.nr_buffers; i++)
		pbt_watermark_stop(s->wm[i]);
	return 0;
}

int pbt_session_stop(u32 id)
{
	struct pbt_session *s;
	int ret;

	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	ret = s ? stop_locked(s) : -ENOENT;
	if (!ret)
		changed(PBTRACE_CMD_STOP_SESSION, id, NULL);
	mutex_unlock(&pbt_sessions_lock);
	return ret;
}

int pbt_session_flush(u32 id)
{
	struct pbt_session *s;
	unsigned int i;
	int ret = 0;

	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	if (s) {
		flush_all(s);
		pbt_remote_flush(s->remote);
		for (i = 0; i < s->params.nr_buffers; i++)
			pbt_watermark_kick(s->wm[i]);
	} else
		ret = -ENOENT;
	mutex_unlock(&pbt_sessions_lock);
	return ret;
}

static void destroy_locked(struct pbt_session *s, const char *error)
{
	if (s->state == PBTRACE_STATE_STARTED) {
		stop_locked(s);
		changed(PBTRACE_CMD_STOP_SESSION, s->id, NULL);
	}
	pbt_remote_stop(s->remote);	/* a CONFIGURED one: readers get EOF */
	list_del_init(&s->node);
	clear_bit(s->slot, &used_slots);
	changed(PBTRACE_CMD_DESTROY_SESSION, s->id, error);
	/* Readers blocked in poll see the session gone and drop their ref. */
	wake_up_all(&s->wq);
	pbt_session_put(s);
}

int pbt_session_destroy(u32 id, const char *error)
{
	struct pbt_session *s;
	int ret = 0;

	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	if (s)
		destroy_locked(s, error);
	else
		ret = -ENOENT;
	mutex_unlock(&pbt_sessions_lock);
	return ret;
}

void pbt_sessions_destroy_all(void)
{
	struct pbt_session *s, *tmp;

	mutex_lock(&pbt_sessions_lock);
	list_for_each_entry_safe(s, tmp, &sessions, node)
		destroy_locked(s, NULL);
	mutex_unlock(&pbt_sessions_lock);
}

/* A deep copy of @src's buffers into @dst, for ADD_TRACEPOINTS. */
static int copy_buffers(struct pbt_session_params *dst,
			const struct pbt_session_params *src)
{
	struct pbt_buffer_params *d;
	unsigned int i;

	dst->nr_buffers = src->nr_buffers;
	for (i = 0; i < src->nr_buffers; i++) {
		d = &dst->buffers[i];
		*d = src->buffers[i];
		d->syscalls = NULL;
		d->tps = NULL;
		if (src->buffers[i].syscalls) {
			d->syscalls = bitmap_alloc(NR_syscalls, GFP_KERNEL_ACCOUNT);
			if (!d->syscalls)
				return -ENOMEM;
			bitmap_copy(d->syscalls, src->buffers[i].syscalls,
				    NR_syscalls);
		}
		if (d->nr_tps) {
			d->tps = kvmalloc_array(d->nr_tps, sizeof(*d->tps),
						GFP_KERNEL_ACCOUNT);
			if (!d->tps)
				return -ENOMEM;
			memcpy(d->tps, src->buffers[i].tps,
			       array_size(d->nr_tps, sizeof(*d->tps)));
		}
	}
	return 0;
}

/* @b's tracepoints followed by @add's (which keeps its own). */
static int append_tps(struct pbt_buffer_params *b,
		      const struct pbt_buffer_params *add)
{
	struct pbt_tp_params *v;

	v = kvmalloc_array(b->nr_tps + add->nr_tps, sizeof(*v),
			   GFP_KERNEL_ACCOUNT);
	if (!v)
		return -ENOMEM;
	if (b->nr_tps)
		memcpy(v, b->tps, array_size(b->nr_tps, sizeof(*v)));
	memcpy(v + b->nr_tps, add->tps, array_size(add->nr_tps, sizeof(*v)));
	kvfree(b->tps);
	b->tps = v;
	b->nr_tps += add->nr_tps;
	if (add->scratch_size)
		b->scratch_size = add->scratch_size;
	return 0;
}

static u32 session_tps(const struct pbt_session_params *p)
{
	u32 i, n = 0;

	for (i = 0; i < p->nr_buffers; i++)
		n += p->buffers[i].nr_tps;
	return n;
}

/*
 * ADD_TRACEPOINTS: @add's tracepoints appended to buffer @index of a
 * session that has not started, as a SET_SESSION of its buffers with them
 * would: the same checks (duplicates, the owner's budget, counters and
 * filter cost, over all the pieces so far), the buffers built again, and
 * a failure leaves the session as it was. The session's owner sends the
 * pieces one after another; one sent meanwhile by someone else is lost.
 */
int pbt_session_add_tps(u32 id, u32 index, const struct pbt_buffer_params *add,
			struct netlink_ext_ack *extack)
{
	struct pbt_session_params *p;
	struct pbt_session *s;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	mutex_lock(&pbt_sessions_lock);
	s = find_locked(id);
	if (!s) {
		ret = -ENOENT;
		NL_SET_ERR_MSG(extack, "no session with this id: 'tracectl status' lists them");
	} else if (index >= s->params.nr_buffers) {
		ret = -EINVAL;
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "no such buffer in the session: tracectl status lists them",
				     "no buffer %u: the session has %u",
				     index, s->params.nr_buffers);
	} else if (session_tps(&s->params) + add->nr_tps > PBTRACE_MAX_TRACEPOINTS) {
		ret = -E2BIG;
		PBT_ERR_MSG_ATTR_FMT(extack, NULL,
				     "too many tracepoints for one session (PBTRACE_MAX_TRACEPOINTS): split them over sessions",
				     "too many tracepoints: %u and %u more, at most %u per session",
				     session_tps(&s->params), add->nr_tps,
				     PBTRACE_MAX_TRACEPOINTS);
	} else {
		p->member = s->params.member;
		p->limits = s->params.limits;
		ret = copy_buffers(p, &s->params);
		if (!ret)
			ret = append_tps(&p->buffers[index], add);
	}
	mutex_unlock(&pbt_sessions_lock);
	if (!ret)	/* frees p's allocations */
		ret = pbt_session_set(id, p, PBT_SET_BUFFERS, extack);
	else
		pbt_params_free(p);
	kfree(p);
	return ret;
}
