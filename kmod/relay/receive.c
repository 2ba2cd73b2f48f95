// SPDX-License-Identifier: GPL-2.0
/*
 * One endpoint connection's thread. Every byte goes through the core
 * frame parser; a frame it refuses closes that connection and is counted
 * by reason. A connection not through its handshake in EP_HELLO_SECS, or
 * without a whole frame for EP_IDLE_SECS, is closed, so a slow or hostile
 * guest only ever blocks itself, never the host's tracing or another
 * guest.
 */
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/vmalloc.h>
#include <net/sock.h>

#include "endpoint.h"

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

/*
 * Proved itself, and a frame fills the small buffer: the one a whole chunk
 * fits in, with what it holds. A guest that only pings never needs it.
 * vmalloc: its 65 pages are what it takes, where kmalloc would round
 * 256 KiB + 40 bytes up to 512 KiB.
 */
static int ep_rx_grow(struct ep_conn *c)
{
	u8 *rx = vmalloc(EP_RX_SIZE);

	if (!rx)
		return -ENOMEM;
	memcpy(rx, c->rx, c->have);
	kvfree(c->rx);
	c->rx = rx;
	c->rx_size = EP_RX_SIZE;
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
		if (c->have == c->rx_size) {
			/* No handshake frame is that long; a chunk may be. */
			if (!c->authed || c->rx_size >= EP_RX_SIZE) {
				c->bad = FRAME_E_LENGTH;
				return -EBADMSG;
			}
			if (ep_rx_grow(c))
				return -ENOMEM;
		}
		vec.iov_base = c->rx + c->have;
		vec.iov_len = c->rx_size - c->have;
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

int ep_conn_thread(void *arg)
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
	/* After its STOPPED the guest's part is whole: leaving loses nothing. */
	ep_unbind(c, !c->stopped_rcvd);
	ep_forget_late(c);
	ep_machine_release(c);
	mutex_lock(&ep_lock);
	c->done = true;
	mutex_unlock(&ep_lock);
	return 0;
}
