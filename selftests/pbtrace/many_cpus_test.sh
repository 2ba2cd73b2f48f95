#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --maxcpus 240
#
# A large host's CPU ids on 2 vCPUs (TAP): QEMU's -smp 2,maxcpus=240 gives
# 238 hot-pluggable CPUs, so nr_cpu_ids is 240, and every buffer keeps
# counters for each possible CPU. A session of 4 buffers (16 MiB each: 2
# chunks per CPU id) has 960 per-CPU stats, 88 KiB: more than one netlink
# attribute (64 KiB) can hold. tracectl status must show every CPU's
# numbers as the kernel counts them (session_counters, libnl of its own),
# and the trace_stats and ftrace_stats traced writes (from the buffers'
# mapping) must equal them too. A kernel that says it allows no hotplug
# CPUs (6.12's x86 topology code ignores QEMU's) is skipped.
#   tools/vm --maxcpus 240 -- selftests/pbtrace/many_cpus_test.sh

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
COUNTERS=$TOP/selftests/pbtrace/build/session_counters
W=$(mktemp -d /tmp/many_cpus.XXXXXX)
LOG=$W/traced.log
TRACED=
. "$TOP/selftests/pbtrace/tap.sh"
. "$TOP/selftests/pbtrace/traced_lib.sh"
traced_begin "$U/traced" "$COUNTERS"

WANT=240
POSSIBLE=$(( $(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1 ))
if [ "$POSSIBLE" -lt "$WANT" ] && dmesg | grep -q "plus 0 hotplug CPUs"; then
	echo "1..0 # SKIP this kernel allows no hot-pluggable CPUs: $(dmesg | grep -o 'Allowing.*' | head -n 1)"
	exit 0
fi
check "the guest has $WANT possible CPUs ($POSSIBLE; boot with tools/vm --maxcpus $WANT)" \
	test "$POSSIBLE" -eq "$WANT" || { echo "1..$N"; exit 1; }

c=$W/many.pbtx f=$W/many.pftrace k=$W/many.k st=$W/many.status
{
	for b in 0 1 2 3; do echo 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }'; done
	b=0
	for ev in sched/sched_switch sched/sched_wakeup sched/sched_process_fork sched/sched_waking; do
		echo "data_sources { config { name: \"linux.ftrace\" target_buffer: $b ftrace_config { ftrace_events: \"$ev\" } } }"
		b=$((b + 1))
	done
	echo 'unique_session_name: "many"'
} >"$c"
tctl start -c "$c" -o "$f" >"$W/start.out" 2>&1
check "a 4-buffer session starts (exit $?)" test $? -eq 0 || {
	sed 's/^/#   /' "$W/start.out"; echo "1..$N"; exit 1; }
wait_for 100 grep -q "(many): recording to" "$LOG"
timeout 3 bash -c 'while :; do sleep 0.01; done'

# Counters at stop, with traced paused so the session is still there.
kill -STOP "$TRACED"
tctl stop -n many >/dev/null 2>&1
"$COUNTERS" many >"$k" 2>"$W/counters.err"
check "session_counters reads the stopped session (exit $?)" test $? -eq 0 ||
	sed 's/^/#   /' "$W/counters.err"
tctl status >"$st" 2>"$W/status.err"
check "tracectl status exits 0 ($?)" test $? -eq 0 || sed 's/^/#   /' "$W/status.err"
kill -CONT "$TRACED"

ncpu=$(awk '$1 == "cpu"' "$k" | wc -l)
check "the kernel counts $((4 * WANT)) CPUs' stats, 4 x $WANT ($ncpu)" test "$ncpu" -eq $((4 * WANT))
nbuf=$(grep -c '^  buffer [0-9]*:' "$st")
check "tracectl status: 4 buffers ($nbuf)" test "$nbuf" -eq 4
# "cpu B N events E" from status, in the kernel's order: buffer by buffer.
awk '/^  buffer [0-9]*:/ {b = $2 + 0} /^    cpu / {print "cpu", b, $2, "events", $3}' "$st" >"$W/st.cpus"
awk '$1 == "cpu" {for (i = 4; i < NF; i += 2) if ($i == "events_written") print "cpu", $2, $3, "events", $(i + 1)}' \
	"$k" >"$W/k.cpus"
check "tracectl status: every CPU of every buffer ($(wc -l <"$W/st.cpus") lines)" \
	test "$(wc -l <"$W/st.cpus")" -eq $((4 * WANT))
check "tracectl status: each CPU's events_written == the kernel's" cmp -s "$W/st.cpus" "$W/k.cpus" ||
	diff "$W/k.cpus" "$W/st.cpus" | head -5 | sed 's/^/#   /'
ev=$(awk '$1 == "cpu" {s += $5} END {print s + 0}' "$W/k.cpus")
check "some events were counted ($ev)" test "$ev" -gt 0

wait_done many 300
check "the file decodes with Perfetto's schema" decode "$f"
# buffer B's FIELD summed over CPUs, from session_counters' "buffer" line.
# 0 if the kernel did not say (a buffer missing from its answer).
kbuf() { awk -v b="$1" -v f="$2" '$1 == "buffer" && $2 == b {
	for (i = 3; i < NF; i += 2) if ($i == f) v = $(i + 1) } END {print v + 0}' "$k"; }
section trace_stats "$f.txt" >"$W/ts"
# One line per buffer_stats: its fields that are final at stop.
awk '/^    buffer_stats {/ {b = 1; l = ""} b && /^      [a-z_]+: / {v[$1] = $2}
	b && /^    }/ {print v["bytes_written:"], v["chunks_written:"], v["chunks_overwritten:"],
		v["chunks_discarded:"], v["trace_writer_packet_loss:"]; b = 0}' "$W/ts" >"$W/ts.lines"
check "trace_stats: one buffer_stats per buffer ($(wc -l <"$W/ts.lines"))" test "$(wc -l <"$W/ts.lines")" -eq 4
for b in 0 1 2 3; do
	want="$(kbuf $b bytes_written) $(kbuf $b chunks_sealed) $(kbuf $b chunks_overwritten) $(kbuf $b chunks_discarded) $(( $(kbuf $b lost_full) + $(kbuf $b lost_too_large) + $(kbuf $b lost_nmi) ))"
	got=$(sed -n "$((b + 1))p" "$W/ts.lines")
	check "trace_stats buffer $b (bytes, chunks written, overwritten, discarded, loss: $got) == kernel ($want)" \
		test "$got" = "$want"
done
end=$(section ftrace_stats "$f.txt" | awk '/phase: END_OF_TRACE/ {e = 1} /phase: START_OF_TRACE/ {e = 0} e')
ncs=$(grep -c '^    cpu_stats {' <<<"$end")
check "ftrace_stats END: one cpu_stats per possible CPU ($ncs)" test "$ncs" -eq "$WANT"
entries=$(awk '/^      entries: / {s += $2} END {print s + 0}' <<<"$end")
check "ftrace_stats END: entries $entries == kernel events_written $ev" test "$entries" -eq "$ev"
echo "1..$N"
exit $FAILED
