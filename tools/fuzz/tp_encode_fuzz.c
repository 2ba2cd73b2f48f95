// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the generic tracepoint encoder (kmod/core/tp_encode.c),
 * the code the probe runs on any record with a layout userspace sent. The
 * input is a layout (sizeof(struct pbt_tp_layout) bytes, taken as they
 * are: names without NULs, any kind, size, offset and proto id) followed
 * by the record, which lives in a heap block of exactly its size, so any
 * read past it is an ASan error. Beyond "no crash, no UB" it checks that:
 *  - the body never goes past the output buffer, whatever its size, and
 *    overflow is set exactly when the body does not fit;
 *  - the body is well-formed protobuf (every field parses to its end);
 *  - a layout pbt_tp_check() accepts always has a descriptor within 4 KiB;
 *  - the compiled form (pbt_tp_encode_fast()) writes the same bytes,
 *    overflow and missing count as pbt_tp_encode(), at both sizes.
 *
 * Built and run by tools/fuzz/run, which reads these lines:
 * fuzz-sources: kmod/core/tp_encode.c
 * fuzz-seeds: tools/fuzz/tp_encode_seeds
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kmod/core/tp_encode.h"

static uint8_t out[1 << 16], out2[1 << 16];

/*
 * pbt_tp_encode_fast() of the same input into out2, cut to @room bytes:
 * what pbt_tp_encode() wrote into out, or abort.
 */
static void same_fast(const struct pbt_tp_layout *l, const struct pbt_tp_fast *f,
		      const uint8_t *rec, size_t n, size_t room,
		      const struct pb_buf *want, unsigned int want_miss)
{
	struct pb_buf b;
	unsigned int miss;

	pb_init(&b, out2, room);
	miss = pbt_tp_encode_fast(&b, f, l, rec, (uint32_t)n);
	if (miss != want_miss || b.overflow != want->overflow ||
	    pb_len(&b, out2) != pb_len(want, out) ||
	    memcmp(out2, out, pb_len(&b, out2)))
		abort();
}

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 70) {
		uint8_t c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

static void well_formed(const uint8_t *p, const uint8_t *end)
{
	uint64_t tag, v;

	while (p < end) {
		if (varint(&p, end, &tag) || varint(&p, end, &v))
			abort();
		if ((tag & 7) == 2) {
			if (v > (uint64_t)(end - p))
				abort();
			p += v;
		} else if ((tag & 7) != 0) {
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pbt_tp_layout l;
	struct pb_buf b;
	uint8_t *rec;
	size_t n, full, cut;
	struct pbt_tp_fast *f;
	unsigned int miss;
	char msg[128];
	uint32_t nr;

	if (size < sizeof(l))
		return 0;
	memcpy(&l, data, sizeof(l));
	n = size - sizeof(l);
	rec = malloc(n ? n : 1);
	if (!rec)
		return 0;
	memcpy(rec, data + sizeof(l), n);

	nr = pbt_tp_fast_compile(&l, NULL);
	f = nr ? malloc(pbt_tp_fast_size(nr)) : NULL;
	if (f && pbt_tp_fast_compile(&l, f) != nr)
		abort();

	pb_init(&b, out, sizeof(out));
	miss = pbt_tp_encode(&b, &l, rec, (uint32_t)n);
	if (b.p > out + sizeof(out))
		abort();
	full = pb_len(&b, out);
	if (!b.overflow)
		well_formed(out, out + full);
	same_fast(&l, f, rec, n, sizeof(out), &b, miss);
	cut = full ? data[0] % (full + 1) : 0;
	pb_init(&b, out, cut);
	miss = pbt_tp_encode(&b, &l, rec, (uint32_t)n);
	if (b.p > out + cut || (cut < full && !b.overflow))
		abort();
	same_fast(&l, f, rec, n, cut, &b, miss);
	free(f);

	if (!pbt_tp_check(&l, msg, sizeof(msg)) &&
	    !pbt_tp_descriptor(&l, out, 4096))
		abort();
	pbt_tp_descriptor(&l, out, data[size - 1]);
	free(rec);
	return 0;
}
