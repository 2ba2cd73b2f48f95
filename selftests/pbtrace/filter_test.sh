#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tracepoint filters (kmod/core/filter.c) keep what the kernel's own ftrace
# filter keeps, on the records the module's probe gets and on the running
# kernel's layouts (6.1 and 6.12 both run it).
#
# build/filter_ref reads the event's layout from tracefs, compiles each
# expression with pbt_filter_compile() and judges every raw record of an
# unfiltered perf tracepoint counter (what the module's handler gets),
# while a sibling counter of the same perf group per expression carries
# the same text as a kernel filter (PERF_EVENT_IOC_SET_FILTER: ftrace's
# create_filter(), the code behind events/G/N/filter); a group is enabled
# and disabled at once, so both sides see the same hits. For each
# expression: the two counts are equal, and the workload's known spread
# holds (some: 0 < N < all; none; all). Bad expressions are refused by
# both, ours with the position.
#
# "OURS => KERNEL": ftrace gets a "*suffix" glob on a char[N] field wrong
# (regex_match_end() compares the field's last bytes, past the string's
# NUL: 'comm ~ "*ep"' keeps nothing on 6.1); pbtrace matches the string's
# end, and the referee is the same match as a full glob ("*e[p]"), which
# ftrace does right. "info:EXPR" prints what ftrace keeps for the plain
# text as a comment, no TAP line, to see when a kernel fixes it.
#
# Workloads: signals of known numbers to a child that ignores them
# (signal/signal_generate: numbers, &, char[16] strings, globs), sleeps
# (sched/sched_switch), execs of known paths (sched/sched_process_exec:
# a __data_loc string).
#
# Then pbtrace itself, end to end (needs pbtrace.ko, traced, tracectl):
# tracectl -e EVENT --filter EXPR files against tracefs instances with the
# same filters around the same workload (see below).
cd "$(dirname "$0")" || exit 1
. ./tap.sh

REF=build/filter_ref
if [ ! -x $REF ]; then
	echo "1..0 # SKIP $REF not built (make -C selftests/pbtrace)"
	exit 0
fi

# compare EVENT WORKLOAD KIND:EXPR...: one TAP line per expression.
compare() {
	local event=$1 work=$2 out all lost k kind expr line mine kern
	shift 2
	local exprs=()
	for e in "$@"; do exprs+=("${e#*:}"); done
	if ! out=$($REF "$event" "${exprs[@]}" -- bash -c "$work" 2>&1); then
		not_ok "$event: filter_ref failed: $out"
		return
	fi
	all=$(sed -n 's/^all //p' <<<"$out")
	lost=$(sed -n 's/^lost //p' <<<"$out")
	check "$event: perf lost no record ($all records, $lost lost)" \
		test "$lost" = 0 -a "$all" -gt 0
	k=0
	for e in "$@"; do
		kind=${e%%:*}
		expr=${e#*:}
		line=$(grep "^expr $k " <<<"$out")
		k=$((k + 1))
		if [ "$kind" = bad ]; then
			check "$event: '$expr' refused by both: ${line#expr * refused }" \
				grep -q "refused .* kernel_refused 1$" <<<"$line"
			continue
		fi
		read -r _ _ _ mine _ kern _ <<<"$line"
		if [ "$kind" = info ]; then
			echo "# $event: '$expr': ftrace's own filter keeps $kern, pbtrace's $mine (of $all)"
			continue
		fi
		case $kind in
		some) [ "${mine:-0}" -gt 0 ] && [ "${mine:-0}" -lt "$all" ] ;;
		none) [ "$mine" = 0 ] ;;
		all) [ "$mine" = "$all" ] ;;
		esac
		local spread=$?
		check "$event: '$expr' keeps $mine, the kernel's filter $kern (of $all, want $kind)" \
			test -n "$mine" -a "$mine" = "$kern" -a $spread = 0 -a \
			"${line/kernel_refused/}" = "$line"
	done
}

# Signals 1 10 12 14 15 23 28 to an ignoring "sleep", 9 to end it; SIGCHLD
# (17) to bash for it and for three "true"s.
SIGNALS='trap "" HUP USR1 USR2 ALRM TERM URG WINCH
sleep 30 & p=$!
trap - HUP USR1 USR2 ALRM TERM URG WINCH
for i in 1 2 3; do
	for s in HUP USR1 USR2 ALRM TERM URG WINCH; do kill -s $s $p; done
	/bin/true
done
kill -KILL $p; wait'

compare signal/signal_generate "$SIGNALS" \
	'some:sig == 10' \
	'some:sig >= 12 && sig < 17' \
	'some:sig & 8' \
	'some:sig != 17 && sig <= 0x1c' \
	'some:sig == 012 || sig == 1' \
	'some:sig > -1 && code == 0' \
	'some:comm == "sleep"' \
	'some:comm != "sleep"' \
	'some:comm ~ "sl*"' \
	'some:comm ~ "*ep" => comm ~ "*e[p]"' \
	'info:comm ~ "*ep"' \
	'some:comm ~ "*lee*"' \
	'some:comm ~ "[r-t]le?p"' \
	'some:comm ~ "!*ash" => comm ~ "!*as[h]"' \
	'some:!(sig == 17)' \
	'some:!(sig == 17 && comm == "bash") && !(sig == 9)' \
	'some:((sig >= 10 && sig < 15) || sig == 17) && comm != "bash"' \
	'some:(sig == 1 || sig == 10) && (comm ~ "s*" || pid < 0)' \
	'none:sig == 99' \
	'none:sig < 0 || errno != 0' \
	'all:sig > 0' \
	'all:common_pid > 0 || sig == 17' \
	'bad:sig ~ "1*"' \
	'bad:comm < "a"' \
	'bad:sig == 10 && sgi == 1'

compare sched/sched_switch 'for i in $(seq 20); do sleep 0.01; done' \
	'some:prev_pid >= 42 && next_pid == 0' \
	'some:prev_state & 1' \
	'some:prev_comm ~ "*sh" => prev_comm ~ "*s[h]"' \
	'info:prev_comm ~ "*sh"' \
	'some:next_comm ~ "swapper*"' \
	'some:prev_comm == "sleep" || next_comm == "sleep"' \
	'some:!(prev_pid == 0)' \
	'none:prev_pid < 0' \
	'all:prev_pid >= 0' \
	'bad:prev_pid >= 42 && prev_pd == 0'

compare sched/sched_process_exec \
	'/bin/true; /usr/bin/true; sleep 0; /bin/echo x > /dev/null; env true' \
	'some:filename == "/bin/true"' \
	'some:filename ~ "*/true"' \
	'some:filename ~ "/usr/*"' \
	'some:filename ~ "*bin/t*"' \
	'some:filename ~ "*slee*"' \
	'some:filename != "/bin/true" && pid > 0' \
	'none:filename == "/nonexistent"' \
	'bad:filename == 5'

# ---- pbtrace itself: tracectl -e EVENT --filter EXPR into a file ----
#
# One session per expression (-e signal/signal_generate --filter E) and
# one tracefs instance per expression (events/signal/signal_generate/filter
# = E) around the same workload: the file holds as many events as ftrace's
# trace. The sessions start first and stop last, and nothing forks while
# the instances record but the workload, so both see its signals; the
# tracectl runs' own SIGCHLDs (17, to this shell) fall outside the
# instances' window, and no expression here keeps a 17. The unfiltered
# session is checked against the workload's own count (22 signals to
# "sleep"). sched/sched_switch (of a sleeper named fsleep: the guest's
# heartbeat runs "sleep") is one the module encodes natively: with a
# filter it goes the generic path with Perfetto's own field numbers, so
# protoc decodes it as sched_switch and trace_processor reads it too.
top=$(cd .. && cd .. && pwd)
bin=${PBTRACE_USER_BUILD:-$top/user/build}
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
tfs=/sys/kernel/tracing
[ -d $tfs/instances ] || tfs=/sys/kernel/debug/tracing
if [ ! -e /dev/pbtrace ] || [ ! -x "$bin/tracectl" ] || [ ! -x "$bin/traced" ] ||
   [ ! -r "$schema/perfetto_trace.proto" ] || [ ! -d $tfs/instances ]; then
	ok "tracectl --filter # SKIP needs pbtrace.ko loaded, $bin/tracectl and traced, $schema, tracefs instances"
	echo "1..$N"
	exit $FAILED
fi
. ./tp.sh
tmp=$(mktemp -d /tmp/filter_test.XXXXXX)
traced_pid=
cleanup() {
	[ -n "$traced_pid" ] && kill "$traced_pid" 2>/dev/null
	for d in $tfs/instances/pbt_filter_*; do
		[ -d "$d" ] && rmdir "$d"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
"$bin/traced" >"$tmp/traced.log" 2>&1 &
traced_pid=$!
WAIT_STEP=0.1 wait_for 50 grep -q ready "$tmp/traced.log" ||
	{ echo "Bail out! traced did not come up"; sed 's/^/#   /' "$tmp/traced.log"; exit 1; }

# A bad filter: refused before the kernel is asked, with a caret.
"$bin/tracectl" start -n bad -e sched/sched_switch --filter 'prev_pid >= 42 && prev_pd == 0' \
	-o "$tmp/bad.pftrace" >"$tmp/out" 2>&1
rc=$?
check "tracectl refuses a bad --filter (exit $rc): $(head -1 "$tmp/out")" \
	test $rc = 5 -a "$(sed -n 1p "$tmp/out")" = "tracectl: sched/sched_switch: bad filter: position 18: unknown field 'prev_pd'" \
	-a "$(sed -n 3p "$tmp/out")" = "                    ^"
sed 's/^/#   /' "$tmp/out"
"$bin/tracectl" start -n bad --filter 'sig == 1' -o "$tmp/bad.pftrace" >"$tmp/out" 2>&1
check "--filter without an -e before it is refused: $(head -1 "$tmp/out")" \
	grep -q "applies to the -e before it" "$tmp/out"

FILTERS=(
	'sig >= 12 && sig < 17'
	'sig & 8'
	'comm == "sleep" || sig == 10'
	'!(sig == 17) && (comm ~ "sl*" || comm ~ "*lee*")'
	'sig == 99'
	''
)
# A sleeper of its own name: the guest's heartbeat runs "sleep" too.
cp /bin/sleep "$tmp/fsleep"
SW='(prev_comm == "fsleep" || next_comm == "fsleep") && prev_pid > 0'
for k in "${!FILTERS[@]}"; do
	mkdir $tfs/instances/pbt_filter_$k
done
mkdir $tfs/instances/pbt_filter_sw
for k in "${!FILTERS[@]}"; do
	f=(--filter "${FILTERS[$k]}")
	[ -n "${FILTERS[$k]}" ] || f=()
	"$bin/tracectl" start -n filt$k -e signal/signal_generate "${f[@]}" \
		-o "$tmp/f$k.pftrace" >"$tmp/out" 2>&1 ||
		{ not_ok "tracectl start --filter '${FILTERS[$k]}'"; sed 's/^/#   /' "$tmp/out"; }
done
"$bin/tracectl" start -n filtsw -e sched/sched_switch --filter "$SW" \
	-o "$tmp/sw.pftrace" >"$tmp/out" 2>&1 ||
	{ not_ok "tracectl start -e sched/sched_switch --filter"; sed 's/^/#   /' "$tmp/out"; }
# From here to the workload's end only builtins run in this shell.
for k in "${!FILTERS[@]}"; do
	ev=$tfs/instances/pbt_filter_$k/events/signal/signal_generate
	[ -z "${FILTERS[$k]}" ] || echo "${FILTERS[$k]}" >$ev/filter
	echo 1 >$ev/enable
done
echo "$SW" >$tfs/instances/pbt_filter_sw/events/sched/sched_switch/filter
echo 1 >$tfs/instances/pbt_filter_sw/events/sched/sched_switch/enable
CHILD=$(bash -c "$SIGNALS"'
echo $p' 2>/dev/null)
for i in 1 2 3 4 5; do "$tmp/fsleep" 0.02; done
for k in "${!FILTERS[@]}" sw; do
	echo 0 >$tfs/instances/pbt_filter_$k/tracing_on
done
stops=()
for k in "${!FILTERS[@]}" sw; do
	"$bin/tracectl" stop -n filt$k --wait >"$tmp/stop$k" 2>&1 &
	stops+=($!)
done
wait "${stops[@]}"	# not traced
for k in "${!FILTERS[@]}" sw; do
	[ ! -s "$tmp/stop$k" ] || sed "s/^/# filt$k: /" "$tmp/stop$k"
done

decode() {	# FILE: FILE.txt (protoc), FILE.gen (generic events)
	protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
		<"$1" >"$1.txt" 2>"$tmp/decode.err" &&
		python3 ./generic_events.py <"$1.txt" >"$1.gen"
}
for k in "${!FILTERS[@]}"; do
	e=${FILTERS[$k]}
	kern=$(grep -c ' signal_generate: ' $tfs/instances/pbt_filter_$k/trace)
	if ! decode "$tmp/f$k.pftrace"; then
		not_ok "filt$k: the file decodes"; sed 's/^/#   /' "$tmp/decode.err"
		continue
	fi
	mine=$(grep -c '^65536 ' "$tmp/f$k.pftrace.gen")
	if [ -n "$e" ]; then
		check "tracectl --filter '$e': the file holds $mine signal_generate, ftrace's filter keeps $kern" \
			test "$mine" = "$kern"
	else
		child=$(grep -c "^65536 .* 5=$CHILD\( \|$\)" "$tmp/f$k.pftrace.gen")
		check "no --filter: the file holds all $child signals to the child (the workload sends 22), $mine in all" \
			test "$child" = 22
	fi
done
check "'sig == 99' keeps nothing, the others keep some" \
	test "$(grep -c '^65536 ' "$tmp/f4.pftrace.gen")" = 0 -a \
	"$(grep -c '^65536 ' "$tmp/f0.pftrace.gen")" -gt 0
kern=$(grep -c ' sched_switch: ' $tfs/instances/pbt_filter_sw/trace)
if decode "$tmp/sw.pftrace"; then
	mine=$(grep -c 'sched_switch {' "$tmp/sw.pftrace.txt")
	dups=$(grep -B3 'sched_switch {' "$tmp/sw.pftrace.txt" | grep timestamp | sort | uniq -d | wc -l)
	check "no sched_switch twice in the file ($dups timestamps repeat)" test "$dups" = 0
	sleepy=$(grep -A8 'sched_switch {' "$tmp/sw.pftrace.txt" | grep -c 'comm: "fsleep"')
	check "native sched_switch with --filter '$SW': $mine in the file (Perfetto's own field), ftrace keeps $kern" \
		test "$mine" = "$kern" -a "$mine" -gt 0 -a "$sleepy" -ge "$mine" ||
		{
			grep ' sched_switch: ' $tfs/instances/pbt_filter_sw/trace | sed 's/^/# ftrace: /'
			grep -H . $tfs/instances/pbt_filter_sw/per_cpu/cpu*/stats | sed 's/^/# ftrace stats: /'
			grep -A10 'sched_switch {' "$tmp/sw.pftrace.txt" | grep -E 'prev_comm|prev_pid|next_comm|next_pid|timestamp' |
				paste - - - - | sed 's/^/# file: /'
		}
	if tp_available; then
		check "trace_processor reads the filtered sched_switch as sched_switch: $mine" \
			test "$(tp_value "$tmp/sw.pftrace" "select count(*) from ftrace_event where name = 'sched_switch'")" = "$mine"
	else
		ok "trace_processor # SKIP $TP_WHY"
	fi
else
	not_ok "the sched_switch file decodes"; sed 's/^/#   /' "$tmp/decode.err"
fi

# ---- the pid filter runs before the expression ------------------------------
# Two senders of SIGUSR1 to a child that ignores it: one is the session's
# -p, the other is not. How often the expression ran is what the kernel's
# own kprobe on pbt_filter_match counts (kprobe_profile): as often as the
# recorded sender's bash generated a signal, which a tracefs instance
# counts with common_pid; the other sender's 30 never reach it.
pid_first() {
	local inst=$tfs/instances/pbt_filter_pid t a b hits kern go=$tmp/go f=$tmp/pid.pftrace
	if ! echo 'p:pbt_fm pbtrace:pbt_filter_match' >>$tfs/kprobe_events 2>"$tmp/kp.err"; then
		ok "the pid filter runs first # SKIP no kprobe on pbt_filter_match: $(cat "$tmp/kp.err")"
		return
	fi
	(trap '' USR1; exec sleep 300) &
	t=$!
	bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; for ((i = 0; i < 20; i++)); do kill -USR1 "$2"; done' a "$go" "$t" &
	a=$!
	bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; for ((i = 0; i < 30; i++)); do kill -USR1 "$2"; done' b "$go" "$t" &
	b=$!
	"$bin/tracectl" start -n pidfirst -e signal/signal_generate --filter 'sig == 10' \
		-p "$a" -o "$f" >"$tmp/out" 2>&1 || { not_ok "tracectl start -p $a"; sed 's/^/#   /' "$tmp/out"; }
	mkdir "$inst"
	echo "common_pid == $a" >"$inst/events/signal/signal_generate/filter"
	echo 1 >"$inst/events/signal/signal_generate/enable"
	echo 1 >$tfs/events/kprobes/pbt_fm/enable
	touch "$go"
	wait "$a" "$b"
	echo 0 >$tfs/events/kprobes/pbt_fm/enable
	echo 0 >"$inst/tracing_on"
	hits=$(awk '$1 == "pbt_fm" {print $2}' $tfs/kprobe_profile)
	kern=$(grep -c ' signal_generate: ' "$inst/trace")
	"$bin/tracectl" stop -n pidfirst --wait >/dev/null 2>&1
	kill "$t" 2>/dev/null
	wait "$t" 2>/dev/null
	echo '-:pbt_fm' >>$tfs/kprobe_events
	rmdir "$inst"
	check "the expression ran $hits times: once per signal of the -p sender (ftrace: $kern), none for the other's 30" \
		test "${hits:-x}" = "$kern" -a "$kern" -ge 20 -a "$kern" -lt 50
	if tp_available; then
		check "the file holds the -p sender's 20 SIGUSR1s" \
			test "$(tp_value "$f" "select count(*) from ftrace_event where name = 'signal_generate'")" = 20
	else
		ok "the file's SIGUSR1s # SKIP $TP_WHY"
	fi
}
pid_first

echo "1..$N"
exit $FAILED
