// SPDX-License-Identifier: GPL-2.0
/*
 * session_counters NAME: what the kernel counts for session NAME, read
 * with GET_SESSION (a dump, matched by name) and GET_CPU_STATS, so traced_test.sh can check
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

/* What GET_SESSION says of each buffer, and the CPUs GET_CPU_STATS adds. */
struct buffer {
	char head[96];
	struct pbtrace_cpu_stats *cpus;
	int nr_cpus;
};

struct found {
	const char *name;
	int found;
	int err;
	uint32_t id;
	int nr_buffers;
	struct buffer b[PBTRACE_MAX_BUFFERS];
};

static int keep_buffer(struct found *f, struct nlattr *b)
{
	struct nlattr *bt[PBTRACE_A_MAX + 1];

	if (nla_parse_nested(bt, PBTRACE_A_MAX, b, NULL) ||
	    !bt[PBTRACE_A_BUFFER_SIZE_KB] || f->nr_buffers == PBTRACE_MAX_BUFFERS)
		return -EBADMSG;
	snprintf(f->b[f->nr_buffers++].head, sizeof(f->b[0].head),
		 "size_kb %u chunk_kb %u fill %s",
		 nla_get_u32(bt[PBTRACE_A_BUFFER_SIZE_KB]),
		 bt[PBTRACE_A_BUFFER_CHUNK_KB] ?
		 nla_get_u32(bt[PBTRACE_A_BUFFER_CHUNK_KB]) : 0,
		 bt[PBTRACE_A_BUFFER_FILL_POLICY] &&
		 nla_get_u32(bt[PBTRACE_A_BUFFER_FILL_POLICY]) ==
		 PBTRACE_FILL_DISCARD ? "discard" : "ring");
	return 0;
}

static int on_session(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1], *b;
	struct found *f = arg;
	int rem, ret;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PBTRACE_A_MAX, NULL) ||
	    !tb[PBTRACE_A_SESSION_NAME] || !tb[PBTRACE_A_SESSION_ID]) {
		f->err = -EBADMSG;
		return NL_OK;
	}
	if (strcmp(nla_get_string(tb[PBTRACE_A_SESSION_NAME]), f->name))
		return NL_OK;
	f->found = 1;
	f->id = nla_get_u32(tb[PBTRACE_A_SESSION_ID]);
	printf("session id %u state %u\n", f->id,
	       tb[PBTRACE_A_SESSION_STATE] ?
	       nla_get_u32(tb[PBTRACE_A_SESSION_STATE]) : 0);
	if (!tb[PBTRACE_A_SESSION_BUFFERS]) {
		f->err = -EBADMSG;
		return NL_OK;
	}
	nla_for_each_nested(b, tb[PBTRACE_A_SESSION_BUFFERS], rem) {
		ret = keep_buffer(f, b);
		if (ret)
			f->err = ret;
	}
	return NL_OK;
}

/* One GET_CPU_STATS message: a run of one buffer's CPUs. */
static int on_cpus(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1], *a;
	struct pbtrace_cpu_stats *cpus;
	struct found *f = arg;
	struct buffer *b;
	int rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PBTRACE_A_MAX, NULL) ||
	    !tb[PBTRACE_A_BUFFER_INDEX] || !tb[PBTRACE_A_BUFFER_CPUS] ||
	    nla_get_u32(tb[PBTRACE_A_BUFFER_INDEX]) >= (uint32_t)f->nr_buffers) {
		f->err = -EBADMSG;
		return NL_OK;
	}
	b = &f->b[nla_get_u32(tb[PBTRACE_A_BUFFER_INDEX])];
	nla_for_each_nested(a, tb[PBTRACE_A_BUFFER_CPUS], rem) {
		if (nla_len(a) < (int)sizeof(*cpus)) {
			f->err = -EBADMSG;
			return NL_OK;
		}
		cpus = realloc(b->cpus, (b->nr_cpus + 1) * sizeof(*cpus));
		if (!cpus) {
			f->err = -ENOMEM;
			return NL_OK;
		}
		b->cpus = cpus;
		memcpy(&cpus[b->nr_cpus++], nla_data(a), sizeof(*cpus));
	}
	return NL_OK;
}

static void print_buffers(const struct found *f)
{
	struct pbtrace_cpu_stats sum;
	int i, c;

	for (i = 0; i < f->nr_buffers; i++) {
		memset(&sum, 0, sizeof(sum));
		for (c = 0; c < f->b[i].nr_cpus; c++)
			add_stats(&sum, &f->b[i].cpus[c]);
		printf("buffer %d %s", i, f->b[i].head);
		print_stats(&sum);
		for (c = 0; c < f->b[i].nr_cpus; c++) {
			printf("cpu %d %u", i, f->b[i].cpus[c].cpu);
			print_stats(&f->b[i].cpus[c]);
		}
	}
}

/* A dump of @cmd (with the session's id if @id), each message to @fn. */
static int dump(int cmd, uint32_t id, nl_recvmsg_msg_cb_t fn, struct found *f)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP,
		    cmd, PBTRACE_GENL_VERSION);
	if (id)
		nla_put_u32(msg, PBTRACE_A_SESSION_ID, id);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, fn, f);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret >= 0)
		ret = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	return ret;
}

int main(int argc, char **argv)
{
	static struct found f;
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
	ret = dump(PBTRACE_CMD_GET_SESSION, 0, on_session, &f);
	if (ret >= 0 && !f.err && f.found)
		ret = dump(PBTRACE_CMD_GET_CPU_STATS, f.id, on_cpus, &f);
	if (ret >= 0 && !f.err && f.found)
		print_buffers(&f);
	nl_socket_free(sk);
	if (ret < 0 || f.err) {
		fprintf(stderr, "session_counters: GET_SESSION or GET_CPU_STATS dump failed (%s)\n",
			ret < 0 ? nl_geterror(ret) : strerror(-f.err));
		return 2;
	}
	if (!f.found) {
		fprintf(stderr, "session_counters: no session named '%s'\n", f.name);
		return 1;
	}
	return 0;
}
