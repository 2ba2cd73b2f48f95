// SPDX-License-Identifier: GPL-2.0
/* tracectl: the command table, usage and exit codes (tracectl --help). */
#define _GNU_SOURCE
#include "tracectl.h"

volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted++;
}

void usage(FILE *f)
{
	fputs(
"usage: tracectl COMMAND [OPTIONS]\n"
"\n"
"Commands:\n"
"  start [-c CONFIG] [-e EVENT [--filter EXPR]]... [-b SIZE_KB]\n"
"        [--fill ring|discard]\n"
"        [--ring] [-t DURATION] [-o OUT] [-p PID]... [-n NAME] [-A]\n"
"        [-m MACHINE]... [--stacks[=kernel]]\n"
"        Create and start a session; traced writes it to OUT, streaming:\n"
"        chunks reach the file while tracing (flushed every second).\n"
"        --ring: a flight recorder instead, the kernel buffer read at stop\n"
"        (keeps the last SIZE_KB; --fill discard keeps the first). A -c\n"
"        config keeps Perfetto's meaning (write_into_file to stream).\n"
"        -c takes a Perfetto TraceConfig, text (.pbtx) or binary; without\n"
"        -c the flags build one. -o and -n also override a config's\n"
"        output_path and unique_session_name. Default OUT: NAME.pftrace\n"
"        in the current directory. DURATION: 500ms, 10s, 2m (plain: s).\n"
"        Without -e: the sched and task events that name processes.\n"
"        EVENT: group/name or group:name of any tracepoint, or a glob\n"
"        ('tcp/*'); see list-events. -e EVENT --filter EXPR keeps only\n"
"        the hits EXPR keeps, in ftrace's filter syntax, evaluated in the\n"
"        kernel ('prev_pid >= 42 && next_pid == 0', 'comm ~ \"ba*\"').\n"
"        -A (--all-machines) records on this machine and every machine\n"
"        relayed to it; -m NAME (--machine) on the named ones only\n"
"        ('host' is this machine). Default: this machine only.\n"
"        --stacks: a call stack (kernel and user frames; =kernel: kernel\n"
"        only) on every -e event, as Perfetto PerfSample packets\n"
"        (linux.perf); user frames named at the end (see symbolize).\n"
"  reconfigure -n NAME [start's options]\n"
"        Describe a session that has not started yet (one waiting for its\n"
"        START_TRACING trigger) anew: events, buffers, output, config.\n"
"  stop [-n NAME] [--wait]\n"
"        Stop a session (the only one, or NAME). --wait returns once\n"
"        traced has finished the file.\n"
"  status [--watch] [-M] [--machine NAME]...\n"
"        Sessions with state, elapsed time and per-CPU events, bytes and\n"
"        losses; their relayed machines in one line (how many, connected,\n"
"        chunks, losses by where they happened, which machines lost any).\n"
"        -M (--machines): every machine's part too, --machine NAME that\n"
"        one's: its peer, chunks, losses, ping RTT and clock offset.\n"
"        --watch refreshes every second until Ctrl-C.\n"
"  machines [list | names | load [FILE]]\n"
"        The relayed machines this host has seen (root): a line each,\n"
"        online or not, with its peer and kernel. names: the names and\n"
"        keys the host gives its guests (never a key itself). load: read\n"
"        FILE (default /etc/pbtrace/machines: 'cid CID NAME', 'key NAME\n"
"        HEX' lines) into the module; a file with keys must be mode 0600.\n"
"  record [start's options]\n"
"        Start, show progress, stop after DURATION (default 10s) or on\n"
"        Ctrl-C, wait for the file and summarize what it holds.\n"
"  trigger NAME\n"
"        Fire a trigger for sessions whose trigger_config names it.\n"
"  list-events [--native]\n"
"        Every tracepoint of this kernel (tracefs), as group/name: any\n"
"        of them goes in -e or ftrace_events. --native: the events\n"
"        pbtrace.ko encodes itself, and whether this kernel has each.\n"
"  trace [-p PID]... [-a] [-e SYSCALLS] [--duration MS] [--failure] [-s]\n"
"        [--summary-only] [-o FILE] [-t DURATION] [-- CMD ARGS]\n"
"        Syscalls as perf trace shows them, live: one line per call with\n"
"        its arguments, duration and result. -- CMD traces CMD and its\n"
"        children from their first instruction and exits with CMD's\n"
"        status; -p these threads/processes; -a every thread. -e\n"
"        openat,read only these ('!futex' all but), in the kernel.\n"
"        --duration MS: calls longer than MS; --failure: failed ones.\n"
"        -s: per process, thread and syscall: calls, errors, times at\n"
"        the end (--summary-only: that alone, as perf trace -s and\n"
"        strace -c print). -o keeps the trace (else a temporary file).\n"
"  report [-s] [--summary-only] [-e SYSCALLS] [--duration MS]\n"
"        [--failure] [-p PID]... FILE\n"
"        The same view of a recorded trace; with many machines, -s sums\n"
"        them up (--machine NAME, or --per-machine: a section each).\n"
"  symbolize FILE\n"
"        Name the user frames of FILE's stack samples from the binaries'\n"
"        ELF symbols (Perfetto ModuleSymbols packets, appended); traced\n"
"        does it when it finishes a file with stacks.\n"
"  merge -o OUT.tar FILE...\n"
"        Several machines' files (each host's with its relayed machines)\n"
"        as one archive that trace_processor and the Perfetto UI open as\n"
"        one trace: a perfetto_manifest names each file's machines by the\n"
"        file's own identity (machine name, boot id); clocks meet through\n"
"        each host's REALTIME, as its clock snapshots measured it. Hosts'\n"
"        wall clocks must agree (NTP).\n"
"  --help\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  other failure or bad usage (the message says which)\n"
"  2  the pbtrace module is not loaded: run 'modprobe pbtrace'\n"
"  3  traced is not running: start it ('traced --daemon' or\n"
"     'systemctl start traced'); a stopped session keeps its data\n"
"  4  not permitted: needs CAP_SYS_ADMIN (status and list-events:\n"
"     CAP_PERFMON); run as root\n"
"  5  unknown or unavailable event: see 'tracectl list-events'\n"
"  6  config error, reported as FILE:LINE:COL\n"
"  7  output path not writable: pick another -o\n"
"  8  session name already in use: pick another -n or stop that one\n"
"  9  record, stop --wait: traced ended the session early (e.g. disk\n"
"     full) or the file lacks its closing trace_stats; the message says\n"
"     why and what the file holds\n"
"  130 interrupted while waiting\n", f);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "start", cmd_start },
		{ "reconfigure", cmd_reconfigure },
		{ "stop", cmd_stop },
		{ "status", cmd_status },
		{ "machines", cmd_machines },
		{ "record", cmd_record },
		{ "trigger", cmd_trigger },
		{ "list-events", cmd_list_events },
		{ "trace", cmd_trace },
		{ "report", cmd_report },
		{ "symbolize", cmd_symbolize },
		{ "merge", cmd_merge },
	};
	struct sigaction sa = { .sa_handler = on_sigint };
	size_t i;

	if (argc < 2)
		return usage(stderr), EXIT_FAIL;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		return usage(stdout), EXIT_OK;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", argv[1]);
}
