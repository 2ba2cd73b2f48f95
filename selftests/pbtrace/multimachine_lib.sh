# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
#
# Helpers of multimachine_test.sh (kept apart so another multi-machine test
# can share them): TAP counters, traced, protoc decode with Perfetto's
# schema, and mm_check.py's verdicts as TAP. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
NET=$TOP/selftests/pbtrace/build/mm_net
CHECK=$TOP/selftests/pbtrace/mm_check.py
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
P=/sys/module/pbtrace/parameters
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tp.sh"
T0=$SECONDS

note() { echo "# $((SECONDS - T0))s: $*"; }
finish() {
	echo "1..$N"
	exit $FAILED
}
stat_of() { sed -n "s/^$2 //p" "$P/$1"; }
# tracectl, bounded: a hang is a failure, not a stuck guest.
tctl() { timeout 60 "$U/tracectl" "$@"; }

W=$(mktemp -d /tmp/multimachine.XXXXXX)

TRACED=
start_traced() {	# [traced's options]
	"$U/traced" "$@" 2>"$W/traced.log" &
	TRACED=$!
	wait_for 300 grep -q ready "$W/traced.log"
}
stop_traced() {
	[[ -n $TRACED ]] || return 0
	kill -TERM "$TRACED" 2>/dev/null
	wait "$TRACED"
}

# Perfetto's schema, compiled on first use: parsing the .proto text is
# most of what protoc costs per call under TCG.
decode() {
	[[ -s $W/schema.pb ]] ||
		protoc -I "$SCHEMA" -o "$W/schema.pb" perfetto_trace.proto 2>"$W/protoc.err" ||
		{ sed 's/^/# protoc: /' "$W/protoc.err"; return 1; }
	protoc --descriptor_set_in="$W/schema.pb" --decode=perfetto.protos.Trace \
		perfetto_trace.proto <"$1" >"$1.txt" 2>"$1.err" ||
		{ sed 's/^/# protoc: /' "$1.err" | head -n 5; return 1; }
}

# mm_check.py MODE DECODED ARGS: its PASS/FAIL lines as TAP, notes as
# comments, a run that did not reach DONE as one failure. Read from a file:
# a pipe would run the loop in a subshell and lose the counters.
analyse() {
	local line done=0
	/usr/bin/python3 "$CHECK" "$@" >"$W/check.out" 2>&1
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "${line#PASS }" ;;
		FAIL\ *) not_ok "${line#FAIL }" ;;
		DONE) done=1 ;;
		*) echo "# $line" ;;
		esac
	done <"$W/check.out"
	((done)) || not_ok "mm_check.py $1 did not finish (see above)"
	[[ -n ${KEEP:-} && -d $KEEP ]] && cat "$W/check.out" >>"$KEEP/check.txt"
	return 0
}

# tp_udp FILE PING_PID ECHO_PID: the UDP echo as trace_processor places
# it, one line per direction: "guest->host|pairs|strict|min|max", strict
# the receives at or before their sends, min and max the receive minus
# the send (ns, trace time). The i-th sendto (sys_enter 44) of one side
# pairs with the i-th recvfrom that got data (sys_exit 45, ret > 0) of the
# other; the raw events, since the echo's first recvfrom began before
# the session and has no slice.
tp_udp() {
	tp_query "$1" "with ev as (
		select e.ts, e.name, t.tid, m.raw_id,
			extract_arg(e.arg_set_id, 'id') as nr,
			extract_arg(e.arg_set_id, 'ret') as ret
		from ftrace_event e join thread t using (utid)
		join machine m on t.machine_id = m.id
		where e.name in ('sys_enter', 'sys_exit')),
	calls as (
		select ts, raw_id, tid, nr, row_number() over (
			partition by raw_id, tid, name, nr order by ts) as i
		from ev where (name = 'sys_enter' and nr = 44)
			or (name = 'sys_exit' and nr = 45 and ret > 0)),
	send as (select * from calls where nr = 44),
	recv as (select * from calls where nr = 45)
	select iif(s.raw_id = 0, 'host->guest', 'guest->host'), count(*),
		sum(r.ts <= s.ts), min(r.ts - s.ts), max(r.ts - s.ts)
	from send s join recv r on r.i = s.i and r.raw_id <> s.raw_id
	where (s.raw_id = 0 and s.tid = $3 and r.tid = $2)
		or (s.raw_id <> 0 and s.tid = $2 and r.tid = $3)
	group by 1 order by 1"
}

# The causality of the echo from trace_processor's own timestamps:
# strictly every receive after its send, N of N each way. $5: what the
# echo runs over (default UDP), for the messages.
tp_causality() {
	local file=$1 n=$2 ping=$3 echo=$4 how=${5:-UDP} rows dir pairs strict lo hi offs
	if ! tp_available; then
		ok "trace_processor: every $how receive after its send, both ways # SKIP $TP_WHY"
		return 0
	fi
	offs=$(tp_offsets "$file" "$(tp_value "$file" "select raw_id from machine where raw_id <> 0")")
	echo "# trace_processor offsets applied to the guest (guest - host BOOTTIME, ns): ${offs//$'\n'/ }"
	rows=$(tp_udp "$file" "$ping" "$echo") || rows=
	local want="guest->host|$n|0 host->guest|$n|0" got=
	while IFS='|' read -r dir pairs strict lo hi; do
		[[ -n $dir ]] || continue
		echo "# trace_processor $dir: $strict of $pairs receives at or before their send; receive - send $lo .. $hi ns"
		got+="${got:+ }$dir|$pairs|$strict"
	done <<<"$rows"
	check "trace_processor: every $how receive strictly after its send, $n of $n each way ($got)" \
		test "$got" = "$want"
}
