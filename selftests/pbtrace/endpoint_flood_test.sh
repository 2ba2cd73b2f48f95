#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module --mem 2G
#
# Strangers cannot lock guests out (issue 21, items 3 and 7), in one
# guest: pbtrace.ko is its own host over TCP loopback (endpoint
# tcp:TPORT, relay=tcp:127.0.0.1:TPORT with a key) and has a vsock
# listener too. A crowd from 250 loopback addresses (build/endpoint_flood):
# each holds 2 silent connections and reopens each one as soon as the host
# closes it, and four threads connect and reset from the same addresses
# as fast as they can; its rate (attempts a second) is printed.
#  * Existing guests lose nothing: 8 keyed relays (build/relay_fleet,
#    replaying what this guest recorded) stream into a session of theirs from
#    before the crowd came until after; every chunk each sent is in the
#    session (tracectl status), none lost or dropped, no disconnect, and
#    trace_processor has each one's events.
#  * The module's own relay connection is cut (ss -K, the kernel's
#    sock_destroy), twice: each time it must be back (relay_stats
#    welcomes, the machine online), timed by the relay's own log (loss to
#    WELCOME), beside the same without the crowd.
#  * A keyed relay from 127.0.0.1, the crowd's own peer (build/relay_many
#    -T), and a vsock guest (build/relay_hostile join, vsock loopback CID
#    1) get in, 5 times each: the time from each one's connect to its
#    admission, as its program measured it, is printed against the
#    issue's 2 s; the check bounds it at the relay backoff's 30 s.
#  * The crowd holds at most its share of the TCP pool (all of 127/8
#    being one peer), nothing of vsock's, and every connection it lost is
#    counted (tcp_peer_limit, tcp_pending_full).
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
B=$TOP/selftests/pbtrace/build
BIN=${PBTRACE_USER_BUILD:-$TOP/user/build}
TCTL=$BIN/tracectl
FLOOD=$B/endpoint_flood
HOSTILE=$B/relay_hostile
MANY=$B/relay_many
FLEET=$B/relay_fleet
CROWD=250		# addresses
OLD=8			# existing guests, streaming through the flood
PASSES=100		# their passes through the recording, 0.5 s each
JOINS=5			# keyed relays and vsock guests that come meanwhile
EVENTS="-e sched/sched_switch -e sched/sched_waking"
PORT=20041
TPORT=20042
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
BOUND=30		# s: a relay's backoff alone reaches 30 s
P=/sys/module/pbtrace/parameters
W=$(mktemp -d)
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tp.sh"
ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
relay_stat() { sed -n "s/^$1 //p" "$P/relay_stats"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
finish() {
	[ -n "${FL:-}" ] && kill "$FL" 2>/dev/null && wait "$FL" 2>/dev/null
	[ -n "${OLDP:-}" ] && kill "$OLDP" 2>/dev/null && wait "$OLDP" 2>/dev/null
	[ -n "${TRACED:-}" ] && kill "$TRACED" 2>/dev/null && wait "$TRACED" 2>/dev/null
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

# traced for the session's file, and what the existing guests replay:
# this guest, recorded by pbtrace a moment ago.
"$BIN/traced" 2> $W/traced.log &
TRACED=$!
check "traced runs" wait_for 300 eval '"$TCTL" status 2>/dev/null | grep -q "traced: running"'
( sleep 0.2; for i in $(seq 10); do /bin/true; done ) &
"$TCTL" record -n src -t 500ms $EVENTS -o $W/src.pftrace > $W/src.out 2>&1
RC=$?
wait $!
check "a recording for the existing guests to replay (tracectl record, exit $RC, $(stat -c %s $W/src.pftrace 2>/dev/null) bytes)" \
	eval '((RC == 0)) && [[ -s $W/src.pftrace ]]'

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

# ---- existing guests, streaming ----
# Of the existing guests only: the crowd's syscalls and switches here
# would make the file hundreds of MB.
"$TCTL" start -n flood $(for ((i = 1; i <= OLD; i++)); do echo -m old$i; done) $EVENTS \
	-b 2048 -o $W/flood.pftrace > $W/start.out 2>&1
check "tracectl start -m old1 ... -m old$OLD: a session of the existing guests" test $? = 0
"$FLEET" -q -p -l $PASSES -j $OLD -t 600 $TPORT old 1 $OLD $KEY $W/src.pftrace > $W/old.out 2> $W/old.err &
OLDP=$!
# the received count of machine $1 in tracectl status -M
received() { "$TCTL" status -M 2>/dev/null | grep -A1 "^  machine $1 (id" | sed -n 's/.*received \([0-9]*\) chunks.*/\1/p'; }
streaming() { local i; for ((i = 1; i <= OLD; i++)); do [[ $(received old$i) -gt 0 ]] || return 1; done; }
check "$OLD existing guests stream into the session" wait_for 600 streaming

# ---- the crowd ----
echo "# ${SECONDS}s: the crowd comes"
"$FLOOD" $TPORT $CROWD 2 150 4 > $W/flood.out 2>&1 &
FL=$!
WAIT_STEP=0.5 check "the crowd holds the TCP pool's loopback share ($SHARE of $POOL) and churns in it" \
	wait_for 120 eval '[[ $(ep_stat tcp_pending) -ge $SHARE && $(ep_stat tcp_peer_limit) -ge 256 ]]'
sleep 2
tail -n 1 $W/flood.out | sed 's/^/# flood: /'
pend=$(ep_stat tcp_pending)
check "$CROWD loopback addresses are one peer: the crowd holds $pend of the $POOL, at most $SHARE (tcp_peer_limit $(ep_stat tcp_peer_limit))" \
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
echo "# ${SECONDS}s: $JOINS keyed relays and $JOINS vsock guests, one after the other"
: > $W/keyed.ms
: > $W/vsock.ms
for ((k = 1; k <= JOINS; k++)); do
	timeout 60 "$MANY" -T -f 127.0.0.1 $TPORT keyed $k 1 $KEY > $W/many.out 2>&1
	sed -n "s/^keyed$k welcome [0-9]* in \([0-9]*\) ms$/\1/p" $W/many.out >> $W/keyed.ms
	timeout 60 "$HOSTILE" join $PORT vguest$k $(printf '%032x' $((10 + k))) > $W/join.out 2>&1
	grep -q "^welcome [0-9]" $W/join.out &&
		sed -n 's/^join: WELCOME \([0-9]*\) ms after the connect began$/\1/p' $W/join.out >> $W/vsock.ms
	tail -n 1 $W/flood.out | sed "s/^/# join $k: flood: /"
done
ms_max() { sort -n "$1" | tail -n 1; }
ms_list() { tr '\n' ' ' < "$1"; }
echo "# keyed relay from 127.0.0.1, connect to admission (ms): $(ms_list $W/keyed.ms)"
echo "# vsock guest (CID 1), connect to WELCOME (ms): $(ms_list $W/vsock.ms)"
check "$JOINS keyed relays from 127.0.0.1, the crowd's own peer, each admitted during the flood: the slowest in $(ms_max $W/keyed.ms) ms (the issue's goal 2000 ms; bound ${BOUND} s)" \
	eval '[[ $(grep -c . $W/keyed.ms) == $JOINS && $(ms_max $W/keyed.ms) -le $((BOUND * 1000)) ]]'
check "$JOINS vsock guests (CID 1) each welcomed during the flood: the slowest in $(ms_max $W/vsock.ms) ms (the issue's goal 2000 ms; bound ${BOUND} s)" \
	eval '[[ $(grep -c . $W/vsock.ms) == $JOINS && $(ms_max $W/vsock.ms) -le $((BOUND * 1000)) ]]'

# ---- the existing guests lost nothing ----
wait $OLDP
RC=$?
OLDP=
echo "# ${SECONDS}s: the existing guests are done"
SUM=$(grep "^fleet relays" $W/old.out)
echo "# relay_fleet: $SUM"
read -r _ _ _ _ DONE _ _ _ _ _ _ _ _ _ _ _ CHUNKS _ _ _ _ _ STOPPED _ ERRORS <<<"$SUM"
check "the $OLD existing guests streamed $PASSES passes each through the flood and STOPPED (exit $RC, done ${DONE:-?}, stopped ${STOPPED:-?}, errors ${ERRORS:-?}, $CHUNKS chunks)" \
	eval '((RC == 0)) && [[ $DONE == $OLD && $STOPPED == $OLD && $ERRORS == 0 ]]'
"$TCTL" status -M > $W/status.out 2>&1
bad=
for ((i = 1; i <= OLD; i++)); do
	sent=$(awk -v n=old$i '$1 == n { print $9 }' $W/old.out)
	block=$(grep -A2 "^  machine old$i (id" $W/status.out)
	grep -q "received $sent chunks" <<<"$block" &&
		grep -q "lost: 0 chunks in relay gaps, 0 dropped here .*, 0 events on the guest, 0 disconnects" <<<"$block" ||
		bad="$bad old$i(sent $sent: $(tr '\n' ' ' <<<"$block"))"
done
check "tracectl status: each existing guest's chunks all received, none lost or dropped, no disconnect${bad:+:$bad}" test -z "$bad"

tail -n 1 $W/flood.out | sed 's/^/# flood: /'
check "the relay stayed online meanwhile, still machine \"self\"" \
	eval '[[ $(relay_stat connected) == 1 ]] && ep_machines | grep -q "^machine [0-9]* name=self .*online=1 "'
check "strangers closed for newer ones are counted (tcp_peer_limit $(ep_stat tcp_peer_limit), tcp_pending_full $(ep_stat tcp_pending_full)); admitted $(ep_stat admitted): the relay's 3 connections, $OLD existing guests, $JOINS keyed relays, $((JOINS + 1)) vsock guests" \
	eval '[[ $(ep_stat tcp_peer_limit) -ge 1000 && $(ep_stat admitted) -ge $((3 + OLD + 2 * JOINS + 1)) ]]'
rates=$(sed -n 's/.* attempts\/s \([0-9]*\)$/\1/p' $W/flood.out | sort -n)
nr=$(grep -c . <<<"$rates")
echo "# the crowd from $CROWD addresses, connection attempts a second over its $nr s: median $(sed -n "$(((nr + 1) / 2))p" <<<"$rates"), peak $(tail -n 1 <<<"$rates")"

# ---- the session's file ----
echo "# ${SECONDS}s: tracectl stop"
"$TCTL" stop -n flood --wait > $W/stop.out 2>&1
check "tracectl stop --wait: the file is written ($(stat -c %s $W/flood.pftrace 2>/dev/null) bytes)" test $? = 0
if tp_available; then
	tp_query $W/flood.pftrace "$(tp_per_machine)
		select m.name, ifnull(e.n, 0) from machine m
			left join pm_event e on e.machine_id = m.id where m.name like 'old%'
		union all
		select 'stat ' || name, value from stats
		where value > 0 and severity in ('error', 'data_loss')" > $W/tp.out 2> $W/tp.err
	bad=
	for ((i = 1; i <= OLD; i++)); do
		want=$(awk -v n=old$i '$1 == n { print $11 }' $W/old.out)
		got=$(sed -n "s/^old$i|//p" $W/tp.out)
		[[ -n $want && $got == "$want" ]] || bad="$bad old$i(sent $want events, trace_processor $got)"
	done
	check "trace_processor: each existing guest's machine has every event it sent${bad:+:$bad}" test -z "$bad"
	# A relay replays its passes back to back: where one ends and the next
	# begins, a CPU's switch need not follow its last (at most PASSES - 1
	# per CPU of the recording). That is the replay's, not a loss.
	joins=$(((PASSES - 1) * $(nproc)))
	bad=$(awk -F'|' -v j=$joins '/^stat / && !($1 == "stat mismatched_sched_switch_tids" && $2 <= j)' $W/tp.out | tr '\n' ' ')
	check "trace_processor: no error or data_loss stats, but the replay's pass joins (mismatched_sched_switch_tids <= $joins a machine)${bad:+ ($bad)}" test -z "$bad"
else
	ok "trace_processor # SKIP $TP_WHY"
fi

# ---- unload with the crowd at the door ----
t0=$(date +%s%N)
rmmod pbtrace
rc=$?
check "rmmod with the flood connected: done in $(ms_since $t0) ms" test $rc = 0
finish
