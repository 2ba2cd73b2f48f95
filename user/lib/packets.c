// SPDX-License-Identifier: GPL-2.0
/*
 * traced's own packets (see packets.h). Messages are built on the stack or
 * in short-lived arrays, packed once into a record and freed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "trace.pb-c.h"
#include "packets.h"
#include "procfs.h"

#define SET(m, f, v) do { (m)->has_##f = 1; (m)->f = (v); } while (0)

#define TRACED_VERSION "pbtrace traced 1"
#define TRACE_PACKET_TAG 0x0A
#define TRACE_CONFIG_TAG ((33u << 3) | 2)	/* TracePacket.trace_config */
#define MAX_KV 512

typedef Perfetto__Protos__TracePacket Packet;

uint64_t pbt_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Stamp the sequence fields every traced packet carries. */
static void stamp(struct pbt_seq *s, Packet *p, uint64_t ts)
{
	SET(p, timestamp, ts);
	p->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	p->trusted_packet_sequence_id = s->id;
	if (!s->started)
		SET(p, first_packet_on_sequence, 1);
	if (s->gap)
		SET(p, previous_packet_dropped,
		    PERFETTO__PROTOS__TRACE_PACKET__DATA_LOSS_REASON__DATA_LOSS_PRESENT |
		    PERFETTO__PROTOS__TRACE_PACKET__DATA_LOSS_REASON__DATA_LOSS_READ_GAP);
	s->started = 1;
	s->gap = 0;
}

/* Pack @p (+ @extra raw field bytes) as one Trace.packet record. */
static int pack_extra(struct pbt_seq *s, Packet *p, uint64_t ts,
		      const uint8_t *extra, size_t extra_len, struct pbt_rec *r)
{
	size_t body, hdr;
	uint8_t head[11];

	stamp(s, p, ts);
	body = protobuf_c_message_get_packed_size(&p->base) + extra_len;
	head[0] = TRACE_PACKET_TAG;
	hdr = 1 + put_varint(head + 1, body);
	r->len = hdr + body;
	r->data = malloc(r->len);
	if (!r->data)
		return -ENOMEM;
	memcpy(r->data, head, hdr);
	protobuf_c_message_pack(&p->base, r->data + hdr);
	if (extra_len)
		memcpy(r->data + r->len - extra_len, extra, extra_len);
	return 0;
}

static int pack(struct pbt_seq *s, Packet *p, struct pbt_rec *r)
{
	return pack_extra(s, p, pbt_boottime_ns(), NULL, 0, r);
}

int pbt_pkt_trace_config(struct pbt_seq *s, const void *cfg, size_t len,
			 struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	uint8_t *field = malloc(len + 16);
	size_t n;
	int ret;

	if (!field)
		return -ENOMEM;
	/* The config goes in verbatim, as the user wrote it: fields pbtrace
	 * does not know survive too. */
	n = put_varint(field, TRACE_CONFIG_TAG);
	n += put_varint(field + n, len);
	memcpy(field + n, cfg, len);
	ret = pack_extra(s, &p, pbt_boottime_ns(), field, n + len, r);
	free(field);
	return ret;
}

static int timezone_off_mins(void)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm))
		return 0;
	return (int)(tm.tm_gmtoff / 60);
}

int pbt_pkt_system_info(struct pbt_seq *s, const char *name,
			struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	Perfetto__Protos__Utsname un = PERFETTO__PROTOS__UTSNAME__INIT;
	struct utsname u;
	struct sysinfo info;

	if (uname(&u) < 0)
		return -errno;
	/* trace_processor names syscalls by machine and decodes prev_state
	 * by release: both must be there. */
	un.sysname = u.sysname;
	un.version = u.version;
	un.release = u.release;
	un.machine = u.machine;
	si.utsname = &un;
	/* The machine's name in trace_processor and the UI, and how tracectl
	 * merge tells hosts apart: the UI says "machine 0" without one. */
	si.machine_name = name && *name ? (char *)name : u.nodename;
	si.tracing_service_version = TRACED_VERSION;
	SET(&si, page_size, (uint32_t)sysconf(_SC_PAGESIZE));
	SET(&si, num_cpus, (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
	SET(&si, hz, sysconf(_SC_CLK_TCK));
	SET(&si, timezone_off_mins, timezone_off_mins());
	if (sysinfo(&info) == 0)
		SET(&si, system_ram_bytes,
		    (uint64_t)info.totalram * info.mem_unit);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO;
	p.system_info = &si;
	return pack(s, &p, r);
}

/* The 36 characters of @proc/sys/kernel/random/boot_id, a new UUID on
 * every boot: 0, or -errno if it cannot be read or is no UUID. */
int pbt_boot_id(const char *proc, char id[PBT_BOOT_ID_LEN + 1])
{
	char path[256], buf[64];
	size_t i, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", proc);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	if (n != PBT_BOOT_ID_LEN)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? buf[i] != '-' : !isxdigit((unsigned char)buf[i]))
			return -EINVAL;
	}
	memcpy(id, buf, n);
	id[n] = '\0';
	return 0;
}

int pbt_pkt_trace_attributes(struct pbt_seq *s, const char *boot_id,
			     struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceAttributes ta = PERFETTO__PROTOS__TRACE_ATTRIBUTES__INIT;
	Perfetto__Protos__TraceAttributes__Attribute a =
		PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__INIT;
	Perfetto__Protos__TraceAttributes__Attribute *ap = &a;

	a.key = PBT_ATTR_BOOT_ID;
	a.value_case = PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_STRING_VALUE;
	a.string_value = (char *)boot_id;
	ta.n_attribute = 1;
	ta.attribute = &ap;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES;
	p.trace_attributes = &ta;
	return pack(s, &p, r);
}

static const struct {
	clockid_t id;
	uint32_t builtin;
} clocks[] = {
	{ CLOCK_BOOTTIME, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME },
	{ CLOCK_MONOTONIC, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC },
	{ CLOCK_MONOTONIC_RAW, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_RAW },
	{ CLOCK_MONOTONIC_COARSE, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_COARSE },
	{ CLOCK_REALTIME, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME },
	{ CLOCK_REALTIME_COARSE, PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME_COARSE },
};
#define NR_CLOCKS (sizeof(clocks) / sizeof(clocks[0]))

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Every clock once, back to back, so that the pairs describe one instant:
 * how far that holds is the BOOTTIME that passed from the first read to a
 * last one. A read preempted half way (a loaded host, a vCPU descheduled)
 * would relate REALTIME to BOOTTIME milliseconds off, and tracectl merge
 * places a whole machine by that relation: so the tightest of a few tries.
 */
#define SNAPSHOT_TRIES 10
#define SNAPSHOT_TIGHT_NS 10000

static void read_clocks(uint64_t v[NR_CLOCKS])
{
	uint64_t t[NR_CLOCKS], best = UINT64_MAX, span;
	size_t i, k;

	for (k = 0; k < SNAPSHOT_TRIES && best > SNAPSHOT_TIGHT_NS; k++) {
		for (i = 0; i < NR_CLOCKS; i++)
			t[i] = clock_ns(clocks[i].id);
		span = clock_ns(clocks[0].id) - t[0];	/* clocks[0]: BOOTTIME */
		if (span < best) {
			best = span;
			memcpy(v, t, sizeof(t));
		}
	}
}

int pbt_pkt_clock_snapshot(struct pbt_seq *s, struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[NR_CLOCKS];
	Perfetto__Protos__ClockSnapshot__Clock *cp[NR_CLOCKS];
	uint64_t v[NR_CLOCKS];
	size_t i;

	read_clocks(v);
	for (i = 0; i < NR_CLOCKS; i++) {
		perfetto__protos__clock_snapshot__clock__init(&c[i]);
		SET(&c[i], clock_id, clocks[i].builtin);
		SET(&c[i], timestamp, v[i]);
		cp[i] = &c[i];
	}
	cs.n_clocks = NR_CLOCKS;
	cs.clocks = cp;
	SET(&cs, primary_trace_clock,
	    PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &cs;
	return pack_extra(s, &p, c[0].timestamp, NULL, 0, r);
}

/* A growable array of pointers to messages we calloc'd. */
struct vec {
	void **v;
	size_t n, cap;
};

static void *vec_add(struct vec *a, size_t size)
{
	void *m;

	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		void **v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		a->v = v;
		a->cap = cap;
	}
	m = calloc(1, size);
	if (m)
		a->v[a->n++] = m;
	return m;
}

static void vec_free(struct vec *a, void (*each)(void *))
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (each)
			each(a->v[i]);
		free(a->v[i]);
	}
	free(a->v);
}

/* Kernel threads have no mm and no cmdline; Perfetto marks them by being
 * children of kthreadd (pid 2). */
static int is_kthread(const struct pbt_proc_status *st)
{
	return st->pid == 2 || st->ppid == 2;
}

/* cmdline of a process, or its comm when it has none (kernel threads). */
static int add_cmdline(Perfetto__Protos__ProcessTree__Process *pr,
		       const char *dir, const struct pbt_proc_status *st)
{
	char path[320], buf[4096];
	char *argv[64];
	long n;
	size_t i, argc = 0;

	snprintf(path, sizeof(path), "%s/cmdline", dir);
	n = pbt_read_file(path, buf, sizeof(buf));
	if (n > 0)
		argc = pbt_split_cmdline(buf, (size_t)n, argv, 64);
	if (!argc) {
		argv[0] = (char *)st->name;
		argc = 1;
		SET(pr, cmdline_is_comm, 1);
	}
	pr->cmdline = calloc(argc, sizeof(char *));
	if (!pr->cmdline)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		pr->cmdline[i] = strdup(argv[i]);
		if (!pr->cmdline[i])
			return -ENOMEM;
		pr->n_cmdline++;
	}
	return 0;
}

static void free_process(void *m)
{
	Perfetto__Protos__ProcessTree__Process *pr = m;
	size_t i;

	for (i = 0; i < pr->n_cmdline; i++)
		free(pr->cmdline[i]);
	free(pr->cmdline);
}

static void free_thread(void *m)
{
	Perfetto__Protos__ProcessTree__Thread *t = m;

	free(t->name);
}

static int add_threads(struct vec *threads, const char *dir, int32_t pid)
{
	char tdir[320], path[400];
	int32_t *tids;
	long n, i;

	snprintf(tdir, sizeof(tdir), "%s/task", dir);
	n = pbt_list_ids(tdir, &tids);
	if (n < 0)
		return n == -ENOMEM ? -ENOMEM : 0;	/* exited: fine */
	for (i = 0; i < n; i++) {
		Perfetto__Protos__ProcessTree__Thread *t;
		struct pbt_proc_status st;

		if (tids[i] == pid)
			continue;	/* the main thread is the process */
		snprintf(path, sizeof(path), "%s/%d", tdir, tids[i]);
		if (pbt_read_status(path, &st) < 0)
			continue;
		t = vec_add(threads, sizeof(*t));
		if (!t)
			break;
		perfetto__protos__process_tree__thread__init(t);
		SET(t, tid, st.pid);
		SET(t, tgid, st.tgid);
		t->name = strdup(st.name);
		if (!t->name)
			break;
	}
	free(tids);
	return i < n ? -ENOMEM : 0;
}

static int add_process(struct vec *procs, struct vec *threads,
		       const char *proc, int32_t pid)
{
	Perfetto__Protos__ProcessTree__Process *pr;
	struct pbt_proc_status st;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/%d", proc, pid);
	if (pbt_read_status(dir, &st) < 0)
		return 0;	/* exited while we looked: not an error */
	pr = vec_add(procs, sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	perfetto__protos__process_tree__process__init(pr);
	SET(pr, pid, st.pid);
	SET(pr, ppid, st.ppid);
	SET(pr, uid, st.uid);
	if (is_kthread(&st))
		SET(pr, is_kthread, 1);
	if (add_cmdline(pr, dir, &st) < 0)
		return -ENOMEM;
	return add_threads(threads, dir, pid);
}

int pbt_pkt_process_tree(struct pbt_seq *s, const char *proc,
			 struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ProcessTree tree = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	struct vec procs = { 0 }, threads = { 0 };
	uint64_t ts = pbt_boottime_ns();
	int32_t *pids;
	long n, i;
	int ret = 0;

	n = pbt_list_ids(proc, &pids);
	if (n < 0)
		return (int)n;
	for (i = 0; i < n && !ret; i++)
		ret = add_process(&procs, &threads, proc, pids[i]);
	free(pids);
	if (!ret) {
		tree.n_processes = procs.n;
		tree.processes = (Perfetto__Protos__ProcessTree__Process **)procs.v;
		tree.n_threads = threads.n;
		tree.threads = (Perfetto__Protos__ProcessTree__Thread **)threads.v;
		SET(&tree, collection_end_timestamp, pbt_boottime_ns());
		p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE;
		p.process_tree = &tree;
		ret = pack_extra(s, &p, ts, NULL, 0, r);
	}
	vec_free(&procs, free_process);
	vec_free(&threads, free_thread);
	return ret;
}

static int64_t read_oom_score_adj(const char *dir)
{
	char path[320], buf[32];

	snprintf(path, sizeof(path), "%s/oom_score_adj", dir);
	if (pbt_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoll(buf, NULL, 10);
}

static int add_process_stats(struct vec *procs, const char *proc, int32_t pid)
{
	Perfetto__Protos__ProcessStats__Process *pr;
	struct pbt_proc_status st;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/%d", proc, pid);
	if (pbt_read_status(dir, &st) < 0 || !st.has_mm)
		return 0;	/* exited, or a kernel thread: no memory */
	pr = vec_add(procs, sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	perfetto__protos__process_stats__process__init(pr);
	SET(pr, pid, st.pid);
	SET(pr, vm_size_kb, st.vm_size_kb);
	SET(pr, vm_rss_kb, st.vm_rss_kb);
	SET(pr, rss_anon_kb, st.rss_anon_kb);
	SET(pr, rss_file_kb, st.rss_file_kb);
	SET(pr, rss_shmem_kb, st.rss_shmem_kb);
	SET(pr, vm_swap_kb, st.vm_swap_kb);
	SET(pr, vm_locked_kb, st.vm_locked_kb);
	SET(pr, vm_hwm_kb, st.vm_hwm_kb);
	SET(pr, oom_score_adj, read_oom_score_adj(dir));
	return 0;
}

int pbt_pkt_process_stats(struct pbt_seq *s, const char *proc,
			  struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ProcessStats ps = PERFETTO__PROTOS__PROCESS_STATS__INIT;
	struct vec procs = { 0 };
	uint64_t ts = pbt_boottime_ns();
	int32_t *pids;
	long n, i;
	int ret = 0;

	n = pbt_list_ids(proc, &pids);
	if (n < 0)
		return (int)n;
	for (i = 0; i < n && !ret; i++)
		ret = add_process_stats(&procs, proc, pids[i]);
	free(pids);
	if (!ret) {
		ps.n_processes = procs.n;
		ps.processes = (Perfetto__Protos__ProcessStats__Process **)procs.v;
		SET(&ps, collection_end_timestamp, pbt_boottime_ns());
		p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_STATS;
		p.process_stats = &ps;
		ret = pack_extra(s, &p, ts, NULL, 0, r);
	}
	vec_free(&procs, NULL);
	return ret;
}

/* /proc/meminfo names to MeminfoCounters value names (Perfetto's table). */
static const char *const meminfo_names[][2] = {
	{ "MemTotal", "MEMINFO_MEM_TOTAL" },
	{ "MemFree", "MEMINFO_MEM_FREE" },
	{ "MemAvailable", "MEMINFO_MEM_AVAILABLE" },
	{ "Buffers", "MEMINFO_BUFFERS" },
	{ "Cached", "MEMINFO_CACHED" },
	{ "SwapCached", "MEMINFO_SWAP_CACHED" },
	{ "Active", "MEMINFO_ACTIVE" },
	{ "Inactive", "MEMINFO_INACTIVE" },
	{ "Active(anon)", "MEMINFO_ACTIVE_ANON" },
	{ "Inactive(anon)", "MEMINFO_INACTIVE_ANON" },
	{ "Active(file)", "MEMINFO_ACTIVE_FILE" },
	{ "Inactive(file)", "MEMINFO_INACTIVE_FILE" },
	{ "Unevictable", "MEMINFO_UNEVICTABLE" },
	{ "Mlocked", "MEMINFO_MLOCKED" },
	{ "SwapTotal", "MEMINFO_SWAP_TOTAL" },
	{ "SwapFree", "MEMINFO_SWAP_FREE" },
	{ "Dirty", "MEMINFO_DIRTY" },
	{ "Writeback", "MEMINFO_WRITEBACK" },
	{ "AnonPages", "MEMINFO_ANON_PAGES" },
	{ "Mapped", "MEMINFO_MAPPED" },
	{ "Shmem", "MEMINFO_SHMEM" },
	{ "Slab", "MEMINFO_SLAB" },
	{ "SReclaimable", "MEMINFO_SLAB_RECLAIMABLE" },
	{ "SUnreclaim", "MEMINFO_SLAB_UNRECLAIMABLE" },
	{ "KernelStack", "MEMINFO_KERNEL_STACK" },
	{ "PageTables", "MEMINFO_PAGE_TABLES" },
	{ "CommitLimit", "MEMINFO_COMMIT_LIMIT" },
	{ "Committed_AS", "MEMINFO_COMMITED_AS" },
	{ "VmallocTotal", "MEMINFO_VMALLOC_TOTAL" },
	{ "VmallocUsed", "MEMINFO_VMALLOC_USED" },
	{ "VmallocChunk", "MEMINFO_VMALLOC_CHUNK" },
	{ "CmaTotal", "MEMINFO_CMA_TOTAL" },
	{ "CmaFree", "MEMINFO_CMA_FREE" },
};

/* Enum value for a counter name, looked up in the generated descriptor so
 * proto/trace.proto stays the one source of numbers; 0 when unknown. */
static int enum_value(const ProtobufCEnumDescriptor *d, const char *name)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value_by_name(d, name);

	return v ? v->value : 0;
}

static int meminfo_key(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(meminfo_names) / sizeof(meminfo_names[0]); i++)
		if (!strcmp(name, meminfo_names[i][0]))
			return enum_value(&perfetto__protos__meminfo_counters__descriptor,
					  meminfo_names[i][1]);
	return 0;
}

static int vmstat_key(const char *name)
{
	char upper[PBT_KV_NAME_MAX + 8] = "VMSTAT_";
	size_t i, n = strlen(upper);

	for (i = 0; name[i] && n < sizeof(upper) - 1; i++)
		upper[n++] = (char)toupper((unsigned char)name[i]);
	upper[n] = '\0';
	return enum_value(&perfetto__protos__vmstat_counters__descriptor, upper);
}

struct sys_arrays {
	Perfetto__Protos__SysStats__MeminfoValue mem[MAX_KV], *memp[MAX_KV];
	Perfetto__Protos__SysStats__VmstatValue vm[MAX_KV], *vmp[MAX_KV];
	struct pbt_kv kv[MAX_KV];
	struct pbt_cpu_times cpus[1024];
	Perfetto__Protos__SysStats__CpuTimes ct[1024], *ctp[1024];
};

static int read_proc(const char *proc, const char *name, char *buf,
		     size_t len)
{
	char path[256];
	long n;

	snprintf(path, sizeof(path), "%s/%s", proc, name);
	n = pbt_read_file(path, buf, len);
	return n < 0 ? (int)n : 0;
}

static int add_meminfo(Perfetto__Protos__SysStats *ss, struct sys_arrays *a,
		       const char *proc, char *buf, size_t len)
{
	size_t i, n;
	int ret = read_proc(proc, "meminfo", buf, len);

	if (ret < 0)
		return ret;
	n = pbt_parse_kv(buf, a->kv, MAX_KV);
	for (i = 0; i < n; i++) {
		int key = meminfo_key(a->kv[i].name);
		Perfetto__Protos__SysStats__MeminfoValue *m;

		if (!key)
			continue;
		m = &a->mem[ss->n_meminfo];
		perfetto__protos__sys_stats__meminfo_value__init(m);
		SET(m, key, (Perfetto__Protos__MeminfoCounters)key);
		SET(m, value, a->kv[i].value);
		a->memp[ss->n_meminfo++] = m;
	}
	ss->meminfo = a->memp;
	return 0;
}

static int add_vmstat(Perfetto__Protos__SysStats *ss, struct sys_arrays *a,
		      const char *proc, char *buf, size_t len)
{
	size_t i, n;
	int ret = read_proc(proc, "vmstat", buf, len);

	if (ret < 0)
		return ret;
	n = pbt_parse_kv(buf, a->kv, MAX_KV);
	for (i = 0; i < n; i++) {
		int key = vmstat_key(a->kv[i].name);
		Perfetto__Protos__SysStats__VmstatValue *v;

		if (!key)
			continue;
		v = &a->vm[ss->n_vmstat];
		perfetto__protos__sys_stats__vmstat_value__init(v);
		SET(v, key, (Perfetto__Protos__VmstatCounters)key);
		SET(v, value, a->kv[i].value);
		a->vmp[ss->n_vmstat++] = v;
	}
	ss->vmstat = a->vmp;
	return 0;
}

static int add_stat(Perfetto__Protos__SysStats *ss, struct sys_arrays *a,
		    const char *proc, char *buf, size_t len)
{
	struct pbt_stat st = { .cpus = a->cpus, .max_cpus = 1024 };
	uint64_t tick_ns = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
	size_t i;
	int ret = read_proc(proc, "stat", buf, len);

	if (ret < 0 || (ret = pbt_parse_stat(buf, &st)) < 0)
		return ret;
	for (i = 0; i < st.nr_cpus; i++) {
		Perfetto__Protos__SysStats__CpuTimes *c = &a->ct[i];
		const struct pbt_cpu_times *t = &st.cpus[i];

		perfetto__protos__sys_stats__cpu_times__init(c);
		SET(c, cpu_id, t->cpu);
		SET(c, user_ns, t->user * tick_ns);
		SET(c, user_nice_ns, t->nice * tick_ns);
		SET(c, system_mode_ns, t->system * tick_ns);
		SET(c, idle_ns, t->idle * tick_ns);
		SET(c, io_wait_ns, t->iowait * tick_ns);
		SET(c, irq_ns, t->irq * tick_ns);
		SET(c, softirq_ns, t->softirq * tick_ns);
		SET(c, steal_ns, t->steal * tick_ns);
		a->ctp[i] = c;
	}
	ss->n_cpu_stat = st.nr_cpus;
	ss->cpu_stat = a->ctp;
	SET(ss, num_forks, st.forks);
	SET(ss, num_irq_total, st.intr_total);
	SET(ss, num_softirq_total, st.softirq_total);
	return 0;
}

int pbt_pkt_sys_stats(struct pbt_seq *s, const char *proc, unsigned int what,
		      struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__SysStats ss = PERFETTO__PROTOS__SYS_STATS__INIT;
	uint64_t ts = pbt_boottime_ns();
	struct sys_arrays *a = calloc(1, sizeof(*a));
	size_t len = 64 * 1024;
	char *buf = malloc(len);
	int ret = 0;

	if (!a || !buf) {
		ret = -ENOMEM;
		goto out;
	}
	if (what & PBT_SYS_MEMINFO)
		ret = add_meminfo(&ss, a, proc, buf, len);
	if (!ret && (what & PBT_SYS_VMSTAT))
		ret = add_vmstat(&ss, a, proc, buf, len);
	if (!ret && (what & PBT_SYS_STAT))
		ret = add_stat(&ss, a, proc, buf, len);
	if (ret)
		goto out;
	SET(&ss, collection_end_timestamp, pbt_boottime_ns());
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SYS_STATS;
	p.sys_stats = &ss;
	ret = pack_extra(s, &p, ts, NULL, 0, r);
out:
	free(buf);
	free(a);
	return ret;
}

int pbt_pkt_service_event(struct pbt_seq *s, enum pbt_service_event ev,
			  uint64_t ts, struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TracingServiceEvent se =
		PERFETTO__PROTOS__TRACING_SERVICE_EVENT__INIT;
	static const Perfetto__Protos__TracingServiceEvent__EventTypeCase map[] = {
		[PBT_SVC_TRACING_STARTED] = PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_STARTED,
		[PBT_SVC_ALL_DATA_SOURCES_STARTED] = PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_ALL_DATA_SOURCES_STARTED,
		[PBT_SVC_FLUSH_STARTED] = PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_FLUSH_STARTED,
		[PBT_SVC_ALL_DATA_SOURCES_FLUSHED] = PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_ALL_DATA_SOURCES_FLUSHED,
		[PBT_SVC_READ_TRACING_BUFFERS_COMPLETED] = PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_READ_TRACING_BUFFERS_COMPLETED,
		[PBT_SVC_TRACING_DISABLED] = PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_DISABLED,
	};

	/* Every member of the oneof is a bool set to true; they share the
	 * union's storage. */
	se.event_type_case = map[ev];
	se.tracing_started = 1;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_SERVICE_EVENT;
	p.service_event = &se;
	return pack_extra(s, &p, ts ? ts : pbt_boottime_ns(), NULL, 0, r);
}

int pbt_pkt_trigger(struct pbt_seq *s, const char *name,
		    uint64_t stop_delay_ms, struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__Trigger t = PERFETTO__PROTOS__TRIGGER__INIT;

	t.trigger_name = (char *)name;
	t.producer_name = "tracectl";
	if (stop_delay_ms)
		SET(&t, stop_delay_ms, stop_delay_ms);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRIGGER;
	p.trigger = &t;
	return pack(s, &p, r);
}

/* Events a probe saw and could not write (not the overwritten ones). */
static uint64_t dropped(const struct pbtrace_cpu_stats *c)
{
	return c->lost_full + c->lost_too_large + c->lost_nmi;
}

static size_t max_cpus(const struct pbt_buffer_stats *b, size_t n)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		if (b[i].nr_cpus > m)
			m = b[i].nr_cpus;
	return m;
}

int pbt_pkt_ftrace_stats(struct pbt_seq *s, int end,
			 const struct pbt_buffer_stats *b, size_t n,
			 struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__FtraceStats fs = PERFETTO__PROTOS__FTRACE_STATS__INIT;
	size_t cpus = max_cpus(b, n), i, c;
	Perfetto__Protos__FtraceCpuStats *cs = calloc(cpus ? cpus : 1, sizeof(*cs));
	Perfetto__Protos__FtraceCpuStats **csp = calloc(cpus ? cpus : 1, sizeof(*csp));
	int ret = -ENOMEM;

	if (!cs || !csp)
		goto out;
	for (c = 0; c < cpus; c++) {
		perfetto__protos__ftrace_cpu_stats__init(&cs[c]);
		SET(&cs[c], cpu, c);
		SET(&cs[c], entries, 0);
		SET(&cs[c], overrun, 0);
		SET(&cs[c], bytes_read, 0);
		SET(&cs[c], dropped_events, 0);
		SET(&cs[c], read_events, 0);
		csp[c] = &cs[c];
		/*
		 * At the start the session's counters are zero by construction:
		 * its buffers count from their creation and record only from
		 * the start. traced reads them later, after the first events
		 * and maybe losses, and trace_processor takes END minus START
		 * as the trace's loss, so START says what it was: zeros.
		 */
		for (i = 0; end && i < n; i++) {
			const struct pbtrace_cpu_stats *k = &b[i].cpus[c];

			if (c >= b[i].nr_cpus)
				continue;
			cs[c].entries += k->events_written;
			cs[c].overrun += k->lost_overwritten;
			cs[c].bytes_read += k->bytes_written;
			cs[c].dropped_events += dropped(k);
			cs[c].read_events += k->events_written - k->lost_overwritten;
		}
	}
	SET(&fs, phase, end ? PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE :
			      PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE);
	fs.n_cpu_stats = cpus;
	fs.cpu_stats = csp;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS;
	p.ftrace_stats = &fs;
	ret = pack(s, &p, r);
out:
	free(cs);
	free(csp);
	return ret;
}

static void sum_buffer(Perfetto__Protos__TraceStats__BufferStats *bs,
		       const struct pbt_buffer_stats *b)
{
	size_t c;

	perfetto__protos__trace_stats__buffer_stats__init(bs);
	SET(bs, buffer_size, b->buffer_size);
	SET(bs, bytes_written, 0);
	SET(bs, bytes_read, b->bytes_read);
	SET(bs, chunks_written, 0);
	SET(bs, chunks_overwritten, 0);
	SET(bs, chunks_discarded, 0);
	SET(bs, chunks_read, 0);
	SET(bs, trace_writer_packet_loss, 0);
	for (c = 0; c < b->nr_cpus; c++) {
		const struct pbtrace_cpu_stats *k = &b->cpus[c];

		bs->bytes_written += k->bytes_written;
		bs->chunks_written += k->chunks_sealed;
		bs->chunks_overwritten += k->chunks_overwritten;
		bs->chunks_discarded += k->chunks_discarded;
		bs->chunks_read += k->chunks_read;
		bs->trace_writer_packet_loss += dropped(k);
	}
}

int pbt_pkt_trace_stats(struct pbt_seq *s, const struct pbt_buffer_stats *b,
			size_t n, uint64_t flushes_requested,
			uint64_t flushes_succeeded, struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceStats ts = PERFETTO__PROTOS__TRACE_STATS__INIT;
	Perfetto__Protos__TraceStats__BufferStats bs[PBTRACE_MAX_BUFFERS];
	Perfetto__Protos__TraceStats__BufferStats *bsp[PBTRACE_MAX_BUFFERS];
	uint64_t discarded = 0;
	size_t i;

	if (n > PBTRACE_MAX_BUFFERS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		sum_buffer(&bs[i], &b[i]);
		discarded += bs[i].chunks_discarded;
		bsp[i] = &bs[i];
	}
	ts.n_buffer_stats = n;
	ts.buffer_stats = bsp;
	SET(&ts, total_buffers, (uint32_t)n);
	SET(&ts, chunks_discarded, discarded);
	SET(&ts, flushes_requested, flushes_requested);
	SET(&ts, flushes_succeeded, flushes_succeeded);
	SET(&ts, final_flush_outcome,
	    PERFETTO__PROTOS__TRACE_STATS__FINAL_FLUSH_OUTCOME__FINAL_FLUSH_SUCCEEDED);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS;
	p.trace_stats = &ts;
	return pack(s, &p, r);
}

/*
 * One relayed machine's loss, as a trace_stats packet stamped with its
 * machine_id (docs/traced.md has the mapping): its stream into the
 * session is one buffer whose writer is the machine's relay.
 */
int pbt_pkt_machine_stats(struct pbt_seq *s,
			  const struct pbtrace_machine_stats *m,
			  struct pbt_rec *r)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TraceStats ts = PERFETTO__PROTOS__TRACE_STATS__INIT;
	Perfetto__Protos__TraceStats__BufferStats bs;
	Perfetto__Protos__TraceStats__BufferStats *bsp = &bs;

	if (!m->machine_id)
		return -EINVAL;	/* 0 would say "the host" */
	perfetto__protos__trace_stats__buffer_stats__init(&bs);
	SET(&bs, bytes_written, m->bytes);
	SET(&bs, chunks_written, m->chunks);
	SET(&bs, chunks_discarded, m->chunks_dropped);
	SET(&bs, trace_writer_packet_loss, m->chunks_lost_relay);
	ts.n_buffer_stats = 1;
	ts.buffer_stats = &bsp;
	SET(&ts, producers_connected, m->connected ? 1 : 0);
	SET(&ts, producers_seen, m->disconnects + (m->connected ? 1 : 0));
	SET(&p, machine_id, m->machine_id);
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS;
	p.trace_stats = &ts;
	return pack(s, &p, r);
}
