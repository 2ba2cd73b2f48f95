#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The live watermark (PBTRACE_A_BUFFER_WATERMARK_MS, docs/data-plane.md
# "Watermark") in a guest with pbtrace.ko loaded, against protoc's decode
# of the chunks and the kernel's own ftrace:
#
# - race: every syscall of the machine for a few seconds, bursts with idle
#   gaps on each CPU, a thread hopping CPUs, CPU 1 offline and back; the
#   reader logs the mapping's watermark before each chunk it takes and
#   GET_WATERMARK's read watermark as it goes. wm_check.py: no chunk at or
#   above a watermark's seq holds an event before it, no chunk read after
#   a read watermark holds one before that, and both advanced throughout.
# - the same with expedited grace periods (what tracectl trace asks for),
#   and both with fault_strings_us: a sys_enter's strings (its timestamp)
#   come 300 us after it, interrupts on, so rounds land in between; the
#   grace period must wait for them (without it this fails).
# - idle CPUs: one thread ticks on CPU 0 (the session records its calls
#   only), CPU 1 idles; ftrace counts the
#   seal IPI's handler (flush_csd_fn) and expedited RCU's (rcu_exp_handler)
#   per CPU: the watermark's rounds send CPU 1 none, with normal or
#   expedited grace periods, while FLUSH_SESSION at the same period
#   (traced's drain) sends it one each time (the counter sees them: the
#   negative control).
# Prints TAP.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
REC=$HERE/build/wm_record
T=/sys/kernel/tracing
P=/sys/module/pbtrace/parameters
W=$(mktemp -d /tmp/watermark.XXXXXX)
. "$HERE/tap.sh"
export PYTHONDONTWRITEBYTECODE=1
trap 'echo 0 >$P/fault_strings_us 2>/dev/null; rm -rf "$W"' EXIT
note() { echo "# $*"; }

[ -x "$REC" ] || { echo "1..0 # SKIP needs $REC (make -C selftests/pbtrace)"; exit 0; }
[ -r "$SCHEMA/perfetto_trace.proto" ] || { echo "1..0 # SKIP needs Perfetto's schema in $SCHEMA"; exit 0; }
NCPU=$(nproc)

# race TAG SECONDS [expedited]: record, decode, check.
race() {
	local tag=$1 f=$W/$1 line done=0
	if ! "$REC" race "$f.pftrace" "$f.log" "$2" 10 ${3:-} 2>"$f.err"; then
		not_ok "$tag: wm_record race: $(head -c 300 "$f.err")"
		return
	fi
	if ! protoc -I "$SCHEMA" --decode=perfetto.protos.Trace perfetto_trace.proto \
		<"$f.pftrace" >"$f.txt" 2>"$f.derr"; then
		not_ok "$tag: Perfetto's schema decodes the chunks: $(head -c 300 "$f.derr")"
		return
	fi
	ok "$tag: Perfetto's schema decodes the chunks"
	python3 "$HERE/wm_check.py" "$f.txt" "$f.log" >"$f.check" 2>&1
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "$tag: ${line#PASS }" ;;
		FAIL\ *) not_ok "$tag: ${line#FAIL }" ;;
		SKIP\ *) ok "$tag: ${line#SKIP } # SKIP" ;;
		DONE) done=1 ;;
		*) echo "$line" ;;
		esac
	done <"$f.check"
	[ $done = 1 ] || not_ok "$tag: wm_check.py did not finish: $(head -c 300 "$f.check")"
}

race race 5
race expedited 4 expedited
if echo 300 >$P/fault_strings_us 2>/dev/null; then
	race strings 4
	race strings-expedited 4 expedited
	echo 0 >$P/fault_strings_us
else
	ok "strings: rounds between sys_enter and its strings # SKIP no fault_strings_us parameter"
fi

# idle MODE: rounds, and per CPU the seal IPI's handler and expedited
# RCU's (ftrace's function tracer).
idle() {
	local mode=$1 out
	echo flush_csd_fn >$T/set_ftrace_filter || return 1
	EXP=
	echo rcu_exp_handler >>$T/set_ftrace_filter 2>/dev/null && EXP=1
	echo 1 >$T/tracing_on
	echo function >$T/current_tracer
	echo >$T/trace
	out=$("$REC" idle 3 10 "$mode" 2>&1)
	echo 0 >$T/tracing_on
	ROUNDS=$(echo "$out" | sed -n 's/^IDLE rounds=//p')
	CPU0=$(grep -c flush_csd_fn $T/per_cpu/cpu0/trace)
	CPU1=$(grep -c flush_csd_fn $T/per_cpu/cpu1/trace)
	EXP1=$(grep -c rcu_exp_handler $T/per_cpu/cpu1/trace)
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
	[ -n "$EXP" ] || EXP1="(not traceable here)"
	note "$mode: $ROUNDS rounds; seal IPIs handled on CPU 0: $CPU0, on CPU 1: $CPU1; expedited RCU's on CPU 1: $EXP1"
	[ -n "$ROUNDS" ]
}

if [ "$NCPU" -lt 2 ]; then
	ok "idle CPUs get no IPI # SKIP one CPU"
elif [ ! -w $T/set_ftrace_filter ] || ! grep -q '^flush_csd_fn' $T/available_filter_functions; then
	ok "idle CPUs get no IPI # SKIP no function tracer for flush_csd_fn"
else
	if idle watermark; then
		check "watermark: rounds ran (got $ROUNDS in 3 s), CPU 0 sealed by them (got $CPU0)" \
			test "$ROUNDS" -ge 20 -a "$CPU0" -ge $((ROUNDS / 2))
		check "watermark: idle CPU 1 got no seal IPI in $ROUNDS rounds (got $CPU1)" \
			test "$CPU1" -le $((ROUNDS / 20))
	else
		not_ok "watermark: wm_record idle ran"
	fi
	if idle expedited; then
		check "expedited: rounds ran (got $ROUNDS in 3 s), CPU 0 sealed by them (got $CPU0)" \
			test "$ROUNDS" -ge 20 -a "$CPU0" -ge $((ROUNDS / 2))
		check "expedited: idle CPU 1 got no seal IPI in $ROUNDS rounds (got $CPU1)" \
			test "$CPU1" -le $((ROUNDS / 20))
		# CPU 1 idles, but not always: what else runs there is not
		# traced, and expedited RCU interrupts it while it runs.
		if [ -n "$EXP" ]; then
			check "expedited: CPU 1 got expedited RCU's IPI for few rounds ($EXP1 of $ROUNDS)" \
				test "$EXP1" -le $((ROUNDS / 4))
		fi
	else
		not_ok "expedited: wm_record idle ran"
	fi
	if idle flush; then
		check "flush every 10 ms (the control): CPU 1 got an IPI per flush ($CPU1 of $ROUNDS)" \
			test "$ROUNDS" -ge 20 -a "$CPU1" -ge $((ROUNDS / 2))
	else
		not_ok "flush: wm_record idle ran"
	fi
fi

echo "1..$N"
exit $FAILED
