// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl stop [--wait]. */
#define _GNU_SOURCE
#include "tracectl.h"

int cmd_stop(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "wait", no_argument, NULL, OPT_WAIT },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *name = NULL;
	char found[PBTRACE_NAME_MAX], error[PBTRACE_ERROR_MAX] = "";
	struct pbt_session_info si;
	char *output = NULL;
	bool wait = false;
	struct pbt_nl *nl;
	uint32_t id = 0, pid = 0;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
		if (c == 'n')
			name = optarg;
		else if (c == OPT_WAIT)
			wait = true;
		else if (c == OPT_HELP)
			return usage(stdout), EXIT_OK;
		else
			return usage_error("bad option");
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = find_session(nl, name, &id, found, sizeof(found));
	if (!ret && wait)
		ret = subscribe(nl);
	/* Where the file is, to check it once traced is done. */
	if (!ret && wait && !pbt_nl_get_session(nl, id, &si)) {
		output = si.output;
		si.output = NULL;
		pbt_session_info_free(&si);
	}
	if (!ret)
		ret = stop_session(nl, id);
	if (!ret && !pbt_nl_daemon_pid(nl, &pid) && !pid) {
		memset(&si, 0, sizeof(si));
		pbt_nl_get_session(nl, id, &si);
		errf("stopped '%s', but traced is not running: its data stays in the kernel until traced restarts and writes %s",
		     found, si.output ? si.output : "the file");
		pbt_session_info_free(&si);
		ret = EXIT_NO_TRACED;
	}
	if (!ret && wait)
		ret = wait_file_done(nl, id, output, error, sizeof(error));
	if (!ret && wait)
		ret = check_finished(id, output, error, NULL);
	if (!ret)
		printf("stopped session '%s' (id %u)%s\n", found, id,
		       wait ? "; traced finished the file" : "");
	free(output);
	pbt_nl_close(nl);
	return ret;
}
