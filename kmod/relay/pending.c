// SPDX-License-Identifier: GPL-2.0
/*
 * The pending pools: connections that have not proved who they are yet
 * (over vsock, a HELLO from an allowed CID; on TCP, the key in AUTH).
 *
 * Each listener has a pool of its own, endpoint_pending connections, so a
 * TCP crowd cannot take vsock's room. In a pool a peer holds at most a
 * quarter (its share), and all of loopback (127/8) is one peer: a local
 * user with 64 addresses is still one. A full pool, or a full share, never
 * refuses the new connection: it closes the oldest pending one, the
 * peer's own when its share is what is full (OpenSSH's MaxStartups, with
 * the oldest instead of a random one). So strangers that reconnect as
 * soon as they are closed only churn one another, and a relay's new
 * connection lives until a share of newer ones from its peer (a pool's
 * worth from all) came after it. One that has been welcomed (its HELLO
 * answered, waiting for AUTH) goes after every one that has not.
 *
 * A connection that proved itself leaves its pool for the admitted set
 * (at most endpoint_max_conns), from which no stranger ever takes a place.
 * It is a count, not a table: a connection's memory (its 256 KiB receive
 * buffer above all) is allocated when it connects and freed when it ends.
 * Everything is under ep_lock; the pools belong to admit.c's listeners.
 */
#include <linux/module.h>
#include <linux/in.h>

#include "endpoint.h"

unsigned int endpoint_pending = EP_PENDING;
module_param(endpoint_pending, uint, 0444);
MODULE_PARM_DESC(endpoint_pending, "connections in their handshake each listener holds, 4..4096 (default 64; a peer, all of loopback being one, holds a quarter)");

static unsigned int endpoint_max_conns = EP_MAX_CONNS;
module_param(endpoint_max_conns, uint, 0444);
MODULE_PARM_DESC(endpoint_max_conns, "connections that proved themselves the endpoint holds, vsock and TCP together, 1..65536 (default 1024)");

struct ep_pool ep_pools[EP_LISTENERS] = {	/* [0] vsock, [1] TCP */
	{ .conns = LIST_HEAD_INIT(ep_pools[0].conns) },
	{ .conns = LIST_HEAD_INIT(ep_pools[1].conns) },
};
static unsigned int ep_nr_admitted;

/* Who competes with whom for a share: loopback is one peer. */
static u64 ep_pending_peer(const struct ep_conn *c)
{
	if (!c->tcp)
		return EP_PEER_CID(c->cid);
	if ((c->addr >> 24) == 127)
		return EP_PEER_ADDR(INADDR_LOOPBACK);
	return EP_PEER_ADDR(c->addr);
}

static unsigned int ep_share(void)
{
	return max(endpoint_pending / 4, 1U);
}

/*
 * The one to close for a newer connection: the oldest that was not
 * welcomed yet, else the oldest; of @peer's only, unless @peer is 0.
 */
static struct ep_conn *ep_victim(struct ep_pool *p, u64 peer)
{
	struct ep_conn *o, *oldest = NULL;

	list_for_each_entry(o, &p->conns, pending) {
		if (peer && o->pending_peer != peer)
			continue;
		if (!READ_ONCE(o->welcomed))
			return o;
		if (!oldest)
			oldest = o;
	}
	return oldest;
}

/*
 * @c joins its listener's pool. Returns the connection it displaces,
 * which the caller shuts down: it is off every count already, and only
 * its own listener's thread reaps it (admit.c), so it stays valid.
 */
struct ep_conn *ep_pending_add(struct ep_conn *c)
{
	struct ep_pool *p = &ep_pools[c->tcp];
	struct ep_conn *o, *tmp, *v = NULL;
	unsigned int same = 0;

	c->pending_peer = ep_pending_peer(c);
	mutex_lock(&ep_lock);
	list_for_each_entry_safe(o, tmp, &p->conns, pending) {
		if (o->done)		/* ended, not reaped yet: room already */
			ep_pending_forget(o);
		else
			same += o->pending_peer == c->pending_peer;
	}
	if (same >= ep_share()) {
		v = ep_victim(p, c->pending_peer);
		atomic_inc(&p->peer_limit);
	} else if (p->nr >= endpoint_pending) {
		v = ep_victim(p, 0);
		atomic_inc(&p->full);
	}
	if (v) {
		list_del_init(&v->pending);
		p->nr--;
		v->state = EP_CONN_EVICTED;
	}
	list_add_tail(&c->pending, &p->conns);
	p->nr++;
	c->state = EP_CONN_PENDING;
	mutex_unlock(&ep_lock);
	return v;
}

/*
 * @c proved itself: into the admitted set, unless a newer connection
 * displaced it first (-ECONNRESET) or every admitted place is taken
 * (-ENOSPC: those are guests that proved themselves, none is closed).
 */
int ep_pending_admit(struct ep_conn *c)
{
	int ret = 0;

	mutex_lock(&ep_lock);
	if (c->state != EP_CONN_PENDING) {
		ret = -ECONNRESET;
	} else if (ep_nr_admitted >= endpoint_max_conns) {
		atomic_inc(&ep_stats.conns_full);
		ret = -ENOSPC;
	} else {
		list_del_init(&c->pending);
		ep_pools[c->tcp].nr--;
		c->state = EP_CONN_ADMITTED;
		ep_nr_admitted++;
		atomic_inc(&ep_stats.admitted);
	}
	mutex_unlock(&ep_lock);
	if (ret == -ENOSPC)
		pr_info_ratelimited("pbtrace: endpoint: %s proved itself, but all %u admitted connections are taken (endpoint_max_conns), closing\n",
				    c->who, endpoint_max_conns);
	return ret;
}

/* A connection that ended leaves whichever count holds it; under ep_lock. */
void ep_pending_forget(struct ep_conn *c)
{
	if (c->state == EP_CONN_PENDING) {
		list_del_init(&c->pending);
		ep_pools[c->tcp].nr--;
	} else if (c->state == EP_CONN_ADMITTED) {
		ep_nr_admitted--;
	}
	c->state = EP_CONN_GONE;
}

int ep_pending_init(void)
{
	if (endpoint_pending < 4 || endpoint_pending > 4096) {
		pr_err("pbtrace: endpoint_pending=%u: want 4..4096 connections in their handshake per listener\n",
		       endpoint_pending);
		return -EINVAL;
	}
	if (endpoint_max_conns < 1 || endpoint_max_conns > 65536) {
		pr_err("pbtrace: endpoint_max_conns=%u: want 1..65536 connections\n",
		       endpoint_max_conns);
		return -EINVAL;
	}
	return 0;
}

/* endpoint_stats' lines of the pools and the admitted set. */
int ep_pending_stats(char *buf, int n)
{
	static const char * const kind[EP_LISTENERS] = { "vsock", "tcp" };
	unsigned int nr[EP_LISTENERS], admitted;
	int i;

	mutex_lock(&ep_lock);
	for (i = 0; i < EP_LISTENERS; i++)
		nr[i] = ep_pools[i].nr;
	admitted = ep_nr_admitted;
	mutex_unlock(&ep_lock);
	n += sysfs_emit_at(buf, n, "conns %u\nadmitted %d\nconns_full %d\n",
			   admitted, atomic_read(&ep_stats.admitted),
			   atomic_read(&ep_stats.conns_full));
	for (i = 0; i < EP_LISTENERS; i++)
		n += sysfs_emit_at(buf, n, "%s_pending %u\n%s_pending_full %d\n%s_peer_limit %d\n",
				   kind[i], nr[i], kind[i],
				   atomic_read(&ep_pools[i].full), kind[i],
				   atomic_read(&ep_pools[i].peer_limit));
	return n;
}
