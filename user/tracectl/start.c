// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl start: options, the config they stand for, the session. */
#define _GNU_SOURCE
#include "tracectl.h"

static const struct option start_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "event", required_argument, NULL, 'e' },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "buffer-size", required_argument, NULL, 'b' },
	{ "fill", required_argument, NULL, OPT_FILL },
	{ "ring", no_argument, NULL, OPT_RING },
	{ "duration", required_argument, NULL, 't' },
	{ "output", required_argument, NULL, 'o' },
	{ "pid", required_argument, NULL, 'p' },
	{ "name", required_argument, NULL, 'n' },
	{ "machine", required_argument, NULL, 'm' },
	{ "all-machines", no_argument, NULL, 'A' },
	{ "stacks", optional_argument, NULL, OPT_STACKS },
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
	case OPT_FILTER:
		if (!o->nr_events)
			return usage_error("--filter applies to the -e before it: write -e EVENT --filter EXPR");
		if (o->filters[o->nr_events - 1])
			return usage_error("two --filter for -e %s: join them in one, e.g. '(A) && (B)'",
					   o->events[o->nr_events - 1]);
		if (!*optarg)
			return usage_error("--filter for -e %s is empty: leave it out to keep every event",
					   o->events[o->nr_events - 1]);
		o->filters[o->nr_events - 1] = optarg;
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
	case OPT_STACKS:
		if (optarg && strcmp(optarg, "kernel"))
			return usage_error("--stacks takes no value (kernel and user frames) or =kernel (kernel frames only), not '%s'", optarg);
		o->stacks = PBTRACE_TP_KERNEL_STACK |
			    (optarg ? 0 : PBTRACE_TP_USER_STACK);
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

int parse_start(int argc, char **argv, struct start_opts *o)
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
		f.stacks = o->stacks;
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

void session_free(struct session *s)
{
	pbt_spec_resolved_free(&s->spec);
	pbt_config_free(&s->cfg);
	free(s->output);
}

/*
 * --filter: onto the -e it follows, in the buffer the flags' config put
 * that event in (Perfetto's FtraceConfig has no filter, so the config
 * written to the file does not show it).
 */
static int attach_filters(const struct start_opts *o,
			  struct pbt_session_spec *spec)
{
	struct pbt_buffer_spec *b;
	size_t k, i, j, hit;

	for (k = 0; k < o->nr_events; k++) {
		if (!o->filters[k])
			continue;
		for (hit = 0, i = 0; i < spec->nr_buffers; i++) {
			b = &spec->buffers[i];
			for (j = 0; j < b->nr_events; j++) {
				if (strcmp(b->events[j], o->events[k]))
					continue;
				b->filters[j] = o->filters[k];
				hit++;
			}
		}
		if (!hit) {
			errf("-e %s --filter: the event is not in the session's buffers (a syscall event?): filters apply to tracepoints",
			     o->events[k]);
			return EXIT_BAD_EVENT;
		}
	}
	return EXIT_OK;
}

/* Everything short of NEW_SESSION: config, events, output, traced. */
int prepare(struct pbt_nl *nl, const struct start_opts *o,
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
		ret = attach_filters(o, &s->spec);
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

int create_and_start(struct pbt_nl *nl, struct session *s)
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

int cmd_start(int argc, char **argv)
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
