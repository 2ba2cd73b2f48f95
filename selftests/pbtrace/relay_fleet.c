// SPDX-License-Identifier: GPL-2.0
/*
 * A fleet of relays in one process: N guests speaking protocol v2
 * (docs/relay-protocol.md) to one host's endpoint, for fleet_test.sh and
 * tools/bench/fleet. Each relay connects over TCP from a loopback address
 * of its own (127.100.x.y, bound before the connect) with a key of its
 * own, or over vsock; says HELLO, proves its key, pings, and on CONTROL
 * start records what a real guest recorded: the event chunks of a .pftrace
 * that pbtrace wrote (REC), each sent as one CHUNK with its CPU and a
 * per-CPU sequence number, its timestamps moved to now (every later pass
 * past the one before, as tools/bench/tracegen does). CONTROL stop gets a
 * STOPPED with the events it sent. Every byte of a chunk but the
 * timestamps is the kernel's.
 *
 * Relay i (FIRST <= i < FIRST + COUNT) is named PREFIX<i>, its hint is i
 * (and its boot), its key KEYHEX (56 hex digits) then i as 8 hex digits:
 * relay_many's rule, so one machines file serves both; KEYHEX of 64 digits
 * is one key for all (relay_key).
 *
 *   relay_fleet [options] PORT PREFIX FIRST COUNT KEYHEX REC
 *
 *   -j JOBS     at most JOBS relays at once (default all); with -q the
 *               next starts when one is done
 *   -q          a relay that sent its passes says STOPPED and GOODBYE and
 *               is done (else it stays, pinging, until CONTROL stop)
 *   -l PASSES   passes through REC per session (default 1, 0: until stop)
 *   -r RATE     chunks per second per relay (default: as recorded, each
 *               chunk when its last event is due; 0: as fast as the host
 *               takes them, a flood)
 *   -c SECS     cut each connection SECS after its session started and
 *               reconnect (same boot: the host sees a gap)
 *   -b SECS     reboot SECS after the session started: reconnect with a
 *               new hint (a new boot of the same machine)
 *   -S AT:SECS  stall AT s into the session for SECS: no read, no write
 *   -V CID      vsock to CID (no key, no tags) instead of TCP loopback
 *   -t SECS     give up after SECS in all (default: until all are done,
 *               or SIGTERM / SIGINT)
 *   -p          a line per relay at the end
 *   -o FILE     write the chunks of one pass, their timestamps moved by
 *               1 s, as a trace into FILE and exit: what a relay sends,
 *               for protoc or trace_processor to read (no host needed)
 *
 * At the end (and on SIGUSR1) a line of totals:
 *   fleet relays N done D connects C refused R cut X reboots B
 *         sessions S chunks K bytes Y events E stopped T errors Z
 * chunks counts CHUNK frames written whole to the socket. Exit 0 if
 * nothing failed (a refused connect is retried, not a failure; -t
 * expiring with relays not done is).
 *
 * One thread, epoll, non-blocking sockets; proofs and tags with OpenSSL's
 * HMAC-SHA256, not the kernel's, so the host's checks are judged by an
 * implementation of their own. Frames are written by hand (relay_wire.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>


#include "pbread.h"
#include "relay_auth.h"
#include "relay_wire.h"

enum {
	HELLO = 1, WELCOME, AUTH, CONTROL, CHUNK, PING, PONG, GOODBYE, STOPPED
};
enum { CTL_START = 1, CTL_STOP, CTL_FLUSH };

#define HDR		16
#define TAG		16
#define RX_MAX		(HDR + 4096 + 16 + TAG)	/* CONTROL is the largest */
#define BURST		16		/* pings at a start, as the module */
#define TS_WIDTH	8		/* bytes of a moved timestamp: 2^56 ns */
#define MAX_CPUS	256
#define WAIT_NS		30000000000ull	/* a host owes a frame this long */

/* ---- the recording ---- */

struct patch {
	uint32_t off;		/* of a TS_WIDTH-byte varint in the record */
	uint64_t ts;		/* its value as recorded */
};

struct rec {
	uint8_t *b;		/* one Trace.packet record: 0x0a len packet */
	size_t len;
	uint32_t cpu, events;
	uint64_t last;		/* its last event's timestamp */
	struct patch *ts;
	size_t nts;
};

struct out {
	uint8_t *p;
	size_t len, cap;
	struct patch *ts;
	size_t nts, tscap;
};

static struct rec *recs;
static size_t nrecs;
static uint64_t span_lo = UINT64_MAX, span_hi;
static uint32_t rec_cpus;

static void die(const char *what)
{
	fprintf(stderr, "relay_fleet: %s\n", what);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static void put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2 + 256;
		o->p = xrealloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

static size_t varint(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	return n;
}

static void put_varint(struct out *o, uint64_t v)
{
	uint8_t b[10];

	put(o, b, varint(b, v));
}

/* A varint of exactly TS_WIDTH bytes (padded), as the kernel pads lengths. */
static void fixed_varint(uint8_t *b, uint64_t v)
{
	int i;

	for (i = 0; i < TS_WIDTH - 1; i++, v >>= 7)
		b[i] = (uint8_t)(v & 0x7f) | 0x80;
	b[i] = (uint8_t)v;
}

static void seen(uint64_t ts)
{
	if (ts < span_lo)
		span_lo = ts;
	if (ts > span_hi)
		span_hi = ts;
}

/* A timestamp the sender moves: its place noted. */
static void put_ts(struct out *o, uint64_t ts)
{
	uint8_t b[TS_WIDTH];

	if (ts >> (7 * TS_WIDTH))
		die("a timestamp beyond 2^56 ns in the recording");
	if (o->nts == o->tscap) {
		o->tscap = o->tscap ? 2 * o->tscap : 16;
		o->ts = xrealloc(o->ts, o->tscap * sizeof(*o->ts));
	}
	o->ts[o->nts].off = (uint32_t)o->len;
	o->ts[o->nts++].ts = ts;
	fixed_varint(b, ts);
	put(o, b, sizeof(b));
}

static void put_tag(struct out *o, uint32_t num, uint8_t wire)
{
	put_varint(o, (uint64_t)num << 3 | wire);
}

/* Field @num holding @m, whose timestamps' places move along. */
static void put_msg(struct out *o, uint32_t num, struct out *m)
{
	size_t i, base;

	put_tag(o, num, PBR_LEN);
	put_varint(o, m->len);
	base = o->len;
	put(o, m->p, m->len);
	for (i = 0; i < m->nts; i++) {
		if (o->nts == o->tscap) {
			o->tscap = o->tscap ? 2 * o->tscap : 16;
			o->ts = xrealloc(o->ts, o->tscap * sizeof(*o->ts));
		}
		o->ts[o->nts].off = (uint32_t)(base + m->ts[i].off);
		o->ts[o->nts++].ts = m->ts[i].ts;
	}
	free(m->p);
	free(m->ts);
	memset(m, 0, sizeof(*m));
}

static void put_field(struct out *o, const struct pbr_field *f)
{
	put(o, f->at, (size_t)(f->body_end - f->at));
}

static void next(struct pbr *r, struct pbr_field *f)
{
	if (!pbr_field_any(r, f))
		die("the recording is not a valid trace");
}

enum {
	TP_FTRACE_EVENTS = 1, TP_TRUSTED_UID = 3, TP_TIMESTAMP = 8,
	TP_SYSTEM_INFO = 45, TP_COMPRESSED = 50, TP_TRUSTED_PID = 79,
	TP_MACHINE_ID = 98, TP_CLOCK_SYNC = 107,
	B_CPU = 1, B_EVENT = 2, B_COMPACT = 4, B_FTRACE_TS = 6, B_BOOT_TS = 7,
	B_LAST_READ_TS = 9, B_PREV_END_TS = 10,
	FE_TIMESTAMP = 1,
	CS_SWITCH_TS = 1, CS_WAKING_TS = 7,
};

static uint32_t events_of_rec, cpu_of_rec;
static uint64_t last_of_rec;

static void note_event(uint64_t ts)
{
	seen(ts);
	events_of_rec++;
	if (ts > last_of_rec)
		last_of_rec = ts;
}

static void event(struct out *o, const uint8_t *p, const uint8_t *end)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;

	while (pbr_more(&r)) {
		next(&r, &f);
		if (f.num == FE_TIMESTAMP && f.wire == PBR_VARINT) {
			note_event(f.v);
			put_tag(o, f.num, PBR_VARINT);
			put_ts(o, f.v);
		} else {
			put_field(o, &f);
		}
	}
}

/* CompactSched: the first of each timestamp column is absolute. */
static void compact(struct out *o, const uint8_t *p, const uint8_t *end)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;
	const uint8_t *q, *at;
	uint64_t v, ts;

	while (pbr_more(&r)) {
		next(&r, &f);
		if ((f.num != CS_SWITCH_TS && f.num != CS_WAKING_TS) ||
		    f.wire != PBR_LEN || f.body == f.body_end) {
			put_field(o, &f);
			continue;
		}
		struct out col = { 0 };

		q = f.body;
		if (!pbr_varint_at(&q, f.body_end, &v))
			die("a compact_sched column of the recording is not valid");
		put_ts(&col, v);
		for (ts = v, note_event(ts); q < f.body_end; note_event(ts)) {
			at = q;
			if (!pbr_varint_at(&q, f.body_end, &v))
				die("a compact_sched column of the recording is not valid");
			ts += v;
			put(&col, at, (size_t)(q - at));
		}
		put_msg(o, f.num, &col);
	}
}

static void bundle(struct out *o, const uint8_t *p, const uint8_t *end)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;
	struct out m = { 0 };

	while (pbr_more(&r)) {
		next(&r, &f);
		switch (f.num) {
		case B_CPU:
			cpu_of_rec = (uint32_t)f.v;
			put_field(o, &f);
			break;
		case B_EVENT:
			event(&m, f.body, f.body_end);
			put_msg(o, f.num, &m);
			break;
		case B_COMPACT:
			compact(&m, f.body, f.body_end);
			put_msg(o, f.num, &m);
			break;
		case B_FTRACE_TS:
		case B_BOOT_TS:
		case B_LAST_READ_TS:
		case B_PREV_END_TS:
			if (f.wire == PBR_VARINT && f.v) {
				put_tag(o, f.num, PBR_VARINT);
				put_ts(o, f.v);
				break;
			}
			/* fall through */
		default:
			put_field(o, &f);
			break;
		}
	}
}

/*
 * A TracePacket of the recording as a guest's chunk record: its event
 * bundle with every timestamp widened to a patchable varint; the fields
 * only a host writes (trusted uid and pid, machine_id) left out, as they
 * are not the guest's. false: not an event chunk (traced's own packets).
 */
static bool load_packet(const uint8_t *p, const uint8_t *end)
{
	struct pbr r = pbr_init(p, end);
	struct pbr_field f;
	struct out pkt = { 0 }, m = { 0 }, o = { 0 };
	bool chunk = false;
	struct rec *rc;

	while (pbr_more(&r)) {
		next(&r, &f);
		switch (f.num) {
		case TP_SYSTEM_INFO:
		case TP_COMPRESSED:
		case TP_CLOCK_SYNC:
			free(pkt.p);
			free(pkt.ts);
			return false;
		case TP_TRUSTED_UID:
		case TP_TRUSTED_PID:
		case TP_MACHINE_ID:
			break;
		case TP_FTRACE_EVENTS:
			if (f.wire != PBR_LEN)
				die("ftrace_events is not a message in the recording");
			chunk = true;
			bundle(&m, f.body, f.body_end);
			put_msg(&pkt, f.num, &m);
			break;
		case TP_TIMESTAMP:
			if (f.wire == PBR_VARINT) {
				put_tag(&pkt, f.num, PBR_VARINT);
				put_ts(&pkt, f.v);
				break;
			}
			/* fall through */
		default:
			put_field(&pkt, &f);
			break;
		}
	}
	if (!chunk || !events_of_rec) {
		free(pkt.p);
		free(pkt.ts);
		return false;
	}
	put_msg(&o, 1, &pkt);		/* Trace.packet */
	if (o.len > 262144)
		die("a chunk of the recording is larger than a CHUNK takes");
	if (cpu_of_rec >= MAX_CPUS)
		die("the recording has a CPU beyond 255");
	recs = xrealloc(recs, (nrecs + 1) * sizeof(*recs));
	rc = &recs[nrecs++];
	rc->b = o.p;
	rc->len = o.len;
	rc->ts = o.ts;
	rc->nts = o.nts;
	rc->cpu = cpu_of_rec;
	rc->events = events_of_rec;
	rc->last = last_of_rec;
	if (cpu_of_rec + 1 > rec_cpus)
		rec_cpus = cpu_of_rec + 1;
	return true;
}

static void load(const char *path)
{
	const uint8_t *p, *end;
	uint8_t *buf;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "relay_fleet: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	buf = xrealloc(NULL, (size_t)n);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		die("cannot read the recording");
	fclose(f);
	for (p = buf, end = buf + n; p < end;) {
		struct pbr r = pbr_init(p, end);
		uint64_t tag, len;

		if (!pbr_varint(&r, &tag) || tag != 0x0a ||
		    !pbr_varint(&r, &len) || len > (uint64_t)(end - r.p))
			die("the recording is not a trace (or is cut short)");
		events_of_rec = cpu_of_rec = 0;
		last_of_rec = 0;
		load_packet(r.p, r.p + len);
		p = r.p + len;
	}
	free(buf);
	if (!nrecs)
		die("the recording has no event chunks");
}

/* ---- clocks and HMAC ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now(void)
{
	return clock_ns(CLOCK_BOOTTIME);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* BOOTTIME, MONOTONIC, REALTIME: the protocol's order. */
static void clocks(uint8_t *p)
{
	put64(p, clock_ns(CLOCK_BOOTTIME));
	put64(p + 8, clock_ns(CLOCK_MONOTONIC));
	put64(p + 16, clock_ns(CLOCK_REALTIME));
}

/* ---- a relay ---- */

enum state { IDLE, CONNECTING, HELLO_SENT, UP, CLOSING, DONE };

struct relay {
	unsigned int i;
	enum state st;
	int fd;
	char name[80];
	uint8_t key[32], tx_key[32], rx_key[32];
	bool tagged;			/* TCP after AUTH */
	uint32_t tx_seq, rx_seq;
	uint8_t hello[512];
	size_t hello_len;
	uint8_t rx[RX_MAX];
	size_t rx_len;
	uint8_t *tx;
	size_t tx_len, tx_off, tx_cap;
	size_t chunk_end;		/* tx offset past the chunk queued */
	uint32_t chunk_events, chunk_bytes;	/* its counts, once it is out */
	uint32_t machine_id, boot;
	uint64_t wake;			/* IDLE: reconnect at; UP: owed by */
	uint64_t backoff;
	/* pings */
	uint32_t ping_id, outstanding, pong_id;
	uint8_t t4[24];
	uint64_t ping_ns, next_ping;
	unsigned int burst;		/* pongs still due in the start burst */
	/* the session */
	uint32_t sid;
	bool streaming, passes_done, quitting;
	uint64_t started, t0, sent_in_session, stall_end;
	bool stalled_once;
	size_t pos;
	uint32_t pass;
	uint32_t seq[MAX_CPUS];
	uint64_t s_events;
	/* totals */
	uint64_t chunks, bytes, events, sessions, stopped, connects;
};

static unsigned int port, first, count, jobs, passes = 1, vsock_cid;
static const char *prefix, *key_hex;
static double rate = -1, cut_secs, reboot_secs, stall_at, stall_secs;
static bool quit_when_done, per_relay;
static struct relay *relays;
static int ep;
static unsigned int active, next_start, done_count;
static uint64_t connects, refused, cuts, reboots, errors;
static volatile sig_atomic_t stop_now, dump_now;
static struct utsname uts;

static int relay_key(struct relay *r)
{
	return relay_fleet_key(key_hex, r->i, r->key);
}

static uint8_t *tx_room(struct relay *r, size_t n)
{
	if (r->tx_off) {		/* what is sent makes room */
		memmove(r->tx, r->tx + r->tx_off, r->tx_len - r->tx_off);
		r->tx_len -= r->tx_off;
		r->chunk_end = r->chunk_end > r->tx_off ? r->chunk_end - r->tx_off : 0;
		r->tx_off = 0;
	}
	if (r->tx_len + n > r->tx_cap) {
		r->tx_cap = r->tx_len + n + 4096;
		r->tx = xrealloc(r->tx, r->tx_cap);
	}
	return r->tx + r->tx_len;
}

/* Queue the frame built at tx_room(): @len payload bytes, tagged if due. */
static void queue(struct relay *r, uint8_t type, size_t len)
{
	uint8_t *b = r->tx + r->tx_len, mac[32];

	header(b, type, (uint32_t)len, r->tx_seq++);
	if (r->tagged) {
		b[6] = 1;
		hmac(r->tx_key, b, HDR + len, mac);
		memcpy(b + HDR + len, mac, TAG);
		len += TAG;
	}
	r->tx_len += HDR + len;
}

static void send_ping(struct relay *r)
{
	uint8_t *b = tx_room(r, HDR + 56 + TAG) + HDR;

	memset(b, 0, 56);
	if (!++r->ping_id)		/* ids are non-zero */
		r->ping_id = 1;
	put32(b, r->ping_id);
	put32(b + 4, r->pong_id);
	clocks(b + 8);
	if (r->pong_id)
		memcpy(b + 32, r->t4, 24);
	queue(r, PING, 56);
	r->outstanding = r->ping_id;
	r->next_ping = now() + r->ping_ns;
	r->wake = now() + WAIT_NS;
}

static void send_stopped(struct relay *r)
{
	uint8_t *b = tx_room(r, HDR + 24 + TAG) + HDR;

	memset(b, 0, 24);
	put32(b, r->sid);
	put64(b + 8, r->s_events);
	queue(r, STOPPED, 24);
	r->stopped++;
}

static void send_goodbye(struct relay *r)
{
	uint8_t *b = tx_room(r, HDR + 4 + TAG) + HDR;

	put32(b, 0);
	queue(r, GOODBYE, 4);
}

/* Recording's chunk @c of pass @pass, timestamps moved by @shift. */
static void send_chunk(struct relay *r, const struct rec *c, uint64_t shift)
{
	uint8_t *b = tx_room(r, HDR + 8 + c->len + TAG) + HDR;
	size_t k;

	put32(b, c->cpu);
	put32(b + 4, r->seq[c->cpu]++);
	memcpy(b + 8, c->b, c->len);
	for (k = 0; k < c->nts; k++)
		fixed_varint(b + 8 + c->ts[k].off, c->ts[k].ts + shift);
	queue(r, CHUNK, 8 + c->len);
	r->chunk_end = r->tx_len;
	r->chunk_events = c->events;
	r->chunk_bytes = c->len;
	r->s_events += c->events;
}

static void hello(struct relay *r)
{
	uint8_t *p = r->hello + HDR;
	unsigned int j;

	memset(p, 0, 64);
	put32(p, r->i);				/* hint: relay and boot */
	put32(p + 4, 0x666c6565);		/* "flee" */
	put32(p + 8, r->boot);
	for (j = 0; j < 32; j++)		/* nonce */
		p[16 + j] = (uint8_t)random();
	put32(p + 48, rec_cpus);
	put64(p + 56, 1ull << 30);		/* RAM */
	p += 64;
	p += str(p, r->name);
	p += str(p, uts.sysname);
	p += str(p, uts.release);
	p += str(p, "#1 relay_fleet");
	p += str(p, uts.machine);
	r->hello_len = (size_t)(p - r->hello);
	header(r->hello, HELLO, (uint32_t)(r->hello_len - HDR), 0);
}

static void close_relay(struct relay *r, bool again)
{
	if (r->fd >= 0) {
		epoll_ctl(ep, EPOLL_CTL_DEL, r->fd, NULL);
		close(r->fd);
	}
	r->fd = -1;
	r->tx_len = r->tx_off = r->chunk_end = 0;
	r->rx_len = 0;
	r->streaming = false;
	r->sid = 0;
	if (!again) {
		r->st = DONE;
		active--;
		done_count++;
		return;
	}
	r->st = IDLE;
	/* As the kernel's relay: half the backoff and a random part of the rest. */
	r->wake = now() + r->backoff / 2 +
		  (uint64_t)random() % (r->backoff / 2 + 1);
	r->backoff = r->backoff * 2 > 5000000000ull ? 5000000000ull
						    : r->backoff * 2;
}

static int open_socket(struct relay *r)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_vm vm = { .svm_family = AF_VSOCK, .svm_cid = vsock_cid,
				  .svm_port = port };
	unsigned int a = r->i - 1;
	int fd, one = 1;

	fd = socket(vsock_cid ? AF_VSOCK : AF_INET,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (vsock_cid) {
		if (connect(fd, (struct sockaddr *)&vm, sizeof(vm)) &&
		    errno != EINPROGRESS)
			goto fail;
		return fd;
	}
	/* 127.100.x.y, y in 2..251: an address of its own per relay. */
	src.sin_addr.s_addr = htonl(0x7f640000u | (a / 250) << 8 | (a % 250 + 2));
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)))
		goto fail;
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) &&
	    errno != EINPROGRESS)
		goto fail;
	return fd;
fail:
	fprintf(stderr, "relay_fleet: %s: connect: %s\n", r->name, strerror(errno));
	close(fd);
	return -1;
}

static void start_relay(struct relay *r)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET,
				  .data.ptr = r };

	r->fd = open_socket(r);
	if (r->fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, r->fd, &ev)) {
		errors++;
		close_relay(r, false);
		return;
	}
	r->st = CONNECTING;
	r->tx_seq = r->rx_seq = 0;
	r->tagged = false;
	r->ping_id = r->outstanding = r->pong_id = 0;
	r->burst = 0;
	r->wake = now() + WAIT_NS;
	r->connects++;
	connects++;
}

/* WELCOME: the host's proof checked, AUTH sent, the first PING. */
static int welcome(struct relay *r, const uint8_t *w)
{
	const uint8_t *rn = r->hello + HDR + 16, *hn = w + 8;
	uint8_t want[32], mac[32], kb[124], *b;

	r->machine_id = get32(w);
	r->ping_ns = (uint64_t)get32(w + 4) * 1000000ull;
	if (!vsock_cid) {
		proof(r->key, "pbtrace-relay-v1 host", rn, hn, NULL, 0, want);
		if (memcmp(want, w + 40, 32)) {
			fprintf(stderr, "relay_fleet: %s: the host's proof is wrong\n",
				r->name);
			return -1;
		}
		proof(r->key, "pbtrace-relay-v1 relay", hn, rn, r->hello + HDR,
		      r->hello_len - HDR, mac);
		b = tx_room(r, HDR + 32) + HDR;
		memcpy(b, mac, 32);
		queue(r, AUTH, 32);
		memcpy(kb + 28, hn, 32);
		memcpy(kb + 60, rn, 32);
		memcpy(kb + 92, mac, 32);
		memcpy(kb, "pbtrace-relay-v2 relay->host", 28);
		hmac(r->key, kb, 124, r->tx_key);
		memcpy(kb, "pbtrace-relay-v2 host->relay", 28);
		hmac(r->key, kb, 124, r->rx_key);
		r->tagged = true;
	}
	r->st = UP;
	r->backoff = 100000000ull;
	send_ping(r);
	return 0;
}

static void control(struct relay *r, const uint8_t *p)
{
	uint32_t op = get32(p), sid = get32(p + 4);

	if (op == CTL_START && (!r->sid || r->sid != sid)) {
		r->sid = sid;
		r->sessions++;
		r->streaming = false;
		r->passes_done = false;
		r->burst = BURST;
		r->pos = 0;
		r->pass = 0;
		r->s_events = 0;
		r->sent_in_session = 0;
		r->stalled_once = false;
		r->started = now();
		memset(r->seq, 0, sizeof(r->seq));
		if (!r->outstanding)
			send_ping(r);
	} else if (op == CTL_STOP && sid == r->sid) {
		r->streaming = false;
		r->burst = 0;
		send_stopped(r);
		r->sid = 0;
	}
}

/* One whole host frame at r->rx: -1 closes the connection. */
static int host_frame(struct relay *r, const uint8_t *f, uint32_t len)
{
	const uint8_t *p = f + HDR;

	if (get32(f + 12) != r->rx_seq++)
		return -1;
	if (r->tagged && f[5] != WELCOME) {
		uint8_t mac[32];

		if (!(f[6] & 1))
			return -1;
		hmac(r->rx_key, f, HDR + len, mac);
		if (memcmp(mac, f + HDR + len, TAG))
			return -1;
	}
	r->wake = r->outstanding ? now() + WAIT_NS : 0;
	switch (f[5]) {
	case WELCOME:
		return r->st == HELLO_SENT && len == 72 ? welcome(r, p) : -1;
	case CONTROL:
		control(r, p);
		return 0;
	case PONG:
		if (get32(p) != r->outstanding)
			return -1;
		clocks(r->t4);
		r->pong_id = r->outstanding;
		r->outstanding = 0;
		r->wake = 0;
		/* A burst PING goes at once and reports this PONG. */
		if (r->burst) {
			if (!--r->burst && r->sid) {
				r->streaming = true;
				r->t0 = now();
			}
			send_ping(r);
		}
		return 0;
	case GOODBYE:
		return -1;
	}
	return -1;
}

static int do_read(struct relay *r)
{
	ssize_t n;
	uint32_t len, whole;
	size_t off;

	for (;;) {
		n = recv(r->fd, r->rx + r->rx_len, sizeof(r->rx) - r->rx_len, 0);
		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		if (r->st == CLOSING)	/* read to the host's EOF, unparsed */
			continue;
		r->rx_len += (size_t)n;
		for (off = 0; r->rx_len - off >= HDR; off += whole) {
			len = get32(r->rx + off + 8);
			whole = HDR + len + (r->rx[off + 6] & 1 ? TAG : 0);
			if (memcmp(r->rx + off, "PBTR", 4) || whole > RX_MAX)
				return -1;
			if (r->rx_len - off < whole)
				break;
			if (host_frame(r, r->rx + off, len))
				return -1;
		}
		memmove(r->rx, r->rx + off, r->rx_len - off);
		r->rx_len -= off;
	}
}

static int do_write(struct relay *r)
{
	ssize_t n;

	while (r->tx_off < r->tx_len) {
		n = send(r->fd, r->tx + r->tx_off, r->tx_len - r->tx_off,
			 MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		r->tx_off += (size_t)n;
		if (r->chunk_end && r->tx_off >= r->chunk_end) {
			r->chunks++;	/* written whole */
			r->events += r->chunk_events;
			r->bytes += r->chunk_bytes;
			r->chunk_end = 0;
		}
	}
	return 0;
}

/* Whether the next chunk is due: paced as recorded, at -r, or at once. */
static bool chunk_due(struct relay *r, uint64_t t)
{
	const struct rec *c = &recs[r->pos];
	uint64_t span = span_hi - span_lo + 1000000;

	if (rate == 0)
		return true;
	if (rate > 0)
		return t >= r->t0 + (uint64_t)(r->sent_in_session * 1e9 / rate);
	return t >= r->t0 + r->pass * span + (c->last - span_lo);
}

static void stream(struct relay *r, uint64_t t)
{
	uint64_t span = span_hi - span_lo + 1000000;
	uint64_t shift;

	if (!r->streaming || r->passes_done || r->chunk_end || !chunk_due(r, t))
		return;
	/* The recording's first event lands at t0, each pass after the last. */
	shift = r->t0 + r->pass * span - span_lo;
	send_chunk(r, &recs[r->pos], shift);
	r->sent_in_session++;
	if (++r->pos < nrecs)
		return;
	r->pos = 0;
	if (++r->pass < passes || !passes)
		return;
	r->passes_done = true;
	if (quit_when_done) {
		send_stopped(r);
		send_goodbye(r);
		r->quitting = true;
	}
}

/* Timers, then as much as the socket takes. */
static void tick(struct relay *r, uint64_t t)
{
	double since = r->started ? (t - r->started) / 1e9 : 0;

	if (r->st == IDLE) {
		if (t >= r->wake)
			start_relay(r);
		return;
	}
	if (r->st == CLOSING) {
		if (t > r->wake) {
			fprintf(stderr, "relay_fleet: %s: the host did not close in 30 s\n",
				r->name);
			errors++;
			close_relay(r, false);
		}
		return;
	}
	if (r->st != UP)
		goto write;
	if (r->stall_end) {
		if (t < r->stall_end)
			return;
		r->stall_end = 0;
		if (do_read(r)) {	/* what came meanwhile */
			close_relay(r, !r->quitting);
			return;
		}
	}
	if (r->sid && stall_secs && !r->stalled_once && since >= stall_at) {
		r->stalled_once = true;
		r->stall_end = t + (uint64_t)(stall_secs * 1e9);
		return;
	}
	if (r->sid && reboot_secs && since >= reboot_secs) {
		reboots++;
		r->boot++;
		r->started = 0;
		close_relay(r, true);
		return;
	}
	if (r->sid && cut_secs && since >= cut_secs) {
		cuts++;
		r->started = 0;
		close_relay(r, true);
		return;
	}
	if (!r->outstanding && !r->burst && t >= r->next_ping)
		send_ping(r);
	stream(r, t);
write:
	if (r->wake && t > r->wake) {
		fprintf(stderr, "relay_fleet: %s: the host owes a frame for 30 s, reconnecting\n",
			r->name);
		errors++;
		close_relay(r, true);
		return;
	}
	if (r->st != CONNECTING && do_write(r)) {
		close_relay(r, !r->quitting);
		return;
	}
	/*
	 * Done: half-close and read until the host closes too. A close()
	 * with unread bytes (a PONG, a CONTROL) would send a reset, and
	 * the host's kernel would drop what it has not read yet.
	 */
	if (r->quitting && r->st == UP && r->tx_off == r->tx_len) {
		shutdown(r->fd, SHUT_WR);
		r->st = CLOSING;
		r->wake = t + WAIT_NS;
		if (do_read(r))
			close_relay(r, false);
	}
}

static void on_event(struct relay *r, uint32_t events)
{
	int err = 0;
	socklen_t n = sizeof(err);
	uint8_t *b;

	if (r->st == CONNECTING) {
		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &err, &n) || err) {
			refused++;
			close_relay(r, true);
			return;
		}
		hello(r);
		b = tx_room(r, r->hello_len);
		memcpy(b, r->hello, r->hello_len);
		r->tx_len += r->hello_len;
		r->tx_seq = 1;
		r->st = HELLO_SENT;
	}
	if (r->stall_end)
		return;
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && do_read(r)) {
		if (r->st == HELLO_SENT)
			refused++;
		close_relay(r, !r->quitting);
	}
}

/* -o: one pass's chunk records as a trace, each timestamp 1 s later. */
static void write_pass(const char *path)
{
	FILE *f = fopen(path, "wb");
	uint8_t *b = NULL;
	size_t i, k;

	if (!f)
		die(strerror(errno));
	for (i = 0; i < nrecs; i++) {
		b = xrealloc(b, recs[i].len);
		memcpy(b, recs[i].b, recs[i].len);
		for (k = 0; k < recs[i].nts; k++)
			fixed_varint(b + recs[i].ts[k].off,
				     recs[i].ts[k].ts + 1000000000ull);
		if (fwrite(b, 1, recs[i].len, f) != recs[i].len)
			die(strerror(errno));
	}
	if (fclose(f))
		die(strerror(errno));
	free(b);
}

static void report(void)
{
	uint64_t c = 0, b = 0, e = 0, s = 0, st = 0;
	unsigned int i;

	for (i = 0; i < count; i++) {
		c += relays[i].chunks;
		b += relays[i].bytes;
		e += relays[i].events;
		s += relays[i].sessions;
		st += relays[i].stopped;
	}
	printf("fleet relays %u done %u connects %llu refused %llu cut %llu reboots %llu sessions %llu chunks %llu bytes %llu events %llu stopped %llu errors %llu\n",
	       count, done_count, (unsigned long long)connects,
	       (unsigned long long)refused, (unsigned long long)cuts,
	       (unsigned long long)reboots, (unsigned long long)s,
	       (unsigned long long)c, (unsigned long long)b,
	       (unsigned long long)e, (unsigned long long)st,
	       (unsigned long long)errors);
	fflush(stdout);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_now = 1;
	else
		stop_now = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: relay_fleet [-j JOBS] [-q] [-l PASSES] [-r RATE] [-c SECS] [-b SECS] [-S AT:SECS] [-V CID] [-t SECS] [-p] PORT PREFIX FIRST COUNT KEYHEX REC.pftrace\n");
	exit(2);
}

/*
 * One socket per relay at once: the default soft limit of 1,024 open files
 * would stop a fleet of 1,000 at its last relays with EMFILE, counted as
 * failed connects. Raise the soft limit, and the hard one where root may.
 */
static void raise_nofile(unsigned int n)
{
	rlim_t need = (rlim_t)n + 64;	/* epoll, REC, stdio, the margin */
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit(RLIMIT_NOFILE)");
	if (rl.rlim_cur >= need)
		return;
	rl.rlim_cur = need;
	if (rl.rlim_max < need)
		rl.rlim_max = need;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, "relay_fleet: %u relays at once need %llu open files, more than RLIMIT_NOFILE allows: raise it (ulimit -n) or lower -j\n",
			n, (unsigned long long)need);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct epoll_event evs[256];
	double total = 0;
	uint64_t t, end = 0;
	unsigned int i;
	const char *dump = NULL;
	int c, n;

	while ((c = getopt(argc, argv, "j:ql:r:c:b:S:V:t:po:")) != -1) {
		switch (c) {
		case 'j':
			jobs = (unsigned int)atoi(optarg);
			break;
		case 'q':
			quit_when_done = true;
			break;
		case 'l':
			passes = (unsigned int)atoi(optarg);
			break;
		case 'r':
			rate = atof(optarg);
			break;
		case 'c':
			cut_secs = atof(optarg);
			break;
		case 'b':
			reboot_secs = atof(optarg);
			break;
		case 'S':
			if (sscanf(optarg, "%lf:%lf", &stall_at, &stall_secs) != 2)
				usage();
			break;
		case 'V':
			vsock_cid = (unsigned int)atoi(optarg);
			break;
		case 't':
			total = atof(optarg);
			break;
		case 'p':
			per_relay = true;
			break;
		case 'o':
			dump = optarg;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 6)
		usage();
	port = (unsigned int)atoi(argv[optind]);
	prefix = argv[optind + 1];
	first = (unsigned int)atoi(argv[optind + 2]);
	count = (unsigned int)atoi(argv[optind + 3]);
	key_hex = argv[optind + 4];
	if (!port || !first || !count || count > 100000 ||
	    (!passes && quit_when_done))
		usage();
	if (!jobs || jobs > count)
		jobs = count;
	raise_nofile(jobs);
	load(argv[optind + 5]);
	uname(&uts);
	fprintf(stderr, "relay_fleet: %s: %zu chunks on %u CPUs, %.3f s of events\n",
		argv[optind + 5], nrecs, rec_cpus, (span_hi - span_lo) / 1e9);
	if (dump) {
		write_pass(dump);
		return 0;
	}
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGUSR1, on_signal);
	ep = epoll_create1(EPOLL_CLOEXEC);
	relays = calloc(count, sizeof(*relays));
	if (ep < 0 || !relays)
		die("epoll or memory");
	for (i = 0; i < count; i++) {
		struct relay *r = &relays[i];

		r->i = first + i;
		r->fd = -1;
		r->backoff = 100000000ull;
		snprintf(r->name, sizeof(r->name), "%s%u", prefix, r->i);
		if (!vsock_cid && relay_key(r))
			die("KEYHEX is not 56 or 64 hex digits");
	}
	if (total)
		end = now() + (uint64_t)(total * 1e9);
	while (!stop_now && done_count < count) {
		t = now();
		if (end && t >= end)
			break;
		/* Start as many as the window allows, a few per round. */
		for (n = 0; n < 8 && active < jobs && next_start < count; n++) {
			active++;
			start_relay(&relays[next_start++]);
		}
		n = epoll_wait(ep, evs, 256, 2);
		for (c = 0; c < n; c++)
			on_event(evs[c].data.ptr, evs[c].events);
		t = now();
		for (i = 0; i < next_start; i++)
			if (relays[i].st != DONE)
				tick(&relays[i], t);
		if (dump_now) {
			dump_now = 0;
			report();
		}
	}
	if (per_relay)
		for (i = 0; i < count; i++)
			printf("%s machine %u connects %llu sessions %llu chunks %llu events %llu stopped %llu\n",
			       relays[i].name, relays[i].machine_id,
			       (unsigned long long)relays[i].connects,
			       (unsigned long long)relays[i].sessions,
			       (unsigned long long)relays[i].chunks,
			       (unsigned long long)relays[i].events,
			       (unsigned long long)relays[i].stopped);
	report();
	return errors || (end && done_count < count && quit_when_done) ? 1 : 0;
}
