#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tracectl end to end: every command and every documented exit code, with
# the real module and the real traced. Run in a guest with pbtrace.ko
# loaded, as root:
#   tools/vm -- selftests/pbtrace/tracectl_test.sh
# Produced files are decoded with Perfetto's own schema (not ours).
# Prints TAP.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
bin=${PBTRACE_USER_BUILD:-$top/user/build}
tracectl=$bin/tracectl
traced=$bin/traced
ko=${PBTRACE_KO:-$top/pbtrace.ko}
tmp=$(mktemp -d /tmp/tracectl.XXXXXX)
. "$here/tp.sh"
traced_pid=

cleanup() {
	[ -n "$traced_pid" ] && kill "$traced_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$here/tap.sh"

start_traced() {
	"$traced" >"$tmp/traced.log" 2>&1 &
	traced_pid=$!
	for _ in $(seq 50); do
		grep -q ready "$tmp/traced.log" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# traced did not come up:"
	sed 's/^/#   /' "$tmp/traced.log"
}

stop_traced() {
	kill -9 "$traced_pid" 2>/dev/null
	wait "$traced_pid" 2>/dev/null
	traced_pid=
}

# decodes FILE NAME [TP_CHECK_ARGS]: Perfetto's schema decodes FILE and it
# has sched_switch; trace_processor reads the file as the decode does
# (tp_file, tp.sh).
decodes() {
	local f=$1 name=$2
	shift 2
	if protoc -I "$schema" --decode=perfetto.protos.Trace \
		perfetto_trace.proto <"$f" >"$f.txt" 2>"$tmp/decode.err" &&
	   grep -q 'sched_switch {' "$f.txt" &&
	   grep -q 'machine: "' "$f.txt"; then
		ok "$name"
		cp "$f.txt" "$tmp/decoded"
		tp_file ok not_ok "$name" "$f" "$@"
	else
		not_ok "$name"
		sed 's/^/#   /' "$tmp/decode.err"
	fi
}

if [ ! -x "$tracectl" ] || [ ! -x "$traced" ] || [ ! -r "$schema/perfetto_trace.proto" ]; then
	echo "1..0 # SKIP needs $tracectl, $traced (make user) and $schema"
	exit 0
fi

# -- no module --
rmmod pbtrace 2>/dev/null
expect 2 "status without the module" "$tracectl" status
says "modprobe pbtrace" "names the fix for a missing module"
insmod "$ko" || { echo "Bail out! cannot insmod $ko"; exit 1; }

# -- usage and help --
expect 0 "--help" "$tracectl" --help
says "8  session name already in use" "--help documents exit codes"
expect 1 "unknown command" "$tracectl" frobnicate
expect 1 "bad duration" "$tracectl" start -t 5parsecs
says "500ms, 10s or 2m" "bad duration says what works"
expect 1 "-c with flags" "$tracectl" start -c /dev/null -e sched/sched_switch

# -- read-only commands --
expect 0 "list-events" "$tracectl" list-events
says "^sched/sched_switch$" "list-events names sched_switch"
expect 0 "status without traced" "$tracectl" status
says "traced: not running" "status says traced is down"

# -- traced not running --
expect 3 "start without traced" "$tracectl" start -e sched/sched_switch -o "$tmp/a.pftrace"
says "traced is not running" "start says traced is down"

start_traced
expect 0 "status with traced" "$tracectl" status
says "traced: running \(pid $traced_pid\)" "status names traced's pid"

# -- errors a person can act on --
expect 5 "unknown event" "$tracectl" start -e sched/no_such_thing -o "$tmp/a.pftrace"
says "unknown event 'sched/no_such_thing'" "names the unknown event"
printf 'buffers {\n  size_kb: "lots"\n}\n' >"$tmp/bad.pbtx"
expect 6 "config error" "$tracectl" start -c "$tmp/bad.pbtx"
says "bad.pbtx:2:[0-9]+" "config error at line:col"
expect 7 "output on a read-only filesystem" "$tracectl" start -e sched/sched_switch -o /usr/pbtrace-test.pftrace
expect 7 "output in a missing directory" "$tracectl" start -e sched/sched_switch -o "$tmp/no/such/dir/x.pftrace"
says "pick another -o" "output error says what to do"
expect 4 "unprivileged start" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$tracectl" start -e sched/sched_switch -o /tmp/x.pftrace
says "run as root" "not permitted says what to do"
expect 4 "unprivileged status" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$tracectl" status

# -- a session from flags: start, status, stop --wait, decode --
expect 0 "start from flags" "$tracectl" start -n flags -e sched/sched_switch \
	-e sched/sched_waking -b 1024 --fill discard -o "$tmp/flags.pftrace"
expect 8 "name in use" "$tracectl" start -n flags -e sched/sched_switch -o "$tmp/b.pftrace"
says "already in use" "name in use says so"
sleep 0.5
expect 0 "status lists the session" "$tracectl" status
says "^flags +id [0-9]+ +started" "status shows it started"
says "cpu 0 +[0-9]+ events" "status shows per-CPU events"
says "discard" "status shows the fill policy"
expect 0 "stop --wait" "$tracectl" stop -n flags --wait
says "traced finished the file" "stop --wait waited for the file"
decodes "$tmp/flags.pftrace" "stopped session decodes with Perfetto's schema"
expect 1 "stop with no session" "$tracectl" stop

# -- a session from a text config --
cat >"$tmp/cfg.pbtx" <<EOF
buffers { size_kb: 1024 fill_policy: RING_BUFFER }
data_sources {
  config {
    name: "linux.ftrace"
    ftrace_config { ftrace_events: "sched/sched_switch" }
  }
}
unique_session_name: "fromcfg"
EOF
expect 0 "start -c" "$tracectl" start -c "$tmp/cfg.pbtx" -o "$tmp/cfg.pftrace"
says "session 'fromcfg'" "session named by the config"
sleep 0.3
expect 0 "stop -n from config --wait" "$tracectl" stop -n fromcfg --wait
decodes "$tmp/cfg.pftrace" "config session decodes"

# -- -p: only that thread's events; a switch counts for prev and next --
sh -c 'while :; do sleep 0.05; done' &
loop=$!
expect 0 "start -p" "$tracectl" start -n pids -p $loop -e sched/sched_switch -o "$tmp/p.pftrace"
sleep 1
expect 0 "stop -p session --wait" "$tracectl" stop -n pids --wait
kill $loop
decodes "$tmp/p.pftrace" "pid-filtered session decodes"
# Each sched_switch's "prev_pid next_pid" (compact ones expanded): to or
# from the thread, as the kernel's set_event_pid keeps them, both present.
PYTHONDONTWRITEBYTECODE=1 python3 "$here/switches.py" "$tmp/decoded" >"$tmp/out"
outs=$(awk -v t=$loop '$1 == t' "$tmp/out" | wc -l)
ins=$(awk -v t=$loop '$2 == t' "$tmp/out" | wc -l)
others=$(awk -v t=$loop '$1 != t && $2 != t' "$tmp/out" | wc -l)
if [ "$outs" -gt 0 ] && [ "$ins" -gt 0 ] && [ "$others" = 0 ]; then
	ok "-p $loop: every switch is to ($ins) or from ($outs) that thread"
else
	not_ok "-p $loop: $ins switches to it, $outs from it, $others neither"
	sed 's/^/#   /' "$tmp/out" | head -n 20
fi

# -- trigger: a START_TRACING session waits, the trigger starts it --
cat >"$tmp/trig.pbtx" <<EOF
buffers { size_kb: 1024 }
data_sources { config { name: "linux.ftrace" ftrace_config { ftrace_events: "sched/sched_switch" } } }
trigger_config { trigger_mode: START_TRACING triggers { name: "go" } trigger_timeout_ms: 60000 }
unique_session_name: "trig"
EOF
expect 0 "start a START_TRACING session" "$tracectl" start -c "$tmp/trig.pbtx" -o "$tmp/trig.pftrace"
says "starts on its trigger" "start says it waits for the trigger"
"$tracectl" status >"$tmp/out" 2>&1
says "^trig +id [0-9]+ +configured" "waits unstarted"
expect 0 "trigger" "$tracectl" trigger go
for _ in $(seq 20); do
	"$tracectl" status 2>/dev/null | grep -Eq '^trig +id [0-9]+ +started' && break
	sleep 0.1
done
"$tracectl" status >"$tmp/out" 2>&1
says "^trig +id [0-9]+ +started" "the trigger started it"
sleep 0.3
expect 0 "stop the triggered session --wait" "$tracectl" stop -n trig --wait
decodes "$tmp/trig.pftrace" "triggered session decodes"

# -- status --watch refreshes until Ctrl-C --
"$tracectl" start -n watched -e sched/sched_switch -o "$tmp/w.pftrace" >/dev/null 2>&1
"$tracectl" status --watch >"$tmp/watch" 2>&1 &
wpid=$!
sleep 2.5
kill -INT $wpid
wait $wpid
rc=$?
cp "$tmp/watch" "$tmp/out"
if [ "$rc" = 0 ] && [ "$(grep -c '^watched ' "$tmp/watch")" -ge 2 ]; then
	ok "status --watch refreshes and ends on Ctrl-C"
else
	not_ok "status --watch (exit $rc)"
	sed 's/^/#   /' "$tmp/watch" | head -20
fi

# -- stop while traced is down keeps the data --
stop_traced
expect 3 "stop while traced is down" "$tracectl" stop -n watched
says "data stays in the kernel" "says the data is kept"
expect 0 "status after" "$tracectl" status
says "^watched +id [0-9]+ +stopped" "session kept, stopped"
start_traced
for _ in $(seq 50); do
	"$tracectl" status 2>/dev/null | grep -q '^watched ' || break
	sleep 0.2
done
if [ -s "$tmp/w.pftrace" ] && ! "$tracectl" status | grep -q '^watched '; then
	decodes "$tmp/w.pftrace" "restarted traced finishes the kept session"
else
	not_ok "restarted traced finishes the kept session"
	sed 's/^/#   /' "$tmp/traced.log"
fi

# -- record --
expect 0 "record -t 2s" "$tracectl" record -t 2s -n rec -o "$tmp/rec.pftrace"
says "ftrace events: [1-9]" "record summary counts events"
says "machine x86_64" "record summary names the machine"
# Not a terminal: one progress line a second, elapsed / duration, the
# file's size, the kernel's events and losses so far.
says "^ *[0-9]+\.[0-9]s / 2\.0s  file [0-9.]+ (B|KiB|MiB)  events [0-9]+  lost [0-9]+ *$" \
	"record prints progress lines (elapsed / duration, file, events, lost)"
decodes "$tmp/rec.pftrace" "recorded file decodes"

# -- record stops on Ctrl-C and still finishes the file --
# A config without duration_ms: record runs until Ctrl-C.
sed 's/"fromcfg"/"ctrlc"/' "$tmp/cfg.pbtx" >"$tmp/ctrlc.pbtx"
"$tracectl" record -c "$tmp/ctrlc.pbtx" -o "$tmp/c.pftrace" >"$tmp/rec" 2>&1 &
rpid=$!
sleep 2
kill -INT $rpid
wait $rpid
rc=$?
cp "$tmp/rec" "$tmp/out"
if [ "$rc" = 0 ]; then ok "record ends on Ctrl-C (exit 0)"; else not_ok "record on Ctrl-C (exit $rc)"; sed 's/^/#   /' "$tmp/out"; fi
says "ftrace events: [1-9]" "Ctrl-C'd record prints the summary"
says "^ *[0-9]+\.[0-9]s  file [0-9.]+ (B|KiB|MiB)  events [1-9][0-9]*  lost [0-9]+  \(Ctrl-C stops\) *$" \
	"record without a duration prints progress lines that say Ctrl-C stops it"
decodes "$tmp/c.pftrace" "Ctrl-C'd record decodes"

# -- a loss made on purpose: one process's burst into a small DISCARD --
# buffer; trace_processor must report the events the kernel counted lost.
mkfifo "$tmp/go"
python3 -c "import os
open('$tmp/go').read()
for _ in range(20000): os.getppid()" &
burst=$!
expect 0 "start a 64 KB DISCARD session on one process" "$tracectl" start -n lossy \
	-b 64 --ring --fill discard -p $burst -e sched/sched_switch \
	-e raw_syscalls/sys_enter -e raw_syscalls/sys_exit -o "$tmp/lossy.pftrace"
echo go >"$tmp/go"
wait $burst
# The kernel's count, per CPU in status, while the session still runs.
"$tracectl" status >"$tmp/out"
lost=$(awk '$1 == "lossy" { s = 1; next } s && /^[^ ]/ { s = 0 }
	s && $1 == "cpu" { for (i = 1; i < NF; i++) if ($i == "lost") n += $(i + 1) }
	END { print n + 0 }' "$tmp/out")
expect 0 "stop the lossy session --wait" "$tracectl" stop -n lossy --wait
if [ "$lost" -gt 0 ]; then
	ok "40000 syscall events overflow 64 KB: the kernel counts $lost lost"
else
	not_ok "the burst lost nothing; status said:"
	sed 's/^/#   /' "$tmp/out"
fi
# A full DISCARD buffer read only at stop (--ring: not streamed) writes no
# chunk after its loss, so no bundle can carry lost_events: the count
# reaches the file in traced's ftrace_stats.
decodes "$tmp/lossy.pftrace" "lossy session decodes" --lost "$lost" --flagged no

# -- unloading with a live session stops it cleanly --
expect 0 "start a session to unload under" "$tracectl" start -n live -e sched/sched_switch -o "$tmp/l.pftrace"
sleep 0.3
stop_traced
if rmmod pbtrace; then
	ok "rmmod with a live session"
else
	not_ok "rmmod with a live session"
fi
insmod "$ko"

echo "1..$N"
exit $FAILED
