// SPDX-License-Identifier: GPL-2.0
/*
 * A workload whose syscalls a test can count on its own, run in the guest
 * by record_stream_test.sh:
 *
 *   burst K [FILL]   print "pid=P", then make exactly K getppid calls;
 *                    then FILL more from a child ("fill_pid=C"), which a
 *                    ring buffer overwrites K's events with. Both run on
 *                    CPU 0, so the child's events land in the same per-CPU
 *                    buffer as the burst's.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void calls(long n)
{
	while (n-- > 0)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	cpu_set_t cpu0;
	long k, fill;
	pid_t child;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: burst K [FILL]\n");
		return 2;
	}
	k = atol(argv[1]);
	fill = argc == 3 ? atol(argv[2]) : 0;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0)) {
		perror("sched_setaffinity");
		return 1;
	}
	/* Printed and flushed first: the calls after it are exactly k. */
	printf("pid=%d\n", getpid());
	fflush(stdout);
	calls(k);
	if (!fill)
		return 0;
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		calls(fill);
		_exit(0);
	}
	printf("fill_pid=%d\n", child);
	waitpid(child, NULL, 0);
	return 0;
}
