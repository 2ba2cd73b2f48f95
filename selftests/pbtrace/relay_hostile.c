// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile guest for the endpoint (kmod/endpoint.c): connects over vsock
 * and sends garbage, oversized, truncated, replayed, out-of-order and
 * flooding traffic, one connection per case. For each it checks, against
 * the counters in /sys/module/pbtrace/parameters/endpoint_stats, that the
 * host counted the right reason and closed the connection; and that a
 * well-behaved PING flood is answered in full.
 *
 * Frames are written by hand from docs/relay-protocol.md, not with
 * kmod/core/frame.c, so the encoder's bugs cannot hide the parser's.
 *
 *   relay_hostile PORT       prints TAP
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#define STATS "/sys/module/pbtrace/parameters/endpoint_stats"

static unsigned int port;
static int test_nr, failures;

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	test_nr++;
	failures += !cond;
	printf("%s %d - ", cond ? "ok" : "not ok", test_nr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

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
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("vsock connect");
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

static size_t put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
	return 4;
}

static size_t header(uint8_t *p, uint8_t type, uint32_t len, uint32_t seq)
{
	memcpy(p, "PBTR", 4);
	p[4] = 1;
	p[5] = type;
	p[6] = p[7] = 0;
	put32(p + 8, len);
	put32(p + 12, seq);
	return 16;
}

static size_t str(uint8_t *p, const char *s)
{
	p[0] = (uint8_t)strlen(s);
	memcpy(p + 1, s, p[0]);
	return 1 + p[0];
}

/* HELLO (type 1) with hint byte @h; returns the frame's length. */
static size_t hello(uint8_t *b, uint8_t h, uint32_t seq)
{
	uint8_t *p = b + 16;

	memset(p, h, 16);		/* hint */
	memset(p + 16, 0, 32);		/* nonce */
	put32(p + 48, 1);		/* num_cpus */
	put32(p + 52, 0);
	put32(p + 56, 1 << 20);		/* RAM, low word */
	put32(p + 60, 0);
	p += 64;
	p += str(p, "hostile");
	p += str(p, "Linux");
	p += str(p, "6.1.0");
	p += str(p, "#1");
	p += str(p, "x86_64");
	header(b, 1, (uint32_t)(p - b - 16), seq);
	return (size_t)(p - b);
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
	ok(closed && after == before + 1, "%s: host closed (%d), %s %ld -> %ld",
	   what, closed, counter, before, after);
}

static void flood(void)
{
	static uint8_t out[72 * 500 + 512], in[72 * 600];
	long pings = ep_stat("pings"), bye = ep_stat("goodbyes");
	size_t n = 0, got = 0, want;
	uint32_t i, bad = 0;
	struct pollfd p;
	ssize_t r;
	int fd;

	n += hello(out, 0x5a, 0);
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
	ok(got == want && !bad && ep_stat("pings") == pings + 500 &&
	   ep_stat("goodbyes") == bye + 1,
	   "a flood of 500 PINGs: WELCOME and 500 PONGs in order (%zu of %zu bytes, %u wrong), then GOODBYE",
	   got, want, bad);
}

int main(int argc, char **argv)
{
	uint8_t b[4096];
	size_t n;

	if (argc != 2 || sscanf(argv[1], "%u", &port) != 1) {
		fprintf(stderr, "usage: relay_hostile PORT\n");
		return 2;
	}
	if (ep_stat("accepted") < 0) {
		fprintf(stderr, "relay_hostile: no %s: load pbtrace.ko with endpoint=vsock:PORT\n",
			STATS);
		return 2;
	}

	refused("garbage (an HTTP request)", "bad_magic",
		"GET / HTTP/1.0\r\n\r\n", 18, 0);
	header(b, 5, 1 << 20, 0);
	refused("CHUNK header claiming 1 MiB", "bad_length", b, 16, 0);
	header(b, 9, 0, 0);
	refused("unknown type 9", "bad_type", b, 16, 0);
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
	flood();
	return failures ? 1 : 0;
}
