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
struct sv_counts;

struct sv_opts {
	FILE *out;			/* lines and summary */
	bool lines;			/* print calls (not --summary-only) */
	bool summary;			/* -s */
	bool per_machine;		/* --per-machine: a section each */
	struct sv_filter filter;
	size_t hold;			/* sv_report_file(): events held before
					 * pairing; 0: 65536 (tests: 1) */
	size_t index_max;		/* ...and chunks indexed ahead; 0: 2 Mi
					 * (tests: a few) */
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
 * the first bytes that are no Trace.packet record (*bad_offset says
 * where). A record whose TracePacket is unreadable is skipped whole and
 * counted (sv_first_bad()); the ones after it are read. Offsets count
 * from the first byte ever fed: feed a file in order, from its start.
 */
long sv_feed(struct sv_view *v, const uint8_t *data, size_t len,
	     uint64_t *bad_offset);

/*
 * One whole record (its tag, length and TracePacket: trace_next_record()
 * moved over it) found at file offset off: false when unreadable (skipped
 * and counted, as above). For a reader that feeds records out of file
 * order (report: each CPU's chunks in turn); sv_last_ts() is then the
 * latest event it held (0: none), sv_queued() the events waiting for
 * sv_flush().
 */
bool sv_feed_packet(struct sv_view *v, const uint8_t *rec, size_t len,
		    uint64_t off);
uint64_t sv_last_ts(const struct sv_view *v);
size_t sv_queued(const struct sv_view *v);

/*
 * A reader that feeds records out of file order gives the threads' names
 * in file order first, as a whole-file read would, with this: the
 * task-naming events of a TF_FTRACE_EVENTS packet (false: not one, or
 * unreadable; sv_feed_packet() says so). From the first call on,
 * sv_feed_packet() leaves task events to it.
 */
bool sv_feed_names(struct sv_view *v, const uint8_t *rec, size_t len);

/* A machine whose events come later: its summary section and line
 * prefix are in the order machines first appear in the file. */
void sv_add_machine(struct sv_view *v, uint32_t machine_id);

/* The first unreadable packet: its record's file offset, the offset of
 * the field that breaks it and what that is. false: none. */
bool sv_first_bad(const struct sv_view *v, uint64_t *off, uint64_t *at,
		  const char **what);

/*
 * tracectl report FILE (report_read.c): the whole of a finished file,
 * then sv_finish(), in bounded memory: the calls, the summary, and on
 * stderr what in the file could not be read; progress ("indexing",
 * "reading" N of M MiB) on stderr when show_progress; the view's counts
 * into *counts (NULL: not wanted). 0, or 1 when the file is not wholly a
 * trace or could not be read.
 */
int sv_report_file(const struct sv_opts *o, const char *path, int fd,
		   bool show_progress, struct sv_counts *counts);

/* Pairs and prints every event before until_ts (CLOCK_BOOTTIME ns; all
 * of them with UINT64_MAX): what a growing file still gets is later. */
void sv_flush(struct sv_view *v, uint64_t until_ts);
/* Events read and not flushed yet: a live view waits for more time. */
size_t sv_held(const struct sv_view *v);

/* The end: flush all, calls still open as pending, the summary if -s,
 * what was lost. */
void sv_finish(struct sv_view *v);

/* Counters for callers and tests. */
struct sv_counts {
	uint64_t calls, printed, pending, unpaired_exits, lost_events;
	uint64_t lost_bundles, strings, faults, truncated;
	uint64_t bad_packets;		/* unreadable, skipped */
	uint64_t late;			/* older than what was already shown */
	uint64_t events;		/* calls' enters, exits and strings */
	uint64_t held_max;		/* most of them waiting at once */
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
