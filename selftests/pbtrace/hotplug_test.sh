#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --smp 2
#
# Any tracepoint on a CPU that comes online after START
# (docs/generic-events.md, CPU hotplug). dp_record tp records
# syscalls/sys_enter_getpid through the generic path while the workload
# calls getpid(2) a counted number of times from three processes:
#   A: pinned to CPU 1, before CPU 1 goes offline (nothing recorded
#      before the offline may be lost),
#   C: pinned to CPU 0 while CPU 1 is offline,
#   B: pinned to CPU 1 after it came back online (its counter was made by
#      the hotplug kworker: we wait for tp_hotplug's "pending 0").
# Referee: each process's own count of its getpid calls; trace_processor
# must count exactly that many sys_enter_getpid of that pid on that CPU,
# and report no data loss.
set -u

here=$(cd "$(dirname "$0")" && pwd)
rec=$here/build/dp_record
tmp=$(mktemp -d /tmp/hotplug.XXXXXX)
. "$here/tap.sh"
. "$here/tp.sh"
trap 'echo 1 > /sys/devices/system/cpu/cpu1/online 2>/dev/null; rm -rf "$tmp"' EXIT
P=/sys/module/pbtrace/parameters/tp_hotplug
ONLINE=/sys/devices/system/cpu/cpu1/online

echo "TAP version 13"
echo "# kernel $(uname -r), cpus $(cat /sys/devices/system/cpu/online)"

if [ ! -w "$ONLINE" ]; then
	ok "CPU hotplug # SKIP cpu1 cannot go offline here"
	echo "1..$N"
	exit 0
fi

cat > "$tmp/getpid.py" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
n = int(sys.argv[2])
pid = os.getpid()	# a getpid(2) too: counted below
for i in range(n):
    libc.syscall(39)	# getpid, never cached
with open(sys.argv[1], "a") as f:
    f.write("%s_pid=%d\n%s_n=%d\n" % (sys.argv[3], pid, sys.argv[3], n + 1))
EOF

cat > "$tmp/work.sh" <<EOF
kv=$tmp/work.kv
taskset -c 1 python3 $tmp/getpid.py \$kv 300 A
echo 0 > $ONLINE || exit 1
taskset -c 0 python3 $tmp/getpid.py \$kv 200 C
echo 1 > $ONLINE || exit 1
# the counter of CPU 1 is made by a kworker after the online callback
for i in \$(seq 200); do
	set -- \$(cat $P)
	[ "\$6" = 0 ] && [ "\$2" -ge 1 ] && break
	sleep 0.1
done
echo "tp_hotplug=\$(cat $P)" >> \$kv
taskset -c 1 python3 $tmp/getpid.py \$kv 500 B
EOF

: > "$tmp/work.kv"
if ! "$rec" tp "$tmp/h.pftrace" syscalls/sys_enter_getpid "sh $tmp/work.sh" \
	> "$tmp/h.info" 2> "$tmp/h.err"; then
	not_ok "dp_record tp: $(cat "$tmp/h.err")"
	echo "1..$N"
	exit 1
fi
cat "$tmp/work.kv" | sed 's/^/# /'
check "workload ran (cpu1 offline and online)" grep -q '^cmd_status=0' "$tmp/h.info"
kv() { sed -n "s/^$1=//p" "$tmp/work.kv"; }
check "a counter was made for cpu1 after it came online" \
	sh -c "kv=\$(sed -n 's/^tp_hotplug=//p' $tmp/work.kv); set -- \$kv; [ \"\$2\" -ge 1 ] && [ \"\$4\" = 0 ]"

if ! tp_available; then
	not_ok "trace_processor not available"
	echo "1..$N"
	exit 1
fi
count() {	# pid cpu
	tp_value "$tmp/h.pftrace" "select count(*) from ftrace_event e
		join thread t using (utid)
		where e.name = 'sys_enter_getpid' and t.tid = $1 and e.cpu = $2"
}
for ph in "A 1 before cpu1 went offline" "C 0 while cpu1 was offline" \
	  "B 1 after cpu1 came back online"; do
	set -- $ph
	name=$1 cpu=$2
	shift 2
	pid=$(kv ${name}_pid) n=$(kv ${name}_n)
	got=$(count "$pid" "$cpu")
	echo "# $name: pid $pid on cpu$cpu: workload $n, trace_processor $got"
	check "every getpid of $name (pid $pid) on cpu$cpu, $*: $n" test "$got" = "$n"
done
bad=$(tp_bad_stats "$tmp/h.pftrace")
echo "$bad" | sed 's/^/# stats: /'
check "no data loss in trace_processor's stats" test -z "$bad"
echo "1..$N"
exit $FAILED
