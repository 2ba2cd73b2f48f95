/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The endpoint's files (the host's side of kmod/relay/) and what they
 * share. Calls go down only:
 *
 *   admit.c     listeners, who may connect, a connection's start and end
 *   pending.c   the pending pools: connections in their handshake, and
 *               which one a newer one displaces
 *   receive.c   one connection's thread: frames in, deadlines, dispatch
 *   hello.c     HELLO and AUTH: who the relay is, and its machine
 *   bind.c      the session a machine records for: CONTROL, CHUNK, STOPPED
 *   clock.c     PING and PONG: ping rounds, the clock offset's window
 *   machines.c  the machine table: who each relay is, ids, names
 *   names.c     the names table: names and keys the host gives its
 *               guests (module parameters, and loaded at run time)
 *   send.c      one frame out on a connection
 *   stats.c     endpoint_stats
 *
 * ep_lock guards the connection list (admit.c), the machine table
 * (machines.c) and the names table (names.c); a connection's own fields
 * belong to its thread.
 */
#ifndef _PBTRACE_ENDPOINT_H
#define _PBTRACE_ENDPOINT_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/atomic.h>

#include "relay.h"
#include "core/frame.h"
#include "pbtrace.h"

#define EP_MAX_CONNS	1024	/* endpoint_max_conns' default: admitted */
#define EP_PENDING	64	/* endpoint_pending's default, per listener */
#define EP_TCP_BACKLOG	4096	/* silent connections deferred (admit.c) */
#define EP_HELLO_SECS	10	/* HELLO (and AUTH) done by then, or closed */
#define EP_IDLE_SECS	30	/* above the longest ping period */
#define EP_RX_SIZE	(FRAME_HDR_LEN + FRAME_MAX_PAYLOAD + FRAME_TAG_LEN)
/* Until it proved itself: HELLO (the largest, 389 bytes), AUTH, PINGs. */
#define EP_PENDING_RX	1024
#define EP_LISTENERS	2
#define EP_MAX_CIDS	16
#define EP_HELLO_MAX	400		/* largest HELLO payload is 389 */
#define EP_POLL_JIFFIES	(HZ / 10)	/* how soon a session change is seen */
#define EP_DONE_JIFFIES	(2 * HZ)	/* a stopped guest's last chunks */
#define EP_LATE_JIFFIES	(10 * HZ)	/* then what it still sends is counted */
#define EP_SCRATCH	PBTRACE_REMOTE_READ_MIN	/* one stamped record */
#define EP_PEER_MACHINES 8		/* machine slots one peer may hold */
/*
 * endpoint_max_machines' default: every guest of a 1,024-guest host may
 * hold its EP_PEER_MACHINES slots (its boots a live session still holds).
 */
#define EP_MAX_MACHINES	(1024 * EP_PEER_MACHINES)
#define EP_FORGET_SECS	3600		/* endpoint_forget_secs' default */
/* Who a machine belongs to: the kind of peer, then its CID, IPv4 or key. */
#define EP_PEER_CID(cid)	(1ULL << 32 | (cid))
#define EP_PEER_ADDR(ip)	(2ULL << 32 | (ip))
#define EP_PEER_KEY(serial)	(3ULL << 32 | (serial))
#define EP_PEER_KIND(peer)	((peer) >> 32)

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

/* One machine of the table, allocated when its peer first needs it. */
struct ep_machine {
	u32 id;
	bool online;
	bool tcp;
	bool evict;			/* the names table took its name: close */
	u32 flags;			/* PBTRACE_EPM_* */
	u64 peer;			/* EP_PEER_x: whose it is; 0 once retired */
	char peer_str[PBT_PEER_MAX];	/* "cid 5", "tcp 10.0.2.2 key" */
	struct hlist_node by_peer;	/* ep_peers, unless retired */
	struct hlist_node by_name;	/* ep_online_names while online */
	struct list_head offline;	/* ep_offline while offline, oldest first */
	u64 last_seen;			/* jiffies64 it went offline */
	u8 hint[FRAME_HINT_LEN];
	char claimed[FRAME_STR_MAX + 1]; /* the name its HELLO says */
	struct ep_identity ident;	/* its relay's last admitted HELLO, with
					 * the name it has here
					 */
	u32 cid;
	u32 connects;
	u64 pings;
	u64 rtt_ns;			/* last complete ping round */
	s64 offset_ns;			/* host BOOTTIME - guest BOOTTIME */
};

enum ep_conn_state {
	EP_CONN_GONE,			/* on no count (yet, or any more) */
	EP_CONN_PENDING,		/* in its listener's pool */
	EP_CONN_ADMITTED,		/* proved itself */
	EP_CONN_EVICTED,		/* displaced by a newer one: closing */
};

struct ep_conn {
	struct list_head node;		/* ep_conns, under ep_lock */
	struct list_head pending;	/* its pool's, oldest first; ep_lock */
	enum ep_conn_state state;	/* under ep_lock */
	u64 pending_peer;		/* whose share it takes in the pool */
	bool welcomed;			/* TCP: HELLO answered (READ_ONCE) */
	struct task_struct *task;
	struct socket *sock;
	bool done;			/* thread finished; under ep_lock */
	bool tcp;
	char who[48];			/* "cid 3" or "10.0.2.2:40000" */
	u32 cid;
	u32 addr;			/* TCP: the peer's IPv4, host order */
	/* Who it is, from ep_identify() at HELLO. */
	u64 peer;			/* EP_PEER_x */
	char peer_str[PBT_PEER_MAX];
	u64 names_gen;			/* the names table it was identified by */
	bool pinned;			/* its name is the names table's */
	bool own_key;			/* TCP: the names table's key for it */
	/* TCP: the key its AUTH must prove; a copy, zeroed at the end. */
	struct pbt_key key;
	char claimed[FRAME_STR_MAX + 1]; /* the name its HELLO says */
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
	size_t rx_size;			/* EP_PENDING_RX; EP_RX_SIZE once authed
					 * and a frame needs more
					 */
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

/* What endpoint_stats counts (stats.c). */
struct ep_counters {
	atomic_t accepted, refused, hellos, pings, chunks, goodbyes;
	atomic_t truncated, idle, duplicate, table_full, auth_failed;
	atomic_t cid_refused, identity_refused, peer_full;
	atomic_t controls, stopped, chunks_unbound, packets_dropped;
	atomic_t handshake_timeout, send_timeout, admitted, conns_full;
	atomic_t renamed, evicted, forgotten, names_loaded;
	atomic_t bad[FRAME_E_NR];
};

extern struct ep_counters ep_stats;

/* A listener's pool of connections in their handshake (pending.c). */
struct ep_pool {
	struct list_head conns;		/* oldest first */
	unsigned int nr;
	atomic_t full;			/* the oldest closed: the pool was full */
	atomic_t peer_limit;		/* the peer's oldest: its share was */
};

extern struct ep_pool ep_pools[EP_LISTENERS];
extern unsigned int endpoint_pending;

extern struct mutex ep_lock;
extern unsigned int endpoint_ping_ms;

/* machines.c */
void ep_copy_str(char *dst, const struct frame_str *s);
int ep_identify(struct ep_conn *c);
u32 ep_machine_peek(struct ep_conn *c);
int ep_machine_reserve(struct ep_conn *c, const u8 *hint);
void ep_machine_commit(struct ep_conn *c);
void ep_machine_release(struct ep_conn *c);
bool ep_machine_evicted(const struct ep_conn *c);
u32 ep_machines_recheck(void);
void ep_machines_count(u32 *all, u32 *online);
void ep_machines_exit(void);

/* names.c: under ep_lock */
enum ep_name_kind { EP_NAME_CID, EP_NAME_KEY };

struct ep_name {
	char name[PBTRACE_NAME_MAX];
	u32 cid;			/* EP_NAME_CID */
	u32 serial;			/* EP_NAME_KEY: its peer, EP_PEER_KEY() */
	u32 line;			/* of the file it came from; 0: a parameter */
	enum ep_name_kind kind;
	struct pbt_key key;		/* EP_NAME_KEY */
};

extern u64 ep_names_gen;		/* bumped by every change */
const struct ep_name *ep_name_find(const char *name);
const struct ep_name *ep_cid_find(u32 cid);
u32 ep_names_count(void);
int ep_names_init(void);		/* endpoint_machines, endpoint_keys */
void ep_names_exit(void);

/* send.c */
int ep_send(struct ep_conn *c, struct frame *f);

/* clock.c */
void ep_round_measure(const u64 r[][FRAME_NR_CLOCKS], u64 *rtt,
		      s64 *offset);
void ep_clock_round(struct ep_conn *c);
s64 ep_sync_host(const struct ep_conn *c, u64 *host);
int ep_ping(struct ep_conn *c, const struct frame_ping *p, const u64 *recv);

/* bind.c */
int ep_sync(struct ep_conn *c);
bool ep_sync_due(struct ep_conn *c);
void ep_unbind(struct ep_conn *c, bool lost);
void ep_forget_late(struct ep_conn *c);
void ep_chunk(struct ep_conn *c, const struct frame_chunk *ch);
void ep_stopped(struct ep_conn *c, const struct frame_stopped *st);

/* hello.c */
int ep_hello(struct ep_conn *c, const struct frame_hello *h,
	     const u8 *raw, size_t raw_len);
int ep_auth(struct ep_conn *c, const struct frame_auth *a);

/* receive.c */
int ep_conn_thread(void *arg);

/* pending.c: ep_pending_forget() under ep_lock */
struct ep_conn *ep_pending_add(struct ep_conn *c);
int ep_pending_admit(struct ep_conn *c);
void ep_pending_forget(struct ep_conn *c);
int ep_pending_init(void);
int ep_pending_stats(char *buf, int n);

/* stats.c */
int ep_listening(void);

#endif /* _PBTRACE_ENDPOINT_H */
