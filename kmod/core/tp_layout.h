/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One tracepoint's record, as its tracefs format file describes it: the
 * layout every part of the generic path shares. Plain C (pb_types.h), so
 * the module, userspace (which fills it from tracefs and sends it with
 * PBTRACE_A_TP_FIELDS) and the unit tests and fuzzers use the same struct.
 *
 *   tp_encode.c   the record -> FtraceEvent fields, and the
 *                 GenericEventDescriptor that describes them
 *   filter.c      ftrace filter expressions -> a checked program over
 *                 the record
 *
 * Nothing here trusts the layout: every read of a record checks the field
 * against the record's real size, so a wrong layout gives wrong values,
 * never a read out of bounds.
 */
#ifndef _PBTRACE_TP_LAYOUT_H
#define _PBTRACE_TP_LAYOUT_H

#include "pb_types.h"
#ifdef __KERNEL__
#include <uapi/linux/pbtrace.h>
#else
#include <linux/pbtrace.h>
#endif

#define PBT_TPF_NAME_MAX 48		/* longest field name kept, NUL included */

struct pbt_tpf {
	char name[PBT_TPF_NAME_MAX];
	uint16_t offset;		/* from the record's start (common fields first) */
	uint16_t size;			/* bytes in the record */
	uint8_t kind;			/* enum pbtrace_tpf_kind */
	uint8_t is_signed;
	uint8_t elem_size;		/* PBTRACE_TPF_ARRAY: 1, 2, 4 or 8 */
	uint8_t proto_id;		/* 1..PBTRACE_TP_MAX_PROTO_ID; 0: not written */
	uint8_t proto_type;		/* FieldDescriptorProto.Type */
};

struct pbt_tp_layout {
	char group[PBTRACE_NAME_MAX];	/* "sched" */
	char name[PBTRACE_NAME_MAX];	/* "sched_switch" */
	uint32_t proto_id;		/* FtraceEvent field the event is written as */
	uint16_t nr_fields;
	struct pbt_tpf fields[PBTRACE_TP_MAX_FIELDS];
};

#endif /* _PBTRACE_TP_LAYOUT_H */
