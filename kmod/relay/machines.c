// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint's machine table. Each guest gets a small non-zero machine
 * id. A machine belongs to its peer (a vsock CID, a TCP relay's own key,
 * else its address): the same peer with the same hint (a reconnect) or
 * the same name (a reboot) gets its id back, another peer never does. A
 * peer has at most EP_PEER_MACHINES slots, and a full table reuses the
 * slot offline longest that no live session has seen.
 *
 * endpoint_machines=CID:NAME names a CID's machine on the host's word;
 * endpoint_keys=NAME:HEX gives a TCP relay a key of its own. Either way
 * the name is that peer's alone.
 */
#include <linux/module.h>
#include <linux/string.h>

#include "endpoint.h"

static char *endpoint_machines;
module_param(endpoint_machines, charp, 0444);
MODULE_PARM_DESC(endpoint_machines, "vsock: CID:NAME,... the machine name of each CID, whatever its HELLO says; no other peer may use it");
/* Keys: perm 0, never shown in sysfs. */
static char *endpoint_keys;
module_param(endpoint_keys, charp, 0);
MODULE_PARM_DESC(endpoint_keys, "TCP: NAME:HEX,... the key the relay of each name must prove instead of relay_key");

static struct ep_machine ep_machines[EP_MAX_MACHINES];
static struct ep_named {
	char name[FRAME_STR_MAX + 1];
	u32 cid;			/* endpoint_machines */
	struct pbt_key key;		/* endpoint_keys */
} ep_named[EP_MAX_NAMED], ep_keyed[EP_MAX_NAMED];
static int ep_nr_named, ep_nr_keyed;

void ep_copy_str(char *dst, const struct frame_str *s)
{
	memcpy(dst, s->p, s->len);	/* len <= FRAME_STR_MAX: parser */
	dst[s->len] = 0;
}

/* Has a live session had machine @id? Its slot keeps that id then. */
static bool ep_id_in_session(u32 id)
{
	struct pbtrace_machine_stats st;
	struct pbt_session *s;
	bool used = false;
	char name[8];
	u32 sid = 0;

	while (!used && (s = pbt_session_get_next(sid))) {
		sid = s->id;
		used = pbt_remote_machine(s, id, name, sizeof(name), &st);
		pbt_session_put(s);
	}
	return used;
}

/* The slot offline longest that no live session has seen; @peer's if set. */
static struct ep_machine *ep_oldest_offline(u64 peer)
{
	struct ep_machine *m, *best = NULL;
	int i;

	for (i = 0; i < EP_MAX_MACHINES; i++) {
		m = &ep_machines[i];
		if (!m->id || m->online || (peer && m->peer != peer) ||
		    (best && m->last_seen >= best->last_seen) ||
		    ep_id_in_session(m->id))
			continue;
		best = m;
	}
	return best;
}

/*
 * The peer's machine for @hint (a reconnect), else for its name (a
 * reboot: a new hint); NULL if neither. @nr: the slots the peer holds.
 * A reboot does not take back a slot a live session has seen: the new
 * boot's BOOTTIME starts again from zero, and trace_processor keeps one
 * clock per machine id, so in that session it must be a machine of its
 * own (its events would go back in time on the old one's clock).
 */
static struct ep_machine *ep_machine_find(const struct ep_conn *c,
					  const u8 *hint, int *nr)
{
	struct ep_machine *m, *by_name = NULL;
	int i;

	*nr = 0;
	for (i = 0; i < EP_MAX_MACHINES; i++) {
		m = &ep_machines[i];
		if (!m->id || m->peer != c->peer)
			continue;
		if (!memcmp(m->hint, hint, FRAME_HINT_LEN))
			return m;
		if (!by_name && !strcmp(m->ident.name, c->id.name) &&
		    !ep_id_in_session(m->id))
			by_name = m;
		(*nr)++;
	}
	return by_name;
}

/*
 * The slot @c's machine gets: its own, else a free one, else the oldest
 * reusable; a peer at EP_PEER_MACHINES reuses its own oldest. *fresh: the
 * slot starts anew. NULL: none (*full says whose bound it hit).
 */
static struct ep_machine *ep_machine_pick(const struct ep_conn *c,
					  const u8 *hint, bool *fresh,
					  atomic_t **full)
{
	struct ep_machine *m;
	int nr, i;

	m = ep_machine_find(c, hint, &nr);
	if (m)
		return m;
	*fresh = true;
	if (nr >= EP_PEER_MACHINES) {
		*full = &ep_stats.peer_full;
		return ep_oldest_offline(c->peer);
	}
	*full = &ep_stats.table_full;
	for (i = 0; i < EP_MAX_MACHINES; i++)
		if (!ep_machines[i].id)
			return &ep_machines[i];
	return ep_oldest_offline(0);
}

/* The id @c would get now: WELCOME's on TCP, before AUTH (informational). */
u32 ep_machine_peek(struct ep_conn *c)
{
	struct ep_machine *m;
	atomic_t *full;
	bool fresh;

	mutex_lock(&ep_lock);
	m = ep_machine_pick(c, c->hint, &fresh, &full);
	mutex_unlock(&ep_lock);
	return m ? m - ep_machines + 1 : 1;
}

/* Take the slot for @c's hint; a machine already online is refused. */
int ep_machine_reserve(struct ep_conn *c, const u8 *hint)
{
	atomic_t *full = NULL;
	struct ep_machine *m;
	bool fresh = false;

	mutex_lock(&ep_lock);
	m = ep_machine_pick(c, hint, &fresh, &full);
	if (!m || m->online) {
		mutex_unlock(&ep_lock);
		atomic_inc(m ? &ep_stats.duplicate : full);
		pr_info_ratelimited("pbtrace: endpoint: %s: machine \"%s\" %s, closing\n",
				    c->who, c->id.name, m ? "is online already" :
				    full == &ep_stats.peer_full ?
				    "would be one too many for this peer" :
				    "has no slot: every one is online or in a session");
		return m ? -EBUSY : -ENOSPC;
	}
	if (fresh) {
		memset(m, 0, sizeof(*m));
		m->id = m - ep_machines + 1;
		m->peer = c->peer;
	}
	memcpy(m->hint, hint, FRAME_HINT_LEN);
	m->online = true;
	c->m = m;
	mutex_unlock(&ep_lock);
	return 0;
}

/* The relay is who it says: its HELLO becomes the machine's identity. */
void ep_machine_commit(struct ep_conn *c)
{
	struct ep_machine *m = c->m;

	mutex_lock(&ep_lock);
	m->ident = c->id;
	m->cid = c->cid;
	m->connects++;
	mutex_unlock(&ep_lock);
	pbt_remote_online(m->id, true);
	c->authed = true;
	atomic_inc(&ep_stats.hellos);
	pr_info("pbtrace: endpoint: %s is machine %u \"%s\" (%s %s %s, %u cpus, %llu MiB)\n",
		c->who, m->id, m->ident.name, m->ident.sysname,
		m->ident.release, m->ident.machine, m->ident.num_cpus,
		m->ident.ram_bytes >> 20);
}

/* Connection over: the machine is offline; its slot stays its own. */
void ep_machine_release(struct ep_conn *c)
{
	if (!c->m)
		return;
	pbt_remote_online(c->m->id, false);
	mutex_lock(&ep_lock);
	c->m->online = false;
	c->m->last_seen = get_jiffies_64();
	mutex_unlock(&ep_lock);
	c->m = NULL;
}

/* Whose @name is: the peer endpoint_machines or endpoint_keys give it, or 0. */
static u64 ep_name_owner(const char *name)
{
	int i;

	for (i = 0; i < ep_nr_named; i++)
		if (!strcmp(ep_named[i].name, name))
			return EP_PEER_CID(ep_named[i].cid);
	for (i = 0; i < ep_nr_keyed; i++)
		if (!strcmp(ep_keyed[i].name, name))
			return EP_PEER_KEY(i);
	return 0;
}

static const char *ep_cid_name(u32 cid)
{
	int i;

	for (i = 0; i < ep_nr_named; i++)
		if (ep_named[i].cid == cid)
			return ep_named[i].name;
	return NULL;
}

/*
 * Who @c is, from its HELLO's name (in c->id) and how it came: a CID the
 * host named is that name; a TCP relay with a key of its own is that key;
 * else the CID or address, with the name it says, unless that name is
 * another peer's.
 */
int ep_identify(struct ep_conn *c)
{
	const char *mapped = c->tcp ? NULL : ep_cid_name(c->cid);
	u64 owner = ep_name_owner(c->id.name);

	if (mapped) {
		strscpy(c->id.name, mapped, sizeof(c->id.name));
		c->peer = EP_PEER_CID(c->cid);
		return 0;
	}
	c->peer = c->tcp ? EP_PEER_ADDR(c->addr) : EP_PEER_CID(c->cid);
	c->key = pbt_shared_key();
	if (c->tcp && owner >> 32 == EP_PEER_KEY(0) >> 32) {
		c->key = &ep_keyed[lower_32_bits(owner)].key;
		c->peer = owner;
	}
	if (owner && owner != c->peer) {
		atomic_inc(&ep_stats.identity_refused);
		pr_info_ratelimited("pbtrace: endpoint: %s calls itself \"%s\", a name endpoint_machines or endpoint_keys gives another peer, closing\n",
				    c->who, c->id.name);
		return -EACCES;
	}
	if (c->tcp && !c->key) {
		atomic_inc(&ep_stats.identity_refused);
		pr_info_ratelimited("pbtrace: endpoint: %s: no key for relay \"%s\" (endpoint_keys has none, no relay_key), closing\n",
				    c->who, c->id.name);
		return -EACCES;
	}
	return 0;
}

/* A machine name as HELLO carries one: 1..64 printable ASCII, no ','. */
static int ep_name_copy(char *dst, const char *p, size_t n)
{
	size_t i;

	if (!n || n > FRAME_STR_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return -EINVAL;
	memcpy(dst, p, n);
	dst[n] = 0;
	return 0;
}

/* endpoint_machines=CID:NAME,... */
static int ep_parse_machines(void)
{
	const char *p = endpoint_machines;
	struct ep_named *e;
	unsigned int cid;
	size_t len;
	int n;

	for (; p && *p; p += len + !!p[len]) {
		len = strcspn(p, ",");
		e = &ep_named[ep_nr_named];
		n = 0;
		if (ep_nr_named == EP_MAX_NAMED ||
		    sscanf(p, "%u:%n", &cid, &n) != 1 || n < 2 ||
		    p[n - 1] != ':' || ep_name_copy(e->name, p + n, len - n) ||
		    ep_cid_name(cid) || ep_name_owner(e->name)) {
			pr_err("pbtrace: endpoint_machines=%s: want up to %d CID:NAME, comma-separated, each CID and name once (a name is 1 to %d printable characters)\n",
			       endpoint_machines, EP_MAX_NAMED, FRAME_STR_MAX);
			return -EINVAL;
		}
		e->cid = cid;
		ep_nr_named++;
	}
	return 0;
}

/* endpoint_keys=NAME:HEX,... (the keys are not echoed) */
static int ep_parse_keys(void)
{
	const char *p = endpoint_keys, *colon;
	struct ep_named *e;
	size_t len;

	for (; p && *p; p += len + !!p[len]) {
		len = strcspn(p, ",");
		colon = memchr(p, ':', len);
		e = &ep_keyed[ep_nr_keyed];
		if (ep_nr_keyed == EP_MAX_NAMED || !colon ||
		    ep_name_copy(e->name, p, colon - p) ||
		    ep_name_owner(e->name) ||
		    pbt_key_parse(&e->key, colon + 1, p + len - colon - 1)) {
			pr_err("pbtrace: endpoint_keys: entry %d: want up to %d NAME:HEX, comma-separated, each name once, keys of 32 to %d hex digits\n",
			       ep_nr_keyed + 1, EP_MAX_NAMED, 2 * PBT_KEY_MAX);
			return -EINVAL;
		}
		ep_nr_keyed++;
	}
	return 0;
}

bool ep_have_keys(void)
{
	return ep_nr_keyed > 0;
}

/* The machine table's lines of endpoint_stats, from @n on; the new length. */
int ep_machines_show(char *buf, int n)
{
	struct ep_machine *m;
	int i;

	mutex_lock(&ep_lock);
	for (i = 0; i < EP_MAX_MACHINES; i++) {
		m = &ep_machines[i];
		if (!m->id)
			continue;
		n += sysfs_emit_at(buf, n, "machine %u name=%s sysname=%s release=%s arch=%s cpus=%u ram_mb=%llu cid=%u online=%d connects=%u pings=%llu rtt_ns=%llu offset_ns=%lld hint=%16phN\n",
				   m->id, m->ident.name, m->ident.sysname,
				   m->ident.release, m->ident.machine,
				   m->ident.num_cpus, m->ident.ram_bytes >> 20,
				   m->cid, m->online, m->connects, m->pings,
				   m->rtt_ns, m->offset_ns, m->hint);
	}
	mutex_unlock(&ep_lock);
	return n;
}

int ep_machines_init(void)
{
	int ret;

	ret = ep_parse_machines();
	if (!ret)
		ret = ep_parse_keys();
	return ret;
}

void ep_machines_exit(void)
{
	memzero_explicit(ep_keyed, sizeof(ep_keyed));
}
