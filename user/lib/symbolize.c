// SPDX-License-Identifier: GPL-2.0
/*
 * ModuleSymbols for a trace's user frames (symbolize.h). trace_processor
 * finds a ModuleSymbols' mappings by path and build id (FindMappings: the
 * kernel writes no build id, so neither does this) and its frames by
 * address == rel_pc, so one AddressSymbols per distinct rel_pc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"
#include "symbolize.h"
#include "trace_file.h"

#define MAX_IID (1u << 20)	/* the kernel's tables are far smaller */
#define NAME_MAX_LEN 256

/* One sequence's interned paths and mappings (this generation's). */
struct seq {
	uint64_t key;		/* machine_id << 32 | sequence id */
	char **paths;		/* [iid] */
	uint32_t *map_path;	/* [mapping iid] -> path iid */
	size_t npaths, nmaps;
};

struct module {
	char *path;
	uint64_t *pcs;
	size_t n, cap;
	int done;		/* the file has its ModuleSymbols already */
};

struct symctx {
	struct seq *seqs;
	size_t nseqs;
	struct module *mods;
	size_t nmods;
	uint64_t max_ts;
	int oom;
};

static void seq_clear(struct seq *q)
{
	size_t i;

	for (i = 0; i < q->npaths; i++)
		free(q->paths[i]);
	free(q->paths);
	free(q->map_path);
	q->paths = NULL;
	q->map_path = NULL;
	q->npaths = q->nmaps = 0;
}

static struct seq *seq_of(struct symctx *c, uint64_t key)
{
	struct seq *q;
	size_t i;

	for (i = 0; i < c->nseqs; i++)
		if (c->seqs[i].key == key)
			return &c->seqs[i];
	q = realloc(c->seqs, (c->nseqs + 1) * sizeof(*q));
	if (!q)
		return NULL;
	c->seqs = q;
	q = &c->seqs[c->nseqs++];
	memset(q, 0, sizeof(*q));
	q->key = key;
	return q;
}

/* Grow @arr (of @size-byte items, *@n of them) to hold index @i. */
static int grow(void **arr, size_t *n, size_t size, uint64_t i)
{
	void *p;

	if (i < *n)
		return 0;
	if (i >= MAX_IID)
		return -1;
	p = realloc(*arr, (size_t)(i + 1) * size);
	if (!p)
		return -1;
	memset((char *)p + *n * size, 0, (size_t)(i + 1 - *n) * size);
	*arr = p;
	*n = (size_t)i + 1;
	return 0;
}

static struct module *module_of(struct symctx *c, const char *path)
{
	struct module *m;
	size_t i;

	for (i = 0; i < c->nmods; i++)
		if (!strcmp(c->mods[i].path, path))
			return &c->mods[i];
	m = realloc(c->mods, (c->nmods + 1) * sizeof(*m));
	if (!m)
		return NULL;
	c->mods = m;
	m = &c->mods[c->nmods];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return NULL;
	c->nmods++;
	return m;
}

static int add_pc(struct module *m, uint64_t pc)
{
	uint64_t *p;

	if (m->n == m->cap) {
		p = realloc(m->pcs, (m->cap ? m->cap * 2 : 16) * sizeof(*p));
		if (!p)
			return -1;
		m->pcs = p;
		m->cap = m->cap ? m->cap * 2 : 16;
	}
	m->pcs[m->n++] = pc;
	return 0;
}

static void add_paths(struct seq *q, const Perfetto__Protos__InternedData *d)
{
	size_t i;

	for (i = 0; i < d->n_mapping_paths; i++) {
		const Perfetto__Protos__InternedString *s = d->mapping_paths[i];
		char *str;

		if (!s->has_iid || !s->has_str ||
		    grow((void **)&q->paths, &q->npaths, sizeof(char *), s->iid))
			continue;
		str = strndup((const char *)s->str.data, s->str.len);
		if (!str)
			continue;
		free(q->paths[s->iid]);
		q->paths[s->iid] = str;
	}
	for (i = 0; i < d->n_mappings; i++) {
		const Perfetto__Protos__Mapping *m = d->mappings[i];

		if (!m->has_iid || !m->n_path_string_ids ||
		    m->path_string_ids[0] >= MAX_IID ||
		    grow((void **)&q->map_path, &q->nmaps, sizeof(uint32_t), m->iid))
			continue;
		q->map_path[m->iid] = (uint32_t)m->path_string_ids[0];
	}
}

static const char *frame_path(const struct seq *q, uint64_t mapping)
{
	uint32_t p;

	if (mapping >= q->nmaps)
		return NULL;
	p = q->map_path[mapping];
	return p && p < q->npaths ? q->paths[p] : NULL;
}

static void add_frames(struct symctx *c, struct seq *q,
		       const Perfetto__Protos__InternedData *d)
{
	struct module *m;
	const char *path;
	size_t i;

	for (i = 0; i < d->n_frames; i++) {
		const Perfetto__Protos__Frame *f = d->frames[i];

		if (!f->has_mapping_id || !f->has_rel_pc)
			continue;
		path = frame_path(q, f->mapping_id);
		if (!path || path[0] != '/')
			continue;	/* the kernel, [anon], unknown */
		m = module_of(c, path);
		if (!m || add_pc(m, f->rel_pc))
			c->oom = 1;
	}
}

static void read_packet(struct symctx *c, const Perfetto__Protos__TracePacket *p)
{
	uint64_t key = (uint64_t)p->machine_id << 32 |
		       p->trusted_packet_sequence_id;
	struct module *m;
	struct seq *q;

	if (p->has_timestamp && p->timestamp > c->max_ts)
		c->max_ts = p->timestamp;
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_MODULE_SYMBOLS &&
	    p->module_symbols->path) {
		m = module_of(c, p->module_symbols->path);
		if (m)
			m->done = 1;
		else
			c->oom = 1;
	}
	if (!p->interned_data && !(p->sequence_flags & 1))
		return;
	q = seq_of(c, key);
	if (!q) {
		c->oom = 1;
		return;
	}
	/* SEQ_INCREMENTAL_STATE_CLEARED: iids start again. */
	if (p->sequence_flags & 1)
		seq_clear(q);
	if (p->interned_data) {
		add_paths(q, p->interned_data);
		add_frames(c, q, p->interned_data);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Append one Trace.packet record of @pkt to *out. */
static int append_record(uint8_t **out, size_t *out_len,
			 const Perfetto__Protos__TracePacket *pkt)
{
	size_t n = perfetto__protos__trace_packet__get_packed_size(pkt), hdr = 1;
	uint8_t *p, *q;
	size_t v;

	for (v = n; v >= 0x80; v >>= 7)
		hdr++;
	p = realloc(*out, *out_len + 1 + hdr + n);
	if (!p)
		return -1;
	*out = p;
	q = p + *out_len;
	*q++ = 0x0a;
	for (v = n; v >= 0x80; v >>= 7)
		*q++ = (uint8_t)(v | 0x80);
	*q++ = (uint8_t)v;
	perfetto__protos__trace_packet__pack(pkt, q);
	*out_len += 1 + hdr + n;
	return 0;
}

struct named {
	Perfetto__Protos__AddressSymbols as;
	Perfetto__Protos__Line line;
	Perfetto__Protos__Line *lines[1];
	char name[NAME_MAX_LEN];
};

/* @m's ModuleSymbols from the ELF image @elf, appended to *out. */
static int module_packet(struct symctx *c, struct module *m, const uint8_t *elf,
			 size_t elf_len, uint8_t **out, size_t *out_len,
			 struct pbt_sym_stats *st)
{
	Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ModuleSymbols ms = PERFETTO__PROTOS__MODULE_SYMBOLS__INIT;
	Perfetto__Protos__AddressSymbols **list;
	struct named *nm;
	size_t i, k = 0;
	int ret = 0;

	nm = calloc(m->n, sizeof(*nm));
	list = calloc(m->n, sizeof(*list));
	if (!nm || !list) {
		ret = -1;
		goto out;
	}
	for (i = 0; i < m->n; i++) {
		struct named *e = &nm[k];

		if (pbt_elf_function(elf, elf_len, m->pcs[i], e->name,
				     sizeof(e->name)) != 1)
			continue;
		perfetto__protos__address_symbols__init(&e->as);
		perfetto__protos__line__init(&e->line);
		e->as.has_address = 1;
		e->as.address = m->pcs[i];
		e->line.function_name = e->name;
		e->lines[0] = &e->line;
		e->as.n_lines = 1;
		e->as.lines = e->lines;
		list[k++] = &e->as;
	}
	st->named += k;
	if (!k)
		goto out;
	ms.path = m->path;
	ms.n_address_symbols = k;
	ms.address_symbols = list;
	pkt.has_timestamp = 1;
	pkt.timestamp = c->max_ts + 1;
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_MODULE_SYMBOLS;
	pkt.module_symbols = &ms;
	ret = append_record(out, out_len, &pkt);
out:
	free(nm);
	free(list);
	return ret;
}

void *pbt_file_bytes(int fd, size_t len, int *mapped)
{
	size_t got = 0;
	uint8_t *p;
	ssize_t n;

	*mapped = 0;
	if (!len) {
		errno = EINVAL;
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p != MAP_FAILED) {
		*mapped = 1;
		return p;
	}
	p = malloc(len);
	while (p && got < len) {
		n = pread(fd, p + got, len - got, (off_t)got);
		if (n <= 0) {
			if (!n)
				errno = EIO;	/* shorter than it said */
			if (n < 0 && errno == EINTR)
				continue;
			free(p);
			return NULL;
		}
		got += (size_t)n;
	}
	return p;
}

void pbt_file_bytes_free(void *p, size_t len, int mapped)
{
	if (mapped)
		munmap(p, len);
	else
		free(p);
}

static int symbolize_module(struct symctx *c, struct module *m, uint8_t **out,
			    size_t *out_len, struct pbt_sym_stats *st)
{
	int fd, ret, mapped;
	struct stat sb;
	void *elf;
	size_t i, k;

	qsort(m->pcs, m->n, sizeof(*m->pcs), cmp_u64);
	for (i = k = 0; i < m->n; i++)
		if (!k || m->pcs[i] != m->pcs[k - 1])
			m->pcs[k++] = m->pcs[i];
	m->n = k;
	st->modules++;
	st->frames += k;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode) || !sb.st_size) {
		if (fd >= 0)
			close(fd);
		st->unreadable++;
		return 0;
	}
	elf = pbt_file_bytes(fd, (size_t)sb.st_size, &mapped);
	close(fd);
	if (!elf) {
		st->unreadable++;
		return 0;
	}
	ret = module_packet(c, m, elf, (size_t)sb.st_size, out, out_len, st);
	pbt_file_bytes_free(elf, (size_t)sb.st_size, mapped);
	return ret;
}

static void ctx_free(struct symctx *c)
{
	size_t i;

	for (i = 0; i < c->nseqs; i++)
		seq_clear(&c->seqs[i]);
	free(c->seqs);
	for (i = 0; i < c->nmods; i++) {
		free(c->mods[i].path);
		free(c->mods[i].pcs);
	}
	free(c->mods);
}

int pbt_symbolize(const uint8_t *data, size_t len, uint8_t **out,
		  size_t *out_len, struct pbt_sym_stats *st, char *err,
		  size_t errlen)
{
	Perfetto__Protos__TracePacket *pkt;
	struct symctx c = { 0 };
	const uint8_t *p = data, *end = data + len;
	size_t i;
	int ret;

	*out = NULL;
	*out_len = 0;
	memset(st, 0, sizeof(*st));
	while ((ret = trace_next_packet(&p, end, &pkt)) == 1) {
		read_packet(&c, pkt);
		perfetto__protos__trace_packet__free_unpacked(pkt, NULL);
	}
	if (ret < 0 || p != end) {
		snprintf(err, errlen,
			 "byte %zu is no whole Trace.packet record: is this a trace file (a .pftrace)?",
			 (size_t)(p - data));
		ctx_free(&c);
		return -1;
	}
	for (i = 0; i < c.nmods && !c.oom; i++)
		if (!c.mods[i].done &&
		    symbolize_module(&c, &c.mods[i], out, out_len, st))
			c.oom = 1;
	ctx_free(&c);
	if (c.oom) {
		snprintf(err, errlen, "out of memory reading the trace's frames");
		free(*out);
		*out = NULL;
		*out_len = 0;
		return -1;
	}
	return 0;
}
