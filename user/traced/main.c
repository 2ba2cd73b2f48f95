// SPDX-License-Identifier: GPL-2.0
/* traced: the poll loop, startup and logging. */
#include "traced.h"
#include "machines_file.h"

struct pbt_nl *nl;
struct session *sessions;
/* READ_REMOTE's destination: one thread, so one buffer serves all. */
uint8_t *remote_buf;
int use_syslog;
const char *machine_name;
/* --machines: loaded at start and on SIGHUP; NULL: none (--machines none) */
static const char *machines_path = PBT_MACHINES_FILE;
static bool machines_given;

void logmsg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fprintf(stderr, "traced: %s",
			prio <= LOG_ERR ? "error: " :
			prio == LOG_WARNING ? "warning: " : "");
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

uint64_t now_ns(void)
{
	return pbt_boottime_ns();
}

uint64_t after_ms(uint64_t from, uint32_t ms)
{
	return ms ? from + ms * NS_PER_MS : 0;
}

/* --- main loop --------------------------------------------------------- */

#define MAX_FDS (2 + PBTRACE_MAX_SESSIONS * PBTRACE_MAX_BUFFERS * 2)

struct pollset {
	struct pollfd fds[MAX_FDS];
	struct session *owner[MAX_FDS];
	struct buffer *buf[MAX_FDS];
	nfds_t n;
};

static void add_fd(struct pollset *ps, int fd, struct session *s,
		   struct buffer *b)
{
	if (ps->n == MAX_FDS)
		return;
	ps->fds[ps->n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	ps->owner[ps->n] = s;
	ps->buf[ps->n] = b;
	ps->n++;
}

/* Streaming sessions copy chunks as they are sealed; ring buffers are
 * only read at stop (that is what a flight recorder is). */
static int build_pollset(struct pollset *ps, int sigfd)
{
	uint64_t now = now_ns(), next = 0;
	struct session *s;
	size_t i;

	ps->n = 0;
	add_fd(ps, pbt_nl_notify_fd(nl), NULL, NULL);
	add_fd(ps, sigfd, NULL, NULL);
	for (s = sessions; s; s = s->next) {
		uint64_t t = next_deadline(s);

		if (t && (!next || t < next))
			next = t;
		if (s->state != S_RUNNING || !s->streaming)
			continue;
		for (i = 0; i < s->nr_buffers; i++)
			if (!s->bufs[i].hup)
				add_fd(ps, pbt_reader_fd(&s->bufs[i].rd), s,
				       &s->bufs[i]);
	}
	if (!next)
		return -1;
	if (next <= now)
		return 0;
	return (int)((next - now + NS_PER_MS - 1) / NS_PER_MS);
}

static int session_alive(const struct session *p)
{
	const struct session *s;

	for (s = sessions; s; s = s->next)
		if (s == p)
			return 1;
	return 0;
}

static void handle_buffers(struct pollset *ps)
{
	nfds_t i;

	for (i = 2; i < ps->n; i++) {
		struct session *s = ps->owner[i];

		if (!ps->fds[i].revents || !session_alive(s) ||
		    s->state != S_RUNNING)
			continue;
		if (ps->fds[i].revents & POLLIN) {
			drain_buffer(s, ps->buf[i]);
			drain_remote(s, ps->buf[i]);
		}
		if (ps->fds[i].revents & (POLLHUP | POLLERR)) {
			/* Stopped and fully read: the STOP notification may
			 * still be queued, the kernel's state settles it. */
			ps->buf[i]->hup = 1;
			if (sync_sessions(1) < 0)
				return;
		}
	}
}

static void handle_timers(void)
{
	uint64_t now = now_ns();
	struct session *s, *next;

	for (s = sessions; s; s = next) {
		next = s->next;
		run_timers(s, now);
	}
}

/* SIGTERM: leave sessions to the kernel, a restarted traced continues
 * them. Streaming sessions get what is sealed now. */
static void shutdown_all(void)
{
	while (sessions) {
		struct session *s = sessions;

		if (s->state == S_RUNNING && s->streaming && !s->failed)
			drain_all(s);
		if (s->w.fd >= 0)
			pbt_writer_sync(&s->w);
		logmsg(LOG_INFO, "session %u (%s) left running in the kernel",
		       s->id, s->name);
		free_session(s);
	}
}

static int loop(int sigfd)
{
	for (;;) {
		struct pollset ps;
		int timeout = build_pollset(&ps, sigfd);

		if (poll(ps.fds, ps.n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			logmsg(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (ps.fds[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGHUP) {
				logmsg(LOG_INFO, "SIGHUP: reading %s again",
				       machines_path ? machines_path : "no machines file");
				if (machines_path)
					load_machines(machines_path, machines_given);
				continue;
			}
			logmsg(LOG_INFO, "signal %u, exiting", si.ssi_signo);
			shutdown_all();
			return 0;
		}
		if (ps.fds[0].revents & (POLLERR | POLLHUP)) {
			logmsg(LOG_ERR, "netlink socket closed: was the pbtrace module unloaded?");
			shutdown_all();
			return 1;
		}
		if ((ps.fds[0].revents & POLLIN) && read_notifications() < 0) {
			shutdown_all();
			return 1;
		}
		handle_buffers(&ps);
		handle_timers();
	}
}

/* --- startup ----------------------------------------------------------- */

static int setup_netlink(void)
{
	char err[256];
	uint32_t pid = 0;
	int ret;

	nl = pbt_nl_open(err, sizeof(err));
	if (!nl) {
		logmsg(LOG_ERR, "%s", err);
		return -1;
	}
	ret = pbt_nl_register_daemon(nl);
	if (ret == -EBUSY) {
		pbt_nl_daemon_pid(nl, &pid);
		logmsg(LOG_ERR, "another traced is already running (pid %u); stop it first",
		       pid);
		return -1;
	}
	if (ret < 0) {
		logmsg(LOG_ERR, "registering as the daemon: %s", pbt_nl_error(nl));
		return -1;
	}
	/* Subscribe before listing, so no session falls between the two. */
	if (pbt_nl_subscribe(nl) < 0) {
		logmsg(LOG_ERR, "joining the sessions multicast group: %s",
		       pbt_nl_error(nl));
		return -1;
	}
	return sync_sessions(0);
}

static int setup_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int write_pidfile(const char *path)
{
	char dir[PATH_MAX], *slash;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	f = fopen(path, "we");
	if (!f) {
		logmsg(LOG_ERR, "cannot write pidfile %s: %s", path,
		       strerror(errno));
		return -1;
	}
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f);
}

static int daemonize(void)
{
	int fd;

	if (daemon(0, 1) < 0) {
		logmsg(LOG_ERR, "daemon: %s", strerror(errno));
		return -1;
	}
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	openlog("traced", LOG_PID, LOG_DAEMON);
	use_syslog = 1;
	return 0;
}

/* A name the UI shows and a manifest carries: printable, 1..64 bytes. */
static int machine_name_ok(const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			break;
	if (n && n <= PBTRACE_NAME_MAX && i == n)
		return 1;
	fprintf(stderr, "traced: --machine-name '%s': want 1..%d bytes without control characters\n",
		name, PBTRACE_NAME_MAX);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: traced [--daemon] [--pidfile PATH] [--machine-name NAME]\n"
		"              [--machines PATH|none]\n"
		"\n"
		"The pbtrace daemon: writes every pbtrace session's trace file.\n"
		"Sessions are made with tracectl; traced picks them up, copies the\n"
		"kernel's buffers to the session's output file and adds the\n"
		"config, system info, clock snapshots, process tree and stats.\n"
		"Sessions outlive traced: a restarted traced continues them.\n"
		"\n"
		"  -d, --daemon        detach, log to syslog, write a pidfile\n"
		"  -p, --pidfile PATH  pidfile for --daemon (default %s)\n"
		"  -n, --machine-name NAME\n"
		"                      this machine's name in every file (SystemInfo\n"
		"                      machine_name: the UI's label, tracectl merge's\n"
		"                      identity); default: the nodename (uname -n)\n"
		"  -m, --machines PATH the names and keys of this host's guests,\n"
		"                      loaded at start and on SIGHUP (default %s,\n"
		"                      if it exists; none: leave the table alone)\n"
		"  -h, --help          this text\n"
		"\n"
		"Needs CAP_SYS_ADMIN and the pbtrace module (modprobe pbtrace).\n",
		PIDFILE, PBT_MACHINES_FILE);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "daemon", no_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "machine-name", required_argument, NULL, 'n' },
		{ "machines", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pidfile = PIDFILE;
	int detach = 0, sigfd, c, ret;

	while ((c = getopt_long(argc, argv, "dp:n:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			detach = 1;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'n':
			if (!machine_name_ok(optarg))
				return 2;
			machine_name = optarg;
			break;
		case 'm':
			machines_path = strcmp(optarg, "none") ? optarg : NULL;
			machines_given = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "traced: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	setvbuf(stderr, NULL, _IOLBF, 0);
	/* Zeroed: valgrind does not see the kernel fill it through the
	 * pointer inside struct pbtrace_remote_read. */
	remote_buf = calloc(1, PBTRACE_REMOTE_READ_MIN);
	if (!remote_buf) {
		logmsg(LOG_ERR, "out of memory");
		return 1;
	}
	sigfd = setup_signals();
	if (sigfd < 0) {
		logmsg(LOG_ERR, "signalfd: %s", strerror(errno));
		return 1;
	}
	if (detach && (daemonize() < 0 || write_pidfile(pidfile) < 0))
		return 1;
	if (setup_netlink() < 0) {
		shutdown_all();
		pbt_nl_close(nl);
		return 1;
	}
	if (machines_path)
		load_machines(machines_path, machines_given);
	logmsg(LOG_INFO, "ready (pid %d)", (int)getpid());
	ret = loop(sigfd);
	pbt_nl_close(nl);
	close(sigfd);
	if (detach)
		unlink(pidfile);
	free(remote_buf);
	return ret;
}
