// SPDX-License-Identifier: GPL-2.0
/*
 * The "pbtrace" generic netlink family, from outside: strict attribute
 * validation with extack messages, session rules (unique names, limits,
 * states), privilege checks, multicast notifications and the daemon-gone
 * notifier. Runs in a guest with pbtrace.ko loaded, as root.
 *
 * Malformed requests are built by hand on a raw socket (libnl would not
 * send them); well-formed ones go through user/lib/genl.c like tracectl's.
 */
#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "config.h"
#include "genl_groups.h"
#include "genl.h"
#include "reader.h"
#include "pbtrace_fields.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* ---- raw generic netlink, for requests libnl would refuse to build ---- */

struct raw_msg {
	struct nlmsghdr nlh;
	struct genlmsghdr g;
	unsigned char attrs[PBTRACE_MAX_CONFIG + 8192];
};

struct raw {
	int fd;
	int family;
	unsigned int seq;
	char extack[256];
};

static int raw_open(struct raw *r)
{
	int one = 1;

	memset(r, 0, sizeof(*r));
	r->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (r->fd < 0)
		return -1;
	setsockopt(r->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(r->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

static struct nlattr *put_attr(struct raw_msg *m, size_t *off, int type,
			       const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->attrs + *off);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	*off += NLA_ALIGN(a->nla_len);
	return a;
}

static void put_u32(struct raw_msg *m, size_t *off, int type, uint32_t v)
{
	put_attr(m, off, type, &v, sizeof(v));
}

static void put_str(struct raw_msg *m, size_t *off, int type, const char *s)
{
	put_attr(m, off, type, s, strlen(s) + 1);
}

static struct nlattr *nest_begin(struct raw_msg *m, size_t *off, int type)
{
	return put_attr(m, off, type, NULL, 0);
}

static void nest_end(struct raw_msg *m, size_t off, struct nlattr *a)
{
	a->nla_len = (m->attrs + off) - (unsigned char *)a;
}

/* The last reply (not ack) message raw_ack() saw, for raw_reply(). */
static unsigned char raw_reply_buf[1 << 17];
static size_t raw_reply_len;

/* Reads the ack for seq: the kernel's errno (0 or negative) + extack. */
static int raw_ack(struct raw *r, unsigned int seq)
{
	static unsigned char buf[1 << 17];
	struct nlmsghdr *nlh;
	ssize_t len;

	r->extack[0] = '\0';
	raw_reply_len = 0;
	for (;;) {
		len = recv(r->fd, buf, sizeof(buf), 0);
		if (len < 0)
			return -errno;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			struct nlmsgerr *e = NLMSG_DATA(nlh);
			struct nlattr *a;
			int rem;

			if (nlh->nlmsg_seq == seq && nlh->nlmsg_type != NLMSG_ERROR &&
			    nlh->nlmsg_len <= sizeof(raw_reply_buf)) {
				memcpy(raw_reply_buf, nlh, nlh->nlmsg_len);
				raw_reply_len = nlh->nlmsg_len;
			}
			if (nlh->nlmsg_seq != seq || nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			a = (struct nlattr *)((char *)e + sizeof(*e));
			rem = nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(*e);
			while ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
			       rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= rem) {
				if (a->nla_type == NLMSGERR_ATTR_MSG)
					snprintf(r->extack, sizeof(r->extack), "%.*s",
						 (int)(a->nla_len - NLA_HDRLEN),
						 (char *)a + NLA_HDRLEN);
				rem -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
			}
			return e->error;
		}
	}
}

static int raw_send_flags(struct raw *r, struct raw_msg *m, int cmd,
			  size_t off, uint16_t flags)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + off;
	m->nlh.nlmsg_type = r->family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->nlh.nlmsg_seq = ++r->seq;
	m->g.cmd = cmd;
	m->g.version = PBTRACE_GENL_VERSION;
	m->g.reserved = 0;
	if (sendto(r->fd, m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	return raw_ack(r, r->seq);
}

static int raw_send(struct raw *r, struct raw_msg *m, int cmd, size_t off)
{
	return raw_send_flags(r, m, cmd, off, 0);
}

/*
 * The extack text a test can expect: the formatted one from 6.2
 * (NL_SET_ERR_MSG_FMT), before it the call site's literal (compat.h).
 */
static const char *fmt_or(const char *formatted, const char *literal)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	return major > 6 || (major == 6 && minor >= 2) ? formatted : literal;
}

#define ID_LITERAL "a tracepoint's id is not it, or it is refused"
#define LAYOUT_LITERAL "a tracepoint's fields cannot be encoded"

/* A well-formed one-buffer NEW_SESSION body; returns the buffer nest. */
static size_t good_session(struct raw_msg *m, const char *name,
			   const char *event)
{
	struct nlattr *bufs, *buf, *evs;
	size_t off = 0;

	put_str(m, &off, PBTRACE_A_SESSION_NAME, name);
	bufs = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_SESSION_BUFFERS);
	buf = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_BUFFER);
	put_u32(m, &off, PBTRACE_A_BUFFER_SIZE_KB, 1024);
	evs = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_BUFFER_EVENTS);
	put_str(m, &off, PBTRACE_A_EVENT_NAME, event);
	nest_end(m, off, evs);
	nest_end(m, off, buf);
	nest_end(m, off, bufs);
	return off;
}

/* ---- fixture: a libnl client, a raw socket, a clean registry ---- */

FIXTURE(pbt)
{
	struct pbt_nl *nl;
	struct raw raw;
	struct raw_msg *m;
};

static void destroy_all(struct pbt_nl *nl)
{
	struct pbt_session_info *v;
	size_t n, i;

	if (pbt_nl_list_sessions(nl, &v, &n))
		return;
	for (i = 0; i < n; i++)
		pbt_nl_session_cmd(nl, PBTRACE_CMD_DESTROY_SESSION, v[i].id);
	pbt_session_infos_free(v, n);
}

static int mcast_group;	/* "sessions", found by family_id() */

static int family_id(void)
{
	/* Asked of nlctrl by hand: this file's raw socket needs no libnl. */
	struct raw r;
	struct raw_msg *m = calloc(1, sizeof(*m));
	int id = -1;

	if (!m || raw_open(&r))
		goto out;
	{
		/* nlctrl: CTRL_CMD_GETFAMILY with CTRL_ATTR_FAMILY_NAME. */
		struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
		static unsigned char buf[16384];
		struct nlmsghdr *nlh;
		size_t off = 0;
		ssize_t len;

		put_str(m, &off, CTRL_ATTR_FAMILY_NAME, PBTRACE_GENL_NAME);
		m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + off;
		m->nlh.nlmsg_type = GENL_ID_CTRL;
		m->nlh.nlmsg_flags = NLM_F_REQUEST;
		m->nlh.nlmsg_seq = 1;
		m->g.cmd = CTRL_CMD_GETFAMILY;
		m->g.version = 1;
		if (sendto(r.fd, m, m->nlh.nlmsg_len, 0,
			   (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
			goto close;
		len = recv(r.fd, buf, sizeof(buf), 0);
		nlh = (struct nlmsghdr *)buf;
		if (len > 0 && NLMSG_OK(nlh, len) && nlh->nlmsg_type == GENL_ID_CTRL) {
			struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
			int rem = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

			while (rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN) {
				if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
					id = *(uint16_t *)((char *)a + NLA_HDRLEN);
				if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GROUPS)
					genl_group_id(a, PBTRACE_MCGRP_SESSIONS, &mcast_group);
				rem -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
			}
		}
	}
close:
	close(r.fd);
out:
	free(m);
	return id;
}

FIXTURE_SETUP(pbt)
{
	char err[256];

	self->nl = pbt_nl_open(err, sizeof(err));
	ASSERT_NE(NULL, self->nl) TH_LOG("%s", err);
	destroy_all(self->nl);
	ASSERT_EQ(0, raw_open(&self->raw));
	self->raw.family = family_id();
	ASSERT_GT(self->raw.family, 0);
	self->m = calloc(1, sizeof(*self->m));
	ASSERT_NE(NULL, self->m);
}

FIXTURE_TEARDOWN(pbt)
{
	uint32_t count, evicted;

	destroy_all(self->nl);
	/* The names table's loaded part, empty again for the next test. */
	pbt_nl_load_names(self->nl, NULL, 0, 0, &count, &evicted);
	pbt_nl_close(self->nl);
	close(self->raw.fd);
	free(self->m);
}

static void spec_one(struct pbt_session_spec *s, const char *name,
		     const char *event)
{
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->nr_buffers = 1;
	s->buffers[0].size_kb = 1024;
	s->buffers[0].fill_policy = PBTRACE_FILL_RING_BUFFER;
	s->buffers[0].events[0] = event;
	s->buffers[0].nr_events = 1;
}

/* ---- strict validation ---- */

TEST_F(pbt, missing_name)
{
	size_t off = good_session(self->m, "x", "sched/sched_switch");
	/* Drop the name: it is the first attribute. */
	size_t first = NLA_ALIGN(((struct nlattr *)self->m->attrs)->nla_len);

	memmove(self->m->attrs, self->m->attrs + first, off - first);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off - first));
	ASSERT_NE(NULL, strstr(self->raw.extack, "needs a name")) TH_LOG("extack: %s", self->raw.extack);
}

TEST_F(pbt, missing_buffers)
{
	size_t off = 0;

	put_str(self->m, &off, PBTRACE_A_SESSION_NAME, "x");
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "needs buffers")) TH_LOG("extack: %s", self->raw.extack);
}

TEST_F(pbt, missing_session_id)
{
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_START_SESSION, 0));
	ASSERT_NE(NULL, strstr(self->raw.extack, "session id")) TH_LOG("extack: %s", self->raw.extack);
}

/*
 * GET_CPU_STATS, a dump, refuses at its start what it cannot page. The
 * extack message is not checked: before 6.2 a dump's start has no extack
 * to write it to (cb->extack is NULL there in 6.1).
 */
TEST_F(pbt, cpu_stats_needs_a_live_session)
{
	size_t off = 0;

	ASSERT_EQ(-EINVAL, raw_send_flags(&self->raw, self->m,
					  PBTRACE_CMD_GET_CPU_STATS, 0,
					  NLM_F_DUMP));
	put_u32(self->m, &off, PBTRACE_A_SESSION_ID, 999999);
	ASSERT_EQ(-ENOENT, raw_send_flags(&self->raw, self->m,
					  PBTRACE_CMD_GET_CPU_STATS, off,
					  NLM_F_DUMP));
}

TEST_F(pbt, short_u32_rejected)
{
	uint16_t v = 1;
	size_t off = 0;

	put_attr(self->m, &off, PBTRACE_A_SESSION_ID, &v, sizeof(v));
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_START_SESSION, off));
	ASSERT_NE('\0', self->raw.extack[0]);
}

TEST_F(pbt, name_without_nul_rejected)
{
	size_t off = good_session(self->m, "abcd", "sched/sched_switch");
	struct nlattr *name = (struct nlattr *)self->m->attrs;

	((char *)name + NLA_HDRLEN)[4] = 'e';	/* overwrite the NUL */
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off));
}

TEST_F(pbt, long_name_rejected)
{
	char name[PBTRACE_NAME_MAX + 1];
	size_t off;

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	off = good_session(self->m, name, "sched/sched_switch");
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off));
	/* One shorter fits (PBTRACE_NAME_MAX counts the NUL). */
	name[PBTRACE_NAME_MAX - 1] = '\0';
	off = good_session(self->m, name, "sched/sched_switch");
	ASSERT_EQ(0, raw_send(&self->raw, self->m,
			      PBTRACE_CMD_NEW_SESSION, off)) TH_LOG("%s", self->raw.extack);
}

TEST_F(pbt, unknown_attribute_rejected)
{
	size_t off = good_session(self->m, "x", "sched/sched_switch");

	put_u32(self->m, &off, PBTRACE_A_MAX + 1, 1);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off));
	ASSERT_NE('\0', self->raw.extack[0]);
}

TEST_F(pbt, attribute_outside_its_nest_rejected)
{
	size_t off = good_session(self->m, "x", "sched/sched_switch");

	/* A buffer attribute at the top level has no policy there. */
	put_u32(self->m, &off, PBTRACE_A_BUFFER_SIZE_KB, 1024);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off));
}

TEST_F(pbt, nest_without_flag_rejected)
{
	size_t off = good_session(self->m, "x", "sched/sched_switch");
	struct nlattr *name = (struct nlattr *)self->m->attrs;
	struct nlattr *bufs = (struct nlattr *)(self->m->attrs +
						NLA_ALIGN(name->nla_len));

	bufs->nla_type &= ~NLA_F_NESTED;
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off));
}

TEST_F(pbt, oversized_config_rejected)
{
	size_t off = good_session(self->m, "x", "sched/sched_switch");
	static unsigned char cfg[PBTRACE_MAX_CONFIG + 1];

	put_attr(self->m, &off, PBTRACE_A_SESSION_CONFIG, cfg, sizeof(cfg));
	ASSERT_EQ(-ERANGE, raw_send(&self->raw, self->m,
				    PBTRACE_CMD_NEW_SESSION, off));
	ASSERT_NE('\0', self->raw.extack[0]);
}

TEST_F(pbt, unknown_event_rejected)
{
	struct pbt_session_spec s;
	uint32_t id;

	spec_one(&s, "x", "sched/no_such_event");
	ASSERT_EQ(-ENOENT, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "unknown event"))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

/* ---- any tracepoint (PBTRACE_A_BUFFER_TRACEPOINTS): bad inputs ---- */

/* events/G/N/id from tracefs, or -1 (no tracefs, no such event). */
static int tracefs_id(const char *event)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[256];
	unsigned int i;
	int id = -1;
	FILE *f;

	for (i = 0; i < 2 && id < 0; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], event);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

static void tpf(struct pbt_tp_layout *l, const char *name, unsigned int off,
		unsigned int size, unsigned int kind, unsigned int proto_id,
		unsigned int type)
{
	struct pbt_tpf *f = &l->fields[l->nr_fields++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	f->offset = off;
	f->size = size;
	f->kind = kind;
	f->is_signed = 1;
	f->proto_id = proto_id;
	f->proto_type = type;
}

/* signal/signal_generate by hand (sig at 8, as on 6.1 and 6.12). */
static void tp_signal(struct pbt_tp_layout *l, struct pbt_tp_spec *t)
{
	memset(l, 0, sizeof(*l));
	strcpy(l->group, "signal");
	strcpy(l->name, "signal_generate");
	l->proto_id = PBTRACE_TP_GENERIC_PROTO_BASE;
	tpf(l, "common_pid", 4, 4, PBTRACE_TPF_INT, 0, 0);
	tpf(l, "sig", 8, 4, PBTRACE_TPF_INT, 1, 3);
	memset(t, 0, sizeof(*t));
	t->layout = l;
	t->id = tracefs_id("signal/signal_generate");
	t->flags = PBTRACE_TP_FTRACE;
}

static int tp_session(struct pbt_nl *nl, const struct pbt_tp_spec *t,
		      size_t n)
{
	struct pbt_session_spec s;
	uint32_t id;

	memset(&s, 0, sizeof(s));
	s.name = "tp";
	s.nr_buffers = 1;
	s.buffers[0].size_kb = 1024;
	s.buffers[0].tps = t;
	s.buffers[0].nr_tps = n;
	return pbt_nl_new_session(nl, &s, &id);
}

TEST_F(pbt, tracepoint_accepted)
{
	struct pbt_tp_layout l;
	struct pbt_tp_spec t;

	tp_signal(&l, &t);
	ASSERT_GT(t.id, 0);
	ASSERT_EQ(0, tp_session(self->nl, &t, 1))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

TEST_F(pbt, tracepoint_wrong_id_rejected)
{
	struct pbt_tp_layout l;
	struct pbt_tp_spec t;

	tp_signal(&l, &t);
	t.id = tracefs_id("sched/sched_switch");
	ASSERT_GT(t.id, 0);
	ASSERT_EQ(-EINVAL, tp_session(self->nl, &t, 1));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl),
			       fmt_or("signal/signal_generate: id", ID_LITERAL)))
		TH_LOG("%s", pbt_nl_error(self->nl));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl),
			       fmt_or("is another tracepoint's (read its id again)", ID_LITERAL)))
		TH_LOG("%s", pbt_nl_error(self->nl));
	t.id = 0x7fffffff;
	ASSERT_GT(0, tp_session(self->nl, &t, 1));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl),
			       fmt_or("is no tracepoint here (read its id again)", ID_LITERAL)))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

TEST_F(pbt, tracepoint_field_beyond_record_rejected)
{
	struct pbt_tp_layout l;
	struct pbt_tp_spec t;

	tp_signal(&l, &t);
	l.fields[1].offset = 8190;
	ASSERT_EQ(-EINVAL, tp_session(self->nl, &t, 1));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl),
			       fmt_or("field 1 (sig): offset + size beyond", LAYOUT_LITERAL)))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

TEST_F(pbt, tracepoint_unknown_kind_rejected)
{
	struct pbt_tp_layout l;
	struct pbt_tp_spec t;

	tp_signal(&l, &t);
	l.fields[1].kind = 99;
	ASSERT_EQ(-EINVAL, tp_session(self->nl, &t, 1));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl),
			       fmt_or("field 1 (sig): unknown kind", LAYOUT_LITERAL)))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

TEST_F(pbt, tracepoint_bad_name_rejected)
{
	struct pbt_tp_layout l;
	struct pbt_tp_spec t;

	tp_signal(&l, &t);
	strcpy(l.group, "");
	ASSERT_EQ(-EINVAL, tp_session(self->nl, &t, 1));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "\"group/name\""))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

/* A filter is compiled against the layout at NEW_SESSION (FILTER). */
TEST_F(pbt, tracepoint_filter_accepted)
{
	struct pbt_tp_layout l;
	struct pbt_tp_spec t;

	tp_signal(&l, &t);
	t.filter = "(sig == 10 || sig >= 0x11) && !(common_pid < 0)";
	ASSERT_EQ(0, tp_session(self->nl, &t, 1))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

/* A bad filter is refused with its position, what is wrong, and the event. */
TEST_F(pbt, tracepoint_bad_filter_rejected)
{
	static const char *const bad[][2] = {
		{ "sig ~ \"1*\"",
		  "filter: position 4: '~' needs a string field (signal/signal_generate)" },
		{ "sig == 10 && sgi == 1",
		  "filter: position 13: unknown field 'sgi' (signal/" },
		{ "(sig == 10", "filter: position 0: '(' without ')'" },
		{ "", "filter: position 0: empty filter" },
	};
	struct pbt_tp_layout l;
	struct pbt_tp_spec t;
	unsigned int i;

	tp_signal(&l, &t);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t.filter = bad[i][0];
		ASSERT_EQ(-EINVAL, tp_session(self->nl, &t, 1))
			TH_LOG("'%s': %s", bad[i][0], pbt_nl_error(self->nl));
		ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl),
				       fmt_or(bad[i][1], "filter: does not compile against the tracepoint's fields")))
			TH_LOG("'%s': %s", bad[i][0], pbt_nl_error(self->nl));
	}
}

/*
 * @n syscalls/ tracepoints of this kernel, their ids from tracefs, with
 * layouts of no field (small: more fit a message); how many were found.
 */
static size_t syscall_tps(struct pbt_tp_layout *l, struct pbt_tp_spec *t,
			  size_t n)
{
	char name[PBTRACE_NAME_MAX + 16];
	size_t i, got = 0;
	glob_t g;

	if (glob("/sys/kernel/tracing/events/syscalls/sys_*/id", 0, NULL, &g) &&
	    glob("/sys/kernel/debug/tracing/events/syscalls/sys_*/id", 0, NULL, &g))
		return 0;
	for (i = 0; i < g.gl_pathc && got < n; i++) {
		const char *e = strstr(g.gl_pathv[i], "/syscalls/") + 10;
		size_t len = strcspn(e, "/");

		if (len >= sizeof(l->name))
			continue;
		memset(&l[got], 0, sizeof(l[got]));
		strcpy(l[got].group, "syscalls");
		memcpy(l[got].name, e, len);
		l[got].proto_id = PBTRACE_TP_GENERIC_PROTO_BASE + got;
		snprintf(name, sizeof(name), "syscalls/%s", l[got].name);
		memset(&t[got], 0, sizeof(t[got]));
		t[got].layout = &l[got];
		t[got].id = tracefs_id(name);
		t[got].flags = PBTRACE_TP_FTRACE;
		got += t[got].id > 0;
	}
	globfree(&g);
	return got;
}

/*
 * More than PBTRACE_MAX_TRACEPOINTS in a session. No kernel here has
 * 2,049 tracepoints (6.1: 1,339) and a buffer holds each once, so 513
 * syscalls/ tracepoints in each of the 4 buffers: this machine's, and
 * three relayed machines' (which may repeat the host's). Each id is
 * checked with a counter made in a kworker: 20-30 s under TCG, past the
 * harness's 30 s on a loaded host.
 */
TEST_F_TIMEOUT(pbt, too_many_tracepoints_rejected, 180)
{
	enum { PER = PBTRACE_MAX_TRACEPOINTS / PBTRACE_MAX_BUFFERS + 1 };
	static const char *const machines[] = { "m1", "m2", "m3" };
	static struct pbt_tp_layout l[PER];
	static struct pbt_tp_spec t[PER];
	struct pbt_session_spec s;
	uint32_t id;
	size_t i;

	ASSERT_EQ(PER, syscall_tps(l, t, PER));
	memset(&s, 0, sizeof(s));
	s.name = "tp";
	s.nr_buffers = PBTRACE_MAX_BUFFERS;
	for (i = 0; i < PBTRACE_MAX_BUFFERS; i++) {
		s.buffers[i].size_kb = 1024;
		s.buffers[i].tps = t;
		s.buffers[i].nr_tps = PER;
		if (i) {
			s.buffers[i].machines[0] = machines[i - 1];
			s.buffers[i].nr_machines = 1;
		}
	}
	ASSERT_EQ(-E2BIG, pbt_nl_new_session(self->nl, &s, &id))
		TH_LOG("%s", pbt_nl_error(self->nl));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "too many tracepoints"))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

TEST_F(pbt, buffer_smaller_than_chunks_rejected)
{
	struct pbt_session_spec s;
	uint32_t id;

	spec_one(&s, "x", "sched/sched_switch");
	s.buffers[0].size_kb = 8;
	s.buffers[0].chunk_kb = 16;
	ASSERT_EQ(-EINVAL, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "at least chunk_kb * nr_cpus"))
		TH_LOG("%s", pbt_nl_error(self->nl));
}

TEST_F(pbt, chunk_not_power_of_two_rejected)
{
	struct pbt_session_spec s;
	uint32_t id;

	spec_one(&s, "x", "sched/sched_switch");
	s.buffers[0].chunk_kb = 12;
	ASSERT_EQ(-EINVAL, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "power of two"));
	s.buffers[0].chunk_kb = 512;	/* out of the policy's range */
	ASSERT_EQ(-ERANGE, pbt_nl_new_session(self->nl, &s, &id));
}

TEST_F(pbt, bad_fill_policy_rejected)
{
	struct pbt_session_spec s;
	uint32_t id;

	spec_one(&s, "x", "sched/sched_switch");
	s.buffers[0].fill_policy = 3;
	ASSERT_EQ(-ERANGE, pbt_nl_new_session(self->nl, &s, &id));
}

TEST_F(pbt, no_events_rejected)
{
	struct pbt_session_spec s;
	uint32_t id;

	spec_one(&s, "x", "sched/sched_switch");
	s.buffers[0].nr_events = 0;
	ASSERT_EQ(-EINVAL, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "event"));
}

/* ---- the live watermark (watermark.c) ---- */

TEST_F(pbt, watermark_period_validated_and_reported)
{
	struct pbt_session_info info;
	struct pbt_session_spec s;
	uint32_t id;

	spec_one(&s, "wm", "sched/sched_switch");
	s.buffers[0].watermark_ms = 10001;
	ASSERT_EQ(-ERANGE, pbt_nl_new_session(self->nl, &s, &id));
	s.buffers[0].watermark_ms = 10;
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id)) TH_LOG("%s", pbt_nl_error(self->nl));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &info));
	EXPECT_EQ(10, info.buffers[0].watermark_ms);
	EXPECT_FALSE(info.buffers[0].watermark_expedited);
	pbt_session_info_free(&info);
	/* Expedited grace periods need a period to have rounds at all. */
	spec_one(&s, "wm-exp", "sched/sched_switch");
	s.buffers[0].watermark_expedited = true;
	ASSERT_EQ(-EINVAL, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "needs a watermark period"))
		TH_LOG("%s", pbt_nl_error(self->nl));
	s.buffers[0].watermark_ms = 20;
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id)) TH_LOG("%s", pbt_nl_error(self->nl));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &info));
	EXPECT_EQ(20, info.buffers[0].watermark_ms);
	EXPECT_TRUE(info.buffers[0].watermark_expedited);
	pbt_session_info_free(&info);
}

TEST_F(pbt, get_watermark_errors)
{
	struct pbt_watermark_info w;
	struct pbt_session_spec s;
	uint32_t id;

	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_GET_WATERMARK, 0));
	ASSERT_NE(NULL, strstr(self->raw.extack, "session id")) TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(-ENOENT, pbt_nl_get_watermark(self->nl, 999999, &w));
	/* No buffer with a watermark, or not started: none to tell. */
	spec_one(&s, "nowm", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	ASSERT_EQ(0, pbt_nl_get_watermark(self->nl, id, &w));
	EXPECT_EQ(PBTRACE_STATE_STARTED, w.state);
	spec_one(&s, "wm", "sched/sched_switch");
	s.buffers[0].watermark_ms = 10;
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(0, pbt_nl_get_watermark(self->nl, id, &w));
	EXPECT_EQ(PBTRACE_STATE_CONFIGURED, w.state);
}

/*
 * The read watermark follows the reader: while sealed chunks wait unread
 * it stays behind the published one; once the stopped session's chunks
 * are all read and put back, both say "everything".
 */
TEST_F(pbt, read_watermark_waits_for_the_reader)
{
	struct pbt_watermark_info w;
	struct pbtrace_chunk_req req;
	struct pbt_session_spec s;
	const uint8_t *data;
	struct pbt_reader r;
	char err[256];
	uint32_t id;
	int i;

	spec_one(&s, "wm", "raw_syscalls/sys_enter");
	s.buffers[0].watermark_ms = 5;
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(0, pbt_reader_open(&r, id, 0, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	/* Our own syscalls are events: rounds run while we ask. */
	for (i = 0; i < 2000; i++) {
		ASSERT_EQ(1, pbt_nl_get_watermark(self->nl, id, &w)) TH_LOG("%s", pbt_nl_error(self->nl));
		if (w.published_ns && pbt_reader_next(&r, &req, &data) == 0)
			break;
		usleep(5000);
	}
	ASSERT_NE(0, w.published_ns) TH_LOG("no round in 10 s");
	/* A chunk is held, none put back: the read watermark is behind. */
	ASSERT_EQ(1, pbt_nl_get_watermark(self->nl, id, &w));
	EXPECT_LT(w.read_ns, w.published_ns);
	ASSERT_EQ(0, pbt_reader_put(&r, &req));
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
	ASSERT_EQ(1, pbt_nl_get_watermark(self->nl, id, &w));
	EXPECT_EQ(UINT64_MAX, w.published_ns);
	EXPECT_NE(UINT64_MAX, w.read_ns);	/* sealed chunks wait unread */
	while (pbt_reader_next(&r, &req, &data) == 0)
		ASSERT_EQ(0, pbt_reader_put(&r, &req));
	ASSERT_EQ(1, pbt_nl_get_watermark(self->nl, id, &w));
	EXPECT_EQ(UINT64_MAX, w.read_ns);
	EXPECT_EQ(PBTRACE_STATE_STOPPED, w.state);
	pbt_reader_close(&r);
}

/* ---- session rules ---- */

TEST_F(pbt, duplicate_name_eexist)
{
	struct pbt_session_spec s;
	uint32_t id, id2;

	spec_one(&s, "dup", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(-EEXIST, pbt_nl_new_session(self->nl, &s, &id2));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "already in use"));
	/* Once destroyed, the name is free again. */
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_DESTROY_SESSION, id));
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id2));
	ASSERT_GT(id2, id);
}

TEST_F(pbt, session_limit)
{
	struct pbt_session_spec s;
	char name[16];
	uint32_t id;
	int i;

	for (i = 0; i < PBTRACE_MAX_SESSIONS; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		spec_one(&s, name, "sched/sched_switch");
		s.buffers[0].size_kb = 64;
		ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id))
			TH_LOG("%s", pbt_nl_error(self->nl));
	}
	spec_one(&s, "one-too-many", "sched/sched_switch");
	s.buffers[0].size_kb = 64;
	ASSERT_EQ(-ENOSPC, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "too many sessions"));
}

static int next_notify(struct pbt_nl *nl, struct pbt_notify *n, int ms)
{
	struct pollfd pfd = { .fd = pbt_nl_notify_fd(nl), .events = POLLIN };
	int ret = pbt_nl_next_notify(nl, n);

	if (ret)
		return ret;
	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	return pbt_nl_next_notify(nl, n);
}

TEST_F(pbt, lifecycle_states_and_notifications)
{
	static const int want[] = {
		PBTRACE_CMD_NEW_SESSION, PBTRACE_CMD_START_SESSION,
		PBTRACE_CMD_STOP_SESSION, PBTRACE_CMD_DESTROY_SESSION,
	};
	struct pbt_session_info si;
	struct pbt_session_spec s;
	struct pbt_notify n;
	uint32_t id;
	size_t i;

	ASSERT_EQ(0, pbt_nl_subscribe(self->nl));
	spec_one(&s, "life", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_EQ(PBTRACE_STATE_CONFIGURED, si.state);
	ASSERT_EQ(0, si.start_ns);
	pbt_session_info_free(&si);

	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	ASSERT_EQ(-EALREADY, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	usleep(100000);		/* let the scheduler switch a few times */
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_FLUSH_SESSION, id));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_EQ(PBTRACE_STATE_STARTED, si.state);
	ASSERT_NE(0, si.start_ns);
	ASSERT_EQ(1, si.nr_buffers);
	ASSERT_EQ(1, si.buffers[0].nr_events);
	ASSERT_STREQ("sched/sched_switch", si.buffers[0].events[0]);
	/* GET_SESSION carries no per-CPU counters: GET_CPU_STATS pages them. */
	ASSERT_EQ(0, si.buffers[0].nr_cpus);
	ASSERT_EQ(0, pbt_nl_get_cpu_stats(self->nl, &si));
	ASSERT_EQ(pbt_kernel_cpus(NULL), (long)si.buffers[0].nr_cpus);
	pbt_session_info_free(&si);

	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
	ASSERT_EQ(-EALREADY, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
	ASSERT_EQ(-EINVAL, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_EQ(PBTRACE_STATE_STOPPED, si.state);
	ASSERT_GE(si.stop_ns, si.start_ns);
	ASSERT_EQ(0, pbt_nl_get_cpu_stats(self->nl, &si));
	{
		uint64_t events = 0;

		for (i = 0; i < si.buffers[0].nr_cpus; i++)
			events += si.buffers[0].cpus[i].events_written;
		/* 100 ms with a sleeping test: at least our own switches. */
		ASSERT_GT(events, 0);
	}
	pbt_session_info_free(&si);
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_DESTROY_SESSION, id));
	ASSERT_EQ(-ENOENT, pbt_nl_get_session(self->nl, id, &si));
	si.id = id;
	ASSERT_EQ(-ENOENT, pbt_nl_get_cpu_stats(self->nl, &si));
	ASSERT_EQ(-ENOENT, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ASSERT_EQ(1, next_notify(self->nl, &n, 2000));
		ASSERT_EQ(want[i], n.cmd);
		ASSERT_EQ(id, n.session_id);
	}
}

/* A session waiting for its trigger can be stopped; it never starts. */
TEST_F(pbt, stop_before_start)
{
	struct pbt_session_info si;
	struct pbt_session_spec s;
	uint32_t id;

	spec_one(&s, "never", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_EQ(PBTRACE_STATE_STOPPED, si.state);
	ASSERT_EQ(0, si.start_ns);
	pbt_session_info_free(&si);
	ASSERT_EQ(-EINVAL, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	ASSERT_EQ(-EALREADY, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
}

TEST_F(pbt, config_round_trip_at_max_size)
{
	static unsigned char cfg[PBTRACE_MAX_CONFIG];
	struct pbt_session_info si, *v;
	struct pbt_session_spec s;
	uint32_t id;
	size_t i, n;

	for (i = 0; i < sizeof(cfg); i++)
		cfg[i] = (unsigned char)(i * 7 + 3);
	spec_one(&s, "bigcfg", "sched/sched_switch");
	s.buffers[0].pids[0] = 1;
	s.buffers[0].pids[1] = 4242;
	s.buffers[0].nr_pids = 2;
	s.config = cfg;
	s.config_len = sizeof(cfg);
	s.output = "/tmp/out.pftrace";
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id))
		TH_LOG("%s", pbt_nl_error(self->nl));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_EQ(sizeof(cfg), si.config_len);
	ASSERT_EQ(0, memcmp(cfg, si.config, sizeof(cfg)));
	ASSERT_STREQ("/tmp/out.pftrace", si.output);
	ASSERT_EQ(2, si.buffers[0].nr_pids);
	ASSERT_EQ(1, si.buffers[0].pids[0]);
	ASSERT_EQ(4242, si.buffers[0].pids[1]);
	pbt_session_info_free(&si);
	/* The dump path sizes its messages for this too. */
	ASSERT_EQ(0, pbt_nl_list_sessions(self->nl, &v, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(sizeof(cfg), v[0].config_len);
	ASSERT_EQ(0, memcmp(cfg, v[0].config, sizeof(cfg)));
	pbt_session_infos_free(v, n);
}

TEST_F(pbt, trigger_is_multicast)
{
	struct pbt_notify n;

	ASSERT_EQ(0, pbt_nl_subscribe(self->nl));
	ASSERT_EQ(0, pbt_nl_trigger(self->nl, "my-trigger"));
	ASSERT_EQ(1, next_notify(self->nl, &n, 2000));
	ASSERT_EQ(PBTRACE_CMD_TRIGGER, n.cmd);
	ASSERT_STREQ("my-trigger", n.trigger);
	ASSERT_EQ(-EINVAL, pbt_nl_trigger(self->nl, ""));
}

/* ---- privilege ---- */

/* Runs fn as nobody with no capabilities; returns its exit status. */
static int as_nobody(int (*fn)(void))
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : 65534;
	gid_t gid = pw ? pw->pw_gid : 65534;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		/* setuid from root to non-root clears every capability set. */
		if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
			_exit(100);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int unprivileged_calls(void)
{
	struct pbt_session_info *v;
	struct pbt_session_spec s;
	char err[256];
	struct pbt_nl *nl = pbt_nl_open(err, sizeof(err));
	uint32_t id, pid;
	size_t n;

	if (!nl)
		return 10;
	spec_one(&s, "nobody", "sched/sched_switch");
	if (pbt_nl_new_session(nl, &s, &id) != -EPERM)
		return 11;
	if (!strstr(pbt_nl_error(nl), "CAP_SYS_ADMIN"))
		return 12;
	if (pbt_nl_session_cmd(nl, PBTRACE_CMD_DESTROY_SESSION, 1) != -EPERM)
		return 13;
	if (pbt_nl_list_sessions(nl, &v, &n) != -EPERM)
		return 14;
	if (pbt_nl_daemon_pid(nl, &pid) != -EPERM)
		return 15;
	if (pbt_nl_register_daemon(nl) != -EPERM)
		return 16;
	if (pbt_nl_trigger(nl, "t") != -EPERM)
		return 17;
	pbt_nl_close(nl);
	return 0;
}

TEST_F(pbt, unprivileged_refused)
{
	struct pbt_session_spec s;
	uint32_t id;

	/* A session exists, so a refused dump cannot pass by being empty. */
	spec_one(&s, "root-owned", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(0, as_nobody(unprivileged_calls));
}

/* ---- the daemon socket ---- */

static int register_then_wait(int fd)
{
	char err[256], c;
	struct pbt_nl *nl = pbt_nl_open(err, sizeof(err));

	if (!nl || pbt_nl_register_daemon(nl))
		return 1;
	if (write(fd, "r", 1) != 1)
		return 2;
	/* Exit without a goodbye, as a killed daemon would. */
	if (read(fd, &c, 1) < 0)
		return 3;
	_exit(0);
}

TEST_F(pbt, daemon_gone_multicast)
{
	struct pbt_session_spec s;
	struct pbt_notify n;
	int sv[2], status, got_gone = 0;
	uint32_t id, pid;
	char c;
	pid_t child;

	spec_one(&s, "survivor", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	ASSERT_EQ(0, pbt_nl_subscribe(self->nl));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	child = fork();
	ASSERT_GE(child, 0);
	if (!child)
		_exit(register_then_wait(sv[1]));
	ASSERT_EQ(1, read(sv[0], &c, 1));
	ASSERT_EQ(0, pbt_nl_daemon_pid(self->nl, &pid));
	ASSERT_EQ((uint32_t)child, pid);
	/* A second daemon is refused while the first lives. */
	ASSERT_EQ(-EBUSY, pbt_nl_register_daemon(self->nl));

	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	while (next_notify(self->nl, &n, 3000) == 1)
		if (n.cmd == PBTRACE_CMD_DAEMON_GONE) {
			got_gone = 1;
			break;
		}
	ASSERT_EQ(1, got_gone);
	ASSERT_EQ(0, pbt_nl_daemon_pid(self->nl, &pid));
	ASSERT_EQ(0, pid);
	/* The session and its buffers stay for the next traced. */
	{
		struct pbt_session_info si;

		ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
		ASSERT_EQ(1, si.nr_buffers);
		pbt_session_info_free(&si);
	}
	close(sv[0]);
	close(sv[1]);
}

struct event_seen {
	int seen, available, total;
};

static int note_event(const char *name, int available, void *arg)
{
	struct event_seen *r = arg;

	r->total++;
	if (!strcmp(name, "sched/sched_switch")) {
		r->seen = 1;
		r->available = available;
	}
	return 0;
}

TEST_F(pbt, list_events_has_sched_switch)
{
	struct event_seen r = { 0 };

	ASSERT_EQ(0, pbt_nl_list_events(self->nl, note_event, &r));
	ASSERT_EQ(1, r.seen);
	ASSERT_EQ(1, r.available);
	ASSERT_GT(r.total, 10);
}

/* ---- raw replies: attribute walking ---- */

#define ATTR_DATA(a) ((void *)((char *)(a) + NLA_HDRLEN))
#define ATTR_LEN(a) ((int)(a)->nla_len - NLA_HDRLEN)
#define for_each_attr(a, start, rem)						\
	for (a = (struct nlattr *)(start);					\
	     (rem) >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&		\
	     a->nla_len <= (rem);						\
	     (rem) -= NLA_ALIGN(a->nla_len),					\
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

static struct nlattr *attr_get(void *start, int rem, int type)
{
	struct nlattr *a;

	for_each_attr(a, start, rem)
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

/* The attributes of a generic netlink message, and their length. */
static void *genl_attrs(struct nlmsghdr *nlh, int *rem)
{
	*rem = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	return (char *)NLMSG_DATA(nlh) + GENL_HDRLEN;
}

/* One buffer of a hand-built session; sys NULL: no syscall filter. */
struct raw_buffer {
	uint32_t size_kb, chunk_kb;
	const char *events[4];
	int nr_events;
	const uint32_t *sys;
	int nr_sys;
};

static size_t put_buffers(struct raw_msg *m, size_t off,
			  const struct raw_buffer *b, int n)
{
	struct nlattr *bufs, *buf, *evs, *sc;
	int i, j;

	bufs = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_SESSION_BUFFERS);
	for (i = 0; i < n; i++) {
		buf = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_BUFFER);
		put_u32(m, &off, PBTRACE_A_BUFFER_SIZE_KB, b[i].size_kb);
		if (b[i].chunk_kb)
			put_u32(m, &off, PBTRACE_A_BUFFER_CHUNK_KB, b[i].chunk_kb);
		evs = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_BUFFER_EVENTS);
		for (j = 0; j < b[i].nr_events; j++)
			put_str(m, &off, PBTRACE_A_EVENT_NAME, b[i].events[j]);
		nest_end(m, off, evs);
		if (b[i].sys) {
			sc = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_BUFFER_SYSCALLS);
			for (j = 0; j < b[i].nr_sys; j++)
				put_u32(m, &off, PBTRACE_A_SYSCALL_NR, b[i].sys[j]);
			nest_end(m, off, sc);
		}
		nest_end(m, off, buf);
	}
	nest_end(m, off, bufs);
	return off;
}

/* raw_send() of a command with a reply: its attributes in *attrs, *rem. */
static int raw_call(struct raw *r, struct raw_msg *m, int cmd, size_t off,
		    void **attrs, int *rem)
{
	int ret = raw_send(r, m, cmd, off);

	if (ret)
		return ret;
	if (!raw_reply_len)
		return -ENODATA;
	*attrs = genl_attrs((struct nlmsghdr *)raw_reply_buf, rem);
	return 0;
}

/* NEW_SESSION by hand; 0 and *id, or the kernel's -errno (extack in r). */
static int raw_new(struct raw *r, struct raw_msg *m, const char *name,
		   const char *output, const struct raw_buffer *b, int n,
		   uint32_t *id)
{
	struct nlattr *a;
	size_t off = 0;
	int ret, rem;
	void *attrs;

	put_str(m, &off, PBTRACE_A_SESSION_NAME, name);
	if (output)
		put_str(m, &off, PBTRACE_A_SESSION_OUTPUT, output);
	off = put_buffers(m, off, b, n);
	ret = raw_call(r, m, PBTRACE_CMD_NEW_SESSION, off, &attrs, &rem);
	if (ret)
		return ret;
	a = attr_get(attrs, rem, PBTRACE_A_SESSION_ID);
	if (!a)
		return -ENODATA;
	*id = *(uint32_t *)ATTR_DATA(a);
	return 0;
}

/* GET_SESSION by hand: each buffer's PBTRACE_A_BUFFER_SYSCALLS list. */
static int raw_syscalls(struct raw *r, struct raw_msg *m, uint32_t id,
			uint32_t sys[][8], int nr_sys[])
{
	struct nlattr *bufs, *b, *sc, *a;
	int ret, rem, brem, srem, n = 0;
	size_t off = 0;
	void *attrs;

	put_u32(m, &off, PBTRACE_A_SESSION_ID, id);
	ret = raw_call(r, m, PBTRACE_CMD_GET_SESSION, off, &attrs, &rem);
	if (ret)
		return ret;
	bufs = attr_get(attrs, rem, PBTRACE_A_SESSION_BUFFERS);
	if (!bufs)
		return -ENODATA;
	brem = ATTR_LEN(bufs);
	for_each_attr(b, ATTR_DATA(bufs), brem) {
		if (n == PBTRACE_MAX_BUFFERS)
			break;
		nr_sys[n] = -1;		/* no attribute */
		sc = attr_get(ATTR_DATA(b), ATTR_LEN(b), PBTRACE_A_BUFFER_SYSCALLS);
		if (sc) {
			nr_sys[n] = 0;
			srem = ATTR_LEN(sc);
			for_each_attr(a, ATTR_DATA(sc), srem)
				if (nr_sys[n] < 8)
					sys[n][nr_sys[n]++] = *(uint32_t *)ATTR_DATA(a);
		}
		n++;
	}
	return n;
}

/* A socket in the "sessions" group, or -errno. */
static int mcast_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	int e;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &mcast_group,
		       sizeof(mcast_group))) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

struct mcast_note {
	int cmd;
	uint32_t id;
	char error[PBTRACE_ERROR_MAX + 1];
	int has_error;
};

/* 1: the next notification within ms, 0: none, -errno. */
static int mcast_next(int fd, int ms, struct mcast_note *n)
{
	static unsigned char buf[16384];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g;
	struct nlattr *a;
	ssize_t len;
	void *attrs;
	int rem;

	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0)
		return -errno;
	if (!NLMSG_OK(nlh, len) || nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EPROTO;
	memset(n, 0, sizeof(*n));
	g = NLMSG_DATA(nlh);
	n->cmd = g->cmd;
	attrs = genl_attrs(nlh, &rem);
	a = attr_get(attrs, rem, PBTRACE_A_SESSION_ID);
	if (a)
		n->id = *(uint32_t *)ATTR_DATA(a);
	a = attr_get(attrs, rem, PBTRACE_A_SESSION_ERROR);
	if (a) {
		n->has_error = 1;
		snprintf(n->error, sizeof(n->error), "%.*s", ATTR_LEN(a),
			 (char *)ATTR_DATA(a));
	}
	return 1;
}

/* Waits for notification cmd about id, skipping others. */
static int mcast_wait(int fd, int cmd, uint32_t id, struct mcast_note *n)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (mcast_next(fd, 2000, n) != 1)
			return 0;
		if (n->cmd == cmd && n->id == id)
			return 1;
	}
	return 0;
}

/* ---- an independent decoder of the chunks, for raw_syscalls events ---- */

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

/* One field: its number, and its value or (length-delimited) its bytes. */
static int next_field(const uint8_t **p, const uint8_t *end, uint32_t *field,
		      uint64_t *v, const uint8_t **sub)
{
	uint64_t key;

	*sub = NULL;
	if (get_varint(p, end, &key))
		return -1;
	*field = key >> 3;
	switch (key & 7) {
	case 0:
		return get_varint(p, end, v);
	case 1:
		if (end - *p < 8)
			return -1;
		*p += 8;
		return 0;
	case 5:
		if (end - *p < 4)
			return -1;
		*p += 4;
		return 0;
	case 2:
		if (get_varint(p, end, v) || *v > (uint64_t)(end - *p))
			return -1;
		*sub = *p;
		*p += *v;
		return 0;
	}
	return -1;
}

struct sys_seen {
	uint64_t events;		/* FtraceEvents in the chunks */
	uint64_t enter[2], exit[2];	/* of want[0], want[1] */
	uint64_t other_sys;		/* sys_enter/exit of any other id */
	uint64_t not_sys;		/* FtraceEvents of other kinds */
};

static int decode_event(const uint8_t *p, const uint8_t *end,
			const long want[2], struct sys_seen *s)
{
	const uint8_t *sub, *q, *qend;
	uint32_t f, f2;
	uint64_t v, v2;
	int64_t id = -1;
	int i, kind = 0;	/* 1 enter, 2 exit */

	while (p < end) {
		if (next_field(&p, end, &f, &v, &sub))
			return -1;
		if (!sub || (f != PB_FTRACEEVENT_SYS_ENTER &&
			     f != PB_FTRACEEVENT_SYS_EXIT))
			continue;
		kind = f == PB_FTRACEEVENT_SYS_ENTER ? 1 : 2;
		for (q = sub, qend = sub + v; q < qend;) {
			if (next_field(&q, qend, &f2, &v2, &sub))
				return -1;
			if (f2 == PB_SYSENTERFTRACEEVENT_ID && !sub)
				id = (int64_t)v2;
		}
	}
	if (!kind) {
		s->not_sys++;
		return 0;
	}
	for (i = 0; i < 2; i++) {
		if (id != want[i])
			continue;
		if (kind == 1)
			s->enter[i]++;
		else
			s->exit[i]++;
		return 0;
	}
	s->other_sys++;
	return 0;
}

/* Trace.packet -> TracePacket.ftrace_events -> bundle.event, all of them. */
static int decode_chunk(const uint8_t *p, const uint8_t *end,
			const long want[2], struct sys_seen *s)
{
	const uint8_t *pkt, *bun, *ev, *pend, *bend;
	uint32_t f;
	uint64_t v, v2;

	while (p < end) {
		if (next_field(&p, end, &f, &v, &pkt) || f != PB_TRACE_PACKET || !pkt)
			return -1;
		for (pend = pkt + v; pkt < pend;) {
			if (next_field(&pkt, pend, &f, &v2, &bun))
				return -1;
			if (f != PB_TRACEPACKET_FTRACE_EVENTS || !bun)
				continue;
			for (bend = bun + v2; bun < bend;) {
				uint64_t v3;

				if (next_field(&bun, bend, &f, &v3, &ev))
					return -1;
				if (f != PB_FTRACEEVENTBUNDLE_EVENT || !ev)
					continue;
				s->events++;
				if (decode_event(ev, ev + v3, want, s))
					return -1;
			}
		}
	}
	return 0;
}

/*
 * Reads every sealed chunk of a stopped session's buffer, decodes it and
 * sums the buffer's counters: *read is the bytes of the chunks read.
 */
static int drain_buffer(uint32_t id, uint32_t buffer, const long want[2],
			struct sys_seen *s, uint64_t *read,
			struct pbtrace_cpu_stats *sum)
{
	struct pbtrace_chunk_req req;
	struct pbtrace_cpu_stats st;
	struct pbt_reader r;
	const uint8_t *data;
	char err[256];
	uint32_t cpu;
	int ret;

	memset(s, 0, sizeof(*s));
	memset(sum, 0, sizeof(*sum));
	*read = 0;
	if (pbt_reader_open(&r, id, buffer, err, sizeof(err)) < 0)
		return -1;
	while (!(ret = pbt_reader_next(&r, &req, &data))) {
		*read += req.len;
		if (decode_chunk(data, data + req.len, want, s))
			ret = -EPROTO;
		pbt_reader_put(&r, &req);
		if (ret)
			break;
	}
	for (cpu = 0; cpu < pbt_reader_header(&r)->nr_cpus; cpu++) {
		pbt_reader_stats(&r, cpu, &st);
		sum->events_written += st.events_written;
		sum->bytes_written += st.bytes_written;
		sum->chunks_overwritten += st.chunks_overwritten;
		sum->lost_full += st.lost_full;
		sum->lost_too_large += st.lost_too_large;
	}
	pbt_reader_close(&r);
	return ret == -EAGAIN ? 0 : -2;
}

static const char *const sys_events[] = {
	"raw_syscalls/sys_enter", "raw_syscalls/sys_exit",
};

/* ---- syscall filter ---- */

#define SYSCALL_LOOPS 300

TEST_F(pbt, syscall_filter_records_only_named_syscalls)
{
	static const uint32_t only_getppid[] = { SYS_getppid };
	const long want[2] = { SYS_getppid, SYS_getuid };
	struct raw_buffer b[2] = {
		{ .size_kb = 2048, .nr_events = 2, .sys = only_getppid, .nr_sys = 1 },
		{ .size_kb = 4096, .nr_events = 2 },	/* no filter */
	};
	struct pbtrace_cpu_stats st0, st1;
	struct sys_seen s0, s1;
	uint64_t read0, read1;
	uint32_t id;
	int i;

	for (i = 0; i < 2; i++) {
		b[i].events[0] = sys_events[0];
		b[i].events[1] = sys_events[1];
	}
	ASSERT_EQ(0, raw_new(&self->raw, self->m, "sysfilter", NULL, b, 2, &id))
		TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	for (i = 0; i < SYSCALL_LOOPS; i++) {
		syscall(SYS_getppid);
		syscall(SYS_getuid);
	}
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));

	ASSERT_EQ(0, drain_buffer(id, 0, want, &s0, &read0, &st0));
	ASSERT_EQ(0, drain_buffer(id, 1, want, &s1, &read1, &st1));
	TH_LOG("filtered: %llu events (getppid %llu/%llu), unfiltered: %llu (getuid %llu, other %llu)",
	       (unsigned long long)s0.events, (unsigned long long)s0.enter[0],
	       (unsigned long long)s0.exit[0], (unsigned long long)s1.events,
	       (unsigned long long)s1.enter[1], (unsigned long long)s1.other_sys);
	/* The filtered buffer: getppid and nothing else, every call. */
	ASSERT_EQ(0, s0.other_sys);
	ASSERT_EQ(0, s0.enter[1] + s0.exit[1]);
	ASSERT_EQ(0, s0.not_sys);
	ASSERT_GE(s0.enter[0], SYSCALL_LOOPS);
	ASSERT_GE(s0.exit[0], SYSCALL_LOOPS);
	/* Filtered out is not lost: every event written is in the chunks. */
	ASSERT_EQ(0, st0.chunks_overwritten + st0.lost_full + st0.lost_too_large);
	ASSERT_EQ(st0.events_written, s0.events);
	/* bytes_written counts every byte of the chunks, headers too. */
	ASSERT_EQ(st0.bytes_written, read0);
	/* The same run, unfiltered: the other syscalls were there. */
	ASSERT_GE(s1.enter[1], SYSCALL_LOOPS);
	ASSERT_GE(s1.exit[1], SYSCALL_LOOPS);
	ASSERT_GE(s1.enter[0], SYSCALL_LOOPS);
	ASSERT_GT(s1.events, s0.events + 2 * SYSCALL_LOOPS - 1);
	if (!st1.chunks_overwritten) {
		ASSERT_EQ(st1.events_written, s1.events);
		ASSERT_EQ(st1.bytes_written, read1);
	}
}

TEST_F(pbt, syscall_filter_validated_and_reported)
{
	static const uint32_t too_big[] = { SYS_getppid, 100000 };
	static const uint32_t two[] = { SYS_getuid, SYS_getppid, SYS_getppid };
	struct raw_buffer b[2] = {
		{ .size_kb = 1024, .nr_events = 1, .sys = too_big, .nr_sys = 2 },
		{ .size_kb = 1024, .nr_events = 1 },
	};
	uint32_t sys[PBTRACE_MAX_BUFFERS][8], id;
	int nr_sys[PBTRACE_MAX_BUFFERS];

	b[0].events[0] = sys_events[0];
	b[1].events[0] = sys_events[1];
	ASSERT_EQ(-EINVAL, raw_new(&self->raw, self->m, "sysbad", NULL, b, 1, &id));
	ASSERT_NE(NULL, strstr(self->raw.extack,
			       fmt_or("100000", "a syscall number is not below NR_syscalls")))
		TH_LOG("extack: %s", self->raw.extack);
	b[0].nr_sys = 0;	/* an empty list would record nothing */
	ASSERT_EQ(-EINVAL, raw_new(&self->raw, self->m, "sysbad", NULL, b, 1, &id));
	ASSERT_NE(NULL, strstr(self->raw.extack, "empty"))
		TH_LOG("extack: %s", self->raw.extack);

	/* GET_SESSION gives the set back, in order, once each. */
	b[0].sys = two;
	b[0].nr_sys = 3;
	ASSERT_EQ(0, raw_new(&self->raw, self->m, "sysget", NULL, b, 2, &id))
		TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(2, raw_syscalls(&self->raw, self->m, id, sys, nr_sys));
	ASSERT_EQ(2, nr_sys[0]);
	ASSERT_EQ(SYS_getppid < SYS_getuid ? SYS_getppid : SYS_getuid, sys[0][0]);
	ASSERT_EQ(SYS_getppid < SYS_getuid ? SYS_getuid : SYS_getppid, sys[0][1]);
	ASSERT_EQ(-1, nr_sys[1]);	/* no filter, no attribute */
}

/* ---- SET_SESSION ---- */

static size_t set_body(struct raw_msg *m, uint32_t id, const char *output)
{
	size_t off = 0;

	put_u32(m, &off, PBTRACE_A_SESSION_ID, id);
	if (output)
		put_str(m, &off, PBTRACE_A_SESSION_OUTPUT, output);
	return off;
}

TEST_F(pbt, set_session_reconfigures_a_configured_session)
{
	static const uint32_t only_getppid[] = { SYS_getppid };
	struct raw_buffer one = { .size_kb = 1024, .nr_events = 1,
				  .events = { "sched/sched_switch" } };
	struct raw_buffer two[2] = {
		{ .size_kb = 512, .nr_events = 1, .events = { "raw_syscalls/sys_enter" },
		  .sys = only_getppid, .nr_sys = 1 },
		{ .size_kb = 256, .chunk_kb = 4, .nr_events = 1,
		  .events = { "sched/sched_switch" } },
	};
	struct raw_buffer bad = one;
	uint32_t sys[PBTRACE_MAX_BUFFERS][8], id;
	int nr_sys[PBTRACE_MAX_BUFFERS], mfd;
	struct pbtrace_chunk_req req;
	struct pbt_session_info si;
	struct pbt_reader old, cur;
	struct mcast_note n;
	const uint8_t *data;
	char err[256];
	size_t off;

	mfd = mcast_open();
	ASSERT_GE(mfd, 0);
	ASSERT_EQ(0, raw_new(&self->raw, self->m, "setme", "/tmp/a.pftrace",
			     &one, 1, &id)) TH_LOG("extack: %s", self->raw.extack);
	/* traced maps a session's buffers as soon as it exists. */
	ASSERT_EQ(0, pbt_reader_open(&old, id, 0, err, sizeof(err))) TH_LOG("%s", err);

	off = put_buffers(self->m, set_body(self->m, id, "/tmp/b.pftrace"), two, 2);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off))
		TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(1, mcast_wait(mfd, PBTRACE_CMD_SET_SESSION, id, &n));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_STREQ("setme", si.name);
	ASSERT_STREQ("/tmp/b.pftrace", si.output);
	ASSERT_EQ(PBTRACE_STATE_CONFIGURED, si.state);
	ASSERT_EQ(2, si.nr_buffers);
	ASSERT_EQ(512, si.buffers[0].size_kb);
	ASSERT_STREQ("raw_syscalls/sys_enter", si.buffers[0].events[0]);
	ASSERT_EQ(256, si.buffers[1].size_kb);
	ASSERT_EQ(4, si.buffers[1].chunk_kb);
	pbt_session_info_free(&si);
	ASSERT_EQ(2, raw_syscalls(&self->raw, self->m, id, sys, nr_sys));
	ASSERT_EQ(1, nr_sys[0]);
	ASSERT_EQ(SYS_getppid, sys[0][0]);
	ASSERT_EQ(-1, nr_sys[1]);

	/* The reader of the replaced buffer: told, its mapping still valid. */
	{
		struct pollfd pfd = { .fd = pbt_reader_fd(&old), .events = POLLIN };

		ASSERT_EQ(1, poll(&pfd, 1, 1000));
		ASSERT_TRUE(pfd.revents & POLLERR);
	}
	ASSERT_EQ(-ESTALE, pbt_reader_next(&old, &req, &data));
	ASSERT_EQ(PBTRACE_MMAP_MAGIC, pbt_reader_header(&old)->magic);
	ASSERT_EQ(0, pbt_reader_open(&cur, id, 1, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(4096, pbt_reader_header(&cur)->chunk_size);
	pbt_reader_close(&old);		/* frees the retired buffer */

	/* A bad new config leaves the session as it was. */
	bad.chunk_kb = 12;
	off = put_buffers(self->m, set_body(self->m, id, "/tmp/c.pftrace"), &bad, 1);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "power of two")) TH_LOG("extack: %s", self->raw.extack);
	bad.chunk_kb = 0;
	bad.events[0] = "sched/no_such_event";
	off = put_buffers(self->m, set_body(self->m, id, "/tmp/c.pftrace"), &bad, 1);
	ASSERT_EQ(-ENOENT, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off));
	off = set_body(self->m, id, NULL);
	put_str(self->m, &off, PBTRACE_A_SESSION_NAME, "renamed");
	put_str(self->m, &off, PBTRACE_A_SESSION_OUTPUT, "/tmp/c.pftrace");
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "name cannot change")) TH_LOG("extack: %s", self->raw.extack);
	off = set_body(self->m, id, NULL);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "nothing to change")) TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_STREQ("/tmp/b.pftrace", si.output);
	ASSERT_EQ(2, si.nr_buffers);
	ASSERT_EQ(512, si.buffers[0].size_kb);
	ASSERT_EQ(256, si.buffers[1].size_kb);
	pbt_session_info_free(&si);
	/* The reader of the unchanged buffer still reads it. */
	ASSERT_EQ(-EAGAIN, pbt_reader_next(&cur, &req, &data));

	/* Only the output, and the same name repeated, is fine. */
	off = set_body(self->m, id, "/tmp/d.pftrace");
	put_str(self->m, &off, PBTRACE_A_SESSION_NAME, "setme");
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off))
		TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_STREQ("/tmp/d.pftrace", si.output);
	ASSERT_EQ(2, si.nr_buffers);
	pbt_session_info_free(&si);

	/* Once started, no more. */
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	off = set_body(self->m, id, "/tmp/e.pftrace");
	ASSERT_EQ(-EBUSY, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "started")) TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
	ASSERT_EQ(-EBUSY, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off));
	pbt_reader_close(&cur);

	off = set_body(self->m, 999999, "/tmp/e.pftrace");
	ASSERT_EQ(-ENOENT, raw_send(&self->raw, self->m, PBTRACE_CMD_SET_SESSION, off));
	close(mfd);
}

/* ---- why a session ended, on DESTROY ---- */

TEST_F(pbt, destroy_carries_session_error)
{
	static const char why[] = "writing /out/t.pftrace: No space left on device";
	struct raw_buffer one = { .size_kb = 1024, .nr_events = 1,
				  .events = { "sched/sched_switch" } };
	char longest[PBTRACE_ERROR_MAX + 1];
	struct pbt_session_info si;
	struct mcast_note n;
	uint32_t id, id2;
	size_t off;
	int mfd;

	mfd = mcast_open();
	ASSERT_GE(mfd, 0);
	ASSERT_EQ(0, raw_new(&self->raw, self->m, "doomed", NULL, &one, 1, &id));
	ASSERT_EQ(0, raw_new(&self->raw, self->m, "doomed2", NULL, &one, 1, &id2));

	/* One byte too long (PBTRACE_ERROR_MAX counts the NUL): refused. */
	memset(longest, 'x', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	off = 0;
	put_u32(self->m, &off, PBTRACE_A_SESSION_ID, id);
	put_str(self->m, &off, PBTRACE_A_SESSION_ERROR, longest);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_DESTROY_SESSION, off));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	pbt_session_info_free(&si);

	off = 0;
	put_u32(self->m, &off, PBTRACE_A_SESSION_ID, id);
	put_str(self->m, &off, PBTRACE_A_SESSION_ERROR, why);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_DESTROY_SESSION, off))
		TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(1, mcast_wait(mfd, PBTRACE_CMD_DESTROY_SESSION, id, &n));
	ASSERT_EQ(1, n.has_error);
	ASSERT_STREQ(why, n.error);

	/* The longest that fits arrives whole. */
	longest[PBTRACE_ERROR_MAX - 1] = '\0';
	off = 0;
	put_u32(self->m, &off, PBTRACE_A_SESSION_ID, id2);
	put_str(self->m, &off, PBTRACE_A_SESSION_ERROR, longest);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_DESTROY_SESSION, off))
		TH_LOG("extack: %s", self->raw.extack);
	ASSERT_EQ(1, mcast_wait(mfd, PBTRACE_CMD_DESTROY_SESSION, id2, &n));
	ASSERT_STREQ(longest, n.error);

	/* Without one, the notification has none. */
	ASSERT_EQ(0, raw_new(&self->raw, self->m, "doomed3", NULL, &one, 1, &id));
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_DESTROY_SESSION, id));
	ASSERT_EQ(1, mcast_wait(mfd, PBTRACE_CMD_DESTROY_SESSION, id, &n));
	ASSERT_EQ(0, n.has_error);
	close(mfd);
}

/* ---- CAP_PERFMON alone: look, never change ---- */

/*
 * Runs fn keeping only capability cap, as nobody (drop_uid) or as root
 * (so that root's 0600 device still opens); returns its status.
 */
static int with_only_cap(bool drop_uid, int cap, int (*fn)(void))
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : 65534;
	gid_t gid = pw ? pw->pw_gid : 65534;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2];

		/* Keep the permitted set over setuid, then keep only cap. */
		if (drop_uid && (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) ||
				 setgroups(0, NULL) || setgid(gid) || setuid(uid)))
			_exit(100);
		memset(d, 0, sizeof(d));
		d[cap / 32].effective = d[cap / 32].permitted = 1u << (cap % 32);
		if (syscall(SYS_capset, &h, d))
			_exit(101);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static uint32_t perfmon_session;

static int perfmon_calls(void)
{
	struct pbt_session_info *v, si;
	struct pbt_session_spec s;
	struct event_seen r = { 0 };
	char err[256];
	struct pbt_nl *nl = pbt_nl_open(err, sizeof(err));
	uint32_t id, pid;
	size_t n;

	if (!nl)
		return 10;
	if (getuid() == 0)
		return 11;
	/* Looking is allowed. */
	if (pbt_nl_list_sessions(nl, &v, &n) || n != 1)
		return 12;
	pbt_session_infos_free(v, n);
	if (pbt_nl_get_session(nl, perfmon_session, &si))
		return 13;
	pbt_session_info_free(&si);
	if (pbt_nl_list_events(nl, note_event, &r) || !r.seen)
		return 14;
	if (pbt_nl_daemon_pid(nl, &pid))
		return 15;
	/* Changing is not. */
	spec_one(&s, "perfmon", "sched/sched_switch");
	if (pbt_nl_new_session(nl, &s, &id) != -EPERM)
		return 16;
	if (!strstr(pbt_nl_error(nl), "CAP_SYS_ADMIN"))
		return 17;
	if (pbt_nl_trigger(nl, "t") != -EPERM)
		return 18;
	if (pbt_nl_session_cmd(nl, PBTRACE_CMD_STOP_SESSION, perfmon_session) != -EPERM)
		return 19;
	pbt_nl_close(nl);
	return 0;
}

TEST_F(pbt, perfmon_reads_but_cannot_change)
{
	struct pbt_session_spec s;

	spec_one(&s, "root-owned", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &perfmon_session));
	ASSERT_EQ(0, with_only_cap(true, CAP_PERFMON, perfmon_calls));
}

/*
 * The device: CAP_PERFMON may attach and map a buffer (look) but not take
 * its chunks or relayed records (consume: traced's data). As root holding
 * only CAP_PERFMON, so that the 0600 device opens at all.
 */
static uint32_t consume_session;

static int perfmon_reader(void)
{
	struct pbtrace_remote_read rr = { 0 };
	struct pbtrace_chunk_req req;
	const uint8_t *data;
	struct pbt_reader r;
	char err[256], buf[PBTRACE_REMOTE_READ_MIN];

	if (pbt_reader_open(&r, consume_session, 0, err, sizeof(err)))
		return 20;
	/* The mapping is there to look at: the CPU stats say what was sealed. */
	if (pbt_reader_header(&r)->magic != PBTRACE_MMAP_MAGIC)
		return 21;
	if (pbt_reader_next(&r, &req, &data) != -EPERM)
		return 22;
	req.index = 0;
	if (pbt_reader_put(&r, &req) != -EPERM)
		return 23;
	rr.buf = (uintptr_t)buf;
	rr.size = sizeof(buf);
	if (ioctl(pbt_reader_fd(&r), PBTRACE_IOC_READ_REMOTE, &rr) != -1 || errno != EPERM)
		return 24;
	pbt_reader_close(&r);
	return 0;
}

TEST_F(pbt, perfmon_maps_but_cannot_consume)
{
	struct pbtrace_chunk_req req;
	struct pbt_session_spec s;
	const uint8_t *data;
	struct pbt_reader r;
	char err[256];
	int i;

	spec_one(&s, "consume", "raw_syscalls/sys_enter");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &consume_session));
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, consume_session));
	for (i = 0; i < 100; i++)
		syscall(SYS_getppid);
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, consume_session));
	ASSERT_EQ(0, with_only_cap(false, CAP_PERFMON, perfmon_reader));
	/* Nothing was taken: CAP_SYS_ADMIN still gets the first chunk. */
	ASSERT_EQ(0, pbt_reader_open(&r, consume_session, 0, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, pbt_reader_next(&r, &req, &data));
	EXPECT_EQ(0, pbt_reader_put(&r, &req));
	pbt_reader_close(&r);
}

/* ---- who may join the "sessions" group ---- */

static int join_sessions_group(void)
{
	int fd = mcast_open();

	if (fd >= 0) {
		close(fd);
		return 20;	/* joined */
	}
	return fd == -EPERM ? 0 : 21;
}

/* 1: this kernel has GENL_MCAST_CAP_SYS_ADMIN, 0: it has not, -1: unknown. */
static int kernel_has_mcast_cap(void)
{
	static const char *const where[] = { "source", "build" };
	char path[512], line[512];
	struct utsname u;
	unsigned int i;
	FILE *f;

	if (uname(&u))
		return -1;
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/%s/include/net/genetlink.h",
			 u.release, where[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "GENL_MCAST_CAP_SYS_ADMIN")) {
				fclose(f);
				return 1;
			}
		fclose(f);
		return 0;
	}
	return -1;
}

TEST_F(pbt, unprivileged_cannot_join_sessions_group)
{
	int ret, has;

	ASSERT_GT(mcast_group, 0);
	ret = as_nobody(join_sessions_group);
	if (ret == 20) {
		has = kernel_has_mcast_cap();
		ASSERT_NE(1, has) TH_LOG("the kernel has GENL_MCAST_CAP_SYS_ADMIN, yet nobody joined");
		SKIP(return, "%s", has ? "cannot tell whether this kernel has GENL_MCAST_CAP_SYS_ADMIN (no headers): anyone may join" :
		     "this kernel lacks GENL_MCAST_CAP_SYS_ADMIN: anyone may join the group");
	}
	ASSERT_EQ(0, ret);
	/* CAP_PERFMON is not enough either: the group reports admin changes. */
	ASSERT_EQ(0, with_only_cap(true, CAP_PERFMON, join_sessions_group));
}


/* ---- the names table: LOAD_NAMES, GET_NAMES, GET_MACHINES ---- */

struct name_ent {
	const char *name;
	bool has_cid;
	uint32_t cid;
	const void *key;
	size_t key_len;
	uint32_t line;
};

/* A LOAD_NAMES body: the load @id (0: begin), its entries, maybe commit. */
static size_t load_body(struct raw_msg *m, uint32_t id, bool commit,
			const struct name_ent *e, size_t n)
{
	struct nlattr *names, *one;
	size_t off = 0, i;

	if (id)
		put_u32(m, &off, PBTRACE_A_LOAD_ID, id);
	if (commit)
		put_attr(m, &off, PBTRACE_A_LOAD_COMMIT, NULL, 0);
	if (!n)
		return off;
	names = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_NAMES);
	for (i = 0; i < n; i++) {
		one = nest_begin(m, &off, NLA_F_NESTED | PBTRACE_A_NAME);
		if (e[i].name)
			put_str(m, &off, PBTRACE_A_MACHINE_NAME, e[i].name);
		if (e[i].has_cid)
			put_u32(m, &off, PBTRACE_A_NAME_CID, e[i].cid);
		if (e[i].key)
			put_attr(m, &off, PBTRACE_A_NAME_KEY, e[i].key, e[i].key_len);
		if (e[i].line)
			put_u32(m, &off, PBTRACE_A_NAME_LINE, e[i].line);
		nest_end(m, off, one);
	}
	nest_end(m, off, names);
	return off;
}

/* The reply's u32 attribute @type (LOAD_ID, NAMES_COUNT ...), or 0. */
static uint32_t reply_u32(int type)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)raw_reply_buf;
	struct nlattr *a;
	int rem;

	if (!raw_reply_len)
		return 0;
	a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	rem = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	for (; rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
	     rem -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == type && a->nla_len == NLA_HDRLEN + 4)
			return *(uint32_t *)((char *)a + NLA_HDRLEN);
	return 0;
}

/*
 * A dump by hand: every byte of its messages into @out (up to @cap), the
 * number of messages in *@msgs. 0, or the kernel's errno.
 */
static int raw_dump(struct raw *r, struct raw_msg *m, int cmd, size_t off,
		    unsigned char *out, size_t cap, size_t *len, int *msgs)
{
	static unsigned char buf[1 << 16];
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct nlmsghdr *nlh;
	ssize_t got;

	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + off;
	m->nlh.nlmsg_type = r->family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	m->nlh.nlmsg_seq = ++r->seq;
	m->g.cmd = cmd;
	m->g.version = PBTRACE_GENL_VERSION;
	*len = 0;
	*msgs = 0;
	if (sendto(r->fd, m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		got = recv(r->fd, buf, sizeof(buf), 0);
		if (got < 0)
			return -errno;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, got);
		     nlh = NLMSG_NEXT(nlh, got)) {
			if (nlh->nlmsg_seq != r->seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
			if (*len + nlh->nlmsg_len <= cap) {
				memcpy(out + *len, nlh, nlh->nlmsg_len);
				*len += nlh->nlmsg_len;
			}
			(*msgs)++;
		}
	}
}

static const uint8_t key_a[32] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6,
				   0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad,
				   0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4,
				   0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb,
				   0xbc, 0xbd, 0xbe, 0xbf };

/* Each bad entry, alone in a committed load: its errno and its message. */
TEST_F(pbt, names_bad_entries_refused)
{
	static const char long_name[] = "0123456789012345678901234567890123456789012345678901234567890123";
	static const struct {
		struct name_ent e;
		int err;
		const char *msg;	/* NULL: the policy's own */
		const char *lit;	/* before 6.2 (compat.h) */
	} cases[] = {
		{ { .has_cid = true, .cid = 5 }, -EINVAL, "needs PBTRACE_A_MACHINE_NAME", NULL },
		{ { .name = "a", .has_cid = true, .cid = 5, .key = key_a, .key_len = 32, .line = 4 },
		  -EINVAL, "line 4: a needs a CID or a key, not both",
		  "a name needs a CID or a key, not both" },
		{ { .name = "a", .line = 2 }, -EINVAL, "line 2: a needs a CID or a key",
		  "a name needs a CID or a key" },
		/* A length out of the policy's range: the policy's errno. */
		{ { .name = "a", .key = key_a, .key_len = 15 }, -ERANGE, NULL, NULL },
		{ { .name = "a", .key = key_a, .key_len = 65 }, -ERANGE, NULL, NULL },
		{ { .name = "web@1", .has_cid = true, .cid = 5, .line = 9 },
		  -EINVAL, "line 9: a name is 1 to 63 printable characters",
		  "a name is 1 to 63 printable characters" },
		{ { .name = "a b", .has_cid = true, .cid = 5, .line = 1 }, -EINVAL, "line 1: a name is",
		  "a name is" },
		{ { .name = "host", .has_cid = true, .cid = 5, .line = 1 }, -EINVAL, "line 1: a name is",
		  "a name is" },
		{ { .name = "*", .has_cid = true, .cid = 5, .line = 1 }, -EINVAL, "line 1: a name is",
		  "a name is" },
		{ { .name = "", .has_cid = true, .cid = 5, .line = 1 }, -EINVAL, "line 1: a name is",
		  "a name is" },
		{ { .name = long_name, .has_cid = true, .cid = 5 }, -EINVAL, NULL, NULL },
		{ { .name = "any", .has_cid = true, .cid = 0xffffffffu, .line = 3 },
		  -EINVAL, "line 3: CID 4294967295 means any CID",
		  "CID 4294967295 means any CID" },
	};
	struct pbt_name_info *v;
	size_t i, off, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		off = load_body(self->m, 0, true, &cases[i].e, 1);
		ASSERT_EQ(cases[i].err, raw_send(&self->raw, self->m,
						 PBTRACE_CMD_LOAD_NAMES, off)) TH_LOG("case %zu", i);
		ASSERT_NE('\0', self->raw.extack[0]) TH_LOG("case %zu: no message", i);
		if (cases[i].msg)
			ASSERT_NE(NULL, strstr(self->raw.extack,
					       cases[i].lit ?
					       fmt_or(cases[i].msg, cases[i].lit) :
					       cases[i].msg))
				TH_LOG("case %zu: extack: %s", i, self->raw.extack);
	}
	ASSERT_EQ(0, pbt_nl_list_names(self->nl, &v, &n));
	ASSERT_EQ(0, n) TH_LOG("a refused entry made it into the table");
	free(v);
}

/* Malformed messages around the entries. */
TEST_F(pbt, names_malformed_refused)
{
	struct nlattr *names, *one;
	size_t off = 0;

	/* A nest without NLA_F_NESTED. */
	names = nest_begin(self->m, &off, PBTRACE_A_NAMES);
	nest_end(self->m, off, names);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	/* Something else inside the list. */
	off = 0;
	names = nest_begin(self->m, &off, NLA_F_NESTED | PBTRACE_A_NAMES);
	one = nest_begin(self->m, &off, NLA_F_NESTED | PBTRACE_A_BUFFER);
	put_str(self->m, &off, PBTRACE_A_MACHINE_NAME, "a");
	nest_end(self->m, off, one);
	nest_end(self->m, off, names);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "only PBTRACE_A_NAME nests"))
		TH_LOG("extack: %s", self->raw.extack);
	/* An attribute an entry does not have. */
	off = 0;
	names = nest_begin(self->m, &off, NLA_F_NESTED | PBTRACE_A_NAMES);
	one = nest_begin(self->m, &off, NLA_F_NESTED | PBTRACE_A_NAME);
	put_str(self->m, &off, PBTRACE_A_MACHINE_NAME, "a");
	put_u32(self->m, &off, PBTRACE_A_NAME_CID, 5);
	put_u32(self->m, &off, PBTRACE_A_SESSION_ID, 1);
	nest_end(self->m, off, one);
	nest_end(self->m, off, names);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	/* A name without its NUL. */
	off = 0;
	names = nest_begin(self->m, &off, NLA_F_NESTED | PBTRACE_A_NAMES);
	one = nest_begin(self->m, &off, NLA_F_NESTED | PBTRACE_A_NAME);
	put_attr(self->m, &off, PBTRACE_A_MACHINE_NAME, "ab", 2);
	put_u32(self->m, &off, PBTRACE_A_NAME_CID, 5);
	nest_end(self->m, off, one);
	nest_end(self->m, off, names);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	/* A load that does not exist. */
	off = load_body(self->m, 12345, true, NULL, 0);
	ASSERT_EQ(-ESTALE, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "this load is gone"))
		TH_LOG("extack: %s", self->raw.extack);
}

/* Duplicates are found at the commit, named by their lines. */
TEST_F(pbt, names_twice_refused_with_lines)
{
	struct name_ent two_names[] = {
		{ .name = "a", .has_cid = true, .cid = 5, .line = 3 },
		{ .name = "a", .key = key_a, .key_len = 32, .line = 8 },
	}, two_cids[] = {
		{ .name = "a", .has_cid = true, .cid = 5, .line = 3 },
		{ .name = "b", .has_cid = true, .cid = 5, .line = 8 },
	};
	size_t off;

	off = load_body(self->m, 0, true, two_names, 2);
	ASSERT_EQ(-EEXIST, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_NE(NULL, strstr(self->raw.extack,
			       fmt_or("line 8: a is named twice (line 3 too)", "a name is given twice: keep one")))
		TH_LOG("extack: %s", self->raw.extack);
	off = load_body(self->m, 0, true, two_cids, 2);
	ASSERT_EQ(-EEXIST, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_NE(NULL, strstr(self->raw.extack,
			       fmt_or("line 8: CID 5 is a's already (line 3)", "a CID is another name's already")))
		TH_LOG("extack: %s", self->raw.extack);
}

/*
 * Pieces: nothing shows until the commit, then all of it, sorted, with
 * lines and flags; no dump ever carries a key's bytes.
 */
TEST_F(pbt, names_pieces_commit_whole)
{
	struct name_ent p1[] = {
		{ .name = "web2", .key = key_a, .key_len = 32, .line = 2 },
		{ .name = "web1", .has_cid = true, .cid = 5, .line = 1 },
	}, p2[] = { { .name = "db1", .has_cid = true, .cid = 6, .line = 3 } };
	static unsigned char dump[1 << 16];
	struct pbt_name_info *v;
	uint32_t id;
	size_t off, n, len, i;
	int msgs;

	off = load_body(self->m, 0, false, p1, 2);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	id = reply_u32(PBTRACE_A_LOAD_ID);
	ASSERT_NE(0, id);
	ASSERT_EQ(0, pbt_nl_list_names(self->nl, &v, &n));
	ASSERT_EQ(0, n) TH_LOG("a piece showed before its commit");
	free(v);
	off = load_body(self->m, id, false, p2, 1);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_EQ(id, reply_u32(PBTRACE_A_LOAD_ID));
	off = load_body(self->m, id, true, NULL, 0);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_EQ(3, reply_u32(PBTRACE_A_NAMES_COUNT));
	ASSERT_EQ(0, pbt_nl_list_names(self->nl, &v, &n));
	ASSERT_EQ(3, n);
	EXPECT_STREQ("db1", v[0].name);
	EXPECT_EQ(6, v[0].cid);
	EXPECT_EQ(3, v[0].line);
	EXPECT_STREQ("web1", v[1].name);
	EXPECT_EQ(5, v[1].cid);
	EXPECT_STREQ("web2", v[2].name);
	EXPECT_EQ(PBTRACE_NAME_KEYED, v[2].flags);
	EXPECT_EQ(2, v[2].line);
	free(v);
	/* The same, raw: no key byte sequence anywhere in the dump. */
	ASSERT_EQ(0, raw_dump(&self->raw, self->m, PBTRACE_CMD_GET_NAMES, 0,
			      dump, sizeof(dump), &len, &msgs));
	ASSERT_EQ(3, msgs);
	for (i = 0; i + 8 <= len; i++)
		ASSERT_NE(0, memcmp(dump + i, key_a + 4, 8)) TH_LOG("key bytes at %zu", i);
	/* The commit ended it. */
	off = load_body(self->m, id, true, NULL, 0);
	ASSERT_EQ(-ESTALE, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
}

/* A piece that fails ends its load: its commit finds nothing, the table stays. */
TEST_F(pbt, names_failed_piece_changes_nothing)
{
	struct name_ent a[] = { { .name = "a", .has_cid = true, .cid = 5 } },
		good[] = { { .name = "b", .has_cid = true, .cid = 6 } },
		bad[] = { { .name = "c@", .has_cid = true, .cid = 7, .line = 2 } };
	struct pbt_name_info *v;
	uint32_t id;
	size_t off, n;

	off = load_body(self->m, 0, true, a, 1);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	off = load_body(self->m, 0, false, good, 1);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	id = reply_u32(PBTRACE_A_LOAD_ID);
	off = load_body(self->m, id, false, bad, 1);
	ASSERT_EQ(-EINVAL, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	off = load_body(self->m, id, true, NULL, 0);
	ASSERT_EQ(-ESTALE, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_EQ(0, pbt_nl_list_names(self->nl, &v, &n));
	ASSERT_EQ(1, n);
	EXPECT_STREQ("a", v[0].name);
	free(v);
}

/* Another socket's begin takes over; a load is its own socket's. */
TEST_F(pbt, names_load_is_one_sockets)
{
	struct name_ent a[] = { { .name = "a", .has_cid = true, .cid = 5 } };
	struct raw other;
	uint32_t id, id2;
	size_t off;

	ASSERT_EQ(0, raw_open(&other));
	other.family = self->raw.family;
	off = load_body(self->m, 0, false, a, 1);
	ASSERT_EQ(0, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	id = reply_u32(PBTRACE_A_LOAD_ID);
	off = load_body(self->m, id, true, NULL, 0);
	ASSERT_EQ(-ESTALE, raw_send(&other, self->m, PBTRACE_CMD_LOAD_NAMES, off))
		TH_LOG("another socket committed our load");
	off = load_body(self->m, 0, false, a, 1);
	ASSERT_EQ(0, raw_send(&other, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	id2 = reply_u32(PBTRACE_A_LOAD_ID);
	ASSERT_NE(id, id2);
	off = load_body(self->m, id, true, NULL, 0);
	ASSERT_EQ(-ESTALE, raw_send(&self->raw, self->m, PBTRACE_CMD_LOAD_NAMES, off));
	ASSERT_NE(NULL, strstr(self->raw.extack, "another began"))
		TH_LOG("extack: %s", self->raw.extack);
	close(other.fd);
}

/* More than PBTRACE_MAX_NAMES, in pieces: E2BIG, and nothing changed. */
TEST_F(pbt, names_at_most_max)
{
	struct pbt_name_spec *e = calloc(PBTRACE_MAX_NAMES + 1, sizeof(*e));
	struct pbt_name_info *v;
	uint32_t count, evicted;
	size_t i, n;

	ASSERT_NE(NULL, e);
	for (i = 0; i <= PBTRACE_MAX_NAMES; i++) {
		snprintf(e[i].name, sizeof(e[i].name), "g%zu", i);
		e[i].cid = (uint32_t)i + 3;
		e[i].line = (uint32_t)i + 1;
	}
	ASSERT_EQ(0, pbt_nl_load_names(self->nl, e, PBTRACE_MAX_NAMES, 0, &count, &evicted));
	ASSERT_EQ(PBTRACE_MAX_NAMES, count);
	ASSERT_EQ(0, pbt_nl_list_names(self->nl, &v, &n));
	ASSERT_EQ(PBTRACE_MAX_NAMES, n);
	free(v);
	ASSERT_EQ(-E2BIG, pbt_nl_load_names(self->nl, e, PBTRACE_MAX_NAMES + 1, 0,
					    &count, &evicted));
	ASSERT_NE(NULL, strstr(pbt_nl_error(self->nl), "16384"));
	ASSERT_EQ(0, pbt_nl_list_names(self->nl, &v, &n));
	ASSERT_EQ(PBTRACE_MAX_NAMES, n);
	free(v);
	free(e);
}

/* GET_SESSION_MACHINES wants a live session; one without machines has none. */
TEST_F(pbt, session_machines_dump)
{
	static unsigned char dump[4096];
	struct pbt_session_info si = { 0 };
	struct pbt_session_spec s;
	uint32_t id;
	size_t off = 0, len;
	int msgs;

	ASSERT_EQ(-EINVAL, raw_send_flags(&self->raw, self->m,
					  PBTRACE_CMD_GET_SESSION_MACHINES, 0,
					  NLM_F_DUMP));
	put_u32(self->m, &off, PBTRACE_A_SESSION_ID, 999999);
	ASSERT_EQ(-ENOENT, raw_send_flags(&self->raw, self->m,
					  PBTRACE_CMD_GET_SESSION_MACHINES, off,
					  NLM_F_DUMP));
	spec_one(&s, "nomachines", "sched/sched_switch");
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &id));
	off = 0;
	put_u32(self->m, &off, PBTRACE_A_SESSION_ID, id);
	ASSERT_EQ(0, raw_dump(&self->raw, self->m, PBTRACE_CMD_GET_SESSION_MACHINES,
			      off, dump, sizeof(dump), &len, &msgs));
	ASSERT_EQ(0, msgs);
	si.id = id;
	ASSERT_EQ(0, pbt_nl_get_session_machines(self->nl, &si));
	ASSERT_EQ(0, si.nr_machines);
}

static int names_as_other(void)
{
	struct pbt_endpoint_machine_info *m;
	struct pbt_name_spec e = { .name = "x", .cid = 9 };
	struct pbt_name_info *v;
	uint32_t count, evicted;
	char err[256];
	struct pbt_nl *nl = pbt_nl_open(err, sizeof(err));
	size_t n;

	if (!nl)
		return 10;
	if (pbt_nl_load_names(nl, &e, 1, 0, &count, &evicted) != -EPERM)
		return 11;
	if (!strstr(pbt_nl_error(nl), "CAP_SYS_ADMIN"))
		return 12;
	if (pbt_nl_list_names(nl, &v, &n) != -EPERM)
		return 13;
	if (pbt_nl_list_machines(nl, &m, &n) != -EPERM)
		return 14;
	pbt_nl_close(nl);
	return 0;
}

/* Guests' names and keys are root's: nobody, and CAP_PERFMON alone, are refused. */
TEST_F(pbt, names_and_machines_root_only)
{
	struct pbt_name_spec e = { .name = "kept", .cid = 8 };
	struct pbt_name_info *v;
	uint32_t count, evicted;
	size_t n;

	ASSERT_EQ(0, pbt_nl_load_names(self->nl, &e, 1, 0, &count, &evicted));
	ASSERT_EQ(0, as_nobody(names_as_other));
	ASSERT_EQ(0, with_only_cap(true, CAP_PERFMON, names_as_other));
	ASSERT_EQ(0, pbt_nl_list_names(self->nl, &v, &n));
	ASSERT_EQ(1, n);
	EXPECT_STREQ("kept", v[0].name);
	free(v);
}

TEST_HARNESS_MAIN
