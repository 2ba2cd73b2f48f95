// SPDX-License-Identifier: GPL-2.0
/* traced: periodic work and deadlines. */
#include "traced.h"

/* --- timers ------------------------------------------------------------ */

/* A timer that came: the next one a period after when this one was due,
 * so a late wakeup does not shift every later one (no drift), but never
 * in the past, so a long stall does not fire a burst. */
static int due(uint64_t *t, uint64_t now, uint32_t period_ms)
{
	uint64_t next;

	if (!*t || *t > now)
		return 0;
	next = *t + period_ms * NS_PER_MS;
	*t = !period_ms ? 0 : next > now ? next : now + period_ms * NS_PER_MS;
	return 1;
}

static void run_stats_timers(struct session *s, uint64_t now)
{
	unsigned int what = 0;
	struct pbt_rec r;

	if (due(&s->t.proc_stats, now, s->proc_stats_ms))
		emit(s, pbt_pkt_process_stats(&s->seq, PROC, &r), &r);
	if (due(&s->t.meminfo, now, s->meminfo_ms))
		what |= PBT_SYS_MEMINFO;
	if (due(&s->t.vmstat, now, s->vmstat_ms))
		what |= PBT_SYS_VMSTAT;
	if (due(&s->t.stat, now, s->stat_ms))
		what |= PBT_SYS_STAT;
	if (what)
		emit(s, pbt_pkt_sys_stats(&s->seq, PROC, what, &r), &r);
}

/* Returns 1 when the session ended. */
int run_timers(struct session *s, uint64_t now)
{
	size_t i;

	if (s->state == S_WAIT_TRIGGER) {
		if (due(&s->t.trigger_timeout, now, 0)) {
			stop_session(s, "trigger_timeout_ms passed without a start trigger");
			return 1;
		}
		return 0;
	}
	if (s->state != S_RUNNING)
		return 0;
	if (s->failed || s->full) {
		stop_session(s, s->failed ? "output failed" :
					    "max_file_size_bytes reached");
		return 1;
	}
	if (due(&s->t.stop, now, 0)) {
		stop_session(s, "duration_ms elapsed");
		return 1;
	}
	if (due(&s->t.stop_delay, now, 0)) {
		stop_session(s, "stop trigger");
		return 1;
	}
	if (due(&s->t.trigger_timeout, now, 0)) {
		stop_session(s, "trigger_timeout_ms passed without a stop trigger");
		return 1;
	}
	if (due(&s->t.clock, now, s->clock_period_ms))
		write_clock(s);
	if (due(&s->t.flush, now, s->flush_period_ms) && !s->t.write)
		flush_kernel(s);
	/* drain_period_ms: seal what the CPUs hold and copy it out, so the
	 * file is never more than that behind (streaming sessions only). */
	if (due(&s->t.drain, now, s->drain_period_ms)) {
		flush_kernel(s);
		drain_all(s);
	}
	if (due(&s->t.write, now, s->write_period_ms)) {
		flush_kernel(s);
		drain_all(s);
	}
	if (due(&s->t.remote, now, REMOTE_PERIOD_MS)) {
		for (i = 0; i < s->nr_buffers; i++)
			drain_remote(s, &s->bufs[i]);
	}
	run_stats_timers(s, now);
	if (s->failed || s->full) {
		stop_session(s, s->failed ? "output failed" :
					    "max_file_size_bytes reached");
		return 1;
	}
	return 0;
}

uint64_t next_deadline(const struct session *s)
{
	const uint64_t *t = (const uint64_t *)&s->t;
	uint64_t min = 0;
	size_t i;

	for (i = 0; i < sizeof(s->t) / sizeof(uint64_t); i++)
		if (t[i] && (!min || t[i] < min))
			min = t[i];
	return min;
}
