// SPDX-License-Identifier: GPL-2.0
/*
 * filtercost: what one tracepoint filter costs per hit, the worst a group
 * member may set against a cheap one (docs/benchmarks.md, "Filter cost").
 * The module's own matcher (kmod/core/filter.c, plain C) runs here on the
 * worst records for each pattern: a __data_loc string of the largest
 * record's length made of the pattern's first byte, so that every
 * position nearly matches. Each filter's cost in the units a member's
 * bound counts (pbt_filter_cost(), PBT_FILTER_MEMBER_COST) is printed
 * beside it, and whether a member may set it.
 *
 *   filtercost [ITERATIONS]
 *
 * Under tools/vm --icount one guest ns is one instruction: ns/hit there is
 * instructions per hit, repeatable, and independent of host load.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"

/*
 * The kernel's memcmp (lib/string.c; x86-64 has no other), which the
 * matcher calls for every position of a ~ "*x*": a byte loop, not
 * glibc's vector one (filter.c is built with -fno-builtin-memcmp).
 */
int memcmp(const void *cs, const void *ct, size_t count)
{
	const unsigned char *su1 = cs, *su2 = ct, *end = su1 + count;
	int res = 0;

	for (; su1 < end; su1++, su2++) {
		res = *su1 - *su2;
		if (res)
			break;
	}
	return res;
}

/* And its memchr, which finds every string's end first. */
void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	while (n-- != 0) {
		if ((unsigned char)c == *p++)
			return (void *)(p - 1);
	}
	return NULL;
}

#define REC_MAX PBT_FILTER_LOC_MAX
#define STR_OFF 16		/* the string's bytes, after the header */

static uint8_t rec[REC_MAX];
static struct pbt_tp_layout layout = {
	.group = "bench", .name = "exec", .nr_fields = 3,
	.fields = {
		{ .name = "filename", .offset = 8, .size = 4,
		  .kind = PBTRACE_TPF_DATA_LOC_STR },
		{ .name = "pid", .offset = 12, .size = 4,
		  .kind = PBTRACE_TPF_INT, .is_signed = 1 },
		{ .name = "comm", .offset = 0, .size = 8,
		  .kind = PBTRACE_TPF_CHARS },
	},
};

/* A record whose filename is @len bytes of @c (then its NUL). */
static size_t make_rec(char c, size_t len)
{
	uint32_t loc = (uint32_t)(len + 1) << 16 | STR_OFF;
	int32_t pid = 42;

	memset(rec, 0, sizeof(rec));
	memcpy(rec, "bench", 5);
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 12, &pid, 4);
	memset(rec + STR_OFF, c, len);
	return STR_OFF + len + 1;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void run(const char *what, const char *expr, long iters)
{
	static struct pbt_filter_prog prog;
	struct pbt_filter_err err;
	size_t size = make_rec('a', REC_MAX - STR_OFF - 1);
	volatile bool sink = false;
	double t0, t1;
	long i;

	if (pbt_filter_compile(expr, &layout, &prog, &err)) {
		fprintf(stderr, "filtercost: '%s': %d: %s\n", expr, err.pos, err.msg);
		exit(1);
	}
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		sink = pbt_filter_match(&prog, rec, size);
	t1 = now_ns();
	printf("RESULT filter=%s cost=%llu member=%s ns_per_hit=%.1f match=%d expr='%s'\n",
	       what, (unsigned long long)pbt_filter_cost(&prog),
	       pbt_filter_cost(&prog) <= PBT_FILTER_MEMBER_COST ?
	       "accepted" : "refused",
	       (t1 - t0) / iters, sink, expr);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 2000;
	char big[300];

	run("number", "pid > 0", iters * 1000);
	run("comm", "comm == \"bash\"", iters * 1000);
	/* 8192 + 10: a prefix finds the string's end first */
	run("prefix", "filename ~ \"/usr/bin/*\"", iters * 100);
	/* (3 + 1) x 8192 = 32768: the most a member's ~ "*x*" may cost */
	run("middle-worst", "filename ~ \"*aab*\"", iters);
	/* a full glob at the bound: backtracks at every position */
	run("glob-worst", "filename ~ \"*?b\"", iters);
	/* three prefixes: 3 x 8202, the most such compares a member's has */
	run("prefix-3", "filename ~ \"a*\" && filename ~ \"aa*\" && filename ~ \"aaaaaa*\"",
	    iters * 100);
	/* refused: 4 x 8192 + 8 x 4 */
	run("middle-4", "filename ~ \"*aaab*\"", iters);
	/* the case, root only now: a 253-byte *x* on a long path */
	memset(big, 0, sizeof(big));
	strcpy(big, "filename ~ \"*");
	memset(big + strlen(big), 'a', 252);
	strcat(big, "b*\"");
	run("middle-255", big, iters / 10 ? iters / 10 : 1);
	return 0;
}
