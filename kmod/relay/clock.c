// SPDX-License-Identifier: GPL-2.0
/*
 * PING and PONG: each round gives the host's and the guest's clocks at
 * four instants, and so a window the offset between them must lie in.
 * bind.c writes the session's one remote_clock_sync from it.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "endpoint.h"

/* RTT and offset (host - guest BOOTTIME) of a round t1, t2, t3, t4. */
void ep_round_measure(const u64 r[][FRAME_NR_CLOCKS], u64 *rtt,
			     s64 *offset)
{
	const int bt = FRAME_CLK_BOOTTIME;
	s64 t1 = r[0][bt], t2 = r[1][bt], t3 = r[2][bt], t4 = r[3][bt];

	*rtt = (t4 - t1) - (t3 - t2);
	*offset = ((t2 - t1) + (t3 - t4)) / 2;
}

/*
 * Each round bounds the offset for certain: the PING left the guest
 * before the host got it and the PONG arrived after the host sent it, so
 * t1 - t2 < guest - host < t4 - t3. Narrow the rounds' common window.
 */
static void ep_window(struct ep_conn *c, bool first)
{
	s64 lo, hi;
	int i;

	for (i = 0; i < FRAME_NR_CLOCKS; i++) {
		lo = c->round[0][i] - c->round[1][i];
		hi = c->round[3][i] - c->round[2][i];
		if (first || lo > c->lo[i])
			c->lo[i] = lo;
		if (first || hi < c->hi[i])
			c->hi[i] = hi;
	}
}

/*
 * A complete round while bound: counted and, while the session's
 * remote_clock_sync is still to be written, taken into the window and
 * kept if it is the fastest yet.
 */
void ep_clock_round(struct ep_conn *c)
{
	s64 offset;
	u64 rtt;

	ep_round_measure(c->round, &rtt, &offset);
	pbt_remote_ping(c->s, c->m->id, rtt, offset);
	if (c->synced)
		return;
	ep_window(c, !c->rounds);
	c->rounds++;
	if (c->rounds > 1 && rtt >= c->best_rtt)
		return;
	memcpy(c->best, c->round, sizeof(c->best));
	c->best_rtt = rtt;
}

/*
 * The host stamps for the fastest round's guest t1 and t4 that put the
 * offset (guest - host, trace_processor's sign) at the middle of the
 * window: trace_processor then computes exactly that. The window is tighter than any one round (their NTP
 * midpoints are off by their delays' asymmetry); should clock steps have
 * emptied it, the round's own midpoint. Returns BOOTTIME's.
 */
s64 ep_sync_host(const struct ep_conn *c, u64 *host)
{
	const u64 (*r)[FRAME_NR_CLOCKS] = c->best;
	s64 offset, boottime = 0;
	int i;

	for (i = 0; i < FRAME_NR_CLOCKS; i++) {
		if (c->lo[i] <= c->hi[i])
			offset = c->lo[i] + (c->hi[i] - c->lo[i]) / 2;
		else
			offset = ((s64)(r[0][i] - r[1][i]) +
				  (s64)(r[3][i] - r[2][i])) / 2;
		host[i] = r[0][i] + (r[3][i] - r[0][i]) / 2 - offset;
		if (i == FRAME_CLK_BOOTTIME)
			boottime = offset;
	}
	return boottime;
}

/*
 * Answer a PING. If it reports when our last PONG arrived (t4), that round
 * is complete: t1 guest send, t2 our receive, t3 our reply, t4 guest
 * receive, each on its own BOOTTIME.
 */
int ep_ping(struct ep_conn *c, const struct frame_ping *p,
		   const u64 *recv)
{
	struct ep_machine *m = c->m;
	struct frame f;
	s64 offset;
	u64 rtt;

	atomic_inc(&ep_stats.pings);
	if (p->prev_id) {
		memcpy(c->round[0], c->ping_send, sizeof(c->round[0]));
		memcpy(c->round[1], c->pong_recv, sizeof(c->round[1]));
		memcpy(c->round[2], c->pong_reply, sizeof(c->round[2]));
		memcpy(c->round[3], p->prev_recv, sizeof(c->round[3]));
		c->have_round = true;
		ep_round_measure(c->round, &rtt, &offset);
		mutex_lock(&ep_lock);
		m->rtt_ns = rtt;
		m->offset_ns = offset;
		mutex_unlock(&ep_lock);
		if (c->s)
			ep_clock_round(c);
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_PONG;
	f.pong.id = p->id;
	memcpy(f.pong.recv, recv, sizeof(f.pong.recv));
	pbt_clocks(f.pong.reply);
	memcpy(c->ping_send, p->send, sizeof(c->ping_send));
	memcpy(c->pong_recv, f.pong.recv, sizeof(c->pong_recv));
	memcpy(c->pong_reply, f.pong.reply, sizeof(c->pong_reply));
	c->have_ping = true;
	mutex_lock(&ep_lock);
	m->pings++;
	mutex_unlock(&ep_lock);
	return ep_send(c, &f);
}
