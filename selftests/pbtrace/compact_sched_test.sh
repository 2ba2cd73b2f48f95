#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compact_sched against the full encoding, on one workload recorded twice
# at the same time: two sessions with the same events, one with the
# default (FtraceEventBundle.compact_sched), one with
# ftrace_config.compact_sched.enabled: false. Every probe call writes both
# buffers with one timestamp, so over the window both were recording the
# traces must be equal event for event:
#  - decoded with Perfetto's schema and compact_sched expanded by
#    cs_expand.py (Perfetto's documented semantics, not pbtrace's code);
#  - loaded in the real trace_processor: the same sched, thread_state,
#    thread and syscall-slice counts in the window, no error or data_loss
#    stats, no compact switch or waking skipped or malformed.
# Also: the compact file is smaller per event. Run in a guest with
# pbtrace.ko loaded. Prints TAP.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
PINGPONG=$HERE/build/pingpong
W=$(mktemp -d /tmp/compact_sched.XXXXXX)
LOG=$W/traced.log
TRACED=
# Small enough for python3 under TCG to expand in seconds.
ROUNDS=${PBTRACE_CS_ROUNDS:-2000}
KEEP=${PBTRACE_CS_KEEP:-}	# a directory: the traces are copied there
. "$HERE/tap.sh"
. "$HERE/traced_lib.sh"
. "$HERE/tp.sh"

traced_begin "$PINGPONG"

# config FILE EXTRA: a streaming session of the bench's events.
config() {
	local e
	{
		echo 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }'
		echo 'data_sources { config { name: "linux.ftrace" ftrace_config {'
		for e in sched/sched_switch sched/sched_waking sched/sched_wakeup \
			 sched/sched_wakeup_new sched/sched_process_fork \
			 sched/sched_process_exec sched/sched_process_exit \
			 raw_syscalls/sys_enter raw_syscalls/sys_exit; do
			echo "  ftrace_events: \"$e\""
		done
		echo "  $2 } } }"
		echo 'write_into_file: true file_write_period_ms: 100 flush_period_ms: 1000'
	} >"$1"
}
config "$W/cs.pbtx" ''
config "$W/full.pbtx" 'compact_sched { enabled: false }'

cpus=$(nproc)
tctl start -c "$W/full.pbtx" -o "$W/full.pftrace" -n full >"$W/full.out" 2>&1
check "the full session starts" test $? = 0 || sed 's/^/#   /' "$W/full.out"
tctl start -c "$W/cs.pbtx" -o "$W/cs.pftrace" -n cs >"$W/cs.out" 2>&1
check "the compact session starts" test $? = 0 || sed 's/^/#   /' "$W/cs.out"
"$PINGPONG" "$ROUNDS" 0 $((cpus > 1 ? 1 : 0)) >"$W/pp.out" ||
	not_ok "pingpong runs"
tctl stop -n cs --wait >/dev/null 2>&1
tctl stop -n full --wait >/dev/null 2>&1
wait_done cs 300
wait_done full 300
for s in cs full; do
	decode "$W/$s.pftrace"
	check "$s: Perfetto's schema decodes the file" test ! -s "$W/$s.pftrace.err" ||
		sed 's/^/#   /' "$W/$s.pftrace.err" | head -n 5
done

[ -n "$KEEP" ] && cp "$W"/cs.pftrace* "$W"/full.pftrace* "$KEEP"/
python3 "$HERE/cs_expand.py" "$W/cs.pftrace.txt" "$W/full.pftrace.txt" >"$W/expand.out" 2>&1 ||
	echo "FAIL cs_expand.py: exit $?" >>"$W/expand.out"
while read -r verdict rest; do
	case $verdict in
	PASS) ok "$rest" ;;
	FAIL) not_ok "$rest" ;;
	window) read -r LO HI <<<"$rest" ;;
	\#) note "$rest" ;;
	*) not_ok "cs_expand.py: $verdict $rest" ;;
	esac
done <"$W/expand.out"

# Bytes per event over the whole files (each holds its own events).
evs() { grep -c '^    event {' "$1"; }
per_event() {
	local f=$1 n
	n=$(($(evs "$f.txt") + $(awk '/^      switch_timestamp:|^      waking_timestamp:/ {n++} END {print n + 0}' "$f.txt")))
	echo "$(stat -c %s "$f") $n" | awk '{printf "%.1f", $1 / $2}'
}
bc=$(per_event "$W/cs.pftrace")
bf=$(per_event "$W/full.pftrace")
note "bytes per event: compact $bc, full $bf"
check "the compact file takes fewer bytes per event ($bc) than the full one ($bf)" \
	awk -v a="$bc" -v b="$bf" 'BEGIN {exit !(a < b)}'

if tp_available && [ -n "${LO:-}" ]; then
	win="ts between $LO and $HI"
	for q in "sched: select count(*) from sched where $win" \
		 "thread_state: select count(*) from thread_state where $win" \
		 "threads: select count(distinct utid) from thread_state where $win" \
		 "sched threads: select count(distinct utid) from sched where $win" \
		 "syscall slices: select count(*) from slice where name like 'sys_%' and $win" \
		 "waker links: select count(*) from thread_state where waker_utid is not null and $win"; do
		name=${q%%: *}
		a=$(tp_value "$W/cs.pftrace" "${q#*: }")
		b=$(tp_value "$W/full.pftrace" "${q#*: }")
		check "trace_processor: the same $name count in the window (compact ${a:-none}, full ${b:-none})" \
			test -n "$a" -a "$a" = "$b" -a "${a:-0}" != 0
	done
	for s in cs full; do
		bad=$(tp_bad_stats "$W/$s.pftrace")
		check "trace_processor: $s: no error/data_loss stats (${bad:-none})" test -z "$bad"
	done
	skipped=$(tp_query "$W/cs.pftrace" "select name, value from stats where name like 'compact_sched%' and value > 0")
	check "trace_processor: no compact_sched event skipped or malformed (${skipped:-none})" test -z "$skipped"
else
	ok "trace_processor counts # SKIP ${TP_WHY:-no window}"
fi

echo "1..$N"
exit $FAILED
