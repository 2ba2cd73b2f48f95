// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the tracepoint filter compiler (kmod/core/filter.c),
 * which the module runs on the expression any session owner sends. The
 * first input byte picks a layout (6.1's sched_switch, signal_generate,
 * sched_process_exec), the rest up to a NUL is the expression, the bytes
 * after it a record. Beyond "no crash, no leak, no UB" it checks that:
 *  - a refused expression has a message and a position inside it, and
 *    leaves a program that matches everything (nr_insns 0), never a half one;
 *  - an accepted one verifies, and its program runs on the record cut at
 *    every length (fields past the end compare false) without reading
 *    outside it (ASan: the record is a heap copy of exactly that size).
 *
 * Built and run by tools/fuzz/run, which reads these lines:
 * fuzz-sources: kmod/core/filter.c
 * fuzz-seeds: tools/fuzz/filter_seeds
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kmod/core/filter.h"

static struct pbt_tp_layout lay[3];
static struct pbt_filter_prog prog;
static struct pbt_filter_err err;

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

static void layouts(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		add(&lay[i], "common_type", 0, 2, PBTRACE_TPF_INT, 0);
		add(&lay[i], "common_flags", 2, 1, PBTRACE_TPF_INT, 0);
		add(&lay[i], "common_preempt_count", 3, 1, PBTRACE_TPF_INT, 0);
		add(&lay[i], "common_pid", 4, 4, PBTRACE_TPF_INT, 1);
	}
	add(&lay[0], "prev_comm", 8, 16, PBTRACE_TPF_CHARS, 0);
	add(&lay[0], "prev_pid", 24, 4, PBTRACE_TPF_INT, 1);
	add(&lay[0], "prev_prio", 28, 4, PBTRACE_TPF_INT, 1);
	add(&lay[0], "prev_state", 32, 8, PBTRACE_TPF_INT, 1);
	add(&lay[0], "next_comm", 40, 16, PBTRACE_TPF_CHARS, 0);
	add(&lay[0], "next_pid", 56, 4, PBTRACE_TPF_INT, 1);
	add(&lay[0], "next_prio", 60, 4, PBTRACE_TPF_INT, 1);
	add(&lay[1], "sig", 8, 4, PBTRACE_TPF_INT, 1);
	add(&lay[1], "errno", 12, 4, PBTRACE_TPF_INT, 1);
	add(&lay[1], "code", 16, 4, PBTRACE_TPF_INT, 1);
	add(&lay[1], "comm", 20, 16, PBTRACE_TPF_CHARS, 0);
	add(&lay[1], "pid", 36, 4, PBTRACE_TPF_INT, 1);
	add(&lay[1], "group", 40, 4, PBTRACE_TPF_INT, 1);
	add(&lay[1], "result", 44, 4, PBTRACE_TPF_INT, 1);
	add(&lay[2], "filename", 8, 4, PBTRACE_TPF_DATA_LOC_STR, 0);
	add(&lay[2], "pid", 12, 4, PBTRACE_TPF_INT, 1);
	add(&lay[2], "old_pid", 16, 4, PBTRACE_TPF_INT, 1);
	add(&lay[2], "rel", 20, 4, PBTRACE_TPF_REL_LOC_STR, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char expr[PBTRACE_TP_FILTER_MAX + 64];
	const uint8_t *nul;
	size_t n, rec_size, cut;
	uint8_t *rec;

	if (!lay[0].nr_fields)
		layouts();
	if (size < 1)
		return 0;
	nul = memchr(data + 1, '\0', size - 1);
	n = nul ? (size_t)(nul - data - 1) : size - 1;
	if (n >= sizeof(expr))
		n = sizeof(expr) - 1;
	memcpy(expr, data + 1, n);
	expr[n] = '\0';
	if (pbt_filter_compile(expr, &lay[data[0] % 3], &prog, &err)) {
		if (!err.msg[0] || err.pos < 0 || (size_t)err.pos > n ||
		    prog.nr_insns)
			abort();
		return 0;
	}
	if (pbt_filter_verify(&prog) || !prog.nr_insns)
		abort();
	rec_size = nul ? size - (size_t)(nul - data) - 1 : 0;
	for (cut = 0; cut <= rec_size; cut += 1 + cut / 4) {
		rec = malloc(cut ? cut : 1);
		if (!rec)
			return 0;
		memcpy(rec, nul ? nul + 1 : data, cut);
		pbt_filter_match(&prog, rec, cut);
		free(rec);
	}
	return 0;
}
