// SPDX-License-Identifier: GPL-2.0
/*
 * The host side of a relayed session, seen from userspace without traced:
 * creates a session whose one buffer names only relayed machines
 * (PBTRACE_A_BUFFER_MACHINES), starts it, reads what the relays send with
 * PBTRACE_IOC_READ_REMOTE into a file, flushes it half way, stops it,
 * reads on until EOF, and
 * prints what GET_SESSION and GET_SESSION_MACHINES say about each
 * machine. relay_remote_test.sh
 * decodes the file with protoc and Perfetto's schema and checks it against
 * these numbers.
 *
 * Netlink is spoken with libnl-genl directly, not with user/lib/genl.c, so a
 * bug shared by traced and tracectl cannot hide one in the kernel.
 *
 *   remote_read OUT SECONDS [MACHINE...]   (default machine list: "*")
 *   remote_read bad                        bad machine lists are refused
 *
 * With REMOTE_READ_AGAIN=SECS it waits that long after EOF and prints
 * "again" and GET_SESSION once more: what a late relay sent after EOF.
 * With REMOTE_READ_HOLD=PATH it prints "holding" after the start and reads
 * nothing until PATH exists (remote_queue_test.sh measures the full queue).
 * With REMOTE_READ_WATCH set the session gets a second buffer that no
 * machine fills, and "watch_wakeups N" says how often a poll() on it was
 * woken from the start to the end of the hold.
 *
 * Output: "key value" lines, then one "machine ..." line per machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <linux/pbtrace.h>

#define SESSION "remote-test"

static struct nl_sock *sk;
static int family;

struct reply {
	int err;
	int done;
	int (*parse)(struct nlattr **tb, void *arg);
	void *arg;
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct reply *r = arg;
	struct nlattr *tb[PBTRACE_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PBTRACE_A_MAX, NULL))
		r->err = -EBADMSG;
	else if (r->parse)
		r->err = r->parse(tb, r->arg);
	return NL_OK;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct reply *)arg)->done = 1;
	return NL_STOP;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct reply *r = arg;

	(void)nla;
	r->err = e->error;
	r->done = 1;
	return NL_STOP;
}

/* Send @msg, feed every reply to @parse; -errno of the kernel's answer. */
static int run(struct nl_msg *msg, int (*parse)(struct nlattr **, void *),
	       void *arg)
{
	struct reply r = { .parse = parse, .arg = arg };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, &r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, &r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &r);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		r.err = -EIO;
	while (ret >= 0 && !r.done)
		if (nl_recvmsgs(sk, cb) < 0 && !r.done)
			r.err = r.err ? r.err : -EIO, r.done = 1;
	nl_cb_put(cb);
	return r.err;
}

static struct nl_msg *request(int cmd)
{
	struct nl_msg *msg = nlmsg_alloc_size(65536);

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_ACK, cmd,
		    PBTRACE_GENL_VERSION);
	return msg;
}

static int got_id(struct nlattr **tb, void *arg)
{
	if (!tb[PBTRACE_A_SESSION_ID])
		return -EBADMSG;
	*(uint32_t *)arg = nla_get_u32(tb[PBTRACE_A_SESSION_ID]);
	return 0;
}

/*
 * REMOTE_READ_WATCH: a second buffer, for a machine that never comes, and
 * a thread that sleeps in poll() on it. Buffers share the session's wait
 * queue, so each wake-up for buffer 0's records wakes it once: its
 * voluntary context switches count them (watch_wakeups).
 */
static void watch_buffer(struct nl_msg *msg)
{
	struct nlattr *buf, *list;

	buf = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER);
	nla_put_u32(msg, PBTRACE_A_BUFFER_SIZE_KB, 512);
	nla_put_u32(msg, PBTRACE_A_BUFFER_CHUNK_KB, 16);
	list = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER_EVENTS);
	nla_put_string(msg, PBTRACE_A_EVENT_NAME, "sched/sched_switch");
	nla_nest_end(msg, list);
	list = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER_MACHINES);
	nla_put_string(msg, PBTRACE_A_MACHINE_NAME, "never-connects");
	nla_nest_end(msg, list);
	nla_nest_end(msg, buf);
}

static uint32_t watch_session;
static volatile pid_t watch_tid;

static void *watcher(void *arg)
{
	struct pbtrace_attach at = { .session_id = watch_session, .buffer = 1 };
	int fd = open("/dev/pbtrace", O_RDONLY);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	(void)arg;
	if (fd < 0 || ioctl(fd, PBTRACE_IOC_ATTACH, &at)) {
		perror("remote_read: watcher attach");
		exit(1);
	}
	watch_tid = (pid_t)syscall(SYS_gettid);
	while (poll(&p, 1, -1) == 0 || !(p.revents & (POLLIN | POLLERR | POLLHUP)))
		;
	return NULL;
}

/* The watcher's voluntary context switches: its wake-ups, once asleep. */
static long watch_switches(void)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)watch_tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "voluntary_ctxt_switches: %ld", &v);
	if (f)
		fclose(f);
	return v;
}

static long start_watcher(uint32_t id)
{
	pthread_t t;

	watch_session = id;
	if (pthread_create(&t, NULL, watcher, NULL))
		return -1;
	while (!watch_tid)
		usleep(10000);
	usleep(200000);		/* asleep in poll() */
	return watch_switches();
}

/* One buffer: 2 x 256 KiB, sched and syscalls, for @names (or none). */
static int new_session(const char *const *names, int nr, uint32_t *id)
{
	static const char *const events[] = {
		"sched/sched_switch", "sched/sched_waking",
		"raw_syscalls/sys_enter", "raw_syscalls/sys_exit",
	};
	struct nl_msg *msg = request(PBTRACE_CMD_NEW_SESSION);
	struct nlattr *bufs, *buf, *list;
	unsigned int i;

	nla_put_string(msg, PBTRACE_A_SESSION_NAME, SESSION);
	bufs = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_SESSION_BUFFERS);
	buf = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER);
	nla_put_u32(msg, PBTRACE_A_BUFFER_SIZE_KB, 512);
	nla_put_u32(msg, PBTRACE_A_BUFFER_CHUNK_KB, 16);
	list = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER_EVENTS);
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		nla_put_string(msg, PBTRACE_A_EVENT_NAME, events[i]);
	nla_nest_end(msg, list);
	if (nr >= 0) {
		list = nla_nest_start(msg, NLA_F_NESTED | PBTRACE_A_BUFFER_MACHINES);
		for (i = 0; i < (unsigned int)nr; i++)
			nla_put_string(msg, PBTRACE_A_MACHINE_NAME, names[i]);
		/* nla_nest_end() would drop an empty list: send it as is. */
		nla_nest_end_keep_empty(msg, list);
	}
	nla_nest_end(msg, buf);
	if (getenv("REMOTE_READ_WATCH"))
		watch_buffer(msg);
	nla_nest_end(msg, bufs);
	return run(msg, got_id, id);
}

static int session_cmd(int cmd, uint32_t id)
{
	struct nl_msg *msg = request(cmd);

	nla_put_u32(msg, PBTRACE_A_SESSION_ID, id);
	return run(msg, NULL, NULL);
}

/* What GET_SESSION says: printed as it is parsed. No machine is in it. */
static int print_session(struct nlattr **tb, void *arg)
{
	struct nlattr *b, *a, *bt[PBTRACE_A_MAX + 1];
	int rem, rem2;

	(void)arg;
	if (!tb[PBTRACE_A_SESSION_BUFFERS] || tb[PBTRACE_A_SESSION_MACHINES])
		return -EBADMSG;
	nla_for_each_nested(b, tb[PBTRACE_A_SESSION_BUFFERS], rem) {
		if (nla_parse_nested(bt, PBTRACE_A_MAX, b, NULL))
			return -EBADMSG;
		printf("buffer_machines");
		if (bt[PBTRACE_A_BUFFER_MACHINES])
			nla_for_each_nested(a, bt[PBTRACE_A_BUFFER_MACHINES], rem2)
				printf(" %s", nla_get_string(a));
		printf("\n");
	}
	return 0;
}

/* One GET_SESSION_MACHINES message: a line per machine. */
static int print_machines(struct nlattr **tb, void *arg)
{
	struct nlattr *m, *mt[PBTRACE_A_MAX + 1];
	const struct pbtrace_machine_stats *st;
	int rem;

	(void)arg;
	if (!tb[PBTRACE_A_SESSION_MACHINES])
		return -EBADMSG;
	nla_for_each_nested(m, tb[PBTRACE_A_SESSION_MACHINES], rem) {
		if (nla_parse_nested(mt, PBTRACE_A_MAX, m, NULL) ||
		    !mt[PBTRACE_A_MACHINE_NAME] || !mt[PBTRACE_A_MACHINE_STATS] ||
		    nla_len(mt[PBTRACE_A_MACHINE_STATS]) < (int)sizeof(*st))
			return -EBADMSG;
		st = nla_data(mt[PBTRACE_A_MACHINE_STATS]);
		printf("machine name=%s id=%u connected=%u buffer=%u cpus=%u chunks=%llu bytes=%llu lost_relay=%llu dropped=%llu guest_written=%llu guest_lost=%llu disconnects=%llu gap_ns=%llu pings=%llu syncs=%llu rtt_ns=%llu offset_ns=%lld spread_ns=%llu peer=%s\n",
		       nla_get_string(mt[PBTRACE_A_MACHINE_NAME]),
		       st->machine_id, st->connected, st->buffer, st->num_cpus,
		       (unsigned long long)st->chunks,
		       (unsigned long long)st->bytes,
		       (unsigned long long)st->chunks_lost_relay,
		       (unsigned long long)st->chunks_dropped,
		       (unsigned long long)st->guest_events_written,
		       (unsigned long long)st->guest_events_lost,
		       (unsigned long long)st->disconnects,
		       (unsigned long long)st->gap_ns,
		       (unsigned long long)st->pings,
		       (unsigned long long)st->clock_syncs,
		       (unsigned long long)st->rtt_ns,
		       (long long)st->offset_ns,
		       (unsigned long long)st->offset_spread_ns,
		       mt[PBTRACE_A_MACHINE_PEER] ?
		       nla_get_string(mt[PBTRACE_A_MACHINE_PEER]) : "?");
	}
	return 0;
}

/* GET_CPU_STATS: each buffer's events_written, summed over its CPUs. */
struct local_sum {
	unsigned long long events[PBTRACE_MAX_BUFFERS];
	unsigned int nr;
};

static int sum_cpus(struct nlattr **tb, void *arg)
{
	const struct pbtrace_cpu_stats *cs;
	struct local_sum *l = arg;
	struct nlattr *a;
	uint32_t b;
	int rem;

	if (!tb[PBTRACE_A_BUFFER_INDEX] || !tb[PBTRACE_A_BUFFER_CPUS])
		return -EBADMSG;
	b = nla_get_u32(tb[PBTRACE_A_BUFFER_INDEX]);
	if (b >= PBTRACE_MAX_BUFFERS)
		return -EBADMSG;
	nla_for_each_nested(a, tb[PBTRACE_A_BUFFER_CPUS], rem) {
		cs = nla_data(a);
		if (nla_len(a) >= (int)sizeof(*cs))
			l->events[b] += cs->events_written;
	}
	if (b >= l->nr)
		l->nr = b + 1;
	return 0;
}

static int get_session(uint32_t id)
{
	struct nl_msg *msg = request(PBTRACE_CMD_GET_SESSION);
	struct local_sum l = { { 0 }, 0 };
	unsigned int b;
	int ret;

	nla_put_u32(msg, PBTRACE_A_SESSION_ID, id);
	ret = run(msg, print_session, NULL);
	if (ret)
		return ret;
	msg = request(PBTRACE_CMD_GET_SESSION_MACHINES);
	nlmsg_hdr(msg)->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, id);
	ret = run(msg, print_machines, NULL);
	if (ret)
		return ret;
	msg = request(PBTRACE_CMD_GET_CPU_STATS);
	nlmsg_hdr(msg)->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nla_put_u32(msg, PBTRACE_A_SESSION_ID, id);
	ret = run(msg, sum_cpus, &l);
	for (b = 0; !ret && b < l.nr; b++)
		printf("local_events_written %llu\n", l.events[b]);
	return ret;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Read remote records until @until (monotonic seconds) or EOF; appends to
 * @out. Returns 1 at EOF, 0 at the deadline, -1 on error.
 */
static int drain(int fd, FILE *out, void *buf, double until,
		 unsigned long long *bytes)
{
	struct pbtrace_remote_read rr;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (now() < until) {
		memset(&rr, 0, sizeof(rr));
		rr.buf = (uintptr_t)buf;
		rr.size = PBTRACE_REMOTE_READ_MIN;
		if (ioctl(fd, PBTRACE_IOC_READ_REMOTE, &rr) < 0) {
			if (errno != EAGAIN) {
				perror("READ_REMOTE");
				return -1;
			}
			poll(&p, 1, 100);
			continue;
		}
		if (rr.len && fwrite(buf, 1, rr.len, out) != rr.len)
			return -1;
		*bytes += rr.len;
		if (rr.flags & PBTRACE_REMOTE_EOF)
			return 1;
	}
	return 0;
}

/*
 * REMOTE_READ_HOLD=PATH: read nothing until PATH exists (at most 5 min),
 * so the queue fills while a test measures what the host holds.
 */
static void hold(const char *path)
{
	int i;

	if (!path)
		return;
	printf("holding\n");
	fflush(stdout);
	for (i = 0; i < 3000 && access(path, F_OK); i++)
		usleep(100000);
}

static int bad_lists(void)
{
	static const char *const nine[] = { "a", "b", "c", "d", "e", "f", "g",
					    "h", "i" };
	static const char *const empty_name[] = { "" };
	uint32_t id;
	int ret;

	/* A session made anyway is destroyed, so the next case starts clean. */
	ret = new_session(NULL, 0, &id);
	printf("empty_list %d\n", ret);
	if (!ret)
		session_cmd(PBTRACE_CMD_DESTROY_SESSION, id);
	ret = new_session(nine, 9, &id);
	printf("nine_names %d\n", ret);
	if (!ret)
		session_cmd(PBTRACE_CMD_DESTROY_SESSION, id);
	ret = new_session(empty_name, 1, &id);
	printf("empty_name %d\n", ret);
	if (!ret)
		session_cmd(PBTRACE_CMD_DESTROY_SESSION, id);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const any[] = { PBTRACE_MACHINE_ANY };
	struct pbtrace_attach at = { 0 };
	struct pbtrace_remote_read rr;
	unsigned long long bytes = 0;
	double t_stop, t_eof;
	long watched = 0;
	int fd, eof, ret;
	void *buf;
	FILE *out;
	uint32_t id;

	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk) ||
	    (family = genl_ctrl_resolve(sk, PBTRACE_GENL_NAME)) < 0) {
		fprintf(stderr, "remote_read: no pbtrace netlink family: is pbtrace.ko loaded?\n");
		return 1;
	}
	nl_socket_enable_msg_peek(sk);
	if (argc == 2 && !strcmp(argv[1], "bad"))
		return bad_lists();
	if (argc < 3) {
		fprintf(stderr, "usage: remote_read OUT SECONDS [MACHINE...] | remote_read bad\n");
		return 2;
	}
	ret = argc > 3 ? new_session((const char *const *)argv + 3, argc - 3, &id) :
			 new_session(any, 1, &id);
	if (ret) {
		fprintf(stderr, "remote_read: NEW_SESSION: %s\n", strerror(-ret));
		return 1;
	}
	printf("session %u\n", id);
	fd = open("/dev/pbtrace", O_RDONLY);
	at.session_id = id;
	buf = malloc(PBTRACE_REMOTE_READ_MIN);
	out = fopen(argv[1], "w");
	if (fd < 0 || !buf || !out || ioctl(fd, PBTRACE_IOC_ATTACH, &at)) {
		perror("remote_read: /dev/pbtrace attach or output");
		return 1;
	}
	rr = (struct pbtrace_remote_read){ .buf = (uintptr_t)buf, .size = 4096 };
	printf("small_read_errno %d\n",
	       ioctl(fd, PBTRACE_IOC_READ_REMOTE, &rr) < 0 ? errno : 0);
	rr.size = PBTRACE_REMOTE_READ_MIN;
	printf("before_start_errno %d\n",
	       ioctl(fd, PBTRACE_IOC_READ_REMOTE, &rr) < 0 ? errno : 0);
	if (getenv("REMOTE_READ_WATCH"))
		watched = start_watcher(id);
	if (session_cmd(PBTRACE_CMD_START_SESSION, id))
		return 1;
	hold(getenv("REMOTE_READ_HOLD"));
	if (getenv("REMOTE_READ_WATCH"))
		printf("watch_wakeups %ld\n", watch_switches() - watched);
	/* Half the time, a FLUSH (the relays get CONTROL flush), the rest. */
	if (drain(fd, out, buf, now() + atof(argv[2]) / 2, &bytes) < 0)
		return 1;
	printf("flush %d\n", session_cmd(PBTRACE_CMD_FLUSH_SESSION, id));
	if (drain(fd, out, buf, now() + atof(argv[2]) / 2, &bytes) < 0)
		return 1;
	ret = session_cmd(PBTRACE_CMD_STOP_SESSION, id);
	t_stop = now();
	eof = ret ? -1 : drain(fd, out, buf, t_stop + 10, &bytes);
	t_eof = now();
	fclose(out);
	printf("eof %d\neof_ms %d\nbytes %llu\n", eof,
	       (int)((t_eof - t_stop) * 1000), bytes);
	ret = get_session(id);
	if (!ret && getenv("REMOTE_READ_AGAIN")) {
		sleep(atoi(getenv("REMOTE_READ_AGAIN")));
		printf("again\n");
		ret = get_session(id);
	}
	if (ret)
		fprintf(stderr, "remote_read: GET_SESSION: %s\n", strerror(-ret));
	close(fd);
	session_cmd(PBTRACE_CMD_DESTROY_SESSION, id);
	nl_socket_free(sk);
	free(buf);
	return ret || eof != 1;
}
