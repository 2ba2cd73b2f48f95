// SPDX-License-Identifier: GPL-2.0
/*
 * Client of the "pbtrace" generic netlink family, over libnl-genl-3.
 *
 * One request socket answers one request at a time: send, then read until
 * the kernel's ACK (doit) or NLMSG_DONE (dump). Kernel errors come back as
 * -errno plus the extack message, which pbt_nl_error() hands to a person.
 * Notifications use their own socket so they never interleave a reply.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "genl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define NOTIFY_BUF 8192

struct pbt_nl {
	struct nl_sock *sk;
	struct nl_sock *notify;
	int family;
	char err[512];
	/* Notifications already received but not yet handed out. */
	unsigned char *nbuf;
	size_t nlen, noff;
};

/* One request in flight: how replies are parsed and how it ended. */
struct request {
	struct pbt_nl *nl;
	int (*parse)(struct nlattr **tb, void *arg);
	void *arg;
	bool done;
	int err;
};

static void set_err(struct pbt_nl *nl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(nl->err, sizeof(nl->err), fmt, ap);
	va_end(ap);
}

const char *pbt_nl_error(struct pbt_nl *nl)
{
	return nl->err;
}

/* libnl's own error codes, for failures that never reached the kernel. */
static int nlerr_to_errno(int err)
{
	switch (-err) {
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_PERM:
		return -EPERM;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_DUMP_INTR:
		return -EINTR;
	default:
		return -EIO;
	}
}

static void set_sockopt(struct nl_sock *sk, int opt)
{
	int one = 1;

	/* Best effort: without it errors simply carry no kernel message. */
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, opt, &one,
			 sizeof(one));
}

static struct nl_sock *connect_sock(void)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	if (genl_connect(sk) < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	set_sockopt(sk, NETLINK_EXT_ACK);
	set_sockopt(sk, NETLINK_CAP_ACK);
	/* Session replies carry the config (up to 60 KiB): size by peeking. */
	nl_socket_enable_msg_peek(sk);
	nl_socket_set_buffer_size(sk, 1 << 20, 1 << 20);
	return sk;
}

struct pbt_nl *pbt_nl_open(char *err, size_t errlen)
{
	struct pbt_nl *nl = calloc(1, sizeof(*nl));
	int family;

	if (!nl) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	nl->sk = connect_sock();
	if (!nl->sk) {
		snprintf(err, errlen, "cannot open a generic netlink socket: %s",
			 strerror(errno));
		free(nl);
		errno = EIO;
		return NULL;
	}
	family = genl_ctrl_resolve(nl->sk, PBTRACE_GENL_NAME);
	if (family < 0) {
		snprintf(err, errlen,
			 "pbtrace module not loaded: run 'modprobe pbtrace'");
		pbt_nl_close(nl);
		errno = ENOENT;
		return NULL;
	}
	nl->family = family;
	return nl;
}

void pbt_nl_close(struct pbt_nl *nl)
{
	if (!nl)
		return;
	if (nl->notify)
		nl_socket_free(nl->notify);
	nl_socket_free(nl->sk);
	free(nl->nbuf);
	free(nl);
}

/* The extack TLVs follow the nlmsgerr (NETLINK_CAP_ACK: no echoed payload). */
static const char *extack_msg(struct nlmsgerr *e)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	len = (int)nlh->nlmsg_len - (int)off;
	if (len <= 0)
		return NULL;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)nlh + off),
		      len, NULL) < 0 || !tb[NLMSGERR_ATTR_MSG])
		return NULL;
	/* Make sure the kernel's string ends where its attribute does. */
	if (nla_len(tb[NLMSGERR_ATTR_MSG]) < 1 ||
	    ((char *)nla_data(tb[NLMSGERR_ATTR_MSG]))[nla_len(tb[NLMSGERR_ATTR_MSG]) - 1])
		return NULL;
	return nla_data(tb[NLMSGERR_ATTR_MSG]);
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct request *r = arg;
	const char *msg = extack_msg(e);

	(void)who;
	r->err = e->error < 0 ? e->error : -EIO;
	r->done = true;
	if (msg)
		set_err(r->nl, "%s (%s)", msg, strerror(-r->err));
	else
		set_err(r->nl, "%s", strerror(-r->err));
	return NL_STOP;
}

/*
 * NLMSG_DONE holds the dump's own result: an int, negative when the dump
 * failed part way (a session destroyed during it), then the extack TLVs.
 */
static const char *done_msg(struct nlmsghdr *nlh)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	int len = (int)nlh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(int));

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || len <= 0 ||
	    nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)nlmsg_data(nlh) + sizeof(int)),
		      len, NULL) < 0 || !tb[NLMSGERR_ATTR_MSG] ||
	    nla_len(tb[NLMSGERR_ATTR_MSG]) < 1 ||
	    ((char *)nla_data(tb[NLMSGERR_ATTR_MSG]))[nla_len(tb[NLMSGERR_ATTR_MSG]) - 1])
		return NULL;
	return nla_data(tb[NLMSGERR_ATTR_MSG]);
}

static int on_done(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct request *r = arg;
	const char *why;
	int err = 0;

	r->done = true;
	if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
	if (err >= 0 || r->err)
		return NL_STOP;
	r->err = err;
	why = done_msg(nlh);
	if (why)
		set_err(r->nl, "%s (%s)", why, strerror(-err));
	else
		set_err(r->nl, "%s", strerror(-err));
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct request *r = arg;
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	int ret;

	if (!r->parse || r->err)
		return NL_OK;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PBTRACE_A_MAX, NULL) < 0) {
		set_err(r->nl, "malformed reply from the kernel");
		r->err = -EPROTO;
		return NL_OK;
	}
	ret = r->parse(tb, r->arg);
	if (ret)
		r->err = ret;	/* keep reading to the end, then report */
	return NL_OK;
}

/* The request's bytes, before they are freed: it held keys. */
static void free_wiped(struct nl_msg *msg, bool wipe)
{
	if (wipe)
		explicit_bzero(nlmsg_hdr(msg), nlmsg_hdr(msg)->nlmsg_len);
	nlmsg_free(msg);
}

/*
 * Sends msg (consumed, wiped first if @wipe) and reads replies until the
 * ACK or the dump's end.
 */
static int run_wiped(struct pbt_nl *nl, struct nl_msg *msg,
		     int (*parse)(struct nlattr **tb, void *arg), void *arg,
		     bool wipe)
{
	struct request r = { .nl = nl, .parse = parse, .arg = arg };
	struct nl_cb *cb;
	int ret;

	nl->err[0] = '\0';
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		free_wiped(msg, wipe);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, &r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, &r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &r);

	ret = nl_send_auto(nl->sk, msg);
	free_wiped(msg, wipe);
	if (ret < 0) {
		r.err = nlerr_to_errno(ret);
		set_err(nl, "cannot send to the kernel: %s", nl_geterror(ret));
		r.done = true;
	}
	while (!r.done) {
		ret = nl_recvmsgs(nl->sk, cb);
		if (ret < 0 && !r.done) {
			r.err = nlerr_to_errno(ret);
			set_err(nl, "reading the kernel's reply: %s",
				nl_geterror(ret));
			break;
		}
	}
	nl_cb_put(cb);
	if (r.err && !nl->err[0])
		set_err(nl, "%s", strerror(-r.err));
	return r.err;
}

static int run(struct pbt_nl *nl, struct nl_msg *msg,
	       int (*parse)(struct nlattr **tb, void *arg), void *arg)
{
	return run_wiped(nl, msg, parse, arg, false);
}

static struct nl_msg *new_msg(struct pbt_nl *nl, int cmd, int flags,
			      size_t size)
{
	struct nl_msg *msg = size ? nlmsg_alloc_size(size) : nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 cmd, PBTRACE_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Nests always carry NLA_F_NESTED: the kernel validates strictly. */
static struct nlattr *nest_start(struct nl_msg *msg, int type)
{
	return nla_nest_start(msg, NLA_F_NESTED | type);
}

static int put_tp_field(struct nl_msg *msg, const struct pbt_tpf *f)
{
	struct nlattr *nest = nest_start(msg, PBTRACE_A_TP_FIELD);

	if (!nest || nla_put_string(msg, PBTRACE_A_TPF_NAME, f->name) ||
	    nla_put_u32(msg, PBTRACE_A_TPF_OFFSET, f->offset) ||
	    nla_put_u32(msg, PBTRACE_A_TPF_SIZE, f->size) ||
	    nla_put_u32(msg, PBTRACE_A_TPF_KIND, f->kind) ||
	    (f->is_signed && nla_put_flag(msg, PBTRACE_A_TPF_SIGNED)) ||
	    (f->elem_size &&
	     nla_put_u32(msg, PBTRACE_A_TPF_ELEM_SIZE, f->elem_size)) ||
	    nla_put_u32(msg, PBTRACE_A_TPF_PROTO_ID, f->proto_id) ||
	    nla_put_u32(msg, PBTRACE_A_TPF_PROTO_TYPE, f->proto_type))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_tp(struct nl_msg *msg, const struct pbt_tp_spec *t)
{
	const struct pbt_tp_layout *l = t->layout;
	struct nlattr *tp, *fields;
	char name[2 * PBTRACE_NAME_MAX + 1];
	size_t i;

	snprintf(name, sizeof(name), "%s/%s", l->group, l->name);
	tp = nest_start(msg, PBTRACE_A_TP);
	if (!tp || nla_put_string(msg, PBTRACE_A_TP_NAME, name) ||
	    nla_put_u32(msg, PBTRACE_A_TP_ID, t->id) ||
	    nla_put_u32(msg, PBTRACE_A_TP_FLAGS, t->flags) ||
	    nla_put_u32(msg, PBTRACE_A_TP_PROTO_ID, l->proto_id) ||
	    (t->filter && nla_put_string(msg, PBTRACE_A_TP_FILTER, t->filter)) ||
	    (t->period && nla_put_u32(msg, PBTRACE_A_TP_PERIOD, t->period)))
		return -EMSGSIZE;
	fields = nest_start(msg, PBTRACE_A_TP_FIELDS);
	if (!fields)
		return -EMSGSIZE;
	for (i = 0; i < l->nr_fields && i < PBTRACE_TP_MAX_FIELDS; i++)
		if (put_tp_field(msg, &l->fields[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, fields);
	nla_nest_end(msg, tp);
	return 0;
}

static int put_tps(struct nl_msg *msg, const struct pbt_buffer_spec *b)
{
	struct nlattr *list;
	size_t i;

	if (!b->nr_tps)
		return 0;
	list = nest_start(msg, PBTRACE_A_BUFFER_TRACEPOINTS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < b->nr_tps; i++)
		if (put_tp(msg, &b->tps[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, list);
	return 0;
}

static int put_buffer(struct nl_msg *msg, const struct pbt_buffer_spec *b)
{
	struct nlattr *buf, *list;
	size_t i;

	buf = nest_start(msg, PBTRACE_A_BUFFER);
	if (!buf || nla_put_u32(msg, PBTRACE_A_BUFFER_SIZE_KB, b->size_kb) ||
	    (b->chunk_kb &&
	     nla_put_u32(msg, PBTRACE_A_BUFFER_CHUNK_KB, b->chunk_kb)) ||
	    nla_put_u32(msg, PBTRACE_A_BUFFER_FILL_POLICY, b->fill_policy) ||
	    (b->full_sched && nla_put_flag(msg, PBTRACE_A_BUFFER_FULL_SCHED)) ||
	    (b->follow_forks &&
	     nla_put_flag(msg, PBTRACE_A_BUFFER_FOLLOW_FORKS)) ||
	    (b->watermark_ms &&
	     nla_put_u32(msg, PBTRACE_A_BUFFER_WATERMARK_MS, b->watermark_ms)) ||
	    (b->watermark_expedited &&
	     nla_put_flag(msg, PBTRACE_A_BUFFER_WATERMARK_EXPEDITED)))
		return -EMSGSIZE;
	/* Without events a buffer of tracepoints leaves the list out. */
	if (b->nr_events || !b->nr_tps) {
		list = nest_start(msg, PBTRACE_A_BUFFER_EVENTS);
		if (!list)
			return -EMSGSIZE;
		for (i = 0; i < b->nr_events && i < PBT_MAX_EVENTS; i++)
			if (nla_put_string(msg, PBTRACE_A_EVENT_NAME,
					   b->events[i]))
				return -EMSGSIZE;
		nla_nest_end(msg, list);
	}
	if (put_tps(msg, b))
		return -EMSGSIZE;
	if (b->nr_pids) {
		list = nest_start(msg, PBTRACE_A_BUFFER_PIDS);
		if (!list)
			return -EMSGSIZE;
		for (i = 0; i < b->nr_pids && i < PBTRACE_MAX_PIDS; i++)
			if (nla_put_u32(msg, PBTRACE_A_PID, b->pids[i]))
				return -EMSGSIZE;
		nla_nest_end(msg, list);
	}
	if (b->nr_machines) {
		list = nest_start(msg, PBTRACE_A_BUFFER_MACHINES);
		if (!list)
			return -EMSGSIZE;
		for (i = 0; i < b->nr_machines && i < PBTRACE_MAX_MACHINE_NAMES; i++)
			if (nla_put_string(msg, PBTRACE_A_MACHINE_NAME,
					   b->machines[i]))
				return -EMSGSIZE;
		nla_nest_end(msg, list);
	}
	if (b->nr_syscalls) {
		list = nest_start(msg, PBTRACE_A_BUFFER_SYSCALLS);
		if (!list)
			return -EMSGSIZE;
		for (i = 0; i < b->nr_syscalls && i < PBTRACE_MAX_SYSCALLS; i++)
			if (nla_put_u32(msg, PBTRACE_A_SYSCALL_NR, b->syscalls[i]))
				return -EMSGSIZE;
		nla_nest_end(msg, list);
	}
	nla_nest_end(msg, buf);
	return 0;
}

/* Room the tracepoints take: a nest may hold at most 64 KiB anyway. */
static size_t tps_size(const struct pbt_session_spec *s)
{
	size_t i, j, n = 0;

	for (i = 0; i < s->nr_buffers && i < PBTRACE_MAX_BUFFERS; i++)
		for (j = 0; j < s->buffers[i].nr_tps; j++)
			n += 256 + 128 * s->buffers[i].tps[j].layout->nr_fields;
	return n;
}

int pbt_nl_put_session(struct nl_msg *msg, const struct pbt_session_spec *s)
{
	struct nlattr *bufs;
	size_t i;

	if (nla_put_string(msg, PBTRACE_A_SESSION_NAME, s->name ? s->name : ""))
		return -EMSGSIZE;
	if (s->output && nla_put_string(msg, PBTRACE_A_SESSION_OUTPUT, s->output))
		return -EMSGSIZE;
	if (s->config_len &&
	    nla_put(msg, PBTRACE_A_SESSION_CONFIG, s->config_len, s->config))
		return -EMSGSIZE;
	bufs = nest_start(msg, PBTRACE_A_SESSION_BUFFERS);
	if (!bufs)
		return -EMSGSIZE;
	for (i = 0; i < s->nr_buffers && i < PBTRACE_MAX_BUFFERS; i++)
		if (put_buffer(msg, &s->buffers[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, bufs);
	return 0;
}

static int parse_id(struct nlattr **tb, void *arg)
{
	if (!tb[PBTRACE_A_SESSION_ID])
		return -EPROTO;
	*(uint32_t *)arg = nla_get_u32(tb[PBTRACE_A_SESSION_ID]);
	return 0;
}

/* NEW_SESSION or SET_SESSION (@id) with the whole description of @s. */
static struct nl_msg *session_msg(struct pbt_nl *nl, int cmd, uint32_t id,
				  const struct pbt_session_spec *s, int *ret)
{
	struct nl_msg *msg;

	if (s->config_len > PBTRACE_MAX_CONFIG) {
		set_err(nl, "config is %zu bytes, more than the %d the kernel keeps: trim it",
			s->config_len, PBTRACE_MAX_CONFIG);
		*ret = -EMSGSIZE;
		return NULL;
	}
	msg = new_msg(nl, cmd, 0, s->config_len + 65536 + tps_size(s));
	if (!msg || (cmd == PBTRACE_CMD_SET_SESSION &&
		     nla_put_u32(msg, PBTRACE_A_SESSION_ID, id))) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		*ret = -ENOMEM;
		return NULL;
	}
	if (pbt_nl_put_session(msg, s)) {
		nlmsg_free(msg);
		set_err(nl, "session description does not fit one netlink message");
		*ret = -EMSGSIZE;
		return NULL;
	}
	return msg;
}

/*
 * Tracepoints in pieces: a nest holds 64 KiB (about 80 tracepoints of 10
 * fields), so NEW/SET_SESSION carries the first TPS_FIRST_BYTES of them
 * and ADD_TRACEPOINTS messages of up to TPS_PIECE_BYTES the rest.
 * Estimates from above of what put_tp() writes.
 */
#define TPS_FIRST_BYTES (40 * 1024)
#define TPS_PIECE_BYTES (56 * 1024)

static size_t str_size(const char *s)
{
	return NLA_ALIGN(NLA_HDRLEN + strlen(s) + 1);
}

static size_t tp_size(const struct pbt_tp_spec *t)
{
	const struct pbt_tp_layout *l = t->layout;
	size_t i, n = 2 * NLA_HDRLEN + 4 * 8 + NLA_ALIGN(NLA_HDRLEN +
		strlen(l->group) + strlen(l->name) + 2);

	if (t->filter)
		n += str_size(t->filter);
	for (i = 0; i < l->nr_fields && i < PBTRACE_TP_MAX_FIELDS; i++)
		n += NLA_HDRLEN + str_size(l->fields[i].name) + 8 * 8;
	return n;
}

/* How many of @b's tracepoints from @from fit @room bytes: at least one. */
static size_t tps_fitting(const struct pbt_buffer_spec *b, size_t from,
			  size_t *room)
{
	size_t n = 0, sz;

	while (from + n < b->nr_tps) {
		sz = tp_size(&b->tps[from + n]);
		if (n && sz > *room)
			break;
		*room = sz > *room ? 0 : *room - sz;
		n++;
	}
	return n;
}

/* @s with each buffer's first tracepoints only, their counts in @sent. */
static void first_piece(const struct pbt_session_spec *s,
			struct pbt_session_spec *first, size_t *sent)
{
	size_t i, room = TPS_FIRST_BYTES;

	*first = *s;
	for (i = 0; i < s->nr_buffers && i < PBTRACE_MAX_BUFFERS; i++) {
		sent[i] = tps_fitting(&s->buffers[i], 0, &room);
		first->buffers[i].nr_tps = sent[i];
	}
}

static int add_piece(struct pbt_nl *nl, uint32_t id, uint32_t index,
		     const struct pbt_buffer_spec *b, size_t from, size_t n)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_ADD_TRACEPOINTS, 0,
				     TPS_PIECE_BYTES + 8192);
	struct nlattr *list = NULL;
	size_t i;

	if (msg && !nla_put_u32(msg, PBTRACE_A_SESSION_ID, id) &&
	    !nla_put_u32(msg, PBTRACE_A_BUFFER_INDEX, index))
		list = nest_start(msg, PBTRACE_A_BUFFER_TRACEPOINTS);
	for (i = 0; list && i < n; i++)
		if (put_tp(msg, &b->tps[from + i]))
			list = NULL;
	if (!list) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	nla_nest_end(msg, list);
	return run(nl, msg, NULL, NULL);
}

/* The tracepoints the first message did not carry, piece by piece. */
static int add_rest(struct pbt_nl *nl, uint32_t id,
		    const struct pbt_session_spec *s, const size_t *sent)
{
	size_t i, from, n, room;
	int ret;

	for (i = 0; i < s->nr_buffers && i < PBTRACE_MAX_BUFFERS; i++) {
		for (from = sent[i]; from < s->buffers[i].nr_tps; from += n) {
			room = TPS_PIECE_BYTES;
			n = tps_fitting(&s->buffers[i], from, &room);
			ret = add_piece(nl, id, i, &s->buffers[i], from, n);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int pbt_nl_new_session(struct pbt_nl *nl, const struct pbt_session_spec *s,
		       uint32_t *id)
{
	size_t sent[PBTRACE_MAX_BUFFERS] = { 0 };
	struct pbt_session_spec first;
	struct nl_msg *msg;
	uint32_t got = 0;
	int ret = 0;

	first_piece(s, &first, sent);
	msg = session_msg(nl, PBTRACE_CMD_NEW_SESSION, 0, &first, &ret);
	if (!msg)
		return ret;
	ret = run(nl, msg, parse_id, &got);
	if (!ret)
		ret = add_rest(nl, got, s, sent);
	/* A piece refused: the session was never whole (keep its error) */
	if (ret && got) {
		char why[sizeof(nl->err)];

		snprintf(why, sizeof(why), "%s", nl->err);
		pbt_nl_destroy_session(nl, got, NULL);
		set_err(nl, "%s", why);
	}
	if (!ret)
		*id = got;
	return ret;
}

/*
 * SET_SESSION with the first piece, then the rest: a piece refused leaves
 * the session with the pieces before it (not as it was).
 */
int pbt_nl_set_session(struct pbt_nl *nl, uint32_t id,
		       const struct pbt_session_spec *s)
{
	size_t sent[PBTRACE_MAX_BUFFERS] = { 0 };
	struct pbt_session_spec first;
	struct nl_msg *msg;
	int ret = 0;

	first_piece(s, &first, sent);
	msg = session_msg(nl, PBTRACE_CMD_SET_SESSION, id, &first, &ret);
	if (!msg)
		return ret;
	ret = run(nl, msg, NULL, NULL);
	return ret ? ret : add_rest(nl, id, s, sent);
}

int pbt_nl_session_cmd(struct pbt_nl *nl, int cmd, uint32_t id)
{
	struct nl_msg *msg = new_msg(nl, cmd, 0, 0);

	if (!msg || nla_put_u32(msg, PBTRACE_A_SESSION_ID, id)) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	return run(nl, msg, NULL, NULL);
}

int pbt_nl_destroy_session(struct pbt_nl *nl, uint32_t id, const char *error)
{
	char cut[PBTRACE_ERROR_MAX];
	struct nl_msg *msg;
	int ret;

	if (!error || !*error)
		return pbt_nl_session_cmd(nl, PBTRACE_CMD_DESTROY_SESSION, id);
	snprintf(cut, sizeof(cut), "%s", error);
	msg = new_msg(nl, PBTRACE_CMD_DESTROY_SESSION, 0, 0);
	if (!msg || nla_put_u32(msg, PBTRACE_A_SESSION_ID, id) ||
	    nla_put_string(msg, PBTRACE_A_SESSION_ERROR, cut)) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = run(nl, msg, NULL, NULL);
	if (ret != -EINVAL)
		return ret;
	/* An older module's strict policy refuses the unknown attribute. */
	ret = pbt_nl_session_cmd(nl, PBTRACE_CMD_DESTROY_SESSION, id);
	return ret ? ret : 1;
}

static char *memdup_str(const struct nlattr *a)
{
	int len = nla_len(a);
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	memcpy(s, nla_data(a), len);
	s[len] = '\0';
	return s;
}

static int parse_buffer_events(struct nlattr *nest, struct pbt_buffer_info *b)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != PBTRACE_A_EVENT_NAME ||
		    b->nr_events == PBT_MAX_EVENTS)
			continue;
		b->events[b->nr_events] = memdup_str(a);
		if (!b->events[b->nr_events])
			return -ENOMEM;
		b->nr_events++;
	}
	return 0;
}

static void parse_buffer_pids(struct nlattr *nest, struct pbt_buffer_info *b)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem)
		if (nla_type(a) == PBTRACE_A_PID && nla_len(a) >= 4 &&
		    b->nr_pids < PBTRACE_MAX_PIDS)
			b->pids[b->nr_pids++] = nla_get_u32(a);
}

static int parse_buffer_cpus(struct nlattr *nest, struct pbt_buffer_info *b)
{
	struct pbtrace_cpu_stats *cpus;
	struct nlattr *a;
	size_t n = 0;
	int rem;

	nla_for_each_nested(a, nest, rem)
		n++;
	cpus = calloc(n ? n : 1, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	n = 0;
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != PBTRACE_A_CPU_STATS)
			continue;
		/* An older kernel may send a shorter struct: zero the rest. */
		memcpy(&cpus[n], nla_data(a),
		       (size_t)nla_len(a) < sizeof(*cpus) ? (size_t)nla_len(a) :
							    sizeof(*cpus));
		n++;
	}
	b->cpus = cpus;
	b->nr_cpus = n;
	return 0;
}

static void parse_buffer_machines(struct nlattr *nest,
				  struct pbt_buffer_info *b)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem)
		if (nla_type(a) == PBTRACE_A_MACHINE_NAME &&
		    b->nr_machines < PBTRACE_MAX_MACHINE_NAMES)
			nla_strlcpy(b->machines[b->nr_machines++], a,
				    sizeof(b->machines[0]));
}

static uint32_t get_u32(struct nlattr *a)
{
	return a && nla_len(a) >= 4 ? nla_get_u32(a) : 0;
}

static void parse_buffer_syscalls(struct nlattr *nest,
				  struct pbt_buffer_info *b)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem)
		if (nla_type(a) == PBTRACE_A_SYSCALL_NR && nla_len(a) >= 4 &&
		    b->nr_syscalls < PBTRACE_MAX_SYSCALLS)
			b->syscalls[b->nr_syscalls++] = nla_get_u32(a);
}

static uint64_t get_u64(struct nlattr *a)
{
	return a && nla_len(a) >= 8 ? nla_get_u64(a) : 0;
}

static int parse_buffer(struct nlattr *nest, struct pbt_buffer_info *b)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	int ret = 0;

	if (nla_parse_nested(tb, PBTRACE_A_MAX, nest, NULL) < 0)
		return -EPROTO;
	b->size_kb = get_u32(tb[PBTRACE_A_BUFFER_SIZE_KB]);
	b->chunk_kb = get_u32(tb[PBTRACE_A_BUFFER_CHUNK_KB]);
	b->fill_policy = get_u32(tb[PBTRACE_A_BUFFER_FILL_POLICY]);
	b->full_sched = tb[PBTRACE_A_BUFFER_FULL_SCHED] != NULL;
	b->follow_forks = tb[PBTRACE_A_BUFFER_FOLLOW_FORKS] != NULL;
	b->watermark_ms = get_u32(tb[PBTRACE_A_BUFFER_WATERMARK_MS]);
	b->watermark_expedited = tb[PBTRACE_A_BUFFER_WATERMARK_EXPEDITED] != NULL;
	if (tb[PBTRACE_A_BUFFER_EVENTS])
		ret = parse_buffer_events(tb[PBTRACE_A_BUFFER_EVENTS], b);
	if (tb[PBTRACE_A_BUFFER_PIDS])
		parse_buffer_pids(tb[PBTRACE_A_BUFFER_PIDS], b);
	if (!ret && tb[PBTRACE_A_BUFFER_CPUS])
		ret = parse_buffer_cpus(tb[PBTRACE_A_BUFFER_CPUS], b);
	if (tb[PBTRACE_A_BUFFER_MACHINES])
		parse_buffer_machines(tb[PBTRACE_A_BUFFER_MACHINES], b);
	if (tb[PBTRACE_A_BUFFER_SYSCALLS])
		parse_buffer_syscalls(tb[PBTRACE_A_BUFFER_SYSCALLS], b);
	return ret;
}

static int parse_session_info(struct nlattr **tb, struct pbt_session_info *s)
{
	struct nlattr *a;
	int rem, ret;

	memset(s, 0, sizeof(*s));
	if (!tb[PBTRACE_A_SESSION_ID])
		return -EPROTO;
	s->id = get_u32(tb[PBTRACE_A_SESSION_ID]);
	s->state = get_u32(tb[PBTRACE_A_SESSION_STATE]);
	s->start_ns = get_u64(tb[PBTRACE_A_SESSION_START_NS]);
	s->stop_ns = get_u64(tb[PBTRACE_A_SESSION_STOP_NS]);
	s->daemon_pid = get_u32(tb[PBTRACE_A_DAEMON_PID]);
	/* Absent from older modules: their sessions are all root's. */
	s->owner_uid = get_u32(tb[PBTRACE_A_SESSION_OWNER_UID]);
	s->owner_gid = get_u32(tb[PBTRACE_A_SESSION_OWNER_GID]);
	if (tb[PBTRACE_A_SESSION_NAME])
		nla_strlcpy(s->name, tb[PBTRACE_A_SESSION_NAME], sizeof(s->name));
	if (tb[PBTRACE_A_SESSION_OUTPUT]) {
		s->output = memdup_str(tb[PBTRACE_A_SESSION_OUTPUT]);
		if (!s->output)
			return -ENOMEM;
	}
	a = tb[PBTRACE_A_SESSION_CONFIG];
	if (a && nla_len(a) > 0) {
		s->config = malloc(nla_len(a));
		if (!s->config)
			return -ENOMEM;
		memcpy(s->config, nla_data(a), nla_len(a));
		s->config_len = nla_len(a);
	}
	s->relay = tb[PBTRACE_A_SESSION_RELAY] &&
		   nla_len(tb[PBTRACE_A_SESSION_RELAY]) >= 1 &&
		   nla_get_u8(tb[PBTRACE_A_SESSION_RELAY]);
	if (!tb[PBTRACE_A_SESSION_BUFFERS])
		return 0;
	nla_for_each_nested(a, tb[PBTRACE_A_SESSION_BUFFERS], rem) {
		if (nla_type(a) != PBTRACE_A_BUFFER ||
		    s->nr_buffers == PBTRACE_MAX_BUFFERS)
			continue;
		ret = parse_buffer(a, &s->buffers[s->nr_buffers]);
		s->nr_buffers++;	/* counted even on error, so it is freed */
		if (ret)
			return ret;
	}
	return 0;
}

int pbt_nl_parse_session(struct nlmsghdr *nlh, struct pbt_session_info *s)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	int ret;

	memset(s, 0, sizeof(*s));
	if (genlmsg_parse(nlh, 0, tb, PBTRACE_A_MAX, NULL) < 0)
		return -EPROTO;
	ret = parse_session_info(tb, s);
	if (ret)
		pbt_session_info_free(s);
	return ret;
}

void pbt_session_info_free(struct pbt_session_info *s)
{
	size_t i, j;

	if (!s)
		return;
	for (i = 0; i < s->nr_buffers; i++) {
		for (j = 0; j < s->buffers[i].nr_events; j++)
			free(s->buffers[i].events[j]);
		free(s->buffers[i].cpus);
		pbt_tp_infos_free(s->buffers[i].tps, s->buffers[i].nr_tps);
	}
	free(s->output);
	free(s->config);
	free(s->machines);
	memset(s, 0, sizeof(*s));
}

void pbt_session_infos_free(struct pbt_session_info *s, size_t n)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		pbt_session_info_free(&s[i]);
	free(s);
}

static int parse_one_session(struct nlattr **tb, void *arg)
{
	struct pbt_session_info *s = arg;

	if (s->id)		/* a doit answers once */
		return -EPROTO;
	return parse_session_info(tb, s);
}

int pbt_nl_get_session(struct pbt_nl *nl, uint32_t id,
		       struct pbt_session_info *out)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_GET_SESSION, 0, 0);
	int ret;

	memset(out, 0, sizeof(*out));
	if (!msg || nla_put_u32(msg, PBTRACE_A_SESSION_ID, id)) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = run(nl, msg, parse_one_session, out);
	if (!ret && !out->id) {
		set_err(nl, "kernel sent no session");
		ret = -EPROTO;
	}
	if (ret)
		pbt_session_info_free(out);
	return ret;
}

struct wm_walk {
	struct pbt_watermark_info *w;
	int nr;				/* buffers with a watermark */
};

/* The lowest of the buffers' watermarks: the session's. */
static int parse_watermark(struct nlattr **tb, void *arg)
{
	struct wm_walk *ww = arg;
	struct nlattr *b, *bt[PBTRACE_A_MAX + 1];
	uint64_t pub, rd;
	int rem;

	ww->w->state = get_u32(tb[PBTRACE_A_SESSION_STATE]);
	if (!tb[PBTRACE_A_SESSION_BUFFERS])
		return 0;
	nla_for_each_nested(b, tb[PBTRACE_A_SESSION_BUFFERS], rem) {
		if (nla_parse_nested(bt, PBTRACE_A_MAX, b, NULL) < 0 ||
		    !bt[PBTRACE_A_BUFFER_WATERMARK_NS] ||
		    !bt[PBTRACE_A_BUFFER_READ_NS])
			continue;
		pub = get_u64(bt[PBTRACE_A_BUFFER_WATERMARK_NS]);
		rd = get_u64(bt[PBTRACE_A_BUFFER_READ_NS]);
		if (!ww->nr || pub < ww->w->published_ns)
			ww->w->published_ns = pub;
		if (!ww->nr || rd < ww->w->read_ns)
			ww->w->read_ns = rd;
		ww->nr++;
	}
	return 0;
}

int pbt_nl_get_watermark(struct pbt_nl *nl, uint32_t id,
			 struct pbt_watermark_info *w)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_GET_WATERMARK, 0, 0);
	struct wm_walk ww = { .w = w };
	int ret;

	memset(w, 0, sizeof(*w));
	if (!msg || nla_put_u32(msg, PBTRACE_A_SESSION_ID, id)) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = run(nl, msg, parse_watermark, &ww);
	return ret ? ret : ww.nr;
}

struct cpu_walk {
	uint32_t id;
	size_t nr_buffers;
	size_t nr[PBTRACE_MAX_BUFFERS];
	struct pbtrace_cpu_stats *cpus[PBTRACE_MAX_BUFFERS];
};

/* One GET_CPU_STATS message: a run of one buffer's CPUs, appended. */
static int parse_cpu_run(struct nlattr **tb, void *arg)
{
	struct cpu_walk *w = arg;
	struct pbtrace_cpu_stats *cpus;
	struct nlattr *a;
	size_t n = 0, len;
	uint32_t b;
	int rem;

	if (!tb[PBTRACE_A_BUFFER_INDEX] || !tb[PBTRACE_A_BUFFER_CPUS] ||
	    get_u32(tb[PBTRACE_A_SESSION_ID]) != w->id)
		return -EPROTO;
	b = get_u32(tb[PBTRACE_A_BUFFER_INDEX]);
	if (b >= w->nr_buffers)	/* SET_SESSION added it since GET_SESSION */
		return 0;
	nla_for_each_nested(a, tb[PBTRACE_A_BUFFER_CPUS], rem)
		n += nla_type(a) == PBTRACE_A_CPU_STATS;
	cpus = realloc(w->cpus[b], (w->nr[b] + n + 1) * sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	w->cpus[b] = cpus;
	nla_for_each_nested(a, tb[PBTRACE_A_BUFFER_CPUS], rem) {
		if (nla_type(a) != PBTRACE_A_CPU_STATS)
			continue;
		/* An older kernel may send a shorter struct: zero the rest. */
		len = (size_t)nla_len(a) < sizeof(*cpus) ? (size_t)nla_len(a) :
							   sizeof(*cpus);
		memset(&cpus[w->nr[b]], 0, sizeof(*cpus));
		memcpy(&cpus[w->nr[b]], nla_data(a), len);
		w->nr[b]++;
	}
	return 0;
}

int pbt_nl_get_cpu_stats(struct pbt_nl *nl, struct pbt_session_info *s)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_GET_CPU_STATS,
				     NLM_F_DUMP, 0);
	struct cpu_walk w = { .id = s->id, .nr_buffers = s->nr_buffers };
	size_t i;
	int ret;

	if (!msg || nla_put_u32(msg, PBTRACE_A_SESSION_ID, s->id)) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = run(nl, msg, parse_cpu_run, &w);
	for (i = 0; i < w.nr_buffers; i++) {
		if (ret) {
			free(w.cpus[i]);
			continue;
		}
		free(s->buffers[i].cpus);
		s->buffers[i].cpus = w.cpus[i];
		s->buffers[i].nr_cpus = w.nr[i];
	}
	return ret;
}

struct session_list {
	struct pbt_session_info *v;
	size_t n, cap;
};

static int parse_list_entry(struct nlattr **tb, void *arg)
{
	struct session_list *l = arg;
	struct pbt_session_info *v;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		v = realloc(l->v, l->cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
	}
	l->n++;			/* counted first so a partial entry is freed */
	return parse_session_info(tb, &l->v[l->n - 1]);
}

int pbt_nl_list_sessions(struct pbt_nl *nl, struct pbt_session_info **out,
			 size_t *n)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_GET_SESSION, NLM_F_DUMP, 0);
	struct session_list l = { 0 };
	int ret;

	*out = NULL;
	*n = 0;
	if (!msg) {
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = run(nl, msg, parse_list_entry, &l);
	if (ret) {
		pbt_session_infos_free(l.v, l.n);
		return ret;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

struct event_walk {
	int (*cb)(const char *name, int available, void *arg);
	void *arg;
	int stopped;
};

static int parse_event(struct nlattr **tb, void *arg)
{
	struct event_walk *w = arg;
	char name[PBTRACE_NAME_MAX];

	if (w->stopped || !tb[PBTRACE_A_EVENT_NAME])
		return 0;
	nla_strlcpy(name, tb[PBTRACE_A_EVENT_NAME], sizeof(name));
	w->stopped = w->cb(name, tb[PBTRACE_A_EVENT_AVAILABLE] ?
			   nla_get_u8(tb[PBTRACE_A_EVENT_AVAILABLE]) : 0,
			   w->arg);
	return 0;
}

int pbt_nl_list_events(struct pbt_nl *nl,
		       int (*cb)(const char *name, int available, void *arg),
		       void *arg)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_LIST_EVENTS, NLM_F_DUMP, 0);
	struct event_walk w = { .cb = cb, .arg = arg };
	int ret;

	if (!msg) {
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	ret = run(nl, msg, parse_event, &w);
	return ret ? ret : w.stopped;
}

int pbt_nl_trigger(struct pbt_nl *nl, const char *name)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_TRIGGER, 0, 0);

	if (!msg || nla_put_string(msg, PBTRACE_A_TRIGGER_NAME, name)) {
		nlmsg_free(msg);
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	return run(nl, msg, NULL, NULL);
}

int pbt_nl_register_daemon(struct pbt_nl *nl)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_REGISTER_DAEMON, 0, 0);

	if (!msg) {
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	return run(nl, msg, NULL, NULL);
}

static int parse_daemon_pid(struct nlattr **tb, void *arg)
{
	*(uint32_t *)arg = get_u32(tb[PBTRACE_A_DAEMON_PID]);
	return 0;
}

int pbt_nl_daemon_pid(struct pbt_nl *nl, uint32_t *pid)
{
	struct nl_msg *msg = new_msg(nl, PBTRACE_CMD_GET_STATUS, 0, 0);

	*pid = 0;
	if (!msg) {
		set_err(nl, "out of memory");
		return -ENOMEM;
	}
	return run(nl, msg, parse_daemon_pid, pid);
}

int pbt_nl_subscribe(struct pbt_nl *nl)
{
	int grp, ret;

	if (nl->notify)
		return 0;
	grp = genl_ctrl_resolve_grp(nl->sk, PBTRACE_GENL_NAME,
				    PBTRACE_MCGRP_SESSIONS);
	if (grp < 0) {
		set_err(nl, "no \"%s\" multicast group: %s",
			PBTRACE_MCGRP_SESSIONS, nl_geterror(grp));
		return nlerr_to_errno(grp);
	}
	nl->nbuf = malloc(NOTIFY_BUF);
	nl->notify = connect_sock();
	if (!nl->nbuf || !nl->notify) {
		set_err(nl, "cannot open the notification socket");
		return -ENOMEM;
	}
	nl_socket_disable_seq_check(nl->notify);
	ret = nl_socket_add_membership(nl->notify, grp);
	if (ret < 0) {
		set_err(nl, "cannot join the \"%s\" group: %s",
			PBTRACE_MCGRP_SESSIONS, nl_geterror(ret));
		nl_socket_free(nl->notify);
		nl->notify = NULL;
		return nlerr_to_errno(ret);
	}
	return 0;
}

int pbt_nl_notify_fd(struct pbt_nl *nl)
{
	return nl->notify ? nl_socket_get_fd(nl->notify) : -1;
}

int pbt_nl_parse_notify(struct nlmsghdr *nlh, struct pbt_notify *n)
{
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	struct genlmsghdr *g;

	if (!genlmsg_valid_hdr(nlh, 0) ||
	    genlmsg_parse(nlh, 0, tb, PBTRACE_A_MAX, NULL) < 0)
		return 0;
	g = nlmsg_data(nlh);
	memset(n, 0, sizeof(*n));
	n->cmd = g->cmd;
	n->session_id = get_u32(tb[PBTRACE_A_SESSION_ID]);
	if (tb[PBTRACE_A_TRIGGER_NAME])
		nla_strlcpy(n->trigger, tb[PBTRACE_A_TRIGGER_NAME],
			    sizeof(n->trigger));
	if (tb[PBTRACE_A_SESSION_ERROR])
		nla_strlcpy(n->error, tb[PBTRACE_A_SESSION_ERROR],
			    sizeof(n->error));
	return 1;
}

/* Hands out the next complete pbtrace message from what was received. */
static int next_buffered(struct pbt_nl *nl, struct pbt_notify *n)
{
	while (nl->noff < nl->nlen) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)(nl->nbuf + nl->noff);
		int left = (int)(nl->nlen - nl->noff);

		if (!nlmsg_ok(nlh, left)) {
			nl->noff = nl->nlen;
			break;
		}
		nl->noff += NLMSG_ALIGN(nlh->nlmsg_len);
		if (nlh->nlmsg_type == (uint16_t)nl->family &&
		    pbt_nl_parse_notify(nlh, n))
			return 1;
	}
	return 0;
}

int pbt_nl_next_notify(struct pbt_nl *nl, struct pbt_notify *n)
{
	ssize_t len;

	if (!nl->notify) {
		set_err(nl, "not subscribed");
		return -EINVAL;
	}
	for (;;) {
		if (next_buffered(nl, n))
			return 1;
		len = recv(nl_socket_get_fd(nl->notify), nl->nbuf, NOTIFY_BUF,
			   MSG_DONTWAIT);
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (len < 0) {
			set_err(nl, "notifications: %s", strerror(errno));
			return -errno;
		}
		nl->nlen = (size_t)len;
		nl->noff = 0;
	}
}

/* The request machinery, for genl_machines.c. */
int pbt_genl_run(struct pbt_nl *nl, struct nl_msg *msg,
		 int (*parse)(struct nlattr **tb, void *arg), void *arg,
		 bool wipe)
{
	return run_wiped(nl, msg, parse, arg, wipe);
}

struct nl_msg *pbt_genl_msg(struct pbt_nl *nl, int cmd, int flags,
			    size_t size)
{
	struct nl_msg *msg = new_msg(nl, cmd, flags, size);

	if (!msg)
		set_err(nl, "out of memory");
	return msg;
}

void pbt_genl_set_err(struct pbt_nl *nl, const char *msg)
{
	set_err(nl, "%s", msg);
}

static void human_bytes(char *buf, size_t n, uint64_t v)
{
	if (v >= 10ull << 20)
		snprintf(buf, n, "%.1f MiB", v / 1048576.0);
	else if (v >= 10ull << 10)
		snprintf(buf, n, "%.1f KiB", v / 1024.0);
	else
		snprintf(buf, n, "%llu B", (unsigned long long)v);
}

int pbt_machine_describe(char *buf, size_t n, const struct pbt_machine_info *m)
{
	const struct pbtrace_machine_stats *st = &m->st;
	char bytes[32], clock[160];

	human_bytes(bytes, sizeof(bytes), st->bytes);
	if (st->pings)
		snprintf(clock, sizeof(clock),
			 "%llu pings (%llu in the trace), rtt %.1f us, offset %+.6f s, spread %.1f us",
			 (unsigned long long)st->pings,
			 (unsigned long long)st->clock_syncs, st->rtt_ns / 1e3,
			 st->offset_ns / 1e9, st->offset_spread_ns / 1e3);
	else
		snprintf(clock, sizeof(clock), "no ping round yet: no clock offset");
	return snprintf(buf, n,
			"machine %s (id %u): %s%s%s, buffer %u, %u cpus\n"
			"  received %llu chunks, %s; guest wrote %llu events\n"
			"  lost: %llu chunks in relay gaps, %llu dropped here (queue full or no clock round), %llu events on the guest, %llu disconnects (%.3f s without it)\n"
			"  clock: %s\n",
			m->name, st->machine_id,
			st->connected ? "connected" : "not connected",
			m->peer[0] ? ", " : "", m->peer, st->buffer,
			st->num_cpus, (unsigned long long)st->chunks, bytes,
			(unsigned long long)st->guest_events_written,
			(unsigned long long)st->chunks_lost_relay,
			(unsigned long long)st->chunks_dropped,
			(unsigned long long)st->guest_events_lost,
			(unsigned long long)st->disconnects, st->gap_ns / 1e9,
			clock);
}
