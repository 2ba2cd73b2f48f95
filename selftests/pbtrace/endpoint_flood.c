// SPDX-License-Identifier: GPL-2.0
/*
 * A crowd of strangers at the endpoint's TCP listener on 127.0.0.1
 * (endpoint_flood_test.sh, issue 21): ADDRS loopback addresses, 127.1.X.Y,
 * each holding CONNS connections that never say a word and reopening each
 * one as soon as the host closes it; and STORM threads that connect and
 * reset as fast as they can, each time from the next of the same ADDRS
 * addresses. None of them ever sends a byte: they only take room.
 *
 *   endpoint_flood PORT ADDRS CONNS SECS [STORM]
 *
 * Runs SECS seconds, printing a line a second ("held N closed_by_host N
 * storm N failed N attempts/s N": connects begun in that second, holders'
 * and storm's), then the totals ("total opened N closed_by_host N storm N
 * failed N attempts N secs S rate R/s"), and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS	8192

static unsigned int port, addrs;
static atomic_int stop;
static atomic_long storm_conns, storm_failed, attempts;

/* The @i-th of the ADDRS addresses, 127.1.0.1 on. */
static struct in_addr crowd_addr(unsigned int i)
{
	struct in_addr a = { .s_addr = htonl(0x7f010000 + 1 + i % addrs) };

	return a;
}

struct slot {
	int fd;
	int connecting;
	struct in_addr src;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A socket from @src to the endpoint; @nonblock: the connect in progress. */
static int open_from(struct in_addr src, int nonblock)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr = src };
	int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (nonblock && errno == EINPROGRESS))
		return fd;
fail:
	close(fd);
	return -1;
}

/* Closed with a reset, so neither side keeps a TIME_WAIT. */
static void reset(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static void *storm(void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg * 7919;
	int fd;

	while (!atomic_load(&stop)) {
		atomic_fetch_add(&attempts, 1);
		fd = open_from(crowd_addr(i++), 0);
		if (fd < 0) {
			atomic_fetch_add(&storm_failed, 1);
			usleep(1000);
			continue;
		}
		atomic_fetch_add(&storm_conns, 1);
		reset(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct slot s[MAX_SLOTS];
	static struct pollfd p[MAX_SLOTS];
	unsigned int conns, secs, nstorm, n, i;
	long closed = 0, failed = 0, opened = 0, last = 0;
	double start, end, next;
	pthread_t t[64];
	char b[256];

	if (argc < 5) {
		fprintf(stderr, "usage: endpoint_flood PORT ADDRS CONNS SECS [STORM]\n");
		return 2;
	}
	port = (unsigned int)atoi(argv[1]);
	addrs = (unsigned int)atoi(argv[2]);
	conns = (unsigned int)atoi(argv[3]);
	secs = (unsigned int)atoi(argv[4]);
	nstorm = argc > 5 ? (unsigned int)atoi(argv[5]) : 0;
	n = addrs * conns;
	if (!n || n > MAX_SLOTS || addrs > 65534 || nstorm > 64) {
		fprintf(stderr, "endpoint_flood: at most %d connections, 65534 addresses, 64 storm threads\n",
			MAX_SLOTS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < n; i++) {
		s[i].fd = -1;
		s[i].src = crowd_addr(i / conns);
	}
	for (i = 0; i < nstorm; i++)
		pthread_create(&t[i], NULL, storm, (void *)(uintptr_t)i);
	start = now();
	end = start + secs;
	next = start + 1;
	while (now() < end) {
		for (i = 0; i < n; i++) {
			if (s[i].fd < 0) {
				atomic_fetch_add(&attempts, 1);
				s[i].fd = open_from(s[i].src, 1);
				s[i].connecting = 1;
				if (s[i].fd < 0)
					failed++;
				else
					opened++;
			}
			p[i].fd = s[i].fd;
			p[i].events = s[i].connecting ? POLLOUT : POLLIN;
			p[i].revents = 0;
		}
		poll(p, n, 100);
		for (i = 0; i < n; i++) {
			int err = 0;
			socklen_t len = sizeof(err);

			if (s[i].fd < 0 || !p[i].revents)
				continue;
			if (s[i].connecting && !(p[i].revents & (POLLERR | POLLHUP))) {
				getsockopt(s[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
				if (!err) {
					s[i].connecting = 0;
					continue;
				}
			}
			/* The host closed it (or the connect failed): again. */
			if (!s[i].connecting && recv(s[i].fd, b, sizeof(b), MSG_DONTWAIT) > 0)
				continue;	/* the host says something: ignore it */
			if (s[i].connecting)
				failed++;
			else
				closed++;
			reset(s[i].fd);
			s[i].fd = -1;
		}
		if (now() >= next) {
			unsigned int held = 0;
			long a = atomic_load(&attempts);

			for (i = 0; i < n; i++)
				held += s[i].fd >= 0 && !s[i].connecting;
			printf("held %u closed_by_host %ld storm %ld failed %ld attempts/s %ld\n",
			       held, closed, atomic_load(&storm_conns),
			       failed + atomic_load(&storm_failed), a - last);
			last = a;
			next += 1;
		}
	}
	atomic_store(&stop, 1);
	for (i = 0; i < nstorm; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < n; i++)
		if (s[i].fd >= 0)
			reset(s[i].fd);
	printf("total opened %ld closed_by_host %ld storm %ld failed %ld attempts %ld secs %.1f rate %.0f/s\n",
	       opened, closed, atomic_load(&storm_conns),
	       failed + atomic_load(&storm_failed), atomic_load(&attempts),
	       now() - start, atomic_load(&attempts) / (now() - start));
	return 0;
}
