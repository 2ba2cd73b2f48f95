#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Data-plane tests: run in a guest with pbtrace.ko loaded, e.g.
#   tools/vm -- selftests/pbtrace/dataplane_test.sh
# Records through the real path (genl session + /dev/pbtrace reader, by
# build/dp_record), decodes with protoc against Perfetto's own schema and
# compares with what the workload did (dp_check.py). Prints TAP.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
rec=$here/build/dp_record
tmp=$(mktemp -d /tmp/dataplane.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Workload sizes: N forks, K getppid, M pipe round trips; K_EXACT getppid
# calls into a buffer far too small for them.
N=${DP_FORKS:-10}
K=${DP_GETPPID:-500}
M=${DP_PINGPONG:-100}
K_EXACT=${DP_EXACT:-1000}
K_STREAM=${DP_STREAM:-2000}

nr=0
failed=0
ok() { nr=$((nr + 1)); echo "ok $nr - $1"; }
not_ok() { nr=$((nr + 1)); failed=$((failed + 1)); echo "not ok $nr - $1"; }
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }

# dp_check.py's PASS/FAIL lines as TAP (from a file: the guest has no
# /dev/fd for process substitution, and a pipe would lose the counters).
tap_checks() {
	local prefix=$1 line done=0
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "$prefix: ${line#PASS }" ;;
		FAIL\ *) not_ok "$prefix: ${line#FAIL }" ;;
		DONE) done=1 ;;
		*) echo "# $line" ;;
		esac
	done
	[ $done = 1 ] || not_ok "$prefix: dp_check.py did not finish (see above)"
}

decode() {
	protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
		< "$1" > "$2" 2> "$2.err"
}

echo "TAP version 13"
start=$(date +%s)
if [ ! -x "$rec" ]; then
	not_ok "dp_record missing: build it with 'make -C selftests/pbtrace'"
	exit 1
fi
if [ ! -e "$schema/perfetto_trace.proto" ]; then
	not_ok "no Perfetto schema in $schema: set PBTRACE_SCHEMA_DIR"
	exit 1
fi

section() { echo "# $(( $(date +%s) - start ))s: $1"; }

# The device: a char device only root may open.
mode=$(stat -c %a /dev/pbtrace 2>/dev/null)
[ "$mode" = 600 ] && [ -c /dev/pbtrace ]
result $? "/dev/pbtrace is a char device with mode 0600 (is: ${mode:-missing})"

# The mapping is read-only and stays so.
if "$rec" mmap > "$tmp/mmap" 2> "$tmp/mmap.err"; then
	grep -q '^mmap_write=mapped' "$tmp/mmap"
	result $((!$?)) "mmap with PROT_WRITE fails ($(grep mmap_write "$tmp/mmap"))"
	grep -q '^mprotect_write=allowed' "$tmp/mmap"
	result $((!$?)) "mprotect to PROT_WRITE fails ($(grep mprotect_write "$tmp/mmap"))"
	grep -q '^mmap_too_big=mapped' "$tmp/mmap"
	result $((!$?)) "mmap larger than the buffer fails"
else
	not_ok "dp_record mmap: $(cat "$tmp/mmap.err")"
fi

section workload
# A known workload, decoded with Perfetto's schema.
if "$rec" workload "$tmp/w.pftrace" "$N" "$K" "$M" > "$tmp/w.info" 2> "$tmp/w.err"; then
	if decode "$tmp/w.pftrace" "$tmp/w.txt"; then
		ok "workload: every packet decodes with Perfetto's schema"
		/usr/bin/python3 "$here/dp_check.py" workload "$tmp/w.txt" \
			"$tmp/w.info" > "$tmp/w.check" 2>&1
		tap_checks workload < "$tmp/w.check"
	else
		not_ok "workload: protoc cannot decode the file: $(head -c 300 "$tmp/w.txt.err")"
	fi
else
	not_ok "workload: dp_record failed: $(cat "$tmp/w.err")"
fi

section exact
# Exact loss accounting for both fill policies.
for policy in ring discard; do
	f=$tmp/$policy
	if "$rec" exact "$f.pftrace" "$policy" "$K_EXACT" > "$f.info" 2> "$f.err"; then
		if decode "$f.pftrace" "$f.txt"; then
			ok "$policy: every packet decodes with Perfetto's schema"
			/usr/bin/python3 "$here/dp_check.py" exact "$f.txt" \
				"$f.info" "$policy" > "$f.check" 2>&1
			tap_checks "$policy" < "$f.check"
		else
			not_ok "$policy: protoc cannot decode the file: $(head -c 300 "$f.txt.err")"
		fi
	else
		not_ok "$policy: dp_record failed: $(cat "$f.err")"
	fi
done

section stream
# The same with a reader draining while the writer overwrites or refuses.
for policy in ring discard; do
	f=$tmp/stream-$policy
	if "$rec" stream "$f.pftrace" "$policy" "$K_STREAM" > "$f.info" 2> "$f.err"; then
		if decode "$f.pftrace" "$f.txt"; then
			ok "stream $policy: every packet decodes with Perfetto's schema"
			/usr/bin/python3 "$here/dp_check.py" stream "$f.txt" \
				"$f.info" > "$f.check" 2>&1
			tap_checks "stream $policy" < "$f.check"
		else
			not_ok "stream $policy: protoc cannot decode the file: $(head -c 300 "$f.txt.err")"
		fi
	else
		not_ok "stream $policy: dp_record failed: $(cat "$f.err")"
	fi
done

section two
# Two sessions on the same events, each gets what it asked for.
if "$rec" two "$tmp/a.pftrace" "$tmp/b.pftrace" 300 > "$tmp/two.info" 2> "$tmp/two.err"; then
	if decode "$tmp/a.pftrace" "$tmp/a.txt" && decode "$tmp/b.pftrace" "$tmp/b.txt"; then
		ok "two sessions: both files decode with Perfetto's schema"
		/usr/bin/python3 "$here/dp_check.py" two "$tmp/a.txt" "$tmp/b.txt" \
			"$tmp/two.info" > "$tmp/two.check" 2>&1
		tap_checks "two sessions" < "$tmp/two.check"
	else
		not_ok "two sessions: protoc cannot decode: $(head -c 300 "$tmp"/[ab].txt.err)"
	fi
else
	not_ok "two sessions: dp_record failed: $(cat "$tmp/two.err")"
fi

section hotplug
# A CPU going offline mid-session keeps its data, readable at once.
if [ ! -w /sys/devices/system/cpu/cpu1/online ]; then
	not_ok "hotplug: cpu1 cannot go offline here (need 2 CPUs)"
elif "$rec" hotplug "$tmp/hp.pftrace" 200 > "$tmp/hp.info" 2> "$tmp/hp.err"; then
	if decode "$tmp/hp.pftrace" "$tmp/hp.txt"; then
		ok "hotplug: every packet decodes with Perfetto's schema"
		/usr/bin/python3 "$here/dp_check.py" hotplug "$tmp/hp.txt" \
			"$tmp/hp.info" > "$tmp/hp.check" 2>&1
		tap_checks hotplug < "$tmp/hp.check"
	else
		not_ok "hotplug: protoc cannot decode the file: $(head -c 300 "$tmp/hp.txt.err")"
	fi
else
	not_ok "hotplug: dp_record failed: $(cat "$tmp/hp.err")"
fi

section all
# Every event; field for field against the kernel's own ftrace, same run.
T=/sys/kernel/tracing
FT_EVENTS="sched/sched_process_fork sched/sched_process_exec task/task_rename
	sched/sched_process_exit raw_syscalls/sys_enter raw_syscalls/sys_exit
	sched/sched_switch block/block_rq_issue block/block_rq_complete"
ftrace() {
	local e
	for e in $FT_EVENTS; do echo "$1" > "$T/events/$e/enable"; done
	echo "$1" > "$T/tracing_on"
}
modprobe loop 2>/dev/null
truncate -s 4M "$tmp/disk"
loopdev=$(losetup -f --show "$tmp/disk" 2>/dev/null)
if [ -z "$loopdev" ] || [ ! -d "$T/events" ]; then
	not_ok "all events: need a loop device and tracefs at $T"
else
	echo 8192 > "$T/buffer_size_kb"
	echo > "$T/trace"
	ftrace 1
	"$rec" all "$tmp/all.pftrace" "/bin/true; dd if=/dev/zero of=$loopdev bs=4k count=16 oflag=direct 2>/dev/null; echo hi > $tmp/x; cat $tmp/x >/dev/null" \
		> "$tmp/all.info" 2> "$tmp/all.err"
	rc=$?
	ftrace 0
	cat "$T/trace" > "$tmp/ftrace.txt"
	echo > "$T/trace"
	losetup -d "$loopdev"
	if [ $rc != 0 ]; then
		not_ok "all events: dp_record failed: $(cat "$tmp/all.err")"
	elif decode "$tmp/all.pftrace" "$tmp/all.txt"; then
		ok "all events: every packet decodes with Perfetto's schema"
		/usr/bin/python3 "$here/dp_check.py" all "$tmp/all.txt" \
			"$tmp/all.info" "$tmp/ftrace.txt" > "$tmp/all.check" 2>&1
		tap_checks "all events" < "$tmp/all.check"
	else
		not_ok "all events: protoc cannot decode the file: $(head -c 300 "$tmp/all.txt.err")"
	fi
fi

section reattach
# Readers die and come back; bad requests are refused with a reason.
if "$rec" reattach > "$tmp/ra" 2> "$tmp/ra.err"; then
	grep -q '^reget=same$' "$tmp/ra"
	result $? "a chunk held by a reader that closed comes back unread"
	grep -q '^put_unheld=refused$' "$tmp/ra" && grep -q '^put_twice=refused$' "$tmp/ra"
	result $? "PUT_CHUNK of a chunk this fd does not hold is refused"
	grep -q '^put_held=accepted$' "$tmp/ra"
	result $? "PUT_CHUNK of a held chunk works"
	grep -q '^open_missing=no such session' "$tmp/ra"
	result $? "attach to a missing session says so ($(grep open_missing "$tmp/ra"))"
	grep -q '^open_bad_buffer=session .* has no buffer 3' "$tmp/ra"
	result $? "attach to a missing buffer says so ($(grep open_bad_buffer "$tmp/ra"))"
else
	not_ok "reattach: dp_record failed: $(cat "$tmp/ra.err")"
fi

# Only CAP_SYS_ADMIN (or CAP_PERFMON) may read trace data.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$rec" open 2>&1)
case $out in "open=permission denied: need CAP_SYS_ADMIN"*) r=0 ;; *) r=1 ;; esac
result $r "an unprivileged user cannot open /dev/pbtrace (${out#open=})"
out=$(setpriv --bounding-set=-sys_admin,-perfmon "$rec" open 2>&1)
case $out in "open=permission denied: need CAP_SYS_ADMIN"*) r=0 ;; *) r=1 ;; esac
result $r "root without CAP_SYS_ADMIN/CAP_PERFMON cannot open it (${out#open=})"

# Last: unloading with a started session stops it cleanly (tools/vm fails
# the run on any WARNING), then the module comes back for later tests.
if [ -n "${DP_NO_UNLOAD:-}" ]; then
	echo "# unload test skipped (DP_NO_UNLOAD)"
elif "$rec" leave > "$tmp/leave" 2>&1 && rmmod pbtrace; then
	ok "rmmod with a started session"
	out=$("$rec" open 2>&1)
	case $out in "open=pbtrace module not loaded"*) r=0 ;; *) r=1 ;; esac
	result $r "without the module the reader says so (${out#open=})"
	ko=${PBTRACE_KO:-$top/pbtrace.ko}
	if [ -e "$ko" ]; then insmod "$ko"; else modprobe pbtrace; fi
	result $? "module loads again after that"
else
	not_ok "rmmod with a started session: $(cat "$tmp/leave")"
fi

echo "# dataplane: $(( $(date +%s) - start ))s"
echo "1..$nr"
[ "$failed" = 0 ]
