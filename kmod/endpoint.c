// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint: the host's pbtrace.ko accepts relays from its guests
 * (docs/relay-protocol.md). Loaded with endpoint=vsock:PORT, a kthread
 * listens and gives each connection a kthread of its own, so a slow or
 * hostile guest only ever blocks itself, never the host's tracing or
 * another guest. Every byte goes through the core frame parser; a frame it
 * refuses closes that connection and is counted by reason. One peer (vsock
 * CID, TCP address) holds at most EP_MAX_PER_PEER connections, and one not
 * through its handshake in EP_HELLO_SECS is closed, so no guest can lock
 * the others out; unload shuts every socket down before it stops a thread.
 *
 * Each guest gets a small non-zero machine id. A machine belongs to its
 * peer (a vsock CID, a TCP relay's own key, else its address): the same
 * peer with the same hint (a reconnect) or the same name (a reboot) gets
 * its id back, another peer never does. A peer has at most
 * EP_PEER_MACHINES slots, and a full table reuses the slot offline
 * longest that no live session has seen. endpoint_stats (a read-only
 * module parameter) shows the counters and the machine table.
 *
 * endpoint_machines=CID:NAME names a CID's machine on the host's word;
 * endpoint_keys=NAME:HEX gives a TCP relay a key of its own. Either way
 * the name is that peer's alone.
 *
 * endpoint=vsock:PORT,tcp:ADDR:PORT listens on both. On TCP a relay must
 * prove it holds its key (AUTH) before it is given a machine: until then
 * it holds nothing, so a replayed HELLO cannot take another's.
 *
 * Sessions: each connected machine records for the first started session
 * (lowest id) with a buffer whose machine list names it ("*" or its name),
 * into the first such buffer. Its connection thread tells it so with
 * CONTROL start, passes on FLUSH, and sends CONTROL stop when the session
 * stops, then waits for the guest's STOPPED (at most 2 s) before it looks
 * for another session. Session changes reach the thread as a bump of
 * remote.c's generation (pbt_remote_changes()), which it checks every
 * 100 ms receive timeout: the session lock never waits on a guest's
 * socket, and only the connection's own thread ever sends on it, so no tx
 * lock is needed either. Its CHUNKs are stamped (machine_id, a host-chosen
 * sequence id per guest CPU) into that buffer's remote queue (remote.c),
 * with a system_info when it joins and, ahead of its first chunk, one
 * remote_clock_sync: the middle of the window its ping rounds allow.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/task.h>
#include <linux/random.h>
#include <crypto/algapi.h>
#include <net/sock.h>

#include "pbtrace.h"
#include "compat.h"
#include "relay.h"
#include "core/frame.h"
#include "pbtrace_fields.h"
#include "core/relay_packets.h"

static char *endpoint;
module_param(endpoint, charp, 0444);
MODULE_PARM_DESC(endpoint, "accept guest relays on vsock:PORT and/or tcp:[ADDR:]PORT, comma-separated");
static char *endpoint_cids;
module_param(endpoint_cids, charp, 0444);
MODULE_PARM_DESC(endpoint_cids, "vsock: accept only these peer CIDs, comma-separated (default: any)");
static unsigned int endpoint_ping_ms = 1000;
module_param(endpoint_ping_ms, uint, 0444);
MODULE_PARM_DESC(endpoint_ping_ms, "clock ping period asked of relays, 100..10000 ms (default 1000)");
static char *endpoint_machines;
module_param(endpoint_machines, charp, 0444);
MODULE_PARM_DESC(endpoint_machines, "vsock: CID:NAME,... the machine name of each CID, whatever its HELLO says; no other peer may use it");
/* Keys: perm 0, never shown in sysfs. */
static char *endpoint_keys;
module_param(endpoint_keys, charp, 0);
MODULE_PARM_DESC(endpoint_keys, "TCP: NAME:HEX,... the key the relay of each name must prove instead of relay_key");

#define EP_MAX_CONNS	16
#define EP_MAX_PER_PEER	4	/* per vsock CID or TCP source address */
#define EP_HELLO_SECS	10	/* HELLO (and AUTH) done by then, or closed */
#define EP_MAX_MACHINES	PBT_REMOTE_MAX_MACHINES
#define EP_IDLE_SECS	30	/* above the longest ping period */
#define EP_RX_SIZE	(FRAME_HDR_LEN + FRAME_MAX_PAYLOAD + FRAME_TAG_LEN)
#define EP_LISTENERS	2
#define EP_MAX_CIDS	16
#define EP_HELLO_MAX	400		/* largest HELLO payload is 389 */
#define EP_POLL_JIFFIES	(HZ / 10)	/* how soon a session change is seen */
#define EP_DONE_JIFFIES	(2 * HZ)	/* a stopped guest's last chunks */
#define EP_LATE_JIFFIES	(10 * HZ)	/* then what it still sends is counted */
#define EP_SCRATCH	PBTRACE_REMOTE_READ_MIN	/* one stamped record */
#define EP_PEER_MACHINES 8		/* machine slots one peer may hold */
#define EP_MAX_NAMED	16		/* endpoint_machines, endpoint_keys */
/* Who a machine belongs to: the kind of peer, then its CID, IPv4 or key. */
#define EP_PEER_CID(cid)	(1ULL << 32 | (cid))
#define EP_PEER_ADDR(ip)	(2ULL << 32 | (ip))
#define EP_PEER_KEY(i)		(3ULL << 32 | (i))

/* What a HELLO says, kept until the relay has proved itself (TCP). */
struct ep_identity {
	char name[FRAME_STR_MAX + 1];
	char sysname[FRAME_STR_MAX + 1];
	char release[FRAME_STR_MAX + 1];
	char version[FRAME_STR_MAX + 1];
	char machine[FRAME_STR_MAX + 1];
	u32 num_cpus;
	u64 ram_bytes;
};

struct ep_machine {
	u32 id;				/* 0: free slot */
	bool online;
	u64 peer;			/* EP_PEER_x: whose it is */
	u64 last_seen;			/* jiffies64 it went offline */
	u8 hint[FRAME_HINT_LEN];
	struct ep_identity ident;	/* its relay's last admitted HELLO */
	u32 cid;
	u32 connects;
	u64 pings;
	u64 rtt_ns;			/* last complete ping round */
	s64 offset_ns;			/* host BOOTTIME - guest BOOTTIME */
};

struct ep_conn {
	struct list_head node;		/* ep_conns, under ep_lock */
	struct task_struct *task;
	struct socket *sock;
	bool done;			/* thread finished; under ep_lock */
	bool tcp;
	char who[48];			/* "cid 3" or "10.0.2.2:40000" */
	u32 cid;
	u32 addr;			/* TCP: the peer's IPv4, host order */
	u64 peer;			/* EP_PEER_x, from ep_identify() */
	const struct pbt_key *key;	/* TCP: the key its AUTH must prove */
	u8 hint[FRAME_HINT_LEN];	/* TCP: HELLO's, until AUTH */
	struct pbt_tags tags;		/* TCP: from AUTH on */
	struct ep_machine *m;		/* vsock: at HELLO; TCP: at AUTH */
	bool authed;			/* vsock, or AUTH checked */
	struct ep_identity id;
	u8 relay_nonce[FRAME_NONCE_LEN];
	u8 host_nonce[FRAME_NONCE_LEN];
	u8 hello[EP_HELLO_MAX];		/* HELLO payload, for AUTH */
	size_t hello_len;
	struct frame_parser ps;
	u32 tx_seq;
	int bad;			/* FRAME_E_x the parser refused with */
	u64 ping_send[FRAME_NR_CLOCKS];	/* guest t1 of the last PING */
	u64 pong_recv[FRAME_NR_CLOCKS];	/* host t2 */
	u64 pong_reply[FRAME_NR_CLOCKS]; /* host t3 */
	u8 *rx;
	size_t have;
	/* CONTROL is largest */
	u8 tx[FRAME_HDR_LEN + 16 + FRAME_EVENTS_MAX + FRAME_TAG_LEN];
	char events[FRAME_EVENTS_MAX + 1];

	/* The session this machine records for; only this thread uses these. */
	struct pbt_session *s;		/* our reference, or NULL */
	u32 buf;			/* its buffer */
	/* Stopped, we gave up waiting: its late chunks are dropped there. */
	struct pbt_session *late;
	u32 late_buf;
	unsigned long late_end;		/* not longer: it pins the buffers */
	u32 gen;			/* pbt_remote_changes() when we last looked */
	u32 flush_gen;			/* the session's flushes passed on */
	bool stop_sent;			/* CONTROL stop sent, waiting */
	bool stopped_rcvd;		/* the guest's STOPPED for it came */
	unsigned long stop_end;		/* give up waiting for STOPPED */
	bool have_ping;			/* ping_send holds a PING's clocks */
	bool have_round;		/* round holds a complete ping round */
	u64 round[4][FRAME_NR_CLOCKS];	/* its t1, t2, t3, t4 */
	/* The session's remote_clock_sync, from the rounds since bound. */
	u32 rounds;			/* in best, lo and hi */
	bool synced;			/* it went into the session */
	u64 best_rtt;
	u64 best[4][FRAME_NR_CLOCKS];	/* the fastest round */
	s64 lo[FRAME_NR_CLOCKS];	/* guest - host above all t1 - t2 */
	s64 hi[FRAME_NR_CLOCKS];	/* and below all t4 - t3 */
	u32 *next_seq;			/* per guest CPU: next chunk sequence */
	u8 *scratch;			/* EP_SCRATCH: stamping, packets */
};

static const char * const ep_reason[FRAME_E_NR] = {
	[FRAME_E_MAGIC] = "magic", [FRAME_E_VERSION] = "version",
	[FRAME_E_TYPE] = "type", [FRAME_E_FLAGS] = "flags",
	[FRAME_E_LENGTH] = "length", [FRAME_E_SEQ] = "seq",
	[FRAME_E_DIRECTION] = "direction", [FRAME_E_ORDER] = "order",
	[FRAME_E_PONG] = "pong", [FRAME_E_PAYLOAD] = "payload",
	[FRAME_E_CHUNK] = "chunk", [FRAME_E_TRUSTED] = "trusted",
	[FRAME_E_CLOSED] = "closed", [FRAME_E_TAG] = "tag",
};

static struct {
	atomic_t accepted, refused, hellos, pings, chunks, goodbyes;
	atomic_t truncated, idle, duplicate, table_full, auth_failed;
	atomic_t cid_refused, identity_refused, peer_full;
	atomic_t controls, stopped, chunks_unbound, packets_dropped;
	atomic_t peer_limit, handshake_timeout, send_timeout;
	atomic_t bad[FRAME_E_NR];
} ep_stats;


static DEFINE_MUTEX(ep_lock);		/* ep_conns, ep_machines */
static LIST_HEAD(ep_conns);
static unsigned int ep_nr_conns;
static struct ep_machine ep_machines[EP_MAX_MACHINES];
static struct ep_listener {
	struct socket *sock;
	struct task_struct *task;
	bool tcp;
} ep_listeners[EP_LISTENERS];
static int ep_nr_listeners;
static u32 ep_cids[EP_MAX_CIDS];
static int ep_nr_cids;			/* 0: any CID */
static struct ep_named {
	char name[FRAME_STR_MAX + 1];
	u32 cid;			/* endpoint_machines */
	struct pbt_key key;		/* endpoint_keys */
} ep_named[EP_MAX_NAMED], ep_keyed[EP_MAX_NAMED];
static int ep_nr_named, ep_nr_keyed;

/* ---- machines ---- */

static void copy_str(char *dst, const struct frame_str *s)
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
static u32 ep_machine_peek(struct ep_conn *c)
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
static int ep_machine_reserve(struct ep_conn *c, const u8 *hint)
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
static void ep_machine_commit(struct ep_conn *c)
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
static void ep_machine_release(struct ep_conn *c)
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
static int ep_identify(struct ep_conn *c)
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

/* ---- one connection ---- */

static int ep_send(struct ep_conn *c, struct frame *f)
{
	size_t n;
	int ret;

	n = pbt_frame_out(&c->ps, &c->tx_seq, c->tx,
			  sizeof(c->tx) - FRAME_TAG_LEN, f);
	if (n && c->tags.tx)
		n = pbt_tag_frame(c->tags.tx, c->tx, n);
	if (!n)
		return -EINVAL;
	ret = pbt_send_all(c->sock, c->tx, n);
	if (ret == -ETIMEDOUT) {
		atomic_inc(&ep_stats.send_timeout);
		pr_info_ratelimited("pbtrace: endpoint: %s has not taken a %zu-byte frame in %d s, closing\n",
				    c->who, n, PBT_SEND_SECS);
	}
	return ret;
}

/* ---- the session this machine records for ---- */

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

/* RTT and offset (host - guest BOOTTIME) of a round t1, t2, t3, t4. */
static void ep_round_measure(const u64 (*r)[FRAME_NR_CLOCKS], u64 *rtt,
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
static void ep_clock_round(struct ep_conn *c)
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
static s64 ep_sync_host(const struct ep_conn *c, u64 *host)
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

static void ep_forget_late(struct ep_conn *c)
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
	pbt_remote_bind(s, buffer, m->id, m->ident.name, m->ident.num_cpus);
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
static void ep_unbind(struct ep_conn *c, bool lost)
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
static int ep_sync(struct ep_conn *c)
{
	struct pbt_session *s = c->s;
	u32 gen, buffer;
	int ret;

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

static bool ep_sync_due(struct ep_conn *c)
{
	return c->gen != pbt_remote_changes() || (c->s && c->stop_sent) ||
	       (c->late && time_after(jiffies, c->late_end));
}

/*
 * A checked CHUNK: stamped into the session's queue. A jump in the
 * guest's per-CPU sequence is chunks its relay lost on the way.
 */
static void ep_chunk(struct ep_conn *c, const struct frame_chunk *ch)
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

static void ep_stopped(struct ep_conn *c, const struct frame_stopped *st)
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

static int ep_hello(struct ep_conn *c, const struct frame_hello *h,
		    const u8 *raw, size_t raw_len)
{
	struct frame f;
	int ret;

	copy_str(c->id.name, h->name.len ? &h->name : &h->sysname);
	copy_str(c->id.sysname, &h->sysname);
	copy_str(c->id.release, &h->release);
	copy_str(c->id.version, &h->version);
	copy_str(c->id.machine, &h->machine);
	c->id.num_cpus = h->num_cpus;
	c->id.ram_bytes = h->ram_bytes;
	ret = ep_identify(c);
	if (ret)
		return ret;
	memset(&f, 0, sizeof(f));
	f.type = FRAME_WELCOME;
	f.welcome.ping_period_ms = endpoint_ping_ms;
	if (c->tcp) {
		/* Nothing is reserved until AUTH: a HELLO is easily replayed. */
		memcpy(c->hint, h->hint, FRAME_HINT_LEN);
		f.welcome.machine_id = ep_machine_peek(c);
		memcpy(c->relay_nonce, h->nonce, FRAME_NONCE_LEN);
		get_random_bytes(c->host_nonce, FRAME_NONCE_LEN);
		memcpy(f.welcome.nonce, c->host_nonce, FRAME_NONCE_LEN);
		ret = pbt_proof_host(c->key, c->relay_nonce, c->host_nonce,
				     f.welcome.mac);
		if (ret)
			return ret;
		c->hello_len = min_t(size_t, raw_len, EP_HELLO_MAX);
		memcpy(c->hello, raw, c->hello_len);
	} else {
		ret = ep_machine_reserve(c, h->hint);
		if (ret)
			return ret;
		f.welcome.machine_id = c->m->id;
		ep_machine_commit(c);
	}
	return ep_send(c, &f);
}

/* TCP: the relay's proof binds the key, both nonces and its HELLO. */
static int ep_auth(struct ep_conn *c, const struct frame_auth *a)
{
	u8 mac[FRAME_MAC_LEN];
	int ret;

	ret = pbt_proof_relay(c->key, c->host_nonce, c->relay_nonce, c->hello,
			      c->hello_len, mac);
	if (ret)
		return ret;
	if (crypto_memneq(mac, a->mac, FRAME_MAC_LEN)) {
		atomic_inc(&ep_stats.auth_failed);
		pr_info_ratelimited("pbtrace: endpoint: %s (\"%s\") failed the key check (%s), closing\n",
				    c->who, c->id.name,
				    c->key == pbt_shared_key() ? "relay_key" :
				    "its endpoint_keys entry");
		return -EACCES;
	}
	/* From here on every frame, either way, is tagged. */
	ret = pbt_tags_init(&c->tags, c->key, c->host_nonce, c->relay_nonce,
			    a->mac, true);
	if (!ret)
		ret = ep_machine_reserve(c, c->hint);
	if (ret)
		return ret;
	ep_machine_commit(c);
	return 0;
}

/*
 * Answer a PING. If it reports when our last PONG arrived (t4), that round
 * is complete: t1 guest send, t2 our receive, t3 our reply, t4 guest
 * receive, each on its own BOOTTIME.
 */
static int ep_ping(struct ep_conn *c, const struct frame_ping *p,
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

/* Returns 0 to go on, 1 when the guest said GOODBYE, or -errno. */
static int ep_handle(struct ep_conn *c, const struct frame *f,
		     const u8 *raw, size_t raw_len, const u64 *recv)
{
	switch (f->type) {
	case FRAME_HELLO:
		return ep_hello(c, &f->hello, raw, raw_len);
	case FRAME_AUTH:
		return ep_auth(c, &f->auth);
	case FRAME_PING:
		return ep_ping(c, &f->ping, recv);
	case FRAME_CHUNK:
		ep_chunk(c, &f->chunk);
		return 0;
	case FRAME_STOPPED:
		ep_stopped(c, &f->stopped);
		return 0;
	case FRAME_GOODBYE:
		atomic_inc(&ep_stats.goodbyes);
		return 1;
	}
	return -EPROTO;
}

/* Every whole frame at the front of c->rx; keeps the rest. */
static int ep_parse(struct ep_conn *c, const u64 *recv)
{
	size_t off = 0;
	struct frame f;
	int n, ret = 0;

	while (!ret) {
		if (kthread_should_stop()) {	/* unload: the rest is moot */
			ret = -ESHUTDOWN;
			break;
		}
		n = frame_parse(&c->ps, c->rx + off, c->have - off, &f);
		if (n < 0) {
			c->bad = -n;
			ret = -EBADMSG;
		}
		if (n <= 0)
			break;
		if ((c->rx[off + 6] & FRAME_F_TAG) &&
		    (!c->tags.rx || !pbt_tag_ok(c->tags.rx, c->rx + off, n))) {
			c->bad = FRAME_E_TAG;
			ret = -EBADMSG;
			break;
		}
		ret = ep_handle(c, &f, c->rx + off + FRAME_HDR_LEN,
				n - FRAME_HDR_LEN, recv);
		off += n;
	}
	c->have -= off;
	memmove(c->rx, c->rx + off, c->have);
	return ret;
}

/*
 * Past a deadline: the handshake's (HELLO, and AUTH on TCP, within
 * EP_HELLO_SECS of the accept), or EP_IDLE_SECS without a whole frame.
 */
static int ep_expired(struct ep_conn *c, unsigned long hello_end,
		      unsigned long idle_end)
{
	if (!c->authed && time_after(jiffies, hello_end)) {
		atomic_inc(&ep_stats.handshake_timeout);
		pr_info_ratelimited("pbtrace: endpoint: %s has not finished its handshake in %d s, closing\n",
				    c->who, EP_HELLO_SECS);
		return -ETIMEDOUT;
	}
	if (time_after(jiffies, idle_end)) {
		atomic_inc(&ep_stats.idle);
		return -ETIMEDOUT;
	}
	return 0;
}

static int ep_serve(struct ep_conn *c)
{
	unsigned long idle_end = jiffies + EP_IDLE_SECS * HZ;
	unsigned long hello_end = jiffies + EP_HELLO_SECS * HZ;
	u64 recv[FRAME_NR_CLOCKS];
	struct msghdr msg = {};
	struct kvec vec;
	size_t have;
	int ret;

	frame_parser_init(&c->ps, FRAME_ROLE_HOST, c->tcp);
	while (!kthread_should_stop()) {
		vec.iov_base = c->rx + c->have;
		vec.iov_len = EP_RX_SIZE - c->have;
		ret = kernel_recvmsg(c->sock, &msg, &vec, 1, vec.iov_len, 0);
		pbt_clocks(recv);
		if (ep_sync_due(c)) {
			int err = ep_sync(c);

			if (err)
				return err;
		}
		if (ret == -EAGAIN || ret == -EINTR)
			ret = 0;
		else if (ret < 0)
			return ret;
		else if (ret == 0) {
			if (c->have)		/* closed inside a frame */
				atomic_inc(&ep_stats.truncated);
			return -ECONNRESET;
		}
		c->have += ret;
		have = c->have;
		ret = ret ? ep_parse(c, recv) : 0;
		if (ret)
			return ret;
		/* Only a whole frame is life: trickled bytes are not. */
		if (c->have < have)
			idle_end = jiffies + EP_IDLE_SECS * HZ;
		ret = ep_expired(c, hello_end, idle_end);
		if (ret)
			return ret;
	}
	return 0;
}

static int ep_conn_thread(void *arg)
{
	struct ep_conn *c = arg;
	struct frame f;

	ep_serve(c);
	if (c->bad) {
		atomic_inc(&ep_stats.bad[c->bad]);
		pr_info_ratelimited("pbtrace: endpoint: %s: %s, closing\n",
				    c->who, frame_strerror(c->bad));
		memset(&f, 0, sizeof(f));
		f.type = FRAME_GOODBYE;
		f.goodbye.reason = c->bad;
		ep_send(c, &f);
	}
	kernel_sock_shutdown(c->sock, SHUT_RDWR);
	ep_unbind(c, true);
	ep_forget_late(c);
	ep_machine_release(c);
	mutex_lock(&ep_lock);
	c->done = true;
	mutex_unlock(&ep_lock);
	return 0;
}

static void ep_conn_free(struct ep_conn *c)
{
	kthread_stop(c->task);
	put_task_struct(c->task);
	sock_release(c->sock);
	pbt_tags_free(&c->tags);
	kvfree(c->scratch);
	kvfree(c->next_seq);
	kvfree(c->rx);
	kfree(c);
}

/* Free finished connections, or all of them (module exit). */
static void ep_reap(bool all)
{
	struct ep_conn *c, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&ep_lock);
	list_for_each_entry_safe(c, tmp, &ep_conns, node) {
		if (all || c->done) {
			list_move(&c->node, &dead);
			ep_nr_conns--;
		}
	}
	mutex_unlock(&ep_lock);
	/*
	 * Unload never waits on a guest: shut every socket down first, which
	 * ends a send waiting for the guest's credit and the receive, then
	 * stop the threads (kthread_stop() waits for each).
	 */
	if (all)
		list_for_each_entry(c, &dead, node)
			kernel_sock_shutdown(c->sock, SHUT_RDWR);
	list_for_each_entry_safe(c, tmp, &dead, node)
		ep_conn_free(c);
}

static void ep_peer(struct ep_conn *c)
{
	struct sockaddr_storage peer = {};
	struct sockaddr_vm *vm = (struct sockaddr_vm *)&peer;

	if (kernel_getpeername(c->sock, (struct sockaddr *)&peer) < 0) {
		strscpy(c->who, "unknown peer", sizeof(c->who));
	} else if (c->tcp) {
		c->addr = ntohl(((struct sockaddr_in *)&peer)->sin_addr.s_addr);
		snprintf(c->who, sizeof(c->who), "%pISpc", &peer);
	} else {
		c->cid = vm->svm_cid;
		snprintf(c->who, sizeof(c->who), "cid %u", c->cid);
	}
}

static bool ep_cid_allowed(u32 cid)
{
	int i;

	for (i = 0; i < ep_nr_cids; i++)
		if (ep_cids[i] == cid)
			return true;
	return !ep_nr_cids;
}

static bool ep_same_peer(const struct ep_conn *a, const struct ep_conn *b)
{
	return a->tcp == b->tcp &&
	       (a->tcp ? a->addr == b->addr : a->cid == b->cid);
}

/*
 * A connection slot for @c, unless all EP_MAX_CONNS are taken or its peer
 * holds EP_MAX_PER_PEER already, so one peer cannot lock the others out.
 * Only the listener's thread adds to ep_conns, so the count holds until
 * ep_start() adds @c.
 */
static int ep_slot_get(const struct ep_conn *c)
{
	const struct ep_conn *o;
	int same = 0, ret = 0;

	mutex_lock(&ep_lock);
	list_for_each_entry(o, &ep_conns, node)
		if (!o->done && ep_same_peer(o, c))
			same++;
	if (ep_nr_conns >= EP_MAX_CONNS)
		ret = -ENOSPC;
	else if (same >= EP_MAX_PER_PEER)
		ret = -EBUSY;
	else
		ep_nr_conns++;
	mutex_unlock(&ep_lock);
	return ret;
}

static bool ep_admit(struct ep_conn *c)
{
	int ret;

	if (!c->tcp && !ep_cid_allowed(c->cid)) {
		atomic_inc(&ep_stats.cid_refused);
		pr_info_ratelimited("pbtrace: endpoint: %s is not in endpoint_cids, closing\n",
				    c->who);
		return false;
	}
	ret = ep_slot_get(c);
	if (ret == -EBUSY) {
		atomic_inc(&ep_stats.peer_limit);
		pr_info_ratelimited("pbtrace: endpoint: %s has %d connections already, closing a new one\n",
				    c->who, EP_MAX_PER_PEER);
	} else if (ret) {
		pr_info_ratelimited("pbtrace: endpoint: all %d connections taken, closing %s\n",
				    EP_MAX_CONNS, c->who);
	}
	return !ret;
}

static void ep_slot_put(void)
{
	mutex_lock(&ep_lock);
	ep_nr_conns--;
	mutex_unlock(&ep_lock);
}

static void ep_start(struct socket *sock, bool tcp)
{
	struct ep_conn *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		goto refuse;
	c->sock = sock;
	c->tcp = tcp;
	ep_peer(c);
	if (!ep_admit(c))
		goto free;
	c->rx = kvmalloc(EP_RX_SIZE, GFP_KERNEL);
	if (!c->rx)
		goto put;
	c->gen = pbt_remote_changes() - 1;	/* look for a session first thing */
	sock->sk->sk_rcvtimeo = EP_POLL_JIFFIES;
	sock->sk->sk_sndtimeo = HZ;
	c->task = kthread_create(ep_conn_thread, c, "pbtrace-ep/%s", c->who);
	if (IS_ERR(c->task))
		goto free_rx;
	get_task_struct(c->task);
	mutex_lock(&ep_lock);
	list_add(&c->node, &ep_conns);
	mutex_unlock(&ep_lock);
	atomic_inc(&ep_stats.accepted);
	wake_up_process(c->task);
	return;

free_rx:
	kvfree(c->rx);
put:
	ep_slot_put();
free:
	kfree(c);
refuse:
	atomic_inc(&ep_stats.refused);
	sock_release(sock);
}

static int ep_accept_thread(void *arg)
{
	struct ep_listener *l = arg;
	struct socket *sock;
	int ret;

	while (!kthread_should_stop()) {
		ep_reap(false);
		ret = kernel_accept(l->sock, &sock, 0);
		if (ret == -EAGAIN || ret == -EINTR)
			continue;		/* timeout: check for stop */
		if (ret) {
			schedule_timeout_interruptible(HZ / 10);
			continue;
		}
		ep_reap(false);		/* those that ended while we waited */
		ep_start(sock, l->tcp);
	}
	return 0;
}

/* ---- endpoint_stats ---- */

static int ep_stats_get(char *buf, const struct kernel_param *kp)
{
	struct ep_machine *m;
	int n, i;

	n = sysfs_emit(buf, "listening %d\naccepted %d\nrefused %d\nhellos %d\npings %d\nchunks %d\ngoodbyes %d\ntruncated %d\nidle %d\nduplicate %d\ntable_full %d\nauth_failed %d\ncid_refused %d\nidentity_refused %d\npeer_full %d\ncontrols %d\nstopped %d\nchunks_unbound %d\npackets_dropped %d\n",
		       ep_nr_listeners, atomic_read(&ep_stats.accepted),
		       atomic_read(&ep_stats.refused),
		       atomic_read(&ep_stats.hellos),
		       atomic_read(&ep_stats.pings),
		       atomic_read(&ep_stats.chunks),
		       atomic_read(&ep_stats.goodbyes),
		       atomic_read(&ep_stats.truncated),
		       atomic_read(&ep_stats.idle),
		       atomic_read(&ep_stats.duplicate),
		       atomic_read(&ep_stats.table_full),
		       atomic_read(&ep_stats.auth_failed),
		       atomic_read(&ep_stats.cid_refused),
		       atomic_read(&ep_stats.identity_refused),
		       atomic_read(&ep_stats.peer_full),
		       atomic_read(&ep_stats.controls),
		       atomic_read(&ep_stats.stopped),
		       atomic_read(&ep_stats.chunks_unbound),
		       atomic_read(&ep_stats.packets_dropped));
	n += sysfs_emit_at(buf, n, "peer_limit %d\nhandshake_timeout %d\nsend_timeout %d\n",
			   atomic_read(&ep_stats.peer_limit),
			   atomic_read(&ep_stats.handshake_timeout),
			   atomic_read(&ep_stats.send_timeout));
	for (i = 1; i < FRAME_E_NR; i++)
		n += sysfs_emit_at(buf, n, "bad_%s %d\n", ep_reason[i],
				   atomic_read(&ep_stats.bad[i]));
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

static const struct kernel_param_ops ep_stats_ops = {
	.get = ep_stats_get,
};
/* Guests' names, kernels and CIDs: for root only. */
module_param_cb(endpoint_stats, &ep_stats_ops, NULL, 0400);
MODULE_PARM_DESC(endpoint_stats, "endpoint counters and machines (read only)");

/* ---- init/exit ---- */

static int ep_listen(const char *spec)
{
	struct ep_listener *l = &ep_listeners[ep_nr_listeners];
	struct pbt_addr a;
	int ret;

	if (ep_nr_listeners == EP_LISTENERS || pbt_addr_parse(spec, &a) ||
	    (a.family == AF_VSOCK && a.vm.svm_cid != VMADDR_CID_ANY)) {
		pr_err("pbtrace: endpoint: \"%s\": want vsock:PORT or tcp:[ADDR:]PORT, at most one of each\n",
		       spec);
		return -EINVAL;
	}
	l->tcp = a.family == AF_INET;
	if (l->tcp && !pbt_have_key() && !ep_nr_keyed) {
		pr_err("pbtrace: endpoint: %s: TCP needs relay_key=HEX or endpoint_keys=NAME:HEX, the keys its relays have\n",
		       spec);
		return -EINVAL;
	}
	ret = pbt_sock_open(&a, &l->sock);
	if (ret)
		return ret;
	if (l->tcp)
		sock_set_reuseaddr(l->sock->sk);
	ret = kernel_bind(l->sock, (struct pbt_sockaddr *)&a.vm, a.len);
	if (!ret)
		ret = kernel_listen(l->sock, EP_MAX_CONNS);
	if (ret) {
		pr_err("pbtrace: endpoint: %s: cannot listen (%d)\n", spec, ret);
		goto err;
	}
	l->task = kthread_run(ep_accept_thread, l, "pbtrace-ep-%s",
			      l->tcp ? "tcp" : "vsock");
	if (IS_ERR(l->task)) {
		ret = PTR_ERR(l->task);
		goto err;
	}
	ep_nr_listeners++;
	return 0;
err:
	sock_release(l->sock);
	memset(l, 0, sizeof(*l));
	return ret;
}

static int ep_parse_cids(void)
{
	const char *p = endpoint_cids;
	unsigned int cid;
	int n;

	while (p && *p) {
		if (ep_nr_cids == EP_MAX_CIDS ||
		    sscanf(p, "%u%n", &cid, &n) != 1 || (p[n] && p[n] != ','))
			goto bad;
		ep_cids[ep_nr_cids++] = cid;
		p += n + !!p[n];
	}
	return 0;
bad:
	pr_err("pbtrace: endpoint_cids=%s: want up to %d CIDs, comma-separated\n",
	       endpoint_cids, EP_MAX_CIDS);
	return -EINVAL;
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

int pbt_endpoint_init(void)
{
	char spec[64];
	const char *p;
	size_t n;
	int ret;

	if (!endpoint || !*endpoint)
		return 0;
	if (endpoint_ping_ms < 100 || endpoint_ping_ms > 10000) {
		pr_err("pbtrace: endpoint_ping_ms=%u: want 100..10000 (a relay silent for %u s is dropped)\n",
		       endpoint_ping_ms, EP_IDLE_SECS);
		return -EINVAL;
	}
	ret = pbt_key_init();
	if (!ret)
		ret = ep_parse_cids();
	if (!ret)
		ret = ep_parse_machines();
	if (!ret)
		ret = ep_parse_keys();
	if (ret)
		return ret;
	for (p = endpoint; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		if (n >= sizeof(spec)) {
			ret = -EINVAL;
			break;
		}
		memcpy(spec, p, n);
		spec[n] = 0;
		ret = ep_listen(spec);
		if (ret)
			break;
	}
	if (ret)
		pbt_endpoint_exit();
	return ret;
}

void pbt_endpoint_exit(void)
{
	int i;

	for (i = 0; i < ep_nr_listeners; i++)
		kthread_stop(ep_listeners[i].task);
	ep_reap(true);
	for (i = 0; i < ep_nr_listeners; i++)
		sock_release(ep_listeners[i].sock);
	memset(ep_listeners, 0, sizeof(ep_listeners));
	ep_nr_listeners = 0;
	memzero_explicit(ep_keyed, sizeof(ep_keyed));
}
