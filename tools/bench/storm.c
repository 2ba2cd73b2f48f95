// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall storm: N getppid() calls on one CPU, as fast as possible. Each
 * call is one raw_syscalls sys_enter + sys_exit pair, so the traced minus
 * untraced time per call is the probe path's cost for two events. With
 * "epoll", each call is epoll_create1() and close() instead: one kmalloc
 * (the struct eventpoll) for kmem/kmalloc, the tracepoint with six int
 * fields.
 *
 *   storm CALLS [CPU [getppid|epoll]]
 * prints: calls=N ns=T ns_per_call=X
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long calls, i, t0, t1;
	cpu_set_t set;
	int epoll;

	if (argc < 2 || argc > 4 ||
	    (argc == 4 && strcmp(argv[3], "getppid") && strcmp(argv[3], "epoll"))) {
		fprintf(stderr, "usage: storm CALLS [CPU [getppid|epoll]]\n");
		return 2;
	}
	calls = strtoull(argv[1], NULL, 0);
	epoll = argc == 4 && !strcmp(argv[3], "epoll");
	if (argc >= 3) {
		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("storm: sched_setaffinity");
			return 1;
		}
	}
	t0 = now_ns();
	if (epoll) {
		for (i = 0; i < calls; i++) {
			int fd = epoll_create1(0);

			if (fd < 0) {
				perror("storm: epoll_create1");
				return 1;
			}
			close(fd);
		}
	} else {
		/* syscall() directly: glibc must not cache or skip the call. */
		for (i = 0; i < calls; i++)
			syscall(SYS_getppid);
	}
	t1 = now_ns();
	printf("calls=%llu ns=%llu ns_per_call=%.1f\n", calls, t1 - t0,
	       (double)(t1 - t0) / (calls ? calls : 1));
	return 0;
}
