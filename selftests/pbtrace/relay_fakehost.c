// SPDX-License-Identifier: GPL-2.0
/*
 * A host in userspace for the in-kernel relay (kmod/relay/relay.c): proves the
 * guest's side of a relayed session without the host's endpoint. It
 * listens on vsock (any CID: the relay connects over vsock_loopback),
 * answers HELLO with WELCOME and every PING with a PONG, and drives
 * sessions with CONTROL frames the way the host's endpoint does.
 *
 * Every frame the relay sends goes through kmod/core/frame.c's host-role
 * parser, so each CHUNK's trace records pass chunk_check() (checked again
 * here on their own); per-CPU chunk sequences must start at 0 and have no
 * gap. The guest's local session is checked over generic netlink: named
 * "relay", PBTRACE_A_SESSION_RELAY set, started, the known events only.
 *
 *   relay_fakehost PORT DIR     three sessions, TAP on stdout:
 *     connection 1: start 7 (sched_switch, sched_waking and an event no
 *       kernel has), stream 3 s, flush, stop: every CHUNK until STOPPED 7,
 *       none after; DIR/s7.pftrace (the chunks' bytes, a Trace) and
 *       DIR/s7.stopped ("events_written events_lost chunks"). Then start
 *       8, one CHUNK, and the connection is dropped.
 *     connection 2 (the relay reconnects): start 10, one CHUNK, then start
 *       9, which must first bring STOPPED 10; 9 streams 2 s, stop,
 *       STOPPED 9 (DIR/s9.*), GOODBYE.
 *   relay_fakehost hold PORT SECS   start a session and stream until the
 *     relay closes the connection (the module is unloaded under it) or
 *     SECS pass; TAP: chunks came, and the relay closed the link.
 *   relay_fakehost trickle PORT SECS DIR   a host that grants a byte of
 *     credit every 100 ms (it stops reading, and its 16 KiB vsock buffer
 *     grows a byte at a time): twice, start a session, take a chunk, then
 *     trickle. Connection 1: the relay must give its frame up and
 *     connect again within SECS. Connection 2: DIR/trickling once it
 *     trickles, until the relay closes the link (its module unloads) or
 *     SECS pass. TAP on stdout.
 *   relay_fakehost serve PORT   greet every connection and answer its
 *     pings, one at a time, until killed: a host to go away and come back.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <linux/vm_sockets.h>

#include "frame.c"		/* the module's own parser, host role */
#include "genl.h"
#include "tap.h"

#define EVENTS "sched/sched_switch,sched/sched_waking,nosuch/event"
#define SIZE_KB 256		/* per CPU */
#define CHUNK_KB 4
/*
 * trickle: the host's vsock receive buffer to begin with. Once it
 * trickles the host reads no more and grows the buffer a byte every
 * TRICKLE_MS: vsock sends a credit update for each, so the relay's sends
 * move a byte at a time and never fail by themselves (as relay_hostile
 * stall does to the endpoint). Small, so the relay fills it in a few
 * chunks, before its 10 s wait for a PONG ends (6.12's vsock counts each
 * queued skb's overhead against it: 16 KiB still holds a chunk's).
 */
#define TRICKLE_BUF 16384ULL
#define TRICKLE_MS 100

static uint8_t rx[FRAME_HDR_LEN + FRAME_MAX_PAYLOAD];
static size_t have, pending;	/* pending: bytes of the frame handed out */
static struct frame_parser ps;
static uint32_t tx_seq;
static int lfd = -1, fd = -1;
static const char *dir;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void clocks(uint64_t *c)
{
	static const clockid_t ids[FRAME_NR_CLOCKS] = {
		CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME
	};
	struct timespec ts;
	int i;

	for (i = 0; i < FRAME_NR_CLOCKS; i++) {
		clock_gettime(ids[i], &ts);
		c[i] = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	}
}

static int send_frame(struct frame *f)
{
	static uint8_t buf[FRAME_HDR_LEN + 16 + FRAME_EVENTS_MAX];
	size_t n, off = 0;
	ssize_t w;

	f->seq = tx_seq;
	n = frame_encode(buf, sizeof(buf), f);
	if (!n)
		return -1;
	while (off < n) {
		w = send(fd, buf + off, n - off, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	tx_seq++;
	frame_sent(&ps, f);
	return 0;
}

static int control(uint32_t op, uint32_t session)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_CONTROL;
	f.control.op = op;
	f.control.session = session;
	f.control.size_kb = SIZE_KB;
	f.control.chunk_kb = CHUNK_KB;
	if (op == FRAME_CTL_START) {
		f.control.events.p = EVENTS;
		f.control.events.len = (uint32_t)strlen(EVENTS);
	}
	return send_frame(&f);
}

static int pong(const struct frame *ping)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_PONG;
	f.pong.id = ping->ping.id;
	clocks(f.pong.recv);
	clocks(f.pong.reply);
	return send_frame(&f);
}

/*
 * The next frame other than PING (answered here), waiting until
 * @deadline (now_ms). Returns 1 with a frame in @f (pointers into rx,
 * valid until the next call), 0 on timeout, -1 when the relay closed the
 * connection, or a -FRAME_E_x refusal (printed).
 */
static int next_frame(struct frame *f, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t now;
	ssize_t n;
	int rc;

	for (;;) {
		have -= pending;
		memmove(rx, rx + pending, have);
		pending = 0;
		rc = frame_parse(&ps, rx, have, f);
		if (rc < 0) {
			printf("# relay sent a bad frame: %s\n", frame_strerror(rc));
			return rc;
		}
		if (rc > 0) {
			pending = (size_t)rc;
			if (f->type != FRAME_PING)
				return 1;
			if (pong(f))
				return -1;
			continue;
		}
		now = now_ms();
		if (now >= deadline)
			return 0;
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		n = recv(fd, rx + have, sizeof(rx) - have, 0);
		if (n <= 0)
			return -1;
		have += (size_t)n;
	}
}

static int accept_relay(void)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	struct timeval tv = { .tv_sec = 10 };

	if (poll(&p, 1, 30000) != 1)
		return -1;
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		return -1;
	/* A relay that stops reading fails the test instead of hanging it. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	have = pending = 0;
	tx_seq = 0;
	frame_parser_init(&ps, FRAME_ROLE_HOST, false);
	return 0;
}

/* HELLO in, WELCOME out. */
static bool greet(void)
{
	struct frame f;
	int rc = next_frame(&f, now_ms() + 10000);

	if (rc != 1 || f.type != FRAME_HELLO)
		return false;
	printf("# HELLO from '%.*s', %u CPUs\n", (int)f.hello.name.len,
	       f.hello.name.p, f.hello.num_cpus);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_WELCOME;
	f.welcome.machine_id = 5;
	f.welcome.ping_period_ms = 1000;
	return send_frame(&f) == 0;
}

struct tally {
	uint32_t seq[FRAME_NR_CPUS_MAX];	/* next expected, per CPU */
	uint64_t chunks, bytes;
	int gaps, bad;
	FILE *out;
};

static void take_chunk(struct tally *t, const struct frame_chunk *c)
{
	int n = chunk_check(c->data, c->len);

	if (n <= 0 || (uint32_t)n != c->nr_packets)
		t->bad++;
	if (c->seq != t->seq[c->cpu]) {
		printf("# cpu %u: chunk %u, expected %u\n", c->cpu, c->seq,
		       t->seq[c->cpu]);
		t->gaps++;
	}
	t->seq[c->cpu] = c->seq + 1;
	t->chunks++;
	t->bytes += c->len;
	if (t->out && fwrite(c->data, 1, c->len, t->out) != c->len)
		t->bad++;
}

/* The guest's session for us, over netlink: exactly one, as asked. */
static void check_local_session(uint32_t host_id)
{
	struct pbt_session_info *ss = NULL, *s = NULL;
	struct pbt_nl *nl;
	char err[256];
	size_t n = 0, i, nrelay = 0;
	bool switch_ok = false, bogus = false;

	nl = pbt_nl_open(err, sizeof(err));
	if (!nl || pbt_nl_list_sessions(nl, &ss, &n)) {
		tap(0, "session %u: list the guest's sessions over netlink: %s",
		    host_id, nl ? pbt_nl_error(nl) : err);
		if (nl)
			pbt_nl_close(nl);
		return;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ss[i].name, "relay")) {
			s = &ss[i];
			nrelay++;
		}
	if (s && s->nr_buffers == 1) {
		for (i = 0; i < s->buffers[0].nr_events; i++) {
			if (!strcmp(s->buffers[0].events[i], "sched/sched_switch"))
				switch_ok = true;
			if (!strcmp(s->buffers[0].events[i], "nosuch/event"))
				bogus = true;
		}
	}
	tap(nrelay == 1 && s->relay && s->state == PBTRACE_STATE_STARTED &&
	    s->nr_buffers == 1 && s->buffers[0].chunk_kb == CHUNK_KB &&
	    switch_ok && !bogus,
	    "session %u: the guest records it as one local session 'relay' with PBTRACE_A_SESSION_RELAY, started, chunk %u KiB, sched_switch and not the unknown event",
	    host_id, CHUNK_KB);
	pbt_session_infos_free(ss, n);
	pbt_nl_close(nl);
}

static bool no_relay_session(void)
{
	struct pbt_session_info *ss = NULL;
	struct pbt_nl *nl;
	char err[256];
	size_t n = 0, i;
	bool none = true;

	nl = pbt_nl_open(err, sizeof(err));
	if (!nl || pbt_nl_list_sessions(nl, &ss, &n))
		none = false;
	for (i = 0; i < n; i++)
		if (ss[i].relay)
			none = false;
	pbt_session_infos_free(ss, n);
	if (nl)
		pbt_nl_close(nl);
	return none;
}

static void write_stopped(uint32_t id, const struct frame_stopped *st,
			  uint64_t chunks)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/s%u.stopped", dir, id);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%llu %llu %llu\n", (unsigned long long)st->events_written,
		(unsigned long long)st->events_lost, (unsigned long long)chunks);
	fclose(f);
}

/*
 * One whole session: start, stream @secs, flush, stop, every chunk until
 * STOPPED and none after it.
 */
static void session(uint32_t id, int secs, bool start)
{
	static struct tally t;
	struct frame_stopped st = { 0 };
	struct frame f;
	char path[512];
	uint64_t deadline, flushed_at = 0;
	bool checked = false, stopped = false, early = false;
	int rc;

	memset(&t, 0, sizeof(t));
	snprintf(path, sizeof(path), "%s/s%u.pftrace", dir, id);
	t.out = fopen(path, "w");
	if (start && control(FRAME_CTL_START, id)) {
		tap(0, "session %u: CONTROL start sent", id);
		return;
	}
	/*
	 * @secs from the first chunk: a guest under TCG on a busy machine
	 * may take seconds to set the session up (up to 20 s allowed).
	 */
	deadline = now_ms() + 20000;
	while ((rc = next_frame(&f, deadline)) == 1) {
		if (f.type == FRAME_STOPPED)
			early = true;
		if (f.type != FRAME_CHUNK)
			continue;
		take_chunk(&t, &f.chunk);
		if (!checked) {
			check_local_session(id);
			checked = true;
			deadline = now_ms() + (uint64_t)secs * 1000;
		}
	}
	tap(rc == 0 && t.chunks > 0 && !early,
	    "session %u: %llu CHUNK frames (%llu bytes) streamed in %d s from the first while it runs",
	    id, (unsigned long long)t.chunks, (unsigned long long)t.bytes, secs);
	if (!checked)
		tap(0, "session %u: no chunk came, so no local session to check", id);
	if (rc)
		return;

	/* Flush: whatever sat in open chunks comes within the second. */
	control(FRAME_CTL_FLUSH, id);
	flushed_at = t.chunks;
	deadline = now_ms() + 500;
	while ((rc = next_frame(&f, deadline)) == 1)
		if (f.type == FRAME_CHUNK)
			take_chunk(&t, &f.chunk);
	printf("# %llu chunks within 0.5 s of CONTROL flush\n",
	       (unsigned long long)(t.chunks - flushed_at));

	control(FRAME_CTL_STOP, id);
	deadline = now_ms() + 20000;
	while (!stopped && (rc = next_frame(&f, deadline)) == 1) {
		if (f.type == FRAME_CHUNK) {
			take_chunk(&t, &f.chunk);
		} else if (f.type == FRAME_STOPPED) {
			stopped = true;
			st = f.stopped;
		}
	}
	tap(stopped && st.session_id == id,
	    "session %u: CONTROL stop answered by STOPPED %u (events_written %llu, events_lost %llu) after %llu chunks in all",
	    id, st.session_id, (unsigned long long)st.events_written,
	    (unsigned long long)st.events_lost, (unsigned long long)t.chunks);
	tap(t.gaps == 0 && t.bad == 0,
	    "session %u: every chunk passed chunk_check and every CPU's chunk sequence ran from 0 without a gap",
	    id);
	/* Nothing of the session after STOPPED. */
	deadline = now_ms() + 1500;
	early = false;
	while ((rc = next_frame(&f, deadline)) == 1)
		if (f.type == FRAME_CHUNK || f.type == FRAME_STOPPED)
			early = true;
	tap(rc == 0 && !early, "session %u: nothing but pings after STOPPED",
	    id);
	tap(no_relay_session(),
	    "session %u: the guest destroyed its local session after STOPPED",
	    id);
	if (t.out)
		fclose(t.out);
	write_stopped(id, &st, t.chunks);
}

static int listen_vsock(unsigned int port)
{
	struct sockaddr_vm a = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_ANY,
		.svm_port = port,
	};

	lfd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 4)) {
		perror("relay_fakehost: vsock listen");
		return -1;
	}
	return 0;
}

static int run(void)
{
	struct frame f;
	int rc;

	tap(accept_relay() == 0 && greet(),
	    "the relay connected and sent HELLO; WELCOME sent");
	session(7, 3, true);

	/* A session cut short: the relay must drop it and start afresh. */
	control(FRAME_CTL_START, 8);
	do {
		rc = next_frame(&f, now_ms() + 20000);
	} while (rc == 1 && f.type != FRAME_CHUNK);
	tap(rc == 1, "session 8: a chunk, then the host drops the connection");
	close(fd);

	tap(accept_relay() == 0 && greet(),
	    "the relay reconnected and sent HELLO; WELCOME sent");

	/* A start for another session finishes the running one first. */
	control(FRAME_CTL_START, 10);
	do {
		rc = next_frame(&f, now_ms() + 20000);
	} while (rc == 1 && f.type != FRAME_CHUNK);
	control(FRAME_CTL_START, 9);
	do {
		rc = next_frame(&f, now_ms() + 20000);
	} while (rc == 1 && f.type == FRAME_CHUNK);
	tap(rc == 1 && f.type == FRAME_STOPPED && f.stopped.session_id == 10,
	    "session 10 streams; a CONTROL start for 9 makes the relay finish it first: STOPPED 10 (%llu events written)",
	    rc == 1 && f.type == FRAME_STOPPED ?
	    (unsigned long long)f.stopped.events_written : 0ULL);
	session(9, 2, false);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_GOODBYE;
	send_frame(&f);
	close(fd);
	return 0;
}

/* Stream until the relay hangs up (its module unloads) or @secs pass. */
static int hold(int secs)
{
	static struct tally t;
	uint64_t deadline;
	struct frame f;
	int rc;

	tap(accept_relay() == 0 && greet(),
	    "hold: the relay connected and sent HELLO; WELCOME sent");
	control(FRAME_CTL_START, 11);
	deadline = now_ms() + (uint64_t)secs * 1000;
	while ((rc = next_frame(&f, deadline)) == 1)
		if (f.type == FRAME_CHUNK)
			take_chunk(&t, &f.chunk);
	tap(t.chunks > 0 && t.gaps == 0 && t.bad == 0,
	    "hold: %llu good chunks streamed", (unsigned long long)t.chunks);
	tap(rc == -1, "hold: the relay closed the connection (rc %d)", rc);
	close(fd);
	return 0;
}

/*
 * Grant a byte of credit every TRICKLE_MS until the relay shuts its side
 * down (true) or @secs pass (false).
 */
static bool trickle(int secs, uint64_t *taken)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	uint64_t end = now_ms() + (uint64_t)secs * 1000;
	unsigned long long size = TRICKLE_BUF;

	while (now_ms() < end) {
		if (poll(&p, 1, TRICKLE_MS) < 0)
			return false;
		if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
			return true;
		size++;
		if (!setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE, &size,
				sizeof(size)))
			(*taken)++;
	}
	return false;
}

/* Greet, start @id, read until its first chunk: true if one came. */
static bool start_and_chunk(uint32_t id)
{
	struct frame f;
	int rc;

	if (accept_relay() || !greet() || control(FRAME_CTL_START, id)) {
		printf("# no connection, HELLO or CONTROL start\n");
		return false;
	}
	do {
		rc = next_frame(&f, now_ms() + 60000);
		if (rc == 1)
			printf("# frame type %d\n", f.type);
	} while (rc == 1 && f.type != FRAME_CHUNK);
	if (rc != 1)
		printf("# next_frame: %d (%s)\n", rc, strerror(errno));
	return rc == 1;
}

static int trickle_host(int secs)
{
	uint64_t t0, taken = 0;
	char path[512];
	FILE *m;
	bool hup;

	tap(start_and_chunk(12),
	    "trickle: connection 1 greeted, session 12 started, a chunk came");
	t0 = now_ms();
	hup = trickle(secs, &taken);
	tap(hup,
	    "trickle: the relay gave its frame up and closed the connection (%llu bytes granted in %llu ms of trickling)",
	    (unsigned long long)taken, (unsigned long long)(now_ms() - t0));
	close(fd);

	tap(start_and_chunk(13),
	    "trickle: the relay connected again: connection 2 greeted, session 13 started, a chunk came");
	snprintf(path, sizeof(path), "%s/trickling", dir);
	m = fopen(path, "w");
	if (m)
		fclose(m);
	taken = 0;
	t0 = now_ms();
	hup = trickle(secs, &taken);
	tap(hup,
	    "trickle: the relay shut the connection down (%llu bytes granted in %llu ms of trickling)",
	    (unsigned long long)taken, (unsigned long long)(now_ms() - t0));
	close(fd);
	return 0;
}

/* Greet each connection and answer its pings, until killed. */
static void serve(void)
{
	struct frame f;

	alarm(0);
	for (;;) {
		if (accept_relay())
			continue;
		if (greet())
			while (next_frame(&f, now_ms() + 3600000) == 1)
				;
		close(fd);
	}
}

int main(int argc, char **argv)
{
	/* Whatever happens, the guest test goes on. */
	alarm(300);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* the test shows it as it goes */
	if (argc == 5 && !strcmp(argv[1], "trickle")) {
		unsigned long long size = TRICKLE_BUF;

		dir = argv[4];
		if (listen_vsock((unsigned int)atoi(argv[2])))
			return 2;
		/* Inherited by the accepted socket: its buf_alloc from the start. */
		if (setsockopt(lfd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_MIN_SIZE,
			       &size, sizeof(size)) ||
		    setsockopt(lfd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE, &size,
			       sizeof(size))) {
			perror("relay_fakehost: SO_VM_SOCKETS_BUFFER_SIZE");
			return 2;
		}
		trickle_host(atoi(argv[3]));
	} else if (argc == 3 && !strcmp(argv[1], "serve")) {
		if (listen_vsock((unsigned int)atoi(argv[2])))
			return 2;
		serve();
	} else if (argc == 4 && !strcmp(argv[1], "hold")) {
		if (listen_vsock((unsigned int)atoi(argv[2])))
			return 2;
		hold(atoi(argv[3]));
	} else if (argc == 3) {
		dir = argv[2];
		if (listen_vsock((unsigned int)atoi(argv[1])))
			return 2;
		run();
	} else {
		fprintf(stderr, "usage: relay_fakehost PORT DIR | relay_fakehost hold PORT SECS |\n"
			"       relay_fakehost trickle PORT SECS DIR | relay_fakehost serve PORT\n");
		return 2;
	}
	close(lfd);
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
