/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protobuf encoder for the probe path: writes Perfetto's wire format
 * straight into a chunk, with no allocation, no locks and no kernel
 * dependencies (see pb_types.h), so the same code runs in unit tests.
 *
 * Every write is bounds-checked against b->end and writes a whole field or
 * nothing: no byte at or past b->end is ever written. On the first field
 * that does not fit, b->overflow is set and every later write is a no-op;
 * the caller then rolls the record back to its mark (pb_rewind) and counts
 * the event as lost, so a chunk only ever holds whole records.
 *
 * Nested messages get a fixed-width length prefix: pb_nest_begin() reserves
 * `width` bytes and pb_nest_end() patches them with a padded varint (the
 * first width-1 bytes carry the continuation bit). Parsers accept such
 * redundant varints, and a fixed width means the message body never has
 * to move once its size is known. Width 1 holds up to 127 bytes, 2 up to
 * 16383, 3 up to 2 MiB - 1, 4 up to 256 MiB - 1.
 */
#ifndef _PBTRACE_PB_H
#define _PBTRACE_PB_H

#include "pb_types.h"

/* Wire types. */
#define PB_WT_VARINT	0
#define PB_WT_I64	1
#define PB_WT_LEN	2
#define PB_WT_I32	5

#define PB_VARINT_MAX	10	/* bytes of a 64-bit varint */
#define PB_NEST_MAX	5	/* widest padded length prefix */

#define PB_LIKELY(x)	__builtin_expect(!!(x), 1)

struct pb_buf {
	uint8_t *p;		/* next byte to write */
	uint8_t *end;		/* one past the last writable byte */
	bool overflow;		/* a write did not fit; record is garbage */
};

static inline void pb_init(struct pb_buf *b, void *mem, size_t len)
{
	b->p = (uint8_t *)mem;
	b->end = (uint8_t *)mem + len;
	b->overflow = false;
}

/* Drop everything written since @mark (a b->p taken earlier). */
static inline void pb_rewind(struct pb_buf *b, uint8_t *mark)
{
	b->p = mark;
	b->overflow = false;
}

static inline size_t pb_len(const struct pb_buf *b, const void *start)
{
	return (size_t)(b->p - (const uint8_t *)start);
}

static inline unsigned int pb_varint_size(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Make sure @n more bytes fit, or mark the buffer as overflowed. */
static inline bool pb_room(struct pb_buf *b, size_t n)
{
	if (b->overflow || (size_t)(b->end - b->p) < n) {
		b->overflow = true;
		return false;
	}
	return true;
}

/*
 * Write a varint at @p, which the caller has checked has room, and return
 * the byte after it. Writers work on a local pointer and store b->p once:
 * stores through a uint8_t pointer may alias *b, so writing through b->p
 * would make the compiler reload it after every byte.
 */
static inline uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint32_t pb_tag(uint32_t field, unsigned int wire_type)
{
	return field << 3 | wire_type;
}

static inline void pb_varint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	uint32_t tag = pb_tag(field, PB_WT_VARINT);

	/*
	 * Fast path for the probes: with room for the longest tag and value,
	 * skip sizing the value first.
	 */
	if (PB_LIKELY(!b->overflow && b->end - b->p >= 5 + PB_VARINT_MAX)) {
		b->p = pb_put_varint(pb_put_varint(b->p, tag), v);
		return;
	}
	if (!pb_room(b, pb_varint_size(tag) + pb_varint_size(v)))
		return;
	b->p = pb_put_varint(pb_put_varint(b->p, tag), v);
}

/*
 * Signed int32/int64 fields (not sint: no zigzag). A negative value takes
 * ten bytes whatever its declared width, as protoc writes it; pass int32
 * values sign-extended.
 */
static inline void pb_sint(struct pb_buf *b, uint32_t field, int64_t v)
{
	pb_varint(b, field, (uint64_t)v);
}

static inline void pb_bool(struct pb_buf *b, uint32_t field, bool v)
{
	pb_varint(b, field, v ? 1 : 0);
}

static inline void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	uint32_t tag = pb_tag(field, PB_WT_I64);
	unsigned int i;
	uint8_t *p;

	if (!pb_room(b, pb_varint_size(tag) + 8))
		return;
	p = pb_put_varint(b->p, tag);
	for (i = 0; i < 8; i++)		/* little endian on any host */
		p[i] = (uint8_t)(v >> (8 * i));
	b->p = p + 8;
}

static inline void pb_fixed32(struct pb_buf *b, uint32_t field, uint32_t v)
{
	uint32_t tag = pb_tag(field, PB_WT_I32);
	unsigned int i;
	uint8_t *p;

	if (!pb_room(b, pb_varint_size(tag) + 4))
		return;
	p = pb_put_varint(b->p, tag);
	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	b->p = p + 4;
}

static inline void pb_bytes(struct pb_buf *b, uint32_t field,
			    const void *d, size_t n)
{
	uint32_t tag = pb_tag(field, PB_WT_LEN);
	size_t room = (size_t)(b->end - b->p);
	size_t need;
	uint8_t *p;

	/* Checked in steps so that a huge n cannot wrap the sum. */
	need = pb_varint_size(tag) + pb_varint_size(n);
	if (b->overflow || room < need || room - need < n) {
		b->overflow = true;
		return;
	}
	p = pb_put_varint(pb_put_varint(b->p, tag), n);
	if (n)
		memcpy(p, d, n);
	b->p = p + n;
}

/* Length of @s, reading at most @max bytes of it. */
static inline size_t pb_strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

/*
 * A string that may lack its NUL within @max bytes (e.g. a char[16] comm
 * copied from a task): at most @max bytes are read and written.
 */
static inline void pb_strn(struct pb_buf *b, uint32_t field,
			   const char *s, size_t max)
{
	pb_bytes(b, field, s, pb_strnlen(s, max));
}

/*
 * A NUL-terminated string. It is read no further than the space left in
 * the buffer (plus one byte to see the NUL), so an unterminated or huge
 * string overflows the record instead of running past the chunk.
 */
static inline void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
	size_t room = (size_t)(b->end - b->p);

	pb_bytes(b, field, s, pb_strnlen(s, room + 1));
}

/*
 * Open a nested message: write its tag and reserve a @width-byte length
 * (1..PB_NEST_MAX). Returns where the length goes, for pb_nest_end(), or
 * NULL on overflow (pb_nest_end() accepts NULL).
 */
static inline uint8_t *pb_nest_begin(struct pb_buf *b, uint32_t field,
				     unsigned int width)
{
	uint32_t tag = pb_tag(field, PB_WT_LEN);
	uint8_t *len_pos;

	if (width < 1 || width > PB_NEST_MAX) {
		b->overflow = true;
		return NULL;
	}
	if (!pb_room(b, pb_varint_size(tag) + width))
		return NULL;
	len_pos = pb_put_varint(b->p, tag);
	b->p = len_pos + width;
	return len_pos;
}

/* Write @v as a varint of exactly @width bytes; false if it needs more. */
static inline bool pb_put_padded_varint(uint8_t *pos, uint64_t v,
					unsigned int width)
{
	unsigned int i;

	if (width < 1 || width > PB_NEST_MAX || v >> (7 * width))
		return false;
	for (i = 0; i + 1 < width; i++) {
		pos[i] = (uint8_t)(v & 0x7f) | 0x80;
		v >>= 7;
	}
	pos[width - 1] = (uint8_t)v;
	return true;
}

/* Close the message opened by pb_nest_begin(): patch its length. */
static inline void pb_nest_end(struct pb_buf *b, uint8_t *len_pos,
			       unsigned int width)
{
	if (b->overflow || !len_pos)
		return;
	if (!pb_put_padded_varint(len_pos, pb_len(b, len_pos + width), width))
		b->overflow = true;
}

#endif /* _PBTRACE_PB_H */
