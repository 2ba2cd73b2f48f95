// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall name <-> number, from the table user/Makefile generates out of
 * <asm/unistd.h> (sorted by name).
 */
#include <stdbool.h>
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

/* By number, for the syscall view's every line: built on first use. */
#define BY_NR_MAX 1024
static const char *by_nr[BY_NR_MAX];
static bool by_nr_made;

const char *pbt_syscall_name(unsigned int nr)
{
	size_t i;

	if (nr >= BY_NR_MAX) {
		for (i = 0; i < TABLE_LEN; i++)
			if (table[i].nr == nr)
				return table[i].name;
		return NULL;
	}
	if (!by_nr_made) {
		/* first name of a number wins, as the search found it */
		for (i = TABLE_LEN; i-- > 0;)
			if (table[i].nr < BY_NR_MAX)
				by_nr[table[i].nr] = table[i].name;
		by_nr_made = true;
	}
	return by_nr[nr];
}

size_t pbt_syscall_count(void)
{
	return TABLE_LEN;
}
