#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# traced end to end, in a guest with pbtrace.ko loaded (TAP):
#   tools/vm -- selftests/pbtrace/traced_test.sh
# Records real workloads with traced + tracectl and checks the files with
# Perfetto's own schema (protoc --decode) and the kernel's counters.
# Needs user/build/{traced,tracectl} and selftests/pbtrace/build/{traced_records,
# session_counters}.
# The tests come in three groups so each fits tools/check's per-script
# timeout: this script runs the recording basics by default;
# traced_sessions_test.sh and traced_faults_test.sh run the others through
# it. TRACED_TEST_ONLY="basic restart ..." picks any set, "all" every test.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
RECORDS=$TOP/selftests/pbtrace/build/traced_records
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
W=$(mktemp -d /tmp/traced_test.XXXXXX)
. "$TOP/selftests/pbtrace/traced_lib.sh"
LOG=$W/traced.log
TRACED=
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# check NAME COMMAND...: one TAP line from a command's status; returns it.
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; return 1; fi; }
# expect NAME: one TAP line from the status of the command just run.
expect() { local rc=$?; if [ $rc -eq 0 ]; then ok "$1"; else nok "$1"; fi; return $rc; }

# Perfetto's schema, compiled once: parsing the .proto text is most of
# what protoc costs per call under TCG.
protoc -I "$SCHEMA" -o "$W/schema.pb" perfetto_trace.proto || exit 1

# Event types in a decoded trace, one per event.
# A compact_sched event is one entry of its kind's timestamp column.
event_types() {
	section ftrace_events "$1" | awk '/^      [a-z_0-9]+ \{$/ {print $1}
		/^      switch_timestamp: / {print "sched_switch"}
		/^      waking_timestamp: / {print "sched_waking"}'
}
event_pids() { section ftrace_events "$1" | awk '/^      pid: / {print $2}'; }
event_times() { section ftrace_events "$1" | awk '/^      timestamp: / {print $2}'; }
# BOOTTIME (clock 6) of every clock snapshot, in file order.
boottimes() {
	section clock_snapshot "$1" |
		awk '/clock_id: 6$/ {b=1; next} b && /timestamp:/ {print $2; b=0}'
}
sum_field() { awk -v k="$1:" '$1 == k {s += $2} END {print s + 0}'; }

# One line per packet of a decoded trace, tab-separated:
#   seq  kinds  cpu  events  types  dropped  lost  timestamp  first  last
# seq: trusted_packet_sequence_id; kinds: the packet's messages ("a,b,");
# for a kernel bundle (ftrace_events) its cpu, event count, event types
# ("a,b,"), lost_events (0/1) and its first and last event's timestamp;
# dropped: previous_packet_dropped (a DataLossReason mask, 0 if absent:
# Perfetto's schema has it as uint32, bit 0 DATA_LOSS_PRESENT); timestamp: the packet's own
# (traced's packets). "-" where absent.
packets() {
	awk 'function put(v) { return v == "" ? "-" : v }
	/^packet \{$/ {seq = kinds = cpu = types = ts = t0 = t1 = ""; nev = drop = lost = 0; next}
	/^  trusted_packet_sequence_id: / {seq = $2; next}
	/^  previous_packet_dropped: / {drop = $2; next}
	/^  timestamp: / {ts = $2; next}
	/^  [a-z_0-9]+ \{$/ {kinds = kinds $1 ","; ft = ($1 == "ftrace_events"); next}
	/^  \}$/ {ft = 0; next}
	ft && /^    cpu: / {cpu = $2; next}
	ft && /^    lost_events: true$/ {lost = 1; next}
	ft && /^      timestamp: / {if (t0 == "" || $2 + 0 < t0 + 0) t0 = $2; if (t1 == "" || $2 + 0 > t1 + 0) t1 = $2; next}
	ft && /^      [a-z_0-9]+ \{$/ {nev++; if (index("," types, "," $1 ",") == 0) types = types $1 ","; next}
	ft && /^      (switch|waking)_timestamp: / {nev++; t = $1 == "switch_timestamp:" ? "sched_switch" : "sched_waking"
		if (index("," types, "," t ",") == 0) types = types t ","; next}
	/^\}$/ {print put(seq) "\t" put(kinds) "\t" put(cpu) "\t" nev "\t" put(types) "\t" drop "\t" lost "\t" put(ts) "\t" put(t0) "\t" put(t1)}
	' "$1"
}
# nr_cpu_ids: the kernel numbers sequences by it (docs/architecture.md).
NR_CPU_IDS=$(( $(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1 ))
USER_SEQ=16777216	# PBTRACE_SEQ_ID_USER_BASE, 2^24
# The kernel's counters of session NAME (selftests/pbtrace/session_counters.c).
COUNTERS=$TOP/selftests/pbtrace/build/session_counters
# kcount FILE BUFFER FIELD: buffer BUFFER's FIELD summed over CPUs.
kcount() {
	awk -v b="$2" -v f="$3" '$1 == "buffer" && $2 == b {
		for (i = 3; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$1"
}
# ksum FILE FIELD: FIELD summed over every buffer.
ksum() {
	awk -v f="$2" '$1 == "buffer" {
		for (i = 3; i < NF; i += 2) if ($i == f) s += $(i + 1) } END {print s + 0}' "$1"
}
# freeze NAME OUT: stop session NAME with traced paused, so the kernel's
# counters are final and still there (traced destroys the session once it
# finished the file), write them to OUT, then let traced finish the file.
freeze() {
	kill -STOP "$TRACED"
	tctl stop -n "$1" >/dev/null 2>&1
	"$COUNTERS" "$1" >"$2"
	local rc=$?
	kill -CONT "$TRACED"
	[ $rc -eq 0 ] || { note "session_counters $1 failed ($rc)"; return 1; }
	sed 's/^/#   kernel: /' "$2"
}





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
	tp_file ok nok basic "$f"
	"$RECORDS" "$f" >/dev/null
	expect "basic: every byte is in whole records"
	basic_system_info "$f.txt"
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
	basic_progress "$W/basic.out" "$f" "$nev"
	basic_service_events "$f.txt"
	basic_sequences "$f.txt"
}

# system_info: every field against what this guest says on its own.
basic_system_info() {
	local si=$W/si.txt v want
	section system_info "$1" >"$si"
	sed 's/^/#   /' "$si"
	# field WANT NAME: the system_info line "NAME: WANT" (strings quoted).
	field() {
		v=$(awk -v k="$2:" '$1 == k {sub(/^ *[a-z_]+: /, ""); print; exit}' "$si")
		check "basic: system_info $2 $v == $1" test "$v" = "$1"
	}
	field "\"$(uname -s)\"" sysname
	field "\"$(uname -r)\"" release
	field "\"$(uname -m)\"" machine
	field "\"$(uname -v)\"" version
	field "$(getconf PAGESIZE)" page_size
	# Every CPU the guest has: sysfs lists them, nproc counts the online.
	want=$(ls -d /sys/devices/system/cpu/cpu[0-9]* | wc -l)
	[ "$want" -eq "$(nproc)" ] || note "sysfs has $want CPUs, $(nproc) online"
	field "$want" num_cpus
	field "$(awk '/^MemTotal:/ {print $2 * 1024}' /proc/meminfo)" system_ram_bytes
	field "$(getconf CLK_TCK)" hz
	field "\"$(uname -n)\"" machine_name
	# Which boot the file holds (tracectl merge's identity of the file).
	v=$(section trace_attributes "$1" | awk '$1 == "key:" {k = $2} $1 == "string_value:" && k == "\"pbtrace.boot_id\"" {print $2}')
	check "basic: trace_attributes pbtrace.boot_id $v is this boot's" \
		test "$v" = "\"$(cat /proc/sys/kernel/random/boot_id)\""
}

# tracectl record's progress, one line a second when not on a terminal:
# "  1.0s / 3.0s  file 1.2 KiB  events N  lost N".
basic_progress() {
	local out=$1 file=$2 nev=$3 lines last
	lines=$(grep -E '^ *[0-9]+\.[0-9]s / 3\.0s  file [0-9.]+ (B|KiB|MiB)  events [0-9]+  lost [0-9]+ *$' "$out")
	sed 's/^/#   /' "$out"
	check "basic: record prints a progress line a second ($(echo "$lines" | grep -c .) lines)" \
		test "$(echo "$lines" | grep -c .)" -ge 3
	echo "$lines" | awk '{if (NR > 1 && $1 + 0 < t + 0.9) bad = 1; t = $1} END {exit bad}'
	expect "basic: progress elapsed grows by >= 1 s a line"
	last=$(echo "$lines" | tail -1)
	# The kernel's events_written so far: never more than the file holds at
	# the end, and not zero (a light workload ran).
	local ev lost bytes unit
	read -r ev lost < <(echo "$last" | awk '{for (i = 1; i < NF; i++) {
		if ($i == "events") e = $(i + 1); if ($i == "lost") l = $(i + 1)} print e, l}')
	check "basic: progress events 0 < $ev <= $nev in the file" \
		test "$ev" -gt 0 -a "$ev" -le "$nev"
	local klost
	klost=$(section ftrace_stats "$file.txt" | awk '/phase: END_OF_TRACE/ {e=1} e' |
		awk '$1 == "overrun:" || $1 == "dropped_events:" {s += $2} END {print s + 0}')
	check "basic: progress lost $lost <= the file's overrun + dropped_events $klost" \
		test "$lost" -le "$klost"
	read -r bytes unit < <(echo "$last" | sed 's/.*file \([0-9.]*\) \([KMi]*B\).*/\1 \2/')
	bytes=$(awk -v b="$bytes" -v u="$unit" 'BEGIN {m = u == "KiB" ? 1024 : u == "MiB" ? 1048576 : 1; print int(b * m)}')
	check "basic: progress file size 0 < $bytes <= final $(stat -c %s "$file") (+5% rounding)" \
		test "$bytes" -gt 0 -a "$bytes" -le $(( $(stat -c %s "$file") * 105 / 100 ))
}

# service_event packets: tracing_started and all_data_sources_started at
# start, tracing_disabled at stop after every kernel event, then
# read_tracing_buffers_completed as the file's last packet.
basic_service_events() {
	local order last_ev dis
	order=$(awk '/^  service_event \{$/ {f=1; next} f && /^    [a-z_]+: true$/ {print $1; f=0}' "$1" |
		tr -d : | tr '\n' ' ')
	check "basic: service events in order ($order)" test "$order" = \
		"tracing_started all_data_sources_started tracing_disabled read_tracing_buffers_completed "
	tac "$1" | awk '/^packet \{$/ {exit} /read_tracing_buffers_completed: true/ {f=1} END {exit !f}'
	expect "basic: read_tracing_buffers_completed is the last packet"
	last_ev=$(event_times "$1" | sort -n | tail -1)
	dis=$(awk '/^packet \{$/ {t = d = ""} /^  timestamp: / {t=$2}
		/tracing_disabled: true/ {d=1} /^}$/ && d {print t; exit}' "$1")
	check "basic: tracing_disabled ($dis) after the last event ($last_ev)" \
		test "${dis:-0}" -gt "${last_ev:-0}"
}

# Sequence ids: traced's packets on one id >= 2^24, the kernel's bundles
# below it, on (slot * 4 + buffer) * nr_cpu_ids + 1 + cpu.
basic_sequences() {
	local p=$W/basic.packets tseq bad
	packets "$1" >"$p"
	tseq=$(awk -F'\t' '$2 !~ /ftrace_events/ {print $1}' "$p" | sort -u)
	[ "$(echo "$tseq" | wc -l)" -eq 1 ] && [ "$tseq" -ge "$USER_SEQ" ] &&
		[ "$tseq" -lt $((USER_SEQ * 2)) ]
	expect "basic: traced's packets share one sequence id >= 2^24 ($(echo $tseq))"
	local k miss=
	for k in system_info process_tree trace_stats clock_snapshot service_event; do
		awk -F'\t' -v k="$k," 'index($2, k) {print $1}' "$p" | grep -qx -- "$tseq" ||
			miss+=" $k"
	done
	check "basic: system_info, process_tree, trace_stats, clock_snapshot, service_event on it (missing:${miss:- none})" \
		test -z "$miss"
	bad=$(awk -F'\t' -v n="$NR_CPU_IDS" -v u="$USER_SEQ" '$2 ~ /ftrace_events/ &&
		($1 == "-" || $1 >= u || $1 < 1 || ($1 - 1) % n != $3) {c++} END {print c + 0}' "$p")
	check "basic: every kernel bundle's sequence id < 2^24 and names its cpu ($bad bad of $(grep -c ftrace_events "$p"))" \
		test "$bad" -eq 0
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
	tp_file ok nok streaming "$f"
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

# --- several buffers, target_buffer, flush_period_ms, the start scan ------
# Two kernel buffers with their own events, policies and sizes; periodic
# flushes; the process tree at start; the trace_config as given.
test_buffers() {
	local f=$W/multi.pftrace c=$W/multi.pbtx k=$W/multi.k p=$W/multi.packets
	local wpid sid
	write_config "$c" \
		'buffers { size_kb: 1024 fill_policy: DISCARD }' \
		'buffers { size_kb: 512 fill_policy: RING_BUFFER }' \
		'data_sources { config { name: "linux.ftrace" target_buffer: 0 ftrace_config { ftrace_events: "sched/sched_switch" } } }' \
		'data_sources { config { name: "linux.ftrace" target_buffer: 1 ftrace_config { ftrace_events: "sched/sched_process_fork" ftrace_events: "sched/sched_process_exit" } } }' \
		'data_sources { config { name: "linux.process_stats" target_buffer: 0 process_stats_config { scan_all_processes_on_start: true } } }' \
		'flush_period_ms: 300' 'unique_session_name: "multi"'
	# Started before the session and gone before its end: only the scan
	# at start can name it.
	"$W/pbtwork" 30 & wpid=$!
	light 5
	tctl start -c "$c" -o "$f" >"$W/multi.out" 2>&1
	check "buffers: two-buffer session starts (exit $?)" test $? -eq 0 ||
		sed 's/^/#   /' "$W/multi.out"
	sid=$(tctl status | awk '$1 == "multi" && $2 == "id" {print $3}')
	wait_for 50 grep -q "(multi): recording to" "$LOG"
	kill "$wpid"; wait "$wpid" 2>/dev/null
	sleep 2.5
	freeze multi "$k"
	expect "buffers: kernel counters read at stop"
	wait_done multi 200
	check "buffers: file decodes" decode "$f"
	tp_file ok nok buffers "$f"
	packets "$f.txt" >"$p"

	# (a) each kernel buffer holds only its data source's events: the
	# buffer of a bundle is its sequence id's, (slot * 4 + buffer) *
	# nr_cpu_ids + 1 + cpu; one slot for the session.
	local b want ev chunks badtypes slots
	slots=$(awk -F'\t' -v n="$NR_CPU_IDS" '$2 ~ /ftrace_events/ {print int(($1 - 1) / n / 4)}' "$p" | sort -u | wc -l)
	check "buffers: every bundle of the session on one slot's sequences ($slots)" test "$slots" -eq 1
	for b in 0 1; do
		[ $b = 0 ] && want="sched_switch," || want="sched_process_fork,sched_process_exit,"
		awk -F'\t' -v n="$NR_CPU_IDS" -v b=$b '$2 ~ /ftrace_events/ &&
			int(($1 - 1) / n) % 4 == b' "$p" >"$p.$b"
		badtypes=$(awk -F'\t' -v w=",$want" '{n = split($5, t, ","); for (i = 1; i < n; i++)
			if (index(w, "," t[i] ",") == 0) print t[i]}' "$p.$b" | sort -u | tr '\n' ' ')
		ev=$(awk -F'\t' '{s += $4} END {print s + 0}' "$p.$b")
		chunks=$(wc -l <"$p.$b")
		check "buffers: buffer $b's sequences hold only ${want%,} (others: ${badtypes:-none}; $ev events)" \
			test -z "$badtypes" -a "$ev" -gt 0
		check "buffers: buffer $b: events in file $ev == kernel events_written - lost_overwritten" \
			test "$ev" -eq $(( $(kcount "$k" $b events_written) - $(kcount "$k" $b lost_overwritten) ))
		check "buffers: buffer $b: bundles in file $chunks == kernel chunks_sealed - chunks_overwritten" \
			test "$chunks" -eq $(( $(kcount "$k" $b chunks_sealed) - $(kcount "$k" $b chunks_overwritten) ))
	done
	local other
	other=$(awk -F'\t' -v n="$NR_CPU_IDS" '$2 ~ /ftrace_events/ && int(($1 - 1) / n) % 4 > 1' "$p" | wc -l)
	check "buffers: no bundle on a third buffer's sequences ($other)" test "$other" -eq 0
	# trace_stats: one buffer_stats per buffer, sized as the kernel splits
	# size_kb: max(2, size_kb / nr_cpu_ids / 16 KiB) chunks per CPU.
	local ts=$W/multi.ts sizes exp
	section trace_stats "$f.txt" >"$ts"
	sizes=$(awk '/^      buffer_size: / {print $2}' "$ts" | tr '\n' ' ')
	exp=$(for kb in 1024 512; do
		awk -v kb=$kb -v n="$NR_CPU_IDS" 'BEGIN {c = int(kb * 1024 / n / 16384); if (c < 2) c = 2; print n * c * 16384}'
	done | tr '\n' ' ')
	check "buffers: trace_stats buffer_size per buffer ($sizes) == ($exp)" test "$sizes" = "$exp"
	check "buffers: trace_stats total_buffers 2" grep -q "^    total_buffers: 2$" "$ts"
	local reads
	reads=$(awk '/^      chunks_read: / {print $2}' "$ts" | tr '\n' ' ')
	check "buffers: trace_stats chunks_read per buffer ($reads) == bundles in file ($(wc -l <"$p.0") $(wc -l <"$p.1"))" \
		test "$reads" = "$(wc -l <"$p.0") $(wc -l <"$p.1") "
	check "buffers: traced's packets on 2^24 + session id $sid" \
		test "$(awk -F'\t' '$2 !~ /ftrace_events/ {print $1}' "$p" | sort -u)" = "$((USER_SEQ + ${sid:-0}))"

	# (b) flush_period_ms: 300: traced asks the kernel to seal every
	# ~300 ms. The counters in trace_stats, and what they did: the sparse
	# fork/exit buffer gets many small bundles, none spanning much more
	# than a period (without flushes one chunk per CPU would span it all).
	local req succ ms nb1 span
	req=$(awk '/^    flushes_requested: / {print $2}' "$ts")
	succ=$(awk '/^    flushes_succeeded: / {print $2}' "$ts")
	ms=$(boottimes "$f.txt" | awk 'NR == 1 {a = $1} {b = $1} END {print int((b - a) / 1000000)}')
	check "buffers: flushes_requested $req >= 4 and <= $ms ms / 300 + 1" \
		test "${req:-0}" -ge 4 -a "${req:-0}" -le $((ms / 300 + 1))
	check "buffers: flushes_succeeded $succ == flushes_requested" test "${succ:--1}" = "$req"
	nb1=$(wc -l <"$p.1")
	span=$(awk -F'\t' '{d = ($10 - $9) / 1000000; if (d > m) m = d} END {print int(m)}' "$p.1")
	check "buffers: fork/exit buffer sealed in $nb1 bundles (>= 4)" test "$nb1" -ge 4
	check "buffers: no fork/exit bundle spans more than 1500 ms ($span ms)" test "$span" -le 1500

	# (d) the process tree at start (scan_all_processes_on_start) names
	# the workload started before the session; the one at stop does not.
	local first last
	first=$(awk '$0 == "  process_tree {" {f=1; next} f && /^  }/ {exit} f' "$f.txt" |
		awk -v p="$wpid" '/^    [a-z_]+ \{$/ {b = "\n"; next}
			/^    }/ {if (index(b, "\n      pid: " p "\n")) printf "%s", b; next} {b = b $0 "\n"}')
	note "start process_tree entry: $(echo $first)"
	echo "$first" | grep -q "^      ppid: $$\$" &&
		echo "$first" | grep -q "^      cmdline: \"$W/pbtwork\"\$" &&
		echo "$first" | grep -q '^      cmdline: "30"$'
	expect "buffers: start process_tree has the workload (pid $wpid, ppid $$, cmdline $W/pbtwork 30)"
	last=$(tac "$f.txt" | awk '$0 == "  process_tree {" {exit} {print}' | grep -c "^      pid: $wpid\$")
	check "buffers: stop process_tree does not (it exited): the start scan found it" test "$last" -eq 0

	# (e) the trace_config packet is the config given, decoded by
	# Perfetto's schema from both sides.
	protoc --descriptor_set_in="$W/schema.pb" --encode=perfetto.protos.TraceConfig \
		perfetto_trace.proto <"$c" >"$W/multi.cfg.bin" &&
		protoc --descriptor_set_in="$W/schema.pb" --decode=perfetto.protos.TraceConfig \
			perfetto_trace.proto <"$W/multi.cfg.bin" >"$W/multi.cfg.want"
	expect "buffers: protoc encodes the config"
	section trace_config "$f.txt" | sed 's/^    //' >"$W/multi.cfg.got"
	diff "$W/multi.cfg.want" "$W/multi.cfg.got" >"$W/multi.cfg.diff"
	expect "buffers: trace_config in the file == the config given ($(wc -l <"$W/multi.cfg.want") lines)" ||
		sed 's/^/#   /' "$W/multi.cfg.diff"
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
	tp_file ok nok duration "$f"
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
	tp_file ok nok "max size" "$f"
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
	tp_file ok nok START_TRACING "$f"

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
	tp_file ok nok STOP_TRACING "$f"
	local last delay
	tr=$(awk '/^  timestamp: / {t=$2} /^  trigger \{/ {print t; exit}' "$f.txt")
	last=$(boottimes "$f.txt" | tail -1)
	delay=$(( (last - tr) / 1000000 ))
	check "STOP_TRACING: stopped ${delay} ms after the trigger (1000..2500)" \
		test "$delay" -ge 1000 -a "$delay" -le 2500
	test_trigger_timeouts
}

# trigger_timeout_ms without a trigger (docs/traced.md, Triggers): a
# START_TRACING session ends unstarted, its file only traced's packets; a
# STOP_TRACING session stops at the timeout and keeps its events. Both at
# once, 1 s each.
test_trigger_timeouts() {
	local a=$W/tto_start.pftrace b=$W/tto_stop.pftrace ms nev kseq
	write_config "$W/tto_start.pbtx" 'buffers { size_kb: 1024 }' "$(ftrace_ds sched/sched_switch)" \
		'trigger_config { trigger_mode: START_TRACING triggers { name: "never" } trigger_timeout_ms: 1000 }'
	write_config "$W/tto_stop.pbtx" 'buffers { size_kb: 1024 }' "$(ftrace_ds sched/sched_switch)" \
		'trigger_config { trigger_mode: STOP_TRACING triggers { name: "never" stop_delay_ms: 500 } trigger_timeout_ms: 1000 }'
	light 4
	tctl start -c "$W/tto_start.pbtx" -o "$a" -n tto_start >/dev/null 2>&1
	tctl start -c "$W/tto_stop.pbtx" -o "$b" -n tto_stop >/dev/null 2>&1
	wait_done tto_start 100
	wait_done tto_stop 100
	check "trigger timeout, START_TRACING: traced says why it ended" \
		grep -q "(tto_start): finished (trigger_timeout_ms passed without a start trigger)" "$LOG"
	check "trigger timeout, START_TRACING: file decodes" decode "$a"
	nev=$(event_types "$a.txt" | wc -l)
	kseq=$(packets "$a.txt" | awk -F'\t' '$1 == "-" || $1 < '"$USER_SEQ"'' | wc -l)
	check "trigger timeout, START_TRACING: no ftrace event ($nev), no kernel packet ($kseq)" \
		test "$nev" -eq 0 -a "$kseq" -eq 0
	check "trigger timeout, START_TRACING: no trigger packet" bash -c "! grep -q '^  trigger {' '$a.txt'"
	check "trigger timeout, START_TRACING: still closed with trace_stats" grep -q "^  trace_stats {" "$a.txt"
	tp_file ok nok "trigger timeout, START_TRACING" "$a"
	ms=$(boottimes "$a.txt" | awk 'NR == 1 {a = $1} {b = $1} END {print int((b - a) / 1000000)}')
	check "trigger timeout, START_TRACING: ended ${ms} ms after its header (1000..2500)" \
		test "$ms" -ge 1000 -a "$ms" -le 2500

	check "trigger timeout, STOP_TRACING: traced says why it ended" \
		grep -q "(tto_stop): finished (trigger_timeout_ms passed without a stop trigger)" "$LOG"
	check "trigger timeout, STOP_TRACING: file decodes" decode "$b"
	nev=$(event_types "$b.txt" | wc -l)
	check "trigger timeout, STOP_TRACING: the trace is kept ($nev events)" test "$nev" -gt 0
	tp_file ok nok "trigger timeout, STOP_TRACING" "$b"
	ms=$(boottimes "$b.txt" | awk 'NR == 1 {a = $1} {b = $1} END {print int((b - a) / 1000000)}')
	check "trigger timeout, STOP_TRACING: stopped ${ms} ms after its header (1000..2500)" \
		test "$ms" -ge 1000 -a "$ms" -le 2500
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
	tp_file ok nok "two sessions, A" "$a"
	tp_file ok nok "two sessions, B" "$b"
}

# --- 7: tids_to_trace -----------------------------------------------------
test_tids() {
	local f=$W/tids.pftrace pid others nev nin
	bash -c 'while :; do sleep 0.05; done' & pid=$!
	light 4
	tctl start -e sched/sched_switch -p "$pid" -o "$f" -n tids >/dev/null 2>&1
	sleep 2
	tctl stop -n tids --wait >/dev/null 2>&1
	kill "$pid" 2>/dev/null
	decode "$f"
	# "prev_pid next_pid" of each switch (compact ones expanded): the
	# kernel's set_event_pid rules keep the switches to and from the
	# thread, and only those.
	PYTHONDONTWRITEBYTECODE=1 python3 "$TOP/selftests/pbtrace/switches.py" "$f.txt" >"$W/tids.sw"
	nev=$(awk -v t="$pid" '$1 == t' "$W/tids.sw" | wc -l)
	nin=$(awk -v t="$pid" '$2 == t' "$W/tids.sw" | wc -l)
	others=$(awk -v t="$pid" '$1 != t && $2 != t' "$W/tids.sw" | wc -l)
	check "tids_to_trace: switches from pid $pid ($nev) and to it ($nin) recorded" \
		test "$nev" -gt 0 -a "$nin" -gt 0
	check "tids_to_trace: no switch without it ($others)" test "$others" -eq 0
	tp_file ok nok tids_to_trace "$f"
	# The thread's own run slices close in trace_processor: each switch
	# from it ends the slice its switch in began (only a CPU's first
	# switch may lack one).
	if tp_available; then
		local closed
		closed=$(tp_value "$f" "select count(*) from sched join thread using(utid)
			where tid = $pid and dur >= 0")
		check "tids_to_trace: trace_processor closes $closed of its $nev run slices" \
			test "${closed:-0}" -ge 1 -a "${closed:-0}" -ge $((nev - $(nproc)))
	fi
}

# --- 8: traced killed and restarted ---------------------------------------
# A small DISCARD buffer and a busy workload while traced is down: the
# kernel refuses chunks, and that gap must be counted in the file
# (trace_stats, ftrace_stats) exactly as the kernel counted it, and marked
# on the kernel's sequences (previous_packet_dropped).
test_restart() {
	local f=$W/restart.pftrace c=$W/restart.pbtx k=$W/restart.k before after
	write_config "$c" 'buffers { size_kb: 128 fill_policy: DISCARD }' \
		"$(ftrace_ds sched/sched_switch sched/sched_waking raw_syscalls/sys_enter raw_syscalls/sys_exit)" \
		'write_into_file: true' 'file_write_period_ms: 300'
	light 9
	tctl start -c "$c" -o "$f" -n restart >/dev/null 2>&1
	sleep 2
	kill -9 "$TRACED"; wait "$TRACED" 2>/dev/null; TRACED=
	before=$(stat -c %s "$f")
	busy 5
	sleep 1.5
	stop_busy
	start_traced
	wait_for 50 grep -q "(restart): reattached" "$LOG"
	sleep 1.5
	freeze restart "$k"
	expect "restart: kernel counters read at stop"
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
	packets "$f.txt" >"$W/restart.packets"
	# docs/traced.md: traced's first packet after the restart carries
	# DATA_LOSS_PRESENT | DATA_LOSS_READ_GAP on traced's own sequence.
	local tgap
	tgap=$(awk -F'\t' -v u="$USER_SEQ" '$1 >= u && $6 != 0 {print $6}' "$W/restart.packets" | tr '\n' ' ')
	check "restart: the gap is marked on traced's sequence (previous_packet_dropped: ${tgap:-none}, want 3 once)" \
		test "$tgap" = "3 "
	# ...and the restarted traced does not call its first packet the
	# sequence's first (that would say "no loss before this").
	local nfirst
	nfirst=$(awk -v u="$USER_SEQ" '/^packet \{$/ {s = f = 0} /^  trusted_packet_sequence_id: / {s = $2}
		/^  first_packet_on_sequence: true$/ {f = 1} /^}$/ && f && s >= u {n++} END {print n + 0}' "$f.txt")
	check "restart: one first_packet_on_sequence on traced's sequence ($nfirst)" test "$nfirst" -eq 1
	check "restart: trace_stats at the end" test "$(count "^  trace_stats {" "$f.txt")" -eq 1
	local nev read
	nev=$(event_types "$f.txt" | wc -l)
	read=$(section ftrace_stats "$f.txt" | awk '/phase: END_OF_TRACE/ {e=1} e' | sum_field read_events)
	check "restart: no chunk written twice: events $nev == kernel read_events $read" \
		test "$nev" -eq "$read"

	# The gap, counted: the kernel's own numbers (GET_SESSION at stop)
	# against what the file says.
	local kdisc kdrop kev down ts fdisc bdisc loss dropped
	kdisc=$(ksum "$k" chunks_discarded)
	kdrop=$(( $(ksum "$k" lost_full) + $(ksum "$k" lost_too_large) + $(ksum "$k" lost_nmi) ))
	kev=$(ksum "$k" events_written)
	check "restart: the kernel discarded chunks ($kdisc) and events ($kdrop)" \
		test "$kdisc" -gt 0 -a "$kdrop" -gt 0
	down=$(sed -n 's/.*(restart): kernel counts so far: [0-9]* chunks overwritten, \([0-9]*\) discarded.*/\1/p' "$LOG")
	check "restart: the discards happened while traced was down (${down:-?} at reattach, $kdisc at stop)" \
		test "${down:-0}" -gt 0 -a "${down:-0}" -le "$kdisc"
	section trace_stats "$f.txt" >"$W/restart.ts"
	fdisc=$(awk '/^    chunks_discarded: / {print $2}' "$W/restart.ts")
	bdisc=$(awk '/^      chunks_discarded: / {s += $2} END {print s + 0}' "$W/restart.ts")
	loss=$(awk '/^      trace_writer_packet_loss: / {s += $2} END {print s + 0}' "$W/restart.ts")
	check "restart: trace_stats chunks_discarded ${fdisc:-none} == kernel $kdisc" test "${fdisc:--1}" = "$kdisc"
	check "restart: trace_stats buffer_stats chunks_discarded $bdisc == kernel $kdisc" test "$bdisc" = "$kdisc"
	check "restart: trace_stats trace_writer_packet_loss $loss == kernel lost_full + too_large + nmi $kdrop" \
		test "$loss" = "$kdrop"
	dropped=$(section ftrace_stats "$f.txt" | awk '/phase: END_OF_TRACE/ {e=1} e' | sum_field dropped_events)
	check "restart: ftrace_stats dropped_events $dropped == kernel $kdrop" test "$dropped" = "$kdrop"
	check "restart: events in file $nev == kernel events_written $kev (discard: nothing overwritten)" \
		test "$nev" -eq "$kev"
	# trace_processor reports the kernel's own count of the refused events.
	tp_file ok nok restart "$f" --lost "$kdrop"
	# Each refused stretch on a CPU marks the next chunk that CPU opens;
	# only a stretch still open at stop has no such chunk.
	local marked unlost
	marked=$(awk -F'\t' -v u="$USER_SEQ" '$2 ~ /ftrace_events/ && $1 < u && $6 % 2 == 1' "$W/restart.packets" | wc -l)
	unlost=$(awk -F'\t' -v u="$USER_SEQ" '$2 ~ /ftrace_events/ && $1 < u && $6 % 2 == 1 && $7 != 1' "$W/restart.packets" | wc -l)
	check "restart: kernel bundles after a gap carry previous_packet_dropped ($marked; kernel gaps $kdisc, $NR_CPU_IDS CPUs)" \
		test "$marked" -ge 1 -a "$marked" -le "$kdisc" -a "$marked" -ge $((kdisc - NR_CPU_IDS)) ||
		{ note "packets marked previous_packet_dropped (seq kinds cpu events types dropped lost):"
		  awk -F'\t' '$6 != 0' "$W/restart.packets" | sed 's/^/#   /'
		  grep -n -B3 -A3 "previous_packet_dropped" "$f.txt" | head -60 | sed 's/^/#   /'; }
	check "restart: and lost_events in their bundle ($unlost without)" test "$unlost" -eq 0
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
	tp_file ok nok "stopped while down" "$f"
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
	tp_file ok nok "disk full" "$W/full.pftrace"
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
	tp_file ok nok stats "$f"
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
	tp_file ok nok valgrind "$f"
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
ALL="basic buffers streaming duration max_size triggers two_sessions tids stats daemon restart stopped_down errors valgrind"
ONLY=${TRACED_TEST_ONLY:-basic buffers streaming duration max_size}
[ "$ONLY" = all ] && ONLY=$ALL
run_groups "$ALL" "$ONLY" nok
echo "1..$n"
[ "$failed" -eq 0 ]
