// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests (TAP) for traced's pure parts: /proc parsers on the
 * fixture tree in tests/fixtures/proc, the whole-record file writer, and
 * traced's packets decoded back and compared with the fixtures.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "config.pb-c.h"
#include "trace.pb-c.h"
#include "packets.h"
#include "procfs.h"
#include "reader.h"
#include "writer.h"

#define FIX "tests/fixtures/proc"

static int n_test, n_fail;

#define ok(cond, ...) do {						\
	int _c = !!(cond);						\
	printf("%sok %d - ", _c ? "" : "not ", ++n_test);		\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!_c) {							\
		n_fail++;						\
		printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	}								\
} while (0)

static void test_status(void)
{
	struct pbt_proc_status st;

	ok(pbt_read_status(FIX "/1", &st) == 0 && !strcmp(st.name, "systemd") &&
	   st.pid == 1 && st.tgid == 1 && st.ppid == 0 && st.uid == 0,
	   "status: name, pid, tgid, ppid, uid of pid 1");
	ok(st.has_mm && st.vm_size_kb == 166000 && st.vm_rss_kb == 11000 &&
	   st.rss_anon_kb == 3000 && st.rss_file_kb == 7000 &&
	   st.rss_shmem_kb == 1000 && st.vm_swap_kb == 16 &&
	   st.vm_locked_kb == 4 && st.vm_hwm_kb == 12000,
	   "status: memory fields in kB");
	ok(pbt_read_status(FIX "/2", &st) == 0 && !st.has_mm &&
	   !strcmp(st.name, "kthreadd"), "status: kernel thread has no mm");
	ok(pbt_read_status(FIX "/300", &st) == 0 && !strcmp(st.name, "my prog") &&
	   st.uid == 1000 && st.ppid == 1, "status: comm with a space, uid");
	ok(pbt_parse_status("Name:\tx\n", &st) == -EINVAL,
	   "status: missing Pid/Tgid is an error");
	ok(pbt_read_status(FIX "/999", &st) == -ENOENT,
	   "status: vanished process is -ENOENT");
}

static void test_cmdline(void)
{
	char buf[] = "/sbin/init\0splash\0";
	char *argv[4];
	size_t n = pbt_split_cmdline(buf, sizeof(buf) - 1, argv, 4);

	ok(n == 2 && !strcmp(argv[0], "/sbin/init") && !strcmp(argv[1], "splash"),
	   "cmdline: two NUL-terminated arguments");
	ok(pbt_split_cmdline(buf, 0, argv, 4) == 0, "cmdline: empty");
	ok(pbt_split_cmdline(buf, sizeof(buf) - 1, argv, 1) == 1,
	   "cmdline: capped at max");
}

/* First "name value" of a file, read with sscanf: the independent view. */
static int first_kv(const char *path, char *name, unsigned long long *v)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%47[^: ]%*[: ]%llu", name, v);
	fclose(f);
	return n == 2 ? 0 : -1;
}

static void test_kv(void)
{
	static struct pbt_kv kv[512];
	unsigned long long v;
	char buf[65536], name[48];
	size_t n;

	ok(pbt_read_file(FIX "/meminfo", buf, sizeof(buf)) > 0, "read meminfo");
	n = pbt_parse_kv(buf, kv, 512);
	ok(first_kv(FIX "/meminfo", name, &v) == 0 && n >= 30 &&
	   !strcmp(kv[0].name, name) && kv[0].value == v,
	   "meminfo: %zu entries, first %s = %llu", n, name, v);
	ok(n >= 9 && !strcmp(kv[8].name, "Active(anon)"),
	   "meminfo: names with parentheses kept");
	ok(pbt_read_file(FIX "/vmstat", buf, sizeof(buf)) > 0, "read vmstat");
	n = pbt_parse_kv(buf, kv, 512);
	ok(first_kv(FIX "/vmstat", name, &v) == 0 && n == 30 &&
	   !strcmp(kv[0].name, name) && kv[0].value == v,
	   "vmstat: 30 entries, first %s = %llu", name, v);
	ok(pbt_parse_kv("garbage line\nok 5\n", kv, 512) == 1 &&
	   kv[0].value == 5, "kv: lines without a number skipped");
}

static void test_stat(void)
{
	struct pbt_cpu_times cpus[4];
	struct pbt_stat st = { .cpus = cpus, .max_cpus = 4 };
	char buf[4096];

	ok(pbt_read_file(FIX "/stat", buf, sizeof(buf)) > 0 &&
	   pbt_parse_stat(buf, &st) == 0, "stat parses");
	ok(st.nr_cpus == 2 && cpus[0].cpu == 0 && cpus[0].user == 600 &&
	   cpus[0].idle == 20000 && cpus[1].cpu == 1 && cpus[1].steal == 3,
	   "stat: per-CPU lines, not the total");
	ok(st.forks == 4321 && st.intr_total == 123456 && st.softirq_total == 7777,
	   "stat: forks, interrupt and softirq totals");
	ok(pbt_parse_stat("intr 5\n", &st) == -EINVAL, "stat: no cpu lines is an error");
}

static void test_list_ids(void)
{
	int32_t *ids;
	long n = pbt_list_ids(FIX, &ids);

	ok(n == 3 && ids[0] == 1 && ids[1] == 2 && ids[2] == 300,
	   "list ids: numeric entries only, sorted");
	free(ids);
	ok(pbt_list_ids(FIX "/nope", &ids) == -ENOENT, "list ids: missing dir");
}

/* A record of @len payload bytes filled with @fill. */
static size_t make_record(uint8_t *p, size_t len, uint8_t fill)
{
	size_t h = 1;

	p[0] = 0x0A;
	if (len < 128) {
		p[h++] = (uint8_t)len;
	} else {
		p[h++] = (uint8_t)(0x80 | (len & 0x7f));
		p[h++] = (uint8_t)(len >> 7);
	}
	memset(p + h, fill, len);
	return h + len;
}

static void test_records(void)
{
	uint8_t buf[1024];
	size_t a = make_record(buf, 10, 1);
	size_t b = make_record(buf + a, 200, 2);
	uint64_t payload;
	int bad;

	ok(pbt_record_header(buf + a, 3, &payload) == 3 && payload == 200,
	   "record header: two-byte varint length");
	ok(pbt_records_prefix(buf, a + b, &bad) == a + b && !bad,
	   "records: two whole records");
	ok(pbt_records_prefix(buf, a + b - 1, &bad) == a && !bad,
	   "records: torn last record excluded");
	buf[a] = 0x12;
	ok(pbt_records_prefix(buf, a + b, &bad) == a && bad,
	   "records: a wrong tag stops the walk and is flagged");
}

static char tmpdir[64];

static void test_writer(void)
{
	struct pbt_writer w;
	uint8_t rec[300];
	char path[128], err[512];
	size_t len = make_record(rec, 100, 7);
	int fd;

	snprintf(path, sizeof(path), "%s/out.pftrace", tmpdir);
	ok(pbt_writer_open(&w, path, 0, 250, err, sizeof(err)) == 0,
	   "writer: create");
	ok(pbt_writer_write(&w, rec, len, err, sizeof(err)) == 0 &&
	   pbt_writer_write(&w, rec, len, err, sizeof(err)) == 0 &&
	   w.size == 2 * len, "writer: two records");
	ok(pbt_writer_write(&w, rec, len, err, sizeof(err)) == -EFBIG &&
	   w.size == 2 * len, "writer: record past the limit refused whole");
	ok(pbt_writer_tail_contains(&w, rec, len, 4096) &&
	   !pbt_writer_tail_contains(&w, "\x0a\x01\x09", 3, 4096),
	   "writer: finds bytes already written");
	pbt_writer_close(&w);

	/* A crash mid-record: half a record at the end. */
	fd = open(path, O_WRONLY | O_APPEND);
	ok(fd >= 0 && write(fd, rec, 50) == 50, "writer: tear the file");
	close(fd);
	ok(pbt_writer_open(&w, path, 1, 0, err, sizeof(err)) == 0 &&
	   w.size == 2 * len && w.repaired == 50 && w.start_size == 2 * len,
	   "writer: append cuts the torn record (%llu bytes)",
	   (unsigned long long)w.repaired);
	ok(pbt_writer_write(&w, rec, len, err, sizeof(err)) == 0 &&
	   w.size == 3 * len, "writer: appends after the repair");
	pbt_writer_close(&w);

	ok(pbt_writer_open(&w, path, 0, 0, err, sizeof(err)) == 0 && w.size == 0,
	   "writer: fresh open truncates");
	pbt_writer_close(&w);

	fd = open(path, O_WRONLY | O_TRUNC);
	ok(fd >= 0 && write(fd, "hello\n", 6) == 6, "writer: a text file");
	close(fd);
	ok(pbt_writer_open(&w, path, 1, 0, err, sizeof(err)) == -EBADMSG &&
	   strstr(err, "not a trace file"), "writer: refuses to append to a non-trace: %s", err);

	ok(pbt_writer_open(&w, "/nonexistent/dir/x.pftrace", 0, 0, err,
			   sizeof(err)) == -ENOENT && strstr(err, "/nonexistent/dir"),
	   "writer: unwritable path named: %s", err);

	ok(pbt_writer_open(&w, "/dev/full", 0, 0, err, sizeof(err)) == 0,
	   "writer: open /dev/full");
	ok(pbt_writer_write(&w, rec, len, err, sizeof(err)) == -ENOSPC &&
	   w.size == 0 && strstr(err, "No space"),
	   "writer: disk full reported: %s", err);
	pbt_writer_close(&w);
	unlink(path);
}

/* Decode one record back into a TracePacket. */
static Perfetto__Protos__TracePacket *decode(const struct pbt_rec *r)
{
	uint64_t payload;
	int h = pbt_record_header(r->data, r->len, &payload);

	if (h <= 0 || h + payload != r->len)
		return NULL;
	return perfetto__protos__trace_packet__unpack(NULL, payload, r->data + h);
}

static Perfetto__Protos__ProcessTree__Process *
find_proc(Perfetto__Protos__ProcessTree *t, int pid)
{
	size_t i;

	for (i = 0; i < t->n_processes; i++)
		if (t->processes[i]->pid == pid)
			return t->processes[i];
	return NULL;
}

static void test_process_tree(void)
{
	struct pbt_seq seq = { .id = PBT_TRACED_SEQ_BASE + 3 };
	Perfetto__Protos__TracePacket *p;
	Perfetto__Protos__ProcessTree__Process *pr;
	struct pbt_rec r;

	ok(pbt_pkt_process_tree(&seq, FIX, &r) == 0 && (p = decode(&r)),
	   "process_tree: builds and decodes");
	if (!p)
		return;
	ok(p->trusted_packet_sequence_id == PBT_TRACED_SEQ_BASE + 3 &&
	   p->has_timestamp && p->has_first_packet_on_sequence &&
	   !p->has_previous_packet_dropped,
	   "packet: sequence id, timestamp, first on sequence");
	ok(p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE &&
	   p->process_tree->n_processes == 3, "process_tree: three processes");
	pr = find_proc(p->process_tree, 300);
	ok(pr && pr->ppid == 1 && pr->uid == 1000 && pr->n_cmdline == 3 &&
	   !strcmp(pr->cmdline[2], "sleep 1") && !pr->has_cmdline_is_comm,
	   "process_tree: pid 300 cmdline and uid");
	pr = find_proc(p->process_tree, 2);
	ok(pr && pr->n_cmdline == 1 && !strcmp(pr->cmdline[0], "kthreadd") &&
	   pr->cmdline_is_comm && pr->is_kthread,
	   "process_tree: kernel thread named by comm");
	ok(p->process_tree->n_threads == 1 &&
	   p->process_tree->threads[0]->tid == 7 &&
	   p->process_tree->threads[0]->tgid == 1 &&
	   !strcmp(p->process_tree->threads[0]->name, "sd-worker"),
	   "process_tree: secondary thread with tgid and name");
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);

	ok(pbt_pkt_process_stats(&seq, FIX, &r) == 0 && (p = decode(&r)) &&
	   p->process_stats->n_processes == 2 &&
	   p->process_stats->processes[0]->pid == 1 &&
	   p->process_stats->processes[0]->vm_rss_kb == 11000 &&
	   p->process_stats->processes[0]->oom_score_adj == -1000 &&
	   !p->has_first_packet_on_sequence,
	   "process_stats: user processes only, rss and oom_score_adj");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);
}

/* The live /proc: this very process is in the tree, named. */
static void test_live_proc(void)
{
	struct pbt_seq seq = { .id = PBT_TRACED_SEQ_BASE };
	Perfetto__Protos__TracePacket *p = NULL;
	Perfetto__Protos__ProcessTree__Process *pr = NULL;
	struct pbt_rec r;

	ok(pbt_pkt_process_tree(&seq, "/proc", &r) == 0 && (p = decode(&r)) &&
	   (pr = find_proc(p->process_tree, getpid())) && pr->n_cmdline >= 1 &&
	   strstr(pr->cmdline[0], "traced_units_test") &&
	   pr->ppid == getppid(),
	   "process_tree of /proc holds this test (pid %d)", getpid());
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);
	p = NULL;
	ok(pbt_pkt_sys_stats(&seq, "/proc", PBT_SYS_MEMINFO | PBT_SYS_VMSTAT |
			     PBT_SYS_STAT, &r) == 0 && (p = decode(&r)) &&
	   p->sys_stats->n_meminfo > 20 && p->sys_stats->n_vmstat > 20 &&
	   p->sys_stats->n_cpu_stat == (size_t)sysconf(_SC_NPROCESSORS_ONLN),
	   "sys_stats of /proc: meminfo, vmstat and every online CPU");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);
}

static void test_sys_stats(void)
{
	struct pbt_seq seq = { .id = PBT_TRACED_SEQ_BASE };
	uint64_t tick_ns = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
	Perfetto__Protos__TracePacket *p = NULL;
	Perfetto__Protos__SysStats *ss;
	unsigned long long v;
	char name[48];
	struct pbt_rec r;

	ok(pbt_pkt_sys_stats(&seq, FIX, PBT_SYS_MEMINFO | PBT_SYS_VMSTAT |
			     PBT_SYS_STAT, &r) == 0 && (p = decode(&r)),
	   "sys_stats: builds and decodes");
	if (!p)
		return;
	ss = p->sys_stats;
	first_kv(FIX "/meminfo", name, &v);
	ok(ss->n_meminfo >= 20 && ss->meminfo[0]->key ==
	   PERFETTO__PROTOS__MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL &&
	   ss->meminfo[0]->value == v, "sys_stats: MemTotal %llu kB", v);
	first_kv(FIX "/vmstat", name, &v);
	ok(ss->n_vmstat >= 10 && ss->vmstat[0]->key ==
	   PERFETTO__PROTOS__VMSTAT_COUNTERS__VMSTAT_NR_FREE_PAGES &&
	   ss->vmstat[0]->value == v, "sys_stats: nr_free_pages %llu", v);
	ok(ss->n_cpu_stat == 2 && ss->cpu_stat[1]->cpu_id == 1 &&
	   ss->cpu_stat[0]->user_ns == 600 * tick_ns &&
	   ss->cpu_stat[1]->steal_ns == 3 * tick_ns && ss->num_forks == 4321,
	   "sys_stats: per-CPU times in ns, forks");
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);
}

static void test_system_info_clocks(void)
{
	struct pbt_seq seq = { .id = PBT_TRACED_SEQ_BASE, .gap = 1 };
	Perfetto__Protos__TracePacket *p = NULL;
	struct utsname u;
	struct pbt_rec r;
	struct timespec ts;
	uint64_t before;
	size_t i;
	int boot = 0, n_ok = 0;

	uname(&u);
	ok(pbt_pkt_system_info(&seq, NULL, &r) == 0 && (p = decode(&r)) &&
	   p->system_info->utsname &&
	   p->system_info->machine_name &&
	   !strcmp(p->system_info->machine_name, u.nodename) &&
	   !strcmp(p->system_info->utsname->machine, u.machine) &&
	   !strcmp(p->system_info->utsname->release, u.release) &&
	   p->system_info->num_cpus == (uint32_t)sysconf(_SC_NPROCESSORS_CONF) &&
	   p->system_info->page_size == (uint32_t)sysconf(_SC_PAGESIZE) &&
	   p->system_info->system_ram_bytes > 0 && p->system_info->hz > 0,
	   "system_info: utsname machine %s, cpus, page size, RAM, hz, machine_name the nodename %s",
	   u.machine, u.nodename);
	ok(p && p->has_previous_packet_dropped &&
	   (p->previous_packet_dropped & 1) && seq.gap == 0,
	   "packet: a reattach gap is marked once");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);

	p = NULL;
	ok(pbt_pkt_system_info(&seq, "web1", &r) == 0 && (p = decode(&r)) &&
	   p->system_info->machine_name &&
	   !strcmp(p->system_info->machine_name, "web1"),
	   "system_info: --machine-name's name instead of the nodename");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	before = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	p = NULL;
	ok(pbt_pkt_clock_snapshot(&seq, &r) == 0 && (p = decode(&r)) &&
	   p->clock_snapshot->n_clocks == 6 &&
	   p->clock_snapshot->primary_trace_clock ==
	   PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME,
	   "clock_snapshot: six clocks, BOOTTIME primary");
	for (i = 0; p && i < p->clock_snapshot->n_clocks; i++) {
		Perfetto__Protos__ClockSnapshot__Clock *c = p->clock_snapshot->clocks[i];

		n_ok += c->clock_id >= 1 && c->clock_id <= 6 && c->timestamp > 0;
		if (c->clock_id == 6)
			boot = c->timestamp >= before &&
			       c->timestamp == p->timestamp;
	}
	ok(n_ok == 6 && boot, "clock_snapshot: BOOTTIME is the packet time");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);
}

static void test_boot_id(void)
{
	struct pbt_seq seq = { .id = PBT_TRACED_SEQ_BASE };
	Perfetto__Protos__TracePacket *p = NULL;
	Perfetto__Protos__TraceAttributes__Attribute *a;
	char id[PBT_BOOT_ID_LEN + 1];
	struct pbt_rec r;

	ok(pbt_boot_id(FIX, id) == 0 &&
	   !strcmp(id, "6f1d2c3b-4a59-4876-9950-a1b2c3d4e5f6"),
	   "boot id: the fixture's boot_id, newline dropped");
	ok(pbt_boot_id("/proc", id) == 0 && strlen(id) == PBT_BOOT_ID_LEN,
	   "boot id: this machine's, %s", id);
	ok(pbt_boot_id("/nonexistent", id) == -ENOENT, "boot id: no procfs: -ENOENT");
	ok(pbt_boot_id("tests/fixtures/badproc", id) == -EINVAL,
	   "boot id: not a UUID: -EINVAL");
	ok(pbt_pkt_trace_attributes(&seq, "6f1d2c3b-4a59-4876-9950-a1b2c3d4e5f6", &r) == 0 &&
	   (p = decode(&r)) && p->data_case ==
	   PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_ATTRIBUTES &&
	   p->trace_attributes->n_attribute == 1 &&
	   (a = p->trace_attributes->attribute[0]) &&
	   !strcmp(a->key, "pbtrace.boot_id") && a->value_case ==
	   PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_STRING_VALUE &&
	   !strcmp(a->string_value, "6f1d2c3b-4a59-4876-9950-a1b2c3d4e5f6") &&
	   p->has_timestamp && p->trusted_packet_sequence_id == PBT_TRACED_SEQ_BASE,
	   "trace_attributes: pbtrace.boot_id, on traced's sequence, stamped");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);
}

static void test_config_trigger_stats(void)
{
	struct pbt_seq seq = { .id = PBT_TRACED_SEQ_BASE };
	Perfetto__Protos__TraceConfig cfg = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TracePacket *p = NULL;
	struct pbtrace_cpu_stats cpus[2] = {
		{ .cpu = 0, .events_written = 100, .bytes_written = 5000,
		  .chunks_sealed = 4, .chunks_read = 3, .chunks_overwritten = 1,
		  .lost_overwritten = 20, .lost_full = 2, .lost_nmi = 1 },
		{ .cpu = 1, .events_written = 50, .bytes_written = 2000,
		  .chunks_sealed = 2, .chunks_read = 2, .lost_too_large = 4 },
	};
	struct pbt_buffer_stats b = { .buffer_size = 65536, .bytes_read = 7000,
				      .nr_cpus = 2, .cpus = cpus };
	uint8_t raw[64];
	struct pbt_rec r;
	size_t len;

	cfg.has_duration_ms = 1;
	cfg.duration_ms = 1234;
	len = perfetto__protos__trace_config__pack(&cfg, raw);
	ok(pbt_pkt_trace_config(&seq, raw, len, &r) == 0 && (p = decode(&r)) &&
	   p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG &&
	   p->trace_config->duration_ms == 1234,
	   "trace_config: stored config embedded verbatim");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);

	p = NULL;
	ok(pbt_pkt_trigger(&seq, "boom", 500, &r) == 0 && (p = decode(&r)) &&
	   !strcmp(p->trigger->trigger_name, "boom") &&
	   p->trigger->stop_delay_ms == 500, "trigger: name and stop delay");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);

	p = NULL;
	ok(pbt_pkt_trace_stats(&seq, &b, 1, 3, 3, &r) == 0 && (p = decode(&r)) &&
	   p->trace_stats->n_buffer_stats == 1 &&
	   p->trace_stats->buffer_stats[0]->bytes_written == 7000 &&
	   p->trace_stats->buffer_stats[0]->chunks_written == 6 &&
	   p->trace_stats->buffer_stats[0]->chunks_read == 5 &&
	   p->trace_stats->buffer_stats[0]->chunks_overwritten == 1 &&
	   p->trace_stats->buffer_stats[0]->trace_writer_packet_loss == 7 &&
	   p->trace_stats->buffer_stats[0]->buffer_size == 65536 &&
	   p->trace_stats->flushes_requested == 3,
	   "trace_stats: per-buffer sums of the per-CPU counters");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);

	p = NULL;
	ok(pbt_pkt_ftrace_stats(&seq, 1, &b, 1, &r) == 0 && (p = decode(&r)) &&
	   p->ftrace_stats->phase == PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE &&
	   p->ftrace_stats->n_cpu_stats == 2 &&
	   p->ftrace_stats->cpu_stats[0]->entries == 100 &&
	   p->ftrace_stats->cpu_stats[0]->overrun == 20 &&
	   p->ftrace_stats->cpu_stats[0]->dropped_events == 3 &&
	   p->ftrace_stats->cpu_stats[1]->dropped_events == 4 &&
	   p->ftrace_stats->cpu_stats[0]->read_events == 80,
	   "ftrace_stats: per-CPU entries, overrun, dropped by cause");
	if (p)
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(r.data);
}

/* Perfetto's protoc decoding of one record, as text (malloc'd) or NULL. */
static char *perfetto_decode(const struct pbt_rec *r)
{
	const char *schema = getenv("PBTRACE_SCHEMA_DIR");
	char path[300], cmd[1024], *out = malloc(8192);
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/rec.pb", tmpdir);
	f = fopen(path, "wb");
	if (!f || !out || fwrite(r->data, 1, r->len, f) != r->len) {
		if (f)
			fclose(f);
		free(out);
		return NULL;
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "protoc -I '%s' --decode=perfetto.protos.Trace perfetto_trace.proto < '%s'",
		 schema && *schema ? schema : "../../shared/perfetto", path);
	f = popen(cmd, "r");
	if (f) {
		n = fread(out, 1, 8191, f);
		if (pclose(f) != 0)
			n = 0;
	}
	unlink(path);
	if (!n) {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	return out;
}

static void test_machine_stats(void)
{
	struct pbt_seq seq = { .id = PBT_TRACED_SEQ_BASE };
	struct pbtrace_machine_stats m = {
		.machine_id = 3, .connected = 1, .chunks = 40, .bytes = 655360,
		.chunks_lost_relay = 5, .chunks_dropped = 6, .disconnects = 2,
		.guest_events_lost = 9, .pings = 10, .rtt_ns = 1000,
	};
	static const char *const want[] = {
		"machine_id: 3", "bytes_written: 655360", "chunks_written: 40",
		"chunks_discarded: 6", "trace_writer_packet_loss: 5",
		"producers_connected: 1", "producers_seen: 3",
	};
	struct pbt_rec r = { 0 };
	char *text = NULL;
	size_t i, found = 0;

	ok(pbt_pkt_machine_stats(&seq, &m, &r) == 0 &&
	   (text = perfetto_decode(&r)) != NULL,
	   "machine trace_stats: decodes with Perfetto's schema");
	for (i = 0; text && i < sizeof(want) / sizeof(want[0]); i++) {
		if (strstr(text, want[i]))
			found++;
		else
			printf("# missing \"%s\" in:\n%s", want[i], text);
	}
	ok(found == sizeof(want) / sizeof(want[0]) &&
	   strstr(text, "trace_stats {"),
	   "machine trace_stats: machine_id, its stream as one buffer, connections");
	free(text);
	free(r.data);
	m.machine_id = 0;
	ok(pbt_pkt_machine_stats(&seq, &m, &r) == -EINVAL,
	   "machine trace_stats: machine_id 0 (the host) refused");
}

/* An older module answers READ_REMOTE with ENOTTY (or EINVAL): traced
 * must read that as "no remote data", not as an error. /dev/null has no
 * ioctls at all: ENOTTY. */
static void test_read_remote_old(void)
{
	struct pbt_reader rd = { .fd = open("/dev/null", O_RDONLY) };
	static uint8_t buf[PBTRACE_REMOTE_READ_MIN];
	size_t len = 1;
	int eof = 1;

	ok(pbt_reader_read_remote(&rd, buf, sizeof(buf), &len, &eof) == -ENOTTY &&
	   len == 0 && eof == 0,
	   "READ_REMOTE on a module without it: -ENOTTY, nothing read");
	ok(pbt_reader_read_remote(&rd, buf, 4096, &len, &eof) == -EINVAL,
	   "READ_REMOTE into less than PBTRACE_REMOTE_READ_MIN refused");
	close(rd.fd);
}

int main(int argc, char **argv)
{
	(void)argc;
	/* Fixtures are relative to user/; find it from the binary's path
	 * (user/build*\/tests/NAME) when run from elsewhere. */
	if (access(FIX, F_OK) != 0) {
		char *dir = dirname(argv[0]);
		char path[4096];

		snprintf(path, sizeof(path), "%s/../..", dir);
		if (chdir(path) != 0)
			return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/traced_units.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	printf("TAP version 13\n");
	test_status();
	test_cmdline();
	test_kv();
	test_stat();
	test_list_ids();
	test_records();
	test_writer();
	test_process_tree();
	test_sys_stats();
	test_live_proc();
	test_system_info_clocks();
	test_boot_id();
	test_config_trigger_stats();
	test_machine_stats();
	test_read_remote_old();
	rmdir(tmpdir);
	printf("1..%d\n", n_test);
	return n_fail ? 1 : 0;
}
