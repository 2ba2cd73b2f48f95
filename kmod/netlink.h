/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the files of the "pbtrace" generic netlink family (its tree is
 * include/uapi/linux/pbtrace.h's), a file per job:
 *
 *   netlink.c           the family: its commands, registration
 *   netlink_session.c   commands that change a session (NEW ... DESTROY)
 *   netlink_get.c       looking at sessions (GET_SESSION, its paged dumps)
 *   netlink_machines.c  relayed machines and the names table
 *   netlink_parse.c     the policies; a session's attributes into params
 *   netlink_access.c    who may do what: group=, its budget, pre_doit
 *   netlink_notify.c    the sessions multicast, the daemon's socket
 *
 * Calls go down only: netlink.c names the handlers; they call the parser,
 * the access checks and the daemon's pid, which call nothing here. Every
 * file builds its messages with netlink.c's pbt_family.
 */
#ifndef PBT_NETLINK_H
#define PBT_NETLINK_H

#include <linux/types.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>

#include "pbtrace.h"
#include "compat.h"

/* netlink.c */
extern struct genl_family pbt_family;
extern bool pbt_family_registered;

/*
 * Who may do what: CAP_SYS_ADMIN everything; CAP_PERFMON look at every
 * session; a member of group= create, run and look at its own sessions
 * (PBT_OWN commands and looks). GENL_ADMIN_PERM would check CAP_NET_ADMIN
 * instead, and fail before any extack could say what is missing, so the
 * checks are ours.
 */
#define PBT_ADMIN BIT(0)	/* genl_ops.internal_flags: root only */
#define PBT_OWN BIT(1)		/* root, or a member on its own session */

/* netlink_access.c */
int pbt_pre_doit(const struct pbt_genl_split_ops *ops,
		 struct sk_buff *skb, struct genl_info *info);
bool pbt_nl_sees_all(struct sk_buff *skb);
int pbt_nl_may_read(struct sk_buff *skb, struct netlink_ext_ack *extack);
int pbt_nl_no_session(struct netlink_ext_ack *extack);
int pbt_nl_member_limits(struct sk_buff *skb, struct genl_info *info,
			 struct pbt_session_params *p);
void pbt_nl_who_asks(struct sk_buff *skb, struct pbt_session_params *p);

/* netlink_parse.c */
extern const struct nla_policy pbt_policy[PBTRACE_A_MAX + 1];
extern const struct nla_policy pbt_name_policy[PBTRACE_A_MAX + 1];
int pbt_nl_parse_contents(struct genl_info *info, struct pbt_session_params *p,
			  unsigned int *what);
int pbt_nl_parse_session(struct genl_info *info, struct pbt_session_params *p);

/* netlink_notify.c */
extern struct notifier_block pbt_netlink_notifier;
extern struct work_struct pbt_daemon_gone_work;
void pbt_netlink_notify(u8 cmd, u32 session_id, const char *error);
u32 pbt_nl_current_daemon_pid(void);
int pbt_nl_trigger(struct sk_buff *skb, struct genl_info *info);
int pbt_nl_register_daemon(struct sk_buff *skb, struct genl_info *info);
int pbt_nl_get_status(struct sk_buff *skb, struct genl_info *info);

/* netlink_session.c */
int pbt_nl_new_session(struct sk_buff *skb, struct genl_info *info);
int pbt_nl_set_session(struct sk_buff *skb, struct genl_info *info);
int pbt_nl_add_tps(struct sk_buff *skb, struct genl_info *info);
int pbt_nl_session_op(struct sk_buff *skb, struct genl_info *info);

/* netlink_get.c */
int pbt_nl_get_session(struct sk_buff *skb, struct genl_info *info);
int pbt_nl_get_session_start(struct netlink_callback *cb);
int pbt_nl_get_session_dump(struct sk_buff *skb, struct netlink_callback *cb);
int pbt_nl_session_dump_start(struct netlink_callback *cb);
struct pbt_session *pbt_nl_dump_session(struct netlink_callback *cb);
int pbt_nl_cpu_stats_dump(struct sk_buff *skb, struct netlink_callback *cb);
int pbt_nl_tps_dump(struct sk_buff *skb, struct netlink_callback *cb);
int pbt_nl_get_watermark(struct sk_buff *skb, struct genl_info *info);
int pbt_nl_list_events_start(struct netlink_callback *cb);
int pbt_nl_list_events_dump(struct sk_buff *skb, struct netlink_callback *cb);

/* netlink_machines.c */
int pbt_nl_session_machines_dump(struct sk_buff *skb,
				 struct netlink_callback *cb);
int pbt_nl_endpoint_dump_start(struct netlink_callback *cb);
int pbt_nl_machines_dump(struct sk_buff *skb, struct netlink_callback *cb);
int pbt_nl_names_dump(struct sk_buff *skb, struct netlink_callback *cb);
int pbt_nl_load_names(struct sk_buff *skb, struct genl_info *info);

#endif /* PBT_NETLINK_H */
