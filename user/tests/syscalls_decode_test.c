// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of the syscall view's arguments (user/tracectl/syscalls_fmt.c,
 * syscalls_decode.c): each call below, formatted, then with the argument
 * names taken out, must be the text strace 6.1 printed for the same call
 * (copied from its output: strace -e verbose=all -e abbrev=none of find,
 * python3 and selftests/pbtrace/sysdecode.c, which syscall_strace_test.sh
 * compares in a guest). Then: every syscall of <asm/unistd.h> the kernel
 * implements has its arguments named (none printed as the argN fallback),
 * the arch-defined ones too, and the names are the SYSCALL_DEFINEs'.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"
#include "../tracectl/syscalls_decode.h"
#include "../tracectl/syscalls_view.h"
#include "tap.h"

#define A(...) { __VA_ARGS__ }

struct want {
	const char *name;
	uint64_t args[6];
	const char *str;	/* the first string argument's text, or NULL */
	const char *strace;	/* what strace printed, names out */
};

static const struct want wants[] = {
	/* the example, and the rest of mmap's words */
	{ "mmap", A(0, 0x2000, 0x3, 0x22, 0xffffffff, 0), NULL,
	  "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)" },
	{ "mmap", A(0x7faeddd99000, 1400832, 5, 0x812, 3, 0x26000), NULL,
	  "mmap(0x7faeddd99000, 1400832, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x26000)" },
	{ "mmap", A(0, 2097152, 3, 0x54040022, 0xffffffff, 0), NULL,
	  "mmap(NULL, 2097152, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB|21<<MAP_HUGE_SHIFT, -1, 0)" },
	{ "mmap", A(0, 4096, 0x41, 0x22, 0xffffffff, 0), NULL,
	  "mmap(NULL, 4096, PROT_READ|0x40, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)" },
	{ "mmap", A(0, 8192, 3, 0x20122, 0xffffffff, 0), NULL,
	  "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_GROWSDOWN|MAP_STACK, -1, 0)" },
	{ "mprotect", A(0x7fd64836b000, 4096, 0), NULL,
	  "mprotect(0x7fd64836b000, 4096, PROT_NONE)" },
	{ "msync", A(0x7fd64836a000, 4096, 6), NULL,
	  "msync(0x7fd64836a000, 4096, MS_SYNC|MS_INVALIDATE)" },
	{ "brk", A(0), NULL, "brk(NULL)" },
	/* open's flags in strace's order, its mode only when it creates */
	{ "openat", A(-100ull, 0x1000, 02000000), "/etc/ld.so.cache",
	  "openat(AT_FDCWD, \"/etc/ld.so.cache\", O_RDONLY|O_CLOEXEC)" },
	{ "openat", A(-100ull, 0x1000, 02604400), "bash",
	  "openat(AT_FDCWD, \"bash\", O_RDONLY|O_NOCTTY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC|O_DIRECTORY)" },
	{ "openat", A(-100ull, 0x1000, 0302, 0), "x",
	  "openat(AT_FDCWD, \"x\", O_RDWR|O_CREAT|O_EXCL, 000)" },
	{ "openat", A(-100ull, 0x1000, 0x40000000 | 04010001), "x",
	  "openat(AT_FDCWD, \"x\", O_WRONLY|O_SYNC|0x40000000)" },
	{ "openat", A(-100ull, 0x1000, 020200002, 0600), "/tmp/sd",
	  "openat(AT_FDCWD, \"/tmp/sd\", O_RDWR|O_TMPFILE, 0600)" },
	{ "creat", A(0x1000, 0666), "/tmp/x.tar", "creat(\"/tmp/x.tar\", 0666)" },
	{ "pipe2", A(0x6000, 0), NULL, "pipe2(0x6000, 0)" },
	{ "dup3", A(15, 40, 02000000), NULL, "dup3(15, 40, O_CLOEXEC)" },
	/* fcntl: the command, and the argument as the command reads it */
	{ "fcntl", A(13, 3, 0x7ffc0000), NULL, "fcntl(13, F_GETFL)" },
	{ "fcntl", A(13, 4, 06000), NULL, "fcntl(13, F_SETFL, O_RDONLY|O_APPEND|O_NONBLOCK)" },
	{ "fcntl", A(4, 2, 1), NULL, "fcntl(4, F_SETFD, FD_CLOEXEC)" },
	{ "fcntl", A(4, 1030, 3), NULL, "fcntl(4, F_DUPFD_CLOEXEC, 3)" },
	{ "fcntl", A(13, 10, 10), NULL, "fcntl(13, F_SETSIG, SIGUSR1)" },
	{ "fcntl", A(13, 0x4242, 7), NULL, "fcntl(13, 0x4242 /* F_??? */, 0x7)" },
	/* ioctl requests: by name, with or without an argument, or _IOC() */
	{ "ioctl", A(0, 0x5401, 0x7ffc0f6ac390), NULL, "ioctl(0, TCGETS, 0x7ffc0f6ac390)" },
	{ "ioctl", A(13, 0x5401, 0), NULL, "ioctl(13, TCGETS, NULL)" },
	{ "ioctl", A(13, 0x5451, 0), NULL, "ioctl(13, FIOCLEX)" },
	{ "ioctl", A(13, 0x8004fe42, 0), NULL, "ioctl(13, _IOC(_IOC_READ, 0xfe, 0x42, 0x4), 0)" },
	/* signals: 0, names, SIGRTMIN, SIGRT_n */
	{ "kill", A(8937, 0), NULL, "kill(8937, 0)" },
	{ "kill", A(8937, 17), NULL, "kill(8937, SIGCHLD)" },
	{ "kill", A(-1234567ull, 9), NULL, "kill(-1234567, SIGKILL)" },
	{ "tgkill", A(9365, 9365, 36), NULL, "tgkill(9365, 9365, SIGRT_4)" },
	{ "rt_sigprocmask", A(0, 0x1000, 0, 8), NULL, "rt_sigprocmask(SIG_BLOCK, 0x1000, NULL, 8)" },
	/* processes */
	{ "wait4", A(-1ull, 0, 11, 0), NULL, "wait4(-1, NULL, WNOHANG|WSTOPPED|WCONTINUED, NULL)" },
	{ "wait4", A(9367, 0x7ffd0000, 0x40000000, 0), NULL, "wait4(9367, 0x7ffd0000, __WALL, NULL)" },
	{ "waitid", A(0, 0, 0, 5, 0), NULL, "waitid(P_ALL, 0, NULL, WNOHANG|WEXITED, NULL)" },
	{ "unshare", A(0x7fffffff00000000ull), NULL, "unshare(0x7fffffff00000000 /* CLONE_??? */)" },
	{ "prlimit64", A(0, 3, 0, 0x7ffd0000), NULL, "prlimit64(0, RLIMIT_STACK, NULL, 0x7ffd0000)" },
	{ "getrusage", A(-1ull, 0), NULL, "getrusage(RUSAGE_CHILDREN, NULL)" },
	{ "getrusage", A(0xffffffff, 0), NULL, "getrusage(RUSAGE_CHILDREN, NULL)" },
	{ "arch_prctl", A(0x1002, 0x7faeddd70740), NULL, "arch_prctl(ARCH_SET_FS, 0x7faeddd70740)" },
	{ "arch_prctl", A(0x3001, 0), NULL, "arch_prctl(0x3001 /* ARCH_??? */, 0)" },
	{ "rseq", A(0x7f133a751ae0, 0x20, 0, 0x53053053), NULL, "rseq(0x7f133a751ae0, 0x20, 0, 0x53053053)" },
	{ "set_robust_list", A(0x7faeddd70a20, 24), NULL, "set_robust_list(0x7faeddd70a20, 24)" },
	{ "exit_group", A(0), NULL, "exit_group(0)" },
	/* files */
	{ "lseek", A(3, -60ull, 1), NULL, "lseek(3, -60, SEEK_CUR)" },
	{ "lseek", A(13, 0, 9), NULL, "lseek(13, 0, 0x9 /* SEEK_??? */)" },
	{ "access", A(0x1000, 7), "/x", "access(\"/x\", R_OK|W_OK|X_OK)" },
	{ "access", A(0x1000, 0), "/x", "access(\"/x\", F_OK)" },
	{ "newfstatat", A(3, 0x1000, 0x7ffc0000, 0x1000), "", "newfstatat(3, \"\", 0x7ffc0000, AT_EMPTY_PATH)" },
	{ "statx", A(-100ull, 0x1000, 0x100, 0x7ff, 0), "x",
	  "statx(AT_FDCWD, \"x\", AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, NULL)" },
	{ "umask", A(022), NULL, "umask(022)" },
	{ "fchmodat", A(-100ull, 0x1000, 04711), "x", "fchmodat(AT_FDCWD, \"x\", 04711)" },
	{ "fchownat", A(-100ull, 0x1000, 0xffffffff, 0xffffffff, 0), "x", "fchownat(AT_FDCWD, \"x\", -1, -1, 0)" },
	{ "mknodat", A(-100ull, 0x1000, 010644, 0), "x", "mknodat(AT_FDCWD, \"x\", S_IFIFO|0644)" },
	{ "mknodat", A(-100ull, 0x1000, 020600, 0x103), "x", "mknodat(AT_FDCWD, \"x\", S_IFCHR|0600, makedev(0x1, 0x3))" },
	{ "fadvise64", A(0, 0, 0, 2), NULL, "fadvise64(0, 0, 0, POSIX_FADV_SEQUENTIAL)" },
	/* its name is no const char *: the kernel records no string for it */
	{ "umount2", A(0x1000, 10), NULL, "umount2(0x1000, MNT_DETACH|UMOUNT_NOFOLLOW)" },
	/* sockets */
	{ "socket", A(1, 02004001, 0), NULL, "socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0)" },
	{ "socket", A(2, 1, 0), NULL, "socket(AF_INET, SOCK_STREAM, IPPROTO_IP)" },
	{ "socket", A(10, 04001, 6), NULL, "socket(AF_INET6, SOCK_STREAM|SOCK_NONBLOCK, IPPROTO_TCP)" },
	{ "socket", A(16, 02000003, 0), NULL, "socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE)" },
	{ "socket", A(1234, 2, 0), NULL, "socket(0x4d2 /* AF_??? */, SOCK_DGRAM, 0)" },
	{ "setsockopt", A(23, 1, 7, 0x7ffd0000, 4), NULL, "setsockopt(23, SOL_SOCKET, SO_SNDBUF, 0x7ffd0000, 4)" },
	{ "sendto", A(28, 0x5000, 1, 0x4040, 0, 0), NULL, "sendto(28, 0x5000, 1, MSG_DONTWAIT|MSG_NOSIGNAL, NULL, 0)" },
	/* the rest */
	{ "futex", A(0x7f86f29baa4c, 129, 2147483647, 0, 0, 0), NULL,
	  "futex(0x7f86f29baa4c, FUTEX_WAKE_PRIVATE, 2147483647, NULL, NULL, 0)" },
	{ "futex", A(0x7f86f29baa4c, 0x189, 0, 0, 0, 0xffffffff), NULL,
	  "futex(0x7f86f29baa4c, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, NULL, NULL, 4294967295)" },
	{ "getrandom", A(0x5000, 8, 5), NULL, "getrandom(0x5000, 8, GRND_NONBLOCK|GRND_INSECURE)" },
	{ "clock_nanosleep", A(0, 1, 0x7ffd0000, 0), NULL, "clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, 0x7ffd0000, NULL)" },
	{ "eventfd2", A(0, 02004000), NULL, "eventfd2(0, EFD_CLOEXEC|EFD_NONBLOCK)" },
	{ "epoll_ctl", A(4, 2, 19, 0), NULL, "epoll_ctl(4, EPOLL_CTL_DEL, 19, NULL)" },
	{ "inotify_add_watch", A(20, 0x1000, 0x1000300), "/tmp/sd", "inotify_add_watch(20, \"/tmp/sd\", IN_CREATE|IN_DELETE|IN_ONLYDIR)" },
	{ "memfd_create", A(0x1000, 3), "pbt-memfd", "memfd_create(\"pbt-memfd\", MFD_CLOEXEC|MFD_ALLOW_SEALING)" },
	{ "timerfd_create", A(7, 02004000), NULL, "timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC|TFD_NONBLOCK)" },
	{ "rt_sigreturn", A(0), NULL, "rt_sigreturn()" },
};

static char *format(const char *name, const uint64_t *args, const char *str)
{
	struct sv_str s = { .name = "filename" };
	struct sv_call_fmt c = { .name = name, .nr_args = 6 };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		abort();
	memcpy(c.args, args, sizeof(c.args));
	if (str) {
		/* named as the module names it, which the table may not */
		s.value = (char *)str;
		c.strs = &s;
		c.nr_strs = 1;
	}
	sv_fmt_args(f, &c);
	fclose(f);
	return out;
}

/* "openat(dfd: AT_FDCWD, ...)" -> "openat(AT_FDCWD, ...)": a name is an
 * identifier and ": " after a "(" or ", ", outside quotes. */
static void strip_names(char *s)
{
	char *r = s, *w = s, *k;
	bool quoted = false, start = false;

	while (*r) {
		if (start) {
			for (k = r; (*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_'; k++)
				;
			if (k > r && k[0] == ':' && k[1] == ' ')
				r = k + 2;
		}
		if (*r == '"' && (r == s || r[-1] != '\\'))
			quoted = !quoted;
		start = !quoted && (*r == '(' || (*r == ' ' && w > s && w[-1] == ','));
		*w++ = *r++;
	}
	*w = 0;
}

/* Implemented: not marked "not implemented" in syscall_defines.txt. */
static bool implemented(const char *name)
{
	FILE *f = fopen("tracectl/syscall_defines.txt", "r");
	char line[1024], key[128];
	bool yes = true;

	if (!f)
		return true;
	snprintf(key, sizeof(key), "%s\t", name);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && strstr(line, "\tnot implemented"))
			yes = false;
	fclose(f);
	return yes;
}

static void test_table(void)
{
	static const uint64_t zero[6];
	unsigned int nr, named = 0, unnamed = 0, ni = 0;
	char first_bad[64] = "";

	for (nr = 0; nr < SV_NR_MAX; nr++) {
		const char *name = pbt_syscall_name(nr);
		char *out, fallback[80];

		if (!name)
			continue;
		out = format(name, zero, NULL);
		snprintf(fallback, sizeof(fallback), "%s(arg0: ", name);
		if (strncmp(out, fallback, strlen(fallback)))
			named++;
		else if (!implemented(name))
			ni++;
		else if (!unnamed++)
			snprintf(first_bad, sizeof(first_bad), "%s", name);
		free(out);
	}
	tap(named > 300 && !unnamed,
	    "every implemented syscall has named arguments (%u named, %u not implemented, %u without: %s)",
	    named, ni, unnamed, first_bad);
}

int main(void)
{
	static const uint64_t clone_tid[6] = { 0x1200011, 0, 0, 0x7f9a3186ba10, 0 };
	static const uint64_t clone_sig[6] = { 17 }, regs[6] = { 1, 2, 3, 4, 5, 6 };
	static const uint64_t zeros[6], set_fs[6] = { 0x1002, 0x10 };
	size_t i;
	char *out;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];

		out = format(w->name, w->args, w->str);
		strip_names(out);
		tap(!strcmp(out, w->strace), "%s as strace: %s%s%s", w->name, w->strace,
		    strcmp(out, w->strace) ? " (got " : "", strcmp(out, w->strace) ? out : "");
		if (strcmp(out, w->strace))
			printf("#   got %s)\n", out);
		free(out);
	}
	/* clone: strace names and reorders its arguments; ours are the
	 * kernel's, the TIDs and TLS only when the flags use them */
	out = format("clone", clone_tid, NULL);
	tap(!strcmp(out, "clone(clone_flags: CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, newsp: NULL, child_tidptr: 0x7f9a3186ba10)"),
	    "clone: flags with the exit signal, child_tidptr as CLONE_CHILD_SETTID asks (%s)", out);
	free(out);
	out = format("clone", clone_sig, NULL);
	tap(!strcmp(out, "clone(clone_flags: SIGCHLD, newsp: NULL)"), "clone: a signal alone (%s)", out);
	free(out);
	/* not implemented: the registers, as strace shows them */
	out = format("afs_syscall", regs, NULL);
	tap(!strcmp(out, "afs_syscall(arg0: 0x1, arg1: 0x2, arg2: 0x3, arg3: 0x4, arg4: 0x5, arg5: 0x6)"),
	    "a syscall the kernel does not implement: its registers in hex (%s)", out);
	free(out);
	/* the arch-defined ones carry the kernel's names */
	out = format("mmap", zeros, NULL);
	tap(!strncmp(out, "mmap(addr: NULL, len: 0, prot: PROT_NONE, flags: ", 49) && strstr(out, "fd: 0, off: 0)"),
	    "mmap's arguments named as arch/x86/kernel/sys_x86_64.c names them (%s)", out);
	free(out);
	out = format("arch_prctl", set_fs, NULL);
	tap(!strcmp(out, "arch_prctl(option: ARCH_SET_FS, arg2: 0x10)"), "arch_prctl named (%s)", out);
	free(out);
	test_table();
	tap(!sv_decode_unknown_arg(), "every argument the decoders name is in the table (%s)",
	    sv_decode_unknown_arg() ? sv_decode_unknown_arg() : "all are");
	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
