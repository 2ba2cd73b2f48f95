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
 *   session_cmd make NAME KB [ARG]... NEW only (budget_test.sh): one
 *                                    buffer of KB, sched_switch; ARGs:
 *                                    "follow" (pid 1, following forks),
 *                                    "G/N" or "G/N:FILTER" (a tracepoint,
 *                                    its layout from tracefs), "dup" (the
 *                                    first tracepoint sent twice, past
 *                                    the library's own check); prints the id
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
#include "tracepoints.h"

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

/* Every tracepoint by its tracefs layout but sched_switch, the module's. */
static int not_native(const char *name, void *arg)
{
	(void)arg;
	return !strcmp(name, "sched/sched_switch") ? 1 : -1;
}

static int make_session(struct pbt_nl *nl, int argc, char **argv)
{
	struct pbt_session_spec s = { .name = argv[2], .nr_buffers = 1 };
	struct pbt_buffer_spec *b = &s.buffers[0];
	struct pbt_tp_spec *twice = NULL;
	char err[1024], *colon;
	bool dup = false;
	uint32_t id;
	int i, ret;

	b->size_kb = (uint32_t)strtoul(argv[3], NULL, 10);
	b->fill_policy = PBTRACE_FILL_RING_BUFFER;
	b->events[b->nr_events++] = "sched/sched_switch";
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "follow")) {
			b->pids[b->nr_pids++] = 1;
			b->follow_forks = true;
		} else if (!strcmp(argv[i], "dup")) {
			dup = true;
		} else if (b->nr_events < PBT_MAX_EVENTS) {
			colon = strchr(argv[i], ':');
			if (colon)
				*colon = '\0';
			b->filters[b->nr_events] = colon ? colon + 1 : NULL;
			b->events[b->nr_events++] = argv[i];
		}
	}
	ret = pbt_spec_resolve_events(&s, not_native, NULL, NULL, err,
				      sizeof(err));
	if (ret) {
		fprintf(stderr, "session_cmd: %s\n", err);
		return -ret;
	}
	if (dup && b->nr_tps) {
		twice = calloc(b->nr_tps + 1, sizeof(*twice));
		if (!twice)
			return ENOMEM;
		memcpy(twice, b->tps, b->nr_tps * sizeof(*twice));
		twice[b->nr_tps] = b->tps[0];
		b->tps = twice;
		b->nr_tps++;
	}
	ret = pbt_nl_new_session(nl, &s, &id);
	if (twice) {
		b->nr_tps--;
		free(twice);
	}
	pbt_spec_resolved_free(&s);
	if (ret)
		return fail(nl, ret, "new session");
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
		fprintf(stderr, "usage: session_cmd new NAME OUTPUT [MACHINE] | make NAME KB [ARG]... | start|stop|destroy|get ID\n");
		return 2;
	}
	nl = pbt_nl_open(err, sizeof(err));
	if (!nl) {
		fprintf(stderr, "session_cmd: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "make") && argc >= 4) {
		ret = make_session(nl, argc, argv);
		goto out;
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
