/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The relay wire protocol (docs/relay-protocol.md): frames between a guest's
 * relay and the host's endpoint. Plain C with no kernel dependencies (see
 * pb_types.h), so the module, the unit tests and the fuzzer run the same
 * parser.
 *
 * The host trusts nothing a guest sends. frame_parse() checks every byte of
 * a frame (header, payload layout, the protocol's order, and for CHUNK the
 * Trace.packet records inside) before it hands the frame out; anything else
 * is an error with a reason, and the caller closes the connection.
 *
 * The parser keeps no copy of the bytes: the caller keeps a receive buffer
 * of FRAME_HDR_LEN + FRAME_MAX_PAYLOAD bytes, calls frame_parse() on what it
 * has, and on success drops the returned number of bytes from its front.
 * Pointers in the returned frame point into the caller's buffer.
 */
#ifndef _PBTRACE_FRAME_H
#define _PBTRACE_FRAME_H

#include "pb_types.h"

#define FRAME_MAGIC		0x52544250u	/* "PBTR" as read little endian */
#define FRAME_VERSION		2	/* 2: TCP frames carry a tag */
#define FRAME_HDR_LEN		16
#define FRAME_F_TAG		0x0001	/* header flags: a tag follows */
#define FRAME_TAG_LEN		16	/* HMAC-SHA256, first 16 bytes */

#define FRAME_HINT_LEN		16	/* machine-id hint */
#define FRAME_NONCE_LEN		32
#define FRAME_MAC_LEN		32	/* HMAC-SHA256 */
#define FRAME_STR_MAX		64	/* name and each utsname field */
#define FRAME_EVENTS_MAX	4096	/* CONTROL's event list */
#define FRAME_CHUNK_HDR		8	/* cpu, chunk sequence */
#define FRAME_CHUNK_MAX		(256 * 1024)	/* largest chunk_kb */
#define FRAME_MAX_PAYLOAD	(FRAME_CHUNK_HDR + FRAME_CHUNK_MAX)
#define FRAME_NR_CPUS_MAX	8192

/* Clocks in PING/PONG, in this order. */
enum frame_clock {
	FRAME_CLK_BOOTTIME,
	FRAME_CLK_MONOTONIC,
	FRAME_CLK_REALTIME,
	FRAME_NR_CLOCKS
};

enum frame_type {
	FRAME_HELLO = 1,	/* relay -> host, first frame, once */
	FRAME_WELCOME,		/* host -> relay, answers HELLO */
	FRAME_AUTH,		/* relay -> host, TCP only, after WELCOME */
	FRAME_CONTROL,		/* host -> relay: start/stop/flush */
	FRAME_CHUNK,		/* relay -> host: sealed trace bytes */
	FRAME_PING,		/* relay -> host: clock sync request */
	FRAME_PONG,		/* host -> relay: answers one PING */
	FRAME_GOODBYE,		/* either way, last frame */
	FRAME_STOPPED,		/* relay -> host: a session's last frame */
	FRAME_NR_TYPES
};

enum frame_control_op {
	FRAME_CTL_START = 1,
	FRAME_CTL_STOP,
	FRAME_CTL_FLUSH,
};

/*
 * Why a frame was refused. frame_parse() returns the negated value; callers
 * count connections closed per reason (an array of FRAME_E_NR counters).
 */
enum frame_error {
	FRAME_E_MAGIC = 1,	/* not a pbtrace frame: garbage */
	FRAME_E_VERSION,	/* a version this parser does not speak */
	FRAME_E_TYPE,		/* unknown type */
	FRAME_E_FLAGS,		/* reserved flag bits set */
	FRAME_E_LENGTH,		/* payload length wrong or too big for the type */
	FRAME_E_SEQ,		/* sequence number not the next one: replay */
	FRAME_E_DIRECTION,	/* a type this peer must never send */
	FRAME_E_ORDER,		/* HELLO not first, twice, CHUNK before start... */
	FRAME_E_PONG,		/* PONG that answers no outstanding PING */
	FRAME_E_PAYLOAD,	/* malformed payload fields */
	FRAME_E_CHUNK,		/* malformed Trace.packet records in a CHUNK */
	FRAME_E_TRUSTED,	/* guest wrote a field only the host may write */
	FRAME_E_CLOSED,		/* frame after GOODBYE */
	FRAME_E_TAG,		/* tag wrong: not the peer's frame (owner checks) */
	FRAME_E_NR
};

const char *frame_strerror(int err);	/* takes -FRAME_E_x or FRAME_E_x */

/* Strings are not NUL-terminated on the wire nor in a parsed frame. */
struct frame_str {
	const char *p;
	uint32_t len;
};

struct frame_hello {
	uint8_t hint[FRAME_HINT_LEN];	/* boot_id, else hash of uts + boot */
	uint8_t nonce[FRAME_NONCE_LEN];	/* relay's challenge (TCP) */
	uint32_t num_cpus;
	uint64_t ram_bytes;
	struct frame_str name, sysname, release, version, machine;
};

struct frame_welcome {
	uint32_t machine_id;		/* host's id for this guest, non-zero */
	uint32_t ping_period_ms;
	uint8_t nonce[FRAME_NONCE_LEN];	/* host's challenge (TCP) */
	uint8_t mac[FRAME_MAC_LEN];	/* host's proof (TCP), else zero */
};

struct frame_auth {
	uint8_t mac[FRAME_MAC_LEN];	/* relay's proof */
};

struct frame_control {
	uint32_t op;			/* enum frame_control_op */
	uint32_t session;		/* host's session id */
	uint32_t size_kb, chunk_kb;	/* per-CPU buffer the guest should use */
	struct frame_str events;	/* "group/name,group/name" */
};

struct frame_chunk {
	uint32_t cpu;
	uint32_t seq;			/* per-CPU chunk count on the guest */
	const uint8_t *data;		/* complete Trace.packet records */
	uint32_t len;
	uint32_t nr_packets;		/* set by frame_parse() */
};

struct frame_ping {
	uint32_t id;			/* non-zero, new for each PING */
	uint32_t prev_id;		/* PONG that prev_recv reports, or 0 */
	uint64_t send[FRAME_NR_CLOCKS];	/* relay clocks when sending */
	uint64_t prev_recv[FRAME_NR_CLOCKS]; /* relay clocks at PONG prev_id */
};

struct frame_pong {
	uint32_t id;			/* the PING this answers */
	uint64_t recv[FRAME_NR_CLOCKS];	/* host clocks at the PING */
	uint64_t reply[FRAME_NR_CLOCKS]; /* host clocks when replying */
};

struct frame_goodbye {
	uint32_t reason;		/* 0 normal, else an enum frame_error */
};

/*
 * The relay's last word on a host session: it stopped, flushed and sent
 * every chunk; these are its own buffer's counters for the host to record.
 */
struct frame_stopped {
	uint32_t session_id;		/* the host session CONTROL started */
	uint64_t events_written;	/* guest events committed to chunks */
	uint64_t events_lost;		/* guest lost_* counters summed */
};

struct frame {
	uint8_t type;			/* enum frame_type */
	uint32_t seq;			/* header sequence number */
	union {
		struct frame_hello hello;
		struct frame_welcome welcome;
		struct frame_auth auth;
		struct frame_control control;
		struct frame_chunk chunk;
		struct frame_ping ping;
		struct frame_pong pong;
		struct frame_goodbye goodbye;
		struct frame_stopped stopped;
	};
};

/*
 * Encode @f with header sequence number f->seq into @buf. Returns the
 * number of bytes written, or 0 if @f is not a valid frame or does not fit
 * (nothing useful is left in @buf then).
 */
size_t frame_encode(uint8_t *buf, size_t size, const struct frame *f);

/* Header only, for senders that write a CHUNK's data from where it lies. */
void frame_encode_header(uint8_t *buf, uint8_t type, uint32_t len,
			 uint32_t seq);

/* Which side's frames a parser reads. */
enum frame_role {
	FRAME_ROLE_HOST,	/* the endpoint: reads what a relay sends */
	FRAME_ROLE_RELAY,	/* the relay: reads what the host sends */
};

struct frame_parser {
	uint8_t role;		/* enum frame_role */
	uint8_t state;		/* private */
	bool need_auth;		/* host: relay must send AUTH (TCP) */
	bool tag_later;		/* TCP: tags after AUTH (host) or WELCOME */
	bool tagged;		/* every frame from the peer has a tag now */
	bool started;		/* host: we sent CONTROL start */
	uint32_t next_seq;	/* sequence number the peer must send next */
	uint32_t ping_out;	/* relay: PING awaiting its PONG, or 0 */
	uint32_t last_pong;	/* host: id of the last PONG we sent */
	uint32_t num_cpus;	/* host: from HELLO; bounds CHUNK's cpu */
};

/*
 * @tcp: the host needs AUTH after HELLO, and from then on (the relay:
 * after WELCOME) every frame of the peer must carry FRAME_F_TAG and
 * FRAME_TAG_LEN tag bytes after its payload. The parser checks the flag
 * and counts the bytes; the owner checks the tag itself (crypto).
 */
void frame_parser_init(struct frame_parser *ps, enum frame_role role,
		       bool tcp);

/* Mark an encoded frame's header as tagged (the tag follows its payload). */
void frame_set_tagged(uint8_t *hdr);

/*
 * Tell the parser about a frame we sent: CONTROL start allows CHUNKs and
 * STOPPED, a PING makes a PONG legal, a PONG makes a PING's report legal.
 */
void frame_sent(struct frame_parser *ps, const struct frame *f);

/*
 * Parse one frame from the front of @buf (@len bytes). Returns:
 *   > 0   a frame is in @out; that many bytes of @buf were used (with
 *         its tag, if tagged: its last FRAME_TAG_LEN bytes);
 *   0     not a whole frame yet: read more and call again with all of it;
 *   < 0   -FRAME_E_x: the peer is broken or hostile, close the connection.
 * Only a returned frame changes the parser's state.
 */
int frame_parse(struct frame_parser *ps, const uint8_t *buf, size_t len,
		struct frame *out);

/*
 * Check a CHUNK's data: a run of `0x0A len TracePacket` records, every
 * length within bounds, every field well formed, and no field that only the
 * host may write (machine_id, trusted_uid, trusted_pid, system_info,
 * remote_clock_sync, compressed_packets). Returns the number of packets, or
 * -FRAME_E_CHUNK / -FRAME_E_TRUSTED.
 */
int chunk_check(const uint8_t *data, size_t len);

/* Bytes stamping can add to one packet. */
#define CHUNK_STAMP_GROWTH	18

/*
 * Copy checked chunk @data into @out as the host writes it to the trace:
 * every packet's trusted_packet_sequence_id replaced by @seq_id, and
 * machine_id set to @machine_id (non-zero), each record re-prefixed with
 * its new length. @out needs len + CHUNK_STAMP_GROWTH per packet. Returns
 * the bytes written, or -FRAME_E_CHUNK if @data is malformed, or
 * -FRAME_E_LENGTH if @out is too small or @machine_id is 0.
 */
long chunk_stamp(const uint8_t *data, size_t len, uint32_t machine_id,
		 uint32_t seq_id, uint8_t *out, size_t out_len);

#endif /* _PBTRACE_FRAME_H */
