// SPDX-License-Identifier: GPL-2.0
/*
 * stacks_test.sh's workload, built -O0 -fno-omit-frame-pointer (Makefile):
 * N times main -> a -> b -> getppid, b making the syscall itself (inline
 * asm, so the pc is in b), then M times main -> c -> d -> libc's
 * getppid(), a leaf without a frame of its own: the frame-pointer walk
 * then loses d (see docs/stacks.md).
 *
 * Usage: stacks_work N M
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

__attribute__((noinline)) static long b(void)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
		     : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) static long a(void)
{
	return b();
}

__attribute__((noinline)) static long d(void)
{
	return getppid();
}

__attribute__((noinline)) static long c(void)
{
	return d();
}

int main(int argc, char **argv)
{
	long n, m, i, sum = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: stacks_work N M\n");
		return 2;
	}
	n = atol(argv[1]);
	m = atol(argv[2]);
	for (i = 0; i < n; i++)
		sum += a();
	for (i = 0; i < m; i++)
		sum += c();
	printf("%d\n", sum == (n + m) * getppid());
	return 0;
}
