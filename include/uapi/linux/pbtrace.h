/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * pbtrace: a kernel tracer that writes Perfetto protobuf into per-CPU
 * buffers. This header is the whole ABI between pbtrace.ko and userspace.
 *
 * Two channels:
 *
 *  1. Generic netlink family "pbtrace" (control: sessions, status, events).
 *  2. The char device /dev/pbtrace (data: mmap of a session buffer, ioctls
 *     that hand sealed chunks to the reader, poll for new sealed chunks).
 *
 * Every netlink command requires CAP_SYS_ADMIN, except PBTRACE_CMD_GET_SESSION,
 * PBTRACE_CMD_GET_CPU_STATS, PBTRACE_CMD_GET_WATERMARK,
 * PBTRACE_CMD_GET_SESSION_MACHINES, PBTRACE_CMD_LIST_EVENTS and
 * PBTRACE_CMD_GET_STATUS, which CAP_PERFMON is enough for. Members of the
 * module's group= gid may also create, change,
 * start, stop, flush, destroy and get their own sessions (docs/security.md).
 *
 * Netlink commands and their attributes
 * -------------------------------------
 *
 * PBTRACE_CMD_NEW_SESSION: create a session (state CONFIGURED). Attributes:
 *
 *    PBTRACE_A_SESSION_NAME: NLA_NUL_STRING, required, unique among live
 *                            sessions (-EEXIST otherwise)
 *    PBTRACE_A_SESSION_CONFIG: NLA_BINARY, optional, the serialized Perfetto
 *                              TraceConfig; stored verbatim and handed back
 *                              by GET_SESSION so traced can honour the parts
 *                              the kernel does not (up to PBTRACE_MAX_CONFIG, 60 KiB)
 *    PBTRACE_A_SESSION_OUTPUT: NLA_NUL_STRING, optional, output path for
 *                              traced (the kernel never opens it)
 *    PBTRACE_A_SESSION_BUFFERS: NLA_NESTED, required, up to
 *                               PBTRACE_MAX_BUFFERS of:
 *        PBTRACE_A_BUFFER: NLA_NESTED
 *            PBTRACE_A_BUFFER_SIZE_KB: NLA_U32, total size over all CPUs
 *            PBTRACE_A_BUFFER_CHUNK_KB: NLA_U32, optional, chunk size (4..256,
 *                                       power of two; default 16)
 *            PBTRACE_A_BUFFER_FILL_POLICY: NLA_U32, enum pbtrace_fill_policy
 *            PBTRACE_A_BUFFER_EVENTS: NLA_NESTED, required, of
 *                PBTRACE_A_EVENT_NAME: NLA_NUL_STRING "group/name",
 *                                      e.g. "sched/sched_switch"; an unknown
 *                                      name fails the command with extack
 *            PBTRACE_A_BUFFER_PIDS: NLA_NESTED, optional, of
 *                PBTRACE_A_PID: NLA_U32; only these threads are traced
 *                               (up to PBTRACE_MAX_PIDS)
 *            PBTRACE_A_BUFFER_SYSCALLS: NLA_NESTED, optional, up to
 *                PBTRACE_MAX_SYSCALLS of
 *                PBTRACE_A_SYSCALL_NR: NLA_U32, a syscall number of the
 *                    kernel's native ABI (below NR_syscalls, else -EINVAL
 *                    with extack). raw_syscalls/sys_enter and sys_exit
 *                    record only these syscalls; absent: every syscall
 *                    (an empty list: -EINVAL).
 *            PBTRACE_A_BUFFER_FOLLOW_FORKS: NLA_FLAG, optional, needs
 *                PBTRACE_A_BUFFER_PIDS: the pid filter follows forks, as
 *                ftrace's options/event-fork does: a thread the filter
 *                holds adds every thread and process it creates (at
 *                sched_process_fork, before the child runs), and a thread
 *                leaves it when it is freed (sched_process_free), so a
 *                reused pid is not traced. Holds any number of threads.
 *            PBTRACE_A_BUFFER_WATERMARK_MS: NLA_U32, optional, 1..10000:
 *                a live watermark (docs/data-plane.md, "Watermark"): while
 *                the session runs, at most every this many ms and only if
 *                the buffer took events since, the kernel waits for an RCU
 *                grace period, seals the open chunk of each CPU that holds
 *                an event not yet sealed (the others are not interrupted)
 *                and publishes a time before which every event is sealed,
 *                in the mapping (struct pbtrace_mmap_header.watermark_*)
 *                and for PBTRACE_CMD_GET_WATERMARK. Its readers are woken
 *                for what it sealed, so they get it within about the
 *                period plus a grace period. Absent: none.
 *            PBTRACE_A_BUFFER_WATERMARK_EXPEDITED: NLA_FLAG, optional, needs
 *                _WATERMARK_MS: the rounds wait for expedited grace periods
 *                (synchronize_rcu_expedited()): a few ms instead of ~1.5
 *                normal ones, and far less under CPU load, for an IPI per
 *                round to each CPU that is neither idle nor in nohz_full
 *                user mode. For an interactive live view (tracectl trace);
 *                rcupdate.rcu_normal=1 turns it back into normal ones.
 *            PBTRACE_A_BUFFER_FULL_SCHED: NLA_FLAG, optional: write
 *                sched_switch and sched_waking as full FtraceEvents; absent:
 *                in FtraceEventBundle.compact_sched (docs/encoding.md)
 *            PBTRACE_A_BUFFER_MACHINES: NLA_NESTED, optional, up to
 *                PBTRACE_MAX_MACHINE_NAMES of
 *                PBTRACE_A_MACHINE_NAME: NLA_NUL_STRING: a relayed machine's
 *                    name (its HELLO name), PBTRACE_MACHINE_HOST ("host"),
 *                    this machine, or PBTRACE_MACHINE_ANY ("*"), every
 *                    relayed machine. Absent: this machine only. Without
 *                    "host" in the list the buffer records nothing locally.
 *                    A relayed machine records for the first started
 *                    session (lowest id) whose buffer names it, into the
 *                    first such buffer, with that buffer's events.
 *            PBTRACE_A_BUFFER_TRACEPOINTS: NLA_NESTED, optional, up to
 *                PBTRACE_MAX_TRACEPOINTS (all buffers together) of
 *                PBTRACE_A_TP: NLA_NESTED, any tracepoint of this kernel:
 *                    PBTRACE_A_TP_NAME: "group/name", required
 *                    PBTRACE_A_TP_ID: NLA_U32, its tracefs id, required; the
 *                        kernel refuses an id that is not that tracepoint
 *                    PBTRACE_A_TP_FLAGS: NLA_U32, PBTRACE_TP_*, required
 *                    PBTRACE_A_TP_PROTO_ID: NLA_U32, the FtraceEvent field
 *                        the event is written as: Perfetto's own for an
 *                        event trace.proto knows (its fields then carry that
 *                        message's numbers), else >= PBTRACE_TP_GENERIC_PROTO_BASE
 *                        and described in the bundle by a DescriptorProto the
 *                        kernel builds from the fields
 *                    PBTRACE_A_TP_FIELDS: NLA_NESTED of up to
 *                        PBTRACE_TP_MAX_FIELDS PBTRACE_A_TP_FIELD, each
 *                        _TPF_NAME, _TPF_OFFSET, _TPF_SIZE, _TPF_KIND (enum
 *                        pbtrace_tpf_kind), _TPF_SIGNED, _TPF_ELEM_SIZE
 *                        (ARRAY), _TPF_PROTO_ID (1..PBTRACE_TP_MAX_PROTO_ID;
 *                        0: not written, for filters only, as the
 *                        common_* fields), _TPF_PROTO_TYPE
 *                    PBTRACE_A_TP_FILTER: NLA_NUL_STRING, optional, ftrace's
 *                        filter syntax over those fields; a bad one is
 *                        refused with its position in the extack message
 *                    PBTRACE_A_TP_PERIOD: NLA_U32, optional, PERF_SAMPLE
 *                        every Nth hit that passes the filter (default 1)
 *    Reply: PBTRACE_A_SESSION_ID (NLA_U32).
 *
 * PBTRACE_CMD_SET_SESSION: configure a session again before it starts.
 *    PBTRACE_A_SESSION_ID: NLA_U32, required; then any of NEW_SESSION's
 *    _CONFIG, _OUTPUT and _BUFFERS, which replace the session's own (the
 *    buffers all together: the new set is built first, so a failure leaves
 *    the session as it was). The name cannot change. -EBUSY once the
 *    session has started (or stopped).
 *    A reader attached to a replaced buffer keeps its mapping but gets no
 *    more data: poll() says EPOLLERR, GET_CHUNK and READ_REMOTE -ESTALE;
 *    it attaches again on the SET_SESSION notification.
 *
 * PBTRACE_CMD_ADD_TRACEPOINTS: more tracepoints for a session before it
 *    starts, in pieces: a netlink nest holds at most 64 KiB, about 80
 *    tracepoints of 10 fields, so NEW_SESSION (or SET_SESSION) carries a
 *    first batch and each ADD_TRACEPOINTS the next, each message below
 *    64 KiB, up to PBTRACE_MAX_TRACEPOINTS in all.
 *    PBTRACE_A_SESSION_ID: NLA_U32, required;
 *    PBTRACE_A_BUFFER_INDEX: NLA_U32, required, the buffer appended to;
 *    PBTRACE_A_BUFFER_TRACEPOINTS: NLA_NESTED of PBTRACE_A_TP, required,
 *    as in NEW_SESSION. Checked as a SET_SESSION of the buffers with them
 *    would be (duplicates over all pieces, a member's budget, counters
 *    and filter cost), the buffers built again; a failure leaves the
 *    session as it was. -EBUSY once started. Who may: as SET_SESSION.
 *
 * PBTRACE_CMD_START_SESSION, PBTRACE_CMD_STOP_SESSION,
 * PBTRACE_CMD_FLUSH_SESSION, PBTRACE_CMD_DESTROY_SESSION:
 *    PBTRACE_A_SESSION_ID: NLA_U32, required.
 *    STOP registers no further events and seals every open chunk; the
 *    buffers stay readable until DESTROY. STOP of a session that never
 *    started (CONFIGURED) also moves it to STOPPED; STOP of a stopped one
 *    fails with -EALREADY, START of a started or stopped one with
 *    -EALREADY or -EINVAL. FLUSH seals every non-empty open chunk on every
 *    CPU, and has a live watermark (PBTRACE_A_BUFFER_WATERMARK_MS) pass
 *    the moment of the flush within a grace period, whether or not any
 *    event came since. DESTROY frees the session (any state). DESTROY takes an optional
 *    PBTRACE_A_SESSION_ERROR: NLA_NUL_STRING (up to PBTRACE_ERROR_MAX):
 *    why the session ended early (traced's write error, e.g. "writing
 *    /out/t.pftrace: No space left on device"). The kernel passes it on in
 *    the DESTROY notification, so whoever waits for the file learns it.
 *
 * PBTRACE_CMD_GET_SESSION: doit with PBTRACE_A_SESSION_ID, or dumpit for all.
 *    Reply per session: PBTRACE_A_SESSION_ID, _NAME, _STATE (enum
 *    pbtrace_session_state), _OUTPUT, _CONFIG, _START_NS (BOOTTIME ns, 0
 *    before start), _STOP_NS, PBTRACE_A_DAEMON_PID (as GET_STATUS) and
 *    PBTRACE_A_SESSION_BUFFERS, each
 *    PBTRACE_A_BUFFER holding _SIZE_KB, _CHUNK_KB, _FILL_POLICY, _EVENTS,
 *    _PIDS, _SYSCALLS and _FULL_SCHED (if any) and _MACHINES if set.
 *    No per-CPU counters: those are GET_CPU_STATS' (one struct per
 *    possible CPU and buffer would outgrow a 64 KiB nest on a large host).
 *    No relayed machines either: those are GET_SESSION_MACHINES' (a session
 *    that saw 1,000 machines would outgrow a 64 KiB nest too).
 *    PBTRACE_A_SESSION_RELAY (NLA_U8, 1): a session this machine's relay
 *    runs for its host; its chunks go to the host, so traced leaves it alone.
 *    PBTRACE_A_SESSION_OWNER_UID, _OWNER_GID (NLA_U32): the euid and egid
 *    of its creator; traced opens the output file with them.
 *    A member of the module's group= (not CAP_PERFMON) sees only its own.
 *    No tracepoints by name: those are GET_SESSION_TRACEPOINTS' (1,000 of
 *    them with filters would outgrow a 64 KiB nest).
 *
 * PBTRACE_CMD_GET_SESSION_TRACEPOINTS: dumpit with PBTRACE_A_SESSION_ID
 *    (required), the same callers as GET_CPU_STATS: what the session's
 *    buffers record by name, as NEW/SET_SESSION gave it, paged, buffer by
 *    buffer, in the order given. Each message holds PBTRACE_A_SESSION_ID,
 *    PBTRACE_A_BUFFER_INDEX and PBTRACE_A_BUFFER_TRACEPOINTS: NLA_NESTED of
 *    PBTRACE_A_TP, each PBTRACE_A_TP_NAME, _ID, _FLAGS (the stacks:
 *    PBTRACE_TP_*_STACK), _PROTO_ID, _PERIOD and _FILTER (the text as
 *    given, if one was); no layouts (tracefs has them).
 *
 * PBTRACE_CMD_GET_CPU_STATS: dumpit with PBTRACE_A_SESSION_ID (required):
 *    the session's per-CPU counters, paged. Each message holds
 *    PBTRACE_A_SESSION_ID, PBTRACE_A_BUFFER_INDEX (NLA_U32) and
 *    PBTRACE_A_BUFFER_CPUS: NLA_NESTED of PBTRACE_A_CPU_STATS (NLA_BINARY
 *    struct pbtrace_cpu_stats), a run of that buffer's possible CPUs in
 *    order; buffer by buffer, every possible CPU once. The same numbers are
 *    in each buffer's mapping (struct pbtrace_mmap_header.stats_offset),
 *    but there without NMI drops the writer has not folded in yet.
 *
 * PBTRACE_CMD_GET_WATERMARK: doit with PBTRACE_A_SESSION_ID (who may:
 *    as GET_SESSION). Reply: PBTRACE_A_SESSION_ID, _STATE and
 *    PBTRACE_A_SESSION_BUFFERS with one PBTRACE_A_BUFFER per buffer that
 *    has a watermark (PBTRACE_A_BUFFER_WATERMARK_MS) once the session
 *    started: PBTRACE_A_BUFFER_INDEX, PBTRACE_A_BUFFER_WATERMARK_NS (NLA_U64,
 *    BOOTTIME: every event before it is sealed; the mapping's
 *    watermark_ns) and PBTRACE_A_BUFFER_READ_NS (NLA_U64: every event
 *    before it is sealed and its chunk was read and put back with
 *    PUT_CHUNK, or it was counted lost). traced puts a chunk back once it
 *    is in the file, so whoever follows the file may show every event
 *    before READ_NS in time order: no event before it reaches the file
 *    later. Both are ~0 once the session stopped and everything is read.
 *    A module without the command: -EOPNOTSUPP.
 * PBTRACE_CMD_GET_SESSION_MACHINES: dumpit with PBTRACE_A_SESSION_ID
 *    (required), the same callers as GET_CPU_STATS: every relayed machine
 *    that recorded into the session (connected or not), paged, in machine
 *    id order. Each message holds PBTRACE_A_SESSION_ID and
 *    PBTRACE_A_SESSION_MACHINES: NLA_NESTED of PBTRACE_A_MACHINE, each
 *    PBTRACE_A_MACHINE_NAME (its name in this session), PBTRACE_A_MACHINE_PEER
 *    (who it is to the endpoint: "cid 5", "tcp 10.0.2.2", "tcp 10.0.2.2
 *    key") and PBTRACE_A_MACHINE_STATS (NLA_BINARY struct
 *    pbtrace_machine_stats).
 *
 * PBTRACE_CMD_GET_MACHINES: dumpit, CAP_SYS_ADMIN (guests' names, kernels
 *    and CIDs are root's): the endpoint's machine table, online and
 *    offline, in machine id order, one message per machine:
 *    PBTRACE_A_ENDPOINT_MACHINE (NLA_BINARY struct pbtrace_endpoint_machine),
 *    PBTRACE_A_MACHINE_NAME (the name it has here), PBTRACE_A_MACHINE_CLAIMED
 *    (the name its HELLO said), PBTRACE_A_MACHINE_PEER, and its HELLO's
 *    PBTRACE_A_MACHINE_SYSNAME, _RELEASE and _ARCH (NLA_NUL_STRING).
 *
 * PBTRACE_CMD_GET_NAMES: dumpit, CAP_SYS_ADMIN: the names table, the names
 *    the host gives its guests (docs/multi-machine.md, "Names and keys"),
 *    from endpoint_machines= and endpoint_keys= and from the last
 *    LOAD_NAMES, sorted by name, one message per name:
 *    PBTRACE_A_MACHINE_NAME, PBTRACE_A_NAME_FLAGS (PBTRACE_NAME_*), and
 *    PBTRACE_A_NAME_CID (a vsock guest's) or PBTRACE_NAME_KEYED (a TCP
 *    relay's key: never the key itself), PBTRACE_A_NAME_LINE (the line of
 *    the file it was loaded from; absent for a module parameter's).
 *
 * PBTRACE_CMD_LOAD_NAMES: doit, CAP_SYS_ADMIN: replace the names table's
 *    loaded part (the module parameters' names stay), in pieces, so that a
 *    table of thousands fits 64 KiB nests; nothing changes until the
 *    commit, and a load that fails anywhere changes nothing.
 *    PBTRACE_A_LOAD_ID: NLA_U32, absent (or 0) in the first piece, which
 *        begins a load (and drops any other one not committed yet); the
 *        reply's PBTRACE_A_LOAD_ID names the load in the pieces after it.
 *        A load belongs to the socket that began it; a piece of a load
 *        that is gone (another began, this one failed, its socket closed)
 *        fails with -ESTALE.
 *    PBTRACE_A_NAMES: NLA_NESTED, optional, of PBTRACE_A_NAME, each:
 *        PBTRACE_A_MACHINE_NAME: NLA_NUL_STRING, required: 1 to
 *            PBTRACE_NAME_MAX - 1 printable characters, none of them a
 *            space, ',' or '@', and not "host" or "*"
 *        PBTRACE_A_NAME_CID: NLA_U32: the vsock guest of this CID is the
 *            machine of this name, whatever its HELLO says; or
 *        PBTRACE_A_NAME_KEY: NLA_BINARY, 16 to PBTRACE_NAME_KEY_MAX bytes:
 *            the TCP relay of this name must prove this key instead of
 *            relay_key's
 *        PBTRACE_A_NAME_LINE: NLA_U32, optional: where the entry came from,
 *            for the error messages ("line 7: ...")
 *        One of _CID and _KEY. A name or a CID given twice, or given
 *        otherwise by endpoint_machines/endpoint_keys, fails the load (an
 *        entry the module parameters hold exactly as given is left as it
 *        is). At most PBTRACE_MAX_NAMES names in all.
 *    PBTRACE_A_LOAD_COMMIT: NLA_FLAG: after this piece's entries, make the
 *        load the table. An online machine whose name or key the change
 *        takes away is disconnected (it reconnects under the new table, as
 *        a new machine id). Reply: PBTRACE_A_LOAD_ID, and on commit
 *        PBTRACE_A_NAMES_COUNT (names in the table now) and
 *        PBTRACE_A_NAMES_EVICTED (machines disconnected).
 *
 * PBTRACE_CMD_TRIGGER: PBTRACE_A_TRIGGER_NAME (NLA_NUL_STRING). The kernel
 *    multicasts it to the "sessions" group; traced applies trigger_config.
 *
 * PBTRACE_CMD_LIST_EVENTS: dumpit. One message per known event:
 *    PBTRACE_A_EVENT_NAME, PBTRACE_A_EVENT_AVAILABLE (NLA_U8, 0 when the
 *    running kernel lacks the tracepoint).
 *
 * PBTRACE_CMD_REGISTER_DAEMON: no attributes. Marks the calling socket as
 *    the daemon's; when it closes the kernel notices, keeps every session and
 *    its buffers, and multicasts PBTRACE_CMD_DAEMON_GONE.
 *
 * PBTRACE_CMD_GET_STATUS: no attributes (CAP_PERFMON is enough). Reply:
 *    PBTRACE_A_DAEMON_PID (NLA_U32): the pid of the process that registered
 *    the daemon socket, 0 when no daemon is registered. tracectl uses it to
 *    say "traced is not running" before it creates a session.
 *
 * Multicast group PBTRACE_MCGRP_SESSIONS ("sessions") carries notifications
 * with the command set to what happened: PBTRACE_CMD_NEW_SESSION,
 * _SET_SESSION, _START_SESSION, _STOP_SESSION, _DESTROY_SESSION (with
 * PBTRACE_A_SESSION_ID; DESTROY also with PBTRACE_A_SESSION_ERROR if given),
 * PBTRACE_CMD_TRIGGER (with PBTRACE_A_TRIGGER_NAME) and
 * PBTRACE_CMD_DAEMON_GONE. Joining the group needs CAP_SYS_ADMIN, as the
 * commands it reports do (on kernels with GENL_MCAST_CAP_SYS_ADMIN).
 *
 * Char device /dev/pbtrace (mode 0600)
 * ------------------------------------
 *
 *  1. open("/dev/pbtrace", O_RDONLY)
 *  2. ioctl(fd, PBTRACE_IOC_ATTACH, &(struct pbtrace_attach){ session, buffer })
 *  3. mmap(NULL, attach.mmap_size, PROT_READ, MAP_SHARED, fd, 0): read only;
 *     PROT_WRITE fails with -EPERM. The mapping starts with
 *     struct pbtrace_mmap_header, then the per-CPU stats array and the chunk
 *     table at the offsets it gives, then the chunk data.
 *  4. ioctl(fd, PBTRACE_IOC_GET_CHUNK, &req): hands the oldest sealed chunk
 *     (lowest seq over all CPUs) to the reader; -EAGAIN when none is sealed.
 *     The chunk's bytes [offset, offset + len) are complete Trace.packet
 *     records: write them to the file verbatim. The kernel does not reuse the
 *     chunk until PBTRACE_IOC_PUT_CHUNK returns it; closing the fd puts
 *     back every chunk it held as still unread (sealed), so a restarted
 *     reader gets them again.
 *  5. poll(fd, POLLIN): readable when a sealed chunk is waiting; POLLHUP
 *     once the session is stopped and every chunk has been read.
 *  6. ioctl(fd, PBTRACE_IOC_READ_REMOTE, &rr): what relayed machines sent for
 *     this buffer, already checked and stamped by the kernel (their chunks
 *     with machine_id and host-chosen sequence ids, their system_info,
 *     clock_snapshot and remote_clock_sync packets): copies whole
 *     Trace.packet records into rr.buf (at least PBTRACE_REMOTE_READ_MIN
 *     bytes) and sets rr.len; -EAGAIN when nothing is queued yet.
 *     rr.flags has PBTRACE_REMOTE_EOF once the session is stopped, every
 *     machine of this buffer has sent its last chunk (or is gone, or took
 *     longer than 2 s) and the queue is empty: nothing more will come.
 *     poll() is also readable when remote records are queued.
 *  7. ioctl(fd, PBTRACE_IOC_MAPPING_PATH, &mp): the path of a file that a
 *     stack sample of this buffer named by its identity: a mapping path
 *     "[inode INO dev MAJ:MIN]" (hex MAJ:MIN, as /proc/PID/maps prints
 *     them; docs/stacks.md). The kernel pinned the file when it wrote
 *     the sample, so this works after the process exited. Copies the
 *     path, as d_path() gives it to the caller (relative to its root),
 *     NUL-terminated into mp.buf and sets mp.len (without the NUL);
 *     -ENOENT if no sample of this buffer pinned that file, -ENAMETOOLONG
 *     if it does not fit mp.size bytes. An opener with CAP_SYS_ADMIN only.
 */
#ifndef _UAPI_LINUX_PBTRACE_H
#define _UAPI_LINUX_PBTRACE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PBTRACE_GENL_NAME "pbtrace"
#define PBTRACE_GENL_VERSION 1
#define PBTRACE_MCGRP_SESSIONS "sessions"
#define PBTRACE_DEVICE_NAME "pbtrace"

#define PBTRACE_MAX_BUFFERS 4
#define PBTRACE_MAX_PIDS 64
#define PBTRACE_MAX_SESSIONS 8
/* One netlink attribute carries at most 65531 bytes: stay clearly below. */
#define PBTRACE_MAX_CONFIG (60 * 1024)
#define PBTRACE_NAME_MAX 64
#define PBTRACE_MAX_SYSCALLS 512
#define PBTRACE_ERROR_MAX 256

/*
 * trusted_packet_sequence_id: the kernel's buffers use ids below this,
 * userspace writers (traced's own packets) use ids from it up.
 */
#define PBTRACE_SEQ_ID_USER_BASE (1u << 24)
/*
 * Relayed machines' packets: the host stamps
 * PBTRACE_SEQ_ID_REMOTE_BASE + machine_id * PBTRACE_MAX_CPUS_REMOTE + cpu
 * (a guest's own sequence ids never reach the file).
 */
#define PBTRACE_SEQ_ID_REMOTE_BASE (1u << 25)
#define PBTRACE_MAX_CPUS_REMOTE 8192
/*
 * So machine ids run from 1 to (2^32 - PBTRACE_SEQ_ID_REMOTE_BASE) /
 * PBTRACE_MAX_CPUS_REMOTE - 1: the last id's last CPU is 2^32 - 1.
 */
#define PBTRACE_MAX_MACHINE_ID 520191
/* The names table (PBTRACE_CMD_LOAD_NAMES): names, and a key's bytes. */
#define PBTRACE_MAX_NAMES 16384
#define PBTRACE_NAME_KEY_MAX 64

#define PBTRACE_MACHINE_HOST "host"
#define PBTRACE_MACHINE_ANY "*"
#define PBTRACE_MAX_MACHINE_NAMES 8

enum pbtrace_cmd {
	PBTRACE_CMD_UNSPEC,
	PBTRACE_CMD_NEW_SESSION,
	PBTRACE_CMD_START_SESSION,
	PBTRACE_CMD_STOP_SESSION,
	PBTRACE_CMD_FLUSH_SESSION,
	PBTRACE_CMD_DESTROY_SESSION,
	PBTRACE_CMD_GET_SESSION,
	PBTRACE_CMD_TRIGGER,
	PBTRACE_CMD_LIST_EVENTS,
	PBTRACE_CMD_REGISTER_DAEMON,
	PBTRACE_CMD_DAEMON_GONE,
	PBTRACE_CMD_GET_STATUS,
	PBTRACE_CMD_SET_SESSION,
	PBTRACE_CMD_GET_CPU_STATS,
	PBTRACE_CMD_GET_WATERMARK,
	PBTRACE_CMD_GET_SESSION_MACHINES,
	PBTRACE_CMD_GET_MACHINES,
	PBTRACE_CMD_GET_NAMES,
	PBTRACE_CMD_LOAD_NAMES,
	PBTRACE_CMD_GET_SESSION_TRACEPOINTS,
	PBTRACE_CMD_ADD_TRACEPOINTS,
	__PBTRACE_CMD_MAX
};
#define PBTRACE_CMD_MAX (__PBTRACE_CMD_MAX - 1)

enum pbtrace_attr {
	PBTRACE_A_UNSPEC,
	PBTRACE_A_SESSION_ID,		/* u32 */
	PBTRACE_A_SESSION_NAME,		/* string */
	PBTRACE_A_SESSION_CONFIG,	/* binary TraceConfig */
	PBTRACE_A_SESSION_OUTPUT,	/* string */
	PBTRACE_A_SESSION_STATE,	/* u32, enum pbtrace_session_state */
	PBTRACE_A_SESSION_START_NS,	/* u64 */
	PBTRACE_A_SESSION_STOP_NS,	/* u64 */
	PBTRACE_A_SESSION_BUFFERS,	/* nest of PBTRACE_A_BUFFER */
	PBTRACE_A_BUFFER,		/* nest of PBTRACE_A_BUFFER_* */
	PBTRACE_A_BUFFER_SIZE_KB,	/* u32 */
	PBTRACE_A_BUFFER_CHUNK_KB,	/* u32 */
	PBTRACE_A_BUFFER_FILL_POLICY,	/* u32, enum pbtrace_fill_policy */
	PBTRACE_A_BUFFER_EVENTS,	/* nest of PBTRACE_A_EVENT_NAME */
	PBTRACE_A_BUFFER_PIDS,		/* nest of PBTRACE_A_PID */
	PBTRACE_A_BUFFER_CPUS,		/* nest of PBTRACE_A_CPU_STATS */
	PBTRACE_A_CPU_STATS,		/* struct pbtrace_cpu_stats */
	PBTRACE_A_EVENT_NAME,		/* string "group/name" */
	PBTRACE_A_EVENT_AVAILABLE,	/* u8 */
	PBTRACE_A_PID,			/* u32 */
	PBTRACE_A_TRIGGER_NAME,		/* string */
	PBTRACE_A_PAD,
	PBTRACE_A_DAEMON_PID,		/* u32 */
	PBTRACE_A_BUFFER_MACHINES,	/* nest of PBTRACE_A_MACHINE_NAME */
	PBTRACE_A_MACHINE_NAME,		/* string */
	PBTRACE_A_SESSION_MACHINES,	/* nest of PBTRACE_A_MACHINE */
	PBTRACE_A_MACHINE,		/* nest: _MACHINE_NAME, _MACHINE_STATS */
	PBTRACE_A_MACHINE_STATS,	/* struct pbtrace_machine_stats */
	PBTRACE_A_SESSION_RELAY,	/* u8 */
	PBTRACE_A_BUFFER_SYSCALLS,	/* nest of PBTRACE_A_SYSCALL_NR */
	PBTRACE_A_SYSCALL_NR,		/* u32 */
	PBTRACE_A_SESSION_ERROR,	/* string */
	PBTRACE_A_BUFFER_FULL_SCHED,	/* flag */
	PBTRACE_A_SESSION_OWNER_UID,	/* u32, in GET_SESSION replies */
	PBTRACE_A_SESSION_OWNER_GID,	/* u32, in GET_SESSION replies */
	PBTRACE_A_BUFFER_FOLLOW_FORKS,	/* flag */
	PBTRACE_A_BUFFER_INDEX,		/* u32 */
	PBTRACE_A_BUFFER_TRACEPOINTS,	/* nest of PBTRACE_A_TP */
	PBTRACE_A_TP,			/* nest of PBTRACE_A_TP_* */
	PBTRACE_A_TP_NAME,		/* string "group/name" */
	PBTRACE_A_TP_ID,		/* u32, tracefs events/G/N/id */
	PBTRACE_A_TP_PROTO_ID,		/* u32, FtraceEvent field written */
	PBTRACE_A_TP_FLAGS,		/* u32, PBTRACE_TP_* */
	PBTRACE_A_TP_FILTER,		/* string, ftrace filter syntax */
	PBTRACE_A_TP_PERIOD,		/* u32, PerfSample every Nth hit */
	PBTRACE_A_TP_FIELDS,		/* nest of PBTRACE_A_TP_FIELD */
	PBTRACE_A_TP_FIELD,		/* nest of PBTRACE_A_TPF_* */
	PBTRACE_A_TPF_NAME,		/* string */
	PBTRACE_A_TPF_OFFSET,		/* u32, from the record's start */
	PBTRACE_A_TPF_SIZE,		/* u32, bytes in the record */
	PBTRACE_A_TPF_KIND,		/* u32, enum pbtrace_tpf_kind */
	PBTRACE_A_TPF_SIGNED,		/* flag */
	PBTRACE_A_TPF_ELEM_SIZE,	/* u32, PBTRACE_TPF_ARRAY element */
	PBTRACE_A_TPF_PROTO_ID,		/* u32, field number in the message */
	PBTRACE_A_TPF_PROTO_TYPE,	/* u32, FieldDescriptorProto.Type */
	PBTRACE_A_BUFFER_WATERMARK_MS,	/* u32, live watermark period */
	PBTRACE_A_BUFFER_WATERMARK_NS,	/* u64, BOOTTIME */
	PBTRACE_A_BUFFER_READ_NS,	/* u64, BOOTTIME */
	PBTRACE_A_BUFFER_WATERMARK_EXPEDITED,	/* flag */
	PBTRACE_A_MACHINE_PEER,		/* string: "cid 5", "tcp 10.0.2.2" */
	PBTRACE_A_MACHINE_CLAIMED,	/* string: the name its HELLO said */
	PBTRACE_A_MACHINE_SYSNAME,	/* string, its HELLO's utsname */
	PBTRACE_A_MACHINE_RELEASE,	/* string */
	PBTRACE_A_MACHINE_ARCH,		/* string */
	PBTRACE_A_ENDPOINT_MACHINE,	/* struct pbtrace_endpoint_machine */
	PBTRACE_A_LOAD_ID,		/* u32 */
	PBTRACE_A_LOAD_COMMIT,		/* flag */
	PBTRACE_A_NAMES,		/* nest of PBTRACE_A_NAME */
	PBTRACE_A_NAME,			/* nest of _MACHINE_NAME, PBTRACE_A_NAME_* */
	PBTRACE_A_NAME_CID,		/* u32 */
	PBTRACE_A_NAME_KEY,		/* binary, never in a reply */
	PBTRACE_A_NAME_LINE,		/* u32 */
	PBTRACE_A_NAME_FLAGS,		/* u32, PBTRACE_NAME_* */
	PBTRACE_A_NAMES_COUNT,		/* u32 */
	PBTRACE_A_NAMES_EVICTED,	/* u32 */
	__PBTRACE_A_MAX
};
#define PBTRACE_A_MAX (__PBTRACE_A_MAX - 1)

/*
 * Any tracepoint by name (PBTRACE_A_BUFFER_TRACEPOINTS, docs/generic-events.md):
 * userspace reads the event's layout from tracefs (events/G/N/format) and
 * sends it with the event's id; the kernel checks the id names that
 * tracepoint, bounds-checks every field against each record, compiles the
 * filter, and writes what PBTRACE_A_TP_FLAGS asks for from a probe run by
 * the tracepoint itself (a perf kernel counter's overflow handler).
 */
#define PBTRACE_MAX_TRACEPOINTS 2048	/* per session, all buffers */
#define PBTRACE_TP_MAX_FIELDS 40	/* per event, common_* fields included */
#define PBTRACE_TP_MAX_PROTO_ID 31	/* trace_processor reads field numbers < 32 */
#define PBTRACE_TP_FILTER_MAX 1024	/* bytes of a filter expression */
/* FtraceEvent fields from here up are self-described (generic_event_descriptors) */
#define PBTRACE_TP_GENERIC_PROTO_BASE 65536

#define PBTRACE_TP_FTRACE	(1u << 0)	/* the event in the FtraceEventBundle */
#define PBTRACE_TP_PERF_SAMPLE	(1u << 1)	/* a PerfSample packet per (Nth) hit */
#define PBTRACE_TP_KERNEL_STACK	(1u << 2)	/* PerfSample with kernel frames */
#define PBTRACE_TP_USER_STACK	(1u << 3)	/* PerfSample with user frames */

/* How a field's bytes are read (from its tracefs type). */
enum pbtrace_tpf_kind {
	PBTRACE_TPF_INT = 1,		/* 1, 2, 4 or 8 bytes; pointers too */
	PBTRACE_TPF_CHARS = 2,		/* char name[N]: string up to the NUL */
	PBTRACE_TPF_DATA_LOC_STR = 3,	/* __data_loc char[]: u32 len << 16 | offset */
	PBTRACE_TPF_DATA_LOC_BYTES = 4,	/* __data_loc other[]: bytes */
	PBTRACE_TPF_REL_LOC_STR = 5,	/* __rel_loc char[]: offset from after the field */
	PBTRACE_TPF_REL_LOC_BYTES = 6,
	PBTRACE_TPF_ARRAY = 7,		/* type name[N] of ints: repeated, not packed */
	PBTRACE_TPF_BYTES = 8,		/* anything else: its bytes */
};

/* Same values as Perfetto's TraceConfig.BufferConfig.FillPolicy. */
enum pbtrace_fill_policy {
	PBTRACE_FILL_UNSPECIFIED = 0,	/* treated as RING_BUFFER */
	PBTRACE_FILL_RING_BUFFER = 1,
	PBTRACE_FILL_DISCARD = 2,
};

enum pbtrace_session_state {
	PBTRACE_STATE_CONFIGURED = 1,
	PBTRACE_STATE_STARTED = 2,
	PBTRACE_STATE_STOPPED = 3,
};

/*
 * Why events were not written, one counter each, per CPU. Every event a
 * probe saw and did not write is counted in exactly one of these, and every
 * event in an overwritten chunk in lost_overwritten, so
 * emitted == written - lost_overwritten + all lost_* except lost_overwritten.
 */
struct pbtrace_cpu_stats {
	__u32 cpu;
	__u32 online;
	__u64 events_written;	/* events committed into a chunk */
	__u64 bytes_written;	/* every byte written into chunks: events, chunk headers */
	__u64 chunks_sealed;
	__u64 chunks_read;	/* handed back with PUT_CHUNK */
	__u64 chunks_overwritten;	/* RING_BUFFER: sealed, never read */
	__u64 chunks_discarded;	/* DISCARD: a full buffer refused a chunk */
	__u64 lost_full;	/* no free chunk (DISCARD, or all held) */
	__u64 lost_overwritten;	/* events inside overwritten chunks */
	__u64 lost_too_large;	/* event larger than a chunk */
	__u64 lost_nmi;		/* NMI context or probe recursion */
};

/*
 * One relayed machine's part in a session (PBTRACE_A_MACHINE_STATS). Loss is
 * counted where it happens: on the guest (its own buffers), on the wire
 * (gaps in its per-CPU chunk sequence), on the host (remote queue full),
 * and while it was not connected.
 */
struct pbtrace_machine_stats {
	__u32 machine_id;	/* the id stamped into the trace, non-zero */
	__u32 connected;	/* 1 while its relay is connected */
	__u32 buffer;		/* the session buffer its data goes to */
	__u32 num_cpus;
	__u64 chunks;		/* chunks written into the session */
	__u64 bytes;		/* their bytes, as stamped */
	__u64 chunks_lost_relay;	/* gaps in the guest's per-CPU chunk sequence */
	__u64 chunks_dropped;	/* host remote queue full: refused */
	__u64 guest_events_written;	/* the guest's own counters, last report */
	__u64 guest_events_lost;	/* the guest's lost_* summed, last report */
	__u64 disconnects;	/* connections lost while the session ran */
	__u64 gap_ns;		/* BOOTTIME the session ran without it */
	__u64 pings;		/* complete ping rounds */
	__u64 rtt_ns;		/* smallest round trip */
	__s64 offset_ns;	/* host BOOTTIME - guest BOOTTIME, at rtt_ns */
	__u64 offset_spread_ns;	/* max - min offset over the rounds */
	/* rounds written as remote_clock_sync: those within twice the
	 * smallest RTT so far
	 */
	__u64 clock_syncs;
};

/* PBTRACE_A_NAME_FLAGS */
#define PBTRACE_NAME_KEYED	(1u << 0)	/* a TCP relay's key, not a CID */
#define PBTRACE_NAME_PARAM	(1u << 1)	/* endpoint_machines= or endpoint_keys= */

/* struct pbtrace_endpoint_machine.flags */
#define PBTRACE_EPM_PINNED	(1u << 0)	/* its name is the names table's */
#define PBTRACE_EPM_RENAMED	(1u << 1)	/* NAME@PEER: NAME was another's */
#define PBTRACE_EPM_TCP		(1u << 2)	/* over TCP, else vsock */
#define PBTRACE_EPM_RETIRED	(1u << 3)	/* a names change took it away:
						 * its peer comes back as another
						 */

/*
 * One machine of the endpoint's table (PBTRACE_CMD_GET_MACHINES): what
 * its relay's last HELLO said and what the endpoint measured.
 */
struct pbtrace_endpoint_machine {
	__u32 machine_id;
	__u32 online;		/* 1 while its relay is connected */
	__u32 flags;		/* PBTRACE_EPM_* */
	__u32 cid;		/* vsock: the guest's CID; 0 over TCP */
	__u32 num_cpus;
	__u32 connects;		/* connections admitted as this machine */
	__u64 ram_bytes;
	__u64 pings;		/* ping rounds over all its connections */
	__u64 rtt_ns;		/* the last round's */
	__s64 offset_ns;	/* host BOOTTIME - guest BOOTTIME, the last round's */
	__u64 offline_ns;	/* how long it has been offline; 0 while online */
	__u8 hint[16];		/* its relay's machine-id hint (boot_id) */
};

/* Chunk states, in struct pbtrace_chunk_meta.state. */
enum pbtrace_chunk_state {
	PBTRACE_CHUNK_FREE = 0,
	PBTRACE_CHUNK_WRITING = 1,
	PBTRACE_CHUNK_SEALED = 2,
	PBTRACE_CHUNK_READING = 3,
};

struct pbtrace_chunk_meta {
	__u32 state;
	__u32 used;		/* valid bytes from the chunk's start */
	__u64 seq;		/* global seal order within the buffer */
	__u32 cpu;
	__u32 events;
};

#define PBTRACE_MMAP_MAGIC 0x50425452	/* "PBTR" */
#define PBTRACE_MMAP_VERSION 1

/* At offset 0 of the mapping; everything in the mapping is read-only. */
struct pbtrace_mmap_header {
	__u32 magic;
	__u32 version;
	__u32 nr_cpus;		/* nr_cpu_ids: length of the stats array */
	__u32 chunks_per_cpu;
	__u32 chunk_size;	/* bytes */
	__u32 fill_policy;
	__u32 sequence_id_base;	/* CPU n writes trusted_packet_sequence_id base + n */
	__u32 pad;
	__u64 stats_offset;	/* struct pbtrace_cpu_stats[nr_cpus] */
	__u64 chunks_offset;	/* struct pbtrace_chunk_meta[nr_cpus * chunks_per_cpu] */
	/* page aligned; chunk i of cpu c at
	 * data_offset + (c * chunks_per_cpu + i) * chunk_size
	 */
	__u64 data_offset;
	__u64 mmap_size;
	/*
	 * The live watermark (PBTRACE_A_BUFFER_WATERMARK_MS; 0 without one).
	 * Every event of this buffer stamped before watermark_ns is in a
	 * sealed chunk whose seq is below watermark_seq, or was counted lost:
	 * a reader that has taken every chunk below watermark_seq has every
	 * event before watermark_ns, from all CPUs, and no later chunk holds
	 * one. Both change together under watermark_gen, a sequence count:
	 * read it (odd: being changed, read again), then the two, then it
	 * again, and retry if it moved. Added after version 1's first
	 * release without a version change: older readers ignore it.
	 */
	__u32 watermark_gen;
	__u32 watermark_ms;	/* the period asked for */
	__u64 watermark_ns;	/* BOOTTIME; ~0 once stopped: everything */
	__u64 watermark_seq;
};

struct pbtrace_attach {
	__u32 session_id;	/* in */
	__u32 buffer;		/* in: index into the session's buffers */
	__u64 mmap_size;	/* out */
};

struct pbtrace_chunk_req {
	__u32 index;		/* out: c * chunks_per_cpu + i; PUT_CHUNK: in */
	__u32 cpu;		/* out */
	__u64 offset;		/* out: byte offset in the mapping */
	__u32 len;		/* out: valid bytes */
	__u32 events;		/* out */
	__u64 seq;		/* out */
};

#define PBTRACE_IOC_MAGIC 0xb7
#define PBTRACE_IOC_ATTACH _IOWR(PBTRACE_IOC_MAGIC, 1, struct pbtrace_attach)
#define PBTRACE_IOC_GET_CHUNK _IOR(PBTRACE_IOC_MAGIC, 2, struct pbtrace_chunk_req)
#define PBTRACE_IOC_PUT_CHUNK _IOW(PBTRACE_IOC_MAGIC, 3, struct pbtrace_chunk_req)

/* The largest record READ_REMOTE hands out: a 256 KiB chunk, stamped. */
#define PBTRACE_REMOTE_READ_MIN (512 * 1024)
#define PBTRACE_REMOTE_EOF 1u

struct pbtrace_remote_read {
	__u64 buf;		/* in: user address */
	__u32 size;		/* in: bytes at buf, >= PBTRACE_REMOTE_READ_MIN */
	__u32 len;		/* out: bytes of whole records copied */
	__u32 flags;		/* out: PBTRACE_REMOTE_EOF */
	__u32 pad;
};

#define PBTRACE_IOC_READ_REMOTE _IOWR(PBTRACE_IOC_MAGIC, 4, struct pbtrace_remote_read)

struct pbtrace_mapping_path {
	__u64 ino;		/* in */
	__u32 dev_major;	/* in */
	__u32 dev_minor;	/* in */
	__u64 buf;		/* in: user address */
	__u32 size;		/* in: bytes at buf */
	__u32 len;		/* out: the path's length, without the NUL */
};

#define PBTRACE_IOC_MAPPING_PATH _IOWR(PBTRACE_IOC_MAGIC, 5, struct pbtrace_mapping_path)

#endif /* _UAPI_LINUX_PBTRACE_H */
