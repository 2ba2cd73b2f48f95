// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl reconfigure: a new description for a session waiting for its trigger. */
#define _GNU_SOURCE
#include "tracectl.h"

int cmd_reconfigure(int argc, char **argv)
{
	struct start_opts o;
	struct session s = { 0 };
	struct pbt_nl *nl;
	char found[PBTRACE_NAME_MAX];
	int ret;

	ret = parse_start(argc, argv, &o);
	if (ret)
		return ret;
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = prepare(nl, &o, &s);
	if (!ret && !o.name && !(s.cfg.tc->unique_session_name &&
				 *s.cfg.tc->unique_session_name)) {
		errf("reconfigure needs the session's name: -n NAME, or unique_session_name in the config");
		ret = EXIT_FAIL;
	}
	if (!ret)
		ret = find_session(nl, s.name, &s.id, found, sizeof(found));
	if (!ret) {
		int r = pbt_nl_set_session(nl, s.id, &s.spec);

		if (r == -EBUSY) {
			errf("session '%s' has already started: only a session waiting for its START_TRACING trigger can be reconfigured; stop it and start a new one",
			     s.name);
			ret = EXIT_FAIL;
		} else if (r) {
			ret = nl_fail(nl, r, "reconfiguring the session");
		} else {
			printf("reconfigured session '%s' (id %u); traced writes %s\n",
			       s.name, s.id, s.output);
		}
	}
	session_free(&s);
	pbt_nl_close(nl);
	return ret;
}
