#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# The host's remote queue holds at most its bound of memory, however small
# the guest's frames (TAP). pbtrace.ko is the endpoint on vsock_loopback;
# build/relay_tiny is a guest that completes a clock round and sends
# COUNT CHUNKs of one 4-byte record each. build/remote_read makes the
# session for that machine only and reads nothing until the flood is in
# (REMOTE_READ_HOLD), so the queue fills to its bound: max(4 MiB, 512 KiB
# buffer). What the host holds then is measured with the kernel's own
# counter (SUnreclaim in /proc/meminfo: kmalloc'd records are unreclaimable
# slab); the records the reader gets are counted in the file with protoc
# and Perfetto's schema; every CHUNK is either queued or counted dropped.
# A poll() on a second buffer of the session counts the wake-ups.
#   tools/vm --vsock --no-module -- selftests/pbtrace/remote_queue_test.sh
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
BIN=$TOP/selftests/pbtrace/build
PORT=20013
NAME=tiny
COUNT=150000
BOUND_KB=4096		# REMOTE_MIN_BOUND: the buffer is smaller
P=/sys/module/pbtrace/parameters
W=$(mktemp -d /tmp/remote_queue.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
unreclaimable_kb() { awk '$1 == "SUnreclaim:" {print $2}' /proc/meminfo; }

rmmod pbtrace 2>/dev/null
if ! insmod "$KO" endpoint=vsock:$PORT; then
	not_ok "insmod pbtrace.ko endpoint=vsock:$PORT"
	echo "1..$N"
	exit 1
fi
ok "insmod as endpoint on vsock port $PORT"
"$BIN/relay_tiny" $PORT $NAME $COUNT > "$W/tiny.out" 2> "$W/tiny.err" &
tiny=$!
check "the tiny relay is welcomed" wait_for 100 eval '[ "$(ep_stat hellos)" = 1 ]'

c0=$(ep_stat chunks)
base=$(unreclaimable_kb)
REMOTE_READ_WATCH=1 REMOTE_READ_HOLD=$W/go "$BIN/remote_read" "$W/q.pftrace" 2 $NAME > "$W/q.txt" 2> "$W/q.err" &
reader=$!
# Until all are in, or 10 s without one more: a stuck endpoint, not a
# slow one (a debug kernel takes minutes).
last=-1 still=0
while got=$(($(ep_stat chunks) - c0)); [ "$got" -lt $COUNT ] && [ $still -lt 20 ]; do
	if [ "$got" = "$last" ]; then still=$((still + 1)); else still=0 last=$got; fi
	sleep 0.5
done
held=$(($(unreclaimable_kb) - base))
check "the host took every CHUNK frame ($got of $COUNT)" test "$got" -eq $COUNT
touch "$W/go"
wait $reader
rc=$?
wait $tiny
trc=$?
sed 's/^/# /' "$W/q.txt" "$W/q.err" "$W/tiny.err"
check "remote_read: session ran, stopped, READ_REMOTE reached EOF" test $rc = 0
check "relay_tiny: started, sent $COUNT, stopped" \
	test $trc = 0 -a "$(tail -n 1 "$W/tiny.out")" = "sent $COUNT"

# A poll() on the session's other buffer sleeps on the same wait queue:
# its wake-ups (voluntary context switches) count the host's wake_up
# calls. Once per batch, not per record: the binding's, the first record
# into an empty queue, a few more.
wakes=$(sed -n 's/^watch_wakeups //p' "$W/q.txt")
check "readers were woken per batch, not per record (${wakes:-?} wake-ups for the flood)" \
	test "${wakes:-999999}" -lt 10
declare -A M
line=$(grep "^machine name=$NAME " "$W/q.txt")
for kv in ${line#machine }; do M[${kv%%=*}]=${kv#*=}; done
chunks=${M[chunks]:-0} dropped=${M[dropped]:-0}
check "every CHUNK queued or counted dropped: $chunks + $dropped == $COUNT, none lost on the wire" \
	test $((chunks + dropped)) -eq $COUNT -a "${M[lost_relay]:-}" = 0
check "the queue reached its bound: some were dropped ($dropped)" test "$dropped" -gt 0
note() { echo "# $*"; }
note "held: $held kB for $chunks records ($((held * 1024 / (chunks ? chunks : 1))) bytes each, ${M[bytes]:-?} bytes of records)"
# A 10-byte record and its header take a kmalloc-64 object, which a debug
# kernel (KASAN's redzones) lays out in more than 64 bytes: allow what the
# kernel's own slab_size says one costs.
slab=/sys/kernel/slab/kmalloc-64
per=64
[ -r $slab/slab_size ] && per=$(cat $slab/slab_size)
[ -r $slab/object_size ] && [ "$(cat $slab/object_size)" = 64 ] || per=64
limit=$((BOUND_KB * per / 64 * 5 / 4))
check "the host held at most its bound for the queue: +$held kB unreclaimable slab <= $BOUND_KB kB x $per/64 + 25% ($limit kB)" \
	test "$held" -le $limit

# The reader got exactly the queued records: one packet each, beside the
# host's system_info and remote_clock_sync for the machine.
if protoc -I "$SCHEMA" --decode=perfetto.protos.Trace perfetto_trace.proto \
	< "$W/q.pftrace" > "$W/q.decoded" 2> "$W/q.decode.err"; then
	ok "protoc decodes what READ_REMOTE gave with Perfetto's schema"
else
	not_ok "protoc decodes what READ_REMOTE gave with Perfetto's schema"
	sed 's/^/# /' "$W/q.decode.err"
fi
recs=$(awk '/^packet {/ {h = 0} /^  (system_info|remote_clock_sync) {/ {h = 1}
	/^}/ && !h {n++} END {print n + 0}' "$W/q.decoded")
check "the file holds one packet per queued record ($recs == $chunks)" test "$recs" -eq "$chunks"
check "rmmod" rmmod pbtrace
echo "1..$N"
exit $FAILED
