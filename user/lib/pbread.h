/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading protobuf wire format from untrusted bytes, in place: a cursor
 * over [p, end) that never reads outside it and never allocates.
 *
 * What is accepted is what protobuf-c 1.4 (libprotobuf-c, which the rest
 * of userspace uses) accepts, rule for rule, so that the hand-written
 * readers built on this (trace_file.c) give what protobuf-c's unpacker
 * gives for every input both accept:
 *  - a tag is at most 5 bytes and its first byte's field bits are not all
 *    zero; wire types 3, 4 (groups), 6 and 7 are refused;
 *  - a varint is at most 10 bytes; bits beyond 64 are dropped;
 *  - a length prefix is at most 5 bytes, at most INT_MAX, and what it
 *    counts must be there.
 * Every function returns false, and leaves the cursor where the bad field
 * starts, when the bytes break one of these.
 */
#ifndef PBT_PBREAD_H
#define PBT_PBREAD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PBR_VARINT = 0, PBR_I64 = 1, PBR_LEN = 2, PBR_I32 = 5 };

struct pbr {
	const uint8_t *p, *end;
};

static inline struct pbr pbr_init(const uint8_t *p, const uint8_t *end)
{
	struct pbr r = { p, end };

	return r;
}

static inline bool pbr_more(const struct pbr *r)
{
	return r->p < r->end;
}

/* The varint at *pp (at most 10 bytes, before end) into *v; *pp past it. */
static inline bool pbr_varint_at(const uint8_t **pp, const uint8_t *end,
				 uint64_t *v)
{
	const uint8_t *p = *pp;
	size_t max = (size_t)(end - p) < 10 ? (size_t)(end - p) : 10;
	uint64_t x, b;
	size_t i;

	if (max && !(p[0] & 0x80)) {		/* most are one byte */
		*v = p[0];
		*pp = p + 1;
		return true;
	}
	if (max == 10) {	/* room for the longest: no bounds to check */
		x = p[0] & 0x7f;
		for (i = 1; i < 10; i++) {
			b = p[i];
			x |= (b & 0x7f) << (7 * i);	/* 7 * 9 = 63 */
			if (!(b & 0x80)) {
				*v = x;
				*pp = p + i + 1;
				return true;
			}
		}
		return false;
	}
	for (i = 0, x = 0; i < max; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			*pp = p + i + 1;
			return true;
		}
	}
	return false;
}

/* Past the varint at *pp without its value: false as pbr_varint_at(). */
static inline bool pbr_skip_varint(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	size_t max = (size_t)(end - p) < 10 ? (size_t)(end - p) : 10;
	size_t i;

	for (i = 0; i < max; i++)
		if (!(p[i] & 0x80)) {
			*pp = p + i + 1;
			return true;
		}
	return false;
}

static inline bool pbr_varint(struct pbr *r, uint64_t *v)
{
	return pbr_varint_at(&r->p, r->end, v);
}

/*
 * The next field's number and wire type; for PBR_LEN also its bytes
 * [*body, *body_end), for the others the value's bytes (varint: as read by
 * pbr_varint at *body). The cursor moves past the whole field.
 */
struct pbr_field {
	uint32_t num;
	uint8_t wire;
	const uint8_t *at;		/* the tag's first byte */
	const uint8_t *body, *body_end;	/* the value (without a length prefix) */
	uint64_t v;			/* PBR_VARINT: the value */
};

static inline bool pbr_tag(struct pbr *r, struct pbr_field *f)
{
	const uint8_t *p = r->p;
	size_t max = (size_t)(r->end - p) < 5 ? (size_t)(r->end - p) : 5;
	uint32_t tag;
	size_t i;

	if (!max || !(p[0] & 0xf8))		/* field 0 in the first byte */
		return false;
	f->at = p;
	f->wire = p[0] & 7;
	tag = (p[0] & 0x7f) >> 3;
	if (!(p[0] & 0x80)) {
		f->num = tag;
		r->p = p + 1;
		return true;
	}
	for (i = 1; i < max; i++) {
		tag |= (uint32_t)(p[i] & 0x7f) << (4 + 7 * (i - 1));
		if (!(p[i] & 0x80)) {
			f->num = tag;
			r->p = p + i + 1;
			return true;
		}
	}
	return false;
}

/* A length prefix and what it counts: [*body, *body_end). */
static inline bool pbr_len_body(struct pbr *r, const uint8_t **body,
				const uint8_t **body_end)
{
	const uint8_t *p = r->p;
	size_t max = (size_t)(r->end - p) < 5 ? (size_t)(r->end - p) : 5;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < max; i++) {
		n |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			break;
	}
	if (i == max || n > INT_MAX || n > (uint64_t)(r->end - (p + i + 1)))
		return false;
	*body = p + i + 1;
	*body_end = *body + n;
	r->p = *body_end;
	return true;
}

/*
 * The next whole field: tag, then its value checked and stepped over by
 * its wire type. On false, r->p is at the field's tag.
 */
static inline bool pbr_field_any(struct pbr *r, struct pbr_field *f)
{
	const uint8_t *start = r->p;

	if (!pbr_tag(r, f))
		return false;
	f->body = r->p;
	switch (f->wire) {
	case PBR_VARINT:
		if (!pbr_varint(r, &f->v))
			break;
		f->body_end = r->p;
		return true;
	case PBR_I64:
	case PBR_I32: {
		size_t n = f->wire == PBR_I64 ? 8 : 4;

		if ((size_t)(r->end - r->p) < n)
			break;
		r->p += n;
		f->body_end = r->p;
		return true;
	}
	case PBR_LEN:
		if (!pbr_len_body(r, &f->body, &f->body_end))
			break;
		return true;
	default:
		break;
	}
	r->p = start;
	return false;
}

/*
 * pbr_field_any() for the common case first: a tag of one or two bytes
 * (fields 1..2047), then a varint, or a length of one byte; anything else
 * takes the general path, which checks every rule.
 */
static inline __attribute__((always_inline))
bool pbr_field(struct pbr *r, struct pbr_field *f)
{
	const uint8_t *p = r->p, *q;
	uint32_t num;

	if (r->end - p < 2 || !(p[0] & 0xf8))	/* a value needs a byte */
		return pbr_field_any(r, f);
	if (!(p[0] & 0x80)) {
		num = p[0] >> 3;
		q = p + 1;
	} else if (r->end - p >= 3 && !(p[1] & 0x80)) {
		num = ((p[0] & 0x7f) >> 3) | (uint32_t)p[1] << 4;
		q = p + 2;
	} else {
		return pbr_field_any(r, f);
	}
	f->at = p;
	f->num = num;
	f->wire = p[0] & 7;
	f->body = q;
	if (f->wire == PBR_VARINT) {
		if (!pbr_varint_at(&q, r->end, &f->v))
			return pbr_field_any(r, f);
		f->body_end = q;
	} else if (f->wire == PBR_LEN && !(*q & 0x80) &&
		   *q <= r->end - (q + 1)) {
		f->body = q + 1;
		f->body_end = q + 1 + *q;
	} else {
		return pbr_field_any(r, f);
	}
	r->p = f->body_end;
	return true;
}

/*
 * protobuf-c's bool: true when any byte of the field's value (whatever its
 * wire type) has a value bit set.
 */
static inline bool pbr_bool(const struct pbr_field *f)
{
	const uint8_t *p = f->body;

	if (f->wire == PBR_LEN) {	/* protobuf-c looks at the prefix too */
		for (p = f->at; p < f->body_end && (*p & 0x80); p++)
			;		/* the tag */
		p++;
	}
	for (; p < f->body_end; p++)
		if (*p & 0x7f)
			return true;
	return false;
}

/* A string's bytes as protobuf-c's NUL-terminated copy reads them. */
static inline size_t pbr_strlen(const uint8_t *s, const uint8_t *end)
{
	const uint8_t *p = s;

	while (p < end && *p)
		p++;
	return (size_t)(p - s);
}

#endif /* PBT_PBREAD_H */
