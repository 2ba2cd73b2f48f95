// SPDX-License-Identifier: GPL-2.0
/*
 * A workload whose syscalls syscall_trace_test.sh knows in advance, for
 * tracectl trace against strace -c -f:
 *
 *   syscall_work DIR N M K R SLEEP_MS CHILDREN
 *
 * N openat of DIR/pbt-open-I (they exist) and M of DIR/pbt-missing-I
 * (ENOENT), each opened one closed; K getppid; R pipe round trips (one
 * pipe2, then R times a 1-byte write and read); one nanosleep of SLEEP_MS
 * (the slow call --duration picks); then CHILDREN children forked, each
 * doing the same (without children of its own), waited for. Every call
 * is made through syscall(2), so libc cannot pick another syscall.
 * Before them, three openat a string argument's bounds show in: a path
 * of exactly 256 bytes (DIR/xxx..., whole in the trace), one of 300 (cut
 * at 256) and the unreadable pointer 0x1 (EFAULT); all three fail.
 *
 *   syscall_work loop     getppid and a 10 ms nanosleep until killed, for -p
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* DIR/xxx... of exactly len bytes (len > strlen(DIR) + 1). */
static void open_long(const char *dir, size_t len)
{
	char path[512];
	size_t d = strlen(dir);

	if (len >= sizeof(path) || d + 2 > len)
		exit(4);
	memcpy(path, dir, d);
	path[d] = '/';
	memset(path + d + 1, 'x', len - d - 1);
	path[len] = '\0';
	syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

static void work(const char *dir, long n, long m, long k, long r, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	char path[4096], c = 'x';
	int p[2];
	long i, fd;

	open_long(dir, 256);
	open_long(dir, 300);
	syscall(SYS_openat, AT_FDCWD, (const char *)1, O_RDONLY | O_CLOEXEC);
	for (i = 0; i < n + m; i++) {
		snprintf(path, sizeof(path), "%s/pbt-%s-%ld", dir,
			 i < n ? "open" : "missing", i < n ? i : i - n);
		fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			syscall(SYS_close, fd);
	}
	for (i = 0; i < k; i++)
		syscall(SYS_getppid);
	if (syscall(SYS_pipe2, p, O_CLOEXEC))
		exit(2);
	for (i = 0; i < r; i++)
		if (syscall(SYS_write, p[1], &c, 1) != 1 ||
		    syscall(SYS_read, p[0], &c, 1) != 1)
			exit(3);
	syscall(SYS_close, p[0]);
	syscall(SYS_close, p[1]);
	syscall(SYS_nanosleep, &ts, NULL);
}

static int loop(void)
{
	struct timespec ts = { 0, 10000000 };

	for (;;) {
		syscall(SYS_getppid);
		syscall(SYS_nanosleep, &ts, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	long children, i;

	if (argc == 2)
		return loop();
	if (argc != 8) {
		fprintf(stderr, "usage: syscall_work DIR N M K R SLEEP_MS CHILDREN | syscall_work loop\n");
		return 1;
	}
	work(argv[1], atol(argv[2]), atol(argv[3]), atol(argv[4]),
	     atol(argv[5]), atol(argv[6]));
	children = atol(argv[7]);
	for (i = 0; i < children; i++) {
		if (!fork()) {
			work(argv[1], atol(argv[2]), atol(argv[3]), atol(argv[4]),
			     atol(argv[5]), atol(argv[6]));
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
