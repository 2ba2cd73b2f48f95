#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Call stacks as Perfetto PerfSample packets (issue 14, docs/stacks.md), in
# a guest with pbtrace.ko loaded. The workload (stacks_work, built with
# frame pointers) makes N getppid calls through main -> a -> b (b makes
# the syscall itself) and M through main -> c -> d -> libc's getppid(),
# then one more from main: N + M + 1 sys_enter of getppid, its known count.
#
# - Perfetto's schema (protoc): one perf_sample per getppid sys_enter the
#   kernel wrote for the workload, N + M + 1, each with a callstack; the
#   interned frames and a ModuleSymbols packet traced appended.
# - trace_processor (tp.sh): N + M + 1 perf_sample rows for the
#   workload's thread; N callstacks read main, a, b, then kernel frames
#   the kernel named (entry_SYSCALL_64*, do_syscall_64); M read main, c,
#   getppid (libc's wrapper is a leaf without a frame: d, its caller, is
#   lost, as docs/stacks.md says) and never main, c, d; no stackprofile
#   error in its stats.
# - tracectl symbolize on the finished file adds nothing (traced named
#   every frame it could already).
# - Negative control: kernel frames only (user_frames: UNWIND_SKIP): the
#   same samples, kernel frames, and no frame in a user mapping.
# - 4000 samples through a 64 KB ring buffer: the chunks left each start
#   their interning and every sample resolves.
#
# The samples come from the config's linux.perf source: a perf counter on
# the tracepoint (kmod/tracepoint.c) calls the sampler (kmod/stack.c).
# Prints TAP.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
WORK=$HERE/build/stacks_work
W=$(mktemp -d /tmp/stacks.XXXXXX)
LOG=$W/traced.log
TRACED=
. "$HERE/tap.sh"
. "$HERE/traced_lib.sh"

N=0
NA=20 NC=7

traced_begin "$WORK"

trap 'stop_traced; rm -rf "$W"' EXIT

# eq GOT WANT WHAT: one TAP line.
eq() {
	if [[ $1 == "$2" ]]; then
		ok "$3"
	else
		not_ok "$3 (got '$1', want '$2')"
	fi
}

# record MODE OUT [SIZE_KB [NA [NC]]]: a session with the workload in
# it, linux.perf sampling syscalls:sys_enter_getppid; MODE 1: kernel and
# user frames, 2: kernel frames only (user_frames: UNWIND_SKIP).
record() {
	local mode=$1 out=$2 kb=${3:-2048} na=${4:-$NA} nc=${5:-$NC}
	cat >"$W/c.pbtx" <<EOF
buffers { size_kb: $kb }
data_sources { config { name: "linux.ftrace" target_buffer: 0
  ftrace_config { syscall_events: "sys_getppid" } } }
data_sources { config { name: "linux.perf" target_buffer: 0
  perf_event_config { timebase { period: 1 tracepoint { name: "syscalls:sys_enter_getppid" } }
    callstack_sampling { kernel_frames: true $([[ $mode == 2 ]] && echo "user_frames: UNWIND_SKIP") } } } }
EOF
	tctl start -c "$W/c.pbtx" -o "$out" -n stacks >"$W/start.log" 2>&1 || {
		note "tracectl start:"; sed 's/^/#   /' "$W/start.log"; return 1; }
	"$WORK" "$na" "$nc" >"$W/work.out" &
	WPID=$!
	wait "$WPID"
	tctl stop -n stacks --wait >"$W/stop.log" 2>&1 || {
		note "tracectl stop:"; sed 's/^/#   /' "$W/stop.log"; return 1; }
	decode "$out"
}

# "sample|frames root first, comma-joined" for the workload's samples.
chains() {
	tp_query "$1" "
with recursive chain(sample, depth, parent, name) as (
  select ps.id, c.depth, c.parent_id, coalesce(s.name, f.name, '?')
  from perf_sample ps join thread t using (utid)
  join stack_profile_callsite c on c.id = ps.callsite_id
  join stack_profile_frame f on f.id = c.frame_id
  left join stack_profile_symbol s on s.symbol_set_id = f.symbol_set_id
  where t.tid = $2
  union all
  select chain.sample, c.depth, c.parent_id, coalesce(s.name, f.name, '?')
  from chain join stack_profile_callsite c on c.id = chain.parent
  join stack_profile_frame f on f.id = c.frame_id
  left join stack_profile_symbol s on s.symbol_set_id = f.symbol_set_id
)
select sample, group_concat(name, ',') from
  (select * from chain order by sample, depth) group by sample"
}

test_user_and_kernel() {
	local f=$W/uk.pftrace want=$((NA + NC + 1)) n ch
	record 1 "$f" || { not_ok "user+kernel: session recorded"; return; }
	n=$(awk -v p="$WPID" '/^  perf_sample \{/ { s = 1 } s && $1 == "pid:" { if ($2 == p) c++; s = 0 } END { print c + 0 }' "$f.txt")
	eq "$n" "$want" "protoc: $want perf_sample packets of the workload (its getppid calls), got $n"
	n=$(awk -v w="$WPID" '/^      pid: / { p = $2 } /^      sys_enter \{/ { e = 1; next }
		e && /^        id: 110$/ && p == w { c++ } /^      \}/ { e = 0 } END { print c + 0 }' "$f.txt")
	eq "$n" "$want" "protoc: the kernel wrote $want sys_enter getppid, as many as samples"
	grep -q "^  module_symbols {" "$f.txt" && grep -A3 "path: \"$WORK\"" "$f.txt" >/dev/null &&
		grep -q 'function_name: "b"' "$f.txt"
	eq "$?" 0 "protoc: traced appended ModuleSymbols for $WORK naming b"
	if ! tp_available; then
		ok "trace_processor checks # SKIP $TP_WHY"
		return
	fi
	n=$(tp_value "$f" "select count(*) from perf_sample join thread using (utid) where tid = $WPID")
	eq "$n" "$want" "trace_processor: $want perf_sample rows for the workload's thread"
	ch=$(chains "$f" "$WPID")
	echo "$ch" | sed -n '1p;$p' | sed 's/^/# chain: /'
	n=$(echo "$ch" | grep -cE "[|,]main,a,b,entry_SYSCALL_64[a-z_]*,do_syscall_64,")
	eq "$n" "$NA" "trace_processor: $NA callstacks read main, a, b (named by ModuleSymbols), then entry_SYSCALL_64, do_syscall_64 (named by the kernel)"
	n=$(echo "$ch" | grep -cE "[|,]main,c,getppid,entry_SYSCALL_64[a-z_]*,do_syscall_64,")
	eq "$n" "$NC" "trace_processor: $NC callstacks read main, c, getppid (libc), kernel frames: d is lost"
	n=$(echo "$ch" | grep -c ",c,d,")
	eq "$n" 0 "trace_processor: no callstack has d (the caller of a frameless leaf)"
	n=$(tp_value "$f" "select count(*) from stats where name like 'stackprofile%' and value > 0")
	eq "$n" 0 "trace_processor: no stackprofile_* error in stats"
	n=$(tctl symbolize "$f")
	eq "$n" "$f: 0 of 0 user frames named, in 0 binaries" "tracectl symbolize after traced adds nothing ($n)"
}

test_kernel_only() {
	local f=$W/k.pftrace want=$((NA + NC + 1)) n
	record 2 "$f" || { not_ok "kernel only: session recorded"; return; }
	n=$(awk -v p="$WPID" '/^  perf_sample \{/ { s = 1 } s && $1 == "pid:" { if ($2 == p) c++; s = 0 } END { print c + 0 }' "$f.txt")
	eq "$n" "$want" "kernel only, protoc: $want perf_sample packets"
	n=$(grep -c 'str: "/' "$f.txt")
	eq "$n" 0 "kernel only, protoc: no user mapping path interned"
	if ! tp_available; then
		ok "trace_processor checks # SKIP $TP_WHY"
		return
	fi
	n=$(tp_value "$f" "select count(*) from stack_profile_frame f join stack_profile_mapping m on m.id = f.mapping where m.name != '/kernel'")
	eq "$n" 0 "kernel only, trace_processor: no frame outside the kernel mapping"
	n=$(chains "$f" "$WPID" | grep -cE "[|]entry_SYSCALL_64[a-z_]*,do_syscall_64,")
	eq "$n" "$want" "kernel only, trace_processor: every callstack starts at the syscall entry"
}

# Interning is per chunk: in a small ring buffer that overwrote its
# oldest chunks, every sample left still resolves (no dangling iid).
test_chunks() {
	local f=$W/ring.pftrace na=4000 n total
	record 1 "$f" 64 "$na" 0 || { not_ok "ring: session recorded"; return; }
	n=$(grep -c "^  sequence_flags: 3$" "$f.txt")
	((n >= 2))
	eq "$?" 0 "protoc: $n chunks each start their interning (SEQ_INCREMENTAL_STATE_CLEARED), want >= 2"
	if ! tp_available; then
		ok "trace_processor checks # SKIP $TP_WHY"
		return
	fi
	total=$(tp_value "$f" "select count(*) from perf_sample join thread using (utid) where tid = $WPID")
	n=$(chains "$f" "$WPID" | grep -cE "[|,]main,a,b,entry_SYSCALL_64[a-z_]*,do_syscall_64,")
	((total > 100 && total < na && n >= total - 1))
	eq "$?" 0 "ring: the $total samples left of $na (the oldest overwritten) read main, a, b ($n)"
	n=$(tp_value "$f" "select count(*) from stats where name like 'stackprofile%' and value > 0")
	eq "$n" 0 "ring: no stackprofile_* error in stats (every iid resolves)"
}

# The short form: tracectl start -e EVENT --stacks (the event itself
# recorded too, as a generic event, and a sample on each hit).
test_cli() {
	local f=$W/cli.pftrace want=$((NA + NC + 1)) n
	tctl start -e syscalls/sys_enter_getppid --stacks -o "$f" -n stacks \
		>"$W/start.log" 2>&1 || {
		not_ok "tracectl start -e syscalls/sys_enter_getppid --stacks: $(tail -n 2 "$W/start.log")"; return; }
	"$WORK" "$NA" "$NC" >"$W/work.out" &
	WPID=$!
	wait "$WPID"
	tctl stop -n stacks --wait >"$W/stop.log" 2>&1 || {
		not_ok "tracectl stop: $(tail -n 2 "$W/stop.log")"; return; }
	decode "$f"
	n=$(awk -v p="$WPID" '/^  perf_sample \{/ { s = 1 } s && $1 == "pid:" { if ($2 == p) c++; s = 0 } END { print c + 0 }' "$f.txt")
	eq "$n" "$want" "--stacks, protoc: $want perf_sample packets"
	if ! tp_available; then
		ok "trace_processor checks # SKIP $TP_WHY"
		return
	fi
	n=$(chains "$f" "$WPID" | grep -cE "[|,]main,a,b,entry_SYSCALL_64[a-z_]*,do_syscall_64,")
	eq "$n" "$NA" "--stacks, trace_processor: $NA callstacks read main, a, b above the kernel frames"
}

test_user_and_kernel
test_kernel_only
test_chunks
test_cli
echo "1..$N"
exit "${FAILED:-0}"
