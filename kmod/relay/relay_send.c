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
 * Send all of @vec. The socket's 1 s timeout only lets us notice module
 * unload: a host slow to read gets HOST_TIMEOUT_MS before we give up, as
 * for a missing PONG. A frame is never cut short while the link lives.
 */
int relay_sendv(struct relay_conn *c, struct kvec *vec, size_t nr,
		       size_t len)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(HOST_TIMEOUT_MS);
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	size_t done;
	int ret;

	while (len) {
		ret = kernel_sendmsg(c->sock, &msg, vec, nr, len);
		if (ret == -EAGAIN || ret == -EINTR) {
			if (kthread_should_stop())
				return -EINTR;
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
			continue;
		}
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
