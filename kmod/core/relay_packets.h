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
 * One ping round: client t1 (PING sent) and t4 (PONG received), host t2
 * (PING received) and t3 (PONG sent), each an array of FRAME_NR_CLOCKS.
 *
 * trace_processor reads the two (client, host) pairs (c1, h1), (c2, h2) as
 * Perfetto's 1.5-round exchange and averages (c1 + c2) / 2 - h1 and
 * c2 - (h1 + h2) / 2. Written as (t1, t2), (t4, t3) that is off from the
 * NTP midpoint by about a quarter of the round trip. Paired instead with
 * the host's midpoint m = (t2 + t3) / 2 and m + (t4 - t1), both of its
 * terms are exactly ((t1 - t2) + (t4 - t3)) / 2, the NTP offset. A reader
 * still gets a bound: the true offset lies in (t1 - h1, t4 - h1).
 */
static inline void relay_round_host(uint64_t *h1, uint64_t *h2,
				    const uint64_t *t1, const uint64_t *t2,
				    const uint64_t *t3, const uint64_t *t4)
{
	int i;

	for (i = 0; i < FRAME_NR_CLOCKS; i++) {
		/* t3 - t2 is the host's reply time; halve it signed. */
		h1[i] = t2[i] + (uint64_t)((int64_t)(t3[i] - t2[i]) / 2);
		h2[i] = h1[i] + (t4[i] - t1[i]);
	}
}

static inline size_t relay_clock_sync(void *buf, size_t len,
				      uint32_t machine_id, uint32_t seq_id,
				      const uint64_t *t1, const uint64_t *t2,
				      const uint64_t *t3, const uint64_t *t4)
{
	uint64_t h1[FRAME_NR_CLOCKS], h2[FRAME_NR_CLOCKS];
	uint8_t *rec, *rcs;
	struct pb_buf b;

	relay_round_host(h1, h2, t1, t2, t3, t4);
	pb_init(&b, buf, len);
	rec = pb_nest_begin(&b, 1, 2);
	relay_packet_ids(&b, machine_id, seq_id);
	rcs = pb_nest_begin(&b, PB_TRACEPACKET_REMOTE_CLOCK_SYNC, 2);
	relay_synced(&b, t1, h1);
	relay_synced(&b, t4, h2);
	pb_nest_end(&b, rcs, 2);
	pb_nest_end(&b, rec, 2);
	return b.overflow ? 0 : pb_len(&b, buf);
}

#endif /* _PBTRACE_RELAY_PACKETS_H */
