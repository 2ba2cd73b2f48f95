// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the ELF symbol reader (user/lib/elfsym.c), which
 * reads binaries named by a trace: no crash, leak or UB on any file, and
 * a name it returns is a NUL-terminated string within the buffer given.
 * The input's first 8 bytes are the file offset looked up, the rest the
 * file.
 *
 * Built and run by tools/fuzz/run, which reads these lines:
 * fuzz-sources: user/lib/elfsym.c
 * fuzz-seeds: tools/fuzz/elfsym_seeds
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[32];
	uint64_t off = 0;
	int ret;

	if (size < sizeof(off))
		return 0;
	memcpy(&off, data, sizeof(off));
	memset(name, 'x', sizeof(name));
	ret = pbt_elf_function(data + sizeof(off), size - sizeof(off), off,
			       name, sizeof(name));
	if (ret < -1 || ret > 1 || (ret == 1 && !memchr(name, '\0', sizeof(name))))
		abort();
	return 0;
}
