/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ftrace's event filters (Documentation/trace/events.rst, "Event
 * filtering") compiled against a tracepoint's layout into a small program
 * the probe runs on each record. Plain C (pb_types.h): the module compiles
 * PBTRACE_A_TP_FILTER with it, userspace compiles the same expression first
 * to show the error with a caret, the unit tests and the fuzzer run it.
 *
 *   prev_pid >= 42 && next_pid == 0
 *   ((sig >= 10 && sig < 15) || sig == 17) && comm != "bash"
 *   !(prev_comm ~ "kworker*") && (prev_state & 2)
 *
 * Numbers: ==, !=, <, <=, >, >=, & (signedness and size from the layout;
 * constants decimal, 0x hex, 0 octal, negative for signed fields, cut to
 * the field's size as ftrace does). Strings (char[N], __data_loc and
 * __rel_loc char[]): ==, != and ~, ftrace's globs ("sh*", "*sh", "*sh*",
 * and full globs with *, ?, [...], \ as lib/glob.c; a leading '!' in a ~
 * pattern negates it). &&, ||, !, parentheses; && binds tighter than ||.
 *
 * The program: up to PBT_FILTER_MAX_INSNS comparisons, each "if (cmp ==
 * when) continue at next else at the following one", every jump forward;
 * falling off the end or reaching nr_insns is a match, nr_insns + 1 is
 * not. pbt_filter_verify() proves that of any program before it is used
 * (jumps forward and in range, field indexes < nr_fields, ops valid for
 * their field, strings inside strs), so pbt_filter_match() always
 * terminates after at most nr_insns comparisons and reads nothing outside
 * the record: each field is checked against the record's real size, and a
 * field that is not in it compares false.
 */
#ifndef _PBTRACE_FILTER_H
#define _PBTRACE_FILTER_H

#include "tp_layout.h"

#define PBT_FILTER_MAX_INSNS	128	/* comparisons in one expression */
#define PBT_FILTER_MAX_DEPTH	16	/* nested parentheses */
#define PBT_FILTER_STR_MAX	255	/* bytes of one quoted string */
#define PBT_FILTER_ERR_MAX	128	/* bytes of an error message, NUL included */

enum pbt_filter_op {
	PBT_FOP_EQ = 1,		/* numbers */
	PBT_FOP_NE,
	PBT_FOP_LT,
	PBT_FOP_LE,
	PBT_FOP_GT,
	PBT_FOP_GE,
	PBT_FOP_BAND,		/* (field & value) != 0 */
	PBT_FOP_STR_FULL,	/* strings: == and ~ without wildcards */
	PBT_FOP_STR_FRONT,	/* ~ "abc*" */
	PBT_FOP_STR_MIDDLE,	/* ~ "*abc*" */
	PBT_FOP_STR_END,	/* ~ "*abc" */
	PBT_FOP_STR_GLOB,	/* ~ any other pattern with * ? [ \ */
	PBT_FOP_MAX
};

/* A field the program reads, copied from the layout. */
struct pbt_filter_field {
	uint16_t offset;
	uint16_t size;
	uint8_t kind;		/* enum pbtrace_tpf_kind */
	uint8_t is_signed;
};

struct pbt_filter_insn {
	uint64_t val;		/* number, already cut to the field's size */
	uint16_t str_off;	/* pattern: strs[str_off .. str_off + str_len) */
	uint16_t str_len;
	uint8_t op;		/* enum pbt_filter_op */
	uint8_t field;		/* index in fields[] */
	uint8_t negate;		/* string compare inverted (!=, ~ "!...") */
	uint8_t when;		/* jump when the comparison gives this */
	uint8_t next;		/* ... to here; nr_insns: match, nr_insns + 1: not */
};

struct pbt_filter_prog {
	uint16_t nr_insns;	/* 0: no filter, everything matches */
	uint16_t nr_fields;
	uint16_t strs_len;
	struct pbt_filter_field fields[PBTRACE_TP_MAX_FIELDS];
	struct pbt_filter_insn insns[PBT_FILTER_MAX_INSNS];
	char strs[PBTRACE_TP_FILTER_MAX];
};

struct pbt_filter_err {
	int pos;			/* byte offset in the expression, 0 = first */
	char msg[PBT_FILTER_ERR_MAX];	/* "unknown field 'prev_pd'" */
};

/*
 * Compile @expr (NUL-terminated, at most PBTRACE_TP_FILTER_MAX - 1 bytes)
 * against @layout into @prog. 0 on success; -1 with @err filled in if the
 * expression is not valid for this layout. No allocation, no recursion.
 */
int pbt_filter_compile(const char *expr, const struct pbt_tp_layout *layout,
		       struct pbt_filter_prog *prog, struct pbt_filter_err *err);

/* 0 if @prog is safe to run (see above), -1 if not. */
int pbt_filter_verify(const struct pbt_filter_prog *prog);

/*
 * The most work pbt_filter_match() can do on one record, in byte steps:
 * every comparison runs at most once (jumps go forward), a number costs 1;
 * a string compare first finds the string's end (its most bytes S: char[N]
 * N, a __data_loc string the largest record, PBT_FILTER_LOC_MAX), so ==,
 * != and ~ "abc*" / "*abc" cost S + the pattern's bytes + 1, ~ "*abc*" and
 * a full glob (pattern bytes + 1) x S. A group member's filters are
 * bounded in these units (docs/security.md, docs/benchmarks.md).
 */
#define PBT_FILTER_LOC_MAX	8192	/* PBT_TP_RECORD_MAX */
#define PBT_FILTER_MEMBER_COST	32768	/* one filter of a member's */
#define PBT_FILTER_MEMBER_SESSION_COST (4 * PBT_FILTER_MEMBER_COST)
uint64_t pbt_filter_cost(const struct pbt_filter_prog *prog);

/* Does the record @rec of @rec_size bytes pass? @prog must be verified. */
bool pbt_filter_match(const struct pbt_filter_prog *prog, const void *rec,
		      size_t rec_size);

#endif /* _PBTRACE_FILTER_H */
