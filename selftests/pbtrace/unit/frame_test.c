// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kmod/core/frame.[ch], the relay protocol's encoder and the
 * parser the host runs on whatever a guest sends (docs/relay-protocol.md).
 * On the host under ASan/UBSan, TAP on stdout.
 *
 *  - every frame type encodes, parses back to the same fields and encodes
 *    again to the same bytes;
 *  - a valid stream cut at every byte gives "need more", then the frames;
 *  - garbage, oversized, wrong version, replayed and out-of-order frames are
 *    refused with the reason the protocol names;
 *  - chunk_check() refuses truncated and malformed records and any field a
 *    guest must not write; chunks are built with pb.h like the data plane's;
 *  - chunk_stamp() output is decoded by protoc with Perfetto's own schema
 *    ($PBTRACE_SCHEMA_DIR): machine_id and the new sequence id on every
 *    packet, everything else unchanged;
 *  - the host's packets for a relayed machine (relay_packets.h), SystemInfo
 *    from a HELLO and RemoteClockSync from a ping round, decode with
 *    Perfetto's schema to exactly the expected text.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdarg.h>
#include <unistd.h>

#include "frame.h"
#include "pb.h"
#include "pbtrace_fields.h"
#include "tap.h"
#include "relay_packets.h"

#ifndef PBT_SCHEMA_DIR
#define PBT_SCHEMA_DIR "../shared/perfetto"
#endif


static struct frame_str str(const char *s)
{
	struct frame_str r = { s, (uint32_t)strlen(s) };

	return r;
}

/* ---- trace bytes as the data plane writes them (docs/encoding.md) ---- */

/* One record: 0x0A <4-byte len> TracePacket { seq, [flags], bundle }. */
static void put_packet(struct pb_buf *b, uint32_t seq_id, uint32_t cpu,
		       uint64_t ts, uint32_t pid, const char *comm)
{
	uint8_t *rec, *bundle, *ev, *sw;

	rec = pb_nest_begin(b, 1, 4);
	pb_varint(b, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID, seq_id);
	pb_varint(b, PB_TRACEPACKET_SEQUENCE_FLAGS, 1);
	bundle = pb_nest_begin(b, PB_TRACEPACKET_FTRACE_EVENTS, 4);
	pb_varint(b, PB_FTRACEEVENTBUNDLE_CPU, cpu);
	ev = pb_nest_begin(b, PB_FTRACEEVENTBUNDLE_EVENT, 2);
	pb_varint(b, PB_FTRACEEVENT_TIMESTAMP, ts);
	pb_varint(b, PB_FTRACEEVENT_PID, pid);
	sw = pb_nest_begin(b, PB_FTRACEEVENT_SCHED_SWITCH, 1);
	pb_string(b, PB_SCHEDSWITCHFTRACEEVENT_PREV_COMM, comm);
	pb_varint(b, PB_SCHEDSWITCHFTRACEEVENT_PREV_PID, pid);
	pb_varint(b, PB_SCHEDSWITCHFTRACEEVENT_NEXT_PID, pid + 1);
	pb_nest_end(b, sw, 1);
	pb_nest_end(b, ev, 2);
	pb_nest_end(b, bundle, 4);
	pb_nest_end(b, rec, 4);
}

/* A two-packet chunk of cpu 1; returns its length. */
static size_t make_chunk(uint8_t *mem, size_t size)
{
	struct pb_buf b;

	pb_init(&b, mem, size);
	put_packet(&b, 257, 1, 1000000123, 1234, "kworker/1:0");
	put_packet(&b, 257, 1, 1000000999, 77, "bash");
	if (b.overflow)
		abort();
	return pb_len(&b, mem);
}

/* A one-packet chunk whose packet also carries @field = 5 (a varint). */
static size_t make_forged(uint8_t *mem, size_t size, uint32_t field)
{
	struct pb_buf b;
	uint8_t *rec;

	pb_init(&b, mem, size);
	rec = pb_nest_begin(&b, 1, 4);
	pb_varint(&b, PB_TRACEPACKET_TRUSTED_PACKET_SEQUENCE_ID, 257);
	pb_varint(&b, field, 5);
	pb_nest_end(&b, rec, 4);
	return pb_len(&b, mem);
}

/* ---- frames of a valid conversation ---- */

static uint8_t chunk_mem[4096];
static size_t chunk_len;

static struct frame sample(uint8_t type, uint32_t seq)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = type;
	f.seq = seq;
	switch (type) {
	case FRAME_HELLO:
		memset(f.hello.hint, 0xab, sizeof(f.hello.hint));
		memset(f.hello.nonce, 0x11, sizeof(f.hello.nonce));
		f.hello.num_cpus = 4;
		f.hello.ram_bytes = 2ULL << 30;
		f.hello.name = str("guest1");
		f.hello.sysname = str("Linux");
		f.hello.release = str("6.1.0-57-amd64");
		f.hello.version = str("#1 SMP PREEMPT_DYNAMIC Debian 6.1.0");
		f.hello.machine = str("x86_64");
		break;
	case FRAME_WELCOME:
		f.welcome.machine_id = 3;
		f.welcome.ping_period_ms = 1000;
		memset(f.welcome.nonce, 0x22, sizeof(f.welcome.nonce));
		memset(f.welcome.mac, 0x33, sizeof(f.welcome.mac));
		break;
	case FRAME_AUTH:
		memset(f.auth.mac, 0x44, sizeof(f.auth.mac));
		break;
	case FRAME_CONTROL:
		f.control.op = FRAME_CTL_START;
		f.control.session = 9;
		f.control.size_kb = 1024;
		f.control.chunk_kb = 16;
		f.control.events = str("sched/sched_switch,raw_syscalls/sys_enter");
		break;
	case FRAME_CHUNK:
		f.chunk.cpu = 1;
		f.chunk.seq = 42;
		f.chunk.data = chunk_mem;
		f.chunk.len = (uint32_t)chunk_len;
		break;
	case FRAME_PING:
		f.ping.id = 5;
		f.ping.send[FRAME_CLK_BOOTTIME] = 111;
		f.ping.send[FRAME_CLK_MONOTONIC] = 222;
		f.ping.send[FRAME_CLK_REALTIME] = 1700000000000000000ULL;
		break;
	case FRAME_PONG:
		f.pong.id = 5;
		f.pong.recv[FRAME_CLK_BOOTTIME] = 333;
		f.pong.reply[FRAME_CLK_REALTIME] = UINT64_MAX;
		break;
	case FRAME_GOODBYE:
		f.goodbye.reason = 0;
		break;
	case FRAME_STOPPED:
		f.stopped.session_id = 9;
		f.stopped.events_written = 0x0102030405060708ULL;
		f.stopped.events_lost = UINT64_MAX;
		break;
	}
	return f;
}

/* Which role reads @type, and what it must have seen first. */
static void prepare(struct frame_parser *ps, uint8_t type, uint32_t *seq)
{
	struct frame f, out;
	uint8_t buf[512];
	size_t n;
	bool host = type == FRAME_HELLO || type == FRAME_AUTH ||
		    type == FRAME_CHUNK || type == FRAME_PING ||
		    type == FRAME_GOODBYE || type == FRAME_STOPPED;

	frame_parser_init(ps, host ? FRAME_ROLE_HOST : FRAME_ROLE_RELAY,
			  type == FRAME_AUTH);
	*seq = 0;
	if (type == FRAME_HELLO || type == FRAME_WELCOME)
		return;
	f = sample(host ? FRAME_HELLO : FRAME_WELCOME, 0);
	n = frame_encode(buf, sizeof(buf), &f);
	if (frame_parse(ps, buf, n, &out) != (int)n)
		abort();
	*seq = 1;
	if (type == FRAME_CHUNK || type == FRAME_STOPPED) {
		f = sample(FRAME_CONTROL, 0);
		frame_sent(ps, &f);
	}
	if (type == FRAME_PONG) {
		f = sample(FRAME_PING, 0);
		frame_sent(ps, &f);
	}
}

static bool str_eq(struct frame_str a, struct frame_str b)
{
	return a.len == b.len && !memcmp(a.p, b.p, a.len);
}

/* Field by field, so a bug shared by encoder and parser still shows. */
static bool same(const struct frame *a, const struct frame *b)
{
	if (a->type != b->type || a->seq != b->seq)
		return false;
	switch (a->type) {
	case FRAME_HELLO:
		return !memcmp(a->hello.hint, b->hello.hint, FRAME_HINT_LEN) &&
		       !memcmp(a->hello.nonce, b->hello.nonce, FRAME_NONCE_LEN) &&
		       a->hello.num_cpus == b->hello.num_cpus &&
		       a->hello.ram_bytes == b->hello.ram_bytes &&
		       str_eq(a->hello.name, b->hello.name) &&
		       str_eq(a->hello.sysname, b->hello.sysname) &&
		       str_eq(a->hello.release, b->hello.release) &&
		       str_eq(a->hello.version, b->hello.version) &&
		       str_eq(a->hello.machine, b->hello.machine);
	case FRAME_WELCOME:
		return !memcmp(&a->welcome, &b->welcome, sizeof(a->welcome));
	case FRAME_AUTH:
		return !memcmp(&a->auth, &b->auth, sizeof(a->auth));
	case FRAME_CONTROL:
		return a->control.op == b->control.op &&
		       a->control.session == b->control.session &&
		       a->control.size_kb == b->control.size_kb &&
		       a->control.chunk_kb == b->control.chunk_kb &&
		       str_eq(a->control.events, b->control.events);
	case FRAME_CHUNK:
		return a->chunk.cpu == b->chunk.cpu &&
		       a->chunk.seq == b->chunk.seq &&
		       a->chunk.len == b->chunk.len &&
		       !memcmp(a->chunk.data, b->chunk.data, a->chunk.len) &&
		       b->chunk.nr_packets == 2;
	case FRAME_PING:
		return !memcmp(&a->ping, &b->ping, sizeof(a->ping));
	case FRAME_PONG:
		return !memcmp(&a->pong, &b->pong, sizeof(a->pong));
	case FRAME_GOODBYE:
		return a->goodbye.reason == b->goodbye.reason;
	case FRAME_STOPPED:
		return a->stopped.session_id == b->stopped.session_id &&
		       a->stopped.events_written == b->stopped.events_written &&
		       a->stopped.events_lost == b->stopped.events_lost;
	}
	return false;
}

static const char * const type_names[] = {
	"?", "HELLO", "WELCOME", "AUTH", "CONTROL", "CHUNK", "PING", "PONG",
	"GOODBYE", "STOPPED",
};

static void test_roundtrip(void)
{
	static uint8_t buf[FRAME_HDR_LEN + FRAME_MAX_PAYLOAD];
	static uint8_t again[FRAME_HDR_LEN + FRAME_MAX_PAYLOAD];
	struct frame_parser ps;
	struct frame f, out;
	uint32_t seq;
	uint8_t t;
	size_t n;
	int rc;

	for (t = 1; t < FRAME_NR_TYPES; t++) {
		prepare(&ps, t, &seq);
		f = sample(t, seq);
		n = frame_encode(buf, sizeof(buf), &f);
		rc = frame_parse(&ps, buf, n, &out);
		tap(n > FRAME_HDR_LEN && rc == (int)n && same(&f, &out) &&
		    frame_encode(again, sizeof(again), &out) == n &&
		    !memcmp(buf, again, n),
		    "round trip %s (%zu bytes, parse %d%s%s)", type_names[t],
		    n, rc, rc < 0 ? ": " : "", rc < 0 ? frame_strerror(rc) : "");
	}

	/* The header is what the document says, byte for byte. */
	f = sample(FRAME_GOODBYE, 0x01020304);
	f.goodbye.reason = FRAME_E_SEQ;
	n = frame_encode(buf, sizeof(buf), &f);
	tap(n == 20 && !memcmp(buf, "PBTR\x02\x08\x00\x00\x04\x00\x00\x00"
			       "\x04\x03\x02\x01\x06\x00\x00\x00", 20),
	    "header layout: magic, version, type, flags, LE length and sequence");

	/* The encoder refuses what the parser would. */
	f = sample(FRAME_HELLO, 0);
	f.hello.name.len = FRAME_STR_MAX + 1;
	tap(frame_encode(buf, sizeof(buf), &f) == 0,
	    "encoder refuses a string longer than %d", FRAME_STR_MAX);
	f = sample(FRAME_PING, 0);
	tap(frame_encode(buf, FRAME_HDR_LEN + 55, &f) == 0,
	    "encoder refuses a buffer one byte short");
}

/* ---- streams cut at every byte ---- */

static size_t host_stream(uint8_t *buf, size_t size, int *nr)
{
	static const uint8_t types[] = { FRAME_HELLO, FRAME_AUTH, FRAME_PING,
					 FRAME_CHUNK, FRAME_CHUNK,
					 FRAME_STOPPED, FRAME_GOODBYE };
	struct frame f;
	size_t n = 0, i, len;

	/* TCP: every frame after AUTH carries a tag (its bytes not checked here). */
	for (i = 0; i < sizeof(types); i++) {
		f = sample(types[i], (uint32_t)i);
		len = frame_encode(buf + n, size - n - FRAME_TAG_LEN, &f);
		if (i >= 2) {
			frame_set_tagged(buf + n);
			memset(buf + n + len, 0x5a, FRAME_TAG_LEN);
			len += FRAME_TAG_LEN;
		}
		n += len;
	}
	*nr = (int)sizeof(types);
	return n;
}

static size_t relay_stream(uint8_t *buf, size_t size, int *nr)
{
	static const uint8_t types[] = { FRAME_WELCOME, FRAME_CONTROL,
					 FRAME_PONG, FRAME_CONTROL,
					 FRAME_GOODBYE };
	struct frame f;
	size_t n = 0, i;

	for (i = 0; i < sizeof(types); i++) {
		f = sample(types[i], (uint32_t)i);
		if (i == 3)
			f.control.op = FRAME_CTL_STOP;
		n += frame_encode(buf + n, size - n, &f);
	}
	*nr = (int)sizeof(types);
	return n;
}

static void parser_for(struct frame_parser *ps, bool host)
{
	struct frame f;

	frame_parser_init(ps, host ? FRAME_ROLE_HOST : FRAME_ROLE_RELAY, host);
	if (host) {
		f = sample(FRAME_CONTROL, 0);
		frame_sent(ps, &f);
		f = sample(FRAME_PONG, 0);
		frame_sent(ps, &f);
	} else {
		f = sample(FRAME_PING, 0);
		frame_sent(ps, &f);
	}
}

/*
 * Feed @buf[0..cut) then all of it, as a socket might deliver it. Returns
 * the number of frames, or -1 if anything but need-more or a frame came
 * back, or the first call returned a frame it did not fully have.
 */
static int feed_cut(bool host, const uint8_t *buf, size_t len, size_t cut)
{
	struct frame_parser ps;
	struct frame out;
	size_t off = 0;
	int rc, frames = 0;

	parser_for(&ps, host);
	while ((rc = frame_parse(&ps, buf + off, cut - off, &out)) > 0) {
		off += (size_t)rc;
		frames++;
	}
	if (rc < 0 || off > cut)
		return -1;
	while (off < len) {
		rc = frame_parse(&ps, buf + off, len - off, &out);
		if (rc <= 0)
			return -1;
		off += (size_t)rc;
		frames++;
	}
	return frames;
}

static void test_truncation(void)
{
	static uint8_t buf[16384];
	int roles, nr, bad, got;
	size_t len, cut;

	for (roles = 0; roles < 2; roles++) {
		bool host = roles == 0;

		len = host ? host_stream(buf, sizeof(buf), &nr) :
			     relay_stream(buf, sizeof(buf), &nr);
		bad = 0;
		for (cut = 0; cut <= len; cut++) {
			got = feed_cut(host, buf, len, cut);
			if (got != nr) {
				if (!bad)
					printf("# cut at %zu: %d frames\n",
					       cut, got);
				bad++;
			}
		}
		tap(!bad, "%s stream of %d frames (%zu bytes) cut at every byte: need-more, then every frame",
		    host ? "relay->host" : "host->relay", nr, len);
	}
}

/* ---- refusals ---- */

/* Feed @buf to a parser that has seen @pre first; the result of @buf. */
static int parse_after(struct frame_parser *ps, const uint8_t *buf,
		       size_t len)
{
	struct frame out;

	return frame_parse(ps, buf, len, &out);
}

static void expect(int rc, int reason, const char *what)
{
	tap(rc == -reason, "%s: refused as '%s' (got %d: %s)", what,
	    frame_strerror(reason), rc, rc < 0 ? frame_strerror(rc) : "accepted");
}

static size_t enc(uint8_t *buf, struct frame f)
{
	size_t n = frame_encode(buf, 1024, &f);

	if (!n)
		abort();
	return n;
}

static void test_refusals(void)
{
	uint8_t buf[1024], hello[1024];
	struct frame_parser ps;
	struct frame f, out;
	size_t n, hn;

	frame_parser_init(&ps, FRAME_ROLE_HOST, false);
	expect(parse_after(&ps, (const uint8_t *)"G", 1), FRAME_E_MAGIC,
	       "garbage, first byte only");
	expect(parse_after(&ps, (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18),
	       FRAME_E_MAGIC, "an HTTP request");

	hn = enc(hello, sample(FRAME_HELLO, 0));
	memcpy(buf, hello, hn);
	buf[4] = 1;
	expect(parse_after(&ps, buf, 5), FRAME_E_VERSION,
	       "version 1 (untagged TCP), header cut after the version byte");
	buf[4] = 3;
	expect(parse_after(&ps, buf, 5), FRAME_E_VERSION, "version 3");
	memcpy(buf, hello, hn);
	buf[5] = FRAME_NR_TYPES;
	expect(parse_after(&ps, buf, hn), FRAME_E_TYPE, "type 10");
	buf[5] = 0;
	expect(parse_after(&ps, buf, hn), FRAME_E_TYPE, "type 0");
	memcpy(buf, hello, hn);
	buf[7] = 0x80;
	expect(parse_after(&ps, buf, hn), FRAME_E_FLAGS, "flag bit 15");

	/* Oversized: refused on the header alone, before any payload. */
	frame_parser_init(&ps, FRAME_ROLE_HOST, false);
	frame_encode_header(buf, FRAME_CHUNK, FRAME_MAX_PAYLOAD + 1, 0);
	expect(parse_after(&ps, buf, FRAME_HDR_LEN), FRAME_E_LENGTH,
	       "CHUNK of 256 KiB + 9 bytes, header only");
	frame_encode_header(buf, FRAME_HELLO, 0xffffffff, 0);
	expect(parse_after(&ps, buf, FRAME_HDR_LEN), FRAME_E_LENGTH,
	       "HELLO of 4 GiB");
	frame_encode_header(buf, FRAME_PING, 55, 0);
	expect(parse_after(&ps, buf, FRAME_HDR_LEN), FRAME_E_LENGTH,
	       "PING one byte short");

	/* Order. */
	chunk_len = make_chunk(chunk_mem, sizeof(chunk_mem));
	frame_parser_init(&ps, FRAME_ROLE_HOST, false);
	n = enc(buf, sample(FRAME_CHUNK, 0));
	expect(parse_after(&ps, buf, n), FRAME_E_ORDER, "CHUNK before HELLO");
	n = enc(buf, sample(FRAME_PING, 0));
	expect(parse_after(&ps, buf, n), FRAME_E_ORDER, "PING before HELLO");
	tap(parse_after(&ps, hello, hn) == (int)hn, "then HELLO is accepted");
	n = enc(buf, sample(FRAME_HELLO, 1));
	expect(parse_after(&ps, buf, n), FRAME_E_ORDER, "a second HELLO");
	expect(parse_after(&ps, hello, hn), FRAME_E_SEQ,
	       "the first HELLO replayed");
	n = enc(buf, sample(FRAME_STOPPED, 1));
	expect(parse_after(&ps, buf, n), FRAME_E_ORDER,
	       "STOPPED before CONTROL start");
	n = enc(buf, sample(FRAME_CHUNK, 1));
	expect(parse_after(&ps, buf, n), FRAME_E_ORDER,
	       "CHUNK before CONTROL start");
	f = sample(FRAME_CONTROL, 0);
	frame_sent(&ps, &f);
	tap(parse_after(&ps, buf, n) == (int)n,
	    "then, after CONTROL start, the CHUNK is accepted");
	n = enc(buf, sample(FRAME_CHUNK, 1));
	expect(parse_after(&ps, buf, n), FRAME_E_SEQ, "that CHUNK replayed");
	n = enc(buf, sample(FRAME_CHUNK, 3));
	expect(parse_after(&ps, buf, n), FRAME_E_SEQ,
	       "a CHUNK after a lost frame (sequence 3 for 2)");
	n = enc(buf, sample(FRAME_CONTROL, 2));
	expect(parse_after(&ps, buf, n), FRAME_E_DIRECTION,
	       "a guest sending CONTROL");
	n = enc(buf, sample(FRAME_PONG, 2));
	expect(parse_after(&ps, buf, n), FRAME_E_DIRECTION,
	       "a guest sending PONG");
	f = sample(FRAME_PING, 2);
	f.ping.prev_id = 77;
	n = enc(buf, f);
	expect(parse_after(&ps, buf, n), FRAME_E_PAYLOAD,
	       "PING reporting on a PONG never sent");
	n = enc(buf, sample(FRAME_STOPPED, 2));
	buf[FRAME_HDR_LEN + 4] = 1;
	expect(parse_after(&ps, buf, n), FRAME_E_PAYLOAD,
	       "STOPPED with its reserved word set");
	frame_encode_header(buf, FRAME_STOPPED, 23, 2);
	expect(parse_after(&ps, buf, FRAME_HDR_LEN), FRAME_E_LENGTH,
	       "STOPPED one byte short, header only");
	n = enc(buf, sample(FRAME_STOPPED, 2));
	tap(parse_after(&ps, buf, n) == (int)n, "STOPPED accepted");
	n = enc(buf, sample(FRAME_GOODBYE, 3));
	tap(parse_after(&ps, buf, n) == (int)n, "GOODBYE accepted");
	n = enc(buf, sample(FRAME_PING, 4));
	expect(parse_after(&ps, buf, n), FRAME_E_CLOSED, "PING after GOODBYE");

	/* TCP: nothing but AUTH after HELLO. */
	frame_parser_init(&ps, FRAME_ROLE_HOST, true);
	tap(parse_after(&ps, hello, hn) == (int)hn, "TCP: HELLO accepted");
	n = enc(buf, sample(FRAME_PING, 1));
	expect(parse_after(&ps, buf, n), FRAME_E_ORDER, "TCP: PING before AUTH");
	n = enc(buf, sample(FRAME_AUTH, 1));
	frame_set_tagged(buf);
	expect(parse_after(&ps, buf, n + FRAME_TAG_LEN), FRAME_E_FLAGS,
	       "TCP: a tagged AUTH (tags start after it)");
	n = enc(buf, sample(FRAME_AUTH, 1));
	tap(parse_after(&ps, buf, n) == (int)n, "TCP: AUTH accepted, untagged");
	n = enc(buf, sample(FRAME_PING, 2));
	expect(parse_after(&ps, buf, n), FRAME_E_FLAGS,
	       "TCP: an untagged PING after AUTH");
	frame_set_tagged(buf);
	memset(buf + n, 0xab, FRAME_TAG_LEN);
	tap(parse_after(&ps, buf, n + FRAME_TAG_LEN - 1) == 0,
	    "TCP: a tagged PING short of its last tag byte: more is needed");
	tap(parse_after(&ps, buf, n + FRAME_TAG_LEN) == (int)(n + FRAME_TAG_LEN),
	    "TCP: a tagged PING after AUTH: accepted with its %d tag bytes",
	    FRAME_TAG_LEN);
	n = enc(buf, sample(FRAME_HELLO, 0));
	frame_set_tagged(buf);
	frame_parser_init(&ps, FRAME_ROLE_HOST, false);
	expect(parse_after(&ps, buf, n + FRAME_TAG_LEN), FRAME_E_FLAGS,
	       "vsock: a tagged HELLO");
	/* The relay: tags from the frame after WELCOME on. */
	frame_parser_init(&ps, FRAME_ROLE_RELAY, true);
	n = enc(buf, sample(FRAME_WELCOME, 0));
	tap(parse_after(&ps, buf, n) == (int)n, "TCP relay: WELCOME untagged");
	n = enc(buf, sample(FRAME_CONTROL, 1));
	expect(parse_after(&ps, buf, n), FRAME_E_FLAGS,
	       "TCP relay: an untagged CONTROL after WELCOME");

	/* Relay side. */
	frame_parser_init(&ps, FRAME_ROLE_RELAY, false);
	n = enc(buf, sample(FRAME_CONTROL, 0));
	expect(parse_after(&ps, buf, n), FRAME_E_ORDER, "CONTROL before WELCOME");
	n = enc(buf, sample(FRAME_WELCOME, 0));
	tap(parse_after(&ps, buf, n) == (int)n, "WELCOME accepted");
	n = enc(buf, sample(FRAME_PONG, 1));
	expect(parse_after(&ps, buf, n), FRAME_E_PONG, "PONG without PING");
	f = sample(FRAME_PING, 0);
	f.ping.id = 6;
	frame_sent(&ps, &f);
	expect(parse_after(&ps, buf, n), FRAME_E_PONG,
	       "PONG answering another PING");
	f = sample(FRAME_PING, 0);
	frame_sent(&ps, &f);
	tap(parse_after(&ps, buf, n) == (int)n, "PONG answering its PING");
	n = enc(buf, sample(FRAME_PONG, 2));
	expect(parse_after(&ps, buf, n), FRAME_E_PONG, "the same PONG twice");
	n = enc(buf, sample(FRAME_HELLO, 2));
	expect(parse_after(&ps, buf, n), FRAME_E_DIRECTION,
	       "the host sending HELLO");
	n = enc(buf, sample(FRAME_STOPPED, 2));
	expect(parse_after(&ps, buf, n), FRAME_E_DIRECTION,
	       "the host sending STOPPED");

	/* Payloads. */
	frame_parser_init(&ps, FRAME_ROLE_HOST, false);
	f = sample(FRAME_HELLO, 0);
	f.hello.name = str("evil\n[ 0.0] fake");
	n = enc(buf, f);
	expect(parse_after(&ps, buf, n), FRAME_E_PAYLOAD,
	       "HELLO name with a newline");
	f = sample(FRAME_HELLO, 0);
	f.hello.num_cpus = 0;
	n = enc(buf, f);
	expect(parse_after(&ps, buf, n), FRAME_E_PAYLOAD, "HELLO with 0 CPUs");
	f = sample(FRAME_HELLO, 0);
	f.hello.machine = str("");
	n = enc(buf, f);
	expect(parse_after(&ps, buf, n), FRAME_E_PAYLOAD,
	       "HELLO without utsname machine");
	/* A string length pointing past the end of the payload. */
	memcpy(buf, hello, hn);
	buf[FRAME_HDR_LEN + 64] = 200;
	expect(parse_after(&ps, buf, hn), FRAME_E_PAYLOAD,
	       "HELLO string longer than the payload");
	/* One byte too many after the last string. */
	memcpy(buf, hello, hn);
	buf[hn] = 'x';
	buf[8]++;
	expect(parse_after(&ps, buf, hn + 1), FRAME_E_PAYLOAD,
	       "HELLO with a trailing byte");

	tap(parse_after(&ps, hello, hn) == (int)hn, "valid HELLO (4 CPUs)");
	f = sample(FRAME_CONTROL, 0);
	frame_sent(&ps, &f);
	f = sample(FRAME_CHUNK, 1);
	f.chunk.cpu = 4;
	n = enc(buf, f);
	expect(parse_after(&ps, buf, n), FRAME_E_PAYLOAD,
	       "CHUNK for cpu 4 of a 4-CPU guest");
	f = sample(FRAME_CHUNK, 1);
	f.chunk.len = (uint32_t)chunk_len - 1;
	n = enc(buf, f);
	expect(parse_after(&ps, buf, n), FRAME_E_CHUNK,
	       "CHUNK with a truncated record");
	{
		uint8_t forged[64];

		f = sample(FRAME_CHUNK, 1);
		f.chunk.data = forged;
		f.chunk.len = (uint32_t)make_forged(forged, sizeof(forged), 98);
		n = enc(buf, f);
		expect(parse_after(&ps, buf, n), FRAME_E_TRUSTED,
		       "CHUNK whose packet sets machine_id");
	}
	frame_parser_init(&ps, FRAME_ROLE_RELAY, false);
	n = enc(buf, sample(FRAME_WELCOME, 0));
	parse_after(&ps, buf, n);
	f = sample(FRAME_CONTROL, 1);
	f.control.events = str("sched/sched_switch;rm -rf");
	n = enc(buf, f);
	expect(parse_after(&ps, buf, n), FRAME_E_PAYLOAD,
	       "CONTROL with a bad event name");
	f = sample(FRAME_CONTROL, 1);
	f.control.op = 4;
	n = enc(buf, f);
	expect(frame_parse(&ps, buf, n, &out), FRAME_E_PAYLOAD,
	       "CONTROL op 4");
}

/* ---- chunk_check ---- */

static void test_chunk_check(void)
{
	static const uint32_t forbidden[] = { 98, 3, 79, 45, 107, 50 };
	uint8_t mem[4096], bad[64];
	size_t len, cut, first, i;
	int rc, wrong = 0;

	len = make_chunk(mem, sizeof(mem));
	tap(chunk_check(mem, len) == 2, "a data-plane chunk of 2 packets passes");

	/* The first record's length, from its 4-byte padded varint. */
	first = 5 + ((mem[1] & 0x7f) | (mem[2] & 0x7f) << 7 |
		     (mem[3] & 0x7f) << 14 | (size_t)mem[4] << 21);
	for (cut = 0; cut < len; cut++) {
		rc = chunk_check(mem, cut);
		if (cut == first ? rc != 1 : rc != -FRAME_E_CHUNK) {
			if (!wrong)
				printf("# cut at %zu: %d\n", cut, rc);
			wrong++;
		}
	}
	tap(!wrong, "cut at every byte: refused, except at the record boundary (%zu)",
	    first);

	for (i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		len = make_forged(bad, sizeof(bad), forbidden[i]);
		expect(chunk_check(bad, len), FRAME_E_TRUSTED,
		       forbidden[i] == 98 ? "packet with machine_id (98)" :
		       forbidden[i] == 3 ? "packet with trusted_uid (3)" :
		       forbidden[i] == 79 ? "packet with trusted_pid (79)" :
		       forbidden[i] == 45 ? "packet with system_info (45)" :
		       forbidden[i] == 107 ? "packet with remote_clock_sync (107)" :
		       "packet with compressed_packets (50)");
	}

	{
		/* Hand-made records, each broken in one way. */
		static const struct {
			const char *what;
			const char *b;
			size_t n;
		} cases[] = {
			{ "record tag not 0x0A", "\x12\x02\x50\x01", 4 },
			{ "record length past the end", "\x0a\x05\x50\x01", 4 },
			{ "record length varint truncated", "\x0a\x85", 2 },
			{ "11-byte varint", "\x0a\x0c\x40\xff\xff\xff\xff\xff"
			  "\xff\xff\xff\xff\xff\x01", 14 },
			{ "field number 0", "\x0a\x02\x00\x01", 4 },
			{ "group wire type", "\x0a\x02\x53\x00", 4 },
			{ "wire type 7", "\x0a\x02\x57\x00", 4 },
			{ "fixed64 truncated", "\x0a\x05\x41\x01\x02\x03\x04", 7 },
			{ "nested length past the packet",
			  "\x0a\x04\x0a\x10\x08\x01", 6 },
			{ "ftrace_events not a message", "\x0a\x02\x08\x01", 4 },
			{ "event with a broken field",
			  "\x0a\x06\x0a\x04\x12\x02\x08\x80", 8 },
			{ "sequence id not a varint", "\x0a\x02\x52\x00", 4 },
			{ "empty chunk", "", 0 },
		};

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			expect(chunk_check((const uint8_t *)cases[i].b,
					   cases[i].n),
			       FRAME_E_CHUNK, cases[i].what);
	}
}

/* ---- chunk_stamp, checked with protoc and Perfetto's schema ---- */

static char tmpdir[] = "/tmp/frame_test.XXXXXX";

/* Decode @len bytes as a perfetto.protos.Trace; malloc'd text or NULL. */
static char *decode(const char *schema, const uint8_t *b, size_t len)
{
	char path[128], cmd[1024];
	char *text = NULL;
	size_t cap = 0, n = 0, r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/in.pb", tmpdir);
	f = fopen(path, "wb");
	if (!f || fwrite(b, 1, len, f) != len) {
		if (f)
			fclose(f);
		return NULL;
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "protoc -I '%s' --decode=perfetto.protos.Trace perfetto_trace.proto < %s",
		 schema, path);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			cap += 65536;
			text = realloc(text, cap);
			if (!text)
				abort();
		}
		r = fread(text + n, 1, cap - n - 1, f);
		if (!r)
			break;
		n += r;
	}
	text[n] = 0;
	if (pclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static int count(const char *text, const char *needle)
{
	int n = 0;

	while ((text = strstr(text, needle))) {
		n++;
		text++;
	}
	return n;
}

/* Drop lines containing @a or @b, in place. */
static void drop_lines(char *text, const char *a, const char *b)
{
	char *in = text, *out = text, *nl;
	bool keep;
	size_t n;

	while (*in) {
		nl = strchr(in, '\n');
		if (nl)
			*nl = 0;
		keep = !strstr(in, a) && !strstr(in, b);
		n = strlen(in);
		if (nl)
			*nl = '\n', n++;
		if (keep) {
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	*out = 0;
}

static void test_stamp(void)
{
	const char *schema = getenv("PBTRACE_SCHEMA_DIR");
	uint8_t mem[4096], out[4096 + 64];
	char *before, *after;
	size_t len, need, size, j;
	long n;
	int guard_ok = 1, short_ok = 1;

	if (!schema || !*schema)
		schema = PBT_SCHEMA_DIR;
	len = make_chunk(mem, sizeof(mem));
	n = chunk_stamp(mem, len, 7, 70000, out, len + 2 * CHUNK_STAMP_GROWTH);
	tap(n > 0 && chunk_check(out, (size_t)n) == -FRAME_E_TRUSTED,
	    "stamped chunk (%ld bytes) carries machine_id, so a guest could not send it", n);

	before = decode(schema, mem, len);
	after = n > 0 ? decode(schema, out, (size_t)n) : NULL;
	tap(before && after, "protoc decodes original and stamped chunk with %s/perfetto_trace.proto",
	    schema);
	if (before && after) {
		tap(count(after, "machine_id: 7\n") == 2 &&
		    count(after, "trusted_packet_sequence_id: 70000\n") == 2 &&
		    !strstr(after, "trusted_packet_sequence_id: 257") &&
		    count(after, "packet {") == 2,
		    "both packets: machine_id 7, sequence id 70000, old id gone");
		drop_lines(before, "machine_id:", "trusted_packet_sequence_id:");
		drop_lines(after, "machine_id:", "trusted_packet_sequence_id:");
		tap(!strcmp(before, after) && strstr(after, "prev_comm: \"kworker/1:0\""),
		    "everything else decodes the same");
		if (strcmp(before, after))
			printf("# before:\n%s# after:\n%s", before, after);
	}
	free(before);
	free(after);

	/* Every output size short of what it needs: refused, no byte past. */
	need = (size_t)n;
	for (size = 0; size < need; size++) {
		memset(out, 0xee, sizeof(out));
		if (chunk_stamp(mem, len, 7, 70000, out, size) != -FRAME_E_LENGTH)
			short_ok = 0;
		for (j = size; j < sizeof(out); j++)
			if (out[j] != 0xee)
				guard_ok = 0;
	}
	tap(short_ok && guard_ok,
	    "output of every size below %zu: refused, nothing written past it", need);
	tap(chunk_stamp(mem, len, 0, 70000, out, sizeof(out)) == -FRAME_E_LENGTH,
	    "machine_id 0 (the host) refused");
	tap(chunk_stamp(mem, len - 1, 7, 70000, out, sizeof(out)) == -FRAME_E_CHUNK,
	    "truncated input refused");
}

/* ---- the host's packets for a relayed machine (relay_packets.h) ---- */

static const char expect_system_info[] =
	"packet {\n"
	"  trusted_packet_sequence_id: 65537\n"
	"  system_info {\n"
	"    utsname {\n"
	"      sysname: \"Linux\"\n"
	"      version: \"#1 SMP PREEMPT_DYNAMIC Debian 6.1.0\"\n"
	"      release: \"6.1.0-57-amd64\"\n"
	"      machine: \"x86_64\"\n"
	"    }\n"
	"    num_cpus: 4\n"
	"    system_ram_bytes: 2147483648\n"
	"    machine_name: \"guest1\"\n"
	"  }\n"
	"  machine_id: 3\n"
	"}\n";

static const char expect_clock_sync[] =
	"packet {\n"
	"  machine_id: 3\n"
	"  remote_clock_sync {\n"
	"    synced_clocks {\n"
	"      client_clocks {\n"
	"        clocks {\n"
	"          clock_id: 6\n"
	"          timestamp: 1000\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 3\n"
	"          timestamp: 2000\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 1\n"
	"          timestamp: 1700000000000000000\n"
	"        }\n"
	"      }\n"
	"      host_clocks {\n"
	"        clocks {\n"
	"          clock_id: 6\n"
	"          timestamp: 5050\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 3\n"
	"          timestamp: 6050\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 1\n"
	"          timestamp: 1700000000000010050\n"
	"        }\n"
	"      }\n"
	"    }\n"
	"    synced_clocks {\n"
	"      client_clocks {\n"
	"        clocks {\n"
	"          clock_id: 6\n"
	"          timestamp: 1300\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 3\n"
	"          timestamp: 2300\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 1\n"
	"          timestamp: 1700000000000000300\n"
	"        }\n"
	"      }\n"
	"      host_clocks {\n"
	"        clocks {\n"
	"          clock_id: 6\n"
	"          timestamp: 5350\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 3\n"
	"          timestamp: 6350\n"
	"        }\n"
	"        clocks {\n"
	"          clock_id: 1\n"
	"          timestamp: 1700000000000010350\n"
	"        }\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"}\n";

/* Every size short of @need: 0 back and nothing written past the size. */
static int bounded(size_t need, size_t (*make)(void *, size_t))
{
	uint8_t out[1024];
	size_t size, j;

	for (size = 0; size < need; size++) {
		memset(out, 0xee, sizeof(out));
		if (make(out, size))
			return 0;
		for (j = size; j < sizeof(out); j++)
			if (out[j] != 0xee)
				return 0;
	}
	return 1;
}

static size_t make_system_info(void *buf, size_t len)
{
	struct frame h = sample(FRAME_HELLO, 0);

	return relay_system_info(buf, len, 3, 65537, &h.hello);
}

static size_t make_clock_sync(void *buf, size_t len)
{
	static const uint64_t t1[] = { 1000, 2000, 1700000000000000000ULL };
	static const uint64_t t2[] = { 5000, 6000, 1700000000000010000ULL };
	static const uint64_t t3[] = { 5100, 6100, 1700000000000010100ULL };
	static const uint64_t t4[] = { 1300, 2300, 1700000000000000300ULL };

	return relay_clock_sync(buf, len, 3, 0, t1, t2, t3, t4);
}

static void test_relay_packets(const char *schema)
{
	uint8_t buf[1024];
	char *text;
	size_t n;

	n = make_system_info(buf, sizeof(buf));
	text = n ? decode(schema, buf, n) : NULL;
	tap(text && !strcmp(text, expect_system_info),
	    "SystemInfo from a HELLO decodes with Perfetto's schema as expected (%zu bytes)", n);
	if (text && strcmp(text, expect_system_info))
		printf("# got:\n%s", text);
	free(text);
	tap(n && bounded(n, make_system_info),
	    "SystemInfo: every buffer size below %zu refused, nothing written past it", n);

	n = make_clock_sync(buf, sizeof(buf));
	text = n ? decode(schema, buf, n) : NULL;
	tap(text && !strcmp(text, expect_clock_sync),
	    "RemoteClockSync of one ping round: client t1/host midpoint m, client t4/host m + (t4 - t1) (%zu bytes)", n);
	if (text && strcmp(text, expect_clock_sync))
		printf("# got:\n%s", text);
	free(text);
	tap(n && bounded(n, make_clock_sync),
	    "RemoteClockSync: every buffer size below %zu refused, nothing written past it", n);
}

int main(void)
{
	printf("TAP version 13\n");
	chunk_len = make_chunk(chunk_mem, sizeof(chunk_mem));
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_roundtrip();
	test_truncation();
	test_refusals();
	test_chunk_check();
	test_stamp();
	{
		const char *schema = getenv("PBTRACE_SCHEMA_DIR");

		test_relay_packets(schema && *schema ? schema : PBT_SCHEMA_DIR);
	}
	{
		char path[160];

		snprintf(path, sizeof(path), "%s/in.pb", tmpdir);
		unlink(path);
		rmdir(tmpdir);
	}
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
