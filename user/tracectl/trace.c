// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl: tracectl trace: syscalls live, as perf trace shows them.
 *
 * A streaming session like record's (traced writes the file as it goes)
 * with raw_syscalls and the events that name threads, and a live
 * watermark on its buffer (PBTRACE_A_BUFFER_WATERMARK_MS): every
 * LIVE_WATERMARK_MS the kernel seals what the CPUs that wrote hold and
 * says up to when every CPU's events are sealed; GET_WATERMARK says up to
 * when traced has them all in the file. tracectl reads the growing file
 * and prints calls in time order up to that time: no event of another CPU
 * can sort in before it later. A module without the watermark gets the
 * old way: hold HOLD_MS back and hope. At the end (the command's exit,
 * Ctrl-C, -t) the session is stopped, traced finishes the file and the
 * rest is printed with the pending calls and -s's summary.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/inotify.h>
#include <sys/wait.h>

#include "tracectl.h"

#define HOLD_MS (2 * STREAM_PERIOD_MS + 500)
/*
 * The kernel's round period: a line comes about this plus an RCU grace
 * period plus traced's copy after its call returned (docs/benchmarks.md).
 */
#define LIVE_WATERMARK_MS 10
/*
 * While the view holds events the watermark has not passed yet, look
 * again this often (a round's watermark comes a grace period after its
 * events, often with no write to the file that could wake us); with
 * nothing held, sleep until the file changes (inotify) or WAIT_TICK_MS.
 */
#define LIVE_RECHECK_MS 4
/* The most a start waits for traced to write, and an end for the last lines. */
#define LIVE_READY_MS 1000
#define LIVE_DRAIN_MS 1000

static const struct option trace_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "expr", required_argument, NULL, 'e' },
	{ "duration", required_argument, NULL, OPT_SV_DURATION },
	{ "failure", no_argument, NULL, OPT_SV_FAILURE },
	{ "summary", no_argument, NULL, 's' },
	{ "summary-only", no_argument, NULL, OPT_SV_SUMMARY_ONLY },
	{ "output", required_argument, NULL, 'o' },
	{ "time", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

struct trace_run {
	struct sv_opts vo;
	bool all;
	const char *output;		/* -o, else a temporary file */
	char tmp[64];
	long long time_ms;		/* -t; 0: until the end */
	char **cmd;			/* -- CMD ARGS */
	char path[PATH_MAX];		/* CMD found in PATH, as strace does */
	pid_t child;
	int status;			/* the child's, from waitpid */
	bool child_done;
	bool child_ran;			/* continued into CMD */
	int fd;				/* the file, once traced made it */
	uint64_t off;			/* what the view has of it */
	bool live;			/* the kernel has a live watermark */
	int ino;			/* inotify on the file, or -1 */
	uint64_t exit_ns;		/* BOOTTIME the child was seen gone */
	uint64_t exit_ms;		/* monotonic, the same moment */
};

static int parse_trace(int argc, char **argv, struct trace_run *r)
{
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:ae:so:t:", trace_options,
				NULL)) != -1) {
		if (c == 'a') {
			r->all = true;
		} else if (c == 'o') {
			r->output = optarg;
		} else if (c == 't') {
			r->time_ms = parse_duration_ms(optarg);
			if (r->time_ms <= 0)
				return usage_error("-t wants a duration like 500ms, 10s or 2m, not '%s'", optarg);
		} else {
			ret = parse_view_opt(c, optarg, &r->vo);
			if (ret)
				return ret < 0 ? usage_error("bad option") : ret;
		}
	}
	if (optind < argc)
		r->cmd = argv + optind;
	if (!r->cmd && !r->all && !r->vo.filter.nr_pids)
		return usage_error("trace what? '-- CMD ARGS' (a command), -p PID (a running one) or -a (everything)");
	if (r->cmd && r->vo.filter.nr_pids)
		return usage_error("-p and -- CMD exclude each other: trace a command or attach to PIDs");
	return EXIT_OK;
}

/*
 * CMD as strace finds it: a name without a slash is looked up in PATH
 * here, before the fork, so that the child's one exec is the one that
 * runs CMD. execvp in the child would try each PATH entry with an execve
 * of its own, and those failures (ENOENT, ...) would count as CMD's calls,
 * which strace -f and perf trace never show. An unset PATH is execvp's
 * default; an empty entry is the current directory. 127 (not found) and
 * 126 (found, not executable) are the shell's codes for the same.
 */
static int resolve_cmd(struct trace_run *r)
{
	const char *name = r->cmd[0], *p, *end;
	char dirs[PATH_MAX];
	bool denied = false;
	struct stat st;
	size_t len;

	if (strchr(name, '/')) {
		snprintf(r->path, sizeof(r->path), "%s", name);
		return EXIT_OK;
	}
	p = getenv("PATH");
	if (!p) {
		if (!confstr(_CS_PATH, dirs, sizeof(dirs)))
			snprintf(dirs, sizeof(dirs), "/bin:/usr/bin");
		p = dirs;
	}
	for (; *name && p; p = *end ? end + 1 : NULL) {
		end = strchrnul(p, ':');
		len = end - p;
		if (len + strlen(name) + 2 > sizeof(r->path))
			continue;
		if (len)
			snprintf(r->path, sizeof(r->path), "%.*s/%s", (int)len, p, name);
		else
			snprintf(r->path, sizeof(r->path), "./%s", name);
		if (stat(r->path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!access(r->path, X_OK))
			return EXIT_OK;
		denied = true;
	}
	r->path[0] = 0;
	errf("cannot run '%s': %s in PATH (%s)", name,
	     denied ? "not executable" : "not found",
	     getenv("PATH") ? getenv("PATH") : "unset");
	return denied ? 126 : 127;
}

/* The child, after execv said ENOEXEC: /bin/sh PATH ARGS..., as execvp. */
static void run_as_script(struct trace_run *r)
{
	size_t n = 0;
	char **argv;

	while (r->cmd[n])
		n++;
	argv = calloc(n + 2, sizeof(*argv));
	if (!argv)
		return;
	argv[0] = "sh";
	argv[1] = r->path;
	memcpy(argv + 2, r->cmd + 1, n * sizeof(*argv));	/* and the NULL */
	execv("/bin/sh", argv);
	errno = ENOEXEC;	/* say why the file itself did not run */
}

/*
 * The child stops itself, and once the session runs it is continued and
 * becomes CMD: traced from its first instruction, as strace and perf
 * trace do. A stop rather than a pipe to wait on: a pipe's read and close
 * would be the child's own calls in the trace, which strace -f never shows.
 * The stop comes on the way out of raise()'s tgkill, after its sys_exit:
 * the first event of the child is the execve of CMD. A file without a
 * "#!" (ENOEXEC) is run by /bin/sh, as execvp and the shell do.
 */
static int spawn(struct trace_run *r)
{
	int st;

	r->child = fork();
	if (r->child < 0) {
		errf("fork: %s", strerror(errno));
		return EXIT_FAIL;
	}
	if (!r->child) {
		raise(SIGSTOP);
		execv(r->path, r->cmd);
		if (errno == ENOEXEC)
			run_as_script(r);
		st = errno;
		fprintf(stderr, "tracectl: cannot run '%s': %s\n", r->path,
			strerror(st));
		_exit(st == ENOENT ? 127 : 126);
	}
	if (waitpid(r->child, &st, WUNTRACED) != r->child || !WIFSTOPPED(st)) {
		errf("'%s' (pid %d) did not wait for the session to start",
		     r->cmd[0], (int)r->child);
		r->child_done = !WIFSTOPPED(st);
		r->status = st;
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* -p PID: the process's threads too (the kernel's filter is per thread). */
static void add_threads(uint32_t pid, struct start_opts *o)
{
	char path[64];
	struct dirent *d;
	uint32_t tid;
	DIR *dir;

	if (o->nr_pids < PBTRACE_MAX_PIDS)
		o->pids[o->nr_pids++] = pid;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir)) && o->nr_pids < PBTRACE_MAX_PIDS)
		if (!parse_u32(d->d_name, &tid) && tid != pid)
			o->pids[o->nr_pids++] = tid;
	if (dir)
		closedir(dir);
}

static void trace_events(struct pbt_nl *nl, struct start_opts *o)
{
	static const char *const wanted[] = {
		"raw_syscalls/sys_enter", "raw_syscalls/sys_exit",
		"sched/sched_process_fork", "sched/sched_process_exec",
		"sched/sched_process_exit", "sched/sched_process_free",
		"task/task_newtask", "task/task_rename",
	};
	struct event_list *l = calloc(1, sizeof(*l));
	bool listed = l && !pbt_nl_list_events(nl, collect_event, l);
	size_t i;

	/* A kernel without a task event still names threads by the rest;
	 * one without raw_syscalls is refused by prepare(), with why. */
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (!listed || i < 2 || event_state(l, wanted[i]) == 1)
			o->events[o->nr_events++] = wanted[i];
	free(l);
}

static void set_options(struct pbt_nl *nl, struct trace_run *r,
			struct start_opts *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->fill = -1;
	o->duration_ms = -1;
	o->output = r->output ? r->output : r->tmp;
	trace_events(nl, o);
	if (r->cmd)
		o->pids[o->nr_pids++] = (uint32_t)r->child;
	for (i = 0; !r->all && i < r->vo.filter.nr_pids; i++)
		add_threads((uint32_t)r->vo.filter.pids[i], o);
	if (r->all)
		o->nr_pids = 0;
}

/* -e into the kernel: it records only these syscalls. */
static void kernel_filter(const struct trace_run *r, struct session *s)
{
	const struct sv_filter *f = &r->vo.filter;
	uint32_t nrs[PBTRACE_MAX_SYSCALLS];
	size_t i, b, n = 0;

	if (!f->has_set)
		return;
	for (i = 0; i < SV_NR_MAX; i++) {
		if (f->set[i] == f->exclude || !pbt_syscall_name(i))
			continue;
		if (n == PBTRACE_MAX_SYSCALLS)
			return;		/* too many: the view filters alone */
		nrs[n++] = (uint32_t)i;
	}
	for (b = 0; b < s->spec.nr_buffers; b++) {
		memcpy(s->spec.buffers[b].syscalls, nrs, n * sizeof(nrs[0]));
		s->spec.buffers[b].nr_syscalls = n;
	}
}

/* -- CMD: its children join the pid filter as they are forked. */
static void follow_forks(const struct trace_run *r, struct session *s)
{
	size_t b;

	for (b = 0; r->cmd && b < s->spec.nr_buffers; b++)
		s->spec.buffers[b].follow_forks = true;
}

/*
 * The live watermark, if this module has one: GET_WATERMARK of no session
 * is -ENOENT there, -EOPNOTSUPP from one without the command.
 */
static void live_watermark(struct pbt_nl *nl, struct trace_run *r,
			   struct session *s)
{
	struct pbt_watermark_info w;
	size_t b;

	r->live = pbt_nl_get_watermark(nl, 0, &w) != -EOPNOTSUPP;
	if (!r->live)
		errf("note: this pbtrace.ko has no live watermark (an older module): lines come %d ms late",
		     HOLD_MS);
	/*
	 * Expedited grace periods: a person is watching. Each round then
	 * costs an IPI to every CPU that is busy (not idle ones), ~100 a
	 * second while events flow, for a line in half the time, and in a
	 * fraction of it when the CPUs are loaded (docs/benchmarks.md).
	 */
	for (b = 0; r->live && b < s->spec.nr_buffers; b++) {
		s->spec.buffers[b].watermark_ms = LIVE_WATERMARK_MS;
		s->spec.buffers[b].watermark_expedited = true;
	}
}

static void hide_ourselves(struct pbt_nl *nl, struct trace_run *r)
{
	struct sv_filter *f = &r->vo.filter;
	uint32_t pid = 0;

	f->hide[f->nr_hide++] = getpid();
	if (!pbt_nl_daemon_pid(nl, &pid) && pid)
		f->hide[f->nr_hide++] = (int32_t)pid;
}

static bool child_exited(struct trace_run *r)
{
	if (r->cmd && !r->child_done && waitpid(r->child, &r->status, WNOHANG) == r->child)
		r->child_done = true;
	return r->child_done;
}

/*
 * How far the view may print: the read watermark (every event stamped
 * before it, from every CPU, is in the file already, so nothing read
 * later sorts in before it: docs/data-plane.md, "Watermark"), else
 * HOLD_MS back from now. *more: the kernel sealed past what traced has
 * copied. 1 when the session is gone.
 */
static int printable(struct pbt_nl *nl, struct session *s,
		     struct trace_run *r, uint64_t *until, bool *more)
{
	struct pbt_watermark_info w;
	int n;

	*more = false;
	if (r->live) {
		n = pbt_nl_get_watermark(nl, s->id, &w);
		if (n == -ENOENT)
			return 1;
		if (n >= 0) {
			*until = n ? w.read_ns : 0;
			*more = n && w.published_ns > w.read_ns;
			return 0;
		}
		errf("reading the live watermark: %s; lines come %d ms late from now on",
		     pbt_nl_error(nl), HOLD_MS);
		r->live = false;
	}
	*until = boottime_ns() - HOLD_MS * 1000000ull;
	return 0;
}

/* Woken when traced writes the file; -1 (ticks only) if inotify fails. */
static int watch_file(const char *path)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd >= 0 && inotify_add_watch(fd, path, IN_MODIFY) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void drain_fd(int fd)
{
	char buf[4096];

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
}

/* The next sleep (ms): see LIVE_RECHECK_MS. */
static int next_wait(const struct trace_run *r, const struct sv_view *v,
		     bool more)
{
	if (!r->live)
		return WAIT_TICK_MS;
	if (r->exit_ns)
		return LIVE_RECHECK_MS;	/* until the last lines are out */
	if (more || sv_held(v))
		return more ? 1 : LIVE_RECHECK_MS;
	return r->ino >= 0 ? WAIT_TICK_MS : LIVE_RECHECK_MS;
}

/*
 * The command is gone: live, its last lines still come the live way,
 * once the watermark passes the moment it was seen gone (all of its calls
 * were before), within LIVE_DRAIN_MS; the rest at the stop.
 */
static bool lines_done(struct pbt_nl *nl, const struct session *s,
		       struct trace_run *r, uint64_t until)
{
	if (!child_exited(r))
		return false;
	if (!r->exit_ns) {
		r->exit_ns = boottime_ns();
		r->exit_ms = monotonic_ms();
		/* A round now: the watermark passes exit_ns even if the
		 * command's exit was the last event for a while. */
		if (r->live)
			pbt_nl_session_cmd(nl, PBTRACE_CMD_FLUSH_SESSION, s->id);
	}
	return !r->live || until >= r->exit_ns ||
	       monotonic_ms() - r->exit_ms >= LIVE_DRAIN_MS;
}

/* Prints as the file grows, until the end; 1 when traced ended the
 * session itself, -1 when traced went away, else 0. */
static int follow(struct pbt_nl *nl, struct session *s, struct trace_run *r,
		  struct sv_view *v)
{
	struct pollfd pfd[2] = {
		{ .fd = pbt_nl_notify_fd(nl), .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
	};
	uint64_t t0 = monotonic_ms(), next_poll = 0, until;
	struct progress p = { 0 };
	bool more;
	int d;

	r->ino = r->live ? watch_file(s->output) : -1;
	pfd[1].fd = r->ino;
	for (;;) {
		d = drain_notifications(nl, s->id, s->error, sizeof(s->error));
		if (d < 0)
			return -1;
		if (d > 0)
			return 1;
		/* The whole session's state: only now and then. */
		if (monotonic_ms() >= next_poll) {
			if (!poll_session(nl, s->id, s->output, &p) && p.gone)
				return 1;
			next_poll = monotonic_ms() + WAIT_TICK_MS;
		}
		/* The watermark first, then the file: it covers what is read. */
		if (printable(nl, s, r, &until, &more))
			return 1;
		drain_fd(r->ino);
		if (r->fd < 0)
			r->fd = open(s->output, O_RDONLY);
		if (r->fd >= 0 && feed_file(v, s->output, r->fd, &r->off, false))
			return 0;	/* said why; the rest at the end */
		sv_flush(v, until);
		if (interrupted || lines_done(nl, s, r, until) ||
		    (r->time_ms && monotonic_ms() - t0 >= (uint64_t)r->time_ms))
			return 0;
		poll(pfd, 2, next_wait(r, v, more));
	}
}

/* Stop, let traced finish the file, print the rest and the summary. */
static int finish(struct pbt_nl *nl, struct session *s, struct trace_run *r,
		  bool running, struct sv_view *v)
{
	struct progress p = { 0 };
	int ret = EXIT_OK;

	interrupted = 0;	/* the Ctrl-C that ended tracing is used up */
	if (running) {
		ret = stop_session(nl, s->id);
		if (!ret && !poll_session(nl, s->id, s->output, &p) && p.lost)
			errf("the kernel lost %llu events of this session (buffer full): the calls they belonged to are missing or pending below",
			     (unsigned long long)p.lost);
		if (!ret)
			ret = wait_file_done(nl, s->id, s->output, s->error,
					     sizeof(s->error));
	}
	if (r->fd < 0)
		r->fd = open(s->output, O_RDONLY);
	if (r->fd < 0) {
		errf("cannot read %s: %s", s->output, strerror(errno));
		/* traced may have said why it could not write it */
		if (!ret)
			ret = check_finished(s->id, NULL, s->error, NULL);
		return ret ? ret : EXIT_FAIL;
	}
	if (feed_file(v, s->output, r->fd, &r->off, true) && !ret)
		ret = EXIT_FAIL;
	sv_finish(v);
	if (!ret)
		ret = check_finished(s->id, s->output, s->error, NULL);
	return ret;
}

/* An -o that exists is truncated now, as traced would, so the view never
 * reads an old file's packets before traced opens it. */
static int make_output(struct trace_run *r)
{
	int fd;

	if (r->output) {
		fd = open(r->output, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		return EXIT_OK;
	}
	snprintf(r->tmp, sizeof(r->tmp), "/tmp/tracectl-trace-XXXXXX.pftrace");
	fd = mkstemps(r->tmp, 8);
	if (fd < 0) {
		errf("cannot create a temporary trace file in /tmp: %s: give one with -o FILE",
		     strerror(errno));
		return EXIT_BAD_OUTPUT;
	}
	close(fd);
	return EXIT_OK;
}

/*
 * Until traced writes the file (its header first), or LIVE_READY_MS: a
 * command continued before that makes its first calls while traced still
 * reads /proc for the header, and their lines wait for it.
 */
static void wait_writing(const struct session *s)
{
	uint64_t end = monotonic_ms() + LIVE_READY_MS;
	struct stat st;

	while (monotonic_ms() < end && !interrupted &&
	       (stat(s->output, &st) || !st.st_size))
		poll(NULL, 0, 2);
}

static int setup(struct pbt_nl *nl, struct trace_run *r, struct session *s)
{
	struct start_opts o;
	char name[PBTRACE_NAME_MAX];
	int ret = make_output(r);	/* before the options name it */

	if (ret)
		return ret;
	set_options(nl, r, &o);
	snprintf(name, sizeof(name), "trace-%d", (int)getpid());
	o.name = name;
	ret = prepare(nl, &o, s);
	if (ret)
		return ret;
	kernel_filter(r, s);
	follow_forks(r, s);
	live_watermark(nl, r, s);
	hide_ourselves(nl, r);
	if (pbt_nl_subscribe(nl))
		return nl_fail(nl, -EIO, "subscribing to notifications");
	ret = create_and_start(nl, s);
	if (!ret && r->live)
		wait_writing(s);
	return ret;
}

/* CMD's status when there is one, as strace and perf trace exit. */
static int exit_code(struct trace_run *r, int ret)
{
	if (!r->cmd || !r->child_ran)
		return ret;	/* CMD never ran: why tracing did not start */
	if (!r->child_done) {
		errf("'%s' (pid %d) still runs, no longer traced", r->cmd[0],
		     (int)r->child);
		return ret ? ret : EXIT_INTERRUPTED;
	}
	if (WIFSIGNALED(r->status))
		return 128 + WTERMSIG(r->status);
	return WEXITSTATUS(r->status) ? WEXITSTATUS(r->status) : ret;
}

static int run(struct pbt_nl *nl, struct trace_run *r, struct session *s)
{
	struct sv_view *v;
	int ret, f;

	if (r->cmd) {
		ret = resolve_cmd(r);
		if (ret)
			return ret;
		if (spawn(r))
			return EXIT_FAIL;
	}
	ret = setup(nl, r, s);
	if (r->cmd && ret) {
		kill(r->child, SIGKILL);	/* never ran CMD: said why */
		r->child_done = waitpid(r->child, &r->status, 0) == r->child;
		return ret;
	}
	if (r->cmd)
		r->child_ran = !kill(r->child, SIGCONT);
	v = ret ? NULL : sv_new(&r->vo);
	if (!ret && !v)
		ret = EXIT_FAIL;
	if (ret)
		return ret;
	fprintf(stderr, "tracing syscalls of %s into %s%s\n",
		r->cmd ? r->cmd[0] : r->all ? "every thread" : "the given pids",
		s->output, r->cmd ? "" : " until Ctrl-C");
	f = follow(nl, s, r, v);
	if (f < 0) {
		errf("traced went away: the data stays in the kernel until traced restarts and writes %s",
		     s->output);
		ret = EXIT_NO_TRACED;
	} else {
		ret = finish(nl, s, r, f == 0, v);
	}
	sv_free(v);
	return ret;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_run r = { .vo = { .out = stdout, .lines = true }, .fd = -1,
			       .ino = -1 };
	struct session s = { 0 };
	struct pbt_nl *nl;
	int ret;

	ret = parse_trace(argc, argv, &r);
	if (ret)
		return ret;
	nl = open_nl(&ret);
	if (!nl)
		return ret;
	ret = run(nl, &r, &s);
	if (r.fd >= 0)
		close(r.fd);
	if (r.ino >= 0)
		close(r.ino);
	if (!r.output && r.tmp[0])
		unlink(r.tmp);
	session_free(&s);
	pbt_nl_close(nl);
	return exit_code(&r, ret);
}
