// SPDX-License-Identifier: GPL-2.0
/*
 * traced_records FILE: print the end offset of every Trace.packet record
 * (0x0A, varint length, bytes) in FILE, one per line, so traced_test.sh can
 * decode every prefix at a record boundary. Written apart from user/lib/writer.c
 * on purpose: an independent reading of the file. Exit 1 when the file
 * does not end on a record boundary or holds a byte that cannot start one.
 */
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	unsigned long long off = 0, size;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: traced_records FILE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0) {
		perror(argv[1]);
		return 2;
	}
	size = (unsigned long long)ftell(f);
	while (off < size) {
		uint64_t len = 0;
		int shift = 0, b, c;

		fseek(f, (long)off, SEEK_SET);
		c = fgetc(f);
		if (c != 0x0A) {
			fprintf(stderr, "%s: byte 0x%02x at %llu cannot start a Trace.packet record\n",
				argv[1], c, off);
			return 1;
		}
		off++;
		do {
			b = fgetc(f);
			if (b == EOF || shift > 63) {
				fprintf(stderr, "%s: torn record header at %llu\n",
					argv[1], off);
				return 1;
			}
			len |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
			off++;
		} while (b & 0x80);
		if (len > size - off) {
			fprintf(stderr, "%s: last record torn: needs %llu bytes, %llu left\n",
				argv[1], (unsigned long long)len, size - off);
			return 1;
		}
		off += len;
		printf("%llu\n", off);
	}
	fclose(f);
	return 0;
}
