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
# ids, its system_info, one RemoteClockSync and no clock_snapshot, as many
# chunks as counted, the guest's event count between what it wrote minus
# what it lost and what it wrote; and a buffer without "host" registered
# no probe here. A second, fake relay (build/relay_fake) joins the same
# session, sends two chunks with a sequence gap and vanishes: the host
# drops its chunks (it never pinged, so nothing places their events) and
# counts them, its relay loss, the disconnect and the gap.
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
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tp.sh"
relay_stat() { sed -n "s/^$1 //p" "$P/relay_stats"; }
ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
# Values are parsed once with bash builtins: a debug kernel under TCG
# takes a second per fork, and a check should not cost a dozen.
declare -A V S M
# remote_read's "key value" lines into V, each "machine name=N k=v..." into
# M[N.k]; the decoded trace's summary lines into S.
load_values() {
	local k v kv name
	while read -r k v; do
		if [ "$k" = machine ]; then
			name=${v%% *}
			name=${name#name=}
			for kv in $v; do M[$name.${kv%%=*}]=${kv#*=}; done
		else
			V[$k]=$v
		fi
	done < $OUT.txt
}

# One line per fact of the decoded Trace: top-level packets and what each
# holds, keyed by the two-space indent protoc's text format gives a
# packet's own fields. Chunk and event counts are the real relay's
# (machine_id $1) only; fake's are the other relay's chunk packets.
summarize() {
	awk -v base=$((1 << 25)) '
	/^packet {/ { pk++; mid = ""; seq = ""; ft = 0; mev = 0; psi = 0; pname = ""; pcpus = ""; psys = ""; next }
	/^}/ {
		if (mid != "") with_mid++
		if (mid != want && mid != fake) bad_mid++
		if (ft && mid == fake) fakep++
		if (ft && mid == want) {
			ftp++
			ev += mev
		}
		if (ft && (seq < base + mid * 8192 || seq >= base + mid * 8192 + 8192)) bad_seq++
		if (psi && mid == want) {
			si++
			si_name += pname == "\"" name "\""
			sysname = psys
			si_cpus = pcpus
		}
		next
	}
	/^  machine_id: / { mid = $2 }
	/^  trusted_packet_sequence_id: / { seq = $2 }
	/^  ftrace_events {/ { ft = 1 }
	/^  system_info {/ { psi = 1 }
	/^  clock_snapshot {/ { cs++ }
	/^  remote_clock_sync {/ { rcs++ }
	/^    event {/ || /^      (switch|waking)_timestamp: / { mev++ }	# compact_sched: one each
	/^      sched_switch {/ { sw++ }
	/^      sys_enter {/ { se++ }
	/^    machine_name: / { pname = $2 }
	/^      sysname: / { psys = $2 }
	/^    num_cpus: / { pcpus = $2 }
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
load_values
wait $load
wait $fake
frc=$?
check "the fake relay was started for the session and sent its chunks" \
	test $frc = 0 -a "$(cat $OUT.fake)" = "session ${V[session]:-}"
sed 's/^/# /' $OUT.txt
check "remote_read: session ran, stopped, READ_REMOTE reached EOF" test $rc = 0
check "the relay got CONTROL start, flush and stop: 3 controls" \
	test "${V[flush]:-}" = 0 -a "$(relay_stat controls)" = 3
check "READ_REMOTE refuses a buffer below PBTRACE_REMOTE_READ_MIN (EINVAL)" \
	test "${V[small_read_errno]:-}" = 22
check "READ_REMOTE before start: nothing yet (EAGAIN)" \
	test "${V[before_start_errno]:-}" = 11
check "EOF came after the relay's STOPPED (its counters are in), within 2 s" \
	test "${V[eof_ms]:-}" -lt 2000 -a "${M[$NAME.guest_written]:-}" -gt 0
check "GET_SESSION returns the buffer's machine list" \
	grep -qx "buffer_machines \*" $OUT.txt
check "a buffer without \"host\" registered no probe here: no local event" \
	test "${V[local_events_written]:-}" = 0
check "GET_SESSION has machine $NAME with its id and CPU count" \
	test "${M[$NAME.id]:-}" = "$MID" -a "${M[$NAME.cpus]:-}" = "$(nproc)" -a "${M[$NAME.buffer]:-}" = 0

if protoc -I "$SCHEMA" --decode=perfetto.protos.Trace perfetto_trace.proto \
	< $OUT.pftrace > $OUT.decoded 2> $OUT.err; then
	ok "protoc decodes what READ_REMOTE gave with Perfetto's schema"
else
	not_ok "protoc decodes what READ_REMOTE gave with Perfetto's schema"
	sed 's/^/# /' $OUT.err
fi
FMID=${M[$FAKE.id]:-}
summarize "$MID" "$FMID" < $OUT.decoded > $OUT.sum
sed 's/^/# trace: /' $OUT.sum
while read -r k v; do S[$k]=$v; done < $OUT.sum
check "every packet is stamped with machine_id $MID or the fake's, $FMID" \
	test "${S[packets]:-}" -gt 0 -a "${S[with_machine_id]:-}" = "${S[packets]:-}" -a "${S[bad_machine_id]:-}" = 0
check "chunks carry the host's sequence ids: 2^25 + machine_id * 8192 + cpu" \
	test "${S[ftrace_packets]:-}" -gt 0 -a "${S[bad_seq]:-}" = 0
check "as many chunk packets in the file as the host counted (chunks=${M[$NAME.chunks]:-})" \
	test "${S[ftrace_packets]:-}" = "${M[$NAME.chunks]:-}"
check "no chunk lost on the wire or dropped by the host" \
	test "${M[$NAME.lost_relay]:-}" = 0 -a "${M[$NAME.dropped]:-}" = 0
check "the guest's sched_switch and sys_enter events arrived" \
	test "${S[sched_switch]:-}" -gt 0 -a "${S[sys_enter]:-}" -gt 0
w=${M[$NAME.guest_written]:-}
l=${M[$NAME.guest_lost]:-}
e=${S[events]:-}
check "events in the file ($e) within the guest's written ($w) minus lost ($l)" \
	test "$w" -gt 0 -a "$e" -le "$w" -a "$e" -ge $((w - l))
check "bytes READ_REMOTE gave match the trace file" \
	test "${V[bytes]:-}" = "$(stat -c %s $OUT.pftrace)"
# READ_REMOTE's records alone, no host packet: trace_processor puts the
# first machine it meets on the host's row (ResolveAdoptedMachine); the
# fake's has its system_info only. If the relay is the one adopted, its
# remote_clock_sync relates its clocks to themselves: one
# invalid_clock_snapshots per clock, which a traced file (host packets
# first) never has.
if tp_available; then
	rows=$(tp_machines $OUT.pftrace | tr '\n' ' ')
	echo "# trace_processor machines (raw_id|cpus|threads|sched): $rows"
	check "trace_processor: machine $MID with CPUs, threads and sched; the fake's ($FMID) without" \
		eval '[[ " $rows" =~ " $MID|"[1-9][0-9]*"|"[1-9][0-9]*"|"[1-9][0-9]*" " ]] &&
			[[ " $rows" =~ " $FMID|0|"[0-9]*"|0 " ]]'
	bad=$(tp_bad_stats $OUT.pftrace invalid_clock_snapshots) || bad="trace_processor failed"
	bad=${bad//$'\n'/ }
	check "trace_processor: no error or data_loss stats${bad:+ ($bad)}" test -z "$bad"
else
	ok "trace_processor: the relayed machine's CPUs, threads and sched # SKIP $TP_WHY"
	ok "trace_processor: no error or data_loss stats # SKIP $TP_WHY"
fi
check "system_info for the guest (machine_id $MID): its name, sysname and CPU count" \
	test "${S[system_info]:-}" -ge 1 -a "${S[system_info_named]:-}" -ge 1 -a \
	"${S[sysname]:-}" = "\"$(uname -s)\"" -a "${S[num_cpus]:-}" = "$(nproc)"
check "no clock_snapshot of the guest's (trace_processor would make it the trace clock)" \
	test "${S[clock_snapshot]:-}" = 0
check "one RemoteClockSync for the guest, as the host counted (${M[$NAME.syncs]:-} of ${M[$NAME.pings]:-} rounds)" \
	test "${S[remote_clock_sync]:-}" = 1 -a "${M[$NAME.syncs]:-}" = 1 \
	-a "${M[$NAME.pings]:-0}" -ge 1
check "a round trip and an offset spread were measured" \
	test "${M[$NAME.rtt_ns]:-}" -gt 0 -a -n "${M[$NAME.spread_ns]:-}"
check "the relay stayed connected: no disconnect, no gap" \
	test "${M[$NAME.disconnects]:-}" = 0 -a "${M[$NAME.gap_ns]:-}" = 0 -a "${M[$NAME.connected]:-}" = 1
# It never pings: with no round to place them by, its chunks are dropped.
check "fake relay: its own machine id; no ping round, so its 2 chunks dropped here, counted" \
	test -n "$FMID" -a "$FMID" != "$MID" -a "${M[$FAKE.chunks]:-}" = 0 \
	-a "${M[$FAKE.dropped]:-}" = 2 -a "${S[fake_packets]:-}" = 0
check "fake relay: chunk sequence 0 then 3 is 2 chunks lost on the wire" \
	test "${M[$FAKE.lost_relay]:-}" = 2
check "fake relay: 1 disconnect, a gap of at least 1 s, not connected" \
	test "${M[$FAKE.disconnects]:-}" = 1 -a "${M[$FAKE.gap_ns]:-}" -ge 1000000000 -a "${M[$FAKE.connected]:-}" = 0

# A second session, host and relays in one buffer: the relay, done with
# the first, starts again for it; and the host records too.
controls=$(relay_stat controls)
REMOTE_READ_AGAIN=3 "$BIN/remote_read" $OUT.2.pftrace 2 host '*' > $OUT.2.txt
rc=$?
sed 's/^/# 2: /' $OUT.2.txt
line=$(grep "^machine name=$NAME " $OUT.2.txt | head -n 1)
again=$(sed -n '/^again$/,$p' $OUT.2.txt | grep "^machine name=$NAME ")
check "session [host, *]: EOF, local events and the relay's chunks in one buffer" \
	eval '[ $rc = 0 ] && [ "$(sed -n "s/^local_events_written //p" $OUT.2.txt | head -n 1)" -gt 0 ] &&
		[[ "$line" =~ " chunks="[1-9] ]]'
check "session [host, *]: the guest's STOPPED counters are kept, even if it came after EOF" \
	eval '[[ "$again" =~ " guest_written="[1-9] ]]'
check "session [host, *]: the relay was started, flushed and stopped again" \
	test "$(relay_stat controls)" = $((controls + 3))
# A third that names only the host: no relay joins it.
"$BIN/remote_read" $OUT.3.pftrace 1 host > $OUT.3.txt
rc=$?
sed 's/^/# 3: /' $OUT.3.txt
check "session [host]: EOF, local events, no machine, nothing relayed" \
	eval '[ $rc = 0 ] && [ "$(sed -n "s/^local_events_written //p" $OUT.3.txt)" -gt 0 ] &&
		! grep -q "^machine " $OUT.3.txt && [ ! -s $OUT.3.pftrace ] &&
		[ "$(relay_stat controls)" = $((controls + 3)) ]'

sed 's/^/# /' "$P/endpoint_stats"
check "rmmod with the relay connected" rmmod pbtrace
dmesg | grep pbtrace | sed 's/^/# dmesg: /' | tail -n 20
echo "1..$N"
exit $FAILED
