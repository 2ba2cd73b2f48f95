// SPDX-License-Identifier: GPL-2.0
/*
 * tracegen SEED OUT SIZE_MB: a trace of at least SIZE_MB MiB (and less
 * than one seed more) made from a recorded one, as if the recording had
 * gone on for longer: the seed's
 * records as they are, then its event chunks (FtraceEventBundle packets)
 * again and again, each copy's timestamps moved past the previous copy's
 * last (by the seed's span and 1 ms), then the records that came after
 * the seed's last chunk (its end-of-trace stats) once. Every other byte of
 * a chunk is the kernel's: the same CPUs, sequence ids (each CPU's
 * sequence goes on), machine ids, threads, event encodings. Rewritten:
 * FtraceEvent.timestamp, CompactSched's first switch and waking
 * timestamps (the rest are deltas), the bundle's own timestamps and the
 * packet's, and the lengths around them.
 *
 * Used by tools/bench/report (the 1 GiB benchmark) and
 * user/tests/report_test.sh (report's memory on a file larger than the
 * fixtures). The output is not in git: it is made again from the seed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbread.h"

enum {
	TP_FTRACE_EVENTS = 1, TP_TIMESTAMP = 8,
	B_EVENT = 2, B_COMPACT = 4, B_FTRACE_TS = 6, B_BOOT_TS = 7,
	B_LAST_READ_TS = 9, B_PREV_END_TS = 10,
	FE_TIMESTAMP = 1,
	CS_SWITCH_TS = 1, CS_WAKING_TS = 7,
};

struct out {
	uint8_t *p;
	size_t len, cap;
};

static void die(const char *what)
{
	fprintf(stderr, "tracegen: %s\n", what);
	exit(1);
}

static void put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2 + 4096;
		o->p = realloc(o->p, o->cap);
		if (!o->p)
			die("out of memory");
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

static void put_varint(struct out *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	put(o, b, n);
}

static void put_tag(struct out *o, uint32_t num, uint8_t wire)
{
	put_varint(o, (uint64_t)num << 3 | wire);
}

static void put_len(struct out *o, uint32_t num, const struct out *m)
{
	put_tag(o, num, PBR_LEN);
	put_varint(o, m->len);
	put(o, m->p, m->len);
}

/* A field as it was: its bytes from the tag to its end. */
static void put_field(struct out *o, const struct pbr_field *f)
{
	put(o, f->at, (size_t)(f->body_end - f->at));
}

static void next(struct pbr *r, struct pbr_field *f)
{
	if (!pbr_field_any(r, f))
		die("the seed is not a valid trace");
}

/* Every timestamp the event holds: its own. */
static uint64_t span_lo = UINT64_MAX, span_hi;

static void seen(uint64_t ts)
{
	if (ts < span_lo)
		span_lo = ts;
	if (ts > span_hi)
		span_hi = ts;
}

static void rewrite_event(struct out *o, const uint8_t *p, const uint8_t *end,
			  uint64_t shift)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;

	while (pbr_more(&r)) {
		next(&r, &f);
		if (f.num == FE_TIMESTAMP && f.wire == PBR_VARINT) {
			seen(f.v);
			put_tag(o, FE_TIMESTAMP, PBR_VARINT);
			put_varint(o, f.v + shift);
		} else {
			put_field(o, &f);
		}
	}
}

/* CompactSched: the first of each packed timestamp column is absolute. */
static void rewrite_compact(struct out *o, const uint8_t *p, const uint8_t *end,
			    uint64_t shift)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;
	const uint8_t *q;
	uint64_t v, ts;

	while (pbr_more(&r)) {
		next(&r, &f);
		if ((f.num == CS_SWITCH_TS || f.num == CS_WAKING_TS) &&
		    f.wire == PBR_LEN && f.body < f.body_end) {
			struct out col = { 0 };

			q = f.body;
			ts = 0;
			if (!pbr_varint_at(&q, f.body_end, &v))
				die("the seed's compact_sched is not valid");
			put_varint(&col, v + shift);
			for (ts = v, seen(ts); q < f.body_end; seen(ts)) {
				if (!pbr_varint_at(&q, f.body_end, &v))
					die("the seed's compact_sched is not valid");
				ts += v;
				put_varint(&col, v);
			}
			put_len(o, f.num, &col);
			free(col.p);
		} else {
			put_field(o, &f);
		}
	}
}

static void rewrite_bundle(struct out *o, const uint8_t *p, const uint8_t *end,
			   uint64_t shift)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;

	while (pbr_more(&r)) {
		struct out m = { 0 };

		next(&r, &f);
		switch (f.num) {
		case B_EVENT:
			rewrite_event(&m, f.body, f.body_end, shift);
			put_len(o, f.num, &m);
			break;
		case B_COMPACT:
			rewrite_compact(&m, f.body, f.body_end, shift);
			put_len(o, f.num, &m);
			break;
		case B_FTRACE_TS:
		case B_BOOT_TS:
		case B_LAST_READ_TS:
		case B_PREV_END_TS:
			if (f.wire == PBR_VARINT && f.v) {
				put_tag(o, f.num, PBR_VARINT);
				put_varint(o, f.v + shift);
				break;
			}
			/* fall through */
		default:
			put_field(o, &f);
			break;
		}
		free(m.p);
	}
}

/* One chunk's record, its timestamps moved by shift. */
static void rewrite_packet(struct out *o, const uint8_t *p, const uint8_t *end,
			   uint64_t shift)
{
	struct out pkt = { 0 };
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;

	while (pbr_more(&r)) {
		struct out m = { 0 };

		next(&r, &f);
		if (f.num == TP_FTRACE_EVENTS && f.wire == PBR_LEN) {
			rewrite_bundle(&m, f.body, f.body_end, shift);
			put_len(&pkt, f.num, &m);
		} else if (f.num == TP_TIMESTAMP && f.wire == PBR_VARINT) {
			put_tag(&pkt, f.num, PBR_VARINT);
			put_varint(&pkt, f.v + shift);
		} else {
			put_field(&pkt, &f);
		}
		free(m.p);
	}
	put_len(o, 1, &pkt);	/* Trace.packet */
	free(pkt.p);
}

static bool is_chunk(const uint8_t *p, const uint8_t *end)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;

	while (pbr_more(&r)) {
		next(&r, &f);
		if (f.num == TP_FTRACE_EVENTS && f.wire == PBR_LEN)
			return true;
	}
	return false;
}

struct rec {
	const uint8_t *body, *end;	/* the TracePacket */
	const uint8_t *at;		/* the record */
	bool chunk;
};

int main(int argc, char **argv)
{
	const uint8_t *p, *end;
	struct out o = { 0 };
	struct rec *recs = NULL;
	size_t nr = 0, cap = 0, i, last = 0;
	bool any = false;
	uint64_t want, shift, copy, done = 0;
	uint8_t *seed;
	FILE *f;
	long n;

	if (argc != 4 || (want = strtoull(argv[3], NULL, 0) << 20) == 0) {
		fprintf(stderr, "usage: tracegen SEED.pftrace OUT.pftrace SIZE_MB\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET))
		die(strerror(errno));
	seed = malloc((size_t)n);
	if (!seed || fread(seed, 1, (size_t)n, f) != (size_t)n)
		die("cannot read the seed");
	fclose(f);
	for (p = seed, end = seed + n; p < end;) {
		struct pbr r = pbr_init(p, end);
		uint64_t tag, len;

		if (!pbr_varint(&r, &tag) || tag != 0x0a || !pbr_varint(&r, &len) ||
		    len > (uint64_t)(end - r.p))
			die("the seed is not a trace (or is cut short)");
		if (nr == cap) {
			cap = cap ? 2 * cap : 1024;
			recs = realloc(recs, cap * sizeof(*recs));
			if (!recs)
				die("out of memory");
		}
		recs[nr].at = p;
		recs[nr].body = r.p;
		recs[nr].end = r.p + len;
		recs[nr].chunk = is_chunk(r.p, r.p + len);
		if (recs[nr].chunk) {
			any = true;
			last = nr;
		}
		p = r.p + len;
		nr++;
	}
	if (!any)
		die("the seed has no event chunks");
	/* copy 0: the seed up to its last chunk, verbatim (its timestamps
	 * measured on the way) */
	for (i = 0; i <= last; i++) {
		if (recs[i].chunk) {
			struct out tmp = { 0 };

			rewrite_packet(&tmp, recs[i].body, recs[i].end, 0);
			free(tmp.p);
		}
		put(&o, recs[i].at, (size_t)(recs[i].end - recs[i].at));
	}
	shift = span_hi - span_lo + 1000000;
	f = fopen(argv[2], "wb");
	if (!f)
		die(strerror(errno));
	for (copy = 1; done + o.len < want; copy++) {
		for (i = 0; i <= last; i++)	/* whole copies: exact counts */
			if (recs[i].chunk)
				rewrite_packet(&o, recs[i].body, recs[i].end,
					       copy * shift);
		if (o.len > (64u << 20)) {	/* write as it goes */
			if (fwrite(o.p, 1, o.len, f) != o.len)
				die(strerror(errno));
			done += o.len;
			o.len = 0;
		}
	}
	for (i = last + 1; i < nr; i++)
		put(&o, recs[i].at, (size_t)(recs[i].end - recs[i].at));
	if (fwrite(o.p, 1, o.len, f) != o.len || fclose(f))
		die(strerror(errno));
	printf("%llu\n", (unsigned long long)copy);	/* the seed and its copies */
	fprintf(stderr, "tracegen: %s: the seed's chunks %llu times (%.3f s of events each)\n",
		argv[2], (unsigned long long)copy, (span_hi - span_lo) / 1e9);
	free(o.p);
	free(recs);
	free(seed);
	return 0;
}
