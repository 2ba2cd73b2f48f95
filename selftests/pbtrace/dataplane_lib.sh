# SPDX-License-Identifier: GPL-2.0
#
# Shared by the data-plane tests (dataplane_test.sh, dataplane2_test.sh):
# TAP counters, protoc decode with Perfetto's schema, and "record with
# dp_record, decode, check with dp_check.py" in one call. Sourced, not run.

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
rec=$here/build/dp_record
tmp=$(mktemp -d /tmp/dataplane.XXXXXX)
# trace_processor, found by tp.sh, is dp_check.py's second reader.
. "$here/tp.sh"
if tp_available; then export DP_TP=$TP_SHELL; else export DP_TP= DP_TP_WHY=$TP_WHY; fi
export PYTHONDONTWRITEBYTECODE=1
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

nr=0
failed=0
ok() { nr=$((nr + 1)); echo "ok $nr - $1"; }
not_ok() { nr=$((nr + 1)); failed=$((failed + 1)); echo "not ok $nr - $1"; }
result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
section() { echo "# $(($(date +%s) - start))s: $1"; }

# dp_check.py's PASS/FAIL/SKIP lines as TAP (read from a file: the guest
# has no /dev/fd for process substitution, and a pipe would lose counters).
tap_checks() { tp_tap ok not_ok "$1"; }

decode() {
	protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
		< "$1" > "$2" 2> "$2.err"
}

# record_check TAG CHECK_MODE [CHECK_ARGS...]: run dp_record with the
# arguments in the array REC (writing $tmp/TAG.pftrace), decode the file,
# then dp_check.py CHECK_MODE decoded info CHECK_ARGS.
record_check() {
	local tag=$1 mode=$2 f=$tmp/$1
	shift 2
	if ! "$rec" "${REC[@]}" > "$f.info" 2> "$f.err"; then
		not_ok "$tag: dp_record failed: $(cat "$f.err")"
		return
	fi
	if ! decode "$f.pftrace" "$f.txt"; then
		not_ok "$tag: protoc cannot decode the file: $(head -c 300 "$f.txt.err")"
		return
	fi
	ok "$tag: every packet decodes with Perfetto's schema"
	/usr/bin/python3 "$here/dp_check.py" "$mode" "$f.txt" "$f.info" "$@" \
		> "$f.check" 2>&1
	tap_checks "$tag" < "$f.check"
}

preflight() {
	echo "TAP version 13"
	if [ ! -x "$rec" ]; then
		not_ok "dp_record missing: build it with 'make -C selftests/pbtrace'"
		exit 1
	fi
	if [ ! -e "$schema/perfetto_trace.proto" ]; then
		not_ok "no Perfetto schema in $schema: set PBTRACE_SCHEMA_DIR"
		exit 1
	fi
}

plan() {
	echo "# $(basename "$0"): $(($(date +%s) - start))s"
	echo "1..$nr"
	[ "$failed" = 0 ]
}

# all_events TAG [CMD]: every event the module has here, recorded while a
# known workload runs (an exec, a rename, 16 direct 4 KiB writes to a loop
# device, pipes, and CMD), then dp_check.py all: field for field against
# the kernel's own ftrace of the same run, and each kind through
# trace_processor (tp_events.py).
FT_EVENTS="sched/sched_process_fork sched/sched_process_exec task/task_rename
	sched/sched_process_exit raw_syscalls/sys_enter raw_syscalls/sys_exit
	sched/sched_switch block/block_rq_issue block/block_rq_complete"
all_events() {
	local tag=$1 cmd=${2:-} T=/sys/kernel/tracing loopdev rc
	modprobe loop 2>/dev/null
	truncate -s 4M "$tmp/disk"
	loopdev=$(losetup -f --show "$tmp/disk" 2>/dev/null)
	if [ -z "$loopdev" ] || [ ! -d "$T/events" ]; then
		not_ok "$tag: need a loop device and tracefs at $T"
		return
	fi
	echo 8192 > "$T/buffer_size_kb"
	echo > "$T/trace"
	all_ftrace 1
	"$rec" all "$tmp/all.pftrace" "/bin/true; dd if=/dev/zero of=$loopdev bs=4k count=16 oflag=direct 2>/dev/null; echo hi > $tmp/x; cat $tmp/x >/dev/null; $cmd" \
		> "$tmp/all.info" 2> "$tmp/all.err"
	rc=$?
	all_ftrace 0
	cat "$T/trace" > "$tmp/ftrace.txt"
	echo > "$T/trace"
	losetup -d "$loopdev"
	if [ $rc != 0 ]; then
		not_ok "$tag: dp_record failed: $(cat "$tmp/all.err")"
	elif decode "$tmp/all.pftrace" "$tmp/all.txt"; then
		ok "$tag: every packet decodes with Perfetto's schema"
		/usr/bin/python3 "$here/dp_check.py" all "$tmp/all.txt" \
			"$tmp/all.info" "$tmp/ftrace.txt" > "$tmp/all.check" 2>&1
		tap_checks "$tag" < "$tmp/all.check"
	else
		not_ok "$tag: protoc cannot decode the file: $(head -c 300 "$tmp/all.txt.err")"
	fi
}

all_ftrace() {
	local e
	for e in $FT_EVENTS; do echo "$1" > "/sys/kernel/tracing/events/$e/enable"; done
	echo "$1" > /sys/kernel/tracing/tracing_on
}
