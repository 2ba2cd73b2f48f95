// SPDX-License-Identifier: GPL-2.0
/*
 * Relayed machines' data in a session. The endpoint (kmod/relay/bind.c) checks,
 * stamps and hands us whole Trace.packet records from its connection
 * threads; each session buffer keeps them in a bounded queue of byte
 * records until traced takes them with PBTRACE_IOC_READ_REMOTE. A queue
 * that is full refuses the record (counted), so a guest faster than the
 * reader costs the host a fixed amount of memory, never its own tracing.
 *
 * Per (session, machine) counters live here too, one allocation per
 * machine that recorded into the session (a session may see thousands),
 * so GET_SESSION_MACHINES reports a machine after it went away. And which
 * machine ids a live session still holds: the endpoint keeps those ids'
 * slots (kmod/relay/machines.c), since a file that already has an id must
 * not see it again as another machine.
 *
 * Locking: r->lock (a mutex: the producers and the reader both sleep) nests
 * inside pbt_sessions_lock and never the other way round; the endpoint
 * calls in here without holding any lock of its own, except
 * pbt_remote_held(), which it calls under its ep_lock: ids_lock is
 * innermost.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/timer.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "pbtrace.h"
#include "compat.h"

#define REMOTE_MIN_BOUND (4u << 20)	/* queue bound: this or the buffer size */

struct remote_rec {
	struct list_head node;
	u32 len;
	u32 cost;			/* rec_cost(): what q->used counts */
	u8 data[];
};

struct remote_queue {
	struct list_head recs;
	size_t used, bound;		/* bytes allocated, not payload */
	unsigned int pending;		/* bound machines that owe a STOPPED */
	bool eof;			/* a reader was told: refuse the rest */
};

struct remote_machine {
	char name[PBTRACE_NAME_MAX + 1];
	char peer[PBT_PEER_MAX];
	u64 gap_start;			/* BOOTTIME it disconnected, or 0 */
	s64 offset_min, offset_max;
	struct pbtrace_machine_stats st;
};

struct pbt_remote {
	struct mutex lock;
	struct pbt_session *s;		/* owns us */
	bool stopped;
	u64 stop_ns;
	u32 flush_gen;
	struct timer_list done_timer;	/* wakes readers once waiting is over */
	struct remote_queue q[PBTRACE_MAX_BUFFERS];
	struct xarray machines;		/* id -> struct remote_machine */
};

static bool has_name(const struct pbt_buffer_params *bp, const char *name)
{
	u32 i;

	for (i = 0; i < bp->nr_machines; i++)
		if (!strcmp(bp->machines[i], name))
			return true;
	return false;
}

/* No list means this machine only. */
bool pbt_buffer_local(const struct pbt_buffer_params *bp)
{
	return !bp->nr_machines || has_name(bp, PBTRACE_MACHINE_HOST);
}

/* A guest that calls itself "host" is still only a relayed machine. */
bool pbt_buffer_wants(const struct pbt_buffer_params *bp, const char *machine)
{
	if (has_name(bp, PBTRACE_MACHINE_ANY))
		return true;
	return strcmp(machine, PBTRACE_MACHINE_HOST) && has_name(bp, machine);
}

static void done_timer_fn(struct timer_list *t)
{
	struct pbt_remote *r = timer_container_of(r, t, done_timer);

	wake_up_all(&r->s->wq);
}

struct pbt_remote *pbt_remote_create(struct pbt_session *s)
{
	struct pbt_remote *r;
	unsigned int i;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return NULL;
	mutex_init(&r->lock);
	xa_init(&r->machines);
	r->s = s;
	timer_setup(&r->done_timer, done_timer_fn, 0);
	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
		INIT_LIST_HEAD(&r->q[i].recs);
		r->q[i].bound = max_t(size_t, REMOTE_MIN_BOUND,
				      (size_t)s->params.buffers[i].size_kb << 10);
	}
	return r;
}

/* What pbt_remote_create() allocates, for a member's budget. */
u64 pbt_remote_cost(void)
{
	return kmalloc_size_roundup(sizeof(struct pbt_remote));
}

/* SET_SESSION replaced the buffers: size the queues after the new ones. */
void pbt_remote_resize(struct pbt_remote *r)
{
	unsigned int i;

	mutex_lock(&r->lock);
	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++)
		r->q[i].bound = max_t(size_t, REMOTE_MIN_BOUND,
				      (size_t)r->s->params.buffers[i].size_kb << 10);
	mutex_unlock(&r->lock);
}

/*
 * Connection threads (kmod/relay/) poll this generation for session changes
 * that concern them, and report here which machines are online: remote.c
 * never calls into kmod/relay/.
 */
static atomic_t changes = ATOMIC_INIT(0);

/*
 * Per machine id, whether the endpoint has it online and how many live
 * sessions hold it: xa_mk_value(holds << 1 | online), no entry for 0.
 * A mutex, not the xarray's spinlock: the store may allocate.
 */
static DEFINE_MUTEX(ids_lock);
static DEFINE_XARRAY(ids);

static bool id_valid(u32 machine_id)
{
	return machine_id && machine_id <= PBTRACE_MAX_MACHINE_ID;
}

static unsigned long id_state(u32 machine_id)
{
	void *e = xa_load(&ids, machine_id);

	return e ? xa_to_value(e) : 0;
}

/*
 * @holds added to the id's, @online (0, 1) set unless negative. Only a
 * new entry allocates, so only that can fail (-ENOMEM).
 */
static int id_change(u32 machine_id, int holds, int online)
{
	unsigned long v;
	int ret = 0;

	mutex_lock(&ids_lock);
	v = id_state(machine_id) + ((unsigned long)(long)holds << 1);
	if (online >= 0)
		v = (v & ~1UL) | online;
	if (v)
		ret = xa_err(xa_store(&ids, machine_id, xa_mk_value(v),
				      GFP_KERNEL));
	else
		xa_erase(&ids, machine_id);
	mutex_unlock(&ids_lock);
	return ret;
}

void pbt_remote_destroy(struct pbt_remote *r)
{
	struct remote_machine *m;
	struct remote_rec *rec, *tmp;
	unsigned long id;
	unsigned int i;

	if (!r)
		return;
	timer_delete_sync(&r->done_timer);
	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
		list_for_each_entry_safe(rec, tmp, &r->q[i].recs, node)
			kvfree(rec);
	}
	xa_for_each(&r->machines, id, m) {
		id_change(id, -1, -1);
		kfree(m);
	}
	xa_destroy(&r->machines);
	kfree(r);
}

u32 pbt_remote_changes(void)
{
	return atomic_read(&changes);
}

static void kick(void)
{
	atomic_inc(&changes);
}

void pbt_remote_online(u32 machine_id, bool is_online)
{
	if (id_valid(machine_id))
		id_change(machine_id, 0, is_online);
}

static bool machine_online(u32 machine_id)
{
	bool on;

	mutex_lock(&ids_lock);
	on = id_state(machine_id) & 1;
	mutex_unlock(&ids_lock);
	return on;
}

bool pbt_remote_held(u32 machine_id)
{
	bool held;

	mutex_lock(&ids_lock);
	held = id_state(machine_id) >> 1;
	mutex_unlock(&ids_lock);
	return held;
}

void pbt_remote_start(struct pbt_remote *r)
{
	kick();
}

/*
 * The session stopped (or was destroyed unstarted): nothing new binds, the
 * endpoint tells bound guests to stop, and readers get EOF once each of
 * them sent its last chunk or PBT_REMOTE_DONE_NS passed.
 */
void pbt_remote_stop(struct pbt_remote *r)
{
	mutex_lock(&r->lock);
	if (!r->stopped) {
		r->stopped = true;
		r->stop_ns = ktime_get_boottime_ns();
		mod_timer(&r->done_timer, jiffies +
			  nsecs_to_jiffies(PBT_REMOTE_DONE_NS) + 1);
	}
	mutex_unlock(&r->lock);
	kick();
}

void pbt_remote_flush(struct pbt_remote *r)
{
	WRITE_ONCE(r->flush_gen, r->flush_gen + 1);
	kick();
}

u32 pbt_remote_flush_gen(struct pbt_remote *r)
{
	return READ_ONCE(r->flush_gen);
}

/*
 * The machine's part in the session, NULL if it has none. An entry stays
 * until the session is freed, so looking it up needs no lock; its fields
 * are r->lock's.
 */
static struct remote_machine *machine(struct pbt_remote *r, u32 machine_id)
{
	return id_valid(machine_id) ? xa_load(&r->machines, machine_id) : NULL;
}

/* Stopped, and every bound machine is done or had its time. */
static bool done_locked(struct pbt_remote *r, u32 buffer)
{
	if (!r->stopped)
		return false;
	return !r->q[buffer].pending ||
	       ktime_get_boottime_ns() - r->stop_ns >= PBT_REMOTE_DONE_NS;
}

bool pbt_remote_done(struct pbt_session *s, u32 buffer)
{
	struct pbt_remote *r = s->remote;
	bool done;

	mutex_lock(&r->lock);
	done = done_locked(r, buffer);
	mutex_unlock(&r->lock);
	return done;
}

bool pbt_remote_readable(struct pbt_session *s, u32 buffer)
{
	return !list_empty_careful(&s->remote->q[buffer].recs);
}

/*
 * Whole records, oldest first, as many as fit in @size. They are taken off
 * the queue under the lock and copied without it: a reader whose memory
 * faults slowly must not hold up the endpoint or GET_SESSION (which takes
 * r->lock under pbt_sessions_lock). What could not be copied goes back.
 */
int pbt_remote_read(struct pbt_session *s, u32 buffer, void __user *ubuf,
		    u32 size, struct pbtrace_remote_read *rr)
{
	struct pbt_remote *r = s->remote;
	struct remote_queue *q = &r->q[buffer];
	struct remote_rec *rec, *tmp;
	LIST_HEAD(taken);
	u32 len = 0;
	int ret = 0;

	rr->len = 0;
	rr->flags = 0;
	mutex_lock(&r->lock);
	list_for_each_entry_safe(rec, tmp, &q->recs, node) {
		if (rec->len > size - len)
			break;
		len += rec->len;
		q->used -= rec->cost;
		list_move_tail(&rec->node, &taken);
	}
	mutex_unlock(&r->lock);

	list_for_each_entry_safe(rec, tmp, &taken, node) {
		if (copy_to_user(ubuf + rr->len, rec->data, rec->len)) {
			ret = -EFAULT;
			break;
		}
		rr->len += rec->len;
		list_del(&rec->node);
		kvfree(rec);
	}
	if (rr->len)		/* what was copied is the reader's now */
		ret = 0;

	mutex_lock(&r->lock);
	list_for_each_entry(rec, &taken, node)
		q->used += rec->cost;
	list_splice(&taken, &q->recs);
	if (!ret && list_empty(&q->recs) && done_locked(r, buffer)) {
		rr->flags |= PBTRACE_REMOTE_EOF;
		q->eof = true;
	}
	mutex_unlock(&r->lock);
	if (!ret && !rr->len && !rr->flags)
		ret = -EAGAIN;
	return ret;
}

/* The first machine of @s with an id above *@id, into *@v; false: none. */
bool pbt_remote_machine_next(struct pbt_session *s, u32 *id,
			     struct pbt_machine_view *v)
{
	struct pbt_remote *r = s->remote;
	struct remote_machine *m;
	unsigned long index = *id;
	u64 end;

	mutex_lock(&r->lock);
	m = xa_find_after(&r->machines, &index, PBTRACE_MAX_MACHINE_ID,
			  XA_PRESENT);
	if (!m) {
		mutex_unlock(&r->lock);
		return false;
	}
	strscpy(v->name, m->name, sizeof(v->name));
	strscpy(v->peer, m->peer, sizeof(v->peer));
	v->st = m->st;
	if (m->gap_start) {
		end = r->stopped ? r->stop_ns : ktime_get_boottime_ns();
		if (end > m->gap_start)
			v->st.gap_ns += end - m->gap_start;
	}
	mutex_unlock(&r->lock);
	*id = index;
	v->st.connected = machine_online(index);
	return true;
}

/*
 * A machine starts recording for buffer @buffer: the session holds its id
 * from now on (-ENOMEM if it cannot). A machine back after a disconnect
 * closes its gap.
 */
int pbt_remote_bind(struct pbt_session *s, u32 buffer, u32 machine_id,
		    const char *name, const char *peer, u32 num_cpus)
{
	struct pbt_remote *r = s->remote;
	struct remote_machine *m;
	u64 now = ktime_get_boottime_ns();

	if (!id_valid(machine_id) || buffer >= PBTRACE_MAX_BUFFERS)
		return -EINVAL;
	/*
	 * Its first time here: allocated before the lock, so a reader of the
	 * queue never waits on it. Only the machine's own connection binds
	 * it, so nobody adds the same id meanwhile.
	 */
	m = machine(r, machine_id);
	if (!m) {
		m = kzalloc(sizeof(*m), GFP_KERNEL);
		if (!m)
			return -ENOMEM;
		if (id_change(machine_id, 1, -1)) {
			kfree(m);
			return -ENOMEM;
		}
		mutex_lock(&r->lock);
		if (xa_err(xa_store(&r->machines, machine_id, m, GFP_KERNEL))) {
			mutex_unlock(&r->lock);
			id_change(machine_id, -1, -1);
			kfree(m);
			return -ENOMEM;
		}
	} else {
		mutex_lock(&r->lock);
	}
	strscpy(m->name, name, sizeof(m->name));
	strscpy(m->peer, peer, sizeof(m->peer));
	m->st.machine_id = machine_id;
	m->st.buffer = buffer;
	m->st.num_cpus = num_cpus;
	if (m->gap_start) {
		m->st.gap_ns += now - m->gap_start;
		m->gap_start = 0;
	}
	r->q[buffer].pending++;
	mutex_unlock(&r->lock);
	return 0;
}

/*
 * The machine is done with this session: it sent STOPPED or had its time
 * (@lost false), or its connection went away (@lost true: while the
 * session runs that is a disconnect and the start of a gap).
 */
void pbt_remote_unbind(struct pbt_session *s, u32 buffer, u32 machine_id,
		       bool lost)
{
	struct pbt_remote *r = s->remote;
	struct remote_machine *m = machine(r, machine_id);

	if (!m || buffer >= PBTRACE_MAX_BUFFERS)
		return;
	mutex_lock(&r->lock);
	if (r->q[buffer].pending)
		r->q[buffer].pending--;
	if (lost && !r->stopped) {
		m->st.disconnects++;
		m->gap_start = ktime_get_boottime_ns();
	}
	mutex_unlock(&r->lock);
	wake_up_all(&s->wq);
}

/*
 * What a record of @size bytes (header and data) costs the host: its
 * allocation, not its payload. A 10-byte record takes a 64-byte slab
 * object, so counting payload let a guest of tiny frames make the host
 * hold six times the bound. The bound is checked against what kmalloc
 * would take, never less than a vmalloc fallback's pages.
 */
static size_t rec_cost(const void *rec, size_t size)
{
	if (is_vmalloc_addr(rec))
		return PAGE_ALIGN(size);
	return kmalloc_size_roundup(size);
}

/* Returns 0 if refused, 1 if queued, 2 if queued into an empty queue. */
static int push_locked(struct pbt_remote *r, u32 buffer, const void *data,
		       size_t len)
{
	struct remote_queue *q = &r->q[buffer];
	size_t size = struct_size_t(struct remote_rec, data, len);
	struct remote_rec *rec;
	bool was_empty;

	/* After EOF nobody reads: a late chunk is lost, so count it. */
	if (q->eof || len > PBTRACE_REMOTE_READ_MIN ||
	    q->used + kmalloc_size_roundup(size) > q->bound)
		return 0;
	rec = kvmalloc(size, GFP_KERNEL);
	if (!rec)
		return 0;
	rec->len = len;
	rec->cost = rec_cost(rec, size);
	memcpy(rec->data, data, len);
	was_empty = list_empty(&q->recs);
	list_add_tail(&rec->node, &q->recs);
	q->used += rec->cost;
	return was_empty ? 2 : 1;
}

/*
 * One stamped chunk (@len < 0: the guest's chunk could not be stamped),
 * after @lost chunks the guest's sequence skipped on that CPU.
 */
void pbt_remote_chunk(struct pbt_session *s, u32 buffer, u32 machine_id,
		      const void *rec, long len, u32 lost)
{
	struct pbt_remote *r = s->remote;
	struct remote_machine *m = machine(r, machine_id);
	int pushed;

	if (!m || buffer >= PBTRACE_MAX_BUFFERS)
		return;
	mutex_lock(&r->lock);
	pushed = len > 0 ? push_locked(r, buffer, rec, len) : 0;
	m->st.chunks_lost_relay += lost;
	if (pushed) {
		m->st.chunks++;
		m->st.bytes += len;
	} else {
		m->st.chunks_dropped++;
	}
	mutex_unlock(&r->lock);
	/*
	 * Readers take every record they are woken for, so a queue that was
	 * not empty has a reader on its way: wake only for the first.
	 */
	if (pushed == 2)
		wake_up_all(&s->wq);
}

/* system_info, remote_clock_sync: false if refused. */
bool pbt_remote_packet(struct pbt_session *s, u32 buffer, const void *rec,
		       size_t len)
{
	struct pbt_remote *r = s->remote;
	int pushed;

	if (buffer >= PBTRACE_MAX_BUFFERS)
		return false;
	mutex_lock(&r->lock);
	pushed = push_locked(r, buffer, rec, len);
	mutex_unlock(&r->lock);
	if (pushed == 2)
		wake_up_all(&s->wq);
	return pushed;
}

/* A complete ping round: keep the offset at the smallest RTT, and the spread. */
void pbt_remote_ping(struct pbt_session *s, u32 machine_id, u64 rtt_ns,
		     s64 offset_ns)
{
	struct pbt_remote *r = s->remote;
	struct remote_machine *m = machine(r, machine_id);

	if (!m)
		return;
	mutex_lock(&r->lock);
	if (!m->st.pings || rtt_ns < m->st.rtt_ns) {
		m->st.rtt_ns = rtt_ns;
		m->st.offset_ns = offset_ns;
	}
	if (!m->st.pings || offset_ns < m->offset_min)
		m->offset_min = offset_ns;
	if (!m->st.pings || offset_ns > m->offset_max)
		m->offset_max = offset_ns;
	m->st.offset_spread_ns = m->offset_max - m->offset_min;
	m->st.pings++;
	mutex_unlock(&r->lock);
}

/* A round went into the trace as the machine's remote_clock_sync. */
void pbt_remote_synced(struct pbt_session *s, u32 machine_id)
{
	struct pbt_remote *r = s->remote;
	struct remote_machine *m = machine(r, machine_id);

	if (!m)
		return;
	mutex_lock(&r->lock);
	m->st.clock_syncs++;
	mutex_unlock(&r->lock);
}

void pbt_remote_stopped(struct pbt_session *s, u32 machine_id,
			u64 events_written, u64 events_lost)
{
	struct pbt_remote *r = s->remote;
	struct remote_machine *m = machine(r, machine_id);

	if (!m)
		return;
	mutex_lock(&r->lock);
	m->st.guest_events_written = events_written;
	m->st.guest_events_lost = events_lost;
	mutex_unlock(&r->lock);
}
