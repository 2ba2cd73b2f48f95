// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink client's echo of a session's tracepoints by name (genl.h):
 * GET_SESSION_TRACEPOINTS, paged as GET_CPU_STATS pages CPUs, each
 * buffer's tracepoints in the order NEW/SET_SESSION gave them, with their
 * flags (stacks) and filters as given.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "genl.h"

static uint32_t get_u32(struct nlattr *a)
{
	return a && nla_len(a) >= 4 ? nla_get_u32(a) : 0;
}

/* A string attribute, copied; NULL if absent or not NUL-terminated. */
static char *dup_str(struct nlattr *a)
{
	if (!a || nla_len(a) < 1 || ((char *)nla_data(a))[nla_len(a) - 1])
		return NULL;
	return strdup(nla_data(a));
}

static int parse_tp(struct nlattr *nest, struct pbt_tp_info *t)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];

	memset(t, 0, sizeof(*t));
	if (nla_parse_nested(tb, PBTRACE_A_MAX, nest, NULL) < 0 ||
	    !tb[PBTRACE_A_TP_NAME])
		return -EPROTO;
	t->name = dup_str(tb[PBTRACE_A_TP_NAME]);
	if (!t->name)
		return -EPROTO;
	t->id = get_u32(tb[PBTRACE_A_TP_ID]);
	t->flags = get_u32(tb[PBTRACE_A_TP_FLAGS]);
	t->proto_id = get_u32(tb[PBTRACE_A_TP_PROTO_ID]);
	t->period = get_u32(tb[PBTRACE_A_TP_PERIOD]);
	if (tb[PBTRACE_A_TP_FILTER]) {
		t->filter = dup_str(tb[PBTRACE_A_TP_FILTER]);
		if (!t->filter) {
			free(t->name);
			return -EPROTO;
		}
	}
	return 0;
}

struct tps_walk {
	uint32_t id;
	size_t nr_buffers;
	struct pbt_tp_info *tps[PBTRACE_MAX_BUFFERS];
	size_t nr[PBTRACE_MAX_BUFFERS];
};

/* One GET_SESSION_TRACEPOINTS message: a run of one buffer's, appended. */
static int parse_tps_msg(struct nlattr **tb, void *arg)
{
	struct tps_walk *w = arg;
	struct pbt_tp_info *v;
	struct nlattr *a;
	size_t n = 0;
	uint32_t b;
	int rem, ret;

	if (!tb[PBTRACE_A_BUFFER_INDEX] || !tb[PBTRACE_A_BUFFER_TRACEPOINTS] ||
	    get_u32(tb[PBTRACE_A_SESSION_ID]) != w->id)
		return -EPROTO;
	b = get_u32(tb[PBTRACE_A_BUFFER_INDEX]);
	if (b >= w->nr_buffers)	/* SET_SESSION added it since GET_SESSION */
		return 0;
	nla_for_each_nested(a, tb[PBTRACE_A_BUFFER_TRACEPOINTS], rem)
		n += nla_type(a) == PBTRACE_A_TP;
	v = realloc(w->tps[b], (w->nr[b] + n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->tps[b] = v;
	nla_for_each_nested(a, tb[PBTRACE_A_BUFFER_TRACEPOINTS], rem) {
		if (nla_type(a) != PBTRACE_A_TP)
			continue;
		ret = parse_tp(a, &v[w->nr[b]]);
		if (ret)
			return ret;
		w->nr[b]++;
	}
	return 0;
}

void pbt_tp_infos_free(struct pbt_tp_info *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].filter);
	}
	free(v);
}

int pbt_nl_get_session_tracepoints(struct pbt_nl *nl,
				   struct pbt_session_info *s)
{
	struct nl_msg *msg = pbt_genl_msg(nl, PBTRACE_CMD_GET_SESSION_TRACEPOINTS,
					  NLM_F_DUMP, 0);
	struct tps_walk w = { .id = s->id, .nr_buffers = s->nr_buffers };
	size_t i;
	int ret;

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, PBTRACE_A_SESSION_ID, s->id)) {
		nlmsg_free(msg);
		pbt_genl_set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = pbt_genl_run(nl, msg, parse_tps_msg, &w, false);
	for (i = 0; i < w.nr_buffers; i++) {
		if (ret) {
			pbt_tp_infos_free(w.tps[i], w.nr[i]);
			continue;
		}
		pbt_tp_infos_free(s->buffers[i].tps, s->buffers[i].nr_tps);
		s->buffers[i].tps = w.tps[i];
		s->buffers[i].nr_tps = w.nr[i];
	}
	return ret;
}
