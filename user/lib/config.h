/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Perfetto TraceConfig files for pbtrace: load (text or binary), check,
 * and turn into the session the kernel is asked for. docs/config.md says
 * which fields do what and the warning/error policy.
 *
 * Every function returns 0 or -errno (-EINVAL for a bad config) and, on
 * failure, leaves one line for a person in err: what is wrong, where
 * ("file:line:col: " for text configs when known) and what to do.
 */
#ifndef PBT_CONFIG_H
#define PBT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/pbtrace.h>

#include "config.pb-c.h"
#include "genl.h"

typedef Perfetto__Protos__TraceConfig pbt_trace_config;

#define PBT_FILE_WRITE_PERIOD_DEFAULT_MS 5000	/* Perfetto's default */
#define PBT_FILE_WRITE_PERIOD_MIN_MS 100	/* Perfetto's minimum */
#define PBT_DRAIN_PERIOD_MIN_MS 10	/* ftrace_config.drain_period_ms */
#define PBT_SNAPSHOT_INTERVAL_MIN_MS 100	/* builtin_data_sources.snapshot_interval_ms */
#define PBT_SNAPSHOT_INTERVAL_DEFAULT_MS 10000	/* Perfetto's default */
#define PBT_BUFFER_MIN_KB 64
#define PBT_BUFFER_MAX_KB (1024 * 1024)	/* the kernel's limit per buffer */
#define PBT_CHUNK_KB 16		/* kernel default chunk size */

enum pbt_config_format {
	PBT_CONFIG_AUTO = 0,	/* by extension, else by content */
	PBT_CONFIG_TEXT,
	PBT_CONFIG_BINARY,
};

struct pbt_config {
	pbt_trace_config *tc;		/* unpacked; free with pbt_config_free */
	uint8_t *bytes;			/* serialized TraceConfig */
	size_t len;
	enum pbt_config_format format;	/* what the input turned out to be */
	char **warnings;		/* "file:line:col: text", one per line */
	size_t nr_warnings;
	/* What pbt_config_to_spec did that the config does not spell out
	 * (a buffer grown for ftrace_config.buffer_size_kb), one per line. */
	char **notices;
	size_t nr_notices;
	char name[PBTRACE_NAME_MAX];	/* session name, set by to_spec */
};

/*
 * Reads path (or "-" for stdin), detects text or binary (docs/config.md),
 * parses and validates it. Warnings for every field pbtrace does not
 * implement land in c->warnings. On error *c is left empty.
 */
int pbt_config_load(const char *path, enum pbt_config_format fmt,
		    struct pbt_config *c, char *err, size_t errlen);

/* The same from memory; name is used in messages ("<stdin>", a path). */
int pbt_config_parse(const void *data, size_t len, const char *name,
		     enum pbt_config_format fmt, struct pbt_config *c,
		     char *err, size_t errlen);

void pbt_config_free(struct pbt_config *c);

/* Text or binary for data named name (see docs/config.md). */
enum pbt_config_format pbt_config_detect(const char *name, const void *data,
					 size_t len);

/*
 * Fills spec from a loaded config: one kernel buffer per config buffer an
 * enabled linux.ftrace data source targets, with the union of their
 * events (syscall_events adds raw_syscalls/sys_enter and sys_exit and
 * their numbers become the buffer's syscall filter) and tids_to_trace.
 * Its size is buffers[i].size_kb, or ftrace_config.buffer_size_kb * nr_cpus
 * when that is larger (said in c->notices). kbuf_to_cfg[i] (may be NULL)
 * receives which config buffer kernel buffer i stands for. nr_cpus: CPUs
 * the buffers are split over (0: this machine's, pbt_kernel_cpus). spec
 * points into c: keep c alive while using it.
 */
int pbt_config_to_spec(struct pbt_config *c, struct pbt_session_spec *spec,
		       uint32_t kbuf_to_cfg[PBTRACE_MAX_BUFFERS],
		       unsigned int nr_cpus, char *err, size_t errlen);

/*
 * The CPUs the kernel splits a buffer over (nr_cpu_ids: the last possible
 * CPU + 1), from a /sys/devices/system/cpu/possible line ("0-3", "0,2-5"),
 * or from that file when possible is NULL; sysconf's count without it.
 */
long pbt_kernel_cpus(const char *possible);

/* tracectl's flags for the common case, as one config. */
struct pbt_config_flags {
	const char *const *events;	/* "group/name" */
	size_t nr_events;
	uint32_t size_kb;		/* 0: 8192 */
	uint32_t fill_policy;		/* PBTRACE_FILL_* */
	uint32_t duration_ms;		/* 0: until stopped */
	const char *output;		/* NULL: none */
	const char *name;		/* NULL: generated */
	const uint32_t *pids;		/* tids_to_trace */
	size_t nr_pids;
	uint32_t file_write_period_ms;	/* 0: write at stop; else stream */
	bool all_machines;		/* trace_all_machines: true */
	/* PBTRACE_TP_KERNEL_STACK (| _USER_STACK): a linux.perf source
	 * sampling stacks on each event; 0: none. */
	uint32_t stacks;
	const char *const *machines;	/* the events' machine_name_filter */
	size_t nr_machines;
};

/*
 * Builds the text config the flags stand for (see docs/config.md), then
 * loads it exactly as a file, so flag mode and file mode cannot differ.
 * text, if not NULL, receives the malloc'd config text.
 */
int pbt_config_from_flags(const struct pbt_config_flags *f,
			  struct pbt_config *c, char **text,
			  char *err, size_t errlen);

/*
 * A linux.perf source of a checked config (docs/stacks.md): its
 * tracepoint ("group:name" or "group/name", as written), filter (NULL:
 * none), period (1: every hit) and PBTRACE_TP_* flags (PERF_SAMPLE, and
 * KERNEL_STACK for kernel_frames, USER_STACK unless user_frames is
 * UNWIND_SKIP), for a PBTRACE_A_TP in its target buffer. Returns how many
 * the config has; the first @max are in @out.
 */
struct pbt_perf_tp {
	const char *event;
	const char *filter;
	uint32_t period;
	uint32_t flags;
	uint32_t target_buffer;
};
size_t pbt_config_perf_tps(const pbt_trace_config *tc, struct pbt_perf_tp *out,
			   size_t max);
/* A linux.perf source samples user stacks: traced then names their frames. */
bool pbt_config_has_stacks(const pbt_trace_config *tc);

/* "ring", "ring_buffer", "discard" (any case) -> PBTRACE_FILL_*, or -1. */
int pbt_fill_policy_from_name(const char *s);

#endif /* PBT_CONFIG_H */
