/* SPDX-License-Identifier: GPL-2.0 */
/*
 * traced: the pbtrace daemon. It owns every session's output file: it
 * learns of sessions through the "sessions" multicast group, maps each
 * kernel buffer read-only, copies sealed chunks to the file verbatim and
 * adds its own packets (config, system info, clocks, processes, stats).
 *
 * One thread, one poll() loop: the notification socket, a signalfd, the
 * reader fd of every streaming buffer, and per-session deadlines (all in
 * CLOCK_BOOTTIME ns, the clock of the trace).
 *
 * The kernel keeps sessions and buffers when traced dies, so a restarted
 * traced adopts every live session and appends to its file (docs/traced.md).
 *
 * One file per job:
 *   main.c      the poll loop, startup, logging
 *   session.c   a session's life: its config, adopting, starting, the end
 *   buffers.c   kernel buffers and relayed machines' queues -> the file
 *   header.c    the packets traced writes itself at the start
 *   output.c    the file: writing records, opening it as the owner
 *   symbols.c   names for the user frames of stack samples, at the end
 *   notify.c    the kernel's session notifications
 *   timers.c    periodic work and deadlines
 *   machines.c  the machines file into the module, at start and on SIGHUP
 */
#ifndef _TRACED_H
#define _TRACED_H

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "genl.h"
#include "mappaths.h"
#include "packets.h"
#include "reader.h"
#include "symbolize.h"
#include "writer.h"

#define NS_PER_MS 1000000ull
#define CLOCK_PERIOD_MS PBT_SNAPSHOT_INTERVAL_DEFAULT_MS	/* clock_snapshot */
#define DEFAULT_WRITE_PERIOD_MS 5000	/* Perfetto's file_write_period_ms default */
#define MIN_WRITE_PERIOD_MS 100		/* as Perfetto enforces */
#define MIN_STATS_PERIOD_MS 10
#define FINAL_RESERVE 8192		/* room kept for the closing packets */
#define DUP_WINDOW (4u << 20)		/* tail searched for a re-read chunk */
#define REMOTE_PERIOD_MS 250		/* relayed machines' queue, while running */
#define REMOTE_EOF_WAIT_MS 3000		/* at stop; the kernel gives up after 2 s */
#define REMOTE_RETRY_MS 20
#define PIDFILE "/run/pbtrace/traced.pid"
#define PROC "/proc"

typedef Perfetto__Protos__TraceConfig TraceConfig;

enum state {
	S_CONFIGURED,		/* created, kernel START not seen yet */
	S_WAIT_TRIGGER,		/* START_TRACING: we start it on the trigger */
	S_RUNNING,
	S_DONE,
};

struct buffer {
	struct pbt_reader rd;
	uint64_t bytes_read;	/* copied to the file by this traced */
	uint64_t chunks_skipped;	/* refused: file limit or write error */
	int check_dup;		/* reattached: first chunk may be in the file */
	int hup;		/* POLLHUP seen: stop polling it */
	int remote;		/* relayed machines record into it */
	int remote_eof;		/* READ_REMOTE said nothing more will come */
	uint64_t remote_bytes;	/* their records written to the file */
	uint64_t remote_skipped;	/* their records refused: file limit */
	struct pbt_path_stats paths;	/* sampled mappings' paths put in */
	int path_warned;		/* PBTRACE_IOC_MAPPING_PATH failed, said */
};

struct timers {
	uint64_t stop, stop_delay, trigger_timeout, write, flush, drain, clock;
	uint64_t proc_stats, meminfo, vmstat, stat, remote;
};

struct session {
	struct session *next;
	uint32_t id;
	char name[PBTRACE_NAME_MAX];
	enum state state;
	TraceConfig *cfg;		/* NULL when none was stored */
	void *cfg_raw;
	size_t cfg_len;
	uint64_t start_ns;		/* kernel's BOOTTIME start, 0 if not yet */
	uint32_t owner_uid, owner_gid;	/* its file is opened as them */
	struct pbt_writer w;
	struct pbt_seq seq;
	size_t nr_buffers;
	struct buffer bufs[PBTRACE_MAX_BUFFERS];
	int header_done, streaming, failed, full;
	int reattached;		/* the file was started by an earlier traced */
	int stacks;		/* a linux.perf source samples user stacks */
	int closing;		/* final packets: the size reserve is theirs */
	uint32_t duration_ms, write_period_ms, flush_period_ms, drain_period_ms;
	uint32_t clock_period_ms;
	uint32_t proc_stats_ms, meminfo_ms, vmstat_ms, stat_ms;
	uint64_t limit;
	uint64_t flushes_requested, flushes_succeeded;
	/* Why traced ended the session early, for the DESTROY notification
	 * (PBTRACE_A_SESSION_ERROR); "" when it did not. */
	char error[PBTRACE_ERROR_MAX];
	struct timers t;
};


/*
 * A group member's session is written as that member (docs/security.md):
 * around every path traced touches for it (open, unlink), the filesystem
 * uid, gid and groups become the owner's, so the kernel's own checks
 * decide as they would for the member, and a path the member may not
 * write fails here too. The fd then stays usable as root's. traced has
 * one thread, so setgroups() is this thread's alone.
 */
struct owner_creds {
	int switched;
	int nr_saved;
	gid_t *saved;
};

extern struct pbt_nl *nl;
extern struct session *sessions;
extern uint8_t *remote_buf;
extern int use_syslog;
/* --machine-name: SystemInfo.machine_name; NULL: the nodename. */
extern const char *machine_name;

/* main.c */
void logmsg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
uint64_t now_ns(void);
uint64_t after_ms(uint64_t from, uint32_t ms);

/* output.c */
void be_self(struct owner_creds *c);
int be_owner(const struct session *s, struct owner_creds *c, char *err,
	size_t errlen);
int open_as_owner(struct session *s, const char *path, int append, char *err,
	size_t errlen);
void set_error(struct session *s, const char *err);
void fail_session(struct session *s, const char *err);
int emit_bytes(struct session *s, const void *p, size_t len, uint64_t reserve);
uint64_t file_reserve(const struct session *s);
int emit(struct session *s, int built, struct pbt_rec *r);

/* buffers.c */
void drain_buffer(struct session *s, struct buffer *b);
void drain_remote(struct session *s, struct buffer *b);
void drain_all(struct session *s);
int remote_pending(const struct session *s);
void drain_remote_to_eof(struct session *s);
int attach_buffers(struct session *s, const struct pbt_session_info *in,
	int appended);
void write_kernel_stats(struct session *s, int end);
void log_losses(struct session *s);
void flush_kernel(struct session *s);

/* header.c */
void write_service_event(struct session *s, enum pbt_service_event ev,
	uint64_t ts);
void write_clock(struct session *s);
void write_process_tree(struct session *s);
void write_header(struct session *s);

/* session.c */
struct session *find_session(uint32_t id);
void free_session(struct session *s);
void begin_running(struct session *s, uint64_t start_ns);
void finish_session(struct session *s, const char *why);
void stop_session(struct session *s, const char *why);
void adopt_id(uint32_t id, int fresh);
int sync_sessions(int fresh);
void on_trigger(struct session *s, const char *name);

/* symbols.c */
void write_symbols(struct session *s);

/* notify.c */
int read_notifications(void);

/* timers.c */
int run_timers(struct session *s, uint64_t now);
uint64_t next_deadline(const struct session *s);

/* machines.c: @given: named by --machines, so missing is an error */
void load_machines(const char *path, bool given);

#endif /* _TRACED_H */
