#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# Strangers cannot lock guests out (issue 21, item 3), its own scenario in
# one guest: pbtrace.ko is its own host over TCP loopback (endpoint
# tcp:TPORT, relay=tcp:127.0.0.1:TPORT with a key) and has a vsock
# listener too. 64 other loopback addresses each hold 4 silent
# connections and reopen each one as soon as the host closes it, and two
# threads connect and reset as fast as they can (build/endpoint_flood).
# Then the relay's connection is cut (ss -K, the kernel's sock_destroy),
# twice: each time the relay must be back (relay_stats welcomes,
# the machine online in tracectl machines) within a generous bound,
# timed by the relay's own log (loss to WELCOME) and reported in ms,
# beside the same without the crowd. Meanwhile a keyed relay from 127.0.0.1, the crowd's own
# peer (build/relay_many), and a vsock guest (build/relay_hostile join,
# vsock loopback CID 1) get in. The crowd holds at most its share of the
# TCP pool (all of 127/8 being one peer), nothing of vsock's, and every
# connection it lost is counted (tcp_peer_limit, tcp_pending_full).
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
B=$TOP/selftests/pbtrace/build
FLOOD=$B/endpoint_flood
HOSTILE=$B/relay_hostile
MANY=$B/relay_many
PORT=20041
TPORT=20042
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
BOUND=30		# s: a relay's backoff alone reaches 30 s
P=/sys/module/pbtrace/parameters
W=$(mktemp -d)
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
relay_stat() { sed -n "s/^$1 //p" "$P/relay_stats"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
finish() {
	[ -n "${FL:-}" ] && kill "$FL" 2>/dev/null && wait "$FL" 2>/dev/null
	[ -f $W/flood.out ] && tail -n 3 $W/flood.out | sed 's/^/# flood: /'
	sed 's/^/# /' $P/endpoint_stats 2>/dev/null
	lsmod | grep -q '^pbtrace ' && rmmod pbtrace
	dmesg | grep "pbtrace: endpoint" | tail -n 8 | sed 's/^/# dmesg: /'
	rm -rf "$W"
	echo "1..$N"
	exit $FAILED
}

rmmod pbtrace 2>/dev/null
modprobe tcp_diag 2>/dev/null	# ss -K: sock_destroy through inet_diag
if ! insmod "$KO" endpoint=vsock:$PORT,tcp:$TPORT relay=tcp:127.0.0.1:$TPORT \
	relay_key=$KEY relay_name=self; then
	not_ok "insmod pbtrace.ko endpoint=vsock:$PORT,tcp:$TPORT relay=tcp:127.0.0.1:$TPORT"
	finish
fi
POOL=$(cat $P/endpoint_pending 2>/dev/null || echo 16)
SHARE=$((POOL / 4))
check "the relay is machine \"self\", online" \
	wait_for 300 eval 'ep_machines | grep -q "^machine [0-9]* name=self .*online=1 "'

# cut: cut the relay's connection (both ends), then wait until it is back;
# prints the ms it took, returns non-zero if the cut or the return failed.
cut() {
	local w0 t0 rc
	w0=$(relay_stat welcomes)
	t0=$(date +%s%N)
	ss -t -K src 127.0.0.1 dst 127.0.0.1 "( sport = :$TPORT or dport = :$TPORT )" > /dev/null 2>&1
	wait_for 50 eval '[[ $(relay_stat connected) == 0 || $(relay_stat welcomes) != "$w0" ]]' || return 2
	WAIT_STEP=0.1 wait_for $((BOUND * 10)) eval '[[ $(relay_stat connected) == 1 && $(relay_stat welcomes) -gt $w0 ]]'
	rc=$?
	echo "# the test saw it back $(ms_since $t0) ms after it began the cut (ss itself is slow here); relay_stats: $(grep -E '^(connects|welcomes|errors|last_error) ' $P/relay_stats | tr '\n' ' ')" >&2
	dmesg | grep "pbtrace: relay" | tail -n 3 | sed 's/^/# dmesg: /' >&2
	# The relay's own log times it: from the loss to the WELCOME.
	dmesg | awk -F'[][]' '/pbtrace: relay: lost host/ { lost = $2 }
		/pbtrace: relay: host .* took us as machine/ { back = $2 }
		END { if (lost && back > lost) printf "%d\n", (back - lost) * 1000; else print "?" }'
	return $rc
}

# ---- without the crowd, for comparison ----
ms=$(cut)
check "ss -K cuts the relay, and it is back in $ms ms without a crowd (the relay's log: loss to WELCOME)" test $? = 0
t0=$(date +%s%N)
R=$(timeout 60 "$HOSTILE" join $PORT vbase $(printf '%032x' 6) 2>&1)
check "a vsock guest (CID 1) is welcomed in $(ms_since $t0) ms without a crowd ($R)" \
	eval 'grep -q "^welcome [0-9]" <<<"$R"'

# ---- the crowd ----
"$FLOOD" $TPORT 64 4 120 2 > $W/flood.out 2>&1 &
FL=$!
WAIT_STEP=0.5 check "the crowd holds the TCP pool's loopback share ($SHARE of $POOL) and churns in it" \
	wait_for 120 eval '[[ $(ep_stat tcp_pending) -ge $SHARE && $(ep_stat tcp_peer_limit) -ge 256 ]]'
sleep 2
tail -n 1 $W/flood.out | sed 's/^/# flood: /'
pend=$(ep_stat tcp_pending)
check "64 loopback addresses are one peer: the crowd holds $pend of the $POOL, at most $SHARE (tcp_peer_limit $(ep_stat tcp_peer_limit))" \
	eval '[[ $pend -le $SHARE ]]'
check "the TCP crowd takes nothing of vsock's pool (vsock_pending $(ep_stat vsock_pending))" \
	test "$(ep_stat vsock_pending)" = 0

# ---- cut the relay, twice ----
echo "# ${SECONDS}s: cut the relay"
for round in 1 2; do
	ms=$(cut)
	rc=$?
	if ((rc == 2)); then
		not_ok "round $round: ss -K cut the relay's connection (relay_stats connected $(relay_stat connected))"
		continue
	fi
	check "round $round: cut, the relay is back in $ms ms under the flood (the relay's log: loss to WELCOME; the test waits $BOUND s; last_error $(relay_stat last_error), connects $(relay_stat connects))" \
		test $rc = 0
	check "round $round: tracectl machines shows self online" \
		wait_for 100 eval 'ep_machines | grep -q "^machine [0-9]* name=self .*online=1 "'
	echo "# round $round: reconnect ${ms} ms; tcp_pending $(ep_stat tcp_pending) tcp_peer_limit $(ep_stat tcp_peer_limit) tcp_pending_full $(ep_stat tcp_pending_full)"
done

# ---- others get in meanwhile ----
echo "# ${SECONDS}s: a keyed relay and a vsock guest"
t0=$(date +%s%N)
timeout 60 "$MANY" -f 127.0.0.1 $TPORT keyed 1 1 $KEY > $W/many.out 2>&1
ms=$(ms_since $t0)
check "a keyed relay from 127.0.0.1, the crowd's own peer, is welcomed in $ms ms ($(head -n1 $W/many.out))" \
	grep -q "^keyed1 welcome [0-9]" $W/many.out
t0=$(date +%s%N)
R=$(timeout 60 "$HOSTILE" join $PORT vguest $(printf '%032x' 7) 2>&1)
ms=$(ms_since $t0)
check "a vsock guest (CID 1) is welcomed in $ms ms during the flood ($R)" \
	eval 'grep -q "^welcome [0-9]" <<<"$R"'

tail -n 1 $W/flood.out | sed 's/^/# flood: /'
check "the relay stayed online meanwhile, still machine \"self\"" \
	eval '[[ $(relay_stat connected) == 1 ]] && ep_machines | grep -q "^machine [0-9]* name=self .*online=1 "'
check "strangers closed for newer ones are counted (tcp_peer_limit $(ep_stat tcp_peer_limit), tcp_pending_full $(ep_stat tcp_pending_full)); admitted $(ep_stat admitted): the relay's 4 connections, the keyed relay, 2 vsock guests" \
	eval '[[ $(ep_stat tcp_peer_limit) -ge 1000 && $(ep_stat admitted) -ge 7 ]]'

# ---- unload with the crowd at the door ----
t0=$(date +%s%N)
rmmod pbtrace
rc=$?
check "rmmod with the flood connected: done in $(ms_since $t0) ms" test $rc = 0
finish
