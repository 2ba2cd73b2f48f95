// SPDX-License-Identifier: GPL-2.0
/*
 * Data-plane test helper, run in the guest by dataplane_test.sh. It drives
 * the real path (session over generic netlink with user/genl, chunks through
 * /dev/pbtrace with user/reader), runs a workload whose events it can count
 * on its own, writes the sealed chunks verbatim to a file and prints what it
 * knows as key=value lines for the script to compare with protoc's decode.
 *
 *   dp_record workload FILE N K M   N forks, K getppid, M pipe round trips
 *                                   between two threads pinned to CPU 0/1
 *   dp_record exact FILE ring|discard K
 *                                   a child filtered by pid does exactly
 *                                   2K+4 syscalls events into a tiny buffer
 *                                   (size from $DP_SIZE_KB if set)
 *   dp_record all FILE CMD          every available event while sh -c CMD
 *                                   runs (renamed to dp-renamed first)
 *   dp_record stream FILE ring|discard K
 *                                   as exact, with a reader draining
 *                                   concurrently (races overwrite/read)
 *   dp_record two FILE_A FILE_B K   two sessions, different event sets,
 *                                   on the same child
 *   dp_record hotplug FILE K        as exact, on CPU 1, which goes offline
 *                                   and back while the session runs
 *   dp_record reattach              a dead reader's chunks come back
 *   dp_record leave                 leave a started session behind
 *   dp_record open                  attach to session 1, print the outcome
 *   dp_record run FILE EV1,EV2 CMD  record those events while CMD runs
 *                                   (chunk size from $DP_CHUNK_KB)
 *   dp_record follow FILE EV1,EV2 CMD
 *                                   as run, for sh -c CMD and its children
 *                                   only: a pid filter that follows forks
 *   dp_record mmap                  the mapping cannot be made writable
 *   dp_record tp FILE G/N,G/N CMD   any tracepoints (layouts from tracefs,
 *                                   user/lib/tracefs.c) while sh -c CMD
 *                                   runs, each through the generic path
 *                                   (FtraceEvent field 65536 + i and its
 *                                   descriptor), or with DP_TP_NATIVE=1
 *                                   Perfetto's own field where it has one;
 *                                   DP_TP_LEAVE=1 leaves it started,
 *                                   DP_TP_NO_FIELDS=1 writes no field,
 *                                   DP_TP_PID=1 filters on CMD's pid,
 *                                   DP_SIZE_KB, DP_DISCARD=1 the buffer,
 *                                   DP_TP_NOREAD=1 only counts, as
 *                                   DP_TP_UID with DP_TP_GID if set
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#include "genl.h"
#include "reader.h"
#include "tracefs.h"

static void die(const char *fmt, const char *detail)
{
	fprintf(stderr, "dp_record: ");
	fprintf(stderr, fmt, detail);
	fprintf(stderr, "\n");
	exit(1);
}

struct rec {
	struct pbt_nl *nl;
	struct pbt_reader r;
	uint32_t id;
	FILE *out;
	unsigned long chunks, events, bytes;
};

static void session_new(struct rec *rc, const struct pbt_buffer_spec *b)
{
	struct pbt_session_spec s = { .nr_buffers = 1 };
	char err[256], name[64];
	static int nr;

	/* Unique, so a session left by a failed run is no obstacle. */
	snprintf(name, sizeof(name), "dp_record-%d-%d", getpid(), nr++);
	s.name = name;
	s.buffers[0] = *b;
	rc->nl = pbt_nl_open(err, sizeof(err));
	if (!rc->nl)
		die("netlink: %s", err);
	if (pbt_nl_new_session(rc->nl, &s, &rc->id) < 0)
		die("new session: %s", pbt_nl_error(rc->nl));
	if (pbt_reader_open(&rc->r, rc->id, 0, err, sizeof(err)) < 0)
		die("reader: %s", err);
}

static void session_cmd(struct rec *rc, int cmd)
{
	if (pbt_nl_session_cmd(rc->nl, cmd, rc->id) < 0)
		die("session command: %s", pbt_nl_error(rc->nl));
}

/* Copy every sealed chunk to the file, verbatim. */
static void drain(struct rec *rc)
{
	struct pbtrace_chunk_req req;
	const uint8_t *data;
	int ret;

	while ((ret = pbt_reader_next(&rc->r, &req, &data)) == 0) {
		if (fwrite(data, 1, req.len, rc->out) != req.len)
			die("write: %s", strerror(errno));
		rc->chunks++;
		rc->events += req.events;
		rc->bytes += req.len;
		if (pbt_reader_put(&rc->r, &req) < 0)
			die("put chunk: %s", strerror(errno));
	}
	if (ret != -EAGAIN)
		die("get chunk: %s", strerror(-ret));
}

static short poll_now(struct rec *rc)
{
	struct pollfd p = { .fd = pbt_reader_fd(&rc->r), .events = POLLIN };

	if (poll(&p, 1, 0) < 0)
		die("poll: %s", strerror(errno));
	return p.revents;
}

/* Stop, drain, and print what the kernel counted. */
static void finish(struct rec *rc)
{
	const struct pbtrace_mmap_header *h = pbt_reader_header(&rc->r);
	struct pbtrace_cpu_stats st, sum = { 0 };
	short before, after;
	uint32_t cpu;
	unsigned long streamed = rc->chunks;

	session_cmd(rc, PBTRACE_CMD_STOP_SESSION);
	before = poll_now(rc);
	drain(rc);
	after = poll_now(rc);
	printf("chunks_after_stop=%lu\n", rc->chunks - streamed);
	for (cpu = 0; cpu < h->nr_cpus; cpu++) {
		pbt_reader_stats(&rc->r, cpu, &st);
		sum.events_written += st.events_written;
		sum.chunks_sealed += st.chunks_sealed;
		sum.chunks_read += st.chunks_read;
		sum.chunks_overwritten += st.chunks_overwritten;
		sum.chunks_discarded += st.chunks_discarded;
		sum.lost_full += st.lost_full;
		sum.lost_overwritten += st.lost_overwritten;
		sum.lost_too_large += st.lost_too_large;
		sum.lost_nmi += st.lost_nmi;
	}
	printf("chunks_in_file=%lu\nevents_in_chunks=%lu\nbytes=%lu\n",
	       rc->chunks, rc->events, rc->bytes);
	printf("written=%llu\nsealed=%llu\nread=%llu\n",
	       (unsigned long long)sum.events_written,
	       (unsigned long long)sum.chunks_sealed,
	       (unsigned long long)sum.chunks_read);
	printf("chunks_overwritten=%llu\nchunks_discarded=%llu\n",
	       (unsigned long long)sum.chunks_overwritten,
	       (unsigned long long)sum.chunks_discarded);
	printf("lost_full=%llu\nlost_overwritten=%llu\nlost_too_large=%llu\nlost_nmi=%llu\n",
	       (unsigned long long)sum.lost_full,
	       (unsigned long long)sum.lost_overwritten,
	       (unsigned long long)sum.lost_too_large,
	       (unsigned long long)sum.lost_nmi);
	printf("lost=%llu\n", (unsigned long long)(sum.lost_full +
	       sum.lost_overwritten + sum.lost_too_large + sum.lost_nmi));
	printf("poll_before_drain=%s\npoll_after_drain=%s\n",
	       before & POLLIN ? "in" : before & POLLHUP ? "hup" : "none",
	       after & POLLIN ? "in" : after & POLLHUP ? "hup" : "none");
	printf("seq_base=%u\n", h->sequence_id_base);
	pbt_reader_close(&rc->r);
	session_cmd(rc, PBTRACE_CMD_DESTROY_SESSION);
	pbt_nl_close(rc->nl);
	if (fclose(rc->out))
		die("close: %s", strerror(errno));
}

static void add_events(struct pbt_buffer_spec *b, const char *const *ev)
{
	while (*ev)
		b->events[b->nr_events++] = *ev++;
}

/* EV1,EV2,... into @b's events (pointers into @events, which it cuts). */
static void split_events(struct pbt_buffer_spec *b, char *events)
{
	char *tok, *save;

	for (tok = strtok_r(events, ",", &save); tok && b->nr_events < PBT_MAX_EVENTS;
	     tok = strtok_r(NULL, ",", &save))
		b->events[b->nr_events++] = tok;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("pin: %s", strerror(errno));
}

/* workload: the pipe ping-pong threads */

struct pingpong {
	int to_b[2], to_a[2];
	int m;
	pid_t tid_a, tid_b;
};

static void *pong(void *arg)
{
	struct pingpong *pp = arg;
	char c;
	int i;

	pp->tid_b = syscall(SYS_gettid);
	pin(1);
	for (i = 0; i < pp->m; i++) {
		if (read(pp->to_b[0], &c, 1) != 1 || write(pp->to_a[1], &c, 1) != 1)
			die("pong: %s", strerror(errno));
	}
	return NULL;
}

static void *ping(void *arg)
{
	struct pingpong *pp = arg;
	char c = 'x';
	int i;

	pp->tid_a = syscall(SYS_gettid);
	pin(0);
	for (i = 0; i < pp->m; i++) {
		if (write(pp->to_b[1], &c, 1) != 1 || read(pp->to_a[0], &c, 1) != 1)
			die("ping: %s", strerror(errno));
	}
	return NULL;
}

static int cmd_workload(const char *file, int n, int k, int m)
{
	static const char *const ev[] = {
		"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup",
		"sched/sched_wakeup_new", "sched/sched_process_fork",
		"sched/sched_process_exit", "sched/sched_process_free",
		"task/task_newtask", "raw_syscalls/sys_enter",
		"raw_syscalls/sys_exit", NULL,
	};
	struct pbt_buffer_spec b = {
		.size_kb = 16384, .chunk_kb = 64,
		.fill_policy = PBTRACE_FILL_RING_BUFFER,
	};
	struct pingpong pp = { .m = m };
	pthread_t ta, tb;
	struct rec rc = { 0 };
	pid_t child;
	int i;

	add_events(&b, ev);
	rc.out = fopen(file, "w");
	if (!rc.out)
		die("open output: %s", strerror(errno));
	session_new(&rc, &b);
	if (pipe(pp.to_a) || pipe(pp.to_b))
		die("pipe: %s", strerror(errno));
	/* Printed before the start: our getppid calls must be exactly k. */
	printf("pid=%d\nppid=%d\nn=%d\nk=%d\nm=%d\n", getpid(), getppid(),
	       n, k, m);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	for (i = 0; i < n; i++) {
		child = fork();
		if (child < 0)
			die("fork: %s", strerror(errno));
		if (!child)
			_exit(0);
		printf("child=%d\n", child);
		waitpid(child, NULL, 0);
	}
	for (i = 0; i < k; i++)
		syscall(SYS_getppid);
	if (pthread_create(&tb, NULL, pong, &pp) ||
	    pthread_create(&ta, NULL, ping, &pp))
		die("pthread: %s", "failed");
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("ping_tid=%d\npong_tid=%d\n", pp.tid_a, pp.tid_b);
	finish(&rc);
	return 0;
}

/* exact: the child's syscalls are the only events the buffer wants. */

static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open stat: %s", strerror(errno));
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		die("read stat: %s", strerror(errno));
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

/* Until the child sleeps: it is then inside read(), sys_enter written. */
static void wait_sleeping(pid_t pid)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < 20000; i++) {
		if (proc_state(pid) == 'S')
			return;
		nanosleep(&ts, NULL);
	}
	die("child never blocked: %s", "timeout");
}

/* Every PACE getppid calls a paced child naps: 2 more events each. */
#define PACE 20

static int paced_events(int k)
{
	return 2 * (k / PACE);
}

static void exact_child_paced(int go, int done, int park, int k, int paced)
{
	struct timespec nap = { 0, 1000000 };
	char c;
	int i;

	/* Before the session starts: blocked in this read. */
	if (read(go, &c, 1) != 1)		/* traced: sys_exit */
		_exit(1);
	for (i = 1; i <= k; i++) {		/* traced: 2 * k */
		syscall(SYS_getppid);
		/* Lets a concurrent reader run: enter + exit each. */
		if (paced && i % PACE == 0)
			syscall(SYS_nanosleep, &nap, NULL);
	}
	if (write(done, &c, 1) != 1)		/* traced: enter + exit */
		_exit(1);
	read(park, &c, 1);			/* traced: sys_enter */
	_exit(0);
}

/* The exact child, parked in read(go) until exact_go(). */
struct exact {
	int go[2], done[2], park[2];
	pid_t pid;
};

/* Fork it, pinned to @cpu unless that is -1. */
static void exact_spawn(struct exact *x, int cpu, int k, int paced)
{
	if (pipe(x->go) || pipe(x->done) || pipe(x->park))
		die("pipe: %s", strerror(errno));
	x->pid = fork();
	if (x->pid < 0)
		die("fork: %s", strerror(errno));
	if (!x->pid) {
		if (cpu >= 0)
			pin(cpu);
		exact_child_paced(x->go[0], x->done[1], x->park[0], k, paced);
	}
}

/* Let it make its k calls and wait until it is parked again. */
static void exact_go(struct exact *x)
{
	char c = 'g';

	if (write(x->go[1], &c, 1) != 1 || read(x->done[0], &c, 1) != 1)
		die("child handshake: %s", strerror(errno));
	wait_sleeping(x->pid);
}

static void exact_reap(struct exact *x)
{
	kill(x->pid, SIGKILL);
	waitpid(x->pid, NULL, 0);
}

static int cmd_exact(const char *file, const char *policy, int k)
{
	static const char *const ev[] = {
		"raw_syscalls/sys_enter", "raw_syscalls/sys_exit", NULL,
	};
	struct pbt_buffer_spec b = { .size_kb = 8, .chunk_kb = 4 };
	const char *size_kb = getenv("DP_SIZE_KB");
	struct exact x;
	struct rec rc = { 0 };

	if (size_kb)
		b.size_kb = atoi(size_kb);
	if (!strcmp(policy, "ring"))
		b.fill_policy = PBTRACE_FILL_RING_BUFFER;
	else if (!strcmp(policy, "discard"))
		b.fill_policy = PBTRACE_FILL_DISCARD;
	else
		die("policy must be ring or discard, not %s", policy);
	add_events(&b, ev);
	exact_spawn(&x, -1, k, 0);
	b.pids[b.nr_pids++] = x.pid;

	rc.out = fopen(file, "w");
	if (!rc.out)
		die("open output: %s", strerror(errno));
	session_new(&rc, &b);
	wait_sleeping(x.pid);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	exact_go(&x);
	printf("child=%d\nemitted=%d\n", x.pid, 2 * k + 4);
	finish(&rc);
	exact_reap(&x);
	return 0;
}

static void set_online(int cpu, const char *val)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, val, 1) != 1)
		die("cpu hotplug: %s", strerror(errno));
	close(fd);
}

/*
 * hotplug: the pid-filtered child runs on CPU 1, which then goes offline
 * while the session runs: its chunk must be sealed and readable at once,
 * its stats say offline, and nothing is lost when it comes back.
 */
static int cmd_hotplug(const char *file, int k)
{
	static const char *const ev[] = {
		"raw_syscalls/sys_enter", "raw_syscalls/sys_exit", NULL,
	};
	struct pbt_buffer_spec b = { .size_kb = 1024, .chunk_kb = 16 };
	struct exact x;
	struct pbtrace_cpu_stats st;
	struct rec rc = { 0 };

	add_events(&b, ev);
	exact_spawn(&x, 1, k, 0);
	b.pids[b.nr_pids++] = x.pid;
	rc.out = fopen(file, "w");
	if (!rc.out)
		die("open output: %s", strerror(errno));
	session_new(&rc, &b);
	wait_sleeping(x.pid);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	exact_go(&x);

	set_online(1, "0");
	pbt_reader_stats(&rc.r, 1, &st);
	printf("offline_online_field=%u\n", st.online);
	printf("offline_sealed=%llu\n", (unsigned long long)st.chunks_sealed);
	printf("offline_poll=%s\n", poll_now(&rc) & POLLIN ? "in" : "none");
	set_online(1, "1");
	printf("child=%d\nemitted=%d\n", x.pid, 2 * k + 4);
	finish(&rc);
	exact_reap(&x);
	return 0;
}

/*
 * reattach: a reader that dies holding a chunk gives it back unread; a
 * reader cannot put a chunk it does not hold.
 */
static int cmd_reattach(void)
{
	static const char *const ev[] = { "raw_syscalls/sys_enter", NULL };
	struct pbt_buffer_spec b = { .size_kb = 256 };
	struct pbtrace_chunk_req req, again, bogus;
	struct pbt_reader r2;
	struct rec rc = { 0 };
	const uint8_t *data;
	char err[256];
	int i;

	add_events(&b, ev);
	session_new(&rc, &b);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	for (i = 0; i < 100; i++)
		syscall(SYS_getppid);
	session_cmd(&rc, PBTRACE_CMD_STOP_SESSION);
	if (pbt_reader_next(&rc.r, &req, &data))
		die("no chunk after stop: %s", "none sealed");
	bogus = req;
	bogus.index = req.index ^ 1;
	printf("put_unheld=%s\n", pbt_reader_put(&rc.r, &bogus) ? "refused" : "accepted");
	pbt_reader_close(&rc.r);		/* dies holding req */
	if (pbt_reader_open(&r2, rc.id, 0, err, sizeof(err)) < 0)
		die("reopen: %s", err);
	printf("reget=%s\n", pbt_reader_next(&r2, &again, &data) ? "none" :
	       again.seq == req.seq && again.index == req.index ? "same" : "other");
	printf("put_held=%s\n", pbt_reader_put(&r2, &again) ? "refused" : "accepted");
	printf("put_twice=%s\n", pbt_reader_put(&r2, &again) ? "refused" : "accepted");
	pbt_reader_close(&r2);
	printf("open_missing=%s\n",
	       pbt_reader_open(&r2, 0xfffffff, 0, err, sizeof(err)) ? err : "opened");
	printf("open_bad_buffer=%s\n",
	       pbt_reader_open(&r2, rc.id, 3, err, sizeof(err)) ? err : "opened");
	session_cmd(&rc, PBTRACE_CMD_DESTROY_SESSION);
	pbt_nl_close(rc.nl);
	return 0;
}

/* open: only attach to session 1 and say what happened. */
static int cmd_open(void)
{
	struct pbt_reader r;
	char err[256];

	if (pbt_reader_open(&r, 1, 0, err, sizeof(err)) < 0) {
		printf("open=%s\n", err);
		return 1;
	}
	printf("open=ok\n");
	pbt_reader_close(&r);
	return 0;
}

/* leave: a started session nobody stops (module unload must stop it). */
static int cmd_leave(void)
{
	static const char *const ev[] = {
		"sched/sched_switch", "raw_syscalls/sys_enter", NULL,
	};
	struct pbt_buffer_spec b = { .size_kb = 256 };
	struct rec rc = { 0 };

	add_events(&b, ev);
	session_new(&rc, &b);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	printf("left=%u\n", rc.id);
	return 0;
}

static int print_event(const char *name, int available, void *arg)
{
	struct pbt_buffer_spec *b = arg;

	printf("event=%s %s\n", name, available ? "available" : "unavailable");
	if (available && b->nr_events < PBT_MAX_EVENTS)
		b->events[b->nr_events++] = strdup(name);
	return 0;
}

/* all: every available event, while @cmd runs, plus an exec and a rename. */
static int cmd_all(const char *file, const char *cmd)
{
	struct pbt_buffer_spec b = {
		.size_kb = 16384, .chunk_kb = 64,
		.fill_policy = PBTRACE_FILL_DISCARD,
	};
	struct rec rc = { 0 };
	char err[256];
	pid_t child;
	int status;

	rc.nl = pbt_nl_open(err, sizeof(err));
	if (!rc.nl)
		die("netlink: %s", err);
	if (pbt_nl_list_events(rc.nl, print_event, &b) < 0)
		die("list events: %s", pbt_nl_error(rc.nl));
	pbt_nl_close(rc.nl);
	rc.out = fopen(file, "w");
	if (!rc.out)
		die("open output: %s", strerror(errno));
	session_new(&rc, &b);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (!child) {
		prctl(PR_SET_NAME, "dp-renamed");
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	printf("child=%d\n", child);
	waitpid(child, &status, 0);
	printf("cmd_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	finish(&rc);
	return 0;
}

/* stream: a reader thread drains while the writer overwrites/refuses. */
static volatile int stream_stop;

static void *stream_reader(void *arg)
{
	struct rec *rc = arg;
	struct pollfd p = { .fd = pbt_reader_fd(&rc->r), .events = POLLIN };

	pin(0);
	while (!stream_stop) {
		drain(rc);
		poll(&p, 1, 5);
	}
	return NULL;
}

static int cmd_stream(const char *file, const char *policy, int k)
{
	static const char *const ev[] = {
		"raw_syscalls/sys_enter", "raw_syscalls/sys_exit", NULL,
	};
	struct pbt_buffer_spec b = { .size_kb = 8, .chunk_kb = 4 };
	struct exact x;
	struct rec rc = { 0 };
	pthread_t reader;

	b.fill_policy = !strcmp(policy, "discard") ? PBTRACE_FILL_DISCARD :
			PBTRACE_FILL_RING_BUFFER;
	add_events(&b, ev);
	exact_spawn(&x, 1, k, 1);
	b.pids[b.nr_pids++] = x.pid;
	rc.out = fopen(file, "w");
	if (!rc.out)
		die("open output: %s", strerror(errno));
	session_new(&rc, &b);
	wait_sleeping(x.pid);
	if (pthread_create(&reader, NULL, stream_reader, &rc))
		die("pthread: %s", "failed");
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	exact_go(&x);
	stream_stop = 1;
	pthread_join(reader, NULL);
	printf("child=%d\nemitted=%d\n", x.pid, 2 * k + 4 + paced_events(k));
	finish(&rc);
	exact_reap(&x);
	return 0;
}

/*
 * two: two sessions see the same events. A wants sys_enter + sys_exit, B
 * only sys_exit; both filter on the child. B must equal A's sys_exits.
 */
static int cmd_two(const char *file_a, const char *file_b, int k)
{
	static const char *const ev_a[] = {
		"raw_syscalls/sys_enter", "raw_syscalls/sys_exit", NULL,
	};
	static const char *const ev_b[] = { "raw_syscalls/sys_exit", NULL };
	struct pbt_buffer_spec a = { .size_kb = 2048 }, b = { .size_kb = 2048 };
	struct exact x;
	struct rec ra = { 0 }, rb = { 0 };

	add_events(&a, ev_a);
	add_events(&b, ev_b);
	exact_spawn(&x, -1, k, 0);
	a.pids[a.nr_pids++] = x.pid;
	b.pids[b.nr_pids++] = x.pid;
	ra.out = fopen(file_a, "w");
	rb.out = fopen(file_b, "w");
	if (!ra.out || !rb.out)
		die("open output: %s", strerror(errno));
	session_new(&ra, &a);
	session_new(&rb, &b);
	wait_sleeping(x.pid);
	session_cmd(&ra, PBTRACE_CMD_START_SESSION);
	session_cmd(&rb, PBTRACE_CMD_START_SESSION);
	exact_go(&x);
	printf("child=%d\nk=%d\n", x.pid, k);
	finish(&ra);
	printf("---\n");
	finish(&rb);
	exact_reap(&x);
	return 0;
}

/* run: record EVENTS (comma separated) while sh -c CMD runs. */
static int cmd_run(const char *file, char *events, const char *cmd)
{
	struct pbt_buffer_spec b = {
		.size_kb = 65536, .chunk_kb = 64,
		.fill_policy = PBTRACE_FILL_RING_BUFFER,
	};
	const char *chunk_kb = getenv("DP_CHUNK_KB");
	struct rec rc = { 0 };
	int status;

	if (chunk_kb)
		b.chunk_kb = atoi(chunk_kb);
	split_events(&b, events);
	rc.out = fopen(file, "w");
	if (!rc.out)
		die("open output: %s", strerror(errno));
	session_new(&rc, &b);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	status = system(cmd);
	printf("cmd_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	finish(&rc);
	return 0;
}

/*
 * follow: a child that waits on a pipe is the pid filter's only thread,
 * with follow_forks; once the session runs it execs sh -c CMD, so the
 * command and everything it starts are traced from their first
 * instruction and nothing else is.
 */
static int cmd_follow(const char *file, char *events, const char *cmd)
{
	struct pbt_buffer_spec b = {
		.size_kb = 65536, .chunk_kb = 64, .nr_pids = 1,
		.fill_policy = PBTRACE_FILL_RING_BUFFER, .follow_forks = true,
	};
	struct rec rc = { 0 };
	char go;
	int fds[2], status;
	pid_t pid;

	split_events(&b, events);
	rc.out = fopen(file, "w");
	if (!rc.out || pipe(fds))
		die("open output or pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &go, 1) != 1)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	b.pids[0] = pid;
	b.follow_forks = !getenv("DP_NO_FOLLOW");	/* the negative control */
	session_new(&rc, &b);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	printf("root_pid=%d\n", pid);
	if (write(fds[1], "g", 1) != 1)
		die("release child: %s", strerror(errno));
	close(fds[1]);
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));
	printf("cmd_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	finish(&rc);
	return 0;
}

#define DP_MAX_TPS 64

/*
 * DP_TP_NOREAD: netlink only, for a group= member (who may not open
 * /dev/pbtrace): start, CMD, stop, and the kernel's count of events.
 */
/*
 * DP_TP_UID=U DP_TP_GID=G: become uid U (gid U, supplementary G, no
 * capability: a setuid from root drops them) once the layouts are read
 * (tracefs is root's).
 */
static void become(void)
{
	const char *u = getenv("DP_TP_UID"), *g = getenv("DP_TP_GID");
	gid_t groups[1];
	uid_t uid;

	if (!u || !g)
		return;
	uid = atoi(u);
	groups[0] = atoi(g);
	if (setgroups(1, groups) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		die("become: %s", strerror(errno));
}

static int tp_noread(const struct pbt_buffer_spec *b, const char *cmd)
{
	struct pbt_session_spec s = { .name = "dp_record-tp", .nr_buffers = 1 };
	struct pbt_session_info info = { 0 };
	unsigned long long written = 0;
	struct pbt_nl *nl;
	char err[256];
	uint32_t id;
	size_t cpu;
	int status;

	s.buffers[0] = *b;
	become();
	nl = pbt_nl_open(err, sizeof(err));
	if (!nl)
		die("netlink: %s", err);
	if (pbt_nl_new_session(nl, &s, &id) < 0)
		die("new session: %s", pbt_nl_error(nl));
	if (pbt_nl_session_cmd(nl, PBTRACE_CMD_START_SESSION, id) < 0)
		die("start: %s", pbt_nl_error(nl));
	status = system(cmd);
	printf("cmd_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (pbt_nl_session_cmd(nl, PBTRACE_CMD_STOP_SESSION, id) < 0 ||
	    pbt_nl_get_session(nl, id, &info) < 0 ||
	    pbt_nl_get_cpu_stats(nl, &info) < 0)
		die("stop and stats: %s", pbt_nl_error(nl));
	for (cpu = 0; cpu < info.buffers[0].nr_cpus; cpu++)
		written += info.buffers[0].cpus[cpu].events_written;
	printf("written=%llu\n", written);
	pbt_session_info_free(&info);
	pbt_nl_destroy_session(nl, id, NULL);
	pbt_nl_close(nl);
	return 0;
}

/*
 * DP_TP_PID=1: sh -c CMD is the buffer's one pid (forks not followed),
 * forked now and held on a pipe until the session runs; run_held() lets
 * it go and returns its wait status.
 */
static pid_t held(const char *cmd, int *go)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

static int run_held(pid_t pid, int go)
{
	int status;

	if (write(go, "g", 1) != 1)
		die("release child: %s", strerror(errno));
	close(go);
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));
	return status;
}

/* tp: record any tracepoints (comma separated) while sh -c CMD runs. */
static int cmd_tp(const char *file, char *tps, const char *cmd)
{
	static struct pbt_tp_layout layouts[DP_MAX_TPS];
	static struct pbt_tp_spec specs[DP_MAX_TPS];
	struct pbt_buffer_spec b = {
		.size_kb = 65536, .chunk_kb = 64,
		.fill_policy = PBTRACE_FILL_RING_BUFFER, .tps = specs,
	};
	char group[PBTRACE_NAME_MAX], name[PBTRACE_NAME_MAX], err[256];
	const char *chunk_kb = getenv("DP_CHUNK_KB");
	bool native = getenv("DP_TP_NATIVE") != NULL;
	struct rec rc = { 0 };
	char *tok, *save;
	int status, id, go = -1;
	unsigned int i;
	pid_t child = 0;

	if (chunk_kb)
		b.chunk_kb = atoi(chunk_kb);
	if (getenv("DP_SIZE_KB"))
		b.size_kb = atoi(getenv("DP_SIZE_KB"));
	if (getenv("DP_DISCARD"))
		b.fill_policy = PBTRACE_FILL_DISCARD;
	for (tok = strtok_r(tps, ",", &save); tok && b.nr_tps < DP_MAX_TPS;
	     tok = strtok_r(NULL, ",", &save)) {
		struct pbt_tp_layout *l = &layouts[b.nr_tps];

		if (pbt_tracefs_split(tok, group, name))
			die("not group/name: %s", tok);
		id = pbt_tracefs_layout(group, name, l, err, sizeof(err));
		if (id < 0)
			die("layout: %s", err);
		l->proto_id = PBTRACE_TP_GENERIC_PROTO_BASE + b.nr_tps;
		if (native)
			pbt_tp_native_ids(l);
		if (getenv("DP_TP_NO_FIELDS"))	/* the bench: the path alone */
			for (i = 0; i < l->nr_fields; i++)
				l->fields[i].proto_id = 0;
		specs[b.nr_tps] = (struct pbt_tp_spec) {
			.layout = l, .id = id, .flags = PBTRACE_TP_FTRACE,
		};
		printf("tp.%zu=%s/%s id=%d proto_id=%u fields=%u\n", b.nr_tps,
		       group, name, id, l->proto_id, l->nr_fields);
		b.nr_tps++;
	}
	if (getenv("DP_TP_NOREAD"))
		return tp_noread(&b, cmd);

	rc.out = fopen(file, "w");
	if (!rc.out)
		die("open output: %s", strerror(errno));
	if (getenv("DP_TP_PID")) {
		child = held(cmd, &go);
		b.pids[b.nr_pids++] = child;
		printf("root_pid=%d\n", child);
	}
	session_new(&rc, &b);
	session_cmd(&rc, PBTRACE_CMD_START_SESSION);
	status = child ? run_held(child, go) : system(cmd);
	printf("cmd_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (getenv("DP_TP_LEAVE")) {	/* started, counters live: for rmmod */
		printf("left=%u\n", rc.id);
		return 0;
	}
	finish(&rc);
	return 0;
}

/* mmap: PROT_WRITE refused, mprotect to write refused, read works. */
static int cmd_mmap(void)
{
	static const char *const ev[] = { "raw_syscalls/sys_enter", NULL };
	struct pbt_buffer_spec b = { .size_kb = 64 };
	struct rec rc = { 0 };
	size_t size;
	void *p;

	add_events(&b, ev);
	session_new(&rc, &b);
	size = pbt_reader_header(&rc.r)->mmap_size;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, rc.r.fd, 0);
	printf("mmap_write=%s\n", p == MAP_FAILED ? strerror(errno) : "mapped");
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, rc.r.fd, 0);
	if (p == MAP_FAILED)
		die("mmap read-only: %s", strerror(errno));
	printf("mprotect_write=%s\n",
	       mprotect(p, size, PROT_READ | PROT_WRITE) ? strerror(errno) : "allowed");
	munmap(p, size);
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, rc.r.fd, 0);
	printf("mmap_private=%s\n", p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, size);
	p = mmap(NULL, size + 4096, PROT_READ, MAP_SHARED, rc.r.fd, 0);
	printf("mmap_too_big=%s\n", p == MAP_FAILED ? strerror(errno) : "mapped");
	pbt_reader_close(&rc.r);
	session_cmd(&rc, PBTRACE_CMD_DESTROY_SESSION);
	pbt_nl_close(rc.nl);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "workload"))
		return cmd_workload(argv[2], atoi(argv[3]), atoi(argv[4]),
				    atoi(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "exact"))
		return cmd_exact(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "run"))
		return cmd_run(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "follow"))
		return cmd_follow(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "two"))
		return cmd_two(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "stream"))
		return cmd_stream(argv[2], argv[3], atoi(argv[4]));
	if (argc == 2 && !strcmp(argv[1], "reattach"))
		return cmd_reattach();
	if (argc == 2 && !strcmp(argv[1], "open"))
		return cmd_open();
	if (argc == 2 && !strcmp(argv[1], "leave"))
		return cmd_leave();
	if (argc == 4 && !strcmp(argv[1], "hotplug"))
		return cmd_hotplug(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "all"))
		return cmd_all(argv[2], argv[3]);
	if (argc == 2 && !strcmp(argv[1], "mmap"))
		return cmd_mmap();
	if (argc == 5 && !strcmp(argv[1], "tp"))
		return cmd_tp(argv[2], argv[3], argv[4]);
	fprintf(stderr,
		"usage: dp_record workload FILE N K M | exact FILE ring|discard K |\n"
		"       stream FILE ring|discard K | two FILE_A FILE_B K |\n"
		"       hotplug FILE K | all FILE CMD | reattach | leave |\n"
		"       open | run FILE EVENTS CMD | follow FILE EVENTS CMD | mmap |\n"
		"       tp FILE G/N,G/N CMD\n");
	return 2;
}
