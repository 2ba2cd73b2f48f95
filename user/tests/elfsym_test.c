// SPDX-License-Identifier: GPL-2.0
/*
 * lib/elfsym.c and lib/symbolize.c on the host (ASan + UBSan in make
 * test): this test's own functions are named from its own file at the
 * rel_pc the kernel writes (pc - mapping start + file offset, from
 * /proc/self/maps), and every cut and many corruptions of the file give
 * a name or none, never a bad read. Prints TAP.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"
#include "symbolize.h"
#include "tap.h"

__attribute__((noinline)) int pbt_test_target_fn(int x)
{
	return x * 3 + 1;
}

/* rel_pc of @pc as stack.c computes it, from this process's maps. */
static int rel_pc_of(uintptr_t pc, uint64_t *rel, char *path, size_t n)
{
	char line[4096], p[4096];
	unsigned long start, end, off;
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		p[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &start, &end,
			   &off, p) < 3)
			continue;
		if (pc < start || pc >= end)
			continue;
		*rel = pc - start + off;
		snprintf(path, n, "%s", p);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	struct stat sb;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &sb))
		return NULL;
	*len = (size_t)sb.st_size;
	buf = malloc(*len);
	if (buf && read(fd, buf, *len) != (ssize_t)*len) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
}

static void test_names(const uint8_t *elf, size_t len, uint64_t rel)
{
	char name[64] = "";
	int ret;

	ret = pbt_elf_function(elf, len, rel, name, sizeof(name));
	tap(ret == 1 && !strcmp(name, "pbt_test_target_fn"),
	    "the function at its rel_pc is named from the file (%d, '%s')",
	    ret, name);
	ret = pbt_elf_function(elf, len, rel, name, 5);
	tap(ret == 1 && !strcmp(name, "pbt_"), "a short buffer cuts the name ('%s')",
	    name);
	tap(pbt_elf_function(elf, len, (uint64_t)len + 4096, name, sizeof(name)) == 0,
	    "an offset beyond the file has no name");
	tap(pbt_elf_function((const uint8_t *)"\177ELF", 4, 0, name, sizeof(name)) < 0,
	    "a 4-byte 'ELF' is refused");
}

/* Cuts and corruptions: ASan and UBSan are the referee. */
static void test_hostile(const uint8_t *elf, size_t len, uint64_t rel)
{
	uint8_t *copy = malloc(len);
	char name[64];
	size_t cut, i;
	unsigned int seed = 1;

	for (cut = 0; cut < len; cut += cut < 4096 ? 1 : 997) {
		uint8_t *p = malloc(cut ? cut : 1);

		memcpy(p, elf, cut);
		pbt_elf_function(p, cut, rel, name, sizeof(name));
		free(p);
	}
	tap(1, "every cut of the file reads within it");
	for (i = 0; copy && i < 2000; i++) {
		size_t k;

		memcpy(copy, elf, len);
		for (k = 0; k < 8; k++) {
			/* the headers and tables, where offsets live */
			size_t at = (size_t)rand_r(&seed) %
				    (k < 4 ? (len < 256 ? len : 256) : len);

			copy[at] = (uint8_t)rand_r(&seed);
		}
		pbt_elf_function(copy, len, rel, name, sizeof(name));
	}
	tap(copy != NULL, "2000 corrupted copies read within the file");
	free(copy);
}

static void test_not_a_trace(void)
{
	struct pbt_sym_stats st;
	uint8_t *out;
	size_t n;
	char err[256] = "";
	static const uint8_t junk[] = { 0x12, 0x34, 0x56 };

	tap(pbt_symbolize(junk, sizeof(junk), &out, &n, &st, err, sizeof(err)) < 0 &&
	    strstr(err, "Trace.packet"), "bytes that are no trace are refused: %s", err);
	tap(pbt_symbolize(junk, 0, &out, &n, &st, err, sizeof(err)) == 0 &&
	    !out && !n, "an empty trace adds nothing");
}

int main(void)
{
	char path[4096];
	uint8_t *elf;
	uint64_t rel;
	size_t len;

	if (rel_pc_of((uintptr_t)pbt_test_target_fn, &rel, path, sizeof(path)) ||
	    !(elf = read_all(path, &len))) {
		tap(0, "this test's own text mapping and file are readable");
		printf("1..%d\n", nr_tests);
		return 1;
	}
	test_names(elf, len, rel);
	test_hostile(elf, len, rel);
	test_not_a_trace();
	free(elf);
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
