// SPDX-License-Identifier: GPL-2.0
/*
 * endpoint_stats: the endpoint's counters, for root only. The machine
 * table itself is PBTRACE_CMD_GET_MACHINES' (tracectl machines): a sysfs
 * file is one page, and 1,000 machines take a hundred.
 */
#include <linux/module.h>

#include "endpoint.h"

struct ep_counters ep_stats;

static const char * const ep_reason[FRAME_E_NR] = {
	[FRAME_E_MAGIC] = "magic", [FRAME_E_VERSION] = "version",
	[FRAME_E_TYPE] = "type", [FRAME_E_FLAGS] = "flags",
	[FRAME_E_LENGTH] = "length", [FRAME_E_SEQ] = "seq",
	[FRAME_E_DIRECTION] = "direction", [FRAME_E_ORDER] = "order",
	[FRAME_E_PONG] = "pong", [FRAME_E_PAYLOAD] = "payload",
	[FRAME_E_CHUNK] = "chunk", [FRAME_E_TRUSTED] = "trusted",
	[FRAME_E_CLOSED] = "closed", [FRAME_E_TAG] = "tag",
};

static int ep_stats_get(char *buf, const struct kernel_param *kp)
{
	u32 all, online;
	int n, i;

	n = sysfs_emit(buf, "listening %d\naccepted %d\nrefused %d\nhellos %d\npings %d\nchunks %d\ngoodbyes %d\ntruncated %d\nidle %d\nduplicate %d\ntable_full %d\nauth_failed %d\ncid_refused %d\nidentity_refused %d\npeer_full %d\ncontrols %d\nstopped %d\nchunks_unbound %d\npackets_dropped %d\n",
		       ep_listening(), atomic_read(&ep_stats.accepted),
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
	n = ep_pending_stats(buf, n);
	n += sysfs_emit_at(buf, n, "handshake_timeout %d\nsend_timeout %d\n",
			   atomic_read(&ep_stats.handshake_timeout),
			   atomic_read(&ep_stats.send_timeout));
	ep_machines_count(&all, &online);
	n += sysfs_emit_at(buf, n, "machines %u\nmachines_online %u\nrenamed %d\nforgotten %d\nnames %u\nnames_loaded %d\nevicted %d\n",
			   all, online, atomic_read(&ep_stats.renamed),
			   atomic_read(&ep_stats.forgotten), ep_names_count(),
			   atomic_read(&ep_stats.names_loaded),
			   atomic_read(&ep_stats.evicted));
	for (i = 1; i < FRAME_E_NR; i++)
		n += sysfs_emit_at(buf, n, "bad_%s %d\n", ep_reason[i],
				   atomic_read(&ep_stats.bad[i]));
	return n;
}

static const struct kernel_param_ops ep_stats_ops = {
	.get = ep_stats_get,
};
module_param_cb(endpoint_stats, &ep_stats_ops, NULL, 0400);
MODULE_PARM_DESC(endpoint_stats, "endpoint counters (read only; the machines: tracectl machines)");
