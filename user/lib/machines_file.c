// SPDX-License-Identifier: GPL-2.0
/* The machines file (machines_file.h): read, check, parse. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machines_file.h"

#define LINE_MAX_WORDS 4

/* Says what is wrong in @err and returns @ret. */
static int fail(int ret, char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return ret;
}

/*
 * A name the host gives, as the kernel takes it (kmod/relay/names.c): 1 to
 * 63 printable characters, no ',' or '@' (the words have no spaces), and
 * not what a config means by "host" or "*".
 */
static bool name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= PBTRACE_NAME_MAX || !strcmp(s, PBTRACE_MACHINE_HOST) ||
	    !strcmp(s, PBTRACE_MACHINE_ANY))
		return false;
	for (i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] > 0x7e || s[i] == ',' || s[i] == '@')
			return false;
	return true;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 32 to 128 hex digits into @key; its length, or 0 if it is not one. */
static size_t parse_key(const char *s, uint8_t *key)
{
	size_t n = strlen(s), i;
	int hi, lo;

	if (n % 2 || n < 32 || n > 2 * PBTRACE_NAME_KEY_MAX)
		return 0;
	for (i = 0; i < n / 2; i++) {
		hi = hex_digit(s[2 * i]);
		lo = hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			explicit_bzero(key, i);
			return 0;
		}
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	return n / 2;
}

/* A word for a message: never one that may be a key misplaced. */
static const char *shown(const char *w)
{
	size_t n = strlen(w), i;

	for (i = 0; i < n && hex_digit(w[i]) >= 0; i++)
		;
	return i == n && n >= 16 ? "(hex digits, maybe a key: not shown)" : w;
}

static bool parse_cid(const char *s, uint32_t *cid)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= 0xffffffffUL)	/* -1 is any CID */
		return false;
	*cid = (uint32_t)v;
	return true;
}

/* Splits @line (NUL-terminated, changed) into words; a '#' ends it. */
static int split(char *line, char **w)
{
	char *p = line;
	int n = 0;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == LINE_MAX_WORDS)
			return n + 1;		/* too many */
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '#')
			p++;
		if (*p == '#') {
			*p = '\0';
			return n;
		}
		if (*p)
			*p++ = '\0';
	}
}

static int parse_line(char *line, uint32_t nr, const char *path,
		      struct pbt_name_spec *e, bool *empty, char *err,
		      size_t errlen)
{
	char *w[LINE_MAX_WORDS];
	int n = split(line, w);

	*empty = !n;
	if (!n)
		return 0;
	memset(e, 0, sizeof(*e));
	e->line = nr;
	if (!strcmp(w[0], "cid")) {
		if (n != 3)
			return fail(-EINVAL, err, errlen, "%s:%u: 'cid' wants a CID and a name, e.g. 'cid 5 web1'",
				    path, nr);
		if (!parse_cid(w[1], &e->cid))
			return fail(-EINVAL, err, errlen, "%s:%u: '%s' is not a CID (0 to 4294967294)",
				    path, nr, shown(w[1]));
		if (!name_ok(w[2]))
			return fail(-EINVAL, err, errlen, "%s:%u: '%s' is not a name: 1 to %d printable characters, no ',' or '@', not 'host' or '*'",
				    path, nr, shown(w[2]), PBTRACE_NAME_MAX - 1);
		snprintf(e->name, sizeof(e->name), "%s", w[2]);
		return 0;
	}
	if (!strcmp(w[0], "key")) {
		if (n != 3)
			return fail(-EINVAL, err, errlen, "%s:%u: 'key' wants a name and a key, e.g. 'key web2 HEX'",
				    path, nr);
		if (!name_ok(w[1]))
			return fail(-EINVAL, err, errlen, "%s:%u: '%s' is not a name: 1 to %d printable characters, no ',' or '@', not 'host' or '*'",
				    path, nr, shown(w[1]), PBTRACE_NAME_MAX - 1);
		snprintf(e->name, sizeof(e->name), "%s", w[1]);
		e->key_len = parse_key(w[2], e->key);
		explicit_bzero(w[2], strlen(w[2]));
		if (!e->key_len)
			return fail(-EINVAL, err, errlen, "%s:%u: the key of %s is not 32 to %d hex digits",
				    path, nr, e->name, 2 * PBTRACE_NAME_KEY_MAX);
		return 0;
	}
	return fail(-EINVAL, err, errlen, "%s:%u: '%.40s' is not an entry: want 'cid CID NAME' or 'key NAME HEX'",
		    path, nr, shown(w[0]));
}

/* Sorts entry indexes by name, or by CID (CID entries first). */
static const struct pbt_name_spec *sort_base;

static int by_name(const void *a, const void *b)
{
	const struct pbt_name_spec *x = &sort_base[*(const size_t *)a];
	const struct pbt_name_spec *y = &sort_base[*(const size_t *)b];
	int c = strcmp(x->name, y->name);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int by_cid(const void *a, const void *b)
{
	const struct pbt_name_spec *x = &sort_base[*(const size_t *)a];
	const struct pbt_name_spec *y = &sort_base[*(const size_t *)b];

	if (!x->key_len != !y->key_len)
		return x->key_len ? 1 : -1;
	if (x->cid != y->cid)
		return x->cid < y->cid ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* A name or a CID given twice: the later line is the one to fix. */
static int check_twice(const struct pbt_names_file *f, const char *path,
		       char *err, size_t errlen)
{
	const struct pbt_name_spec *a, *b;
	size_t *ix, i;
	int ret = 0;

	if (f->n < 2)
		return 0;
	ix = malloc(f->n * sizeof(*ix));
	if (!ix)
		return fail(-ENOMEM, err, errlen, "out of memory");
	for (i = 0; i < f->n; i++)
		ix[i] = i;
	sort_base = f->e;
	qsort(ix, f->n, sizeof(*ix), by_name);
	for (i = 1; i < f->n && !ret; i++) {
		a = &f->e[ix[i - 1]];
		b = &f->e[ix[i]];
		if (!strcmp(a->name, b->name))
			ret = fail(-EINVAL, err, errlen, "%s:%u: %s is named twice (line %u too)",
				   path, b->line, b->name, a->line);
	}
	qsort(ix, f->n, sizeof(*ix), by_cid);
	for (i = 1; i < f->n && !ret; i++) {
		a = &f->e[ix[i - 1]];
		b = &f->e[ix[i]];
		if (!a->key_len && !b->key_len && a->cid == b->cid)
			ret = fail(-EINVAL, err, errlen, "%s:%u: CID %u is %s's already (line %u)",
				   path, b->line, b->cid, a->name, a->line);
	}
	free(ix);
	return ret;
}

void pbt_names_file_free(struct pbt_names_file *f)
{
	if (f->e)
		explicit_bzero(f->e, f->n * sizeof(*f->e));
	free(f->e);
	memset(f, 0, sizeof(*f));
}

int pbt_names_parse(const char *text, size_t len, const char *path,
		    struct pbt_names_file *f, char *err, size_t errlen)
{
	char line[1024];
	const char *p = text, *end = text + len, *nl;
	size_t cap = 0, n;
	uint32_t nr = 0;
	bool empty;
	int ret = 0;
	void *v;

	memset(f, 0, sizeof(*f));
	while (p < end && !ret) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl ? nl : end) - p);
		nr++;
		if (n >= sizeof(line) || memchr(p, '\0', n)) {
			ret = fail(-EINVAL, err, errlen, "%s:%u: %s", path, nr,
				   n >= sizeof(line) ? "longer than 1023 bytes" :
				   "a NUL byte: this is no text file");
			break;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + 1;
		if (f->n == cap) {
			/* Not realloc: the old block holds keys, to be wiped. */
			cap = cap ? 2 * cap : 64;
			v = malloc(cap * sizeof(*f->e));
			if (!v) {
				ret = fail(-ENOMEM, err, errlen, "out of memory");
				break;
			}
			if (f->n) {
				memcpy(v, f->e, f->n * sizeof(*f->e));
				explicit_bzero(f->e, f->n * sizeof(*f->e));
			}
			free(f->e);
			f->e = v;
		}
		ret = parse_line(line, nr, path, &f->e[f->n], &empty, err,
				 errlen);
		if (!ret && !empty) {
			f->nr_keys += f->e[f->n].key_len > 0;
			f->n++;
			if (f->n > PBTRACE_MAX_NAMES)
				ret = fail(-EINVAL, err, errlen, "%s:%u: more than %d names: the module holds no more",
					   path, nr, PBTRACE_MAX_NAMES);
		}
	}
	explicit_bzero(line, sizeof(line));
	if (!ret)
		ret = check_twice(f, path, err, errlen);
	if (ret)
		pbt_names_file_free(f);
	return ret;
}

int pbt_names_check_mode(const struct stat *st, bool keys, uid_t euid,
			 const char *path, char *err, size_t errlen)
{
	unsigned int mode = st->st_mode & 07777;

	if (!S_ISREG(st->st_mode))
		return fail(-EINVAL, err, errlen, "%s: not a regular file", path);
	if (st->st_uid != 0 && st->st_uid != euid)
		return fail(-EPERM, err, errlen, "%s: belongs to uid %u: it must be root's or yours (its names decide who a guest is)",
			    path, (unsigned int)st->st_uid);
	if (mode & 022)
		return fail(-EPERM, err, errlen, "%s: mode %04o lets others change it (its names decide who a guest is): chmod go-w %s",
			    path, mode, path);
	if (keys && (mode & 077))
		return fail(-EPERM, err, errlen, "%s: mode %04o lets others read its keys: chmod 600 %s (keys are refused from a file others may read)",
			    path, mode, path);
	return 0;
}

int pbt_names_file_read(const char *path, struct pbt_names_file *f,
			char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	ssize_t got = 0, r;
	int fd, ret;

	memset(f, 0, sizeof(*f));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	ret = pbt_names_check_mode(&st, false, geteuid(), path, err, errlen);
	if (ret)
		goto out;
	if ((uint64_t)st.st_size > PBT_MACHINES_FILE_MAX) {
		ret = fail(-EINVAL, err, errlen, "%s: %lld bytes: more than a machines file holds (%u)",
			   path, (long long)st.st_size, PBT_MACHINES_FILE_MAX);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = fail(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	while (got < st.st_size &&
	       (r = read(fd, buf + got, (size_t)(st.st_size - got))) > 0)
		got += r;
	ret = pbt_names_parse(buf, (size_t)got, path, f, err, errlen);
	/* Keys: the mode is checked again knowing they are there. */
	if (!ret && f->nr_keys)
		ret = pbt_names_check_mode(&st, true, geteuid(), path, err,
					   errlen);
	if (ret)
		pbt_names_file_free(f);
out:
	if (buf) {
		explicit_bzero(buf, (size_t)got);
		free(buf);
	}
	close(fd);
	return ret;
}
