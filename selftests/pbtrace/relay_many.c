// SPDX-License-Identifier: GPL-2.0
/*
 * Many TCP relays, each with a key of its own, for the machine-table and
 * names-table tests (machines_test.sh): what the names table
 * (tracectl machines load) makes possible. Relay i (FIRST <= i < FIRST +
 * COUNT) is named PREFIX<i>, its hint is i, and its key is KEYHEX (56 hex
 * digits) followed by i as 8 hex digits, the rule the test writes its
 * machines file with; KEYHEX of 64 digits is one key for all (relay_key).
 *
 *   relay_many PORT PREFIX FIRST COUNT KEYHEX [-j JOBS] [-a] [-s] [-H SECS]
 *              [-f ADDR] [-n NAME]
 *
 *   -j JOBS   relays at once (default 1: one after the other)
 *   -a        job j connects from 127.0.0.(10 + j): the host allows a
 *             source address a few connections only
 *   -s        each waits for the host's CONTROL start (a session that
 *             names it) before it says GOODBYE: the session has it
 *   -H SECS   each stays SECS after it is admitted, pinging every second
 *   -f ADDR   connect from this source address (127.0.0.2 ...)
 *   -n NAME   every relay says NAME in its HELLO (hint and key still i's)
 *   -T        "NAME welcome ID in MS ms": from the connect's start to the
 *             answered PING that shows the host admitted it
 *
 * Prints "NAME welcome ID", "NAME session SID" or "NAME refused" per
 * relay, then "admitted N refused M"; exits 0 if all were admitted.
 *
 * Frames are written by hand from docs/relay-protocol.md (relay_wire.h),
 * the proofs and tags with OpenSSL's HMAC-SHA256, not the kernel's: the
 * host's checks are judged by an implementation of their own.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>


#include "relay_auth.h"
#include "relay_wire.h"

enum { HELLO = 1, WELCOME, AUTH, CONTROL, CHUNK, PING, PONG, GOODBYE };

#define WAIT_MS 30000		/* a loaded TCG guest answers slowly */

static unsigned int port, first, count, jobs = 1, hold_secs;
static const char *prefix, *key_hex, *from_addr, *same_name;
static int want_session, spread, timed;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int next_relay, admitted, refused;

struct relay {
	unsigned int i, job;
	char name[80];
	uint8_t key[32];
	uint8_t tx_key[32];		/* relay->host tag key */
	uint32_t seq;
	uint32_t started;		/* the CONTROL start's session, 0: none yet */
	int fd;
	uint8_t hello[512];
	size_t hello_len;
	double admit_ms;		/* connect to the answered PING */
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int relay_key(struct relay *r)
{
	return relay_fleet_key(key_hex, r->i, r->key);
}

static int send_all(int fd, const uint8_t *b, size_t n)
{
	ssize_t w;

	for (; n; n -= (size_t)w, b += w) {
		w = send(fd, b, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
	}
	return 0;
}

static int recv_n(int fd, uint8_t *b, size_t n, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;

	while (n) {
		if (poll(&p, 1, ms) <= 0)
			return -1;
		r = recv(fd, b, n, 0);
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* A frame of @type with @len payload bytes at b + 16, tagged after AUTH. */
static int send_frame(struct relay *r, uint8_t *b, uint8_t type, size_t len,
		      int tagged)
{
	uint8_t mac[32];

	header(b, type, (uint32_t)len, r->seq++);
	if (tagged) {
		b[6] = 1;
		hmac(r->tx_key, b, 16 + len, mac);
		memcpy(b + 16 + len, mac, 16);
		len += 16;
	}
	return send_all(r->fd, b, 16 + len);
}

/* The next host frame (its tag, if any, read and not checked): its type. */
static int recv_frame(struct relay *r, uint8_t *b, size_t size, int ms)
{
	uint32_t len;

	if (recv_n(r->fd, b, 16, ms))
		return -1;
	len = get32(b + 8) + (b[6] & 1 ? 16 : 0);
	if (16 + len > size || recv_n(r->fd, b + 16, len, ms))
		return -1;
	return b[5];
}

static void hello(struct relay *r)
{
	uint8_t *p = r->hello + 16;
	unsigned int j;

	memset(p, 0, 64);
	put32(p, r->i);				/* hint */
	put32(p + 4, 0x6d616e79);		/* "many" */
	for (j = 0; j < 32; j++)		/* nonce */
		p[16 + j] = (uint8_t)rand();
	put32(p + 48, 1);			/* num_cpus */
	put32(p + 56, 64u << 20);		/* RAM */
	p += 64;
	p += str(p, same_name ? same_name : r->name);
	p += str(p, "Linux");
	p += str(p, "6.1.0-many");
	p += str(p, "#1 many");
	p += str(p, "x86_64");
	r->hello_len = (size_t)(p - r->hello);
	header(r->hello, HELLO, (uint32_t)(r->hello_len - 16), r->seq++);
}

static int connect_host(const struct relay *r)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char spread_addr[32];
	const char *from = from_addr;

	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (spread) {
		snprintf(spread_addr, sizeof(spread_addr), "127.0.0.%u",
			 10 + r->job);
		from = spread_addr;
	}
	if (from && (inet_pton(AF_INET, from, &src.sin_addr) != 1 ||
		     bind(fd, (struct sockaddr *)&src, sizeof(src)))) {
		close(fd);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* PING @id, with no earlier round to report. */
static int ping(struct relay *r, uint8_t *b, uint32_t id)
{
	memset(b + 16, 0, 56);
	put32(b + 16, id);
	return send_frame(r, b, PING, 56, 1);
}

/*
 * Until a PONG, or a CONTROL start (*sid) if @start. A CONTROL start may
 * come before the PONG of the PING sent with AUTH: it is kept.
 */
static int wait_for(struct relay *r, uint8_t *b, size_t size, int start,
		    uint32_t *sid)
{
	int t;

	for (;;) {
		if (start && r->started) {
			*sid = r->started;
			return 0;
		}
		t = recv_frame(r, b, size, WAIT_MS);
		if (t < 0 || t == GOODBYE)
			return -1;
		if (t == CONTROL && get32(b + 16) == 1)
			r->started = get32(b + 20);
		if (!start && t == PONG)
			return 0;
	}
}

/* One relay's whole life; 0 if it was admitted (and did what was asked). */
static int run_relay(struct relay *r, uint8_t *b, size_t size, uint32_t *id,
		     uint32_t *sid)
{
	uint8_t mac[32], want[32], *w = b, pkt[256];
	const uint8_t *rn = r->hello + 32, *hn;
	double t0 = now_ms();
	unsigned int s;

	r->fd = connect_host(r);
	if (r->fd < 0)
		return -1;
	hello(r);
	if (send_all(r->fd, r->hello, r->hello_len) ||
	    recv_frame(r, w, size, WAIT_MS) != WELCOME)
		return -1;
	*id = get32(w + 16);
	hn = w + 24;
	/* A relay checks the host's proof before it says anything more. */
	proof(r->key, "pbtrace-relay-v1 host", rn, hn, NULL, 0, want);
	if (memcmp(want, w + 56, 32))
		return -1;
	proof(r->key, "pbtrace-relay-v1 relay", hn, rn, r->hello + 16,
	      r->hello_len - 16, mac);
	memcpy(pkt, "pbtrace-relay-v2 relay->host", 28);
	memcpy(pkt + 28, hn, 32);
	memcpy(pkt + 60, rn, 32);
	memcpy(pkt + 92, mac, 32);
	hmac(r->key, pkt, 124, r->tx_key);
	memcpy(b + 16, mac, 32);
	if (send_frame(r, b, AUTH, 32, 0) || ping(r, b, 1) ||
	    wait_for(r, b, size, 0, NULL))
		return -1;
	r->admit_ms = now_ms() - t0;
	if (want_session && wait_for(r, b, size, 1, sid))
		return -1;
	for (s = 0; s < hold_secs; s++) {
		sleep(1);
		if (ping(r, b, 2 + s) || wait_for(r, b, size, 0, NULL))
			return -1;
	}
	put32(b + 16, 0);
	send_frame(r, b, GOODBYE, 4, 1);
	return 0;
}

static void *worker(void *arg)
{
	unsigned int job = (unsigned int)(uintptr_t)arg;
	size_t size = 16 + 8 + 262144 + 16;
	uint8_t *b = malloc(size);
	struct relay r;
	uint32_t id, sid;
	unsigned int i;
	int ret;

	if (!b)
		return NULL;
	for (;;) {
		pthread_mutex_lock(&out_lock);
		i = next_relay < count ? first + next_relay++ : 0;
		pthread_mutex_unlock(&out_lock);
		if (!i)
			break;
		memset(&r, 0, sizeof(r));
		r.i = i;
		r.job = job;
		snprintf(r.name, sizeof(r.name), "%s%u", prefix, r.i);
		r.fd = -1;
		id = sid = 0;
		ret = relay_key(&r) ? -1 : run_relay(&r, b, size, &id, &sid);
		if (r.fd >= 0)
			close(r.fd);
		pthread_mutex_lock(&out_lock);
		if (ret)
			printf("%s refused\n", r.name);
		else if (want_session)
			printf("%s session %u machine %u\n", r.name, sid, id);
		else if (timed)
			printf("%s welcome %u in %.0f ms\n", r.name, id,
			       r.admit_ms);
		else
			printf("%s welcome %u\n", r.name, id);
		if (ret)
			refused++;
		else
			admitted++;
		pthread_mutex_unlock(&out_lock);
	}
	free(b);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	unsigned int i;
	int c;

	while ((c = getopt(argc, argv, "j:asH:f:n:T")) != -1) {
		switch (c) {
		case 'T':
			timed = 1;
			break;
		case 'a':
			spread = 1;
			break;
		case 'j':
			jobs = (unsigned int)atoi(optarg);
			break;
		case 's':
			want_session = 1;
			break;
		case 'H':
			hold_secs = (unsigned int)atoi(optarg);
			break;
		case 'f':
			from_addr = optarg;
			break;
		case 'n':
			same_name = optarg;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 5 || !jobs || jobs > 64) {
		fprintf(stderr, "usage: relay_many PORT PREFIX FIRST COUNT KEYHEX [-j JOBS] [-s] [-H SECS] [-f ADDR] [-n NAME] [-T]\n");
		return 2;
	}
	port = (unsigned int)atoi(argv[optind]);
	prefix = argv[optind + 1];
	first = (unsigned int)atoi(argv[optind + 2]);
	count = (unsigned int)atoi(argv[optind + 3]);
	key_hex = argv[optind + 4];
	srand((unsigned int)time(NULL) ^ (unsigned int)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < jobs; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (i = 0; i < jobs; i++)
		pthread_join(t[i], NULL);
	printf("admitted %u refused %u\n", admitted, refused);
	return refused ? 1 : 0;
}
