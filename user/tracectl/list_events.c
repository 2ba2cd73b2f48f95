// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl list-events. */
#define _GNU_SOURCE
#include "tracectl.h"

static int print_event(const char *name, int available, void *arg)
{
	(void)arg;
	if (available)
		printf("%s\n", name);
	else
		printf("%-32s (not in this kernel)\n", name);
	return 0;
}

int cmd_list_events(int argc, char **argv)
{
	struct pbt_nl *nl;
	int ret;

	(void)argv;
	if (argc != 1)
		return usage_error("list-events takes no arguments");
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = pbt_nl_list_events(nl, print_event, NULL);
	if (ret)
		ret = nl_fail(nl, ret, "listing events");
	pbt_nl_close(nl);
	return ret;
}
