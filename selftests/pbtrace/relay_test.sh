#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# The relay and the endpoint in one guest over vsock_loopback (CID 1):
# pbtrace.ko loaded as both endpoint=vsock:PORT and relay=vsock:1:PORT
# with its identity overridden by parameter. The endpoint must see the
# relay's HELLO with the right identity and answer its pings; then a
# hostile client (build/relay_hostile) is counted and dropped while the
# relay stays connected; the module unloads cleanly. Then the same over
# TCP on loopback with the shared-key handshake, the hostile client trying
# no, wrong, replayed and right proofs. Then the relay records for a host:
# a userspace host (build/relay_fakehost) sends CONTROL start, flush and
# stop (also a start that replaces a running session) and checks every
# CHUNK with the module's own frame parser; the
# chunks decode with Perfetto's schema to as many events as STOPPED says
# the guest wrote; a dropped connection and a reconnect start afresh; the
# module unloads while a relayed session streams. tools/vm fails the run
# on any kernel complaint in dmesg.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
PORT=20001
TCP_PORT=20002
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
P=/sys/module/pbtrace/parameters
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tp.sh"
# Run relay_hostile with these arguments, its TAP lines renumbered as ours.
hostile() {
	local rc
	"$TOP/selftests/pbtrace/build/relay_hostile" "$@" > /tmp/hostile.out
	rc=$?
	retap hostile /tmp/hostile.out
	((rc == 0)) || not_ok "relay_hostile $* exited $rc"
}
relay_stat() { sed -n "s/^$1 //p" "$P/relay_stats"; }
ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
machine_line() { ep_machines | grep "^machine 1 "; }

rmmod pbtrace 2>/dev/null
if ! insmod "$KO" endpoint=vsock:$PORT relay=vsock:1:$PORT \
	relay_name=relay-guest relay_hint=00112233445566778899aabbccddeeff; then
	not_ok "insmod pbtrace.ko endpoint=vsock:$PORT relay=vsock:1:$PORT"
	echo "1..$N"
	exit 1
fi
ok "insmod with endpoint and relay parameters"

check "relay connected and welcomed as machine 1" \
	wait_for 100 eval '[ "$(relay_stat connected)$(relay_stat machine_id)" = 11 ]'
want="machine 1 name=relay-guest sysname=$(uname -s) release=$(uname -r) arch=$(uname -m) cpus=$(nproc) "
check "endpoint's machine table: name, sysname, release, arch, cpus from HELLO" \
	wait_for 20 eval '[[ "$(machine_line)" == "$want"* ]]'
machine_line | sed 's/^/# /'
check "relay got PONGs for its PINGs (ping period 1 s)" \
	wait_for 50 eval '[ "$(relay_stat pongs)" -ge 3 ]'
check "endpoint measured a round trip for machine 1" \
	wait_for 30 eval '[[ "$(machine_line)" =~ rtt_ns=[1-9] ]]'

PBTRACE_RELAY_HINT=00112233445566778899aabbccddeeff hostile $PORT

check "relay still connected after the hostile client (no reconnect)" \
	test "$(relay_stat connected)$(relay_stat connects)" = 11
sed 's/^/# /' "$P/endpoint_stats"
ep_machines | sed 's/^/# /'
sed 's/^/# /' "$P/relay_stats"
check "rmmod with relay and endpoint connected" rmmod pbtrace

# ---- TCP on loopback, with the shared key ----
if insmod "$KO" endpoint=vsock:$PORT,tcp:$TCP_PORT relay=tcp:127.0.0.1:$TCP_PORT \
	relay_name=tcp-guest relay_key=$KEY; then
	ok "insmod with a vsock and a TCP endpoint and a TCP relay"
	check "TCP relay passed the handshake and was welcomed as machine 1" \
		wait_for 100 eval '[ "$(relay_stat connected)$(relay_stat machine_id)" = 11 ]'
	check "endpoint's machine 1 is the TCP relay" \
		wait_for 20 eval '[[ "$(machine_line)" == "machine 1 name=tcp-guest "* ]]'
	check "the key is not readable in sysfs" test ! -e $P/relay_key
	hostile tcp $TCP_PORT $KEY
	check "TCP relay still connected after the hostile client" \
		test "$(relay_stat connected)$(relay_stat connects)" = 11
	sed 's/^/# /' "$P/endpoint_stats"
ep_machines | sed 's/^/# /'
	check "rmmod with TCP relay and endpoint connected" rmmod pbtrace
else
	not_ok "insmod with a vsock and a TCP endpoint and a TCP relay"
fi
# ---- the relay records and streams sessions for a host ----
SCHEMA=${PBTRACE_SCHEMA_DIR:-$(git -C "$TOP" rev-parse --show-toplevel 2>/dev/null || echo "$TOP")/../shared/perfetto}
FAKEHOST=$TOP/selftests/pbtrace/build/relay_fakehost
FH_PORT=20004
FH_DIR=$(mktemp -d)
decode() { protoc -I "$SCHEMA" --decode=perfetto.protos.Trace perfetto_trace.proto < "$1"; }
# Context switches for the relayed session to record: a pipe ping-pong.
busy() { dd if=/dev/zero bs=64 count=$1 2>/dev/null | cat > /dev/null; }

"$FAKEHOST" $FH_PORT "$FH_DIR" > /tmp/fakehost.out 2>&1 &
fh=$!
sleep 0.3
if insmod "$KO" relay=vsock:1:$FH_PORT relay_name=fake-guest; then
	ok "insmod with a relay to a userspace host on vsock port $FH_PORT"
	end=$((SECONDS + 240))
	while kill -0 $fh 2>/dev/null && ((SECONDS < end)); do
		busy 2000
		sleep 0.3
	done
	if kill -0 $fh 2>/dev/null; then
		# Where everyone waits, for the report; then the test goes on.
		not_ok "relay_fakehost did not finish in 240 s"
		echo "# relay_fakehost waits in $(cat /proc/$fh/wchan)"
		sed 's/^/# fakehost: /' /tmp/fakehost.out /proc/$fh/stack
		for t in $(pgrep pbtrace-relay); do
			sed 's/^/# pbtrace-relay: /' /proc/$t/stack
		done
		sed 's/^/# /' "$P/relay_stats"
		kill $fh
	fi
	wait $fh
	rc=$?
	retap fakehost /tmp/fakehost.out
	((rc == 0)) || not_ok "relay_fakehost exited $rc"
	for s in 7 9; do
		if decode "$FH_DIR/s$s.pftrace" > "$FH_DIR/s$s.txt" 2> "$FH_DIR/s$s.err"; then
			ok "session $s: the relayed chunks decode with Perfetto's schema ($(wc -c < "$FH_DIR/s$s.pftrace") bytes)"
		else
			not_ok "session $s: the relayed chunks decode with Perfetto's schema: $(head -c 300 "$FH_DIR/s$s.err")"
		fi
		read -r written lost chunks < "$FH_DIR/s$s.stopped" || written=x
		# compact_sched events are one switch_/waking_timestamp entry each.
		events=$(grep -c -e '^ *event {' -e '^ *switch_timestamp:' -e '^ *waking_timestamp:' "$FH_DIR/s$s.txt")
		switches=$(grep -c '^ *sched_switch {' "$FH_DIR/s$s.txt")
		packets=$(grep -c '^packet {' "$FH_DIR/s$s.txt")
		echo "# session $s: $packets packets, $events events ($switches sched_switch); STOPPED: written $written lost $lost, $chunks chunks"
		check "session $s: one packet per chunk, with sched_switch events" \
			test "$packets" = "$chunks" -a "$switches" -gt 0
		check "session $s: events in the chunks = events_written in STOPPED (events_lost $lost = 0)" \
			test "$events" = "$written" -a "$lost" = 0
		check "session $s: every packet has the guest's sequence id, none a machine_id" \
			test "$packets" -gt 0 -a \
			"$(grep -c '^  trusted_packet_sequence_id: [1-9]' "$FH_DIR/s$s.txt")" = "$packets" \
			-a "$(grep -c 'machine_id' "$FH_DIR/s$s.txt")" = 0
		# A relay's chunks alone, as a single-machine trace.
		tp_check_machines "$FH_DIR/s$s.pftrace" 1
	done
	sed 's/^/# /' "$P/relay_stats"
	check "relay_stats: four sessions, three STOPPED, none failed, the unknown event skipped each time" \
		test "$(relay_stat sessions)$(relay_stat stopped_sent)$(relay_stat start_failed)$(relay_stat events_skipped)" = 4304
	check "relay_stats: no local session left" test "$(relay_stat local_session)" = 0
	check "rmmod after the relayed sessions" rmmod pbtrace
else
	not_ok "insmod with a relay to a userspace host on vsock port $FH_PORT"
	kill $fh 2>/dev/null
fi
rm -rf "$FH_DIR"

"$FAKEHOST" hold $FH_PORT 60 > /tmp/fakehost.out 2>&1 &
fh=$!
sleep 0.3
if insmod "$KO" relay=vsock:1:$FH_PORT; then
	check "a relayed session streams" \
		wait_for 300 eval 'busy 500; [ "$(relay_stat chunks_sent)" -ge 3 ]'
	check "rmmod while the relay streams a session" rmmod pbtrace
	wait $fh
	retap fakehost /tmp/fakehost.out
else
	not_ok "insmod with a relay to a userspace host that holds a session"
	kill $fh 2>/dev/null
fi
wait $fh 2>/dev/null

# ---- vsock with a CID list that does not hold the relay's (1) ----
if insmod "$KO" endpoint=vsock:$PORT endpoint_cids=3,4 relay=vsock:1:$PORT; then
	ok "insmod with endpoint_cids=3,4"
	check "relay from CID 1 refused, counted" \
		wait_for 50 eval '[ "$(ep_stat cid_refused)" -ge 2 ]'
	check "relay keeps retrying with backoff, never welcomed" \
		test "$(relay_stat errors)" -ge 2 -a "$(relay_stat welcomes)" = 0
	check "rmmod while the relay is backing off" rmmod pbtrace
else
	not_ok "insmod with endpoint_cids=3,4"
fi
# ---- a host that accepts but never answers ----
"$TOP/selftests/pbtrace/build/relay_hostile" silent 20003 30 &
silent=$!
sleep 0.5
if insmod "$KO" relay=tcp:127.0.0.1:20003 relay_key=$KEY; then
	ok "insmod with a relay to a silent host"
	check "relay gives up on the silent host after 10 s (ETIMEDOUT), never welcomed" \
		wait_for 200 eval '[ "$(relay_stat last_error)" = -110 -a "$(relay_stat welcomes)" = 0 ]'
	check "rmmod while the relay waits on a silent host" rmmod pbtrace
else
	not_ok "insmod with a relay to a silent host"
fi
kill $silent 2>/dev/null
wait $silent 2>/dev/null
check "a bad endpoint_cids is refused at load" \
	eval '! insmod "$KO" endpoint=vsock:$PORT endpoint_cids=3x 2>/dev/null'
# Keys may come later, from the names table (tracectl machines load):
# until then every TCP relay is refused, and counted.
if insmod "$KO" endpoint=tcp:$TCP_PORT; then
	ok "TCP without a key loads (its keys may come from the names table)"
	"$TOP/selftests/pbtrace/build/relay_hostile" tcpjoin $TCP_PORT $KEY nokey \
		00112233445566778899aabbccddeeff > /tmp/nokey.out 2>&1
	check "a relay is refused while the endpoint has no key ($(tail -n1 /tmp/nokey.out)), identity_refused $(ep_stat identity_refused)" \
		eval '! grep -q "^welcome" /tmp/nokey.out && [[ $(ep_stat identity_refused) == 1 ]]'
	rmmod pbtrace
else
	not_ok "insmod endpoint=tcp:$TCP_PORT without a key"
fi
check "an endpoint_ping_ms outside 100..10000 is refused at load" \
	eval '! insmod "$KO" endpoint=vsock:$PORT endpoint_ping_ms=50 2>/dev/null'
# The period the host asks for is the one the relay pings at: at 200 ms at
# least 2 rounds a second (the default 1000 ms gives at most 1).
if insmod "$KO" endpoint=vsock:$PORT endpoint_ping_ms=200 relay=vsock:1:$PORT; then
	wait_for 50 eval '[ "$(relay_stat pongs)" -ge 1 ]'
	p0=$(relay_stat pongs) t0=$SECONDS
	sleep 3
	p1=$(relay_stat pongs) t1=$SECONDS
	check "endpoint_ping_ms=200: $((p1 - p0)) ping rounds in $((t1 - t0)) s" \
		test $((p1 - p0)) -ge $((2 * (t1 - t0)))
	rmmod pbtrace
else
	not_ok "insmod with endpoint_ping_ms=200"
fi
lsmod | grep -q '^pbtrace ' && rmmod pbtrace
dmesg | grep pbtrace | sed 's/^/# dmesg: /' | tail -n 30

echo "1..$N"
exit $FAILED
