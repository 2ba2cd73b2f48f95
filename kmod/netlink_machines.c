// SPDX-License-Identifier: GPL-2.0
/*
 * Relayed machines and the endpoint's names table: GET_SESSION_MACHINES
 * (the machines that recorded into a session, paged), GET_MACHINES and
 * GET_NAMES (root's dumps of the endpoint's tables), and LOAD_NAMES (a
 * piece of a new names table). The tables are remote.c's and the
 * endpoint's (kmod/relay/machines.c, names.c); this file puts them into
 * messages and parses the pieces.
 */

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "pbtrace.h"
#include "compat.h"
#include "netlink.h"
#include "relay/relay.h"

/*
 * GET_SESSION_MACHINES, paged: a session may have seen thousands of
 * machines, at about 200 bytes each. cb->args: [0] session id, [1] the
 * last machine id sent, [2] set once every one is.
 */
#define MACHINES_PER_MSG 128

static int put_session_machine(struct sk_buff *skb,
			       const struct pbt_machine_view *v)
{
	struct nlattr *m = nla_nest_start(skb, PBTRACE_A_MACHINE);

	if (!m)
		return -EMSGSIZE;
	if (nla_put_string(skb, PBTRACE_A_MACHINE_NAME, v->name) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_PEER, v->peer) ||
	    nla_put(skb, PBTRACE_A_MACHINE_STATS, sizeof(v->st), &v->st)) {
		nla_nest_cancel(skb, m);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, m);
	return 0;
}

/* One message of the session's machines after cb->args[1]. */
static int fill_session_machines(struct sk_buff *skb,
				 struct netlink_callback *cb,
				 struct pbt_session *s)
{
	struct pbt_machine_view v;
	struct nlattr *nest = NULL;
	u32 id = cb->args[1];
	bool more = true;
	void *hdr;
	int n = 0;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &pbt_family, NLM_F_MULTI,
			  PBTRACE_CMD_GET_SESSION_MACHINES);
	if (!hdr)
		return -EMSGSIZE;
	if (!nla_put_u32(skb, PBTRACE_A_SESSION_ID, s->id))
		nest = nla_nest_start(skb, PBTRACE_A_SESSION_MACHINES);
	if (!nest)
		goto full;
	while (n < MACHINES_PER_MSG) {
		more = pbt_remote_machine_next(s, &id, &v);
		if (!more || put_session_machine(skb, &v))
			break;
		cb->args[1] = id;
		n++;
	}
	if (!more)
		cb->args[2] = 1;	/* every machine is sent */
	if (!n)
		goto full;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
full:
	genlmsg_cancel(skb, hdr);
	return more ? -EMSGSIZE : 0;
}

int pbt_nl_session_machines_dump(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct pbt_session *s = pbt_nl_dump_session(cb);
	int ret = 0;

	if (!s)
		return -ENOENT;
	while (!ret && !cb->args[2])
		ret = fill_session_machines(skb, cb, s);
	pbt_session_put(s);
	/* A message that does not fit an empty skb would loop forever. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

/* GET_MACHINES and GET_NAMES show guests' names and CIDs: root's. */
int pbt_nl_endpoint_dump_start(struct netlink_callback *cb)
{
	cb->args[0] = 0;	/* the last machine id, the next name index */
	if (netlink_capable(cb->skb, CAP_SYS_ADMIN))
		return 0;
	NL_SET_ERR_MSG(cb->extack, "needs CAP_SYS_ADMIN: guests' names, kernels and CIDs are root's (docs/security.md)");
	return -EPERM;
}

static int put_endpoint_machine(struct sk_buff *skb,
				const struct pbt_endpoint_machine_view *v)
{
	if (nla_put(skb, PBTRACE_A_ENDPOINT_MACHINE, sizeof(v->m), &v->m) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_NAME, v->name) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_CLAIMED, v->claimed) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_PEER, v->peer) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_SYSNAME, v->sysname) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_RELEASE, v->release) ||
	    nla_put_string(skb, PBTRACE_A_MACHINE_ARCH, v->arch))
		return -EMSGSIZE;
	return 0;
}

int pbt_nl_machines_dump(struct sk_buff *skb,
			 struct netlink_callback *cb)
{
	struct pbt_endpoint_machine_view *v;
	u32 id = cb->args[0];
	void *hdr;

	v = kmalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	while (pbt_endpoint_machine_next(&id, v)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &pbt_family, NLM_F_MULTI,
				  PBTRACE_CMD_GET_MACHINES);
		if (!hdr)
			break;
		if (put_endpoint_machine(skb, v)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = id;
	}
	kfree(v);
	return skb->len;
}

/* The names table by index; a load meanwhile marks the dump interrupted. */
int pbt_nl_names_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct pbt_name_view v;
	void *hdr;
	u64 gen;

	for (; pbt_names_get(cb->args[0], &v, &gen); cb->args[0]++) {
		cb->seq = (u32)gen;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &pbt_family, NLM_F_MULTI,
				  PBTRACE_CMD_GET_NAMES);
		if (!hdr)
			break;
		genl_dump_check_consistent(cb, hdr);
		if (nla_put_string(skb, PBTRACE_A_MACHINE_NAME, v.name) ||
		    nla_put_u32(skb, PBTRACE_A_NAME_FLAGS, v.flags) ||
		    (!(v.flags & PBTRACE_NAME_KEYED) &&
		     nla_put_u32(skb, PBTRACE_A_NAME_CID, v.cid)) ||
		    (v.line && nla_put_u32(skb, PBTRACE_A_NAME_LINE, v.line))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	return skb->len;
}

/* One PBTRACE_A_NAME of a LOAD_NAMES request into @e (pointing into it). */
static int parse_name(struct nlattr *attr, struct pbt_name_entry *e,
		      struct netlink_ext_ack *extack)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	int ret;

	if (nla_type(attr) != PBTRACE_A_NAME) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "names must hold only PBTRACE_A_NAME nests");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, PBTRACE_A_MAX, attr, pbt_name_policy, extack);
	if (ret)
		return ret;
	if (NL_REQ_ATTR_CHECK(extack, attr, tb, PBTRACE_A_MACHINE_NAME)) {
		NL_SET_ERR_MSG(extack, "a names entry needs PBTRACE_A_MACHINE_NAME");
		return -EINVAL;
	}
	e->name = nla_data(tb[PBTRACE_A_MACHINE_NAME]);
	e->has_cid = tb[PBTRACE_A_NAME_CID];
	if (e->has_cid)
		e->cid = nla_get_u32(tb[PBTRACE_A_NAME_CID]);
	if (tb[PBTRACE_A_NAME_KEY]) {
		e->key = nla_data(tb[PBTRACE_A_NAME_KEY]);
		e->key_len = nla_len(tb[PBTRACE_A_NAME_KEY]);
	}
	if (tb[PBTRACE_A_NAME_LINE])
		e->line = nla_get_u32(tb[PBTRACE_A_NAME_LINE]);
	return 0;
}

/* The request's keys, once the table has its copies: not left in the skb. */
static void zero_keys(struct pbt_name_entry *e, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (e[i].key)
			memzero_explicit((void *)e[i].key, e[i].key_len);
}

static int put_load_reply(struct genl_info *info,
			  const struct pbt_names_result *res, bool commit)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	void *hdr;

	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &pbt_family, 0,
				PBTRACE_CMD_LOAD_NAMES);
	if (!hdr || nla_put_u32(msg, PBTRACE_A_LOAD_ID, res->id) ||
	    (commit && (nla_put_u32(msg, PBTRACE_A_NAMES_COUNT, res->count) ||
			nla_put_u32(msg, PBTRACE_A_NAMES_EVICTED, res->evicted)))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* LOAD_NAMES: a piece of a new names table, maybe its last (commit). */
int pbt_nl_load_names(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *names = info->attrs[PBTRACE_A_NAMES], *attr;
	bool commit = nla_get_flag(info->attrs[PBTRACE_A_LOAD_COMMIT]);
	struct pbt_names_result res = {};
	struct pbt_name_entry *e = NULL;
	u32 n = 0, cap = 0;
	int rem, ret = 0;

	if (info->attrs[PBTRACE_A_LOAD_ID])
		res.id = nla_get_u32(info->attrs[PBTRACE_A_LOAD_ID]);
	if (names) {
		nla_for_each_nested(attr, names, rem)
			cap++;
		e = kvcalloc(max(cap, 1u), sizeof(*e), GFP_KERNEL);
		if (!e)
			return -ENOMEM;
		nla_for_each_nested(attr, names, rem) {
			ret = parse_name(attr, &e[n], info->extack);
			if (ret)
				break;
			n++;
		}
	}
	if (!ret)
		ret = pbt_names_load(info->snd_portid, e, n, commit, &res,
				     info->extack);
	else		/* a bad piece ends its load, as in pbt_names_load */
		pbt_names_abort(info->snd_portid, res.id);
	zero_keys(e, n);
	kvfree(e);
	return ret ? ret : put_load_reply(info, &res, commit);
}
