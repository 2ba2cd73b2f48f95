#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tracectl record streams by default, as trace-cmd, perf and lttng do: a
# recording whose events outgrow the kernel buffer keeps all of them. A
# burst of K getppid calls, then a child's FILL more on the same CPU (more
# than that CPU's share of the default 8 MiB buffer), inside a 6 s record
# with the issue's events and default settings: exactly K sys_enter id 110
# for the burst's pid, nothing lost, by Perfetto's schema and by the real
# trace_processor. The negative control is the flight recorder (--ring,
# a 2 MiB ring), which must lose the burst to overwrites and say so. Run in a guest with
# pbtrace.ko loaded (tools/check's main guest). Prints TAP.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
BURST=$HERE/build/burst
W=$(mktemp -d /tmp/record_stream.XXXXXX)
LOG=$W/traced.log
TRACED=
. "$HERE/tap.sh"
. "$HERE/traced_lib.sh"
. "$HERE/tp.sh"

K=20000
# ~36 bytes a getppid (sys_enter + sys_exit): 5 MiB on CPU 0, more than its
# share of the default 8 MiB buffer on 2 CPUs.
FILL=120000
GETPPID=110	# x86_64
EVENTS=(-e sched/sched_switch -e sched/sched_waking -e raw_syscalls/sys_enter
	-e raw_syscalls/sys_exit -e task/task_newtask)

traced_begin "$BURST"

# record NAME FLAGS...: a 6 s record with the burst inside it; the burst's
# pid in $W/NAME.pid, record's output in $W/NAME.rec, the file NAME.pftrace.
record() {
	local name=$1 f=$W/$1.pftrace rc=0
	shift
	tctl record -t 6s "${EVENTS[@]}" "$@" -n "$name" -o "$f" >"$W/$name.rec" 2>&1 &
	local rec=$!
	# tracectl says so once the kernel session has started.
	wait_for 150 grep -q "^recording '$name'" "$W/$name.rec" ||
		note "$name: not started after 15 s"
	"$BURST" "$K" "$FILL" >"$W/$name.burst"
	wait "$rec" || rc=$?
	sed -n 's/^pid=//p' "$W/$name.burst" >"$W/$name.pid"
	check "record $name: tracectl record exits 0 (exit $rc)" test "$rc" = 0 ||
		sed 's/^/#   /' "$W/$name.rec" | tr '\r' '\n' | tail -n 20
	decode "$f" || { not_ok "record $name: Perfetto's schema decodes the file"; sed 's/^/#   /' "$f.err"; }
}

# The sys_enter events of pid P with id ID in a decoded trace.
sys_enters() {
	awk -v p="$2" -v id="$3" '
		/^ *event \{/ { pid = ""; enter = 0 }
		/^ *pid: / { pid = $2 }
		/^ *sys_enter \{/ { enter = 1 }
		enter && /^ *id: / { if (pid == p && $2 == id) n++; enter = 0 }
		END { print n + 0 }' "$1"
}

# Events the kernel said it lost, from the file: ftrace_stats' per-CPU
# overrun + dropped_events, and bundles flagged lost_events.
lost_in_file() {
	awk '/^ *(overrun|dropped_events): / { n += $2 } /lost_events: true/ { n++ }
		END { print n + 0 }' "$1"
}

# -- streaming, the default --------------------------------------------------
record stream
f=$W/stream.pftrace
pid=$(<"$W/stream.pid")
got=$(sys_enters "$f.txt" "$pid" "$GETPPID")
check "default record: all $K getppid sys_enter of pid $pid are in the file (got $got)" \
	test "$got" = "$K"
lost=$(lost_in_file "$f.txt")
check "default record: nothing lost by the kernel's counters in the file (got $lost)" test "$lost" = 0
check "default record: tracectl's summary says nothing was lost" \
	grep -q 'loss: 0 bundles after lost events, 0 packets after dropped data' "$W/stream.rec"
# The progress line, once a second, before the stop: the file holds the
# burst while tracing (the flight recorder's stays at its header).
grown() { tr '\r' '\n' <"$1" | sed '/^stopped/q' | grep -c 'file [0-9.]* MiB'; }
check "default record: the progress line shows the file grown to MiB while tracing" \
	test "$(grown "$W/stream.rec")" -gt 0 || tr '\r' '\n' <"$W/stream.rec" | sed 's/^/#   /'

if tp_available; then
	tp_got=$(tp_value "$f" "select count(*) from slice s join thread_track tt on s.track_id = tt.id
		join thread t using (utid) where t.tid = $pid and s.name = 'sys_getppid'")
	check "default record: trace_processor has $K sys_getppid slices for tid $pid (got ${tp_got:-none})" \
		test "${tp_got:-x}" = "$K"
	bad=$(tp_bad_stats "$f")
	check "default record: no error/data_loss stats in trace_processor (${bad:-none})" test -z "$bad"
else
	ok "default record: trace_processor counts # SKIP $TP_WHY"
	ok "default record: trace_processor stats # SKIP $TP_WHY"
fi

# -- sys_enter carries the syscall's own arguments, no more ----------------------
# The referee is the kernel's syscall metadata in tracefs (the fields of
# syscalls/sys_enter_NAME after __syscall_nr, NAME from <asm/unistd.h>, or
# newNAME as the kernel calls uname and stat); a syscall tracefs does not
# describe keeps all six. Arch-specific syscalls have no prototype in the
# headers the module is built from (arch_prctl, rt_sigreturn): those keep
# all six too, which loses nothing; fewer than tracefs lists never passes.
UNISTD=$(printf '#include <asm/unistd.h>\n' | cc -dM -E -x c - 2>/dev/null)
expected_arity() {
	local name fmt
	name=$(awk -v nr="$1" '$1 == "#define" && $2 ~ /^__NR_/ && $3 == nr {
		print substr($2, 6); exit }' <<<"$UNISTD")
	fmt=/sys/kernel/tracing/events/syscalls/sys_enter_$name/format
	[[ -r $fmt ]] || fmt=/sys/kernel/tracing/events/syscalls/sys_enter_new$name/format
	if [[ -z $name || ! -r $fmt ]]; then
		echo 6
		return
	fi
	awk '/field:/ && !/common_|__syscall_nr/ { n++ } END { print n + 0 }' "$fmt"
}
# "id nargs" for every sys_enter in a decoded trace.
enter_arities() {
	awk '/^ *sys_enter \{/ { e = 1; n = 0; next }
		e && /^ *id: / { id = $2 }
		e && /^ *args: / { n++ }
		e && /^ *\}/ { print id, n; e = 0 }' "$1" | sort -u
}
if [[ -n $UNISTD && -d /sys/kernel/tracing/events/syscalls ]]; then
	bad= seen=0 whole=0 trimmed=0
	while read -r id n; do
		seen=$((seen + 1))
		want=$(expected_arity "$id")
		if [[ $n == "$want" ]]; then
			((n < 6)) && trimmed=$((trimmed + 1))
		elif ((n == 6 && want < 6)); then
			whole=$((whole + 1))
		else
			bad+=" $id:$n/$want"
		fi
	done < <(enter_arities "$W/stream.pftrace.txt")
	check "sys_enter: of $seen syscalls seen, $trimmed carry exactly tracefs's arguments, $whole all six, none fewer${bad:+ (id:got/want$bad)}" \
		test -z "$bad" -a "$trimmed" -gt 5
else
	ok "sys_enter arguments per syscall # SKIP no <asm/unistd.h> (cc) or no syscalls events in tracefs"
fi

# -- the flight recorder, the negative control ----------------------------------
# A smaller ring than the default, so that the fill overwrites the burst
# whatever the CPU count, and the file decodes fast.
record ring --ring -b 2048
f=$W/ring.pftrace
pid=$(<"$W/ring.pid")
got=$(sys_enters "$f.txt" "$pid" "$GETPPID")
check "--ring: the burst is overwritten by the fill on its CPU ($got of $K getppid left)" \
	test "$got" -lt "$K"
lost=$(lost_in_file "$f.txt")
check "--ring: the file counts what was overwritten ($lost)" test "$lost" -gt 0
check "--ring: the progress line shows no MiB before the stop (read at stop)" \
	test "$(grown "$W/ring.rec")" = 0
# The kernel's per-CPU overwrite counts, as traced wrote them at the end.
overrun=$(awk '/phase: END_OF_TRACE/ { e = 1 } e && /^ *overrun: / { n += $2 }
	/^packet \{/ { e = 0 } END { print n + 0 }' "$f.txt")
if tp_available; then
	bad=$(tp_bad_stats "$f" ftrace_cpu_has_data_loss)
	check "--ring: trace_processor reports no error stats beyond the overwrite (${bad:-none})" \
		test -z "$bad"
	has=$(tp_value "$f" "select count(*) from stats where name = 'ftrace_cpu_has_data_loss' and value > 0")
	tp_over=$(tp_value "$f" "select sum(value) from stats where name = 'ftrace_cpu_overrun_end'")
	check "--ring: trace_processor flags the data loss and its overrun is the kernel's ($tp_over of $overrun)" \
		test "${has:-0}" -gt 0 -a "${tp_over:-x}" = "$overrun"
else
	ok "--ring: trace_processor stats # SKIP $TP_WHY"
	ok "--ring: trace_processor overrun # SKIP $TP_WHY"
fi

echo "1..$N"
exit "$FAILED"
