// SPDX-License-Identifier: GPL-2.0
/*
 * The "pbtrace" generic netlink family, from outside: strict attribute
 * validation with extack messages, session rules (unique names, limits,
 * states), privilege checks, multicast notifications and the daemon-gone
 * notifier. Runs in a guest with pbtrace.ko loaded, as root.
 *
 * Malformed requests are built by hand on a raw socket (libnl would not
 * send them); well-formed ones go through user/genl.c like tracectl's.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "genl.h"

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

/* Reads the ack for seq: the kernel's errno (0 or negative) + extack. */
static int raw_ack(struct raw *r, unsigned int seq)
{
	static unsigned char buf[1 << 17];
	struct nlmsghdr *nlh;
	ssize_t len;

	r->extack[0] = '\0';
	for (;;) {
		len = recv(r->fd, buf, sizeof(buf), 0);
		if (len < 0)
			return -errno;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			struct nlmsgerr *e = NLMSG_DATA(nlh);
			struct nlattr *a;
			int rem;

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

static int raw_send(struct raw *r, struct raw_msg *m, int cmd, size_t off)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + off;
	m->nlh.nlmsg_type = r->family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->nlh.nlmsg_seq = ++r->seq;
	m->g.cmd = cmd;
	m->g.version = PBTRACE_GENL_VERSION;
	m->g.reserved = 0;
	if (sendto(r->fd, m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	return raw_ack(r, r->seq);
}

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
	destroy_all(self->nl);
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
	ASSERT_GT(si.buffers[0].nr_cpus, 0);
	pbt_session_info_free(&si);

	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
	ASSERT_EQ(-EALREADY, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, id));
	ASSERT_EQ(-EINVAL, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, id));
	ASSERT_EQ(0, pbt_nl_get_session(self->nl, id, &si));
	ASSERT_EQ(PBTRACE_STATE_STOPPED, si.state);
	ASSERT_GE(si.stop_ns, si.start_ns);
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

TEST_HARNESS_MAIN
