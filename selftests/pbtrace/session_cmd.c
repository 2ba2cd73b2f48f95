// SPDX-License-Identifier: GPL-2.0
/*
 * One netlink command on one session, past tracectl's own checks, for
 * group_test.sh: what the kernel and traced do when a caller asks for
 * what tracectl would refuse (another user's session, an output path the
 * caller cannot write).
 *
 *   session_cmd new NAME OUTPUT [MACHINE]
 *                                    NEW + START (sched_switch, 1 MiB;
 *                                    MACHINE: a relayed machine's name,
 *                                    or "*", for the buffer too); prints
 *                                    the id
 *   session_cmd start|stop|destroy|get ID
 *
 * Exit 0, or the errno the kernel answered, with its message on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "genl.h"

static int fail(struct pbt_nl *nl, int ret, const char *what)
{
	fprintf(stderr, "session_cmd: %s: %s (%s)\n", what, pbt_nl_error(nl),
		strerror(-ret));
	return -ret;
}

static int new_session(struct pbt_nl *nl, const char *name, const char *out,
		       const char *machine)
{
	struct pbt_session_spec s = { .name = name, .output = out,
				      .nr_buffers = 1 };
	struct pbt_buffer_spec *b = &s.buffers[0];
	uint32_t id;
	int ret;

	b->size_kb = 1024;
	b->fill_policy = PBTRACE_FILL_RING_BUFFER;
	b->events[b->nr_events++] = "sched/sched_switch";
	if (machine) {
		b->machines[b->nr_machines++] = PBTRACE_MACHINE_HOST;
		b->machines[b->nr_machines++] = machine;
	}
	ret = pbt_nl_new_session(nl, &s, &id);
	if (ret)
		return fail(nl, ret, "new session");
	ret = pbt_nl_session_cmd(nl, PBTRACE_CMD_START_SESSION, id);
	if (ret)
		return fail(nl, ret, "start");
	printf("%u\n", id);
	return 0;
}

static int get_session(struct pbt_nl *nl, uint32_t id)
{
	struct pbt_session_info si;
	int ret = pbt_nl_get_session(nl, id, &si);

	if (ret)
		return fail(nl, ret, "get session");
	printf("%u %s\n", si.id, si.name);
	pbt_session_info_free(&si);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int cmd; } cmds[] = {
		{ "start", PBTRACE_CMD_START_SESSION },
		{ "stop", PBTRACE_CMD_STOP_SESSION },
		{ "destroy", PBTRACE_CMD_DESTROY_SESSION },
	};
	struct pbt_nl *nl;
	char err[256];
	uint32_t id;
	size_t i;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: session_cmd new NAME OUTPUT [MACHINE] | start|stop|destroy|get ID\n");
		return 2;
	}
	nl = pbt_nl_open(err, sizeof(err));
	if (!nl) {
		fprintf(stderr, "session_cmd: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "new") && (argc == 4 || argc == 5)) {
		ret = new_session(nl, argv[2], argv[3], argc == 5 ? argv[4] : NULL);
		goto out;
	}
	id = (uint32_t)strtoul(argv[2], NULL, 10);
	if (!strcmp(argv[1], "get")) {
		ret = get_session(nl, id);
		goto out;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0])) {
		fprintf(stderr, "session_cmd: unknown command '%s'\n", argv[1]);
		ret = 2;
		goto out;
	}
	ret = pbt_nl_session_cmd(nl, cmds[i].cmd, id);
	if (ret)
		ret = fail(nl, ret, argv[1]);
out:
	pbt_nl_close(nl);
	return ret;
}
