// SPDX-License-Identifier: GPL-2.0
/* tracectl: waiting for traced to finish a file, with a progress line. */
#define _GNU_SOURCE
#include "tracectl.h"

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
int poll_session(struct pbt_nl *nl, uint32_t id, const char *output,
		 struct progress *p)
{
	struct pbt_session_info si;
	struct stat st;
	int ret = pbt_nl_get_session(nl, id, &si);

	/* Progress only: without the counters it shows what it has. */
	if (!ret && pbt_nl_get_cpu_stats(nl, &si) == -ENOENT)
		ret = -ENOENT;
	if (ret == -ENOENT) {
		pbt_session_info_free(&si);
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
int drain_notifications(struct pbt_nl *nl, uint32_t id, char *error,
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
void print_progress(const struct progress *p, uint64_t elapsed_ms,
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
int wait_file_done(struct pbt_nl *nl, uint32_t id, const char *output,
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

int stop_session(struct pbt_nl *nl, uint32_t id)
{
	int ret = pbt_nl_session_cmd(nl, PBTRACE_CMD_STOP_SESSION, id);

	/*
	 * Already stopped (by traced: duration, trigger, file size): fine.
	 * Already gone, too: traced stopped it, finished the file and
	 * destroyed it since we looked it up (a member's record polls, and
	 * traced's own duration can end the session first); the caller's
	 * wait_file_done() then sees it gone.
	 */
	if (ret == -EALREADY || ret == -ENOENT)
		return EXIT_OK;
	if (ret)
		return nl_fail(nl, ret, "stopping the session");
	return EXIT_OK;
}
