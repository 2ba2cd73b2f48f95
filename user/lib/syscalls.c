// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall name <-> number, from the table user/Makefile generates out of
 * <asm/unistd.h> (sorted by name).
 */
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"

struct pbt_syscall {
	const char *name;
	unsigned int nr;
};

static const struct pbt_syscall table[] = {
#include "syscalls_table.h"
};

#define TABLE_LEN (sizeof(table) / sizeof(table[0]))

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, ((const struct pbt_syscall *)elem)->name);
}

int pbt_syscall_nr(const char *name)
{
	const struct pbt_syscall *s;

	/* Perfetto names them "sys_" + the __NR_ name; both are accepted
	 * (a bare name starting with "sys_" would be looked up as is too). */
	s = bsearch(name, table, TABLE_LEN, sizeof(table[0]), by_name);
	if (!s && !strncmp(name, "sys_", 4))
		s = bsearch(name + 4, table, TABLE_LEN, sizeof(table[0]),
			    by_name);
	return s ? (int)s->nr : -1;
}

const char *pbt_syscall_name(unsigned int nr)
{
	size_t i;

	for (i = 0; i < TABLE_LEN; i++)
		if (table[i].nr == nr)
			return table[i].name;
	return NULL;
}

size_t pbt_syscall_count(void)
{
	return TABLE_LEN;
}
