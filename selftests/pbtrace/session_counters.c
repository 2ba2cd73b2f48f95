// SPDX-License-Identifier: GPL-2.0
/*
 * session_counters NAME: what the kernel counts for session NAME, read
 * with GET_SESSION (a dump, matched by name), so traced_test.sh can check
 * the trace_stats and ftrace_stats traced wrote against the kernel's own
 * numbers. Read-only: it never changes a session.
 *
 * Netlink is spoken with libnl-genl directly, not with user/lib/genl.c, and
 * traced reads its numbers from the buffers' mapping, not from netlink: a
 * bug in either path shows as a mismatch.
 *
 * Output, one line each ("key value" pairs after the first word):
 *   session id ID state STATE
 *   buffer B size_kb S chunk_kb C fill discard|ring FIELD VALUE...   (sums)
 *   cpu B N FIELD VALUE...                                    (per CPU)
 * FIELD is every member of struct pbtrace_cpu_stats after cpu/online.
 * Exit 1 when no session has that name, 2 on a netlink failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <linux/pbtrace.h>

static struct nl_sock *sk;
static int family;

struct found {
	const char *name;
	int found;
	int err;
};

#define FIELDS(X) X(events_written) X(bytes_written) X(chunks_sealed) \
	X(chunks_read) X(chunks_overwritten) X(chunks_discarded) \
	X(lost_full) X(lost_overwritten) X(lost_too_large) X(lost_nmi)

static void print_stats(const struct pbtrace_cpu_stats *s)
{
#define PRINT(f) printf(" " #f " %llu", (unsigned long long)s->f);
	FIELDS(PRINT)
#undef PRINT
	printf("\n");
}

static void add_stats(struct pbtrace_cpu_stats *sum,
		      const struct pbtrace_cpu_stats *s)
{
#define ADD(f) sum->f += s->f;
	FIELDS(ADD)
#undef ADD
}

static int print_buffer(int nr, struct nlattr *b)
{
	struct nlattr *bt[PBTRACE_A_MAX + 1], *a;
	struct pbtrace_cpu_stats sum = { 0 };
	int rem;

	if (nla_parse_nested(bt, PBTRACE_A_MAX, b, NULL) ||
	    !bt[PBTRACE_A_BUFFER_SIZE_KB] || !bt[PBTRACE_A_BUFFER_CPUS])
		return -EBADMSG;
	nla_for_each_nested(a, bt[PBTRACE_A_BUFFER_CPUS], rem) {
		if (nla_len(a) < (int)sizeof(sum))
			return -EBADMSG;
		add_stats(&sum, nla_data(a));
	}
	printf("buffer %d size_kb %u chunk_kb %u fill %s", nr,
	       nla_get_u32(bt[PBTRACE_A_BUFFER_SIZE_KB]),
	       bt[PBTRACE_A_BUFFER_CHUNK_KB] ?
	       nla_get_u32(bt[PBTRACE_A_BUFFER_CHUNK_KB]) : 0,
	       bt[PBTRACE_A_BUFFER_FILL_POLICY] &&
	       nla_get_u32(bt[PBTRACE_A_BUFFER_FILL_POLICY]) ==
	       PBTRACE_FILL_DISCARD ? "discard" : "ring");
	print_stats(&sum);
	nla_for_each_nested(a, bt[PBTRACE_A_BUFFER_CPUS], rem) {
		const struct pbtrace_cpu_stats *s = nla_data(a);

		printf("cpu %d %u", nr, s->cpu);
		print_stats(s);
	}
	return 0;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1], *b;
	struct found *f = arg;
	int rem, nr = 0, ret;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PBTRACE_A_MAX, NULL) ||
	    !tb[PBTRACE_A_SESSION_NAME] || !tb[PBTRACE_A_SESSION_ID]) {
		f->err = -EBADMSG;
		return NL_OK;
	}
	if (strcmp(nla_get_string(tb[PBTRACE_A_SESSION_NAME]), f->name))
		return NL_OK;
	f->found = 1;
	printf("session id %u state %u\n",
	       nla_get_u32(tb[PBTRACE_A_SESSION_ID]),
	       tb[PBTRACE_A_SESSION_STATE] ?
	       nla_get_u32(tb[PBTRACE_A_SESSION_STATE]) : 0);
	if (!tb[PBTRACE_A_SESSION_BUFFERS]) {
		f->err = -EBADMSG;
		return NL_OK;
	}
	nla_for_each_nested(b, tb[PBTRACE_A_SESSION_BUFFERS], rem) {
		ret = print_buffer(nr++, b);
		if (ret)
			f->err = ret;
	}
	return NL_OK;
}

int main(int argc, char **argv)
{
	struct found f = { 0 };
	struct nl_msg *msg;
	struct nl_cb *cb;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: session_counters NAME\n");
		return 2;
	}
	f.name = argv[1];
	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk)) {
		fprintf(stderr, "session_counters: cannot open a generic netlink socket\n");
		return 2;
	}
	family = genl_ctrl_resolve(sk, PBTRACE_GENL_NAME);
	if (family < 0) {
		fprintf(stderr, "session_counters: no pbtrace family: is pbtrace.ko loaded?\n");
		return 2;
	}
	msg = nlmsg_alloc();
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP,
		    PBTRACE_CMD_GET_SESSION, PBTRACE_GENL_VERSION);
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &f);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret >= 0)
		ret = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	nl_socket_free(sk);
	if (ret < 0 || f.err) {
		fprintf(stderr, "session_counters: GET_SESSION dump failed (%s)\n",
			ret < 0 ? nl_geterror(ret) : strerror(-f.err));
		return 2;
	}
	if (!f.found) {
		fprintf(stderr, "session_counters: no session named '%s'\n", f.name);
		return 1;
	}
	return 0;
}
