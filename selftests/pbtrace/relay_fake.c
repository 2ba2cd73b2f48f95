// SPDX-License-Identifier: GPL-2.0
/*
 * A relay that misbehaves in the ways a real one can: over vsock (CID 1)
 * it says HELLO as machine NAME, waits for the host's CONTROL start, sends
 * two CHUNKs for CPU 0 with sequence numbers 0 and 3 (the relay lost 1 and
 * 2 on the way), then drops the connection in the middle of the session.
 * It never pings, so the host has no clock round to place its events by.
 * relay_remote_test.sh checks that the host counted each of these for this
 * machine: 2 chunks dropped, 2 lost on the wire, 1 disconnect and a gap
 * that runs until the session stops.
 *
 * Frames are written by hand from docs/relay-protocol.md, not with
 * kmod/core/frame.c, like relay_hostile.c.
 *
 *   relay_fake PORT NAME     prints "session N" once started, exits 0
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "relay_wire.h"

enum { HELLO = 1, WELCOME, AUTH, CONTROL, CHUNK };

static int send_all(int fd, const uint8_t *b, size_t n)
{
	ssize_t w;

	for (; n; n -= w, b += w) {
		w = send(fd, b, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
	}
	return 0;
}

static int recv_all(int fd, uint8_t *b, size_t n)
{
	ssize_t r;

	for (; n; n -= r, b += r) {
		r = recv(fd, b, n, 0);
		if (r <= 0)
			return -1;
	}
	return 0;
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
	p += str(p, "6.1.0-fake");
	p += str(p, "#1 fake");
	p += str(p, "x86_64");
	header(b, HELLO, p - b - 16, 0);
	return p - b;
}

/*
 * TracePacket { trusted_packet_sequence_id: 7, ftrace_events { cpu: 0,
 * event { timestamp: ts, pid: 1 } } }, the host replaces the id.
 */
static size_t chunk(uint8_t *b, uint32_t frame_seq, uint32_t chunk_seq,
		    uint8_t ts)
{
	static const uint8_t pkt[] = { 0x0a, 12, 0x50, 7, 0x0a, 8, 0x08, 0,
				       0x12, 4, 0x08, 0, 0x10, 1 };
	uint8_t *p = b + 16;

	p += put32(p, 0);			/* cpu */
	p += put32(p, chunk_seq);
	memcpy(p, pkt, sizeof(pkt));
	p[11] = ts;
	p += sizeof(pkt);
	header(b, CHUNK, p - b - 16, frame_seq);
	return p - b;
}

int main(int argc, char **argv)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK, .svm_cid = 1 };
	uint8_t b[16 + 8192];
	uint32_t len;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: relay_fake PORT NAME\n");
		return 2;
	}
	sa.svm_port = atoi(argv[1]);
	fd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send_all(fd, b, hello(b, argv[2]))) {
		perror("relay_fake: connect or HELLO");
		return 1;
	}
	/* WELCOME, then whatever comes until CONTROL start. */
	for (;;) {
		if (recv_all(fd, b, 16) || (len = get32(b + 8)) > 8192 ||
		    recv_all(fd, b + 16, len)) {
			fprintf(stderr, "relay_fake: host closed before CONTROL start\n");
			return 1;
		}
		if (b[5] == CONTROL && get32(b + 16) == 1)
			break;
	}
	printf("session %u\n", get32(b + 20));
	fflush(stdout);
	if (send_all(fd, b, chunk(b, 1, 0, 10)) ||
	    send_all(fd, b, chunk(b, 2, 3, 20))) {
		perror("relay_fake: CHUNK");
		return 1;
	}
	sleep(1);		/* let the host take both before we vanish */
	close(fd);
	return 0;
}
