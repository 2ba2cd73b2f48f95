/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interfaces between the files of pbtrace.ko. One file per job:
 *
 *   main.c      module init/exit, module parameters
 *   events.c    the table of traceable events (name <-> id, availability)
 *   probes.c    tracepoint discovery, registration, the probe functions
 *   buffer.c    per-CPU rings of chunks: setup, teardown, hotplug (buffer.h)
 *   write.c     the probes' side: filters, events into the open chunk
 *   chunk.c     a chunk's life: taken, opened, closed, sealed
 *   flush.c     sealing from outside the probes: flush, watermark rounds
 *   reader.c    the readers' side: the oldest sealed chunk, put back
 *   session.c   sessions: lifecycle, registry, which buffers want an event
 *   device.c    /dev/pbtrace: attach, mmap, GET/PUT_CHUNK, poll
 *   netlink*.c  the "pbtrace" generic netlink family (netlink.h)
 *   tracepoint.c  any tracepoint by name: perf kernel counters, PBTRACE_A_TP
 *   watermark.c a buffer's live watermark: paced seals, RCU, what is read
 *   core/       plain C shared with userspace: protobuf encoder (pb.h)
 */
#ifndef _PBTRACE_H
#define _PBTRACE_H

#include <linux/types.h>
#include <linux/jump_label.h>
#include <linux/kref.h>
#include <linux/wait.h>
#include <linux/list.h>
#include <linux/uidgid.h>
#include <uapi/linux/pbtrace.h>

/* events.c: ids are indexes into the event table, stable within one build. */
enum pbt_event_id {
	PBT_EV_SCHED_SWITCH,
	PBT_EV_SCHED_WAKING,
	PBT_EV_SCHED_WAKEUP,
	PBT_EV_SCHED_WAKEUP_NEW,
	PBT_EV_SCHED_PROCESS_FORK,
	PBT_EV_SCHED_PROCESS_EXEC,
	PBT_EV_SCHED_PROCESS_EXIT,
	PBT_EV_SCHED_PROCESS_FREE,
	PBT_EV_SCHED_MIGRATE_TASK,
	PBT_EV_TASK_NEWTASK,
	PBT_EV_TASK_RENAME,
	PBT_EV_SYS_ENTER,
	PBT_EV_SYS_EXIT,
	PBT_EV_IRQ_HANDLER_ENTRY,
	PBT_EV_IRQ_HANDLER_EXIT,
	PBT_EV_SOFTIRQ_ENTRY,
	PBT_EV_SOFTIRQ_EXIT,
	PBT_EV_SOFTIRQ_RAISE,
	PBT_EV_BLOCK_RQ_ISSUE,
	PBT_EV_BLOCK_RQ_COMPLETE,
	PBT_EV_CPU_FREQUENCY,
	PBT_EV_CPU_IDLE,
	PBT_NR_EVENTS
};

/*
 * Not a tracepoint: the string arguments of a sys_enter, a second event
 * probes.c writes after it. Every buffer with sys_enter has it, and its
 * syscall filter applies.
 */
#define PBT_EV_SYS_STRINGS PBT_NR_EVENTS
/*
 * Written instead into a member's buffer when the member may not read the
 * task's memory (pbt_may_read()): the syscall's string arguments left out,
 * each named "<arg>_omitted" = 1. Only a member's buffer has it.
 */
#define PBT_EV_SYS_STRINGS_OMITTED (PBT_NR_EVENTS + 1)

int pbt_event_lookup(const char *name);		/* "group/name" -> id, or -ENOENT */
const char *pbt_event_name(int id);		/* id -> "group/name" */
bool pbt_event_available(int id);		/* tracepoint exists in this kernel */
const char *pbt_event_tp_name(int id);		/* "sched_switch" */

/* probes.c: reference-counted registration, called with pbt_sessions_lock. */
int pbt_probes_init(void);			/* find tracepoints */
void pbt_probes_exit(void);
int pbt_probe_get(int id);			/* register on first user */
void pbt_probe_put(int id);			/* unregister on last user */
void pbt_probes_sync(void);			/* tracepoint_synchronize_unregister */
bool pbt_probe_found(int id);			/* tracepoint exists (after init) */

/* session.c */
struct pbt_buffer;				/* buffer.c, opaque elsewhere */
struct netlink_ext_ack;
struct pbt_tp_params;				/* tracepoint.c's, below */

struct pbt_buffer_params {
	u32 size_kb;
	u32 chunk_kb;
	u32 fill_policy;			/* enum pbtrace_fill_policy */
	u64 events;				/* BIT_ULL(enum pbt_event_id) */
	u32 nr_pids;
	u32 pids[PBTRACE_MAX_PIDS];
	/*
	 * raw_syscalls filter: NULL records every syscall, else a bitmap of
	 * NR_syscalls bits (bitmap_zalloc'd, owned like output/config).
	 */
	unsigned long *syscalls;
	bool full_sched;			/* no CompactSched: every event in full */
	bool follow_forks;			/* pid filter adds children */
	u32 watermark_ms;			/* live watermark period; 0: none */
	bool watermark_expedited;		/* its rounds' grace periods */
	/* Per-CPU bytes for pbt_buffer_packet()'s writer; 0: none. */
	u32 scratch_size;
	u32 nr_machines;			/* 0: this machine only */
	char machines[PBTRACE_MAX_MACHINE_NAMES][PBTRACE_NAME_MAX];
	/* Any tracepoint (PBTRACE_A_BUFFER_TRACEPOINTS): kvmalloc'd [nr_tps] */
	u32 nr_tps;
	struct pbt_tp_params *tps;
	/*
	 * A member's session's buffer (session.c sets them from the session):
	 * its strings and user stacks are only of tasks pbt_may_read() lets
	 * owner_uid/_gid read.
	 */
	bool member;
	kuid_t owner_uid;
	kgid_t owner_gid;
};

/*
 * What a group member's sessions may take, all of one uid's together
 * (netlink_access.c's group_max_* parameters, docs/security.md). A caller
 * with CAP_SYS_ADMIN has none: member false.
 */
struct pbt_limits {			/* a member's (@member); root has none */
	u64 max_bytes;				/* kernel memory, as allocated */
	u32 max_sessions;
	u32 max_counters;			/* tracepoints x online CPUs */
	u64 max_filter_cost;			/* one filter: pbt_filter_cost() */
	u64 max_filters_cost;			/* a session's filters together */
};

struct pbt_session_params {
	char name[PBTRACE_NAME_MAX];
	char *output;				/* kmalloc'd; owned by session */
	void *config;				/* kvmalloc'd; owned by session */
	u32 config_len;
	u32 nr_buffers;
	bool relay;				/* kmod/relay/ records it for our host */
	/* Who created it (euid/egid): root, or a member of the group= gid. */
	kuid_t owner_uid;
	kgid_t owner_gid;
	/*
	 * The creator's credentials (get_current_cred() at NEW_SESSION; NULL:
	 * the kernel's own, a relay's session): its perf counters are created
	 * under them, so perf_event_paranoid and the LSM decide as for that
	 * user's perf. @member: the creator had no CAP_SYS_ADMIN, so
	 * tracepoint.c also refuses what only root may record.
	 */
	const struct cred *cred;
	bool member;
	struct pbt_limits limits;		/* the caller's, at NEW or SET */
	struct pbt_buffer_params buffers[PBTRACE_MAX_BUFFERS];
};

struct pbt_session {
	struct kref ref;
	u32 id;
	u32 state;				/* enum pbtrace_session_state */
	u64 start_ns, stop_ns;			/* BOOTTIME */
	struct pbt_session_params params;
	struct pbt_buffer *buffers[PBTRACE_MAX_BUFFERS];
	wait_queue_head_t wq;			/* readers poll here */
	struct list_head node;			/* registry; empty once destroyed */
	unsigned int slot;			/* unique among live: sequence ids */
	struct pbt_remote *remote;		/* remote.c: relayed machines' data */
	/* watermark.c's, per buffer with watermark_ms, from the start on */
	struct pbt_watermark *wm[PBTRACE_MAX_BUFFERS];
	/* What it holds, for its owner's budget (session.c) */
	u64 bytes;				/* allocated, all of it */
	u32 counters;				/* perf counters once started */
};

extern struct mutex pbt_sessions_lock;		/* serializes control ops */

int pbt_session_new(struct pbt_session_params *p, u32 *id,
		    struct netlink_ext_ack *extack);	/* takes output/config */
/*
 * SET_SESSION: what p carries replaces the session's own (set_* flags say
 * which), taking ownership of p's allocations whatever the outcome.
 */
#define PBT_SET_CONFIG BIT(0)
#define PBT_SET_OUTPUT BIT(1)
#define PBT_SET_BUFFERS BIT(2)
int pbt_session_set(u32 id, struct pbt_session_params *p, unsigned int what,
		    struct netlink_ext_ack *extack);
void pbt_params_free(struct pbt_session_params *p);	/* allocations only */
/* ADD_TRACEPOINTS: @add's tracepoints after buffer @index's; @add keeps its */
int pbt_session_add_tps(u32 id, u32 index, const struct pbt_buffer_params *add,
			struct netlink_ext_ack *extack);
int pbt_session_start(u32 id, struct netlink_ext_ack *extack);
int pbt_session_stop(u32 id);
int pbt_session_flush(u32 id);
int pbt_session_destroy(u32 id, const char *error);	/* error may be NULL */
void pbt_sessions_destroy_all(void);		/* module exit */
/*
 * Who hears of session changes (netlink_notify.c's multicast): registered
 * at netlink.c's init, NULL again at its exit, so session.c never calls up
 * into the netlink files.
 * Called with pbt_sessions_lock held; may sleep.
 */
typedef void (*pbt_session_observer)(u8 cmd, u32 session_id, const char *error);
void pbt_session_observe(pbt_session_observer fn);
struct pbt_session *pbt_session_get(u32 id);	/* takes a ref, or NULL */
/* May a member (@uid, @gid) read the current task's memory? Probe context. */
bool pbt_may_read(kuid_t uid, kgid_t gid);
struct pbt_session *pbt_session_get_next(u32 after_id); /* for dumps */
void pbt_session_put(struct pbt_session *s);
/* /dev/pbtrace: a reader's hold on one buffer of a session (see SET). */
struct pbt_buffer *pbt_session_attach(u32 id, u32 buffer,
				      struct pbt_session **sp);
void pbt_session_detach(struct pbt_session *s, struct pbt_buffer *b);

/*
 * remote.c: what relayed machines send into a session. The endpoint
 * (kmod/relay/) stamps their records and queues them per buffer; readers take them with
 * PBTRACE_IOC_READ_REMOTE. The hooks run under pbt_sessions_lock and only
 * note the change for the endpoint's connection threads: no guest socket
 * is ever touched with the session lock held.
 */
#define PBT_REMOTE_DONE_NS (2ULL * NSEC_PER_SEC) /* a stop waits this long */

struct pbt_remote;
bool pbt_buffer_local(const struct pbt_buffer_params *bp); /* names "host" */
bool pbt_buffer_wants(const struct pbt_buffer_params *bp, const char *machine);
struct pbt_remote *pbt_remote_create(struct pbt_session *s);
void pbt_remote_destroy(struct pbt_remote *r);
u64 pbt_remote_cost(void);			/* bytes create takes */
void pbt_remote_resize(struct pbt_remote *r);	/* SET_SESSION */
void pbt_remote_start(struct pbt_remote *r);
void pbt_remote_stop(struct pbt_remote *r);	/* also at destroy */
void pbt_remote_flush(struct pbt_remote *r);
u32 pbt_remote_flush_gen(struct pbt_remote *r);
int pbt_remote_read(struct pbt_session *s, u32 buffer, void __user *ubuf,
		    u32 size, struct pbtrace_remote_read *rr);
bool pbt_remote_readable(struct pbt_session *s, u32 buffer);
bool pbt_remote_done(struct pbt_session *s, u32 buffer);
/* "cid 4294967294", "tcp 255.255.255.255 key": who a machine is */
#define PBT_PEER_MAX 32
/* One relayed machine's part in a session, for GET_SESSION_MACHINES. */
struct pbt_machine_view {
	char name[PBTRACE_NAME_MAX + 1];	/* HELLO names are up to 64 */
	char peer[PBT_PEER_MAX];
	struct pbtrace_machine_stats st;
};

bool pbt_remote_machine_next(struct pbt_session *s, u32 *id,
			     struct pbt_machine_view *v);
/* The endpoint's side, one connection thread per machine. */
int pbt_remote_bind(struct pbt_session *s, u32 buffer, u32 machine_id,
		    const char *name, const char *peer, u32 num_cpus);
void pbt_remote_unbind(struct pbt_session *s, u32 buffer, u32 machine_id,
		       bool lost);
void pbt_remote_chunk(struct pbt_session *s, u32 buffer, u32 machine_id,
		      const void *rec, long len, u32 lost);
bool pbt_remote_packet(struct pbt_session *s, u32 buffer, const void *rec,
		       size_t len);
void pbt_remote_ping(struct pbt_session *s, u32 machine_id, u64 rtt_ns,
		     s64 offset_ns);
void pbt_remote_synced(struct pbt_session *s, u32 machine_id);
void pbt_remote_stopped(struct pbt_session *s, u32 machine_id,
			u64 events_written, u64 events_lost);
/*
 * What connection threads poll: a generation bumped on every session
 * change that matters to them (start, stop, flush), and the machines the
 * endpoint has online, which it reports here. Calls go endpoint -> remote,
 * never back (docs/architecture.md).
 */
u32 pbt_remote_changes(void);
void pbt_remote_online(u32 machine_id, bool online);
/* Does a live session hold machine @machine_id (it recorded into one)? */
bool pbt_remote_held(u32 machine_id);

/*
 * buffer.c
 *
 * create: ERR_PTR(-errno) on failure (never NULL); validates p (chunk_kb 0
 * means 16, else 4..256 and a power of two; size_kb > 0).
 * activate/deactivate (under pbt_sessions_lock): publish the buffer to the
 * probes (RCU) or take it back. After deactivate the caller must
 * pbt_probes_sync() before flush or destroy, so no probe is still writing.
 * destroy: only when not active and no reader maps it (session release).
 */
struct pbt_buffer *pbt_buffer_create(const struct pbt_buffer_params *p,
				     u32 sequence_id_base, wait_queue_head_t *wq);
void pbt_buffer_destroy(struct pbt_buffer *b);
/* Bytes create allocates for @p, as the allocators take them (budgets). */
u64 pbt_buffer_cost(const struct pbt_buffer_params *p);
void pbt_buffer_activate(struct pbt_buffer *b);
void pbt_buffer_deactivate(struct pbt_buffer *b);
void pbt_buffer_flush(struct pbt_buffer *b);	/* seal all CPUs, may sleep */
void pbt_buffer_stats(struct pbt_buffer *b, int cpu, struct pbtrace_cpu_stats *out);
void *pbt_buffer_vmem(struct pbt_buffer *b, size_t *size); /* for mmap */
int pbt_buffer_get_chunk(struct pbt_buffer *b, struct pbtrace_chunk_req *req); /* may sleep */
int pbt_buffer_put_chunk(struct pbt_buffer *b, u32 index);
void pbt_buffer_unget_chunk(struct pbt_buffer *b, u32 index); /* reader died */
bool pbt_buffer_has_sealed(struct pbt_buffer *b);
/*
 * For watermark.c's rounds: events committed on all CPUs; seal every CPU
 * with an unsealed event (IPI only to those; may sleep, -EBUSY when one
 * did not answer) and say below which seq every sealed chunk is; the
 * lowest seq still sealed or held by a reader (U64_MAX: none); the
 * watermark in the mapping.
 */
u64 pbt_buffer_written(struct pbt_buffer *b);
int pbt_buffer_seal_written(struct pbt_buffer *b, u64 *seq_end);
u64 pbt_buffer_seq_end(struct pbt_buffer *b);
u64 pbt_buffer_unread_seq(struct pbt_buffer *b);
void pbt_buffer_publish_watermark(struct pbt_buffer *b, u64 ns, u64 seq);

/*
 * watermark.c: a buffer's live watermark (PBTRACE_A_BUFFER_WATERMARK_MS).
 * start: while the session runs, rounds every period (may fail -ENOMEM);
 * kick: a round at once (FLUSH_SESSION); both under pbt_sessions_lock;
 * stop: after the session's final flush, the watermark is "everything";
 * free: any time after stop (or instead of it). read: the published
 * watermark and the read watermark (every event before it is sealed and
 * its chunk read and put back by a reader, or lost), BOOTTIME ns.
 */
struct pbt_watermark;
struct pbt_watermark *pbt_watermark_start(struct pbt_buffer *b, u32 period_ms,
					  bool expedited);
void pbt_watermark_kick(struct pbt_watermark *wm);	/* a round now */
void pbt_watermark_stop(struct pbt_watermark *wm);
void pbt_watermark_free(struct pbt_watermark *wm);
u64 pbt_watermark_cost(void);			/* bytes start takes */
void pbt_watermark_read(struct pbt_watermark *wm, u64 *published, u64 *read);
int pbt_watermarks_init(void);			/* their workqueue; main.c */
void pbt_watermarks_exit(void);
/*
 * A standalone TracePacket amid a CPU's FtraceEvents (buffer.c says how);
 * @fn writes its fields into @pb with this CPU's scratch. Probe context.
 */
struct pb_buf;
typedef bool (*pbt_packet_fn)(struct pb_buf *pb, void *scratch, bool cleared,
			      u32 cpu, void *arg);
bool pbt_buffer_packet(struct pbt_buffer *b, pbt_packet_fn fn, void *arg);
/* CPU @cpu's scratch of @b; NULL past the last CPU or without scratch. */
void *pbt_buffer_scratch(struct pbt_buffer *b, u32 cpu);

/*
 * stack.c: a PerfSample with the current task's call stack into @b on
 * this CPU, from a tracepoint's perf handler (preemption off, after the
 * event itself; @regs perf's, or NULL), standing for @count hits. @flags:
 * PBTRACE_TP_KERNEL_STACK, _USER_STACK. A buffer with stacks needs
 * params.scratch_size = pbt_stack_scratch_size().
 */
struct pt_regs;
void pbt_stack_sample(struct pbt_buffer *b, struct pt_regs *regs, u32 flags,
		      u32 count);
size_t pbt_stack_scratch_size(void);
u64 pbt_stack_no_mapping(void);		/* samples whose mmap lock was busy */
u64 pbt_stack_unpinned(void);		/* files not pinned: tables full */
/* Drops the files a buffer's scratch pinned (pbt_buffer_destroy()). */
void pbt_stack_scratch_release(void *scratch);
/* PBTRACE_IOC_MAPPING_PATH: the path of a file a sample in @b named. */
int pbt_stack_file_path(struct pbt_buffer *b, dev_t dev, unsigned long ino,
			char *buf, int size, char **path);
void pbt_stack_init(void);
void pbt_stack_exit(void);
/*
 * Readers attached (under pbt_sessions_lock). A buffer SET_SESSION replaced
 * while readers hold it is retired: it stays until the last one detaches.
 */
unsigned int pbt_buffer_readers(struct pbt_buffer *b, int delta);
void pbt_buffer_retire(struct pbt_buffer *b);
bool pbt_buffer_retired(struct pbt_buffer *b);
u32 pbt_buffer_nr_chunks(struct pbt_buffer *b);	/* all CPUs */
int pbt_buffers_init(void);			/* CPU hotplug; main.c */
void pbt_buffers_exit(void);

/*
 * The probe path: encode one event into every active buffer that wants
 * event @id and whose pid filter passes. @encode writes the FtraceEvent's
 * oneof field (e.g. sched_switch) and nothing else; it may run more than
 * once for one buffer (retried in a fresh chunk), so it must not have side
 * effects. Any context, including NMI (dropped and counted).
 */
struct pb_buf;
typedef void (*pbt_encode_fn)(struct pb_buf *pb, const void *arg);
/*
 * The one body: @nr is what a raw_syscalls filter checks (else -1); @also
 * is a second task whose pid passes the pid filter too (else 0, never a
 * filter pid), as the kernel's own set_event_pid lets sched_switch through
 * for prev or next and a wakeup for the waker or the wakee. Without it a
 * pid-filtered trace has no switch into the thread, and trace_processor
 * can close none of its sched slices.
 */
void pbt_emit_for(int id, long nr, pid_t also, pbt_encode_fn encode,
		  const void *arg);

static inline void pbt_emit(int id, pbt_encode_fn encode, const void *arg)
{
	pbt_emit_for(id, -1, 0, encode, arg);
}

void pbt_follow_fork(pid_t parent, pid_t child);
void pbt_follow_free(pid_t pid);

/* raw_syscalls: as pbt_emit, and a buffer's syscall filter checks @nr. */
static inline void pbt_emit_syscall(int id, long nr, pbt_encode_fn encode,
				    const void *arg)
{
	pbt_emit_for(id, nr, 0, encode, arg);
}

/*
 * sched_switch (its next task) and sched_waking (the wakee) as
 * FtraceEventBundle.CompactSched columns take them; the rest of the event
 * (prev task, waker) is the CPU's previous switch. The @arg of those two
 * events starts with one: a buffer with compact sched reads it instead of
 * calling @encode (no fifth argument that every other event would pay
 * for). @comm and @prev_comm are TASK_COMM_LEN bytes.
 */
struct pbt_sched_rec {
	const char *comm;
	long prev_state;		/* sched_switch only */
	int pid, prio, target_cpu;	/* target_cpu: sched_waking only */
	/* sched_switch: the prev task, to check it is the one inferred */
	const char *prev_comm;
	int prev_pid, prev_prio;
};

/* Events whose @arg starts with a struct pbt_sched_rec: ids 0 and 1. */
static inline bool pbt_event_compact(int id)
{
	BUILD_BUG_ON(PBT_EV_SCHED_SWITCH != 0 || PBT_EV_SCHED_WAKING != 1);
	return (unsigned int)id <= PBT_EV_SCHED_WAKING;
}

/*
 * tracepoint.c: any tracepoint by name (docs/generic-events.md). What
 * netlink parsed from one PBTRACE_A_TP, copied into the buffer at create.
 */
#include "core/tp_layout.h"
#include "core/filter.h"

struct pbt_tp_params {
	struct pbt_tp_layout layout;		/* group, name, proto_id, fields */
	u32 id;					/* tracefs id, checked */
	u32 flags;				/* PBTRACE_TP_* */
	u32 period;				/* PERF_SAMPLE every Nth (STACKS) */
	/*
	 * PBTRACE_A_TP_FILTER compiled and verified at NEW/SET_SESSION (no
	 * nr_insns: none); by value, so copies need no ownership. The
	 * handler runs it before anything is written.
	 */
	struct pbt_filter_prog filter;
	/* its text as given, for GET_SESSION_TRACEPOINTS; "": none */
	char filter_src[PBTRACE_TP_FILTER_MAX];
};

/*
 * One tracepoint of one buffer while it exists: buffer.c owns the array
 * (pbt_buffer_tps()), tracepoint.c its perf counters.
 */
struct perf_event;
struct nlattr;
struct pbt_tp {
	struct pbt_tp_params p;
	struct pbt_buffer *b;
	u32 index;				/* in b's array: its bit per chunk */
	u8 *desc;				/* GenericEventDescriptor; NULL: native */
	u32 desc_len;
	struct pbt_tp_fast *fast;		/* the layout compiled; NULL: not */
	struct perf_event **events;		/* [nr_cpu_ids], NULL: none there */
	atomic_t hits;				/* STACKS: towards the period */
};

int pbt_tp_parse(struct nlattr *nest, struct pbt_buffer_params *bp,
		 u32 *session_total, const struct pbt_session_params *who,
		 struct netlink_ext_ack *extack);
/* Counters under who's cred, each id checked again; may sleep. */
int pbt_tp_start(struct pbt_buffer *b, const struct pbt_session_params *who,
		 struct netlink_ext_ack *extack);
void pbt_tp_stop(struct pbt_buffer *b);		/* release; caller syncs */
u64 pbt_tp_counter_cost(void);			/* bytes per counter (budgets) */
int pbt_tp_init(void);				/* CPU hotplug state; main.c */
void pbt_tp_exit(void);

/*
 * buffer.c, write.c: the buffer's tracepoints, and the probe path for them:
 * one record into @tp's buffer on this CPU (pid filter, loss counting and
 * nesting as pbt_emit_for()). Called from tp_overflow() only.
 */
struct pbt_tp *pbt_buffer_tps(struct pbt_buffer *b, u32 *nr);
/* @b's owner may read the current task (root's: always). Probe context. */
bool pbt_buffer_may_read(const struct pbt_buffer *b);
void pbt_emit_tp(struct pbt_tp *tp, const void *rec, u32 size);
bool pbt_buffer_wants_pid(struct pbt_buffer *b, pid_t pid);

/* main.c: test-only fault injection (module parameter fault_recurse). */
DECLARE_STATIC_KEY_FALSE(pbt_fault_recurse);
/* main.c: test-only, a wait between sys_enter and its strings (probes.c). */
DECLARE_STATIC_KEY_FALSE(pbt_fault_strings_key);
extern unsigned int pbt_fault_strings_us;

/* device.c */
int pbt_device_init(void);
void pbt_device_exit(void);

/* netlink.c */
int pbt_netlink_init(void);
void pbt_netlink_exit(void);

#endif /* _PBTRACE_H */
