// SPDX-License-Identifier: GPL-2.0
/*
 * kmod/core/filter.c against the kernel's own ftrace filter, on the records
 * the module's probe gets: perf's raw tracepoint record (PERF_SAMPLE_RAW).
 *
 *   filter_ref GROUP/NAME EXPR... -- CMD [ARGS]
 *
 * Reads the event's layout from tracefs (events/G/N/format, as userspace
 * does for the module), compiles every EXPR with pbt_filter_compile(), and
 * on every online CPU opens one perf group: a leader without a filter,
 * whose records each EXPR's program judges, and one sibling per EXPR with
 * the same text set by PERF_EVENT_IOC_SET_FILTER (ftrace's filter code:
 * create_filter(), as for events/G/N/filter), all writing into the
 * leader's ring. A group is enabled and disabled at once, so both sides
 * see the same hits. Runs CMD, drains the rings, prints per EXPR
 *
 *   expr K mine N kernel M            or
 *   expr K refused POS MSG kernel_refused 0|1
 *
 * then "all N" (the leader's records) and "lost N" (perf's own loss
 * records). Exit 0 if it could measure, 1 on a setup error.
 *
 * "OURS => KERNEL" gives the kernel an equivalent expression of its own:
 * for what ftrace gets wrong (a "*suffix" glob on a char[N] field compares
 * the field's last bytes, past the string's NUL: regex_match_end() with
 * the field's size), the referee is the same match written as a full glob.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter.c"

#define MAX_EXPR 32
#define MAX_CPUS 64
#define RING_PAGES 512

static struct pbt_tp_layout lay;
static struct pbt_filter_prog progs[MAX_EXPR];
static struct pbt_filter_err errs[MAX_EXPR];
static int nr_expr, ok_expr[MAX_EXPR], kernel_ok[MAX_EXPR];
static unsigned long mine[MAX_EXPR], kernel[MAX_EXPR], all, lost;
static uint64_t ids[MAX_CPUS][MAX_EXPR + 1];

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size;
	int cpu;
};

static struct ring rings[MAX_CPUS];
static int nr_rings;

static const char *tracefs(void)
{
	return access("/sys/kernel/tracing/events", F_OK) == 0 ?
	       "/sys/kernel/tracing" : "/sys/kernel/debug/tracing";
}

/* One "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" line. */
static void add_field(char *line)
{
	char *decl = strstr(line, "field:") + 6, *semi = strchr(decl, ';');
	char *name, *br, *o = strstr(line, "offset:"), *s = strstr(line, "size:");
	char *sg = strstr(line, "signed:");
	struct pbt_tpf *f = &lay.fields[lay.nr_fields];

	if (!semi || !o || !s || !sg || lay.nr_fields >= PBTRACE_TP_MAX_FIELDS)
		return;
	*semi = '\0';
	name = strrchr(decl, ' ');
	if (!name)
		return;
	*name++ = '\0';
	br = strchr(name, '[');
	snprintf(f->name, sizeof(f->name), "%.*s",
		 br ? (int)(br - name) : (int)strlen(name), name);
	f->offset = atoi(o + 7);
	f->size = atoi(s + 5);
	f->is_signed = atoi(sg + 7);
	if (strstr(decl, "__data_loc"))
		f->kind = strstr(decl, "char") ? PBTRACE_TPF_DATA_LOC_STR :
						 PBTRACE_TPF_DATA_LOC_BYTES;
	else if (strstr(decl, "__rel_loc"))
		f->kind = strstr(decl, "char") ? PBTRACE_TPF_REL_LOC_STR :
						 PBTRACE_TPF_REL_LOC_BYTES;
	else if (br && strstr(decl, "char"))
		f->kind = PBTRACE_TPF_CHARS;
	else if (br)
		f->kind = PBTRACE_TPF_ARRAY;
	else if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)
		f->kind = PBTRACE_TPF_INT;
	else
		f->kind = PBTRACE_TPF_BYTES;
	lay.nr_fields++;
}

static int read_layout(const char *event, unsigned int *id)
{
	char path[512], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/id", tracefs(), event);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%u", id) != 1) {
		fprintf(stderr, "filter_ref: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/events/%s/format", tracefs(), event);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "filter_ref: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "field:"))
			add_field(line);
	fclose(f);
	return lay.nr_fields ? 0 : -1;
}

static int perf_open(unsigned int id, int cpu, int group)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(a), .config = id,
		.sample_period = 1, .disabled = group < 0,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_RAW,
	};

	return syscall(SYS_perf_event_open, &a, -1, cpu, group, 0);
}

/* Leader and one sibling per expression on @cpu, all into the leader's ring. */
static int open_cpu(unsigned int id, int cpu, const char **exprs)
{
	struct ring *r = &rings[nr_rings];
	long page = sysconf(_SC_PAGESIZE);
	int k, fd;

	r->fd = perf_open(id, cpu, -1);
	if (r->fd < 0)
		return errno == ENODEV || errno == EINVAL ? 0 : -1;
	r->cpu = cpu;
	r->size = RING_PAGES * page;
	r->meta = mmap(NULL, r->size + page, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->fd, 0);
	if (r->meta == MAP_FAILED)
		return -1;
	r->data = (uint8_t *)r->meta + page;
	if (ioctl(r->fd, PERF_EVENT_IOC_ID, &ids[nr_rings][0]))
		return -1;
	for (k = 0; k < nr_expr; k++) {
		fd = perf_open(id, cpu, r->fd);
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &ids[nr_rings][k + 1]))
			return -1;
		kernel_ok[k] = !ioctl(fd, PERF_EVENT_IOC_SET_FILTER, exprs[k]);
		if (!kernel_ok[k])
			ids[nr_rings][k + 1] = 0;
	}
	nr_rings++;
	return 0;
}

static void sample(int ri, const uint8_t *p, size_t len)
{
	uint64_t id;
	uint32_t size;
	int k;

	if (len < 12)
		return;
	memcpy(&id, p, 8);
	memcpy(&size, p + 8, 4);
	if (12 + (size_t)size > len)
		return;
	if (id == ids[ri][0]) {
		all++;
		for (k = 0; k < nr_expr; k++)
			if (ok_expr[k] && pbt_filter_match(&progs[k], p + 12, size))
				mine[k]++;
		return;
	}
	for (k = 0; k < nr_expr; k++)
		if (ids[ri][k + 1] && id == ids[ri][k + 1])
			kernel[k]++;
}

static void drain(int ri)
{
	struct ring *r = &rings[ri];
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	static uint8_t rec[65536];	/* h.size is 16 bits */

	while (tail < head) {
		struct perf_event_header h;
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = r->data[(tail + i) % r->size];
		if (h.size < sizeof(h))
			break;
		for (i = 0; i < h.size; i++)
			rec[i] = r->data[(tail + i) % r->size];
		if (h.type == PERF_RECORD_SAMPLE)
			sample(ri, rec + sizeof(h), h.size - sizeof(h));
		else if (h.type == PERF_RECORD_LOST)
			lost += ((uint64_t *)(rec + sizeof(h)))[1];
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(void)
{
	int i;

	for (i = 0; i < nr_rings; i++)
		drain(i);
}

static int run(char **cmd)
{
	int i, status;
	pid_t pid;

	for (i = 0; i < nr_rings; i++)
		ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	pid = fork();
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		drain_all();
		poll(NULL, 0, 10);
	}
	for (i = 0; i < nr_rings; i++)
		ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	drain_all();
	return status;
}

int main(int argc, char **argv)
{
	const char *kexprs[MAX_EXPR];
	unsigned int id;
	int i, k, cpus = sysconf(_SC_NPROCESSORS_CONF);
	char *sep;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++)
		;
	if (argc < 4 || i >= argc - 1 || i - 2 > MAX_EXPR) {
		fprintf(stderr, "usage: filter_ref GROUP/NAME EXPR... -- CMD [ARGS]\n");
		return 1;
	}
	nr_expr = i - 2;
	if (read_layout(argv[1], &id))
		return 1;
	for (k = 0; k < nr_expr; k++) {
		kexprs[k] = argv[2 + k];
		sep = strstr(argv[2 + k], " => ");
		if (sep) {
			*sep = '\0';
			kexprs[k] = sep + 4;
		}
		ok_expr[k] = !pbt_filter_compile(argv[2 + k], &lay, &progs[k],
						 &errs[k]);
	}
	for (i = 0; i < cpus && i < MAX_CPUS; i++)
		if (open_cpu(id, i, kexprs)) {
			fprintf(stderr, "filter_ref: perf on cpu %d: %s\n", i,
				strerror(errno));
			return 1;
		}
	run(argv + 3 + nr_expr);
	for (k = 0; k < nr_expr; k++)
		if (ok_expr[k])
			printf("expr %d mine %lu kernel %lu%s\n", k, mine[k], kernel[k],
			       kernel_ok[k] ? "" : " kernel_refused 1");
		else
			printf("expr %d refused %d %s kernel_refused %d\n", k,
			       errs[k].pos, errs[k].msg, !kernel_ok[k]);
	printf("all %lu\nlost %lu\n", all, lost);
	return 0;
}
