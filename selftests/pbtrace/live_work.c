// SPDX-License-Identifier: GPL-2.0
/*
 * The workload of live_trace_test.sh: what a person watching a live view
 * waits for, with an order across CPUs that only a correct merge keeps.
 *
 *   live_work LOG ROUNDS GAP_MS
 *
 * Two threads, pinned to CPU 0 and CPU 1 (both to CPU 0 on one CPU),
 * take turns over two pipes: in round i, thread a calls close(10000 +
 * 2i) and then hands over; thread b calls close(10001 + 2i) and hands
 * back. Each close fails (EBADF: no such fd), and is the only close of an
 * fd that high, so a tracer's line names its round and thread by the fd
 * alone, whatever it knows of arguments. The calls are in that order in
 * real time (each hand-over waits for the close before it), so lines in
 * time order come exactly as a0 b0 a1 b1 ..., from two CPUs. After each
 * round thread a sleeps 0 .. GAP_MS (a random gap): a call is often the
 * last for a while, and its line cannot ride on later events.
 *
 * LOG gets, at the end, one "fd boottime_ns" line per close: the
 * CLOCK_BOOTTIME time just after the call returned (the clock of the
 * trace and of the line reader, line_stamp).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FD_BASE 10000

static int ab[2], ba[2];
static long rounds, gap_ms;
static unsigned long long *stamp;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void one_close(long fd)
{
	syscall(SYS_close, fd);
	stamp[fd - FD_BASE] = now_ns();
}

static void *side_b(void *arg)
{
	long i;
	char c;

	pin(sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0);
	for (i = 0; i < rounds; i++) {
		if (read(ab[0], &c, 1) != 1)
			exit(3);
		one_close(FD_BASE + 2 * i + 1);
		if (write(ba[1], &c, 1) != 1)
			exit(3);
	}
	return arg;
}

int main(int argc, char **argv)
{
	struct timespec gap;
	unsigned int seed = 1;
	pthread_t b;
	FILE *log;
	long i;
	char c = 'x';

	if (argc != 4)
		return 2;
	rounds = atol(argv[2]);
	gap_ms = atol(argv[3]);
	stamp = calloc(2 * rounds, sizeof(*stamp));
	log = fopen(argv[1], "w");
	if (!stamp || !log || pipe(ab) || pipe(ba) || gap_ms < 0)
		return 2;
	pin(0);
	pthread_create(&b, NULL, side_b, NULL);
	for (i = 0; i < rounds; i++) {
		one_close(FD_BASE + 2 * i);
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 3;
		gap.tv_sec = 0;
		gap.tv_nsec = gap_ms ? (rand_r(&seed) % (gap_ms * 1000)) * 1000L : 0;
		nanosleep(&gap, NULL);
	}
	pthread_join(b, NULL);
	for (i = 0; i < 2 * rounds; i++)
		fprintf(log, "%ld %llu\n", FD_BASE + i, stamp[i]);
	return fclose(log) ? 3 : 0;
}
