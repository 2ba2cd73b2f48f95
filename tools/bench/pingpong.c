// SPDX-License-Identifier: GPL-2.0
/*
 * Pipe ping-pong between two threads pinned to CPUs A and B: each round
 * trip is two writes, two reads, two wakeups and (on one CPU) two context
 * switches, i.e. sys_enter/sys_exit plus sched events.
 *
 *   pingpong ROUNDS CPU_A CPU_B
 * prints: rounds=N ns=T ns_per_round=X
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static unsigned long long rounds;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int pin(int cpu)
{
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		fprintf(stderr, "pingpong: pin to CPU %d: %s\n", cpu, strerror(err));
	return err;
}

static void *ponger(void *arg)
{
	unsigned long long i;
	char c;

	if (pin(*(int *)arg))
		exit(1);
	for (i = 0; i < rounds; i++) {
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) {
			perror("pingpong: ponger");
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long i, t0, t1;
	int cpu_a, cpu_b;
	pthread_t th;
	char c = 'x';

	if (argc != 4) {
		fprintf(stderr, "usage: pingpong ROUNDS CPU_A CPU_B\n");
		return 2;
	}
	rounds = strtoull(argv[1], NULL, 0);
	cpu_a = atoi(argv[2]);
	cpu_b = atoi(argv[3]);
	if (pipe(ping) || pipe(pong)) {
		perror("pingpong: pipe");
		return 1;
	}
	if (pin(cpu_a))
		return 1;
	if (pthread_create(&th, NULL, ponger, &cpu_b)) {
		fprintf(stderr, "pingpong: pthread_create failed\n");
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < rounds; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			perror("pingpong: pinger");
			return 1;
		}
	}
	t1 = now_ns();
	pthread_join(th, NULL);
	printf("rounds=%llu ns=%llu ns_per_round=%.1f\n", rounds, t1 - t0,
	       (double)(t1 - t0) / (rounds ? rounds : 1));
	return 0;
}
