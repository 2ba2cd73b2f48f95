// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace side of the benchmark: drain every CPU's trace_pipe_raw into a
 * file with splice(), as trace-cmd does (a plain read() starves on a busy
 * CPU). One thread per CPU. On SIGINT/SIGTERM, each thread empties what is
 * left without blocking and exits; totals go to stdout.
 *
 *   ftdrain TRACEFS OUTDIR NCPUS
 * prints: bytes=B per CPU and in total
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;
static const char *tracefs, *outdir;

struct drainer {
	int cpu;
	pthread_t th;
	unsigned long long bytes;
	int err;
	volatile int done;
};

/* SIGUSR1 only interrupts a blocked splice; the flag says why. */
static void on_wake(int sig)
{
	(void)sig;
}

/* Move up to one pipe's worth from @in to @out; <0 errno, 0 empty. */
static ssize_t move(int in, int p[2], int out, unsigned int flags)
{
	ssize_t n = splice(in, NULL, p[1], NULL, 65536, flags), m, left;

	if (n <= 0)
		return n < 0 ? -errno : 0;
	for (left = n; left > 0; left -= m) {
		m = splice(p[0], NULL, out, NULL, left, SPLICE_F_MOVE);
		if (m <= 0)
			return -EIO;
	}
	return n;
}

static void *drain(void *arg)
{
	struct drainer *d = arg;
	char path[4096];
	int in, out, p[2];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw",
		 tracefs, d->cpu);
	in = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "%s/ftrace.cpu%d", outdir, d->cpu);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0 || pipe(p)) {
		d->err = errno;
		d->done = 1;
		return NULL;
	}
	while (!stopping) {
		n = move(in, p, out, SPLICE_F_MOVE);
		if (n == -EINTR || n == -EAGAIN)
			continue;
		if (n < 0) {
			d->err = -n;
			d->done = 1;
			return NULL;
		}
		d->bytes += n;
	}
	/* Tracing is off now: take what is left, then stop at empty. */
	fcntl(in, F_SETFL, O_NONBLOCK);
	while ((n = move(in, p, out, SPLICE_F_MOVE | SPLICE_F_NONBLOCK)) > 0)
		d->bytes += n;
	close(in);
	close(out);
	d->done = 1;
	return NULL;
}

static int all_done(struct drainer *d, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!d[i].done)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_wake };
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned long long total = 0;
	struct drainer *d;
	int ncpus, i, sig, rc = 0;
	sigset_t stop;

	if (argc != 4) {
		fprintf(stderr, "usage: ftdrain TRACEFS OUTDIR NCPUS\n");
		return 2;
	}
	tracefs = argv[1];
	outdir = argv[2];
	ncpus = atoi(argv[3]);
	d = calloc(ncpus, sizeof(*d));
	if (!d)
		return 1;
	/* No SA_RESTART: a blocked splice must return EINTR. */
	sigaction(SIGUSR1, &sa, NULL);
	/* Only the main thread takes the stop request, via sigwait. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	for (i = 0; i < ncpus; i++) {
		d[i].cpu = i;
		if (pthread_create(&d[i].th, NULL, drain, &d[i])) {
			fprintf(stderr, "ftdrain: pthread_create failed\n");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	sigwait(&stop, &sig);
	stopping = 1;
	/* Kick until every thread has noticed (one may be entering splice). */
	while (!all_done(d, ncpus)) {
		for (i = 0; i < ncpus; i++)
			if (!d[i].done)
				pthread_kill(d[i].th, SIGUSR1);
		nanosleep(&tick, NULL);
	}
	for (i = 0; i < ncpus; i++) {
		pthread_join(d[i].th, NULL);
		if (d[i].err) {
			fprintf(stderr, "ftdrain: cpu%d: %s\n", i, strerror(d[i].err));
			rc = 1;
		}
		printf("cpu%d_bytes=%llu\n", i, d[i].bytes);
		total += d[i].bytes;
	}
	printf("bytes=%llu\n", total);
	return rc;
}
