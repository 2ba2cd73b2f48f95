/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Any tracepoint's record -> protobuf (docs/generic-events.md). Plain C
 * (pb_types.h), compiled into the module, the unit tests and the fuzzer.
 *
 *   pbt_tp_check()       is a layout one we can encode? (netlink, userspace)
 *   pbt_tp_descriptor()  FtraceEventBundle.GenericEventDescriptor bytes
 *   pbt_tp_encode()      one record -> the event's message body
 *
 * The layout is userspace's word, never trusted for memory safety: every
 * read is checked against the record's real size, __data_loc/__rel_loc
 * offsets and lengths included. A field outside the record is left out.
 */
#ifndef _PBTRACE_TP_ENCODE_H
#define _PBTRACE_TP_ENCODE_H

#include "pb.h"
#include "tp_layout.h"

/* FieldDescriptorProto.Type values the encoder writes. */
#define PBT_PT_INT64	3
#define PBT_PT_UINT64	4
#define PBT_PT_INT32	5
#define PBT_PT_BOOL	8
#define PBT_PT_STRING	9
#define PBT_PT_BYTES	12
#define PBT_PT_UINT32	13
#define PBT_PT_SINT32	17
#define PBT_PT_SINT64	18

/* The largest record any tracepoint hands out (PERF_MAX_TRACE_SIZE). */
#define PBT_TP_RECORD_MAX 8192

/*
 * NULL if @l can be encoded, else what is wrong, in @msg (@len bytes,
 * always NUL-terminated): "field 3 (name): ...". Checks kinds, sizes,
 * proto ids (unique, 1..PBTRACE_TP_MAX_PROTO_ID) and types against kinds;
 * offsets only against PBT_TP_RECORD_MAX (records vary in size).
 */
const char *pbt_tp_check(const struct pbt_tp_layout *l, char *msg, size_t len);

/*
 * The serialised GenericEventDescriptor { field_id, event_descriptor =
 * DescriptorProto { name, field { name, number, type } }, group_name } of
 * @l into @out (@size bytes). Returns its length, or 0 if it does not fit.
 */
size_t pbt_tp_descriptor(const struct pbt_tp_layout *l, uint8_t *out,
			 size_t size);

/*
 * The fields of @l read from @rec (@rec_size bytes) as the event's message
 * body, in layout order; proto_id 0 fields are skipped. On overflow sets
 * b->overflow as pb.h does. Returns the number of fields left out because
 * the record does not hold them (a wrong layout, or a lying offset).
 */
unsigned int pbt_tp_encode(struct pb_buf *b, const struct pbt_tp_layout *l,
			   const void *rec, uint32_t rec_size);

#endif /* _PBTRACE_TP_ENCODE_H */
