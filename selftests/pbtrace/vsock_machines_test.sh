#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# traced and tracectl with a relayed machine, in one guest: pbtrace.ko is
# both the endpoint (vsock:PORT) and a relay to it over vsock_loopback
# (CID 1), named "loopguest". A session with trace_all_machines: true must
# get the relay's chunks through READ_REMOTE, stamped with the machine's
# id, while traced leaves the relay's own local session alone; tracectl
# status shows the machine; the file decodes with Perfetto's schema and
# holds, for the machine: its system_info, one remote_clock_sync (no
# clock_snapshot), sched events and a trace_stats stamped with its
# machine_id; trace_processor has both machines' CPUs, threads and sched
# slices and no error or data_loss stats. A second session with
# machine_name_filter: "host" must record nothing from the machine; the
# guest's own events_written equals its events in the file. Then over TCP
# on loopback the relay's socket is killed mid-session (ss -K): the session
# still ends and the disconnect is in traced's log and the machine's
# trace_stats. PBTRACE_USER_BUILD=user/build-san runs the sanitizer build,
# PBTRACE_VALGRIND=1 traced under valgrind.
# Prints TAP. Run from the repo: tools/vm --vsock --no-module -- selftests/pbtrace/vsock_machines_test.sh
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
BIN=${PBTRACE_USER_BUILD:-$TOP/user/build}
# PBTRACE_VALGRIND=1: traced under valgrind (its exit status says errors).
VG=
[[ ${PBTRACE_VALGRIND:-0} == 1 ]] &&
	VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
PORT=20011
P=/sys/module/pbtrace/parameters
W=/tmp/vm_machines
WAIT_STEP=0.2
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tp.sh"
# SIGTERM is a clean exit for traced; the sanitizer build reports leaks
# and errors at exit, into its log ($1).
stop_traced() {
	local rc log=$1
	[[ -n ${TRACED:-} ]] || return
	kill "$TRACED" 2>/dev/null
	wait "$TRACED"
	rc=$?
	TRACED=
	check "traced exits cleanly (status $rc), no sanitizer report" \
		eval '((rc == 0)) && [[ -f $log ]] && ! grep -q "Sanitizer\|runtime error" "$log"'
	((rc == 0)) || grep -v "^traced: " "$log" | head -40 | sed 's/^/# traced: /'
}
finish() {
	stop_traced $W/traced${LOG2:-}.log
	rmmod pbtrace 2>/dev/null
	echo "1..$N"
	exit $FAILED
}
decode() {
	protoc -I "$SCHEMA" --decode=perfetto.protos.Trace perfetto_trace.proto < "$1"
}

mkdir -p $W
rmmod pbtrace 2>/dev/null
if ! insmod "$KO" endpoint=vsock:$PORT relay=vsock:1:$PORT relay_name=loopguest; then
	not_ok "insmod pbtrace.ko endpoint=vsock:$PORT relay=vsock:1:$PORT"
	finish
fi
check "the relay connects to the endpoint over vsock loopback" \
	wait_for 100 eval 'ep_machines | grep -q "^machine 1 "'
# Guests' names, kernels and CIDs are root's to read (0400), and the
# relay's too: an ordinary user is refused, root reads them.
for f in endpoint_stats relay_stats; do
	check "$f is mode 0400 and refuses user nobody" eval \
		'[[ $(stat -c %a $P/$f) == 400 ]] && ! setpriv --reuid=nobody --regid=nogroup --clear-groups cat $P/$f >/dev/null 2>&1 && grep -q . $P/$f'
done

$VG "$BIN/traced" 2> $W/traced.log &
TRACED=$!
wait_for 50 eval '"$BIN/tracectl" status -M 2>/dev/null | grep -q "traced: running"'

cat > $W/all.pbtx <<EOF
buffers { size_kb: 512 fill_policy: DISCARD }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_process_exit" } } }
trace_all_machines: true
duration_ms: 10000
write_into_file: true
file_write_period_ms: 500
unique_session_name: "all"
EOF
cat > $W/host.pbtx <<EOF
buffers { size_kb: 512 fill_policy: DISCARD }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" } } machine_name_filter: "host" }
trace_all_machines: true
unique_session_name: "hostonly"
EOF

"$BIN/tracectl" start -c $W/host.pbtx -o $W/host.pftrace > $W/start.out 2>&1
check "tracectl start -c host.pbtx (machine_name_filter: host)" test $? -eq 0
"$BIN/tracectl" record -c $W/all.pbtx -o $W/all.pftrace > $W/record.out 2>&1 &
RECORD=$!
# The relay's session appears on this machine too; it must stay the relay's.
check "the relay runs its local session for the host" \
	wait_for 50 eval '"$BIN/tracectl" status -M | grep -q "(relay: recorded for this machine'"'"'s host)"'
"$BIN/tracectl" stop -n relay > $W/stop_relay.out 2>&1
RC=$?
check "tracectl stop -n relay refused: the host's session owns it (exit $RC)" \
	eval '((RC != 0)) && grep -q "relay recording for its host" $W/stop_relay.out'
check "tracectl status shows the machine connected, its chunks arriving" \
	wait_for 50 eval '"$BIN/tracectl" status -M > $W/status.out 2>&1 &&
		grep -q "machine loopguest (id [1-9][0-9]*): connected, cid 1, buffer 0" $W/status.out &&
		grep -q "received [1-9][0-9]* chunks" $W/status.out'
grep -A3 "machine loopguest" $W/status.out | sed 's/^/# /'
wait $RECORD
check "tracectl record -c all.pbtx (trace_all_machines) ran and traced finished the file" test $? -eq 0
"$BIN/tracectl" stop -n hostonly --wait > /dev/null 2>> $W/start.out
grep -A30 "packets$" $W/record.out | sed 's/^/# record: /'
sed 's/^/# traced: /' $W/traced.log | grep -i "machine\|remote\|relay\|error" | head -20

decode $W/all.pftrace > $W/all.txt 2> $W/decode.err
check "the file decodes with Perfetto's schema" test $? -eq 0
ID=$(grep -m1 -o "^  machine_id: [0-9]*$" $W/all.txt | grep -o "[0-9]*$")
check "packets stamped with a non-zero machine_id" test -n "$ID" -a "${ID:-0}" != 0
# One pass, packet by packet: what the machine's packets (machine_id $ID)
# and the host's (none) hold. Flags only: the text is large.
awk -v id="$ID" '
	/^packet {/ { mid = 0; ev = 0; delete f; next }
	/^  machine_id: / { mid = $2; next }
	/sched_switch {/ { f["sched"] = 1 }
	/machine_name: "loopguest"/ { f["sysinfo"] = 1 }
	/^  remote_clock_sync {/ { f["sync"]++ }
	/^  clock_snapshot {/ { f["snapshot"] = 1 }
	/^  ftrace_events {/ { f["chunk"] = 1 }
	/^    event {/ || /^      (switch|waking)_timestamp: / { ev++ }	# compact_sched: one each
	/^      chunks_written: [1-9]/ { f["stats"] = 1; written = $2 }
	/^}/ { who = mid == id ? "machine" : mid ? "other" : "host"
	       if (who == "machine" && f["chunk"]) { chunks++; events += ev }
	       if (who == "machine" && f["stats"]) stats_written = written
	       if (who == "machine" && f["sync"]) syncs++
	       for (k in f) if (k != "chunk") print who, k; next }
	END { print "count", chunks + 0, stats_written + 0, events + 0, syncs + 0 }' $W/all.txt |
	sort -u > $W/flags.txt
grep -v "^count" $W/flags.txt | sed 's/^/# /'
grep -B2 -A14 "^  trace_stats {" $W/all.txt | grep -A16 "machine_id\|trace_stats" | tail -18 | sed 's/^/# /'
check "the machine's sched_switch events are in the file" grep -qx "machine sched" $W/flags.txt
check "the machine's system_info names it" grep -qx "machine sysinfo" $W/flags.txt
read -r _ CHUNKS WRITTEN EVENTS SYNCS < <(grep "^count" $W/flags.txt)
check "the machine's clock: one remote_clock_sync ($SYNCS), no clock_snapshot of its own" \
	eval '((SYNCS == 1)) && ! grep -qx "machine snapshot" $W/flags.txt'
check "a trace_stats stamped with the machine's id, its chunks counted" grep -qx "machine stats" $W/flags.txt
check "its trace_stats counts exactly the machine's chunks in the file ($CHUNKS)" \
	test "$CHUNKS" -gt 0 -a "$CHUNKS" = "$WRITTEN"
GUEST=$(sed -n 's/.*machine [0-9]* (loopguest): .*guest wrote \([0-9]*\) events; lost: 0 chunks on the wire, 0 dropped here.*/\1/p' $W/traced.log)
check "the guest's own events_written (STOPPED) == its events in the file ($EVENTS)" \
	test "$EVENTS" -gt 0 -a "${GUEST:-x}" = "$EVENTS"
check "tracectl record's summary counts the machine's events" \
	grep -q "relayed machine $ID (loopguest): [0-9]* packets, $EVENTS ftrace events" $W/record.out
check "host packets (no machine_id) carry sched_switch too" grep -qx "host sched" $W/flags.txt
check "no packet of another machine id" eval '! grep -q "^other" $W/flags.txt'
# all.pbtx streams a DISCARD buffer without flush_period_ms on purpose
# (the guest's events_written must equal its events in the file), and
# trace_processor warns about that config.
tp_check_machines $W/all.pftrace 2 config_write_into_file_discard config_write_into_file_no_flush
decode $W/host.pftrace > $W/host.txt 2>> $W/decode.err
check "the host-only session decodes and has no machine_id packet" \
	eval '[[ -s $W/host.txt ]] && ! grep -q "^  machine_id" $W/host.txt && grep -q "sched_switch {" $W/host.txt'
# Flag mode: -A is trace_all_machines; the machine moves to this session
# now that the others are gone.
"$BIN/tracectl" start -n flags -A -e sched/sched_switch -b 512 --fill discard \
	-o $W/flags.pftrace > /dev/null 2>> $W/start.out
check "tracectl start -A -e sched/sched_switch" test $? -eq 0
sleep 2
"$BIN/tracectl" stop -n flags --wait > /dev/null 2>> $W/start.out
decode $W/flags.pftrace > $W/flags.txt 2>> $W/decode.err
check "tracectl -A: the file holds the machine's sched_switch events" \
	eval 'awk "/^packet {/{m=0;s=0} /^  machine_id: [1-9]/{m=1} /sched_switch {/{s=1} /^}/{if (m && s) f=1} END{exit !f}" $W/flags.txt'
# tracectl streams by default, here into the DISCARD buffer asked for (so
# the guest's first events are kept): trace_processor flags that config.
tp_check_machines $W/flags.pftrace 2 config_write_into_file_discard
check "traced did not touch the relay's session" \
	eval '! grep -q "session .* (relay)" $W/traced.log'

# ---- a machine that drops out: TCP on loopback, its socket killed ----
# The session must still end (remote EOF with the machine gone or back),
# and the loss be counted where traced writes it.
stop_traced $W/traced.log
LOG2=2
rmmod pbtrace
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
TPORT=20012
if ! insmod "$KO" endpoint=tcp:$TPORT relay=tcp:127.0.0.1:$TPORT \
	relay_name=tcpguest relay_key=$KEY; then
	not_ok "insmod with a TCP endpoint and relay on loopback"
	finish
fi
check "the TCP relay connects" wait_for 100 eval 'ep_machines | grep -q "^machine 1 "'
$VG "$BIN/traced" 2> $W/traced2.log &
TRACED=$!
wait_for 50 eval '"$BIN/tracectl" status -M 2>/dev/null | grep -q "traced: running"'
"$BIN/tracectl" start -n drop -A -e sched/sched_switch -b 512 --fill discard \
	-o $W/drop.pftrace > /dev/null 2>> $W/start.out
check "tracectl start -A with a TCP relay" test $? -eq 0
wait_for 50 eval '"$BIN/tracectl" status -M | grep -q "machine tcpguest (id 1): connected"'
sleep 1
modprobe tcp_diag 2>/dev/null
ss -tn state established "( dport = :$TPORT )" | sed 's/^/# ss: /'
# ss -K needs CONFIG_INET_DIAG_DESTROY: Debian's kernels have it, a
# kernel of our own (tools/debug-kernel's, before its config had it) may not.
CUT=1
if [[ -r /proc/config.gz ]] && ! zcat /proc/config.gz | grep -q '^CONFIG_INET_DIAG_DESTROY=y'; then
	CUT=0
	NOCUT="# SKIP this kernel has no CONFIG_INET_DIAG_DESTROY: ss -K cannot cut a socket"
fi
ss -K -tn state established "( dport = :$TPORT )" 2>&1 | sed 's/^/# ss -K: /'
if ((CUT)); then
	check "ss -K cut the relay's connection" \
		wait_for 50 eval '"$BIN/tracectl" status -M | grep -q "[1-9][0-9]* disconnects"'
else
	ok "ss -K cut the relay's connection $NOCUT"
fi
sleep 2
"$BIN/tracectl" status -M | grep -A3 "machine tcpguest" | sed 's/^/# /'
"$BIN/tracectl" stop -n drop --wait > /dev/null 2>> $W/start.out
check "the session with a dropped machine ends and traced finishes the file" test $? -eq 0
grep "machine 1 (tcpguest)" $W/traced2.log | sed 's/^/# traced: /'
decode $W/drop.pftrace > $W/drop.txt 2>> $W/decode.err
if ((CUT)); then
	check "traced logs the disconnect among the machine's losses" \
		grep -q "machine 1 (tcpguest): .* [1-9][0-9]* disconnects" $W/traced2.log
	check "its file decodes; the machine's trace_stats counts connections seen > 1 or 0 connected" \
		eval 'awk "/^packet {/{m=0;t=0;seen=0;conn=1} /^  machine_id: 1\$/{m=1} /^  trace_stats {/{t=1} /producers_seen: /{seen=\$2} /producers_connected: /{conn=\$2} /^}/{if (m && t && (seen > 1 || conn == 0)) f=1} END{exit !f}" $W/drop.txt'
else
	ok "traced logs the disconnect among the machine's losses $NOCUT"
	ok "its file decodes; the machine's trace_stats counts connections seen > 1 or 0 connected $NOCUT"
fi
# The cut loses the relay's unsent chunks: each guest CPU's first
# sched_switch after the reconnect does not follow its last before, and
# trace_processor counts that as mismatched_sched_switch_tids.
# (and streams into DISCARD, as the flags session above).
tp_check_machines $W/drop.pftrace 2 mismatched_sched_switch_tids config_write_into_file_discard
# Every TCP CHUNK after AUTH is tagged (HMAC-SHA256); what that costs here,
# for docs/relay-protocol.md (TCG: slower than hardware).
CH=$(sed -n 's/^chunks_sent //p' $P/relay_stats)
TNS=$(sed -n 's/^tag_ns //p' $P/relay_stats)
BY=$(sed -n 's/^bytes_sent //p' $P/relay_stats)
check "the TCP relay tagged its $CH chunks ($BY bytes): $TNS ns, $((CH ? TNS / CH : 0)) ns per chunk" \
	eval '((CH > 0 && TNS > 0))'
finish
