// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl status [--watch]. */
#define _GNU_SOURCE
#include "tracectl.h"

static const char *state_name(uint32_t state)
{
	switch (state) {
	case PBTRACE_STATE_CONFIGURED:
		return "configured";
	case PBTRACE_STATE_STARTED:
		return "started";
	case PBTRACE_STATE_STOPPED:
		return "stopped";
	default:
		return "?";
	}
}

static void print_cpu(const struct pbtrace_cpu_stats *st)
{
	char bytes[32];

	fmt_bytes(bytes, sizeof(bytes), (double)st->bytes_written);
	printf("    cpu %-3u %10llu events %10s  chunks %llu sealed %llu read  lost %llu (full %llu, overwritten %llu, too large %llu, nmi %llu)\n",
	       st->cpu, (unsigned long long)st->events_written, bytes,
	       (unsigned long long)st->chunks_sealed,
	       (unsigned long long)st->chunks_read,
	       (unsigned long long)(st->lost_full + st->lost_overwritten +
				    st->lost_too_large + st->lost_nmi),
	       (unsigned long long)st->lost_full,
	       (unsigned long long)st->lost_overwritten,
	       (unsigned long long)st->lost_too_large,
	       (unsigned long long)st->lost_nmi);
}

/* "; syscalls: openat read" (names from <asm/unistd.h>, else numbers). */
static void print_syscalls(const struct pbt_buffer_info *bi)
{
	const char *name;
	size_t i;

	printf("; syscalls:");
	for (i = 0; i < bi->nr_syscalls; i++) {
		if (i == 8) {
			printf(" ... (%zu)", bi->nr_syscalls);
			return;
		}
		name = pbt_syscall_name(bi->syscalls[i]);
		if (name)
			printf(" %s", name);
		else
			printf(" %u", bi->syscalls[i]);
	}
}

static void print_session(const struct pbt_session_info *si, uint64_t now)
{
	uint64_t end = si->stop_ns ? si->stop_ns : now;
	size_t b, i;

	char desc[1024], *line, *save = NULL;

	printf("%-20s id %-4u %-10s %8.1fs  %s\n", si->name, si->id,
	       state_name(si->state),
	       si->start_ns ? (end - si->start_ns) / 1e9 : 0.0,
	       si->relay ? "(relay: recorded for this machine's host)" :
	       si->output ? si->output : "(no output)");
	for (b = 0; b < si->nr_buffers; b++) {
		const struct pbt_buffer_info *bi = &si->buffers[b];

		printf("  buffer %zu: %u KB, %u KB chunks, %s; events:", b,
		       bi->size_kb, bi->chunk_kb,
		       bi->fill_policy == PBTRACE_FILL_DISCARD ? "discard" : "ring");
		for (i = 0; i < bi->nr_events; i++)
			printf(" %s", bi->events[i]);
		if (bi->nr_pids)
			printf("; %zu pids", bi->nr_pids);
		if (bi->nr_syscalls)
			print_syscalls(bi);
		if (bi->nr_machines) {
			printf("; machines:");
			for (i = 0; i < bi->nr_machines; i++)
				printf(" %s", bi->machines[i]);
		}
		putchar('\n');
		for (i = 0; i < bi->nr_cpus; i++)
			print_cpu(&bi->cpus[i]);
	}
	for (i = 0; i < si->nr_machines; i++) {
		pbt_machine_describe(desc, sizeof(desc), &si->machines[i]);
		for (line = strtok_r(desc, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("  %s\n", line);
	}
}

static int show_status(struct pbt_nl *nl)
{
	struct pbt_session_info *v;
	uint32_t pid;
	size_t n, i;
	int ret;

	ret = pbt_nl_daemon_pid(nl, &pid);
	if (ret)
		return nl_fail(nl, ret, "asking for status");
	if (pid)
		printf("traced: running (pid %u)\n", pid);
	else
		printf("traced: not running (start it: 'traced --daemon')\n");
	ret = pbt_nl_list_sessions(nl, &v, &n);
	if (ret)
		return nl_fail(nl, ret, "listing sessions");
	if (!n)
		printf("no sessions\n");
	for (i = 0; i < n; i++) {
		/* Gone since the list (-ENOENT): shown without CPUs. */
		ret = pbt_nl_get_cpu_stats(nl, &v[i]);
		if (ret && ret != -ENOENT)
			fprintf(stderr, "tracectl: reading session %u's per-CPU counters: %s\n",
				v[i].id, pbt_nl_error(nl));
		print_session(&v[i], boottime_ns());
	}
	pbt_session_infos_free(v, n);
	return EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "watch", no_argument, NULL, OPT_WATCH },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	bool watch = false;
	struct pbt_nl *nl;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "w", opts, NULL)) != -1) {
		if (c == OPT_WATCH || c == 'w')
			watch = true;
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
	do {
		if (watch)
			fputs("\033[H\033[2J", stdout);	/* home, clear */
		ret = show_status(nl);
		fflush(stdout);
		if (watch && !ret)
			poll(NULL, 0, 1000);
	} while (watch && !ret && !interrupted);
	pbt_nl_close(nl);
	return ret;
}
