/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packets the host writes for a relayed machine, from what its relay
 * sent (docs/relay-protocol.md): a SystemInfo from its HELLO, so
 * trace_processor's machine table gets its row, and a RemoteClockSync from
 * each complete ping round, so its events land on the host's timeline.
 * Both are stamped with the machine's id: only the host writes these, never
 * a guest (chunk_check() refuses them in guest data).
 *
 * Plain C on pb.h, like the probes' encoder; the caller includes the
 * generated pbtrace_fields.h. Each function writes one whole Trace.packet
 * record and returns its length, or 0 if it does not fit in @len.
 */
#ifndef _PBTRACE_RELAY_PACKETS_H
#define _PBTRACE_RELAY_PACKETS_H

#include "pb.h"
#include "frame.h"

/* Packet header fields every relayed-machine packet carries. */
static inline void relay_packet_ids(struct pb_buf *b, uint32_t machine_id,
				    uint32_t seq_id)
{
	if (seq_id)
		pb_varint(b, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID, seq_id);
	pb_varint(b, PB_TRACEPACKET_MACHINE_ID, machine_id);
}

static inline void relay_str(struct pb_buf *b, uint32_t field,
			     const struct frame_str *s)
{
	if (s->len)
		pb_bytes(b, field, s->p, s->len);
}

/* TracePacket { machine_id, system_info { utsname, cpus, RAM, name } } */
static inline size_t relay_system_info(void *buf, size_t len,
				       uint32_t machine_id, uint32_t seq_id,
				       const struct frame_hello *h)
{
	uint8_t *rec, *si, *uts;
	struct pb_buf b;

	pb_init(&b, buf, len);
	rec = pb_nest_begin(&b, 1, 2);
	relay_packet_ids(&b, machine_id, seq_id);
	si = pb_nest_begin(&b, PB_TRACEPACKET_SYSTEM_INFO, 2);
	uts = pb_nest_begin(&b, PB_SYSTEMINFO_UTSNAME, 2);
	relay_str(&b, PB_UTSNAME_SYSNAME, &h->sysname);
	relay_str(&b, PB_UTSNAME_VERSION, &h->version);
	relay_str(&b, PB_UTSNAME_RELEASE, &h->release);
	relay_str(&b, PB_UTSNAME_MACHINE, &h->machine);
	pb_nest_end(&b, uts, 2);
	pb_varint(&b, PB_SYSTEMINFO_NUM_CPUS, h->num_cpus);
	pb_varint(&b, PB_SYSTEMINFO_SYSTEM_RAM_BYTES, h->ram_bytes);
	relay_str(&b, PB_SYSTEMINFO_MACHINE_NAME,
		  h->name.len ? &h->name : &h->sysname);
	pb_nest_end(&b, si, 2);
	pb_nest_end(&b, rec, 2);
	return b.overflow ? 0 : pb_len(&b, buf);
}

/* Perfetto's BuiltinClock id of each frame clock. */
static inline uint32_t relay_clock_id(int clk)
{
	switch (clk) {
	case FRAME_CLK_BOOTTIME:
		return PB_CLOCKSNAPSHOT_CLOCK_BUILTINCLOCKS_BOOTTIME;
	case FRAME_CLK_MONOTONIC:
		return PB_CLOCKSNAPSHOT_CLOCK_BUILTINCLOCKS_MONOTONIC;
	}
	return PB_CLOCKSNAPSHOT_CLOCK_BUILTINCLOCKS_REALTIME;
}

static inline void relay_snapshot(struct pb_buf *b, uint32_t field,
				  const uint64_t *clocks)
{
	uint8_t *snap, *clk;
	int i;

	snap = pb_nest_begin(b, field, 1);
	for (i = 0; i < FRAME_NR_CLOCKS; i++) {
		clk = pb_nest_begin(b, PB_CLOCKSNAPSHOT_CLOCKS, 1);
		pb_varint(b, PB_CLOCKSNAPSHOT_CLOCK_CLOCK_ID, relay_clock_id(i));
		pb_varint(b, PB_CLOCKSNAPSHOT_CLOCK_TIMESTAMP, clocks[i]);
		pb_nest_end(b, clk, 1);
	}
	pb_nest_end(b, snap, 1);
}

static inline void relay_synced(struct pb_buf *b, const uint64_t *client,
				const uint64_t *host)
{
	uint8_t *sc = pb_nest_begin(b, PB_REMOTECLOCKSYNC_SYNCED_CLOCKS, 1);

	relay_snapshot(b, PB_REMOTECLOCKSYNC_SYNCEDCLOCKS_CLIENT_CLOCKS, client);
	relay_snapshot(b, PB_REMOTECLOCKSYNC_SYNCEDCLOCKS_HOST_CLOCKS, host);
	pb_nest_end(b, sc, 1);
}

/*
 * One ping round as trace_processor wants it: client t1 (PING sent), host
 * t2 (PING received), client t4 (PONG received), host t3 (PONG sent).
 * Pairing each client snapshot with the host's nearest one and averaging
 * the two offsets cancels the one-way delays.
 */
static inline size_t relay_clock_sync(void *buf, size_t len,
				      uint32_t machine_id, uint32_t seq_id,
				      const uint64_t *t1, const uint64_t *t2,
				      const uint64_t *t3, const uint64_t *t4)
{
	uint8_t *rec, *rcs;
	struct pb_buf b;

	pb_init(&b, buf, len);
	rec = pb_nest_begin(&b, 1, 2);
	relay_packet_ids(&b, machine_id, seq_id);
	rcs = pb_nest_begin(&b, PB_TRACEPACKET_REMOTE_CLOCK_SYNC, 2);
	relay_synced(&b, t1, t2);
	relay_synced(&b, t4, t3);
	pb_nest_end(&b, rcs, 2);
	pb_nest_end(&b, rec, 2);
	return b.overflow ? 0 : pb_len(&b, buf);
}

#endif /* _PBTRACE_RELAY_PACKETS_H */
