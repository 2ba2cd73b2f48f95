/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a .pftrace one Trace.packet at a time (summary, syscall view),
 * or one record at a time with its top-level fields (tracectl merge).
 */
#ifndef PBT_TRACE_FILE_H
#define PBT_TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace.pb-c.h"

/*
 * The record at *p, unpacked into *pkt (free it with
 * perfetto__protos__trace_packet__free_unpacked) and *p moved past it: 1.
 * A record cut short by @end (a file still being written): 0, *p unmoved.
 * Bytes that are no Trace.packet record: -1.
 */
int trace_next_packet(const uint8_t **p, const uint8_t *end,
		      Perfetto__Protos__TracePacket **pkt);

/* The same, the record's TracePacket bytes in *pkt, *len, not unpacked. */
int trace_next_record(const uint8_t **p, const uint8_t *end,
		      const uint8_t **pkt, size_t *len);

/* What a TracePacket holds at its top level, read without unpacking it. */
struct trace_fields {
	uint32_t machine_id;	/* 0: the recording machine */
	uint64_t has[2];	/* bit N: field N (< 128) is present */
};

/* 0, or -1 if the bytes are no protobuf message. */
int trace_packet_fields(const uint8_t *pkt, size_t len,
			struct trace_fields *f);
bool trace_fields_has(const struct trace_fields *f, uint32_t nr);

/*
 * The packet without its machine_id, every other field byte for byte, in
 * @out (room for @len bytes; may be @pkt itself; NULL: only measure): its
 * length, or (size_t)-1 if the bytes are no protobuf message.
 */
size_t trace_packet_strip_machine(const uint8_t *pkt, size_t len,
				  uint8_t *out);

/* The tag and length that make @len packet bytes a record: at most 11. */
#define TRACE_RECORD_HEADER_MAX 11
size_t trace_record_header(uint8_t *out, size_t len);

#endif
