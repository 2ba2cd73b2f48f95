/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The relay's files (the guest's side of kmod/relay/) and what they
 * share. Calls go down only:
 *
 *   relay.c          module parameters, the connection's thread: connect
 *                    with backoff, HELLO/AUTH, pings, frames in
 *   relay_session.c  the local session the host asked for: CONTROL,
 *                    chunks out, STOPPED
 *   relay_send.c     one frame out, whole, within the host's deadline
 *
 * Everything here belongs to the one relay thread.
 */
#ifndef _PBTRACE_RELAY_CONN_H
#define _PBTRACE_RELAY_CONN_H

#include <linux/types.h>

#include "relay.h"
#include "core/frame.h"
#include "pbtrace.h"

#define HELLO_RAW_MAX	400		/* largest HELLO payload is 389 */
#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	30000
#define HOST_TIMEOUT_MS	10000		/* no WELCOME or PONG: host is dead */
/*
 * Ping rounds back to back when a session starts, before its first chunk:
 * the host places the session's events by the window all of them allow
 * (one round under load can take a second), so it needs a good few.
 */
#define PING_BURST	16
#define RX_SIZE		(FRAME_HDR_LEN + 16 + FRAME_EVENTS_MAX + FRAME_TAG_LEN)
/*
 * While a session records, the receive wait is short so sealed chunks go
 * out promptly; a busy drain hands back to the receive loop every few
 * chunks so CONTROL and PONG are never starved.
 */
#define RX_BUSY_TIMEO	(HZ / 20)
#define DRAIN_BUDGET	8
#define FLUSH_PERIOD	HZ
#define EVENT_NAME_MAX	64

/* What relay_stats shows; written by the relay thread only. */
struct relay_counters {
	u32 connects, welcomes, pongs, controls, errors;
	u32 machine_id;
	u32 session, local_session;	/* host's id and ours, 0: none */
	u32 sessions, start_failed, stopped_sent, events_skipped;
	u64 chunks_sent, bytes_sent;
	u64 tag_ns;			/* tagging CHUNKs (TCP), in all */
	u32 bad_tags;			/* host frames with a wrong tag */
	u32 send_timeout;		/* frames not taken in HOST_TIMEOUT_MS */
	u32 backoff_ms;			/* before the next connect */
	u64 rtt_ns;			/* last ping round trip */
	int last_error;			/* -errno or -FRAME_E_x */
	bool connected;
};

extern struct relay_counters rst;

/* The local session recording for the host; s is NULL when none runs. */
struct relay_sess {
	struct pbt_session *s;		/* our reference */
	struct pbt_buffer *b;		/* s->buffers[0] */
	u32 id;				/* local session id */
	u32 host_id;			/* the host's, from CONTROL start */
	u32 *cpu_seq;			/* next CHUNK sequence, per CPU */
	u64 chunks;			/* CHUNK frames sent */
	unsigned long next_flush;	/* jiffies */
};

struct relay_conn {
	struct socket *sock;
	struct frame_parser ps;
	u32 tx_seq;
	u32 ping_id;
	u32 ping_period_ms;
	unsigned long next_ping;	/* jiffies */
	u32 burst;			/* pings still to send at once */
	unsigned long deadline;		/* jiffies: WELCOME or PONG by then */
	u64 ping_sent;			/* BOOTTIME of the outstanding PING */
	u32 prev_id;			/* last PONG, reported in the next PING */
	u64 prev_recv[FRAME_NR_CLOCKS];
	bool welcomed;			/* this connection got WELCOME */
	int bad;			/* FRAME_E_x the parser refused with */
	u8 nonce[FRAME_NONCE_LEN];	/* ours, in HELLO */
	u8 hello[HELLO_RAW_MAX];	/* HELLO payload, for AUTH */
	size_t hello_len;
	u8 *rx;
	size_t have;
	struct relay_sess sess;
	u32 failed_id;			/* host session we could not start */
	struct pbt_tags tags;		/* TCP, after AUTH */
	u8 tx[FRAME_HDR_LEN + 512 + FRAME_TAG_LEN];
};

/* relay.c */
long relay_idle_timeo(const struct relay_conn *c);
/* Module unload has begun (or kthread_stop()): give up at once. */
bool relay_stopping(void);

/* relay_session.c */
int relay_control(struct relay_conn *c, const struct frame_control *ctl);
int relay_stream(struct relay_conn *c);
void relay_end(struct relay_conn *c);

/* relay_send.c */
int relay_sendv(struct relay_conn *c, struct kvec *vec, size_t nr,
		size_t len);
int relay_send(struct relay_conn *c, struct frame *f);

#endif /* _PBTRACE_RELAY_CONN_H */
