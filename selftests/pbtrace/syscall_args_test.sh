#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Syscalls as strace -f sees them, in the kernel: a pid filter that follows
# forks and string arguments read in the probe. In a guest with pbtrace.ko
# loaded (tools/vm -- selftests/pbtrace/syscall_args_test.sh), prints TAP.
#
# 1. follow: dp_record starts sh -c "sysargs tree 3 7" as the filter's only
#    pid with follow_forks; the command's processes, threads and
#    grandchildren must all be in the file (by its own fork events), each
#    with exactly its 7 getppid, and a getppid loop running outside the
#    tree all along must not be; every task's openat carries its path.
#    Then the same without follow_forks: only the root, a negative control.
# 2. strings: sysargs strings opens paths of 256 and 300 bytes, an
#    unreadable pointer, one across a page boundary and one ending at an
#    unmapped page: whole, cut at 256 and marked, the pointer's value,
#    whole, whole.
# Both decoded with Perfetto's schema; trace_processor must list each
# sys_enter_openat in ftrace_event with its filename as an arg.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
rec=$here/build/dp_record
work=$here/build/sysargs
tmp=$(mktemp -d /tmp/sysargs.XXXXXX)
. "$here/tap.sh"
. "$here/tp.sh"
export PYTHONDONTWRITEBYTECODE=1
spin=
trap '[[ -n $spin ]] && kill $spin 2>/dev/null; rm -rf "$tmp"' EXIT
EVENTS=raw_syscalls/sys_enter,raw_syscalls/sys_exit,sched/sched_process_fork

echo "TAP version 13"
decode() {
	protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
		< "$1" > "$2" 2> "$2.err"
}

# tp_openats FILE OUT: trace_processor's sys_enter_openat rows, or SKIP.
tp_openats() {
	if ! tp_available; then
		echo "SKIP $TP_WHY" > "$2"
		return
	fi
	tp_query "$1" "select e.ts, t.tid, a.display_value from ftrace_event e
		join thread t using (utid) join args a using (arg_set_id)
		where e.name = 'sys_enter_openat' and a.key = 'filename'" > "$2" ||
		echo "SKIP trace_processor failed on $1" > "$2"
}

checks() { tp_tap ok not_ok "$1" < "$2"; }

"$work" spin 60 > "$tmp/spin.out" &
spin=$!
sleep 0.2

# 1. follow
if ! "$rec" follow "$tmp/f.pftrace" "$EVENTS" \
	"$work tree 3 7 > $tmp/tree.out" > "$tmp/f.info" 2> "$tmp/f.err"; then
	not_ok "follow: dp_record failed: $(cat "$tmp/f.err")"
elif ! decode "$tmp/f.pftrace" "$tmp/f.txt"; then
	not_ok "follow: protoc cannot decode the file: $(head -c 300 "$tmp/f.txt.err")"
else
	ok "follow: the file decodes with Perfetto's schema"
	tp_openats "$tmp/f.pftrace" "$tmp/f.tp"
	/usr/bin/python3 "$here/sysargs_check.py" follow "$tmp/f.txt" "$tmp/f.info" \
		"$tmp/tree.out" "$spin" 7 "$tmp/f.tp" > "$tmp/f.check" 2>&1
	checks follow "$tmp/f.check"
fi

# The negative control: DP_NO_FOLLOW=1 makes dp_record leave follow_forks
# off; then only the root (sh, then what it execs) may be in the file.
if DP_NO_FOLLOW=1 "$rec" follow "$tmp/n.pftrace" "$EVENTS" \
	"$work tree 3 7 > $tmp/ntree.out" > "$tmp/n.info" 2> "$tmp/n.err" &&
	decode "$tmp/n.pftrace" "$tmp/n.txt"; then
	root=$(sed -n 's/^root_pid=//p' "$tmp/n.info")
	others=$(grep -E '^ +pid: ' "$tmp/n.txt" | awk '{print $2}' | sort -u |
		grep -vx "$root" | wc -l)
	if ((others == 0)) && grep -q "pid: $root" "$tmp/n.txt"; then
		ok "follow: without follow_forks only the root pid $root is recorded"
	else
		not_ok "follow: without follow_forks, $others other pids recorded"
	fi
else
	not_ok "follow: negative control failed: $(cat "$tmp/n.err" "$tmp/n.txt.err" 2>/dev/null | head -c 300)"
fi

# 2. strings
if ! "$rec" follow "$tmp/s.pftrace" "$EVENTS" "$work strings > $tmp/strings.out" \
	> "$tmp/s.info" 2> "$tmp/s.err"; then
	not_ok "strings: dp_record failed: $(cat "$tmp/s.err")"
elif ! decode "$tmp/s.pftrace" "$tmp/s.txt"; then
	not_ok "strings: protoc cannot decode the file: $(head -c 300 "$tmp/s.txt.err")"
else
	ok "strings: the file decodes with Perfetto's schema"
	tp_openats "$tmp/s.pftrace" "$tmp/s.tp"
	/usr/bin/python3 "$here/sysargs_check.py" strings "$tmp/s.txt" "$tmp/s.info" \
		"$tmp/strings.out" "$tmp/s.tp" > "$tmp/s.check" 2>&1
	checks strings "$tmp/s.check"
fi

echo "1..$N"
exit $FAILED
