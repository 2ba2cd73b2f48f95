// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded, structure-aware fuzzer of the "pbtrace" generic netlink family
 * and of /dev/pbtrace, for nl_fuzz_test.sh (run in a guest, as root).
 *
 *   nl_fuzz [-s SEED] [-t SECS] [-n STEPS] [-1]
 *                                       fuzz; prints counts as "key value"
 *   nl_fuzz -u UID [-g GID] ...         the same as UID (in group GID),
 *                                       without privileges
 *   nl_fuzz -u UID -g GID -m BUDGET_KB  a member of the module's group=
 *                                       GID: its own sessions with real
 *                                       tracepoints (layouts read as root
 *                                       first), stacks, filters (hostile
 *                                       ones too), sizes around BUDGET_KB
 *                                       (group_max_kb); root samples
 *                                       group_usage, MemAvailable and a
 *                                       heartbeat per CPU meanwhile, and
 *                                       prints their extremes after it
 *   nl_fuzz --cleanup                   destroy every session, then print
 *                                       "sessions_left N" (a fresh dump)
 *
 * Messages are built from the family's real attribute tree (most of them
 * well formed, so they reach the handlers), then mutated: attribute types
 * and lengths, missing NULs, flags on nests, dropped or repeated
 * attributes, over-long lists, truncated headers, wrong commands, versions
 * and flags, several messages in one send, TraceConfig bytes flipped. The
 * lifecycle commands run across up to 8 sessions on a pool of sockets that
 * close and reopen (a registered daemon socket closing among them). A
 * second thread (unless -1) works /dev/pbtrace at the same time: attach to
 * random sessions and buffers, mmap (read-only, and write that must fail),
 * GET/PUT_CHUNK, READ_REMOTE, poll, close with chunks held.
 *
 * The seed is printed first, the steps last; -s SEED -n STEPS -1 replays
 * the netlink sequence exactly (the device thread's timing against it
 * cannot be replayed).
 * Every "sent" is answered by an ack ("ok"), an errno ("err") or nothing
 * ("noreply": headers the kernel drops); per-command lines let the test
 * demand that each command was both accepted and refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <grp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/pbtrace.h>
#include "genl_groups.h"
#include "tracefs.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define MSG_MAX (PBTRACE_MAX_CONFIG + 16384)
#define NR_SOCKS 4
#define NR_FDS 4
#define MAX_IDS 16
#define NR_CMDS 256

/* ---- random numbers: xorshift64*, one state per thread ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ULL;
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) >> 32) % n : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

/* ---- counts ---- */

struct cmd_count {
	unsigned long sent, ok, err, noreply, dump_msgs;
	double max_ms;	/* the slowest sendmsg: genl_mutex is global */
};

static struct cmd_count cmds[NR_CMDS];
static unsigned long errnos[256];
static unsigned long notifications, mutated, sends_failed;

#define DEV_OPS(X) X(open) X(attach) X(mmap) X(mmap_write) X(get_chunk) \
	X(put_chunk) X(read_remote) X(poll) X(bad_ioctl) X(close) X(orphan)
#define X_ENUM(n) DEV_##n,
enum { DEV_OPS(X_ENUM) NR_DEV };
#define X_NAME(n) #n,
static const char *const dev_names[] = { DEV_OPS(X_NAME) };
static unsigned long dev_tried[NR_DEV], dev_ok[NR_DEV];
/* Kernel answers that contradict the ABI: each is a bug. */
static unsigned long dev_bad, remote_bytes;
static char dev_bad_why[256];

static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t ids[MAX_IDS];	/* session ids NEW_SESSION returned */
static unsigned int nr_ids;
static volatile bool stop_dev;

static uint32_t newest_id;	/* the last NEW_SESSION's: likely not started */
static uint32_t load_id;	/* the last LOAD_NAMES reply's: a load going on */

static void add_id(uint32_t id)
{
	pthread_mutex_lock(&ids_lock);
	if (nr_ids < MAX_IDS)
		ids[nr_ids++] = id;
	else
		ids[id % MAX_IDS] = id;
	pthread_mutex_unlock(&ids_lock);
}

/* A known id mostly; sometimes 0, a stale neighbour or a wild one. */
static uint32_t pick_id(struct rng *r)
{
	uint32_t id = 0;

	pthread_mutex_lock(&ids_lock);
	if (nr_ids && chance(r, 85))
		id = ids[below(r, nr_ids)];
	pthread_mutex_unlock(&ids_lock);
	if (id && chance(r, 95))
		return id;
	switch (below(r, 4)) {
	case 0: return 0;
	case 1: return id + 1;
	case 2: return 0xffffffffu;
	default: return below(r, 64);
	}
}

/* SET_SESSION only works before START: half of them go to the newest. */
static uint32_t pick_set_id(struct rng *r)
{
	uint32_t id;

	pthread_mutex_lock(&ids_lock);
	id = newest_id;
	pthread_mutex_unlock(&ids_lock);
	return id && chance(r, 50) ? id : pick_id(r);
}

/* ---- message building ---- */

struct msg {
	struct nlmsghdr nlh;
	struct genlmsghdr g;
	unsigned char a[MSG_MAX];
	size_t off;
	unsigned int mut;	/* per-attribute mutation chance, percent */
	struct rng *r;
};

static struct nlattr *put(struct msg *m, int type, const void *data,
			  size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->a + m->off);

	if (m->off + NLA_ALIGN(NLA_HDRLEN + len) > sizeof(m->a) ||
	    NLA_HDRLEN + len > 0xffff)
		return NULL;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	m->off += NLA_ALIGN(a->nla_len);
	if (m->mut && chance(m->r, m->mut)) {
		switch (below(m->r, 6)) {
		case 0:		/* another attribute's type */
			a->nla_type = below(m->r, PBTRACE_A_MAX + 3) |
				      (a->nla_type & NLA_F_NESTED);
			break;
		case 1:		/* a nest flag where none belongs, or none */
			a->nla_type ^= NLA_F_NESTED;
			break;
		case 2:		/* shorter than it says */
			if (a->nla_len > NLA_HDRLEN)
				a->nla_len -= 1 + below(m->r, a->nla_len - NLA_HDRLEN);
			break;
		case 3:		/* longer than it is */
			a->nla_len += 1 + below(m->r, 64);
			break;
		case 4:		/* a string without its NUL */
			if (len)
				((char *)a)[NLA_HDRLEN + len - 1] = 'x';
			break;
		default:	/* dropped */
			m->off = (unsigned char *)a - m->a;
			return NULL;
		}
	}
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

static size_t nest_begin(struct msg *m, int type)
{
	size_t at = m->off;

	if (!put(m, NLA_F_NESTED | type, NULL, 0))
		return (size_t)-1;
	return at;
}

static void nest_end(struct msg *m, size_t at)
{
	struct nlattr *a;

	if (at == (size_t)-1 || at >= m->off)
		return;
	a = (struct nlattr *)(m->a + at);
	/* A mutation may already have lied about the length: keep the lie. */
	if (a->nla_len == NLA_HDRLEN && m->off - at <= 0xffff)
		a->nla_len = m->off - at;
}

/* ---- the attribute tree ---- */

static char events[64][PBTRACE_NAME_MAX];
static const char *relay_machine = "fz";
static unsigned int nr_events;
static unsigned int nr_cpus;

static const char *pick_event(struct rng *r)
{
	static const char *const bogus[] = {
		"sched/nonexistent", "sched", "/", "", "sched/sched_switch/x",
	};

	if (nr_events && chance(r, 95))
		return events[below(r, nr_events)];
	return bogus[below(r, sizeof(bogus) / sizeof(bogus[0]))];
}

static uint32_t pick_size_kb(struct rng *r, uint32_t chunk_kb)
{
	uint32_t min = chunk_kb * nr_cpus;

	if (chance(r, 90))
		return min * (1 + below(r, 8));
	switch (below(r, 5)) {
	case 0: return 0;
	case 1: return min - 1;
	case 2: return 1048577;
	case 3: return 0xffffffffu;
	default: return min * 16;
	}
}

static void gen_list(struct msg *m, int nest, int type, unsigned int n,
		     uint32_t lo, uint32_t span)
{
	size_t at = nest_begin(m, nest);
	unsigned int i;

	for (i = 0; i < n; i++)
		put_u32(m, type, lo + below(m->r, span));
	nest_end(m, at);
}

static void gen_machines(struct msg *m)
{
	/* PBTRACE_FUZZ_MACHINE: a relay connected to this module's endpoint. */
	const char *names[] = { "host", "*", "web1", "", relay_machine };
	unsigned int i, n = chance(m->r, 90) ? 1 + below(m->r, 3) :
			    below(m->r, PBTRACE_MAX_MACHINE_NAMES + 3);
	size_t at = nest_begin(m, PBTRACE_A_BUFFER_MACHINES);

	for (i = 0; i < n; i++)
		put_str(m, PBTRACE_A_MACHINE_NAME, names[below(m->r, 5)]);
	nest_end(m, at);
}

/*
 * A names entry (LOAD_NAMES): mostly a CID's or a key's, sometimes both,
 * neither, a bad name, a key of a wrong length, the CID meaning any.
 */
static void gen_name_entry(struct msg *m)
{
	static const char *const bad[] = { "a@b", "host", "*", "", "a b", "a,b" };
	struct rng *r = m->r;
	uint8_t key[PBTRACE_NAME_KEY_MAX + 8];
	size_t at = nest_begin(m, PBTRACE_A_NAME), len, i;
	unsigned int k = below(r, 100);
	char name[80];

	if (k < 85) {
		snprintf(name, sizeof(name), "fz%u", below(r, 40));
		put_str(m, PBTRACE_A_MACHINE_NAME, name);
	} else if (k < 95) {
		put_str(m, PBTRACE_A_MACHINE_NAME, bad[below(r, 6)]);
	} else if (k < 97) {
		memset(name, 'n', sizeof(name));
		name[PBTRACE_NAME_MAX - 1 + (k & 1)] = '\0';
		put_str(m, PBTRACE_A_MACHINE_NAME, name);
	}
	k = below(r, 100);
	if (k < 55 || k >= 95)
		put_u32(m, PBTRACE_A_NAME_CID, chance(r, 97) ? 3 + below(r, 60) :
			0xffffffffu);
	if (k >= 55 && k < 98) {
		len = chance(r, 90) ? 16 + below(r, PBTRACE_NAME_KEY_MAX - 15) :
		      below(r, sizeof(key));
		for (i = 0; i < len; i++)
			key[i] = (uint8_t)rnd(r);
		put(m, PBTRACE_A_NAME_KEY, key, len);
	}
	if (chance(r, 70))
		put_u32(m, PBTRACE_A_NAME_LINE, 1 + below(r, 100));
	nest_end(m, at);
}

static void gen_names(struct msg *m)
{
	unsigned int i, n = chance(m->r, 90) ? 1 + below(m->r, 4) :
			    below(m->r, 300);
	size_t at = nest_begin(m, PBTRACE_A_NAMES);

	for (i = 0; i < n; i++)
		gen_name_entry(m);
	nest_end(m, at);
}

static void gen_events(struct msg *m)
{
	unsigned int i, n = chance(m->r, 95) ? 1 + below(m->r, 4) :
			    below(m->r, 300);
	size_t at = nest_begin(m, PBTRACE_A_BUFFER_EVENTS);

	for (i = 0; i < n; i++)
		put_str(m, PBTRACE_A_EVENT_NAME, pick_event(m->r));
	nest_end(m, at);
}

/*
 * ---- a group member's requests (-m BUDGET_KB) ----
 *
 * Real tracepoints: ids and layouts read from tracefs as root before the
 * privileges go (tracefs is root's), then sent as a member would, with
 * stacks, filters (valid ones, and long patterns, many comparisons, past
 * the language's and a member's cost bounds) and sizes up to and over the
 * budget. Each request's features are counted with its answer.
 */
#define NR_LAYOUTS 48
static struct pbt_tp_layout layouts[NR_LAYOUTS];
static uint32_t layout_ids[NR_LAYOUTS];
static unsigned int nr_layouts;
static uint32_t member_kb;	/* 0: not a member run */

enum { F_TPS, F_STACKS, F_FILTERS, F_HOSTILE, F_OVER, NR_FEAT };
static const char *const feat_names[NR_FEAT] = {
	"tracepoints", "stacks", "filters", "hostile_filters", "over_budget",
};
static unsigned long feat_sent[NR_FEAT], feat_ok[NR_FEAT];
static unsigned int msg_feat;	/* the request being built's */
static bool tp_clean;		/* many tracepoints: none of them broken */

static int keep_event(const char *group, const char *name, void *arg)
{
	unsigned int *seen = arg;
	char err[256];
	int id;

	(*seen)++;
	/* ftrace/ is refused to everyone; take every 7th, and printk. */
	if (!strcmp(group, "ftrace") || nr_layouts >= NR_LAYOUTS)
		return 0;
	if (*seen % 7 && strcmp(group, "printk"))
		return 0;
	id = pbt_tracefs_layout(group, name, &layouts[nr_layouts], err, sizeof(err));
	if (id < 0)
		return 0;
	layouts[nr_layouts].proto_id = PBTRACE_TP_GENERIC_PROTO_BASE + nr_layouts;
	layout_ids[nr_layouts++] = id;
	return 0;
}

static void load_layouts(void)
{
	unsigned int seen = 0;
	char err[256];

	if (pbt_tracefs_list(keep_event, &seen, err, sizeof(err)))
		fprintf(stderr, "nl_fuzz: %s\n", err);
}

static const struct pbt_tpf *pick_field(struct rng *r, const struct pbt_tp_layout *l,
					bool string)
{
	unsigned int i, k = below(r, l->nr_fields ? l->nr_fields : 1);

	/* A __data_loc string costs most (8192 bytes): past the bound. */
	for (i = 0; string && chance(r, 70) && i < l->nr_fields; i++)
		if (l->fields[i].kind == PBTRACE_TPF_DATA_LOC_STR)
			return &l->fields[i];
	for (i = 0; i < l->nr_fields; i++) {
		const struct pbt_tpf *f = &l->fields[(k + i) % l->nr_fields];
		bool is_str = f->kind == PBTRACE_TPF_CHARS ||
			      f->kind == PBTRACE_TPF_DATA_LOC_STR ||
			      f->kind == PBTRACE_TPF_REL_LOC_STR;

		if (string ? is_str : f->kind == PBTRACE_TPF_INT)
			return f;
	}
	return NULL;
}

/* A filter over @l's fields: mostly one that compiles, else hostile. */
static void gen_filter(struct msg *m, const struct pbt_tp_layout *l)
{
	static char f[PBTRACE_TP_FILTER_MAX + 128];
	struct rng *r = m->r;
	const struct pbt_tpf *n = pick_field(r, l, false), *s = pick_field(r, l, true);
	unsigned int k = below(r, 100), i, len = 0, cap = sizeof(f) - 80;

	msg_feat |= 1u << F_FILTERS;
	if (k < 50 || (!s && k < 70) || tp_clean) {
		snprintf(f, sizeof(f), "%s %s %u%s", n ? n->name : "common_pid",
			 chance(r, 50) ? "==" : ">", below(r, 1000), s ? " || " : "");
		if (s)
			snprintf(f + strlen(f), sizeof(f) - strlen(f), "%s ~ \"%s\"",
				 s->name, chance(r, 50) ? "a*" : "*b");
		put_str(m, PBTRACE_A_TP_FILTER, f);
		return;
	}
	msg_feat |= 1u << F_HOSTILE;
	if (k < 70) {	/* a long "*x*" pattern: past a member's cost bound */
		len = snprintf(f, sizeof(f), "%s ~ \"*", s->name);
		for (i = 1 + below(r, chance(r, 30) ? 1100 : 40); i && len < cap; i--)
			f[len++] = 'a' + below(r, 26);
		snprintf(f + len, sizeof(f) - len, "*\"");
	} else if (k < 85) {	/* many comparisons: up to past 128 */
		unsigned int nr = 1 + below(r, 150);

		for (i = 0; i < nr && len < cap; i++)
			len += snprintf(f + len, sizeof(f) - len, "%s%s == %u",
					i ? " || " : "", n ? n->name : "common_pid",
					below(r, 100000));
	} else if (k < 95) {	/* long and broken */
		len = below(r, sizeof(f) - 1);
		for (i = 0; i < len; i++)
			f[i] = "()&|=!~<>\"* abc_0123"[below(r, 20)];
		f[len] = '\0';
	} else {
		snprintf(f, sizeof(f), "no_such_field == 1");
	}
	put_str(m, PBTRACE_A_TP_FILTER, f);
}

static void gen_tp(struct msg *m, unsigned int which)
{
	struct rng *r = m->r;
	const struct pbt_tp_layout *l = &layouts[which];
	char name[2 * PBTRACE_NAME_MAX + 2];
	uint32_t flags = PBTRACE_TP_FTRACE;
	size_t tp = nest_begin(m, PBTRACE_A_TP), fields, fa;
	unsigned int i;

	snprintf(name, sizeof(name), "%s/%s", l->group, l->name);
	put_str(m, PBTRACE_A_TP_NAME, name);
	put_u32(m, PBTRACE_A_TP_ID, tp_clean || chance(r, 97) ? layout_ids[which] :
		layout_ids[below(r, nr_layouts)] + below(r, 3));
	if (chance(r, 30)) {
		flags |= PBTRACE_TP_PERF_SAMPLE;
		if (chance(r, 70))
			flags |= PBTRACE_TP_KERNEL_STACK;
		if (chance(r, 50))
			flags |= PBTRACE_TP_USER_STACK;
		if (chance(r, 10))
			flags &= ~PBTRACE_TP_FTRACE;
		msg_feat |= 1u << F_STACKS;
	}
	if (!tp_clean && chance(r, 2))
		flags = (uint32_t)rnd(r);
	put_u32(m, PBTRACE_A_TP_FLAGS, flags);
	/* Below the generic base: posing as one of Perfetto's events. */
	put_u32(m, PBTRACE_A_TP_PROTO_ID, tp_clean || chance(r, 97) ? l->proto_id :
		1 + below(r, 600));
	if (chance(r, 15))
		put_u32(m, PBTRACE_A_TP_PERIOD, tp_clean || chance(r, 90) ?
			1 + below(r, 100) : 0);
	if (chance(r, 45))
		gen_filter(m, l);
	fields = nest_begin(m, PBTRACE_A_TP_FIELDS);
	for (i = 0; i < l->nr_fields; i++) {
		const struct pbt_tpf *f = &l->fields[i];
		bool lie = !tp_clean && chance(r, 1);	/* not the kernel's field */

		fa = nest_begin(m, PBTRACE_A_TP_FIELD);
		put_str(m, PBTRACE_A_TPF_NAME, f->name);
		put_u32(m, PBTRACE_A_TPF_OFFSET, f->offset + (lie ? 1 + below(r, 8) : 0));
		put_u32(m, PBTRACE_A_TPF_SIZE, f->size);
		put_u32(m, PBTRACE_A_TPF_KIND, f->kind);
		if (f->is_signed)
			put(m, PBTRACE_A_TPF_SIGNED, NULL, 0);
		if (f->kind == PBTRACE_TPF_ARRAY)
			put_u32(m, PBTRACE_A_TPF_ELEM_SIZE, f->elem_size);
		put_u32(m, PBTRACE_A_TPF_PROTO_ID, f->proto_id);
		put_u32(m, PBTRACE_A_TPF_PROTO_TYPE, f->proto_type);
		nest_end(m, fa);
	}
	nest_end(m, fields);
	nest_end(m, tp);
}

/* Mostly a few distinct tracepoints; sometimes many, or one twice. */
static void gen_tps(struct msg *m)
{
	struct rng *r = m->r;
	unsigned int n, i, first;
	size_t at;

	if (!nr_layouts)
		return;
	n = chance(r, 90) ? 1 + below(r, 4) : 13 + below(r, 4);
	first = below(r, nr_layouts);
	msg_feat |= 1u << F_TPS;
	at = nest_begin(m, PBTRACE_A_BUFFER_TRACEPOINTS);
	/*
	 * Many, well formed: past group_max_counters (the test's 24:
	 * tracepoints x CPUs). Not more: at NEW each costs a perf counter
	 * made and freed in a kworker (the id check), ~0.1 s under TCG.
	 */
	tp_clean = n > 12;
	if (n > nr_layouts)
		n = nr_layouts;
	for (i = 0; i < n; i++)
		gen_tp(m, tp_clean || chance(r, 97) ? (first + i) % nr_layouts : first);
	tp_clean = false;
	nest_end(m, at);
}

/* A size around the budget: mostly within, sometimes past it. */
static uint32_t member_size_kb(struct rng *r, uint32_t chunk_kb)
{
	uint32_t min = chunk_kb * nr_cpus * 2;

	if (chance(r, 60))
		return min + below(r, member_kb / 2);
	if (chance(r, 60))
		return member_kb / 2 + below(r, member_kb / 2 + 1);
	msg_feat |= 1u << F_OVER;
	return member_kb + below(r, 3 * member_kb);
}

static void gen_buffer(struct msg *m)
{
	struct rng *r = m->r;
	uint32_t chunk_kb = chance(r, 95) ? 4u << below(r, 7) : below(r, 600);
	size_t at = nest_begin(m, PBTRACE_A_BUFFER);

	if (chance(r, 97))
		put_u32(m, PBTRACE_A_BUFFER_SIZE_KB, member_kb && chance(r, 90) ?
			member_size_kb(r, chunk_kb ? chunk_kb : 16) :
			pick_size_kb(r, chunk_kb ? chunk_kb : 16));
	if (chance(r, 60))
		put_u32(m, PBTRACE_A_BUFFER_CHUNK_KB, chunk_kb);
	if (chance(r, 40))
		put_u32(m, PBTRACE_A_BUFFER_FILL_POLICY, below(r, 4));
	if (chance(r, 97))
		gen_events(m);
	if (chance(r, 15))
		gen_list(m, PBTRACE_A_BUFFER_PIDS, PBTRACE_A_PID,
			 chance(r, 90) ? 1 + below(r, 4) : below(r, 70),
			 chance(r, 95) ? 1 : 0, 40000);
	if (chance(r, 15))
		gen_list(m, PBTRACE_A_BUFFER_SYSCALLS, PBTRACE_A_SYSCALL_NR,
			 chance(r, 90) ? 1 + below(r, 8) : below(r, 520),
			 0, chance(r, 95) ? 300 : 2000);
	if (chance(r, 20))
		put(m, PBTRACE_A_BUFFER_FULL_SCHED, NULL, 0);
	if (chance(r, member_kb ? 3 : 15))	/* a member: EPERM */
		gen_machines(m);
	if (member_kb && chance(r, 10)) {	/* the 512 KiB bitmap */
		gen_list(m, PBTRACE_A_BUFFER_PIDS, PBTRACE_A_PID, 1, 1, 1);
		put(m, PBTRACE_A_BUFFER_FOLLOW_FORKS, NULL, 0);
	}
	if (member_kb && chance(r, 70))
		gen_tps(m);
	nest_end(m, at);
}

static void gen_buffers(struct msg *m)
{
	unsigned int i, n = chance(m->r, 95) ? 1 + below(m->r, 2) :
			    below(m->r, PBTRACE_MAX_BUFFERS + 3);
	size_t at = nest_begin(m, PBTRACE_A_SESSION_BUFFERS);

	for (i = 0; i < n; i++)
		gen_buffer(m);
	nest_end(m, at);
}

/* A TraceConfig as traced would send one, then (sometimes) damaged. */
static void gen_config(struct msg *m)
{
	static const unsigned char good[] = {
		0x0a, 0x04, 0x08, 0x80, 0x08, 0x20,	/* buffers { size_kb 1024 fill 0 } */
		0x12, 0x2a, 0x0a, 0x28,			/* data_sources { config { */
		0x0a, 0x0c, 'l', 'i', 'n', 'u', 'x', '.', 'f', 't', 'r', 'a', 'c', 'e',
		0xa2, 0x06, 0x14, 0x0a, 0x12,		/* ftrace_config { ftrace_events */
		's', 'c', 'h', 'e', 'd', '/', 's', 'c', 'h', 'e', 'd', '_',
		's', 'w', 'i', 't', 'c', 'h',
		0x18, 0xe8, 0x07,			/* duration_ms 1000 */
	};
	static unsigned char buf[PBTRACE_MAX_CONFIG + 8];
	struct rng *r = m->r;
	size_t len = sizeof(good), i;

	memcpy(buf, good, len);
	if (chance(r, 5)) {		/* large: at, below and above the limit */
		len = PBTRACE_MAX_CONFIG - 2 + below(r, 5);
		memset(buf + sizeof(good), 0, len - sizeof(good));
	} else if (chance(r, 5)) {
		len = 0;
	}
	for (i = chance(r, 50) ? below(r, 8) : 0; i && len; i--)
		buf[below(r, len)] ^= 1u << below(r, 8);
	if (len && chance(r, 10))
		len = below(r, len);
	put(m, PBTRACE_A_SESSION_CONFIG, buf, len);
}

static void gen_name(struct msg *m, int type)
{
	char name[80];
	unsigned int k = below(m->r, 100);

	if (k < 90) {
		snprintf(name, sizeof(name), "fz%u", below(m->r, 12));
	} else if (k < 94) {
		name[0] = '\0';
	} else {	/* the longest name there may be, and one more */
		memset(name, 'n', sizeof(name));
		name[PBTRACE_NAME_MAX - 1 + (k & 1)] = '\0';
	}
	put_str(m, type, name);
}

static void gen_contents(struct msg *m, bool need_buffers)
{
	struct rng *r = m->r;

	if (chance(r, 40))
		gen_config(m);
	if (chance(r, 30))
		put_str(m, PBTRACE_A_SESSION_OUTPUT, chance(r, 95) ? "/tmp/fz.pftrace" : "");
	if (need_buffers ? chance(r, 97) : chance(r, 60))
		gen_buffers(m);
}

/* What the fuzzer sends most: the lifecycle, weighted toward progress. */
static uint8_t pick_cmd(struct rng *r)
{
	static const uint8_t weights[][2] = {
		{ PBTRACE_CMD_NEW_SESSION, 20 }, { PBTRACE_CMD_SET_SESSION, 10 },
		{ PBTRACE_CMD_START_SESSION, 12 }, { PBTRACE_CMD_STOP_SESSION, 10 },
		{ PBTRACE_CMD_FLUSH_SESSION, 10 }, { PBTRACE_CMD_DESTROY_SESSION, 12 },
		{ PBTRACE_CMD_GET_SESSION, 12 }, { PBTRACE_CMD_TRIGGER, 3 },
		{ PBTRACE_CMD_LIST_EVENTS, 3 }, { PBTRACE_CMD_REGISTER_DAEMON, 3 },
		{ PBTRACE_CMD_GET_STATUS, 3 }, { PBTRACE_CMD_DAEMON_GONE, 1 },
		{ PBTRACE_CMD_UNSPEC, 1 }, { PBTRACE_CMD_LOAD_NAMES, 6 },
		{ PBTRACE_CMD_GET_NAMES, 2 }, { PBTRACE_CMD_GET_MACHINES, 2 },
		{ PBTRACE_CMD_GET_SESSION_MACHINES, 3 },
		{ PBTRACE_CMD_GET_WATERMARK, 3 },
	};
	/* A member's: its own sessions mostly, root's commands rarely. */
	static const uint8_t member_weights[][2] = {
		{ PBTRACE_CMD_NEW_SESSION, 25 }, { PBTRACE_CMD_SET_SESSION, 12 },
		{ PBTRACE_CMD_ADD_TRACEPOINTS, 12 },
		{ PBTRACE_CMD_START_SESSION, 12 }, { PBTRACE_CMD_STOP_SESSION, 8 },
		{ PBTRACE_CMD_FLUSH_SESSION, 4 }, { PBTRACE_CMD_DESTROY_SESSION, 16 },
		{ PBTRACE_CMD_GET_SESSION, 8 },
		{ PBTRACE_CMD_GET_SESSION_TRACEPOINTS, 3 },
		{ PBTRACE_CMD_GET_WATERMARK, 2 }, { PBTRACE_CMD_LIST_EVENTS, 1 },
		{ PBTRACE_CMD_GET_STATUS, 2 }, { PBTRACE_CMD_TRIGGER, 1 },
		{ PBTRACE_CMD_LOAD_NAMES, 1 }, { PBTRACE_CMD_REGISTER_DAEMON, 1 },
	};
	const uint8_t (*w)[2] = member_kb ? member_weights : weights;

	/* A member without a session: most of what it could send is ENOENT. */
	if (member_kb && !nr_ids && chance(r, 50))
		return PBTRACE_CMD_NEW_SESSION;
	unsigned int nr = member_kb ? sizeof(member_weights) / sizeof(member_weights[0]) :
			  sizeof(weights) / sizeof(weights[0]);
	unsigned int i, total = 0, k;

	for (i = 0; i < nr; i++)
		total += w[i][1];
	k = below(r, total);
	for (i = 0; k >= w[i][1]; i++)
		k -= w[i][1];
	return w[i][0];
}

/* Body of @cmd; returns whether the request is a dump. */
static bool gen_body(struct msg *m, uint8_t cmd)
{
	struct rng *r = m->r;

	switch (cmd) {
	case PBTRACE_CMD_NEW_SESSION:
		if (chance(r, 97))
			gen_name(m, PBTRACE_A_SESSION_NAME);
		gen_contents(m, true);
		return false;
	case PBTRACE_CMD_SET_SESSION:
		put_u32(m, PBTRACE_A_SESSION_ID, pick_set_id(r));
		if (chance(r, 10))
			gen_name(m, PBTRACE_A_SESSION_NAME);
		gen_contents(m, false);
		return false;
	case PBTRACE_CMD_GET_SESSION:
		if (chance(r, 40))
			return true;
		/* fall through */
	case PBTRACE_CMD_START_SESSION:
	case PBTRACE_CMD_STOP_SESSION:
	case PBTRACE_CMD_FLUSH_SESSION:
	case PBTRACE_CMD_DESTROY_SESSION:
	case PBTRACE_CMD_GET_WATERMARK:
		if (chance(r, 97))
			put_u32(m, PBTRACE_A_SESSION_ID, pick_id(r));
		if (cmd == PBTRACE_CMD_DESTROY_SESSION && chance(r, 20))
			put_str(m, PBTRACE_A_SESSION_ERROR, "fuzz: writing /x: No space left on device");
		return false;
	case PBTRACE_CMD_TRIGGER:
		gen_name(m, PBTRACE_A_TRIGGER_NAME);
		return false;
	case PBTRACE_CMD_LIST_EVENTS:
		return chance(r, 95);
	case PBTRACE_CMD_ADD_TRACEPOINTS:
		put_u32(m, PBTRACE_A_SESSION_ID, pick_set_id(r));
		if (chance(r, 95))
			put_u32(m, PBTRACE_A_BUFFER_INDEX, chance(r, 70) ? 0 :
				below(r, chance(r, 70) ? 2 : 8));
		gen_tps(m);
		return false;
	case PBTRACE_CMD_GET_SESSION_TRACEPOINTS:
	case PBTRACE_CMD_GET_SESSION_MACHINES:
		if (chance(r, 95))
			put_u32(m, PBTRACE_A_SESSION_ID, pick_id(r));
		return chance(r, 95);
	case PBTRACE_CMD_GET_NAMES:
	case PBTRACE_CMD_GET_MACHINES:
		return chance(r, 95);
	case PBTRACE_CMD_LOAD_NAMES:
		/* Mostly a load of one piece; else the last load's next. */
		if (chance(r, 40))
			put_u32(m, PBTRACE_A_LOAD_ID, chance(r, 90) ? load_id :
				(uint32_t)rnd(r));
		if (chance(r, 60))
			put(m, PBTRACE_A_LOAD_COMMIT, NULL, 0);
		if (chance(r, 90))
			gen_names(m);
		return false;
	default:	/* no attributes wanted: a harmless one, or any */
		if (chance(r, 30))
			put_u32(m, PBTRACE_A_SESSION_ID, pick_id(r));
		if (chance(r, 15)) {
			uint64_t junk = rnd(r);

			put(m, below(r, PBTRACE_A_MAX + 3), &junk, below(r, 9));
		}
		return false;
	}
}

/* ---- sockets ---- */

static int family;
static int mcast_group;

static int nl_open(void)
{
	int one = 1, fd, sz = 1 << 20;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return fd;
}

/* Iterates the attributes of one genetlink message. */
#define for_each_attr(a, nlh, rem) \
	for (a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN), \
	     rem = (int)(nlh)->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN; \
	     rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem; \
	     rem -= NLA_ALIGN(a->nla_len), \
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

static int resolve_family(void)
{
	static struct msg m;
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	static unsigned char buf[16384];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlattr *a;
	int fd = nl_open(), rem;
	ssize_t len;

	if (fd < 0)
		return -1;
	put_str(&m, CTRL_ATTR_FAMILY_NAME, PBTRACE_GENL_NAME);
	m.nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + m.off;
	m.nlh.nlmsg_type = GENL_ID_CTRL;
	m.nlh.nlmsg_flags = NLM_F_REQUEST;
	m.nlh.nlmsg_seq = 1;
	m.g.cmd = CTRL_CMD_GETFAMILY;
	m.g.version = 1;
	if (sendto(fd, &m, m.nlh.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k)) < 0)
		goto out;
	len = recv(fd, buf, sizeof(buf), 0);
	if (len <= 0 || !NLMSG_OK(nlh, len) || nlh->nlmsg_type != GENL_ID_CTRL)
		goto out;
	for_each_attr(a, nlh, rem) {
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
			family = *(uint16_t *)((char *)a + NLA_HDRLEN);
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GROUPS)
			genl_group_id(a, PBTRACE_MCGRP_SESSIONS, &mcast_group);
	}
out:
	close(fd);
	return family ? 0 : -1;
}

/* ---- replies ---- */

static unsigned char rbuf[1 << 20];

/* A NEW_SESSION reply's id, for later commands; LIST_EVENTS' names. */
static void note_reply(struct nlmsghdr *nlh)
{
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct nlattr *a, *name = NULL;
	int rem;
	bool avail = false;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return;
	for_each_attr(a, nlh, rem) {
		if ((g->cmd == PBTRACE_CMD_NEW_SESSION ||
		     g->cmd == PBTRACE_CMD_GET_SESSION) &&
		    a->nla_type == PBTRACE_A_SESSION_ID && a->nla_len == NLA_HDRLEN + 4)
			add_id(*(uint32_t *)((char *)a + NLA_HDRLEN));
		if (g->cmd == PBTRACE_CMD_LOAD_NAMES &&
		    a->nla_type == PBTRACE_A_LOAD_ID && a->nla_len == NLA_HDRLEN + 4)
			load_id = *(uint32_t *)((char *)a + NLA_HDRLEN);
		if (g->cmd == PBTRACE_CMD_NEW_SESSION &&
		    a->nla_type == PBTRACE_A_SESSION_ID && a->nla_len == NLA_HDRLEN + 4) {
			pthread_mutex_lock(&ids_lock);
			newest_id = *(uint32_t *)((char *)a + NLA_HDRLEN);
			pthread_mutex_unlock(&ids_lock);
		}
		if (a->nla_type == PBTRACE_A_EVENT_NAME)
			name = a;
		if (a->nla_type == PBTRACE_A_EVENT_AVAILABLE)
			avail = *((char *)a + NLA_HDRLEN);
	}
	if (g->cmd == PBTRACE_CMD_LIST_EVENTS && name && avail &&
	    nr_events < 64 && name->nla_len - NLA_HDRLEN < PBTRACE_NAME_MAX)
		snprintf(events[nr_events++], PBTRACE_NAME_MAX, "%s",
			 (char *)name + NLA_HDRLEN);
}

static int last_error;

/* The kernel's reasons (extack messages), counted, for the report. */
#define NR_REASONS 48
static struct { char msg[72]; unsigned long n; } reasons[NR_REASONS];

static void count_reason(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	const struct nlattr *a = (const void *)((const char *)e + sizeof(*e));
	int rem = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(*e);
	char msg[72];
	unsigned int i;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || !e->error)
		return;
	for (; rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
	     rem -= NLA_ALIGN(a->nla_len),
	     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len))) {
		if (a->nla_type != NLMSGERR_ATTR_MSG)
			continue;
		snprintf(msg, sizeof(msg), "%d %.*s", -e->error,
			 (int)(a->nla_len - NLA_HDRLEN), (const char *)a + NLA_HDRLEN);
		for (i = 0; i < NR_REASONS && reasons[i].n; i++)
			if (!strcmp(reasons[i].msg, msg))
				break;
		if (i == NR_REASONS)
			return;
		if (!reasons[i].n)
			memcpy(reasons[i].msg, msg, sizeof(msg));
		reasons[i].n++;
	}
}
static const unsigned int *reply_feat;	/* nl_step's requests' features */

static void count_error(int cmd, int error)
{
	last_error = -error;
	if (!error) {
		cmds[cmd].ok++;
		return;
	}
	cmds[cmd].err++;
	if (-error > 0 && -error < 256)
		errnos[-error]++;
}

/*
 * Reads what the kernel answered to the requests seq0..seq1 on @fd. A
 * doit is answered inside sendmsg, so its ack is queued by now; a dump
 * continues as we read. Requests whose header the kernel dropped get
 * nothing: the wait for them is short.
 */
static void read_replies(int fd, const uint8_t *cmd, uint32_t seq0,
			 uint32_t seq1, bool dump)
{
	bool answered[8] = { false };
	int tries = 0;

	while (tries < 3) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct nlmsghdr *nlh;
		ssize_t len;
		bool all = true;
		uint32_t s;

		for (s = seq0; s <= seq1; s++)
			all &= answered[s - seq0];
		if (all)
			return;
		len = recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT);
		if (len < 0 && errno == ENOBUFS)
			continue;	/* notifications overran: fine */
		if (len < 0) {
			tries++;
			poll(&p, 1, dump ? 200 : 20);
			continue;
		}
		for (nlh = (struct nlmsghdr *)rbuf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			s = nlh->nlmsg_seq;
			if (!s && !nlh->nlmsg_pid) {
				notifications++;
				continue;
			}
			if (s < seq0 || s > seq1)
				continue;	/* late parts of an earlier dump */
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nlh);

				count_error(cmd[s - seq0], e->error);
				count_reason(nlh);
				answered[s - seq0] = true;
				for (int b = 0; reply_feat && !e->error && b < NR_FEAT; b++)
					feat_ok[b] += (reply_feat[s - seq0] >> b) & 1;
			} else if (nlh->nlmsg_type == NLMSG_DONE) {
				int *err = NLMSG_DATA(nlh);

				count_error(cmd[s - seq0],
					    nlh->nlmsg_len >= NLMSG_LENGTH(4) ? *err : 0);
				answered[s - seq0] = true;
			} else {
				if (nlh->nlmsg_flags & NLM_F_MULTI)
					cmds[cmd[s - seq0]].dump_msgs++;
				note_reply(nlh);
			}
		}
	}
	for (uint32_t s = seq0; s <= seq1; s++)
		if (!answered[s - seq0])
			cmds[cmd[s - seq0]].noreply++;
}

static double now(void);

/* ---- the netlink side ---- */

struct nl_state {
	int fd[NR_SOCKS];
	uint32_t seq[NR_SOCKS];
	struct rng r;
	struct msg *m;
	unsigned char *batch;
};

/* One request into st->batch at @at; returns its length. */
static size_t build_one(struct nl_state *st, int sock, uint8_t *cmdp,
			bool *dump, size_t at, unsigned int *feat)
{
	struct msg *m = st->m;
	struct rng *r = &st->r;
	uint8_t cmd = pick_cmd(r);
	size_t len;

	m->off = 0;
	m->r = r;
	m->mut = chance(r, 70) ? 0 : 1 + below(r, 25);
	if (m->mut)
		mutated++;
	if (chance(r, 2))
		cmd = below(r, NR_CMDS);
	msg_feat = 0;
	*dump = gen_body(m, cmd);
	/* Past the budget counts where nothing else may refuse it. */
	if (m->mut)
		msg_feat &= ~(1u << F_OVER);
	*feat = msg_feat;
	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + m->off;
	m->nlh.nlmsg_type = family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (*dump ? NLM_F_DUMP : 0);
	m->nlh.nlmsg_seq = ++st->seq[sock];
	m->nlh.nlmsg_pid = 0;
	m->g.cmd = cmd;
	m->g.version = chance(r, 98) ? PBTRACE_GENL_VERSION : below(r, 256);
	m->g.reserved = chance(r, 98) ? 0 : below(r, 65536);
	if (m->mut && chance(r, 10))	/* a dump asked of a doit, or not */
		m->nlh.nlmsg_flags ^= NLM_F_DUMP, *dump = !*dump;
	if (m->mut && chance(r, 5))	/* the length lies */
		m->nlh.nlmsg_len = below(r, m->nlh.nlmsg_len + 32);
	len = NLMSG_ALIGN(NLMSG_HDRLEN + GENL_HDRLEN + m->off);
	memcpy(st->batch + at, m, len);
	*cmdp = cmd;
	return len;
}

/*
 * A dump of @cmd with no attribute on socket 0, its replies read; -1 if
 * it could not be sent.
 */
static int dump_all(struct nl_state *st, uint8_t cmd)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct msg *m = st->m;

	m->off = 0;
	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->nlh.nlmsg_type = family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP;
	m->nlh.nlmsg_seq = ++st->seq[0];
	m->g.cmd = cmd;
	m->g.version = PBTRACE_GENL_VERSION;
	m->g.reserved = 0;
	if (sendto(st->fd[0], m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k)) < 0)
		return -1;
	read_replies(st->fd[0], &cmd, st->seq[0], st->seq[0], true);
	return 0;
}

/*
 * A member's ids: its own live sessions, from a GET_SESSION dump (a
 * member's lists only its own), so that most requests name one; not
 * counted.
 */
static void refresh_ids(struct nl_state *st)
{
	struct cmd_count saved = cmds[PBTRACE_CMD_GET_SESSION];

	if (st->fd[0] < 0)
		return;
	pthread_mutex_lock(&ids_lock);
	nr_ids = 0;
	pthread_mutex_unlock(&ids_lock);
	dump_all(st, PBTRACE_CMD_GET_SESSION);
	cmds[PBTRACE_CMD_GET_SESSION] = saved;
}

static void nl_step(struct nl_state *st)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct rng *r = &st->r;
	int sock = below(r, NR_SOCKS);
	unsigned int n = chance(r, 5) ? 2 + below(r, 6) : 1, i;
	uint8_t cmd[8];
	unsigned int feat[8], b;
	size_t len = 0;
	bool dump = false, d;
	uint32_t seq0;
	double t0, ms;

	if (chance(r, 2) || st->fd[sock] < 0) {	/* the socket closes */
		if (st->fd[sock] >= 0)
			close(st->fd[sock]);
		st->fd[sock] = nl_open();
		if (st->fd[sock] >= 0 && mcast_group && chance(r, 50))
			setsockopt(st->fd[sock], SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				   &mcast_group, sizeof(mcast_group));
		if (st->fd[sock] < 0)
			return;
	}
	if (member_kb && chance(r, 10))
		refresh_ids(st);
	seq0 = st->seq[sock] + 1;
	for (i = 0; i < n; i++) {
		len += build_one(st, sock, &cmd[i], &d, len, &feat[i]);
		dump |= d;
		cmds[cmd[i]].sent++;
	}
	if (chance(r, 2))	/* garbage after the last message */
		for (i = below(r, 24); i; i--)
			st->batch[len++] = rnd(r);
	t0 = now();
	if (sendto(st->fd[sock], st->batch, len, 0, (struct sockaddr *)&k,
		   sizeof(k)) < 0) {
		sends_failed++;
		for (i = 0; i < n; i++)
			cmds[cmd[i]].sent--;
		return;
	}
	/* A doit (and a dump's first part) runs inside sendmsg. */
	ms = (now() - t0) * 1000;
	if (n == 1 && ms > cmds[cmd[0]].max_ms)
		cmds[cmd[0]].max_ms = ms;
	for (i = 0; i < n; i++)
		for (b = 0; b < NR_FEAT; b++)
			feat_sent[b] += (feat[i] >> b) & 1;
	reply_feat = feat;
	read_replies(st->fd[sock], cmd, seq0, seq0 + n - 1, dump);
	reply_feat = NULL;
}

/* ---- the /dev/pbtrace side ---- */

struct dev_fd {
	int fd;
	uint64_t mmap_size;
	void *map;
	size_t map_len;
	bool whole;		/* the whole buffer, from offset 0 */
	uint32_t held[8];
	unsigned int nr_held;
};

static void bad(const char *fmt, uint64_t a, uint64_t b)
{
	dev_bad++;
	snprintf(dev_bad_why, sizeof(dev_bad_why), fmt, (unsigned long long)a,
		 (unsigned long long)b);
}

/*
 * Mappings kept after their fd closed: the mapping holds the file, so its
 * pages must stay the buffer's (header intact) through DESTROY, until
 * munmap. Pages freed under it would show as a changed header.
 */
#define NR_ORPHANS 8
static struct { void *p; size_t len; } orphans[NR_ORPHANS];

static void check_orphan(unsigned int i, bool unmap)
{
	const struct pbtrace_mmap_header *h = orphans[i].p;

	if (!h)
		return;
	if (h->magic != PBTRACE_MMAP_MAGIC || h->mmap_size != orphans[i].len)
		bad("a mapping whose fd closed changed: magic %#llx mmap_size %llu",
		    h->magic, h->mmap_size);
	if (unmap) {
		munmap(orphans[i].p, orphans[i].len);
		orphans[i].p = NULL;
	}
}

static bool dev_close(struct dev_fd *d, bool keep_map)
{
	unsigned int i = d->map ? d->map_len % NR_ORPHANS : 0;
	bool kept = false;

	/* Only a whole mapping at offset 0 has a header to check. */
	if (keep_map && d->map && d->whole) {
		check_orphan(i, true);
		orphans[i].p = d->map;
		orphans[i].len = d->map_len;
		d->map = NULL;
		kept = true;
	}
	if (d->map)
		munmap(d->map, d->map_len);
	if (d->fd >= 0)
		close(d->fd);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	return kept;
}

static bool dev_mmap(struct dev_fd *d, struct rng *r)
{
	size_t len = d->mmap_size ? d->mmap_size : 4096;
	off_t off = 0;
	void *p;

	if (chance(r, 10))
		len = chance(r, 50) ? len + 4096 : 4096 * (1 + below(r, 4));
	if (chance(r, 5))
		off = 4096;
	if (chance(r, 10)) {	/* writable: the ABI says never */
		dev_tried[DEV_mmap_write]++;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, off);
		if (p != MAP_FAILED) {
			bad("writable mapping granted (len %llu off %llu)", len, off);
			munmap(p, len);
		} else {
			dev_ok[DEV_mmap_write]++;
		}
		return false;
	}
	if (d->map)
		return false;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, d->fd, off);
	if (p == MAP_FAILED)
		return false;
	d->map = p;
	d->map_len = len;
	d->whole = !off && len == d->mmap_size;
	if (!off && len <= d->mmap_size) {
		const struct pbtrace_mmap_header *h = p;

		if (h->magic != PBTRACE_MMAP_MAGIC || h->mmap_size != d->mmap_size)
			bad("mapping header: magic %#llx mmap_size %llu", h->magic,
			    h->mmap_size);
		/* Touch a random page: every one must be backed. */
		(void)*(volatile char *)((char *)p + (below(r, len / 4096) * 4096));
	}
	return true;
}

static bool dev_get(struct dev_fd *d)
{
	struct pbtrace_chunk_req req;

	if (ioctl(d->fd, PBTRACE_IOC_GET_CHUNK, &req))
		return false;
	if (d->mmap_size && (req.offset + req.len > d->mmap_size))
		bad("chunk past the mapping: offset+len %llu, mmap_size %llu",
		    req.offset + req.len, d->mmap_size);
	if (d->map && req.offset + req.len <= d->map_len && req.len)
		(void)*(volatile char *)((char *)d->map + req.offset + req.len - 1);
	if (d->nr_held < 8)
		d->held[d->nr_held++] = req.index;
	return true;
}

static bool dev_put(struct dev_fd *d, struct rng *r)
{
	struct pbtrace_chunk_req req = { .index = below(r, 100000) };
	unsigned int i = 0;

	if (d->nr_held && chance(r, 90)) {
		i = below(r, d->nr_held);
		req.index = d->held[i];
	}
	if (ioctl(d->fd, PBTRACE_IOC_PUT_CHUNK, &req))
		return false;
	if (d->nr_held && req.index == d->held[i])
		d->held[i] = d->held[--d->nr_held];
	return true;
}

static bool dev_read_remote(struct dev_fd *d, struct rng *r)
{
	static char *buf;
	struct pbtrace_remote_read rr = { .size = PBTRACE_REMOTE_READ_MIN };
	int ret;

	if (!buf)
		buf = malloc(PBTRACE_REMOTE_READ_MIN);
	rr.buf = (uintptr_t)buf;
	if (chance(r, 10))
		rr.size = below(r, PBTRACE_REMOTE_READ_MIN);
	if (chance(r, 5))
		rr.buf = chance(r, 50) ? 0 : 0xffffffffffff0000ull;
	ret = ioctl(d->fd, PBTRACE_IOC_READ_REMOTE, &rr);
	if (!ret && rr.len > rr.size)
		bad("READ_REMOTE len %llu above size %llu", rr.len, rr.size);
	if (!ret)
		remote_bytes += rr.len;
	return !ret || errno == EAGAIN;
}

static bool dev_attach(struct dev_fd *d, struct rng *r)
{
	struct pbtrace_attach at = {
		.session_id = pick_set_id(r),
		.buffer = chance(r, 90) ? below(r, 2) : below(r, 8) + ((uint32_t)chance(r, 5) << 31),
	};

	if (ioctl(d->fd, PBTRACE_IOC_ATTACH, chance(r, 3) ? NULL : &at))
		return false;
	d->mmap_size = at.mmap_size;
	return true;
}

static void dev_step(struct dev_fd *fds, struct rng *r)
{
	struct dev_fd *d = &fds[below(r, NR_FDS)];
	struct pollfd p;
	unsigned int op = below(r, 100);
	int k;
	bool ok = false;

	if (d->fd < 0) {
		dev_tried[DEV_open]++;
		d->fd = open("/dev/pbtrace", O_RDONLY | O_CLOEXEC);
		dev_ok[DEV_open] += d->fd >= 0;
		return;
	}
	if (op < 15) {
		k = DEV_attach, ok = dev_attach(d, r);
	} else if (op < 30) {
		k = DEV_mmap, ok = dev_mmap(d, r);
	} else if (op < 55) {
		k = DEV_get_chunk, ok = dev_get(d);
	} else if (op < 75) {
		k = DEV_put_chunk, ok = dev_put(d, r);
	} else if (op < 82) {
		k = DEV_read_remote, ok = dev_read_remote(d, r);
	} else if (op < 90) {
		p = (struct pollfd){ .fd = d->fd, .events = POLLIN };
		k = DEV_poll, ok = poll(&p, 1, 0) >= 0;
	} else if (op < 94) {
		unsigned long c = _IOC(below(r, 4), PBTRACE_IOC_MAGIC, below(r, 8), below(r, 64));

		k = DEV_bad_ioctl;
		ok = ioctl(d->fd, chance(r, 50) ? c : (unsigned long)rnd(r), NULL) < 0;
	} else if (op < 97) {
		k = DEV_close, ok = true;
		dev_close(d, false);
	} else {
		k = DEV_orphan, ok = dev_close(d, true);
		check_orphan(below(r, NR_ORPHANS), chance(r, 30));
	}
	dev_tried[k]++;
	dev_ok[k] += ok;
}

static void *dev_thread(void *arg)
{
	struct rng r = { *(uint64_t *)arg ^ 0x9e3779b97f4a7c15ull };
	struct dev_fd fds[NR_FDS];
	int i;

	for (i = 0; i < NR_FDS; i++) {
		memset(&fds[i], 0, sizeof(fds[i]));
		fds[i].fd = -1;
	}
	while (!stop_dev)
		dev_step(fds, &r);
	for (i = 0; i < NR_FDS; i++)
		dev_close(&fds[i], false);
	for (i = 0; i < NR_ORPHANS; i++)
		check_orphan(i, true);
	return NULL;
}

/* ---- main ---- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *cmd_name(int c)
{
	/* Indexed by the uapi's enum, so a command added there cannot shift them. */
#define N(c) [PBTRACE_CMD_##c] = #c
	static const char *const names[] = {
		N(UNSPEC), N(NEW_SESSION), N(START_SESSION), N(STOP_SESSION),
		N(FLUSH_SESSION), N(DESTROY_SESSION), N(GET_SESSION), N(TRIGGER),
		N(LIST_EVENTS), N(REGISTER_DAEMON), N(DAEMON_GONE), N(GET_STATUS),
		N(SET_SESSION), N(GET_CPU_STATS), N(GET_WATERMARK),
		N(GET_SESSION_MACHINES), N(GET_MACHINES), N(GET_NAMES), N(LOAD_NAMES),
		N(ADD_TRACEPOINTS), N(GET_SESSION_TRACEPOINTS),
	};
#undef N

	return c >= 0 && c < (int)(sizeof(names) / sizeof(names[0])) ? names[c] : NULL;
}

static void report(double secs, unsigned long steps)
{
	unsigned long sent = 0, ok = 0, err = 0, noreply = 0, other = 0, other_ok = 0;
	int c, e;

	for (c = 0; c < NR_CMDS; c++) {
		sent += cmds[c].sent;
		ok += cmds[c].ok;
		err += cmds[c].err;
		noreply += cmds[c].noreply;
		if (!cmd_name(c)) {
			other += cmds[c].sent;
			other_ok += cmds[c].ok;
			continue;
		}
		printf("cmd %s sent %lu ok %lu err %lu noreply %lu dump_msgs %lu max_ms %.0f\n",
		       cmd_name(c), cmds[c].sent, cmds[c].ok, cmds[c].err,
		       cmds[c].noreply, cmds[c].dump_msgs, cmds[c].max_ms);
	}
	printf("cmd OTHER sent %lu ok %lu\n", other, other_ok);
	for (e = 1; e < 256; e++)
		if (errnos[e])
			printf("errno %s %lu\n", strerror(e), errnos[e]);
	for (c = 0; c < NR_DEV; c++)
		printf("dev %s tried %lu ok %lu\n", dev_names[c], dev_tried[c], dev_ok[c]);
	for (c = 0; member_kb && c < NR_FEAT; c++)
		printf("feat %s sent %lu ok %lu\n", feat_names[c], feat_sent[c], feat_ok[c]);
	printf("refused_EPERM %lu\nrefused_E2BIG %lu\nrefused_ENOMEM %lu\n"
	       "refused_ENOSPC %lu\nrefused_EINVAL %lu\nlayouts %u\n",
	       errnos[EPERM], errnos[E2BIG], errnos[ENOMEM], errnos[ENOSPC],
	       errnos[EINVAL], nr_layouts);
	printf("secs %.1f\nsteps %lu\nsent %lu\nok %lu\nerr %lu\nnoreply %lu\n"
	       "mutated %lu\nnotifications %lu\nsends_failed %lu\nevents_known %u\n"
	       "dev_bad %lu\nremote_bytes %lu\n", secs, steps, sent, ok, err,
	       noreply, mutated, notifications, sends_failed, nr_events, dev_bad,
	       remote_bytes);
	if (dev_bad)
		printf("dev_bad_last %s\n", dev_bad_why);
	for (c = 0; member_kb && c < NR_REASONS && reasons[c].n; c++)
		printf("reason %lu errno %s\n", reasons[c].n, reasons[c].msg);
}

/* The known events, from LIST_EVENTS, so most buffers name real ones. */
static void learn_events(struct nl_state *st)
{
	dump_all(st, PBTRACE_CMD_LIST_EVENTS);
	memset(cmds, 0, sizeof(cmds));
}

/*
 * --new SIZE_KB NR_BUFFERS: one well-formed NEW_SESSION; prints
 * "new_errno N" (0 on success) and "new_id ID".
 */
static int new_session(struct nl_state *st, uint32_t size_kb, unsigned int nr)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct msg *m = st->m;
	uint8_t cmd = PBTRACE_CMD_NEW_SESSION;
	size_t bufs, buf, evs;
	char name[32];
	unsigned int i;

	snprintf(name, sizeof(name), "big%d", getpid());
	m->off = 0;
	m->mut = 0;
	put_str(m, PBTRACE_A_SESSION_NAME, name);
	bufs = nest_begin(m, PBTRACE_A_SESSION_BUFFERS);
	for (i = 0; i < nr; i++) {
		buf = nest_begin(m, PBTRACE_A_BUFFER);
		put_u32(m, PBTRACE_A_BUFFER_SIZE_KB, size_kb);
		evs = nest_begin(m, PBTRACE_A_BUFFER_EVENTS);
		put_str(m, PBTRACE_A_EVENT_NAME, "sched/sched_switch");
		nest_end(m, evs);
		nest_end(m, buf);
	}
	nest_end(m, bufs);
	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + m->off;
	m->nlh.nlmsg_type = family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->nlh.nlmsg_seq = ++st->seq[0];
	m->g.cmd = cmd;
	m->g.version = PBTRACE_GENL_VERSION;
	nr_ids = 0;
	if (sendto(st->fd[0], m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&k,
		   sizeof(k)) < 0)
		return -errno;
	read_replies(st->fd[0], &cmd, st->seq[0], st->seq[0], false);
	printf("new_errno %d\nnew_id %u\n", cmds[cmd].ok ? 0 : last_error,
	       nr_ids ? ids[0] : 0);
	return cmds[cmd].ok ? 0 : -1;
}

/* Destroys every session a dump lists; returns how many a new dump lists. */
static int cleanup(struct nl_state *st)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct msg *m = st->m;
	uint8_t cmd = PBTRACE_CMD_GET_SESSION;
	unsigned int i, pass;

	for (pass = 0; pass < 2; pass++) {
		nr_ids = 0;
		/* Session ids come back in GET_SESSION's dump: note them. */
		memset(cmds, 0, sizeof(cmds));
		if (dump_all(st, cmd) < 0)
			return -1;
		if (cmds[cmd].ok != 1)
			return -1;
		if (pass)
			return cmds[cmd].dump_msgs;
		printf("sessions_found %lu\n", cmds[cmd].dump_msgs);
		for (i = 0; i < nr_ids; i++) {
			uint8_t c = PBTRACE_CMD_DESTROY_SESSION;

			m->off = 0;
			m->mut = 0;
			put_u32(m, PBTRACE_A_SESSION_ID, ids[i]);
			m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + m->off;
			m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
			m->nlh.nlmsg_seq = ++st->seq[0];
			m->g.cmd = c;
			if (sendto(st->fd[0], m, m->nlh.nlmsg_len, 0,
				   (struct sockaddr *)&k, sizeof(k)) < 0)
				return -1;
			read_replies(st->fd[0], &c, st->seq[0], st->seq[0], false);
		}
		printf("sessions_destroyed %lu\n", cmds[PBTRACE_CMD_DESTROY_SESSION].ok);
	}
	return -1;
}

/* An empty names table again (one committed load of nothing); 0 if so. */
static int clear_names(struct nl_state *st)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct msg *m = st->m;
	uint8_t cmd = PBTRACE_CMD_LOAD_NAMES;

	m->off = 0;
	m->mut = 0;
	put(m, PBTRACE_A_LOAD_COMMIT, NULL, 0);
	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + m->off;
	m->nlh.nlmsg_type = family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->nlh.nlmsg_seq = ++st->seq[0];
	m->g.cmd = cmd;
	m->g.version = PBTRACE_GENL_VERSION;
	memset(cmds, 0, sizeof(cmds));
	if (sendto(st->fd[0], m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&k,
		   sizeof(k)) < 0)
		return -1;
	read_replies(st->fd[0], &cmd, st->seq[0], st->seq[0], false);
	return cmds[cmd].ok == 1 ? 0 : -1;
}

/*
 * ---- the referee's side of a member run (root, while the member fuzzes) ----
 *
 * The module's own count of what the member holds (group_usage, root's)
 * and the kernel's MemAvailable, sampled as often as the machine lets;
 * and a heartbeat per CPU: the largest gap between two wakeups of a
 * thread sleeping 2 ms there (a diagnostic: the machine is shared).
 */
static volatile bool stop_hb;
static double hb_gap[256];

static void *heartbeat(void *arg)
{
	long cpu = (long)arg;
	struct timespec ts = { 0, 2000000 };
	cpu_set_t set;
	double t0, gap;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!stop_hb) {
		t0 = now();
		nanosleep(&ts, NULL);
		gap = (now() - t0) * 1000 - 2;
		if (gap > hb_gap[cpu])
			hb_gap[cpu] = gap;
	}
	return NULL;
}

static long read_file(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static long avail_kb(int fd)
{
	char buf[4096], *p;

	if (read_file(fd, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "MemAvailable:");
	return p ? strtol(p + 13, NULL, 10) : -1;
}

static int watch_member(pid_t child, unsigned int uid)
{
	unsigned long samples = 0, max_bytes = 0, max_sessions = 0, max_counters = 0;
	int ufd = open("/sys/module/pbtrace/parameters/group_usage", O_RDONLY);
	int mfd = open("/proc/meminfo", O_RDONLY);
	struct timespec ts = { 0, 2000000 };
	long a0 = avail_kb(mfd), amin = a0, a;
	pthread_t hb[256];
	char buf[4096];
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int status = 0;

	if (ufd < 0 || mfd < 0) {
		perror("nl_fuzz: group_usage or meminfo");
		return 1;
	}
	if (ncpu > 256)
		ncpu = 256;
	for (cpu = 0; cpu < ncpu; cpu++)
		pthread_create(&hb[cpu], NULL, heartbeat, (void *)cpu);
	while (waitpid(child, &status, WNOHANG) == 0) {
		char *line;
		unsigned int u, n, c;
		unsigned long long b;

		read_file(ufd, buf, sizeof(buf));
		for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			if (sscanf(line, "uid %u sessions %u bytes %llu counters %u", &u, &n, &b, &c) != 4 ||
			    u != uid)
				continue;
			if (b > max_bytes)
				max_bytes = b;
			if (n > max_sessions)
				max_sessions = n;
			if (c > max_counters)
				max_counters = c;
		}
		a = avail_kb(mfd);
		if (a >= 0 && a < amin)
			amin = a;
		samples++;
		nanosleep(&ts, NULL);
	}
	stop_hb = true;
	for (cpu = 0; cpu < ncpu; cpu++)
		pthread_join(hb[cpu], NULL);
	fflush(stdout);
	printf("samples %lu\nusage_max_bytes %lu\nusage_max_sessions %lu\n"
	       "usage_max_counters %lu\navail_start_kb %ld\navail_min_kb %ld\n",
	       samples, max_bytes, max_sessions, max_counters, a0, amin);
	for (cpu = 0; cpu < ncpu; cpu++)
		printf("heartbeat_cpu%ld_max_gap_ms %.1f\n", cpu, hb_gap[cpu]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	static struct nl_state st;
	uint64_t seed = 0;
	double secs = 60, t0;
	unsigned long steps = 0, max_steps = 0;
	bool threads = true, do_cleanup = false;
	uint32_t new_kb = 0;
	int uid = -1, gid = -1;
	int new_nr = 0;
	pthread_t dev;
	int i;

	if (getenv("PBTRACE_FUZZ_SECS"))
		secs = atof(getenv("PBTRACE_FUZZ_SECS"));
	if (getenv("PBTRACE_FUZZ_MACHINE"))
		relay_machine = getenv("PBTRACE_FUZZ_MACHINE");
	if (getenv("PBTRACE_FUZZ_SEED"))
		seed = strtoull(getenv("PBTRACE_FUZZ_SEED"), NULL, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "-1"))
			threads = false;
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			max_steps = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-u") && i + 1 < argc)
			uid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-g") && i + 1 < argc)
			gid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-m") && i + 1 < argc)
			member_kb = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--cleanup"))
			do_cleanup = true;
		else if (!strcmp(argv[i], "--new") && i + 2 < argc)
			new_kb = strtoul(argv[i + 1], NULL, 0), new_nr = atoi(argv[i + 2]), i += 2;
		else {
			fprintf(stderr, "usage: nl_fuzz [-s SEED] [-t SECS] [-n STEPS] [-1] [-u UID [-g GID] [-m BUDGET_KB]] | --cleanup | --new SIZE_KB NR_BUFFERS\n");
			return 2;
		}
	}
	/*
	 * A member run: the layouts while still root; then root watches
	 * (watch_member) while a child fuzzes as the member. /dev/pbtrace is
	 * root's (0600): no device thread.
	 */
	if (member_kb) {
		gid_t g = gid;
		pid_t child;

		if (uid < 0 || gid < 0) {
			fprintf(stderr, "nl_fuzz: -m needs -u UID -g GID\n");
			return 2;
		}
		load_layouts();
		threads = false;
		fflush(stdout);
		child = fork();
		if (child < 0)
			return 1;
		if (child)
			return watch_member(child, uid);
		if (setgroups(1, &g) || setgid(uid) || setuid(uid)) {
			perror("nl_fuzz: becoming the member");
			return 1;
		}
	}
	/* Before any socket: a socket keeps its opener's credentials. */
	if (!member_kb && uid >= 0 &&
	    (setgroups(gid >= 0, (gid_t[]){ gid }) || setgid(uid) || setuid(uid))) {
		perror("nl_fuzz: dropping privileges");
		return 1;
	}
	if (!seed)
		seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	st.r.s = seed;
	st.m = calloc(1, sizeof(*st.m));
	st.batch = malloc(8 * (sizeof(*st.m) + 64));
	if (!st.m || !st.batch)
		return 1;
	if (resolve_family()) {
		fprintf(stderr, "nl_fuzz: no \"%s\" generic netlink family: is pbtrace.ko loaded?\n",
			PBTRACE_GENL_NAME);
		return 1;
	}
	for (i = 0; i < NR_SOCKS; i++)
		st.fd[i] = nl_open();
	if (st.fd[0] < 0) {
		perror("nl_fuzz: netlink socket");
		return 1;
	}
	if (new_nr)
		return new_session(&st, new_kb, new_nr) ? 1 : 0;
	if (do_cleanup) {
		printf("names_cleared %d\n", clear_names(&st) == 0);
		i = cleanup(&st);
		printf("sessions_left %d\n", i);
		return i == 0 ? 0 : 1;
	}
	printf("seed %llu\n", (unsigned long long)seed);
	fflush(stdout);
	learn_events(&st);
	nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	if (threads && pthread_create(&dev, NULL, dev_thread, &seed))
		return 1;
	t0 = now();
	while (now() - t0 < secs && (!max_steps || steps < max_steps)) {
		nl_step(&st);
		steps++;
	}
	stop_dev = true;
	if (threads)
		pthread_join(dev, NULL);
	for (i = 0; i < NR_SOCKS; i++)
		if (st.fd[i] >= 0)
			close(st.fd[i]);
	report(now() - t0, steps);
	if (member_kb) {	/* the member destroys its own sessions */
		fflush(stdout);
		st.fd[0] = nl_open();
		i = cleanup(&st);
		printf("member_sessions_left %d\n", i);
	}
	return 0;
}
