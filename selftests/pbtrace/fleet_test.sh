#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --no-module --mem 2G
#
# A fleet of relays into one host session, in one guest (issue 21, item 7
# at make check's size): pbtrace.ko is the TCP endpoint, traced loads the
# names and keys of PBTRACE_FLEET_N (12) relays from its --machines file, and
# build/relay_fleet is the fleet: each relay from a loopback address of
# its own, proving its own key (OpenSSL's HMAC), replaying what this guest
# recorded a moment before with pbtrace (its event chunks, timestamps moved
# to now), then STOPPED and gone, PBTRACE_FLEET_JOBS (8) at a time.
#  * the module counts every chunk the fleet sent (endpoint_stats chunks),
#    the session has them all, nothing lost (tracectl status: a summary
#    line, one machine's block on request);
#  * trace_processor: N + 1 machines (the host too), each with its
#    CPUs, threads and sched slices, each relay's events exactly the
#    recording's, no error or data_loss stats; how long it took to load;
#  * tracectl report -s: the syscalls summed over the machines, one
#    machine's detail with --machine;
#  * then PBTRACE_FLEET_HOLD (200) more relays connected at once, idle:
#    the admitted set holds them all (endpoint_stats conns; it held 16
#    before endpoint_max_conns), none refused (conns_full 0).
# Run from the repo: tools/vm --no-module --mem 2G -- selftests/pbtrace/fleet_test.sh
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
B=$TOP/selftests/pbtrace/build
BIN=${PBTRACE_USER_BUILD:-$TOP/user/build}
TCTL=$BIN/tracectl
FLEET=$B/relay_fleet
# 12 by default (two turns of 8): trace_processor takes ~45 ms of a
# native core per machine, ~3.8 s under TCG (49 machines: 186 s at load
# 8), so 200 do not fit make check's 180 s; PBTRACE_FLEET_N=200 by hand
# with a longer tools/vm --timeout, 1,000 in tools/bench/fleet
# (docs/benchmarks.md, "A fleet").
NR=${PBTRACE_FLEET_N:-12}
ONE=fleet$((NR / 2 + 1))
JOBS=${PBTRACE_FLEET_JOBS:-8}
HOLD=${PBTRACE_FLEET_HOLD:-200}
PORT=20071
# Relay i's key: KP then i as 8 hex digits (relay_fleet's rule).
KP=c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadb
P=/sys/module/pbtrace/parameters
W=${PBTRACE_FLEET_OUT:-/tmp/fleet_test}
EVENTS="-e sched/sched_switch -e sched/sched_waking -e raw_syscalls/sys_enter -e raw_syscalls/sys_exit -e sched/sched_process_exit"
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tp.sh"

ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
finish() {
	echo "# ${SECONDS}s: the end"
	[[ -n ${TRACED:-} ]] && kill $TRACED 2>/dev/null && wait $TRACED 2>/dev/null
	grep -E "^(accepted|refused|hellos|chunks|stopped|chunks_unbound|packets_dropped|table_full|auth_failed|identity_refused|peer_limit|machines) " \
		$P/endpoint_stats 2>/dev/null | tr '\n' ' ' | sed 's/^/# endpoint_stats: /'
	echo
	lsmod | grep -q '^pbtrace ' && rmmod pbtrace
	echo "1..$N"
	exit $FAILED
}

rm -rf $W
mkdir -p $W
chmod 700 $W
rmmod pbtrace 2>/dev/null
# All of 127/8 is one peer, holding a quarter of the handshake pool: HOLD
# relays at once from loopback need a pool of 4 x HOLD (tools/bench/fleet).
PENDING=$((4 * HOLD > 64 ? 4 * HOLD : 64))
if ! insmod "$KO" endpoint=tcp:$PORT endpoint_pending=$PENDING; then
	not_ok "insmod endpoint=tcp:$PORT endpoint_pending=$PENDING"
	finish
fi
for ((i = 1; i <= NR + HOLD; i++)); do
	printf 'key fleet%d %s%08x\n' $i $KP $i
done > $W/machines
chmod 600 $W/machines
"$BIN/traced" --machines $W/machines 2> $W/traced.log &
TRACED=$!
wait_for 300 eval '[[ $(ep_stat names) == $((NR + HOLD)) ]] && "$TCTL" status 2>/dev/null | grep -q "traced: running"'
check "traced --machines: $((NR + HOLD)) names with keys loaded ($(ep_stat names))" test "$(ep_stat names)" = $((NR + HOLD))

# ---- what a guest records: pbtrace, here, a moment ago ----
echo "# ${SECONDS}s: the recording the fleet replays"
(
	sleep 0.2
	for i in $(seq 10); do /bin/true; done
) &
WORK=$!
"$TCTL" record -n src -t 500ms $EVENTS -o $W/src.pftrace > $W/src.out 2>&1
RC=$?
wait $WORK
check "a recording of this guest (tracectl record, exit $RC, $(stat -c %s $W/src.pftrace 2>/dev/null) bytes)" \
	eval '((RC == 0)) && [[ -s $W/src.pftrace ]]'
"$FLEET" -o $W/pass.pftrace $PORT fleet 1 1 $KP $W/src.pftrace 2> $W/pass.err
check "relay_fleet reads it: $(cat $W/pass.err)" grep -q "chunks on [1-9]" $W/pass.err

# ---- the fleet ----
echo "# ${SECONDS}s: $NR relays, $JOBS at a time"
"$TCTL" start -n fleet -A $EVENTS -b 2048 -o $W/fleet.pftrace > $W/start.out 2>&1
check "tracectl start -A (every machine)" test $? -eq 0
T0=$SECONDS
"$FLEET" -q -p -r 0 -j $JOBS -t 150 $PORT fleet 1 $NR $KP $W/src.pftrace > $W/fleet.out 2> $W/fleet.err
RC=$?
SUM=$(grep "^fleet relays" $W/fleet.out)
echo "# relay_fleet ($((SECONDS - T0)) s): $SUM"
sed 's/^/# relay_fleet: /' $W/fleet.err | head -n 5
read -r _ _ _ _ DONE _ _ _ REFUSED _ _ _ _ _ _ _ CHUNKS _ BYTES _ EVSENT _ STOPPED _ ERRORS <<<"$SUM"
check "relay_fleet: $NR relays each admitted, streamed the recording, STOPPED (exit $RC, done ${DONE:-?}, $STOPPED STOPPED, errors ${ERRORS:-?})" \
	eval '((RC == 0)) && [[ $DONE == $NR && $STOPPED == $NR && $ERRORS == 0 ]]'
check "each relay recorded for one session ($(grep -c " sessions 1 " $W/fleet.out))" \
	eval '[[ $(grep -c "^fleet[0-9]* machine [1-9][0-9]* connects [0-9]* sessions 1 " $W/fleet.out) == $NR ]]'
check "the module received every chunk the fleet sent: endpoint_stats chunks $(ep_stat chunks) = $CHUNKS" \
	eval '[[ $(ep_stat chunks) == $CHUNKS && $(ep_stat chunks_unbound) == 0 && $(ep_stat packets_dropped) == 0 ]]'
"$TCTL" status > $W/status.out 2>&1
grep "  machines:" -A1 $W/status.out | sed 's/^/# /'
check "tracectl status: one line for the $NR machines, all $CHUNKS chunks, nothing lost ($(grep -c . $W/status.out) lines)" \
	eval 'grep -q "^  machines: $NR (0 connected), $CHUNKS chunks, .*; lost: 0 chunks in relay gaps, 0 dropped here, 0 events on the guests, 0 disconnects" $W/status.out &&
		! grep -q "lost something" $W/status.out && (($(grep -c . $W/status.out) < 20))'
"$TCTL" status --machine $ONE > $W/status1.out 2>&1
sed -n "/machine $ONE/,+3p" $W/status1.out | sed 's/^/# /'
PER=$(sed -n "s/^$ONE .* chunks \([0-9]*\) .*/\1/p" $W/fleet.out)
check "tracectl status --machine $ONE: its block, its $PER chunks received" \
	eval '[[ $(grep -c "^  machine fleet" $W/status1.out) == 1 ]] &&
		grep -A1 "^  machine $ONE (id" $W/status1.out | grep -q "received $PER chunks"'
echo "# ${SECONDS}s: tracectl stop"
"$TCTL" stop -n fleet --wait > $W/stop.out 2>&1
check "tracectl stop --wait: traced finished the file ($(stat -c %s $W/fleet.pftrace 2>/dev/null) bytes)" test $? -eq 0
grep -i "error\|lost" $W/traced.log | head -n 5 | sed 's/^/# traced: /'

# ---- trace_processor ----
echo "# ${SECONDS}s: trace_processor"
if tp_available; then
	# One load (trace_processor takes tens of ms a machine): a row per
	# machine, then the error and data_loss stats. Each table is counted
	# once, grouped (tp_per_machine): a subquery per machine would scan
	# sched and ftrace_event once per machine, machines x events, which
	# took longer than the load itself from ~100 machines on.
	t0=$(date +%s%N)
	tp_query $W/fleet.pftrace "$(tp_per_machine)
		select 'machine', m.raw_id, ifnull(m.name, ''), m.num_cpus,
			ifnull(c.n, 0), ifnull(t.n, 0), ifnull(s.n, 0), ifnull(e.n, 0)
		from machine m left join pm_cpu c on c.machine_id = m.id
			left join pm_thread t on t.machine_id = m.id
			left join pm_sched s on s.machine_id = m.id
			left join pm_event e on e.machine_id = m.id
		union all
		select 'stat', name, ifnull(idx, ''), value, 0, 0, 0, 0 from stats
		where value > 0 and severity in ('error', 'data_loss')" > $W/tp.out 2> $W/tp.err
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
	echo "# trace_processor: the file of $((NR + 1)) machines ($(stat -c %s $W/fleet.pftrace) bytes) loaded and queried in $MS ms (exit $RC)"
	sed 's/^/# trace_processor: /' $W/tp.err | tail -n 3
	grep "^machine|0|" $W/tp.out | sed 's/^/# host: /'
	WANT=$(awk '/^fleet1 / { print $11 }' $W/fleet.out)
	# machine|raw_id|name|num_cpus|cpus|threads|sched|events
	awk -F'|' -v want="$WANT" -v n=$NR '$1 == "machine" && $2 > 0 {
			if ($3 !~ /^fleet[0-9]+$/ || seen[$3]++ || $5 < 1 || $5 != $4 || $6 < 1 || $7 < 1 || $8 != want) bad++
			else good++ }
		END { print good + 0, bad + 0 }' $W/tp.out > $W/tp.sum
	read -r GOOD BAD < $W/tp.sum
	check "trace_processor: $((NR + 1)) machines (the host and $GOOD relays, $BAD not right)" \
		eval '((RC == 0)) && [[ $(grep -c "^machine|" $W/tp.out) == $((NR + 1)) ]] && ((GOOD == NR && BAD == 0))'
	check "... the host's row has CPUs, threads and sched slices" \
		eval 'awk -F"|" "\$1 == \"machine\" && \$2 == 0 && \$5 > 0 && \$6 > 0 && \$7 > 0 { f = 1 } END { exit !f }" $W/tp.out'
	check "... each relay's machine: its name once, its CPUs, threads, sched slices, and the $WANT events relay_fleet sent" \
		test "$GOOD" = $NR
	bad=$(awk -F'|' '$1 == "stat" { printf "%s%s=%s ", $2, ($3 == "" ? "" : "[" $3 "]"), $4 }' $W/tp.out)
	check "trace_processor: no error or data_loss stats${bad:+ ($bad)}" eval '((RC == 0)) && [[ -z "$bad" ]]'
else
	ok "trace_processor # SKIP $TP_WHY"
fi

# ---- tracectl report ----
echo "# ${SECONDS}s: tracectl report"
"$TCTL" report --summary-only $W/fleet.pftrace > $W/report.out 2> $W/report.err
RC=$?
check "tracectl report --summary-only of $((NR + 1)) machines: a summary, not a section per machine (exit $RC, $(wc -l < $W/report.out) lines)" \
	eval '((RC == 0)) && (($(wc -l < $W/report.out) < 400)) && grep -q "calls" $W/report.out'
head -n 6 $W/report.out | sed 's/^/# /'
"$TCTL" report --summary-only --machine $ONE $W/fleet.pftrace > $W/report1.out 2>&1
RC=$?
check "tracectl report --machine $ONE: that machine's summary (exit $RC)" \
	eval '((RC == 0)) && grep -q "$ONE" $W/report1.out && ! grep -q "fleet$((NR / 2 + 2))" $W/report1.out'
head -n 4 $W/report1.out | sed 's/^/# /'

# ---- many at once ----
echo "# ${SECONDS}s: $HOLD more relays connected at once"
"$FLEET" -p -t 150 $PORT fleet $((NR + 1)) $HOLD $KP $W/src.pftrace > $W/hold.out 2> $W/hold.err &
HOLDER=$!
wait_for 1200 eval '[[ $(ep_stat conns) == $HOLD ]]'
check "all $HOLD connected at once, proved, in the admitted set (conns $(ep_stat conns), conns_full $(ep_stat conns_full))" \
	eval '[[ $(ep_stat conns) == $HOLD && $(ep_stat conns_full) == 0 ]]'
kill $HOLDER 2>/dev/null
wait $HOLDER 2>/dev/null
finish
