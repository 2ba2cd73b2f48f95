// SPDX-License-Identifier: GPL-2.0
/*
 * Native events asked for through the generic path (a filter, a stack):
 * Perfetto's own field numbers, read from trace.proto's descriptors so
 * that no table here can drift from the schema (tracefs.h).
 */
#include <protobuf-c/protobuf-c.h>

#include "trace.pb-c.h"
#include "tracefs.h"

/* ProtobufCType -> FieldDescriptorProto.Type (descriptor.proto). */
static uint8_t pb_type(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32: return 5;
	case PROTOBUF_C_TYPE_SINT32: return 17;
	case PROTOBUF_C_TYPE_SFIXED32: return 15;
	case PROTOBUF_C_TYPE_INT64: return 3;
	case PROTOBUF_C_TYPE_SINT64: return 18;
	case PROTOBUF_C_TYPE_SFIXED64: return 16;
	case PROTOBUF_C_TYPE_UINT32: return 13;
	case PROTOBUF_C_TYPE_FIXED32: return 7;
	case PROTOBUF_C_TYPE_UINT64: return 4;
	case PROTOBUF_C_TYPE_FIXED64: return 6;
	case PROTOBUF_C_TYPE_FLOAT: return 2;
	case PROTOBUF_C_TYPE_DOUBLE: return 1;
	case PROTOBUF_C_TYPE_BOOL: return 8;
	case PROTOBUF_C_TYPE_ENUM: return 14;
	case PROTOBUF_C_TYPE_STRING: return 9;
	case PROTOBUF_C_TYPE_BYTES: return 12;
	case PROTOBUF_C_TYPE_MESSAGE: return 11;
	}
	return 0;
}

/* Can the encoder write a field of this kind as that proto type? Only
 * varints and length-delimited values: it writes nothing else. */
static bool fits(const struct pbt_tpf *f, ProtobufCType t)
{
	bool str = f->kind == PBTRACE_TPF_CHARS ||
		   f->kind == PBTRACE_TPF_DATA_LOC_STR ||
		   f->kind == PBTRACE_TPF_REL_LOC_STR;
	bool num = f->kind == PBTRACE_TPF_INT || f->kind == PBTRACE_TPF_ARRAY;

	switch (t) {
	case PROTOBUF_C_TYPE_STRING:
		return str;
	case PROTOBUF_C_TYPE_BYTES:
		return !num;
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL: case PROTOBUF_C_TYPE_ENUM:
		return num;
	default:
		return false;
	}
}

int pbt_tp_native_ids(struct pbt_tp_layout *l)
{
	const ProtobufCMessageDescriptor *ev = &perfetto__protos__ftrace_event__descriptor;
	const ProtobufCFieldDescriptor *fd, *mf;
	const ProtobufCMessageDescriptor *md;
	uint16_t i;

	fd = protobuf_c_message_descriptor_get_field_by_name(ev, l->name);
	if (!fd || fd->type != PROTOBUF_C_TYPE_MESSAGE || !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ||
	    !strcmp(l->name, "generic"))
		return 0;
	md = fd->descriptor;
	l->proto_id = fd->id;
	for (i = 0; i < l->nr_fields && i < PBTRACE_TP_MAX_FIELDS; i++) {
		struct pbt_tpf *f = &l->fields[i];

		mf = strncmp(f->name, "common_", 7) ?
		     protobuf_c_message_descriptor_get_field_by_name(md, f->name) :
		     NULL;
		if (!mf || !fits(f, mf->type) || mf->id > UINT8_MAX) {
			f->proto_id = 0;
			continue;
		}
		f->proto_id = (uint8_t)mf->id;
		f->proto_type = pb_type(mf->type);
	}
	return 1;
}
