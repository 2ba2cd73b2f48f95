// SPDX-License-Identifier: GPL-2.0
/*
 * Event names -> native events and tracepoints by layout
 * (tracepoints.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "tracefs.h"
#include "tracepoints.h"

#define LIST_HINT "'tracectl list-events' lists the tracepoints this kernel has"

/* What one buffer's events become; swapped in when all are resolved. */
struct out {
	const char *events[PBT_MAX_EVENTS];
	size_t nr_events;
	char (*names)[PBTRACE_NAME_MAX];	/* events[] point here */
	struct pbt_tp_spec *tps;
	struct pbt_tp_layout *layouts;	/* tps[i].layout, set at the end */
	size_t nr_tps, cap_tps;
};

struct ctx {
	struct out out[PBTRACE_MAX_BUFFERS];
	size_t nr_out, total_tps;
	uint32_t next_generic;
	int (*native)(const char *name, void *arg);
	void (*warn)(const char *line, void *arg);
	void *arg;
	char *err;
	size_t errlen;
	/* the glob being expanded, and its filter */
	struct out *o;
	const char *glob, *pattern, *filter;
	size_t matched;
};

int pbt_event_is_glob(const char *name)
{
	return strpbrk(name, "*?[") != NULL;
}

static int add_native(struct ctx *c, struct out *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->nr_events; i++)
		if (!strcmp(o->events[i], name))
			return 0;
	if (o->nr_events == PBT_MAX_EVENTS) {
		snprintf(c->err, c->errlen, "more than %d natively encoded events in one buffer (at %s): split them over two buffers",
			 PBT_MAX_EVENTS, name);
		return -EINVAL;
	}
	if (!o->names) {
		o->names = calloc(PBT_MAX_EVENTS, sizeof(*o->names));
		if (!o->names) {
			snprintf(c->err, c->errlen, "resolving events: out of memory");
			return -ENOMEM;
		}
	}
	if (strlen(name) >= PBTRACE_NAME_MAX) {
		snprintf(c->err, c->errlen, "event name '%s' is longer than %d characters",
			 name, PBTRACE_NAME_MAX - 1);
		return -EINVAL;
	}
	memcpy(o->names[o->nr_events], name, strlen(name) + 1);
	o->events[o->nr_events] = o->names[o->nr_events];
	o->nr_events++;
	return 0;
}

static const struct pbt_tp_layout *find_tp(const struct out *o, const char *g,
					 const char *n)
{
	size_t i;

	for (i = 0; i < o->nr_tps; i++)
		if (!strcmp(o->layouts[i].group, g) &&
		    !strcmp(o->layouts[i].name, n))
			return &o->layouts[i];
	return NULL;
}

/* The same event in two buffers is written as the same FtraceEvent field. */
static uint32_t generic_id(struct ctx *c, const char *g, const char *n)
{
	const struct pbt_tp_layout *l;
	size_t b;

	for (b = 0; b < c->nr_out; b++) {
		l = find_tp(&c->out[b], g, n);
		if (l)
			return l->proto_id;
	}
	return PBTRACE_TP_GENERIC_PROTO_BASE + c->next_generic++;
}

static int grow_tps(struct ctx *c, struct out *o)
{
	struct pbt_tp_layout *l;
	struct pbt_tp_spec *t;
	size_t cap = o->cap_tps ? o->cap_tps * 2 : 8;

	if (o->nr_tps < o->cap_tps)
		return 0;
	t = realloc(o->tps, cap * sizeof(*t));
	if (t)
		o->tps = t;
	l = t ? realloc(o->layouts, cap * sizeof(*l)) : NULL;
	if (!l) {
		snprintf(c->err, c->errlen, "resolving events: out of memory");
		return -ENOMEM;
	}
	o->layouts = l;
	o->cap_tps = cap;
	return 0;
}

/* The expression as typed, and a caret under byte pos, after err's line. */
static void caret(char *err, size_t errlen, const char *expr, int pos)
{
	size_t n = strlen(err), len = strlen(expr), i;

	if (n + 2 * len + 8 > errlen || pos < 0 || (size_t)pos > len)
		return;
	n += sprintf(err + n, "\n  ");
	for (i = 0; i < len; i++)	/* one column a byte, as pos counts */
		err[n++] = expr[i] == '\t' || expr[i] == '\n' ? ' ' : expr[i];
	n += sprintf(err + n, "\n  %*s^", pos, "");
}

/* The kernel's compiler (kmod/core/filter.c) on the layout it will get. */
static int check_filter(struct ctx *c, const struct pbt_tp_layout *l,
			const char *expr)
{
	struct pbt_filter_prog *prog = malloc(sizeof(*prog));
	struct pbt_filter_err fe;
	int r;

	if (!prog) {
		snprintf(c->err, c->errlen, "resolving events: out of memory");
		return -ENOMEM;
	}
	r = pbt_filter_compile(expr, l, prog, &fe);
	free(prog);
	if (!r)
		return 0;
	snprintf(c->err, c->errlen, "%s/%s: bad filter: position %d: %s",
		 l->group, l->name, fe.pos, fe.msg);
	caret(c->err, c->errlen, expr, fe.pos);
	return -EINVAL;
}

static int same_filter(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* @native: the module encodes it, but a filter needs the generic path. */
static int add_tp(struct ctx *c, struct out *o, const char *g, const char *n,
		  const char *filter, int native)
{
	const struct pbt_tp_layout *had = find_tp(o, g, n);
	struct pbt_tp_layout *l;
	struct pbt_tp_spec *t;
	int id, r;

	if (had && !same_filter(o->tps[had - o->layouts].filter, filter)) {
		snprintf(c->err, c->errlen, "%s/%s is asked for twice with different filters: give it once, the filters joined with ||",
			 g, n);
		return -EINVAL;
	}
	if (had)
		return 0;
	if (c->total_tps == PBTRACE_MAX_TRACEPOINTS) {
		snprintf(c->err, c->errlen, "more than %d tracepoints in the session (at %s/%s): ask for fewer (a narrower glob)",
			 PBTRACE_MAX_TRACEPOINTS, g, n);
		return -EINVAL;
	}
	r = grow_tps(c, o);
	if (r)
		return r;
	t = &o->tps[o->nr_tps];
	l = &o->layouts[o->nr_tps];
	memset(t, 0, sizeof(*t));
	id = pbt_tracefs_layout(g, n, l, c->err, c->errlen);
	if (id < 0)
		return id;
	if (c->err[0] && c->warn)
		c->warn(c->err, c->arg);
	c->err[0] = '\0';
	/*
	 * The kernel takes ids below the generic base from root only (a
	 * member's layout could pose as one of Perfetto's own messages), so a
	 * member's events are written as generic ones, which trace_processor
	 * reads by their descriptors all the same.
	 */
	if (!(native && geteuid() == 0 && pbt_tp_native_ids(l) == 1))
		l->proto_id = generic_id(c, g, n);
	if (filter) {
		r = check_filter(c, l, filter);
		if (r)
			return r;
	}
	t->id = (uint32_t)id;
	t->flags = PBTRACE_TP_FTRACE;
	t->filter = filter;
	o->nr_tps++;
	c->total_tps++;
	return 0;
}

/* One "group/name" of this kernel: native or by layout. */
static int add_event(struct ctx *c, struct out *o, const char *g, const char *n,
		     const char *given, const char *filter)
{
	char full[2 * PBTRACE_NAME_MAX];
	int st, r;

	snprintf(full, sizeof(full), "%s/%s", g, n);
	st = c->native(full, c->arg);
	if (st > 0 && !filter)
		return add_native(c, o, full);
	if (!st) {
		snprintf(c->err, c->errlen, "event '%s' is not available in this kernel (no such tracepoint): leave it out (%s)",
			 given, LIST_HINT);
		return -ENOENT;
	}
	r = add_tp(c, o, g, n, filter, st > 0);
	if (r == -ENOENT) {
		snprintf(c->err, c->errlen, "unknown event '%s': this kernel has no tracepoint %s; %s",
			 given, full, LIST_HINT);
	}
	return r;
}

static int glob_one(const char *g, const char *n, void *arg)
{
	struct ctx *c = arg;
	char full[2 * PBTRACE_NAME_MAX];

	snprintf(full, sizeof(full), "%s/%s", g, n);
	if (fnmatch(c->pattern, full, 0))
		return 0;
	c->matched++;
	return add_event(c, c->o, g, n, c->glob, c->filter);
}

static int add_glob(struct ctx *c, struct out *o, const char *glob,
		    const char *filter)
{
	char pattern[PBTRACE_NAME_MAX];
	size_t sep;
	int r;

	snprintf(pattern, sizeof(pattern), "%s", glob);
	sep = strcspn(pattern, "/:");
	if (pattern[sep])
		pattern[sep] = '/';
	c->o = o;
	c->glob = glob;
	c->filter = filter;
	c->pattern = pattern;
	c->matched = 0;
	r = pbt_tracefs_list(glob_one, c, c->err, c->errlen);
	if (!r && !c->matched) {
		snprintf(c->err, c->errlen, "'%s' matches no tracepoint of this kernel; %s",
			 glob, LIST_HINT);
		return -ENOENT;
	}
	return r;
}

/*
 * A linux.perf source's tracepoint: its flags, period and filter join the
 * tracepoint's PBTRACE_A_TP, or one is added that only samples (a native
 * event stays native: the perf counter samples, the probe writes it).
 */
static int add_sample(struct ctx *c, struct out *o,
		      const struct pbt_sample_spec *sm)
{
	char g[PBTRACE_NAME_MAX], n[PBTRACE_NAME_MAX];
	const struct pbt_tp_layout *l;
	struct pbt_tp_spec *t;
	int r;

	if (pbt_event_is_glob(sm->event) || pbt_tracefs_split(sm->event, g, n)) {
		snprintf(c->err, c->errlen, "linux.perf tracepoint '%s' is not \"group:name\" (one tracepoint, no glob); %s",
			 sm->event, LIST_HINT);
		return -EINVAL;
	}
	l = find_tp(o, g, n);
	if (!l) {
		r = add_tp(c, o, g, n, sm->filter, 0);
		if (r == -ENOENT)
			snprintf(c->err, c->errlen, "unknown linux.perf tracepoint '%s': this kernel has no tracepoint %s/%s; %s",
				 sm->event, g, n, LIST_HINT);
		if (r)
			return r;
		o->tps[o->nr_tps - 1].flags = 0;
		l = &o->layouts[o->nr_tps - 1];
	}
	t = &o->tps[l - o->layouts];
	if (sm->filter && t->filter && strcmp(sm->filter, t->filter)) {
		snprintf(c->err, c->errlen, "%s/%s has two filters (\"%s\", \"%s\"): the kernel keeps one per tracepoint and buffer; give both sources the same",
			 g, n, t->filter, sm->filter);
		return -EINVAL;
	}
	t->flags |= sm->flags;
	t->period = sm->period;
	if (sm->filter)
		t->filter = sm->filter;
	return 0;
}

static int resolve_buffer(struct ctx *c, const struct pbt_buffer_spec *b,
			  struct out *o)
{
	char g[PBTRACE_NAME_MAX], n[PBTRACE_NAME_MAX];
	size_t i;
	int r = 0;

	for (i = 0; i < b->nr_events && !r; i++) {
		const char *e = b->events[i];

		if (pbt_event_is_glob(e))
			r = add_glob(c, o, e, b->filters[i]);
		else if (pbt_tracefs_split(e, g, n)) {
			snprintf(c->err, c->errlen, "'%s' is not a tracepoint name: write it \"group/name\" (or group:name, or a glob such as 'tcp/*'); %s",
				 e, LIST_HINT);
			r = -EINVAL;
		} else {
			r = add_event(c, o, g, n, e, b->filters[i]);
		}
	}
	for (i = 0; i < b->nr_samples && !r; i++)
		r = add_sample(c, o, &b->samples[i]);
	return r;
}

static void free_out(struct out *o)
{
	free(o->names);
	free(o->tps);
	free(o->layouts);
}

/* Buffer b takes o's results; o's memory (in keep) hangs from
 * b->resolved. */
static void take(struct pbt_buffer_spec *b, struct out *o, struct out *keep)
{
	size_t i;

	*keep = *o;
	for (i = 0; i < keep->nr_tps; i++)
		keep->tps[i].layout = &keep->layouts[i];
	memcpy(b->events, keep->events, sizeof(keep->events));
	memset(b->filters, 0, sizeof(b->filters));	/* the tps have them */
	b->nr_events = keep->nr_events;
	b->tps = keep->tps;
	b->nr_tps = keep->nr_tps;
	b->resolved = keep;
}

static void free_resolved(struct pbt_buffer_spec *b)
{
	if (b->resolved) {
		free_out(b->resolved);
		free(b->resolved);
	}
	b->resolved = NULL;
	b->tps = NULL;
	b->nr_tps = 0;
}

int pbt_spec_resolve_events(struct pbt_session_spec *s,
			    int (*native)(const char *name, void *arg),
			    void (*warn)(const char *line, void *arg),
			    void *arg, char *err, size_t errlen)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct out *keep[PBTRACE_MAX_BUFFERS] = { NULL };
	size_t b, n = s->nr_buffers < PBTRACE_MAX_BUFFERS ? s->nr_buffers :
						      PBTRACE_MAX_BUFFERS;
	int r = c ? 0 : -ENOMEM;

	for (b = 0; b < n && !r; b++) {
		keep[b] = malloc(sizeof(*keep[b]));
		r = keep[b] ? 0 : -ENOMEM;
	}
	if (r) {
		for (b = 0; b < n; b++)
			free(keep[b]);
		free(c);
		snprintf(err, errlen, "resolving events: out of memory");
		return r;
	}
	c->native = native;
	c->warn = warn;
	c->arg = arg;
	c->err = err;
	c->errlen = errlen;
	err[0] = '\0';
	for (b = 0; b < n && !r; b++) {
		r = resolve_buffer(c, &s->buffers[b], &c->out[b]);
		c->nr_out = b + 1;
	}
	/* All or nothing: a failure leaves s as it was. */
	for (b = 0; b < n; b++) {
		if (r) {
			free_out(&c->out[b]);
			free(keep[b]);
			continue;
		}
		free_resolved(&s->buffers[b]);
		take(&s->buffers[b], &c->out[b], keep[b]);
	}
	free(c);
	return r;
}

void pbt_spec_resolved_free(struct pbt_session_spec *s)
{
	size_t b;

	for (b = 0; b < s->nr_buffers && b < PBTRACE_MAX_BUFFERS; b++)
		free_resolved(&s->buffers[b]);
}
