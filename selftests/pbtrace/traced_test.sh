#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# traced end to end, in a guest with pbtrace.ko loaded (TAP):
#   tools/vm -- selftests/pbtrace/traced_test.sh
# Records real workloads with traced + tracectl and checks the files with
# Perfetto's own schema (protoc --decode) and the kernel's counters.
# Needs user/build/{traced,tracectl} and selftests/pbtrace/build/traced_records.
# The tests come in three groups so each fits tools/check's per-script
# timeout: this script runs the recording basics by default;
# traced_sessions_test.sh and traced_faults_test.sh run the others through
# it. TRACED_TEST_ONLY="basic restart ..." picks any set, "all" every test.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
RECORDS=$TOP/selftests/pbtrace/build/traced_records
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
W=$(mktemp -d /tmp/traced_test.XXXXXX)
LOG=$W/traced.log
TRACED=
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# check NAME COMMAND...: one TAP line from a command's status.
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
# expect NAME: one TAP line from the status of the command just run.
expect() { local rc=$?; if [ $rc -eq 0 ]; then ok "$1"; else nok "$1"; fi; return $rc; }
note() { echo "# $*"; }

# Perfetto's schema, compiled once: parsing the .proto text is most of
# what protoc costs per call under TCG.
protoc -I "$SCHEMA" -o "$W/schema.pb" perfetto_trace.proto || exit 1
decode() {
	protoc --descriptor_set_in="$W/schema.pb" --decode=perfetto.protos.Trace \
		perfetto_trace.proto <"$1" >"$1.txt" 2>"$1.err"
}

# Lines of the packets' NAME blocks (protoc text output, two-space indents).
section() { awk -v n="$1" '$0 == "  " n " {" {f=1; next} /^  }/ {f=0} f' "$2"; }
count() { grep -c -- "$1" "$2"; }
# Event types in a decoded trace, one per event.
event_types() { section ftrace_events "$1" | awk '/^      [a-z_0-9]+ \{$/ {print $1}'; }
event_pids() { section ftrace_events "$1" | awk '/^      pid: / {print $2}'; }
event_times() { section ftrace_events "$1" | awk '/^      timestamp: / {print $2}'; }
# BOOTTIME (clock 6) of every clock snapshot, in file order.
boottimes() {
	section clock_snapshot "$1" |
		awk '/clock_id: 6$/ {b=1; next} b && /timestamp:/ {print $2; b=0}'
}
sum_field() { awk -v k="$1:" '$1 == k {s += $2} END {print s + 0}'; }

start_traced() {
	: >"$LOG"
	"$@" "$U/traced" 2>>"$LOG" &
	TRACED=$!
	local i
	for i in $(seq 300); do
		grep -q "ready" "$LOG" && return 0
		kill -0 "$TRACED" 2>/dev/null || break
		sleep 0.1
	done
	note "traced did not start:"; sed 's/^/#   /' "$LOG"
	return 1
}

stop_traced() {
	[ -n "$TRACED" ] || return 0
	kill -TERM "$TRACED" 2>/dev/null
	wait "$TRACED"
	local rc=$?
	TRACED=
	return $rc
}

# Wait until traced logged the end of session NAME (it closed the file).
wait_done() {
	local name=$1 limit=${2:-300} i
	for i in $(seq "$limit"); do
		grep -q "($name): finished" "$LOG" && return 0
		sleep 0.1
	done
	note "session $name did not finish; traced log:"; sed 's/^/#   /' "$LOG"
	return 1
}

# tracectl, bounded: a hang is a failure, not a stuck guest.
tctl() { timeout 60 "$U/tracectl" "$@"; }

# A process with a comm of our own, so the process tree can be checked.
cp /bin/sleep "$W/pbtwork"
# busy SECS: a pipe that keeps the scheduler switching, gone after SECS.
# timeout puts the pipeline in its own group and kills all of it.
busy() { timeout "$1" sh -c 'yes | head -c 100000000000 >/dev/null' & BUSY=$!; }
stop_busy() { kill "$BUSY" 2>/dev/null; wait "$BUSY" 2>/dev/null; }
# light SECS: a few wakeups and forks a second, small files to decode.
light() { timeout "$1" bash -c 'while :; do sleep 0.02; done' & }

write_config() {
	local file=$1; shift
	printf '%s\n' "$@" >"$file"
}

ftrace_ds() {
	local ev out='data_sources { config { name: "linux.ftrace" ftrace_config {'
	for ev; do out+=" ftrace_events: \"$ev\""; done
	echo "$out } } }"
}

# --- 1: a plain recording -------------------------------------------------
test_basic() {
	local f=$W/basic.pftrace wpid
	"$W/pbtwork" 30 & wpid=$!
	light 4
	tctl record -t 3s -o "$f" -n basic >"$W/basic.out" 2>&1
	check "basic: tracectl record exits 0" test $? -eq 0
	check "basic: decodes with Perfetto's schema" decode "$f"
	"$RECORDS" "$f" >/dev/null
	expect "basic: every byte is in whole records"
	check "basic: system_info has utsname.machine $(uname -m)" \
		grep -q "machine: \"$(uname -m)\"" "$f.txt"
	check "basic: system_info has release and page size" \
		grep -q "release: \"$(uname -r)\"" "$f.txt"
	local nclk first_clk
	nclk=$(boottimes "$f.txt" | wc -l)
	check "basic: clock snapshots at start and end ($nclk)" test "$nclk" -ge 2
	first_clk=$(grep -n -m1 "clock_snapshot {" "$f.txt" | cut -d: -f1)
	check "basic: traced's packets come before the kernel's" \
		test "$first_clk" -lt "$(grep -n -m1 "ftrace_events {" "$f.txt" | cut -d: -f1)"
	section process_tree "$f.txt" | grep -A3 "^      pid: $wpid\$" |
		grep -q "cmdline: \"$W/pbtwork\""
	expect "basic: process_tree has the workload (pid $wpid, pbtwork)"
	local nev types
	nev=$(event_types "$f.txt" | wc -l)
	types=$(event_types "$f.txt" | sort -u | tr '\n' ' ')
	check "basic: ftrace events recorded ($nev: $types)" test "$nev" -gt 0
	check "basic: trace_stats present" test "$(count "^  trace_stats {" "$f.txt")" -eq 1
	# The kernel's counters against the file: every event the END
	# ftrace_stats says was read is in the file, one chunk per bundle.
	local read chunks bundles
	read=$(section ftrace_stats "$f.txt" | awk '/phase: END_OF_TRACE/ {e=1} /phase: START_OF_TRACE/ {e=0} e' | sum_field read_events)
	chunks=$(section trace_stats "$f.txt" | sum_field chunks_read)
	bundles=$(count "^  ftrace_events {" "$f.txt")
	check "basic: events in file ($nev) == kernel read_events ($read)" test "$nev" -eq "$read"
	check "basic: bundles in file ($bundles) == kernel chunks_read ($chunks)" test "$bundles" -eq "$chunks"
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
}

# --- 2: streaming ---------------------------------------------------------
test_streaming() {
	local f=$W/stream.pftrace c=$W/stream.pbtx grew stuck t0 now
	write_config "$c" 'buffers { size_kb: 2048 fill_policy: DISCARD }' \
		"$(ftrace_ds sched/sched_switch sched/sched_waking)" \
		'write_into_file: true' 'file_write_period_ms: 500' 'duration_ms: 9000'
	light 10
	tctl start -c "$c" -o "$f" -n stream >/dev/null 2>&1
	check "streaming: session starts" test $? -eq 0
	# Sample the size for 7 s. fork+exec is slow under TCG and slower on a
	# loaded host, so the loop forks only stat: read -t on a FIFO sleeps,
	# EPOCHREALTIME stamps each sample, and the check uses the stamps.
	mkfifo "$W/tick" && exec 9<>"$W/tick"
	t0=${EPOCHREALTIME/./}
	: >"$W/sizes"
	while :; do
		read -r -t 0.4 -u 9
		now=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
		[ "$now" -ge 7000 ] && break
		echo -n "$now " >>"$W/sizes"
		stat -c %s "$f" >>"$W/sizes" 2>/dev/null || echo 0 >>"$W/sizes"
		[ "$now" -ge 2500 ] && [ ! -e "$W/stream.mid" ] && cp "$f" "$W/stream.mid"
	done
	exec 9<&-
	note "ms size: $(tr '\n' ' ' <"$W/sizes")"
	# Growth between samples; any two samples 1.2 s or more apart (more
	# than two write periods) must show it.
	read -r grew stuck < <(awk 'NR > 1 { if ($2 > s) g++; else if ($1 - t >= 1200) b++ }
		{ t = $1; s = $2 } END { print g + 0, b + 0 }' "$W/sizes")
	[ "$grew" -ge 2 ] && [ "$stuck" -eq 0 ]
	expect "streaming: file grows while recording ($grew increases, $stuck gaps >= 1.2 s without growth)" ||
		grep "(stream)" "$LOG" | sed 's/^/#   /'
	decode "$W/stream.mid"
	check "streaming: a copy taken mid-session holds kernel events" \
		grep -q "ftrace_events {" "$W/stream.mid.txt"
	wait_done stream 150
	check "streaming: whole file decodes" decode "$f"
	local ends total bad=0 k
	ends=$("$RECORDS" "$f")
	check "streaming: file is whole records" test $? -eq 0
	total=$(echo "$ends" | wc -l)
	# Every 1/4th boundary and the last: each prefix is a valid trace
	# (protoc is slow under TCG; the record walk covers every boundary).
	for k in $(echo "$ends" | awk -v t="$total" 'NR % int(t / 4 + 1) == 0 || NR == t'); do
		head -c "$k" "$f" >"$W/prefix"
		decode "$W/prefix" || bad=$((bad + 1))
	done
	check "streaming: prefixes at record boundaries decode ($total records, $bad bad)" test "$bad" -eq 0
}

# --- 3: duration_ms -------------------------------------------------------
test_duration() {
	local f=$W/dur.pftrace c=$W/dur.pbtx t
	write_config "$c" 'buffers { size_kb: 1024 }' "$(ftrace_ds sched/sched_switch)" \
		'duration_ms: 2000'
	tctl start -c "$c" -o "$f" -n dur >/dev/null 2>&1
	wait_done dur 200
	check "duration: traced ended it" \
		grep -q "(dur): finished (duration_ms elapsed)" "$LOG"
	decode "$f"
	t=$(boottimes "$f.txt" | awk 'NR == 1 {a = $1} {b = $1} END {print int((b - a) / 1000000)}')
	check "duration: first to last clock snapshot ${t} ms (2000..3500)" \
		test "$t" -ge 1900 -a "$t" -le 3500
}

# --- 4: max_file_size_bytes -----------------------------------------------
test_max_size() {
	local f=$W/max.pftrace c=$W/max.pbtx size limit=100000
	write_config "$c" 'buffers { size_kb: 2048 }' \
		"$(ftrace_ds sched/sched_switch sched/sched_waking)" \
		'write_into_file: true' 'file_write_period_ms: 200' 'duration_ms: 20000' \
		"max_file_size_bytes: $limit"
	busy 20
	tctl start -c "$c" -o "$f" -n maxsize >/dev/null 2>&1
	wait_done maxsize 250
	stop_busy
	size=$(stat -c %s "$f")
	check "max size: ended by the limit" grep -q "(maxsize): finished (max_file_size_bytes reached)" "$LOG"
	check "max size: file $size <= $limit" test "$size" -le "$limit"
	check "max size: file decodes" decode "$f"
	check "max size: still ends with trace_stats" grep -q "^  trace_stats {" "$f.txt"
}

# --- 5: triggers ----------------------------------------------------------
test_triggers() {
	local f=$W/tstart.pftrace c=$W/tstart.pbtx tr first
	write_config "$c" 'buffers { size_kb: 1024 }' "$(ftrace_ds sched/sched_switch)" \
		'trigger_config { trigger_mode: START_TRACING triggers { name: "go" } trigger_timeout_ms: 30000 }'
	light 7
	tctl start -c "$c" -o "$f" -n tstart >/dev/null 2>&1
	sleep 1
	tctl trigger go >/dev/null 2>&1
	sleep 1
	tctl stop -n tstart --wait >/dev/null 2>&1
	wait_done tstart 100
	decode "$f"
	check "START_TRACING: trigger packet written" grep -q 'trigger_name: "go"' "$f.txt"
	tr=$(awk '/^  timestamp: / {t=$2} /^  trigger \{/ {print t; exit}' "$f.txt")
	first=$(event_times "$f.txt" | sort -n | head -1)
	check "START_TRACING: events recorded (first $first)" test -n "$first"
	check "START_TRACING: no event before the trigger ($tr)" test "${first:-0}" -ge "${tr:-0}"

	f=$W/tstop.pftrace c=$W/tstop.pbtx
	write_config "$c" 'buffers { size_kb: 1024 }' "$(ftrace_ds sched/sched_switch)" \
		'trigger_config { trigger_mode: STOP_TRACING triggers { name: "halt" stop_delay_ms: 1000 } trigger_timeout_ms: 30000 }'
	tctl start -c "$c" -o "$f" -n tstop >/dev/null 2>&1
	sleep 1
	tctl trigger halt >/dev/null 2>&1
	wait_done tstop 150
	decode "$f"
	check "STOP_TRACING: trigger packet with stop_delay_ms" \
		bash -c "grep -A3 'trigger_name: \"halt\"' '$f.txt' | grep -q 'stop_delay_ms: 1000'"
	check "STOP_TRACING: ended by the trigger" grep -q "(tstop): finished (stop trigger)" "$LOG"
	local last delay
	tr=$(awk '/^  timestamp: / {t=$2} /^  trigger \{/ {print t; exit}' "$f.txt")
	last=$(boottimes "$f.txt" | tail -1)
	delay=$(( (last - tr) / 1000000 ))
	check "STOP_TRACING: stopped ${delay} ms after the trigger (1000..2500)" \
		test "$delay" -ge 1000 -a "$delay" -le 2500
}

# --- 6: two sessions at once ----------------------------------------------
test_two_sessions() {
	local a=$W/two_a.pftrace b=$W/two_b.pftrace ta tb
	light 4
	tctl start -e sched/sched_switch -o "$a" -n two_a >/dev/null 2>&1
	tctl start -e sched/sched_waking -o "$b" -n two_b >/dev/null 2>&1
	sleep 2
	tctl stop -n two_a --wait >/dev/null 2>&1
	tctl stop -n two_b --wait >/dev/null 2>&1
	decode "$a"; decode "$b"
	ta=$(event_types "$a.txt" | sort -u | tr '\n' ' ')
	tb=$(event_types "$b.txt" | sort -u | tr '\n' ' ')
	check "two sessions: A has only sched_switch ($ta)" test "$ta" = "sched_switch "
	check "two sessions: B has only sched_waking ($tb)" test "$tb" = "sched_waking "
}

# --- 7: tids_to_trace -----------------------------------------------------
test_tids() {
	local f=$W/tids.pftrace pid others nev
	bash -c 'while :; do sleep 0.05; done' & pid=$!
	light 4
	tctl start -e sched/sched_switch -p "$pid" -o "$f" -n tids >/dev/null 2>&1
	sleep 2
	tctl stop -n tids --wait >/dev/null 2>&1
	kill "$pid" 2>/dev/null
	decode "$f"
	nev=$(event_pids "$f.txt" | wc -l)
	others=$(event_pids "$f.txt" | grep -vc "^$pid\$")
	check "tids_to_trace: events of pid $pid recorded ($nev)" test "$nev" -gt 0
	check "tids_to_trace: no other thread's events ($others)" test "$others" -eq 0
}

# --- 8: traced killed and restarted ---------------------------------------
test_restart() {
	local f=$W/restart.pftrace c=$W/restart.pbtx before after
	write_config "$c" 'buffers { size_kb: 2048 }' "$(ftrace_ds sched/sched_switch)" \
		'write_into_file: true' 'file_write_period_ms: 300' 'duration_ms: 7000'
	light 9
	tctl start -c "$c" -o "$f" -n restart >/dev/null 2>&1
	sleep 2
	kill -9 "$TRACED"; wait "$TRACED" 2>/dev/null; TRACED=
	before=$(stat -c %s "$f")
	sleep 1.5
	start_traced
	wait_done restart 200
	after=$(stat -c %s "$f")
	check "restart: reattached and appended ($before -> $after bytes)" \
		grep -q "(restart): reattached, appending" "$LOG"
	check "restart: the kernel's loss counters are logged at reattach" \
		grep -q "(restart): kernel counts so far: [0-9]* chunks overwritten" "$LOG"
	check "restart: file decodes" decode "$f"
	"$RECORDS" "$f" >/dev/null
	expect "restart: whole records"
	check "restart: one header (system_info once)" test "$(count "^  system_info {" "$f.txt")" -eq 1
	check "restart: the gap is marked (previous_packet_dropped)" grep -q "previous_packet_dropped" "$f.txt"
	check "restart: trace_stats at the end" test "$(count "^  trace_stats {" "$f.txt")" -eq 1
	local nev read
	nev=$(event_types "$f.txt" | wc -l)
	read=$(section ftrace_stats "$f.txt" | awk '/phase: END_OF_TRACE/ {e=1} e' | sum_field read_events)
	check "restart: no chunk written twice: events $nev == kernel read_events $read" \
		test "$nev" -eq "$read"
}

# --- stopped while traced was down ----------------------------------------
test_stopped_down() {
	local f=$W/down.pftrace
	light 6
	tctl start -e sched/sched_switch -o "$f" -n down >/dev/null 2>&1
	sleep 1.5
	kill -9 "$TRACED"; wait "$TRACED" 2>/dev/null; TRACED=
	tctl stop -n down --wait >"$W/down.out" 2>&1
	check "stopped while down: tracectl stop --wait says traced is not running (exit $?)" \
		grep -q "traced is not running" "$W/down.out"
	start_traced
	wait_done down 150
	check "stopped while down: restarted traced finished it" \
		grep -q "(down): finished (stopped while traced was down)" "$LOG"
	check "stopped while down: file decodes" decode "$f"
	check "stopped while down: events and trace_stats kept" \
		bash -c "grep -q 'ftrace_events {' '$f.txt' && grep -q '^  trace_stats {' '$f.txt'"
}

# --- 9: output errors -----------------------------------------------------
test_errors() {
	local d=$W/small f
	mkdir -p "$d" && mount -t tmpfs -o size=96k tmpfs "$d"
	f=$d/full.pftrace
	write_config "$W/full.pbtx" 'buffers { size_kb: 2048 }' \
		"$(ftrace_ds sched/sched_switch sched/sched_waking)" \
		'write_into_file: true' 'file_write_period_ms: 200' 'duration_ms: 20000'
	busy 20
	tctl start -c "$W/full.pbtx" -o "$f" -n full >/dev/null 2>&1
	wait_done full 250
	stop_busy
	check "disk full: clear error in the log" grep -q "No space left on device" "$LOG"
	cp "$f" "$W/full.pftrace"	# decode's output needs room
	check "disk full: what fit is a valid trace" decode "$W/full.pftrace"
	"$RECORDS" "$f" >/dev/null
	expect "disk full: whole records"
	umount "$d"

	# tracectl refuses what it can see is wrong...
	mkdir -p "$W/adir.pftrace"
	tctl start -e sched/sched_switch -o "$W/adir.pftrace" -n adir >/dev/null 2>&1
	check "unwritable output: tracectl refuses a directory (exit $?)" test $? -eq 7
	# ...traced reports what only opening shows: a dangling symlink.
	ln -s /nonexistent/pbtrace/x.pftrace "$W/dangling.pftrace"
	tctl start -e sched/sched_switch -o "$W/dangling.pftrace" -n dangling >/dev/null 2>&1
	wait_done dangling 100
	check "unwritable output: traced names the path and the cause" \
		grep -q "cannot open output $W/dangling.pftrace: No such file or directory" "$LOG"
	check "unwritable output: the session is gone" \
		bash -c "! '$U/tracectl' status 2>/dev/null | grep -q dangling"
}

# --- stats: process_stats and sys_stats at the configured periods ---------
test_stats() {
	local f=$W/stats.pftrace c=$W/stats.pbtx nps nss total
	write_config "$c" 'buffers { size_kb: 1024 }' "$(ftrace_ds sched/sched_switch)" \
		'data_sources { config { name: "linux.process_stats" process_stats_config { proc_stats_poll_ms: 500 } } }' \
		'data_sources { config { name: "linux.sys_stats" sys_stats_config { meminfo_period_ms: 500 vmstat_period_ms: 1000 stat_period_ms: 500 } } }' \
		'duration_ms: 3000'
	tctl start -c "$c" -o "$f" -n stats >/dev/null 2>&1
	wait_done stats 200
	decode "$f"
	nps=$(count "^  process_stats {" "$f.txt")
	nss=$(count "^  sys_stats {" "$f.txt")
	check "stats: process_stats every 500 ms over 3 s ($nps)" test "$nps" -ge 3
	check "stats: sys_stats every 500 ms over 3 s ($nss)" test "$nss" -ge 3
	total=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
	section sys_stats "$f.txt" | grep -A1 "key: MEMINFO_MEM_TOTAL" | grep -q "value: $total\$"
	expect "stats: sys_stats MemTotal == /proc/meminfo ($total kB)"
	# CPUs per sys_stats packet that carries /proc/stat times.
	local per
	per=$(awk '/^  sys_stats \{/ {f=1; n=0; next} f && /^    cpu_stat \{/ {n++}
		f && /^  \}/ {f=0; if (n) print n}' "$f.txt" | sort -u | tr '\n' ' ')
	[ "$per" = "$(nproc) " ]
	expect "stats: sys_stats has every CPU's times (per packet: $per, CPUs: $(nproc))"
	section process_stats "$f.txt" | grep -q "^      pid: $TRACED\$"
	expect "stats: process_stats has traced itself (pid $TRACED)"
}

# --- daemon mode ----------------------------------------------------------
test_daemon() {
	local pid
	stop_traced
	"$U/traced" --daemon --pidfile "$W/traced.pid"
	check "daemon: traced --daemon returns 0" test $? -eq 0
	sleep 1
	pid=$(cat "$W/traced.pid" 2>/dev/null)
	check "daemon: pidfile names a live traced ($pid)" \
		bash -c "[ -n '$pid' ] && grep -q traced /proc/$pid/comm"
	"$U/traced" >"$W/second.log" 2>&1
	check "daemon: a second traced refuses to run" \
		grep -q "another traced is already running (pid $pid)" "$W/second.log"
	kill -TERM "$pid" 2>/dev/null
	sleep 1
	check "daemon: SIGTERM removes the pidfile" test ! -e "$W/traced.pid"
}

# --- 10: traced under valgrind --------------------------------------------
test_valgrind() {
	local f=$W/vg.pftrace
	# valgrind cannot run an ASan build (PBTRACE_USER_BUILD=user/build-san).
	if ldd "$U/traced" | grep -q libasan; then
		n=$((n + 1)); echo "ok $n - valgrind # SKIP traced is built with ASan"
		return
	fi
	stop_traced
	start_traced valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite || { nok "valgrind: traced starts"; return; }
	tctl record -t 2s -o "$f" -n vg >/dev/null 2>&1
	check "valgrind: record under valgrind" decode "$f"
	stop_traced
	check "valgrind: traced exits clean under valgrind (status $?)" test $? -eq 0
	grep -q "==[0-9]*==" "$LOG" && sed -n 's/^/#   /; /==[0-9]*==/p' "$LOG" | head -20
}

cleanup() {
	stop_traced
	rm -rf "$W"
}
trap cleanup EXIT

echo "TAP version 13"
ALL="basic streaming duration max_size triggers two_sessions tids stats daemon restart stopped_down errors valgrind"
ONLY=${TRACED_TEST_ONLY:-basic streaming duration max_size}
[ "$ONLY" = all ] && ONLY=$ALL
for t in $ALL; do
	case " $ONLY " in *" $t "*) ;; *) continue ;; esac
	if [ -z "$TRACED" ] && ! start_traced; then
		nok "$t: traced starts"
		continue
	fi
	note "--- $t"
	t0=$SECONDS
	"test_$t"
	note "$t took $((SECONDS - t0)) s"
done
stop_traced
echo "1..$n"
[ "$failed" -eq 0 ]
