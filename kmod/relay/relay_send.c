// SPDX-License-Identifier: GPL-2.0
/*
 * One frame out from the relay: numbered, tagged after AUTH (TCP), sent
 * whole within the host's deadline.
 */
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/jiffies.h>

#include "relay_conn.h"

/*
 * Send all of @vec within HOST_TIMEOUT_MS, as for a missing PONG. Each
 * kernel_sendmsg() waits at most the socket's 1 s timeout, but a host that
 * takes a few bytes a second (a tiny receive window, vsock credit a byte
 * at a time) makes every one of them return a little progress: so the
 * deadline and the stop request are checked on every pass, not only when
 * a call took nothing. A frame is never cut short while the link lives:
 * a frame given up on closes the connection.
 */
int relay_sendv(struct relay_conn *c, struct kvec *vec, size_t nr,
		size_t len)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(HOST_TIMEOUT_MS);
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	size_t done, total = len;
	int ret;

	while (len) {
		if (relay_stopping())
			return -ESHUTDOWN;
		if (time_after(jiffies, deadline)) {
			rst.send_timeout++;
			pr_info_ratelimited("pbtrace: relay: host has taken %zu of a %zu-byte frame in %d s, closing\n",
					    total - len, total,
					    HOST_TIMEOUT_MS / 1000);
			return -ETIMEDOUT;
		}
		ret = kernel_sendmsg(c->sock, &msg, vec, nr, len);
		if (ret == -EAGAIN || ret == -EINTR)
			continue;
		if (ret <= 0)
			return ret ? ret : -EPIPE;
		len -= ret;
		for (done = ret; nr && done >= vec->iov_len; vec++, nr--)
			done -= vec->iov_len;
		if (nr) {
			vec->iov_base += done;
			vec->iov_len -= done;
		}
	}
	return 0;
}

int relay_send(struct relay_conn *c, struct frame *f)
{
	struct kvec vec;
	size_t n;

	n = pbt_frame_out(&c->ps, &c->tx_seq, c->tx,
			  sizeof(c->tx) - FRAME_TAG_LEN, f);
	if (!n)
		return -EINVAL;
	if (f->type == FRAME_HELLO) {
		c->hello_len = n - FRAME_HDR_LEN;
		memcpy(c->hello, c->tx + FRAME_HDR_LEN, c->hello_len);
	}
	if (c->tags.tx) {
		n = pbt_tag_frame(c->tags.tx, c->tx, n);
		if (!n)
			return -EINVAL;
	}
	vec.iov_base = c->tx;
	vec.iov_len = n;
	return relay_sendv(c, &vec, 1, n);
}
