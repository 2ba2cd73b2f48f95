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

echo "1..$N"
exit $FAILED
