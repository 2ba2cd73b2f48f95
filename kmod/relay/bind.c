// SPDX-License-Identifier: GPL-2.0
/*
 * The session a machine records for. Each connected machine records for
 * the first started session (lowest id) with a buffer whose machine list
 * names it ("*" or its name), into the first such buffer. Its connection
 * thread tells it so with CONTROL start, passes on FLUSH, and sends
 * CONTROL stop when the session stops, then waits for the guest's STOPPED
 * (at most 2 s) before it looks for another session. Session changes
 * reach the thread as a bump of remote.c's generation
 * (pbt_remote_changes()), which it checks every 100 ms receive timeout:
 * the session lock never waits on a guest's socket, and only the
 * connection's own thread ever sends on it, so no tx lock is needed
 * either. Its CHUNKs are stamped (machine_id, a host-chosen sequence id
 * per guest CPU) into that buffer's remote queue (remote.c), with a
 * system_info when it joins and, ahead of its first chunk, one
 * remote_clock_sync: the middle of the window its ping rounds allow.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>

#include "endpoint.h"
#include "pbtrace_fields.h"
#include "core/relay_packets.h"

/*
 * A machine's sequence ids, PBTRACE_SEQ_ID_REMOTE_BASE + id *
 * PBTRACE_MAX_CPUS_REMOTE + cpu, fit a u32 for every id the table gives
 * (machines.c: 1..PBTRACE_MAX_MACHINE_ID) and every CPU a HELLO may have.
 */
static_assert((u64)PBTRACE_SEQ_ID_REMOTE_BASE +
	      ((u64)PBTRACE_MAX_MACHINE_ID + 1) * PBTRACE_MAX_CPUS_REMOTE - 1 ==
	      U32_MAX);
static_assert(FRAME_NR_CPUS_MAX <= PBTRACE_MAX_CPUS_REMOTE);

/* "group/name,group/name": event names, not ids, cross the wire. */
static u32 ep_events(char *out, u64 events)
{
	const char *name;
	u32 n = 0, len;
	int ev;

	for (ev = 0; ev < PBT_NR_EVENTS; ev++) {
		if (!(events & BIT_ULL(ev)))
			continue;
		name = pbt_event_name(ev);
		len = strlen(name);
		if (n + !!n + len > FRAME_EVENTS_MAX)
			break;
		if (n)
			out[n++] = ',';
		memcpy(out + n, name, len);
		n += len;
	}
	return n;
}

static int ep_control(struct ep_conn *c, u32 op)
{
	const struct pbt_buffer_params *bp = &c->s->params.buffers[c->buf];
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_CONTROL;
	f.control.op = op;
	f.control.session = c->s->id;
	f.control.size_kb = max_t(u32, bp->size_kb / nr_cpu_ids, bp->chunk_kb);
	f.control.chunk_kb = bp->chunk_kb;
	if (op == FRAME_CTL_START) {
		f.control.events.p = c->events;
		f.control.events.len = ep_events(c->events, bp->events);
	}
	atomic_inc(&ep_stats.controls);
	return ep_send(c, &f);
}

/* One packet the host writes for this machine, encoded in c->scratch. */
static bool ep_queue(struct ep_conn *c, size_t len)
{
	if (len && pbt_remote_packet(c->s, c->buf, c->scratch, len))
		return true;
	atomic_inc(&ep_stats.packets_dropped);
	return false;
}

static void ep_str(struct frame_str *s, const char *p)
{
	s->p = p;
	s->len = strlen(p);
}

/* trace_processor's machine table row for this machine. */
static void ep_system_info(struct ep_conn *c)
{
	const struct ep_identity *id = &c->m->ident;
	struct frame_hello h;

	memset(&h, 0, sizeof(h));
	h.num_cpus = id->num_cpus;
	h.ram_bytes = id->ram_bytes;
	ep_str(&h.name, id->name);
	ep_str(&h.sysname, id->sysname);
	ep_str(&h.release, id->release);
	ep_str(&h.version, id->version);
	ep_str(&h.machine, id->machine);
	ep_queue(c, relay_system_info(c->scratch, EP_SCRATCH, c->m->id, 0, &h));
}

/* The first started session (lowest id) with a buffer naming @name. */
static struct pbt_session *ep_find(const char *name, u32 *buffer)
{
	struct pbt_session *s;
	u32 id = 0, i;

	while ((s = pbt_session_get_next(id))) {
		id = s->id;
		if (READ_ONCE(s->state) == PBTRACE_STATE_STARTED) {
			for (i = 0; i < s->params.nr_buffers; i++) {
				if (pbt_buffer_wants(&s->params.buffers[i], name)) {
					*buffer = i;
					return s;
				}
			}
		}
		pbt_session_put(s);
	}
	return NULL;
}

/*
 * The session's one remote_clock_sync, queued ahead of the machine's
 * first chunk. trace_processor turns every remote_clock_sync into an
 * offset step at its round, and a step back in time re-sorts the events
 * on either side of it (a CPU's sched_switch before its predecessor), so
 * there is one per session, as Perfetto's service writes; and a chunk
 * it reads before any gets an assumed offset of zero, so none precedes it.
 */
static bool ep_sync_written(struct ep_conn *c)
{
	u64 host[FRAME_NR_CLOCKS];
	s64 offset;

	if (c->synced)
		return true;
	if (!c->rounds)
		return false;
	offset = ep_sync_host(c, host);
	if (!ep_queue(c, relay_clock_sync(c->scratch, EP_SCRATCH, c->m->id, 0,
					  c->best[0], host, host, c->best[3])))
		return false;
	pr_info("pbtrace: endpoint: machine %u clock sync from %u rounds: offset %lld ns (guest - host), window %lld ns\n",
		c->m->id, c->rounds, offset,
		c->hi[FRAME_CLK_BOOTTIME] - c->lo[FRAME_CLK_BOOTTIME]);
	pbt_remote_synced(c->s, c->m->id);
	c->synced = true;
	return true;
}

void ep_forget_late(struct ep_conn *c)
{
	pbt_session_put(c->late);
	c->late = NULL;
}

static int ep_bind(struct ep_conn *c, struct pbt_session *s, u32 buffer)
{
	struct ep_machine *m = c->m;

	if (!c->scratch) {
		c->scratch = kvmalloc(EP_SCRATCH, GFP_KERNEL);
		c->next_seq = kvcalloc(max(m->ident.num_cpus, 1u),
				       sizeof(*c->next_seq), GFP_KERNEL);
		if (!c->scratch || !c->next_seq) {
			pbt_session_put(s);
			return -ENOMEM;
		}
	}
	memset(c->next_seq, 0, max(m->ident.num_cpus, 1u) * sizeof(*c->next_seq));
	ep_forget_late(c);
	c->s = s;
	c->buf = buffer;
	c->flush_gen = pbt_remote_flush_gen(s->remote);
	c->stop_sent = false;
	c->stopped_rcvd = false;
	c->rounds = 0;
	c->synced = false;
	if (pbt_remote_bind(s, buffer, m->id, m->ident.name, m->peer_str,
			    m->ident.num_cpus)) {
		c->s = NULL;
		pbt_session_put(s);
		return -ENOMEM;
	}
	pr_info("pbtrace: endpoint: machine %u \"%s\" records for session %u buffer %u\n",
		m->id, m->ident.name, s->id, buffer);
	ep_system_info(c);
	/* The round before the start is a candidate; the start burst follows. */
	if (c->have_round)
		ep_clock_round(c);
	return ep_control(c, FRAME_CTL_START);
}

/*
 * A guest released before its STOPPED came keeps the session as c->late,
 * so what it still sends is counted there (until it binds again).
 */
void ep_unbind(struct ep_conn *c, bool lost)
{
	if (!c->s)
		return;
	pbt_remote_unbind(c->s, c->buf, c->m->id, lost);
	ep_forget_late(c);
	if (!lost && !c->stopped_rcvd) {
		c->late = c->s;
		c->late_buf = c->buf;
		c->late_end = jiffies + EP_LATE_JIFFIES;
	} else {
		pbt_session_put(c->s);
	}
	c->s = NULL;
}

/*
 * Bring the guest in line with the sessions: pass on a flush, stop it
 * when its session stopped, and once it is done (STOPPED, or 2 s) start
 * it for the next session that wants it.
 */
int ep_sync(struct ep_conn *c)
{
	struct pbt_session *s = c->s;
	u32 gen, buffer;
	int ret;

	if (ep_machine_evicted(c)) {
		pr_info_ratelimited("pbtrace: endpoint: %s: the names table took its machine's name or key, closing\n",
				    c->who);
		return -ECONNABORTED;
	}
	if (!c->authed)			/* looks again once it is */
		return 0;
	c->gen = pbt_remote_changes();
	if (c->late && time_after(jiffies, c->late_end))
		ep_forget_late(c);
	if (s && READ_ONCE(s->state) == PBTRACE_STATE_STARTED) {
		gen = pbt_remote_flush_gen(s->remote);
		if (gen == c->flush_gen)
			return 0;
		c->flush_gen = gen;
		return ep_control(c, FRAME_CTL_FLUSH);
	}
	if (s) {
		if (!c->stop_sent) {
			c->stop_sent = true;
			c->stop_end = jiffies + EP_DONE_JIFFIES;
			ret = ep_control(c, FRAME_CTL_STOP);
			if (ret)
				return ret;
		}
		if (!c->stopped_rcvd && time_before(jiffies, c->stop_end))
			return 0;
		ep_unbind(c, false);
	}
	s = ep_find(c->m->ident.name, &buffer);
	return s ? ep_bind(c, s, buffer) : 0;
}

bool ep_sync_due(struct ep_conn *c)
{
	return c->gen != pbt_remote_changes() || (c->s && c->stop_sent) ||
	       (c->late && time_after(jiffies, c->late_end)) ||
	       ep_machine_evicted(c);
}

/*
 * A checked CHUNK: stamped into the session's queue. A jump in the
 * guest's per-CPU sequence is chunks its relay lost on the way.
 */
void ep_chunk(struct ep_conn *c, const struct frame_chunk *ch)
{
	u32 id = c->m->id, lost = 0;
	long n;

	atomic_inc(&ep_stats.chunks);
	if (!c->s) {
		atomic_inc(&ep_stats.chunks_unbound);
		if (c->late)
			pbt_remote_chunk(c->late, c->late_buf, id, NULL, -1, 0);
		return;
	}
	if ((s32)(ch->seq - c->next_seq[ch->cpu]) > 0)
		lost = ch->seq - c->next_seq[ch->cpu];
	c->next_seq[ch->cpu] = ch->seq + 1;
	/* With no round to place its events by, the chunk is dropped. */
	n = -1;
	if (ep_sync_written(c))
		n = chunk_stamp(ch->data, ch->len, id,
				PBTRACE_SEQ_ID_REMOTE_BASE +
				id * PBTRACE_MAX_CPUS_REMOTE + ch->cpu,
				c->scratch, EP_SCRATCH);
	pbt_remote_chunk(c->s, c->buf, id, c->scratch, n, lost);
}

void ep_stopped(struct ep_conn *c, const struct frame_stopped *st)
{
	atomic_inc(&ep_stats.stopped);
	if (c->late && st->session_id == c->late->id) {
		/* Too late for the reader, not for GET_SESSION. */
		pbt_remote_stopped(c->late, c->m->id, st->events_written,
				   st->events_lost);
		ep_forget_late(c);
		return;
	}
	if (!c->s || st->session_id != c->s->id)
		return;			/* a session we already gave up on */
	pbt_remote_stopped(c->s, c->m->id, st->events_written,
			   st->events_lost);
	c->stopped_rcvd = true;
}
