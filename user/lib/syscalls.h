/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Syscall names of this machine's native ABI and their numbers, for
 * ftrace_config.syscall_events (docs/config.md). The table is generated at
 * build time from the system's <asm/unistd.h> (user/Makefile), so it is
 * the ABI the kernel's raw_syscalls tracepoints report ids in.
 */
#ifndef PBT_SYSCALLS_H
#define PBT_SYSCALLS_H

#include <stddef.h>

/*
 * "sys_openat" (Perfetto's spelling) or "openat" -> its number; -1 when
 * this ABI has no such syscall.
 */
int pbt_syscall_nr(const char *name);

/* The name of syscall nr without "sys_", or NULL. */
const char *pbt_syscall_name(unsigned int nr);

/* How many syscalls the table knows. */
size_t pbt_syscall_count(void);

#endif /* PBT_SYSCALLS_H */
