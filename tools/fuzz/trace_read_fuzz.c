// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the hand-written TracePacket reader
 * (user/lib/trace_file.c, pbread.h) and what reads a file with it: the
 * syscall view (user/tracectl/syscalls_view.c) fed the bytes in pieces,
 * as tracectl trace reads a growing file, and tracectl report's reader
 * (report_read.c) on the same bytes as a file, pairing after every chunk.
 * The input is a trace file's bytes (the seeds are real traces); its
 * first byte picks the size of the pieces. Beyond "no crash, no leak, no
 * UB, no read outside the input" it checks, for every record:
 *  - wherever protobuf-c and the reader both read the packet, they read
 *    the same events and fields (trace_dump.h's text);
 *  - the reader never refuses a packet protobuf-c reads;
 *  - a refusal names a byte inside the packet.
 * report's reader runs with the usual index or one of 2 chunks (as a
 * file of more than 2 Mi chunks has it: streams stall, events come late).
 *
 * Built and run by tools/fuzz/run, which reads these lines:
 * fuzz-sources: user/lib/trace_file.c user/lib/syscalls.c user/tracectl/syscalls_view.c user/tracectl/syscalls_fmt.c user/tracectl/syscalls_decode.c user/tracectl/report_read.c
 * fuzz-gen: user/lib/syscalls_table.sh user/tracectl/syscall_args.sh=user/tracectl/syscall_defines.txt user/tracectl/syscall_xlat.sh
 * fuzz-protos: config trace
 * fuzz-seeds: tools/fuzz/trace_read_seeds
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../user/tests/trace_dump.h"
#include "../../user/tracectl/syscalls_view.h"

static FILE *sink;

static void check_records(const uint8_t *data, size_t len)
{
	const uint8_t *p = data, *end = data + len, *body;
	struct both r;
	size_t n;

	while (trace_next_record(&p, end, &body, &n) > 0) {
		read_both(body, n, &r);
		if (r.pbc_ok && !r.tf_ok)
			abort();	/* refused what protobuf-c reads */
		if (r.pbc_ok && strcmp(r.pbc, r.tf))
			abort();	/* read it otherwise */
		if (!r.tf_ok && (r.err.at < body || r.err.at > body + n ||
				 !r.err.what))
			abort();	/* a refusal must say where and what */
		free(r.pbc);
		free(r.tf);
	}
}

/* As tracectl trace reads a file that grows: in pieces. */
static void view_in_pieces(const uint8_t *data, size_t len, size_t piece)
{
	struct sv_opts o = { .out = sink, .lines = true, .summary = true };
	struct sv_view *v = sv_new(&o);
	size_t off = 0, upto;
	uint64_t bad;
	long used;

	if (!v)
		return;
	while (off < len) {
		upto = off + piece < len ? off + piece : len;
		used = sv_feed(v, data + off, upto - off, &bad);
		if (used < 0)
			break;
		if ((size_t)used > upto - off)
			abort();
		off += (size_t)used;
		if (upto == len && !used)
			break;		/* cut inside a packet at the end */
		sv_flush(v, off * 1000);	/* some time: pair a part */
		if (!used && upto < len)
			piece *= 2;	/* a packet longer than the piece */
	}
	sv_finish(v);
	sv_free(v);
}

/* As tracectl report reads a finished file, pairing after every chunk
 * and with an index of 2 chunks (a huge file's, where streams stall). */
static void report(const uint8_t *data, size_t len, bool small_index)
{
	struct sv_opts o = { .out = sink, .lines = true, .summary = true,
			     .hold = 1, .index_max = small_index ? 2 : 0 };
	struct sv_counts c;
	int fd = memfd_create("trace", 0);

	if (fd < 0)
		return;
	if (write(fd, data, len) == (ssize_t)len)
		sv_report_file(&o, "fuzz", fd, false, &c);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t piece;

	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!sink || size < 1)
		return 0;
	piece = 1 + (size_t)data[0] * 64;
	data++;
	size--;
	check_records(data, size);
	view_in_pieces(data, size, piece);
	report(data, size, piece & 64);
	return 0;
}
