// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint's machine table. Each guest gets a small non-zero machine
 * id, the lowest free one. A machine belongs to its peer (a vsock CID, a
 * TCP relay's own key, else its address): the same peer with the same
 * hint (a reconnect) or the same name (a reboot) gets its id back, another
 * peer never does. The table grows a machine at a time, as peers come, up
 * to endpoint_max_machines; a peer holds at most EP_PEER_MACHINES of them
 * (then it reuses its own offline longest), and a full table reuses the
 * machine offline longest that no live session holds. A machine offline
 * for endpoint_forget_secs that no live session holds is freed: its id
 * may go to another.
 *
 * Names: the names table (names.c) pins a CID's name, and a keyed relay's.
 * Any other guest is the name its HELLO says, unless a machine of another
 * peer is online under that name: then it is NAME@PEER ("web1@cid5"), so
 * that a session asking for "web1" never records a stranger. A machine
 * keeps such a name across its reconnects. Two boots of one peer may be
 * online under one name for a moment: the new boot's while the old boot's
 * connection times out.
 */
#include <linux/module.h>
#include <linux/string.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/jhash.h>

#include "endpoint.h"

static unsigned int endpoint_max_machines = EP_MAX_MACHINES;
static unsigned int endpoint_forget_secs = EP_FORGET_SECS;

static int ep_set_max(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, PBTRACE_MAX_MACHINE_ID);
}

static const struct kernel_param_ops ep_max_ops = {
	.set = ep_set_max,
	.get = param_get_uint,
};

module_param_cb(endpoint_max_machines, &ep_max_ops, &endpoint_max_machines,
		0644);
MODULE_PARM_DESC(endpoint_max_machines, "machines the endpoint's table holds, online and offline, 1..520191 (default 8192)");
/*
 * Under ep_lock: the machines by id, by peer, the online ones by name
 * (every HELLO asks who has its name); the offline, oldest first.
 */
static DEFINE_XARRAY_ALLOC1(ep_ids);
static DEFINE_HASHTABLE(ep_peers, 10);
static DEFINE_HASHTABLE(ep_online_names, 10);
static LIST_HEAD(ep_offline);
static u32 ep_nr_machines, ep_nr_online;

static void ep_forget_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(ep_forget_work, ep_forget_fn);
static bool ep_forget_stopped;		/* exit: the work is not queued again */

/* A new value applies now, not after the period the old one set. */
static int ep_set_forget(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);

	mutex_lock(&ep_lock);
	if (!ret && !ep_forget_stopped && delayed_work_pending(&ep_forget_work))
		mod_delayed_work(system_wq, &ep_forget_work, 0);
	mutex_unlock(&ep_lock);
	return ret;
}

static const struct kernel_param_ops ep_forget_ops = {
	.set = ep_set_forget,
	.get = param_get_uint,
};

module_param_cb(endpoint_forget_secs, &ep_forget_ops, &endpoint_forget_secs,
		0644);
MODULE_PARM_DESC(endpoint_forget_secs, "an offline machine no live session holds is freed after this many seconds (default 3600)");

void ep_copy_str(char *dst, const struct frame_str *s)
{
	memcpy(dst, s->p, s->len);	/* len <= FRAME_STR_MAX: parser */
	dst[s->len] = 0;
}

static u32 ep_name_hash(const char *name)
{
	return jhash(name, strlen(name), 0);
}

/* @m goes online under ident.name, or off (or is retired). */
static void ep_name_online(struct ep_machine *m, bool on)
{
	if (on)
		hash_add(ep_online_names, &m->by_name,
			 ep_name_hash(m->ident.name));
	else if (!hlist_unhashed(&m->by_name))
		hash_del(&m->by_name);
}

static bool ep_is_key_peer(u64 peer)
{
	return EP_PEER_KIND(peer) == EP_PEER_KIND(EP_PEER_KEY(0));
}

/* The name a reboot of the same peer finds its machine by. */
static const char *ep_boot_name(const struct ep_machine *m)
{
	return m->flags & PBTRACE_EPM_PINNED ? m->ident.name : m->claimed;
}

/*
 * The peer's machine for @hint (a reconnect), else for its name (a
 * reboot: a new hint); NULL if neither. @nr: the machines the peer holds.
 * A reboot does not take back a machine a live session holds: the new
 * boot's BOOTTIME starts again from zero, and trace_processor keeps one
 * clock per machine id, so in that session it must be a machine of its
 * own (its events would go back in time on the old one's clock).
 */
static struct ep_machine *ep_machine_find(const struct ep_conn *c,
					  const u8 *hint, int *nr)
{
	const char *name = c->pinned ? c->id.name : c->claimed;
	struct ep_machine *m, *by_name = NULL;

	*nr = 0;
	hash_for_each_possible(ep_peers, m, by_peer, c->peer) {
		if (m->peer != c->peer)
			continue;
		if (!memcmp(m->hint, hint, FRAME_HINT_LEN))
			return m;
		if (!by_name && !strcmp(ep_boot_name(m), name) &&
		    !pbt_remote_held(m->id))
			by_name = m;
		(*nr)++;
	}
	return by_name;
}

/* The machine offline longest that no live session holds; @peer's if set. */
static struct ep_machine *ep_oldest_offline(u64 peer)
{
	struct ep_machine *m, *best = NULL;

	if (!peer) {
		list_for_each_entry(m, &ep_offline, offline)
			if (!pbt_remote_held(m->id))
				return m;
		return NULL;
	}
	hash_for_each_possible(ep_peers, m, by_peer, peer)
		if (m->peer == peer && !m->online &&
		    (!best || m->last_seen < best->last_seen) &&
		    !pbt_remote_held(m->id))
			best = m;
	return best;
}

static struct ep_machine *ep_machine_new(void)
{
	struct ep_machine *m = kzalloc(sizeof(*m), GFP_KERNEL);
	u32 id;

	if (!m)
		return NULL;
	if (xa_alloc(&ep_ids, &id, m, XA_LIMIT(1, PBTRACE_MAX_MACHINE_ID),
		     GFP_KERNEL)) {
		kfree(m);
		return NULL;
	}
	m->id = id;
	INIT_LIST_HEAD(&m->offline);
	ep_nr_machines++;
	return m;
}

static void ep_machine_free(struct ep_machine *m)
{
	xa_erase(&ep_ids, m->id);
	ep_name_online(m, false);
	if (!hlist_unhashed(&m->by_peer))
		hash_del(&m->by_peer);
	list_del(&m->offline);
	ep_nr_machines--;
	kfree(m);
}

/*
 * A machine for a peer that has none to come back to: a new one, or the
 * oldest reusable (its own, at EP_PEER_MACHINES). NULL: none; *@full says
 * whose bound it hit.
 */
static struct ep_machine *ep_machine_slot(const struct ep_conn *c, int nr,
					  atomic_t **full)
{
	struct ep_machine *m;
	u32 id;

	if (nr >= EP_PEER_MACHINES) {
		*full = &ep_stats.peer_full;
		m = ep_oldest_offline(c->peer);
	} else if (ep_nr_machines < READ_ONCE(endpoint_max_machines)) {
		*full = &ep_stats.table_full;
		m = ep_machine_new();
	} else {
		*full = &ep_stats.table_full;
		m = ep_oldest_offline(0);
	}
	if (!m)
		return NULL;
	/* Whoever had it is forgotten: it starts anew, with its id. */
	id = m->id;
	if (!hlist_unhashed(&m->by_peer))
		hash_del(&m->by_peer);
	list_del(&m->offline);
	memset(m, 0, sizeof(*m));
	m->id = id;
	INIT_LIST_HEAD(&m->offline);
	m->peer = c->peer;
	hash_add(ep_peers, &m->by_peer, m->peer);
	return m;
}

/*
 * Is @name another peer's online machine's? Retired machines are not:
 * their connections are on their way out (and out of the hash).
 */
static bool ep_name_taken(const char *name, u64 peer)
{
	struct ep_machine *m;

	hash_for_each_possible(ep_online_names, m, by_name, ep_name_hash(name))
		if (m->peer != peer && !strcmp(m->ident.name, name))
			return true;
	return false;
}

/* "@cid5", "@10.0.2.2": what a second claimant's name is after. */
static void ep_peer_suffix(const struct ep_conn *c, char *buf, size_t n)
{
	__be32 ip = htonl(c->addr);

	if (c->tcp)
		snprintf(buf, n, "@%pI4", &ip);
	else
		snprintf(buf, n, "@cid%u", c->cid);
}

/*
 * The name @c's machine gets (into c->id.name): the names table's, else
 * the one its machine @m already has, else its HELLO's, else, when an
 * online machine of another peer has that, NAME@PEER. -EADDRINUSE: that
 * is taken too (a claimant who took it first).
 */
static int ep_pick_name(struct ep_conn *c, const struct ep_machine *m,
			bool *renamed)
{
	char suffix[24], alt[PBTRACE_NAME_MAX];
	size_t keep;

	*renamed = false;
	if (c->pinned)
		return 0;
	if (m && !(m->flags & PBTRACE_EPM_PINNED) &&
	    !strcmp(m->claimed, c->claimed) &&
	    !ep_name_taken(m->ident.name, c->peer)) {
		strscpy(c->id.name, m->ident.name, sizeof(c->id.name));
		*renamed = m->flags & PBTRACE_EPM_RENAMED;
		return 0;
	}
	strscpy(c->id.name, c->claimed, sizeof(c->id.name));
	if (!ep_name_taken(c->id.name, c->peer))
		return 0;
	ep_peer_suffix(c, suffix, sizeof(suffix));
	keep = min(strlen(c->claimed), sizeof(alt) - 1 - strlen(suffix));
	snprintf(alt, sizeof(alt), "%.*s%s", (int)keep, c->claimed, suffix);
	if (ep_name_taken(alt, c->peer))
		return -EADDRINUSE;
	strscpy(c->id.name, alt, sizeof(c->id.name));
	*renamed = true;
	return 0;
}

/*
 * The id @c would get now: WELCOME's on TCP, before AUTH (informational:
 * the machine is only taken at AUTH). Its own, else a guess, not a search:
 * anyone may send a HELLO.
 */
u32 ep_machine_peek(struct ep_conn *c)
{
	struct ep_machine *m;
	u32 id;
	int nr;

	mutex_lock(&ep_lock);
	m = ep_machine_find(c, c->hint, &nr);
	id = m ? m->id : min(ep_nr_machines + 1, (u32)PBTRACE_MAX_MACHINE_ID);
	mutex_unlock(&ep_lock);
	return id;
}

static void ep_refused(const struct ep_conn *c, int ret, atomic_t *full)
{
	const char *why;

	switch (ret) {
	case -EBUSY:
		atomic_inc(&ep_stats.duplicate);
		why = "is online already";
		break;
	case -EADDRINUSE:
		atomic_inc(&ep_stats.identity_refused);
		why = "is another peer's, and so is the name it would get here";
		break;
	case -ESTALE:
		atomic_inc(&ep_stats.identity_refused);
		why = "had its name or key changed by the names table during its handshake";
		break;
	case -ENOSPC:
		atomic_inc(full);
		why = full == &ep_stats.peer_full ?
		      "would be one too many for this peer" :
		      "has no slot: every one is online or in a session (endpoint_max_machines)";
		break;
	default:
		why = "could not be given a machine (out of memory)";
		break;
	}
	pr_info_ratelimited("pbtrace: endpoint: %s: machine \"%s\" %s, closing\n",
			    c->who, c->claimed, why);
}

/*
 * Take the machine for @c's hint: its own, or a new one. A machine online
 * already is refused, and so is a relay whose identity the names table
 * changed since HELLO (it reconnects under the new one).
 */
int ep_machine_reserve(struct ep_conn *c, const u8 *hint)
{
	atomic_t *full = NULL;
	struct ep_machine *m;
	bool renamed = false;
	int nr = 0, ret;

	mutex_lock(&ep_lock);
	ret = c->names_gen == ep_names_gen ? 0 : -ESTALE;
	m = ret ? NULL : ep_machine_find(c, hint, &nr);
	if (m && m->online)
		ret = -EBUSY;
	if (!ret)
		ret = ep_pick_name(c, m, &renamed);
	if (!ret && !m) {
		m = ep_machine_slot(c, nr, &full);
		if (!m)
			ret = full == &ep_stats.table_full &&
			      ep_nr_machines < READ_ONCE(endpoint_max_machines) ?
			      -ENOMEM : -ENOSPC;
	}
	if (!ret) {
		memcpy(m->hint, hint, FRAME_HINT_LEN);
		m->online = true;
		m->tcp = c->tcp;
		m->evict = false;
		m->flags = (c->pinned ? PBTRACE_EPM_PINNED : 0) |
			   (renamed ? PBTRACE_EPM_RENAMED : 0) |
			   (c->tcp ? PBTRACE_EPM_TCP : 0);
		strscpy(m->peer_str, c->peer_str, sizeof(m->peer_str));
		strscpy(m->claimed, c->claimed, sizeof(m->claimed));
		m->ident = c->id;
		m->cid = c->cid;
		list_del_init(&m->offline);
		ep_name_online(m, true);
		ep_nr_online++;
		c->m = m;
	}
	mutex_unlock(&ep_lock);
	if (ret)
		ep_refused(c, ret, full);
	return ret;
}

/* The relay is who it says: its machine is online. */
void ep_machine_commit(struct ep_conn *c)
{
	struct ep_machine *m = c->m;

	mutex_lock(&ep_lock);
	m->connects++;
	mutex_unlock(&ep_lock);
	pbt_remote_online(m->id, true);
	c->authed = true;
	atomic_inc(&ep_stats.hellos);
	if (m->flags & PBTRACE_EPM_RENAMED) {
		atomic_inc(&ep_stats.renamed);
		pr_info("pbtrace: endpoint: %s calls itself \"%s\", which another peer's machine has: named \"%s\"\n",
			c->who, m->claimed, m->ident.name);
	}
	pr_info("pbtrace: endpoint: %s is machine %u \"%s\" (%s %s %s, %u cpus, %llu MiB)\n",
		c->who, m->id, m->ident.name, m->ident.sysname,
		m->ident.release, m->ident.machine, m->ident.num_cpus,
		m->ident.ram_bytes >> 20);
}

static unsigned long ep_forget_period(void)
{
	return clamp(READ_ONCE(endpoint_forget_secs), 1u, 60u) * HZ;
}

/*
 * Connection over: the machine is offline, its slot stays its own until
 * it is forgotten. Its key goes too.
 */
void ep_machine_release(struct ep_conn *c)
{
	struct ep_machine *m = c->m;

	memzero_explicit(&c->key, sizeof(c->key));
	if (!m)
		return;
	pbt_remote_online(m->id, false);
	mutex_lock(&ep_lock);
	m->online = false;
	m->last_seen = get_jiffies_64();
	ep_name_online(m, false);
	list_add_tail(&m->offline, &ep_offline);
	ep_nr_online--;
	if (!ep_forget_stopped && !delayed_work_pending(&ep_forget_work))
		schedule_delayed_work(&ep_forget_work, ep_forget_period());
	mutex_unlock(&ep_lock);
	c->m = NULL;
}

/*
 * Free the machines offline for endpoint_forget_secs that no live session
 * holds; look again while any is offline.
 */
static void ep_forget_fn(struct work_struct *w)
{
	u64 now = get_jiffies_64();
	u64 keep = (u64)READ_ONCE(endpoint_forget_secs) * HZ;
	struct ep_machine *m, *tmp;
	bool more;

	mutex_lock(&ep_lock);
	list_for_each_entry_safe(m, tmp, &ep_offline, offline) {
		if (now - m->last_seen < keep)
			break;		/* the rest went offline later */
		if (pbt_remote_held(m->id))
			continue;
		atomic_inc(&ep_stats.forgotten);
		ep_machine_free(m);
	}
	more = !list_empty(&ep_offline) && !ep_forget_stopped;
	if (more)
		schedule_delayed_work(&ep_forget_work, ep_forget_period());
	mutex_unlock(&ep_lock);
}

/* Did a names change take this connection's machine away? */
bool ep_machine_evicted(const struct ep_conn *c)
{
	return c->m && READ_ONCE(c->m->evict);
}

/* Would @m's peer still be this machine under the names table now? */
static bool ep_machine_fits(const struct ep_machine *m)
{
	const struct ep_name *pin, *owner;

	if (!m->tcp) {
		pin = ep_cid_find(m->cid);
		if (pin)
			return (m->flags & PBTRACE_EPM_PINNED) &&
			       !strcmp(pin->name, m->ident.name);
		if (m->flags & PBTRACE_EPM_PINNED)
			return false;
		return !ep_name_find(m->claimed);
	}
	owner = ep_name_find(m->claimed);
	if (ep_is_key_peer(m->peer))
		return owner && owner->kind == EP_NAME_KEY &&
		       EP_PEER_KEY(owner->serial) == m->peer;
	return !owner;
}

/*
 * The names table changed (names.c, under ep_lock): an online machine it
 * takes a name or a key from is closed (its thread sees evict within a
 * receive timeout), and retired, so that its peer comes back as a new
 * machine id under its new identity. Returns how many.
 */
u32 ep_machines_recheck(void)
{
	struct ep_machine *m;
	unsigned long id;
	u32 n = 0;

	lockdep_assert_held(&ep_lock);
	xa_for_each(&ep_ids, id, m) {
		if (!m->online || (m->flags & PBTRACE_EPM_RETIRED) ||
		    ep_machine_fits(m))
			continue;
		WRITE_ONCE(m->evict, true);
		m->flags |= PBTRACE_EPM_RETIRED;
		hash_del(&m->by_peer);
		ep_name_online(m, false);
		m->peer = 0;
		pr_info("pbtrace: endpoint: machine %u \"%s\" (%s): the names table changed its name or key, closing it\n",
			m->id, m->ident.name, m->peer_str);
		n++;
	}
	return n;
}

/*
 * Who @c is, from its HELLO's name (in c->id) and how it came: a CID the
 * names table names is that name; a TCP relay with a key of its own is
 * that key; else the CID or address, with the name it says, unless that
 * name is another peer's.
 */
int ep_identify(struct ep_conn *c)
{
	const struct ep_name *pin, *owner;
	__be32 ip = htonl(c->addr);
	int ret = 0;

	strscpy(c->claimed, c->id.name, sizeof(c->claimed));
	c->peer = c->tcp ? EP_PEER_ADDR(c->addr) : EP_PEER_CID(c->cid);
	if (c->tcp)
		snprintf(c->peer_str, sizeof(c->peer_str), "tcp %pI4", &ip);
	else
		snprintf(c->peer_str, sizeof(c->peer_str), "cid %u", c->cid);
	mutex_lock(&ep_lock);
	c->names_gen = ep_names_gen;
	pin = c->tcp ? NULL : ep_cid_find(c->cid);
	owner = pin ? NULL : ep_name_find(c->id.name);
	if (pin) {
		strscpy(c->id.name, pin->name, sizeof(c->id.name));
		c->pinned = true;
	} else if (c->tcp && owner && owner->kind == EP_NAME_KEY) {
		c->key = owner->key;
		c->own_key = true;
		c->pinned = true;
		c->peer = EP_PEER_KEY(owner->serial);
		strlcat(c->peer_str, " key", sizeof(c->peer_str));
	} else if (owner) {
		ret = -EACCES;
	} else if (c->tcp && pbt_shared_key()) {
		c->key = *pbt_shared_key();
	} else if (c->tcp) {
		ret = -ENOKEY;
	}
	mutex_unlock(&ep_lock);
	if (ret)
		atomic_inc(&ep_stats.identity_refused);
	if (ret == -EACCES)
		pr_info_ratelimited("pbtrace: endpoint: %s calls itself \"%s\", a name the names table gives another peer, closing\n",
				    c->who, c->claimed);
	if (ret == -ENOKEY)
		pr_info_ratelimited("pbtrace: endpoint: %s: no key for relay \"%s\" (not in the names table, no relay_key), closing\n",
				    c->who, c->claimed);
	return ret ? -EACCES : 0;
}

bool pbt_endpoint_machine_next(u32 *id, struct pbt_endpoint_machine_view *v)
{
	struct ep_machine *m;
	unsigned long index = *id;

	mutex_lock(&ep_lock);
	m = xa_find_after(&ep_ids, &index, PBTRACE_MAX_MACHINE_ID, XA_PRESENT);
	if (m) {
		memset(v, 0, sizeof(*v));
		v->m.machine_id = m->id;
		v->m.online = m->online;
		v->m.flags = m->flags;
		v->m.cid = m->tcp ? 0 : m->cid;
		v->m.num_cpus = m->ident.num_cpus;
		v->m.connects = m->connects;
		v->m.ram_bytes = m->ident.ram_bytes;
		v->m.pings = m->pings;
		v->m.rtt_ns = m->rtt_ns;
		v->m.offset_ns = m->offset_ns;
		if (!m->online)
			v->m.offline_ns = jiffies64_to_nsecs(get_jiffies_64() -
							     m->last_seen);
		memcpy(v->m.hint, m->hint, sizeof(v->m.hint));
		strscpy(v->name, m->ident.name, sizeof(v->name));
		strscpy(v->claimed, m->claimed, sizeof(v->claimed));
		strscpy(v->peer, m->peer_str, sizeof(v->peer));
		strscpy(v->sysname, m->ident.sysname, sizeof(v->sysname));
		strscpy(v->release, m->ident.release, sizeof(v->release));
		strscpy(v->arch, m->ident.machine, sizeof(v->arch));
		*id = m->id;
	}
	mutex_unlock(&ep_lock);
	return m;
}

void ep_machines_count(u32 *all, u32 *online)
{
	mutex_lock(&ep_lock);
	*all = ep_nr_machines;
	*online = ep_nr_online;
	mutex_unlock(&ep_lock);
}

/* Module exit, every connection gone: the machines go too. */
void ep_machines_exit(void)
{
	struct ep_machine *m;
	unsigned long id;

	mutex_lock(&ep_lock);
	ep_forget_stopped = true;
	mutex_unlock(&ep_lock);
	cancel_delayed_work_sync(&ep_forget_work);
	mutex_lock(&ep_lock);
	xa_for_each(&ep_ids, id, m)
		ep_machine_free(m);
	mutex_unlock(&ep_lock);
	ep_names_exit();
}
