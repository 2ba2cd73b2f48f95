/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscall view of a trace, as perf trace shows it: raw_syscalls
 * sys_enter/sys_exit paired per (machine, thread) into calls, printed one
 * line per completed call with decoded arguments, and summarized per
 * process, thread and syscall (perf trace -s, strace -c). Used by
 * "tracectl report" (a finished file) and "tracectl trace" (a file that
 * is still growing: fed in pieces, printed up to a time that is final).
 *
 * Events of different CPUs are not in timestamp order in a file, so events
 * are collected, sorted by (timestamp, machine, tid) and only then paired.
 * String arguments come in a GenericFtraceEvent "sys_enter_<name>" with the
 * sys_enter's timestamp and pid (docs/tracectl.md); they are matched to it
 * by that pair, not by position.
 */
#ifndef PBT_SYSCALLS_VIEW_H
#define PBT_SYSCALLS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SV_NR_MAX 1024		/* syscall ids the summary keeps apart */
#define SV_MAX_PIDS 64
#define SV_MAX_NAMES 16		/* --machine */
/* More machines than this: -s sums them up (a host may relay 1,000). */
#define SV_SECTIONS 8
#define SV_TOP 10		/* machines by total time in that summary */
#define SV_STR_MAX 256		/* the kernel's bound on a string argument */

struct sv_filter {
	bool has_set;			/* -e given */
	bool exclude;			/* -e '!a,b' */
	bool set[SV_NR_MAX];
	uint64_t min_duration_ns;	/* --duration: lines only */
	bool failure;			/* --failure: lines only */
	int32_t pids[SV_MAX_PIDS];	/* -p: tid or pid */
	size_t nr_pids;
	int32_t hide[4];		/* tracectl and traced themselves */
	size_t nr_hide;
	const char *machines[SV_MAX_NAMES];	/* --machine: these only */
	size_t nr_machines;
};

/* One string argument as the kernel copied it (the generic event). */
struct sv_str {
	char name[32];
	char *value;			/* NULL: unreadable, see ptr */
	uint64_t ptr;
	bool truncated;
};

struct sv_stat {
	uint64_t calls, errors;
	uint64_t total, min, max;	/* ns */
	double mean, m2;		/* Welford, in ns: perf's stddev */
};

struct sv_thread;
struct sv_view;

struct sv_opts {
	FILE *out;			/* lines and summary */
	bool lines;			/* print calls (not --summary-only) */
	bool summary;			/* -s */
	bool per_machine;		/* --per-machine: a section each */
	struct sv_filter filter;
};

/* "openat,read" or "!futex": the syscall ids into f. -1 with a message
 * in err for an unknown name. */
int sv_parse_syscalls(const char *list, struct sv_filter *f, char *err,
		      size_t errlen);

struct sv_view *sv_new(const struct sv_opts *o);
void sv_free(struct sv_view *v);

/*
 * Reads the Trace.packet records in data: complete ones are taken, a
 * record cut short at the end is left. Returns the bytes taken, or -1 at
 * the first record that is not a TracePacket (*bad_offset says where).
 */
long sv_feed(struct sv_view *v, const uint8_t *data, size_t len,
	     uint64_t *bad_offset);

/* Pairs and prints every event before until_ts (CLOCK_BOOTTIME ns; all
 * of them with UINT64_MAX): what a growing file still gets is later. */
void sv_flush(struct sv_view *v, uint64_t until_ts);

/* The end: flush all, calls still open as pending, the summary if -s,
 * what was lost. */
void sv_finish(struct sv_view *v);

/* Counters for callers and tests. */
struct sv_counts {
	uint64_t calls, printed, pending, unpaired_exits, lost_events;
	uint64_t lost_bundles, strings, faults, truncated;
};
void sv_get_counts(const struct sv_view *v, struct sv_counts *c);

/* One summary cell (machine id, tid, syscall id), or NULL. */
const struct sv_stat *sv_stat_of(const struct sv_view *v, uint32_t machine,
				 int32_t tid, unsigned int nr);

/* perf trace -s's stddev(%): of the mean, relative to the mean. */
double sv_stddev_pct(const struct sv_stat *s);

/* syscalls_fmt.c: the decoded arguments and return value of a call. */
struct sv_call_fmt {
	const char *name;		/* NULL: "syscall_<id>" */
	unsigned int id;
	uint64_t args[6];
	unsigned int nr_args;		/* what the file holds */
	const struct sv_str *strs;
	size_t nr_strs;
};
void sv_fmt_args(FILE *f, const struct sv_call_fmt *c);
void sv_fmt_ret(FILE *f, const char *name, int64_t ret);

#endif /* PBT_SYSCALLS_VIEW_H */
