/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for the user frames of a trace's stack samples: Perfetto
 * ModuleSymbols packets, as its offline symbolizer appends them (traced
 * when it finishes a file with stacks, tracectl symbolize for any file).
 * See docs/stacks.md.
 */
#ifndef PBT_SYMBOLIZE_H
#define PBT_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct pbt_sym_stats {
	unsigned int modules;		/* binaries the user frames are in */
	unsigned int unreadable;	/* of them: not there, or no ELF we read */
	unsigned int frames;		/* distinct (binary, rel_pc) */
	unsigned int named;		/* of them: a function holds it */
};

/*
 * Reads the @len bytes of Trace.packet records at @data: every user frame
 * (a frame whose mapping's path starts with '/'), per sequence and
 * interning generation, then each binary's ELF symbols, opened with the
 * caller's credentials. Binaries the file already has ModuleSymbols for
 * are left out, so running it twice adds nothing. *out (malloc'd, free
 * it; NULL when there is nothing to add) gets one Trace.packet record per
 * binary with a named frame: ModuleSymbols { path, address_symbols {
 * address = rel_pc, lines { function_name } } }, timestamped after the
 * last packet so that trace_processor applies it to frames it has seen.
 * Returns 0, or -1 with @err saying what failed (bytes that are no
 * Trace.packet records, out of memory).
 */
int pbt_symbolize(const uint8_t *data, size_t len, uint8_t **out,
		  size_t *out_len, struct pbt_sym_stats *st, char *err,
		  size_t errlen);

/*
 * The @len bytes of @fd from its start: mapped, or read where the file
 * system cannot map (9p); NULL with errno set. Free with
 * pbt_file_bytes_free(p, len, *mapped).
 */
void *pbt_file_bytes(int fd, size_t len, int *mapped);
void pbt_file_bytes_free(void *p, size_t len, int mapped);

#endif /* PBT_SYMBOLIZE_H */
