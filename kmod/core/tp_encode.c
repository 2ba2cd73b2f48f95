// SPDX-License-Identifier: GPL-2.0
/*
 * Any tracepoint's record -> protobuf; see tp_encode.h. Types follow
 * Perfetto's ToGenericProtoField (proto_translation_table.cc): ints as
 * int64/uint64 varints, strings as strings, other arrays as bytes or
 * repeated ints.
 */
#include "tp_encode.h"
#ifdef __KERNEL__
#include <linux/kernel.h>	/* snprintf */
#else
#include <stdio.h>
#include <sys/cdefs.h>		/* glibc's __always_inline */
#endif

/* DescriptorProto and FieldDescriptorProto field numbers (descriptor.proto) */
#define DP_NAME		1
#define DP_FIELD	2
#define FDP_NAME	1
#define FDP_NUMBER	3
#define FDP_LABEL	4
#define FDP_TYPE	5
#define LABEL_OPTIONAL	1
#define LABEL_REPEATED	3
/* FtraceEventBundle.GenericEventDescriptor */
#define GED_FIELD_ID	1
#define GED_DESCRIPTOR	2
#define GED_GROUP	3

static __always_inline bool pt_varint(unsigned int t)
{
	return t == PBT_PT_INT64 || t == PBT_PT_UINT64 || t == PBT_PT_INT32 ||
	       t == PBT_PT_UINT32 || t == PBT_PT_BOOL ||
	       t == PBT_PT_SINT32 || t == PBT_PT_SINT64;
}

static bool pt_len(unsigned int t)
{
	return t == PBT_PT_STRING || t == PBT_PT_BYTES;
}

static __always_inline bool int_size(unsigned int n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

/* What is wrong with field @f, or NULL. */
static const char *field_problem(const struct pbt_tpf *f)
{
	bool loc = f->kind >= PBTRACE_TPF_DATA_LOC_STR &&
		   f->kind <= PBTRACE_TPF_REL_LOC_BYTES;

	if (!f->name[0] || pb_strnlen(f->name, PBT_TPF_NAME_MAX) ==
	    PBT_TPF_NAME_MAX)
		return "no name, or a name without its NUL";
	if (f->kind < PBTRACE_TPF_INT || f->kind > PBTRACE_TPF_BYTES)
		return "unknown kind (enum pbtrace_tpf_kind)";
	if (!f->size || (uint32_t)f->offset + f->size > PBT_TP_RECORD_MAX)
		return "offset + size beyond the largest record (8192 bytes)";
	if (f->proto_id > PBTRACE_TP_MAX_PROTO_ID)
		return "proto id above 31 (trace_processor reads < 32)";
	if (f->kind == PBTRACE_TPF_INT && !int_size(f->size))
		return "an int of size other than 1, 2, 4 or 8";
	if (loc && f->size != 4)
		return "a __data_loc/__rel_loc of size other than 4";
	if (f->kind == PBTRACE_TPF_ARRAY &&
	    (!int_size(f->elem_size) || f->size % f->elem_size))
		return "an array whose element size is not 1, 2, 4 or 8 or does not divide its size";
	if (!f->proto_id)
		return NULL;
	if (f->kind == PBTRACE_TPF_INT || f->kind == PBTRACE_TPF_ARRAY) {
		if (!pt_varint(f->proto_type))
			return "an int written as other than an int type";
		return NULL;
	}
	if ((f->kind == PBTRACE_TPF_DATA_LOC_BYTES ||
	     f->kind == PBTRACE_TPF_REL_LOC_BYTES) && pt_varint(f->proto_type)) {
		if (!int_size(f->elem_size))
			return "a dynamic int array without element size 1, 2, 4 or 8";
		return NULL;
	}
	if (!pt_len(f->proto_type))
		return "a string or bytes field written as other than string or bytes";
	return NULL;
}

const char *pbt_tp_check(const struct pbt_tp_layout *l, char *msg, size_t len)
{
	uint32_t used = 0;
	const char *why;
	unsigned int i;

	if (l->nr_fields > PBTRACE_TP_MAX_FIELDS) {
		snprintf(msg, len, "more than %d fields", PBTRACE_TP_MAX_FIELDS);
		return msg;
	}
	if (!l->proto_id) {
		snprintf(msg, len, "proto id 0: no FtraceEvent field");
		return msg;
	}
	for (i = 0; i < l->nr_fields; i++) {
		const struct pbt_tpf *f = &l->fields[i];

		why = field_problem(f);
		if (!why && f->proto_id && (used & (1u << f->proto_id)))
			why = "proto id used by an earlier field";
		if (why) {
			snprintf(msg, len, "field %u (%.*s): %s", i,
				 (int)pb_strnlen(f->name, PBT_TPF_NAME_MAX),
				 f->name, why);
			return msg;
		}
		if (f->proto_id)
			used |= 1u << f->proto_id;
	}
	return NULL;
}

/* Written as repeated ints: an array, or a dynamic one read as ints. */
static bool repeated(const struct pbt_tpf *f)
{
	return f->kind == PBTRACE_TPF_ARRAY ||
	       ((f->kind == PBTRACE_TPF_DATA_LOC_BYTES ||
		 f->kind == PBTRACE_TPF_REL_LOC_BYTES) &&
		pt_varint(f->proto_type));
}

/*
 * DescriptorProto.field { name, number, label, type }. trace_processor
 * reads name, number and type; the label lets protoc decode arrays.
 */
static void desc_field(struct pb_buf *b, const struct pbt_tpf *f)
{
	uint8_t *len = pb_nest_begin(b, DP_FIELD, 1);

	pb_strn(b, FDP_NAME, f->name, PBT_TPF_NAME_MAX);
	pb_varint(b, FDP_NUMBER, f->proto_id);
	pb_varint(b, FDP_LABEL, repeated(f) ? LABEL_REPEATED : LABEL_OPTIONAL);
	pb_varint(b, FDP_TYPE, f->proto_type);
	pb_nest_end(b, len, 1);
}

/*
 * Byte for byte what protoc writes (fields in number order, minimal
 * lengths): the length of the descriptor is measured in a first pass, as
 * it goes before it. Field names are < 48 bytes, so each field fits a
 * one-byte length.
 */
static void descriptor_body(struct pb_buf *b, const struct pbt_tp_layout *l)
{
	unsigned int i, n = l->nr_fields;

	if (n > PBTRACE_TP_MAX_FIELDS)	/* unchecked layouts too (the fuzzer) */
		n = PBTRACE_TP_MAX_FIELDS;
	pb_strn(b, DP_NAME, l->name, sizeof(l->name));
	for (i = 0; i < n; i++)
		if (l->fields[i].proto_id)
			desc_field(b, &l->fields[i]);
}

size_t pbt_tp_descriptor(const struct pbt_tp_layout *l, uint8_t *out,
			 size_t size)
{
	const size_t head = 1 + PB_NEST_MAX;	/* tag, longest length */
	size_t at, n;
	struct pb_buf b;
	uint8_t *body;

	pb_init(&b, out, size);
	pb_varint(&b, GED_FIELD_ID, l->proto_id);
	if (b.overflow || (size_t)(b.end - b.p) < head)
		return 0;
	/* The body past room for its tag and length, then moved down. */
	at = pb_len(&b, out);
	body = b.p + head;
	b.p = body;
	descriptor_body(&b, l);
	if (b.overflow)
		return 0;
	n = pb_len(&b, body);
	b.p = out + at;
	b.p = pb_put_varint(pb_put_varint(b.p, pb_tag(GED_DESCRIPTOR,
							PB_WT_LEN)), n);
	memmove(b.p, body, n);
	b.p += n;
	pb_strn(&b, GED_GROUP, l->group, sizeof(l->group));
	return b.overflow ? 0 : pb_len(&b, out);
}

/*
 * The probe's path, inlined: each out-of-line call costs an ftrace nop, a
 * call and a return thunk in the kernel (tools/bench pbgeneric).
 */

/* An int of @n (1, 2, 4, 8) bytes at @p, sign-extended if @sign. */
static __always_inline uint64_t read_int(const uint8_t *p, unsigned int n, bool sign)
{
	uint64_t v = 0;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;

	switch (n) {
	case 1:
		memcpy(&u8, p, 1);
		return sign ? (uint64_t)(int64_t)(int8_t)u8 : u8;
	case 2:
		memcpy(&u16, p, 2);
		return sign ? (uint64_t)(int64_t)(int16_t)u16 : u16;
	case 4:
		memcpy(&u32, p, 4);
		return sign ? (uint64_t)(int64_t)(int32_t)u32 : u32;
	default:
		memcpy(&v, p, 8);
		return v;
	}
}

static __always_inline void put_int(struct pb_buf *b, const struct pbt_tpf *f,
				    uint64_t v)
{
	switch (f->proto_type) {
	case PBT_PT_SINT32:
	case PBT_PT_SINT64:
		v = v << 1 ^ (uint64_t)((int64_t)v >> 63);	/* zigzag */
		break;
	case PBT_PT_BOOL:
		v = !!v;
		break;
	case PBT_PT_UINT32:
		v = (uint32_t)v;
		break;
	}
	pb_varint(b, f->proto_id, v);
}

/* @n bytes at @p as @f's type: a string to its NUL, bytes, or ints. */
static __always_inline void put_data(struct pb_buf *b, const struct pbt_tpf *f,
				     const uint8_t *p, uint32_t n, bool str)
{
	uint32_t i;

	if (str) {
		pb_strn(b, f->proto_id, (const char *)p, n);
		return;
	}
	if (!pt_varint(f->proto_type) || !int_size(f->elem_size)) {
		pb_bytes(b, f->proto_id, p, n);
		return;
	}
	for (i = 0; i + f->elem_size <= n; i += f->elem_size)
		put_int(b, f, read_int(p + i, f->elem_size, f->is_signed));
}

/*
 * A __data_loc (u32: len << 16 | offset from the record's start) or
 * __rel_loc (offset from the end of the field itself): false if the data
 * is not inside the record.
 */
static __always_inline bool dyn_field(const struct pbt_tpf *f,
				      const uint8_t *rec, uint32_t rec_size,
				      const uint8_t **p, uint32_t *n)
{
	uint32_t v = (uint32_t)read_int(rec + f->offset, 4, false);
	uint32_t off = v & 0xffff, len = v >> 16;

	if (f->kind == PBTRACE_TPF_REL_LOC_STR ||
	    f->kind == PBTRACE_TPF_REL_LOC_BYTES)
		off += (uint32_t)f->offset + 4;
	if (off > rec_size || len > rec_size - off)
		return false;
	*p = rec + off;
	*n = len;
	return true;
}

/* One field; false if the record does not hold it. */
static __always_inline bool put_field(struct pb_buf *b, const struct pbt_tpf *f,
				      const uint8_t *rec, uint32_t rec_size)
{
	const uint8_t *p;
	uint32_t n;

	if (f->offset > rec_size || f->size > rec_size - f->offset)
		return false;
	switch (f->kind) {
	case PBTRACE_TPF_INT:
		if (!int_size(f->size))
			return false;
		put_int(b, f, read_int(rec + f->offset, f->size, f->is_signed));
		return true;
	case PBTRACE_TPF_CHARS:
		put_data(b, f, rec + f->offset, f->size, true);
		return true;
	case PBTRACE_TPF_ARRAY:
	case PBTRACE_TPF_BYTES:
		put_data(b, f, rec + f->offset, f->size, false);
		return true;
	case PBTRACE_TPF_DATA_LOC_STR:
	case PBTRACE_TPF_DATA_LOC_BYTES:
	case PBTRACE_TPF_REL_LOC_STR:
	case PBTRACE_TPF_REL_LOC_BYTES:
		if (f->size != 4 || !dyn_field(f, rec, rec_size, &p, &n))
			return false;
		put_data(b, f, p, n, f->kind == PBTRACE_TPF_DATA_LOC_STR ||
			 f->kind == PBTRACE_TPF_REL_LOC_STR);
		return true;
	}
	return false;
}

unsigned int pbt_tp_encode(struct pb_buf *b, const struct pbt_tp_layout *l,
			   const void *rec, uint32_t rec_size)
{
	unsigned int i, n = l->nr_fields, missing = 0;

	if (n > PBTRACE_TP_MAX_FIELDS)
		n = PBTRACE_TP_MAX_FIELDS;
	for (i = 0; i < n; i++) {
		const struct pbt_tpf *f = &l->fields[i];

		if (f->proto_id && !put_field(b, f, rec, rec_size))
			missing++;
	}
	return missing;
}

/*
 * The fast form (tp_encode.h). An op's how: bit 0 signed, bits 1-2 what
 * put_int() does to the value for its proto type.
 */
#define PBT_FAST_SIGNED		0x01
#define PBT_FAST_CONV_SHIFT	1
#define PBT_FAST_PLAIN		0
#define PBT_FAST_ZIGZAG		1
#define PBT_FAST_BOOL		2
#define PBT_FAST_U32		3
/* The longest tag (a proto id below 2048) and value. */
#define PBT_FAST_OP_MAX		(2 + PB_VARINT_MAX)

static uint8_t fast_conv(unsigned int proto_type)
{
	switch (proto_type) {
	case PBT_PT_SINT32:
	case PBT_PT_SINT64:
		return PBT_FAST_ZIGZAG;
	case PBT_PT_BOOL:
		return PBT_FAST_BOOL;
	case PBT_PT_UINT32:
		return PBT_FAST_U32;
	}
	return PBT_FAST_PLAIN;
}

static void fast_op(struct pbt_tp_fast_op *op, uint32_t off, unsigned int size,
		    uint8_t how, uint8_t proto_id)
{
	uint32_t tag = pb_tag(proto_id, PB_WT_VARINT);

	op->offset = (uint16_t)off;
	op->shift = (uint8_t)(64 - 8 * size);
	op->how = how;
	op->tag_len = (uint8_t)(pb_put_varint(op->tag, tag) - op->tag);
	op->unused = 0;
}

/* The values field @f writes (0: it cannot be compiled), op by op. */
static int fast_field(const struct pbt_tpf *f, struct pbt_tp_fast *out,
		      uint32_t at, uint32_t *rec_min)
{
	unsigned int n = f->size, e = n, i, count = 1;
	uint8_t how;

	if (!pt_varint(f->proto_type))
		return 0;
	if (f->kind == PBTRACE_TPF_ARRAY) {
		e = f->elem_size;
		if (!int_size(e))
			return 0;
		count = n / e;
	} else if (f->kind != PBTRACE_TPF_INT || !int_size(n)) {
		return 0;
	}
	if (at + count > PBT_TP_FAST_MAX_OPS)
		return 0;
	how = (uint8_t)((f->is_signed ? PBT_FAST_SIGNED : 0) |
			fast_conv(f->proto_type) << PBT_FAST_CONV_SHIFT);
	/* The field must be in the record, as put_field() checks. */
	if ((uint32_t)f->offset + n > *rec_min)
		*rec_min = (uint32_t)f->offset + n;
	for (i = 0; i < count; i++) {
		uint32_t off = (uint32_t)f->offset + i * e;

		if (off + 8 > *rec_min)
			*rec_min = off + 8;
		if (out)
			fast_op(&out->ops[at + i], off, e, how, f->proto_id);
	}
	/* An array of fewer bytes than one element writes nothing. */
	return count ? (int)count : -1;
}

/*
 * Only on a little-endian host: an op's value is the low bytes of the
 * 8 bytes loaded at its offset.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PBT_FAST_HOST 1
#else
#define PBT_FAST_HOST 0
#endif

uint32_t pbt_tp_fast_compile(const struct pbt_tp_layout *l,
			     struct pbt_tp_fast *f)
{
	unsigned int i, n = l->nr_fields;
	uint32_t nr = 0, rec_min = 0;
	int got;

	if (!PBT_FAST_HOST)
		return 0;
	if (n > PBTRACE_TP_MAX_FIELDS)
		n = PBTRACE_TP_MAX_FIELDS;
	for (i = 0; i < n; i++) {
		if (!l->fields[i].proto_id)
			continue;
		got = fast_field(&l->fields[i], f, nr, &rec_min);
		if (!got)
			return 0;
		if (got > 0)
			nr += (uint32_t)got;
	}
	if (nr && f) {
		f->nr = nr;
		f->rec_min = rec_min;
		f->room = nr * PBT_FAST_OP_MAX;
	}
	return nr;
}

static __always_inline uint64_t fast_value(const struct pbt_tp_fast_op *op,
					   const uint8_t *rec)
{
	unsigned int sh = op->shift;
	uint64_t v;

	memcpy(&v, rec + op->offset, 8);
	v <<= sh;
	if (op->how & PBT_FAST_SIGNED)
		v = (uint64_t)((int64_t)v >> sh);
	else
		v >>= sh;
	if (PB_LIKELY(op->how < 1 << PBT_FAST_CONV_SHIFT))
		return v;
	switch (op->how >> PBT_FAST_CONV_SHIFT) {
	case PBT_FAST_ZIGZAG:
		return v << 1 ^ (uint64_t)((int64_t)v >> 63);
	case PBT_FAST_BOOL:
		return !!v;
	default:
		return (uint32_t)v;
	}
}

unsigned int pbt_tp_encode_fast(struct pb_buf *b, const struct pbt_tp_fast *f,
				const struct pbt_tp_layout *l,
				const void *rec, uint32_t rec_size)
{
	uint8_t *p = b->p;
	uint32_t i;

	if (!f || rec_size < f->rec_min || b->overflow ||
	    (size_t)(b->end - p) < f->room)
		return pbt_tp_encode(b, l, rec, rec_size);
	for (i = 0; i < f->nr; i++) {
		const struct pbt_tp_fast_op *op = &f->ops[i];

		/* Both bytes, then as many as the tag has: no loop. */
		p[0] = op->tag[0];
		p[1] = op->tag[1];
		p = pb_put_varint(p + op->tag_len, fast_value(op, rec));
	}
	b->p = p;
	return 0;
}
