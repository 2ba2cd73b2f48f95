// SPDX-License-Identifier: GPL-2.0
/* tracectl: tracectl record: start, progress, stop, wait, summary. */
#define _GNU_SOURCE
#include "tracectl.h"

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

int cmd_record(int argc, char **argv)
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
	if (!ret)
		ret = subscribe(nl);
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
