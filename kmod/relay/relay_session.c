// SPDX-License-Identifier: GPL-2.0
/*
 * The session the host asked for. CONTROL start makes the relay record a
 * local session (named "relay", marked PBTRACE_A_SESSION_RELAY so traced
 * leaves it alone): one buffer of the size the host asked for, with the
 * events this kernel knows by name. The relay thread then sends each
 * sealed chunk as a CHUNK frame, flushes about every second, and on
 * CONTROL stop sends what is left and a STOPPED frame with the session's
 * counters.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <net/sock.h>

#include "relay_conn.h"

/* "group/name,group/name" (charset checked by the parser) to event bits. */
static u64 relay_events(const struct frame_str *list)
{
	const char *p = list->p, *end = list->p + list->len, *comma;
	char name[EVENT_NAME_MAX];
	u64 events = 0;
	size_t n;
	int id;

	for (; p < end; p += n + 1) {
		comma = memchr(p, ',', end - p);
		n = (comma ? comma : end) - p;
		if (!n)
			continue;
		id = -ENOENT;
		if (n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			id = pbt_event_lookup(name);
		}
		if (id >= 0 && pbt_event_available(id)) {
			events |= BIT_ULL(id);
			continue;
		}
		rst.events_skipped++;
		pr_info_ratelimited("pbtrace: relay: host asked for event '%.*s', which this kernel cannot trace: skipped\n",
				    (int)min_t(size_t, n, EVENT_NAME_MAX), p);
	}
	return events;
}

/*
 * One buffer as the host asked: its per-CPU size (at least two chunks,
 * at most a sixteenth of our RAM in all) and chunk size.
 */
static int relay_params(const struct frame_control *ctl,
			struct pbt_session_params *p)
{
	struct pbt_buffer_params *bp = &p->buffers[0];
	u32 chunk_kb = ctl->chunk_kb ? ctl->chunk_kb : 16;
	u64 ram_kb = ((u64)totalram_pages() << PAGE_SHIFT) / 1024;
	u64 per_cpu_kb = max_t(u64, ctl->size_kb, 2 * chunk_kb);
	u64 max_kb = min_t(u64, ram_kb / 16, 1024 * 1024);

	if (chunk_kb < 4 || chunk_kb > 256 || !is_power_of_2(chunk_kb)) {
		pr_info("pbtrace: relay: host asked for %u KiB chunks: want 4..256, a power of two\n",
			ctl->chunk_kb);
		return -EINVAL;
	}
	per_cpu_kb = min_t(u64, per_cpu_kb, max_kb / num_possible_cpus());
	per_cpu_kb = max_t(u64, per_cpu_kb, 2 * chunk_kb);
	strscpy(p->name, "relay", sizeof(p->name));
	p->relay = true;
	p->nr_buffers = 1;
	bp->size_kb = per_cpu_kb * num_possible_cpus();
	bp->chunk_kb = chunk_kb;
	bp->fill_policy = PBTRACE_FILL_RING_BUFFER;
	bp->events = relay_events(&ctl->events);
	return 0;
}

/* Stop and destroy the local session, if any, without a word to the host. */
void relay_end(struct relay_conn *c)
{
	struct relay_sess *rs = &c->sess;

	if (!rs->s)
		return;
	pbt_session_destroy(rs->id, NULL);	/* -ENOENT if a user destroyed it */
	pbt_session_put(rs->s);
	kfree(rs->cpu_seq);
	memset(rs, 0, sizeof(*rs));
	rst.session = 0;
	rst.local_session = 0;
	if (c->sock)
		c->sock->sk->sk_rcvtimeo = relay_idle_timeo(c);
}

static int relay_new_session(struct relay_conn *c,
			     const struct frame_control *ctl)
{
	struct relay_sess *rs = &c->sess;
	struct pbt_session_params *p;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	ret = relay_params(ctl, p);
	if (!ret)
		ret = pbt_session_new(p, &rs->id, NULL);
	kfree(p);
	if (ret)
		return ret;
	rs->s = pbt_session_get(rs->id);
	rs->cpu_seq = kcalloc(nr_cpu_ids, sizeof(*rs->cpu_seq), GFP_KERNEL);
	if (!rs->s || !rs->cpu_seq) {
		ret = -ENOMEM;
		goto err;
	}
	rs->b = rs->s->buffers[0];
	rs->host_id = ctl->session;
	ret = pbt_session_start(rs->id, NULL);
	if (ret)
		goto err;
	return 0;

err:
	pbt_session_destroy(rs->id, NULL);
	pbt_session_put(rs->s);
	kfree(rs->cpu_seq);
	memset(rs, 0, sizeof(*rs));
	return ret;
}

/* One sealed chunk as a CHUNK frame, its bytes sent from where they lie. */
static int relay_send_chunk(struct relay_conn *c,
			    const struct pbtrace_chunk_req *req, void *data)
{
	struct relay_sess *rs = &c->sess;
	u8 hdr[FRAME_HDR_LEN + FRAME_CHUNK_HDR], tag[FRAME_TAG_LEN];
	__le32 v[2] = { cpu_to_le32(req->cpu),
			cpu_to_le32(rs->cpu_seq[req->cpu]) };
	struct kvec vec[3] = {
		{ hdr, sizeof(hdr) },
		{ data, req->len },
		{ tag, sizeof(tag) },
	};
	size_t nr = 2;
	u64 t0;
	int ret;

	frame_encode_header(hdr, FRAME_CHUNK, FRAME_CHUNK_HDR + req->len,
			    c->tx_seq);
	memcpy(hdr + FRAME_HDR_LEN, v, sizeof(v));
	if (c->tags.tx) {
		t0 = ktime_get_ns();
		frame_set_tagged(hdr);
		ret = pbt_tag(c->tags.tx, vec, 2, tag);
		if (ret)
			return ret;
		rst.tag_ns += ktime_get_ns() - t0;
		nr = 3;
	}
	ret = relay_sendv(c, vec, nr, sizeof(hdr) + req->len +
			  (nr == 3 ? sizeof(tag) : 0));
	if (ret)
		return ret;
	c->tx_seq++;
	rs->cpu_seq[req->cpu]++;
	rs->chunks++;
	rst.chunks_sent++;
	rst.bytes_sent += req->len;
	return 0;
}

/* Send up to @budget sealed chunks. Returns how many, or -errno. */
static int relay_drain(struct relay_conn *c, int budget)
{
	struct relay_sess *rs = &c->sess;
	struct pbtrace_chunk_req req;
	size_t vsize;
	u8 *vmem = pbt_buffer_vmem(rs->b, &vsize);
	int n = 0, ret;

	while (n < budget && !pbt_buffer_get_chunk(rs->b, &req)) {
		/* A CHUNK carries at least one record; never more than 256 KiB. */
		if (req.len < 2 || req.len > FRAME_CHUNK_MAX ||
		    req.offset + req.len > vsize) {
			pbt_buffer_put_chunk(rs->b, req.index);
			continue;
		}
		ret = relay_send_chunk(c, &req, vmem + req.offset);
		if (ret) {
			pbt_buffer_unget_chunk(rs->b, req.index);
			return ret;
		}
		pbt_buffer_put_chunk(rs->b, req.index);
		n++;
		cond_resched();		/* a busy guest must not starve others */
	}
	return n;
}

/* The guest's own counters over every CPU, for STOPPED. */
static void relay_counters(struct pbt_buffer *b, struct frame_stopped *st)
{
	struct pbtrace_cpu_stats cs;
	int cpu;

	for_each_possible_cpu(cpu) {
		pbt_buffer_stats(b, cpu, &cs);
		st->events_written += cs.events_written;
		st->events_lost += cs.lost_full + cs.lost_overwritten +
				   cs.lost_too_large + cs.lost_nmi;
	}
}

/*
 * CONTROL stop: stop (which seals every chunk), send every chunk, then
 * STOPPED, so the host knows nothing more comes for this session.
 */
static int relay_finish(struct relay_conn *c)
{
	struct relay_sess *rs = &c->sess;
	struct frame f;
	int ret;

	pbt_session_stop(rs->id);	/* -EALREADY if a user stopped it */
	do {
		ret = relay_drain(c, DRAIN_BUDGET);
	} while (ret > 0);
	if (ret < 0)
		return ret;
	memset(&f, 0, sizeof(f));
	f.type = FRAME_STOPPED;
	f.stopped.session_id = rs->host_id;
	relay_counters(rs->b, &f.stopped);
	pr_info("pbtrace: relay: host session %u done: %llu events written, %llu lost, %llu chunks sent\n",
		rs->host_id, f.stopped.events_written, f.stopped.events_lost,
		rs->chunks);
	relay_end(c);
	ret = relay_send(c, &f);
	if (!ret)
		rst.stopped_sent++;
	return ret;
}

static int relay_start(struct relay_conn *c, const struct frame_control *ctl)
{
	int ret;

	if (c->sess.s) {
		if (c->sess.host_id == ctl->session)
			return 0;		/* told twice */
		ret = relay_finish(c);		/* the host moved on */
		if (ret)
			return ret;
	}
	ret = relay_new_session(c, ctl);
	if (ret) {
		/* Our problem, not the link's: the host sees no chunks. */
		rst.start_failed++;
		c->failed_id = ctl->session;
		pr_info("pbtrace: relay: cannot record session %u for the host: %d\n",
			ctl->session, ret);
		return 0;
	}
	c->sess.next_flush = jiffies + FLUSH_PERIOD;
	c->sock->sk->sk_rcvtimeo = RX_BUSY_TIMEO;
	rst.sessions++;
	rst.session = ctl->session;
	rst.local_session = c->sess.id;
	pr_info("pbtrace: relay: recording host session %u as local session %u\n",
		ctl->session, c->sess.id);
	return 0;
}

static int relay_stop(struct relay_conn *c, const struct frame_control *ctl)
{
	struct frame f;

	if (c->sess.s && c->sess.host_id == ctl->session)
		return relay_finish(c);
	if (c->failed_id != ctl->session || !ctl->session)
		return 0;		/* not ours, or already done */
	/* Nothing recorded, but the host need not wait for us. */
	c->failed_id = 0;
	memset(&f, 0, sizeof(f));
	f.type = FRAME_STOPPED;
	f.stopped.session_id = ctl->session;
	return relay_send(c, &f);
}

int relay_control(struct relay_conn *c, const struct frame_control *ctl)
{
	rst.controls++;
	switch (ctl->op) {
	case FRAME_CTL_START:
		c->burst = PING_BURST;
		if (!c->ps.ping_out)
			c->next_ping = jiffies;
		return relay_start(c, ctl);
	case FRAME_CTL_STOP:
		return relay_stop(c, ctl);
	case FRAME_CTL_FLUSH:
		if (c->sess.s && c->sess.host_id == ctl->session) {
			pbt_session_flush(c->sess.id);
			c->sess.next_flush = jiffies + FLUSH_PERIOD;
		}
		return 0;
	}
	return -EPROTO;
}

/*
 * Seal what the probes wrote about every second, then send what is sealed.
 * Not during the start burst: the host writes the session's clock sync
 * ahead of its first chunk, from the rounds it has by then. The PING
 * reporting the burst's last round goes before this (relay_run()).
 */
int relay_stream(struct relay_conn *c)
{
	if (!c->sess.s || c->burst)
		return 0;
	if (time_after_eq(jiffies, c->sess.next_flush)) {
		pbt_session_flush(c->sess.id);
		c->sess.next_flush = jiffies + FLUSH_PERIOD;
	}
	return relay_drain(c, DRAIN_BUDGET);
}
