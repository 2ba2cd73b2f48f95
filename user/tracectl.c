// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl: start, stop and watch pbtrace sessions over generic netlink.
 *
 * tracectl never touches the trace file: it describes the session to the
 * kernel (buffers, events, the TraceConfig and the output path) and traced,
 * which hears about every session on the "sessions" multicast group, writes
 * the file. When traced has finished a file it destroys the session; that
 * DESTROY_SESSION notification is what "stop --wait" and "record" wait for.
 *
 * Exit codes are part of the interface (see usage() and docs/tracectl.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "genl.h"
#include "syscalls.h"
#include "trace.pb-c.h"

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* anything else, incl. bad usage */
	EXIT_NO_MODULE = 2,
	EXIT_NO_TRACED = 3,
	EXIT_PERM = 4,
	EXIT_BAD_EVENT = 5,
	EXIT_BAD_CONFIG = 6,
	EXIT_BAD_OUTPUT = 7,
	EXIT_NAME_IN_USE = 8,
	EXIT_INCOMPLETE = 9,	/* traced ended the session early, or the
				 * file lacks its closing trace_stats */
	EXIT_INTERRUPTED = 130,
};

#define DEFAULT_RECORD_MS 10000
#define DEFAULT_SIZE_KB 8192
/*
 * Without -c, sessions stream into their file, as trace-cmd record, perf
 * record and lttng do: traced copies each chunk as it is sealed and
 * flushes the partly filled ones this often, so the file grows while
 * tracing and a recording keeps all of its workload. --ring asks for
 * Perfetto's flight recorder instead (read at stop).
 */
#define STREAM_PERIOD_MS 1000
#define WAIT_TICK_MS 200

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted++;
}

static void usage(FILE *f)
{
	fputs(
"usage: tracectl COMMAND [OPTIONS]\n"
"\n"
"Commands:\n"
"  start [-c CONFIG] [-e EVENT]... [-b SIZE_KB] [--fill ring|discard]\n"
"        [--ring] [-t DURATION] [-o OUT] [-p PID]... [-n NAME] [-A]\n"
"        [-m MACHINE]...\n"
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
"        -A (--all-machines) records on this machine and every machine\n"
"        relayed to it; -m NAME (--machine) on the named ones only\n"
"        ('host' is this machine). Default: this machine only.\n"
"  reconfigure -n NAME [start's options]\n"
"        Describe a session that has not started yet (one waiting for its\n"
"        START_TRACING trigger) anew: events, buffers, output, config.\n"
"  stop [-n NAME] [--wait]\n"
"        Stop a session (the only one, or NAME). --wait returns once\n"
"        traced has finished the file.\n"
"  status [--watch]\n"
"        Sessions with state, elapsed time and per-CPU events, bytes and\n"
"        losses; per relayed machine: chunks, losses by where they\n"
"        happened, ping RTT and clock offset. --watch refreshes every\n"
"        second until Ctrl-C.\n"
"  record [start's options]\n"
"        Start, show progress, stop after DURATION (default 10s) or on\n"
"        Ctrl-C, wait for the file and summarize what it holds.\n"
"  trigger NAME\n"
"        Fire a trigger for sessions whose trigger_config names it.\n"
"  list-events\n"
"        Every event pbtrace knows and whether this kernel has it.\n"
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

static void errf(const char *fmt, ...)
{
	va_list ap;

	fputs("tracectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tracectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see 'tracectl --help')\n", stderr);
	return EXIT_FAIL;
}

/* A netlink failure as an exit code, with the kernel's explanation. */
static int nl_fail(struct pbt_nl *nl, int err, const char *what)
{
	errf("%s: %s", what, pbt_nl_error(nl));
	if (err == -EPERM || err == -EACCES) {
		errf("not permitted: pbtrace needs CAP_SYS_ADMIN (CAP_PERFMON to look): run as root");
		return EXIT_PERM;
	}
	return EXIT_FAIL;
}

static struct pbt_nl *open_nl(int *code)
{
	char err[256];
	struct pbt_nl *nl = pbt_nl_open(err, sizeof(err));

	if (!nl) {
		errf("%s", err);
		*code = errno == ENOENT ? EXIT_NO_MODULE : EXIT_FAIL;
	}
	return nl;
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "500ms", "10s", "2m", "1h", or plain seconds. -1 when malformed. */
static long long parse_duration_ms(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		v *= 1000;
	else if (!strcmp(end, "m"))
		v *= 60000;
	else if (!strcmp(end, "h"))
		v *= 3600000;
	else if (strcmp(end, "ms"))
		return -1;
	if (v > 0xffffffffu)
		return -1;
	return (long long)v;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xffffffffu || *s == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static void fmt_bytes(char *buf, size_t len, double v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, unit[i]);
}

/* ---- the known events, from the module itself ---- */

struct event_list {
	char names[64][PBTRACE_NAME_MAX];
	bool available[64];
	size_t n;
};

static int collect_event(const char *name, int available, void *arg)
{
	struct event_list *l = arg;

	if (l->n < 64) {
		snprintf(l->names[l->n], PBTRACE_NAME_MAX, "%s", name);
		l->available[l->n++] = available;
	}
	return 0;
}

/* 1 available, 0 known but missing in this kernel, -1 unknown. */
static int event_state(const struct event_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], name))
			return l->available[i];
	return -1;
}

static int check_events(const struct event_list *l,
			const struct pbt_session_spec *spec)
{
	size_t b, i;

	for (b = 0; b < spec->nr_buffers; b++) {
		for (i = 0; i < spec->buffers[b].nr_events; i++) {
			const char *ev = spec->buffers[b].events[i];
			int st = event_state(l, ev);

			if (st < 0) {
				errf("unknown event '%s': 'tracectl list-events' shows the known ones (\"group/name\")", ev);
				return EXIT_BAD_EVENT;
			}
			if (!st) {
				errf("event '%s' is not available in this kernel (no such tracepoint): leave it out", ev);
				return EXIT_BAD_EVENT;
			}
		}
	}
	return EXIT_OK;
}

/* ---- start ---- */

struct start_opts {
	const char *config;
	const char *events[PBT_MAX_EVENTS];
	size_t nr_events;
	uint32_t size_kb;
	int fill;			/* -1: not given */
	long long duration_ms;		/* -1: not given */
	const char *output;
	uint32_t pids[PBTRACE_MAX_PIDS];
	size_t nr_pids;
	const char *name;
	const char *machines[PBTRACE_MAX_MACHINE_NAMES];
	size_t nr_machines;
	bool all_machines;
	bool ring;			/* --ring: flight recorder, read at stop */
	bool flags_given;		/* any of -e -b --fill --ring -t -p -m -A */
};

enum { OPT_FILL = 256, OPT_RING, OPT_WAIT, OPT_WATCH, OPT_HELP };

static const struct option start_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "event", required_argument, NULL, 'e' },
	{ "buffer-size", required_argument, NULL, 'b' },
	{ "fill", required_argument, NULL, OPT_FILL },
	{ "ring", no_argument, NULL, OPT_RING },
	{ "duration", required_argument, NULL, 't' },
	{ "output", required_argument, NULL, 'o' },
	{ "pid", required_argument, NULL, 'p' },
	{ "name", required_argument, NULL, 'n' },
	{ "machine", required_argument, NULL, 'm' },
	{ "all-machines", no_argument, NULL, 'A' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_start_opt(int c, struct start_opts *o)
{
	switch (c) {
	case 'c':
		o->config = optarg;
		return 0;
	case 'e':
		if (o->nr_events == PBT_MAX_EVENTS)
			return usage_error("too many -e (at most %d)", PBT_MAX_EVENTS);
		o->events[o->nr_events++] = optarg;
		break;
	case 'b':
		if (parse_u32(optarg, &o->size_kb) || !o->size_kb)
			return usage_error("-b wants a buffer size in KB, e.g. -b 8192, not '%s'", optarg);
		break;
	case OPT_FILL:
		o->fill = pbt_fill_policy_from_name(optarg);
		if (o->fill < 0)
			return usage_error("--fill wants 'ring' or 'discard', not '%s'", optarg);
		break;
	case OPT_RING:
		o->ring = true;
		break;
	case 't':
		o->duration_ms = parse_duration_ms(optarg);
		if (o->duration_ms < 0)
			return usage_error("-t wants a duration like 500ms, 10s or 2m, not '%s'", optarg);
		break;
	case 'o':
		o->output = optarg;
		return 0;
	case 'p':
		if (o->nr_pids == PBTRACE_MAX_PIDS)
			return usage_error("too many -p (at most %d)", PBTRACE_MAX_PIDS);
		if (parse_u32(optarg, &o->pids[o->nr_pids]) || !o->pids[o->nr_pids])
			return usage_error("-p wants a thread id, not '%s'", optarg);
		o->nr_pids++;
		break;
	case 'm':
		if (o->nr_machines == PBTRACE_MAX_MACHINE_NAMES)
			return usage_error("too many -m (at most %d); -A records on every machine",
					   PBTRACE_MAX_MACHINE_NAMES);
		o->machines[o->nr_machines++] = optarg;
		break;
	case 'A':
		o->all_machines = true;
		break;
	case 'n':
		if (!*optarg || strlen(optarg) >= PBTRACE_NAME_MAX)
			return usage_error("-n wants a name of 1..%d characters", PBTRACE_NAME_MAX - 1);
		o->name = optarg;
		return 0;
	case OPT_HELP:
		usage(stdout);
		exit(EXIT_OK);
	default:
		return usage_error("bad option");
	}
	o->flags_given = true;
	return 0;
}

static int parse_start(int argc, char **argv, struct start_opts *o)
{
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->fill = -1;
	o->duration_ms = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:e:b:t:o:p:n:m:A", start_options,
				NULL)) != -1) {
		ret = parse_start_opt(c, o);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o->config && o->flags_given)
		return usage_error("-c CONFIG describes the session: -e -b --fill --ring -t -p -m -A go in the config (only -o and -n override it)");
	return EXIT_OK;
}

/* Absolute, because traced does not share tracectl's working directory. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];
	char *abs;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		return NULL;
	return abs;
}

/* Checked as the user who asked, before a session exists. */
static int check_output(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			errf("output '%s' is a directory: give a file name with -o", path);
			return EXIT_BAD_OUTPUT;
		}
		if (access(path, W_OK)) {
			errf("cannot write output '%s': %s: pick another -o", path, strerror(errno));
			return EXIT_BAD_OUTPUT;
		}
		return EXIT_OK;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (access(dir, W_OK | X_OK)) {
		errf("cannot create output '%s': directory '%s': %s: pick another -o",
		     path, dir, strerror(errno));
		return EXIT_BAD_OUTPUT;
	}
	return EXIT_OK;
}

static void default_events(const struct event_list *l, struct start_opts *o)
{
	static const char *const wanted[] = {
		"sched/sched_switch", "sched/sched_waking",
		"sched/sched_process_fork", "sched/sched_process_exec",
		"sched/sched_process_exit", "sched/sched_process_free",
		"task/task_newtask", "task/task_rename",
	};
	size_t i;

	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (event_state(l, wanted[i]) == 1)
			o->events[o->nr_events++] = wanted[i];
}

/* A session being set up: the config and what the kernel is told. */
struct session {
	struct pbt_config cfg;
	struct pbt_session_spec spec;
	char *output;			/* absolute */
	char name[PBTRACE_NAME_MAX];
	uint32_t id;
	long long duration_ms;		/* 0: until stopped */
	bool wait_trigger;		/* START_TRACING: traced starts it */
	char error[PBTRACE_ERROR_MAX];	/* traced ended it early: why */
};

static int load_config(const struct start_opts *o, const struct event_list *l,
		       struct session *s, const char *abs_out)
{
	struct pbt_config_flags f = { 0 };
	char err[512];
	int ret;

	if (o->config) {
		ret = pbt_config_load(o->config, PBT_CONFIG_AUTO, &s->cfg, err,
				      sizeof(err));
	} else {
		struct start_opts def = *o;

		if (!def.nr_events)
			default_events(l, &def);
		f.events = def.events;
		f.nr_events = def.nr_events;
		f.size_kb = o->size_kb ? o->size_kb : DEFAULT_SIZE_KB;
		f.fill_policy = o->fill < 0 ? PBTRACE_FILL_RING_BUFFER : (uint32_t)o->fill;
		f.duration_ms = o->duration_ms > 0 ? (uint32_t)o->duration_ms : 0;
		f.file_write_period_ms = o->ring ? 0 : STREAM_PERIOD_MS;
		f.output = abs_out;
		f.name = o->name;
		f.pids = o->pids;
		f.nr_pids = o->nr_pids;
		f.machines = o->machines;
		f.nr_machines = o->nr_machines;
		f.all_machines = o->all_machines;
		ret = pbt_config_from_flags(&f, &s->cfg, NULL, err, sizeof(err));
	}
	if (ret) {
		errf("%s", err);
		return EXIT_BAD_CONFIG;
	}
	for (size_t i = 0; i < s->cfg.nr_warnings; i++)
		fprintf(stderr, "tracectl: warning: %s\n", s->cfg.warnings[i]);
	if (pbt_config_to_spec(&s->cfg, &s->spec, NULL, 0, err, sizeof(err))) {
		errf("%s", err);
		return EXIT_BAD_CONFIG;
	}
	for (size_t i = 0; i < s->cfg.nr_notices; i++)
		fprintf(stderr, "tracectl: note: %s\n", s->cfg.notices[i]);
	return EXIT_OK;
}

static void apply_trigger_and_duration(const struct start_opts *o,
				       struct session *s)
{
	const pbt_trace_config *tc = s->cfg.tc;

	s->duration_ms = tc->has_duration_ms ? tc->duration_ms : 0;
	if (o->duration_ms >= 0)
		s->duration_ms = o->duration_ms;
	s->wait_trigger = tc->trigger_config &&
		tc->trigger_config->has_trigger_mode &&
		tc->trigger_config->trigger_mode ==
		PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING;
}

static int resolve_output(const struct start_opts *o, struct session *s)
{
	char def[PBTRACE_NAME_MAX + 16];
	const char *out = o->output ? o->output : s->spec.output;

	if (!out || !*out) {
		snprintf(def, sizeof(def), "%s.pftrace", s->name);
		out = def;
	}
	s->output = absolute(out);
	if (!s->output) {
		errf("cannot make '%s' absolute: %s", out, strerror(errno));
		return EXIT_BAD_OUTPUT;
	}
	s->spec.output = s->output;
	return check_output(s->output);
}

static int check_daemon(struct pbt_nl *nl)
{
	uint32_t pid;
	int ret = pbt_nl_daemon_pid(nl, &pid);

	if (ret)
		return nl_fail(nl, ret, "asking whether traced runs");
	if (!pid) {
		errf("traced is not running: start it ('traced --daemon' or 'systemctl start traced'), then try again");
		return EXIT_NO_TRACED;
	}
	return EXIT_OK;
}

static void session_free(struct session *s)
{
	pbt_config_free(&s->cfg);
	free(s->output);
}

/* Everything short of NEW_SESSION: config, events, output, traced. */
static int prepare(struct pbt_nl *nl, const struct start_opts *o,
		   struct session *s)
{
	struct event_list *events;
	char *abs_out = NULL;
	int ret;

	events = calloc(1, sizeof(*events));
	if (!events)
		return EXIT_FAIL;
	ret = pbt_nl_list_events(nl, collect_event, events);
	if (ret) {
		free(events);
		return nl_fail(nl, ret, "listing events");
	}
	if (o->output) {
		abs_out = absolute(o->output);
		if (!abs_out) {
			free(events);
			errf("cannot make '%s' absolute: %s", o->output, strerror(errno));
			return EXIT_BAD_OUTPUT;
		}
	}
	ret = load_config(o, events, s, abs_out);
	free(abs_out);
	if (!ret)
		ret = check_events(events, &s->spec);
	free(events);
	if (ret)
		return ret;
	snprintf(s->name, sizeof(s->name), "%s",
		 o->name ? o->name : s->spec.name ? s->spec.name : s->cfg.name);
	s->spec.name = s->name;
	apply_trigger_and_duration(o, s);
	ret = resolve_output(o, s);
	if (!ret)
		ret = check_daemon(nl);
	return ret;
}

static bool has_syscall_filter(const struct pbt_session_spec *spec)
{
	size_t i;

	for (i = 0; i < spec->nr_buffers; i++)
		if (spec->buffers[i].nr_syscalls)
			return true;
	return false;
}

static int create_and_start(struct pbt_nl *nl, struct session *s)
{
	int ret = pbt_nl_new_session(nl, &s->spec, &s->id);

	if (ret == -EEXIST) {
		errf("session name '%s' is already in use: pick another -n, or 'tracectl stop -n %s'",
		     s->name, s->name);
		return EXIT_NAME_IN_USE;
	}
	if (ret == -EINVAL && has_syscall_filter(&s->spec) &&
	    strstr(pbt_nl_error(nl), "Unsupported attribute")) {
		errf("creating the session: %s", pbt_nl_error(nl));
		errf("this pbtrace.ko predates syscall filters (syscall_events): load a newer module, or list raw_syscalls/sys_enter in ftrace_events to record every syscall");
		return EXIT_FAIL;
	}
	if (ret)
		return nl_fail(nl, ret, "creating the session");
	if (s->wait_trigger)
		return EXIT_OK;
	ret = pbt_nl_session_cmd(nl, PBTRACE_CMD_START_SESSION, s->id);
	if (ret) {
		int code = nl_fail(nl, ret, "starting the session");

		pbt_nl_session_cmd(nl, PBTRACE_CMD_DESTROY_SESSION, s->id);
		return code;
	}
	return EXIT_OK;
}

static int cmd_start(int argc, char **argv)
{
	struct start_opts o;
	struct session s = { 0 };
	struct pbt_nl *nl;
	int ret;

	ret = parse_start(argc, argv, &o);
	if (ret)
		return ret;
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = prepare(nl, &o, &s);
	if (!ret)
		ret = create_and_start(nl, &s);
	if (!ret)
		printf("%s session '%s' (id %u); traced writes %s\n",
		       s.wait_trigger ? "created (starts on its trigger)" :
					"started", s.name, s.id, s.output);
	session_free(&s);
	pbt_nl_close(nl);
	return ret;
}

/* ---- finding sessions ---- */

static int find_session(struct pbt_nl *nl, const char *name, uint32_t *id,
			char *found, size_t len)
{
	struct pbt_session_info *v;
	size_t n, i, hits = 0, relay = 0;
	int ret = pbt_nl_list_sessions(nl, &v, &n);

	if (ret)
		return nl_fail(nl, ret, "listing sessions");
	for (i = 0; i < n; i++) {
		if (name && strcmp(v[i].name, name))
			continue;
		/* The relay's session belongs to the host's session. */
		if (v[i].relay) {
			relay++;
			continue;
		}
		*id = v[i].id;
		snprintf(found, len, "%s", v[i].name);
		hits++;
	}
	pbt_session_infos_free(v, n);
	if (hits == 1)
		return EXIT_OK;
	if (name && relay && !hits)
		errf("session '%s' is this machine's relay recording for its host: it ends with the host's session; stop that one on the host",
		     name);
	else if (name)
		errf("no session named '%s': 'tracectl status' lists them", name);
	else if (!hits)
		errf("no session to stop: 'tracectl status' lists them");
	else
		errf("%zu sessions are live: name one with -n ('tracectl status' lists them)", hits);
	return EXIT_FAIL;
}

/*
 * A session made to wait for its START_TRACING trigger can be described
 * again before it starts: the same options as start, for the session named
 * by -n (or the config's unique_session_name). traced rereads it and
 * writes to the new output.
 */
static int cmd_reconfigure(int argc, char **argv)
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

/* ---- waiting for traced to finish a file ---- */

struct summary;
static int check_finished(uint32_t id, const char *path, const char *error,
			  struct summary *s);

struct progress {
	uint64_t events, lost, bytes;
	bool gone;		/* session destroyed */
};

static void sum_stats(const struct pbt_session_info *si, struct progress *p)
{
	size_t b, c;

	p->events = p->lost = 0;
	for (b = 0; b < si->nr_buffers; b++) {
		for (c = 0; c < si->buffers[b].nr_cpus; c++) {
			const struct pbtrace_cpu_stats *st = &si->buffers[b].cpus[c];

			p->events += st->events_written;
			p->lost += st->lost_full + st->lost_overwritten +
				   st->lost_too_large + st->lost_nmi;
		}
	}
}

/* Session state and file size, for progress and for missed notifications. */
static int poll_session(struct pbt_nl *nl, uint32_t id, const char *output,
			struct progress *p)
{
	struct pbt_session_info si;
	struct stat st;
	int ret = pbt_nl_get_session(nl, id, &si);

	if (ret == -ENOENT) {
		p->gone = true;
		return 0;
	}
	if (ret)
		return ret;
	sum_stats(&si, p);
	pbt_session_info_free(&si);
	if (output && !stat(output, &st))
		p->bytes = (uint64_t)st.st_size;
	return 0;
}

/*
 * Reads notifications: returns 1 when session id was destroyed (with
 * traced's reason in error when it ended the session early, else ""), -1
 * when traced went away, 0 otherwise.
 */
static int drain_notifications(struct pbt_nl *nl, uint32_t id, char *error,
			       size_t errlen)
{
	struct pbt_notify n;
	int ret;

	while ((ret = pbt_nl_next_notify(nl, &n)) > 0) {
		if (n.cmd == PBTRACE_CMD_DESTROY_SESSION && n.session_id == id) {
			snprintf(error, errlen, "%s", n.error);
			return 1;
		}
		if (n.cmd == PBTRACE_CMD_DAEMON_GONE)
			return -1;
	}
	return 0;	/* -ENOBUFS: poll_session catches up */
}

/* On a terminal one line redrawn in place; in a log one line a second. */
static void print_progress(const struct progress *p, uint64_t elapsed_ms,
			   long long duration_ms)
{
	static uint64_t last_logged = UINT64_MAX;
	bool tty = isatty(STDERR_FILENO);
	char bytes[32];

	if (!tty && last_logged != UINT64_MAX &&
	    elapsed_ms - last_logged < 1000)
		return;
	last_logged = elapsed_ms;
	fmt_bytes(bytes, sizeof(bytes), (double)p->bytes);
	if (duration_ms > 0)
		fprintf(stderr, "%s%6.1fs / %.1fs  file %s  events %llu  lost %llu   ",
			tty ? "\r" : "", elapsed_ms / 1000.0, duration_ms / 1000.0, bytes,
			(unsigned long long)p->events, (unsigned long long)p->lost);
	else
		fprintf(stderr, "%s%6.1fs  file %s  events %llu  lost %llu  (Ctrl-C stops)   ",
			tty ? "\r" : "", elapsed_ms / 1000.0, bytes,
			(unsigned long long)p->events, (unsigned long long)p->lost);
	if (!tty)
		fputc('\n', stderr);
}

/* Waits for the DESTROY of id: traced has finished the file; error gets
 * what traced said if it ended the session early. */
static int wait_file_done(struct pbt_nl *nl, uint32_t id, const char *output,
			  char *error, size_t errlen)
{
	struct pollfd pfd = { .fd = pbt_nl_notify_fd(nl), .events = POLLIN };
	struct progress p = { 0 };
	uint32_t pid;
	int r;

	for (;;) {
		if (interrupted) {
			errf("interrupted: the session stays stopped; traced still finishes the file");
			return EXIT_INTERRUPTED;
		}
		r = drain_notifications(nl, id, error, errlen);
		if (r > 0)
			return EXIT_OK;
		if (!poll_session(nl, id, NULL, &p) && p.gone) {
			/* The kernel queued the DESTROY notification before
			 * GET_SESSION could miss the session: read it now. */
			drain_notifications(nl, id, error, errlen);
			return EXIT_OK;
		}
		if (r < 0 || (!pbt_nl_daemon_pid(nl, &pid) && !pid)) {
			errf("traced is not running, so the file is not finished: the data stays in the kernel until traced restarts and writes %s",
			     output ? output : "the file");
			return EXIT_NO_TRACED;
		}
		poll(&pfd, 1, WAIT_TICK_MS);
	}
}

static int stop_session(struct pbt_nl *nl, uint32_t id)
{
	int ret = pbt_nl_session_cmd(nl, PBTRACE_CMD_STOP_SESSION, id);

	/* Already stopped (by traced: duration, trigger, file size): fine. */
	if (ret == -EALREADY)
		return EXIT_OK;
	if (ret)
		return nl_fail(nl, ret, "stopping the session");
	return EXIT_OK;
}

static int cmd_stop(int argc, char **argv)
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
	if (!ret && wait && pbt_nl_subscribe(nl))
		ret = nl_fail(nl, -EIO, "subscribing to notifications");
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

/* ---- status ---- */

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
	for (i = 0; i < n; i++)
		print_session(&v[i], boottime_ns());
	pbt_session_infos_free(v, n);
	return EXIT_OK;
}

static int cmd_status(int argc, char **argv)
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

/* ---- record: start, progress, stop, wait, summary ---- */

#define SUMMARY_MACHINES 16

/* A relayed machine's part of the file (packets with its machine_id). */
struct summary_machine {
	uint32_t id;
	char name[PBTRACE_NAME_MAX + 1];
	uint64_t packets, ftrace_events;
};

struct summary {
	struct summary_machine machines[SUMMARY_MACHINES];
	size_t nr_machines;
	uint64_t packets, ftrace_events, bundles_lost, dropped;
	uint64_t first_ts, last_ts;
	uint64_t by_kind[8];		/* see kind_names */
	uint64_t by_event[600];		/* FtraceEvent oneof field number */
	size_t processes, threads;
	char machine[64], release[64];
	bool bad;
	uint64_t bad_offset;
	bool final_stats;	/* this machine's trace_stats: traced's last */
	uint64_t size;
	int read_err;		/* errno when the file could not be read */
};

static const char *const kind_names[] = {
	"ftrace bundles", "process trees", "clock snapshots", "trace configs",
	"system info", "stats (process/sys/trace)", "triggers/service events",
	"other",
};

static unsigned int packet_kind(const Perfetto__Protos__TracePacket *p)
{
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS:
		return 0;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE:
		return 1;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT:
		return 2;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG:
		return 3;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO:
		return 4;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_STATS:
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYS_STATS:
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS:
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS:
		return 5;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRIGGER:
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SERVICE_EVENT:
		return 6;
	default:
		return 7;
	}
}

/* Deltas from 0 per bundle: the sum is the kind's last timestamp. */
static void add_compact_ts(struct summary *s, const uint64_t *d, size_t n)
{
	uint64_t ts = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		ts += d[i];
		if (!s->first_ts || ts < s->first_ts)
			s->first_ts = ts;
		if (ts > s->last_ts)
			s->last_ts = ts;
	}
}

/* compact_sched: one entry of a kind's timestamp column per event. */
static void add_compact(struct summary *s,
			const Perfetto__Protos__FtraceEventBundle__CompactSched *c)
{
	size_t sw = c->n_switch_timestamp, wk = c->n_waking_timestamp;

	s->ftrace_events += sw + wk;
	s->by_event[PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH] += sw;
	s->by_event[PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKING] += wk;
	add_compact_ts(s, c->switch_timestamp, sw);
	add_compact_ts(s, c->waking_timestamp, wk);
}

static void add_bundle(struct summary *s,
		       const Perfetto__Protos__FtraceEventBundle *b)
{
	size_t i;

	if (b->has_lost_events && b->lost_events)
		s->bundles_lost++;
	if (b->compact_sched)
		add_compact(s, b->compact_sched);
	for (i = 0; i < b->n_event; i++) {
		const Perfetto__Protos__FtraceEvent *e = b->event[i];

		s->ftrace_events++;
		if (e->event_case < 600)
			s->by_event[e->event_case]++;
		if (e->has_timestamp && (!s->first_ts || e->timestamp < s->first_ts))
			s->first_ts = e->timestamp;
		if (e->has_timestamp && e->timestamp > s->last_ts)
			s->last_ts = e->timestamp;
	}
}

static struct summary_machine *find_machine(struct summary *s, uint32_t id)
{
	size_t i;

	for (i = 0; i < s->nr_machines; i++)
		if (s->machines[i].id == id)
			return &s->machines[i];
	if (s->nr_machines == SUMMARY_MACHINES)
		return NULL;
	s->machines[s->nr_machines].id = id;
	return &s->machines[s->nr_machines++];
}

/* Relayed machines' packets: counted per machine, named by the
 * system_info the host wrote for each. */
static void add_machine_packet(struct summary *s,
			       const Perfetto__Protos__TracePacket *p)
{
	struct summary_machine *m = find_machine(s, p->machine_id);
	const Perfetto__Protos__SystemInfo *si = p->system_info;

	if (!m)
		return;
	m->packets++;
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS) {
		m->ftrace_events += p->ftrace_events->n_event;
		if (p->ftrace_events->compact_sched)
			m->ftrace_events +=
				p->ftrace_events->compact_sched->n_switch_timestamp +
				p->ftrace_events->compact_sched->n_waking_timestamp;
	}
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO &&
	    si->machine_name)
		snprintf(m->name, sizeof(m->name), "%s", si->machine_name);
}

static void add_packet(struct summary *s, const Perfetto__Protos__TracePacket *p)
{
	const Perfetto__Protos__SystemInfo *si;

	if (p->has_machine_id && p->machine_id)
		add_machine_packet(s, p);
	s->packets++;
	s->by_kind[packet_kind(p)]++;
	if (p->has_previous_packet_dropped && p->previous_packet_dropped)
		s->dropped++;
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS)
		add_bundle(s, p->ftrace_events);
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE) {
		s->processes += p->process_tree->n_processes;
		s->threads += p->process_tree->n_threads;
	}
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS &&
	    !(p->has_machine_id && p->machine_id))
		s->final_stats = true;
	/* This machine's: a relayed machine's system_info has its id. */
	si = p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO &&
	     !(p->has_machine_id && p->machine_id) ? p->system_info : NULL;
	if (si && si->utsname) {
		snprintf(s->machine, sizeof(s->machine), "%s",
			 si->utsname->machine ? si->utsname->machine : "");
		snprintf(s->release, sizeof(s->release), "%s",
			 si->utsname->release ? si->utsname->release : "");
	}
}

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

/* Walks Trace.packet records one by one: a big file never sits unpacked. */
static void summarize(const uint8_t *data, size_t len, struct summary *s)
{
	const uint8_t *p = data, *end = data + len;
	Perfetto__Protos__TracePacket *pkt;
	uint64_t tag, n;

	while (p < end) {
		const uint8_t *rec = p;

		if (!read_varint(&p, end, &tag) || tag != 0x0a ||
		    !read_varint(&p, end, &n) || n > (uint64_t)(end - p)) {
			s->bad = true;
			s->bad_offset = rec - data;
			return;
		}
		pkt = perfetto__protos__trace_packet__unpack(NULL, n, p);
		if (!pkt) {
			s->bad = true;
			s->bad_offset = rec - data;
			return;
		}
		add_packet(s, pkt);
		perfetto__protos__trace_packet__free_unpacked(pkt, NULL);
		p += n;
	}
}

static void print_event_counts(const struct summary *s)
{
	const ProtobufCFieldDescriptor *f;
	unsigned int i;

	for (i = 0; i < 600; i++) {
		if (!s->by_event[i])
			continue;
		f = protobuf_c_message_descriptor_get_field(
			&perfetto__protos__ftrace_event__descriptor, i);
		printf("    %-24s %llu\n", f ? f->name : "?",
		       (unsigned long long)s->by_event[i]);
	}
}

/* Reads the trace at path into s; -errno when it cannot (s->read_err). */
static int read_trace(const char *path, struct summary *s)
{
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		s->read_err = errno;
		if (fd >= 0)
			close(fd);
		return -s->read_err;
	}
	map = st.st_size ? mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (map == MAP_FAILED) {
		s->read_err = errno;
		return -s->read_err;
	}
	s->size = (uint64_t)st.st_size;
	if (map) {
		summarize(map, st.st_size, s);
		munmap(map, st.st_size);
	}
	return 0;
}

static void print_summary(const char *path, const struct summary *s)
{
	char size[32];
	unsigned int i;

	fmt_bytes(size, sizeof(size), (double)s->size);
	printf("\n%s: %s, %llu packets\n", path, size, (unsigned long long)s->packets);
	if (s->machine[0])
		printf("  machine %s, kernel %s\n", s->machine, s->release);
	if (s->last_ts > s->first_ts)
		printf("  %.3f s of events\n", (s->last_ts - s->first_ts) / 1e9);
	for (i = 0; i < 8; i++)
		if (s->by_kind[i])
			printf("  %-26s %llu\n", kind_names[i],
			       (unsigned long long)s->by_kind[i]);
	printf("  ftrace events: %llu\n", (unsigned long long)s->ftrace_events);
	print_event_counts(s);
	if (s->processes || s->threads)
		printf("  process tree: %zu processes, %zu threads\n",
		       s->processes, s->threads);
	for (i = 0; i < s->nr_machines; i++)
		printf("  relayed machine %u (%s): %llu packets, %llu ftrace events\n",
		       s->machines[i].id,
		       s->machines[i].name[0] ? s->machines[i].name : "no system_info",
		       (unsigned long long)s->machines[i].packets,
		       (unsigned long long)s->machines[i].ftrace_events);
	printf("  loss: %llu bundles after lost events, %llu packets after dropped data\n",
	       (unsigned long long)s->bundles_lost, (unsigned long long)s->dropped);
	if (s->bad)
		printf("  WARNING: not a valid trace from byte %llu on\n",
		       (unsigned long long)s->bad_offset);
	fflush(stdout);
}

/* What the file holds, for the messages of check_finished. */
static void describe_file(char *buf, size_t n, const char *path,
			  const struct summary *s)
{
	if (s->read_err)
		snprintf(buf, n, "no trace file to read (%s: %s)", path,
			 strerror(s->read_err));
	else if (s->bad)
		snprintf(buf, n, "%s is a valid trace only up to byte %llu", path,
			 (unsigned long long)s->bad_offset);
	else
		snprintf(buf, n, "the file holds what was written before it (a valid trace)");
}

/*
 * After traced destroyed session id: did it finish the file? error is
 * what the DESTROY notification said (traced ended the session early);
 * without one, a file with no closing trace_stats (traced's last packets)
 * is incomplete all the same. s: the file read already, or NULL to read
 * path here. EXIT_INCOMPLETE with a message, else EXIT_OK.
 */
static int check_finished(uint32_t id, const char *path, const char *error,
			  struct summary *s)
{
	struct summary *own = NULL;
	char what[PATH_MAX + 128];
	int ret = EXIT_OK;

	if (!path) {
		if (error && error[0]) {
			errf("traced ended session %u early: %s", id, error);
			return EXIT_INCOMPLETE;
		}
		return EXIT_OK;		/* no file we know of to check */
	}
	if (!s) {
		own = calloc(1, sizeof(*own));
		if (!own) {
			errf("out of memory");
			return EXIT_FAIL;
		}
		read_trace(path, own);
		s = own;
	}
	describe_file(what, sizeof(what), path, s);
	if (error && error[0]) {
		errf("traced ended session %u early: %s; %s", id, error, what);
		ret = EXIT_INCOMPLETE;
	} else if (s->read_err || !s->final_stats) {
		errf("session %u: %s is incomplete: it has no closing trace_stats (traced did not finish it, or max_file_size_bytes left no room; traced's log says which); %s",
		     id, path, s->read_err ? what :
		     s->bad ? what : "what it holds is a valid trace");
		ret = EXIT_INCOMPLETE;
	}
	free(own);
	return ret;
}

/* Progress until the duration is over or Ctrl-C, then stop. */
static int run_until_done(struct pbt_nl *nl, struct session *s)
{
	struct pollfd pfd = { .fd = pbt_nl_notify_fd(nl), .events = POLLIN };
	uint64_t t0 = monotonic_ms(), elapsed;
	struct progress p = { 0 };
	int r;

	for (;;) {
		elapsed = monotonic_ms() - t0;
		r = drain_notifications(nl, s->id, s->error, sizeof(s->error));
		if (r > 0 || (!poll_session(nl, s->id, s->output, &p) && p.gone)) {
			/* traced already finished (duration, size, error); a
			 * DESTROY is queued before GET_SESSION misses it. */
			if (r <= 0)
				drain_notifications(nl, s->id, s->error,
						    sizeof(s->error));
			fputc('\n', stderr);
			return 1;
		}
		if (r < 0) {
			fputc('\n', stderr);
			errf("traced went away: the data stays in the kernel until traced restarts and writes %s",
			     s->output);
			return -1;
		}
		print_progress(&p, elapsed, s->duration_ms);
		if (interrupted || (s->duration_ms > 0 &&
				    elapsed >= (uint64_t)s->duration_ms))
			break;
		poll(&pfd, 1, WAIT_TICK_MS);
	}
	fputc('\n', stderr);
	interrupted = 0;	/* the Ctrl-C that stopped us is used up */
	return 0;
}

/* The summary of the file, then whether traced finished it. */
static int summarize_and_check(struct session *ss)
{
	struct summary *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		errf("out of memory");
		return EXIT_FAIL;
	}
	if (!read_trace(ss->output, s))
		print_summary(ss->output, s);
	ret = check_finished(ss->id, ss->output, ss->error, s);
	if (!ret && s->bad)
		ret = EXIT_FAIL;	/* said in the summary */
	free(s);
	return ret;
}

static int cmd_record(int argc, char **argv)
{
	struct start_opts o;
	struct session s = { 0 };
	struct pbt_nl *nl;
	int ret, r;

	ret = parse_start(argc, argv, &o);
	if (ret)
		return ret;
	if (!o.config && o.duration_ms < 0)
		o.duration_ms = DEFAULT_RECORD_MS;
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = prepare(nl, &o, &s);
	if (!ret && pbt_nl_subscribe(nl))
		ret = nl_fail(nl, -EIO, "subscribing to notifications");
	if (!ret)
		ret = create_and_start(nl, &s);
	if (ret)
		goto out;
	fprintf(stderr, "recording '%s' into %s%s\n", s.name, s.output,
		s.duration_ms > 0 ? "" : " until Ctrl-C");
	r = run_until_done(nl, &s);
	if (r < 0) {
		ret = EXIT_NO_TRACED;
		goto out;
	}
	if (!r) {
		ret = stop_session(nl, s.id);
		if (!ret) {
			fprintf(stderr, "stopped; waiting for traced to finish the file\n");
			ret = wait_file_done(nl, s.id, s.output, s.error,
					     sizeof(s.error));
		}
	}
	if (!ret)
		ret = summarize_and_check(&s);
out:
	session_free(&s);
	pbt_nl_close(nl);
	return ret;
}

/* ---- trigger, list-events ---- */

static int cmd_trigger(int argc, char **argv)
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

static int print_event(const char *name, int available, void *arg)
{
	(void)arg;
	if (available)
		printf("%s\n", name);
	else
		printf("%-32s (not in this kernel)\n", name);
	return 0;
}

static int cmd_list_events(int argc, char **argv)
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
		{ "record", cmd_record },
		{ "trigger", cmd_trigger },
		{ "list-events", cmd_list_events },
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
