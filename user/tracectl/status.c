// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl: tracectl status [--watch] [-M] [--machine NAME]... A session
 * that relayed machines record into shows one summary line of them (a
 * host may have a thousand), and each machine's block only when asked.
 */
#define _GNU_SOURCE
#include "tracectl.h"

#define STATUS_MAX_NAMED 16	/* --machine */
#define LOSSY_NAMES 5		/* named in the summary, then "N more" */

struct status_opts {
	bool watch;
	bool all_machines;		/* -M */
	const char *names[STATUS_MAX_NAMED];
	size_t nr_names;
};

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

/*
 * "    tracepoint sched/sched_switch filter 'prev_pid == 0' stacks kernel",
 * one line each, as given: what the buffer records by name.
 */
static void print_tps(const struct pbt_buffer_info *bi)
{
	const struct pbt_tp_info *t;
	size_t i;

	for (i = 0; i < bi->nr_tps; i++) {
		t = &bi->tps[i];
		printf("    tracepoint %s", t->name);
		if (t->filter)
			printf(" filter '%s'", t->filter);
		if (t->flags & PBTRACE_TP_PERF_SAMPLE)
			printf(" stacks%s%s%s", t->flags & PBTRACE_TP_KERNEL_STACK ?
			       " kernel" : "", t->flags & PBTRACE_TP_USER_STACK ?
			       " user" : "", t->flags & PBTRACE_TP_FTRACE ? "" :
			       " (no event)");
		if ((t->flags & PBTRACE_TP_PERF_SAMPLE) && t->period > 1)
			printf(" period %u", t->period);
		putchar('\n');
	}
}

static bool lossy(const struct pbtrace_machine_stats *st)
{
	return st->chunks_lost_relay || st->chunks_dropped ||
	       st->guest_events_lost || st->disconnects;
}

/*
 * "machines: 1000 (998 connected), 12345 chunks, 1.2 GiB; lost: ...", and
 * the first few machines that lost anything, by name.
 */
static void print_machines_summary(const struct pbt_session_info *si)
{
	struct pbtrace_machine_stats sum = { 0 };
	size_t i, connected = 0, nr_lossy = 0;
	char bytes[32];

	for (i = 0; i < si->nr_machines; i++) {
		const struct pbtrace_machine_stats *st = &si->machines[i].st;

		connected += !!st->connected;
		sum.chunks += st->chunks;
		sum.bytes += st->bytes;
		sum.chunks_lost_relay += st->chunks_lost_relay;
		sum.chunks_dropped += st->chunks_dropped;
		sum.guest_events_lost += st->guest_events_lost;
		sum.disconnects += st->disconnects;
		nr_lossy += lossy(st);
	}
	fmt_bytes(bytes, sizeof(bytes), (double)sum.bytes);
	printf("  machines: %zu (%zu connected), %llu chunks, %s; lost: %llu chunks in relay gaps, %llu dropped here, %llu events on the guests, %llu disconnects\n",
	       si->nr_machines, connected, (unsigned long long)sum.chunks, bytes,
	       (unsigned long long)sum.chunks_lost_relay,
	       (unsigned long long)sum.chunks_dropped,
	       (unsigned long long)sum.guest_events_lost,
	       (unsigned long long)sum.disconnects);
	if (!nr_lossy)
		return;
	printf("    lost something:");
	for (i = 0, nr_lossy = 0; i < si->nr_machines; i++) {
		if (!lossy(&si->machines[i].st))
			continue;
		if (nr_lossy++ < LOSSY_NAMES)
			printf(" %s", si->machines[i].name);
	}
	if (nr_lossy > LOSSY_NAMES)
		printf(" and %zu more", nr_lossy - LOSSY_NAMES);
	printf(" (tracectl status --machine NAME)\n");
}

static bool wanted(const struct status_opts *o, const char *name)
{
	size_t i;

	if (o->all_machines)
		return true;
	for (i = 0; i < o->nr_names; i++)
		if (!strcmp(o->names[i], name))
			return true;
	return false;
}

static void print_machines(const struct pbt_session_info *si,
			   const struct status_opts *o)
{
	char desc[1024], *line, *save = NULL;
	size_t i;

	if (!si->nr_machines)
		return;
	print_machines_summary(si);
	for (i = 0; i < si->nr_machines; i++) {
		if (!wanted(o, si->machines[i].name))
			continue;
		pbt_machine_describe(desc, sizeof(desc), &si->machines[i]);
		for (line = strtok_r(desc, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("  %s\n", line);
	}
}

static void print_session(const struct pbt_session_info *si, uint64_t now,
			  const struct status_opts *o)
{
	uint64_t end = si->stop_ns ? si->stop_ns : now;
	size_t b, i;

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
		if (bi->nr_tps)
			printf("; %zu tracepoints", bi->nr_tps);
		putchar('\n');
		print_tps(bi);
		for (i = 0; i < bi->nr_cpus; i++)
			print_cpu(&bi->cpus[i]);
	}
	print_machines(si, o);
}

static int show_status(struct pbt_nl *nl, const struct status_opts *o)
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
		ret = pbt_nl_get_session_tracepoints(nl, &v[i]);
		if (ret && ret != -ENOENT)
			fprintf(stderr, "tracectl: reading session %u's tracepoints: %s\n",
				v[i].id, pbt_nl_error(nl));
		ret = v[i].relay ? 0 : pbt_nl_get_session_machines(nl, &v[i]);
		if (ret && ret != -ENOENT)
			fprintf(stderr, "tracectl: reading session %u's relayed machines: %s\n",
				v[i].id, pbt_nl_error(nl));
		print_session(&v[i], boottime_ns(), o);
	}
	pbt_session_infos_free(v, n);
	return EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "watch", no_argument, NULL, OPT_WATCH },
		{ "machines", no_argument, NULL, 'M' },
		{ "machine", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct status_opts o = { 0 };
	struct pbt_nl *nl;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "wMm:", opts, NULL)) != -1) {
		if (c == OPT_WATCH || c == 'w')
			o.watch = true;
		else if (c == 'M')
			o.all_machines = true;
		else if (c == 'm' && o.nr_names == STATUS_MAX_NAMED)
			return usage_error("too many --machine (at most %d): -M shows every machine",
					   STATUS_MAX_NAMED);
		else if (c == 'm')
			o.names[o.nr_names++] = optarg;
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
		if (o.watch)
			fputs("\033[H\033[2J", stdout);	/* home, clear */
		ret = show_status(nl, &o);
		fflush(stdout);
		if (o.watch && !ret)
			poll(NULL, 0, 1000);
	} while (o.watch && !ret && !interrupted);
	pbt_nl_close(nl);
	return ret;
}
