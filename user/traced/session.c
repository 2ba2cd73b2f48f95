// SPDX-License-Identifier: GPL-2.0
/* traced: a session's life: its config, adoption, start, triggers, the end. */
#include "traced.h"

/* --- config ------------------------------------------------------------ */

static void read_data_source(struct session *s,
			     const Perfetto__Protos__DataSourceConfig *ds)
{
	const Perfetto__Protos__FtraceConfig *fc = ds->ftrace_config;

	/* Several linux.ftrace sources: the shortest period serves them all. */
	if (fc && ds->name && !strcmp(ds->name, "linux.ftrace") &&
	    fc->drain_period_ms &&
	    (!s->drain_period_ms || fc->drain_period_ms < s->drain_period_ms))
		s->drain_period_ms = fc->drain_period_ms;
	if (ds->process_stats_config && ds->process_stats_config->has_proc_stats_poll_ms)
		s->proc_stats_ms = ds->process_stats_config->proc_stats_poll_ms;
	if (ds->sys_stats_config) {
		const Perfetto__Protos__SysStatsConfig *ss = ds->sys_stats_config;

		s->meminfo_ms = ss->meminfo_period_ms;
		s->vmstat_ms = ss->vmstat_period_ms;
		s->stat_ms = ss->stat_period_ms;
	}
}

static uint32_t at_least(uint32_t ms, uint32_t min, const char *what,
			 struct session *s)
{
	if (!ms || ms >= min)
		return ms;
	logmsg(LOG_WARNING, "session %u: %s %u ms is below the minimum, using %u ms",
	       s->id, what, ms, min);
	return min;
}

static void read_config(struct session *s)
{
	const TraceConfig *c = s->cfg;
	size_t i;

	if (!c)
		return;
	s->duration_ms = c->duration_ms;
	s->streaming = c->write_into_file;
	s->limit = c->max_file_size_bytes;
	s->flush_period_ms = c->flush_period_ms;
	if (c->builtin_data_sources && c->builtin_data_sources->snapshot_interval_ms)
		s->clock_period_ms = at_least(c->builtin_data_sources->snapshot_interval_ms,
					      PBT_SNAPSHOT_INTERVAL_MIN_MS,
					      "snapshot_interval_ms", s);
	if (s->streaming)
		s->write_period_ms = c->file_write_period_ms ?
			at_least(c->file_write_period_ms, MIN_WRITE_PERIOD_MS,
				 "file_write_period_ms", s) :
			DEFAULT_WRITE_PERIOD_MS;
	for (i = 0; i < c->n_data_sources; i++)
		if (c->data_sources[i]->config)
			read_data_source(s, c->data_sources[i]->config);
	s->stacks = pbt_config_has_stacks(c);
	/* Draining only moves chunks to the file: without write_into_file
	 * the kernel buffer is the trace buffer until stop. */
	if (!s->streaming)
		s->drain_period_ms = 0;
	s->drain_period_ms = at_least(s->drain_period_ms, PBT_DRAIN_PERIOD_MIN_MS,
				      "drain_period_ms", s);
	s->proc_stats_ms = at_least(s->proc_stats_ms, MIN_STATS_PERIOD_MS,
				    "proc_stats_poll_ms", s);
	s->meminfo_ms = at_least(s->meminfo_ms, MIN_STATS_PERIOD_MS,
				 "meminfo_period_ms", s);
	s->vmstat_ms = at_least(s->vmstat_ms, MIN_STATS_PERIOD_MS,
				"vmstat_period_ms", s);
	s->stat_ms = at_least(s->stat_ms, MIN_STATS_PERIOD_MS,
			      "stat_period_ms", s);
}

static int trigger_mode(const struct session *s)
{
	if (!s->cfg || !s->cfg->trigger_config)
		return 0;
	return s->cfg->trigger_config->trigger_mode;
}

static const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *
find_trigger(const struct session *s, const char *name)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc;
	size_t i;

	if (!trigger_mode(s))
		return NULL;
	tc = s->cfg->trigger_config;
	for (i = 0; i < tc->n_triggers; i++)
		if (tc->triggers[i]->name && !strcmp(tc->triggers[i]->name, name))
			return tc->triggers[i];
	return NULL;
}

/* --- session life ------------------------------------------------------ */

struct session *find_session(uint32_t id)
{
	struct session *s;

	for (s = sessions; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

void free_session(struct session *s)
{
	struct session **pp;
	size_t i;

	for (pp = &sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	for (i = 0; i < s->nr_buffers; i++)
		pbt_reader_close(&s->bufs[i].rd);
	pbt_writer_close(&s->w);
	if (s->cfg)
		perfetto__protos__trace_config__free_unpacked(s->cfg, NULL);
	free(s->cfg_raw);
	free(s);
}

static void arm_periodic(struct session *s, uint64_t now)
{
	struct timers *t = &s->t;

	t->clock = after_ms(now, s->clock_period_ms);
	t->write = s->streaming ? after_ms(now, s->write_period_ms) : 0;
	t->flush = after_ms(now, s->flush_period_ms);
	t->drain = after_ms(now, s->drain_period_ms);
	t->proc_stats = after_ms(now, s->proc_stats_ms);
	t->meminfo = after_ms(now, s->meminfo_ms);
	t->vmstat = after_ms(now, s->vmstat_ms);
	t->stat = after_ms(now, s->stat_ms);
	t->remote = remote_pending(s) ? after_ms(now, REMOTE_PERIOD_MS) : 0;
}

/* The kernel's BOOTTIME start of session @id, 0 if it cannot say. */
static uint64_t kernel_start_ns(uint32_t id)
{
	struct pbt_session_info si;
	uint64_t ns;

	if (pbt_nl_get_session(nl, id, &si) < 0)
		return 0;
	ns = si.start_ns;
	pbt_session_info_free(&si);
	return ns;
}

/*
 * The kernel is recording: start the clocks of the session. @start_ns is
 * the kernel's start when the caller knows it; else the kernel is asked,
 * since the service events below must not be later than the first event:
 * trace_processor drops every ftrace event before tracing_started
 * (FtraceParser::ParseFtraceEvent, drop_ftrace_data_before_ts_, counted
 * as ftrace_packet_before_tracing_start).
 */
void begin_running(struct session *s, uint64_t start_ns)
{
	uint64_t now = now_ns();

	if (s->state == S_RUNNING || s->state == S_DONE)
		return;
	s->state = S_RUNNING;
	if (!start_ns)
		start_ns = kernel_start_ns(s->id);
	s->start_ns = start_ns && start_ns <= now ? start_ns : now;
	write_header(s);
	if (!s->reattached) {
		write_kernel_stats(s, 0);
		write_service_event(s, PBT_SVC_TRACING_STARTED, s->start_ns);
		write_service_event(s, PBT_SVC_ALL_DATA_SOURCES_STARTED, s->start_ns);
	}
	arm_periodic(s, now);
	/* duration_ms counts from the kernel's start, so a restarted traced
	 * still stops on time. */
	s->t.stop = after_ms(s->start_ns, s->duration_ms);
	if (trigger_mode(s) == PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING &&
	    s->cfg->trigger_config->trigger_timeout_ms)
		s->t.trigger_timeout = after_ms(s->start_ns,
						s->cfg->trigger_config->trigger_timeout_ms);
	logmsg(LOG_INFO, "session %u (%s): recording to %s%s", s->id, s->name,
	       s->w.path, s->streaming ? " (streaming)" : "");
}

static bool machine_lossy(const struct pbtrace_machine_stats *st)
{
	return st->chunks_lost_relay || st->chunks_dropped ||
	       st->guest_events_lost || st->disconnects;
}

static void log_machine(const struct session *s, const struct pbt_machine_info *m)
{
	const struct pbtrace_machine_stats *st = &m->st;

	logmsg(machine_lossy(st) ? LOG_WARNING : LOG_INFO,
	       "session %u: machine %u (%s): %llu chunks, %llu bytes, guest wrote %llu events; lost: %llu chunks on the wire, %llu dropped here (queue full or no clock round), %llu events on the guest, %llu disconnects (%llu ms without it)",
	       s->id, st->machine_id, m->name,
	       (unsigned long long)st->chunks, (unsigned long long)st->bytes,
	       (unsigned long long)st->guest_events_written,
	       (unsigned long long)st->chunks_lost_relay,
	       (unsigned long long)st->chunks_dropped,
	       (unsigned long long)st->guest_events_lost,
	       (unsigned long long)st->disconnects,
	       (unsigned long long)(st->gap_ns / NS_PER_MS));
}

/*
 * A line per machine that lost anything; the others one each up to
 * LOG_MACHINES, else together in one line: a fleet's end is no wall of text.
 */
#define LOG_MACHINES 16

static void log_machines(const struct session *s,
			 const struct pbt_session_info *in)
{
	uint64_t chunks = 0, bytes = 0;
	size_t i, lossy = 0;

	for (i = 0; i < in->nr_machines; i++) {
		chunks += in->machines[i].st.chunks;
		bytes += in->machines[i].st.bytes;
		if (machine_lossy(&in->machines[i].st))
			lossy++;
		if (machine_lossy(&in->machines[i].st) ||
		    in->nr_machines <= LOG_MACHINES)
			log_machine(s, &in->machines[i]);
	}
	if (in->nr_machines > LOG_MACHINES)
		logmsg(lossy ? LOG_WARNING : LOG_INFO,
		       "session %u: %zu machines: %llu chunks, %llu bytes; %zu of them lost something (each said above)",
		       s->id, in->nr_machines, (unsigned long long)chunks,
		       (unsigned long long)bytes, lossy);
}

/* Per relayed machine: what it lost, as trace_stats stamped with its
 * machine_id (docs/traced.md). Read after the remote EOF, so the guest's
 * own counters (its STOPPED frame) are in. */
static void write_machine_stats(struct session *s)
{
	struct pbt_session_info in = { .id = s->id };
	struct pbt_rec r;
	size_t i;

	if (pbt_nl_get_session_machines(nl, &in) < 0) {
		logmsg(LOG_WARNING, "session %u: reading per-machine counters: %s",
		       s->id, pbt_nl_error(nl));
		return;
	}
	for (i = 0; i < in.nr_machines; i++)
		emit(s, pbt_pkt_machine_stats(&s->seq, &in.machines[i].st, &r), &r);
	log_machines(s, &in);
	pbt_session_info_free(&in);
}

/* Close the file with the packets that describe how the trace ended,
 * then free the kernel session (tracectl waits for that DESTROY). */
void finish_session(struct session *s, const char *why)
{
	struct pbt_rec r;
	uint64_t skipped = 0;
	size_t i;
	int ret;

	if (s->state == S_DONE)
		return;
	s->state = S_DONE;
	write_header(s);
	if (!s->failed) {
		drain_all(s);
		drain_remote_to_eof(s);
	}
	for (i = 0; i < s->nr_buffers; i++)
		skipped += s->bufs[i].chunks_skipped + s->bufs[i].remote_skipped;
	s->closing = 1;	/* the closing packets may use the reserve */
	write_service_event(s, PBT_SVC_TRACING_DISABLED, 0);
	write_clock(s);
	write_kernel_stats(s, 1);
	write_machine_stats(s);
	write_symbols(s);
	/* Last and largest: names processes that started during the trace;
	 * dropped whole if the file limit leaves no room. */
	write_process_tree(s);
	emit(s, pbt_pkt_service_event(&s->seq,
				      PBT_SVC_READ_TRACING_BUFFERS_COMPLETED, 0, &r), &r);
	if (s->w.fd >= 0 && pbt_writer_sync(&s->w) < 0)
		logmsg(LOG_ERR, "session %u: fsync %s: %s", s->id, s->w.path,
		       strerror(errno));
	logmsg(s->failed ? LOG_ERR : LOG_INFO,
	       "session %u (%s): finished (%s); %s: %llu bytes%s", s->id,
	       s->name, why,
	       s->w.path ? s->w.path : "(no file)",
	       (unsigned long long)s->w.size,
	       skipped ? ", some chunks did not fit and were dropped" : "");
	ret = pbt_nl_destroy_session(nl, s->id, s->error);
	if (ret < 0 && ret != -ENOENT)	/* ENOENT: someone destroyed it */
		logmsg(LOG_WARNING, "session %u: destroy: %s", s->id,
		       pbt_nl_error(nl));
	if (ret == 1)
		logmsg(LOG_WARNING,
		       "session %u: pbtrace.ko does not take PBTRACE_A_SESSION_ERROR (older module): tracectl is not told why the session ended",
		       s->id);
	free_session(s);
}

/* traced decided the session is over (duration, size, trigger, error). */
void stop_session(struct session *s, const char *why)
{
	if (s->state == S_DONE)
		return;
	if (pbt_nl_session_cmd(nl, PBTRACE_CMD_STOP_SESSION, s->id) < 0)
		logmsg(LOG_WARNING, "session %u: stop: %s", s->id,
		       pbt_nl_error(nl));
	finish_session(s, why);
}

static int load_config(struct session *s, const struct pbt_session_info *in)
{
	if (!in->config || !in->config_len)
		return 0;
	s->cfg = perfetto__protos__trace_config__unpack(NULL, in->config_len,
							in->config);
	if (!s->cfg) {
		logmsg(LOG_ERR, "session %u (%s): stored TraceConfig (%zu bytes) does not decode",
		       in->id, in->name, in->config_len);
		return -1;
	}
	s->cfg_raw = malloc(in->config_len);
	if (!s->cfg_raw)
		return -1;
	memcpy(s->cfg_raw, in->config, in->config_len);
	s->cfg_len = in->config_len;
	read_config(s);
	return 0;
}

static const char *output_path(const struct pbt_session_info *in,
			       const TraceConfig *cfg, char *buf, size_t len)
{
	if (in->output && *in->output)
		return in->output;
	if (cfg && cfg->output_path && *cfg->output_path)
		return cfg->output_path;
	snprintf(buf, len, "/var/tmp/pbtrace-%s.pftrace", in->name);
	logmsg(LOG_WARNING, "session %u (%s) has no output path, writing %s",
	       in->id, in->name, buf);
	return buf;
}

/* A session traced has no file open for: open it (@fresh truncates, else
 * append: a restart), map its buffers, and follow the kernel's state. */
static void adopt(const struct pbt_session_info *in, int fresh)
{
	struct session *s;
	char err[512], fallback[PATH_MAX];
	const char *path;

	/* This machine's relay records it for its host, which writes the
	 * file; reading its chunks here would take them from the relay. */
	if (in->relay)
		return;
	s = calloc(1, sizeof(*s));
	if (!s) {
		logmsg(LOG_ERR, "session %u: out of memory", in->id);
		return;
	}
	s->id = in->id;
	snprintf(s->name, sizeof(s->name), "%s", in->name);
	s->owner_uid = in->owner_uid;
	s->owner_gid = in->owner_gid;
	s->w.fd = -1;
	s->clock_period_ms = CLOCK_PERIOD_MS;
	s->seq.id = PBT_TRACED_SEQ_BASE + in->id;
	s->state = S_CONFIGURED;
	s->next = sessions;
	sessions = s;
	if (load_config(s, in) < 0) {
		fail_session(s, "cannot use the stored config");
		stop_session(s, "bad config");
		return;
	}
	path = output_path(in, s->cfg, fallback, sizeof(fallback));
	if (open_as_owner(s, path, !fresh, err, sizeof(err)) < 0) {
		fail_session(s, err);
		stop_session(s, "output not writable");
		return;
	}
	if (attach_buffers(s, in, s->w.size > 0) < 0) {
		/* The file is fine: it still gets traced's packets. */
		stop_session(s, "ended: cannot map the session's buffers");
		return;
	}
	if (s->w.size > 0) {
		/* A restart: the file has its header; mark the gap on our
		 * sequence and re-anchor the clocks. */
		s->header_done = 1;
		s->reattached = 1;
		s->seq.gap = 1;
		s->seq.started = 1;	/* not first_packet_on_sequence: it was in the file */
		logmsg(LOG_NOTICE,
		       "session %u (%s): reattached, appending to %s at %llu bytes%s",
		       s->id, s->name, path, (unsigned long long)s->w.size,
		       s->w.repaired ? " (cut a torn last record)" : "");
		write_clock(s);
		log_losses(s);
	}
	switch (in->state) {
	case PBTRACE_STATE_STARTED:
		begin_running(s, in->start_ns);
		break;
	case PBTRACE_STATE_STOPPED:
		finish_session(s, "stopped while traced was down");
		break;
	default:
		write_header(s);
		if (trigger_mode(s) == PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING) {
			s->state = S_WAIT_TRIGGER;
			s->t.trigger_timeout = after_ms(now_ns(),
							s->cfg->trigger_config->trigger_timeout_ms);
		}
		break;
	}
}

void adopt_id(uint32_t id, int fresh)
{
	struct pbt_session_info in;
	int ret;

	if (find_session(id))
		return;
	memset(&in, 0, sizeof(in));
	ret = pbt_nl_get_session(nl, id, &in);
	if (ret == -ENOENT)
		return;		/* already gone: a queued notification */
	if (ret < 0) {
		logmsg(LOG_WARNING, "session %u: %s", id, pbt_nl_error(nl));
		return;
	}
	adopt(&in, fresh);
	pbt_session_info_free(&in);
}

/* Bring our sessions in line with the kernel's list: at startup (every
 * session is adopted, appending) and after lost notifications. */
int sync_sessions(int fresh)
{
	struct pbt_session_info *list;
	struct session *s, *next;
	size_t n, i;

	if (pbt_nl_list_sessions(nl, &list, &n) < 0) {
		logmsg(LOG_ERR, "listing sessions: %s", pbt_nl_error(nl));
		return -1;
	}
	for (s = sessions; s; s = next) {
		next = s->next;
		for (i = 0; i < n && list[i].id != s->id; i++)
			;
		if (i == n) {
			logmsg(LOG_WARNING, "session %u (%s) was destroyed under us",
			       s->id, s->name);
			s->state = S_DONE;
			free_session(s);
		} else if (list[i].state == PBTRACE_STATE_STOPPED) {
			finish_session(s, "stopped");
			list[i].id = 0;	/* destroyed now: not to adopt again */
		} else if (list[i].state == PBTRACE_STATE_STARTED) {
			begin_running(s, list[i].start_ns);
		}
	}
	for (i = 0; i < n; i++)
		if (list[i].id && !find_session(list[i].id))
			adopt(&list[i], fresh);
	pbt_session_infos_free(list, n);
	return 0;
}

/* --- triggers ---------------------------------------------------------- */

void on_trigger(struct session *s, const char *name)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *t =
		find_trigger(s, name);
	uint32_t delay;
	struct pbt_rec r;

	if (!t || s->state == S_DONE)
		return;
	delay = t->stop_delay_ms;
	if (s->state == S_WAIT_TRIGGER) {
		emit(s, pbt_pkt_trigger(&s->seq, name, 0, &r), &r);
		logmsg(LOG_INFO, "session %u: trigger %s starts tracing", s->id, name);
		s->t.trigger_timeout = 0;
		if (pbt_nl_session_cmd(nl, PBTRACE_CMD_START_SESSION, s->id) < 0) {
			fail_session(s, pbt_nl_error(nl));
			stop_session(s, "start on trigger failed");
			return;
		}
		begin_running(s, 0);
		return;
	}
	if (trigger_mode(s) != PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING ||
	    s->state != S_RUNNING || s->t.stop_delay)
		return;
	emit(s, pbt_pkt_trigger(&s->seq, name, delay, &r), &r);
	logmsg(LOG_INFO, "session %u: trigger %s stops tracing in %u ms", s->id,
	       name, delay);
	s->t.trigger_timeout = 0;
	s->t.stop_delay = now_ns() + delay * NS_PER_MS + 1;
}
