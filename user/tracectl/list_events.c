// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl list-events [--native]. */
#define _GNU_SOURCE
#include "tracectl.h"

static int print_native(const char *name, int available, void *arg)
{
	(void)arg;
	if (available)
		printf("%s\n", name);
	else
		printf("%-32s (not in this kernel)\n", name);
	return 0;
}

/* Every tracepoint of this kernel, from tracefs, sorted. */
struct names {
	char (*v)[2 * PBTRACE_NAME_MAX];
	size_t n, cap;
};

static int add_name(const char *group, const char *name, void *arg)
{
	struct names *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 2048;
		void *v = realloc(l->v, cap * sizeof(*l->v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	snprintf(l->v[l->n++], sizeof(*l->v), "%s/%s", group, name);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int list_tracefs(void)
{
	struct names l = { 0 };
	char err[512];
	size_t i;
	int ret = pbt_tracefs_list(add_name, &l, err, sizeof(err));

	if (ret == -ENOMEM)
		errf("listing tracepoints: out of memory");
	else if (ret)
		errf("listing tracepoints: %s", err);
	if (ret) {
		free(l.v);
		return ret == -EACCES || ret == -EPERM ? EXIT_PERM : EXIT_FAIL;
	}
	qsort(l.v, l.n, sizeof(*l.v), cmp_name);
	for (i = 0; i < l.n; i++)
		printf("%s\n", l.v[i]);
	free(l.v);
	return EXIT_OK;
}

int cmd_list_events(int argc, char **argv)
{
	struct pbt_nl *nl;
	int ret;

	if (argc == 1)
		return list_tracefs();
	if (argc != 2 || strcmp(argv[1], "--native"))
		return usage_error("list-events takes only --native");
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = pbt_nl_list_events(nl, print_native, NULL);
	if (ret)
		ret = nl_fail(nl, ret, "listing events");
	pbt_nl_close(nl);
	return ret;
}
