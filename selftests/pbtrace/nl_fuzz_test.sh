#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
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
# change nothing, the buffers-larger-than-RAM case the fuzzer found, and a
# run with a relay connected to the module's own endpoint (vsock_loopback).
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
		cmd | dev) V[$k.$v]=$rest ;;
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
