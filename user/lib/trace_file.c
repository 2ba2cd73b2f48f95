// SPDX-License-Identifier: GPL-2.0
/*
 * A trace is a run of Trace.packet records (field 1, length-delimited),
 * unpacked one by one so that a big file never sits unpacked whole. Who
 * needs a packet's bytes rather than its fields (tracectl merge copies
 * records) walks records and their top-level fields without unpacking.
 */
#include <string.h>

#include "trace_file.h"

#define WIRE_VARINT 0
#define WIRE_I64 1
#define WIRE_LEN 2
#define WIRE_I32 5


static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
		shift += 7;
	}
	return *p < end ? -1 : 0;	/* over 64 bits, or cut short */
}

int trace_next_record(const uint8_t **p, const uint8_t *end,
		      const uint8_t **pkt, size_t *len)
{
	const uint8_t *q = *p;
	uint64_t tag, n;
	int ret;

	ret = read_varint(&q, end, &tag);
	if (ret <= 0)
		return ret;
	if (tag != 0x0a)
		return -1;
	ret = read_varint(&q, end, &n);
	if (ret <= 0)
		return ret;
	if (n > (uint64_t)(end - q))
		return 0;
	*pkt = q;
	*len = (size_t)n;
	*p = q + n;
	return 1;
}

int trace_next_packet(const uint8_t **p, const uint8_t *end,
		      Perfetto__Protos__TracePacket **pkt)
{
	const uint8_t *q = *p, *body;
	size_t n;
	int ret;

	ret = trace_next_record(&q, end, &body, &n);
	if (ret <= 0)
		return ret;
	*pkt = perfetto__protos__trace_packet__unpack(NULL, n, body);
	if (!*pkt)
		return -1;
	*p = q;
	return 1;
}

/*
 * One top-level field at *p: its number, wire type and where it ends; the
 * value of a varint in *v. 1, or -1 where the bytes are no field.
 */
static int next_field(const uint8_t **p, const uint8_t *end, uint32_t *nr,
		      uint64_t *v)
{
	uint64_t tag, n;

	if (read_varint(p, end, &tag) <= 0 || !(tag >> 3) || tag >> 32)
		return -1;
	*nr = (uint32_t)(tag >> 3);
	switch (tag & 7) {
	case WIRE_VARINT:
		return read_varint(p, end, v) > 0 ? 1 : -1;
	case WIRE_I64:
		n = 8;
		break;
	case WIRE_I32:
		n = 4;
		break;
	case WIRE_LEN:
		if (read_varint(p, end, &n) <= 0)
			return -1;
		break;
	default:
		return -1;	/* groups: never in a trace */
	}
	if (n > (uint64_t)(end - *p))
		return -1;
	*p += n;
	*v = 0;
	return 1;
}

/* TracePacket.machine_id's number, as proto/trace.proto gives it. */
static uint32_t machine_id_field(void)
{
	static uint32_t nr;

	if (!nr)
		nr = protobuf_c_message_descriptor_get_field_by_name(
			&perfetto__protos__trace_packet__descriptor, "machine_id")->id;
	return nr;
}

int trace_packet_fields(const uint8_t *pkt, size_t len,
			struct trace_fields *f)
{
	const uint8_t *p = pkt, *end = pkt + len;
	uint32_t nr;
	uint64_t v;

	memset(f, 0, sizeof(*f));
	while (p < end) {
		if (next_field(&p, end, &nr, &v) < 0)
			return -1;
		if (nr == machine_id_field())
			f->machine_id = (uint32_t)v;
		else if (nr < 64 * sizeof(f->has) / sizeof(f->has[0]))
			f->has[nr / 64] |= 1ull << (nr % 64);
	}
	return 0;
}

bool trace_fields_has(const struct trace_fields *f, uint32_t nr)
{
	return nr < 64 * sizeof(f->has) / sizeof(f->has[0]) &&
	       (f->has[nr / 64] >> (nr % 64) & 1);
}

size_t trace_packet_strip_machine(const uint8_t *pkt, size_t len,
				  uint8_t *out)
{
	const uint8_t *p = pkt, *end = pkt + len, *field;
	size_t n = 0;
	uint32_t nr;
	uint64_t v;

	while (p < end) {
		field = p;
		if (next_field(&p, end, &nr, &v) < 0)
			return (size_t)-1;
		if (nr == machine_id_field())
			continue;
		if (out)
			memmove(out + n, field, (size_t)(p - field));
		n += (size_t)(p - field);
	}
	return n;
}

size_t trace_record_header(uint8_t *out, size_t len)
{
	size_t n = 0;
	uint64_t v = len;

	out[n++] = 0x0a;
	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}
