// SPDX-License-Identifier: GPL-2.0
/*
 * A relay of tiny frames, for the host's remote queue bound
 * (remote_queue_test.sh): over vsock (CID 1) it says HELLO as NAME, waits
 * for the host's CONTROL start, completes one clock round (two PINGs), then
 * sends COUNT CHUNKs for CPU 0, each one 4-byte record (TracePacket
 * { trusted_packet_sequence_id: 7 }), many frames per write. It prints
 * "sent COUNT", answers CONTROL stop with STOPPED and says GOODBYE.
 *
 * Frames are written by hand from docs/relay-protocol.md, not with
 * kmod/core/frame.c, like relay_fake.c.
 *
 *   relay_tiny PORT NAME COUNT     prints "session N", then "sent COUNT"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "relay_wire.h"

enum { HELLO = 1, WELCOME, AUTH, CONTROL, CHUNK, PING, PONG, GOODBYE, STOPPED };

static int fd;
static uint32_t seq;		/* our frames' sequence, HELLO is 0 */

static int send_all(const uint8_t *b, size_t n)
{
	ssize_t w;

	for (; n; n -= w, b += w) {
		w = send(fd, b, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
	}
	return 0;
}

static int recv_all(uint8_t *b, size_t n)
{
	ssize_t r;

	for (; n; n -= r, b += r) {
		r = recv(fd, b, n, 0);
		if (r <= 0)
			return -1;
	}
	return 0;
}

/* The next frame from the host into @b (16 + up to 8192); its type. */
static int next_frame(uint8_t *b)
{
	uint32_t len;

	if (recv_all(b, 16) || (len = get32(b + 8)) > 8192 ||
	    recv_all(b + 16, len))
		return -1;
	return b[5];
}

static size_t put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
	return 8;
}

/* BOOTTIME, MONOTONIC, REALTIME: the protocol's three clocks. */
static size_t clocks(uint8_t *p)
{
	static const clockid_t ids[] = { CLOCK_BOOTTIME, CLOCK_MONOTONIC,
					 CLOCK_REALTIME };
	struct timespec ts;
	size_t i;

	for (i = 0; i < 3; i++) {
		clock_gettime(ids[i], &ts);
		put64(p + 8 * i, (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	}
	return 24;
}

static size_t hello(uint8_t *b, const char *name)
{
	uint8_t *p = b + 16;
	size_t i;

	memset(p, 0, 64);
	for (i = 0; name[i] && i < 16; i++)
		p[i] = name[i];			/* hint: from the name */
	put32(p + 48, 1);			/* num_cpus */
	put32(p + 56, 64u << 20);		/* RAM, low half */
	p += 64;
	p += str(p, name);
	p += str(p, "Linux");
	p += str(p, "6.1.0-tiny");
	p += str(p, "#1 tiny");
	p += str(p, "x86_64");
	header(b, HELLO, p - b - 16, seq++);
	return p - b;
}

/* PING @id reporting on PONG @report, which arrived at @t4. */
static int ping(uint32_t id, uint32_t report, const uint8_t *t4)
{
	uint8_t b[16 + 56];

	header(b, PING, 56, seq++);
	put32(b + 16, id);
	put32(b + 20, report);
	clocks(b + 24);
	if (t4)
		memcpy(b + 48, t4, 24);
	else
		memset(b + 48, 0, 24);
	return send_all(b, sizeof(b));
}

/* PONG for @id; its arrival time into @t4. */
static int pong(uint8_t *b, uint32_t id, uint8_t *t4)
{
	int type;

	while ((type = next_frame(b)) >= 0) {
		clocks(t4);
		if (type == PONG && get32(b + 16) == id)
			return 0;
	}
	return -1;
}

/* One complete round: PING 1, its PONG, PING 2 reporting it, its PONG. */
static int clock_round(uint8_t *b)
{
	uint8_t t4[24];

	if (ping(1, 0, NULL) || pong(b, 1, t4) || ping(2, 1, t4))
		return -1;
	return pong(b, 2, t4);
}

/* @count CHUNKs of one 4-byte record, 64 KiB of frames per write. */
static int flood(unsigned long count)
{
	static const uint8_t rec[] = { 0x0a, 2, 0x50, 7 };
	static uint8_t out[65536];
	size_t n = 0, flen = 16 + 8 + sizeof(rec);
	unsigned long i;

	for (i = 0; i < count; i++) {
		if (n + flen > sizeof(out)) {
			if (send_all(out, n))
				return -1;
			n = 0;
		}
		header(out + n, CHUNK, 8 + sizeof(rec), seq++);
		put32(out + n + 16, 0);			/* cpu */
		put32(out + n + 20, (uint32_t)i);	/* chunk sequence */
		memcpy(out + n + 24, rec, sizeof(rec));
		n += flen;
	}
	return send_all(out, n);
}

/* Until CONTROL stop for @session: STOPPED, GOODBYE. */
static int finish(uint8_t *b, uint32_t session)
{
	int type;

	while ((type = next_frame(b)) >= 0) {
		if (type != CONTROL || get32(b + 16) != 2)
			continue;
		header(b, STOPPED, 24, seq++);
		put32(b + 16, session);
		memset(b + 20, 0, 20);			/* no events of its own */
		if (send_all(b, 16 + 24))
			return -1;
		header(b, GOODBYE, 4, seq++);
		put32(b + 16, 0);
		return send_all(b, 16 + 4);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK, .svm_cid = 1 };
	static uint8_t b[16 + 8192];
	unsigned long count;
	uint32_t session;
	int type;

	if (argc != 4) {
		fprintf(stderr, "usage: relay_tiny PORT NAME COUNT\n");
		return 2;
	}
	sa.svm_port = atoi(argv[1]);
	count = strtoul(argv[3], NULL, 0);
	fd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send_all(b, hello(b, argv[2]))) {
		perror("relay_tiny: connect or HELLO");
		return 1;
	}
	while ((type = next_frame(b)) >= 0)
		if (type == CONTROL && get32(b + 16) == 1)
			break;
	if (type < 0) {
		fprintf(stderr, "relay_tiny: host closed before CONTROL start\n");
		return 1;
	}
	session = get32(b + 20);
	printf("session %u\n", session);
	fflush(stdout);
	if (clock_round(b)) {
		fprintf(stderr, "relay_tiny: no clock round (PING/PONG)\n");
		return 1;
	}
	if (flood(count)) {
		perror("relay_tiny: CHUNK");
		return 1;
	}
	printf("sent %lu\n", count);
	fflush(stdout);
	if (finish(b, session)) {
		fprintf(stderr, "relay_tiny: host closed before CONTROL stop\n");
		return 1;
	}
	close(fd);
	return 0;
}
