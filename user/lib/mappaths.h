/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Paths for the user mappings of a chunk's stack samples (docs/stacks.md).
 * The kernel names a file's mapping by its identity only, "[inode INO dev
 * MAJ:MIN]" (no path lookup in probe context); traced asks the kernel for
 * the path (PBTRACE_IOC_MAPPING_PATH) as it copies the chunk, and this
 * puts it in the InternedData.mapping_paths string, every other byte as
 * it was.
 */
#ifndef PBT_MAPPATHS_H
#define PBT_MAPPATHS_H

#include <stddef.h>
#include <stdint.h>

/* The identity name's format, the kernel's (kmod/stack.c). */
#define PBT_MAPPING_ID_FMT "[inode %llu dev %02x:%02x]"

/*
 * The path of the file (@major:@minor, @ino) into @buf (@size bytes,
 * NUL-terminated): 0, or -errno to leave the identity name.
 */
typedef int (*pbt_path_fn)(void *ctx, uint32_t major, uint32_t minor,
			   uint64_t ino, char *buf, size_t size);

struct pbt_path_stats {
	unsigned int resolved;		/* identity names given their path */
	unsigned int unresolved;	/* left as they were: @fn said no */
};

/*
 * Parses an identity name of @len bytes: 1 with the three numbers set,
 * 0 if @s is none (a path, "[anon]", "kernel").
 */
int pbt_mapping_id_parse(const uint8_t *s, size_t len, uint32_t *major,
			 uint32_t *minor, uint64_t *ino);

/*
 * Rewrites the Trace.packet records at @in (@len bytes): each identity
 * name in an InternedData.mapping_paths becomes the path @fn gives.
 * Returns 1 with *out (malloc'd, free it) of *out_len bytes, 0 when
 * nothing changed (*out NULL: use @in), -1 when @in is not whole records
 * or memory ran out (*out NULL: use @in as it is). @st is added to.
 */
int pbt_mapping_paths_rewrite(const uint8_t *in, size_t len, pbt_path_fn fn,
			      void *ctx, uint8_t **out, size_t *out_len,
			      struct pbt_path_stats *st);

#endif /* PBT_MAPPATHS_H */
