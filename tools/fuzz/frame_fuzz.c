// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the relay protocol parser (kmod/core/frame.c), the
 * code the host runs on whatever a guest sends. The first input byte picks
 * the parser's role and state, the rest is the byte stream, delivered in
 * pieces whose sizes the input also picks. Beyond "no crash, no leak, no
 * UB" it checks that:
 *  - a parsed frame never claims more bytes than it was given, and encodes
 *    back to exactly the bytes it was parsed from;
 *  - a stream delivered in pieces parses like the same stream in one go;
 *  - a chunk chunk_check() accepts can be stamped into the advertised room,
 *    and the stamped chunk is refused if sent back (it has machine_id).
 *
 * Built and run by tools/fuzz/run, which reads these lines:
 * fuzz-sources: kmod/core/frame.c
 * fuzz-seeds: tools/fuzz/frame_seeds
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kmod/core/frame.h"

static uint8_t again[FRAME_HDR_LEN + FRAME_MAX_PAYLOAD];
static uint8_t stamped[FRAME_CHUNK_MAX * 2];

static void check_chunk(const uint8_t *data, size_t len)
{
	int n = chunk_check(data, len);
	long s;

	if (n < 0)
		return;
	s = chunk_stamp(data, len, 7, 0x10001, stamped,
			len + (size_t)n * CHUNK_STAMP_GROWTH);
	if (s < 0 || (size_t)s > len + (size_t)n * CHUNK_STAMP_GROWTH)
		abort();
	if (chunk_check(stamped, (size_t)s) != -FRAME_E_TRUSTED)
		abort();
}

/* What the owner of the parser would send back, to reach deeper states. */
static void answer(struct frame_parser *ps, const struct frame *f)
{
	struct frame r;

	memset(&r, 0, sizeof(r));
	if (f->type == FRAME_PING) {
		r.type = FRAME_PONG;
		r.pong.id = f->ping.id;
		frame_sent(ps, &r);
	} else if (f->type == FRAME_PONG) {
		r.type = FRAME_PING;
		r.ping.id = f->pong.id + 1;
		frame_sent(ps, &r);
	}
}

static void init(struct frame_parser *ps, uint8_t mode)
{
	struct frame f;

	frame_parser_init(ps, mode & 1 ? FRAME_ROLE_RELAY : FRAME_ROLE_HOST,
			  mode & 2);
	memset(&f, 0, sizeof(f));
	if (mode & 4) {
		f.type = FRAME_CONTROL;
		f.control.op = FRAME_CTL_START;
		frame_sent(ps, &f);
	}
	if (mode & 8) {
		f.type = FRAME_PING;
		f.ping.id = 1;
		frame_sent(ps, &f);
	}
}

/*
 * Parse @len bytes of @data, revealed @step bytes at a time (0: all at
 * once) as a socket would. Returns the bytes consumed by whole frames and
 * the final result in *last.
 */
static size_t run(uint8_t mode, const uint8_t *data, size_t len, size_t step,
		  int *last, unsigned int *frames)
{
	struct frame_parser ps;
	size_t off = 0, have = step ? 0 : len, n, tag;
	struct frame f;
	int rc;

	init(&ps, mode);
	*frames = 0;
	for (;;) {
		rc = frame_parse(&ps, data + off, have - off, &f);
		if (rc < 0)
			break;
		if (rc == 0) {
			if (have == len)
				break;
			have = have + step > len ? len : have + step;
			continue;
		}
		if ((size_t)rc > have - off)
			abort();
		/* A tagged frame is the encoding, flagged, then its tag. */
		tag = data[off + 6] & FRAME_F_TAG ? FRAME_TAG_LEN : 0;
		n = frame_encode(again, sizeof(again), &f);
		if (tag)
			frame_set_tagged(again);
		if (n + tag != (size_t)rc || memcmp(again, data + off, n))
			abort();
		if (f.type == FRAME_CHUNK)
			check_chunk(f.chunk.data, f.chunk.len);
		answer(&ps, &f);
		off += (size_t)rc;
		++*frames;
	}
	*last = rc;
	return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int frames, frames2;
	int last, last2;
	size_t used, used2, step;
	uint8_t mode;

	if (size < 2)
		return 0;
	mode = data[0];
	step = data[1] % 64;
	data += 2;
	size -= 2;

	check_chunk(data, size);
	used = run(mode, data, size, 0, &last, &frames);
	used2 = run(mode, data, size, step, &last2, &frames2);
	if (used != used2 || frames != frames2 || last != last2)
		abort();
	return 0;
}
