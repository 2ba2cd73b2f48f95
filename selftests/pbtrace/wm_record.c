// SPDX-License-Identifier: GPL-2.0
/*
 * Live watermark helper, run in the guest by watermark_test.sh. It drives
 * the real path (session over generic netlink, chunks through /dev/pbtrace)
 * and logs what a reader saw, for wm_check.py to hold against protoc's
 * decode of the chunks:
 *
 *   wm_record race FILE LOG SECONDS PERIOD_MS [expedited]
 *       every syscall of the machine (no pid filter) while a thread per
 *       CPU makes bursts of getppid and openat of a missing path (its
 *       string is a second event) with idle gaps, one thread hops between
 *       CPUs, and CPU 1 goes offline and back halfway. The chunks go to
 *       FILE in the order GET_CHUNK handed them out; LOG has a line per
 *       chunk ("C seq cpu len events"), per change of the mapping's
 *       watermark ("W k ns seq t": seen after k chunks were taken, at
 *       BOOTTIME t) and per GET_WATERMARK ("R k read_ns published_ns t":
 *       asked after k chunks were written and put back), then "END ...".
 *       "expedited": the rounds wait for expedited grace periods.
 *   wm_record idle SECONDS PERIOD_MS flush|watermark|expedited
 *       one thread makes a syscall every 2 ms on CPU 0 (this process too
 *       stays there), the session records its calls only (pid filter),
 *       and CPU 1 idles; either the session has a
 *       watermark (with expedited grace periods: expedited), or (flush)
 *       none and FLUSH_SESSION is sent every
 *       PERIOD_MS, as traced's drain_period_ms does. Prints
 *       "IDLE rounds=R": watermark rounds (changes seen) or flushes.
 *       The test counts the flush IPIs per CPU with ftrace meanwhile.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "genl.h"
#include "reader.h"

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "wm_record: %s: %s\n", what, detail);
	exit(1);
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static volatile int stop_workers;

struct worker {
	pthread_t t;
	int cpu;		/* -1: hops over every CPU */
	unsigned int seed;
};

static void burst(unsigned int *seed)
{
	int i, n = 1 + rand_r(seed) % 40;

	for (i = 0; i < n; i++) {
		if (i & 1)
			syscall(SYS_openat, -100, "/nonexistent/wm", 0);
		else
			syscall(SYS_getppid);
	}
}

static void *work(void *arg)
{
	struct worker *w = arg;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF), hop = 0;

	if (w->cpu >= 0)
		pin(w->cpu);
	while (!stop_workers) {
		if (w->cpu < 0)
			pin(hop++ % ncpu);	/* fails on an offline CPU: fine */
		burst(&w->seed);
		sleep_us(rand_r(&w->seed) % 20000);
	}
	return NULL;
}

static int set_online(int cpu, int on)
{
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", on) > 0;
	ok = !fclose(f) && ok;
	return ok ? 0 : -1;
}

struct rec {
	struct pbt_nl *nl;
	struct pbt_reader r;
	uint32_t id;
	FILE *out, *log;
	unsigned long k;	/* chunks taken, written and put back */
	uint64_t w_ns, w_seq;	/* last mapping watermark logged */
};

static bool expedited;		/* the watermark's grace periods */

static void session_new(struct rec *rc, uint32_t period_ms, pid_t pid)
{
	struct pbt_session_spec s = { .nr_buffers = 1 };
	struct pbt_buffer_spec *b = &s.buffers[0];
	char err[256], name[64];

	snprintf(name, sizeof(name), "wm_record-%d", getpid());
	s.name = name;
	b->size_kb = 4096;
	b->chunk_kb = 4;	/* many seals: many chunk boundaries to check */
	b->fill_policy = PBTRACE_FILL_DISCARD;
	b->events[b->nr_events++] = "raw_syscalls/sys_enter";
	b->events[b->nr_events++] = "raw_syscalls/sys_exit";
	if (pid)
		b->pids[b->nr_pids++] = (uint32_t)pid;
	b->watermark_ms = period_ms;
	b->watermark_expedited = period_ms && expedited;
	rc->nl = pbt_nl_open(err, sizeof(err));
	if (!rc->nl)
		die("netlink", err);
	if (pbt_nl_new_session(rc->nl, &s, &rc->id) < 0)
		die("new session", pbt_nl_error(rc->nl));
	if (pbt_reader_open(&rc->r, rc->id, 0, err, sizeof(err)) < 0)
		die("reader", err);
	if (pbt_nl_session_cmd(rc->nl, PBTRACE_CMD_START_SESSION, rc->id) < 0)
		die("start", pbt_nl_error(rc->nl));
}

/* The mapping's watermark, read under its sequence count. */
static void map_watermark(struct rec *rc, uint64_t *ns, uint64_t *seq)
{
	const volatile struct pbtrace_mmap_header *h =
		(const volatile void *)pbt_reader_header(&rc->r);
	uint32_t g1, g2;

	do {
		g1 = __atomic_load_n(&h->watermark_gen, __ATOMIC_ACQUIRE);
		*ns = h->watermark_ns;
		*seq = h->watermark_seq;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		g2 = h->watermark_gen;
	} while ((g1 & 1) || g1 != g2);
}

/* The watermark first, then the chunk: it holds for every chunk after. */
static int take_one(struct rec *rc)
{
	struct pbtrace_chunk_req req;
	const uint8_t *data;
	uint64_t ns, seq;
	int ret;

	map_watermark(rc, &ns, &seq);
	if (ns != rc->w_ns || seq != rc->w_seq) {
		fprintf(rc->log, "W %lu %llu %llu %llu\n", rc->k,
			(unsigned long long)ns, (unsigned long long)seq,
			(unsigned long long)now_ns(CLOCK_BOOTTIME));
		rc->w_ns = ns;
		rc->w_seq = seq;
	}
	ret = pbt_reader_next(&rc->r, &req, &data);
	if (ret)
		return ret;
	if (fwrite(data, 1, req.len, rc->out) != req.len)
		die("write", strerror(errno));
	/* A reader puts back what is in its file: flushed first. */
	fflush(rc->out);
	fprintf(rc->log, "C %llu %u %u %u\n", (unsigned long long)req.seq,
		req.cpu, req.len, req.events);
	if (pbt_reader_put(&rc->r, &req) < 0)
		die("put", strerror(errno));
	rc->k++;
	return 0;
}

static void ask_read(struct rec *rc)
{
	struct pbt_watermark_info w;
	int n = pbt_nl_get_watermark(rc->nl, rc->id, &w);

	if (n < 0)
		die("GET_WATERMARK", pbt_nl_error(rc->nl));
	if (n)
		fprintf(rc->log, "R %lu %llu %llu %llu\n", rc->k,
			(unsigned long long)w.read_ns,
			(unsigned long long)w.published_ns,
			(unsigned long long)now_ns(CLOCK_BOOTTIME));
}

static void drain(struct rec *rc)
{
	while (!take_one(rc))
		;
}

static int cmd_race(const char *file, const char *log, int secs, int period)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), i, hot = -1;
	struct worker w[9] = { 0 };
	struct rec rc = { 0 };
	uint64_t end, half, ask = 0;
	struct pollfd pfd;
	bool offline = false, back = false;

	rc.out = fopen(file, "w");
	rc.log = fopen(log, "w");
	if (!rc.out || !rc.log)
		die("open", strerror(errno));
	session_new(&rc, period, 0);
	if (ncpu > 8)
		ncpu = 8;
	for (i = 0; i <= ncpu; i++) {
		w[i].cpu = i < ncpu ? i : -1;
		w[i].seed = 7 + i;
		pthread_create(&w[i].t, NULL, work, &w[i]);
	}
	end = now_ns(CLOCK_MONOTONIC) + (uint64_t)secs * 1000000000ull;
	half = end - (uint64_t)secs * 500000000ull;
	pfd.fd = pbt_reader_fd(&rc.r);
	pfd.events = POLLIN;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);

		if (ncpu > 1 && !offline && t >= half) {
			hot = set_online(1, 0);
			fprintf(rc.log, "H offline %d\n", hot);
			offline = true;
		}
		if (offline && !back && t >= half + 300000000ull) {
			fprintf(rc.log, "H online %d\n", set_online(1, 1));
			back = true;
		}
		drain(&rc);
		if (t >= ask) {
			ask_read(&rc);
			ask = t + 3000000ull;
		}
		poll(&pfd, 1, 1);
	}
	stop_workers = 1;
	for (i = 0; i <= ncpu; i++)
		pthread_join(w[i].t, NULL);
	if (offline && !back)
		set_online(1, 1);
	if (pbt_nl_session_cmd(rc.nl, PBTRACE_CMD_STOP_SESSION, rc.id) < 0)
		die("stop", pbt_nl_error(rc.nl));
	drain(&rc);
	take_one(&rc);		/* the final watermark: logged, no chunk left */
	ask_read(&rc);
	fprintf(rc.log, "END chunks=%lu\n", rc.k);
	pbt_nl_session_cmd(rc.nl, PBTRACE_CMD_DESTROY_SESSION, rc.id);
	fclose(rc.out);
	fclose(rc.log);
	return 0;
}

static volatile pid_t tick_tid;

static void *tick(void *arg)
{
	(void)arg;
	pin(0);
	tick_tid = (pid_t)syscall(SYS_gettid);
	while (!stop_workers) {
		syscall(SYS_getppid);
		sleep_us(2000);
	}
	return NULL;
}

static int cmd_idle(int secs, int period, const char *mode)
{
	bool flush = !strcmp(mode, "flush");

	expedited = !strcmp(mode, "expedited");
	struct rec rc = { 0 };
	unsigned long rounds = 0;
	uint64_t end, ns, seq, last = 0, next_flush = 0;
	pthread_t t;

	if (pin(0))
		die("pin to CPU 0", strerror(errno));
	rc.log = fopen("/dev/null", "w");
	rc.out = fopen("/dev/null", "w");
	if (!rc.log || !rc.out)
		die("open /dev/null", strerror(errno));
	/* Every thread here stays on CPU 0 (affinity is inherited). */
	stop_workers = 0;
	tick_tid = 0;
	pthread_create(&t, NULL, tick, NULL);
	while (!tick_tid)
		sleep_us(1000);
	/* Its calls only: whatever else runs on CPU 1 writes nothing. */
	session_new(&rc, flush ? 0 : period, tick_tid);
	end = now_ns(CLOCK_MONOTONIC) + (uint64_t)secs * 1000000000ull;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		uint64_t t1 = now_ns(CLOCK_MONOTONIC);

		if (flush && t1 >= next_flush) {
			if (pbt_nl_session_cmd(rc.nl, PBTRACE_CMD_FLUSH_SESSION,
					       rc.id) < 0)
				die("flush", pbt_nl_error(rc.nl));
			rounds++;
			next_flush = t1 + (uint64_t)period * 1000000ull;
		}
		drain(&rc);
		map_watermark(&rc, &ns, &seq);
		if (!flush && ns != last) {
			rounds++;
			last = ns;
		}
		sleep_us(1000);
	}
	stop_workers = 1;
	pthread_join(t, NULL);
	printf("IDLE rounds=%lu\n", rounds);
	pbt_nl_session_cmd(rc.nl, PBTRACE_CMD_STOP_SESSION, rc.id);
	drain(&rc);
	pbt_nl_session_cmd(rc.nl, PBTRACE_CMD_DESTROY_SESSION, rc.id);
	fclose(rc.log);
	fclose(rc.out);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 6 || (argc == 7 && !strcmp(argv[6], "expedited"))) &&
	    !strcmp(argv[1], "race")) {
		expedited = argc == 7;
		return cmd_race(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	}
	if (argc == 5 && !strcmp(argv[1], "idle"))
		return cmd_idle(atoi(argv[2]), atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: wm_record race FILE LOG SECONDS PERIOD_MS [expedited] |\n"
			"       wm_record idle SECONDS PERIOD_MS flush|watermark|expedited\n");
	return 2;
}
