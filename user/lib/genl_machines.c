// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink client's relayed machines (genl.h): a session's machines
 * (GET_SESSION_MACHINES, paged as GET_CPU_STATS pages CPUs), the
 * endpoint's machine table (GET_MACHINES), its names table (GET_NAMES)
 * and loading it (LOAD_NAMES, in pieces, then one commit).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "genl.h"

/* Nests always carry NLA_F_NESTED: the kernel validates strictly. */
static struct nlattr *nest_start(struct nl_msg *msg, int type)
{
	return nla_nest_start(msg, NLA_F_NESTED | type);
}

static uint32_t get_u32(struct nlattr *a)
{
	return a && nla_len(a) >= 4 ? nla_get_u32(a) : 0;
}

static void get_str(char *dst, size_t n, struct nlattr *a)
{
	if (a)
		nla_strlcpy(dst, a, n);
	else
		dst[0] = '\0';
}

/* A struct attribute: an older or newer kernel's may be shorter or longer. */
static void get_struct(void *dst, size_t n, struct nlattr *a)
{
	memset(dst, 0, n);
	if (a)
		memcpy(dst, nla_data(a),
		       (size_t)nla_len(a) < n ? (size_t)nla_len(a) : n);
}

/* One PBTRACE_A_MACHINE: its name, peer and counters. */
static void parse_machine(struct nlattr *nest, struct pbt_machine_info *m)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];

	memset(m, 0, sizeof(*m));
	if (nla_parse_nested(tb, PBTRACE_A_MAX, nest, NULL) < 0)
		return;
	get_str(m->name, sizeof(m->name), tb[PBTRACE_A_MACHINE_NAME]);
	get_str(m->peer, sizeof(m->peer), tb[PBTRACE_A_MACHINE_PEER]);
	get_struct(&m->st, sizeof(m->st), tb[PBTRACE_A_MACHINE_STATS]);
}

/* The machines of one GET_SESSION_MACHINES message, appended. */
static int append_machines(struct nlattr *nest, struct pbt_session_info *s)
{
	struct pbt_machine_info *v;
	struct nlattr *a;
	size_t n = 0;
	int rem;

	nla_for_each_nested(a, nest, rem)
		n += nla_type(a) == PBTRACE_A_MACHINE;
	if (!n)
		return 0;
	v = realloc(s->machines, (s->nr_machines + n) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->machines = v;
	nla_for_each_nested(a, nest, rem)
		if (nla_type(a) == PBTRACE_A_MACHINE)
			parse_machine(a, &s->machines[s->nr_machines++]);
	return 0;
}

static int parse_machines_msg(struct nlattr **tb, void *arg)
{
	struct pbt_session_info *s = arg;

	if (get_u32(tb[PBTRACE_A_SESSION_ID]) != s->id ||
	    !tb[PBTRACE_A_SESSION_MACHINES])
		return -EPROTO;
	return append_machines(tb[PBTRACE_A_SESSION_MACHINES], s);
}

int pbt_nl_parse_session_machines(struct nlmsghdr *nlh,
				  struct pbt_session_info *s)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];

	if (genlmsg_parse(nlh, 0, tb, PBTRACE_A_MAX, NULL) < 0)
		return -EPROTO;
	return parse_machines_msg(tb, s);
}

int pbt_nl_get_session_machines(struct pbt_nl *nl, struct pbt_session_info *s)
{
	struct nl_msg *msg = pbt_genl_msg(nl, PBTRACE_CMD_GET_SESSION_MACHINES,
					  NLM_F_DUMP, 0);
	struct pbt_session_info got = { .id = s->id };
	int ret;

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, PBTRACE_A_SESSION_ID, s->id)) {
		nlmsg_free(msg);
		pbt_genl_set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = pbt_genl_run(nl, msg, parse_machines_msg, &got, false);
	if (ret) {
		free(got.machines);
		return ret;
	}
	free(s->machines);
	s->machines = got.machines;
	s->nr_machines = got.nr_machines;
	return 0;
}

/* A growing array of @size-byte entries. */
struct list {
	void *v;
	size_t n, cap, size;
};

static void *list_next(struct list *l)
{
	void *v;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		v = realloc(l->v, l->cap * l->size);
		if (!v)
			return NULL;
		l->v = v;
	}
	return (char *)l->v + l->n++ * l->size;
}

static int parse_endpoint_machine(struct nlattr **tb, void *arg)
{
	struct pbt_endpoint_machine_info *m = list_next(arg);

	if (!m)
		return -ENOMEM;
	get_struct(&m->m, sizeof(m->m), tb[PBTRACE_A_ENDPOINT_MACHINE]);
	get_str(m->name, sizeof(m->name), tb[PBTRACE_A_MACHINE_NAME]);
	get_str(m->claimed, sizeof(m->claimed), tb[PBTRACE_A_MACHINE_CLAIMED]);
	get_str(m->peer, sizeof(m->peer), tb[PBTRACE_A_MACHINE_PEER]);
	get_str(m->sysname, sizeof(m->sysname), tb[PBTRACE_A_MACHINE_SYSNAME]);
	get_str(m->release, sizeof(m->release), tb[PBTRACE_A_MACHINE_RELEASE]);
	get_str(m->arch, sizeof(m->arch), tb[PBTRACE_A_MACHINE_ARCH]);
	return 0;
}

static int parse_name(struct nlattr **tb, void *arg)
{
	struct pbt_name_info *e = list_next(arg);

	if (!e)
		return -ENOMEM;
	get_str(e->name, sizeof(e->name), tb[PBTRACE_A_MACHINE_NAME]);
	e->cid = get_u32(tb[PBTRACE_A_NAME_CID]);
	e->flags = get_u32(tb[PBTRACE_A_NAME_FLAGS]);
	e->line = get_u32(tb[PBTRACE_A_NAME_LINE]);
	return 0;
}

/* A dump into *out; one a load interrupted (-EINTR) is asked again. */
static int dump_list(struct pbt_nl *nl, int cmd, size_t size,
		     int (*parse)(struct nlattr **tb, void *arg), void **out,
		     size_t *n)
{
	struct list l = { .size = size };
	struct nl_msg *msg;
	int ret, tries = 0;

	do {
		l.n = 0;
		msg = pbt_genl_msg(nl, cmd, NLM_F_DUMP, 0);
		if (!msg) {
			ret = -ENOMEM;
			break;
		}
		ret = pbt_genl_run(nl, msg, parse, &l, false);
	} while (ret == -EINTR && ++tries < 5);
	if (ret) {
		free(l.v);
		l.v = NULL;
		l.n = 0;
	}
	*out = l.v;
	*n = l.n;
	return ret;
}

int pbt_nl_list_machines(struct pbt_nl *nl,
			 struct pbt_endpoint_machine_info **out, size_t *n)
{
	return dump_list(nl, PBTRACE_CMD_GET_MACHINES, sizeof(**out),
			 parse_endpoint_machine, (void **)out, n);
}

int pbt_nl_list_names(struct pbt_nl *nl, struct pbt_name_info **out,
		      size_t *n)
{
	return dump_list(nl, PBTRACE_CMD_GET_NAMES, sizeof(**out), parse_name,
			 (void **)out, n);
}

/*
 * A piece of 256 entries is about 40 KiB: inside a nest's 64 KiB with
 * room to spare, and a few round trips for thousands.
 */
#define NAMES_PER_MSG 256
/* Each entry: its nest, the name, a CID or a key, the line. */
#define NAME_ENTRY_SIZE (4 + 4 + PBTRACE_NAME_MAX + 4 + PBTRACE_NAME_KEY_MAX + 8)

struct load_reply {
	uint32_t id, count, evicted;
};

static int parse_load(struct nlattr **tb, void *arg)
{
	struct load_reply *r = arg;

	r->id = get_u32(tb[PBTRACE_A_LOAD_ID]);
	r->count = get_u32(tb[PBTRACE_A_NAMES_COUNT]);
	r->evicted = get_u32(tb[PBTRACE_A_NAMES_EVICTED]);
	return 0;
}

static int put_name(struct nl_msg *msg, const struct pbt_name_spec *e)
{
	struct nlattr *n = nest_start(msg, PBTRACE_A_NAME);

	if (!n || nla_put_string(msg, PBTRACE_A_MACHINE_NAME, e->name) ||
	    (e->key_len ? nla_put(msg, PBTRACE_A_NAME_KEY, (int)e->key_len, e->key) :
			  nla_put_u32(msg, PBTRACE_A_NAME_CID, e->cid)) ||
	    (e->line && nla_put_u32(msg, PBTRACE_A_NAME_LINE, e->line)))
		return -EMSGSIZE;
	nla_nest_end(msg, n);
	return 0;
}

/* One LOAD_NAMES request: entries [from, to), the commit with the last. */
static int load_piece(struct pbt_nl *nl, const struct pbt_name_spec *e,
		      size_t from, size_t to, bool commit,
		      struct load_reply *r)
{
	size_t size = 1024 + (to - from) * NAME_ENTRY_SIZE, i;
	struct nl_msg *msg = pbt_genl_msg(nl, PBTRACE_CMD_LOAD_NAMES, 0, size);
	struct nlattr *names;

	if (!msg)
		return -ENOMEM;
	if ((r->id && nla_put_u32(msg, PBTRACE_A_LOAD_ID, r->id)) ||
	    (commit && nla_put_flag(msg, PBTRACE_A_LOAD_COMMIT)))
		goto full;
	if (to > from) {
		names = nest_start(msg, PBTRACE_A_NAMES);
		if (!names)
			goto full;
		for (i = from; i < to; i++)
			if (put_name(msg, &e[i]))
				goto full;
		nla_nest_end(msg, names);
	}
	return pbt_genl_run(nl, msg, parse_load, r, true);
full:
	explicit_bzero(nlmsg_hdr(msg), nlmsg_hdr(msg)->nlmsg_len);
	nlmsg_free(msg);
	pbt_genl_set_err(nl, "a names request outgrew its message");
	return -EMSGSIZE;
}

int pbt_nl_load_names(struct pbt_nl *nl, const struct pbt_name_spec *e,
		      size_t n, size_t per_msg, uint32_t *count,
		      uint32_t *evicted)
{
	struct load_reply r = { 0 };
	size_t from = 0, to;
	int ret;

	if (!per_msg || per_msg > NAMES_PER_MSG)
		per_msg = NAMES_PER_MSG;
	do {
		to = n - from > per_msg ? from + per_msg : n;
		ret = load_piece(nl, e, from, to, to == n, &r);
		from = to;
	} while (!ret && from < n);
	if (!ret) {
		*count = r.count;
		*evicted = r.evicted;
	}
	return ret;
}
