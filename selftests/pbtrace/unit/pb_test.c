// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kmod/core/pb.h, the encoder the probes use, on the host
 * under ASan/UBSan. The expectation is always independent of pb.h:
 *
 *  - canonical encodings are compared byte for byte with what
 *    `protoc --encode` makes of the same message in text form (our proto/);
 *  - padded lengths make bytes differ from protoc's, so those records are
 *    decoded with Perfetto's own schema and compared, as text, with the
 *    expected message run through the same schema;
 *  - bounds: the same record is encoded into buffers of every length from 0
 *    up, followed by a guard region that must stay untouched.
 *
 * Prints TAP. Environment: PBTRACE_SCHEMA_DIR (Perfetto's schema),
 * PBTRACE_PROTO_DIR (ours); the Makefile compiles in defaults.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdarg.h>
#include <unistd.h>

#include "pb.h"
#include "compact.h"
#include "pbtrace_fields.h"
#include "tap.h"
#include "blob.h"

#ifndef PBT_PROTO_DIR
#define PBT_PROTO_DIR "proto"
#endif
#ifndef PBT_SCHEMA_DIR
#define PBT_SCHEMA_DIR "../shared/perfetto"
#endif

static const char *proto_dir;
static const char *schema_dir;
static char tmpdir[] = "/tmp/pb_test.XXXXXX";

static void diag_text(const char *what, const char *s)
{
	printf("# %s:\n#   ", what);
	for (; *s; s++)
		printf(*s == '\n' && s[1] ? "\n#   " : "%c", *s);
	printf("\n");
}

/* ---- protoc as the independent encoder/decoder ---- */

/*
 * Run protoc with @args on @in, output into @out. @dir is the -I path and
 * @file the .proto in it. On failure, protoc's stderr goes to the TAP log.
 */
static int protoc(const char *dir, const char *file, const char *args,
		  const void *in, size_t n, struct blob *out)
{
	char cmd[4096], inpath[256], outpath[256], errpath[256];
	struct blob err;
	int rc;

	snprintf(inpath, sizeof(inpath), "%s/in", tmpdir);
	snprintf(outpath, sizeof(outpath), "%s/out", tmpdir);
	snprintf(errpath, sizeof(errpath), "%s/err", tmpdir);
	if (write_file(inpath, in, n))
		return -1;
	snprintf(cmd, sizeof(cmd), "protoc -I '%s' %s '%s' < %s > %s 2> %s",
		 dir, args, file, inpath, outpath, errpath);
	rc = system(cmd);
	if (rc != 0 && read_file(errpath, &err) == 0) {
		diag_text("protoc failed", (char *)err.p);
		free(err.p);
	}
	if (rc != 0 || read_file(outpath, out))
		return -1;
	return 0;
}

/* Encode @text as message @type with our proto/ (the canonical bytes). */
static int encode_ours(const char *type, const char *text, struct blob *out)
{
	char args[256];

	snprintf(args, sizeof(args), "--encode=perfetto.protos.%s", type);
	return protoc(proto_dir, "trace.proto", args, text, strlen(text), out);
}

static int decode_perfetto(const char *type, const void *p, size_t n,
			   struct blob *out)
{
	char args[256];

	snprintf(args, sizeof(args), "--decode=perfetto.protos.%s", type);
	return protoc(schema_dir, "perfetto_trace.proto", args, p, n, out);
}

/* Our bytes must equal protoc's encoding of @text, byte for byte. */
static void expect_bytes(const char *name, const char *type, const char *text,
			 const uint8_t *p, size_t n)
{
	struct blob want;
	int same;

	if (encode_ours(type, text, &want)) {
		tap(0, "%s: protoc --encode", name);
		return;
	}
	same = want.n == n && memcmp(want.p, p, n) == 0;
	if (!same) {
		diag_hex("protoc", want.p, want.n);
		diag_hex("pb.h", p, n);
	}
	tap(same, "%s: bytes equal protoc --encode=%s", name, type);
	free(want.p);
}

/*
 * Our bytes, decoded with Perfetto's schema, must give the same text as
 * @text does when run through that schema (protoc orders fields by number).
 */
static void expect_decode(const char *name, const char *type, const char *text,
			  const uint8_t *p, size_t n)
{
	struct blob want_pb, want, got;
	char args[256];
	int same;

	snprintf(args, sizeof(args), "--encode=perfetto.protos.%s", type);
	if (protoc(schema_dir, "perfetto_trace.proto", args, text, strlen(text),
		   &want_pb)) {
		tap(0, "%s: protoc --encode with Perfetto's schema", name);
		return;
	}
	if (decode_perfetto(type, want_pb.p, want_pb.n, &want)) {
		free(want_pb.p);
		tap(0, "%s: protoc --decode of the expectation", name);
		return;
	}
	if (decode_perfetto(type, p, n, &got)) {
		diag_hex("undecodable", p, n);
		tap(0, "%s: decodes with Perfetto's schema", name);
		goto out;
	}
	same = strcmp((char *)want.p, (char *)got.p) == 0;
	if (!same) {
		diag_text("expected", (char *)want.p);
		diag_text("decoded", (char *)got.p);
	}
	tap(same, "%s: decodes as expected with Perfetto's %s", name, type);
	free(got.p);
out:
	free(want.p);
	free(want_pb.p);
}

/* ---- records as the probes write them ---- */

static void put_sched_switch(struct pb_buf *b, unsigned int width)
{
	uint8_t *ev, *sw;

	ev = pb_nest_begin(b, PB_FTRACEEVENTBUNDLE_EVENT, width);
	pb_varint(b, PB_FTRACEEVENT_TIMESTAMP, 123456789012ull);
	pb_varint(b, PB_FTRACEEVENT_PID, 4242);
	sw = pb_nest_begin(b, PB_FTRACEEVENT_SCHED_SWITCH, width);
	pb_string(b, PB_SCHEDSWITCHFTRACEEVENT_PREV_COMM, "bash");
	pb_sint(b, PB_SCHEDSWITCHFTRACEEVENT_PREV_PID, 4242);
	pb_sint(b, PB_SCHEDSWITCHFTRACEEVENT_PREV_PRIO, 120);
	pb_sint(b, PB_SCHEDSWITCHFTRACEEVENT_PREV_STATE, 1);
	pb_strn(b, PB_SCHEDSWITCHFTRACEEVENT_NEXT_COMM, "swapper/1\0junk", 16);
	pb_sint(b, PB_SCHEDSWITCHFTRACEEVENT_NEXT_PID, 0);
	pb_sint(b, PB_SCHEDSWITCHFTRACEEVENT_NEXT_PRIO, -1);
	pb_nest_end(b, sw, width);
	pb_nest_end(b, ev, width);
}

static const char sched_switch_text[] =
	"timestamp: 123456789012 pid: 4242 sched_switch { prev_comm: \"bash\" "
	"prev_pid: 4242 prev_prio: 120 prev_state: 1 next_comm: \"swapper/1\" "
	"next_pid: 0 next_prio: -1 }";

static const uint64_t sys_args[6] = {
	0, 1, 127, 128, 0xffffffffull, 0xffffffffffffffffull
};

static void put_sys_enter(struct pb_buf *b, unsigned int width)
{
	uint8_t *ev, *se;
	int i;

	ev = pb_nest_begin(b, PB_FTRACEEVENTBUNDLE_EVENT, width);
	pb_varint(b, PB_FTRACEEVENT_TIMESTAMP, 123456789013ull);
	pb_varint(b, PB_FTRACEEVENT_PID, 4242);
	se = pb_nest_begin(b, PB_FTRACEEVENT_SYS_ENTER, width);
	pb_sint(b, PB_SYSENTERFTRACEEVENT_ID, 110);
	for (i = 0; i < 6; i++)
		pb_varint(b, PB_SYSENTERFTRACEEVENT_ARGS, sys_args[i]);
	pb_nest_end(b, se, width);
	pb_nest_end(b, ev, width);
}

static const char sys_enter_text[] =
	"timestamp: 123456789013 pid: 4242 sys_enter { id: 110 args: 0 "
	"args: 1 args: 127 args: 128 args: 4294967295 "
	"args: 18446744073709551615 }";

static void put_sys_exit(struct pb_buf *b, unsigned int width)
{
	uint8_t *ev, *se;

	ev = pb_nest_begin(b, PB_FTRACEEVENTBUNDLE_EVENT, width);
	pb_varint(b, PB_FTRACEEVENT_TIMESTAMP, 123456789014ull);
	pb_varint(b, PB_FTRACEEVENT_PID, 4242);
	se = pb_nest_begin(b, PB_FTRACEEVENT_SYS_EXIT, width);
	pb_sint(b, PB_SYSEXITFTRACEEVENT_ID, 110);
	pb_sint(b, PB_SYSEXITFTRACEEVENT_RET, -14);
	pb_nest_end(b, se, width);
	pb_nest_end(b, ev, width);
}

static const char sys_exit_text[] =
	"timestamp: 123456789014 pid: 4242 sys_exit { id: 110 ret: -14 }";

/*
 * One chunk as the kernel writes it: a Trace.packet record with a 4-byte
 * padded length, the packet header fields, then a bundle of events.
 */
static void put_chunk(struct pb_buf *b, unsigned int ev_width)
{
	uint8_t *pkt, *bundle;

	pkt = pb_nest_begin(b, PB_TRACE_PACKET, 4);
	pb_varint(b, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID, 257);
	pb_varint(b, PB_TRACEPACKET_PREVIOUS_PACKET_DROPPED,
		  PB_DATALOSSREASON_DATA_LOSS_PRESENT);
	pb_varint(b, PB_TRACEPACKET_SEQUENCE_FLAGS,
		  PB_SEQUENCEFLAGS_SEQ_INCREMENTAL_STATE_CLEARED);
	bundle = pb_nest_begin(b, PB_TRACEPACKET_FTRACE_EVENTS, 4);
	pb_varint(b, PB_FTRACEEVENTBUNDLE_CPU, 1);
	pb_bool(b, PB_FTRACEEVENTBUNDLE_LOST_EVENTS, true);
	put_sched_switch(b, ev_width);
	put_sys_enter(b, ev_width);
	put_sys_exit(b, ev_width);
	pb_nest_end(b, bundle, 4);
	pb_nest_end(b, pkt, 4);
}

static char *chunk_text(void)
{
	static char text[4096];

	snprintf(text, sizeof(text),
		 "packet { trusted_packet_sequence_id: 257 "
		 "previous_packet_dropped: 1 sequence_flags: 1 "
		 "ftrace_events { cpu: 1 lost_events: true "
		 "event { %s } event { %s } event { %s } } }",
		 sched_switch_text, sys_enter_text, sys_exit_text);
	return text;
}

/* ---- tests ---- */

static uint8_t mem[65536];

/* Single events, nest widths equal to the real sizes: canonical bytes. */
static void test_canonical_events(void)
{
	struct pb_buf b;
	char text[1024];

	pb_init(&b, mem, sizeof(mem));
	put_sched_switch(&b, 1);
	snprintf(text, sizeof(text), "event { %s }", sched_switch_text);
	tap(!b.overflow, "sched_switch: no overflow");
	expect_bytes("sched_switch", "FtraceEventBundle", text, mem,
		     pb_len(&b, mem));

	pb_init(&b, mem, sizeof(mem));
	put_sys_enter(&b, 1);
	snprintf(text, sizeof(text), "event { %s }", sys_enter_text);
	expect_bytes("sys_enter with 6 args (not packed)", "FtraceEventBundle",
		     text, mem, pb_len(&b, mem));

	pb_init(&b, mem, sizeof(mem));
	put_sys_exit(&b, 1);
	snprintf(text, sizeof(text), "event { %s }", sys_exit_text);
	expect_bytes("sys_exit with negative ret", "FtraceEventBundle", text,
		     mem, pb_len(&b, mem));
}

/* Varints at every size boundary, against protoc. */
static void test_varint_boundaries(void)
{
	static const uint64_t v[] = {
		0, 1, 127, 128, 16383, 16384, 2097151, 2097152,
		268435455, 268435456, 0xffffffffull, 0x7fffffffffffffffull,
		0x8000000000000000ull, 0xffffffffffffffffull,
	};
	char text[4096];
	size_t i, off = 0;
	struct pb_buf b;

	pb_init(&b, mem, sizeof(mem));
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		pb_varint(&b, PB_SYSENTERFTRACEEVENT_ARGS, v[i]);
		off += snprintf(text + off, sizeof(text) - off, "args: %llu ",
				(unsigned long long)v[i]);
	}
	expect_bytes("varint size boundaries", "SysEnterFtraceEvent", text,
		     mem, pb_len(&b, mem));

	/* int32 fields: negative values are 10 bytes, like protoc's. */
	pb_init(&b, mem, sizeof(mem));
	pb_sint(&b, PB_SCHEDSWITCHFTRACEEVENT_PREV_PID, -1);
	pb_sint(&b, PB_SCHEDSWITCHFTRACEEVENT_PREV_PRIO, INT32_MIN);
	pb_sint(&b, PB_SCHEDSWITCHFTRACEEVENT_PREV_STATE, INT64_MIN);
	pb_sint(&b, PB_SCHEDSWITCHFTRACEEVENT_NEXT_PID, INT32_MAX);
	expect_bytes("negative int32/int64", "SchedSwitchFtraceEvent",
		     "prev_pid: -1 prev_prio: -2147483648 "
		     "prev_state: -9223372036854775808 next_pid: 2147483647",
		     mem, pb_len(&b, mem));

	/* Large field numbers take multi-byte tags. */
	pb_init(&b, mem, sizeof(mem));
	/* protoc writes fields in number order; so do we, to compare bytes. */
	pb_varint(&b, PB_TRACEPACKET_TIMESTAMP, 1);
	pb_varint(&b, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID, 65536);
	pb_bool(&b, PB_TRACEPACKET_FIRST_PACKET_ON_SEQUENCE, true);
	pb_varint(&b, PB_TRACEPACKET_MACHINE_ID, 3);
	expect_bytes("TracePacket header fields", "TracePacket",
		     "timestamp: 1 trusted_packet_sequence_id: 65536 "
		     "first_packet_on_sequence: true machine_id: 3",
		     mem, pb_len(&b, mem));
}

/* fixed64/double layout: FtraceCpuStats.now_ts is a double. */
static void test_fixed64(void)
{
	struct pb_buf b;
	double d = 1.5;
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	pb_init(&b, mem, sizeof(mem));
	pb_varint(&b, PB_FTRACECPUSTATS_CPU, 1);
	pb_fixed64(&b, PB_FTRACECPUSTATS_NOW_TS, bits);
	expect_bytes("fixed64", "FtraceCpuStats", "cpu: 1 now_ts: 1.5",
		     mem, pb_len(&b, mem));
}

/* The chunk layout of the BRIEF, with padded lengths of several widths. */
static void test_chunk(void)
{
	unsigned int w;
	struct pb_buf b;
	uint8_t *rec2;

	for (w = 1; w <= PB_NEST_MAX; w++) {
		char name[64];

		pb_init(&b, mem, sizeof(mem));
		put_chunk(&b, w);
		snprintf(name, sizeof(name), "chunk, event nests width %u", w);
		tap(!b.overflow && mem[0] == 0x0a,
		    "%s: written, starts with Trace.packet tag", name);
		expect_decode(name, "Trace", chunk_text(), mem,
			      pb_len(&b, mem));
	}

	/* Records appended to a chunk read back as consecutive packets. */
	pb_init(&b, mem, sizeof(mem));
	put_chunk(&b, 2);
	rec2 = b.p;
	put_chunk(&b, 3);
	tap(!b.overflow && *rec2 == 0x0a, "two records: written");
	{
		char text[8192];

		snprintf(text, sizeof(text), "%s %s", chunk_text(),
			 chunk_text());
		expect_decode("two records in one chunk", "Trace", text, mem,
			      pb_len(&b, mem));
	}

	/*
	 * Widths equal to the real length sizes, fields in number order (as
	 * protoc writes them): the whole chunk is canonical.
	 */
	pb_init(&b, mem, sizeof(mem));
	{
		uint8_t *pkt, *bundle;

		pkt = pb_nest_begin(&b, PB_TRACE_PACKET, 2);
		bundle = pb_nest_begin(&b, PB_TRACEPACKET_FTRACE_EVENTS, 1);
		pb_varint(&b, PB_FTRACEEVENTBUNDLE_CPU, 1);
		put_sched_switch(&b, 1);
		put_sys_enter(&b, 1);
		put_sys_exit(&b, 1);
		pb_bool(&b, PB_FTRACEEVENTBUNDLE_LOST_EVENTS, true);
		pb_nest_end(&b, bundle, 1);
		pb_varint(&b, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID, 257);
		pb_varint(&b, PB_TRACEPACKET_SEQUENCE_FLAGS, 1);
		pb_varint(&b, PB_TRACEPACKET_PREVIOUS_PACKET_DROPPED, 1);
		pb_nest_end(&b, pkt, 2);
	}
	tap(!b.overflow && mem[1] & 0x80 && mem[2] == 0x01,
	    "canonical chunk: packet length takes exactly 2 bytes");
	expect_bytes("chunk with exact-width lengths", "Trace", chunk_text(),
		     mem, pb_len(&b, mem));
}

/* Every event kind with every field set, decoded with Perfetto's schema. */
static void test_all_events(void)
{
	struct pb_buf b;
	uint8_t *e, *m;

#define EVENT(field)							\
	do {								\
		e = pb_nest_begin(&b, PB_FTRACEEVENTBUNDLE_EVENT, 2);	\
		pb_varint(&b, PB_FTRACEEVENT_TIMESTAMP, 7);		\
		pb_varint(&b, PB_FTRACEEVENT_PID, 9);			\
		m = pb_nest_begin(&b, field, 2);			\
	} while (0)
#define END() do { pb_nest_end(&b, m, 2); pb_nest_end(&b, e, 2); } while (0)

	pb_init(&b, mem, sizeof(mem));
	pb_varint(&b, PB_FTRACEEVENTBUNDLE_CPU, 0);

	EVENT(PB_FTRACEEVENT_SCHED_WAKING);
	pb_string(&b, PB_SCHEDWAKINGFTRACEEVENT_COMM, "w");
	pb_sint(&b, PB_SCHEDWAKINGFTRACEEVENT_PID, 1);
	pb_sint(&b, PB_SCHEDWAKINGFTRACEEVENT_PRIO, 2);
	pb_sint(&b, PB_SCHEDWAKINGFTRACEEVENT_SUCCESS, 1);
	pb_sint(&b, PB_SCHEDWAKINGFTRACEEVENT_TARGET_CPU, 3);
	END();
	EVENT(PB_FTRACEEVENT_SCHED_WAKEUP);
	pb_string(&b, PB_SCHEDWAKEUPFTRACEEVENT_COMM, "u");
	pb_sint(&b, PB_SCHEDWAKEUPFTRACEEVENT_PID, 1);
	pb_sint(&b, PB_SCHEDWAKEUPFTRACEEVENT_PRIO, 2);
	pb_sint(&b, PB_SCHEDWAKEUPFTRACEEVENT_SUCCESS, 1);
	pb_sint(&b, PB_SCHEDWAKEUPFTRACEEVENT_TARGET_CPU, 3);
	END();
	EVENT(PB_FTRACEEVENT_SCHED_WAKEUP_NEW);
	pb_string(&b, PB_SCHEDWAKEUPNEWFTRACEEVENT_COMM, "n");
	pb_sint(&b, PB_SCHEDWAKEUPNEWFTRACEEVENT_PID, 1);
	pb_sint(&b, PB_SCHEDWAKEUPNEWFTRACEEVENT_PRIO, 2);
	pb_sint(&b, PB_SCHEDWAKEUPNEWFTRACEEVENT_SUCCESS, 1);
	pb_sint(&b, PB_SCHEDWAKEUPNEWFTRACEEVENT_TARGET_CPU, 3);
	END();
	EVENT(PB_FTRACEEVENT_SCHED_PROCESS_FORK);
	pb_string(&b, PB_SCHEDPROCESSFORKFTRACEEVENT_PARENT_COMM, "p");
	pb_sint(&b, PB_SCHEDPROCESSFORKFTRACEEVENT_PARENT_PID, 10);
	pb_string(&b, PB_SCHEDPROCESSFORKFTRACEEVENT_CHILD_COMM, "c");
	pb_sint(&b, PB_SCHEDPROCESSFORKFTRACEEVENT_CHILD_PID, 11);
	END();
	EVENT(PB_FTRACEEVENT_SCHED_PROCESS_EXEC);
	pb_string(&b, PB_SCHEDPROCESSEXECFTRACEEVENT_FILENAME, "/bin/true");
	pb_sint(&b, PB_SCHEDPROCESSEXECFTRACEEVENT_PID, 11);
	pb_sint(&b, PB_SCHEDPROCESSEXECFTRACEEVENT_OLD_PID, 11);
	END();
	EVENT(PB_FTRACEEVENT_SCHED_PROCESS_EXIT);
	pb_string(&b, PB_SCHEDPROCESSEXITFTRACEEVENT_COMM, "x");
	pb_sint(&b, PB_SCHEDPROCESSEXITFTRACEEVENT_PID, 11);
	pb_sint(&b, PB_SCHEDPROCESSEXITFTRACEEVENT_TGID, 11);
	pb_sint(&b, PB_SCHEDPROCESSEXITFTRACEEVENT_PRIO, 120);
	END();
	EVENT(PB_FTRACEEVENT_SCHED_PROCESS_FREE);
	pb_string(&b, PB_SCHEDPROCESSFREEFTRACEEVENT_COMM, "f");
	pb_sint(&b, PB_SCHEDPROCESSFREEFTRACEEVENT_PID, 11);
	pb_sint(&b, PB_SCHEDPROCESSFREEFTRACEEVENT_PRIO, 120);
	END();
	EVENT(PB_FTRACEEVENT_SCHED_MIGRATE_TASK);
	pb_string(&b, PB_SCHEDMIGRATETASKFTRACEEVENT_COMM, "m");
	pb_sint(&b, PB_SCHEDMIGRATETASKFTRACEEVENT_PID, 1);
	pb_sint(&b, PB_SCHEDMIGRATETASKFTRACEEVENT_PRIO, 2);
	pb_sint(&b, PB_SCHEDMIGRATETASKFTRACEEVENT_ORIG_CPU, 0);
	pb_sint(&b, PB_SCHEDMIGRATETASKFTRACEEVENT_DEST_CPU, 1);
	pb_sint(&b, PB_SCHEDMIGRATETASKFTRACEEVENT_RUNNING, 0);
	pb_varint(&b, PB_SCHEDMIGRATETASKFTRACEEVENT_LOAD, 5);
	END();
	EVENT(PB_FTRACEEVENT_TASK_NEWTASK);
	pb_sint(&b, PB_TASKNEWTASKFTRACEEVENT_PID, 12);
	pb_string(&b, PB_TASKNEWTASKFTRACEEVENT_COMM, "t");
	pb_varint(&b, PB_TASKNEWTASKFTRACEEVENT_CLONE_FLAGS, 0x1200011);
	pb_sint(&b, PB_TASKNEWTASKFTRACEEVENT_OOM_SCORE_ADJ, -1000);
	END();
	EVENT(PB_FTRACEEVENT_TASK_RENAME);
	pb_sint(&b, PB_TASKRENAMEFTRACEEVENT_PID, 12);
	pb_string(&b, PB_TASKRENAMEFTRACEEVENT_OLDCOMM, "a");
	pb_string(&b, PB_TASKRENAMEFTRACEEVENT_NEWCOMM, "b");
	pb_sint(&b, PB_TASKRENAMEFTRACEEVENT_OOM_SCORE_ADJ, 0);
	END();
	EVENT(PB_FTRACEEVENT_IRQ_HANDLER_ENTRY);
	pb_sint(&b, PB_IRQHANDLERENTRYFTRACEEVENT_IRQ, 4);
	pb_string(&b, PB_IRQHANDLERENTRYFTRACEEVENT_NAME, "ttyS0");
	pb_varint(&b, PB_IRQHANDLERENTRYFTRACEEVENT_HANDLER, 0);
	END();
	EVENT(PB_FTRACEEVENT_IRQ_HANDLER_EXIT);
	pb_sint(&b, PB_IRQHANDLEREXITFTRACEEVENT_IRQ, 4);
	pb_sint(&b, PB_IRQHANDLEREXITFTRACEEVENT_RET, 1);
	END();
	EVENT(PB_FTRACEEVENT_SOFTIRQ_ENTRY);
	pb_varint(&b, PB_SOFTIRQENTRYFTRACEEVENT_VEC, 1);
	END();
	EVENT(PB_FTRACEEVENT_SOFTIRQ_EXIT);
	pb_varint(&b, PB_SOFTIRQEXITFTRACEEVENT_VEC, 1);
	END();
	EVENT(PB_FTRACEEVENT_SOFTIRQ_RAISE);
	pb_varint(&b, PB_SOFTIRQRAISEFTRACEEVENT_VEC, 9);
	END();
	EVENT(PB_FTRACEEVENT_BLOCK_RQ_ISSUE);
	pb_varint(&b, PB_BLOCKRQISSUEFTRACEEVENT_DEV, 0x800010);
	pb_varint(&b, PB_BLOCKRQISSUEFTRACEEVENT_SECTOR, 1ull << 40);
	pb_varint(&b, PB_BLOCKRQISSUEFTRACEEVENT_NR_SECTOR, 8);
	pb_varint(&b, PB_BLOCKRQISSUEFTRACEEVENT_BYTES, 4096);
	pb_string(&b, PB_BLOCKRQISSUEFTRACEEVENT_RWBS, "WS");
	pb_string(&b, PB_BLOCKRQISSUEFTRACEEVENT_COMM, "kworker/0:1");
	pb_string(&b, PB_BLOCKRQISSUEFTRACEEVENT_CMD, "");
	END();
	EVENT(PB_FTRACEEVENT_BLOCK_RQ_COMPLETE);
	pb_varint(&b, PB_BLOCKRQCOMPLETEFTRACEEVENT_DEV, 0x800010);
	pb_varint(&b, PB_BLOCKRQCOMPLETEFTRACEEVENT_SECTOR, 1ull << 40);
	pb_varint(&b, PB_BLOCKRQCOMPLETEFTRACEEVENT_NR_SECTOR, 8);
	pb_sint(&b, PB_BLOCKRQCOMPLETEFTRACEEVENT_ERRORS, 0);
	pb_string(&b, PB_BLOCKRQCOMPLETEFTRACEEVENT_RWBS, "WS");
	pb_string(&b, PB_BLOCKRQCOMPLETEFTRACEEVENT_CMD, "");
	pb_sint(&b, PB_BLOCKRQCOMPLETEFTRACEEVENT_ERROR, -5);
	END();
	EVENT(PB_FTRACEEVENT_CPU_FREQUENCY);
	pb_varint(&b, PB_CPUFREQUENCYFTRACEEVENT_STATE, 2400000);
	pb_varint(&b, PB_CPUFREQUENCYFTRACEEVENT_CPU_ID, 1);
	END();
	EVENT(PB_FTRACEEVENT_CPU_IDLE);
	pb_varint(&b, PB_CPUIDLEFTRACEEVENT_STATE, 0xffffffffu);
	pb_varint(&b, PB_CPUIDLEFTRACEEVENT_CPU_ID, 1);
	END();
#undef EVENT
#undef END

	tap(!b.overflow, "all event kinds: written");
	expect_decode("every event kind, every field", "FtraceEventBundle",
		"cpu: 0 "
		"event { timestamp: 7 pid: 9 sched_waking { comm: \"w\" pid: 1 prio: 2 success: 1 target_cpu: 3 } } "
		"event { timestamp: 7 pid: 9 sched_wakeup { comm: \"u\" pid: 1 prio: 2 success: 1 target_cpu: 3 } } "
		"event { timestamp: 7 pid: 9 sched_wakeup_new { comm: \"n\" pid: 1 prio: 2 success: 1 target_cpu: 3 } } "
		"event { timestamp: 7 pid: 9 sched_process_fork { parent_comm: \"p\" parent_pid: 10 child_comm: \"c\" child_pid: 11 } } "
		"event { timestamp: 7 pid: 9 sched_process_exec { filename: \"/bin/true\" pid: 11 old_pid: 11 } } "
		"event { timestamp: 7 pid: 9 sched_process_exit { comm: \"x\" pid: 11 tgid: 11 prio: 120 } } "
		"event { timestamp: 7 pid: 9 sched_process_free { comm: \"f\" pid: 11 prio: 120 } } "
		"event { timestamp: 7 pid: 9 sched_migrate_task { comm: \"m\" pid: 1 prio: 2 orig_cpu: 0 dest_cpu: 1 running: 0 load: 5 } } "
		"event { timestamp: 7 pid: 9 task_newtask { pid: 12 comm: \"t\" clone_flags: 18874385 oom_score_adj: -1000 } } "
		"event { timestamp: 7 pid: 9 task_rename { pid: 12 oldcomm: \"a\" newcomm: \"b\" oom_score_adj: 0 } } "
		"event { timestamp: 7 pid: 9 irq_handler_entry { irq: 4 name: \"ttyS0\" handler: 0 } } "
		"event { timestamp: 7 pid: 9 irq_handler_exit { irq: 4 ret: 1 } } "
		"event { timestamp: 7 pid: 9 softirq_entry { vec: 1 } } "
		"event { timestamp: 7 pid: 9 softirq_exit { vec: 1 } } "
		"event { timestamp: 7 pid: 9 softirq_raise { vec: 9 } } "
		"event { timestamp: 7 pid: 9 block_rq_issue { dev: 8388624 sector: 1099511627776 nr_sector: 8 bytes: 4096 rwbs: \"WS\" comm: \"kworker/0:1\" cmd: \"\" } } "
		"event { timestamp: 7 pid: 9 block_rq_complete { dev: 8388624 sector: 1099511627776 nr_sector: 8 errors: 0 rwbs: \"WS\" cmd: \"\" error: -5 } } "
		"event { timestamp: 7 pid: 9 cpu_frequency { state: 2400000 cpu_id: 1 } } "
		"event { timestamp: 7 pid: 9 cpu_idle { state: 4294967295 cpu_id: 1 } } ",
		mem, pb_len(&b, mem));
}

/* Decode a varint of exactly @w bytes the way any parser does. */
static int parse_varint(const uint8_t *p, unsigned int w, uint64_t *v)
{
	unsigned int i;

	*v = 0;
	for (i = 0; i < w; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			return i + 1 == w;
	}
	return 0;
}

static void test_padded_lengths(void)
{
	unsigned int w, bad = 0, n = 0;
	uint8_t pos[PB_NEST_MAX + 1];
	uint64_t v, got, max;

	for (w = 1; w <= PB_NEST_MAX; w++) {
		max = (1ull << (7 * w)) - 1;
		for (v = 0; v <= max; v = v < 300 ? v + 1 : v * 3 + 1) {
			n++;
			pos[w] = 0xa5;
			if (!pb_put_padded_varint(pos, v, w) ||
			    !parse_varint(pos, w, &got) || got != v ||
			    pos[w] != 0xa5)
				bad++;
		}
		n++;
		if (!pb_put_padded_varint(pos, max, w) ||
		    !parse_varint(pos, w, &got) || got != max)
			bad++;
		n++;
		if (pb_put_padded_varint(pos, max + 1, w))
			bad++;
	}
	tap(bad == 0, "padded varints: %u values, widths 1..%d, exact width, "
	    "too-large rejected (%u bad)", n, PB_NEST_MAX, bad);
}

/* A body too big for its length width poisons the record. */
static void test_nest_limits(void)
{
	struct pb_buf b;
	uint8_t *n;
	char s[200];

	memset(s, 'a', sizeof(s) - 1);
	s[sizeof(s) - 1] = 0;

	pb_init(&b, mem, sizeof(mem));
	n = pb_nest_begin(&b, 1, 1);
	pb_string(&b, 1, s);	/* 202 bytes > 127 */
	pb_nest_end(&b, n, 1);
	tap(b.overflow, "nest of 202 bytes with width 1 sets overflow");

	pb_init(&b, mem, sizeof(mem));
	tap(pb_nest_begin(&b, 1, 0) == NULL && b.overflow,
	    "nest width 0 refused");
	pb_init(&b, mem, sizeof(mem));
	tap(pb_nest_begin(&b, 1, PB_NEST_MAX + 1) == NULL && b.overflow,
	    "nest width %d refused", PB_NEST_MAX + 1);

	pb_init(&b, mem, sizeof(mem));
	pb_bytes(&b, 1, s, SIZE_MAX);
	tap(b.overflow && b.p == mem, "pb_bytes of SIZE_MAX bytes: overflow, "
	    "nothing written");

	pb_init(&b, mem, sizeof(mem));
	pb_varint(&b, 1, 1);
	n = b.p;
	b.overflow = true;
	pb_varint(&b, 1, 1);
	pb_string(&b, 2, "x");
	pb_fixed64(&b, 3, 1);
	pb_nest_end(&b, pb_nest_begin(&b, 4, 2), 2);
	tap(b.p == n, "writes after an overflow are no-ops");
	pb_rewind(&b, mem);
	tap(!b.overflow && b.p == mem, "pb_rewind clears overflow");
}

/* Strings are read no further than they can be written. */
static void test_string_bounds(void)
{
	char *s = malloc(8);	/* no NUL: ASan reports any over-read */
	struct pb_buf b;

	memset(s, 'x', 8);
	pb_init(&b, mem, 6);
	pb_string(&b, 1, s);	/* room 6: reads at most 7 bytes */
	tap(b.overflow && b.p == mem,
	    "unterminated string longer than the room: overflow, no over-read");

	pb_init(&b, mem, sizeof(mem));
	pb_strn(&b, 1, s, 8);
	tap(!b.overflow && pb_len(&b, mem) == 10 && mem[1] == 8 &&
	    memcmp(mem + 2, s, 8) == 0,
	    "pb_strn writes at most max bytes of an unterminated string");
	free(s);
}

#define GUARD 64

/*
 * Encode @put into buffers of every length 0..@full+1, each followed by a
 * guard region and allocated exactly (ASan sees the end too). A short
 * buffer must overflow without touching the guard; a long enough one must
 * give the reference bytes.
 */
static void bounds_sweep(const char *name, void (*put)(struct pb_buf *, unsigned int),
			 unsigned int width)
{
	size_t full, len, bad_guard = 0, bad_flag = 0, bad_bytes = 0;
	uint8_t ref[4096];
	struct pb_buf b;

	pb_init(&b, ref, sizeof(ref));
	put(&b, width);
	full = pb_len(&b, ref);

	for (len = 0; len <= full + 1; len++) {
		uint8_t *m = malloc(len + GUARD);
		size_t i;

		memset(m, 0xa5, len + GUARD);
		pb_init(&b, m, len);
		put(&b, width);
		for (i = len; i < len + GUARD; i++)
			if (m[i] != 0xa5)
				bad_guard++;
		if (b.p > m + len || b.overflow != (len < full))
			bad_flag++;
		if (len >= full && memcmp(m, ref, full))
			bad_bytes++;
		free(m);
	}
	tap(!bad_guard && !bad_flag && !bad_bytes,
	    "%s: every buffer length 0..%zu: guard intact (%zu), overflow "
	    "iff short (%zu), bytes (%zu)", name, full + 1, bad_guard,
	    bad_flag, bad_bytes);

	/* Exactly sized buffers: ASan aborts on a write past the end. */
	for (len = 0; len <= full + 1; len++) {
		uint8_t *m = malloc(len ? len : 1);

		pb_init(&b, m, len);
		put(&b, width);
		free(m);
	}
	tap(1, "%s: exactly sized buffers 0..%zu pass ASan", name, full + 1);
}

static void test_bounds(void)
{
	bounds_sweep("chunk", put_chunk, 2);
	bounds_sweep("sched_switch", put_sched_switch, 1);
	bounds_sweep("sys_enter", put_sys_enter, 5);
}

static void cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "pb_test: could not remove %s\n", tmpdir);
}

/* ---- compact_sched (kmod/core/compact.h) ---- */

static struct pbt_compact cs;

/* A comm as the kernel keeps it: 16 bytes, NUL padded. */
static const char *comm16(const char *s)
{
	static char buf[8][CS_COMM_LEN];
	static unsigned int n;
	char *c = buf[n++ % 8];

	memset(c, 0, CS_COMM_LEN);
	memcpy(c, s, strnlen(s, CS_COMM_LEN));
	return c;
}

static uint32_t add(bool sw, uint64_t ts, const char *comm, int64_t state,
		    int32_t pid, int32_t prio, int32_t cpu)
{
	struct pbt_cs_event e = {
		.ts = ts, .comm = comm16(comm), .prev_state = state,
		.pid = pid, .prio = prio, .target_cpu = cpu,
	};

	return pbt_cs_add(&cs, sw, &e, sizeof(mem));
}

/* A bundle of switches and wakings, against protoc byte for byte. */
static void test_compact_bytes(void)
{
	static const char text[] =
		"cpu: 1\n"
		"compact_sched {\n"
		"  switch_timestamp: 5000000000 switch_timestamp: 1200\n"
		"  switch_timestamp: 0 switch_timestamp: 70000\n"
		"  switch_prev_state: 1 switch_prev_state: 256\n"
		"  switch_prev_state: 0 switch_prev_state: 2\n"
		"  switch_next_pid: 0 switch_next_pid: 4242\n"
		"  switch_next_pid: 1 switch_next_pid: 2147483647\n"
		"  switch_next_prio: 120 switch_next_prio: 100\n"
		"  switch_next_prio: 139 switch_next_prio: -1\n"
		"  intern_table: \"swapper/0\" intern_table: \"pingpong\"\n"
		"  intern_table: \"sixteen-bytes-xx\"\n"
		"  switch_next_comm_index: 0 switch_next_comm_index: 1\n"
		"  switch_next_comm_index: 2 switch_next_comm_index: 1\n"
		"  waking_timestamp: 5000000100 waking_timestamp: 3\n"
		"  waking_pid: 4242 waking_pid: -5\n"
		"  waking_target_cpu: 1 waking_target_cpu: 0\n"
		"  waking_prio: 120 waking_prio: 99\n"
		"  waking_comm_index: 1 waking_comm_index: 0\n"
		"}\n";
	struct pb_buf b;
	uint32_t n = 0;
	bool ok = true;

	pbt_cs_reset(&cs);
	n += add(true, 5000000000ull, "swapper/0", 1, 0, 120, 0);
	ok &= n > CS_HEADERS;
	n += add(false, 5000000100ull, "pingpong", 0, 4242, 120, 1);
	n += add(true, 5000001200ull, "pingpong", 256, 4242, 100, 0);
	n += add(true, 5000001200ull, "sixteen-bytes-xxyy", 0, 1, 139, 0);
	n += add(false, 5000000103ull, "swapper/0", 0, -5, 99, 0);
	n += add(true, 5000071200ull, "pingpong", 2, 2147483647, -1, 0);
	tap(ok && cs.nr_intern == 3 && cs.reserved == n,
	    "compact: 6 events, 3 comms interned, %u bytes reserved", n);
	pb_init(&b, mem, sizeof(mem));
	pb_varint(&b, PB_FTRACEEVENTBUNDLE_CPU, 1);
	pbt_cs_write(&b, &cs);
	tap(!b.overflow && pb_len(&b, mem) <= n + 2,
	    "compact: the bundle fits the bytes reserved (%zu of %u + cpu)",
	    pb_len(&b, mem), n);
	expect_bytes("compact", "FtraceEventBundle", text, mem, pb_len(&b, mem));
	expect_decode("compact", "FtraceEventBundle", text, mem, pb_len(&b, mem));
}

/* Only switches: no waking columns at all, as protoc leaves them out. */
static void test_compact_switch_only(void)
{
	static const char text[] =
		"compact_sched {\n"
		"  switch_timestamp: 10 switch_prev_state: 0\n"
		"  switch_next_pid: 7 switch_next_prio: 120\n"
		"  intern_table: \"a\" switch_next_comm_index: 0\n"
		"}\n";
	struct pb_buf b;

	pbt_cs_reset(&cs);
	add(true, 10, "a", 0, 7, 120, 0);
	pb_init(&b, mem, sizeof(mem));
	pbt_cs_write(&b, &cs);
	expect_bytes("compact, switches only", "FtraceEventBundle", text, mem,
		     pb_len(&b, mem));
}

/* Full columns, intern table and room refuse an event, changing nothing. */
static void test_compact_limits(void)
{
	struct pbt_compact before;
	char name[CS_COMM_LEN];
	uint32_t i, n, added = 0;
	struct pbt_cs_event e = { .ts = 1, .pid = 1, .prio = 120 };

	pbt_cs_reset(&cs);
	for (i = 0; i < CS_INTERN_MAX; i++) {
		snprintf(name, sizeof(name), "t%u", i);
		added += add(false, i, name, 0, 1, 120, 0) != 0;
	}
	memcpy(&before, &cs, sizeof(cs));
	n = add(false, 100, "one-too-many", 0, 1, 120, 0);
	tap(added == CS_INTERN_MAX && n == 0 && !memcmp(&before, &cs, sizeof(cs)),
	    "compact: a %uth comm is refused and changes nothing", CS_INTERN_MAX + 1);
	n = add(false, 100, "t3", 0, 1, 120, 0);
	tap(n > 0 && cs.nr_intern == CS_INTERN_MAX,
	    "compact: a known comm still fits in a full intern table (%u bytes)", n);

	memcpy(&before, &cs, sizeof(cs));
	e.comm = comm16("t3");
	e.ts = 1000;
	n = pbt_cs_add(&cs, false, &e, 4);
	/* Bytes past a column's length are scratch: compare the state. */
	tap(n == 0 && !memcmp(before.len, cs.len, sizeof(cs.len)) &&
	    before.nr_intern == cs.nr_intern && before.reserved == cs.reserved &&
	    before.last_ts[1] == cs.last_ts[1],
	    "compact: an event with no room is refused and changes nothing");

	pbt_cs_reset(&cs);
	for (i = 0, n = 1; n && i < 10000; i++)
		n = add(true, (uint64_t)i << 40, "big", 0, 1, 120, 0);
	tap(!n && cs.len[CS_SWITCH_TS] <= CS_COL_BYTES &&
	    cs.len[CS_SWITCH_TS] > CS_COL_BYTES - PB_VARINT_MAX,
	    "compact: a full column refuses events (%u switches, %u bytes)",
	    i - 1, cs.len[CS_SWITCH_TS]);
}

int main(void)
{
	char path[4096];

	proto_dir = getenv("PBTRACE_PROTO_DIR");
	if (!proto_dir)
		proto_dir = PBT_PROTO_DIR;
	schema_dir = getenv("PBTRACE_SCHEMA_DIR");
	if (!schema_dir)
		schema_dir = PBT_SCHEMA_DIR;

	snprintf(path, sizeof(path), "%s/perfetto_trace.proto", schema_dir);
	if (access(path, R_OK)) {
		printf("Bail out! no %s: set PBTRACE_SCHEMA_DIR\n", path);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/trace.proto", proto_dir);
	if (access(path, R_OK)) {
		printf("Bail out! no %s: set PBTRACE_PROTO_DIR\n", path);
		return 1;
	}
	if (system("protoc --version > /dev/null 2>&1")) {
		printf("Bail out! protoc not found: apt-get install protobuf-compiler\n");
		return 1;
	}
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp %s failed\n", tmpdir);
		return 1;
	}

	test_canonical_events();
	test_varint_boundaries();
	test_fixed64();
	test_chunk();
	test_all_events();
	test_padded_lengths();
	test_nest_limits();
	test_string_bounds();
	test_bounds();
	test_compact_bytes();
	test_compact_switch_only();
	test_compact_limits();

	cleanup();
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
