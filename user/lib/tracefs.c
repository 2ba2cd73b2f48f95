// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs: the list of tracepoints and each one's record layout
 * (tracefs.h says what becomes of each field).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracefs.h"

#define FORMAT_MAX (1 << 20)	/* a format file is a few KB */
#define MOUNT_HINT "mount it with 'mount -t tracefs nodev /sys/kernel/tracing'"

static const char *root_override;
static char found_dir[64];

void pbt_tracefs_set_root(const char *dir)
{
	root_override = dir;
}

static bool has_events(const char *dir)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/available_events", dir);
	return access(p, F_OK) == 0;
}

const char *pbt_tracefs_dir(char *err, size_t errlen)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	size_t i;

	if (root_override)
		return root_override;
	if (found_dir[0])
		return found_dir;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (has_events(dirs[i])) {
			snprintf(found_dir, sizeof(found_dir), "%s", dirs[i]);
			return found_dir;
		}
	}
	snprintf(err, errlen, "tracefs is not mounted: neither /sys/kernel/tracing nor /sys/kernel/debug/tracing has available_events; %s",
		 MOUNT_HINT);
	return NULL;
}

/* The whole of a tracefs file (they say size 0, so read to EOF). */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t cap = 8192, n = 0;
	char *buf = NULL, *nb;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		goto fail;
	for (;;) {
		if (n + 1 >= cap || !buf) {
			if (buf)
				cap *= 2;
			nb = cap > FORMAT_MAX * 8 ? NULL : realloc(buf, cap);
			if (!nb) {
				errno = buf ? EFBIG : ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	r = -errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	if (r == -EACCES || r == -EPERM)
		snprintf(err, errlen, "reading %s: %s: tracefs is root's; run as root",
			 path, strerror((int)-r));
	else
		snprintf(err, errlen, "reading %s: %s", path, strerror((int)-r));
	errno = (int)-r;
	return NULL;
}

/* ---- one format file ---- */

struct parse {
	struct pbt_tp_layout *l;
	const char *group, *name;
	char *err;
	size_t errlen;
	unsigned int line;
	uint8_t next_id;	/* next proto id for an event field */
	char unwritten[256];	/* fields past proto id 31 */
	char dropped[256];	/* fields past PBTRACE_TP_MAX_FIELDS */
};

static int perr(struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int perr(struct parse *p, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = (size_t)snprintf(p->err, p->errlen, "events/%s/%s/format line %u: ",
			     p->group, p->name, p->line);
	if (n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void list_add(char *list, size_t len, const char *name)
{
	size_t n = strlen(list);

	if (n + 1 >= len)
		return;
	snprintf(list + n, len - n, "%s%s", n ? ", " : "", name);
}

/* "key:" then a number, somewhere after s; false if absent or bad. */
static bool field_num(const char *s, const char *key, unsigned long max,
		      unsigned long *v)
{
	const char *k = strstr(s, key);
	char *end;

	if (!k)
		return false;
	k += strlen(key);
	while (*k == ' ')
		k++;
	if (!isdigit((unsigned char)*k))
		return false;
	errno = 0;
	*v = strtoul(k, &end, 10);
	return !errno && *v <= max && (*end == ';' || *end == ' ');
}

static bool is_ident(const char *s, size_t n)
{
	size_t i;

	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/*
 * "unsigned int foo[4]" -> type "unsigned int", name "foo", count "4"
 * (as Perfetto's GetNameFromTypeAndName: the name is the last word, before
 * a trailing [...]). count is "" when there is no [...], NULL on error.
 */
struct decl {
	char type[128];
	char name[PBT_TPF_NAME_MAX];
	char count[32];
	bool array;
	bool name_too_long;
};

static bool split_decl(const char *d, size_t len, struct decl *out)
{
	size_t right = len, left, tlen;
	const char *lb;

	memset(out, 0, sizeof(*out));
	while (len && d[len - 1] == ' ')
		len--;
	right = len;
	if (len && d[len - 1] == ']') {
		lb = memrchr(d, '[', len);
		if (!lb)
			return false;
		right = (size_t)(lb - d);
		out->array = true;
		if (len - right - 2 < sizeof(out->count))
			memcpy(out->count, lb + 1, len - right - 2);
	}
	left = right;
	while (left && d[left - 1] != ' ')
		left--;
	if (!left || !is_ident(d + left, right - left))
		return false;
	if (right - left >= sizeof(out->name)) {
		out->name_too_long = true;
		memcpy(out->name, d + left, sizeof(out->name) - 1);
	} else {
		memcpy(out->name, d + left, right - left);
	}
	tlen = left - 1;
	while (tlen && d[tlen - 1] == ' ')
		tlen--;
	if (!tlen)
		return false;
	if (tlen >= sizeof(out->type))
		tlen = sizeof(out->type) - 1;
	memcpy(out->type, d, tlen);
	return true;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Bytes of one element of an int type named t, 0 if unknown. */
static unsigned int type_size(const char *t)
{
	static const struct { const char *t; unsigned int n; } ts[] = {
		{ "char", 1 }, { "unsigned char", 1 }, { "signed char", 1 },
		{ "u8", 1 }, { "s8", 1 }, { "__u8", 1 }, { "__s8", 1 },
		{ "short", 2 }, { "unsigned short", 2 }, { "u16", 2 },
		{ "s16", 2 }, { "__u16", 2 }, { "__s16", 2 }, { "__be16", 2 },
		{ "__le16", 2 }, { "int", 4 }, { "unsigned int", 4 },
		{ "unsigned", 4 }, { "u32", 4 }, { "s32", 4 }, { "__u32", 4 },
		{ "__s32", 4 }, { "__be32", 4 }, { "__le32", 4 },
		{ "long", sizeof(long) }, { "unsigned long", sizeof(long) },
		{ "long long", 8 }, { "unsigned long long", 8 }, { "u64", 8 },
		{ "s64", 8 }, { "__u64", 8 }, { "__s64", 8 }, { "__be64", 8 },
		{ "__le64", 8 },
	};
	size_t i;

	if (starts(t, "const "))
		t += 6;
	for (i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		if (!strcmp(ts[i].t, t))
			return ts[i].n;
	return 0;
}

static bool is_char_type(const char *t)
{
	return !strcmp(t, "char") || !strcmp(t, "const char");
}

static void set_int(struct pbt_tpf *f, bool is_signed)
{
	f->kind = PBTRACE_TPF_INT;
	f->is_signed = is_signed;
	f->proto_type = is_signed ? PBT_PB_TYPE_INT64 : PBT_PB_TYPE_UINT64;
}

/* type name[count] of ints: repeated ints, else its bytes. */
static void set_array(struct pbt_tpf *f, const struct decl *d, bool is_signed)
{
	unsigned long n = 0, elem = 0;
	char *end;

	if (is_char_type(d->type)) {
		f->kind = PBTRACE_TPF_CHARS;
		f->proto_type = PBT_PB_TYPE_STRING;
		return;
	}
	errno = 0;
	if (d->count[0])
		n = strtoul(d->count, &end, 0);
	if (n && !errno && !*end && f->size % n == 0)
		elem = f->size / n;
	else
		elem = type_size(d->type);
	if (f->size && (elem == 1 || elem == 2 || elem == 4 || elem == 8) &&
	    f->size % elem == 0) {
		f->kind = PBTRACE_TPF_ARRAY;
		f->elem_size = (uint8_t)elem;
		f->is_signed = is_signed;
		f->proto_type = is_signed ? PBT_PB_TYPE_INT64 : PBT_PB_TYPE_UINT64;
		return;
	}
	f->kind = PBTRACE_TPF_BYTES;
	f->proto_type = PBT_PB_TYPE_BYTES;
}

/* __data_loc / __rel_loc: a u32 (len << 16 | offset) to the data. */
static void set_loc(struct pbt_tpf *f, const char *t, bool rel)
{
	bool str;

	t += rel ? strlen("__rel_loc ") : strlen("__data_loc ");
	str = !strcmp(t, "char[]") || !strcmp(t, "const char[]");
	if (f->size != 4) {
		f->kind = PBTRACE_TPF_BYTES;
		f->proto_type = PBT_PB_TYPE_BYTES;
		return;
	}
	if (rel)
		f->kind = str ? PBTRACE_TPF_REL_LOC_STR : PBTRACE_TPF_REL_LOC_BYTES;
	else
		f->kind = str ? PBTRACE_TPF_DATA_LOC_STR : PBTRACE_TPF_DATA_LOC_BYTES;
	f->proto_type = str ? PBT_PB_TYPE_STRING : PBT_PB_TYPE_BYTES;
}

/* Kind and proto type from the type text, size and signedness. */
static void set_kind(struct pbt_tpf *f, const struct decl *d, bool is_signed)
{
	const char *t = d->type;

	if (starts(t, "__data_loc ") || starts(t, "__rel_loc "))
		set_loc(f, t, starts(t, "__rel_loc "));
	else if (d->array)
		set_array(f, d, is_signed);
	else if (strchr(t, '*') || !strcmp(t, "bool") || !strcmp(t, "_Bool"))
		set_int(f, false);
	else if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)
		set_int(f, is_signed);
	else {
		f->kind = PBTRACE_TPF_BYTES;
		f->proto_type = PBT_PB_TYPE_BYTES;
	}
}

/* One "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" line. */
static int parse_field(struct parse *p, const char *line)
{
	const char *decl = strstr(line, "field:") + strlen("field:");
	const char *semi = strchr(decl, ';');
	unsigned long off, size, sig;
	struct pbt_tpf *f;
	struct decl d;

	if (!semi)
		return perr(p, "no ';' after the field's declaration");
	while (*decl == ' ' || *decl == '\t')
		decl++;
	if (semi < decl || !split_decl(decl, (size_t)(semi - decl), &d))
		return perr(p, "cannot tell the field's type and name in \"%.*s\"",
			    (int)(semi > decl ? semi - decl : 0), decl);
	if (!field_num(semi, "offset:", UINT16_MAX, &off) ||
	    !field_num(semi, "size:", UINT16_MAX, &size) ||
	    !field_num(semi, "signed:", 1, &sig) || off + size > UINT16_MAX)
		return perr(p, "field %s: no valid offset:, size: and signed: (each a number, offset + size < 65536)",
			    d.name);
	if (d.name_too_long || p->l->nr_fields >= PBTRACE_TP_MAX_FIELDS) {
		list_add(p->dropped, sizeof(p->dropped), d.name);
		return 0;
	}
	f = &p->l->fields[p->l->nr_fields++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", d.name);
	f->offset = (uint16_t)off;
	f->size = (uint16_t)size;
	set_kind(f, &d, sig);
	if (starts(d.name, "common_"))
		f->proto_id = 0;
	else if (p->next_id <= PBTRACE_TP_MAX_PROTO_ID)
		f->proto_id = p->next_id++;
	else
		list_add(p->unwritten, sizeof(p->unwritten), d.name);
	return 0;
}

static void warnings(struct parse *p)
{
	size_t n = 0;

	p->err[0] = '\0';
	if (p->unwritten[0])
		n = (size_t)snprintf(p->err, p->errlen,
				     "%s/%s: fields after the first %d are not written (trace_processor reads field numbers below %d): %s",
				     p->group, p->name, PBTRACE_TP_MAX_PROTO_ID,
				     PBTRACE_TP_MAX_PROTO_ID + 1, p->unwritten);
	if (p->dropped[0] && n < p->errlen)
		snprintf(p->err + n, p->errlen - n,
			 "%s%s/%s: fields beyond pbtrace's %d (or with names of %d characters or more) are neither written nor filterable: %s",
			 n ? "; " : "", p->group, p->name, PBTRACE_TP_MAX_FIELDS,
			 PBT_TPF_NAME_MAX, p->dropped);
}

/* One line (NUL-terminated, no '\n'). 1: "print fmt:" ends the fields. */
static int parse_line(struct parse *p, const char *line, long *id, bool *in_format)
{
	const char *s = line;
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (starts(s, "print fmt:"))
		return 1;
	if (*in_format && starts(s, "field:"))
		return parse_field(p, s);
	if (starts(s, "format:")) {
		*in_format = true;
	} else if (starts(s, "ID:")) {
		errno = 0;
		*id = strtol(s + 3, &end, 10);
		if (errno || *id < 0 || *id > INT32_MAX || end == s + 3)
			return perr(p, "ID is not a number: \"%.40s\"", s + 3);
	} else if (starts(s, "name:")) {
		s += 5;
		while (*s == ' ')
			s++;
		if (strcmp(s, p->name))
			return perr(p, "the file names event \"%.64s\", not %s",
				    s, p->name);
	} else if (*s && !*in_format) {
		return perr(p, "unexpected \"%.40s\" (expected name:, ID: or format:)", s);
	}
	return 0;
}

static int parse_lines(struct parse *p, char *text, long *id)
{
	bool in_format = false;
	char *line = text, *nl;
	int r = 0;

	while (line && *line && !r) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		p->line++;
		r = parse_line(p, line, id, &in_format);
		line = nl ? nl + 1 : NULL;
	}
	if (r < 0)
		return r;
	if (*id < 0)
		return perr(p, "no \"ID:\" line: not a tracefs format file");
	if (!p->l->nr_fields)
		return perr(p, "no fields: not a tracefs format file");
	return 0;
}

int pbt_tracefs_parse(const char *text, size_t len, const char *group,
		      const char *name, struct pbt_tp_layout *l,
		      char *err, size_t errlen)
{
	struct parse p = {
		.l = l, .group = group, .name = name, .err = err,
		.errlen = errlen, .next_id = 1,
	};
	long id = -1;
	char *copy;
	int r;

	memset(l, 0, sizeof(*l));
	if (strlen(group) >= sizeof(l->group) || strlen(name) >= sizeof(l->name)) {
		snprintf(err, errlen, "%s/%s: names are at most %zu characters",
			 group, name, sizeof(l->name) - 1);
		return -EINVAL;
	}
	snprintf(l->group, sizeof(l->group), "%s", group);
	snprintf(l->name, sizeof(l->name), "%s", name);
	copy = strndup(text, len);
	if (!copy) {
		snprintf(err, errlen, "parsing events/%s/%s/format: out of memory",
			 group, name);
		return -ENOMEM;
	}
	r = parse_lines(&p, copy, &id);
	free(copy);
	if (r < 0) {
		memset(l, 0, sizeof(*l));
		return r;
	}
	warnings(&p);
	return (int)id;
}

static bool name_ok(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

int pbt_tracefs_layout(const char *group, const char *name,
		       struct pbt_tp_layout *l, char *err, size_t errlen)
{
	const char *dir = pbt_tracefs_dir(err, errlen);
	char path[4096], *text;
	size_t len;
	int r;

	if (!dir)
		return -ENOENT;
	if (!name_ok(group) || !name_ok(name)) {
		snprintf(err, errlen, "\"%s/%s\" is not a tracepoint name (\"group/name\")",
			 group, name);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, group, name);
	text = read_file(path, &len, err, errlen);
	if (!text && errno == ENOENT) {
		snprintf(err, errlen, "this kernel has no tracepoint %s/%s (no %s): 'tracectl list-events' lists the ones it has",
			 group, name, path);
		return -ENOENT;
	}
	if (!text)
		return -errno;
	r = pbt_tracefs_parse(text, len, group, name, l, err, errlen);
	free(text);
	return r;
}

int pbt_tracefs_split(const char *event, char *group, char *name)
{
	size_t g = strcspn(event, "/:");
	const char *n = event + g + 1;

	if (!event[g] || !g || g >= PBTRACE_NAME_MAX || !*n ||
	    strlen(n) >= PBTRACE_NAME_MAX || strpbrk(n, "/:"))
		return -EINVAL;
	memcpy(group, event, g);
	group[g] = '\0';
	strcpy(name, n);
	return 0;
}

int pbt_tracefs_list(int (*cb)(const char *group, const char *name, void *arg),
		     void *arg, char *err, size_t errlen)
{
	const char *dir = pbt_tracefs_dir(err, errlen);
	char path[4096], group[PBTRACE_NAME_MAX], name[PBTRACE_NAME_MAX];
	char *text, *line, *nl;
	size_t len;
	int r = 0;

	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/available_events", dir);
	text = read_file(path, &len, err, errlen);
	if (!text)
		return -errno;
	for (line = text; line && *line && !r; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!pbt_tracefs_split(line, group, name))
			r = cb(group, name, arg);
	}
	free(text);
	return r;
}
