// SPDX-License-Identifier: GPL-2.0
/*
 * textpb against protoc: every config in tests/configs is parsed by textpb
 * and by protoc --encode (Perfetto's own schema), and both binaries are
 * decoded with Perfetto's schema; the texts must match. Then the errors:
 * each bad input must fail at the right line:column with the right words.
 *
 * Needs protoc and the schema in $PBTRACE_SCHEMA_DIR (default:
 * <repo>/../shared/perfetto). Prints TAP.
 */
#define _GNU_SOURCE
/* Paths here are short; a truncated one would fail a test visibly. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "textpb.h"
#include "config.pb-c.h"
#include "trace.pb-c.h"
#include "tap.h"
#include "testenv.h"

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int r;

	if (!f)
		return -1;
	r = fwrite(data, 1, len, f) == len ? 0 : -1;
	return fclose(f) ? -1 : r;
}

/* protoc --decode with Perfetto's schema; malloc'd text or NULL. */
static char *decode(const char *pb_path)
{
	char out[PATH_MAX];
	size_t len;

	snprintf(out, sizeof(out), "%s.txt", pb_path);
	if (sh("protoc -I '%s' --decode=perfetto.protos.TraceConfig perfetto_config.proto < '%s' > '%s'",
	       schema_dir, pb_path, out))
		return NULL;
	return read_file(out, &len);
}

static void strip_unknown(ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	unsigned int i;
	size_t j, n;

	for (i = 0; i < m->n_unknown_fields; i++)
		free(m->unknown_fields[i].data);
	free(m->unknown_fields);
	m->unknown_fields = NULL;
	m->n_unknown_fields = 0;
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *base = (char *)m + f->offset;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(size_t *)((char *)m + f->quantifier_offset);
			for (j = 0; j < n; j++)
				strip_unknown((*(ProtobufCMessage ***)base)[j]);
		} else if (*(ProtobufCMessage **)base) {
			strip_unknown(*(ProtobufCMessage **)base);
		}
	}
}

static int pack_to(const ProtobufCMessage *m, const char *path)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len + 1);
	int r;

	if (!buf)
		return -1;
	protobuf_c_message_pack(m, buf);
	r = write_file(path, buf, len);
	free(buf);
	return r;
}

/*
 * One config file: ours vs protoc. protoc encodes every Perfetto field; we
 * keep pbtrace's subset, so protoc's binary is read back with our
 * descriptors and its unknown fields dropped before comparing. When we
 * warned about nothing, protoc's full binary must match too.
 */
static void check_against_protoc(const char *path)
{
	const char *base = strrchr(path, '/') + 1;
	char ours[PATH_MAX], ref[PATH_MAX], refsub[PATH_MAX];
	char *text, *ref_bin = NULL, *t_ours = NULL, *t_ref = NULL, *t_sub = NULL;
	struct textpb_error err = { 0 };
	ProtobufCMessage *m, *rm = NULL;
	size_t len, ref_len;

	snprintf(ours, sizeof(ours), "%s/%s.ours.pb", tmp_dir, base);
	snprintf(ref, sizeof(ref), "%s/%s.protoc.pb", tmp_dir, base);
	snprintf(refsub, sizeof(refsub), "%s/%s.protoc-subset.pb", tmp_dir, base);
	text = read_file(path, &len);
	m = text ? textpb_parse(&perfetto__protos__trace_config__descriptor,
				text, len, &err) : NULL;
	tap(m != NULL, "%s: parses%s%s", base, m ? "" : ": ", err.msg);
	if (!m)
		printf("# at %u:%u\n", err.line, err.col);
	if (!m)
		goto out;
	pack_to(m, ours);
	if (sh("protoc -I '%s' --encode=perfetto.protos.TraceConfig perfetto_config.proto < '%s' > '%s'",
	       schema_dir, path, ref)) {
		tap(false, "%s: protoc --encode accepts it", base);
		goto out;
	}
	ref_bin = read_file(ref, &ref_len);
	rm = ref_bin ? protobuf_c_message_unpack(&perfetto__protos__trace_config__descriptor,
						 NULL, ref_len, (uint8_t *)ref_bin) : NULL;
	if (rm) {
		strip_unknown(rm);
		pack_to(rm, refsub);
	}
	t_ours = decode(ours);
	t_sub = rm ? decode(refsub) : NULL;
	tap(t_ours && t_sub && !strcmp(t_ours, t_sub),
	    "%s: same message as protoc --encode (pbtrace's fields, decoded with Perfetto's schema)",
	    base);
	if (!err.nr_warnings) {
		t_ref = decode(ref);
		tap(t_ours && t_ref && !strcmp(t_ours, t_ref),
		    "%s: no warnings and identical to protoc's full encoding", base);
	} else {
		tap(rm && rm->descriptor && ref_len >
		    protobuf_c_message_get_packed_size(m),
		    "%s: %zu warnings and protoc's encoding holds more than ours",
		    base, err.nr_warnings);
	}
out:
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	if (rm)
		protobuf_c_message_free_unpacked(rm, NULL);
	textpb_error_free(&err);
	free(text);
	free(ref_bin);
	free(t_ours);
	free(t_ref);
	free(t_sub);
}

struct bad {
	const char *text;
	unsigned int line, col;
	const char *words;	/* must appear in the message */
};

static const struct bad bad_inputs[] = {
	{ "duration_ms: -1", 1, 14, "value out of range for uint32" },
	{ "duration_ms: 4294967296", 1, 14, "value out of range for uint32" },
	{ "max_file_size_bytes: 18446744073709551616", 1, 22, "out of range for uint64" },
	{ "duration_ms: \"5\"", 1, 14, "expected integer" },
	{ "duration_ms: 1.5", 1, 14, "expected integer" },
	{ "duration_ms: 08", 1, 14, "expected integer" },
	{ "duration_ms: 0x", 1, 14, "expected integer" },
	{ "duration_ms 5", 1, 13, "expected ':' after field name 'duration_ms'" },
	{ "duration_ms:", 1, 13, "expected integer" },
	{ "buffers {\n  size_kb: 1\n", 3, 1, "expected '}'" },
	{ "buffers {\n  size_kb: 1\n>", 3, 1, "expected field name" },
	{ "buffers: 5", 1, 10, "expected '{'" },
	{ "unique_session_name: \"abc", 1, 22, "unterminated string" },
	{ "unique_session_name: \"ab\nc\"", 1, 22, "unterminated string" },
	{ "unique_session_name: 'abc\"", 1, 22, "unterminated string" },
	{ "unique_session_name: \"a\\qb\"", 1, 22, "invalid escape" },
	{ "unique_session_name: \"a\\0b\"", 1, 22, "NUL byte" },
	{ "unique_session_name: abc", 1, 22, "expected string" },
	{ "write_into_file: yes", 1, 18, "expected true or false" },
	{ "write_into_file: 2", 1, 18, "expected true or false" },
	{ "buffers { fill_policy: RING }", 1, 24, "unknown value 'RING'" },
	{ "buffers { fill_policy: 3 }", 1, 24, "expected one of UNSPECIFIED, RING_BUFFER, DISCARD" },
	{ "duration_ms: 1\nduration_ms: 2", 2, 1, "set twice (first at 1:1)" },
	{ "trigger_config {}\ntrigger_config {}", 2, 1, "set twice" },
	{ "duration_ms: [1, 2]", 1, 14, "not repeated" },
	{ "buffers: [{size_kb: 1} {size_kb: 2}]", 1, 24, "expected ',' between list values" },
	{ "data_sources { config { ftrace_config { ftrace_events: [\"a\", ] } } }",
	  1, 62, "expected string" },
	{ "  = 5", 1, 3, "expected field name" },
	{ "duration_ms: 5 }", 1, 16, "expected field name" },
	{ "duration_ms: 5\x01", 1, 15, "unexpected byte 0x01" },
	{ "foo { bar: 1 ", 1, 14, "expected '}' before end of input" },
	{ "foo: { bar: }", 1, 13, "expected a value" },
	{ "foo [1]", 1, 5, "expected ':' or '{'" },
	{ "\xef\xbb\xbf" "duration_ms: x", 1, 14, "expected integer" },
	{ "duration_ms: 1\r\n\r\nflush_period_ms: ?", 3, 18, "expected integer" },
};

static void check_errors(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		const struct bad *b = &bad_inputs[i];
		struct textpb_error err = { 0 };
		ProtobufCMessage *m;

		m = textpb_parse(&perfetto__protos__trace_config__descriptor,
				 b->text, strlen(b->text), &err);
		tap(!m && err.line == b->line && err.col == b->col &&
		    strstr(err.msg, b->words),
		    "error %u:%u \"%s\" (got %u:%u \"%s\")", b->line, b->col,
		    b->words, err.line, err.col, err.msg);
		if (m)
			protobuf_c_message_free_unpacked(m, NULL);
		textpb_error_free(&err);
	}
}

/* The fields of perfetto_ui.pbtx outside pbtrace's subset, where they are. */
static const struct {
	unsigned int line, col;
	const char *field;
} ui_warnings[] = {
	{ 19, 7, "'quirks'" }, { 28, 7, "'meminfo_counters'" },
	{ 29, 7, "'meminfo_counters'" }, { 31, 7, "'vmstat_counters'" },
	{ 32, 7, "'cpufreq_period_ms'" }, { 39, 5, "'android_log_config'" },
	{ 61, 7, "'symbolize_ksyms'" },
	{ 62, 7, "'disable_generic_events'" }, { 65, 3, "'producer_name_filter'" },
	{ 67, 24, "'disable_clock_snapshotting'" },
	{ 67, 58, "'primary_trace_clock'" }, { 69, 1, "'flush_timeout_ms'" },
	{ 70, 1, "'incremental_state_config'" }, { 71, 1, "'statsd_metadata'" },
};

static void check_warnings(void)
{
	size_t n = sizeof(ui_warnings) / sizeof(ui_warnings[0]), i, len;
	struct textpb_error err = { 0 };
	char path[PATH_MAX], *text;
	ProtobufCMessage *m;
	bool all = true;

	snprintf(path, sizeof(path), "%s/tests/configs/perfetto_ui.pbtx", user_dir);
	text = read_file(path, &len);
	m = text ? textpb_parse(&perfetto__protos__trace_config__descriptor,
				text, len, &err) : NULL;
	tap(m && err.nr_warnings == n, "perfetto_ui.pbtx: %zu warnings (got %zu)",
	    n, err.nr_warnings);
	for (i = 0; i < n && i < err.nr_warnings; i++) {
		const struct textpb_diag *w = &err.warnings[i];

		if (w->line != ui_warnings[i].line || w->col != ui_warnings[i].col ||
		    !strstr(w->msg, ui_warnings[i].field) ||
		    !strstr(w->msg, "is not implemented by pbtrace; ignored")) {
			all = false;
			printf("# warning %zu: %u:%u %s\n", i, w->line, w->col, w->msg);
		}
	}
	tap(all && i == n, "perfetto_ui.pbtx: each warning names the field at its line:col");
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	textpb_error_free(&err);
	free(text);

	/* A likely typo gets a suggestion; a real Perfetto field does not
	 * get "corrected" into a different field of ours. */
	m = textpb_parse(&perfetto__protos__trace_config__descriptor,
			 "buffer { size_kb: 1 }", 21, &err);
	tap(m && err.nr_warnings == 1 &&
	    strstr(err.warnings[0].msg, "did you mean 'buffers'?") &&
	    err.warnings[0].line == 1 && err.warnings[0].col == 1,
	    "typo 'buffer' warns with \"did you mean 'buffers'?\"");
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	textpb_error_free(&err);
	m = textpb_parse(&perfetto__protos__sys_stats_config__descriptor,
			 "vmstat_counters: VMSTAT_NR_FREE_PAGES", 37, &err);
	tap(m && err.nr_warnings == 1 && !strstr(err.warnings[0].msg, "did you mean"),
	    "real Perfetto field vmstat_counters is not 'corrected' to stat_counters");
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	textpb_error_free(&err);

	m = textpb_parse_ex(&perfetto__protos__trace_config__descriptor,
			    "\n  buffer { size_kb: 1 }", 23, TEXTPB_STRICT, &err);
	tap(!m && err.line == 2 && err.col == 3 &&
	    strstr(err.msg, "unknown field 'buffer' in perfetto.protos.TraceConfig; did you mean 'buffers'?"),
	    "TEXTPB_STRICT: unknown field is an error at its line:col (%u:%u %s)",
	    err.line, err.col, err.msg);
	textpb_error_free(&err);
}

/* Integer widths and signs with a message that has signed fields. */
static void check_types(void)
{
	static const char ok_text[] =
		"prev_pid: -2147483648 next_pid: 2147483647 prev_state: -9223372036854775808 "
		"prev_comm: \"\\u00e9\\U0001F600\\x41\\101\" next_prio: -0x10";
	struct textpb_error err = { 0 };
	Perfetto__Protos__SchedSwitchFtraceEvent *e;

	e = (void *)textpb_parse(&perfetto__protos__sched_switch_ftrace_event__descriptor,
				 ok_text, sizeof(ok_text) - 1, &err);
	tap(e && e->prev_pid == INT32_MIN && e->next_pid == INT32_MAX &&
	    e->prev_state == INT64_MIN && e->next_prio == -16 &&
	    !strcmp(e->prev_comm, "\xc3\xa9\xf0\x9f\x98\x80" "AA"),
	    "int32/int64 extremes, negative hex, \\u \\U \\x \\ooo escapes");
	if (e)
		protobuf_c_message_free_unpacked(&e->base, NULL);
	textpb_error_free(&err);
	e = (void *)textpb_parse(&perfetto__protos__sched_switch_ftrace_event__descriptor,
				 "prev_pid: 2147483648", 20, &err);
	tap(!e && strstr(err.msg, "value out of range for int32") && err.col == 11,
	    "int32 2147483648 is out of range");
	textpb_error_free(&err);
	e = (void *)textpb_parse(&perfetto__protos__sched_switch_ftrace_event__descriptor,
				 "prev_pid: -2147483649", 21, &err);
	tap(!e && strstr(err.msg, "value out of range for int32"),
	    "int32 -2147483649 is out of range");
	textpb_error_free(&err);
}

/*
 * The config schema has no float, double, bytes, sint or oneof fields, but
 * textpb must handle every type a future field may have: a hand-written
 * descriptor, the same shape protoc-c generates, for
 *   message Kinds { optional float f = 1; optional double d = 2;
 *     optional bytes b = 3; optional sint32 s32 = 4;
 *     optional sfixed64 sf64 = 5; repeated double rd = 6;
 *     oneof which { string os = 7; int32 oi = 8; } }
 */
struct kinds {
	ProtobufCMessage base;
	protobuf_c_boolean has_f;
	float f;
	protobuf_c_boolean has_d;
	double d;
	protobuf_c_boolean has_b;
	ProtobufCBinaryData b;
	protobuf_c_boolean has_s32;
	int32_t s32;
	protobuf_c_boolean has_sf64;
	int64_t sf64;
	size_t n_rd;
	double *rd;
	uint32_t which;
	union {
		char *os;
		int32_t oi;
	};
};

#define K_FIELD(n, id, lab, type, q, m, fl) \
	{ n, id, PROTOBUF_C_LABEL_##lab, PROTOBUF_C_TYPE_##type, \
	  offsetof(struct kinds, q), offsetof(struct kinds, m), NULL, NULL, \
	  fl, 0, NULL, NULL }

static const ProtobufCFieldDescriptor kinds_fields[] = {
	K_FIELD("f", 1, OPTIONAL, FLOAT, has_f, f, 0),
	K_FIELD("d", 2, OPTIONAL, DOUBLE, has_d, d, 0),
	K_FIELD("b", 3, OPTIONAL, BYTES, has_b, b, 0),
	K_FIELD("s32", 4, OPTIONAL, SINT32, has_s32, s32, 0),
	K_FIELD("sf64", 5, OPTIONAL, SFIXED64, has_sf64, sf64, 0),
	K_FIELD("rd", 6, REPEATED, DOUBLE, n_rd, rd, 0),
	K_FIELD("os", 7, OPTIONAL, STRING, which, os, PROTOBUF_C_FIELD_FLAG_ONEOF),
	K_FIELD("oi", 8, OPTIONAL, INT32, which, oi, PROTOBUF_C_FIELD_FLAG_ONEOF),
};
static const unsigned int kinds_by_name[] = { 2, 1, 0, 7, 6, 5, 3, 4 };
static const ProtobufCIntRange kinds_ranges[] = { { 1, 0 }, { 0, 8 } };

static void kinds_init(ProtobufCMessage *m);

static const ProtobufCMessageDescriptor kinds_desc = {
	PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC, "test.Kinds", "Kinds", "Kinds",
	"test", sizeof(struct kinds), 8, kinds_fields, kinds_by_name, 1,
	kinds_ranges, kinds_init, NULL, NULL, NULL,
};

static void kinds_init(ProtobufCMessage *m)
{
	memset(m, 0, sizeof(struct kinds));
	m->descriptor = &kinds_desc;
}

static struct kinds *kinds_parse(const char *text, struct textpb_error *err)
{
	return (struct kinds *)textpb_parse(&kinds_desc, text, strlen(text), err);
}

static void check_kinds(void)
{
	struct textpb_error err = { 0 };
	struct kinds *k, *back;
	uint8_t buf[256];
	size_t len;

	k = kinds_parse("f: 1.5f d: -inf b: \"a\\0b\\xff\" s32: -7 "
			"sf64: -0x8000000000000000 rd: [1e3, .5, -2, nan, 0x10] os: 'x'",
			&err);
	tap(k && k->has_f && k->f == 1.5f && k->has_d && isinf(k->d) && k->d < 0 &&
	    k->has_b && k->b.len == 4 && !memcmp(k->b.data, "a\0b\xff", 4) &&
	    k->s32 == -7 && k->sf64 == INT64_MIN && k->n_rd == 5 &&
	    k->rd[0] == 1000 && k->rd[1] == 0.5 && k->rd[2] == -2 &&
	    isnan(k->rd[3]) && k->rd[4] == 16 && k->which == 7 && !strcmp(k->os, "x"),
	    "float, double (inf, nan, hex), bytes with NUL, sint32, sfixed64, oneof (%s)",
	    err.msg);
	if (k) {
		len = protobuf_c_message_pack(&k->base, buf);
		back = (struct kinds *)protobuf_c_message_unpack(&kinds_desc, NULL, len, buf);
		tap(back && back->f == 1.5f && back->b.len == 4 && back->n_rd == 5 &&
		    back->sf64 == INT64_MIN && back->which == 7 && !strcmp(back->os, "x"),
		    "the parsed message packs and unpacks with protobuf-c");
		if (back)
			protobuf_c_message_free_unpacked(&back->base, NULL);
		protobuf_c_message_free_unpacked(&k->base, NULL);
	}
	textpb_error_free(&err);
	k = kinds_parse("os: \"x\"\noi: 5", &err);
	tap(!k && err.line == 2 && err.col == 1 && strstr(err.msg, "oneof"),
	    "two fields of one oneof refused (%u:%u %s)", err.line, err.col, err.msg);
	textpb_error_free(&err);
	k = kinds_parse("d: 1e", &err);
	tap(!k && err.col == 4 && strstr(err.msg, "invalid number"),
	    "malformed float refused (%s)", err.msg);
	textpb_error_free(&err);
	k = kinds_parse("f: true", &err);
	tap(!k && strstr(err.msg, "expected number"), "bool for a float refused");
	textpb_error_free(&err);
	k = kinds_parse("s32: 2147483648", &err);
	tap(!k && strstr(err.msg, "value out of range for sint32"),
	    "sint32 range checked");
	textpb_error_free(&err);
}

static void check_positions(void)
{
	static const char text[] =
		"buffers { size_kb: 1 }\nbuffers {\n  size_kb: 2\n}\n"
		"data_sources { config { ftrace_config { ftrace_events: [\"a/b\", \"c/d\"] } } }";
	struct textpb_error err = { 0 };
	Perfetto__Protos__TraceConfig *tc;
	unsigned int line = 0, col = 0;
	bool ok;

	tc = (void *)textpb_parse(&perfetto__protos__trace_config__descriptor,
				  text, sizeof(text) - 1, &err);
	ok = tc && !textpb_find_pos(&err, &tc->buffers[1]->base, "size_kb", 0,
				    &line, &col) && line == 3 && col == 12;
	tap(ok, "position of buffers[1].size_kb is 3:12 (got %u:%u)", line, col);
	ok = tc && !textpb_find_pos(&err, &tc->data_sources[0]->config->ftrace_config->base,
				    "ftrace_events", 1, &line, &col) &&
	     line == 5 && col == 64;
	tap(ok, "position of ftrace_events[1] in a list is 5:64 (got %u:%u)", line, col);
	if (tc)
		protobuf_c_message_free_unpacked(&tc->base, NULL);
	textpb_error_free(&err);
}

int main(void)
{
	char pattern[PATH_MAX];
	glob_t g;
	size_t i;

	find_dirs("textpb_test");
	printf("# schema %s, scratch %s\n", schema_dir, tmp_dir);
	snprintf(pattern, sizeof(pattern), "%s/tests/configs/*.pbtx", user_dir);
	if (glob(pattern, 0, NULL, &g) || g.gl_pathc < 4) {
		tap(false, "find the test configs in %s", pattern);
	} else {
		for (i = 0; i < g.gl_pathc; i++)
			check_against_protoc(g.gl_pathv[i]);
		globfree(&g);
	}
	check_errors();
	check_warnings();
	check_types();
	check_positions();
	check_kinds();
	printf("1..%d\n", nr_tests);
	if (!nr_failed)
		sh("rm -rf '%s'", tmp_dir);
	return nr_failed ? 1 : 0;
}
