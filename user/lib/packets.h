/* SPDX-License-Identifier: GPL-2.0 */
/*
 * traced's own packets: trace_config, system_info, trace_attributes,
 * clock_snapshot, process_tree, process_stats, sys_stats, service_event,
 * trigger, ftrace_stats and trace_stats. Each builder returns one whole Trace.packet
 * record (0x0A, length, TracePacket) ready to append to the file, built
 * with the protobuf-c code generated from proto/trace.proto.
 *
 * Every packet is stamped with the session's trusted_packet_sequence_id
 * (>= PBT_TRACED_SEQ_BASE, never one the kernel uses) and a BOOTTIME
 * timestamp, the clock the kernel's events use.
 */
#ifndef PBT_PACKETS_H
#define PBT_PACKETS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/pbtrace.h>

#define PBT_TRACED_SEQ_BASE PBTRACE_SEQ_ID_USER_BASE

struct pbt_seq {
	uint32_t id;		/* trusted_packet_sequence_id */
	int started;		/* a packet went out on this sequence */
	int gap;		/* next packet carries previous_packet_dropped */
};

/* One Trace.packet record; free(data) when written. */
struct pbt_rec {
	uint8_t *data;
	size_t len;
};

/* The kernel buffer's counters as traced saw them, for the stats packets. */
struct pbt_buffer_stats {
	uint64_t buffer_size;		/* bytes of chunk memory */
	uint64_t bytes_read;		/* bytes traced copied to the file */
	size_t nr_cpus;
	const struct pbtrace_cpu_stats *cpus;
};

/* Service events, as TracingServiceEvent's oneof names them. */
enum pbt_service_event {
	PBT_SVC_TRACING_STARTED,
	PBT_SVC_ALL_DATA_SOURCES_STARTED,
	PBT_SVC_FLUSH_STARTED,
	PBT_SVC_ALL_DATA_SOURCES_FLUSHED,
	PBT_SVC_READ_TRACING_BUFFERS_COMPLETED,
	PBT_SVC_TRACING_DISABLED,
};

#define PBT_SYS_MEMINFO 0x1
#define PBT_SYS_VMSTAT 0x2
#define PBT_SYS_STAT 0x4

/* All return 0 or -errno (-ENOMEM; -ENOENT if @proc cannot be read). */
int pbt_pkt_trace_config(struct pbt_seq *s, const void *cfg, size_t len,
			 struct pbt_rec *r);
/* @name: SystemInfo.machine_name, NULL or "" for the nodename (uname -n). */
int pbt_pkt_system_info(struct pbt_seq *s, const char *name,
			struct pbt_rec *r);
/* Which boot of the machine a file holds: a trace_attributes packet with
 * PBT_ATTR_BOOT_ID, the UUID pbt_boot_id() read. */
#define PBT_ATTR_BOOT_ID "pbtrace.boot_id"
#define PBT_BOOT_ID_LEN 36
int pbt_boot_id(const char *proc, char id[PBT_BOOT_ID_LEN + 1]);
int pbt_pkt_trace_attributes(struct pbt_seq *s, const char *boot_id,
			     struct pbt_rec *r);
int pbt_pkt_clock_snapshot(struct pbt_seq *s, struct pbt_rec *r);
/* @proc: "/proc" (tests pass a fixture tree). */
int pbt_pkt_process_tree(struct pbt_seq *s, const char *proc,
			 struct pbt_rec *r);
int pbt_pkt_process_stats(struct pbt_seq *s, const char *proc,
			  struct pbt_rec *r);
int pbt_pkt_sys_stats(struct pbt_seq *s, const char *proc, unsigned int what,
		      struct pbt_rec *r);
/* @ts: the packet's BOOTTIME timestamp, 0 for now. */
int pbt_pkt_service_event(struct pbt_seq *s, enum pbt_service_event ev,
			  uint64_t ts, struct pbt_rec *r);
int pbt_pkt_trigger(struct pbt_seq *s, const char *name,
		    uint64_t stop_delay_ms, struct pbt_rec *r);
/* @end: END_OF_TRACE phase, else START_OF_TRACE. Per CPU, summed over
 * buffers. */
int pbt_pkt_ftrace_stats(struct pbt_seq *s, int end,
			 const struct pbt_buffer_stats *b, size_t n,
			 struct pbt_rec *r);
int pbt_pkt_trace_stats(struct pbt_seq *s, const struct pbt_buffer_stats *b,
			size_t n, uint64_t flushes_requested,
			uint64_t flushes_succeeded, struct pbt_rec *r);

/* A relayed machine's counters as trace_stats with its machine_id
 * (-EINVAL for machine_id 0, which would mean this machine). */
int pbt_pkt_machine_stats(struct pbt_seq *s,
			  const struct pbtrace_machine_stats *m,
			  struct pbt_rec *r);

/* CLOCK_BOOTTIME in ns. */
uint64_t pbt_boottime_ns(void);

#endif /* PBT_PACKETS_H */
