#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# The endpoint's connection lifecycle against hostile peers, in one guest
# over vsock_loopback (CID 1) and TCP on loopback (build/relay_hostile):
# 1. A guest that queued 2000 PINGs and takes the PONGs a byte at a time
#    (a 128-byte vsock buffer, read every 300 ms) keeps the host's send
#    going for ever: rmmod must still end at once (the referee: rmmod's
#    own exit, timed; a hung one is reported, then the guest is killed to
#    free it), and without rmmod the host must give up on that send.
# 2. One peer opening 8 connections more than its share of the pending
#    pool (endpoint_pending / 4) and trickling a HELLO byte a second: the
#    host holds only the newest of its share, closed the oldest for them,
#    closes the rest at the handshake deadline, and a good relay from
#    127.0.0.1 (loopback is one peer: the crowd's) gets in meanwhile.
# 3. A welcomed relay trickling a PING a byte a second is closed as idle.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
HOSTILE=$TOP/selftests/pbtrace/build/relay_hostile
PORT=20031
TCP_PORT=20032
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
P=/sys/module/pbtrace/parameters
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
load() { insmod "$KO" endpoint=vsock:$PORT,tcp:$TCP_PORT relay_key=$KEY; }

rmmod pbtrace 2>/dev/null
if ! load; then
	not_ok "insmod pbtrace.ko endpoint=vsock:$PORT,tcp:$TCP_PORT"
	echo "1..$N"
	exit 1
fi

# ---- 1. rmmod while the host's send trickles into a guest ----
# What rmmod takes with no guest at all (TCG: tracepoints, RCU), to compare.
t0=$(date +%s%N)
rmmod pbtrace
base=$((($(date +%s%N) - t0) / 1000000))
load
"$HOSTILE" stall $PORT 2000 > /tmp/stall.out 2>&1 &
stall=$!
check "the stalling guest is welcomed and its PINGs are being answered" \
	wait_for 100 eval '[ "$(ep_stat pings)" -ge 1 ]'
sleep 3			# its reading begun, the host's sends trickle
for t in $(pgrep pbtrace-ep/); do
	sed "s|^|# $(cat /proc/$t/comm) before rmmod: |" /proc/$t/stack
done
t0=$(date +%s%N)
rmmod pbtrace &
rm_pid=$!
WAIT_STEP=0.2 wait_for 300 eval '! kill -0 $rm_pid 2>/dev/null'
ms=$((($(date +%s%N) - t0) / 1000000))
if kill -0 $rm_pid 2>/dev/null; then
	not_ok "rmmod while a guest takes a byte at a time: still running after $ms ms (with no guest: $base ms)"
	sed 's/^/# rmmod stack: /' /proc/$rm_pid/stack
	for t in $(pgrep pbtrace-ep); do
		sed "s|^|# $(cat /proc/$t/comm): |" /proc/$t/stack
	done
	kill $stall		# its close fails the host's send: rmmod ends
	wait $rm_pid
	echo "# rmmod ended $((($(date +%s%N) - t0) / 1000000)) ms after it began, once the guest was killed"
else
	wait $rm_pid
	check "rmmod while a guest takes a byte at a time: done in $ms ms (with no guest: $base ms)" \
		test $? = 0
fi
kill $stall 2>/dev/null
wait $stall 2>/dev/null
sed 's/^/# /' /tmp/stall.out

# ---- 1b. the same guest, no rmmod: the host gives up on the send ----
if ! load; then
	not_ok "insmod again"
	echo "1..$N"
	exit 1
fi
timeout 60 "$HOSTILE" stall $PORT 2000 close > /tmp/stall.out 2>&1
rc=$?
retap stall /tmp/stall.out
((rc == 0)) || not_ok "relay_hostile stall exited $rc"

# ---- 2. one peer's crowd of half-open handshakes ----
timeout 60 "$HOSTILE" crowd $PORT > /tmp/crowd.out 2>&1
rc=$?
retap "crowd vsock" /tmp/crowd.out
((rc == 0)) || not_ok "relay_hostile crowd $PORT exited $rc"

# ---- 3 (in the background): trickled bytes are not life ----
timeout 70 "$HOSTILE" trickle $PORT > /tmp/trickle.out 2>&1 &
trickle=$!

timeout 60 "$HOSTILE" crowd tcp $TCP_PORT $KEY > /tmp/crowd.out 2>&1
rc=$?
retap "crowd tcp" /tmp/crowd.out
((rc == 0)) || not_ok "relay_hostile crowd tcp $TCP_PORT exited $rc"

wait $trickle
rc=$?
retap trickle /tmp/trickle.out
((rc == 0)) || not_ok "relay_hostile trickle exited $rc"

sed 's/^/# /' "$P/endpoint_stats"
check "rmmod" rmmod pbtrace
dmesg | grep 'pbtrace: endpoint' | sed 's/^/# dmesg: /' | tail -n 30
echo "1..$N"
exit $FAILED
