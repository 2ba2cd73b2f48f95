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

/*
 * The probe's form of a layout whose written fields are all fixed-size
 * ints or int arrays (raw_syscalls' sys_enter, kmem's kmalloc): one op per
 * value written, each an 8-byte load and two shifts. One check of the
 * record's size and one of the room left stand for every field's: a
 * record shorter than @rec_min, or a buffer with less than @room bytes
 * left, goes through pbt_tp_encode() and its checks per field.
 */
struct pbt_tp_fast_op {
	uint16_t offset;	/* of the value in the record */
	uint8_t shift;		/* bits above the value in its 8-byte load */
	uint8_t how;		/* PBT_FAST_*: sign, conversion */
	uint8_t tag[2];		/* the field's tag, as written */
	uint8_t tag_len;	/* 1, or 2 for a proto id above 15 */
	uint8_t unused;
};

struct pbt_tp_fast {
	uint32_t rec_min;	/* every op's 8-byte load is below it */
	uint32_t room;		/* the most bytes the ops write */
	uint32_t nr;
	struct pbt_tp_fast_op ops[];
};

#define PBT_TP_FAST_MAX_OPS 64

/*
 * The number of ops @l compiles to, 0 if it has a field the fast form
 * does not take (strings, bytes, dynamic arrays, a bad size), no field to
 * write, or more than PBT_TP_FAST_MAX_OPS values; and into @f, if not
 * NULL (room for that many ops), the compiled form.
 */
uint32_t pbt_tp_fast_compile(const struct pbt_tp_layout *l,
			     struct pbt_tp_fast *f);

static inline size_t pbt_tp_fast_size(uint32_t nr)
{
	return sizeof(struct pbt_tp_fast) + nr * sizeof(struct pbt_tp_fast_op);
}

/*
 * pbt_tp_encode(), byte for byte, by @f when @f (may be NULL) is @l's
 * compiled form and the record and the buffer are large enough.
 */
unsigned int pbt_tp_encode_fast(struct pb_buf *b, const struct pbt_tp_fast *f,
				const struct pbt_tp_layout *l,
				const void *rec, uint32_t rec_size);

#endif /* _PBTRACE_TP_ENCODE_H */
