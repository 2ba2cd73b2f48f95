// SPDX-License-Identifier: GPL-2.0
/*
 * Relay frames: encoder, defensive parser, and the check and stamping of
 * the trace bytes a guest sends. See frame.h and docs/relay-protocol.md.
 *
 * Everything on the wire is little endian and read byte by byte, so the
 * code is the same on any host and never makes an unaligned access.
 */
#include "frame.h"

/* TracePacket fields the parser knows about (Perfetto's numbers). */
#define TP_FTRACE_EVENTS	1
#define TP_TRUSTED_UID		3
#define TP_SEQUENCE_ID		10	/* trusted_packet_sequence_id */
#define TP_SYSTEM_INFO		45
#define TP_COMPRESSED		50
#define TP_TRUSTED_PID		79
#define TP_MACHINE_ID		98
#define TP_REMOTE_CLOCK_SYNC	107
#define BUNDLE_EVENT		2	/* FtraceEventBundle.event */
#define TRACE_PACKET_TAG	0x0a	/* Trace.packet: field 1, LEN */

#define WT_VARINT	0
#define WT_I64		1
#define WT_LEN		2
#define WT_I32		5

/* Fixed parts of the payloads, in bytes. */
#define HELLO_FIXED	(FRAME_HINT_LEN + FRAME_NONCE_LEN + 16)
#define HELLO_MAX	(HELLO_FIXED + 5 * (1 + FRAME_STR_MAX))
#define WELCOME_LEN	(8 + FRAME_NONCE_LEN + FRAME_MAC_LEN)
#define AUTH_LEN	FRAME_MAC_LEN
#define CONTROL_FIXED	16
#define CLOCKS_LEN	(8 * FRAME_NR_CLOCKS)
#define PING_LEN	(8 + 2 * CLOCKS_LEN)
#define PONG_LEN	(8 + 2 * CLOCKS_LEN)
#define GOODBYE_LEN	4
#define STOPPED_LEN	24

enum parser_state {
	ST_HELLO,	/* host: nothing yet, HELLO must come */
	ST_AUTH,	/* host: HELLO seen on TCP, AUTH must come */
	ST_WELCOME,	/* relay: WELCOME must come */
	ST_READY,
	ST_CLOSED,	/* GOODBYE seen */
};

static const char * const frame_errors[FRAME_E_NR] = {
	[0]			= "no error",
	[FRAME_E_MAGIC]		= "bad magic (not a pbtrace relay frame)",
	[FRAME_E_VERSION]	= "unsupported protocol version",
	[FRAME_E_TYPE]		= "unknown frame type",
	[FRAME_E_FLAGS]		= "reserved header flags set",
	[FRAME_E_LENGTH]	= "payload length invalid for the frame type",
	[FRAME_E_SEQ]		= "frame sequence number out of order (replay or loss)",
	[FRAME_E_DIRECTION]	= "frame type not allowed from this peer",
	[FRAME_E_ORDER]		= "frame out of protocol order",
	[FRAME_E_PONG]		= "PONG answers no outstanding PING",
	[FRAME_E_PAYLOAD]	= "malformed payload",
	[FRAME_E_CHUNK]		= "malformed trace packets in CHUNK",
	[FRAME_E_TRUSTED]	= "guest wrote a field only the host may write",
	[FRAME_E_CLOSED]	= "frame after GOODBYE",
	[FRAME_E_TAG]		= "frame tag wrong (changed, injected or not the peer's)",
};

const char *frame_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= FRAME_E_NR)
		return "unknown error";
	return frame_errors[err];
}

/* ---- little-endian access ---- */

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void put_clocks(uint8_t *p, const uint64_t *c)
{
	int i;

	for (i = 0; i < FRAME_NR_CLOCKS; i++)
		put_u64(p + 8 * i, c[i]);
}

static void get_clocks(uint64_t *c, const uint8_t *p)
{
	int i;

	for (i = 0; i < FRAME_NR_CLOCKS; i++)
		c[i] = get_u64(p + 8 * i);
}

/* ---- what each type may carry and who may send it ---- */

struct type_rule {
	uint32_t min, max;	/* payload length */
	uint8_t from;		/* role whose parser accepts it, or 2: both */
};

#define FROM_BOTH 2

static const struct type_rule type_rules[FRAME_NR_TYPES] = {
	[FRAME_HELLO]	= { HELLO_FIXED + 5, HELLO_MAX, FRAME_ROLE_HOST },
	[FRAME_WELCOME]	= { WELCOME_LEN, WELCOME_LEN, FRAME_ROLE_RELAY },
	[FRAME_AUTH]	= { AUTH_LEN, AUTH_LEN, FRAME_ROLE_HOST },
	[FRAME_CONTROL]	= { CONTROL_FIXED, CONTROL_FIXED + FRAME_EVENTS_MAX,
			    FRAME_ROLE_RELAY },
	[FRAME_CHUNK]	= { FRAME_CHUNK_HDR + 2, FRAME_MAX_PAYLOAD,
			    FRAME_ROLE_HOST },
	[FRAME_PING]	= { PING_LEN, PING_LEN, FRAME_ROLE_HOST },
	[FRAME_PONG]	= { PONG_LEN, PONG_LEN, FRAME_ROLE_RELAY },
	[FRAME_GOODBYE]	= { GOODBYE_LEN, GOODBYE_LEN, FROM_BOTH },
	[FRAME_STOPPED]	= { STOPPED_LEN, STOPPED_LEN, FRAME_ROLE_HOST },
};

/* ---- encoder ---- */

static uint8_t *put_str(uint8_t *p, const struct frame_str *s)
{
	*p++ = (uint8_t)s->len;
	if (s->len)
		memcpy(p, s->p, s->len);
	return p + s->len;
}

static size_t hello_len(const struct frame_hello *h)
{
	const struct frame_str *s[] = { &h->name, &h->sysname, &h->release,
					&h->version, &h->machine };
	size_t n = HELLO_FIXED;
	unsigned int i;

	for (i = 0; i < 5; i++) {
		if (s[i]->len > FRAME_STR_MAX)
			return 0;
		n += 1 + s[i]->len;
	}
	return n;
}

static size_t payload_len(const struct frame *f)
{
	switch (f->type) {
	case FRAME_HELLO:
		return hello_len(&f->hello);
	case FRAME_WELCOME:
		return WELCOME_LEN;
	case FRAME_AUTH:
		return AUTH_LEN;
	case FRAME_CONTROL:
		if (f->control.events.len > FRAME_EVENTS_MAX)
			return 0;
		return CONTROL_FIXED + f->control.events.len;
	case FRAME_CHUNK:
		if (!f->chunk.len || f->chunk.len > FRAME_CHUNK_MAX)
			return 0;
		return FRAME_CHUNK_HDR + f->chunk.len;
	case FRAME_PING:
		return PING_LEN;
	case FRAME_PONG:
		return PONG_LEN;
	case FRAME_GOODBYE:
		return GOODBYE_LEN;
	case FRAME_STOPPED:
		return STOPPED_LEN;
	}
	return 0;
}

static void encode_hello(uint8_t *p, const struct frame_hello *h)
{
	memcpy(p, h->hint, FRAME_HINT_LEN);
	p += FRAME_HINT_LEN;
	memcpy(p, h->nonce, FRAME_NONCE_LEN);
	p += FRAME_NONCE_LEN;
	put_u32(p, h->num_cpus);
	put_u32(p + 4, 0);
	put_u64(p + 8, h->ram_bytes);
	p += 16;
	p = put_str(p, &h->name);
	p = put_str(p, &h->sysname);
	p = put_str(p, &h->release);
	p = put_str(p, &h->version);
	put_str(p, &h->machine);
}

static void encode_payload(uint8_t *p, const struct frame *f)
{
	switch (f->type) {
	case FRAME_HELLO:
		encode_hello(p, &f->hello);
		break;
	case FRAME_WELCOME:
		put_u32(p, f->welcome.machine_id);
		put_u32(p + 4, f->welcome.ping_period_ms);
		memcpy(p + 8, f->welcome.nonce, FRAME_NONCE_LEN);
		memcpy(p + 8 + FRAME_NONCE_LEN, f->welcome.mac, FRAME_MAC_LEN);
		break;
	case FRAME_AUTH:
		memcpy(p, f->auth.mac, FRAME_MAC_LEN);
		break;
	case FRAME_CONTROL:
		put_u32(p, f->control.op);
		put_u32(p + 4, f->control.session);
		put_u32(p + 8, f->control.size_kb);
		put_u32(p + 12, f->control.chunk_kb);
		if (f->control.events.len)
			memcpy(p + 16, f->control.events.p,
			       f->control.events.len);
		break;
	case FRAME_CHUNK:
		put_u32(p, f->chunk.cpu);
		put_u32(p + 4, f->chunk.seq);
		memcpy(p + 8, f->chunk.data, f->chunk.len);
		break;
	case FRAME_PING:
		put_u32(p, f->ping.id);
		put_u32(p + 4, f->ping.prev_id);
		put_clocks(p + 8, f->ping.send);
		put_clocks(p + 8 + CLOCKS_LEN, f->ping.prev_recv);
		break;
	case FRAME_PONG:
		put_u32(p, f->pong.id);
		put_u32(p + 4, 0);
		put_clocks(p + 8, f->pong.recv);
		put_clocks(p + 8 + CLOCKS_LEN, f->pong.reply);
		break;
	case FRAME_GOODBYE:
		put_u32(p, f->goodbye.reason);
		break;
	case FRAME_STOPPED:
		put_u32(p, f->stopped.session_id);
		put_u32(p + 4, 0);
		put_u64(p + 8, f->stopped.events_written);
		put_u64(p + 16, f->stopped.events_lost);
		break;
	}
}

void frame_encode_header(uint8_t *buf, uint8_t type, uint32_t len,
			 uint32_t seq)
{
	put_u32(buf, FRAME_MAGIC);
	buf[4] = FRAME_VERSION;
	buf[5] = type;
	buf[6] = 0;			/* flags */
	buf[7] = 0;
	put_u32(buf + 8, len);
	put_u32(buf + 12, seq);
}

void frame_set_tagged(uint8_t *hdr)
{
	hdr[6] = FRAME_F_TAG;
	hdr[7] = 0;
}

size_t frame_encode(uint8_t *buf, size_t size, const struct frame *f)
{
	size_t len;

	if (f->type == 0 || f->type >= FRAME_NR_TYPES)
		return 0;
	len = payload_len(f);
	if (!len || size < FRAME_HDR_LEN || size - FRAME_HDR_LEN < len)
		return 0;
	frame_encode_header(buf, f->type, (uint32_t)len, f->seq);
	encode_payload(buf + FRAME_HDR_LEN, f);
	return FRAME_HDR_LEN + len;
}

/* ---- parser: header and order ---- */

void frame_parser_init(struct frame_parser *ps, enum frame_role role,
		       bool tcp)
{
	memset(ps, 0, sizeof(*ps));
	ps->role = role;
	ps->need_auth = role == FRAME_ROLE_HOST && tcp;
	ps->tag_later = tcp;
	ps->state = role == FRAME_ROLE_HOST ? ST_HELLO : ST_WELCOME;
}

void frame_sent(struct frame_parser *ps, const struct frame *f)
{
	if (f->type == FRAME_CONTROL && f->control.op == FRAME_CTL_START)
		ps->started = true;
	else if (f->type == FRAME_PING)
		ps->ping_out = f->ping.id;
	else if (f->type == FRAME_PONG)
		ps->last_pong = f->pong.id;
}

/* Is @type the frame the protocol allows next, whatever its payload? */
static int check_order(const struct frame_parser *ps, uint8_t type)
{
	if (ps->state == ST_CLOSED)
		return -FRAME_E_CLOSED;
	if (type == FRAME_GOODBYE)
		return 0;
	switch (ps->state) {
	case ST_HELLO:
		return type == FRAME_HELLO ? 0 : -FRAME_E_ORDER;
	case ST_AUTH:
		return type == FRAME_AUTH ? 0 : -FRAME_E_ORDER;
	case ST_WELCOME:
		return type == FRAME_WELCOME ? 0 : -FRAME_E_ORDER;
	}
	/* ST_READY */
	if (type == FRAME_HELLO || type == FRAME_WELCOME || type == FRAME_AUTH)
		return -FRAME_E_ORDER;
	/* A guest speaks of sessions only once the host has started one. */
	if ((type == FRAME_CHUNK || type == FRAME_STOPPED) && !ps->started)
		return -FRAME_E_ORDER;
	if (type == FRAME_PONG && !ps->ping_out)
		return -FRAME_E_PONG;
	return 0;
}

/*
 * Check as much of the header as @len bytes hold, so garbage is refused at
 * its first byte and an oversized length before its payload is read.
 */
static int check_header(const struct frame_parser *ps, const uint8_t *buf,
			size_t len, uint32_t *plen)
{
	static const uint8_t magic[4] = { 'P', 'B', 'T', 'R' };
	const struct type_rule *rule;
	size_t i;
	uint8_t type;

	for (i = 0; i < 4 && i < len; i++)
		if (buf[i] != magic[i])
			return -FRAME_E_MAGIC;
	if (len > 4 && buf[4] != FRAME_VERSION)
		return -FRAME_E_VERSION;
	if (len < FRAME_HDR_LEN)
		return 0;
	type = buf[5];
	if (type == 0 || type >= FRAME_NR_TYPES)
		return -FRAME_E_TYPE;
	if (buf[6] != (ps->tagged ? FRAME_F_TAG : 0) || buf[7])
		return -FRAME_E_FLAGS;
	rule = &type_rules[type];
	if (rule->from != FROM_BOTH && rule->from != ps->role)
		return -FRAME_E_DIRECTION;
	*plen = get_u32(buf + 8);
	if (*plen < rule->min || *plen > rule->max)
		return -FRAME_E_LENGTH;
	if (get_u32(buf + 12) != ps->next_seq)
		return -FRAME_E_SEQ;
	return check_order(ps, type);
}

/* ---- parser: payloads ---- */

static bool printable(const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	return true;
}

/* One u8-length-prefixed printable string; advances *p. */
static int get_str(const uint8_t **p, const uint8_t *end,
		   struct frame_str *s)
{
	uint32_t n;

	if (*p >= end)
		return -FRAME_E_PAYLOAD;
	n = *(*p)++;
	if (n > FRAME_STR_MAX || (size_t)(end - *p) < n ||
	    !printable(*p, n))
		return -FRAME_E_PAYLOAD;
	s->p = (const char *)*p;
	s->len = n;
	*p += n;
	return 0;
}

static int parse_hello(const uint8_t *p, uint32_t len, struct frame_hello *h)
{
	const uint8_t *end = p + len;
	struct frame_str *s[] = { &h->name, &h->sysname, &h->release,
				  &h->version, &h->machine };
	unsigned int i;

	memcpy(h->hint, p, FRAME_HINT_LEN);
	p += FRAME_HINT_LEN;
	memcpy(h->nonce, p, FRAME_NONCE_LEN);
	p += FRAME_NONCE_LEN;
	h->num_cpus = get_u32(p);
	if (get_u32(p + 4))			/* reserved */
		return -FRAME_E_PAYLOAD;
	h->ram_bytes = get_u64(p + 8);
	p += 16;
	if (!h->num_cpus || h->num_cpus > FRAME_NR_CPUS_MAX)
		return -FRAME_E_PAYLOAD;
	for (i = 0; i < 5; i++)
		if (get_str(&p, end, s[i]))
			return -FRAME_E_PAYLOAD;
	/* sysname, release and machine name the machine: required */
	if (!h->sysname.len || !h->release.len || !h->machine.len)
		return -FRAME_E_PAYLOAD;
	return p == end ? 0 : -FRAME_E_PAYLOAD;
}

static bool event_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '/' || c == ',';
}

static int parse_control(const uint8_t *p, uint32_t len,
			 struct frame_control *c)
{
	uint32_t i;

	c->op = get_u32(p);
	c->session = get_u32(p + 4);
	c->size_kb = get_u32(p + 8);
	c->chunk_kb = get_u32(p + 12);
	c->events.p = (const char *)p + CONTROL_FIXED;
	c->events.len = len - CONTROL_FIXED;
	if (c->op < FRAME_CTL_START || c->op > FRAME_CTL_FLUSH)
		return -FRAME_E_PAYLOAD;
	for (i = 0; i < c->events.len; i++)
		if (!event_char((uint8_t)c->events.p[i]))
			return -FRAME_E_PAYLOAD;
	return 0;
}

static int parse_chunk(const struct frame_parser *ps, const uint8_t *p,
		       uint32_t len, struct frame_chunk *c)
{
	int n;

	c->cpu = get_u32(p);
	c->seq = get_u32(p + 4);
	c->data = p + FRAME_CHUNK_HDR;
	c->len = len - FRAME_CHUNK_HDR;
	if (c->cpu >= ps->num_cpus)
		return -FRAME_E_PAYLOAD;
	n = chunk_check(c->data, c->len);
	if (n < 0)
		return n;
	c->nr_packets = (uint32_t)n;
	return 0;
}

static int parse_payload(const struct frame_parser *ps, struct frame *f,
			 const uint8_t *p, uint32_t len)
{
	switch (f->type) {
	case FRAME_HELLO:
		return parse_hello(p, len, &f->hello);
	case FRAME_WELCOME:
		f->welcome.machine_id = get_u32(p);
		f->welcome.ping_period_ms = get_u32(p + 4);
		memcpy(f->welcome.nonce, p + 8, FRAME_NONCE_LEN);
		memcpy(f->welcome.mac, p + 8 + FRAME_NONCE_LEN, FRAME_MAC_LEN);
		return f->welcome.machine_id ? 0 : -FRAME_E_PAYLOAD;
	case FRAME_AUTH:
		memcpy(f->auth.mac, p, FRAME_MAC_LEN);
		return 0;
	case FRAME_CONTROL:
		return parse_control(p, len, &f->control);
	case FRAME_CHUNK:
		return parse_chunk(ps, p, len, &f->chunk);
	case FRAME_PING:
		f->ping.id = get_u32(p);
		f->ping.prev_id = get_u32(p + 4);
		get_clocks(f->ping.send, p + 8);
		get_clocks(f->ping.prev_recv, p + 8 + CLOCKS_LEN);
		if (!f->ping.id)
			return -FRAME_E_PAYLOAD;
		/* A report may only be about the last PONG we sent. */
		if (f->ping.prev_id && f->ping.prev_id != ps->last_pong)
			return -FRAME_E_PAYLOAD;
		return 0;
	case FRAME_PONG:
		f->pong.id = get_u32(p);
		get_clocks(f->pong.recv, p + 8);
		get_clocks(f->pong.reply, p + 8 + CLOCKS_LEN);
		if (get_u32(p + 4))
			return -FRAME_E_PAYLOAD;
		return f->pong.id == ps->ping_out ? 0 : -FRAME_E_PONG;
	case FRAME_GOODBYE:
		f->goodbye.reason = get_u32(p);
		return f->goodbye.reason < FRAME_E_NR ? 0 : -FRAME_E_PAYLOAD;
	case FRAME_STOPPED:
		f->stopped.session_id = get_u32(p);
		f->stopped.events_written = get_u64(p + 8);
		f->stopped.events_lost = get_u64(p + 16);
		return get_u32(p + 4) ? -FRAME_E_PAYLOAD : 0;	/* reserved */
	}
	return -FRAME_E_TYPE;
}

static void advance(struct frame_parser *ps, const struct frame *f)
{
	ps->next_seq++;
	switch (f->type) {
	case FRAME_HELLO:
		ps->num_cpus = f->hello.num_cpus;
		ps->state = ps->need_auth ? ST_AUTH : ST_READY;
		break;
	case FRAME_AUTH:
	case FRAME_WELCOME:
		ps->state = ST_READY;
		ps->tagged = ps->tag_later;
		break;
	case FRAME_PONG:
		ps->ping_out = 0;
		break;
	case FRAME_GOODBYE:
		ps->state = ST_CLOSED;
		break;
	}
}

int frame_parse(struct frame_parser *ps, const uint8_t *buf, size_t len,
		struct frame *out)
{
	uint32_t plen = 0, tag = ps->tagged ? FRAME_TAG_LEN : 0;
	int err;

	err = check_header(ps, buf, len, &plen);
	if (err < 0)
		return err;
	if (len < FRAME_HDR_LEN || len - FRAME_HDR_LEN < plen + tag)
		return 0;
	memset(out, 0, sizeof(*out));
	out->type = buf[5];
	out->seq = get_u32(buf + 12);
	err = parse_payload(ps, out, buf + FRAME_HDR_LEN, plen);
	if (err < 0)
		return err;
	advance(ps, out);
	return FRAME_HDR_LEN + (int)(plen + tag);
}

/* ---- trace bytes inside a CHUNK ---- */

/* Read a varint of at most 10 bytes; advances *p. */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;
	uint64_t x = 0;
	uint8_t b;

	while (*p < end) {
		b = *(*p)++;
		if (shift == 63 && b > 1)
			return -1;		/* more than 64 bits */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;				/* truncated */
}

struct field {
	uint32_t num;
	unsigned int wt;
	const uint8_t *start;		/* the tag */
	const uint8_t *body;		/* LEN: the bytes; else the value */
	uint64_t len;			/* LEN: byte count */
	const uint8_t *end;		/* one past the field */
};

/* Read one field of a message ending at @end; advances *p. */
static int next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
	uint64_t tag, v;

	f->start = *p;
	if (get_varint(p, end, &tag) || tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
		return -1;
	f->num = (uint32_t)(tag >> 3);
	f->wt = (unsigned int)(tag & 7);
	f->body = *p;
	switch (f->wt) {
	case WT_VARINT:
		if (get_varint(p, end, &v))
			return -1;
		break;
	case WT_I64:
		if (end - *p < 8)
			return -1;
		*p += 8;
		break;
	case WT_I32:
		if (end - *p < 4)
			return -1;
		*p += 4;
		break;
	case WT_LEN:
		if (get_varint(p, end, &f->len) ||
		    f->len > (uint64_t)(end - *p))
			return -1;
		f->body = *p;
		*p += f->len;
		break;
	default:			/* groups and invalid wire types */
		return -1;
	}
	f->end = *p;
	return 0;
}

/*
 * Check that @p..@end is a well-formed message. @depth > 0 also checks the
 * sub-messages pbtrace chunks carry (FtraceEventBundle.event) as messages.
 */
static int check_message(const uint8_t *p, const uint8_t *end, int depth)
{
	struct field f;

	while (p < end) {
		if (next_field(&p, end, &f))
			return -1;
		if (depth > 0 && f.num == BUNDLE_EVENT) {
			if (f.wt != WT_LEN ||
			    check_message(f.body, f.end, depth - 1))
				return -1;
		}
	}
	return 0;
}

static bool host_only(uint32_t num)
{
	return num == TP_MACHINE_ID || num == TP_TRUSTED_UID ||
	       num == TP_TRUSTED_PID || num == TP_SYSTEM_INFO ||
	       num == TP_REMOTE_CLOCK_SYNC || num == TP_COMPRESSED;
}

static int check_packet(const uint8_t *p, const uint8_t *end)
{
	struct field f;

	while (p < end) {
		if (next_field(&p, end, &f))
			return -FRAME_E_CHUNK;
		if (host_only(f.num))
			return -FRAME_E_TRUSTED;
		if (f.num == TP_SEQUENCE_ID && f.wt != WT_VARINT)
			return -FRAME_E_CHUNK;
		if (f.num == TP_FTRACE_EVENTS &&
		    (f.wt != WT_LEN || check_message(f.body, f.end, 1)))
			return -FRAME_E_CHUNK;
	}
	return 0;
}

/* Next `0x0A len packet` record; @body/@end bound the packet. */
static int next_record(const uint8_t **p, const uint8_t *end,
		       const uint8_t **body, const uint8_t **body_end)
{
	uint64_t n;

	if (*(*p)++ != TRACE_PACKET_TAG)
		return -1;
	if (get_varint(p, end, &n) || n > (uint64_t)(end - *p))
		return -1;
	*body = *p;
	*body_end = *p + n;
	*p += n;
	return 0;
}

int chunk_check(const uint8_t *data, size_t len)
{
	const uint8_t *p = data, *end = data + len, *body, *body_end;
	int n = 0, err;

	if (!len || len > FRAME_CHUNK_MAX)
		return -FRAME_E_CHUNK;
	while (p < end) {
		if (next_record(&p, end, &body, &body_end))
			return -FRAME_E_CHUNK;
		err = check_packet(body, body_end);
		if (err)
			return err;
		n++;
	}
	return n;
}

/* ---- stamping ---- */

static unsigned int varint_size(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Bytes of the packet that are its own sequence id fields, or -1. */
static long sequence_id_bytes(const uint8_t *p, const uint8_t *end)
{
	struct field f;
	long n = 0;

	while (p < end) {
		if (next_field(&p, end, &f))
			return -1;
		if (f.num == TP_SEQUENCE_ID)
			n += f.end - f.start;
	}
	return n;
}

/* Write one stamped record at @o (room checked); returns its end. */
static uint8_t *stamp_packet(uint8_t *o, const uint8_t *p, const uint8_t *end,
			     size_t body_len, uint32_t machine_id,
			     uint32_t seq_id)
{
	struct field f;

	*o++ = TRACE_PACKET_TAG;
	o = put_varint(o, body_len);
	o = put_varint(o, TP_SEQUENCE_ID << 3 | WT_VARINT);
	o = put_varint(o, seq_id);
	o = put_varint(o, TP_MACHINE_ID << 3 | WT_VARINT);
	o = put_varint(o, machine_id);
	while (p < end) {
		next_field(&p, end, &f);	/* checked by the caller */
		if (f.num == TP_SEQUENCE_ID)
			continue;
		memcpy(o, f.start, f.end - f.start);
		o += f.end - f.start;
	}
	return o;
}

long chunk_stamp(const uint8_t *data, size_t len, uint32_t machine_id,
		 uint32_t seq_id, uint8_t *out, size_t out_len)
{
	const uint8_t *p = data, *end = data + len, *body, *body_end;
	size_t added = varint_size(TP_SEQUENCE_ID << 3) + varint_size(seq_id) +
		       varint_size(TP_MACHINE_ID << 3) + varint_size(machine_id);
	uint8_t *o = out;
	size_t body_len;
	long seq_bytes;

	if (!machine_id)
		return -FRAME_E_LENGTH;
	while (p < end) {
		if (next_record(&p, end, &body, &body_end))
			return -FRAME_E_CHUNK;
		seq_bytes = sequence_id_bytes(body, body_end);
		if (seq_bytes < 0)
			return -FRAME_E_CHUNK;
		body_len = (size_t)(body_end - body) - seq_bytes + added;
		if ((size_t)(out + out_len - o) < 1 + varint_size(body_len) +
						   body_len)
			return -FRAME_E_LENGTH;
		o = stamp_packet(o, body, body_end, body_len, machine_id,
				 seq_id);
	}
	return o - out;
}
