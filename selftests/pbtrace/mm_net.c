// SPDX-License-Identifier: GPL-2.0
/*
 * Network helper of multimachine_test.sh and merge_test.sh: the guests'
 * barriers, the UDP echo whose syscalls the causality check reads from the
 * trace, and the wall clock sync that stands in for NTP between hosts.
 *
 *   mm_net wait PORT SECS            TCP: accept one peer, print the line it
 *                                    sent; exit 1 if none came within SECS
 *   mm_net tell ADDR PORT SECS MSG   TCP: connect (retrying until SECS, the
 *                                    peer may not listen yet), send MSG
 *   mm_net echo PORT N SECS          UDP: send each of N datagrams back to
 *                                    its sender (recvfrom, then sendto)
 *   mm_net ping ADDR PORT N GAP_MS   UDP: N rounds of sendto, then recvfrom
 *                                    of the echo, GAP_MS apart
 *   mm_net vecho PORT N SECS         vsock stream: accept one peer, echo N
 *                                    messages as echo does
 *   mm_net vping CID PORT N GAP_MS   vsock stream: connect to CID (retrying
 *                                    until 60 s), then ping's N rounds
 *   mm_net tserve PORT N SECS        UDP: answer N datagrams with this
 *                                    machine's CLOCK_REALTIME
 *   mm_net tsync ADDR PORT N GAP_MS [set]
 *                                    UDP: N rounds against tserve; each
 *                                    bounds the wall clock offset (server
 *                                    minus here); print the window all
 *                                    allow; "set": step CLOCK_REALTIME by
 *                                    its middle (what NTP does for the
 *                                    hosts of tracectl merge's test)
 *
 * echo and ping print key=value lines (pid, rounds, RTTs) for the test.
 * Both use exactly one sendto and one recvfrom per datagram, so the i-th
 * sendto of one side pairs with the i-th recvfrom of the other; every
 * datagram carries its round number and the echo is checked against it,
 * so a lost or reordered datagram fails the run instead of mispairing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <sys/timex.h>
#include <linux/vm_sockets.h>

/* A lost echo under TCG is late by milliseconds, never by seconds. */
#define ECHO_TIMEOUT_S 5

static void usage(void)
{
	fprintf(stderr,
		"usage: mm_net wait PORT SECS\n"
		"       mm_net tell ADDR PORT SECS MSG\n"
		"       mm_net echo PORT N SECS\n"
		"       mm_net ping ADDR PORT N GAP_MS\n"
		"       mm_net vecho PORT N SECS\n"
		"       mm_net vping CID PORT N GAP_MS\n"
		"       mm_net tserve PORT N SECS\n"
		"       mm_net tsync ADDR PORT N GAP_MS [set]\n");
	exit(2);
}

static long num(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "mm_net: %s '%s' is not a number >= 0\n", what, s);
		exit(2);
	}
	return v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static struct sockaddr_in addr_of(const char *ip, long port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_port = htons((uint16_t)port);
	if (!ip)
		a.sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "mm_net: '%s' is not an IPv4 address\n", ip);
		exit(2);
	}
	return a;
}

static void set_timeout(int fd, long secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int bound_socket(int type, long port)
{
	struct sockaddr_in a = addr_of(NULL, port);
	int one = 1, fd = socket(AF_INET, type, 0);

	if (fd < 0) {
		perror("mm_net: socket");
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "mm_net: bind port %ld: %s\n", port, strerror(errno));
		exit(1);
	}
	return fd;
}

static int do_wait(long port, long secs)
{
	int fd = bound_socket(SOCK_STREAM, port), c;
	char line[512];
	ssize_t n;

	if (listen(fd, 4)) {
		perror("mm_net: listen");
		return 1;
	}
	set_timeout(fd, secs);	/* accept() honours SO_RCVTIMEO */
	c = accept(fd, NULL, NULL);
	if (c < 0) {
		fprintf(stderr, "mm_net: nobody connected to port %ld within %ld s\n",
			port, secs);
		return 1;
	}
	set_timeout(c, secs);
	n = read(c, line, sizeof(line) - 1);
	if (n <= 0) {
		fprintf(stderr, "mm_net: the peer on port %ld sent nothing\n", port);
		return 1;
	}
	line[n] = '\0';
	fputs(line, stdout);
	if (line[n - 1] != '\n')
		putchar('\n');
	return 0;
}

static int do_tell(const char *ip, long port, long secs, const char *msg)
{
	struct sockaddr_in a = addr_of(ip, port);
	uint64_t until = now_ns() + (uint64_t)secs * 1000000000ull;
	char line[512];
	int fd, len;

	len = snprintf(line, sizeof(line), "%s\n", msg);
	if (len < 0 || (size_t)len >= sizeof(line)) {
		fprintf(stderr, "mm_net: message too long\n");
		return 2;
	}
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			perror("mm_net: socket");
			return 1;
		}
		set_timeout(fd, 5);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(fd);
		if (now_ns() > until) {
			fprintf(stderr, "mm_net: %s:%ld did not accept within %ld s\n",
				ip, port, secs);
			return 1;
		}
		usleep(100 * 1000);
	}
	if (write(fd, line, len) != len) {
		perror("mm_net: write");
		return 1;
	}
	close(fd);
	return 0;
}

static int do_echo(long port, long n, long secs)
{
	int fd = bound_socket(SOCK_DGRAM, port);
	struct sockaddr_in from;
	socklen_t flen;
	uint32_t buf[16];
	long i;

	printf("pid=%d\n", getpid());
	fflush(stdout);
	set_timeout(fd, secs);
	for (i = 0; i < n; i++) {
		ssize_t r;

		flen = sizeof(from);
		r = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (r < 0) {
			fprintf(stderr, "mm_net: echo: datagram %ld of %ld: %s\n",
				i, n, strerror(errno));
			break;
		}
		if (sendto(fd, buf, r, 0, (struct sockaddr *)&from, flen) != r) {
			fprintf(stderr, "mm_net: echo: sendto: %s\n", strerror(errno));
			break;
		}
	}
	printf("echoed=%ld\n", i);
	return i == n ? 0 : 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One round: sendto round number i, recvfrom its echo; 0 or a reason. */
/* (A connected stream: @to NULL, and the echo read whole with MSG_WAITALL.) */
static const char *ping_round(int fd, const struct sockaddr_in *to, uint32_t i)
{
	uint32_t buf[16] = { i }, back[16];
	ssize_t r;

	if (sendto(fd, buf, sizeof(buf), 0, (const struct sockaddr *)to,
		   to ? sizeof(*to) : 0) != sizeof(buf))
		return "sendto failed";
	r = recvfrom(fd, back, sizeof(back), to ? 0 : MSG_WAITALL, NULL, NULL);
	if (r < 0)
		return errno == EAGAIN ? "no echo within 5 s" : "recvfrom failed";
	if (r != sizeof(back) || back[0] != i)
		return "echo is not this round's datagram";
	return NULL;
}

static int ping_rounds(int fd, const struct sockaddr_in *to, long n, long gap_ms)
{
	uint64_t *rtt = calloc(n ? n : 1, sizeof(*rtt));
	const char *why = NULL;
	long i;

	if (fd < 0 || !rtt) {
		perror("mm_net: ping");
		return 1;
	}
	printf("pid=%d\n", getpid());
	fflush(stdout);
	set_timeout(fd, ECHO_TIMEOUT_S);
	for (i = 0; i < n && !why; i++) {
		uint64_t t0 = now_ns();

		why = ping_round(fd, to, (uint32_t)i);
		rtt[i] = now_ns() - t0;
		if (gap_ms)
			usleep(gap_ms * 1000);
	}
	if (why) {
		fprintf(stderr, "mm_net: ping: round %ld of %ld: %s\n", i - 1, n, why);
		printf("rounds=%ld\n", i - 1);
		return 1;
	}
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	printf("rounds=%ld\n", n);
	if (n)
		printf("rtt_min_ns=%llu\nrtt_median_ns=%llu\nrtt_max_ns=%llu\n",
		       (unsigned long long)rtt[0], (unsigned long long)rtt[n / 2],
		       (unsigned long long)rtt[n - 1]);
	free(rtt);
	return 0;
}

static int do_ping(const char *ip, long port, long n, long gap_ms)
{
	struct sockaddr_in to = addr_of(ip, port);

	return ping_rounds(socket(AF_INET, SOCK_DGRAM, 0), &to, n, gap_ms);
}

static struct sockaddr_vm vsock_of(long cid, long port)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK };

	a.svm_cid = (unsigned int)cid;
	a.svm_port = (unsigned int)port;
	return a;
}

/* The same rounds over a vsock stream: one message per sendto/recvfrom. */
static int do_vecho(long port, long n, long secs)
{
	struct sockaddr_vm a = vsock_of(VMADDR_CID_ANY, port);
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0), c;
	uint32_t buf[16];
	long i;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
		fprintf(stderr, "mm_net: vecho: vsock port %ld: %s\n", port, strerror(errno));
		return 1;
	}
	printf("pid=%d\n", getpid());
	fflush(stdout);
	set_timeout(fd, secs);
	c = accept(fd, NULL, NULL);
	if (c < 0) {
		fprintf(stderr, "mm_net: vecho: nobody connected within %ld s\n", secs);
		return 1;
	}
	set_timeout(c, secs);
	for (i = 0; i < n; i++) {
		errno = 0;
		if (recvfrom(c, buf, sizeof(buf), MSG_WAITALL, NULL, NULL) != sizeof(buf)) {
			fprintf(stderr, "mm_net: vecho: message %ld of %ld: %s\n",
				i, n, errno ? strerror(errno) : "connection closed");
			break;
		}
		if (sendto(c, buf, sizeof(buf), 0, NULL, 0) != sizeof(buf)) {
			fprintf(stderr, "mm_net: vecho: sendto: %s\n", strerror(errno));
			break;
		}
	}
	printf("echoed=%ld\n", i);
	return i == n ? 0 : 1;
}

static int do_vping(long cid, long port, long n, long gap_ms)
{
	struct sockaddr_vm a = vsock_of(cid, port);
	uint64_t until = now_ns() + 60 * 1000000000ull;
	int fd;

	for (;;) {
		fd = socket(AF_VSOCK, SOCK_STREAM, 0);
		if (fd < 0) {
			perror("mm_net: vping: socket");
			return 1;
		}
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(fd);
		if (now_ns() > until) {
			fprintf(stderr, "mm_net: vping: CID %ld port %ld did not accept within 60 s\n",
				cid, port);
			return 1;
		}
		usleep(100 * 1000);
	}
	return ping_rounds(fd, NULL, n, gap_ms);
}

/* Each datagram back with the time here, read between its receive and
 * the reply: the client's round trip holds that instant. */
static int do_tserve(long port, long n, long secs)
{
	int fd = bound_socket(SOCK_DGRAM, port);
	struct sockaddr_in from;
	socklen_t flen;
	int64_t buf[4];
	long i;

	set_timeout(fd, secs);
	for (i = 0; i < n; i++) {
		flen = sizeof(from);
		if (recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &flen) != sizeof(buf)) {
			fprintf(stderr, "mm_net: tserve: datagram %ld of %ld: %s\n",
				i, n, strerror(errno));
			break;
		}
		buf[1] = realtime_ns();
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, flen) !=
		    sizeof(buf)) {
			fprintf(stderr, "mm_net: tserve: sendto: %s\n", strerror(errno));
			break;
		}
	}
	printf("served=%ld\n", i);
	return i == n ? 0 : 1;
}

/*
 * A round sent here at t1 and back at t4 saw the server's clock read s in
 * between: server minus here lies in [s - t4, s - t1]. Every round must
 * hold for one offset (the clocks run at one rate over seconds), so the
 * window is the intersection, its middle the estimate, good to half its
 * width: tighter than NTP's best round alone.
 */
static int do_tsync(const char *ip, long port, long n, long gap_ms, bool set)
{
	struct sockaddr_in to = addr_of(ip, port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int64_t lo = INT64_MIN, hi = INT64_MAX, rtt = INT64_MAX, mid;
	struct timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO };
	int64_t buf[4];
	long i;

	if (fd < 0) {
		perror("mm_net: tsync: socket");
		return 1;
	}
	set_timeout(fd, ECHO_TIMEOUT_S);
	for (i = 0; i < n; i++) {
		int64_t t1, t4;

		buf[0] = i;
		t1 = realtime_ns();
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to)) !=
		    sizeof(buf) || recvfrom(fd, buf, sizeof(buf), 0, NULL, NULL) != sizeof(buf) ||
		    buf[0] != i) {
			fprintf(stderr, "mm_net: tsync: round %ld of %ld: no answer\n", i, n);
			return 1;
		}
		t4 = realtime_ns();
		if (buf[1] - t4 > lo)
			lo = buf[1] - t4;
		if (buf[1] - t1 < hi)
			hi = buf[1] - t1;
		if (t4 - t1 < rtt)
			rtt = t4 - t1;
		if (gap_ms)
			usleep(gap_ms * 1000);
	}
	printf("rounds=%ld\nrtt_min_ns=%lld\nwindow_lo_ns=%lld\nwindow_hi_ns=%lld\n", n,
	       (long long)rtt, (long long)lo, (long long)hi);
	if (!n || lo > hi) {
		fprintf(stderr, "mm_net: tsync: the rounds allow no common offset (%lld > %lld)\n",
			(long long)lo, (long long)hi);
		return 1;
	}
	mid = lo + (hi - lo) / 2;
	printf("offset_ns=%lld\n", (long long)mid);
	if (!set)
		return 0;
	tx.time.tv_sec = mid / 1000000000ll;
	tx.time.tv_usec = mid % 1000000000ll;	/* ns with ADJ_NANO */
	if (tx.time.tv_usec < 0) {
		tx.time.tv_sec--;
		tx.time.tv_usec += 1000000000ll;
	}
	if (clock_adjtime(CLOCK_REALTIME, &tx) < 0) {
		perror("mm_net: tsync: clock_adjtime");
		return 1;
	}
	printf("stepped_ns=%lld\n", (long long)mid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "wait"))
		return do_wait(num(argv[2], "PORT"), num(argv[3], "SECS"));
	if (argc == 6 && !strcmp(argv[1], "tell"))
		return do_tell(argv[2], num(argv[3], "PORT"), num(argv[4], "SECS"),
			       argv[5]);
	if (argc == 5 && !strcmp(argv[1], "echo"))
		return do_echo(num(argv[2], "PORT"), num(argv[3], "N"),
			       num(argv[4], "SECS"));
	if (argc == 6 && !strcmp(argv[1], "ping"))
		return do_ping(argv[2], num(argv[3], "PORT"), num(argv[4], "N"),
			       num(argv[5], "GAP_MS"));
	if (argc == 5 && !strcmp(argv[1], "vecho"))
		return do_vecho(num(argv[2], "PORT"), num(argv[3], "N"),
				num(argv[4], "SECS"));
	if (argc == 6 && !strcmp(argv[1], "vping"))
		return do_vping(num(argv[2], "CID"), num(argv[3], "PORT"),
				num(argv[4], "N"), num(argv[5], "GAP_MS"));
	if (argc == 5 && !strcmp(argv[1], "tserve"))
		return do_tserve(num(argv[2], "PORT"), num(argv[3], "N"),
				 num(argv[4], "SECS"));
	if ((argc == 6 || (argc == 7 && !strcmp(argv[6], "set"))) &&
	    !strcmp(argv[1], "tsync"))
		return do_tsync(argv[2], num(argv[3], "PORT"), num(argv[4], "N"),
				num(argv[5], "GAP_MS"), argc == 7);
	usage();
	return 2;
}
