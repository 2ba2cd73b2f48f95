#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# No orphan descriptors (issue 23; docs/generic-events.md, "Encoding"): the
# first generic event of its kind in a chunk takes its descriptor's room
# at the chunk's end, and gives it back when it then does not fit, so no
# sealed chunk carries a descriptor without its event. dp_record tp
# records 36 syscalls/sys_enter_* and sys_exit_* tracepoints by name
# (descriptors of 2 to 7 fields, 67-168 bytes) in 4 KiB chunks (the smallest
# the kernel takes), pid-filtered on build/orphan_work, which makes 18
# syscalls in a new random order each round with random argument values
# (events of varying sizes). Referees: protoc with Perfetto's schema (per
# FtraceEventBundle: every descriptor has an event of its id, every event
# its descriptor; each tracepoint the workload's count), trace_processor
# (no error stats, the same counts and args), the kernel's own counters
# (nothing lost). orphan_check.py counts from the chunks' sizes how often
# a chunk ended at a new kind whose descriptor room it had taken: the case
# has to have happened. Run in a guest with pbtrace.ko loaded:
#   tools/vm -- selftests/pbtrace/orphan_test.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
rec=$here/build/dp_record
work=$here/build/orphan_work
tmp=$(mktemp -d /tmp/orphan.XXXXXX)
. "$here/tap.sh"
. "$here/tp.sh"
export PYTHONDONTWRITEBYTECODE=1
trap 'rm -rf "$tmp"' EXIT
ROUNDS=200
CHUNK_KB=4
NAMES="process_vm_readv process_vm_writev copy_file_range splice tee vmsplice
sendto recvfrom setsockopt getsockopt waitid prctl epoll_pwait
name_to_handle_at rt_sigprocmask openat2 clock_nanosleep sched_setattr"

echo "TAP version 13"
echo "# kernel $(uname -r)"
T=/sys/kernel/tracing
[ -e $T/events ] || T=/sys/kernel/debug/tracing
if [ ! -x "$rec" ] || [ ! -x "$work" ] || [ ! -r "$schema/perfetto_trace.proto" ] ||
   [ ! -d "$T/events/syscalls" ]; then
	echo "1..0 # SKIP needs $rec, $work (make -C selftests/pbtrace), $schema and syscalls/ tracepoints"
	exit 0
fi

tps=
for n in $NAMES; do
	tps=$tps${tps:+,}syscalls/sys_enter_$n,syscalls/sys_exit_$n
done
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "# seed $seed (orphan_work $ROUNDS $seed replays the workload)"
f=$tmp/o.pftrace
if ! DP_TP_PID=1 DP_CHUNK_KB=$CHUNK_KB DP_SIZE_KB=16384 "$rec" tp "$f" "$tps" \
	"exec $work $ROUNDS $seed" > "$tmp/info" 2> "$tmp/err"; then
	not_ok "dp_record tp: $(cat "$tmp/err")"
	echo "1..$N"
	exit 1
fi
sed -n 's/^\(chunks_in_file\|written\|lost\|lost_too_large\|cmd_status\)=/# &/p' "$tmp/info"
st=$(sed -n 's/^cmd_status=//p' "$tmp/info")
lost=$(sed -n 's/^lost=//p' "$tmp/info")
check "recorded 36 tracepoints in ${CHUNK_KB} KiB chunks while orphan_work ran (status $st)" \
	test "$st" = 0
check "the kernel lost nothing (lost=$lost)" test "$lost" = 0

protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
	< "$f" > "$f.txt" 2> "$f.err"
check "protoc --decode=perfetto.protos.Trace with Perfetto's schema" test ! -s "$f.err"
echo "# recorded and decoded at ${SECONDS}s"
# shellcheck disable=SC2086
python3 "$here/orphan_check.py" "$schema" "$f" "$f.txt" "$tmp/info" $CHUNK_KB $ROUNDS $NAMES \
	> "$tmp/check" 2>&1
tp_tap ok not_ok "decode" < "$tmp/check"
echo "# checked at ${SECONDS}s"

if tp_available; then
	# One load: name|events|args per tracepoint (the decode's per kind,
	# events and field entries, against ftrace_event and args by the
	# descriptors' names), then "stat|name[idx]|value" for every error or
	# data_loss stat.
	tp_query "$f" "select * from (select e.name, count(distinct e.id), count(a.id)
		from ftrace_event e left join args a using (arg_set_id) group by e.name)
		union all select 'stat', name || ifnull('[' || idx || ']', ''), value
		from stats where value > 0 and severity in ('error', 'data_loss')" \
		> "$tmp/tp.all" 2> "$tmp/tp.err" || echo "stat|trace_processor failed: $(cat "$tmp/tp.err")|" > "$tmp/tp.all"
	bad=$(sed -n 's/^stat|\(.*\)|\(.*\)$/\1=\2/p' "$tmp/tp.all" | tr '\n' ' ')
	check "trace_processor: no error or data_loss stats${bad:+ ($bad)}" test -z "$bad"
	grep -v '^stat|' "$tmp/tp.all" | LC_ALL=C sort > "$tmp/tp"
	LC_ALL=C sort "$f.txt.kinds" > "$tmp/want"
	if cmp -s "$tmp/want" "$tmp/tp"; then
		ok "trace_processor: the $(wc -l < "$tmp/tp") tracepoints' events and args as protoc decodes them ($ROUNDS each)"
	else
		not_ok "trace_processor: events and args differ from the decode"
		paste -d' ' "$tmp/want" "$tmp/tp" | grep -v '^\(.*\) \1$' | head -12 |
			sed 's/^/#   decode, trace_processor: /'
	fi
else
	ok "trace_processor # SKIP $TP_WHY"
fi

echo "# done at ${SECONDS}s"
echo "1..$N"
exit $FAILED
