// SPDX-License-Identifier: GPL-2.0
/*
 * The commands that change a session: NEW_SESSION, SET_SESSION,
 * ADD_TRACEPOINTS, and START, STOP, FLUSH and DESTROY_SESSION. Each parses
 * its request (netlink_parse.c), applies a member's limits
 * (netlink_access.c) and hands the rest to session.c, which multicasts the
 * change through its observer; errors get an extack that says what to do.
 */

#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "pbtrace.h"
#include "compat.h"
#include "netlink.h"

int pbt_nl_new_session(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session_params *p;
	struct sk_buff *reply;
	void *hdr;
	u32 id;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	reply = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!p || !reply) {
		ret = -ENOMEM;
		goto out;
	}
	pbt_nl_who_asks(skb, p);
	ret = pbt_nl_parse_session(info, p);
	if (!ret)
		ret = pbt_nl_member_limits(skb, info, p);
	if (ret)
		goto out;
	p->owner_uid = current_euid();
	p->owner_gid = current_egid();
	ret = pbt_session_new(p, &id, info->extack);
	if (ret)
		goto out;
	hdr = genlmsg_put_reply(reply, info, &pbt_family, 0,
				PBTRACE_CMD_NEW_SESSION);
	if (!hdr || nla_put_u32(reply, PBTRACE_A_SESSION_ID, id)) {
		pbt_session_destroy(id, NULL);
		ret = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(reply, hdr);
	kfree(p);
	return genlmsg_reply(reply, info);

out:
	if (p)
		pbt_params_free(p);
	kfree(p);
	nlmsg_free(reply);
	return ret;
}

/* The PBTRACE_A_SESSION_ID a command needs. */
static int session_id(struct genl_info *info, u32 *id)
{
	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_SESSION_ID)) {
		NL_SET_ERR_MSG(info->extack, "needs a session id");
		return -EINVAL;
	}
	*id = nla_get_u32(info->attrs[PBTRACE_A_SESSION_ID]);
	return 0;
}

/* SET_SESSION: a CONFIGURED session's config, output and/or buffers. */
int pbt_nl_set_session(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session_params *p;
	struct pbt_session *s;
	unsigned int what;
	u32 id;
	int ret;

	ret = session_id(info, &id);
	if (ret)
		return ret;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	pbt_nl_who_asks(skb, p);
	ret = pbt_nl_parse_contents(info, p, &what);
	if (!ret && (what & PBT_SET_BUFFERS))
		ret = pbt_nl_member_limits(skb, info, p);
	if (!ret && !what) {
		NL_SET_ERR_MSG(info->extack, "nothing to change: give config, output and/or buffers");
		ret = -EINVAL;
	}
	/* The name is the session's identity: the same one may be repeated. */
	if (!ret && info->attrs[PBTRACE_A_SESSION_NAME]) {
		s = pbt_session_get(id);
		if (s && nla_strcmp(info->attrs[PBTRACE_A_SESSION_NAME],
				    s->params.name)) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[PBTRACE_A_SESSION_NAME],
					    "a session's name cannot change: create a new session instead");
			ret = -EINVAL;
		}
		pbt_session_put(s);
	}
	if (ret) {
		pbt_params_free(p);
		kfree(p);
		return ret;
	}
	ret = pbt_session_set(id, p, what, info->extack);
	kfree(p);
	return ret;
}

/* ADD_TRACEPOINTS: a piece of a session's tracepoints (pbt_session_add_tps). */
int pbt_nl_add_tps(struct sk_buff *skb, struct genl_info *info)
{
	struct pbt_session_params *who;
	struct pbt_buffer_params *bp;
	u32 id, index, total = 0;
	int ret;

	ret = session_id(info, &id);
	if (ret)
		return ret;
	if (GENL_REQ_ATTR_CHECK(info, PBTRACE_A_BUFFER_INDEX) ||
	    GENL_REQ_ATTR_CHECK(info, PBTRACE_A_BUFFER_TRACEPOINTS)) {
		NL_SET_ERR_MSG(info->extack, "add tracepoints needs a buffer index and tracepoints");
		return -EINVAL;
	}
	index = nla_get_u32(info->attrs[PBTRACE_A_BUFFER_INDEX]);
	who = kzalloc(sizeof(*who), GFP_KERNEL);
	bp = kzalloc(sizeof(*bp), GFP_KERNEL);
	if (!who || !bp) {
		ret = -ENOMEM;
		goto out;
	}
	pbt_nl_who_asks(skb, who);
	ret = pbt_tp_parse(info->attrs[PBTRACE_A_BUFFER_TRACEPOINTS], bp,
			   &total, who, info->extack);
	if (!ret)
		ret = pbt_session_add_tps(id, index, bp, info->extack);
out:
	if (bp)
		kvfree(bp->tps);
	if (who)
		put_cred(who->cred);
	kfree(bp);
	kfree(who);
	return ret;
}

static void explain_session_error(u8 cmd, int ret,
				  struct netlink_ext_ack *extack)
{
	if (extack->_msg)	/* said already (a tracepoint at START) */
		return;
	if (ret == -ENOENT)
		pbt_nl_no_session(extack);
	else if (cmd == PBTRACE_CMD_START_SESSION && ret == -EALREADY)
		NL_SET_ERR_MSG(extack, "session is already started");
	else if (cmd == PBTRACE_CMD_START_SESSION && ret == -EINVAL)
		NL_SET_ERR_MSG(extack, "a stopped session cannot start again: create a new one");
	else if (cmd == PBTRACE_CMD_START_SESSION)
		NL_SET_ERR_MSG(extack, "cannot register the tracepoint probes: see dmesg");
	else if (cmd == PBTRACE_CMD_STOP_SESSION && ret == -EALREADY)
		NL_SET_ERR_MSG(extack, "session is already stopped");
}

/* START, STOP, FLUSH, DESTROY: the same shape, one session id. */
int pbt_nl_session_op(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	u32 id;
	int ret;

	ret = session_id(info, &id);
	if (ret)
		return ret;
	switch (cmd) {
	case PBTRACE_CMD_START_SESSION:
		ret = pbt_session_start(id, info->extack);
		break;
	case PBTRACE_CMD_STOP_SESSION:
		ret = pbt_session_stop(id);
		break;
	case PBTRACE_CMD_FLUSH_SESSION:
		ret = pbt_session_flush(id);
		break;
	default:
		ret = pbt_session_destroy(id, info->attrs[PBTRACE_A_SESSION_ERROR] ?
					  nla_data(info->attrs[PBTRACE_A_SESSION_ERROR]) :
					  NULL);
		break;
	}
	if (ret)
		explain_session_error(cmd, ret, info->extack);
	return ret;
}
