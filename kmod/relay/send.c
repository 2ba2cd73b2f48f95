// SPDX-License-Identifier: GPL-2.0
/*
 * One frame out on an endpoint connection: numbered, tagged once AUTH is
 * done (TCP), sent whole or not at all (pbt_send_all()'s deadline).
 */
#include <linux/kernel.h>

#include "endpoint.h"

int ep_send(struct ep_conn *c, struct frame *f)
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
