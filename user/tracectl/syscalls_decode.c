// SPDX-License-Identifier: GPL-2.0
/*
 * tracectl's syscall view: one argument's value in the words strace uses
 * (docs/tracectl.md, "Arguments"): PROT_READ|PROT_WRITE,
 * MAP_PRIVATE|MAP_ANONYMOUS, O_RDONLY|O_CLOEXEC, SIGCHLD, AF_UNIX, F_GETFL,
 * TCGETS, 0644, NULL. The names and values are the system headers', in
 * tables syscall_xlat.sh generates at build time; which argument takes
 * which table is the list below, by syscall and argument name (the names
 * of syscall_defines.txt, the kernel's SYSCALL_DEFINEs). An argument the
 * list does not name is printed by its C type: ints in decimal, pointers
 * in hex (NULL for 0), modes in octal, file descriptors as ints.
 *
 * strace is the referee of these words (syscall_strace_test.sh compares
 * them), so its conventions are kept where they are not obvious: a value
 * no name matches is 0x.. and X_??? in a comment, flags' unknown bits
 * |0x.., flags in strace's order, signals above SIGRTMIN as SIGRT_n.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls_decode.h"

struct sv_xlat {
	uint64_t val;
	const char *name;
};

struct sv_xlat_table {
	const struct sv_xlat *v;
	unsigned int n;
	bool flags;		/* else an enum, sorted by value */
	const char *unknown;	/* "F_???" */
};

#include "syscall_xlat.h"

/* include/linux/net.h (not uapi): the socket type's bits, below the
 * SOCK_CLOEXEC and SOCK_NONBLOCK flags. */
#define SOCK_TYPE_MASK 0xf

static const char *xlat_name(const struct sv_xlat_table *t, uint64_t v)
{
	unsigned int lo = 0, hi = t->n, i;

	if (t->flags) {
		for (i = 0; i < t->n; i++)
			if (t->v[i].val == v)
				return t->v[i].name;
		return NULL;
	}
	while (lo < hi) {
		i = (lo + hi) / 2;
		if (t->v[i].val == v)
			return t->v[i].name;
		if (t->v[i].val < v)
			lo = i + 1;
		else
			hi = i;
	}
	return NULL;
}

static void print_enum(FILE *f, const struct sv_xlat_table *t, uint64_t v)
{
	const char *name = xlat_name(t, v);

	if (name)
		fputs(name, f);
	else
		fprintf(f, "%#" PRIx64 " /* %s */", v, t->unknown);
}

/*
 * As strace's printflags: the names whose bits are all set, in the
 * table's order, each taking its bits; what is left as |0x..; 0 is the
 * table's name for 0 if it has one (PROT_NONE, F_OK), else 0.
 */
static void print_flags(FILE *f, const struct sv_xlat_table *t, uint64_t v)
{
	const char *sep = "";
	unsigned int i;

	if (!v) {
		const char *zero = xlat_name(t, 0);

		fputs(zero ? zero : "0", f);
		return;
	}
	for (i = 0; i < t->n && v; i++) {
		uint64_t bits = t->v[i].val;

		if (!bits || (v & bits) != bits)
			continue;
		fprintf(f, "%s%s", sep, t->v[i].name);
		sep = "|";
		v &= ~bits;
	}
	if (v && *sep)
		fprintf(f, "|%#" PRIx64, v);
	else if (v)
		fprintf(f, "%#" PRIx64 " /* %s */", v, t->unknown);
}

static void print_xlat(FILE *f, const struct sv_xlat_table *t, uint64_t v)
{
	if (t->flags)
		print_flags(f, t, v);
	else
		print_enum(f, t, v);
}

/* 0 as 0 (kill's "is it alive"), SIGRTMIN, then SIGRT_1.. as strace. */
static void print_signal(FILE *f, int sig)
{
	const char *name = sig > 0 ? xlat_name(&xlat_signals, (uint64_t)sig) : NULL;

	if (name)
		fputs(name, f);
	else if (sig > 32 && sig <= 64)
		fprintf(f, "SIGRT_%d", sig - 32);
	else
		fprintf(f, "%d", sig);
}

static void print_ptr(FILE *f, uint64_t v)
{
	if (v)
		fprintf(f, "%#" PRIx64, v);
	else
		fputs("NULL", f);
}

/* umode_t, as strace: octal with at least three digits (000, 0644). */
static void print_mode(FILE *f, uint64_t v)
{
	fprintf(f, "%#03" PRIo64, v & 0xffff);
}

/* mknod's: the file type by name, then the set-id bits, then octal. */
static void print_mode_type(FILE *f, uint64_t v)
{
	uint64_t type = v & SV_S_IFMT;
	const char *name = type ? xlat_name(&xlat_mode_type, type) : "";

	if (!name) {
		print_mode(f, v);
		return;
	}
	fprintf(f, "%s%s%s%s%s", name, *name ? "|" : "",
		v & SV_S_ISUID ? "S_ISUID|" : "", v & SV_S_ISGID ? "S_ISGID|" : "",
		v & SV_S_ISVTX ? "S_ISVTX|" : "");
	print_mode(f, v & ~(SV_S_IFMT | SV_S_ISUID | SV_S_ISGID | SV_S_ISVTX));
}

/* The kernel's 32-bit dev_t (new_encode_dev): 12 bits of major. */
static void print_dev(FILE *f, uint64_t v)
{
	uint32_t d = (uint32_t)v;

	fprintf(f, "makedev(%#x, %#x)", (d >> 8) & 0xfff, (d & 0xff) | ((d >> 12) & 0xfff00));
}

/* O_RDONLY|O_CLOEXEC: the access mode by name, then the flags. */
static void print_open_flags(FILE *f, uint64_t v)
{
	v &= 0xffffffffu;
	print_enum(f, &xlat_access_mode, v & SV_O_ACCMODE);
	v &= ~SV_O_ACCMODE;
	if (v) {
		fputc('|', f);
		print_flags(f, &xlat_open_flags, v);
	}
}

/* MAP_PRIVATE|MAP_ANONYMOUS: the type, the flags, the huge page size. */
static void print_map_flags(FILE *f, uint64_t v)
{
	uint64_t huge = v & (SV_MAP_HUGE_MASK << SV_MAP_HUGE_SHIFT);

	print_enum(f, &xlat_map_type, v & SV_MAP_TYPE);
	v &= ~(SV_MAP_TYPE | huge);
	if (v) {
		fputc('|', f);
		print_flags(f, &xlat_map_flags, v);
	}
	if (huge)
		fprintf(f, "|%" PRIu64 "<<MAP_HUGE_SHIFT", huge >> SV_MAP_HUGE_SHIFT);
}

/* clone's flags: the low byte is the signal sent to the parent at exit. */
static void print_clone_flags(FILE *f, uint64_t v)
{
	uint64_t flags = v & ~SV_CSIGNAL;
	int sig = (int)(v & SV_CSIGNAL);

	if (!flags) {
		print_signal(f, sig);
		return;
	}
	print_flags(f, &xlat_clone_flags, flags);
	if (sig) {
		fputc('|', f);
		print_signal(f, sig);
	}
}

static void print_sock_type(FILE *f, uint64_t v)
{
	const char *name = xlat_name(&xlat_sock_type, v & SOCK_TYPE_MASK);

	v &= 0xffffffffu;
	if (name) {
		fputs(name, f);
		v &= ~(uint64_t)SOCK_TYPE_MASK;
		if (!v)
			return;
		fputc('|', f);
	}
	print_flags(f, &xlat_sock_flags, v);
}

/* The protocol means something by the family (arg 0). */
static void print_sock_proto(FILE *f, const struct sv_call_fmt *c, uint64_t v)
{
	uint64_t family = c->args[0] & 0xffffffffu;

	v &= 0xffffffffu;
	if (family == SV_AF_INET || family == SV_AF_INET6)
		print_enum(f, &xlat_ipproto, v);
	else if (family == SV_AF_NETLINK)
		print_enum(f, &xlat_netlink, v);
	else
		fprintf(f, "%d", (int32_t)v);
}

/* setsockopt's optname, by the level before it. */
static void print_sockopt(FILE *f, const struct sv_call_fmt *c, uint64_t v)
{
	if ((c->args[1] & 0xffffffffu) == SV_SOL_SOCKET)
		print_enum(f, &xlat_so, v & 0xffffffffu);
	else
		fprintf(f, "%d", (int32_t)v);
}

/* statx's flags: the sync type (0 is AT_STATX_SYNC_AS_STAT), then AT_. */
static void print_statx_flags(FILE *f, uint64_t v)
{
	v &= 0xffffffffu;
	print_enum(f, &xlat_statx_sync, v & SV_AT_STATX_SYNC_TYPE);
	v &= ~SV_AT_STATX_SYNC_TYPE;
	if (v) {
		fputc('|', f);
		print_flags(f, &xlat_at_flags, v);
	}
}

/* FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME: the clock as a flag. */
static void print_futex_op(FILE *f, uint64_t v)
{
	const char *name;

	v &= 0xffffffffu;
	name = xlat_name(&xlat_futex_op, v);
	if (name) {
		fputs(name, f);
		return;
	}
	name = xlat_name(&xlat_futex_op, v & ~SV_FUTEX_CLOCK_REALTIME);
	if (name && (v & SV_FUTEX_CLOCK_REALTIME))
		fprintf(f, "%s|FUTEX_CLOCK_REALTIME", name);
	else
		fprintf(f, "%#" PRIx64 " /* FUTEX_??? */", v);
}

/* Known requests by name; others as _IOC(dir, type, nr, size), as strace. */
static void print_ioctl(FILE *f, uint64_t v)
{
	uint32_t cmd = (uint32_t)v;
	const char *name = xlat_name(&xlat_ioctl, cmd);

	if (name) {
		fputs(name, f);
		return;
	}
	fputs("_IOC(", f);
	print_flags(f, &xlat_ioc_dir, (cmd >> SV__IOC_DIRSHIFT) & SV__IOC_DIRMASK);
	fprintf(f, ", %#x, %#x, %#x)",
		(unsigned int)((cmd >> SV__IOC_TYPESHIFT) & SV__IOC_TYPEMASK),
		(unsigned int)((cmd >> SV__IOC_NRSHIFT) & SV__IOC_NRMASK),
		(unsigned int)((cmd >> SV__IOC_SIZESHIFT) & SV__IOC_SIZEMASK));
}

/* ioctl's third argument: a few requests take an int or a word (TCXONC),
 * the others we know a pointer, the rest whatever it is, in hex. */
static void print_ioctl_arg(FILE *f, const struct sv_call_fmt *c, uint64_t v)
{
	uint64_t cmd = c->args[1] & 0xffffffffu;

	if (cmd == SV_TCSBRK || cmd == SV_TCSBRKP || cmd == SV_TIOCSCTTY)
		fprintf(f, "%d", (int32_t)v);
	else if (cmd == SV_TCXONC)
		print_enum(f, &xlat_tcxonc, v);
	else if (cmd == SV_TCFLSH)
		print_enum(f, &xlat_tcflsh, v);
	else if (xlat_name(&xlat_ioctl, cmd))
		print_ptr(f, v);
	else
		fprintf(f, "%#" PRIx64, v);
}

/* fcntl's third argument, by the command before it (strace's print_fcntl). */
static void print_fcntl_arg(FILE *f, const struct sv_call_fmt *c, uint64_t v)
{
	uint64_t cmd = c->args[1] & 0xffffffffu;

	if (cmd == SV_F_SETFD)
		print_flags(f, &xlat_fd_flags, v);
	else if (cmd == SV_F_SETFL)
		print_open_flags(f, v);
	else if (cmd == SV_F_SETSIG)
		print_signal(f, (int)v);
	else if (cmd == SV_F_SETLEASE)
		print_enum(f, &xlat_lock_type, v);
	else if (cmd == SV_F_ADD_SEALS)
		print_flags(f, &xlat_seals, v);
	else if (cmd == SV_F_DUPFD || cmd == SV_F_DUPFD_CLOEXEC ||
		 cmd == SV_F_SETOWN || cmd == SV_F_SETPIPE_SZ)
		fprintf(f, "%d", (int32_t)v);
	else
		fprintf(f, "%#" PRIx64, v);
}

enum dec {
	D_XLAT, D_SIGNAL, D_ADDR, D_HEX, D_INT, D_MODE, D_MODE_TYPE, D_DEV,
	D_OPEN_FLAGS, D_FD_FLAGS, D_MAP_FLAGS, D_CLONE_FLAGS, D_FCNTL_ARG,
	D_IOCTL, D_SOCK_TYPE, D_SOCK_PROTO, D_SOCKOPT, D_STATX_FLAGS,
	D_FUTEX_OP, D_DIRFD, D_IOCTL_ARG,
};

/* Whether strace shows the argument (and the kernel reads it): always,
 * when argument ref has one of mask's bits, all of them, makes a device,
 * or by fcntl's and ioctl's command. */
enum shown { ALWAYS, IF_ANY, IF_ALL, IF_DEVICE, IF_FCNTL_ARG, IF_IOCTL_ARG };

struct decoder {
	const char *syscall, *arg;
	enum dec dec;
	const struct sv_xlat_table *t;
	enum shown shown;
	unsigned int ref;
	uint64_t mask;
};

#define X(s, a, t) { s, a, D_XLAT, &xlat_##t, ALWAYS, 0, 0 }
#define D(s, a, d) { s, a, d, NULL, ALWAYS, 0, 0 }
#define S(s, a, d, shown, ref, mask) { s, a, d, NULL, shown, ref, mask }

/* Sorted at first use: by syscall, then argument. */
static struct decoder decoders[] = {
	/* memory */
	D("mmap", "addr", D_ADDR), X("mmap", "prot", prot),
	D("mmap", "flags", D_MAP_FLAGS), D("mmap", "off", D_HEX),
	D("munmap", "addr", D_ADDR), D("brk", "brk", D_ADDR),
	D("mprotect", "start", D_ADDR), X("mprotect", "prot", prot),
	D("pkey_mprotect", "start", D_ADDR), X("pkey_mprotect", "prot", prot),
	D("mremap", "addr", D_ADDR), X("mremap", "flags", mremap),
	S("mremap", "new_addr", D_ADDR, IF_ALL, 3, SV_MREMAP_MAYMOVE | SV_MREMAP_FIXED),
	D("msync", "start", D_ADDR), X("msync", "flags", msync),
	D("madvise", "start", D_ADDR), X("madvise", "behavior", madvise),
	X("process_madvise", "behavior", madvise),
	D("mincore", "start", D_ADDR), D("mlock", "start", D_ADDR),
	D("munlock", "start", D_ADDR), D("mlock2", "start", D_ADDR),
	X("mlock2", "flags", mlock), X("mlockall", "flags", mlockall),
	D("mbind", "start", D_ADDR),
	X("memfd_create", "flags", mfd),
	/* files */
	D("open", "flags", D_OPEN_FLAGS), D("openat", "flags", D_OPEN_FLAGS),
	D("mq_open", "oflag", D_OPEN_FLAGS),
	S("open", "mode", D_MODE, IF_ANY, 1, SV_O_CREAT | SV___O_TMPFILE),
	S("openat", "mode", D_MODE, IF_ANY, 2, SV_O_CREAT | SV___O_TMPFILE),
	S("mq_open", "mode", D_MODE, IF_ANY, 1, SV_O_CREAT),
	D("pipe2", "flags", D_FD_FLAGS), D("dup3", "flags", D_FD_FLAGS),
	D("userfaultfd", "flags", D_FD_FLAGS),
	X("lseek", "whence", whence),
	X("access", "mode", access_flags), X("faccessat", "mode", access_flags),
	X("faccessat2", "mode", access_flags), X("faccessat2", "flags", at_flags),
	X("newfstatat", "flag", at_flags), X("unlinkat", "flag", at_flags),
	X("linkat", "flags", at_flags), X("fchownat", "flag", at_flags),
	X("utimensat", "flags", at_flags), X("execveat", "flags", at_flags),
	D("execveat", "fd", D_DIRFD), X("name_to_handle_at", "flag", at_flags),
	D("statx", "flags", D_STATX_FLAGS), X("statx", "mask", statx_mask),
	X("renameat2", "flags", rename),
	D("mknod", "mode", D_MODE_TYPE), D("mknodat", "mode", D_MODE_TYPE),
	S("mknod", "dev", D_DEV, IF_DEVICE, 1, 0), S("mknodat", "dev", D_DEV, IF_DEVICE, 2, 0),
	D("umask", "mask", D_MODE),
	X("fcntl", "cmd", fcntl_cmd), S("fcntl", "arg", D_FCNTL_ARG, IF_FCNTL_ARG, 1, 0),
	X("flock", "cmd", flock),
	D("ioctl", "cmd", D_IOCTL), S("ioctl", "arg", D_IOCTL_ARG, IF_IOCTL_ARG, 1, 0),
	X("fadvise64", "advice", fadvise),
	X("fallocate", "mode", falloc),
	X("sync_file_range", "flags", sync_range),
	X("preadv2", "flags", rwf), X("pwritev2", "flags", rwf),
	X("splice", "flags", splice), X("tee", "flags", splice),
	X("vmsplice", "flags", splice),
	X("umount2", "flags", umount),
	X("close_range", "flags", close_range),
	X("inotify_init1", "flags", in_init), X("inotify_add_watch", "mask", in_mask),
	X("epoll_create1", "flags", epoll_flags), X("epoll_ctl", "op", epoll_ctl),
	X("eventfd2", "flags", efd_flags), X("signalfd4", "flags", sfd_flags),
	X("timerfd_create", "clockid", clock), X("timerfd_create", "flags", tfd_flags),
	X("timerfd_settime", "flags", tfd_set),
	/* processes and signals */
	D("clone", "clone_flags", D_CLONE_FLAGS), D("clone", "newsp", D_ADDR),
	S("clone", "parent_tidptr", D_ADDR, IF_ANY, 0, SV_CLONE_PARENT_SETTID | SV_CLONE_PIDFD),
	S("clone", "child_tidptr", D_ADDR, IF_ANY, 0, SV_CLONE_CHILD_SETTID | SV_CLONE_CHILD_CLEARTID),
	S("clone", "tls", D_HEX, IF_ANY, 0, SV_CLONE_SETTLS),
	X("unshare", "unshare_flags", unshare), X("setns", "flags", unshare),
	X("wait4", "options", wait_options),
	X("waitid", "which", idtype), X("waitid", "options", wait_options),
	D("kill", "sig", D_SIGNAL), D("tkill", "sig", D_SIGNAL),
	D("tgkill", "sig", D_SIGNAL), D("rt_sigqueueinfo", "sig", D_SIGNAL),
	D("rt_tgsigqueueinfo", "sig", D_SIGNAL),
	D("pidfd_send_signal", "sig", D_SIGNAL),
	D("rt_sigaction", "sig", D_SIGNAL),
	X("rt_sigprocmask", "how", sigprocmask),
	X("prlimit64", "resource", rlimit), X("getrlimit", "resource", rlimit),
	X("setrlimit", "resource", rlimit), X("getrusage", "who", rusage),
	X("arch_prctl", "option", arch_prctl), D("arch_prctl", "arg2", D_HEX),
	X("prctl", "option", prctl),
	D("futex", "op", D_FUTEX_OP),
	D("rseq", "rseq_len", D_HEX), D("rseq", "sig", D_HEX),
	X("seccomp", "op", seccomp_op), X("seccomp", "flags", seccomp_flags),
	X("perf_event_open", "flags", perf_flags),
	/* time */
	X("clock_gettime", "which_clock", clock), X("clock_settime", "which_clock", clock),
	X("clock_getres", "which_clock", clock), X("clock_nanosleep", "which_clock", clock),
	X("clock_nanosleep", "flags", timer_flags), X("timer_create", "which_clock", clock),
	X("clock_adjtime", "which_clock", clock),
	X("getrandom", "flags", grnd),
	/* sockets */
	X("socket", "family", family), D("socket", "type", D_SOCK_TYPE),
	D("socket", "protocol", D_SOCK_PROTO),
	X("socketpair", "family", family), D("socketpair", "type", D_SOCK_TYPE),
	D("socketpair", "protocol", D_SOCK_PROTO),
	X("accept4", "flags", sock_flags),
	X("sendto", "flags", msg_flags), X("recvfrom", "flags", msg_flags),
	X("sendmsg", "flags", msg_flags), X("recvmsg", "flags", msg_flags),
	X("sendmmsg", "flags", msg_flags), X("recvmmsg", "flags", msg_flags),
	X("shutdown", "how", shutdown),
	X("setsockopt", "level", sol), D("setsockopt", "optname", D_SOCKOPT),
	X("getsockopt", "level", sol), D("getsockopt", "optname", D_SOCKOPT),
};

static int by_call(const void *a, const void *b)
{
	const struct decoder *x = a, *y = b;
	int r = strcmp(x->syscall, y->syscall);

	return r ? r : strcmp(x->arg, y->arg);
}

static const struct decoder *find_decoder(const char *syscall, const char *arg)
{
	static bool sorted;
	struct decoder key = { syscall, arg, D_XLAT, NULL, ALWAYS, 0, 0 };

	if (!syscall)
		return NULL;
	if (!sorted) {
		qsort(decoders, sizeof(decoders) / sizeof(decoders[0]),
		      sizeof(decoders[0]), by_call);
		sorted = true;
	}
	return bsearch(&key, decoders, sizeof(decoders) / sizeof(decoders[0]),
		       sizeof(decoders[0]), by_call);
}

/* For the unit test: the first decoder whose argument the table lacks
 * (a typo, or a table from a kernel that renamed it), else NULL. */
const char *sv_decode_unknown_arg(void)
{
	static char bad[96];
	size_t i;

	for (i = 0; i < sizeof(decoders) / sizeof(decoders[0]); i++)
		if (!sv_fmt_has_arg(decoders[i].syscall, decoders[i].arg)) {
			snprintf(bad, sizeof(bad), "%s %s", decoders[i].syscall,
				 decoders[i].arg);
			return bad;
		}
	return NULL;
}

/* Arguments that are file descriptors, whatever their C type says. */
static bool is_fd(const char *arg)
{
	static const char *const names[] = {
		"fd", "fildes", "oldfd", "newfd", "epfd", "ufd", "fd_in",
		"fd_out", "fdin", "fdout", "out_fd", "in_fd", "pidfd",
		"group_fd", "fanotify_fd", "fs_fd", "mqdes",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(arg, names[i]))
			return true;
	return false;
}

static bool is_dirfd(const char *arg)
{
	size_t n = strlen(arg);

	return n >= 3 && !strcmp(arg + n - 3, "dfd");
}

/* uid_t and gid_t: -1 means "leave it", as strace prints it. */
static bool is_id(const char *arg)
{
	static const char *const names[] = {
		"user", "group", "uid", "gid", "ruid", "euid", "suid",
		"rgid", "egid", "sgid",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(arg, names[i]))
			return true;
	return false;
}

static void print_dec(FILE *f, const struct sv_call_fmt *c, enum dec d,
		      const struct sv_xlat_table *t, uint64_t v)
{
	switch (d) {
	case D_XLAT:
		print_xlat(f, t, v);
		break;
	case D_SIGNAL:
		print_signal(f, (int)v);
		break;
	case D_ADDR:
		print_ptr(f, v);
		break;
	case D_HEX:
		fprintf(f, "%#" PRIx64, v);
		break;
	case D_INT:
		fprintf(f, "%d", (int32_t)v);
		break;
	case D_MODE:
		print_mode(f, v);
		break;
	case D_MODE_TYPE:
		print_mode_type(f, v);
		break;
	case D_DEV:
		print_dev(f, v);
		break;
	case D_OPEN_FLAGS:
		print_open_flags(f, v);
		break;
	case D_FD_FLAGS:
		print_flags(f, &xlat_open_flags, v & 0xffffffffu);
		break;
	case D_MAP_FLAGS:
		print_map_flags(f, v);
		break;
	case D_CLONE_FLAGS:
		print_clone_flags(f, v);
		break;
	case D_FCNTL_ARG:
		print_fcntl_arg(f, c, v);
		break;
	case D_IOCTL:
		print_ioctl(f, v);
		break;
	case D_IOCTL_ARG:
		print_ioctl_arg(f, c, v);
		break;
	case D_SOCK_TYPE:
		print_sock_type(f, v);
		break;
	case D_SOCK_PROTO:
		print_sock_proto(f, c, v);
		break;
	case D_SOCKOPT:
		print_sockopt(f, c, v);
		break;
	case D_STATX_FLAGS:
		print_statx_flags(f, v);
		break;
	case D_FUTEX_OP:
		print_futex_op(f, v);
		break;
	case D_DIRFD:
		if ((int32_t)v == (int32_t)SV_AT_FDCWD)
			fputs("AT_FDCWD", f);
		else
			fprintf(f, "%d", (int32_t)v);
		break;
	}
}

/* Generic ways, by the argument's name and type, for those no decoder
 * names: negative, so that a how >= 0 is an index into decoders. */
enum { HOW_KIND = -1, HOW_DIRFD = -2, HOW_FD = -3, HOW_ID = -4 };

int sv_decode_how(const char *syscall, const char *arg)
{
	const struct decoder *d = find_decoder(syscall, arg);

	if (d)
		return (int)(d - decoders);
	if (is_dirfd(arg))
		return HOW_DIRFD;
	if (is_fd(arg))
		return HOW_FD;
	if (is_id(arg))
		return HOW_ID;
	return HOW_KIND;
}

void sv_decode_arg(FILE *f, const struct sv_call_fmt *c, int how, char kind,
		   uint64_t v)
{
	const struct decoder *d = how >= 0 ? &decoders[how] : NULL;

	if (d) {
		/* an int argument is its register's low half: the kernel's
		 * SYSCALL_DEFINE casts the rest away; signed for enums
		 * (RUSAGE_CHILDREN is -1), bits for flags */
		if (kind == 'u' || (kind == 'i' && d->t && d->t->flags))
			v &= 0xffffffffu;
		else if (kind == 'i')
			v = (uint64_t)(int64_t)(int32_t)v;
		print_dec(f, c, d->dec, d->t, v);
	} else if (kind == 'p' || kind == 's') {
		print_ptr(f, v);
	} else if (kind == 'm') {
		print_mode(f, v);
	} else if (how == HOW_DIRFD) {
		print_dec(f, c, D_DIRFD, NULL, v);
	} else if (how == HOW_FD || kind == 'i') {
		fprintf(f, "%d", (int32_t)v);
	} else if (how == HOW_ID && (uint32_t)v == UINT32_MAX) {
		fputs("-1", f);
	} else if (kind == 'u') {
		fprintf(f, "%u", (uint32_t)v);
	} else if (kind == 'l') {
		fprintf(f, "%" PRId64, (int64_t)v);
	} else {
		fprintf(f, "%" PRIu64, v);
	}
}

/*
 * What strace leaves out, so the lines compare, and what the kernel does
 * not read either: open's mode unless it creates (O_CREAT, O_TMPFILE),
 * mknod's dev unless it makes a device, fcntl's and ioctl's argument for
 * the commands that take none, mremap's new address unless it moves to
 * one, clone's TIDs and TLS unless its flags ask for them.
 */
bool sv_decode_shown(const struct sv_call_fmt *c, int how)
{
	const struct decoder *d = how >= 0 ? &decoders[how] : NULL;
	uint64_t v;

	if (!d || d->shown == ALWAYS)
		return true;
	v = c->args[d->ref];
	switch (d->shown) {
	case IF_ANY:
		return v & d->mask;
	case IF_ALL:
		return (v & d->mask) == d->mask;
	case IF_DEVICE:
		v &= SV_S_IFMT;
		return v == SV_S_IFCHR || v == SV_S_IFBLK;
	case IF_FCNTL_ARG:
		v &= 0xffffffffu;
		return v != SV_F_GETFD && v != SV_F_GETFL && v != SV_F_GETOWN &&
		       v != SV_F_GETSIG && v != SV_F_GETLEASE &&
		       v != SV_F_GETPIPE_SZ && v != SV_F_GET_SEALS;
	case IF_IOCTL_ARG:
		v &= 0xffffffffu;
		return v != SV_FIOCLEX && v != SV_FIONCLEX && v != SV_TIOCEXCL &&
		       v != SV_TIOCNXCL && v != SV_TIOCNOTTY && v != SV_TIOCCONS &&
		       v != SV_TIOCSBRK && v != SV_TIOCCBRK && v != SV_TIOCVHANGUP;
	default:
		return true;
	}
}
