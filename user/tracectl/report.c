// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl: tracectl report FILE: the syscall view of a recorded trace,
 * as perf trace shows it live (syscalls_view.h), with the same filters
 * as tracectl trace.
 */
#define _GNU_SOURCE
#include "tracectl.h"

static const struct option report_options[] = {
	{ "summary", no_argument, NULL, 's' },
	{ "summary-only", no_argument, NULL, OPT_SV_SUMMARY_ONLY },
	{ "expr", required_argument, NULL, 'e' },
	{ "duration", required_argument, NULL, OPT_SV_DURATION },
	{ "failure", no_argument, NULL, OPT_SV_FAILURE },
	{ "pid", required_argument, NULL, 'p' },
	{ "machine", required_argument, NULL, OPT_SV_MACHINE },
	{ "per-machine", no_argument, NULL, OPT_SV_PER_MACHINE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The options report and trace share; -1 when c is not one of them. */
int parse_view_opt(int c, const char *arg, struct sv_opts *o)
{
	struct sv_filter *f = &o->filter;
	char err[256], *end;
	uint32_t pid;
	double ms;

	switch (c) {
	case 's':
		o->summary = true;
		return 0;
	case OPT_SV_SUMMARY_ONLY:
		o->summary = true;
		o->lines = false;
		return 0;
	case 'e':
		if (sv_parse_syscalls(arg, f, err, sizeof(err)))
			return usage_error("%s", err);
		return 0;
	case OPT_SV_DURATION:
		errno = 0;
		ms = strtod(arg, &end);
		if (errno || end == arg || *end || ms < 0 || ms > 1e9)
			return usage_error("--duration wants milliseconds, e.g. --duration 5 or 0.5, not '%s'", arg);
		f->min_duration_ns = (uint64_t)(ms * 1e6);
		return 0;
	case OPT_SV_FAILURE:
		f->failure = true;
		return 0;
	case OPT_SV_MACHINE:
		if (f->nr_machines == SV_MAX_NAMES)
			return usage_error("too many --machine (at most %d): --per-machine shows each",
					   SV_MAX_NAMES);
		f->machines[f->nr_machines++] = arg;
		return 0;
	case OPT_SV_PER_MACHINE:
		o->per_machine = true;
		return 0;
	case 'p':
		if (f->nr_pids == SV_MAX_PIDS)
			return usage_error("too many -p (at most %d)", SV_MAX_PIDS);
		if (parse_u32(arg, &pid) || !pid || pid > INT32_MAX)
			return usage_error("-p wants a process or thread id, not '%s'", arg);
		f->pids[f->nr_pids++] = (int32_t)pid;
		return 0;
	case OPT_HELP:
		usage(stdout);
		exit(EXIT_OK);
	default:
		return -1;
	}
}

/* Packets sv_feed() skipped as unreadable, said once at the end. */
static int said_bad_packets(struct sv_view *v, const char *path)
{
	struct sv_counts c;
	const char *what;
	uint64_t off, at;

	if (!sv_first_bad(v, &off, &at, &what))
		return EXIT_OK;
	sv_get_counts(v, &c);
	errf("%s: %llu packet%s could not be read and %s left out: the first, at byte %llu, breaks at byte %llu (%s)",
	     path, (unsigned long long)c.bad_packets,
	     c.bad_packets == 1 ? "" : "s",
	     c.bad_packets == 1 ? "its events are" : "their events are",
	     (unsigned long long)off, (unsigned long long)at, what);
	return EXIT_FAIL;
}

/*
 * Feeds what path holds beyond *off to v. A file still being written may
 * end inside a packet: that part is read again next time, and at the end
 * (final) said, with the packets that could not be read. Returns 0, or
 * EXIT_FAIL when the file cannot be read or is not a trace from some byte
 * on (the calls before it are kept), or at the end when packets could not
 * be read.
 */
int feed_file(struct sv_view *v, const char *path, int fd, uint64_t *off,
	      bool final)
{
	struct stat st;
	uint64_t bad = 0;
	uint8_t *buf;
	ssize_t got;
	size_t len;
	long used;

	if (fstat(fd, &st)) {
		errf("cannot read %s: %s", path, strerror(errno));
		return EXIT_FAIL;
	}
	if ((uint64_t)st.st_size <= *off)
		return EXIT_OK;
	len = (size_t)(st.st_size - *off);
	buf = malloc(len);
	if (!buf) {
		errf("out of memory reading %s (%zu bytes)", path, len);
		return EXIT_FAIL;
	}
	got = pread(fd, buf, len, (off_t)*off);
	if (got < 0) {
		errf("cannot read %s: %s", path, strerror(errno));
		free(buf);
		return EXIT_FAIL;
	}
	used = sv_feed(v, buf, (size_t)got, &bad);
	free(buf);
	if (used < 0) {
		errf("%s is not a valid trace from byte %llu on (not a TracePacket): the calls before it are shown",
		     path, (unsigned long long)(*off + bad));
		return EXIT_FAIL;
	}
	*off += (uint64_t)used;
	if (final && (uint64_t)used < (uint64_t)got)
		errf("warning: %s ends inside a packet at byte %llu (cut short, or still being written): shown up to there",
		     path, (unsigned long long)*off);
	return final ? said_bad_packets(v, path) : EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	struct sv_opts o = { .out = stdout, .lines = true };
	int c, ret, fd;

	optind = 1;
	while ((c = getopt_long(argc, argv, "se:p:", report_options, NULL)) != -1) {
		ret = parse_view_opt(c, optarg, &o);
		if (ret)
			return ret < 0 ? usage_error("bad option") : ret;
	}
	if (optind != argc - 1)
		return usage_error("report wants one trace file: tracectl report [OPTIONS] FILE");
	fd = open(argv[optind], O_RDONLY);
	if (fd < 0) {
		errf("cannot open %s: %s", argv[optind], strerror(errno));
		return EXIT_FAIL;
	}
	/* progress on a terminal, unless the lines go to it too */
	ret = sv_report_file(&o, argv[optind], fd, isatty(STDERR_FILENO) &&
			     (!o.lines || !isatty(STDOUT_FILENO)), NULL);
	close(fd);
	return ret;
}
