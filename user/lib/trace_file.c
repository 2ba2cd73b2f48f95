// SPDX-License-Identifier: GPL-2.0
/*
 * A trace is a run of Trace.packet records (field 1, length-delimited),
 * unpacked one by one so that a big file never sits unpacked whole.
 */
#include "trace_file.h"

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

int trace_next_packet(const uint8_t **p, const uint8_t *end,
		      Perfetto__Protos__TracePacket **pkt)
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
	*pkt = perfetto__protos__trace_packet__unpack(NULL, n, q);
	if (!*pkt)
		return -1;
	*p = q + n;
	return 1;
}
