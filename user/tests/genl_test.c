// SPDX-License-Identifier: GPL-2.0
/*
 * genl.c's message halves without a kernel: the NEW_SESSION attributes a
 * spec becomes (read back with libnl's plain parser, as the kernel's
 * nla_parse would see them) and GET_SESSION replies built here the way
 * kmod/netlink.c lays them out (uapi pbtrace.h), parsed by genl.c.
 * Prints TAP.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "genl.h"
#include "tap.h"

#define FAMILY 0x20	/* any id: nothing is sent */

static struct nl_msg *new_msg(int cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, 0, 0, FAMILY, 0, 0, cmd,
				PBTRACE_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Buffer @i of a NEW_SESSION message: its attributes in tb. */
static bool buffer_attrs(struct nl_msg *msg, int i,
			 struct nlattr *tb[PBTRACE_A_MAX + 1])
{
	struct nlattr *top[PBTRACE_A_MAX + 1], *a;
	int rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, top, PBTRACE_A_MAX, NULL) < 0 ||
	    !top[PBTRACE_A_SESSION_BUFFERS])
		return false;
	nla_for_each_nested(a, top[PBTRACE_A_SESSION_BUFFERS], rem)
		if (nla_type(a) == PBTRACE_A_BUFFER && !i--)
			return nla_parse_nested(tb, PBTRACE_A_MAX, a, NULL) == 0;
	return false;
}

/* The names in a PBTRACE_A_BUFFER_MACHINES nest, comma-joined. */
static void names_of(struct nlattr *nest, char *out, size_t n)
{
	struct nlattr *a;
	size_t len = 0;
	int rem;

	out[0] = '\0';
	nla_for_each_nested(a, nest, rem) {
		const char *s = nla_data(a);

		/* NLA_NUL_STRING: the kernel wants the NUL inside. */
		if (nla_type(a) != PBTRACE_A_MACHINE_NAME || !nla_len(a) ||
		    s[nla_len(a) - 1])
			snprintf(out + len, n - len, "%s<bad>", len ? "," : "");
		else
			snprintf(out + len, n - len, "%s%s", len ? "," : "", s);
		len = strlen(out);
	}
}

static void test_put_machines(void)
{
	struct pbt_session_spec spec = {
		.name = "s", .nr_buffers = 2,
		.buffers = {
			{ .size_kb = 1024, .nr_events = 1,
			  .events = { "sched/sched_switch" },
			  .nr_machines = 3,
			  .machines = { "host", "*", "web 1" } },
			{ .size_kb = 1024, .nr_events = 1,
			  .events = { "sched/sched_switch" } },
		},
	};
	struct nlattr *tb[PBTRACE_A_MAX + 1];
	struct nl_msg *msg = new_msg(PBTRACE_CMD_NEW_SESSION);
	char names[256] = "";
	int r;

	r = msg ? pbt_nl_put_session(msg, &spec) : -ENOMEM;
	tap(!r && buffer_attrs(msg, 0, tb) && tb[PBTRACE_A_BUFFER_MACHINES] &&
	    (tb[PBTRACE_A_BUFFER_MACHINES]->nla_type & NLA_F_NESTED),
	    "NEW_SESSION: buffer 0 carries PBTRACE_A_BUFFER_MACHINES, flagged nested");
	if (!r && tb[PBTRACE_A_BUFFER_MACHINES])
		names_of(tb[PBTRACE_A_BUFFER_MACHINES], names, sizeof(names));
	tap(!strcmp(names, "host,*,web 1"),
	    "NEW_SESSION: the names in order, NUL-terminated (%s)", names);
	tap(!r && buffer_attrs(msg, 1, tb) && !tb[PBTRACE_A_BUFFER_MACHINES] &&
	    tb[PBTRACE_A_BUFFER_EVENTS],
	    "NEW_SESSION: no machines, no attribute (an older module takes it)");
	nlmsg_free(msg);
}

static void put_stats(struct nl_msg *msg, const char *name, const char *peer,
		      const struct pbtrace_machine_stats *st, int len)
{
	struct nlattr *m = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_MACHINE);

	nla_put_string(msg, PBTRACE_A_MACHINE_NAME, name);
	if (peer)
		nla_put_string(msg, PBTRACE_A_MACHINE_PEER, peer);
	nla_put(msg, PBTRACE_A_MACHINE_STATS, len, st);
	nla_nest_end(msg, m);
}

/*
 * A GET_SESSION_MACHINES message as kmod/netlink.c fills it: two relayed
 * machines, one reported by an older (shorter) struct without its peer.
 */
static struct nl_msg *machines_msg(uint32_t id,
				   const struct pbtrace_machine_stats *a,
				   const struct pbtrace_machine_stats *b)
{
	struct nl_msg *msg = new_msg(PBTRACE_CMD_GET_SESSION_MACHINES);
	struct nlattr *n;

	if (!msg)
		return NULL;
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, id);
	n = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_SESSION_MACHINES);
	put_stats(msg, "guest2", "cid 5", a, sizeof(*a));
	/* Up to chunks_lost_relay: an older layout. */
	put_stats(msg, "0123456789012345678901234567890123456789012345678901234567890123",
		  NULL, b, 40);
	nla_nest_end(msg, n);
	return msg;
}

/* A GET_SESSION reply as kmod/netlink.c fills it for a host session. */
static struct nl_msg *reply(int relay)
{
	struct nl_msg *msg = new_msg(PBTRACE_CMD_GET_SESSION);
	struct nlattr *n, *buf, *list;

	if (!msg)
		return NULL;
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, 7);
	nla_put_string(msg, PBTRACE_A_SESSION_NAME, "mm");
	nla_put_u32(msg, PBTRACE_A_SESSION_STATE, PBTRACE_STATE_STARTED);
	if (relay)
		nla_put_u8(msg, PBTRACE_A_SESSION_RELAY, 1);
	n = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_SESSION_BUFFERS);
	buf = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER);
	nla_put_u32(msg, PBTRACE_A_BUFFER_SIZE_KB, 1024);
	list = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER_MACHINES);
	nla_put_string(msg, PBTRACE_A_MACHINE_NAME, "host");
	nla_put_string(msg, PBTRACE_A_MACHINE_NAME, "*");
	nla_nest_end(msg, list);
	nla_nest_end(msg, buf);
	nla_nest_end(msg, n);
	return msg;
}

static void test_parse_machines(void)
{
	struct pbtrace_machine_stats a = {
		.machine_id = 1, .connected = 1, .buffer = 0, .num_cpus = 2,
		.chunks = 10, .bytes = 163840, .chunks_lost_relay = 1,
		.chunks_dropped = 2, .guest_events_written = 5000,
		.guest_events_lost = 3, .disconnects = 1, .gap_ns = 7000000,
		.pings = 12, .rtt_ns = 250000, .offset_ns = -123456789,
		.offset_spread_ns = 40000,
	}, b = {
		.machine_id = 2, .num_cpus = 1, .chunks = 4, .bytes = 99,
		.chunks_lost_relay = 5, .chunks_dropped = 6, .pings = 77,
	};
	struct nl_msg *msg = reply(0), *m1, *m2;
	struct pbt_session_info s;
	int r;

	r = msg ? pbt_nl_parse_session(nlmsg_hdr(msg), &s) : -ENOMEM;
	tap(!r && s.id == 7 && !s.relay && s.nr_buffers == 1 &&
	    s.buffers[0].nr_machines == 2 &&
	    !strcmp(s.buffers[0].machines[0], "host") &&
	    !strcmp(s.buffers[0].machines[1], "*") && !s.nr_machines,
	    "GET_SESSION: buffer machines parsed, no relayed machine in it (%d)", r);
	m1 = machines_msg(7, &a, &b);
	m2 = machines_msg(7, &b, &a);
	if (!r && m1 && m2) {
		r = pbt_nl_parse_session_machines(nlmsg_hdr(m1), &s);
		if (!r)
			r = pbt_nl_parse_session_machines(nlmsg_hdr(m2), &s);
	}
	tap(!r && s.nr_machines == 4 && !strcmp(s.machines[0].name, "guest2") &&
	    !strcmp(s.machines[0].peer, "cid 5") &&
	    !memcmp(&s.machines[0].st, &a, sizeof(a)) &&
	    !memcmp(&s.machines[2].st, &b, sizeof(b)),
	    "GET_SESSION_MACHINES: two messages appended, a machine's name, peer and every counter (%d)",
	    r);
	tap(!r && s.nr_machines == 4 && strlen(s.machines[1].name) == 64 &&
	    !s.machines[1].peer[0] &&
	    s.machines[1].st.chunks_lost_relay == 5 &&
	    s.machines[1].st.chunks_dropped == 0 && s.machines[1].st.pings == 0,
	    "GET_SESSION_MACHINES: a 64-character name whole, a shorter struct zero-filled");
	nlmsg_free(m1);
	m1 = machines_msg(8, &a, &b);
	tap(m1 && pbt_nl_parse_session_machines(nlmsg_hdr(m1), &s) == -EPROTO &&
	    s.nr_machines == 4,
	    "GET_SESSION_MACHINES: another session's message refused");
	pbt_session_info_free(&s);
	nlmsg_free(m1);
	nlmsg_free(m2);
	nlmsg_free(msg);

	msg = reply(1);
	r = msg ? pbt_nl_parse_session(nlmsg_hdr(msg), &s) : -ENOMEM;
	tap(!r && s.relay && s.nr_machines == 0 && !s.machines,
	    "GET_SESSION: PBTRACE_A_SESSION_RELAY marks a relay session");
	if (!r)
		pbt_session_info_free(&s);
	nlmsg_free(msg);
}

/* The session's creator, which traced writes the file as; absent from an
 * older module, whose sessions are all root's. */
static void test_parse_owner(void)
{
	struct nl_msg *msg = new_msg(PBTRACE_CMD_GET_SESSION);
	struct pbt_session_info s;
	int r = -ENOMEM;

	if (msg) {
		nla_put_u32(msg, PBTRACE_A_SESSION_ID, 9);
		nla_put_u32(msg, PBTRACE_A_SESSION_OWNER_UID, 4201);
		nla_put_u32(msg, PBTRACE_A_SESSION_OWNER_GID, 4202);
		r = pbt_nl_parse_session(nlmsg_hdr(msg), &s);
	}
	tap(!r && s.owner_uid == 4201 && s.owner_gid == 4202,
	    "GET_SESSION: PBTRACE_A_SESSION_OWNER_UID/GID parsed (%d)", r);
	if (!r)
		pbt_session_info_free(&s);
	nlmsg_free(msg);

	msg = reply(0);
	r = msg ? pbt_nl_parse_session(nlmsg_hdr(msg), &s) : -ENOMEM;
	tap(!r && s.owner_uid == 0 && s.owner_gid == 0,
	    "GET_SESSION: no owner attributes means root's (%d)", r);
	if (!r)
		pbt_session_info_free(&s);
	nlmsg_free(msg);
}

static void test_describe(void)
{
	struct pbt_machine_info m = {
		.name = "guest2", .peer = "tcp 10.0.2.2 key",
		.st = { .machine_id = 1, .connected = 1, .num_cpus = 2,
			.chunks = 10, .bytes = 20 << 20, .chunks_lost_relay = 1,
			.chunks_dropped = 2, .guest_events_written = 5000,
			.guest_events_lost = 3, .disconnects = 1,
			.gap_ns = 1500000000, .pings = 12, .rtt_ns = 250500,
			.offset_ns = -2500000, .offset_spread_ns = 40000,
			.clock_syncs = 5 },
	};
	char buf[1024];

	pbt_machine_describe(buf, sizeof(buf), &m);
	tap(strstr(buf, "machine guest2 (id 1): connected, tcp 10.0.2.2 key, buffer 0, 2 cpus\n") &&
	    strstr(buf, "received 10 chunks, 20.0 MiB; guest wrote 5000 events\n") &&
	    strstr(buf, "lost: 1 chunks in relay gaps, 2 dropped here (queue full or no clock round), 3 events on the guest, 1 disconnects (1.500 s without it)\n") &&
	    strstr(buf, "clock: 12 pings (5 in the trace), rtt 250.5 us, offset -0.002500 s, spread 40.0 us\n"),
	    "status text: name, id, connected, peer, chunks, bytes, each loss, pings, rtt, offset, spread");
	memset(&m.st, 0, sizeof(m.st));
	m.peer[0] = '\0';
	m.st.machine_id = 4;
	pbt_machine_describe(buf, sizeof(buf), &m);
	tap(strstr(buf, "machine guest2 (id 4): not connected, buffer 0") &&
	    strstr(buf, "clock: no ping round yet: no clock offset"),
	    "status text: a machine that left before a ping round");
}

static void test_syscalls(void)
{
	struct pbt_session_spec spec = {
		.name = "s", .nr_buffers = 2,
		.buffers = {
			{ .size_kb = 1024, .nr_events = 2,
			  .events = { "raw_syscalls/sys_enter", "raw_syscalls/sys_exit" },
			  .nr_syscalls = 3, .syscalls = { 110, 257, 0 } },
			{ .size_kb = 1024, .nr_events = 1,
			  .events = { "raw_syscalls/sys_enter" } },
		},
	};
	struct nlattr *tb[PBTRACE_A_MAX + 1], *a, *n, *buf;
	struct nl_msg *msg = new_msg(PBTRACE_CMD_NEW_SESSION);
	uint32_t got[8];
	size_t nr = 0;
	bool bad = false;
	struct pbt_session_info si;
	int r, rem;

	r = msg ? pbt_nl_put_session(msg, &spec) : -ENOMEM;
	tap(!r && buffer_attrs(msg, 0, tb) && tb[PBTRACE_A_BUFFER_SYSCALLS] &&
	    (tb[PBTRACE_A_BUFFER_SYSCALLS]->nla_type & NLA_F_NESTED),
	    "NEW_SESSION: buffer 0 carries PBTRACE_A_BUFFER_SYSCALLS, flagged nested");
	if (!r && tb[PBTRACE_A_BUFFER_SYSCALLS])
		nla_for_each_nested(a, tb[PBTRACE_A_BUFFER_SYSCALLS], rem) {
			if (nla_type(a) != PBTRACE_A_SYSCALL_NR || nla_len(a) != 4 ||
			    nr == 8)
				bad = true;
			else
				got[nr++] = nla_get_u32(a);
		}
	tap(!bad && nr == 3 && got[0] == 110 && got[1] == 257 && got[2] == 0,
	    "NEW_SESSION: PBTRACE_A_SYSCALL_NR u32 each, in order (%zu)", nr);
	tap(!r && buffer_attrs(msg, 1, tb) && !tb[PBTRACE_A_BUFFER_SYSCALLS],
	    "NEW_SESSION: no syscall filter, no attribute (every syscall)");
	nlmsg_free(msg);

	/* GET_SESSION reports the filter back. */
	msg = new_msg(PBTRACE_CMD_GET_SESSION);
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, 3);
	n = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_SESSION_BUFFERS);
	buf = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER);
	nla_put_u32(msg, PBTRACE_A_BUFFER_SIZE_KB, 2048);
	a = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER_SYSCALLS);
	nla_put_u32(msg, PBTRACE_A_SYSCALL_NR, 110);
	nla_put_u32(msg, PBTRACE_A_SYSCALL_NR, 39);
	nla_nest_end(msg, a);
	nla_nest_end(msg, buf);
	nla_nest_end(msg, n);
	r = pbt_nl_parse_session(nlmsg_hdr(msg), &si);
	tap(!r && si.nr_buffers == 1 && si.buffers[0].size_kb == 2048 &&
	    si.buffers[0].nr_syscalls == 2 && si.buffers[0].syscalls[0] == 110 &&
	    si.buffers[0].syscalls[1] == 39,
	    "GET_SESSION: the buffer's syscall numbers parsed (%d)", r);
	if (!r)
		pbt_session_info_free(&si);
	nlmsg_free(msg);
}

/* The live watermark: sent only when asked for, read back. */
static void test_watermark(void)
{
	struct pbt_session_spec spec = {
		.name = "s", .nr_buffers = 2,
		.buffers = {
			{ .size_kb = 1024, .nr_events = 1,
			  .events = { "raw_syscalls/sys_enter" },
			  .watermark_ms = 10, .watermark_expedited = true },
			{ .size_kb = 1024, .nr_events = 1,
			  .events = { "raw_syscalls/sys_enter" } },
		},
	};
	struct nlattr *tb[PBTRACE_A_MAX + 1], *n, *buf;
	struct nl_msg *msg = new_msg(PBTRACE_CMD_NEW_SESSION);
	struct pbt_session_info si;
	int r;

	r = msg ? pbt_nl_put_session(msg, &spec) : -ENOMEM;
	tap(!r && buffer_attrs(msg, 0, tb) && tb[PBTRACE_A_BUFFER_WATERMARK_MS] &&
	    nla_len(tb[PBTRACE_A_BUFFER_WATERMARK_MS]) == 4 &&
	    nla_get_u32(tb[PBTRACE_A_BUFFER_WATERMARK_MS]) == 10,
	    "NEW_SESSION: buffer 0 carries PBTRACE_A_BUFFER_WATERMARK_MS 10 (u32)");
	tap(!r && buffer_attrs(msg, 0, tb) &&
	    tb[PBTRACE_A_BUFFER_WATERMARK_EXPEDITED] &&
	    !nla_len(tb[PBTRACE_A_BUFFER_WATERMARK_EXPEDITED]),
	    "NEW_SESSION: buffer 0 carries PBTRACE_A_BUFFER_WATERMARK_EXPEDITED (a flag)");
	tap(!r && buffer_attrs(msg, 1, tb) && !tb[PBTRACE_A_BUFFER_WATERMARK_MS] &&
	    !tb[PBTRACE_A_BUFFER_WATERMARK_EXPEDITED],
	    "NEW_SESSION: no watermark, no attribute (an older module takes it)");
	nlmsg_free(msg);

	msg = new_msg(PBTRACE_CMD_GET_SESSION);
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, 3);
	n = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_SESSION_BUFFERS);
	buf = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER);
	nla_put_u32(msg, PBTRACE_A_BUFFER_SIZE_KB, 2048);
	nla_put_u32(msg, PBTRACE_A_BUFFER_WATERMARK_MS, 25);
	nla_put_flag(msg, PBTRACE_A_BUFFER_WATERMARK_EXPEDITED);
	nla_nest_end(msg, buf);
	nla_nest_end(msg, n);
	r = pbt_nl_parse_session(nlmsg_hdr(msg), &si);
	tap(!r && si.nr_buffers == 1 && si.buffers[0].watermark_ms == 25 &&
	    si.buffers[0].watermark_expedited,
	    "GET_SESSION: the buffer's watermark period and expedited flag parsed (%d)", r);
	if (!r)
		pbt_session_info_free(&si);
	nlmsg_free(msg);
}

/* The DESTROY notification with and without the reason traced gave. */
static void test_notify_error(void)
{
	char longer[PBTRACE_ERROR_MAX + 40];
	struct nl_msg *msg = new_msg(PBTRACE_CMD_DESTROY_SESSION);
	struct pbt_notify n;
	int r;

	nla_put_u32(msg, PBTRACE_A_SESSION_ID, 9);
	nla_put_string(msg, PBTRACE_A_SESSION_ERROR,
		       "writing /x/t.pftrace: No space left on device");
	r = pbt_nl_parse_notify(nlmsg_hdr(msg), &n);
	tap(r == 1 && n.cmd == PBTRACE_CMD_DESTROY_SESSION && n.session_id == 9 &&
	    !strcmp(n.error, "writing /x/t.pftrace: No space left on device"),
	    "DESTROY notification: session id and PBTRACE_A_SESSION_ERROR (%s)",
	    n.error);
	nlmsg_free(msg);

	msg = new_msg(PBTRACE_CMD_DESTROY_SESSION);
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, 10);
	r = pbt_nl_parse_notify(nlmsg_hdr(msg), &n);
	tap(r == 1 && n.session_id == 10 && !n.error[0],
	    "DESTROY notification without an error: empty error");
	nlmsg_free(msg);

	/* A longer string than the uapi allows is cut, never overrun. */
	memset(longer, 'e', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	msg = new_msg(PBTRACE_CMD_DESTROY_SESSION);
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, 11);
	nla_put_string(msg, PBTRACE_A_SESSION_ERROR, longer);
	r = pbt_nl_parse_notify(nlmsg_hdr(msg), &n);
	tap(r == 1 && strlen(n.error) == PBTRACE_ERROR_MAX - 1,
	    "an overlong error is cut to %d bytes (%zu)", PBTRACE_ERROR_MAX - 1,
	    strlen(n.error));
	nlmsg_free(msg);
}

int main(void)
{
	test_put_machines();
	test_syscalls();
	test_watermark();
	test_notify_error();
	test_parse_machines();
	test_parse_owner();
	test_describe();
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
