// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl merge -o OUT.tar FILE...: several machines' files as one trace.
 *
 * Each hypervisor host writes a file of its own, holding its relayed
 * machines; a machine that recorded alone writes one too. trace_processor
 * (v58+) and the Perfetto UI open a TAR of such files with a
 * perfetto_manifest as one trace (Perfetto's
 * docs/reference/perfetto-manifest.md). Without a manifest every file is
 * the same "host" machine. The manifest is written from each file's own
 * identity: its host's SystemInfo.machine_name and the pbtrace.boot_id
 * trace attribute traced writes, the names of its relayed machines.
 *
 * What trace_processor v58.2 does with such an archive, read in its source
 * and tried (docs/multi-machine.md, "Merging hosts' files"), decides the
 * layout:
 *
 *  - the members are read in name order, one after the other, and a file's
 *    machine is placed on the timeline at its first event, through
 *    REALTIME: its clock_snapshot relates its BOOTTIME to its REALTIME, and
 *    its REALTIME is tied to the timeline machine's (ClockTracker::
 *    BridgeToTraceTime). If the timeline machine's file has not been read
 *    yet, the machine is tied BOOTTIME to BOOTTIME instead: wrong by the
 *    difference of the boots. So the file of the timeline's machine (the
 *    manifest's trace_time) is member 000-, the other hosts follow.
 *  - a remote_clock_sync ties its machine to the timeline machine, whatever
 *    file it is in (ProtoTraceReader::ParseRemoteClockSync). So only the
 *    timeline file keeps its relayed machines (a "machines" entry); the
 *    relayed machines of any other file are split out into members of
 *    their own, their packets without machine_id and without the
 *    remote_clock_sync, placed by a manifest "clocks" entry against their
 *    host's BOOTTIME at the offset trace_processor would have taken from
 *    that remote_clock_sync (CalculateClockOffsets), after every host.
 */
#define _GNU_SOURCE
#include <libgen.h>

#include "tracectl.h"
#include "packets.h"
#include "symbolize.h"
#include "tar.h"
#include "trace_file.h"

#define MERGE_MAX_FILES 100		/* member names 000- to 099- */
#define MERGE_MAX_RELAYED 64		/* relayed machine ids per file */
#define MERGE_NAME_LEN 160
#define MANIFEST_NAME "perfetto_manifest.json"

/* TracePacket fields merge reads: protobuf-c numbers a oneof's cases by
 * their field numbers, from proto/trace.proto. */
#define F_FTRACE_EVENTS PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS
#define F_CLOCK_SNAPSHOT PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT
#define F_SYSTEM_INFO PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO
#define F_REMOTE_CLOCK_SYNC PERFETTO__PROTOS__TRACE_PACKET__DATA_REMOTE_CLOCK_SYNC
#define F_TRACE_ATTRIBUTES PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES

#define BOOTTIME PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME
#define REALTIME PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME

typedef Perfetto__Protos__TracePacket Packet;

/* A machine another one relayed into a file (machine_id != 0). */
struct relayed {
	uint32_t id;
	char name[MERGE_NAME_LEN];
	bool named;		/* its system_info had a machine_name */
	unsigned int syncs;	/* remote_clock_sync packets */
	bool synced;		/* @offset is from the first of them */
	int64_t offset;		/* BOOTTIME: this machine minus its host */
	uint64_t bundles;	/* ftrace_events packets */
	uint64_t bytes;		/* its records without machine_id nor sync */
	char member[PBT_TAR_NAME_MAX + 1];	/* split out: its own member */
};

struct input {
	const char *path;
	char base[NAME_MAX + 1];
	uint8_t *data;
	size_t len;
	int mapped;
	uint64_t mtime;
	dev_t dev;
	ino_t ino;
	char name[MERGE_NAME_LEN];	/* the host's (machine_id 0) */
	bool named;
	char boot_id[PBT_BOOT_ID_LEN + 1];	/* "" when the file has none */
	bool realtime;		/* a clock_snapshot with BOOTTIME and REALTIME */
	struct relayed m[MERGE_MAX_RELAYED];
	size_t nr_m;
	bool split;		/* its relayed machines get members of their own */
	uint64_t host_bytes;	/* the records without machine_id */
	char member[PBT_TAR_NAME_MAX + 1];
};

struct merge {
	struct input in[MERGE_MAX_FILES];
	size_t n;
	size_t timeline;	/* the input whose host's BOOTTIME is trace time */
	char *manifest;
	size_t manifest_len;
};

/* ---- reading one file --------------------------------------------------- */

static struct relayed *relayed(struct input *f, uint32_t id)
{
	size_t i;

	for (i = 0; i < f->nr_m; i++)
		if (f->m[i].id == id)
			return &f->m[i];
	if (f->nr_m == MERGE_MAX_RELAYED)
		return NULL;
	memset(&f->m[f->nr_m], 0, sizeof(f->m[0]));
	f->m[f->nr_m].id = id;
	return &f->m[f->nr_m++];
}

/* Valid UTF-8 (a JSON string must be): shortest forms, no surrogates. */
static bool utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c;
	int n, i;

	while (*p) {
		if (*p < 0x80) {
			p++;
			continue;
		}
		n = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : *p >= 0xc2 ? 1 : -1;
		if (n < 0 || *p > 0xf4)
			return false;
		c = *p & (0x3f >> n);
		for (i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			c = c << 6 | (p[i] & 0x3f);
		}
		if ((n == 2 && c < 0x800) || (n == 3 && (c < 0x10000 || c > 0x10ffff)) ||
		    (c >= 0xd800 && c <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

static void take_name(char *dst, const char *name)
{
	snprintf(dst, MERGE_NAME_LEN, "%s", name);
}

static void read_system_info(struct input *f, const Packet *p, uint32_t mid)
{
	const char *name = p->system_info->machine_name;
	struct relayed *m;

	if (!name || !*name)
		return;
	if (!mid) {
		if (!f->named)
			take_name(f->name, name);
		f->named = true;
		return;
	}
	m = relayed(f, mid);
	if (m && !m->named) {
		take_name(m->name, name);
		m->named = true;
	}
}

static void read_attributes(struct input *f, const Packet *p, uint32_t mid)
{
	const Perfetto__Protos__TraceAttributes *ta = p->trace_attributes;
	size_t i;

	for (i = 0; !mid && i < ta->n_attribute; i++) {
		const Perfetto__Protos__TraceAttributes__Attribute *a = ta->attribute[i];

		if (a->key && !strcmp(a->key, PBT_ATTR_BOOT_ID) && a->value_case ==
		    PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_STRING_VALUE &&
		    strlen(a->string_value) == PBT_BOOT_ID_LEN)
			memcpy(f->boot_id, a->string_value, PBT_BOOT_ID_LEN + 1);
	}
}

static void read_clock_snapshot(struct input *f, const Packet *p)
{
	const Perfetto__Protos__ClockSnapshot *cs = p->clock_snapshot;
	bool boot = false, real = false;
	size_t i;

	for (i = 0; i < cs->n_clocks; i++) {
		boot |= cs->clocks[i]->clock_id == BOOTTIME;
		real |= cs->clocks[i]->clock_id == REALTIME;
	}
	f->realtime |= boot && real;
}

/* BOOTTIME of a snapshot, 0 when it has none. */
static uint64_t boottime_of(const Perfetto__Protos__ClockSnapshot *cs)
{
	size_t i;

	for (i = 0; cs && i < cs->n_clocks; i++)
		if (cs->clocks[i]->clock_id == BOOTTIME)
			return cs->clocks[i]->timestamp;
	return 0;
}

/*
 * The BOOTTIME offset (client minus host) trace_processor takes from one
 * remote_clock_sync, as ProtoTraceReader::CalculateClockOffsets computes
 * it: adjacent synced_clocks less than 30 s apart on the client give
 * (c1 + c2) / 2 - h1 and c2 - (h1 + h2) / 2; the mean of them all.
 */
static bool sync_offset(const Perfetto__Protos__RemoteClockSync *rs,
			int64_t *offset)
{
	const uint64_t round_ns = 30ull * 1000000000ull;
	int64_t sum = 0;
	size_t i, n = 0;

	for (i = 1; i < rs->n_synced_clocks; i++) {
		const Perfetto__Protos__RemoteClockSync__SyncedClocks *a =
			rs->synced_clocks[i - 1], *b = rs->synced_clocks[i];
		uint64_t c1 = boottime_of(a->client_clocks), h1 = boottime_of(a->host_clocks);
		uint64_t c2 = boottime_of(b->client_clocks), h2 = boottime_of(b->host_clocks);

		if (c2 - c1 >= round_ns || !c1 || !h1 || !c2 || !h2)
			continue;
		sum += (int64_t)(c1 + c2) / 2 - (int64_t)h1;
		sum += (int64_t)c2 - (int64_t)(h1 + h2) / 2;
		n += 2;
	}
	if (!n)
		return false;
	*offset = sum / (int64_t)n;
	return true;
}

static void read_sync(struct relayed *m, const Packet *p)
{
	if (m->syncs++ == 0)
		m->synced = sync_offset(p->remote_clock_sync, &m->offset);
}

/* A packet worth unpacking: the few small ones merge reads. */
static bool wanted(const struct trace_fields *tf)
{
	return trace_fields_has(tf, F_SYSTEM_INFO) ||
	       trace_fields_has(tf, F_TRACE_ATTRIBUTES) ||
	       (trace_fields_has(tf, F_CLOCK_SNAPSHOT) && !tf->machine_id) ||
	       (trace_fields_has(tf, F_REMOTE_CLOCK_SYNC) && tf->machine_id);
}

/* Bytes of the record holding @len packet bytes. */
static uint64_t record_bytes(size_t len)
{
	uint8_t hdr[TRACE_RECORD_HEADER_MAX];

	return len + trace_record_header(hdr, len);
}

/* The packet @pkt, @len bytes, of the record of @rec_len bytes at @off. */
static int read_packet(struct input *f, const uint8_t *pkt, size_t len,
		       size_t rec_len, uint64_t off)
{
	struct trace_fields tf;
	struct relayed *m = NULL;
	size_t stripped;
	Packet *p;

	if (trace_packet_fields(pkt, len, &tf)) {
		errf("%s is not a valid trace: the packet at byte %llu is no protobuf message",
		     f->path, (unsigned long long)off);
		return -1;
	}
	if (tf.machine_id) {
		m = relayed(f, tf.machine_id);
		if (!m) {
			errf("%s: more than %d relayed machines; tracectl merge takes at most that many a file",
			     f->path, MERGE_MAX_RELAYED);
			return -1;
		}
		if (trace_fields_has(&tf, F_FTRACE_EVENTS))
			m->bundles++;
		if (!trace_fields_has(&tf, F_REMOTE_CLOCK_SYNC)) {
			stripped = trace_packet_strip_machine(pkt, len, NULL);
			m->bytes += record_bytes(stripped);
		}
	} else {
		/* As it is in the file: the kernel may write a record's
		 * length in more bytes than it needs. */
		f->host_bytes += rec_len;
	}
	if (!wanted(&tf))
		return 0;
	p = perfetto__protos__trace_packet__unpack(NULL, len, pkt);
	if (!p) {
		errf("%s is not a valid trace: the packet at byte %llu does not decode as a TracePacket",
		     f->path, (unsigned long long)off);
		return -1;
	}
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO:
		read_system_info(f, p, tf.machine_id);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES:
		read_attributes(f, p, tf.machine_id);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT:
		read_clock_snapshot(f, p);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_REMOTE_CLOCK_SYNC:
		read_sync(m, p);
		break;
	default:
		break;
	}
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	return 0;
}

static int walk(struct input *f)
{
	const uint8_t *p = f->data, *end = f->data + f->len, *pkt;
	size_t len;
	int ret;

	while (p < end) {
		uint64_t off = (uint64_t)(p - f->data);

		ret = trace_next_record(&p, end, &pkt, &len);
		if (ret < 0) {
			if (!off)
				errf("%s is not a Perfetto trace: it does not start with a Trace.packet record",
				     f->path);
			else
				errf("%s is not a valid trace from byte %llu: no Trace.packet record there",
				     f->path, (unsigned long long)off);
			return -1;
		}
		if (!ret) {
			errf("%s is truncated: its record at byte %llu ends past the file's %zu bytes (a copy cut short, or traced still writing it: 'tracectl stop --wait' first)",
			     f->path, (unsigned long long)off, f->len);
			return -1;
		}
		if (read_packet(f, pkt, len, (size_t)(p - f->data - off), off))
			return -1;
	}
	return 0;
}

/* The file's name without a .pftrace-like suffix, for a fallback name. */
static void stem(char *dst, size_t len, const char *base)
{
	static const char *const exts[] = { ".pftrace", ".perfetto-trace", ".pb", ".trace" };
	size_t n = strlen(base), i, e;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		e = strlen(exts[i]);
		if (n > e && !strcmp(base + n - e, exts[i])) {
			n -= e;
			break;
		}
	}
	snprintf(dst, len, "%.*s", (int)n, base);
}

static int read_input(struct input *f, const char *path)
{
	char tmp[PATH_MAX];
	struct stat st;
	size_t i;
	int fd;

	f->path = path;
	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(f->base, sizeof(f->base), "%s", basename(tmp));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		errf("cannot read %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || !st.st_size) {
		errf("%s is %s, not a trace file", path,
		     S_ISDIR(st.st_mode) ? "a directory" :
		     !S_ISREG(st.st_mode) ? "no regular file" : "empty");
		close(fd);
		return -1;
	}
	f->len = (size_t)st.st_size;
	f->mtime = (uint64_t)st.st_mtime;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->data = pbt_file_bytes(fd, f->len, &f->mapped);
	close(fd);
	if (!f->data) {
		errf("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (walk(f))
		return -1;
	if (!f->named) {
		stem(f->name, sizeof(f->name), f->base);
		fprintf(stderr, "tracectl: warning: %s names no machine (recorded by a traced older than machine_name): calling it '%s'\n",
			path, f->name);
	}
	for (i = 0; i < f->nr_m; i++) {
		if (f->m[i].named)
			continue;
		snprintf(f->m[i].name, MERGE_NAME_LEN, "%.128s-machine%u", f->name, f->m[i].id);
		fprintf(stderr, "tracectl: warning: %s: relayed machine %u has no system_info name: calling it '%s'\n",
			path, f->m[i].id, f->m[i].name);
	}
	return 0;
}

/* ---- the plan: members, names, checks ----------------------------------- */

/* Within a file, machine ids are distinct machines (a guest rebooted in a
 * session comes back as a new id under its old name): a name is kept
 * apart with its id, or trace_processor would make one machine of them. */
static void unique_in_file(struct input *f)
{
	char name[MERGE_NAME_LEN];
	size_t i, j;

	for (i = 0; i < f->nr_m; i++) {
		bool dup = !strcmp(f->m[i].name, f->name);

		for (j = 0; j < i; j++)
			dup |= !strcmp(f->m[i].name, f->m[j].name);
		if (!dup)
			continue;
		snprintf(name, sizeof(name), "%.140s (machine %u)", f->m[i].name, f->m[i].id);
		memcpy(f->m[i].name, name, sizeof(name));
	}
}

/* The names of file @i's machines, one after the other: NULL at the end. */
static const char *name_of(const struct input *f, size_t k)
{
	return k == 0 ? f->name : k <= f->nr_m ? f->m[k - 1].name : NULL;
}

static int check_names(struct merge *mg)
{
	size_t i, j, a, b;
	const char *x, *y;

	for (i = 0; i < mg->n; i++)
		for (a = 0; (x = name_of(&mg->in[i], a)); a++) {
			if (!utf8_ok(x)) {
				errf("%s: machine name '%s' is not UTF-8, which a manifest cannot carry",
				     mg->in[i].path, x);
				return -1;
			}
			for (j = 0; j < i; j++)
				for (b = 0; (y = name_of(&mg->in[j], b)); b++)
					if (!strcmp(x, y)) {
						errf("machine '%s' is in both %s and %s: trace_processor would make one machine of the two. Merge files of different machines, or record with distinct names (traced --machine-name for a host; relay_name or endpoint_machines for a relayed machine)",
						     x, mg->in[j].path, mg->in[i].path);
						return -1;
					}
		}
	return 0;
}

static int check_boots(struct merge *mg)
{
	size_t i, j;

	for (i = 0; i < mg->n; i++)
		for (j = 0; j < i; j++)
			if (mg->in[i].boot_id[0] &&
			    !strcmp(mg->in[i].boot_id, mg->in[j].boot_id)) {
				errf("%s ('%s') and %s ('%s') are from the same boot of one machine (boot id %s): it cannot be merged as two machines; open each file alone",
				     mg->in[j].path, mg->in[j].name, mg->in[i].path,
				     mg->in[i].name, mg->in[i].boot_id);
				return -1;
			}
	return 0;
}

static int check_clocks(struct merge *mg)
{
	size_t i, k;

	for (i = 0; i < mg->n; i++) {
		struct input *f = &mg->in[i];

		if (!f->realtime && mg->n > 1) {
			errf("%s has no clock_snapshot with BOOTTIME and REALTIME: nothing places '%s' against the other machines (traced writes one at the start of every file)",
			     f->path, f->name);
			return -1;
		}
		for (k = 0; k < f->nr_m; k++)
			if (f->m[k].bundles && !f->m[k].synced) {
				errf("%s: relayed machine %u ('%s') has events but no usable remote_clock_sync: nothing places it against '%s'",
				     f->path, f->m[k].id, f->m[k].name, f->name);
				return -1;
			}
	}
	return 0;
}

static int member_name(char *dst, size_t idx, const char *base, const char *tail,
		       const char *path)
{
	int n = snprintf(dst, PBT_TAR_NAME_MAX + 1, "%03zu-%s%s", idx, base, tail);

	if (n < 0 || n > PBT_TAR_NAME_MAX) {
		errf("%s: the name is too long for a TAR member (%d of %d bytes with its prefix): use a shorter name",
		     path, n, PBT_TAR_NAME_MAX);
		return -1;
	}
	if (!utf8_ok(dst)) {
		errf("%s: the file name is not UTF-8, which a manifest cannot carry: rename it", path);
		return -1;
	}
	return 0;
}

/*
 * Which file gives the timeline (the first with relayed machines: their
 * remote_clock_sync can only tie them to it), the order of the members,
 * and which relayed machines are split out.
 */
static int plan(struct merge *mg)
{
	char s[NAME_MAX + 1], tail[64];
	size_t i, k, idx = 1;

	mg->timeline = 0;
	for (i = 0; i < mg->n; i++)
		if (mg->in[i].nr_m) {
			mg->timeline = i;
			break;
		}
	for (i = 0; i < mg->n; i++) {
		unique_in_file(&mg->in[i]);
		mg->in[i].split = mg->in[i].nr_m && i != mg->timeline;
	}
	if (check_names(mg) || check_boots(mg) || check_clocks(mg))
		return -1;
	if (member_name(mg->in[mg->timeline].member, 0, mg->in[mg->timeline].base,
			"", mg->in[mg->timeline].path))
		return -1;
	for (i = 0; i < mg->n; i++)
		if (i != mg->timeline &&
		    member_name(mg->in[i].member, idx++, mg->in[i].base, "",
				mg->in[i].path))
			return -1;
	for (i = 0; i < mg->n; i++) {
		if (!mg->in[i].split)
			continue;
		stem(s, sizeof(s), mg->in[i].base);
		for (k = 0; k < mg->in[i].nr_m; k++) {
			snprintf(tail, sizeof(tail), ".machine%u.pftrace", mg->in[i].m[k].id);
			if (member_name(mg->in[i].m[k].member, idx++, s, tail,
					mg->in[i].path))
				return -1;
		}
	}
	if (idx > MERGE_MAX_FILES) {
		errf("%zu members: tracectl merge writes at most %d (000- to %03d-)",
		     idx, MERGE_MAX_FILES, MERGE_MAX_FILES - 1);
		return -1;
	}
	return 0;
}

/* ---- the manifest --------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	char *grow;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;

		while (cap < b->len + n + 1)
			cap *= 2;
		grow = realloc(b->p, cap);
		if (!grow) {
			b->oom = true;
			return;
		}
		b->p = grow;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static __attribute__((format(printf, 2, 3)))
void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void sb_str(struct sbuf *b, const char *s)
{
	char esc[8];

	sb_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			sb_add(b, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			sb_add(b, esc, 6);
		} else {
			sb_add(b, s, 1);
		}
	}
	sb_add(b, "\"", 1);
}

static void manifest_host(struct sbuf *b, const struct input *f)
{
	size_t k;

	sb_add(b, "    {\"path\": ", 13);
	sb_str(b, f->member);
	if (!f->nr_m || f->split) {
		sb_printf(b, ", \"machine\": {\"name\": ");
		sb_str(b, f->name);
		sb_printf(b, "}}");
		return;
	}
	sb_printf(b, ", \"machines\": [{\"id\": 0, \"name\": ");
	sb_str(b, f->name);
	sb_printf(b, "}");
	for (k = 0; k < f->nr_m; k++) {
		sb_printf(b, ", {\"id\": %u, \"name\": ", f->m[k].id);
		sb_str(b, f->m[k].name);
		sb_printf(b, "}");
	}
	sb_printf(b, "]}");
}

/* A machine split out of its host's file: at a common instant its
 * BOOTTIME reads T when its host's reads T + offset_ns. */
static void manifest_split(struct sbuf *b, const struct input *f,
			   const struct relayed *m)
{
	sb_add(b, "    {\"path\": ", 13);
	sb_str(b, m->member);
	sb_printf(b, ", \"machine\": {\"name\": ");
	sb_str(b, m->name);
	sb_printf(b, "}");
	if (m->synced) {
		sb_printf(b, ",\n     \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": ");
		sb_str(b, f->member);
		sb_printf(b, ", \"clock\": \"BOOTTIME\"}, \"offset_ns\": %lld}",
			  (long long)-m->offset);
	}
	sb_printf(b, "}");
}

static int build_manifest(struct merge *mg)
{
	const struct input *t = &mg->in[mg->timeline];
	struct sbuf b = { 0 };
	size_t i, k;

	sb_printf(&b, "{\"perfetto_manifest\": {\n  \"version\": 1,\n");
	sb_printf(&b, "  \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": ");
	sb_str(&b, t->member);
	if (t->nr_m) {
		sb_printf(&b, ", \"machine\": ");
		sb_str(&b, t->name);
	}
	sb_printf(&b, "},\n  \"files\": [\n");
	manifest_host(&b, t);
	for (i = 0; i < mg->n; i++) {
		if (i == mg->timeline)
			continue;
		sb_printf(&b, ",\n");
		manifest_host(&b, &mg->in[i]);
	}
	for (i = 0; i < mg->n; i++)
		for (k = 0; mg->in[i].split && k < mg->in[i].nr_m; k++) {
			sb_printf(&b, ",\n");
			manifest_split(&b, &mg->in[i], &mg->in[i].m[k]);
		}
	sb_printf(&b, "\n  ]\n}}\n");
	if (b.oom) {
		free(b.p);
		errf("out of memory");
		return -1;
	}
	mg->manifest = b.p;
	mg->manifest_len = b.len;
	return 0;
}

/* ---- writing the archive ------------------------------------------------- */

/* The records of @f for machine @mid (0: the host), as its own file:
 * without machine_id, a relayed machine's remote_clock_sync left out. */
static int write_part(struct pbt_tar *t, const struct input *f, uint32_t mid)
{
	const uint8_t *p = f->data, *end = f->data + f->len, *pkt;
	uint8_t hdr[TRACE_RECORD_HEADER_MAX], *buf = NULL;
	struct trace_fields tf;
	size_t len, n, cap = 0;
	int ret = 0;

	while (!ret && p < end) {
		const uint8_t *rec = p;

		if (trace_next_record(&p, end, &pkt, &len) <= 0 ||
		    trace_packet_fields(pkt, len, &tf))
			return snprintf(t->err, sizeof(t->err), "%s changed while merging",
					f->path), -1;
		if (tf.machine_id != mid)
			continue;
		if (!mid) {
			ret = pbt_tar_write(t, rec, (size_t)(p - rec));
			continue;
		}
		if (trace_fields_has(&tf, F_REMOTE_CLOCK_SYNC))
			continue;
		if (len > cap) {
			uint8_t *grow = realloc(buf, len);

			if (!grow) {
				free(buf);
				return snprintf(t->err, sizeof(t->err), "out of memory"), -1;
			}
			buf = grow;
			cap = len;
		}
		n = trace_packet_strip_machine(pkt, len, buf);
		ret = pbt_tar_write(t, hdr, trace_record_header(hdr, n)) ||
		      pbt_tar_write(t, buf, n);
	}
	free(buf);
	return ret;
}

/* The input of the @j-th host member: the timeline's first, then the
 * others in the order given. */
static size_t member_order(const struct merge *mg, size_t j)
{
	return j == 0 ? mg->timeline : j <= mg->timeline ? j - 1 : j;
}

static uint64_t newest_mtime(const struct merge *mg)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < mg->n; i++)
		if (mg->in[i].mtime > t)
			t = mg->in[i].mtime;
	return t;
}

static int write_members(struct merge *mg, struct pbt_tar *t)
{
	uint64_t now = newest_mtime(mg);
	size_t i, j, k;

	if (pbt_tar_begin(t, MANIFEST_NAME, mg->manifest_len, now) ||
	    pbt_tar_write(t, mg->manifest, mg->manifest_len) || pbt_tar_end(t))
		return -1;
	for (j = 0; j < mg->n; j++) {
		const struct input *f = &mg->in[member_order(mg, j)];

		if (f->split) {
			if (pbt_tar_begin(t, f->member, f->host_bytes, f->mtime) ||
			    write_part(t, f, 0) || pbt_tar_end(t))
				return -1;
			continue;
		}
		if (pbt_tar_begin(t, f->member, f->len, f->mtime) ||
		    pbt_tar_write(t, f->data, f->len) || pbt_tar_end(t))
			return -1;
	}
	for (i = 0; i < mg->n; i++)
		for (k = 0; mg->in[i].split && k < mg->in[i].nr_m; k++) {
			const struct relayed *m = &mg->in[i].m[k];

			if (pbt_tar_begin(t, m->member, m->bytes, mg->in[i].mtime) ||
			    write_part(t, &mg->in[i], m->id) || pbt_tar_end(t))
				return -1;
		}
	return pbt_tar_finish(t);
}

/* Into a temporary file beside @out, renamed over it once complete: a
 * failed merge leaves no half archive and keeps an older OUT. */
static int write_archive(struct merge *mg, const char *out)
{
	struct pbt_tar t = { .fd = -1 };
	char tmp[PATH_MAX];
	mode_t mask;
	int ret;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", out) >= (int)sizeof(tmp)) {
		errf("-o %s: path too long", out);
		return EXIT_BAD_OUTPUT;
	}
	t.fd = mkstemp(tmp);
	if (t.fd < 0) {
		errf("cannot write %s: %s: pick another -o", out, strerror(errno));
		return EXIT_BAD_OUTPUT;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(t.fd, 0666 & ~mask) || write_members(mg, &t) || fsync(t.fd))
		goto fail;
	ret = close(t.fd);
	t.fd = -1;
	if (ret || rename(tmp, out))
		goto fail;
	return EXIT_OK;
fail:
	if (!t.err[0])
		snprintf(t.err, sizeof(t.err), "%s", strerror(errno));
	errf("writing %s failed: %s; nothing written", out, t.err);
	if (t.fd >= 0)
		close(t.fd);
	unlink(tmp);
	return EXIT_BAD_OUTPUT;
}

/* ---- the command ---------------------------------------------------------- */

static void print_plan(const struct merge *mg, const char *out)
{
	size_t i, k, machines = 0;

	for (i = 0; i < mg->n; i++)
		machines += 1 + mg->in[i].nr_m;
	printf("%s: %zu machines from %zu files, on %s's BOOTTIME\n", out, machines,
	       mg->n, mg->in[mg->timeline].name);
	for (i = 0; i < mg->n; i++) {
		const struct input *f = &mg->in[member_order(mg, i)];

		printf("  %s: %s (%s%s)", f->member, f->name,
		       f->boot_id[0] ? "boot " : "no boot id",
		       f->boot_id[0] ? f->boot_id : "");
		for (k = 0; k < f->nr_m; k++) {
			printf(", %s (machine %u", f->m[k].name, f->m[k].id);
			if (f->split)
				printf(" -> %s, %+lld ns from %s", f->m[k].member,
				       (long long)f->m[k].offset, f->name);
			printf(")");
		}
		printf("  <- %s\n", f->path);
	}
}

/* The input that is the file @dev, @ino, among the first @n: NULL if none. */
static const char *same_file(const struct merge *mg, size_t n, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (mg->in[i].dev == dev && mg->in[i].ino == ino)
			return mg->in[i].path;
	return NULL;
}

/* A file named twice, or an output that is an input (the merge would
 * replace it). */
static int check_files(const struct merge *mg, const char *out)
{
	const char *same;
	struct stat so;
	size_t i;

	for (i = 1; i < mg->n; i++) {
		same = same_file(mg, i, mg->in[i].dev, mg->in[i].ino);
		if (same) {
			errf("%s and %s are the same file: name it once", same,
			     mg->in[i].path);
			return EXIT_FAIL;
		}
	}
	same = stat(out, &so) ? NULL : same_file(mg, mg->n, so.st_dev, so.st_ino);
	if (same) {
		errf("-o %s is %s, one of the files to merge: pick another -o", out, same);
		return EXIT_BAD_OUTPUT;
	}
	return EXIT_OK;
}

static void free_merge(struct merge *mg)
{
	size_t i;

	for (i = 0; i < mg->n; i++)
		if (mg->in[i].data)
			pbt_file_bytes_free(mg->in[i].data, mg->in[i].len, mg->in[i].mapped);
	free(mg->manifest);
	free(mg);
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	struct merge *mg;
	struct stat st;
	int c, i, ret = EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "+o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_HELP:
			usage(stdout);
			return EXIT_OK;
		default:
			return usage_error("merge: bad option");
		}
	}
	if (!out)
		return usage_error("merge wants -o OUT.tar");
	if (optind == argc)
		return usage_error("merge wants one or more trace files");
	if (argc - optind > MERGE_MAX_FILES)
		return usage_error("merge takes at most %d files", MERGE_MAX_FILES);
	if (!stat(out, &st) && !S_ISREG(st.st_mode)) {
		errf("-o %s: %s; pick a file name", out,
		     S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
		return EXIT_BAD_OUTPUT;
	}
	mg = calloc(1, sizeof(*mg));
	if (!mg) {
		errf("out of memory");
		return EXIT_FAIL;
	}
	for (i = optind; i < argc; i++)
		if (read_input(&mg->in[mg->n++], argv[i]))
			goto out;
	ret = check_files(mg, out);
	if (ret)
		goto out;
	ret = EXIT_FAIL;
	if (plan(mg) || build_manifest(mg))
		goto out;
	ret = write_archive(mg, out);
	if (ret == EXIT_OK)
		print_plan(mg, out);
out:
	free_merge(mg);
	return ret;
}
