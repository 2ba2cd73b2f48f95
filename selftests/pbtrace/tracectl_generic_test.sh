#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Any tracepoint by name (issue 14): tracectl -e group/name, group:name and
# a config's ftrace_events glob record tracepoints pbtrace has no encoder
# for, from their tracefs layout, and the file holds exactly what the
# workload did. Referees: sig_conn_work's own counts (N SIGUSR1 to a child
# that ignores it, M loopback connects), protoc's decode with Perfetto's
# schema (the events by field number, in tracefs order), and the real
# trace_processor (ftrace_event + args, by field name, from the
# descriptors the file carries). Run in a guest with pbtrace.ko loaded:
#   tools/vm -- selftests/pbtrace/tracectl_generic_test.sh
# and with KVER=6.12.117+deb12-amd64 for the other kernel's layouts.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
bin=${PBTRACE_USER_BUILD:-$top/user/build}
tracectl=$bin/tracectl
traced=$bin/traced
work=$here/build/sig_conn_work
tmp=$(mktemp -d /tmp/tracectl_generic.XXXXXX)
. "$here/tap.sh"
. "$here/tp.sh"
traced_pid=
NSIG=50
NCONN=20

cleanup() {
	[ -n "$traced_pid" ] && kill "$traced_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# same NAME WANT GOT
same() {
	if [ "$2" = "$3" ]; then ok "$1: $3"; else not_ok "$1: $3, want $2"; fi
}

if [ ! -x "$tracectl" ] || [ ! -x "$traced" ] || [ ! -x "$work" ] ||
   [ ! -r "$schema/perfetto_trace.proto" ]; then
	echo "1..0 # SKIP needs $tracectl, $traced (make user), $work (make -C selftests/pbtrace) and $schema"
	exit 0
fi

"$traced" >"$tmp/traced.log" 2>&1 &
traced_pid=$!
WAIT_STEP=0.1 wait_for 50 grep -q ready "$tmp/traced.log" ||
	{ echo "Bail out! traced did not come up"; sed 's/^/#   /' "$tmp/traced.log"; exit 1; }

# -- list-events: the kernel's tracepoints, and which pbtrace encodes itself --
tfs=/sys/kernel/tracing
expect 0 "list-events" "$tracectl" list-events
same "list-events lists every line of available_events" \
	"$(wc -l <"$tfs/available_events")" "$(wc -l <"$tmp/out")"
says "^signal/signal_generate$" "list-events names signal/signal_generate"
says "^sock/inet_sock_set_state$" "list-events names sock/inet_sock_set_state"
expect 0 "list-events --native" "$tracectl" list-events --native
says "^sched/sched_switch$" "--native names sched_switch"
if grep -q "^signal/signal_generate" "$tmp/out"; then
	not_ok "--native leaves signal_generate out"
else
	ok "--native leaves signal_generate out"
fi

# -- names this kernel does not have --
expect 5 "an unknown tracepoint" "$tracectl" start -e nosuch/event -o "$tmp/x.pftrace"
says "unknown event 'nosuch/event': this kernel has no tracepoint nosuch/event; 'tracectl list-events'" \
	"says the kernel has no such tracepoint and points to list-events"
expect 5 "a glob that matches nothing" "$tracectl" start -e 'tcp/nomatch*' -o "$tmp/x.pftrace"
says "'tcp/nomatch\\*' matches no tracepoint of this kernel" "names the glob"

# decode FILE: protoc with Perfetto's schema -> FILE.txt, FILE.gen
decode() {
	protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
		<"$1" >"$1.txt" 2>"$tmp/decode.err" &&
		python3 "$here/generic_events.py" <"$1.txt" >"$1.gen"
}

# run_work NAME: the workload inside a started session; sets CHILD, PORT
run_work() {
	local out
	out=$("$work" $NSIG $NCONN) || { not_ok "$1: sig_conn_work failed: $out"; return 1; }
	read -r _ CHILD _ PORT <<<"$out"
}

# The generic events of FILE.gen with field id ID whose fields match all
# of "NUM=VALUE" ARGS.
count() {
	local f=$1 id=$2
	shift 2
	awk -v id="$id" -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		$1 == id {
			hit = 1
			for (i = 1; i <= n; i++) {
				found = 0
				for (j = 2; j <= NF; j++) if ($j == w[i]) found = 1
				if (!found) hit = 0
			}
			c += hit
		}
		END { print c + 0 }' "$f.gen"
}

# tp_count FILE EVENT WHERE: trace_processor's count of EVENT rows.
tp_count() {
	tp_value "$1" "select count(*) from ftrace_event e where e.name = '$2' and $3"
}

arg() { echo "extract_arg(e.arg_set_id, '$1')"; }

# -- tracectl -e group/name and group:name --
f=$tmp/e.pftrace
expect 0 "start -e signal/signal_generate -e sock:inet_sock_set_state" \
	"$tracectl" start -n gen -e signal/signal_generate -e sock:inet_sock_set_state -o "$f"
run_work "-e" || true
expect 0 "stop --wait" "$tracectl" stop -n gen --wait
if decode "$f"; then
	ok "the file decodes with Perfetto's schema"
else
	not_ok "the file decodes"; sed 's/^/#   /' "$tmp/decode.err"
fi
# tracectl numbers the generic events in -e order from 65536; the fields
# in tracefs order: signal_generate 1 sig .. 5 pid, inet_sock_set_state
# 2 oldstate 3 newstate 5 dport.
same "signal_generate sig=10 pid=child in the file (protoc)" $NSIG \
	"$(count "$f" 65536 1=10 5="${CHILD:-x}")"
same "inet_sock_set_state CLOSE->SYN_SENT to the port (protoc)" $NCONN \
	"$(count "$f" 65537 2=7 3=2 5="${PORT:-x}")"
grep -q "^descriptor 65536 signal$" "$f.gen" && grep -q "^descriptor 65537 sock$" "$f.gen" &&
	ok "the bundles describe both events (generic_event_descriptors)" ||
	not_ok "no generic_event_descriptors for 65536 signal and 65537 sock"
if tp_available; then
	same "trace_processor: signal_generate sig 10 to the child" $NSIG \
		"$(tp_count "$f" signal_generate "$(arg sig) = 10 and $(arg pid) = ${CHILD:-0}")"
	same "trace_processor: the child's comm and result 1 (ignored) on each" $NSIG \
		"$(tp_count "$f" signal_generate "$(arg pid) = ${CHILD:-0} and $(arg comm) = 'sig_conn_work' and $(arg result) = 1")"
	same "trace_processor: inet_sock_set_state CLOSE->SYN_SENT" $NCONN \
		"$(tp_count "$f" inet_sock_set_state "$(arg oldstate) = 7 and $(arg newstate) = 2 and $(arg dport) = ${PORT:-0}")"
	same "trace_processor: no descriptor errors" "" \
		"$(tp_bad_stats "$f" | grep generic)"
else
	ok "trace_processor # SKIP $TP_WHY"
fi

# -- record's summary names the generic events from their descriptors --
f=$tmp/r.pftrace
"$tracectl" record -t 4s -n rec -e signal/signal_generate -o "$f" >"$tmp/rec.out" 2>&1 &
rec=$!
wait_for 50 eval '"$tracectl" status 2>/dev/null | grep -q "rec"'
run_work "record" || true
wait "$rec"
same "record exits 0" 0 $?
cp "$tmp/rec.out" "$tmp/out"
decode "$f" || not_ok "record's file decodes"
in_file=$(grep -c '^65536 ' "$f.gen")
says "^ +signal/signal_generate +$in_file\$" \
	"record's summary counts signal/signal_generate as the file holds them ($in_file)"
[ "$in_file" -ge $NSIG ] && ok "at least the workload's $NSIG in the file" ||
	not_ok "$in_file signal_generate in the file, fewer than $NSIG"

# -- a config's ftrace_events glob --
f=$tmp/c.pftrace
cat >"$tmp/glob.pbtx" <<EOF
buffers { size_kb: 4096 }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "signal/*"
  ftrace_events: "sched/sched_process_exit"
} } }
write_into_file: true
file_write_period_ms: 100
output_path: "$f"
EOF
expect 0 "start -c with ftrace_events: \"signal/*\"" "$tracectl" start -n glob -c "$tmp/glob.pbtx"
run_work "config" || true
expect 0 "stop --wait" "$tracectl" stop -n glob --wait
decode "$f" || { not_ok "the config's file decodes"; sed 's/^/#   /' "$tmp/decode.err"; }
gen=$(sed -n 's/^descriptor \([0-9]*\) signal$/\1/p' "$f.gen" | sort -u | tr '\n' ' ')
same "the glob gave two signal events (generate, deliver)" 2 "$(wc -w <<<"$gen")"
if tp_available; then
	same "trace_processor: signal_generate sig 10 to the child" $NSIG \
		"$(tp_count "$f" signal_generate "$(arg sig) = 10 and $(arg pid) = ${CHILD:-0}")"
	same "trace_processor: signal_deliver SIGKILL in the child, once" 1 \
		"$(tp_count "$f" signal_deliver "$(arg sig) = 9 and e.utid in (select utid from thread where tid = ${CHILD:-0})")"
	same "trace_processor: the native sched_process_exit beside them" 1 \
		"$(tp_value "$f" "select count(*) from ftrace_event e where e.name = 'sched_process_exit' and $(arg pid) = ${CHILD:-0}")"
else
	ok "trace_processor # SKIP $TP_WHY"
fi

echo "1..$N"
exit $FAILED
