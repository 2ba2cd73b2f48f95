/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function names from an ELF file's symbol tables (.symtab, else .dynsym),
 * for the user frames of stack samples (docs/stacks.md). Plain C over a
 * byte buffer: every offset, size and index is checked against it, so any
 * file (a fuzzer's too) gives a name or none, never a bad read.
 */
#ifndef PBT_ELFSYM_H
#define PBT_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

/*
 * The function that holds file offset @off of the 64-bit little-endian
 * ELF image @data (@len bytes), as a mapping's rel_pc gives it: the offset
 * becomes a virtual address through the PT_LOAD segment that holds it,
 * then the STT_FUNC symbol whose [value, value + size) holds that address
 * is looked up in .symtab, then .dynsym. Its name goes into @name (cut to
 * @name_len - 1 bytes). Returns 1 if named, 0 if no symbol holds it, -1
 * if @data is no ELF file this can read.
 */
int pbt_elf_function(const uint8_t *data, size_t len, uint64_t off,
		     char *name, size_t name_len);

#endif /* PBT_ELFSYM_H */
