// SPDX-License-Identifier: GPL-2.0
/*
 * /proc parsers (see procfs.h). Processes come and go while we read, so a
 * missing file is normal and reported as -ENOENT, never as a failure of
 * the whole scan.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

long pbt_read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (long)got;
}

/* Value of "Key:\t..." at the start of a line, or NULL. */
static const char *status_field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static int status_long(const char *text, const char *key, long long *v)
{
	const char *p = status_field(text, key);

	if (!p)
		return -ENOENT;
	*v = strtoll(p, NULL, 10);
	return 0;
}

static uint64_t status_kb(const char *text, const char *key)
{
	long long v = 0;

	if (status_long(text, key, &v) < 0 || v < 0)
		return 0;
	return (uint64_t)v;
}

int pbt_parse_status(const char *text, struct pbt_proc_status *st)
{
	const char *name = status_field(text, "Name");
	long long tgid, pid, ppid = 0, uid = 0;
	size_t n = 0;

	memset(st, 0, sizeof(*st));
	if (!name || status_long(text, "Tgid", &tgid) ||
	    status_long(text, "Pid", &pid))
		return -EINVAL;
	/* The kernel prints the comm with escapes only for \n and \\. */
	while (name[n] && name[n] != '\n' && n < sizeof(st->name) - 1) {
		st->name[n] = name[n];
		n++;
	}
	status_long(text, "PPid", &ppid);
	status_long(text, "Uid", &uid);	/* first of real/eff/saved/fs */
	st->tgid = (int32_t)tgid;
	st->pid = (int32_t)pid;
	st->ppid = (int32_t)ppid;
	st->uid = (int32_t)uid;
	st->has_mm = status_field(text, "VmSize") != NULL;
	st->vm_size_kb = status_kb(text, "VmSize");
	st->vm_rss_kb = status_kb(text, "VmRSS");
	st->rss_anon_kb = status_kb(text, "RssAnon");
	st->rss_file_kb = status_kb(text, "RssFile");
	st->rss_shmem_kb = status_kb(text, "RssShmem");
	st->vm_swap_kb = status_kb(text, "VmSwap");
	st->vm_locked_kb = status_kb(text, "VmLck");
	st->vm_hwm_kb = status_kb(text, "VmHWM");
	return 0;
}

int pbt_read_status(const char *dir, struct pbt_proc_status *st)
{
	char path[256], buf[4096];
	long n;

	snprintf(path, sizeof(path), "%s/status", dir);
	n = pbt_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return pbt_parse_status(buf, st);
}

size_t pbt_split_cmdline(char *buf, size_t len, char **argv, size_t max)
{
	size_t n = 0, i = 0;

	/* A trailing NUL ends the last argument, it does not start one. */
	while (i < len && n < max) {
		argv[n++] = buf + i;
		i += strnlen(buf + i, len - i) + 1;
	}
	return n;
}

size_t pbt_parse_kv(const char *text, struct pbt_kv *out, size_t max)
{
	const char *p = text;
	size_t n = 0;

	while (*p && n < max) {
		const char *eol = strchr(p, '\n');
		size_t nlen = strcspn(p, ": \t\n");
		const char *v = p + nlen;

		if (!eol)
			eol = p + strlen(p);
		while (v < eol && (*v == ':' || *v == ' ' || *v == '\t'))
			v++;
		if (nlen && nlen < PBT_KV_NAME_MAX && v < eol &&
		    isdigit((unsigned char)*v)) {
			memcpy(out[n].name, p, nlen);
			out[n].name[nlen] = '\0';
			out[n].value = strtoull(v, NULL, 10);
			n++;
		}
		p = *eol ? eol + 1 : eol;
	}
	return n;
}

static void parse_cpu_line(const char *p, struct pbt_stat *st)
{
	struct pbt_cpu_times *c;
	char *end;
	unsigned long cpu = strtoul(p + 3, &end, 10);

	if (end == p + 3 || st->nr_cpus >= st->max_cpus)
		return;
	c = &st->cpus[st->nr_cpus++];
	memset(c, 0, sizeof(*c));
	c->cpu = (uint32_t)cpu;
	/* Missing trailing columns (old kernels) stay zero. */
	sscanf(end, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
	       " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &c->user, &c->nice,
	       &c->system, &c->idle, &c->iowait, &c->irq, &c->softirq,
	       &c->steal);
}

int pbt_parse_stat(const char *text, struct pbt_stat *st)
{
	const char *p = text;

	st->nr_cpus = 0;
	st->forks = st->intr_total = st->softirq_total = 0;
	while (*p) {
		if (!strncmp(p, "cpu", 3) && isdigit((unsigned char)p[3]))
			parse_cpu_line(p, st);
		else if (!strncmp(p, "processes ", 10))
			st->forks = strtoull(p + 10, NULL, 10);
		else if (!strncmp(p, "intr ", 5))
			st->intr_total = strtoull(p + 5, NULL, 10);
		else if (!strncmp(p, "softirq ", 8))
			st->softirq_total = strtoull(p + 8, NULL, 10);
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return st->nr_cpus ? 0 : -EINVAL;
}

static int cmp_id(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static int numeric(const char *s, int32_t *v)
{
	char *end;
	long n;

	if (!isdigit((unsigned char)*s))
		return 0;
	n = strtol(s, &end, 10);
	if (*end || n <= 0 || n > INT32_MAX)
		return 0;
	*v = (int32_t)n;
	return 1;
}

long pbt_list_ids(const char *dir, int32_t **out)
{
	size_t n = 0, cap = 256;
	int32_t *ids = malloc(cap * sizeof(*ids));
	struct dirent *de;
	DIR *d;

	*out = NULL;
	if (!ids)
		return -ENOMEM;
	d = opendir(dir);
	if (!d) {
		int e = errno;

		free(ids);
		return -e;
	}
	while ((de = readdir(d))) {
		int32_t v;

		if (!numeric(de->d_name, &v))
			continue;
		if (n == cap) {
			int32_t *more = realloc(ids, 2 * cap * sizeof(*ids));

			if (!more) {
				closedir(d);
				free(ids);
				return -ENOMEM;
			}
			ids = more;
			cap *= 2;
		}
		ids[n++] = v;
	}
	closedir(d);
	qsort(ids, n, sizeof(*ids), cmp_id);
	*out = ids;
	return (long)n;
}
