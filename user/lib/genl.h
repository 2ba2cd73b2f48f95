/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Client of the "pbtrace" generic netlink family (libnl-genl-3), shared by
 * traced and tracectl. Every call is synchronous on one request socket;
 * notifications arrive on a second socket (pbt_nl_subscribe) so a reply is
 * never mixed with a multicast.
 *
 * Return values: 0 (or a positive count where said) on success, -errno on
 * failure. After a failure pbt_nl_error() holds a line for a person: what
 * failed and the kernel's extack message when it sent one.
 *
 * Session life as traced and tracectl agree on it:
 *   tracectl NEW_SESSION + START_SESSION -> traced (multicast NEW/START)
 *   attaches the buffers and writes the file; tracectl STOP_SESSION ->
 *   traced drains the buffers, finishes the file, then DESTROYs the
 *   session. So "the file is complete" == the DESTROY_SESSION notification
 *   for that id; tracectl stop --wait and record wait for exactly that.
 */
#ifndef PBT_GENL_H
#define PBT_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/pbtrace.h>
#include "tp_layout.h"		/* kmod/core: struct pbt_tp_layout */

#define PBT_MAX_EVENTS 32

struct pbt_nl;
struct nl_msg;
struct nlmsghdr;
struct nlattr;

/* Fails with "pbtrace module not loaded: run 'modprobe pbtrace'" (-ENOENT)
 * when the family does not exist. */
struct pbt_nl *pbt_nl_open(char *err, size_t errlen);
void pbt_nl_close(struct pbt_nl *nl);
const char *pbt_nl_error(struct pbt_nl *nl);

/*
 * One PBTRACE_A_TP: any tracepoint, its layout as tracefs describes it
 * (user/lib/tracefs.c fills it), written as layout->proto_id.
 */
struct pbt_tp_spec {
	const struct pbt_tp_layout *layout;	/* group, name, proto_id, fields */
	uint32_t id;			/* tracefs events/G/N/id */
	uint32_t flags;			/* PBTRACE_TP_* */
	const char *filter;		/* ftrace filter syntax; NULL: none */
	uint32_t period;		/* PERF_SAMPLE every Nth; 0: not sent */
};

/*
 * A linux.perf source's tracepoint in this buffer (config.c): resolving
 * the events (tracepoints.h) puts its flags (PBTRACE_TP_PERF_SAMPLE and
 * the stacks), period and filter on the tracepoint's PBTRACE_A_TP.
 */
#define PBT_MAX_SAMPLES 32
struct pbt_sample_spec {
	const char *event;		/* "group:name" or "group/name" */
	const char *filter;		/* NULL: none */
	uint32_t period;
	uint32_t flags;			/* PBTRACE_TP_PERF_SAMPLE | _*_STACK */
};

struct pbt_buffer_spec {
	uint32_t size_kb;		/* total over all CPUs */
	uint32_t chunk_kb;		/* 0: kernel default (16) */
	uint32_t fill_policy;		/* enum pbtrace_fill_policy */
	const char *events[PBT_MAX_EVENTS];	/* "group/name" */
	size_t nr_events;
	/* events[i]'s ftrace filter, NULL: none (tracectl --filter); an
	 * event with one goes to tps, which carry it (tracepoints.h). */
	const char *filters[PBT_MAX_EVENTS];
	uint32_t pids[PBTRACE_MAX_PIDS];
	size_t nr_pids;
	/* PBTRACE_A_BUFFER_MACHINES: relayed machines' names,
	 * PBTRACE_MACHINE_HOST, PBTRACE_MACHINE_ANY. None: this machine only
	 * (and the attribute is not sent, so an older module still works). */
	const char *machines[PBTRACE_MAX_MACHINE_NAMES];
	size_t nr_machines;
	/* PBTRACE_A_BUFFER_SYSCALLS: raw_syscalls events only for these
	 * syscall numbers. None: every syscall (the attribute is not sent). */
	uint32_t syscalls[PBTRACE_MAX_SYSCALLS];
	size_t nr_syscalls;
	/* PBTRACE_A_BUFFER_FULL_SCHED: no compact_sched (sent only if set,
	 * so an older module still works with the default). */
	bool full_sched;
	/* PBTRACE_A_BUFFER_FOLLOW_FORKS: the pid filter takes in every
	 * thread and process its threads create (sent only if set). */
	bool follow_forks;
	/* PBTRACE_A_BUFFER_WATERMARK_MS: a live watermark this often
	 * (pbt_nl_get_watermark); 0: none, not sent. _EXPEDITED: its
	 * rounds wait for expedited grace periods (sent only if set). */
	uint32_t watermark_ms;
	bool watermark_expedited;
	/* PBTRACE_A_BUFFER_TRACEPOINTS (sent only if any); with some,
	 * events may be empty. */
	const struct pbt_tp_spec *tps;
	size_t nr_tps;
	/* STACKS: turned into tps' flags by pbt_spec_resolve_events. */
	struct pbt_sample_spec samples[PBT_MAX_SAMPLES];
	size_t nr_samples;
	/* pbt_spec_resolve_events' memory (tracepoints.h): the tps, their
	 * layouts and the native names events[] point to. */
	void *resolved;
};

struct pbt_session_spec {
	const char *name;
	const void *config;		/* serialized TraceConfig, may be NULL */
	size_t config_len;
	const char *output;		/* may be NULL */
	size_t nr_buffers;
	struct pbt_buffer_spec buffers[PBTRACE_MAX_BUFFERS];
};

int pbt_nl_new_session(struct pbt_nl *nl, const struct pbt_session_spec *s,
		       uint32_t *id);
/* SET_SESSION: give session @id, not started yet, this description instead
 * (its name must stay). -EBUSY once it has started. */
int pbt_nl_set_session(struct pbt_nl *nl, uint32_t id,
		       const struct pbt_session_spec *s);
/* cmd: PBTRACE_CMD_START_SESSION, _STOP_SESSION, _FLUSH_SESSION,
 * _DESTROY_SESSION. */
int pbt_nl_session_cmd(struct pbt_nl *nl, int cmd, uint32_t id);
/*
 * DESTROY_SESSION with PBTRACE_A_SESSION_ERROR: why traced ended the
 * session early (cut to PBTRACE_ERROR_MAX - 1 bytes). A module that does
 * not know the attribute refuses it (strict policy, -EINVAL): then the
 * session is destroyed without it and 1 is returned, so the caller can say
 * the error did not reach tracectl. error NULL or "": a plain DESTROY.
 */
int pbt_nl_destroy_session(struct pbt_nl *nl, uint32_t id, const char *error);

/* A tracepoint by name as the kernel echoes it (GET_SESSION_TRACEPOINTS). */
struct pbt_tp_info {
	char *name;			/* "group/name", malloc'd */
	uint32_t id, flags;		/* tracefs id, PBTRACE_TP_* */
	uint32_t proto_id, period;
	char *filter;			/* as given, malloc'd; NULL: none */
};

struct pbt_buffer_info {
	uint32_t size_kb, chunk_kb, fill_policy;
	size_t nr_events;
	char *events[PBT_MAX_EVENTS];	/* malloc'd */
	size_t nr_pids;
	uint32_t pids[PBTRACE_MAX_PIDS];
	size_t nr_cpus;
	struct pbtrace_cpu_stats *cpus;	/* malloc'd, nr_cpus entries:
					 * pbt_nl_get_cpu_stats fills them */
	size_t nr_machines;		/* 0: this machine only */
	char machines[PBTRACE_MAX_MACHINE_NAMES][PBTRACE_NAME_MAX];
	size_t nr_syscalls;		/* 0: every syscall */
	uint32_t syscalls[PBTRACE_MAX_SYSCALLS];
	bool full_sched;		/* sched events without compact_sched */
	bool follow_forks;		/* pid filter takes in children */
	uint32_t watermark_ms;		/* live watermark period, 0: none */
	bool watermark_expedited;	/* with expedited grace periods */
	size_t nr_tps;			/* pbt_nl_get_session_tracepoints() */
	struct pbt_tp_info *tps;	/* malloc'd */
};

/* One relayed machine's part in a session (PBTRACE_A_MACHINE). */
#define PBT_PEER_MAX 32
struct pbt_machine_info {
	char name[PBTRACE_NAME_MAX + 1];	/* HELLO names are up to 64 */
	char peer[PBT_PEER_MAX];		/* "cid 5", "tcp 10.0.2.2 key" */
	struct pbtrace_machine_stats st;
};

struct pbt_session_info {
	uint32_t id, state;		/* enum pbtrace_session_state */
	char name[PBTRACE_NAME_MAX];
	char *output;			/* malloc'd or NULL */
	void *config;			/* malloc'd or NULL */
	size_t config_len;
	uint64_t start_ns, stop_ns;	/* CLOCK_BOOTTIME, 0 if not yet */
	uint32_t daemon_pid;		/* registered traced, 0 if none */
	uint32_t owner_uid, owner_gid;	/* who created it: traced writes
					 * its file with these */
	size_t nr_buffers;
	struct pbt_buffer_info buffers[PBTRACE_MAX_BUFFERS];
	int relay;			/* PBTRACE_A_SESSION_RELAY: the guest
					 * side of a host's session */
	/* pbt_nl_get_session_machines fills these (GET_SESSION has none) */
	size_t nr_machines;
	struct pbt_machine_info *machines;	/* malloc'd or NULL */
};

/* -ENOENT when no session has that id. */
int pbt_nl_get_session(struct pbt_nl *nl, uint32_t id,
		       struct pbt_session_info *out);
/* *out is a malloc'd array of *n; free with pbt_session_infos_free. */
int pbt_nl_list_sessions(struct pbt_nl *nl, struct pbt_session_info **out,
			 size_t *n);
/*
 * GET_CPU_STATS: fill each buffer's cpus/nr_cpus of @s (from GET_SESSION or
 * the list) with the kernel's per-CPU counters, one per possible CPU.
 * -ENOENT when the session is gone; on any error @s is left as it was (a
 * module without the command sent them in GET_SESSION already).
 */
int pbt_nl_get_cpu_stats(struct pbt_nl *nl, struct pbt_session_info *s);
/*
 * GET_SESSION_MACHINES: fill machines/nr_machines of @s with every relayed
 * machine that recorded into it, in id order. -ENOENT when the session is
 * gone; on any error @s is left as it was.
 */
int pbt_nl_get_session_machines(struct pbt_nl *nl, struct pbt_session_info *s);
/*
 * Fills each buffer's tracepoints by name of @s (from GET_SESSION):
 * -ENOENT when the session is gone; on any error @s is left as it was.
 */
int pbt_nl_get_session_tracepoints(struct pbt_nl *nl,
				   struct pbt_session_info *s);
void pbt_tp_infos_free(struct pbt_tp_info *v, size_t n);
void pbt_session_info_free(struct pbt_session_info *s);	/* contents only */

/*
 * GET_WATERMARK: a started session's live watermarks, the lowest over the
 * buffers that have one (PBTRACE_A_BUFFER_WATERMARK_MS), CLOCK_BOOTTIME
 * ns. read_ns: every event stamped before it is in the file traced writes
 * (its chunk was read and put back), or was counted lost, so a follower of
 * the file may print up to it in time order; published_ns: every event
 * before it is sealed (traced may still be copying it). Returns how many
 * buffers have one (0: none, or the session has not started), -ENOENT
 * once the session is gone, -EOPNOTSUPP from a module without the command.
 */
struct pbt_watermark_info {
	uint32_t state;			/* enum pbtrace_session_state */
	uint64_t published_ns, read_ns;	/* ~0 once stopped and all read */
};
int pbt_nl_get_watermark(struct pbt_nl *nl, uint32_t id,
			 struct pbt_watermark_info *w);
void pbt_session_infos_free(struct pbt_session_info *s, size_t n);

/* Calls cb for every event the module knows; a non-zero cb return stops
 * the walk and is returned. */
int pbt_nl_list_events(struct pbt_nl *nl,
		       int (*cb)(const char *name, int available, void *arg),
		       void *arg);
int pbt_nl_trigger(struct pbt_nl *nl, const char *name);

/* traced: mark this socket as the daemon's (-EBUSY if another is live). */
int pbt_nl_register_daemon(struct pbt_nl *nl);
/* *pid: the registered daemon's pid (as seen at registration), 0 if none. */
int pbt_nl_daemon_pid(struct pbt_nl *nl, uint32_t *pid);

/* Join the "sessions" multicast group on a separate socket. */
int pbt_nl_subscribe(struct pbt_nl *nl);
int pbt_nl_notify_fd(struct pbt_nl *nl);	/* poll() it for POLLIN */

struct pbt_notify {
	int cmd;			/* PBTRACE_CMD_* that happened */
	uint32_t session_id;		/* 0 for TRIGGER and DAEMON_GONE */
	char trigger[PBTRACE_NAME_MAX];	/* TRIGGER only */
	/* DESTROY only: PBTRACE_A_SESSION_ERROR, why traced ended the session
	 * early; "" when it ended normally. */
	char error[PBTRACE_ERROR_MAX];
};

/* 1: *n filled, 0: nothing pending (non-blocking), -errno. -ENOBUFS means
 * notifications were lost: re-read state with pbt_nl_list_sessions. */
int pbt_nl_next_notify(struct pbt_nl *nl, struct pbt_notify *n);

/* Four lines for a person (tracectl status): who, what arrived, what was
 * lost where, the clock. Returns what snprintf does. */
int pbt_machine_describe(char *buf, size_t n, const struct pbt_machine_info *m);

/* The endpoint's machine table (GET_MACHINES; CAP_SYS_ADMIN). */
struct pbt_endpoint_machine_info {
	struct pbtrace_endpoint_machine m;
	char name[PBTRACE_NAME_MAX + 1];	/* the one it has here */
	char claimed[PBTRACE_NAME_MAX + 1];	/* its HELLO's */
	char peer[PBT_PEER_MAX];
	char sysname[PBTRACE_NAME_MAX + 1], release[PBTRACE_NAME_MAX + 1];
	char arch[PBTRACE_NAME_MAX + 1];
};

/* *out: a malloc'd array of *n, in machine id order. */
int pbt_nl_list_machines(struct pbt_nl *nl,
			 struct pbt_endpoint_machine_info **out, size_t *n);

/* The names table (GET_NAMES; CAP_SYS_ADMIN): never a key. */
struct pbt_name_info {
	char name[PBTRACE_NAME_MAX];
	uint32_t cid;			/* unless PBTRACE_NAME_KEYED */
	uint32_t flags;			/* PBTRACE_NAME_* */
	uint32_t line;			/* 0: a module parameter's */
};

int pbt_nl_list_names(struct pbt_nl *nl, struct pbt_name_info **out,
		      size_t *n);

/* One entry for LOAD_NAMES (user/lib/machines_file.h reads a file). */
struct pbt_name_spec {
	char name[PBTRACE_NAME_MAX];
	uint32_t cid;			/* when !key_len */
	uint8_t key[PBTRACE_NAME_KEY_MAX];
	size_t key_len;			/* 0: a CID's name */
	uint32_t line;
};

/*
 * Make @n entries the names table's loaded part (LOAD_NAMES in pieces of
 * @per_msg, 0: a default that fits a 64 KiB nest, then the commit). On
 * success *count is the table's size and *evicted how many online machines
 * the change disconnected. On failure the table is as it was and
 * pbt_nl_error() says why (the kernel names the entry's line).
 */
int pbt_nl_load_names(struct pbt_nl *nl, const struct pbt_name_spec *e,
		      size_t n, size_t per_msg, uint32_t *count,
		      uint32_t *evicted);

/* The request machinery of genl.c, for genl_machines.c. */
/* @wipe: zero the request before it is freed (it carries keys). */
int pbt_genl_run(struct pbt_nl *nl, struct nl_msg *msg,
		 int (*parse)(struct nlattr **tb, void *arg), void *arg,
		 bool wipe);
/* @size 0: libnl's default (a page). */
struct nl_msg *pbt_genl_msg(struct pbt_nl *nl, int cmd, int flags,
			    size_t size);
void pbt_genl_set_err(struct pbt_nl *nl, const char *msg);

/*
 * The message halves, for the unit tests: the NEW_SESSION attributes of
 * a spec, and a GET_SESSION reply (a whole generic netlink message) parsed
 * into *out (free with pbt_session_info_free; freed on error).
 */
int pbt_nl_put_session(struct nl_msg *msg, const struct pbt_session_spec *s);
int pbt_nl_parse_session(struct nlmsghdr *nlh, struct pbt_session_info *out);
/* A GET_SESSION_MACHINES message, its machines appended to @s's. */
int pbt_nl_parse_session_machines(struct nlmsghdr *nlh,
				  struct pbt_session_info *s);
/* A notification (a whole generic netlink message) into *n: 1, or 0 when
 * it is not one. */
int pbt_nl_parse_notify(struct nlmsghdr *nlh, struct pbt_notify *n);

#endif /* PBT_GENL_H */
