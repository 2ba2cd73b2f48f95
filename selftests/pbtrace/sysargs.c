// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads for syscall_args_test.sh, each making calls the test can count
 * or name without reading the trace:
 *
 *   sysargs tree N K   N child processes; each starts a thread and forks a
 *                      grandchild. Every one of those tasks (and the
 *                      parent) calls getppid K times and openat() once on
 *                      "/nonexistent/pbt-TID" (ENOENT), and prints
 *                      "task TID" first. Nothing else forks.
 *   sysargs strings    openat() on paths built to test the probe's copy:
 *                      exactly 256 bytes, 300 bytes (cut at 256), an
 *                      unreadable pointer, one ending right before an
 *                      unmapped page, one crossing a page boundary; prints
 *                      "name=value" lines of what each was
 *   sysargs spin SECS  getppid in a loop for SECS seconds (a process the
 *                      pid filter must leave out); prints "spin PID"
 *   sysargs loop N CALL  N openat("/tmp/nonexistent/pbt-loop") or getppid
 *                      (CALL = openat|getppid), for measuring the strings'
 *                      cost per event against a call without strings
 */
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int k_calls;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* One task's calls; its tid is printed first so the test knows it. */
static void *task(void *arg)
{
	char path[64];
	int i;

	(void)arg;
	printf("task %d\n", gettid_());
	fflush(stdout);
	for (i = 0; i < k_calls; i++)
		syscall(SYS_getppid);
	snprintf(path, sizeof(path), "/nonexistent/pbt-%d", gettid_());
	if (syscall(SYS_openat, AT_FDCWD, path, O_RDONLY) >= 0)
		exit(2);
	return NULL;
}

static void child(void)
{
	pthread_t t;
	pid_t g;

	if (pthread_create(&t, NULL, task, NULL))
		exit(3);
	pthread_join(t, NULL);
	g = fork();
	if (g < 0)
		exit(3);
	if (g == 0) {
		task(NULL);
		_exit(0);
	}
	task(NULL);
	waitpid(g, NULL, 0);
	_exit(0);
}

static int tree(int n, int k)
{
	pid_t pid;
	int i, status, bad = 0;

	k_calls = k;
	printf("nr_getppid=%d\nnr_openat=%d\n", SYS_getppid, SYS_openat);
	task(NULL);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			child();
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	return bad;
}

static void try_open(const char *tag, const char *path)
{
	long ret = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);

	printf("%s_ret=%ld\n", tag, ret);
}

/* A path of @len bytes: @pre, then 'a'..'z' repeated. */
static char *long_path(const char *pre, size_t len)
{
	char *p = malloc(len + 1);
	size_t i;

	if (!p)
		exit(3);
	memcpy(p, pre, strlen(pre));
	for (i = strlen(pre); i < len; i++)
		p[i] = 'a' + i % 26;
	p[len] = 0;
	return p;
}

static int strings(void)
{
	long page = sysconf(_SC_PAGESIZE);
	static const char edge[] = "/nonexistent/pbt-edge";
	static const char cross[] = "/nonexistent/pbt-cross";
	char *p256 = long_path("/nonexistent/exact-", 256);
	char *p300 = long_path("/nonexistent/long-", 300), *m;

	printf("exact=%s\n", p256);
	try_open("exact", p256);
	printf("long=%s\n", p300);
	try_open("long", p300);
	printf("fault_ptr=%lu\n", 8UL);
	try_open("fault", (const char *)8);
	m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	/* Crossing: mapped on both sides of the boundary. */
	memcpy(m + page - 8, cross, sizeof(cross));
	printf("cross=%s\n", cross);
	try_open("cross", m + page - 8);
	/* Edge: the NUL is the first page's last byte; nothing after it. */
	munmap(m + page, page);
	memcpy(m + page - sizeof(edge), edge, sizeof(edge));
	printf("edge=%s\n", edge);
	try_open("edge", m + page - sizeof(edge));
	printf("pid=%d\n", getpid());
	return 0;
}

static int spin(int secs)
{
	time_t end = time(NULL) + secs;

	printf("spin %d\n", getpid());
	fflush(stdout);
	while (time(NULL) < end)
		syscall(SYS_getppid);
	return 0;
}

static int loop(long n, const char *call)
{
	bool open = !strcmp(call, "openat");
	long i;

	for (i = 0; i < n; i++) {
		if (open)
			syscall(SYS_openat, AT_FDCWD, "/tmp/nonexistent/pbt-loop", O_RDONLY);
		else
			syscall(SYS_getppid);
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "tree"))
		return tree(atoi(argv[2]), atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "strings"))
		return strings();
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return spin(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "loop"))
		return loop(atol(argv[2]), argv[3]);
	fprintf(stderr, "usage: sysargs tree N K | strings | spin SECS | loop N CALL\n");
	return 2;
}
