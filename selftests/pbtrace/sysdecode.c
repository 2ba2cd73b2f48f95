// SPDX-License-Identifier: GPL-2.0
/*
 * sysdecode DIR: one process making calls whose arguments exercise every
 * decoder of tracectl's syscall view (flags, enums, signals, modes, file
 * descriptors, ioctl requests), each through syscall(2) with fixed values,
 * so that strace and tracectl see the same calls with the same arguments.
 * syscall_decode_test.sh runs it under both and compares the words of
 * every argument. Values no name has (an unknown fcntl command, family,
 * ioctl, flag bits) are in it too: strace's spelling of those is part of
 * what is compared. Errors are expected and ignored (EINVAL, ENOTTY, ...):
 * what matters is what was asked. Files go into DIR.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/memfd.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S(...) syscall(__VA_ARGS__)

static char path[4][512];

static void on_signal(int sig)
{
	(void)sig;
}

static void memory(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m;

	m = (char *)S(SYS_mmap, 0, 4 * page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	S(SYS_mprotect, m, page, PROT_READ | PROT_EXEC);
	S(SYS_mprotect, m + page, page, PROT_NONE);
	S(SYS_madvise, m, page, MADV_DONTNEED);
	S(SYS_msync, m, page, MS_SYNC | MS_INVALIDATE);
	S(SYS_mremap, m, 4 * page, 8 * page, MREMAP_MAYMOVE);
	S(SYS_mmap, 0, page, PROT_READ, MAP_SHARED | MAP_ANONYMOUS |
	  MAP_NORESERVE | MAP_POPULATE, -1, 0);
	S(SYS_mmap, 0, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	  MAP_ANONYMOUS | MAP_STACK | MAP_GROWSDOWN, -1, 0);
	S(SYS_mmap, 0, 1 << 21, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	  MAP_ANONYMOUS | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT), -1, 0);
	S(SYS_mmap, 0, page, PROT_READ | 0x40, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	S(SYS_mmap, 0x10000, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
	  MAP_FIXED_NOREPLACE, -1, 0);
	S(SYS_mlock2, m, page, MLOCK_ONFAULT);
	S(SYS_munlock, m, page);
	S(SYS_memfd_create, "pbt-memfd", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	S(SYS_brk, 0);
}

static void files(void)
{
	int fd, fd2, p[2];

	fd = S(SYS_openat, AT_FDCWD, path[0], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0640);
	S(SYS_openat, AT_FDCWD, path[0], O_RDWR | O_CREAT | O_EXCL, 0);
	S(SYS_openat, AT_FDCWD, path[3], O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	  O_NONBLOCK | O_CLOEXEC);
	S(SYS_openat, AT_FDCWD, path[3], O_TMPFILE | O_RDWR, 0600);
	S(SYS_openat, AT_FDCWD, path[0], O_PATH | O_NOCTTY);
	S(SYS_openat, AT_FDCWD, path[0], O_RDONLY | O_DSYNC | O_NOATIME);
	S(SYS_openat, AT_FDCWD, path[0], O_WRONLY | O_SYNC | 0x40000000);
	S(SYS_open, path[0], O_RDONLY | O_LARGEFILE);
	S(SYS_creat, path[1], 0755);
	fd2 = S(SYS_openat, AT_FDCWD, path[0], O_RDWR);
	S(SYS_fcntl, fd2, F_GETFD);
	S(SYS_fcntl, fd2, F_SETFD, FD_CLOEXEC);
	S(SYS_fcntl, fd2, F_GETFL);
	S(SYS_fcntl, fd2, F_SETFL, O_NONBLOCK | O_APPEND);
	S(SYS_fcntl, fd2, F_DUPFD_CLOEXEC, 10);
	S(SYS_fcntl, fd2, F_SETSIG, SIGUSR1);
	S(SYS_fcntl, fd2, F_SETLEASE, F_RDLCK);
	S(SYS_fcntl, fd2, 0x4242, 7);
	S(SYS_flock, fd2, LOCK_EX | LOCK_NB);
	S(SYS_lseek, fd2, 0, SEEK_SET);
	S(SYS_lseek, fd2, -1L, SEEK_END);
	S(SYS_lseek, fd2, 0, SEEK_DATA);
	S(SYS_lseek, fd2, 0, 9);
	S(SYS_fadvise64, fd2, 0, 4096, POSIX_FADV_SEQUENTIAL);
	S(SYS_fallocate, fd2, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 0, 4096);
	S(SYS_ioctl, fd2, TCGETS, 0);
	S(SYS_ioctl, fd2, FIOCLEX);
	S(SYS_ioctl, fd2, _IOR(0xfe, 0x42, int), 0);
	S(SYS_access, path[0], F_OK);
	S(SYS_access, path[0], R_OK | W_OK | X_OK);
	S(SYS_faccessat, AT_FDCWD, path[0], W_OK);
	S(SYS_newfstatat, AT_FDCWD, path[0], 0, AT_SYMLINK_NOFOLLOW);
	S(SYS_statx, AT_FDCWD, path[0], AT_STATX_SYNC_AS_STAT | AT_SYMLINK_NOFOLLOW,
	  STATX_BASIC_STATS, 0);
	S(SYS_statx, fd2, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MODE | STATX_SIZE, 0);
	S(SYS_umask, 022);
	S(SYS_mkdirat, AT_FDCWD, path[2], 0750);
	S(SYS_unlinkat, AT_FDCWD, path[2], AT_REMOVEDIR);
	S(SYS_fchmodat, AT_FDCWD, path[1], 04711);
	S(SYS_fchownat, AT_FDCWD, path[1], -1, -1, 0);
	S(SYS_mknodat, AT_FDCWD, path[2], S_IFIFO | 0644, 0);
	S(SYS_renameat2, AT_FDCWD, path[2], AT_FDCWD, path[1], RENAME_NOREPLACE);
	S(SYS_unlinkat, AT_FDCWD, path[2], 0);
	S(SYS_pipe2, p, O_CLOEXEC | O_NONBLOCK);
	S(SYS_ioctl, p[0], FIONREAD, 0);
	S(SYS_fcntl, p[0], F_GETPIPE_SZ);
	S(SYS_fcntl, p[0], F_SETPIPE_SZ, 65536);
	S(SYS_dup3, p[0], 40, O_CLOEXEC);
	S(SYS_pipe2, p, 0);
	S(SYS_close, fd);
	S(SYS_umount2, path[3], MNT_DETACH | UMOUNT_NOFOLLOW);
}

static void fds(void)
{
	int ep = S(SYS_epoll_create1, EPOLL_CLOEXEC);
	int ev = S(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK);
	int in = S(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	struct epoll_event e = { .events = EPOLLIN };
	sigset_t set;

	S(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, ev, &e);
	S(SYS_epoll_ctl, ep, EPOLL_CTL_DEL, ev, 0);
	S(SYS_inotify_add_watch, in, path[3], IN_CREATE | IN_DELETE | IN_ONLYDIR);
	sigemptyset(&set);
	S(SYS_signalfd4, -1, &set, 8, SFD_CLOEXEC | SFD_NONBLOCK);
	S(SYS_timerfd_create, CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	S(SYS_getrandom, path[3], 8, GRND_NONBLOCK);
	S(SYS_getrandom, path[3], 8, GRND_NONBLOCK | GRND_INSECURE);
}

static void sockets(void)
{
	int s, sv[2];

	s = S(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	S(SYS_setsockopt, s, SOL_SOCKET, SO_SNDBUF, &sv[0], sizeof(int));
	S(SYS_shutdown, s, SHUT_RDWR);
	S(SYS_socket, AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	S(SYS_socket, AF_INET, SOCK_STREAM, 0);
	S(SYS_socket, AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP);
	S(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	S(SYS_socket, 1234, SOCK_DGRAM, 0);
	S(SYS_socketpair, AF_UNIX, SOCK_SEQPACKET, 0, sv);
	S(SYS_sendto, sv[0], "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL, 0, 0);
	S(SYS_recvfrom, sv[1], path[3], 1, MSG_PEEK | MSG_TRUNC, 0, 0);
}

static void processes(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t set = 1ull << (SIGUSR2 - 1);
	struct rlimit64 { uint64_t cur, max; } rl;
	struct timespec ts = { 0, 0 };
	uint32_t word = 0;
	unsigned long fs;
	long pid;
	int st;

	/* libc's: the kernel needs its SA_RESTORER to return from a handler */
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGRTMIN + 2, &sa, NULL);
	S(SYS_rt_sigprocmask, SIG_BLOCK, &set, 0, 8);
	S(SYS_rt_sigprocmask, SIG_SETMASK, 0, &set, 8);
	S(SYS_kill, getpid(), 0);
	S(SYS_kill, getpid(), SIGCHLD);
	S(SYS_kill, getpid(), SIGUSR1);
	S(SYS_tgkill, getpid(), S(SYS_gettid), SIGRTMIN + 2);
	S(SYS_kill, -1234567, SIGKILL);
	S(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, &rl);
	S(SYS_getrlimit, RLIMIT_STACK, &rl);
	S(SYS_getrusage, RUSAGE_CHILDREN, 0);
	S(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &fs);
	S(SYS_arch_prctl, 0x3001, 0);
	S(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	S(SYS_futex, &word, FUTEX_WAKE, 1, 0, 0, 0);
	S(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	S(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &ts, 0);
	S(SYS_clock_getres, CLOCK_BOOTTIME, &ts);
	/* children: the stack is copied, not shared; each exits at once */
	pid = S(SYS_clone, CLONE_FS | CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (!pid)
		S(SYS_exit_group, 0);
	S(SYS_wait4, pid, &st, 0, 0);
	pid = S(SYS_clone, CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGUSR2, 0, 0, &word, 0);
	if (!pid)
		S(SYS_exit_group, 3);
	S(SYS_wait4, pid, &st, __WALL, 0);
	S(SYS_wait4, -1, 0, WNOHANG | WUNTRACED | WCONTINUED, 0);
	S(SYS_waitid, P_ALL, 0, 0, WEXITED | WNOHANG, 0);
	S(SYS_unshare, 0x7fffffff00000000ul);
}

int main(int argc, char **argv)
{
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: sysdecode DIR\n");
		return 2;
	}
	for (i = 0; i < 3; i++)
		snprintf(path[i], sizeof(path[i]), "%s/pbt-decode-%d", argv[1], i);
	snprintf(path[3], sizeof(path[3]), "%s", argv[1]);
	memory();
	files();
	fds();
	sockets();
	processes();
	return 0;
}
