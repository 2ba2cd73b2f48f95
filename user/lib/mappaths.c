// SPDX-License-Identifier: GPL-2.0
/*
 * Identity names of mappings to paths (mappaths.h). A wire-format walk,
 * not a decode and re-encode: only the messages on the way to a
 * mapping_paths string are rebuilt (their lengths change), every other
 * field is copied byte for byte, unknown ones included.
 */
#define _GNU_SOURCE		/* memmem */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mappaths.h"
#include "pbread.h"

/* Field numbers (proto/trace.proto). */
#define F_TRACE_PACKET 1		/* Trace.packet */
#define F_INTERNED_DATA 12		/* TracePacket.interned_data */
#define F_MAPPING_PATHS 17		/* InternedData.mapping_paths */
#define F_STR 2				/* InternedString.str */

#define MARK "[inode "
#define PATH_BUF 4096			/* PATH_MAX */

struct obuf {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

struct walk {
	pbt_path_fn fn;
	void *ctx;
	struct pbt_path_stats *st;
	unsigned int resolved;
};

static void put(struct obuf *o, const void *p, size_t n)
{
	uint8_t *q;
	size_t cap;

	if (o->oom || !n)
		return;
	if (o->len + n > o->cap) {
		cap = o->cap ? o->cap : 256;
		while (cap < o->len + n)
			cap *= 2;
		q = realloc(o->p, cap);
		if (!q) {
			o->oom = 1;
			return;
		}
		o->p = q;
		o->cap = cap;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

static void put_varint(struct obuf *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	put(o, b, n);
}

static void put_len_field(struct obuf *o, uint32_t num, const void *p,
			  size_t n)
{
	put_varint(o, (uint64_t)num << 3 | PBR_LEN);
	put_varint(o, n);
	put(o, p, n);
}

int pbt_mapping_id_parse(const uint8_t *s, size_t len, uint32_t *major,
			 uint32_t *minor, uint64_t *ino)
{
	char buf[80], again[80];
	unsigned long long i;
	unsigned int ma, mi;

	if (len >= sizeof(buf) || len < sizeof(MARK) - 1 ||
	    memcmp(s, MARK, sizeof(MARK) - 1))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (sscanf(buf, "[inode %llu dev %x:%x]", &i, &ma, &mi) != 3)
		return 0;
	/* Exactly the kernel's text: nothing before, between or after. */
	snprintf(again, sizeof(again), PBT_MAPPING_ID_FMT, i, ma, mi);
	if (strcmp(buf, again))
		return 0;
	*major = ma;
	*minor = mi;
	*ino = i;
	return 1;
}

typedef int (*level_fn)(struct walk *w, const uint8_t *in, size_t len,
			struct obuf *o);

/*
 * Copy the message at @in to @o, field by field; LEN field @num goes
 * through @down (a message rebuilt), rebuilt with its new length.
 */
static int rebuild(struct walk *w, const uint8_t *in, size_t len,
		   struct obuf *o, uint32_t num, level_fn down)
{
	struct pbr r = pbr_init(in, in + len);
	struct pbr_field f;

	while (pbr_more(&r)) {
		if (!pbr_field_any(&r, &f))
			return -1;
		if (f.num == num && f.wire == PBR_LEN &&
		    memmem(f.body, (size_t)(f.body_end - f.body), MARK,
			   sizeof(MARK) - 1)) {
			struct obuf sub = { 0 };
			int ret = down(w, f.body, (size_t)(f.body_end - f.body),
				       &sub);

			if (!ret)
				put_len_field(o, num, sub.p, sub.len);
			o->oom |= sub.oom;
			free(sub.p);
			if (ret)
				return ret;
		} else {
			put(o, f.at, (size_t)(r.p - f.at));
		}
	}
	return o->oom ? -1 : 0;
}

/* InternedString: its str, if an identity name @fn has the path of. */
static int do_string(struct walk *w, const uint8_t *in, size_t len,
		     struct obuf *o)
{
	struct pbr r = pbr_init(in, in + len);
	char path[PATH_BUF];
	struct pbr_field f;
	uint32_t ma, mi;
	uint64_t ino;

	while (pbr_more(&r)) {
		if (!pbr_field_any(&r, &f))
			return -1;
		if (f.num == F_STR && f.wire == PBR_LEN &&
		    pbt_mapping_id_parse(f.body, (size_t)(f.body_end - f.body),
					 &ma, &mi, &ino)) {
			if (!w->fn(w->ctx, ma, mi, ino, path, sizeof(path))) {
				put_len_field(o, F_STR, path, strlen(path));
				w->resolved++;
				continue;
			}
			w->st->unresolved++;
		}
		put(o, f.at, (size_t)(r.p - f.at));
	}
	return o->oom ? -1 : 0;
}

static int do_interned(struct walk *w, const uint8_t *in, size_t len,
		       struct obuf *o)
{
	return rebuild(w, in, len, o, F_MAPPING_PATHS, do_string);
}

static int do_packet(struct walk *w, const uint8_t *in, size_t len,
		     struct obuf *o)
{
	return rebuild(w, in, len, o, F_INTERNED_DATA, do_interned);
}

int pbt_mapping_paths_rewrite(const uint8_t *in, size_t len, pbt_path_fn fn,
			      void *ctx, uint8_t **out, size_t *out_len,
			      struct pbt_path_stats *st)
{
	struct walk w = { .fn = fn, .ctx = ctx, .st = st };
	struct obuf o = { 0 };
	int ret;

	*out = NULL;
	*out_len = 0;
	if (!memmem(in, len, MARK, sizeof(MARK) - 1))
		return 0;
	ret = rebuild(&w, in, len, &o, F_TRACE_PACKET, do_packet);
	if (ret || !w.resolved) {
		free(o.p);
		return ret ? -1 : 0;
	}
	st->resolved += w.resolved;
	*out = o.p;
	*out_len = o.len;
	return 1;
}
