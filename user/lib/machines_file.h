/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The machines file, /etc/pbtrace/machines: the names a hypervisor host
 * gives its guests, and the keys of its TCP relays, one guest a line
 * (docs/multi-machine.md, "Names and keys"):
 *
 *     # vsock guests: the guest of this CID is this machine
 *     cid 5 web1
 *     # TCP relays: the relay of this name proves this key (32 to 128
 *     # hex digits) instead of relay_key
 *     key web2 000102030405060708090a0b0c0d0e0f
 *
 * '#' starts a comment, to the end of the line; words are separated by
 * spaces or tabs. root's tracectl (tracectl machines load) and traced (at
 * start and on SIGHUP) read it and load it into the module
 * (pbt_nl_load_names). A file with keys must be readable by its owner
 * alone, as ssh wants of a private key; no file may be writable by
 * others, nor belong to anyone but root or the reader.
 */
#ifndef PBT_MACHINES_FILE_H
#define PBT_MACHINES_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "genl.h"

#define PBT_MACHINES_FILE "/etc/pbtrace/machines"
#define PBT_MACHINES_FILE_MAX (16u << 20)	/* bytes: far above 16384 lines */

struct pbt_names_file {
	struct pbt_name_spec *e;	/* malloc'd, in the file's order */
	size_t n;
	size_t nr_keys;
};

/*
 * Parse @len bytes of @text, @path being only for the messages. Returns
 * 0, or -EINVAL with "PATH:LINE: what is wrong" in @err (a key is never
 * echoed). On error *f is empty.
 */
int pbt_names_parse(const char *text, size_t len, const char *path,
		    struct pbt_names_file *f, char *err, size_t errlen);
/*
 * May a file of mode and owner @st be trusted by @euid, with @keys in it?
 * 0, or -EPERM with what to do in @err.
 */
int pbt_names_check_mode(const struct stat *st, bool keys, uid_t euid,
			 const char *path, char *err, size_t errlen);
/* Read, check and parse @path: 0 or -errno (-ENOENT: no such file). */
int pbt_names_file_read(const char *path, struct pbt_names_file *f,
			char *err, size_t errlen);
/* Frees and wipes the keys. */
void pbt_names_file_free(struct pbt_names_file *f);

#endif /* PBT_MACHINES_FILE_H */
