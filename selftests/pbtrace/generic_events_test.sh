#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Any tracepoint by name (docs/generic-events.md), in a guest with
# pbtrace.ko loaded (tools/vm -- selftests/pbtrace/generic_events_test.sh,
# and tools/vm --kernel 6.12.117+deb12-amd64 -- ...). Prints TAP.
#
# 1. generic: dp_record tp records signal/signal_generate,
#    sched/sched_process_exec (__data_loc filename), sock/inet_sock_set_state
#    (u8[4] arrays) and workqueue/workqueue_queue_work (__data_loc), and
#    ipi/ipi_send_cpumask (a __bitmask) where the kernel has it, through
#    the generic path while a workload sends 5 SIGCONT to a sleeper, execs
#    /bin/true 4 times and makes 3 loopback TCP connections. ftrace counts
#    the same tracepoints at the same time with hist triggers (counts per
#    tuple of field values): generic_check.py decodes the file itself,
#    applying the descriptors in each bundle, and every tuple must have
#    ftrace's count; protoc (Perfetto's schema) decodes the envelope, and
#    trace_processor's ftrace_event/args must count the same.
# 2. native: sched_process_exec asked the same way is written as Perfetto's
#    own FtraceEvent field (no descriptor), and trace_processor reads it
#    as the native event; sched/sched_stat_runtime's descriptor carries
#    this kernel's fields (6.1: comm pid runtime vruntime; 6.12 dropped
#    vruntime), as its tracefs format lists them.
# 3. losses counted exactly (written + lost = ftrace's count of the hits
#    the pid filter lets in), and the pid filter.
# 4. a group= member's session records tracepoints (docs/security.md).
# 5. rmmod with a started session whose perf counters are live.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
rec=$here/build/dp_record
tmp=$(mktemp -d /tmp/generic.XXXXXX)
. "$here/tap.sh"
. "$here/tp.sh"
export PYTHONDONTWRITEBYTECODE=1
T=/sys/kernel/tracing
[ -e $T/events ] || T=/sys/kernel/debug/tracing
HISTS=(
	"signal/signal_generate sig,pid,comm"
	"sched/sched_process_exec filename,pid"
	"sock/inet_sock_set_state sport,dport,newstate"
	"workqueue/workqueue_queue_work workqueue,cpu"
)
trap 'hists_off; rm -rf "$tmp"' EXIT

echo "TAP version 13"
echo "# kernel $(uname -r)"

result() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }

hists_on() {
	local h
	for h in "${HISTS[@]}"; do
		set -- $h
		echo "hist:keys=$2" > "$T/events/$1/trigger" || return 1
	done
}

hists_off() {
	local h
	for h in "${HISTS[@]}"; do
		set -- $h
		[ -e "$T/events/$1/trigger" ] &&
			echo "!hist:keys=$2" > "$T/events/$1/trigger" 2>/dev/null
	done
	return 0
}

hists_save() {
	local h
	for h in "${HISTS[@]}"; do
		set -- $h
		cat "$T/events/$1/hist" > "$tmp/hist/${1/\//:}.hist"
	done
}

decode() {
	protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
		< "$1" > "$2" 2> "$2.err"
}

# The workload, run by dp_record while the session records; its facts go
# to $tmp/work.kv for the checker.
cat > "$tmp/work.sh" <<'EOF'
kv=$1
sleep 30 &
p=$!
echo "sleep_pid=$p" >> "$kv"
for i in 1 2 3 4 5; do kill -CONT "$p"; done
echo "kills=5" >> "$kv"
for i in 1 2 3 4; do /bin/true; done
echo "execs=4" >> "$kv"
python3 - <<'PY'
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 4567))
s.listen(8)
for i in range(3):
    c = socket.create_connection(("127.0.0.1", 4567))
    a, _ = s.accept()
    c.close()
    a.close()
s.close()
PY
echo "port=4567" >> "$kv"
echo "connects=3" >> "$kv"
kill "$p"
wait
EOF

checks() {
	local line
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "${line#PASS }" ;;
		FAIL\ *) not_ok "${line#FAIL }" ;;
		SKIP\ *) ok "${line#SKIP } # SKIP" ;;
		\#*) echo "$line" ;;
		DONE) return 0 ;;
		*) echo "# $line" ;;
		esac
	done
	not_ok "generic_check.py ended without DONE"
}

# 1. generic
mkdir -p "$tmp/hist" "$tmp/tp"
tps=signal/signal_generate,sched/sched_process_exec,sock/inet_sock_set_state,workqueue/workqueue_queue_work
[ -e "$T/events/ipi/ipi_send_cpumask" ] && tps=$tps,ipi/ipi_send_cpumask
: > "$tmp/work.kv"
echo "nr_cpu_ids=$(($(cat /sys/devices/system/cpu/possible | sed 's/.*-//') + 1))" >> "$tmp/work.kv"
if ! hists_on; then
	not_ok "ftrace hist triggers (CONFIG_HIST_TRIGGERS) for the referee"
elif ! "$rec" tp "$tmp/g.pftrace" "$tps" "sh $tmp/work.sh $tmp/work.kv" > "$tmp/g.info" 2> "$tmp/g.err"; then
	not_ok "dp_record tp: $(cat "$tmp/g.err")"
else
	hists_save
	hists_off
	ok "recorded $tps"
	decode "$tmp/g.pftrace" "$tmp/g.txt"
	check "protoc --decode with Perfetto's schema" test ! -s "$tmp/g.txt.err"
	if tp_available; then
		tp_query "$tmp/g.pftrace" "select name, count(*) from ftrace_event group by name" \
			> "$tmp/tp/tp_counts" || echo "trace_processor failed" > "$tmp/tp/why"
		p=$(sed -n 's/^sleep_pid=//p' "$tmp/work.kv")
		tp_value "$tmp/g.pftrace" "select count(*) from ftrace_event e
			join args s on s.arg_set_id = e.arg_set_id and s.key = 'sig'
			join args p on p.arg_set_id = e.arg_set_id and p.key = 'pid'
			where e.name = 'signal_generate' and s.int_value = 18
			and p.int_value = $p" > "$tmp/tp/tp_sig"
	else
		echo "$TP_WHY" > "$tmp/tp/why"
	fi
	checks < <(python3 "$here/generic_check.py" "$tmp/g.pftrace" \
		"$tmp/g.info" "$tmp/g.txt" "$tmp/work.kv" "$tmp/hist" "$tmp/tp")
fi

# 2. native sched_process_exec, and sched_stat_runtime's layout here
if ! DP_TP_NATIVE=1 "$rec" tp "$tmp/n.pftrace" sched/sched_process_exec \
	'for i in 1 2 3 4; do /bin/true; done' > "$tmp/n.info" 2> "$tmp/n.err"; then
	not_ok "dp_record tp (native): $(cat "$tmp/n.err")"
else
	sed -n 's/^tp\.[0-9]*=/# /p' "$tmp/n.info"
	decode "$tmp/n.pftrace" "$tmp/n.txt"
	n=$(grep -A1 'sched_process_exec {' "$tmp/n.txt" | grep -c 'filename: "/bin/true"')
	[ "$n" = 4 ]
	result $? "native: 4 sched_process_exec of /bin/true as Perfetto's own field 237 ($n)"
	! grep -q 'field_id: 65536$' "$tmp/n.txt"
	result $? "native: no descriptor for it"
	if ! "$rec" tp "$tmp/r.pftrace" sched/sched_stat_runtime 'sleep 0.1' \
		> "$tmp/r.info" 2> "$tmp/r.err"; then
		not_ok "dp_record tp sched_stat_runtime: $(cat "$tmp/r.err")"
	fi
	want=$(sed -n 's/.*field:[^;]*[ *]\([a-z_0-9]*\)\(\[[0-9]*\]\)\{0,1\};.*/\1/p' \
		"$T/events/sched/sched_stat_runtime/format" | grep -v '^common_' | tr '\n' ' ')
	got=$(cd "$here" && python3 -c "
import generic_check as g, sys
t = g.Trace(sys.argv[1])
print(' '.join(f[0] for _, f in sorted(t.descs[65536][2].items())))" "$tmp/r.pftrace")
	[ -n "$got" ] && [ "$got " = "$want" ]
	result $? "sched_stat_runtime's descriptor has this kernel's fields: $got"
	if tp_available; then
		n=$(tp_value "$tmp/n.pftrace" "select count(*) from ftrace_event e
			join args a using (arg_set_id) where e.name = 'sched_process_exec'
			and a.key = 'filename' and a.string_value = '/bin/true'")
		[ "$n" = 4 ]
		result $? "trace_processor reads the native sched_process_exec: $n of /bin/true"
	else
		ok "trace_processor # SKIP $TP_WHY"
	fi
fi

# 3. losses and the pid filter: the workload's shell is the buffer's one
# pid; it signals its sleeper 3000 times into a buffer of two 4 KiB chunks
# per CPU (DISCARD, read only at stop). Written + lost must be ftrace's
# count of signal_generate from that pid, and every event in the file its.
trig="hist:keys=common_pid,sig"
echo "$trig" > "$T/events/signal/signal_generate/trigger"
DP_TP_PID=1 DP_SIZE_KB=$((8 * $(nproc))) DP_CHUNK_KB=4 DP_DISCARD=1 \
	"$rec" tp "$tmp/d.pftrace" signal/signal_generate \
	'sleep 30 & p=$!; i=0; while [ $i -lt 3000 ]; do kill -CONT $p; i=$((i + 1)); done; kill $p; wait' \
	> "$tmp/d.info" 2> "$tmp/d.err"
cat "$T/events/signal/signal_generate/hist" > "$tmp/d.hist"
echo "!$trig" > "$T/events/signal/signal_generate/trigger"
root=$(sed -n 's/^root_pid=//p' "$tmp/d.info")
wr=$(sed -n 's/^written=//p' "$tmp/d.info")
lost=$(sed -n 's/^lost=//p' "$tmp/d.info")
full=$(sed -n 's/^lost_full=//p' "$tmp/d.info")
ft=$(awk -v p="${root:-x}" '/^\{/ { gsub(/[{},]/, " "); if ($2 == p) { for (i = 1; i < NF; i++) if ($i == "hitcount:") s += $(i + 1) } } END { print s + 0 }' "$tmp/d.hist")
# 3000 SIGCONT, a SIGTERM, and the SIGCHLD its own exit sends dp_record
[ -n "$wr" ] && [ "${lost:-0}" -gt 0 ] && [ "$full" = "$lost" ] && [ $((wr + lost)) = "$ft" ] && [ "$ft" = 3002 ]
result $? "losses: written $wr + lost $lost (all lost_full: $full) = ftrace's $ft signal_generate from pid ${root:-?} = the workload's 3002"
bad=$(cd "$here" && python3 -c "
import generic_check as g, sys
t = g.Trace(sys.argv[1])
print(sum(1 for e in t.events if e[2] != int(sys.argv[2])), len(t.events))" "$tmp/d.pftrace" "${root:-0}")
set -- $bad
[ "${1:-1}" = 0 ] && [ "${2:-0}" = "$wr" ]
result $? "pid filter: all ${2:-?} events in the file are pid ${root:-?}'s (${1:-?} others)"

# 4. a group= member's session (no capability): its counters are made
# under its credentials, so perf's rule for perf record -a decides: raw
# tracepoint data CPU-wide needs perf_event_paranoid -1 (member_test.sh
# checks the refusals at 0..2 against real perf)
param=/sys/module/pbtrace/parameters/group
old_group=$(cat $param)
echo 4242 > $param
old_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
echo -1 > /proc/sys/kernel/perf_event_paranoid
# dp_record's buffer is 64 MiB, and a member's budget counts what the
# kernel allocates for it (a little more): room for one such session
old_kb=$(cat /sys/module/pbtrace/parameters/group_max_kb)
echo 131072 > /sys/module/pbtrace/parameters/group_max_kb
# tracefs is root's: dp_record reads the layout, then becomes the member
DP_TP_NOREAD=1 DP_TP_UID=4201 DP_TP_GID=4242 "$rec" tp - signal/signal_generate \
	'sleep 5 & p=$!; for i in 1 2 3; do kill -CONT $p; done; kill $p; wait' \
	> "$tmp/m.info" 2>&1
w=$(sed -n 's/^written=//p' "$tmp/m.info")
[ "${w:-0}" -ge 4 ]
result $? "a group= member (uid 4201, no capability) records a tracepoint: $w signal_generate for its 4 signals${w:+}$( [ -n "$w" ] || echo ": $(cat "$tmp/m.info")")"
echo "$old_group" > $param
echo "$old_paranoid" > /proc/sys/kernel/perf_event_paranoid
echo "$old_kb" > /sys/module/pbtrace/parameters/group_max_kb

# 5. rmmod with the counters live
if DP_TP_LEAVE=1 "$rec" tp "$tmp/l.pftrace" signal/signal_generate,sched/sched_switch \
	'kill -CONT $$' > "$tmp/l.info" 2>&1 && grep -q '^left=' "$tmp/l.info" &&
	rmmod pbtrace; then
	ok "rmmod with a started session recording generic events"
	kill -CONT $$
	ko=${PBTRACE_KO:-$top/pbtrace.ko}
	if [ -e "$ko" ]; then insmod "$ko"; else modprobe pbtrace; fi
	check "module loads again after that" test -e /sys/module/pbtrace
else
	not_ok "rmmod with a started session: $(cat "$tmp/l.info")"
fi

echo "1..$N"
exit $FAILED
