/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc readers for traced's own packets. Every parser takes the file's
 * text (so the unit tests feed fixture files) and every reader is a thin
 * wrapper that reads the file first. Nothing here knows about protobuf.
 */
#ifndef PBT_PROCFS_H
#define PBT_PROCFS_H

#include <stddef.h>
#include <stdint.h>

#define PBT_COMM_MAX 64
#define PBT_KV_NAME_MAX 48

/* The fields of /proc/<pid>/status (or task/<tid>/status) traced uses. */
struct pbt_proc_status {
	char name[PBT_COMM_MAX];
	int32_t tgid, pid, ppid, uid;
	uint64_t vm_size_kb, vm_rss_kb, rss_anon_kb, rss_file_kb;
	uint64_t rss_shmem_kb, vm_swap_kb, vm_locked_kb, vm_hwm_kb;
	int has_mm;		/* VmSize present: not a kernel thread */
};

/* One "name value" line of /proc/meminfo (kB) or /proc/vmstat. */
struct pbt_kv {
	char name[PBT_KV_NAME_MAX];
	uint64_t value;
};

/* One "cpuN ..." line of /proc/stat, in USER_HZ ticks. */
struct pbt_cpu_times {
	uint32_t cpu;
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

struct pbt_stat {
	size_t nr_cpus;			/* entries used in cpus[] */
	size_t max_cpus;		/* capacity of cpus[] (caller's) */
	struct pbt_cpu_times *cpus;
	uint64_t forks, intr_total, softirq_total;
};

/* Read a whole (small) file into buf, NUL-terminated. Returns the length
 * or -errno. Files longer than len - 1 are cut short. */
long pbt_read_file(const char *path, char *buf, size_t len);

/* 0 on success, -EINVAL when Name/Pid/Tgid lines are missing. */
int pbt_parse_status(const char *text, struct pbt_proc_status *st);
int pbt_read_status(const char *dir, struct pbt_proc_status *st);

/* Split a NUL-separated cmdline of len bytes into up to max pointers into
 * buf (which must be NUL-terminated at buf[len]). Returns the count. */
size_t pbt_split_cmdline(char *buf, size_t len, char **argv, size_t max);

/* "Name:   123 kB" (meminfo) and "name 123" (vmstat) lines alike.
 * Returns the number of entries filled (at most max). */
size_t pbt_parse_kv(const char *text, struct pbt_kv *out, size_t max);

/* 0, or -EINVAL if no "cpuN" line was found. */
int pbt_parse_stat(const char *text, struct pbt_stat *st);

/* Numeric directory entries of dir (pids under /proc, tids under
 * /proc/<pid>/task), sorted ascending. *out is malloc'd; returns the count
 * or -errno. */
long pbt_list_ids(const char *dir, int32_t **out);

#endif /* PBT_PROCFS_H */
