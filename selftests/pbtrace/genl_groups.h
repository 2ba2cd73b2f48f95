/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The id of a generic netlink multicast group, from the
 * CTRL_ATTR_MCAST_GROUPS nest of a CTRL_CMD_GETFAMILY reply, for tests that
 * speak raw netlink (netlink_test.c, nl_fuzz.c). Walked by hand, with every
 * length checked: the reply is the kernel's, but the walk must not trust it.
 */
#ifndef PBT_GENL_GROUPS_H
#define PBT_GENL_GROUPS_H

#include <stdint.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* *@found = @name's group id in @groups; unchanged if it has none. */
static inline void genl_group_id(const struct nlattr *groups, const char *name,
				 int *found)
{
	const struct nlattr *g = (const void *)((const char *)groups + NLA_HDRLEN);
	int rem = groups->nla_len - NLA_HDRLEN;

	for (; rem >= NLA_HDRLEN && g->nla_len >= NLA_HDRLEN;
	     rem -= NLA_ALIGN(g->nla_len),
	     g = (const void *)((const char *)g + NLA_ALIGN(g->nla_len))) {
		const struct nlattr *a = (const void *)((const char *)g + NLA_HDRLEN);
		int r2 = g->nla_len - NLA_HDRLEN, id = -1, match = 0;

		for (; r2 >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN;
		     r2 -= NLA_ALIGN(a->nla_len),
		     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len))) {
			if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_ID)
				id = *(const uint32_t *)((const char *)a + NLA_HDRLEN);
			if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_NAME &&
			    !strcmp((const char *)a + NLA_HDRLEN, name))
				match = 1;
		}
		if (match)
			*found = id;
	}
}

#endif
