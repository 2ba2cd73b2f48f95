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
# them as per-CPU cpu_frequency counters with those values.
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

. "$here/tap.sh"
. "$here/tp.sh"
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
rec=$here/build/dp_record
tmp=$(mktemp -d /tmp/power.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
T=/sys/kernel/tracing
cf() { echo "/sys/devices/system/cpu/cpu$1/cpufreq/$2"; }

echo "TAP version 13"
modprobe acpi-cpufreq && modprobe cpufreq_userspace
check "acpi-cpufreq binds the table's P-states ($(cat "$(cf 0 scaling_driver)" 2>/dev/null))" \
	test "$(cat "$(cf 0 scaling_available_frequencies)" 2>/dev/null)" = "2000000 1500000 1000000 " ||
	{ dmesg | grep -i -E 'cpufreq|ssdt' | sed 's/^/#   /'; echo "1..$N"; exit 1; }
for c in 0 1; do
	echo userspace >"$(cf $c scaling_governor)" && echo 1000000 >"$(cf $c scaling_setspeed)"
done

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
check "dp_record records power/cpu_frequency while the governor is set" test $rc -eq 0 ||
	sed 's/^/#   /' "$tmp/err"

protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
	<"$tmp/freq.pftrace" >"$tmp/freq.pftrace.txt" 2>"$tmp/decode.err"
check "the file decodes with Perfetto's schema" test $? -eq 0 || sed 's/^/#   /' "$tmp/decode.err"
# "cpu_id state" of each event, in time order.
ours=$(awk '/^      cpu_frequency \{/ {s = 1; st = id = 0}
	s && /^        state: / {st = $2} s && /^        cpu_id: / {id = $2}
	s && /^      \}/ {print ts, id, st; s = 0} /^      timestamp: / {ts = $2}' \
	"$tmp/freq.pftrace.txt" | sort -n | cut -d' ' -f2-)
check "cpu_frequency events are the four writes, CPU and kHz ($(echo $ours))" \
	test "$ours" = "$WANT"
theirs=$(sed -n 's/.*cpu_frequency: state=\([0-9]*\) cpu_id=\([0-9]*\)$/\2 \1/p' "$T/trace")
check "the kernel's own ftrace recorded the same ($(echo $theirs))" test "$theirs" = "$ours"

if tp_available; then
	tp_file ok not_ok "trace_processor" "$tmp/freq.pftrace"
	got=$(tp_query "$tmp/freq.pftrace" "select extract_arg(t.dimension_arg_set_id, 'cpu'),
		cast(c.value as int) from counter c join track t on c.track_id = t.id
		where t.type = 'cpu_frequency' order by c.ts" | tr '|' ' ')
	check "trace_processor: per-CPU cpu_frequency counters with those values ($(echo $got))" \
		test "$got" = "$WANT"
else
	ok "trace_processor: cpu_frequency counters # SKIP $TP_WHY"
fi
echo "1..$N"
exit $FAILED
