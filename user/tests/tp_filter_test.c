// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl's -e EVENT --filter EXPR as the spec the kernel gets
 * (user/lib/tracepoints.c), on the tracefs fixtures of 6.1 and 6.12:
 *  - a filtered event the module encodes natively goes to the tracepoints
 *    with Perfetto's own numbers and the filter; unfiltered ones stay;
 *  - a glob's filter goes onto every event it matches, and must compile
 *    for each (an event without the field is refused by name);
 *  - a bad filter is refused before the kernel is asked, with its
 *    position, the expression and a caret under it; the spec unchanged;
 *  - the same event twice with different filters is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tracefs.h"
#include "tracepoints.h"

#define FIX "tests/fixtures"

static const char *const kernels[] = { "tracefs-6.1", "tracefs-6.12" };

static int native(const char *name, void *arg)
{
	(void)arg;
	return !strcmp(name, "sched/sched_switch") ? 1 : -1;
}

static const struct pbt_tp_spec *tp(const struct pbt_buffer_spec *b,
				    const char *n)
{
	size_t i;

	for (i = 0; i < b->nr_tps; i++)
		if (!strcmp(b->tps[i].layout->name, n))
			return &b->tps[i];
	return NULL;
}

/* Buffer 0 gets ev[i] with filter f[i]. */
static int resolve(struct pbt_session_spec *s, const char *const *ev,
		   const char *const *f, size_t n, char *err, size_t len)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->nr_buffers = 1;
	for (i = 0; i < n; i++) {
		s->buffers[0].events[i] = ev[i];
		s->buffers[0].filters[i] = f[i];
	}
	s->buffers[0].nr_events = n;
	return pbt_spec_resolve_events(s, native, NULL, NULL, err, len);
}

static void test_filtered(const char *k)
{
	static const char *const ev[] = {
		"sched/sched_switch", "signal/*", "sched:sched_switch",
	};
	static const char *const f[] = {
		"prev_pid >= 42 && next_pid == 0", "sig == 9 || code != 0", NULL,
	};
	const struct pbt_tp_spec *sw, *gen, *del;
	struct pbt_session_spec s;
	char root[256], err[1024];
	int r;

	snprintf(root, sizeof(root), FIX "/%s", k);
	pbt_tracefs_set_root(root);
	r = resolve(&s, ev, f, 3, err, sizeof(err));
	sw = tp(&s.buffers[0], "sched_switch");
	gen = tp(&s.buffers[0], "signal_generate");
	del = tp(&s.buffers[0], "signal_deliver");
	tap(!r && sw && sw->filter == f[0] && sw->layout->proto_id == 4 &&
	    sw->flags == PBTRACE_TP_FTRACE && s.buffers[0].nr_events == 1 &&
	    !strcmp(s.buffers[0].events[0], "sched/sched_switch") &&
	    !s.buffers[0].filters[0],
	    "%s: a filtered native event is a tracepoint with Perfetto's number (4) and the filter; the unfiltered one stays native: %s",
	    k, r ? err : "");
	tap(!r && gen && del && gen->filter == f[1] && del->filter == f[1] &&
	    gen->layout->proto_id >= PBTRACE_TP_GENERIC_PROTO_BASE,
	    "%s: a glob's filter goes onto every event it matches", k);
	pbt_spec_resolved_free(&s);
}

static void test_refused(void)
{
	static const struct {
		const char *event, *filter, *err;
	} cases[] = {
		{ "sched/sched_switch", "prev_pid >= 42 && prev_pd == 0",
		  "sched/sched_switch: bad filter: position 18: unknown field 'prev_pd'\n"
		  "  prev_pid >= 42 && prev_pd == 0\n"
		  "                    ^" },
		{ "signal/signal_generate", "sig ~ \"1*\"",
		  "signal/signal_generate: bad filter: position 4: '~' needs a string field\n"
		  "  sig ~ \"1*\"\n"
		  "      ^" },
		{ "signal/*", "comm == \"bash\"",
		  "signal/signal_deliver: bad filter: position 0: unknown field 'comm'" },
		{ "signal/signal_generate", "(sig == 1\t&& pid > 0",
		  "signal/signal_generate: bad filter: position 0: '(' without ')'\n"
		  "  (sig == 1 && pid > 0\n"
		  "  ^" },
	};
	const char *ev[1], *f[1];
	struct pbt_session_spec s;
	char err[1024], *p;
	size_t i;
	int r;

	pbt_tracefs_set_root(FIX "/tracefs-6.1");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ev[0] = cases[i].event;
		f[0] = cases[i].filter;
		r = resolve(&s, ev, f, 1, err, sizeof(err));
		tap(r == -EINVAL && !strncmp(err, cases[i].err, strlen(cases[i].err)) &&
		    !s.buffers[0].tps && s.buffers[0].filters[0] == f[0],
		    "-e %s --filter '%s' refused, spec unchanged", ev[0], f[0]);
		printf("# %s\n", strtok(err, "\n"));
		while ((p = strtok(NULL, "\n")))
			printf("# %s\n", p);
	}
	/* a caret line that would not fit: the message alone */
	ev[0] = "signal/signal_generate";
	f[0] = "sgi == 1";
	r = resolve(&s, ev, f, 1, err, 80);
	tap(r == -EINVAL && !strchr(err, '\n') && strstr(err, "position 0: unknown field 'sgi'"),
	    "no room for the caret: one line: %s", err);
}

static void test_twice(void)
{
	static const char *const ev[] = {
		"signal/signal_generate", "signal:signal_generate",
	};
	static const char *const f[] = { "sig == 9", "sig == 10" };
	static const char *const same[] = { "sig == 9", "sig == 9" };
	struct pbt_session_spec s;
	char err[1024];
	int r;

	pbt_tracefs_set_root(FIX "/tracefs-6.1");
	r = resolve(&s, ev, f, 2, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "signal/signal_generate is asked for twice with different filters"),
	    "one event with two filters refused: %s", err);
	r = resolve(&s, ev, same, 2, err, sizeof(err));
	tap(!r && s.buffers[0].nr_tps == 1, "one event twice with one filter: one tracepoint");
	pbt_spec_resolved_free(&s);
}

int main(void)
{
	size_t k;

	for (k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		test_filtered(kernels[k]);
	test_refused();
	test_twice();
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
