#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --smp 2
# (a guest of its own: 1,000 tracepoints x 2 CPUs of counters take
# 126-162 s to create and start under TCG, too near the main guest's
# 240 s a test on a loaded machine; own-boot guests get 360 s.)
#
# A session of 1,000 tracepoints (issue 23): `-e 'syscalls/*'` and more
# groups until tracefs has given 1,000 (fewer if the kernel has fewer),
# sent in pieces (NEW_SESSION, then ADD_TRACEPOINTS, each under 64 KiB).
# Referees: tracefs (the names each glob stands for), the command line
# (the filters, byte for byte, in tracectl status), and trace_processor
# (events of several of them, and no data loss in its stats). Run in a
# guest with pbtrace.ko loaded:
#   tools/vm -- selftests/pbtrace/many_tracepoints_test.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${PBTRACE_USER_BUILD:-$top/user/build}
tracectl=$bin/tracectl
traced=$bin/traced
tmp=$(mktemp -d /tmp/many_tps.XXXXXX)
. "$here/tap.sh"
. "$here/tp.sh"
traced_pid=
tfs=/sys/kernel/tracing

cleanup() {
	"$tracectl" stop -n many >/dev/null 2>&1
	[ -n "$traced_pid" ] && kill "$traced_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$tracectl" ] || [ ! -x "$traced" ] || [ ! -d "$tfs/events/syscalls" ]; then
	echo "1..0 # SKIP needs $tracectl, $traced (make user) and $tfs/events/syscalls"
	exit 0
fi

"$traced" >"$tmp/traced.log" 2>&1 &
traced_pid=$!
WAIT_STEP=0.1 wait_for 50 grep -q ready "$tmp/traced.log" ||
	{ echo "Bail out! traced did not come up"; sed 's/^/#   /' "$tmp/traced.log"; exit 1; }

# Groups whose events pbtrace records by name: syscalls first, then every
# other group, the largest first, that holds none of pbtrace's 22 own events (a glob would
# make those native ones) until 1,000; signal/ is asked for with filters.
"$tracectl" list-events --native | cut -d/ -f1 | sort -u >"$tmp/native"
args=()
: >"$tmp/want"
# the largest groups first: tracectl takes up to 32 -e
for g in syscalls $(cd "$tfs/events" && for d in */; do
	echo "$(ls -d "$d"*/ | wc -l) ${d%/}"; done | sort -rn | awk '{print $2}'); do
	[ -d "$tfs/events/$g" ] || continue
	# irq_vectors: perf refuses a counter on them (EPERM) on 6.1
	case $g in ftrace|signal|irq_vectors) continue ;; esac
	[ "$g" = syscalls ] && [ "${#args[@]}" -gt 0 ] && continue
	grep -qx "$g" "$tmp/native" && continue
	(cd "$tfs/events" && ls -d "$g"/*/ 2>/dev/null | sed 's,/$,,') >>"$tmp/want"
	args+=(-e "$g/*")
	[ "$(wc -l <"$tmp/want")" -ge 1000 ] && break
done
echo signal/signal_generate >>"$tmp/want"
echo signal/signal_deliver >>"$tmp/want"
sort -o "$tmp/want" "$tmp/want"
want=$(wc -l <"$tmp/want")
nsys=$(ls -d "$tfs"/events/syscalls/*/ | wc -l)
echo "# $want tracepoints: ${#args[@]} args (-e GLOB), $nsys of them syscalls/"

f1='sig == 10 && common_pid != 0'
f2='sig == 10'
# No duration: record runs until it is interrupted (its Ctrl-C: stop,
# the file finished, the summary), once the echo was read while the
# session runs and signals were sent into it. Creating and starting
# 1,000 tracepoints' counters takes minutes on a loaded TCG guest, and a
# status of 1,000 tracepoints seconds: a fixed -t could end before either.
"$tracectl" record -t 0 -n many -b 65536 -o "$tmp/m.pftrace" "${args[@]}" \
	-e signal/signal_generate --filter "$f1" \
	-e signal/signal_deliver --filter "$f2" \
	>"$tmp/rec.out" 2>&1 &
rec=$!
# signals all along, from before the start to the end of the record
sh -c 'trap : USR1 USR2; while kill -0 '"$rec"' 2>/dev/null; do
	kill -USR1 $$; kill -USR2 $$; cat /proc/self/stat >/dev/null; sleep 0.05; done' &
sig=$!
# status once started (or until record ends), 600 s at most
t0=$(date +%s)
while (($(date +%s) - t0 < 600)); do
	"$tracectl" status >"$tmp/status" 2>&1
	grep -q '^many .* started' "$tmp/status" && break
	kill -0 "$rec" 2>/dev/null || break
	sleep 0.1
done
grep -q '^many .* started' "$tmp/status" && sleep 3
kill -INT "$rec" 2>/dev/null
wait "$rec"
rc=$?
wait "$sig"
if [ "$rc" = 0 ]; then ok "record of $want+ tracepoints (exit 0)"; else
	not_ok "record exit $rc"; sed 's/^/#   /' "$tmp/rec.out"; fi

# The echo: every name tracefs gave, each once, the filters as given.
grep '^    tracepoint ' "$tmp/status" | sed 's/^    tracepoint //' >"$tmp/tps"
awk '{print $1}' "$tmp/tps" | sort -u >"$tmp/got"
n=$(wc -l <"$tmp/tps")
if [ "$n" -ge 1000 ] || [ "$n" -ge "$want" ]; then
	ok "status lists $n tracepoints"
else
	not_ok "status lists $n tracepoints, want >= min(1000, $want)"
	head -20 "$tmp/status" | sed 's/^/#   /'
fi
# tracectl's own events (sched_switch & co) are not asked for here, so
# every glob's name is a tracepoint by name, and nothing else is.
missing=$(comm -23 "$tmp/want" "$tmp/got" | wc -l)
extra=$(comm -13 "$tmp/want" "$tmp/got" | wc -l)
if [ "$missing" = 0 ] && [ "$extra" = 0 ]; then
	ok "status names exactly tracefs's $want (each once: $(($(sort -u "$tmp/tps" | wc -l) == n)))"
else
	not_ok "status differs from tracefs: $missing missing, $extra extra"
	comm -3 "$tmp/want" "$tmp/got" | head | sed 's/^/#   /'
fi
check "the filter of signal/signal_generate as given" \
	grep -qxF "signal/signal_generate filter '$f1'" "$tmp/tps"
check "the filter of signal/signal_deliver as given" \
	grep -qxF "signal/signal_deliver filter '$f2'" "$tmp/tps"

if ! tp_available; then
	ok "trace_processor # SKIP $TP_WHY"
else
	q="select name, count(*) from ftrace_event group by name order by name"
	tp_query "$tmp/m.pftrace" "$q" >"$tmp/names" || true
	kinds=$(wc -l <"$tmp/names")
	echo "# trace_processor: $kinds kinds of events, $(awk -F'|' '{s+=$2} END {print s}' "$tmp/names") events"
	for e in sys_enter_openat sys_exit_openat sys_enter_read sys_enter_kill sys_exit_kill signal_generate signal_deliver; do
		c=$(awk -F'|' -v e="$e" '$1 == e {print $2}' "$tmp/names")
		if [ "${c:-0}" -gt 0 ]; then ok "trace_processor: $c $e"; else
			not_ok "trace_processor: no $e"; fi
	done
	if [ "$kinds" -ge 10 ]; then ok "$kinds kinds of events"; else not_ok "only $kinds kinds of events"; fi
	bad=$(tp_bad_stats "$tmp/m.pftrace")
	if [ -z "$bad" ]; then ok "trace_processor: no data loss"; else
		not_ok "trace_processor: $bad"; fi
	neg=$(tp_value "$tmp/m.pftrace" "select count(*) from ftrace_event e join args a using (arg_set_id) where e.name = 'signal_generate' and a.key = 'sig' and a.int_value != 10")
	check "the filter held: no signal_generate but SIGUSR1 ($neg)" [ "$neg" = 0 ]
fi
lost=$(grep -o 'lost [0-9]*' "$tmp/rec.out" | awk '{s+=$2} END {print s+0}')
check "record says 0 lost ($lost)" [ "$lost" = 0 ]

echo "1..$N"
exit "$FAILED"
