/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscall view's argument values in strace's words (syscalls_decode.c),
 * for syscalls_fmt.c, which names the arguments and quotes the strings.
 */
#ifndef PBT_SYSCALLS_DECODE_H
#define PBT_SYSCALLS_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "syscalls_view.h"

/* How argument arg (its name in syscall_defines.txt) of syscall is
 * printed: resolved once per argument of the table, then passed below. */
int sv_decode_how(const char *syscall, const char *arg);

/* The value v of an argument of call c; kind is its C type's
 * (syscall_args.sh: s p m U u l i). */
void sv_decode_arg(FILE *f, const struct sv_call_fmt *c, int how, char kind,
		   uint64_t v);

/* False for an argument strace leaves out (open's mode without O_CREAT,
 * fcntl's argument of F_GETFL, ...). */
bool sv_decode_shown(const struct sv_call_fmt *c, int how);

/* syscalls_fmt.c: whether the table names argument arg of syscall. */
bool sv_fmt_has_arg(const char *syscall, const char *arg);

/* The first decoder whose argument the table does not have, or NULL. */
const char *sv_decode_unknown_arg(void);

#endif /* PBT_SYSCALLS_DECODE_H */
