#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --acpi-table out/cpufreq-ssdt.aml --cpu-props family=6
#
# power/cpu_frequency end to end, in a guest of its own that has P-states:
# tools/cpufreq-ssdt gives QEMU's CPUs _PCT/_PSS (2000/1500/1000 MHz on a
# no-op I/O port), family=6 because acpi-cpufreq refuses QEMU's default
# family 15 (AMD K8: "must use native drivers"). With the userspace
# governor every write to scaling_setspeed is one transition, and the
# kernel's cpufreq core records one cpu_frequency event per CPU of the
# policy (one CPU each here). The events pbtrace records must be those
# writes, the kernel's own ftrace must agree, and trace_processor must show
# them as per-CPU cpu_frequency counters with those values. Then all 22
# events in one recording (dataplane_lib.sh's all_events, as dataplane2's,
# which has no cpu_frequency), each checked in trace_processor's tables.
#
#   selftests/pbtrace/power_test.sh --host-setup     writes the table
#   selftests/pbtrace/power_test.sh --host-cleanup   removes it
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
table=$top/out/cpufreq-ssdt.aml

case ${1:-} in
--host-setup) mkdir -p "$top/out" && exec "$top/tools/cpufreq-ssdt" "$table" 2 ;;
--host-cleanup) rm -f "$table"; exit 0 ;;
esac

. "$here/dataplane_lib.sh"
T=/sys/kernel/tracing
cf() { echo "/sys/devices/system/cpu/cpu$1/cpufreq/$2"; }

preflight
modprobe acpi-cpufreq && modprobe cpufreq_userspace
freqs=$(cat "$(cf 0 scaling_available_frequencies)" 2>/dev/null)
if [ "$freqs" != "2000000 1500000 1000000 " ]; then
	not_ok "acpi-cpufreq binds the table's P-states (frequencies: ${freqs:-none})"
	dmesg | grep -i -E 'cpufreq|ssdt' | sed 's/^/#   /'
	plan
	exit 1
fi
ok "acpi-cpufreq binds the table's P-states ($(cat "$(cf 0 scaling_driver)"): $freqs)"
for c in 0 1; do
	echo userspace >"$(cf $c scaling_governor)" && echo 1000000 >"$(cf $c scaling_setspeed)"
done

section writes
# Four changes, each to a frequency the CPU is not at: four transitions.
WANT="0 2000000
1 1500000
0 1000000
1 2000000"
CMD=$(while read -r c f; do printf 'echo %s > %s; ' "$f" "$(cf "$c" scaling_setspeed)"; done <<<"$WANT")
echo > "$T/trace"
echo 1 > "$T/events/power/cpu_frequency/enable"
"$rec" run "$tmp/freq.pftrace" power/cpu_frequency "$CMD" >"$tmp/info" 2>"$tmp/err"
rc=$?
echo 0 > "$T/events/power/cpu_frequency/enable"
result $rc "dp_record records power/cpu_frequency while the governor is set $(cat "$tmp/err")"
decode "$tmp/freq.pftrace" "$tmp/freq.pftrace.txt"
result $? "the file decodes with Perfetto's schema"
# "cpu_id state" of each event, in time order.
ours=$(awk '/^      cpu_frequency \{/ {s = 1; st = id = 0}
	s && /^        state: / {st = $2} s && /^        cpu_id: / {id = $2}
	s && /^      \}/ {print ts, id, st; s = 0} /^      timestamp: / {ts = $2}' \
	"$tmp/freq.pftrace.txt" | sort -n | cut -d' ' -f2-)
[ "$ours" = "$WANT" ]
result $? "cpu_frequency events are the four writes, CPU and kHz ($(echo $ours))"
theirs=$(sed -n 's/.*cpu_frequency: state=\([0-9]*\) cpu_id=\([0-9]*\)$/\2 \1/p' "$T/trace")
[ "$theirs" = "$ours" ]
result $? "the kernel's own ftrace recorded the same ($(echo $theirs))"
if tp_available; then
	tp_file ok not_ok "trace_processor" "$tmp/freq.pftrace"
	got=$(tp_query "$tmp/freq.pftrace" "select extract_arg(t.dimension_arg_set_id, 'cpu'),
		cast(c.value as int) from counter c join track t on c.track_id = t.id
		where t.type = 'cpu_frequency' order by c.ts" | tr '|' ' ')
	[ "$got" = "$WANT" ]
	result $? "trace_processor: per-CPU cpu_frequency counters with those values ($(echo $got))"
else
	ok "trace_processor: cpu_frequency counters # SKIP $TP_WHY"
fi

section all
# All 22 events in one recording, cpu_frequency included: two more changes
# (cpu 1 is at 2000000, cpu 0 at 1000000 now).
all_events "all 22 events" "echo 1000000 > $(cf 1 scaling_setspeed); echo 1500000 > $(cf 0 scaling_setspeed)"
plan
