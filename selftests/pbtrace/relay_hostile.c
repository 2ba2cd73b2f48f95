// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile guest for the endpoint (kmod/relay/, the endpoint): connects over vsock
 * and sends garbage, oversized, truncated, replayed, out-of-order and
 * flooding traffic, one connection per case. For each it checks, against
 * the counters in /sys/module/pbtrace/parameters/endpoint_stats, that the
 * host counted the right reason and closed the connection; and that a
 * well-behaved PING flood is answered in full.
 *
 * Frames are written by hand from docs/relay-protocol.md, not with
 * kmod/core/frame.c, so the encoder's bugs cannot hide the parser's; over
 * TCP the HMAC-SHA256 proofs come from the openssl command, not from the
 * kernel's crypto API, so both sides' proofs are checked independently.
 *
 *   relay_hostile PORT               vsock (CID 1), prints TAP; with
 *                                    PBTRACE_RELAY_HINT (32 hex digits)
 *                                    set to the in-kernel relay's hint, it
 *                                    also tries to impersonate that relay
 *   relay_hostile tcp PORT KEYHEX    TCP on 127.0.0.1, the shared-key
 *                                    handshake: missing, wrong, replayed
 *                                    and right proofs
 *   relay_hostile silent PORT SECS   a dead host: listens on 127.0.0.1,
 *                                    accepts and reads, never answers
 *
 * Single connections for the identity tests (relay_identity_test.sh);
 * each prints what the host answered and exits 0 only if it was admitted:
 *
 *   relay_hostile join PORT NAME HINT      vsock: HELLO, WELCOME, GOODBYE;
 *                                          prints "welcome ID" (and on
 *                                          stderr the ms to WELCOME)
 *   relay_hostile tcpjoin PORT KEY NAME HINT   TCP: HELLO, AUTH with KEY,
 *                                          a PING answered, GOODBYE
 *   relay_hostile squat PORT NAME HINT SECS    TCP: HELLO (a replayed
 *                                          hint), then holds SECS without
 *                                          AUTH; prints "welcome ID"
 *   relay_hostile mitm PORT TO SECS   TCP man in the middle from
 *                                     127.0.0.1:PORT to :TO, for SECS:
 *                                     on the first connection it changes
 *                                     a byte of a relay frame after AUTH,
 *                                     on the second one of a host frame,
 *                                     then passes everything
 *
 * After AUTH every TCP frame carries a tag (docs/relay-protocol.md); the
 * tags here come from the openssl command too.
 *   relay_hostile stall PORT N [close]
 *                                    vsock: HELLO and N PINGs, then a
 *                                    byte of credit every 300 ms, so the
 *                                    host's sends trickle; until killed,
 *                                    or with close: TAP on whether the
 *                                    host gives up
 *   relay_hostile crowd PORT         vsock: one peer's many connections
 *                                    trickling HELLOs (TAP)
 *   relay_hostile crowd tcp PORT KEYHEX
 *                                    the same from 127.0.0.2, and a good
 *                                    relay from 127.0.0.1 meanwhile
 *   relay_hostile trickle PORT       vsock: welcomed, then a PING a byte
 *                                    a second (TAP: closed as idle)
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "genl.h"
#include "relay_wire.h"
#include "tap.h"

#define STATS "/sys/module/pbtrace/parameters/endpoint_stats"

static unsigned int port;
static int use_tcp;
static const char *key_hex;

/* A counter from endpoint_stats ("name value" lines), or -1. */
static long ep_stat(const char *name)
{
	char line[512], key[64];
	long v, found = -1;
	FILE *f = fopen(STATS, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", key, &v) == 2 && !strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

static int connect_ep(void)
{
	struct sockaddr_vm a = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_LOCAL,
		.svm_port = port,
	};
	struct sockaddr_in in = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(use_tcp ? AF_INET : AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0 || (use_tcp ? connect(fd, (struct sockaddr *)&in, sizeof(in)) :
			connect(fd, (struct sockaddr *)&a, sizeof(a)))) {
		perror("connect to the endpoint");
		exit(1);
	}
	return fd;
}

static void send_all(int fd, const void *b, size_t n)
{
	ssize_t r;

	while (n) {
		r = send(fd, b, n, MSG_NOSIGNAL);
		if (r <= 0)
			return;		/* the host may have closed: fine */
		b = (const char *)b + r;
		n -= (size_t)r;
	}
}

/* Read until the host closes; true if it does within 5 s. */
static int host_closes(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[4096];
	ssize_t r;

	for (;;) {
		if (poll(&p, 1, 5000) <= 0)
			return 0;
		r = recv(fd, buf, sizeof(buf), 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return 1;
		if (r < 0)
			return 0;
	}
}

/* ---- frames by hand: 16-byte little-endian header, then payload ---- */

/* HELLO (type 1) with hint byte @h; returns the frame's length. */
static size_t hello_named(uint8_t *b, uint8_t h, uint32_t seq,
			  const char *name)
{
	uint8_t *p = b + 16;

	memset(p, h, 16);		/* hint */
	memset(p + 16, h ^ 0xa5, 32);	/* nonce */
	put32(p + 48, 1);		/* num_cpus */
	put32(p + 52, 0);
	put32(p + 56, 1 << 20);		/* RAM, low word */
	put32(p + 60, 0);
	p += 64;
	p += str(p, name);
	p += str(p, "Linux");
	p += str(p, "6.1.0");
	p += str(p, "#1");
	p += str(p, "x86_64");
	header(b, 1, (uint32_t)(p - b - 16), seq);
	return (size_t)(p - b);
}

static size_t hello(uint8_t *b, uint8_t h, uint32_t seq)
{
	return hello_named(b, h, seq, "hostile");
}

/* HELLO named @name with the hint of 32 hex digits @hex; 0 if bad hex. */
static size_t hello_hint(uint8_t *b, const char *name, const char *hex)
{
	size_t n = hello_named(b, 0x42, 0, name);
	unsigned int i, v;

	if (strlen(hex) != 32)
		return 0;
	for (i = 0; i < 16; i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return 0;
		b[16 + i] = (uint8_t)v;
	}
	return n;
}

/*
 * The endpoint's machine named @name (its last, by id): from the machine
 * table, PBTRACE_CMD_GET_MACHINES. 0 if found.
 */
static int machine_named(const char *name, struct pbtrace_endpoint_machine *m)
{
	struct pbt_endpoint_machine_info *v;
	char err[256];
	struct pbt_nl *nl = pbt_nl_open(err, sizeof(err));
	size_t n = 0, i;
	int found = -1;

	if (!nl || pbt_nl_list_machines(nl, &v, &n)) {
		fprintf(stderr, "relay_hostile: the machine table: %s\n",
			nl ? pbt_nl_error(nl) : err);
		pbt_nl_close(nl);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name)) {
			*m = v[i].m;
			found = 0;
		}
	free(v);
	pbt_nl_close(nl);
	return found;
}

/* The pings of the machine named @name, or -1. */
static long machine_pings(const char *name)
{
	struct pbtrace_endpoint_machine m;

	return machine_named(name, &m) ? -1 : (long)m.pings;
}

/* PING (type 6): id, prev_id 0, zero clocks. */
static size_t ping(uint8_t *b, uint32_t id, uint32_t seq)
{
	header(b, 6, 56, seq);
	memset(b + 16, 0, 56);
	put32(b + 16, id);
	return 72;
}

/* One connection: send @n bytes, maybe shut down writing, expect close. */
static void refused(const char *what, const char *counter, const void *b,
		    size_t n, int shut)
{
	long before = ep_stat(counter), after;
	int fd = connect_ep(), closed;

	send_all(fd, b, n);
	if (shut)
		shutdown(fd, SHUT_WR);
	closed = host_closes(fd);
	close(fd);
	usleep(100000);
	after = ep_stat(counter);
	tap(closed && after == before + 1, "%s: host closed (%d), %s %ld -> %ld",
	    what, closed, counter, before, after);
}

static void flood(void)
{
	static uint8_t out[72 * 500 + 512], in[72 * 600];
	long bye = ep_stat("goodbyes");
	size_t n = 0, got = 0, want;
	uint32_t i, bad = 0;
	struct pollfd p;
	ssize_t r;
	int fd;

	n += hello_named(out, 0x5a, 0, "flood");
	for (i = 0; i < 500; i++)
		n += ping(out + n, i + 1, i + 1);
	header(out + n, 8, 4, 501);	/* GOODBYE, reason 0 */
	put32(out + n + 16, 0);
	n += 20;
	fd = connect_ep();
	send_all(fd, out, n);
	want = 88 + 500 * 72;		/* WELCOME, then 500 PONGs */
	p.fd = fd;
	p.events = POLLIN;
	while (got < want && poll(&p, 1, 5000) > 0) {
		r = recv(fd, in + got, sizeof(in) - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	for (i = 0; got >= want && i < 500; i++) {
		const uint8_t *f = in + 88 + 72 * i;

		if (f[5] != 7 || f[16] != (uint8_t)(i + 1) ||
		    f[17] != (uint8_t)((i + 1) >> 8))
			bad++;
	}
	close(fd);
	usleep(100000);
	/* Per machine: the relay's own pings go on meanwhile. */
	tap(got == want && !bad && machine_pings("flood") == 500 &&
	    ep_stat("goodbyes") == bye + 1,
	    "a flood of 500 PINGs: WELCOME and 500 PONGs in order (%zu of %zu bytes, %u wrong), then GOODBYE",
	    got, want, bad);
}

/* ---- TCP: the shared-key handshake ---- */

/* HMAC-SHA256(key, @n bytes) by the openssl command; 0 on success. */
static int openssl_hmac(const void *data, size_t n, const char *hexkey,
			uint8_t *mac)
{
	char path[] = "/tmp/relay_hostile.XXXXXX", cmd[512];
	FILE *f;
	int fd, ok;

	fd = mkstemp(path);
	if (fd < 0 || write(fd, data, n) != (ssize_t)n) {
		perror("relay_hostile: temp file");
		exit(1);
	}
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "openssl dgst -sha256 -mac HMAC -macopt hexkey:%s -binary %s",
		 hexkey, path);
	f = popen(cmd, "r");
	ok = f && fread(mac, 1, 32, f) == 32;
	if (f)
		ok &= pclose(f) == 0;
	unlink(path);
	return ok ? 0 : -1;
}

/* label || a || b || c (c may be empty), MACed with @hexkey. */
static int proof(const char *label, const uint8_t *a, const uint8_t *b,
		 const uint8_t *c, size_t c_len, const char *hexkey,
		 uint8_t *mac)
{
	uint8_t buf[1024];
	size_t n = strlen(label);

	memcpy(buf, label, n);
	memcpy(buf + n, a, 32);
	memcpy(buf + n + 32, b, 32);
	memcpy(buf + n + 64, c, c_len);
	return openssl_hmac(buf, n + 64 + c_len, hexkey, mac);
}

/*
 * The relay->host tag key, as hex for openssl: HMAC-SHA256(key, label ||
 * host nonce || relay nonce || relay proof).
 */
static int tag_key(const char *hexkey, const uint8_t *hn, const uint8_t *rn,
		   const uint8_t *relay_proof, char *hex)
{
	static const char label[] = "pbtrace-relay-v2 relay->host";
	uint8_t buf[256], dk[32];
	size_t n = strlen(label);
	int i;

	memcpy(buf, label, n);
	memcpy(buf + n, hn, 32);
	memcpy(buf + n + 32, rn, 32);
	memcpy(buf + n + 64, relay_proof, 32);
	if (openssl_hmac(buf, n + 96, hexkey, dk))
		return -1;
	for (i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", dk[i]);
	return 0;
}

/* Flag the @n-byte frame at @f tagged and append its tag; new length. */
static size_t tag_frame(uint8_t *f, size_t n, const char *tag_hex)
{
	uint8_t mac[32];

	f[6] = 1;
	if (openssl_hmac(f, n, tag_hex, mac))
		exit(1);
	memcpy(f + n, mac, 16);
	return n + 16;
}

/* Read exactly @n bytes within 5 s. */
static int recv_n(int fd, uint8_t *b, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;

	while (n) {
		if (poll(&p, 1, 5000) <= 0)
			return -1;
		r = recv(fd, b, n, 0);
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * HELLO, then WELCOME: check the host's proof with the real key. Returns
 * the connection, with the HELLO in @hello and the host nonce in @hn.
 */
static int handshake(uint8_t hint, uint8_t *hello_buf, size_t *hello_len,
		     uint8_t *hn, int *host_ok)
{
	uint8_t w[88], mac[32];
	int fd = connect_ep();

	*hello_len = hello(hello_buf, hint, 0);
	send_all(fd, hello_buf, *hello_len);
	*host_ok = 0;
	if (recv_n(fd, w, sizeof(w)) || w[5] != 2)
		return fd;
	memcpy(hn, w + 16 + 8, 32);
	*host_ok = !proof("pbtrace-relay-v1 host", hello_buf + 16 + 16, hn,
			  NULL, 0, key_hex, mac) &&
		   !memcmp(mac, w + 16 + 40, 32);
	return fd;
}

static size_t auth(uint8_t *b, const uint8_t *mac)
{
	header(b, 3, 32, 1);
	memcpy(b + 16, mac, 32);
	return 48;
}

static void tcp_tests(void)
{
	static const char wrong[] = "ffeeddccbbaa99887766554433221100";
	uint8_t h[512], hn[32], mac[32], good[32], b[256];
	char tk[65];
	long before, hellos;
	size_t hl, n;
	int fd, host_ok, closed;

	/* No AUTH: a PING right after HELLO. */
	before = ep_stat("bad_order");
	fd = handshake(0x71, h, &hl, hn, &host_ok);
	tap(host_ok, "WELCOME carries the host's proof (checked with openssl)");
	n = ping(b, 1, 1);
	send_all(fd, b, n);
	closed = host_closes(fd);
	close(fd);
	usleep(100000);
	tap(closed && ep_stat("bad_order") == before + 1,
	    "PING without AUTH: host closed (%d), bad_order +1", closed);

	/* AUTH made with the wrong key. */
	before = ep_stat("auth_failed");
	fd = handshake(0x72, h, &hl, hn, &host_ok);
	proof("pbtrace-relay-v1 relay", hn, h + 16 + 16, h + 16, hl - 16,
	      wrong, mac);
	send_all(fd, b, auth(b, mac));
	closed = host_closes(fd);
	close(fd);
	usleep(100000);
	tap(closed && ep_stat("auth_failed") == before + 1,
	    "AUTH with the wrong key: host closed (%d), auth_failed +1", closed);

	/* The right key: PING answered. */
	hellos = ep_stat("hellos");
	fd = handshake(0x73, h, &hl, hn, &host_ok);
	proof("pbtrace-relay-v1 relay", hn, h + 16 + 16, h + 16, hl - 16,
	      key_hex, good);
	tag_key(key_hex, hn, h + 32, good, tk);
	n = auth(b, good);
	n += tag_frame(b + n, ping(b + n, 9, 2), tk);
	send_all(fd, b, n);
	tap(!recv_n(fd, b, 72 + 16) && b[5] == 7 && b[6] == 1 && b[16] == 9 &&
	    ep_stat("hellos") == hellos + 1,
	    "AUTH with the right key (openssl's HMAC), a tagged PING: machine admitted, a tagged PONG");
	close(fd);
	usleep(100000);

	/* That proof again, on a new connection: new host nonce, refused. */
	before = ep_stat("auth_failed");
	fd = handshake(0x73, h, &hl, hn, &host_ok);
	send_all(fd, b, auth(b, good));
	closed = host_closes(fd);
	close(fd);
	usleep(100000);
	tap(closed && ep_stat("auth_failed") == before + 1,
	    "a replayed AUTH: host closed (%d), auth_failed +1", closed);
}

/* GOODBYE (type 8), reason 0, as sequence @seq. */
static size_t goodbye(uint8_t *b, uint32_t seq)
{
	header(b, 8, 4, seq);
	put32(b + 16, 0);
	return 20;
}

/* vsock: HELLO, expect WELCOME; the machine id or -1 if refused. */
static double now_s(void);

/* Says on stderr how long from the connect's start to the WELCOME. */
static int join(const char *name, const char *hint)
{
	uint8_t b[512], w[88];
	size_t n = hello_hint(b, name, hint);
	int fd, id = -1;
	double t0 = now_s();

	if (!n)
		return -2;
	fd = connect_ep();
	send_all(fd, b, n);
	if (!recv_n(fd, w, sizeof(w)) && w[5] == 2) {
		fprintf(stderr, "join: WELCOME %.0f ms after the connect began\n",
			(now_s() - t0) * 1e3);
		id = (int)get32(w + 16);
		send_all(fd, b, goodbye(b, 1));
		host_closes(fd);
	}
	close(fd);
	return id;
}

/*
 * TCP: HELLO, WELCOME (the host's proof checked with @hexkey), AUTH, a
 * PING: admitted if it is answered. Returns WELCOME's id or -1.
 */
static int tcpjoin(const char *hexkey, const char *name, const char *hint)
{
	uint8_t h[512], w[88], mac[32], b[256];
	size_t hl = hello_hint(h, name, hint), n;
	int fd, id = -1;
	char tk[65];

	if (!hl)
		return -2;
	fd = connect_ep();
	send_all(fd, h, hl);
	if (recv_n(fd, w, sizeof(w)) || w[5] != 2)
		goto out;
	/* A relay would stop here; we go on so the host judges our AUTH. */
	if (proof("pbtrace-relay-v1 host", h + 32, w + 24, NULL, 0, hexkey,
		  mac) || memcmp(mac, w + 56, 32))
		printf("# the host's proof does not check with this key\n");
	proof("pbtrace-relay-v1 relay", w + 24, h + 32, h + 16, hl - 16,
	      hexkey, mac);
	tag_key(hexkey, w + 24, h + 32, mac, tk);
	n = auth(b, mac);
	n += tag_frame(b + n, ping(b + n, 7, 2), tk);
	send_all(fd, b, n);
	if (!recv_n(fd, b, 72 + 16) && b[5] == 7 && b[16] == 7) {
		id = (int)get32(w + 16);
		send_all(fd, b, tag_frame(b, goodbye(b, 3), tk));
		host_closes(fd);
	}
out:
	close(fd);
	return id;
}

/* TCP: HELLO and WELCOME, then nothing for @secs: a replayed hint. */
static int squat(const char *name, const char *hint, unsigned int secs)
{
	uint8_t b[512], w[88];
	size_t n = hello_hint(b, name, hint);
	int fd, id = -1;

	if (!n)
		return -2;
	fd = connect_ep();
	send_all(fd, b, n);
	if (!recv_n(fd, w, sizeof(w)) && w[5] == 2)
		id = (int)get32(w + 16);
	printf("welcome %d\n", id);
	fflush(stdout);
	sleep(secs);
	close(fd);
	return id;
}

static int one_conn(int argc, char **argv)
{
	int id = -3;

	if (argc < 5 || sscanf(argv[2], "%u", &port) != 1)
		return 2;
	if (!strcmp(argv[1], "join") && argc == 5) {
		id = join(argv[3], argv[4]);
	} else if (!strcmp(argv[1], "tcpjoin") && argc == 6) {
		use_tcp = 1;
		id = tcpjoin(argv[3], argv[4], argv[5]);
	} else if (!strcmp(argv[1], "squat") && argc == 6) {
		use_tcp = 1;
		return squat(argv[3], argv[4], (unsigned int)atoi(argv[5])) > 0 ?
		       0 : 1;
	}
	if (id == -3 || id == -2)
		return 2;
	if (id < 0)
		printf("refused\n");
	else
		printf("welcome %d\n", id);
	return id > 0 ? 0 : 1;
}

/* ---- a man in the middle ---- */

struct mitm_dir {
	int from, to;
	uint8_t buf[16 + 8 + 262144 + 16];
	size_t have;
	unsigned int frames;		/* whole frames passed on */
	unsigned int flip_at;		/* change frame number this, 0: none */
	const char *who;
};

/* Pass on every whole frame in @d, changing one byte of frame flip_at. */
static void mitm_frames(struct mitm_dir *d)
{
	size_t n;

	while (d->have >= 16) {
		n = 16 + get32(d->buf + 8) + (d->buf[6] & 1 ? 16 : 0);
		if (n > sizeof(d->buf)) {
			d->have = 0;	/* not ours to judge: drop it */
			return;
		}
		if (d->have < n)
			return;
		if (d->flip_at && d->frames == d->flip_at && n > 24) {
			d->buf[16 + 8] ^= 0x01;
			printf("# mitm: changed a byte of %s frame %u (type %u, tagged %d)\n",
			       d->who, d->frames, d->buf[5], d->buf[6] & 1);
			fflush(stdout);
		}
		send_all(d->to, d->buf, n);
		d->frames++;
		d->have -= n;
		memmove(d->buf, d->buf + n, d->have);
	}
}

/* Forward between a relay and the endpoint until either side closes. */
static void mitm_conn(int relay_fd, int host_fd, unsigned int nr)
{
	static struct mitm_dir up, down;
	struct pollfd p[2] = { { relay_fd, POLLIN, 0 }, { host_fd, POLLIN, 0 } };
	struct mitm_dir *d;
	ssize_t r;
	int i;

	memset(&up, 0, sizeof(up));
	memset(&down, 0, sizeof(down));
	up.from = down.to = relay_fd;
	up.to = down.from = host_fd;
	up.who = "a relay";
	down.who = "a host";
	/* Relay: HELLO 0, AUTH 1, PING 2, 3; host: WELCOME 0, PONG 1, 2. */
	up.flip_at = nr == 1 ? 3 : 0;
	down.flip_at = nr == 2 ? 2 : 0;
	for (;;) {
		if (poll(p, 2, -1) <= 0)
			return;
		for (i = 0; i < 2; i++) {
			if (!p[i].revents)
				continue;
			d = i ? &down : &up;
			r = recv(d->from, d->buf + d->have,
				 sizeof(d->buf) - d->have, 0);
			if (r <= 0)
				return;
			d->have += (size_t)r;
			mitm_frames(d);
		}
	}
}

static int mitm(unsigned int to, unsigned int secs)
{
	struct sockaddr_in in = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, a, b;
	unsigned int nr;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&in, sizeof(in)) || listen(fd, 4)) {
		perror("relay_hostile mitm: listen");
		return 1;
	}
	alarm(secs);
	for (nr = 1;; nr++) {
		a = accept(fd, NULL, NULL);
		if (a < 0)
			return 1;
		port = to;
		use_tcp = 1;
		b = connect_ep();
		printf("# mitm: connection %u\n", nr);
		fflush(stdout);
		mitm_conn(a, b, nr);
		close(a);
		close(b);
		port = ntohs(in.sin_port);
	}
}

/* ---- a peer that holds the host up ---- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * The guest that takes a byte a second: HELLO and @n PINGs, a receive
 * buffer of STALL_BUF bytes that it never reads, grown by one byte every 300 ms
 * (vsock sends a credit update for each). Each of the host's sends moves
 * a byte or three a second and never fails by itself. Runs until killed;
 * with @until_closed, until the host closes (TAP: it must within 40 s,
 * counting send_timeout).
 */
static int stall_fd;
/*
 * Not smaller: 6.12's vsock also counts each queued skb's overhead against
 * the buffer and resets a peer whose buffer cannot hold one.
 */
#define STALL_BUF	65536ULL
static unsigned long long stall_sz = STALL_BUF;

/* From the connect on: the host must never wait 1 s for a byte. */
static void *stall_grant(void *arg)
{
	(void)arg;
	for (;;) {
		usleep(300000);
		stall_sz++;
		setsockopt(stall_fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE,
			   &stall_sz, sizeof(stall_sz));
	}
	return NULL;
}

static int stall(unsigned int n, int until_closed)
{
	static uint8_t out[72 * 4000 + 512];
	struct sockaddr_vm a = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_LOCAL,
		.svm_port = port,
	};
	unsigned long long sz = STALL_BUF;
	long before = ep_stat("send_timeout");
	pthread_t grant;
	struct pollfd p = { .events = POLLRDHUP };
	double t0;
	size_t len, off = 0;
	int fd, closed = 0;
	unsigned int i;
	ssize_t r;

	if (n > 4000)
		n = 4000;
	fd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_MIN_SIZE, &sz, sizeof(sz)) ||
	    setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE, &sz, sizeof(sz)) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("relay_hostile stall: a vsock with a small buffer");
		return 1;
	}
	stall_fd = fd;
	pthread_create(&grant, NULL, stall_grant, NULL);
	len = hello_named(out, 0x5b, 0, "stall");
	for (i = 0; i < n; i++)
		len += ping(out + len, i + 1, i + 1);
	printf("# stall: sending HELLO and %u PINGs, granting a byte every 300 ms\n", n);
	fflush(stdout);
	p.fd = fd;
	t0 = now_s();
	while (!until_closed || now_s() - t0 < 40) {
		/* The host's credit is capped by our buffer too: feed it. */
		r = off < len ? send(fd, out + off, len - off,
				     MSG_DONTWAIT | MSG_NOSIGNAL) : 0;
		if (r > 0)
			off += (size_t)r;
		usleep(100000);
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
			closed = 1;
			break;
		}
	}
	if (!until_closed)
		return 0;
	usleep(200000);
	tap(closed && ep_stat("send_timeout") == before + 1,
	    "a guest that grants a byte every 300 ms: host closed (%d) after %.1f s, %llu bytes granted, %zu sent, send_timeout %ld -> %ld",
	    closed, now_s() - t0, stall_sz - STALL_BUF, off, before,
	    ep_stat("send_timeout"));
	close(fd);
	return nr_failed ? 1 : 0;
}

/*
 * A connection from @src (TCP; NULL: the default) to the endpoint, or -1
 * (exits instead if @must).
 */
static int connect_from(const char *src, int must)
{
	struct sockaddr_vm a = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_LOCAL,
		.svm_port = port,
	};
	struct sockaddr_in in = { .sin_family = AF_INET };
	int fd = socket(use_tcp ? AF_INET : AF_VSOCK, SOCK_STREAM, 0);

	if (fd >= 0 && use_tcp && src) {
		inet_pton(AF_INET, src, &in.sin_addr);
		if (bind(fd, (struct sockaddr *)&in, sizeof(in))) {
			perror("relay_hostile: bind the source address");
			exit(1);
		}
	}
	in.sin_port = htons(port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !(use_tcp ? connect(fd, (struct sockaddr *)&in, sizeof(in)) :
			 connect(fd, (struct sockaddr *)&a, sizeof(a))))
		return fd;
	perror("relay_hostile: connect to the endpoint");
	if (must)
		exit(1);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Has the host closed @fd? Reads (and drops) what it sent meanwhile. */
static int is_closed(int fd)
{
	char buf[256];
	ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	return r == 0 || (r < 0 && errno != EAGAIN);
}

/* Whether the machine named @name is online, or -1 if there is none. */
static int machine_online(const char *name)
{
	struct pbtrace_endpoint_machine m;

	return machine_named(name, &m) ? -1 : (int)m.online;
}

/*
 * A relay that does everything right, named @name: HELLO (and on TCP the
 * proofs, by openssl), then a PING that must be answered. Returns its
 * connection, or -1 if the host did not let it in.
 */
static int good_relay(const char *name, uint8_t hint)
{
	uint8_t h[512], w[88], mac[32], b[256];
	int fd = connect_from(NULL, 1);
	size_t hl, n;
	char tk[65];

	hl = hello_named(h, hint, 0, name);
	send_all(fd, h, hl);
	if (recv_n(fd, w, sizeof(w)) || w[5] != 2)
		goto fail;
	if (use_tcp) {
		/* AUTH, then a PING tagged as every TCP frame after it. */
		if (proof("pbtrace-relay-v1 relay", w + 16 + 8, h + 16 + 16,
			  h + 16, hl - 16, key_hex, mac) ||
		    tag_key(key_hex, w + 24, h + 32, mac, tk))
			goto fail;
		n = auth(b, mac);
		n += tag_frame(b + n, ping(b + n, 9, 2), tk);
	} else {
		n = ping(b, 9, 1);
	}
	send_all(fd, b, n);
	if (recv_n(fd, b, use_tcp ? 72 + 16 : 72) || b[5] != 7 || b[16] != 9)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

#define CROWD_MAX	64
#define CROWD_SECS	14	/* past its handshake deadline, EP_HELLO_SECS */

/* endpoint_pending: one listener's pool; a peer's share is a quarter. */
static int pending_share(void)
{
	FILE *f = fopen("/sys/module/pbtrace/parameters/endpoint_pending", "r");
	int n = 0;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n >= 4 ? n / 4 : 1;
}

/*
 * One peer (CID 1; on TCP 127.0.0.2) opens more connections than its
 * share of the pending pool and trickles a HELLO into each, a byte a
 * second: the host must hold only its share, close its oldest for each
 * newer one, and close the ones it holds at its handshake deadline
 * however they trickle. On TCP a good relay from 127.0.0.1 (all of
 * loopback is one peer: the crowd's own) gets in meanwhile, displacing
 * one; on vsock, from the same CID once the crowd is gone.
 */
static void crowd(void)
{
	const char *src = use_tcp ? "127.0.0.2" : NULL;
	const char *limit = use_tcp ? "tcp_peer_limit" : "vsock_peer_limit";
	long limit0 = ep_stat(limit), hs0 = ep_stat("handshake_timeout");
	int share = pending_share(), crowd = share + 8;
	int fds[CROWD_MAX], open_at[CROWD_MAX], held = 0, still = 0, made = 0;
	int i, t, fd;
	uint8_t h[512];
	size_t hl = hello_named(h, 0x81, 0, "crowd");

	if (crowd > CROWD_MAX)
		crowd = CROWD_MAX;
	for (i = 0; i < crowd; i++) {
		fds[i] = connect_from(src, 0);
		if (fds[i] >= 0)
			send_all(fds[i], h, 1);
		made += fds[i] >= 0;
		usleep(50000);
	}
	/* Every one accepted: each past the share closed an older one. */
	for (i = 0; i < 50 && ep_stat(limit) < limit0 + made - share; i++)
		usleep(100000);
	usleep(300000);
	for (i = 0; i < crowd; i++) {
		open_at[i] = fds[i] >= 0 && !is_closed(fds[i]);
		held += open_at[i];
	}
	tap(made == crowd && held == share && !open_at[0] &&
	    ep_stat(limit) == limit0 + made - share,
	    "%d connections from one peer (%s, %d connected): the host holds its share, %d of %d (the newest), closed %d older ones for them, %s %ld -> %ld",
	    crowd, use_tcp ? src : "cid 1", made, held, share, made - held,
	    limit, limit0, ep_stat(limit));
	if (use_tcp) {
		fd = good_relay("good-tcp", 0x82);
		tap(fd >= 0 && machine_online("good-tcp") == 1,
		    "meanwhile a relay from 127.0.0.1 passes the handshake, its PING answered, machine online");
		if (fd >= 0)
			close(fd);
	}
	for (t = 1; t <= CROWD_SECS; t++) {
		sleep(1);
		for (i = 0; i < crowd; i++)
			if (open_at[i] && (size_t)t < hl && !is_closed(fds[i]))
				send_all(fds[i], h + t, 1);
	}
	for (i = 0; i < crowd; i++) {
		still += open_at[i] && !is_closed(fds[i]);
		if (fds[i] >= 0)
			close(fds[i]);
	}
	usleep(300000);
	/* Each one closed for a newer one or at the deadline, none kept. */
	tap(held > 0 && !still && ep_stat("handshake_timeout") > hs0 &&
	    ep_stat(limit) - limit0 + ep_stat("handshake_timeout") - hs0 == made,
	    "trickling a HELLO byte a second for %d s: the host closed all %d it held (at its handshake deadline, or on TCP one for the good relay); of the %d, %s +%ld, handshake_timeout +%ld",
	    CROWD_SECS, held - still, made, limit, ep_stat(limit) - limit0,
	    ep_stat("handshake_timeout") - hs0);
	fd = good_relay("good-after", 0x83);
	tap(fd >= 0 && machine_online("good-after") == 1,
	    "then a relay (%s) gets in, its PING answered, machine online",
	    use_tcp ? "127.0.0.1" : "cid 1, the crowd's own");
	if (fd >= 0)
		close(fd);
}

/*
 * Welcomed, then a PING a byte a second: bytes that never make a frame
 * are not life, so the host must close it as idle (30 s), not keep it.
 */
static void trickle(void)
{
	long idle0 = ep_stat("idle");
	uint8_t b[512], p[72];
	double t0;
	size_t i;
	int fd, closed = 0;

	fd = connect_ep();
	send_all(fd, b, hello_named(b, 0x84, 0, "trickle"));
	if (recv_n(fd, b, 88) || b[5] != 2) {
		tap(0, "trickle: no WELCOME");
		return;
	}
	ping(p, 1, 1);
	t0 = now_s();
	for (i = 0; i < sizeof(p) && now_s() - t0 < 50; i++) {
		send_all(fd, p + i, 1);
		sleep(1);
		if (is_closed(fd)) {
			closed = 1;
			break;
		}
	}
	close(fd);
	usleep(200000);
	tap(closed && ep_stat("idle") == idle0 + 1,
	    "a PING trickled a byte a second after WELCOME: host closed (%d) after %.0f s and %zu bytes, idle %ld -> %ld",
	    closed, now_s() - t0, i, idle0, ep_stat("idle"));
}

/* Accept relays and swallow what they send, for @secs seconds. */
static int silent_host(unsigned int secs)
{
	struct sockaddr_in in = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;
	char buf[4096];

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&in, sizeof(in)) || listen(fd, 4)) {
		perror("relay_hostile silent: listen");
		return 1;
	}
	alarm(secs);
	for (;;) {
		c = accept(fd, NULL, NULL);
		while (c >= 0 && recv(c, buf, sizeof(buf), 0) > 0)
			;
		if (c >= 0)
			close(c);
	}
}

int main(int argc, char **argv)
{
	uint8_t b[4096];
	size_t n;

	if (argc >= 5 && (!strcmp(argv[1], "join") ||
			  !strcmp(argv[1], "tcpjoin") || !strcmp(argv[1], "squat"))) {
		int rc = one_conn(argc, argv);

		if (rc == 2)
			fprintf(stderr, "usage: relay_hostile join PORT NAME HINT | tcpjoin PORT KEY NAME HINT | squat PORT NAME HINT SECS\n");
		return rc;
	}
	if (argc == 5 && !strcmp(argv[1], "mitm") &&
	    sscanf(argv[2], "%u", &port) == 1)
		return mitm((unsigned int)atoi(argv[3]),
			    (unsigned int)atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "silent") &&
	    sscanf(argv[2], "%u", &port) == 1)
		return silent_host((unsigned int)atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "stall") &&
	    sscanf(argv[2], "%u", &port) == 1)
		return stall((unsigned int)atoi(argv[3]),
			     argc == 5 && !strcmp(argv[4], "close"));
	if (argc == 3 && !strcmp(argv[1], "trickle") &&
	    sscanf(argv[2], "%u", &port) == 1) {
		trickle();
		return nr_failed ? 1 : 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "crowd")) {
		use_tcp = argc == 5 && !strcmp(argv[2], "tcp");
		key_hex = use_tcp ? argv[4] : NULL;
		if (sscanf(argv[use_tcp ? 3 : 2], "%u", &port) == 1) {
			crowd();
			return nr_failed ? 1 : 0;
		}
	}

	if (argc == 4 && !strcmp(argv[1], "tcp")) {
		use_tcp = 1;
		key_hex = argv[3];
		argv++;
	} else if (argc != 2) {
		argv[1] = NULL;
	}
	if (!argv[1] || sscanf(argv[1], "%u", &port) != 1) {
		fprintf(stderr, "usage: relay_hostile PORT | relay_hostile tcp PORT KEYHEX (more in its header)\n");
		return 2;
	}
	if (ep_stat("accepted") < 0) {
		fprintf(stderr, "relay_hostile: no %s: load pbtrace.ko with endpoint=vsock:PORT\n",
			STATS);
		return 2;
	}
	if (use_tcp) {
		tcp_tests();
		return nr_failed ? 1 : 0;
	}

	refused("garbage (an HTTP request)", "bad_magic",
		"GET / HTTP/1.0\r\n\r\n", 18, 0);
	header(b, 5, 1 << 20, 0);
	refused("CHUNK header claiming 1 MiB", "bad_length", b, 16, 0);
	header(b, 10, 0, 0);
	refused("unknown type 10", "bad_type", b, 16, 0);
	n = header(b, 5, 10, 0);
	memset(b + n, 0, 10);
	refused("CHUNK before HELLO", "bad_order", b, n + 10, 0);
	n = header(b, 4, 16, 0);
	memset(b + n, 0, 16);
	refused("CONTROL from a guest", "bad_direction", b, n + 16, 0);
	n = hello(b, 0x61, 0);
	memcpy(b + n, b, n);
	refused("HELLO replayed (sequence 0 twice)", "bad_seq", b, 2 * n, 0);
	n = hello(b, 0x62, 0);
	n += hello(b + n, 0x62, 1);
	refused("second HELLO", "bad_order", b, n, 0);
	n = hello(b, 0x63, 0);
	b[16 + 64 + 1] = '\n';		/* inside the name */
	refused("HELLO with a newline in its name", "bad_payload", b, n, 0);
	n = hello(b, 0x64, 0);
	refused("HELLO cut in half, then EOF", "truncated", b, n / 2, 1);
	if (getenv("PBTRACE_RELAY_HINT")) {
		const char *hex = getenv("PBTRACE_RELAY_HINT");
		unsigned int i, v;

		n = hello(b, 0x65, 0);
		for (i = 0; i < 16 && sscanf(hex + 2 * i, "%2x", &v) == 1; i++)
			b[16 + i] = (uint8_t)v;
		refused("HELLO with the hint of the relay that is online", "duplicate",
			b, n, 0);
	}
	flood();
	return nr_failed ? 1 : 0;
}
