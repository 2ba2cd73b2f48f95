#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# syscall_xlat.sh [CC] > syscall_xlat.h: the names of flags and enums in
# syscall arguments, for tracectl's syscall view, with their values as the
# system's headers define them: the kernel's uapi (<linux/*.h>, <asm/*.h>,
# i.e. include/uapi/asm-generic and arch/x86/include/uapi of the
# linux-libc-dev package) and, for what the uapi leaves to libc (AF_*,
# SOCK_*, MSG_*, F_OK..X_OK, MNT_*), glibc's copies of the kernel's values.
#
# Each table below is: its name, flags, enum or const (SV_NAME macros for
# the decoders' own tests: O_CREAT, F_SETFD, ...), the headers its names come
# from (",+H" adds a header that is only needed to compile them), the word
# strace prints for a value none of them has (X_???), then its names:
#  - a list of names: flags are printed in this order, as strace prints
#    them (composites such as O_SYNC before the bits they contain);
#  - or /ERE/ (all object-like macros of the headers whose name matches),
#    then !NAME or !/ERE/ to leave some out. A macro defined as another
#    macro's name (an alias: SIGPOLL, TIOCINQ) is left out, so one value has
#    one name; two names left with one value are an error, not a guess.
# A listed name the headers lack is skipped: older headers, fewer names.
# The values are the compiler's (cc -S of NAME as a constant): no program
# is run and no header is copied. Enum tables are sorted by value.
set -eu
CC=${1:-${CC:-cc}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tables() {
	cat <<'EOF'
prot flags linux/mman.h PROT_??? PROT_NONE PROT_READ PROT_WRITE PROT_EXEC PROT_SEM PROT_GROWSDOWN PROT_GROWSUP
map_type enum linux/mman.h MAP_??? MAP_SHARED MAP_PRIVATE MAP_SHARED_VALIDATE MAP_DROPPABLE
map_flags flags linux/mman.h MAP_??? MAP_FIXED MAP_ANONYMOUS MAP_32BIT MAP_NORESERVE MAP_POPULATE MAP_NONBLOCK MAP_GROWSDOWN MAP_DENYWRITE MAP_EXECUTABLE MAP_LOCKED MAP_STACK MAP_HUGETLB MAP_SYNC MAP_UNINITIALIZED MAP_FIXED_NOREPLACE MAP_ABOVE4G
mremap flags linux/mman.h MREMAP_??? MREMAP_MAYMOVE MREMAP_FIXED MREMAP_DONTUNMAP
msync flags linux/mman.h MS_??? MS_SYNC MS_ASYNC MS_INVALIDATE
mlock flags linux/mman.h MLOCK_??? MLOCK_ONFAULT
mlockall flags linux/mman.h MCL_??? MCL_CURRENT MCL_FUTURE MCL_ONFAULT
madvise enum linux/mman.h MADV_??? /^MADV_/ !/^MADV_HWPOISON$/ !/^MADV_SOFT_OFFLINE$/
access_mode enum asm/fcntl.h O_??? O_RDONLY O_WRONLY O_RDWR O_ACCMODE
open_flags flags asm/fcntl.h O_??? O_CREAT O_EXCL O_NOCTTY O_TRUNC O_APPEND O_NONBLOCK O_SYNC __O_SYNC O_DSYNC O_DIRECT O_LARGEFILE O_NOFOLLOW O_NOATIME O_CLOEXEC O_PATH O_TMPFILE __O_TMPFILE O_DIRECTORY FASYNC
fd_flags flags asm/fcntl.h FD_??? FD_CLOEXEC
fcntl_cmd enum linux/fcntl.h F_??? /^F_/ !/^F_(RDLCK|WRLCK|UNLCK|EXLCK|SHLCK|OWNER_.*|SEAL_.*|LINUX_SPECIFIC_BASE)$/ !/^F_(GETLK|SETLK|SETLKW)64$/
lock_type enum linux/fcntl.h F_??? F_RDLCK F_WRLCK F_UNLCK
seals flags linux/fcntl.h F_SEAL_??? F_SEAL_SEAL F_SEAL_SHRINK F_SEAL_GROW F_SEAL_WRITE F_SEAL_FUTURE_WRITE F_SEAL_EXEC
at_flags flags linux/fcntl.h AT_??? AT_SYMLINK_NOFOLLOW AT_REMOVEDIR AT_SYMLINK_FOLLOW AT_NO_AUTOMOUNT AT_EMPTY_PATH AT_RECURSIVE
statx_sync enum linux/fcntl.h AT_STATX_SYNC_??? AT_STATX_SYNC_AS_STAT AT_STATX_FORCE_SYNC AT_STATX_DONT_SYNC
statx_mask flags linux/stat.h STATX_??? STATX_ALL STATX_BASIC_STATS STATX_TYPE STATX_MODE STATX_NLINK STATX_UID STATX_GID STATX_ATIME STATX_MTIME STATX_CTIME STATX_INO STATX_SIZE STATX_BLOCKS STATX_BTIME STATX_MNT_ID STATX_DIOALIGN
access_flags flags unistd.h ?_OK F_OK R_OK W_OK X_OK
rename flags linux/fs.h RENAME_??? RENAME_NOREPLACE RENAME_EXCHANGE RENAME_WHITEOUT
whence enum linux/fs.h SEEK_??? /^SEEK_/ !SEEK_MAX
umount flags sys/mount.h MNT_??? MNT_FORCE MNT_DETACH MNT_EXPIRE UMOUNT_NOFOLLOW
clone_flags flags linux/sched.h CLONE_??? CLONE_VM CLONE_FS CLONE_FILES CLONE_SIGHAND CLONE_PIDFD CLONE_PTRACE CLONE_VFORK CLONE_PARENT CLONE_THREAD CLONE_NEWNS CLONE_SYSVSEM CLONE_SETTLS CLONE_PARENT_SETTID CLONE_CHILD_CLEARTID CLONE_UNTRACED CLONE_CHILD_SETTID CLONE_NEWCGROUP CLONE_NEWUTS CLONE_NEWIPC CLONE_NEWUSER CLONE_NEWPID CLONE_NEWNET CLONE_IO
unshare flags linux/sched.h CLONE_??? CLONE_NEWTIME CLONE_VM CLONE_FS CLONE_FILES CLONE_SIGHAND CLONE_THREAD CLONE_NEWNS CLONE_SYSVSEM CLONE_NEWCGROUP CLONE_NEWUTS CLONE_NEWIPC CLONE_NEWUSER CLONE_NEWPID CLONE_NEWNET
wait_options flags linux/wait.h W??? WNOHANG WEXITED WSTOPPED WCONTINUED WNOWAIT __WCLONE __WALL __WNOTHREAD
idtype enum linux/wait.h P_??? P_ALL P_PID P_PGID P_PIDFD
signals enum asm/signal.h SIG??? /^SIG[A-Z0-9]+$/ !SIGRTMAX !SIGSTKSZ !SIGUNUSED !SIGIOT
sigprocmask enum asm/signal.h SIG_??? SIG_BLOCK SIG_UNBLOCK SIG_SETMASK
family enum sys/socket.h AF_??? /^AF_/ !AF_MAX !AF_LOCAL !AF_FILE !AF_ROUTE
sock_type enum sys/socket.h SOCK_??? SOCK_STREAM SOCK_DGRAM SOCK_RAW SOCK_RDM SOCK_SEQPACKET SOCK_DCCP SOCK_PACKET
sock_flags flags sys/socket.h SOCK_??? SOCK_CLOEXEC SOCK_NONBLOCK
msg_flags flags sys/socket.h MSG_??? MSG_OOB MSG_PEEK MSG_DONTROUTE MSG_CTRUNC MSG_PROBE MSG_TRUNC MSG_DONTWAIT MSG_EOR MSG_WAITALL MSG_FIN MSG_SYN MSG_CONFIRM MSG_RST MSG_ERRQUEUE MSG_NOSIGNAL MSG_MORE MSG_WAITFORONE MSG_BATCH MSG_ZEROCOPY MSG_FASTOPEN MSG_CMSG_CLOEXEC
shutdown enum sys/socket.h SHUT_??? SHUT_RD SHUT_WR SHUT_RDWR
ipproto enum netinet/in.h IPPROTO_??? /^IPPROTO_/ !IPPROTO_MAX !IPPROTO_HOPOPTS
netlink enum linux/netlink.h NETLINK_??? NETLINK_ROUTE NETLINK_UNUSED NETLINK_USERSOCK NETLINK_FIREWALL NETLINK_SOCK_DIAG NETLINK_NFLOG NETLINK_XFRM NETLINK_SELINUX NETLINK_ISCSI NETLINK_AUDIT NETLINK_FIB_LOOKUP NETLINK_CONNECTOR NETLINK_NETFILTER NETLINK_IP6_FW NETLINK_DNRTMSG NETLINK_KOBJECT_UEVENT NETLINK_GENERIC NETLINK_SCSITRANSPORT NETLINK_ECRYPTFS NETLINK_RDMA NETLINK_CRYPTO NETLINK_SMC
sol enum sys/socket.h,+netinet/in.h SOL_??? SOL_IP SOL_SOCKET SOL_TCP SOL_UDP SOL_IPV6 SOL_ICMPV6 SOL_SCTP SOL_UDPLITE SOL_RAW SOL_PACKET SOL_NETLINK SOL_TIPC SOL_ALG SOL_TLS SOL_XDP
so enum asm/socket.h SO_??? /^SO_/ !/^SO_(TIMESTAMP|TIMESTAMPNS|TIMESTAMPING|RCVTIMEO|SNDTIMEO)$/ !SO_GET_FILTER !SO_DETACH_BPF !SO_ATTACH_BPF !SO_DETACH_REUSEPORT_BPF
rlimit enum linux/resource.h RLIMIT_??? /^RLIMIT_/ !RLIM_NLIMITS
rusage enum linux/resource.h RUSAGE_??? RUSAGE_SELF RUSAGE_CHILDREN RUSAGE_BOTH RUSAGE_THREAD
arch_prctl enum asm/prctl.h ARCH_??? /^ARCH_/
prctl enum linux/prctl.h PR_??? PR_SET_PDEATHSIG PR_GET_PDEATHSIG PR_GET_DUMPABLE PR_SET_DUMPABLE PR_GET_UNALIGN PR_SET_UNALIGN PR_GET_KEEPCAPS PR_SET_KEEPCAPS PR_GET_FPEMU PR_SET_FPEMU PR_GET_FPEXC PR_SET_FPEXC PR_GET_TIMING PR_SET_TIMING PR_SET_NAME PR_GET_NAME PR_GET_ENDIAN PR_SET_ENDIAN PR_GET_SECCOMP PR_SET_SECCOMP PR_CAPBSET_READ PR_CAPBSET_DROP PR_GET_TSC PR_SET_TSC PR_GET_SECUREBITS PR_SET_SECUREBITS PR_SET_TIMERSLACK PR_GET_TIMERSLACK PR_TASK_PERF_EVENTS_DISABLE PR_TASK_PERF_EVENTS_ENABLE PR_MCE_KILL PR_MCE_KILL_GET PR_SET_MM PR_SET_CHILD_SUBREAPER PR_GET_CHILD_SUBREAPER PR_SET_NO_NEW_PRIVS PR_GET_NO_NEW_PRIVS PR_GET_TID_ADDRESS PR_SET_THP_DISABLE PR_GET_THP_DISABLE PR_MPX_ENABLE_MANAGEMENT PR_MPX_DISABLE_MANAGEMENT PR_SET_FP_MODE PR_GET_FP_MODE PR_CAP_AMBIENT PR_SVE_SET_VL PR_SVE_GET_VL PR_GET_SPECULATION_CTRL PR_SET_SPECULATION_CTRL PR_PAC_RESET_KEYS PR_SET_TAGGED_ADDR_CTRL PR_GET_TAGGED_ADDR_CTRL PR_SET_IO_FLUSHER PR_GET_IO_FLUSHER PR_SET_SYSCALL_USER_DISPATCH PR_PAC_SET_ENABLED_KEYS PR_PAC_GET_ENABLED_KEYS PR_SCHED_CORE PR_SME_SET_VL PR_SME_GET_VL PR_SET_MDWE PR_GET_MDWE PR_SET_MEMORY_MERGE PR_GET_MEMORY_MERGE PR_GET_AUXV PR_SET_VMA PR_SET_PTRACER
futex_op enum linux/futex.h FUTEX_??? FUTEX_WAIT FUTEX_WAKE FUTEX_FD FUTEX_REQUEUE FUTEX_CMP_REQUEUE FUTEX_WAKE_OP FUTEX_LOCK_PI FUTEX_UNLOCK_PI FUTEX_TRYLOCK_PI FUTEX_WAIT_BITSET FUTEX_WAKE_BITSET FUTEX_WAIT_REQUEUE_PI FUTEX_CMP_REQUEUE_PI FUTEX_LOCK_PI2 FUTEX_WAIT_PRIVATE FUTEX_WAKE_PRIVATE FUTEX_REQUEUE_PRIVATE FUTEX_CMP_REQUEUE_PRIVATE FUTEX_WAKE_OP_PRIVATE FUTEX_LOCK_PI_PRIVATE FUTEX_UNLOCK_PI_PRIVATE FUTEX_TRYLOCK_PI_PRIVATE FUTEX_WAIT_BITSET_PRIVATE FUTEX_WAKE_BITSET_PRIVATE FUTEX_WAIT_REQUEUE_PI_PRIVATE FUTEX_CMP_REQUEUE_PI_PRIVATE FUTEX_LOCK_PI2_PRIVATE
clock enum linux/time.h CLOCK_??? /^CLOCK_/ !CLOCKS_MASK !CLOCKS_MONO
timer_flags flags linux/time.h TIMER_??? TIMER_ABSTIME
grnd flags linux/random.h GRND_??? GRND_NONBLOCK GRND_RANDOM GRND_INSECURE
epoll_ctl enum linux/eventpoll.h EPOLL_CTL_??? EPOLL_CTL_ADD EPOLL_CTL_DEL EPOLL_CTL_MOD
epoll_flags flags linux/eventpoll.h EPOLL_??? EPOLL_CLOEXEC
efd_flags flags sys/eventfd.h EFD_??? EFD_SEMAPHORE EFD_CLOEXEC EFD_NONBLOCK
sfd_flags flags linux/signalfd.h SFD_??? SFD_CLOEXEC SFD_NONBLOCK
tfd_flags flags sys/timerfd.h TFD_??? TFD_CLOEXEC TFD_NONBLOCK
tfd_set flags sys/timerfd.h TFD_TIMER_??? TFD_TIMER_ABSTIME TFD_TIMER_CANCEL_ON_SET
in_init flags linux/inotify.h IN_??? IN_NONBLOCK IN_CLOEXEC
in_mask flags linux/inotify.h IN_??? IN_ACCESS IN_MODIFY IN_ATTRIB IN_CLOSE_WRITE IN_CLOSE_NOWRITE IN_OPEN IN_MOVED_FROM IN_MOVED_TO IN_CREATE IN_DELETE IN_DELETE_SELF IN_MOVE_SELF IN_UNMOUNT IN_Q_OVERFLOW IN_IGNORED IN_ONLYDIR IN_DONT_FOLLOW IN_EXCL_UNLINK IN_MASK_CREATE IN_MASK_ADD IN_ISDIR IN_ONESHOT
mfd flags linux/memfd.h MFD_??? MFD_CLOEXEC MFD_ALLOW_SEALING MFD_HUGETLB MFD_NOEXEC_SEAL MFD_EXEC
fadvise enum linux/fadvise.h POSIX_FADV_??? /^POSIX_FADV_/
splice flags fcntl.h SPLICE_F_??? SPLICE_F_MOVE SPLICE_F_NONBLOCK SPLICE_F_MORE SPLICE_F_GIFT
flock flags asm/fcntl.h LOCK_??? LOCK_SH LOCK_EX LOCK_NB LOCK_UN LOCK_MAND LOCK_RW LOCK_READ LOCK_WRITE
falloc flags linux/falloc.h FALLOC_FL_??? FALLOC_FL_KEEP_SIZE FALLOC_FL_PUNCH_HOLE FALLOC_FL_NO_HIDE_STALE FALLOC_FL_COLLAPSE_RANGE FALLOC_FL_ZERO_RANGE FALLOC_FL_INSERT_RANGE FALLOC_FL_UNSHARE_RANGE
sync_range flags linux/fs.h SYNC_FILE_RANGE_??? SYNC_FILE_RANGE_WAIT_BEFORE SYNC_FILE_RANGE_WRITE SYNC_FILE_RANGE_WAIT_AFTER
rwf flags linux/fs.h RWF_??? RWF_HIPRI RWF_DSYNC RWF_SYNC RWF_NOWAIT RWF_APPEND
close_range flags linux/close_range.h CLOSE_RANGE_??? CLOSE_RANGE_UNSHARE CLOSE_RANGE_CLOEXEC
seccomp_op enum linux/seccomp.h SECCOMP_SET_MODE_??? SECCOMP_SET_MODE_STRICT SECCOMP_SET_MODE_FILTER SECCOMP_GET_ACTION_AVAIL SECCOMP_GET_NOTIF_SIZES
seccomp_flags flags linux/seccomp.h SECCOMP_FILTER_FLAG_??? SECCOMP_FILTER_FLAG_TSYNC SECCOMP_FILTER_FLAG_LOG SECCOMP_FILTER_FLAG_SPEC_ALLOW SECCOMP_FILTER_FLAG_NEW_LISTENER SECCOMP_FILTER_FLAG_TSYNC_ESRCH SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
perf_flags flags linux/perf_event.h PERF_FLAG_??? PERF_FLAG_FD_NO_GROUP PERF_FLAG_FD_OUTPUT PERF_FLAG_PID_CGROUP PERF_FLAG_FD_CLOEXEC
mode_type enum linux/stat.h S_IF??? S_IFREG S_IFSOCK S_IFLNK S_IFBLK S_IFDIR S_IFCHR S_IFIFO
c_futex const linux/futex.h - FUTEX_CLOCK_REALTIME
c_open const asm/fcntl.h - O_CREAT __O_TMPFILE O_ACCMODE
c_mman const linux/mman.h - MAP_TYPE MAP_HUGE_SHIFT MAP_HUGE_MASK
c_sched const linux/sched.h - CSIGNAL
c_fcntl const linux/fcntl.h - F_DUPFD F_DUPFD_CLOEXEC F_GETFD F_SETFD F_GETFL F_SETFL F_GETOWN F_SETOWN F_GETSIG F_SETSIG F_GETLEASE F_SETLEASE F_GETPIPE_SZ F_SETPIPE_SZ F_GET_SEALS F_ADD_SEALS F_GETLK F_SETLK F_SETLKW F_OFD_GETLK F_OFD_SETLK F_OFD_SETLKW F_GETOWN_EX F_SETOWN_EX F_NOTIFY AT_FDCWD AT_STATX_SYNC_TYPE
c_socket const sys/socket.h - AF_INET AF_INET6 AF_NETLINK SOL_SOCKET
c_stat const linux/stat.h - S_IFMT S_IFCHR S_IFBLK S_ISUID S_ISGID S_ISVTX
c_ioc const linux/ioctl.h - _IOC_NRSHIFT _IOC_TYPESHIFT _IOC_SIZESHIFT _IOC_DIRSHIFT _IOC_NRMASK _IOC_TYPEMASK _IOC_SIZEMASK _IOC_DIRMASK
tcxonc enum asm/termbits.h TC??? TCOOFF TCOON TCIOFF TCION
tcflsh enum asm/termbits.h TC??? TCIFLUSH TCOFLUSH TCIOFLUSH
c_ioctl const asm/ioctls.h - FIOCLEX FIONCLEX TIOCEXCL TIOCNXCL TIOCNOTTY TIOCCONS TIOCSBRK TIOCCBRK TIOCVHANGUP TCSBRK TCSBRKP TIOCSCTTY TCXONC TCFLSH
c_flags const linux/sched.h,+linux/mman.h - CLONE_PARENT_SETTID CLONE_PIDFD CLONE_SETTLS CLONE_CHILD_SETTID CLONE_CHILD_CLEARTID MREMAP_MAYMOVE MREMAP_FIXED
ioc_dir flags linux/ioctl.h _IOC_??? _IOC_NONE _IOC_READ _IOC_WRITE
ioctl enum asm/ioctls.h,linux/fs.h,linux/sockios.h,linux/random.h,+stddef.h,+asm/termbits.h,+linux/serial.h,+linux/blktrace_api.h,+linux/fiemap.h _IOC /^(TC|TIO|FIO|FS_IOC|FI[A-Z]|BLK|SIOC|RND)/ !/^TIOCPKT_/ !TIOCSER_TEMT !/^BLK.*(_SHIFT|_MASK)$/ !/^FILE_/ !/^SIOCDEVPRIVATE$|^SIOCPROTOPRIVATE$/ !/^FIO(SETOWN|GETOWN)$/
EOF
}

# names TABLE HEADERS SPEC...: the names a table takes, one per line.
names() {
	t=$1 hdrs=$2
	shift 2
	case $1 in
	/*) ;;
	*) printf '%s\n' "$@"; return ;;
	esac
	echo "#define _GNU_SOURCE" >"$tmp/dm.c"
	for h in $(echo "$hdrs" | tr ',' ' '); do
		case $h in +*) ;; *) echo "#include <$h>" >>"$tmp/dm.c" ;; esac
	done
	$CC -dM -E "$tmp/dm.c" >"$tmp/dm" || { echo "syscall_xlat.sh: $t: cannot preprocess $hdrs" >&2; exit 1; }
	awk -v specs="$*" '
	BEGIN {
		n = split(specs, s, " ")
		for (i = 1; i <= n; i++) {
			x = s[i]
			neg = substr(x, 1, 1) == "!"
			if (neg) x = substr(x, 2)
			if (x ~ /^\/.*\/$/) { x = substr(x, 2, length(x) - 2); re = 1 } else re = 0
			if (neg) { nex++; exre[nex] = re; ex[nex] = x } else { ninc++; inre[ninc] = re; inc[ninc] = x }
		}
	}
	$1 == "#define" && $2 !~ /\(/ {
		d = $0
		sub(/^#define[ \t]+[^ \t]+[ \t]*/, "", d)
		gsub(/[ \t()]/, "", d)
		def[$2] = d
		order[++m] = $2
	}
	END {
		for (j = 1; j <= m; j++) {
			nm = order[j]; ok = 0
			for (i = 1; i <= ninc; i++)
				if (inre[i] ? nm ~ inc[i] : nm == inc[i]) ok = 1
			for (i = 1; i <= nex; i++)
				if (exre[i] ? nm ~ ex[i] : nm == ex[i]) ok = 0
			if (!ok) continue
			# an alias: defined as the name of another macro it also takes
			a = def[nm]
			if (a ~ /^[A-Za-z_][A-Za-z_0-9]*$/ && a in def && a != nm) {
				al = 0
				for (i = 1; i <= ninc; i++)
					if (inre[i] ? a ~ inc[i] : a == inc[i]) al = 1
				if (al) continue
			}
			print nm
		}
	}' "$tmp/dm"
}

# values TABLE HEADERS < names > "hex16 name" lines (names the headers lack
# left out), in the names' order.
values() {
	t=$1 hdrs=$2
	echo "#define _GNU_SOURCE" >"$tmp/v.c"
	for h in $(echo "$hdrs" | tr ',' ' '); do
		echo "#include <${h#+}>" >>"$tmp/v.c"
	done
	i=0
	while read -r nm; do
		printf '#ifdef %s\nconst long long v_%d = (long long)(%s);\n#endif\n' "$nm" "$i" "$nm" >>"$tmp/v.c"
		echo "$i $nm" >>"$tmp/idx"
		i=$((i + 1))
	done
	if ! $CC -S -o "$tmp/v.s" "$tmp/v.c" 2>"$tmp/v.err"; then
		echo "syscall_xlat.sh: $t: the values of its names do not compile from $hdrs:" >&2
		sed 's/^/  /' "$tmp/v.err" | head -n 20 >&2
		exit 1
	fi
	awk 'FNR == NR { name[$1] = $2; next }
	     /^v_[0-9]+:/ { k = substr($1, 3); sub(/:$/, "", k); want = 1; next }
	     want && $1 == ".quad" { print k, $2, name[k]; want = 0 }
	     want && $1 == ".zero" { print k, 0, name[k]; want = 0 }' "$tmp/idx" "$tmp/v.s" |
	sort -n | while read -r k v nm; do
		printf '%016x %s\n' "$v" "$nm"
	done
	rm -f "$tmp/idx"
}

echo "/* generated by user/tracectl/syscall_xlat.sh from the system's uapi and libc headers */"
tables | while read -r t kind hdrs unknown specs; do
	# shellcheck disable=SC2086
	names "$t" "$hdrs" $specs >"$tmp/names"
	values "$t" "$hdrs" <"$tmp/names" >"$tmp/vals"
	[ "$kind" = enum ] && sort -o "$tmp/vals" "$tmp/vals"
	if [ "$kind" = const ]; then
		while read -r v nm; do
			printf '#define SV_%s 0x%sull\n' "$nm" "$v"
		done <"$tmp/vals"
		continue
	fi
	dup=$(cut -d' ' -f1 "$tmp/vals" | sort | uniq -d | head -n 1)
	if [ -n "$dup" ]; then
		echo "syscall_xlat.sh: $t: two names for 0x$dup: $(grep "^$dup " "$tmp/vals" | cut -d' ' -f2 | tr '\n' ' ')- leave one out" >&2
		exit 1
	fi
	[ -s "$tmp/vals" ] || { echo "syscall_xlat.sh: $t: no names from $hdrs" >&2; exit 1; }
	echo "static const struct sv_xlat xlat_${t}_v[] = {"
	while read -r v nm; do
		printf '\t{ 0x%sull, "%s" },\n' "$v" "$nm"
	done <"$tmp/vals"
	echo "};"
	printf 'static const struct sv_xlat_table xlat_%s = { xlat_%s_v, %d, %s, "%s" };\n' \
		"$t" "$t" "$(wc -l <"$tmp/vals")" "$( [ "$kind" = flags ] && echo true || echo false)" "$unknown"
done
