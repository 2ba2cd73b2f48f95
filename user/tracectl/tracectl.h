/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracectl: start, stop and watch pbtrace sessions over generic netlink,
 * one file per command (as git's builtin/), what they share in common.c.
 *
 * tracectl never touches the trace file: it describes the session to the
 * kernel (buffers, events, the TraceConfig and the output path) and traced,
 * which hears about every session on the "sessions" multicast group, writes
 * the file. When traced has finished a file it destroys the session; that
 * DESTROY_SESSION notification is what "stop --wait" and "record" wait for.
 *
 * Exit codes are part of the interface (see usage() and docs/tracectl.md).
 */
#ifndef PBT_TRACECTL_H
#define PBT_TRACECTL_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "genl.h"
#include "syscalls.h"
#include "tracefs.h"
#include "tracepoints.h"
#include "trace.pb-c.h"
#include "syscalls_view.h"

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* anything else, incl. bad usage */
	EXIT_NO_MODULE = 2,
	EXIT_NO_TRACED = 3,
	EXIT_PERM = 4,
	EXIT_BAD_EVENT = 5,
	EXIT_BAD_CONFIG = 6,
	EXIT_BAD_OUTPUT = 7,
	EXIT_NAME_IN_USE = 8,
	EXIT_INCOMPLETE = 9,	/* traced ended the session early, or the
				 * file lacks its closing trace_stats */
	EXIT_INTERRUPTED = 130,
};

#define DEFAULT_RECORD_MS 10000
#define DEFAULT_SIZE_KB 8192
/*
 * Without -c, sessions stream into their file, as trace-cmd record, perf
 * record and lttng do: traced copies each chunk as it is sealed and
 * flushes the partly filled ones this often, so the file grows while
 * tracing and a recording keeps all of its workload. --ring asks for
 * Perfetto's flight recorder instead (read at stop).
 */
#define STREAM_PERIOD_MS 1000
#define WAIT_TICK_MS 200
#define SUMMARY_MACHINES 16	/* a line each; more: one line for all */
#define SUMMARY_ID_SET 8192	/* relayed machine ids counted (a hash set) */

/* Set by SIGINT/SIGTERM (main.c): record and stop --wait end cleanly. */
extern volatile sig_atomic_t interrupted;

struct event_list {
	char names[64][PBTRACE_NAME_MAX];
	bool available[64];
	size_t n;
};

struct start_opts {
	const char *config;
	const char *events[PBT_MAX_EVENTS];
	size_t nr_events;
	const char *filters[PBT_MAX_EVENTS];	/* --filter of events[i] */
	uint32_t size_kb;
	int fill;			/* -1: not given */
	long long duration_ms;		/* -1: not given */
	const char *output;
	uint32_t pids[PBTRACE_MAX_PIDS];
	size_t nr_pids;
	const char *name;
	const char *machines[PBTRACE_MAX_MACHINE_NAMES];
	size_t nr_machines;
	bool all_machines;
	bool ring;			/* --ring: flight recorder, read at stop */
	uint32_t stacks;		/* --stacks: PBTRACE_TP_*_STACK */
	bool flags_given;		/* any of -e -b --fill --ring -t -p -m -A */
};

/* A session being set up: the config and what the kernel is told. */
struct session {
	struct pbt_config cfg;
	struct pbt_session_spec spec;
	char *output;			/* absolute */
	char name[PBTRACE_NAME_MAX];
	uint32_t id;
	long long duration_ms;		/* 0: until stopped */
	bool wait_trigger;		/* START_TRACING: traced starts it */
	char error[PBTRACE_ERROR_MAX];	/* traced ended it early: why */
};

enum { OPT_FILL = 256, OPT_RING, OPT_WAIT, OPT_WATCH, OPT_HELP, OPT_STACKS,
       OPT_FILTER };

struct progress {
	uint64_t events, lost, bytes;
	bool gone;		/* session destroyed */
};

/* A relayed machine's part of the file (packets with its machine_id). */
struct summary_machine {
	uint32_t id;
	char name[PBTRACE_NAME_MAX + 1];
	uint64_t packets, ftrace_events;
};

#define SUMMARY_GENERIC 64

struct summary {
	struct summary_machine machines[SUMMARY_MACHINES];
	size_t nr_machines;
	/* Every relayed machine, however many: ids seen (id + 1, 0: free). */
	uint32_t relayed_ids[SUMMARY_ID_SET];
	size_t nr_relayed;
	uint64_t relayed_packets, relayed_events;
	uint64_t packets, ftrace_events, bundles_lost, dropped;
	uint64_t first_ts, last_ts;
	uint64_t by_kind[8];		/* see kind_names */
	uint64_t by_event[600];		/* FtraceEvent oneof field number */
	/* Generic events (FtraceEvent fields >= 65536), named by the
	 * bundles' generic_event_descriptors. */
	struct {
		uint32_t field_id;
		char name[2 * PBTRACE_NAME_MAX];
		uint64_t n;
	} generic[SUMMARY_GENERIC];
	size_t nr_generic;
	size_t processes, threads;
	char machine[64], release[64];
	bool bad;
	uint64_t bad_offset;
	bool final_stats;	/* this machine's trace_stats: traced's last */
	uint64_t size;
	int read_err;		/* errno when the file could not be read */
};

/* common.c */
void errf(const char *fmt, ...);
int usage_error(const char *fmt, ...);
int nl_fail(struct pbt_nl *nl, int err, const char *what);
int subscribe(struct pbt_nl *nl);		/* EPERM: poll instead */
struct pbt_nl *open_nl(int *code);
uint64_t boottime_ns(void);
uint64_t monotonic_ms(void);
long long parse_duration_ms(const char *s);
int parse_u32(const char *s, uint32_t *out);
void fmt_bytes(char *buf, size_t len, double v);
int collect_event(const char *name, int available, void *arg);
int event_state(const struct event_list *l, const char *name);
int check_events(const struct event_list *l, struct pbt_session_spec *spec);
int find_session(struct pbt_nl *nl, const char *name, uint32_t *id,
		 char *found, size_t len);
/* start.c */
int parse_start(int argc, char **argv, struct start_opts *o);
void session_free(struct session *s);
int prepare(struct pbt_nl *nl, const struct start_opts *o,
	    struct session *s);
int create_and_start(struct pbt_nl *nl, struct session *s);
int cmd_start(int argc, char **argv);
/* reconfigure.c */
int cmd_reconfigure(int argc, char **argv);
/* wait.c */
int poll_session(struct pbt_nl *nl, uint32_t id, const char *output,
		 struct progress *p);
int drain_notifications(struct pbt_nl *nl, uint32_t id, char *error,
			size_t errlen);
void print_progress(const struct progress *p, uint64_t elapsed_ms,
		    long long duration_ms);
int wait_file_done(struct pbt_nl *nl, uint32_t id, const char *output,
		   char *error, size_t errlen);
int stop_session(struct pbt_nl *nl, uint32_t id);
/* stop.c */
int cmd_stop(int argc, char **argv);
/* status.c */
int cmd_status(int argc, char **argv);
int cmd_machines(int argc, char **argv);
/* summary.c */
void summarize(const uint8_t *data, size_t len, struct summary *s);
int read_trace(const char *path, struct summary *s);
void print_summary(const char *path, const struct summary *s);
int check_finished(uint32_t id, const char *path, const char *error,
		   struct summary *s);
/* record.c */
int cmd_record(int argc, char **argv);
/* trigger.c */
int cmd_trigger(int argc, char **argv);
/* list_events.c */
int cmd_list_events(int argc, char **argv);
/* main.c */
void usage(FILE *f);
/* report.c: the syscall view of a file; its options are trace's too */
enum { OPT_SV_DURATION = 300, OPT_SV_FAILURE, OPT_SV_SUMMARY_ONLY,
       OPT_SV_MACHINE, OPT_SV_PER_MACHINE };
int parse_view_opt(int c, const char *arg, struct sv_opts *o);
int feed_file(struct sv_view *v, const char *path, int fd, uint64_t *off,
	      bool final);
int cmd_report(int argc, char **argv);
/* trace.c */
int cmd_trace(int argc, char **argv);
/* symbolize.c */
int cmd_symbolize(int argc, char **argv);
/* merge.c */
int cmd_merge(int argc, char **argv);

#endif /* PBT_TRACECTL_H */
