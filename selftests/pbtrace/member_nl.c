// SPDX-License-Identifier: GPL-2.0
/*
 * One pbtrace request on a raw generic netlink socket, built by hand, for
 * member_test.sh: what the kernel answers a group= member who skips
 * tracectl (and its tracefs check) and names any tracepoint, id and layout.
 *
 *   member_nl new NAME EVENT ID PROTO_ID [FIELD...]
 *                          NEW_SESSION with one 1 MiB buffer holding one
 *                          PBTRACE_A_TP: EVENT "group/name", its tracefs
 *                          ID, written as PROTO_ID; prints "id N"
 *   member_nl set SID EVENT ID PROTO_ID [FIELD...]
 *                          SET_SESSION of session SID, the same buffer
 *   member_nl start|stop|destroy|get|watermark|cpustats SID
 *   member_nl repeat N WANT new|set ...
 *                          the request N times, each refused with an
 *                          extack holding WANT; prints "own A other B" and
 *                          the first other message, exits 1 if B > 0
 *                          (extack_race_test.sh runs several at once)
 *
 *   FIELD: name:offset:size:kind (enum pbtrace_tpf_kind); the fields that
 *   are not common_* are written as proto ids 1, 2, ...
 *
 * Prints "err ERRNO MESSAGE" (the extack) and exits ERRNO when refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/pbtrace.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct msg {
	struct nlmsghdr nlh;
	struct genlmsghdr g;
	unsigned char a[16384];
	size_t off;
};

static int fd, family;
static unsigned int seq;
static char extack[512];

static struct nlattr *put(struct msg *m, int type, const void *data,
			  size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->a + m->off);

	if (m->off + NLA_ALIGN(NLA_HDRLEN + len) > sizeof(m->a)) {
		fprintf(stderr, "member_nl: request too large\n");
		exit(2);
	}
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	m->off += NLA_ALIGN(a->nla_len);
	return a;
}

static void put_u32(struct msg *m, int type, uint32_t v)
{
	put(m, type, &v, sizeof(v));
}

static void put_str(struct msg *m, int type, const char *s)
{
	put(m, type, s, strlen(s) + 1);
}

static struct nlattr *nest(struct msg *m, int type)
{
	return put(m, NLA_F_NESTED | type, NULL, 0);
}

static void nest_end(struct msg *m, struct nlattr *a)
{
	a->nla_len = (m->a + m->off) - (unsigned char *)a;
}

/* The errno of the ack to @seq (0 or negative), its message in extack. */
static int ack(unsigned int want, void *reply, size_t reply_len)
{
	static unsigned char buf[65536];
	struct nlmsghdr *nlh;
	ssize_t len;

	for (;;) {
		len = recv(fd, buf, sizeof(buf), 0);
		if (len < 0)
			return -errno;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			struct nlmsgerr *e = NLMSG_DATA(nlh);
			struct nlattr *a;
			int rem;

			if (nlh->nlmsg_seq != want)
				continue;
			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type != NLMSG_ERROR) {
				if (reply && nlh->nlmsg_len <= reply_len)
					memcpy(reply, nlh, nlh->nlmsg_len);
				continue;
			}
			a = (struct nlattr *)((char *)e + sizeof(*e));
			rem = nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(*e);
			while ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
			       rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= rem) {
				if (a->nla_type == NLMSGERR_ATTR_MSG)
					snprintf(extack, sizeof(extack), "%.*s",
						 (int)(a->nla_len - NLA_HDRLEN),
						 (char *)a + NLA_HDRLEN);
				rem -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
			}
			return e->error;
		}
	}
}

static int send_msg(struct msg *m, int type, int cmd, int version,
		    uint16_t flags, void *reply, size_t reply_len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + m->off;
	m->nlh.nlmsg_type = type;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->nlh.nlmsg_seq = ++seq;
	m->g.cmd = cmd;
	m->g.version = version;
	if (sendto(fd, m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	return ack(seq, reply, reply_len);
}

/* The first attribute @type of a genl reply, or NULL. */
static struct nlattr *attr(struct nlmsghdr *nlh, int type)
{
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	int rem = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

	for (; rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= rem;
	     rem -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

static int family_id(void)
{
	static unsigned char reply[16384];
	struct msg *m = calloc(1, sizeof(*m));
	struct nlattr *a;
	int ret;

	if (!m)
		return -ENOMEM;
	put_str(m, CTRL_ATTR_FAMILY_NAME, PBTRACE_GENL_NAME);
	memset(reply, 0, sizeof(reply));
	ret = send_msg(m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0, reply,
		       sizeof(reply));
	free(m);
	if (ret)
		return ret;
	a = attr((struct nlmsghdr *)reply, CTRL_ATTR_FAMILY_ID);
	return a ? *(uint16_t *)((char *)a + NLA_HDRLEN) : -ENOENT;
}

/* FieldDescriptorProto.Type for a kind: int64, string or bytes. */
static unsigned int proto_type(unsigned int kind)
{
	switch (kind) {
	case PBTRACE_TPF_INT:
		return 3;
	case PBTRACE_TPF_CHARS:
	case PBTRACE_TPF_DATA_LOC_STR:
	case PBTRACE_TPF_REL_LOC_STR:
		return 9;
	default:
		return 12;
	}
}

static void put_field(struct msg *m, const char *spec, unsigned int *next_id)
{
	unsigned int off, size, kind;
	char name[64];
	struct nlattr *f;

	if (sscanf(spec, "%63[^:]:%u:%u:%u", name, &off, &size, &kind) != 4) {
		fprintf(stderr, "member_nl: bad field '%s' (name:offset:size:kind)\n",
			spec);
		exit(2);
	}
	f = nest(m, PBTRACE_A_TP_FIELD);
	put_str(m, PBTRACE_A_TPF_NAME, name);
	put_u32(m, PBTRACE_A_TPF_OFFSET, off);
	put_u32(m, PBTRACE_A_TPF_SIZE, size);
	put_u32(m, PBTRACE_A_TPF_KIND, kind);
	if (strncmp(name, "common_", 7) && *next_id <= PBTRACE_TP_MAX_PROTO_ID) {
		put_u32(m, PBTRACE_A_TPF_PROTO_ID, (*next_id)++);
		put_u32(m, PBTRACE_A_TPF_PROTO_TYPE, proto_type(kind));
	}
	nest_end(m, f);
}

/* SESSION_BUFFERS with one buffer of one tracepoint: argv[0..3] + fields. */
static void put_buffers(struct msg *m, int argc, char **argv)
{
	struct nlattr *bufs, *buf, *tps, *tp, *fields;
	unsigned int next_id = 1;
	int i;

	bufs = nest(m, PBTRACE_A_SESSION_BUFFERS);
	buf = nest(m, PBTRACE_A_BUFFER);
	put_u32(m, PBTRACE_A_BUFFER_SIZE_KB, 1024);
	tps = nest(m, PBTRACE_A_BUFFER_TRACEPOINTS);
	tp = nest(m, PBTRACE_A_TP);
	put_str(m, PBTRACE_A_TP_NAME, argv[0]);
	put_u32(m, PBTRACE_A_TP_ID, strtoul(argv[1], NULL, 0));
	put_u32(m, PBTRACE_A_TP_FLAGS, PBTRACE_TP_FTRACE);
	put_u32(m, PBTRACE_A_TP_PROTO_ID, strtoul(argv[2], NULL, 0));
	fields = nest(m, PBTRACE_A_TP_FIELDS);
	for (i = 3; i < argc; i++)
		put_field(m, argv[i], &next_id);
	nest_end(m, fields);
	nest_end(m, tp);
	nest_end(m, tps);
	nest_end(m, buf);
	nest_end(m, bufs);
}

static int refused(int ret)
{
	printf("err %d %s\n", -ret, extack);
	return -ret;
}

/*
 * The same refused request @n times: each ack's message must be the one
 * for this request, @want, whatever other callers send meanwhile.
 */
static int repeat(struct msg *m, int cmd, unsigned long n, const char *want)
{
	unsigned long own = 0, other = 0;
	char first[sizeof(extack)] = "";
	struct msg *copy = malloc(sizeof(*m));
	int ret;

	if (!copy)
		return 1;
	while (n--) {
		memcpy(copy, m, sizeof(*m));
		extack[0] = '\0';
		ret = send_msg(copy, family, cmd, PBTRACE_GENL_VERSION, 0, NULL, 0);
		if (ret && strstr(extack, want)) {
			own++;
			continue;
		}
		if (!other++)
			snprintf(first, sizeof(first), "err %d %s", -ret, extack);
	}
	free(copy);
	printf("own %lu other %lu%s%s\n", own, other, other ? " first: " : "",
	       first);
	return other ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int cmd; uint16_t flags; } ops[] = {
		{ "start", PBTRACE_CMD_START_SESSION, 0 },
		{ "stop", PBTRACE_CMD_STOP_SESSION, 0 },
		{ "destroy", PBTRACE_CMD_DESTROY_SESSION, 0 },
		{ "get", PBTRACE_CMD_GET_SESSION, 0 },
		{ "watermark", PBTRACE_CMD_GET_WATERMARK, 0 },
		{ "cpustats", PBTRACE_CMD_GET_CPU_STATS, NLM_F_DUMP },
	};
	static unsigned char reply[65536];
	struct msg *m = calloc(1, sizeof(*m));
	struct nlattr *a;
	int one = 1, ret;
	size_t i;

	if (!m || argc < 3) {
		fprintf(stderr, "usage: member_nl new NAME EVENT ID PROTO_ID [FIELD...] | set SID EVENT ID PROTO_ID [FIELD...] | start|stop|destroy|get|watermark|cpustats SID\n");
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0 ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one))) {
		perror("member_nl: netlink socket");
		return 1;
	}
	family = family_id();
	if (family < 0)
		return refused(family);
	if (!strcmp(argv[1], "repeat") && argc >= 9) {
		unsigned long n = strtoul(argv[2], NULL, 0);
		const char *want = argv[3];

		argv += 3;
		argc -= 3;
		if (!strcmp(argv[1], "new"))
			put_str(m, PBTRACE_A_SESSION_NAME, argv[2]);
		else
			put_u32(m, PBTRACE_A_SESSION_ID, strtoul(argv[2], NULL, 0));
		put_buffers(m, argc - 3, argv + 3);
		return repeat(m, strcmp(argv[1], "new") ? PBTRACE_CMD_SET_SESSION :
			      PBTRACE_CMD_NEW_SESSION, n, want);
	}
	if ((!strcmp(argv[1], "new") || !strcmp(argv[1], "set")) && argc >= 6) {
		bool is_new = !strcmp(argv[1], "new");

		if (is_new)
			put_str(m, PBTRACE_A_SESSION_NAME, argv[2]);
		else
			put_u32(m, PBTRACE_A_SESSION_ID, strtoul(argv[2], NULL, 0));
		put_buffers(m, argc - 3, argv + 3);
		ret = send_msg(m, family, is_new ? PBTRACE_CMD_NEW_SESSION :
			       PBTRACE_CMD_SET_SESSION, PBTRACE_GENL_VERSION, 0,
			       reply, sizeof(reply));
		if (ret)
			return refused(ret);
		a = is_new ? attr((struct nlmsghdr *)reply, PBTRACE_A_SESSION_ID) : NULL;
		if (a)
			printf("id %u\n", *(uint32_t *)((char *)a + NLA_HDRLEN));
		return 0;
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(argv[1], ops[i].name))
			break;
	if (i == sizeof(ops) / sizeof(ops[0])) {
		fprintf(stderr, "member_nl: unknown command '%s'\n", argv[1]);
		return 2;
	}
	put_u32(m, PBTRACE_A_SESSION_ID, strtoul(argv[2], NULL, 0));
	ret = send_msg(m, family, ops[i].cmd, PBTRACE_GENL_VERSION,
		       ops[i].flags, NULL, 0);
	if (ret)
		return refused(ret);
	printf("ok\n");
	return 0;
}
