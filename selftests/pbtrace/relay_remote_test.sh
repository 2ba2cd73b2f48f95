#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# The host side of a relayed session, in one guest over vsock_loopback
# (CID 1): pbtrace.ko loaded as endpoint=vsock:PORT and relay=vsock:1:PORT.
# build/remote_read (raw libnl, no traced) creates a session whose only
# buffer names the relayed machines ("*"), starts it, reads what arrives
# with PBTRACE_IOC_READ_REMOTE, stops it and reads on to EOF. The file is
# decoded with protoc and Perfetto's schema and checked against the
# kernel's per-machine counters (GET_SESSION's PBTRACE_A_SESSION_MACHINES):
# every packet stamped with the relay's machine_id, host-chosen sequence
# ids, its system_info and clock_snapshot, RemoteClockSync packets, as many
# chunks as counted, the guest's event count between what it wrote minus
# what it lost and what it wrote; and a buffer without "host" registered
# no probe here. A second, fake relay (build/relay_fake) joins the same
# session, sends two chunks with a sequence gap and vanishes: the host
# counts its chunks, its relay loss, the disconnect and the gap.
# tools/vm fails the run on any kernel complaint in dmesg.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
BIN=$TOP/selftests/pbtrace/build
PORT=20011
NAME=remote-guest
FAKE=fake-guest
P=/sys/module/pbtrace/parameters
OUT=/tmp/remote
N=0
FAILED=0

ok() { echo "ok $((++N)) - $*"; }
not_ok() { echo "not ok $((++N)) - $*"; FAILED=1; }
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
wait_for() {
	local n=$1
	shift
	while ((n-- > 0)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}
relay_stat() { sed -n "s/^$1 //p" "$P/relay_stats"; }
ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
# A value from remote_read's output: "key value" or machine's key=value.
val() { sed -n "s/^$1 //p" $OUT.txt; }
mval() { grep "^machine name=${2:-$NAME} " $OUT.txt | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# A count from the decoded trace (see summarize).
sval() { sed -n "s/^$1 //p" $OUT.sum; }

# One line per fact of the decoded Trace: top-level packets and what each
# holds, keyed by the two-space indent protoc's text format gives a
# packet's own fields. Chunk and event counts are the real relay's
# (machine_id $1) only; fake's are the other relay's chunk packets.
summarize() {
	awk -v base=$((1 << 25)) '
	/^packet {/ { pk++; mid = ""; seq = ""; ft = 0; mev = 0; next }
	/^}/ {
		if (mid != "") with_mid++
		if (mid != want && mid != fake) bad_mid++
		if (ft && mid == fake) fakep++
		if (ft && mid == want) {
			ftp++
			ev += mev
		}
		if (ft && (seq < base + mid * 8192 || seq >= base + mid * 8192 + 8192)) bad_seq++
		next
	}
	/^  machine_id: / { mid = $2 }
	/^  trusted_packet_sequence_id: / { seq = $2 }
	/^  ftrace_events {/ { ft = 1 }
	/^  system_info {/ { si++ }
	/^  clock_snapshot {/ { cs++ }
	/^  remote_clock_sync {/ { rcs++ }
	/^    event {/ { mev++ }
	/^      sched_switch {/ { sw++ }
	/^      sys_enter {/ { se++ }
	/^    machine_name: / { if ($2 == "\"" name "\"") si_name++ }
	/^      sysname: / { sysname = $2 }
	/^    num_cpus: / { si_cpus = $2 }
	END {
		printf "packets %d\nwith_machine_id %d\nbad_machine_id %d\n", pk, with_mid, bad_mid
		printf "ftrace_packets %d\nfake_packets %d\nbad_seq %d\nevents %d\n", ftp, fakep, bad_seq, ev
		printf "sched_switch %d\nsys_enter %d\n", sw, se
		printf "system_info %d\nsystem_info_named %d\nsysname %s\nnum_cpus %d\n", si, si_name, sysname, si_cpus
		printf "clock_snapshot %d\nremote_clock_sync %d\n", cs, rcs
	}' want="$1" fake="$2" name="$NAME"
}

rmmod pbtrace 2>/dev/null
if ! insmod "$KO" endpoint=vsock:$PORT relay=vsock:1:$PORT relay_name=$NAME \
	relay_hint=0123456789abcdef0123456789abcdef; then
	not_ok "insmod pbtrace.ko endpoint=vsock:$PORT relay=vsock:1:$PORT"
	echo "1..$N"
	exit 1
fi
ok "insmod as endpoint and relay"
check "relay connected and welcomed" \
	wait_for 100 eval '[ "$(relay_stat connected)" = 1 ] && [ "$(relay_stat machine_id)" -ge 1 ]'
MID=$(relay_stat machine_id)

# Bad machine lists never make a session.
"$BIN/remote_read" bad > $OUT.bad
check "an empty BUFFER_MACHINES list is refused (EINVAL)" grep -qx "empty_list -22" $OUT.bad
check "nine machine names are refused (E2BIG)" grep -qx "nine_names -7" $OUT.bad
check "an empty machine name is refused (EINVAL)" grep -qx "empty_name -22" $OUT.bad

# Something for the guest to trace while the session runs.
(for _ in $(seq 1 40); do cat /proc/self/stat > /dev/null; sleep 0.1; done) &
load=$!
"$BIN/relay_fake" $PORT $FAKE > $OUT.fake &
fake=$!
"$BIN/remote_read" $OUT.pftrace 4 > $OUT.txt
rc=$?
wait $load
wait $fake
frc=$?
check "the fake relay was started for the session and sent its chunks" \
	test $frc = 0 -a "$(cat $OUT.fake)" = "session $(val session)"
sed 's/^/# /' $OUT.txt
check "remote_read: session ran, stopped, READ_REMOTE reached EOF" test $rc = 0
check "READ_REMOTE refuses a buffer below PBTRACE_REMOTE_READ_MIN (EINVAL)" \
	test "$(val small_read_errno)" = 22
check "READ_REMOTE before start: nothing yet (EAGAIN)" \
	test "$(val before_start_errno)" = 11
check "EOF came after the relay's STOPPED (its counters are in), within 2 s" \
	test "$(val eof_ms)" -lt 2000 -a "$(mval guest_written)" -gt 0
check "GET_SESSION returns the buffer's machine list" \
	grep -qx "buffer_machines \*" $OUT.txt
check "a buffer without \"host\" registered no probe here: no local event" \
	test "$(val local_events_written)" = 0
check "GET_SESSION has machine $NAME with its id and CPU count" \
	test "$(mval id)" = "$MID" -a "$(mval cpus)" = "$(nproc)" -a "$(mval buffer)" = 0

if protoc -I "$SCHEMA" --decode=perfetto.protos.Trace perfetto_trace.proto \
	< $OUT.pftrace > $OUT.decoded 2> $OUT.err; then
	ok "protoc decodes what READ_REMOTE gave with Perfetto's schema"
else
	not_ok "protoc decodes what READ_REMOTE gave with Perfetto's schema"
	sed 's/^/# /' $OUT.err
fi
FMID=$(mval id $FAKE)
summarize "$MID" "$FMID" < $OUT.decoded > $OUT.sum
sed 's/^/# trace: /' $OUT.sum
check "every packet is stamped with machine_id $MID or the fake's, $FMID" \
	test "$(sval packets)" -gt 0 -a "$(sval with_machine_id)" = "$(sval packets)" -a "$(sval bad_machine_id)" = 0
check "chunks carry the host's sequence ids: 2^25 + machine_id * 8192 + cpu" \
	test "$(sval ftrace_packets)" -gt 0 -a "$(sval bad_seq)" = 0
check "as many chunk packets in the file as the host counted (chunks=$(mval chunks))" \
	test "$(sval ftrace_packets)" = "$(mval chunks)"
check "no chunk lost on the wire or dropped by the host" \
	test "$(mval lost_relay)" = 0 -a "$(mval dropped)" = 0
check "the guest's sched_switch and sys_enter events arrived" \
	test "$(sval sched_switch)" -gt 0 -a "$(sval sys_enter)" -gt 0
w=$(mval guest_written)
l=$(mval guest_lost)
e=$(sval events)
check "events in the file ($e) within the guest's written ($w) minus lost ($l)" \
	test "$w" -gt 0 -a "$e" -le "$w" -a "$e" -ge $((w - l))
check "bytes READ_REMOTE gave match the trace file" \
	test "$(val bytes)" = "$(stat -c %s $OUT.pftrace)"
check "system_info for the guest: its name, sysname and CPU count" \
	test "$(sval system_info)" -ge 1 -a "$(sval system_info_named)" -ge 1 -a \
	"$(sval sysname)" = "\"$(uname -s)\"" -a "$(sval num_cpus)" = "$(nproc)"
check "a clock_snapshot of the guest's clocks" test "$(sval clock_snapshot)" -ge 1
check "RemoteClockSync packets, as many as the host counted pings ($(mval pings))" \
	test "$(sval remote_clock_sync)" -ge 2 -a "$(sval remote_clock_sync)" = "$(mval pings)"
check "a round trip and an offset spread were measured" \
	test "$(mval rtt_ns)" -gt 0 -a -n "$(mval spread_ns)"
check "the relay stayed connected: no disconnect, no gap" \
	test "$(mval disconnects)" = 0 -a "$(mval gap_ns)" = 0 -a "$(mval connected)" = 1
check "fake relay: its own machine id, its 2 chunks in the file and counted" \
	test -n "$FMID" -a "$FMID" != "$MID" -a "$(mval chunks $FAKE)" = 2 -a "$(sval fake_packets)" = 2
check "fake relay: chunk sequence 0 then 3 is 2 chunks lost on the wire" \
	test "$(mval lost_relay $FAKE)" = 2
check "fake relay: 1 disconnect, a gap of at least 1 s, not connected" \
	test "$(mval disconnects $FAKE)" = 1 -a "$(mval gap_ns $FAKE)" -ge 1000000000 -a "$(mval connected $FAKE)" = 0

sed 's/^/# /' "$P/endpoint_stats"
check "rmmod with the relay connected" rmmod pbtrace
dmesg | grep pbtrace | sed 's/^/# dmesg: /' | tail -n 20
echo "1..$N"
exit $FAILED
