// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl trigger NAME. */
#define _GNU_SOURCE
#include "tracectl.h"

int cmd_trigger(int argc, char **argv)
{
	struct pbt_nl *nl;
	uint32_t pid = 0;
	int ret;

	if (argc != 2 || argv[1][0] == '-')
		return usage_error("trigger wants exactly one NAME");
	if (strlen(argv[1]) >= PBTRACE_NAME_MAX)
		return usage_error("trigger name longer than %d characters", PBTRACE_NAME_MAX - 1);
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = pbt_nl_trigger(nl, argv[1]);
	if (ret)
		ret = nl_fail(nl, ret, "firing the trigger");
	else if (!pbt_nl_daemon_pid(nl, &pid) && !pid) {
		errf("trigger '%s' fired, but traced is not running, so no session acts on it: start traced", argv[1]);
		ret = EXIT_NO_TRACED;
	} else {
		printf("trigger '%s' fired\n", argv[1]);
	}
	pbt_nl_close(nl);
	return ret;
}
