#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock
#
# The netlink fuzzer in a guest (TAP): build/nl_fuzz sends random but
# structure-aware requests to the real "pbtrace" family for
# PBTRACE_FUZZ_SECS (default 60) while a second thread attaches, maps and
# takes chunks from /dev/pbtrace; PBTRACE_FUZZ_SEED replays a run (the seed
# is printed first). A fuzzer that only ever got EINVAL tested nothing:
# every command must have been both accepted and refused, the accepted
# share be at least a fifth, every device operation have succeeded (and a
# writable mapping never). Then the module must still be sane: every
# session destroyed (a fresh dump lists none), no reference left on the
# module, vmalloc back where it was, rmmod, kmemleak (where the kernel has
# it) silent, no new taint. Between those: a short run as nobody that must
# change nothing, the buffers-larger-than-RAM case the fuzzer found, a run
# as a member of group= against a small budget that must hold (group_usage
# and MemAvailable sampled by root throughout, no CPU stall in dmesg with
# the detectors at their tightest), and a run with a relay connected to
# the module's own endpoint (vsock_loopback). Its own guest: ~3 min.
# tools/vm fails the run on any WARN/Oops. docs/testing.md has the detail.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
FUZZ=$HERE/build/nl_fuzz
SECS=${PBTRACE_FUZZ_SECS:-60}
KMEMLEAK=/sys/kernel/debug/kmemleak
. "$HERE/tap.sh"

if [ ! -x "$FUZZ" ]; then
	echo "1..0 # SKIP $FUZZ missing: make -C selftests/pbtrace"
	exit 0
fi
lsmod | grep -q '^pbtrace ' || insmod "$KO" ||
	{ echo "Bail out! cannot insmod $KO"; exit 1; }

out=$(mktemp /tmp/nl_fuzz.XXXXXX)
trap 'rm -f "$out"' EXIT
declare -A V
# "key value" lines into V; "cmd NAME sent..." and "dev NAME tried..." too.
load() {
	local k v rest
	while read -r k v rest; do
		case $k in
		cmd | dev | feat) V[$k.$v]=$rest ;;
		*) V[$k]=$v ;;
		esac
	done < "$1"
}
field() { # "sent 3 ok 1 ..." KEY: the number after KEY
	local -a w=($1)
	local i
	for ((i = 0; i < ${#w[@]} - 1; i++)); do
		[ "${w[i]}" = "$2" ] && { echo "${w[i + 1]}"; return; }
	done
	echo 0
}
vmalloc_kb() { sed -n 's/^VmallocUsed: *\([0-9]*\) kB/\1/p' /proc/meminfo; }

taint0=$(cat /proc/sys/kernel/tainted)
[ -e $KMEMLEAK ] && echo clear > $KMEMLEAK
vm0=$(vmalloc_kb)

# -- the fuzz run --
seed_opt=()
[ -n "${PBTRACE_FUZZ_SEED:-}" ] && seed_opt=(-s "$PBTRACE_FUZZ_SEED")
"$FUZZ" -t "$SECS" "${seed_opt[@]}" > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
load "$out"
if [ $rc = 0 ] && [ -n "${V[steps]:-}" ]; then
	ok "fuzzer ran ${V[secs]} s, seed ${V[seed]}: ${V[sent]} requests, ${V[mutated]} mutated, ${V[ok]} accepted, ${V[err]} refused, ${V[noreply]} unanswered"
else
	not_ok "fuzzer exited $rc (seed ${V[seed]:-?}): rerun with PBTRACE_FUZZ_SEED=${V[seed]:-?}"
	echo "1..$N"
	exit 1
fi
if ((V[ok] * 5 >= V[sent] && V[sent] > 100)); then
	ok "at least a fifth of the requests were accepted (${V[ok]} of ${V[sent]})"
else
	not_ok "too few requests accepted: ${V[ok]} of ${V[sent]} (a fuzzer that only gets errors tests nothing)"
fi
for c in NEW_SESSION SET_SESSION START_SESSION STOP_SESSION FLUSH_SESSION \
	DESTROY_SESSION GET_SESSION TRIGGER LIST_EVENTS REGISTER_DAEMON GET_STATUS \
	LOAD_NAMES GET_NAMES GET_MACHINES GET_SESSION_MACHINES GET_WATERMARK; do
	l=${V[cmd.$c]:-}
	a=$(field "$l" ok) e=$(field "$l" err)
	if ((a > 0 && e > 0)); then
		ok "$c accepted $a times and refused $e times"
	else
		not_ok "$c: accepted $a, refused $e: both must happen"
	fi
done
a=$(field "${V[cmd.GET_SESSION]:-}" dump_msgs)
check "GET_SESSION dumps returned sessions ($a messages)" test "$a" -gt 0
for c in DAEMON_GONE UNSPEC OTHER; do
	l=${V[cmd.$c]:-}
	a=$(field "$l" ok) s=$(field "$l" sent)
	if ((s > 0 && a == 0)); then
		ok "command $c, which has no handler, refused all $s times"
	else
		not_ok "command $c: sent $s, accepted $a (must be sent, never accepted)"
	fi
done
for d in open attach mmap get_chunk put_chunk read_remote poll close orphan; do
	l=${V[dev.$d]:-}
	a=$(field "$l" ok) t=$(field "$l" tried)
	check "/dev/pbtrace $d succeeded $a of $t times" test "$a" -gt 0
done
for d in mmap_write bad_ioctl; do
	l=${V[dev.$d]:-}
	a=$(field "$l" ok) t=$(field "$l" tried)
	if ((t > 0 && a == t)); then
		ok "/dev/pbtrace $d refused all $t times"
	else
		not_ok "/dev/pbtrace $d: refused $a of $t"
	fi
done
check "the device never broke its ABI (${V[dev_bad_last]:-no contradiction})" \
	test "${V[dev_bad]:-x}" = 0

# -- the module after it --
"$FUZZ" --cleanup > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
load "$out"
check "every session destroyed (${V[sessions_found]:-?} found): a fresh dump lists ${V[sessions_left]:-?}" \
	test $rc = 0
check "the names table the fuzzer loaded emptied again" test "${V[names_cleared]:-}" = 1

# -- the same without privileges --
# As nobody (uid 65534, in no group) nothing may change: one session made
# by root beforehand must be all a root dump finds afterwards.
"$FUZZ" --new 1024 1 > "$out" 2>&1
victim=$(sed -n 's/^new_id //p' "$out")
"$FUZZ" -t "${PBTRACE_FUZZ_UNPRIV_SECS:-10}" -u 65534 > "$out" 2>&1
rc=$?
grep -E '^(seed|sent|ok|err) ' "$out" | sed 's/^/# nobody: /'
unset V
declare -A V
load "$out"
check "fuzzer as nobody ran (seed ${V[seed]:-?}, ${V[sent]:-?} requests)" test $rc = 0
changed=""
for c in NEW_SESSION SET_SESSION START_SESSION STOP_SESSION FLUSH_SESSION \
	DESTROY_SESSION TRIGGER REGISTER_DAEMON LOAD_NAMES GET_NAMES GET_MACHINES; do
	a=$(field "${V[cmd.$c]:-}" ok)
	((a == 0)) || changed="$changed $c:$a"
done
check "as nobody no command that changes state (or shows guests' names) was accepted${changed:+ (accepted:$changed)}" \
	test -z "$changed"
a=$(field "${V[dev.open]:-}" ok)
check "as nobody /dev/pbtrace never opened ($a times)" test "$a" = 0
"$FUZZ" --cleanup > "$out" 2>&1
load "$out"
check "root finds exactly its one session ($victim) afterwards: ${V[sessions_found]:-?}" \
	test "${V[sessions_found]:-}" = 1 -a "${V[sessions_left]:-}" = 0

check "no reference left on the module (refcnt $(cat /sys/module/pbtrace/refcnt))" \
	test "$(cat /sys/module/pbtrace/refcnt)" = 0
vm1=$(vmalloc_kb)
check "vmalloc back within 2 MiB of before the run ($vm0 kB, now $vm1 kB)" \
	test $((vm1 - vm0)) -lt 2048

# -- buffers the machine cannot hold (the fuzzer's find) --
# A buffer near the size of RAM was allocated until the OOM killer made
# room (killing this shell), or vmalloc failed with a warning. All
# buffers together may take half the RAM: 85% is refused, one 30% buffer
# taken, a second refused; MemAvailable (the kernel's own count) shows
# what was really taken.
mem_kb=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
avail_kb() { sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
# A buffer is at most 1 GiB: PCT% of a larger RAM takes several (up to
# 4 in a session). Sets NB buffers of KB each.
split() {
	local total=$((mem_kb * $1 / 100))
	NB=$(((total + 1048575) / 1048576))
	((NB <= 4)) || NB=4
	KB=$((total / NB / 1024 * 1024))
}
split 85
big=$KB nbig=$NB
split 30
third=$KB nthird=$NB
a0=$(avail_kb)
"$FUZZ" --new $big $nbig > "$out" 2>&1
load "$out"
check "$nbig buffer(s) of $big kB, 85% of RAM ($mem_kb kB), refused with ENOMEM (errno ${V[new_errno]:-?})" \
	test "${V[new_errno]:-}" = 12
"$FUZZ" --cleanup > /dev/null 2>&1
"$FUZZ" --new $third $nthird > "$out" 2>&1
load "$out"
a1=$(avail_kb)
check "$nthird buffer(s) of $third kB, 30% of RAM, taken (errno ${V[new_errno]:-?}; MemAvailable $a0 -> $a1 kB)" \
	test "${V[new_errno]:-}" = 0 -a $((a0 - a1)) -gt $((third * nthird / 2))
"$FUZZ" --new $third $nthird > "$out" 2>&1
load "$out"
a2=$(avail_kb)
check "a second one, over half the RAM together, is refused (errno ${V[new_errno]:-?}; MemAvailable $a1 -> $a2 kB)" \
	test "${V[new_errno]:-}" = 12 -a $((a1 - a2)) -lt $((third * nthird / 2))
"$FUZZ" --cleanup > "$out" 2>&1
check "those sessions destroyed too" grep -q '^sessions_left 0' "$out"
check "rmmod pbtrace" rmmod pbtrace

# -- a member of the module's group= --
# uid 65533 with gid MGID as its one supplementary group (no capability)
# fuzzes its own sessions with real tracepoints (ids and layouts read from
# tracefs as root first), stacks, filters (valid, long patterns, many
# comparisons, broken) and sizes up to and past a small budget
# (group_max_kb=8192, group_max_counters=24), at perf_event_paranoid -1
# (perf lets a member's tracepoint counters be made only there).
# Meanwhile root (nl_fuzz's parent) samples group_usage and MemAvailable
# every ~2 ms and a heartbeat per CPU. The referees: the module's own
# count per uid, and the kernel's MemAvailable, which may not fall by
# more than the budget plus MSLACK_KB (the fuzzer's own memory, netlink
# buffers, perf's counters, page cache moving on a shared host).
#
# Stalls: the issue asked for 100 ms; the kernel's detectors go down to
# 2 s for a soft lockup (watchdog_thresh=1: 2 x thresh), 3 s for an RCU
# CPU stall (rcu_cpu_stall_timeout's minimum; the expedited one follows
# it, in ms, at 0) and 1 s for a hung task; all are set as tight, but
# the hung-task timeout is set to 10 s and the expedited-stall timeout
# (2 jiffies at least) is left to follow the 3 s: under TCG on a shared
# host a vCPU thread descheduled for a moment, or a 9p read, would be
# reported. The heartbeat's largest gap is printed, not asserted.
MUID=65533 MGID=4245 MKB=8192 MSLACK_KB=32768
MSECS=${PBTRACE_FUZZ_MEMBER_SECS:-30}
K=/proc/sys/kernel
RCU=/sys/module/rcupdate/parameters
old_par=$(cat $K/perf_event_paranoid)
old_thr=$(cat $K/watchdog_thresh)
old_rcu=$(cat $RCU/rcu_cpu_stall_timeout 2>/dev/null)
old_hung=$(cat $K/hung_task_timeout_secs 2>/dev/null)
echo 1 > $K/watchdog_thresh
[ -n "$old_rcu" ] && echo 3 > $RCU/rcu_cpu_stall_timeout
[ -n "$old_hung" ] && echo 10 > $K/hung_task_timeout_secs
echo "# detectors: watchdog_thresh $(cat $K/watchdog_thresh), rcu_cpu_stall_timeout $(cat $RCU/rcu_cpu_stall_timeout 2>/dev/null), rcu_exp_cpu_stall_timeout $(cat $RCU/rcu_exp_cpu_stall_timeout 2>/dev/null), hung_task_timeout_secs $(cat $K/hung_task_timeout_secs 2>/dev/null)"
dmesg0=$(dmesg | wc -l)
if insmod "$KO" group=$MGID group_max_kb=$MKB group_max_counters=24; then
	P=/sys/module/pbtrace/parameters
	msess=$(cat $P/group_max_sessions)
	"$FUZZ" --new 1024 1 > "$out" 2>&1
	victim=$(sed -n 's/^new_id //p' "$out")
	echo -1 > $K/perf_event_paranoid
	"$FUZZ" -t "$MSECS" -u $MUID -g $MGID -m $MKB > "$out" 2>&1
	rc=$?
	echo "$old_par" > $K/perf_event_paranoid
	grep -E '^(seed|sent|ok|err|layouts|feat|refused_[A-Z0-9]+|samples|usage_[a-z_]+|avail_[a-z_]+|heartbeat_[a-z0-9_]+|member_[a-z_]+|sessions_[a-z]+|errno|reason) |^cmd (NEW|SET|ADD|START|DESTROY)' "$out" |
		sed 's/^/# member: /'
	unset V
	declare -A V
	load "$out"
	check "fuzzer as a member ran (seed ${V[seed]:-?}, ${V[sent]:-?} requests, ${V[layouts]:-?} tracepoints from tracefs)" \
		test $rc = 0 -a "${V[layouts]:-0}" -gt 0
	for c in NEW_SESSION START_SESSION DESTROY_SESSION; do
		a=$(field "${V[cmd.$c]:-}" ok) e=$(field "${V[cmd.$c]:-}" err)
		check "as a member $c accepted $a times and refused $e times: both must happen" \
			test "$a" -gt 0 -a "$e" -gt 0
	done
	# Taken only 0-4 times in a run under TCG (they need a configured
	# session of the member's own, and a NEW with tracepoints takes up
	# to seconds there): refused they must be, taken is printed.
	for c in SET_SESSION ADD_TRACEPOINTS; do
		a=$(field "${V[cmd.$c]:-}" ok) e=$(field "${V[cmd.$c]:-}" err)
		check "as a member $c refused $e times (accepted $a)" test "$e" -gt 0
	done
	for f in tracepoints stacks filters; do
		a=$(field "${V[feat.$f]:-}" ok) s=$(field "${V[feat.$f]:-}" sent)
		check "requests with $f accepted ($a of $s)" test "$a" -gt 0 -a "$s" -gt "$a"
	done
	a=$(field "${V[feat.hostile_filters]:-}" ok) s=$(field "${V[feat.hostile_filters]:-}" sent)
	check "hostile filters (long patterns, many comparisons, broken) sent $s times, refused $((s - a))" \
		test "$s" -gt 0 -a "$s" -gt "$a"
	a=$(field "${V[feat.over_budget]:-}" ok) s=$(field "${V[feat.over_budget]:-}" sent)
	check "a buffer past the budget ($MKB KiB) never taken: $a of $s well-formed requests" \
		test "$s" -gt 0 -a "$a" = 0
	for e in EPERM E2BIG ENOMEM; do
		check "member refused with $e ${V[refused_$e]:-0} times" test "${V[refused_$e]:-0}" -gt 0
	done
	check "root sampled group_usage ${V[samples]:-0} times, and saw the member hold something (${V[usage_max_bytes]:-0} bytes)" \
		test "${V[samples]:-0}" -gt 100 -a "${V[usage_max_bytes]:-0}" -gt 0
	check "the budget held: the member never held more than group_max_kb ($((MKB * 1024)) bytes; at most ${V[usage_max_bytes]:-?})" \
		test "${V[usage_max_bytes]:-0}" -le $((MKB * 1024))
	check "the member never held more than group_max_sessions ($msess; at most ${V[usage_max_sessions]:-?})" \
		test "${V[usage_max_sessions]:-99}" -le "$msess"
	drop=$((${V[avail_start_kb]:-0} - ${V[avail_min_kb]:-0}))
	check "MemAvailable fell by at most the budget + $MSLACK_KB kB (${V[avail_start_kb]:-?} -> lowest ${V[avail_min_kb]:-?} kB: $drop kB)" \
		test "${V[avail_min_kb]:--1}" -gt 0 -a "$drop" -le $((MKB + MSLACK_KB))
	check "the member destroyed its own sessions: its dump lists ${V[member_sessions_left]:-?}" \
		test "${V[member_sessions_left]:-}" = 0
	u=$(cat $P/group_usage)
	check "group_usage shows nothing of uid $MUID after it${u:+: $u}" \
		sh -c "! grep -q '^uid $MUID ' $P/group_usage"
	"$FUZZ" --cleanup > "$out" 2>&1
	unset V
	declare -A V
	load "$out"
	check "root finds exactly its one session ($victim) after the member: ${V[sessions_found]:-?}" \
		test "${V[sessions_found]:-}" = 1 -a "${V[sessions_left]:-}" = 0
	u=$(cat $P/group_usage)
	check "group_usage empty after root's cleanup${u:+: $u}" test -z "$u"
	stalls=$(dmesg | tail -n +$((dmesg0 + 1)) |
		grep -E 'soft lockup|rcu_.*stall|self-detected stall|hung task|blocked for more than|hard LOCKUP')
	check "no CPU stall, soft/hard lockup or hung task in dmesg${stalls:+: $stalls}" test -z "$stalls"
	check "rmmod after the member phase" rmmod pbtrace
else
	not_ok "insmod pbtrace.ko group=$MGID group_max_kb=$MKB"
fi
echo "$old_thr" > $K/watchdog_thresh
[ -n "$old_rcu" ] && echo "$old_rcu" > $RCU/rcu_cpu_stall_timeout
[ -n "$old_hung" ] && echo "$old_hung" > $K/hung_task_timeout_secs

# -- again with a relay connected to this module's own endpoint --
# Sessions that name the relay's machine (or "*") make the relay record
# and send chunks that the endpoint queues for READ_REMOTE, while the
# fuzzer starts, stops, reconfigures and destroys them under it.
P=/sys/module/pbtrace/parameters
RSECS=${PBTRACE_FUZZ_RELAY_SECS:-20}
if [ ! -e /dev/vsock ] && ! grep -q vsock_loopback /proc/modules; then
	ok "relay phase # SKIP no vsock_loopback in this guest (tools/vm --vsock)"
elif insmod "$KO" endpoint=vsock:20041 relay=vsock:1:20041 relay_name=fzrelay; then
	if wait_for 100 grep -qx 'connected 1' $P/relay_stats; then
		ok "relay connected to the endpoint"
	else
		not_ok "relay did not connect: $(tr '\n' ' ' < $P/relay_stats)"
	fi
	PBTRACE_FUZZ_MACHINE=fzrelay "$FUZZ" -t "$RSECS" > "$out" 2>&1
	rc=$?
	unset V
	declare -A V
	load "$out"
	check "fuzzer with the relay ran (seed ${V[seed]:-?}, ${V[sent]:-?} requests, ${V[ok]:-?} accepted, ${V[remote_bytes]:-?} relayed bytes read)" \
		test $rc = 0
	grep -E '^(chunks|machines|connections|sessions|frames)[a-z_]* ' $P/endpoint_stats 2>/dev/null |
		head -n 8 | sed 's/^/# endpoint: /'
	check "rmmod with the relay connected after the fuzzing" rmmod pbtrace
else
	not_ok "insmod pbtrace.ko endpoint=vsock:20041 relay=vsock:1:20041"
fi
if [ -e $KMEMLEAK ]; then
	echo scan > $KMEMLEAK
	sleep 1
	echo scan > $KMEMLEAK
	leaks=$(grep -c '^unreferenced object' $KMEMLEAK)
	check "kmemleak: $leaks unreferenced objects" test "$leaks" = 0
	[ "$leaks" = 0 ] || head -n 40 $KMEMLEAK | sed 's/^/# /'
else
	ok "kmemleak # SKIP not in this kernel ($KMEMLEAK missing)"
fi
taint1=$(cat /proc/sys/kernel/tainted)
# O (4096, out-of-tree) and E (8192, unsigned) come with loading the module.
check "no new taint (was $taint0, now $taint1)" \
	test $((taint1 & ~12288)) = $((taint0 & ~12288))
insmod "$KO" || echo "Bail out! cannot insmod $KO again"

echo "1..$N"
exit $FAILED
