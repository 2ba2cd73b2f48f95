// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kmod/core/tp_encode.c (any tracepoint -> protobuf) on the
 * host under ASan/UBSan. The referee is protoc, never tp_encode.c itself:
 *
 *  - the GenericEventDescriptor equals, byte for byte, protoc --encode of
 *    the same descriptor in text form (google/protobuf/descriptor.proto);
 *  - the descriptor bytes are then wrapped in a FileDescriptorSet, and an
 *    event body must equal protoc --encode of the expected message under
 *    that set and decode with it (protoc --descriptor_set_in), so the
 *    descriptor really describes the body;
 *  - bounds: records truncated to every length 0..N, in heap blocks of
 *    exactly that size (ASan sees any read past them), __data_loc and
 *    __rel_loc words that lie, and output buffers of every length with a
 *    guard behind them.
 *
 * Prints TAP.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

#include "tp_encode.h"
#include "tap.h"
#include "blob.h"

#ifndef PBT_SCHEMA_DIR
#define PBT_SCHEMA_DIR "../shared/perfetto"
#endif

static char tmpdir[] = "/tmp/tp_encode_test.XXXXXX";
static const char *schema_dir;	/* Perfetto's, for its DescriptorProto */

/* protoc @args on @in (@n bytes) -> @out; its stderr into the TAP log. */
static int protoc(const char *args, const void *in, size_t n, struct blob *out)
{
	char cmd[2048], inp[256], outp[256];

	snprintf(inp, sizeof(inp), "%s/in", tmpdir);
	snprintf(outp, sizeof(outp), "%s/out", tmpdir);
	if (write_file(inp, in, n))
		return -1;
	snprintf(cmd, sizeof(cmd), "cd %s && protoc %s < %s > %s 2>&1 || { sed 's/^/# protoc: /' %s; exit 1; }",
		 tmpdir, args, inp, outp, outp);
	if (system(cmd))
		return -1;
	return read_file(outp, out);
}

/*
 * The encoder the checks run: pbt_tp_encode(), or with fast set, the
 * layout's compiled form (pbt_tp_encode_fast()), which must pass the
 * same checks against the same referees.
 */
static int fast;

static unsigned int encode(struct pb_buf *b, const struct pbt_tp_layout *l,
			   const uint8_t *rec, size_t n)
{
	struct pbt_tp_fast *f;
	unsigned int miss;
	uint32_t nr;

	if (!fast)
		return pbt_tp_encode(b, l, rec, n);
	nr = pbt_tp_fast_compile(l, NULL);
	f = nr ? malloc(pbt_tp_fast_size(nr)) : NULL;
	if (f)
		pbt_tp_fast_compile(l, f);
	miss = pbt_tp_encode_fast(b, f, l, rec, n);
	free(f);
	return miss;
}

static void field(struct pbt_tp_layout *l, const char *name, unsigned int off,
		  unsigned int size, unsigned int kind, unsigned int sign,
		  unsigned int id, unsigned int type)
{
	struct pbt_tpf *f = &l->fields[l->nr_fields++];

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->offset = off;
	f->size = size;
	f->kind = kind;
	f->is_signed = sign;
	f->proto_id = id;
	f->proto_type = type;
}

static void common_fields(struct pbt_tp_layout *l)
{
	field(l, "common_type", 0, 2, PBTRACE_TPF_INT, 0, 0, 0);
	field(l, "common_flags", 2, 1, PBTRACE_TPF_INT, 0, 0, 0);
	field(l, "common_preempt_count", 3, 1, PBTRACE_TPF_INT, 0, 0, 0);
	field(l, "common_pid", 4, 4, PBTRACE_TPF_INT, 1, 0, 0);
}

/* An empty layout of @group/@name with its common_* fields. */
static void layout_begin(struct pbt_tp_layout *l, const char *group,
			 const char *name, uint32_t proto_id)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->group, sizeof(l->group), "%s", group);
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->proto_id = proto_id;
	common_fields(l);
}

/* signal/signal_generate as 6.1's tracefs describes it */
static void layout_signal(struct pbt_tp_layout *l)
{
	layout_begin(l, "signal", "signal_generate", 65536 + 7);
	field(l, "sig", 8, 4, PBTRACE_TPF_INT, 1, 1, PBT_PT_INT64);
	field(l, "errno", 12, 4, PBTRACE_TPF_INT, 1, 2, PBT_PT_INT64);
	field(l, "code", 16, 4, PBTRACE_TPF_INT, 1, 3, PBT_PT_INT64);
	field(l, "comm", 20, 16, PBTRACE_TPF_CHARS, 0, 4, PBT_PT_STRING);
	field(l, "pid", 36, 4, PBTRACE_TPF_INT, 1, 5, PBT_PT_INT64);
	field(l, "group", 40, 4, PBTRACE_TPF_INT, 1, 6, PBT_PT_INT64);
	field(l, "result", 44, 4, PBTRACE_TPF_INT, 1, 7, PBT_PT_INT64);
}

/* Every kind at once: a made-up event of 64 bytes and its dynamic data. */
static void layout_kinds(struct pbt_tp_layout *l)
{
	layout_begin(l, "test", "kinds", 65536 + 100);
	field(l, "ptr", 8, 8, PBTRACE_TPF_INT, 0, 1, PBT_PT_UINT64);
	field(l, "s8", 16, 1, PBTRACE_TPF_INT, 1, 2, PBT_PT_INT64);
	field(l, "u16", 18, 2, PBTRACE_TPF_INT, 0, 3, PBT_PT_UINT64);
	field(l, "name", 20, 4, PBTRACE_TPF_DATA_LOC_STR, 0, 4, PBT_PT_STRING);
	field(l, "blob", 24, 4, PBTRACE_TPF_DATA_LOC_BYTES, 0, 5, PBT_PT_BYTES);
	field(l, "rel", 28, 4, PBTRACE_TPF_REL_LOC_STR, 0, 6, PBT_PT_STRING);
	field(l, "arr", 32, 12, PBTRACE_TPF_ARRAY, 1, 7, PBT_PT_INT64);
	l->fields[l->nr_fields - 1].elem_size = 4;
	field(l, "raw", 44, 4, PBTRACE_TPF_BYTES, 0, 8, PBT_PT_BYTES);
	field(l, "mask", 48, 4, PBTRACE_TPF_DATA_LOC_BYTES, 0, 9, PBT_PT_UINT64);
	l->fields[l->nr_fields - 1].elem_size = 8;
	field(l, "zz", 52, 4, PBTRACE_TPF_INT, 1, 10, PBT_PT_SINT64);
	field(l, "flag", 56, 1, PBTRACE_TPF_INT, 0, 11, PBT_PT_BOOL);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static size_t record_signal(uint8_t *r)
{
	int32_t v[] = { 9, 0, 0 }, pid = 4242, grp = 1, res = 0;

	memset(r, 0, 48);
	put32(r + 4, 4241);
	memcpy(r + 8, v, sizeof(v));
	memcpy(r + 20, "sleep", 6);
	memcpy(r + 36, &pid, 4);
	memcpy(r + 40, &grp, 4);
	memcpy(r + 44, &res, 4);
	return 48;
}

/* 64 fixed bytes, then "kworker\0" at 64, 3 bytes at 72, "rel!\0" at 75,
 * two u64 at 80 */
static size_t record_kinds(uint8_t *r)
{
	int32_t arr[] = { -1, 2, -300 }, zz = -5;
	uint64_t ptr = 0xffff888012345678ull, mask[] = { 5, 1ull << 40 };
	uint16_t u16 = 65535;

	memset(r, 0, 96);
	memcpy(r + 8, &ptr, 8);
	r[16] = 0x80;		/* -128 */
	memcpy(r + 18, &u16, 2);
	put32(r + 20, 8u << 16 | 64);
	put32(r + 24, 3u << 16 | 72);
	put32(r + 28, 5u << 16 | (75 - 32));	/* from the end of the field */
	memcpy(r + 32, arr, sizeof(arr));
	memcpy(r + 44, "\x01\x00\xff\x7f", 4);
	put32(r + 48, 16u << 16 | 80);
	memcpy(r + 52, &zz, 4);
	r[56] = 7;
	memcpy(r + 64, "kworker", 8);
	memcpy(r + 72, "\x00\x01\x02", 3);
	memcpy(r + 75, "rel!", 5);
	memcpy(r + 80, mask, sizeof(mask));
	return 96;
}

static const char *signal_text =
	"sig: 9\nerrno: 0\ncode: 0\ncomm: \"sleep\"\npid: 4242\ngroup: 1\nresult: 0\n";
static const char *kinds_text =
	"ptr: 18446612682375452280\ns8: -128\nu16: 65535\nname: \"kworker\"\n"
	"blob: \"\\000\\001\\002\"\nrel: \"rel!\"\narr: -1\narr: 2\narr: -300\n"
	"raw: \"\\001\\000\\377\\177\"\nmask: 5\nmask: 1099511627776\nzz: -5\nflag: true\n";

/*
 * Fixed-size ints only, as raw_syscalls/sys_enter and kmem/kmalloc are:
 * the layout the fast form compiles (tp_encode.h). Two-byte tags (ids
 * above 15), sign extension, zigzag, bool, a u32 of 8 bytes, and a u8
 * last, whose 8-byte load ends at the record's end.
 */
static void layout_ints(struct pbt_tp_layout *l)
{
	layout_begin(l, "test", "ints", 65536 + 101);
	field(l, "id", 8, 8, PBTRACE_TPF_INT, 1, 1, PBT_PT_INT64);
	field(l, "args", 16, 48, PBTRACE_TPF_ARRAY, 0, 2, PBT_PT_UINT64);
	l->fields[l->nr_fields - 1].elem_size = 8;
	field(l, "s16", 64, 2, PBTRACE_TPF_INT, 1, 17, PBT_PT_INT32);
	field(l, "zz", 68, 4, PBTRACE_TPF_INT, 1, 18, PBT_PT_SINT32);
	field(l, "flag", 72, 1, PBTRACE_TPF_INT, 0, 19, PBT_PT_BOOL);
	field(l, "u32", 80, 8, PBTRACE_TPF_INT, 0, 20, PBT_PT_UINT32);
	field(l, "u8", 88, 1, PBTRACE_TPF_INT, 0, 31, PBT_PT_UINT64);
}

static size_t record_ints(uint8_t *r)
{
	int64_t id = 39;
	uint64_t args[] = { 0x7ffd12345678ull, 1, 0, ~0ull, 42, 1ull << 63 };
	uint64_t u32 = 0x100000005ull;
	int16_t s16 = -300;
	int32_t zz = -5;

	memset(r, 0xee, 96);	/* what no field covers is never read */
	memset(r, 0, 8);
	memcpy(r + 8, &id, 8);
	memcpy(r + 16, args, sizeof(args));
	memcpy(r + 64, &s16, 2);
	memcpy(r + 68, &zz, 4);
	r[72] = 7;
	memcpy(r + 80, &u32, 8);
	r[88] = 200;
	return 89 + 7;
}

static const char *ints_text =
	"id: 39\nargs: 140724908873336\nargs: 1\nargs: 0\n"
	"args: 18446744073709551615\nargs: 42\nargs: 9223372036854775808\n"
	"s16: -300\nzz: -5\nflag: true\nu32: 5\nu8: 200\n";

static const char *type_name(unsigned int t)
{
	switch (t) {
	case PBT_PT_INT64: return "TYPE_INT64";
	case PBT_PT_UINT64: return "TYPE_UINT64";
	case PBT_PT_INT32: return "TYPE_INT32";
	case PBT_PT_UINT32: return "TYPE_UINT32";
	case PBT_PT_BOOL: return "TYPE_BOOL";
	case PBT_PT_STRING: return "TYPE_STRING";
	case PBT_PT_BYTES: return "TYPE_BYTES";
	case PBT_PT_SINT32: return "TYPE_SINT32";
	case PBT_PT_SINT64: return "TYPE_SINT64";
	}
	return "?";
}

static const char *ged_proto =
	"syntax = \"proto2\";\nimport \"perfetto_trace.proto\";\n"
	"message GED { optional int32 field_id = 1;\n"
	"  optional perfetto.protos.DescriptorProto event_descriptor = 2;\n"
	"  optional string group_name = 3; }\n";

/* The descriptor as text, for protoc --encode=GED. */
static void ged_text(const struct pbt_tp_layout *l, char *t, size_t n)
{
	size_t at;
	unsigned int i;

	at = snprintf(t, n, "field_id: %u\nevent_descriptor {\n name: \"%s\"\n",
		      l->proto_id, l->name);
	for (i = 0; i < l->nr_fields; i++) {
		const struct pbt_tpf *f = &l->fields[i];
		bool rep = f->kind == PBTRACE_TPF_ARRAY ||
			   (f->kind == PBTRACE_TPF_DATA_LOC_BYTES &&
			    f->proto_type != PBT_PT_BYTES);

		if (!f->proto_id)
			continue;
		at += snprintf(t + at, n - at,
			       " field { name: \"%s\" number: %u label: %s type: %s }\n",
			       f->name, f->proto_id,
			       rep ? "LABEL_REPEATED" : "LABEL_OPTIONAL",
			       type_name(f->proto_type));
	}
	snprintf(t + at, n - at, "}\ngroup_name: \"%s\"\n", l->group);
}

/* FileDescriptorSet { file { name, package "gen", message_type = desc } } */
static int write_set(const uint8_t *ged, size_t n)
{
	const uint8_t *desc, *p = ged, *end = ged + n;
	uint8_t set[8192], *fl;
	struct pb_buf b;
	uint64_t len;
	char path[256];

	/* field_id varint, then tag 0x12 and the DescriptorProto */
	while (p < end && *p != 0x12)
		p++;
	if (p >= end)
		return -1;
	p++;
	len = 0;
	for (int sh = 0; p < end; sh += 7) {
		len |= (uint64_t)(*p & 0x7f) << sh;
		if (!(*p++ & 0x80))
			break;
	}
	desc = p;
	if (desc + len > end)
		return -1;
	pb_init(&b, set, sizeof(set));
	fl = pb_nest_begin(&b, 1, 3);
	pb_bytes(&b, 1, "gen.proto", 9);
	pb_bytes(&b, 2, "gen", 3);
	pb_bytes(&b, 4, desc, len);
	pb_nest_end(&b, fl, 3);
	snprintf(path, sizeof(path), "%s/set.pb", tmpdir);
	return b.overflow ? -1 : write_file(path, set, pb_len(&b, set));
}

/*
 * The descriptor equals protoc's; the body equals protoc's encoding of
 * @text under that very descriptor, and decodes back to @text.
 */
static void check_event(const char *what, const struct pbt_tp_layout *l,
			const uint8_t *rec, size_t rec_size, const char *text)
{
	uint8_t ged[4096], body[4096];
	char t[8192], args[512], path[256];
	struct blob want = { 0 }, dec = { 0 };
	struct pb_buf b;
	unsigned int miss;
	size_t n, bn;

	n = pbt_tp_descriptor(l, ged, sizeof(ged));
	tap(n > 0, "%s: descriptor written (%zu bytes)", what, n);
	snprintf(path, sizeof(path), "%s/ged.proto", tmpdir);
	write_file(path, ged_proto, strlen(ged_proto));
	ged_text(l, t, sizeof(t));
	snprintf(args, sizeof(args), "-I. -I'%s' --encode=GED ged.proto",
		 schema_dir);
	if (protoc(args, t, strlen(t), &want) == 0) {
		bool same = want.n == n && !memcmp(want.p, ged, n);

		if (!same) {
			diag_hex("protoc", want.p, want.n);
			diag_hex("tp_encode", ged, n);
		}
		tap(same, "%s: descriptor bytes equal protoc --encode", what);
	} else {
		tap(0, "%s: protoc --encode of the descriptor", what);
	}
	free(want.p);
	want.p = NULL;

	pb_init(&b, body, sizeof(body));
	miss = encode(&b, l, rec, rec_size);
	bn = pb_len(&b, body);
	tap(!b.overflow && !miss, "%s: body encoded, no field missing (%u)",
	    what, miss);
	if (write_set(ged, n)) {
		tap(0, "%s: FileDescriptorSet from the descriptor", what);
		return;
	}
	snprintf(args, sizeof(args), "--descriptor_set_in=set.pb --encode=gen.%s",
		 l->name);
	if (protoc(args, text, strlen(text), &want) == 0) {
		bool same = want.n == bn && !memcmp(want.p, body, bn);

		if (!same) {
			diag_hex("protoc", want.p, want.n);
			diag_hex("tp_encode", body, bn);
		}
		tap(same, "%s: body bytes equal protoc --encode under the descriptor",
		    what);
	} else {
		tap(0, "%s: protoc --encode under the descriptor", what);
	}
	snprintf(args, sizeof(args), "--descriptor_set_in=set.pb --decode=gen.%s",
		 l->name);
	if (protoc(args, body, bn, &dec) == 0) {
		bool same = !strcmp((char *)dec.p, text);

		if (!same)
			printf("# decoded:\n%s# expected:\n%s", dec.p, text);
		tap(same, "%s: body decodes with the descriptor to the record's values",
		    what);
	} else {
		tap(0, "%s: protoc --decode under the descriptor", what);
	}
	free(want.p);
	free(dec.p);
}

/*
 * Every truncation 0..rec_size in a block of exactly that size: ASan
 * fails on any read past it; fields that do not fit are counted missing,
 * and the ones that do are written the same as from the whole record.
 */
static void check_truncated(const char *what, const struct pbt_tp_layout *l,
			    const uint8_t *rec, size_t rec_size)
{
	unsigned int last = ~0u, miss, bad = 0;
	uint8_t out[4096];
	struct pb_buf b;
	size_t n;

	for (n = 0; n <= rec_size; n++) {
		uint8_t *r = malloc(n ? n : 1);

		memcpy(r, rec, n);
		pb_init(&b, out, sizeof(out));
		miss = encode(&b, l, r, n);
		if (b.overflow || miss > last)
			bad++;
		last = miss;
		free(r);
	}
	tap(!bad && last == 0,
	    "%s: records of 0..%zu bytes read in bounds, fewer fields missing as they grow",
	    what, rec_size);
}

/* Output buffers of every size: writes stop at the end, guard intact. */
static void check_out_bounds(const char *what, const struct pbt_tp_layout *l,
			     const uint8_t *rec, size_t rec_size)
{
	uint8_t out[4096 + 64];
	unsigned int bad = 0;
	struct pb_buf b;
	size_t n, full, i;

	pb_init(&b, out, 4096);
	encode(&b, l, rec, rec_size);
	full = pb_len(&b, out);
	for (n = 0; n <= full; n++) {
		memset(out, 0xa5, sizeof(out));
		pb_init(&b, out, n);
		encode(&b, l, rec, rec_size);
		if (b.overflow != (n < full) || b.p > out + n)
			bad++;
		for (i = n; i < sizeof(out); i++)
			if (out[i] != 0xa5)
				bad++;
	}
	for (n = 0; n < 600; n++) {
		size_t dn = pbt_tp_descriptor(l, out, n);

		if (dn > n)
			bad++;
	}
	tap(!bad, "%s: output of 0..%zu bytes: overflow exactly when short, nothing written past the end",
	    what, full);
}

/* __data_loc/__rel_loc words of every offset and length: in bounds. */
static void check_lying_locs(void)
{
	struct pbt_tp_layout l;
	uint8_t rec[96], out[4096];
	unsigned int off, len, bad = 0, kept = 0;
	struct pb_buf b;

	layout_kinds(&l);
	for (off = 0; off < 0x10000; off += 7) {
		for (len = 0; len < 0x10000; len += off % 3 ? 997 : 1) {
			uint8_t *r = malloc(96);

			record_kinds(rec);
			put32(rec + 20, len << 16 | off);
			put32(rec + 24, len << 16 | off);
			put32(rec + 28, len << 16 | off);
			put32(rec + 48, len << 16 | off);
			memcpy(r, rec, 96);
			pb_init(&b, out, sizeof(out));
			if (pbt_tp_encode(&b, &l, r, 96) == 0)
				kept++;
			if (b.overflow)
				bad++;
			free(r);
			if (len > 128 && off > 128)
				break;
		}
	}
	tap(!bad && kept > 0,
	    "lying __data_loc/__rel_loc words: every read inside the 96-byte record (%u in range)",
	    kept);
}

/* A bad layout is refused with what and where. */
static void refused(const char *what, const struct pbt_tp_layout *l,
		    const char *want)
{
	char msg[128];
	const char *got = pbt_tp_check(l, msg, sizeof(msg));

	if (!got || strncmp(got, want, strlen(want)))
		printf("# got: %s\n", got ? got : "(accepted)");
	tap(got && !strncmp(got, want, strlen(want)), "refused: %s: \"%s\"",
	    what, want);
}

static void check_refused(void)
{
	struct pbt_tp_layout l;
	char msg[128];

	layout_signal(&l);
	tap(!pbt_tp_check(&l, msg, sizeof(msg)), "signal_generate layout accepted");
	layout_kinds(&l);
	tap(!pbt_tp_check(&l, msg, sizeof(msg)), "every-kind layout accepted");
	layout_signal(&l);
	l.fields[4].kind = 99;
	refused("unknown kind", &l, "field 4 (sig): unknown kind");
	layout_signal(&l);
	l.fields[10].offset = 8190;
	refused("field beyond any record", &l, "field 10 (result): offset + size beyond");
	layout_signal(&l);
	l.fields[5].proto_id = 1;
	refused("proto id twice", &l, "field 5 (errno): proto id used");
	layout_signal(&l);
	l.fields[6].proto_id = 32;
	refused("proto id 32", &l, "field 6 (code): proto id above 31");
	layout_signal(&l);
	l.fields[4].size = 3;
	refused("int of 3 bytes", &l, "field 4 (sig): an int of size");
	layout_signal(&l);
	l.fields[7].proto_type = PBT_PT_INT64;
	refused("chars as int", &l, "field 7 (comm): a string or bytes");
	layout_signal(&l);
	l.nr_fields = PBTRACE_TP_MAX_FIELDS + 1;
	refused("too many fields", &l, "more than 40 fields");
	layout_kinds(&l);
	l.fields[10].elem_size = 0;
	refused("array without element size", &l, "field 10 (arr): an array");
}

/* Every check of one layout and its record, by the encoder fast picks. */
static void check_all(const char *what, void (*layout)(struct pbt_tp_layout *),
		      size_t (*record)(uint8_t *), const char *text)
{
	struct pbt_tp_layout l;
	uint8_t rec[128];
	char name[64];
	size_t n;

	layout(&l);
	n = record(rec);
	snprintf(name, sizeof(name), "%s%s", what, fast ? ", compiled" : "");
	check_event(name, &l, rec, n, text);
	check_truncated(name, &l, rec, n);
	check_out_bounds(name, &l, rec, n);
}

/* What compiles: fixed-size ints only, one op per value written. */
static void check_fast_compile(void)
{
	struct pbt_tp_layout l;
	struct pbt_tp_fast *f;
	uint32_t nr;

	layout_ints(&l);
	nr = pbt_tp_fast_compile(&l, NULL);
	f = malloc(pbt_tp_fast_size(nr));
	tap(nr == 12 && f && pbt_tp_fast_compile(&l, f) == 12 &&
	    f->nr == 12 && f->rec_min == 96 && f->room == 12 * 12,
	    "ints: compiled to 12 ops (id, 6 args, 5 more), records of 96 bytes and more");
	free(f);
	layout_signal(&l);
	tap(!pbt_tp_fast_compile(&l, NULL), "signal_generate (a char[16]) does not compile");
	layout_kinds(&l);
	tap(!pbt_tp_fast_compile(&l, NULL), "every kind (strings, bytes) does not compile");
	layout_ints(&l);
	l.fields[5].proto_type = PBT_PT_STRING;
	tap(!pbt_tp_fast_compile(&l, NULL), "an int written as a string does not compile");
	layout_ints(&l);
	l.fields[6].size = 3;
	tap(!pbt_tp_fast_compile(&l, NULL), "an int of 3 bytes does not compile");
	layout_ints(&l);
	l.fields[5].size = 8 * 60;
	tap(!pbt_tp_fast_compile(&l, NULL), "more than %d values do not compile",
	    PBT_TP_FAST_MAX_OPS);
	layout_ints(&l);
	l.fields[5].size = 4;	/* an array smaller than its element */
	tap(pbt_tp_fast_compile(&l, NULL) == 6,
	    "an array smaller than one element writes nothing");
}

int main(void)
{
	char rm[128];

	schema_dir = getenv("PBTRACE_SCHEMA_DIR");
	if (!schema_dir)
		schema_dir = PBT_SCHEMA_DIR;
	if (system("protoc --version > /dev/null 2>&1")) {
		printf("Bail out! protoc not found: apt-get install protobuf-compiler\n");
		return 1;
	}
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp %s failed\n", tmpdir);
		return 1;
	}
	/* Every layout by both encoders: only ints compiles, the others
	 * must come out of pbt_tp_encode_fast() as they do without it. */
	for (fast = 0; fast < 2; fast++) {
		check_all("signal_generate", layout_signal, record_signal,
			  signal_text);
		check_all("every kind", layout_kinds, record_kinds, kinds_text);
		check_all("ints", layout_ints, record_ints, ints_text);
	}
	check_fast_compile();
	fast = 0;
	check_lying_locs();
	check_refused();
	snprintf(rm, sizeof(rm), "rm -rf %s", tmpdir);
	if (system(rm))
		printf("# could not remove %s\n", tmpdir);
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
