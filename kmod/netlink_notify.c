// SPDX-License-Identifier: GPL-2.0
/*
 * What traced hears, and how the module knows it is there: the "sessions"
 * multicast (session changes, which session.c reports through
 * pbt_session_observe(); TRIGGER; DAEMON_GONE) and the daemon's socket,
 * set by REGISTER_DAEMON and cleared by a netlink notifier when it closes.
 * The socket is the one piece of state the family keeps of its own.
 */

#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "pbtrace.h"
#include "compat.h"
#include "netlink.h"
#include "relay/relay.h"

/* The daemon's socket: set by REGISTER_DAEMON, cleared when it closes. */
static DEFINE_SPINLOCK(daemon_lock);
static u32 daemon_portid;
static u32 daemon_pid;

u32 pbt_nl_current_daemon_pid(void)
{
	u32 pid;

	spin_lock_bh(&daemon_lock);
	pid = daemon_pid;
	spin_unlock_bh(&daemon_lock);
	return pid;
}

static void multicast(struct sk_buff *msg)
{
	/* -ESRCH only means nobody listens: not an error for the sender. */
	genlmsg_multicast(&pbt_family, msg, 0, 0, GFP_KERNEL);
}

static struct sk_buff *notify_msg(u8 cmd, void **hdr)
{
	struct sk_buff *msg;

	if (!READ_ONCE(pbt_family_registered))
		return NULL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		pr_warn_ratelimited("pbtrace: notification %u lost: out of memory\n", cmd);
		return NULL;
	}
	*hdr = genlmsg_put(msg, 0, 0, &pbt_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/*
 * A session change (session.c calls it through pbt_session_observe()), or
 * DAEMON_GONE with no session: DESTROY's carries why the session ended.
 */
void pbt_netlink_notify(u8 cmd, u32 session_id, const char *error)
{
	struct sk_buff *msg;
	void *hdr;

	msg = notify_msg(cmd, &hdr);
	if (!msg)
		return;
	if ((session_id && nla_put_u32(msg, PBTRACE_A_SESSION_ID, session_id)) ||
	    (error && nla_put_string(msg, PBTRACE_A_SESSION_ERROR, error))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	multicast(msg);
}

int pbt_nl_trigger(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct nlattr *attr;
	void *hdr;

	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_TRIGGER_NAME)) {
		NL_SET_ERR_MSG(info->extack, "trigger needs a name");
		return -EINVAL;
	}
	attr = info->attrs[PBTRACE_A_TRIGGER_NAME];
	if (!*(char *)nla_data(attr)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "trigger name must not be empty");
		return -EINVAL;
	}
	msg = notify_msg(PBTRACE_CMD_TRIGGER, &hdr);
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, PBTRACE_A_TRIGGER_NAME, nla_data(attr))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	multicast(msg);
	return 0;
}

int pbt_nl_register_daemon(struct sk_buff *skb, struct genl_info *info)
{
	int ret = 0;

	spin_lock_bh(&daemon_lock);
	if (daemon_portid && daemon_portid != info->snd_portid) {
		NL_SET_ERR_MSG(info->extack, "another traced is registered: stop it first");
		ret = -EBUSY;
	} else {
		daemon_portid = info->snd_portid;
		daemon_pid = task_tgid_nr(current);
	}
	spin_unlock_bh(&daemon_lock);
	return ret;
}

int pbt_nl_get_status(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &pbt_family, 0, PBTRACE_CMD_GET_STATUS);
	if (!hdr || nla_put_u32(msg, PBTRACE_A_DAEMON_PID, pbt_nl_current_daemon_pid())) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static void daemon_gone_work_fn(struct work_struct *work)
{
	pbt_netlink_notify(PBTRACE_CMD_DAEMON_GONE, 0, NULL);
}

DECLARE_WORK(pbt_daemon_gone_work, daemon_gone_work_fn);

/*
 * Called when any netlink socket is released. Sessions and buffers stay:
 * a restarted traced reattaches; the multicast lets others know meanwhile.
 */
static int pbt_netlink_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct netlink_notify *n = ptr;
	bool gone = false;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	spin_lock_bh(&daemon_lock);
	if (daemon_portid && n->portid == daemon_portid) {
		daemon_portid = 0;
		daemon_pid = 0;
		gone = true;
	}
	spin_unlock_bh(&daemon_lock);
	/* Notifier context: leave the allocation and multicast to a worker. */
	if (gone)
		schedule_work(&pbt_daemon_gone_work);
	pbt_names_socket_closed(n->portid);
	return NOTIFY_DONE;
}

struct notifier_block pbt_netlink_notifier = {
	.notifier_call = pbt_netlink_event,
};
