#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tracectl trace's live view (issue 20): lines in time order across CPUs,
# none lost, and how long after its call each line arrives, in a guest
# with pbtrace.ko loaded (tools/check's main guest).
#
# live_work's two threads on CPU 0 and CPU 1 take turns: close(10000 + k)
# is the k-th call, each made after the one before it returned, with
# random idle gaps. 'tracectl trace -e close -- live_work' is piped into
# line_stamp, which stamps each line with CLOCK_BOOTTIME as it arrives;
# live_work logs the same clock just after each close returned. The
# referee of order is the workload's own causality: the lines must come
# exactly as close(10000), close(10001), ... (from two CPUs), each once,
# and nothing may be lost (the kernel's counters, tracectl's message).
# The time from a call's return to its line is a figure, never a pass or
# fail (p50/p99/max, "# FIG" lines), idle and with every CPU loaded (a
# spinning or a syscall-looping task on each), and with PBTRACE_LIVE_PERF=1 the
# same for 'perf trace -e close' in the same boot (tools/bench/live; its
# start-up under TCG is long, so make check leaves it out).
# PBTRACE_LIVE_ROUNDS (default 100) and PBTRACE_LIVE_GAP_MS (40) size it.
# Prints TAP.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
WORK=$HERE/build/live_work
STAMP=$HERE/build/line_stamp
W=$(mktemp -d /tmp/live_trace.XXXXXX)
LOG=$W/traced.log
TRACED=
LOAD=()
. "$HERE/tap.sh"
. "$HERE/traced_lib.sh"

ROUNDS=${PBTRACE_LIVE_ROUNDS:-100}
GAP_MS=${PBTRACE_LIVE_GAP_MS:-40}
PERF=${PBTRACE_LIVE_PERF:-0}
export PYTHONDONTWRITEBYTECODE=1

traced_begin "$WORK" "$STAMP"
trap 'load_stop; stop_traced; rm -rf "$W"' EXIT
NCPU=$(nproc)

# Every CPU busy, untraced: even ones spin, odd ones loop on syscalls
# (bash's redirection: openat, dup2, close), so the tracer's readers
# compete with them and every call goes through the probes' filter.
load_start() {
	local c
	for c in $(seq 0 $((NCPU - 1))); do
		if ((c % 2)); then
			taskset -c "$c" bash -c 'while :; do : </dev/null; done' &
		else
			taskset -c "$c" bash -c 'while :; do :; done' &
		fi
		LOAD+=($!)
	done
}
load_stop() {
	[ ${#LOAD[@]} -gt 0 ] || return 0
	kill "${LOAD[@]}" 2>/dev/null
	wait "${LOAD[@]}" 2>/dev/null
	LOAD=()
}

# live_check.py's lines as TAP; FIG lines as comments.
checks() {
	local line done=0
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "${line#PASS }" ;;
		FAIL\ *) not_ok "${line#FAIL }" ;;
		FIG\ *) echo "# $line" ;;
		DONE) done=1 ;;
		*) echo "$line" ;;
		esac
	done <"$1"
	[ $done = 1 ] || not_ok "live_check.py did not finish: $(head -c 300 "$1")"
}

# tracectl MODE: the live view of live_work, lines stamped on arrival.
run_tracectl() {
	local m=$1 rc
	tctl trace -e close -o "$W/$m.pftrace" -- "$WORK" "$W/$m.work" "$ROUNDS" "$GAP_MS" \
		2>"$W/$m.err" | "$STAMP" >"$W/$m.lines"
	rc=${PIPESTATUS[0]}
	check "$m: trace -e close -- live_work exits with its status 0 (got $rc)" test "$rc" = 0 ||
		sed 's/^/#   /' "$W/$m.err"
	check "$m: tracectl says it has the kernel's live watermark" \
		bash -c "! grep -q 'no live watermark' '$W/$m.err'"
	check "$m: nothing lost (no loss said)" bash -c "! grep -qi 'lost' '$W/$m.err'" ||
		sed 's/^/#   /' "$W/$m.err"
	python3 "$HERE/live_check.py" "tracectl $m" "$W/$m.lines" "$W/$m.work" "$ROUNDS" \
		--assert >"$W/$m.check" 2>&1
	checks "$W/$m.check"
}

# perf trace MODE: the same workload, its lines (stderr) stamped the same way.
run_perf() {
	local m=$1
	perf trace -e close -- "$WORK" "$W/perf-$m.work" "$ROUNDS" "$GAP_MS" 2>&1 |
		"$STAMP" >"$W/perf-$m.lines"
	python3 "$HERE/live_check.py" "perf-trace $m" "$W/perf-$m.lines" \
		"$W/perf-$m.work" "$ROUNDS" >"$W/perf-$m.check" 2>&1
	checks "$W/perf-$m.check"
}

[ "$NCPU" -gt 1 ] || note "one CPU: both threads on CPU 0, the order is one CPU's"
for mode in idle loaded; do
	[ "$mode" = loaded ] && load_start
	run_tracectl "$mode"
	if [ "$PERF" = 1 ] && command -v perf >/dev/null; then
		run_perf "$mode"
	elif [ "$PERF" = 1 ]; then
		note "perf trace: not installed (Debian's linux-perf)"
	fi
	load_stop
done

echo "1..$N"
exit $FAILED
