// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kmod/core/filter.[ch], ftrace's filter expressions compiled
 * against a tracepoint's layout and run on its records. On the host under
 * ASan/UBSan, TAP on stdout.
 *
 *  - real layouts (6.1's tracefs format files of sched/sched_switch,
 *    signal/signal_generate, sched/sched_process_exec): the expressions of
 *    the issue and of Documentation/trace/events.rst keep the records they
 *    should;
 *  - every operator on every integer size and signedness, constants in
 *    decimal, hex, octal and negative, cut to the field's size as ftrace;
 *  - strings in char[N], __data_loc and __rel_loc fields: ==, != and ~
 *    with ftrace's glob kinds, its '!' and leading-digit rules;
 *  - bad expressions: the byte position and the message;
 *  - fields outside the record (short records, __data_loc past the end)
 *    compare false;
 *  - differential: 20000 random expressions (&&, ||, !, parentheses, every
 *    operator) against a direct evaluation of the same tree, with
 *    fnmatch(3) as the referee of globs, on random records;
 *  - the verifier refuses programs with a backward or out-of-range jump,
 *    a field index out of range, an op that does not fit its field, an
 *    unterminated string; randomly corrupted programs either fail it or
 *    run safely.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "filter.h"
#include "tap.h"

/* ---- layouts ---------------------------------------------------------- */

static void add(struct pbt_tp_layout *l, const char *name, int off, int size,
		int kind, int is_signed)
{
	struct pbt_tpf *f = &l->fields[l->nr_fields++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	f->offset = off;
	f->size = size;
	f->kind = kind;
	f->is_signed = is_signed;
}

static void common(struct pbt_tp_layout *l, const char *g, const char *n)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->group, sizeof(l->group), "%s", g);
	snprintf(l->name, sizeof(l->name), "%s", n);
	add(l, "common_type", 0, 2, PBTRACE_TPF_INT, 0);
	add(l, "common_flags", 2, 1, PBTRACE_TPF_INT, 0);
	add(l, "common_preempt_count", 3, 1, PBTRACE_TPF_INT, 0);
	add(l, "common_pid", 4, 4, PBTRACE_TPF_INT, 1);
}

static struct pbt_tp_layout sw, sig, exec_l, all, tiny;

static void layouts(void)
{
	common(&sw, "sched", "sched_switch");
	add(&sw, "prev_comm", 8, 16, PBTRACE_TPF_CHARS, 0);
	add(&sw, "prev_pid", 24, 4, PBTRACE_TPF_INT, 1);
	add(&sw, "prev_prio", 28, 4, PBTRACE_TPF_INT, 1);
	add(&sw, "prev_state", 32, 8, PBTRACE_TPF_INT, 1);
	add(&sw, "next_comm", 40, 16, PBTRACE_TPF_CHARS, 0);
	add(&sw, "next_pid", 56, 4, PBTRACE_TPF_INT, 1);
	add(&sw, "next_prio", 60, 4, PBTRACE_TPF_INT, 1);

	common(&sig, "signal", "signal_generate");
	add(&sig, "sig", 8, 4, PBTRACE_TPF_INT, 1);
	add(&sig, "errno", 12, 4, PBTRACE_TPF_INT, 1);
	add(&sig, "code", 16, 4, PBTRACE_TPF_INT, 1);
	add(&sig, "comm", 20, 16, PBTRACE_TPF_CHARS, 0);
	add(&sig, "pid", 36, 4, PBTRACE_TPF_INT, 1);
	add(&sig, "group", 40, 4, PBTRACE_TPF_INT, 1);
	add(&sig, "result", 44, 4, PBTRACE_TPF_INT, 1);

	common(&exec_l, "sched", "sched_process_exec");
	add(&exec_l, "filename", 8, 4, PBTRACE_TPF_DATA_LOC_STR, 0);
	add(&exec_l, "pid", 12, 4, PBTRACE_TPF_INT, 1);
	add(&exec_l, "old_pid", 16, 4, PBTRACE_TPF_INT, 1);

	common(&tiny, "test", "tiny");
	add(&tiny, "x", 8, 4, PBTRACE_TPF_INT, 1);

	/* every kind the filter reads, and some it refuses */
	common(&all, "test", "all");
	add(&all, "a_s8", 8, 1, PBTRACE_TPF_INT, 1);
	add(&all, "b_u8", 9, 1, PBTRACE_TPF_INT, 0);
	add(&all, "c_s16", 10, 2, PBTRACE_TPF_INT, 1);
	add(&all, "d_u16", 12, 2, PBTRACE_TPF_INT, 0);
	add(&all, "e_s32", 16, 4, PBTRACE_TPF_INT, 1);
	add(&all, "f_u32", 20, 4, PBTRACE_TPF_INT, 0);
	add(&all, "g_s64", 24, 8, PBTRACE_TPF_INT, 1);
	add(&all, "h_u64", 32, 8, PBTRACE_TPF_INT, 0);
	add(&all, "name", 40, 16, PBTRACE_TPF_CHARS, 0);
	add(&all, "path", 56, 4, PBTRACE_TPF_DATA_LOC_STR, 0);
	add(&all, "rel", 60, 4, PBTRACE_TPF_REL_LOC_STR, 0);
	add(&all, "args", 64, 48, PBTRACE_TPF_ARRAY, 0);
	add(&all, "odd", 112, 3, PBTRACE_TPF_INT, 0);
	add(&all, "blob", 116, 4, PBTRACE_TPF_DATA_LOC_BYTES, 0);
}

#define ALL_FIXED 120	/* bytes of "all" before its strings */

/* ---- records ----------------------------------------------------------- */

struct rec {
	uint8_t b[1024];
	size_t size;
};

static void put(struct rec *r, int off, uint64_t v, int size)
{
	memcpy(r->b + off, &v, size);	/* little endian host */
}

static void put_comm(struct rec *r, int off, const char *s)
{
	memset(r->b + off, 0, 16);
	memcpy(r->b + off, s, strnlen(s, 16));
}

static struct rec sw_rec(const char *prev, int ppid, long state,
			 const char *next, int npid)
{
	struct rec r = { .size = 64 };

	memset(r.b, 0, sizeof(r.b));
	put(&r, 4, 77, 4);
	put_comm(&r, 8, prev);
	put(&r, 24, ppid, 4);
	put(&r, 28, 120, 4);
	put(&r, 32, state, 8);
	put_comm(&r, 40, next);
	put(&r, 56, npid, 4);
	put(&r, 60, 120, 4);
	return r;
}

static struct rec sig_rec(int signo, const char *comm, int pid)
{
	struct rec r = { .size = 48 };

	memset(r.b, 0, sizeof(r.b));
	put(&r, 8, signo, 4);
	put_comm(&r, 20, comm);
	put(&r, 36, pid, 4);
	return r;
}

/* __data_loc at @field: the string (with its NUL) appended at r->size. */
static void put_loc(struct rec *r, int field, const char *s, bool rel)
{
	size_t n = strlen(s) + 1;
	uint32_t start = r->size - (rel ? field + 4 : 0);

	put(r, field, start | (uint32_t)n << 16, 4);
	memcpy(r->b + r->size, s, n);
	r->size += n;
}

static struct rec exec_rec(const char *file)
{
	struct rec r = { .size = 20 };

	memset(r.b, 0, sizeof(r.b));
	put_loc(&r, 8, file, false);
	return r;
}

/* ---- compile and match ------------------------------------------------- */

static struct pbt_filter_prog prog;
static struct pbt_filter_err err;

static int compile(const char *e, const struct pbt_tp_layout *l)
{
	return pbt_filter_compile(e, l, &prog, &err);
}

/* @e on @l keeps exactly the records whose bit is set in @want. */
static void keeps(const char *e, const struct pbt_tp_layout *l,
		  const struct rec *recs, int n, unsigned int want)
{
	unsigned int got = 0;
	int i;

	if (compile(e, l)) {
		tap(false, "%s: compiles (position %d: %s)", e, err.pos, err.msg);
		return;
	}
	for (i = 0; i < n; i++)
		if (pbt_filter_match(&prog, recs[i].b, recs[i].size))
			got |= 1u << i;
	tap(got == want, "%s/%s: '%s' keeps %#x (want %#x)", l->group, l->name,
	    e, got, want);
}

static void refused(const char *e, const struct pbt_tp_layout *l, int pos,
		    const char *msg)
{
	int r = compile(e, l);

	tap(r == -1 && err.pos == pos && strstr(err.msg, msg) &&
	    prog.nr_insns == 0,
	    "'%.60s' refused at position %d: \"%s\" (got %d, %d: \"%s\")", e, pos,
	    msg, r, err.pos, err.msg);
}

static void test_sched_switch(void)
{
	struct rec r[] = {
		sw_rec("bash", 100, 1, "swapper/0", 0),		/* 0 */
		sw_rec("kworker/0:1", 41, 0, "swapper/0", 0),	/* 1 */
		sw_rec("sshd", 42, 2, "bash", 100),		/* 2 */
		sw_rec("swapper/1", 0, 0, "kworker/1:0", 30),	/* 3 */
		sw_rec("zsh", 5000, 0x402, "swapper/0", 0),	/* 4 */
	};
	int n = sizeof(r) / sizeof(r[0]);

	keeps("prev_pid >= 42 && next_pid == 0", &sw, r, n, 0x11);
	keeps("prev_pid>=42&&next_pid==0", &sw, r, n, 0x11);
	keeps("prev_pid < 42", &sw, r, n, 0x0a);
	keeps("prev_pid <= 42", &sw, r, n, 0x0e);
	keeps("prev_pid > 42", &sw, r, n, 0x11);
	keeps("prev_pid != 42", &sw, r, n, 0x1b);
	keeps("prev_state & 2", &sw, r, n, 0x14);
	keeps("prev_state & 0x400", &sw, r, n, 0x10);
	keeps("prev_comm == \"bash\"", &sw, r, n, 0x01);
	keeps("prev_comm != 'bash'", &sw, r, n, 0x1e);
	keeps("prev_comm ~ \"*sh\"", &sw, r, n, 0x11);
	keeps("prev_comm ~ \"kworker*\" || next_comm ~ \"kworker*\"", &sw, r,
	      n, 0x0a);
	keeps("next_comm ~ \"*apper*\"", &sw, r, n, 0x13);
	keeps("prev_comm ~ \"[bz]*sh\"", &sw, r, n, 0x11);
	keeps("prev_comm ~ \"?sh\"", &sw, r, n, 0x10);
	keeps("prev_comm ~ \"!*sh\"", &sw, r, n, 0x0e);
	keeps("!(prev_pid >= 42 && next_pid == 0)", &sw, r, n, 0x0e);
	keeps("!prev_pid >= 42 && next_pid == 0", &sw, r, n, 0x02);
	keeps("(prev_pid == 0 || prev_pid == 42) && next_pid != 0", &sw, r, n,
	      0x0c);
	keeps("prev_pid == 0 || prev_pid == 42 && next_pid != 0", &sw, r, n,
	      0x0c);
	keeps("prev_pid == 100 || prev_pid == 42 && next_pid == 0", &sw, r, n,
	      0x01);
	keeps("common_pid == 77", &sw, r, n, 0x1f);
	keeps("((((prev_pid == 41))))", &sw, r, n, 0x02);
	keeps("!!(prev_pid == 41)", &sw, r, n, 0x02);
	keeps("!(!(prev_pid == 41) || next_pid != 0)", &sw, r, n, 0x02);
}

static void test_signal_generate(void)
{
	struct rec r[] = {
		sig_rec(10, "sleep", 1), sig_rec(14, "bash", 2),
		sig_rec(17, "bash", 3), sig_rec(9, "child", 4),
		sig_rec(15, "sh", 5),
	};
	int n = sizeof(r) / sizeof(r[0]);

	/* Documentation/trace/events.rst's example, with the quotes it needs */
	keeps("((sig >= 10 && sig < 15) || sig == 17) && comm != \"bash\"",
	      &sig, r, n, 0x01);
	keeps("((sig >= 10 && sig < 15) || sig == 17) && comm == \"bash\"",
	      &sig, r, n, 0x06);
	keeps("sig == 9 || sig == 017", &sig, r, n, 0x10 | 0x08);
	keeps("sig == 015", &sig, r, n, 0);
	keeps("sig == 0x11", &sig, r, n, 0x04);
	keeps("sig > -1 && pid != -5", &sig, r, n, 0x1f);
	keeps("sig == 4294967306", &sig, r, n, 0x01);	/* cut to s32: 10 */
	keeps("sig & 1 && !(comm ~ \"*a*\")", &sig, r, n, 0x18);
}

static void test_strings(void)
{
	struct rec r[] = {
		exec_rec("/usr/bin/true"), exec_rec("/bin/sh"),
		exec_rec(""), exec_rec("/usr/bin/truest"),
	};
	struct rec bad = exec_rec("/bin/sh");
	int n = sizeof(r) / sizeof(r[0]);

	keeps("filename == \"/bin/sh\"", &exec_l, r, n, 0x02);
	keeps("filename == \"\"", &exec_l, r, n, 0x04);
	keeps("filename ~ \"*true\"", &exec_l, r, n, 0x01);
	keeps("filename ~ \"/usr/*\"", &exec_l, r, n, 0x09);
	keeps("filename ~ \"*bin*\"", &exec_l, r, n, 0x0b);
	keeps("filename ~ \"*/bin/t*e\"", &exec_l, r, n, 0x01);
	keeps("filename ~ \"*\"", &exec_l, r, n, 0x0f);
	keeps("filename ~ \"**\"", &exec_l, r, n, 0x0f);
	keeps("filename ~ \"\\/bin/s[a-i]\"", &exec_l, r, n, 0x02);
	keeps("filename ~ \"/bin/s[!h]\"", &exec_l, r, n, 0x00);
	keeps("filename ~ \"/bin/s[h\"", &exec_l, r, n, 0x00);
	keeps("filename != \"/bin/sh\"", &exec_l, r, n, 0x0d);
	/* '~' on a pattern that starts with a digit is a plain compare */
	keeps("filename ~ \"1*\"", &exec_l, r, n, 0x00);
	keeps("filename == \"*\"", &exec_l, r, n, 0x00);

	/* the __data_loc points past the record: no string, no match */
	compile("filename != \"x\"", &exec_l);
	tap(pbt_filter_match(&prog, bad.b, bad.size) &&
	    !pbt_filter_match(&prog, bad.b, bad.size - 1) &&
	    !pbt_filter_match(&prog, bad.b, 10),
	    "a __data_loc string past the record's end compares false");
	put(&bad, 8, 0xffffffff, 4);
	tap(!pbt_filter_match(&prog, bad.b, bad.size),
	    "a __data_loc of 0xffffffff compares false");
}

static void test_numbers(void)
{
	struct rec r = { .size = ALL_FIXED };

	memset(r.b, 0, sizeof(r.b));
	put(&r, 8, 0x80, 1);			/* a_s8 = -128 */
	put(&r, 9, 0x80, 1);			/* b_u8 = 128 */
	put(&r, 10, 0xfffe, 2);			/* c_s16 = -2 */
	put(&r, 12, 0xfffe, 2);			/* d_u16 = 65534 */
	put(&r, 16, 0x80000000, 4);		/* e_s32 = INT_MIN */
	put(&r, 20, 0x80000000, 4);		/* f_u32 = 2^31 */
	put(&r, 24, 0x8000000000000000ull, 8);	/* g_s64 = INT64_MIN */
	put(&r, 32, 0xffffffffffffffffull, 8);	/* h_u64 = max */
	keeps("a_s8 < 0 && a_s8 == -128 && a_s8 == 0x80 && a_s8 <= -128", &all,
	      &r, 1, 1);
	keeps("b_u8 > 127 && b_u8 == 128 && b_u8 == 0x180", &all, &r, 1, 1);
	keeps("c_s16 == -2 && c_s16 < -1 && c_s16 > -3 && c_s16 == 0xfffe",
	      &all, &r, 1, 1);
	keeps("d_u16 == 65534 && d_u16 > 65533 && d_u16 & 0x8000", &all, &r, 1,
	      1);
	keeps("e_s32 == -2147483648 && e_s32 < -2147483647", &all, &r, 1, 1);
	keeps("f_u32 == 020000000000 && f_u32 >= 2147483648", &all, &r, 1, 1);
	keeps("g_s64 == -9223372036854775808 && g_s64 < 0", &all, &r, 1, 1);
	keeps("h_u64 == 18446744073709551615 && h_u64 == 0xffffffffffffffff",
	      &all, &r, 1, 1);
	keeps("h_u64 > 0 && h_u64 >= 18446744073709551615", &all, &r, 1, 1);
	keeps("a_s8 > 0 || b_u8 < 128 || g_s64 > 0 || h_u64 < 1", &all, &r, 1,
	      0);
	/* a record too short for the field: every comparison is false */
	r.size = 32;
	keeps("h_u64 != 5", &all, &r, 1, 0);
	keeps("!(h_u64 == 5)", &all, &r, 1, 1);
	keeps("g_s64 != 5", &all, &r, 1, 1);
	r.size = 31;
	keeps("g_s64 != 5", &all, &r, 1, 0);
	keeps("f_u32 == 0x80000000", &all, &r, 1, 1);
}

static void test_errors(void)
{
	refused("prev_pid >= 42 && prev_pd == 0", &sw, 18,
		"unknown field 'prev_pd'");
	refused("sig ~ 5", &sig, 4, "'~' needs a string field");
	refused("sig ~ \"5\"", &sig, 4, "'~' needs a string field");
	refused("sig == \"5\"", &sig, 7, "a number field takes a number");
	refused("comm == 5", &sig, 8, "a string field takes a quoted string");
	refused("comm < \"a\"", &sig, 5, "strings compare with ==, != or ~");
	refused("comm == bash", &sig, 8, "expected a number or a quoted string");
	refused("comm == \"bash", &sig, 8, "no closing quote");
	refused("sig = 5", &sig, 4, "expected an operator");
	refused("sig", &sig, 3, "expected an operator");
	refused("sig == 5 &", &sig, 9, "expected &&, ||, ')' or the end");
	refused("sig == 5 and pid == 1", &sig, 9, "expected &&, ||");
	refused("sig == 5 &&", &sig, 11, "the expression ends where");
	refused("sig == 5 || ()", &sig, 13, "expected a field name");
	refused("(sig == 5", &sig, 0, "'(' without ')'");
	refused("((sig == 5) && (pid == 1)", &sig, 0, "'(' without ')'");
	refused("sig == 5)", &sig, 8, "')' without '('");
	refused("", &sig, 0, "empty filter");
	refused("   ", &sig, 3, "empty filter");
	refused("!", &sig, 1, "the expression ends where");
	refused("sig == 12ab", &sig, 7, "bad number '12ab'");
	refused("sig == 08", &sig, 7, "bad number");
	refused("sig == 0x", &sig, 7, "bad number");
	refused("sig == -", &sig, 7, "bad number");
	refused("sig == 99999999999999999999", &sig, 7, "range of 64 bits");
	refused("sig == 9223372036854775808", &sig, 7, "range of a signed");
	refused("sig == -9223372036854775809", &sig, 7, "range of a signed");
	refused("b_u8 == -1", &all, 8, "negative number for an unsigned");
	refused("args == 1", &all, 0, "'args' is neither a number nor a string");
	refused("odd == 1", &all, 0, "'odd' is neither");
	refused("blob == \"x\"", &all, 0, "'blob' is neither");
	refused("comm.ustring ~ \"x\"", &sig, 4, "suffixes");
	refused("!= 5", &sig, 0, "expected a field name");
	refused("sig == 1 || # x", &sig, 12, "expected a field name");
	tap(compile("((((((((((((((((sig == 1))))))))))))))))", &sig) == 0,
	    "16 nested '(' compile");
	refused("(((((((((((((((((sig == 1)))))))))))))))))", &sig, 16,
		"more than 16 nested '('");
}

static void test_limits(void)
{
	char e[PBTRACE_TP_FILTER_MAX + 8], s[300];
	int i, len = 0;

	for (i = 0; i < PBT_FILTER_MAX_INSNS; i++)
		len += sprintf(e + len, "%sx==%d", i ? "||" : "", i % 10);
	tap(compile(e, &tiny) == 0 && prog.nr_insns == PBT_FILTER_MAX_INSNS,
	    "%d comparisons compile (%d bytes)", PBT_FILTER_MAX_INSNS, len);
	strcat(e, "||x==1");
	refused(e, &tiny, len + 2, "more than 128 comparisons");
	memset(e, ' ', PBTRACE_TP_FILTER_MAX);
	memcpy(e, "sig == 1", 8);
	e[PBTRACE_TP_FILTER_MAX - 1] = '\0';
	tap(compile(e, &sig) == 0, "an expression of 1023 bytes compiles");
	e[PBTRACE_TP_FILTER_MAX - 1] = ' ';
	e[PBTRACE_TP_FILTER_MAX] = '\0';
	refused(e, &sig, 1023, "filter longer than 1023 bytes");
	memset(s, 'a', sizeof(s));
	snprintf(e, sizeof(e), "comm == \"%.255s\"", s);
	tap(compile(e, &sig) == 0, "a string of 255 bytes compiles");
	snprintf(e, sizeof(e), "comm == \"%.256s\"", s);
	refused(e, &sig, 8, "string longer than 255 bytes");
}

/* ---- cost: what a member's bound counts (pbt_filter_cost()) ----------- */

static void costs(const char *e, const struct pbt_tp_layout *l, uint64_t want)
{
	uint64_t got = compile(e, l) ? ~0ull : pbt_filter_cost(&prog);

	tap(got == want, "cost of '%s' is %llu (want %llu)", e,
	    (unsigned long long)got, (unsigned long long)want);
}

static void test_cost(void)
{
	costs("sig == 10 && code == 0", &sig, 2);
	costs("comm == \"bash\"", &sig, 16 + 4 + 1);
	costs("comm ~ \"*as*\"", &sig, (2 + 1) * 16);
	costs("comm ~ \"[bd]ash\"", &sig, (7 + 1) * 16);
	costs("filename ~ \"/usr/*\"", &exec_l, PBT_FILTER_LOC_MAX + 5 + 1);
	costs("filename ~ \"*bin/t*\"", &exec_l, (5 + 1) * PBT_FILTER_LOC_MAX);
	costs("filename ~ \"*?b\"", &exec_l, PBT_FILTER_MEMBER_COST);
	costs("filename ~ \"*aab*\"", &exec_l, PBT_FILTER_MEMBER_COST);
	tap(!pbt_filter_cost(&(struct pbt_filter_prog){ .nr_insns = 0 }),
	    "no filter costs nothing");
}

/* ---- differential: random trees against a direct evaluation ----------- */

enum { N_CMP, N_AND, N_OR, N_NOT };

struct node {
	int type, l, r;		/* children: indexes in the pool */
	int field;		/* N_CMP: index in all.fields */
	int op;			/* enum pbt_filter_op; STR_GLOB for any ~ */
	uint64_t val;
	char str[24];
	int paren;
};

static struct node pool[64];
static int npool;
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *words[] = { "", "a", "sh", "bash", "ash", "kworker/0:1",
			       "swapper/1", "bb", "ab", "ba", "abcdefghijklmnop" };
static const uint64_t vals[] = { 0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x100, 0x7fff,
				 0x8000, 0xffff, 0x10000, 0x7fffffff,
				 0x80000000, 0xffffffff, 0x100000000ull,
				 0x8000000000000000ull, ~0ull, ~0ull - 1 };

static void rand_glob(char *out)
{
	const char *w = words[rnd() % 11];
	static const char *bits[] = { "*", "?", "[a-c]", "[!b]", "\\a", "b",
				      "s", "h" };
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; w[i] && n < 12; i++) {
		if (rnd() % 4 == 0) {
			const char *b = bits[rnd() % 8];

			if (n + strlen(b) < 20) {
				strcpy(out + n, b);
				n += strlen(b);
			}
		} else {
			out[n++] = w[i];
			out[n] = '\0';
		}
	}
	if (rnd() % 3 == 0 && n < 20) {
		memmove(out + 1, out, n + 1);
		out[0] = '*';
		n++;
	}
	if (rnd() % 3 == 0 && n < 20)
		strcpy(out + n, "*");
	/* ftrace's own rules, tested above: not here */
	if (out[0] == '!' || (out[0] >= '0' && out[0] <= '9'))
		out[0] = 'x';
}

static int gen(int depth)
{
	int i = npool++;
	struct node *n = &pool[i];
	int t = depth > 4 || npool > 50 ? N_CMP : (int)(rnd() % 4);

	memset(n, 0, sizeof(*n));
	n->type = t;
	n->paren = rnd() % 5 == 0;
	if (t == N_AND || t == N_OR) {
		n->l = gen(depth + 1);
		n->r = gen(depth + 1);
	} else if (t == N_NOT) {
		n->l = gen(depth + 1);
	} else if (rnd() % 3 == 0) {
		n->field = 12 + rnd() % 3;	/* name, path, rel */
		n->op = (int[]){ PBT_FOP_EQ, PBT_FOP_NE, PBT_FOP_STR_GLOB }[rnd() % 3];
		if (n->op == PBT_FOP_STR_GLOB)
			rand_glob(n->str);
		else
			strcpy(n->str, words[rnd() % 11]);
	} else {
		n->field = 3 + rnd() % 9;	/* common_pid, a_s8 .. h_u64 */
		n->op = PBT_FOP_EQ + rnd() % 7;
		n->val = vals[rnd() % 19] + (rnd() % 3) - 1;
	}
	return i;
}

static const char *op_text(int op)
{
	static const char *t[] = { "", "==", "!=", "<", "<=", ">", ">=", "&" };

	return op == PBT_FOP_STR_GLOB ? "~" : t[op];
}

static int print(int i, char *out, int parent)
{
	struct node *n = &pool[i];
	const struct pbt_tpf *f = &all.fields[n->field];
	int len = 0, paren = n->paren ||
		(parent == N_AND && n->type == N_OR) ||
		(parent == N_NOT && (n->type == N_AND || n->type == N_OR));
	const char *sp = rnd() % 2 ? " " : "";

	if (paren)
		len += sprintf(out + len, "(%s", sp);
	switch (n->type) {
	case N_AND:
	case N_OR:
		len += print(n->l, out + len, n->type);
		len += sprintf(out + len, "%s%s%s", sp,
			       n->type == N_AND ? "&&" : "||", sp);
		len += print(n->r, out + len, n->type);
		break;
	case N_NOT:
		len += sprintf(out + len, "!%s", sp);
		len += print(n->l, out + len, N_NOT);
		break;
	default:
		len += sprintf(out + len, "%s%s%s%s", f->name, sp, op_text(n->op), sp);
		if (f->kind != PBTRACE_TPF_INT)
			len += sprintf(out + len, "\"%s\"", n->str);
		else if (f->is_signed && (int64_t)n->val < 0 && rnd() % 2)
			len += sprintf(out + len, "%lld", (long long)n->val);
		else if (f->is_signed && n->val > (~0ull >> 1))
			len += sprintf(out + len, "%lld", (long long)n->val);
		else if (rnd() % 3 == 0)
			len += sprintf(out + len, "%#llx", (unsigned long long)n->val);
		else if (rnd() % 3 == 0 && n->val)
			len += sprintf(out + len, "0%llo", (unsigned long long)n->val);
		else
			len += sprintf(out + len, "%llu", (unsigned long long)n->val);
	}
	if (paren)
		len += sprintf(out + len, "%s)", sp);
	return len;
}

/* The comparison as C does it, for the field's own type. */
static bool ref_num(const struct pbt_tpf *f, const struct rec *r, int op,
		    uint64_t v)
{
	int64_t a, b;
	uint64_t x = 0;

	if (f->offset + f->size > r->size)
		return false;
	memcpy(&x, r->b + f->offset, f->size);
	if (f->size < 8)
		v &= (1ull << (f->size * 8)) - 1;
	if (op == PBT_FOP_EQ)
		return x == v;
	if (op == PBT_FOP_NE)
		return x != v;
	if (op == PBT_FOP_BAND)
		return (x & v) != 0;
	if (!f->is_signed) {
		a = x > v ? 1 : x < v ? -1 : 0;
	} else {
		int64_t sx = f->size == 1 ? (int8_t)x : f->size == 2 ? (int16_t)x :
			f->size == 4 ? (int32_t)x : (int64_t)x;
		int64_t sv = f->size == 1 ? (int8_t)v : f->size == 2 ? (int16_t)v :
			f->size == 4 ? (int32_t)v : (int64_t)v;

		a = sx > sv ? 1 : sx < sv ? -1 : 0;
	}
	b = 0;
	switch (op) {
	case PBT_FOP_LT: return a < b;
	case PBT_FOP_LE: return a <= b;
	case PBT_FOP_GT: return a > b;
	default: return a >= b;
	}
}

static bool ref_str(const struct pbt_tpf *f, const struct rec *r,
		    const struct node *n)
{
	char s[64];
	uint32_t loc;
	size_t start = f->offset, len = 16;

	if (f->offset + f->size > r->size)
		return false;
	if (f->kind != PBTRACE_TPF_CHARS) {
		memcpy(&loc, r->b + f->offset, 4);
		start = (loc & 0xffff) + (f->kind == PBTRACE_TPF_REL_LOC_STR ?
					  f->offset + 4 : 0);
		len = loc >> 16;
		if (start + len > r->size)
			return false;
	}
	memcpy(s, r->b + start, len);
	s[len] = '\0';
	if (n->op == PBT_FOP_STR_GLOB)
		return fnmatch(n->str, s, 0) == 0;
	return (strcmp(s, n->str) == 0) == (n->op == PBT_FOP_EQ);
}

static bool ref(int i, const struct rec *r)
{
	const struct node *n = &pool[i];
	const struct pbt_tpf *f = &all.fields[n->field];

	switch (n->type) {
	case N_AND:
		return ref(n->l, r) && ref(n->r, r);
	case N_OR:
		return ref(n->l, r) || ref(n->r, r);
	case N_NOT:
		return !ref(n->l, r);
	}
	return f->kind == PBTRACE_TPF_INT ? ref_num(f, r, n->op, n->val) :
					     ref_str(f, r, n);
}

static void rand_rec(struct rec *r)
{
	int i;

	memset(r->b, 0, sizeof(r->b));
	for (i = 8; i < 40; i++)
		r->b[i] = rnd() % 4 ? (uint8_t)vals[rnd() % 19] >> (8 * (rnd() % 2)) :
				     (uint8_t)rnd();
	if (rnd() % 2)
		for (i = 8; i < 40; i += 8)
			put(r, i, vals[rnd() % 19], 8);
	if (rnd() % 8)
		put_comm(r, 40, words[rnd() % 11]);
	else
		memcpy(r->b + 40, "abcdefghijklmnop", 16);	/* no NUL */
	r->size = ALL_FIXED;
	put_loc(r, 56, words[rnd() % 11], false);
	put_loc(r, 60, words[rnd() % 11], true);
	if (rnd() % 8 == 0)
		r->size = rnd() % r->size;	/* cut: fields past the end */
}

static void test_differential(void)
{
	char e[PBTRACE_TP_FILTER_MAX * 2];
	int t, k, bad = 0, compiled = 0, matched = 0, checks = 0;
	struct rec r;

	for (t = 0; t < 20000; t++) {
		npool = 0;
		gen(0);
		if (print(0, e, -1) >= PBTRACE_TP_FILTER_MAX)
			continue;
		if (compile(e, &all)) {
			if (bad++ < 5)
				printf("# refused: %s: %d: %s\n", e, err.pos, err.msg);
			continue;
		}
		compiled++;
		for (k = 0; k < 8; k++) {
			bool want, got;

			rand_rec(&r);
			want = ref(0, &r);
			got = pbt_filter_match(&prog, r.b, r.size);
			checks++;
			matched += got;
			if (want != got && bad++ < 5)
				printf("# '%s' on a record of %zu bytes: %d, want %d\n",
				       e, r.size, got, want);
		}
	}
	tap(!bad && compiled > 19000 && matched > checks / 10 &&
	    matched < checks * 9 / 10,
	    "%d random expressions, %d records: the program agrees with the tree "
	    "(%d matched, %d disagreements)", compiled, checks, matched, bad);
}

/* ---- the verifier ------------------------------------------------------ */

static void test_verifier(void)
{
	struct pbt_filter_prog p;
	struct rec r = sw_rec("bash", 100, 1, "swapper/0", 0);
	int i, pass = 0, t;

	compile("prev_pid >= 42 && (next_pid == 0 || prev_comm ~ \"*sh\")", &sw);
	tap(pbt_filter_verify(&prog) == 0 && prog.nr_insns == 3,
	    "a compiled program verifies");
	p = prog;
	p.insns[1].next = 1;
	tap(pbt_filter_verify(&p) == -1, "a jump to itself is refused");
	p = prog;
	p.insns[1].next = 0;
	tap(pbt_filter_verify(&p) == -1, "a backward jump is refused");
	p = prog;
	p.insns[0].next = p.nr_insns + 2;
	tap(pbt_filter_verify(&p) == -1, "a jump past the end is refused");
	p = prog;
	p.insns[0].field = p.nr_fields;
	tap(pbt_filter_verify(&p) == -1, "a field index >= nr_fields is refused");
	p = prog;
	p.insns[0].op = PBT_FOP_STR_FULL;
	tap(pbt_filter_verify(&p) == -1, "a string op on a number is refused");
	p = prog;
	p.insns[2].op = PBT_FOP_LT;
	tap(pbt_filter_verify(&p) == -1, "a number op on a string is refused");
	p = prog;
	p.insns[0].op = PBT_FOP_MAX;
	tap(pbt_filter_verify(&p) == -1, "an unknown op is refused");
	p = prog;
	p.insns[2].str_len = p.strs_len;
	tap(pbt_filter_verify(&p) == -1, "a string past strs_len is refused");
	p = prog;
	p.strs[p.insns[2].str_off + p.insns[2].str_len] = 'x';
	tap(pbt_filter_verify(&p) == -1, "an unterminated string is refused");
	p = prog;
	p.fields[0].size = 3;
	tap(pbt_filter_verify(&p) == -1, "a 3-byte number field is refused");
	p = prog;
	p.nr_insns = PBT_FILTER_MAX_INSNS + 1;
	tap(pbt_filter_verify(&p) == -1, "too many instructions are refused");
	/* random corruption: refused, or runs safely (ASan) and ends */
	for (t = 0; t < 100000; t++) {
		p = prog;
		for (i = 0; i < 3; i++)
			((uint8_t *)&p)[rnd() % 1200] = rnd();
		if (pbt_filter_verify(&p))
			continue;
		pass++;
		pbt_filter_match(&p, r.b, r.size);
	}
	tap(pass > 0, "100000 corrupted programs: %d verify and ran safely", pass);
	p.nr_insns = 0;
	tap(pbt_filter_verify(&p) == 0 && pbt_filter_match(&p, r.b, 0),
	    "an empty program matches everything");
}

int main(void)
{
	layouts();
	test_sched_switch();
	test_signal_generate();
	test_strings();
	test_numbers();
	test_errors();
	test_limits();
	test_cost();
	test_differential();
	test_verifier();
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
