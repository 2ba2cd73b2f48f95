// SPDX-License-Identifier: GPL-2.0
/*
 * A small ELF64 symbol reader (elfsym.h). Structures are copied out of the
 * buffer with memcpy (the buffer need not be aligned) after a bounds check
 * that cannot overflow.
 */
#include <elf.h>
#include <string.h>

#include "elfsym.h"

/* [off, off + n) lies within len, without overflow. */
static int in_bounds(size_t len, uint64_t off, uint64_t n)
{
	return off <= len && n <= len - off;
}

static int get(const uint8_t *data, size_t len, uint64_t off, void *out,
	       size_t n)
{
	if (!in_bounds(len, off, n))
		return -1;
	memcpy(out, data + off, n);
	return 0;
}

static int read_ehdr(const uint8_t *data, size_t len, Elf64_Ehdr *eh)
{
	if (get(data, len, 0, eh, sizeof(*eh)) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return -1;
	if (eh->e_phnum && eh->e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	if (eh->e_shnum && eh->e_shentsize != sizeof(Elf64_Shdr))
		return -1;
	return 0;
}

/* File offset -> virtual address through the PT_LOAD that holds it. */
static int to_vaddr(const uint8_t *data, size_t len, const Elf64_Ehdr *eh,
		    uint64_t off, uint64_t *vaddr)
{
	Elf64_Phdr ph;
	unsigned int i;

	for (i = 0; i < eh->e_phnum; i++) {
		if (get(data, len, eh->e_phoff + (uint64_t)i * sizeof(ph), &ph,
			sizeof(ph)))
			return -1;
		if (ph.p_type != PT_LOAD || off < ph.p_offset ||
		    off - ph.p_offset >= ph.p_filesz)
			continue;
		*vaddr = off - ph.p_offset + ph.p_vaddr;
		return 0;
	}
	return -1;
}

static int section(const uint8_t *data, size_t len, const Elf64_Ehdr *eh,
		   unsigned int i, Elf64_Shdr *sh)
{
	if (i >= eh->e_shnum)
		return -1;
	return get(data, len, eh->e_shoff + (uint64_t)i * sizeof(*sh), sh,
		   sizeof(*sh));
}

/* Symbol @st_name of string table @strtab into @name; 0 if it is none. */
static int sym_name(const uint8_t *data, size_t len, const Elf64_Shdr *strtab,
		    uint32_t st_name, char *name, size_t name_len)
{
	const uint8_t *s, *nul;
	size_t n, max;

	if (!in_bounds(len, strtab->sh_offset, strtab->sh_size) ||
	    st_name >= strtab->sh_size || !name_len)
		return 0;
	s = data + strtab->sh_offset + st_name;
	max = strtab->sh_size - st_name;
	nul = memchr(s, '\0', max);
	if (!nul || nul == s)
		return 0;
	n = (size_t)(nul - s);
	if (n >= name_len)
		n = name_len - 1;
	memcpy(name, s, n);
	name[n] = '\0';
	return 1;
}

/* The STT_FUNC of table @sh that holds @addr: 1 (named), 0, -1. */
static int lookup(const uint8_t *data, size_t len, const Elf64_Ehdr *eh,
		  const Elf64_Shdr *sh, uint64_t addr, char *name,
		  size_t name_len)
{
	Elf64_Shdr strtab;
	uint64_t i, n;
	Elf64_Sym sym;
	int type;

	if (sh->sh_entsize != sizeof(sym) ||
	    !in_bounds(len, sh->sh_offset, sh->sh_size) ||
	    section(data, len, eh, sh->sh_link, &strtab) ||
	    strtab.sh_type != SHT_STRTAB)
		return -1;
	n = sh->sh_size / sizeof(sym);
	for (i = 0; i < n; i++) {
		memcpy(&sym, data + sh->sh_offset + i * sizeof(sym),
		       sizeof(sym));
		type = ELF64_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || addr < sym.st_value ||
		    addr - sym.st_value >= (sym.st_size ? sym.st_size : 1))
			continue;
		if (sym_name(data, len, &strtab, sym.st_name, name, name_len))
			return 1;
	}
	return 0;
}

int pbt_elf_function(const uint8_t *data, size_t len, uint64_t off,
		     char *name, size_t name_len)
{
	static const uint32_t order[] = { SHT_SYMTAB, SHT_DYNSYM };
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	uint64_t addr;
	unsigned int t, i;
	int ret;

	if (read_ehdr(data, len, &eh))
		return -1;
	if (to_vaddr(data, len, &eh, off, &addr))
		return 0;
	for (t = 0; t < 2; t++) {
		for (i = 0; i < eh.e_shnum; i++) {
			if (section(data, len, &eh, i, &sh))
				return -1;
			if (sh.sh_type != order[t])
				continue;
			ret = lookup(data, len, &eh, &sh, addr, name, name_len);
			if (ret)
				return ret;
		}
	}
	return 0;
}
