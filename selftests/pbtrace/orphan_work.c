// SPDX-License-Identifier: GPL-2.0
/*
 * orphan_test.sh's workload: ROUNDS rounds of the 18 syscalls below, in a
 * new random order each round and with random argument values, so that
 * their sys_enter/sys_exit events (recorded as generic tracepoints, six
 * fields each for most) differ in size and in which kind ends a chunk.
 * Every call is refused before the kernel touches anything: bad flags, a
 * bad size, a negative fd, an unknown clock or prctl option (pointers are
 * NULL or in the kernel's half, which access_ok() refuses anyway).
 *
 *   orphan_work ROUNDS SEED     prints "calls=N" and "name=..." per syscall
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t state;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* A value of random bit width: its varint takes 1 to 10 bytes. */
static uint64_t val(void)
{
	return rnd() >> (rnd() % 64);
}

/* NULL or a kernel-half address: no call below dereferences it. */
static uint64_t ptr(void)
{
	return rnd() & 1 ? 0 : 0xffff800000000000ull | (val() & 0x7fffffffffffull);
}

static long bad_fd(void)
{
	return -1 - (long)(rnd() % 100000);
}

/* A flags word with bits no caller may set: refused with EINVAL. */
static uint64_t bad_flags(void)
{
	return 0x40000000u | (val() & 0xffffffffu);
}

static const char *const names[] = {
	"process_vm_readv", "process_vm_writev", "copy_file_range", "splice",
	"tee", "vmsplice", "sendto", "recvfrom", "setsockopt", "getsockopt",
	"waitid", "prctl", "epoll_pwait", "name_to_handle_at",
	"rt_sigprocmask", "openat2", "clock_nanosleep", "sched_setattr",
};
#define NR (sizeof(names) / sizeof(names[0]))

static void call(unsigned int i)
{
	switch (i) {
	case 0:
		syscall(SYS_process_vm_readv, val(), ptr(), val(), ptr(), val(), bad_flags());
		break;
	case 1:
		syscall(SYS_process_vm_writev, val(), ptr(), val(), ptr(), val(), bad_flags());
		break;
	case 2:
		syscall(SYS_copy_file_range, bad_fd(), ptr(), bad_fd(), ptr(), val(), val());
		break;
	case 3:
		syscall(SYS_splice, bad_fd(), ptr(), bad_fd(), ptr(), val() | 1, bad_flags());
		break;
	case 4:
		syscall(SYS_tee, bad_fd(), bad_fd(), val() | 1, bad_flags());
		break;
	case 5:
		syscall(SYS_vmsplice, bad_fd(), ptr(), val(), bad_flags());
		break;
	case 6:
		syscall(SYS_sendto, bad_fd(), ptr(), val(), val(), ptr(), val());
		break;
	case 7:
		syscall(SYS_recvfrom, bad_fd(), ptr(), val(), val(), ptr(), ptr());
		break;
	case 8:
		syscall(SYS_setsockopt, bad_fd(), val(), val(), ptr(), val());
		break;
	case 9:
		syscall(SYS_getsockopt, bad_fd(), val(), val(), ptr(), ptr());
		break;
	case 10:	/* 0x08000000: no W* bit */
		syscall(SYS_waitid, val() % 8, val(), ptr(), 0x08000000 | 4, ptr());
		break;
	case 11:	/* "PB" options: none is one */
		syscall(SYS_prctl, 0x50420000 + rnd() % 65536, val(), val(), val(), val());
		break;
	case 12:	/* a sigmask of a wrong size: EINVAL first */
		syscall(SYS_epoll_pwait, bad_fd(), ptr(), val(), val(),
			0xffff800000000000ull | val(), 9 + val() % 1000);
		break;
	case 13:
		syscall(SYS_name_to_handle_at, bad_fd(), ptr(), ptr(), ptr(), bad_flags());
		break;
	case 14:
		syscall(SYS_rt_sigprocmask, val() % 3, ptr(), ptr(), 9 + val() % 1000);
		break;
	case 15:	/* smaller than open_how's first version */
		syscall(SYS_openat2, bad_fd(), ptr(), ptr(), rnd() % 24);
		break;
	case 16:	/* past MAX_CLOCKS, not a CPU clock */
		syscall(SYS_clock_nanosleep, 100 + rnd() % 100000, val(), ptr(), ptr());
		break;
	case 17:
		syscall(SYS_sched_setattr, val() % 100000, ptr(), bad_flags() | 1);
		break;
	}
}

int main(int argc, char **argv)
{
	unsigned int order[NR], i, j, t;
	long r, rounds;

	if (argc != 3) {
		fprintf(stderr, "usage: orphan_work ROUNDS SEED\n");
		return 2;
	}
	rounds = atol(argv[1]);
	state = strtoull(argv[2], NULL, 0) | 1;
	for (i = 0; i < NR; i++)
		order[i] = i;
	for (r = 0; r < rounds; r++) {
		for (i = NR - 1; i > 0; i--) {
			j = rnd() % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < NR; i++)
			call(order[i]);
	}
	printf("calls=%ld\n", rounds);
	for (i = 0; i < NR; i++)
		printf("name=%s\n", names[i]);
	return 0;
}
