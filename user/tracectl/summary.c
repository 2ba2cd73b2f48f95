// SPDX-License-Identifier: GPL-2.0
/* tracectl: what a finished trace file holds, read back with protobuf-c. */
#define _GNU_SOURCE
#include "tracectl.h"
#include "trace_file.h"

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

static int find_generic(struct summary *s, uint32_t field_id)
{
	size_t i;

	for (i = 0; i < s->nr_generic; i++)
		if (s->generic[i].field_id == field_id)
			return (int)i;
	if (s->nr_generic == SUMMARY_GENERIC)
		return -1;
	s->generic[s->nr_generic].field_id = field_id;
	return (int)s->nr_generic++;
}

/* DescriptorProto.name (field 1), the event's name, from its bytes. */
static void descriptor_name(const ProtobufCBinaryData *d, char *out, size_t len)
{
	size_t i = 0;

	while (i < d->len) {
		uint64_t key = 0, n = 0;
		unsigned int shift = 0;

		while (i < d->len && shift < 64) {
			key |= (uint64_t)(d->data[i] & 0x7f) << shift;
			shift += 7;
			if (!(d->data[i++] & 0x80))
				break;
		}
		if ((key & 7) != 2)	/* DescriptorProto: all length-delimited */
			return;
		for (shift = 0; i < d->len && shift < 64; shift += 7) {
			n |= (uint64_t)(d->data[i] & 0x7f) << shift;
			if (!(d->data[i++] & 0x80))
				break;
		}
		if (n > d->len - i)
			return;
		if (key >> 3 == 1) {
			snprintf(out, len, "%.*s", (int)n, (const char *)d->data + i);
			return;
		}
		i += n;
	}
}

static void add_descriptors(struct summary *s,
			    const Perfetto__Protos__FtraceEventBundle *b)
{
	char name[PBTRACE_NAME_MAX] = "";
	size_t i;
	int g;

	for (i = 0; i < b->n_generic_event_descriptors; i++) {
		const Perfetto__Protos__FtraceEventBundle__GenericEventDescriptor *d =
			b->generic_event_descriptors[i];

		g = find_generic(s, (uint32_t)d->field_id);
		if (g < 0 || s->generic[g].name[0] || !d->has_event_descriptor)
			continue;
		descriptor_name(&d->event_descriptor, name, sizeof(name));
		snprintf(s->generic[g].name, sizeof(s->generic[g].name), "%s/%s",
			 d->group_name ? d->group_name : "?", name);
	}
}

/* An event trace.proto does not know: its field number, if generic. */
static bool add_generic(struct summary *s, const Perfetto__Protos__FtraceEvent *e)
{
	size_t i;
	int g;

	for (i = 0; i < e->base.n_unknown_fields; i++) {
		if (e->base.unknown_fields[i].tag < PBTRACE_TP_GENERIC_PROTO_BASE)
			continue;
		g = find_generic(s, e->base.unknown_fields[i].tag);
		if (g >= 0)
			s->generic[g].n++;
		return g >= 0;
	}
	return false;
}

static void add_bundle(struct summary *s,
		       const Perfetto__Protos__FtraceEventBundle *b)
{
	size_t i;

	if (b->has_lost_events && b->lost_events)
		s->bundles_lost++;
	if (b->compact_sched)
		add_compact(s, b->compact_sched);
	add_descriptors(s, b);
	for (i = 0; i < b->n_event; i++) {
		const Perfetto__Protos__FtraceEvent *e = b->event[i];

		s->ftrace_events++;
		if ((e->event_case || !add_generic(s, e)) && e->event_case < 600)
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

/* Counts @id once among all the relayed machines (open addressing). */
static void count_relayed(struct summary *s, uint32_t id)
{
	size_t h = (id * 2654435761u) % SUMMARY_ID_SET, i;

	for (i = 0; i < SUMMARY_ID_SET; i++, h = (h + 1) % SUMMARY_ID_SET) {
		if (s->relayed_ids[h] == id + 1)
			return;
		if (!s->relayed_ids[h]) {
			s->relayed_ids[h] = id + 1;
			s->nr_relayed++;
			return;
		}
	}
}

/* Relayed machines' packets: counted per machine, named by the
 * system_info the host wrote for each; all of them together too. */
static void add_machine_packet(struct summary *s,
			       const Perfetto__Protos__TracePacket *p)
{
	struct summary_machine *m = find_machine(s, p->machine_id);
	const Perfetto__Protos__SystemInfo *si = p->system_info;
	uint64_t events = 0;

	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS) {
		events = p->ftrace_events->n_event;
		if (p->ftrace_events->compact_sched)
			events += p->ftrace_events->compact_sched->n_switch_timestamp +
				  p->ftrace_events->compact_sched->n_waking_timestamp;
	}
	count_relayed(s, p->machine_id);
	s->relayed_packets++;
	s->relayed_events += events;
	if (!m)
		return;
	m->packets++;
	m->ftrace_events += events;
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

/* Walks Trace.packet records one by one: a big file never sits unpacked. */
void summarize(const uint8_t *data, size_t len, struct summary *s)
{
	const uint8_t *p = data, *end = data + len;
	Perfetto__Protos__TracePacket *pkt;

	while (p < end) {
		const uint8_t *rec = p;

		/* A finished file has no record cut short: 0 is bad too. */
		if (trace_next_packet(&p, end, &pkt) <= 0) {
			s->bad = true;
			s->bad_offset = rec - data;
			return;
		}
		add_packet(s, pkt);
		perfetto__protos__trace_packet__free_unpacked(pkt, NULL);
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
	for (i = 0; i < s->nr_generic; i++) {
		if (!s->generic[i].n)
			continue;
		if (s->generic[i].name[0])
			printf("    %-24s %llu\n", s->generic[i].name,
			       (unsigned long long)s->generic[i].n);
		else
			printf("    generic field %-10u %llu\n",
			       s->generic[i].field_id,
			       (unsigned long long)s->generic[i].n);
	}
}

/* Reads the trace at path into s; -errno when it cannot (s->read_err). */
int read_trace(const char *path, struct summary *s)
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

void print_summary(const char *path, const struct summary *s)
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
	for (i = 0; s->nr_relayed <= SUMMARY_MACHINES && i < s->nr_machines; i++)
		printf("  relayed machine %u (%s): %llu packets, %llu ftrace events\n",
		       s->machines[i].id,
		       s->machines[i].name[0] ? s->machines[i].name : "no system_info",
		       (unsigned long long)s->machines[i].packets,
		       (unsigned long long)s->machines[i].ftrace_events);
	if (s->nr_relayed > SUMMARY_MACHINES)
		printf("  relayed machines: %zu%s, %llu packets, %llu ftrace events\n",
		       s->nr_relayed,
		       s->nr_relayed >= SUMMARY_ID_SET ? " or more" : "",
		       (unsigned long long)s->relayed_packets,
		       (unsigned long long)s->relayed_events);
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
int check_finished(uint32_t id, const char *path, const char *error,
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
