#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a group= member may record (docs/security.md, "What perf decides"),
# asked over raw netlink (member_nl), not through tracectl: uid 65534 with
# only the pbtrace group and no capability. Perf's own policy decides the
# member's tracepoints, and real perf (perf record -a) as the same user is
# the referee at each perf_event_paranoid level; dynamic events (kprobes,
# uprobes, eprobes, synthetic, told by the kernel's flags, not by name),
# printk and ftrace, a layout that is not the kernel's and a proto id
# below the generic base are refused whatever the sysctl; the id is
# checked again at START; another user's session is answered as one that
# does not exist. Run in a guest with pbtrace.ko loaded, as root:
#   tools/vm -- selftests/pbtrace/member_test.sh
# Prints TAP.
set -u

here=$(cd "$(dirname "$0")" && pwd)
nl=$here/build/member_nl
param=/sys/module/pbtrace/parameters
paranoid=/proc/sys/kernel/perf_event_paranoid
GID=$(getent group pbtrace | cut -d: -f3)
GID=${GID:-4242}
M=65534 M2=4202
. "$here/tap.sh"
# Before 6.2 a refused id says this, whatever the reason (kmod/compat.h).
ID_LIT="a tracepoint's id is not it, or it is refused"
START_LIT="a tracepoint's id is not it now, or perf refused it"

T=/sys/kernel/tracing
[ -r $T/events/signal/signal_generate/id ] || T=/sys/kernel/debug/tracing
tmp=$(mktemp -d /tmp/member.XXXXXX)
chmod 755 "$tmp"
old_group=$(cat $param/group 2>/dev/null)
old_paranoid=$(cat $paranoid)
old_mode=

cleanup() {
	echo "$old_paranoid" >$paranoid
	[ -n "$old_group" ] && echo "$old_group" >$param/group
	[ -n "$old_mode" ] && mount -o remount,mode="$old_mode",gid=0 $T
	echo >$T/kprobe_events 2>/dev/null
	echo >$T/uprobe_events 2>/dev/null
	echo '!e:eprobes/pbt_ep sched/sched_switch' >>$T/dynamic_events 2>/dev/null
	echo '!pbt_syn' >>$T/synthetic_events 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

note() { echo "# $*"; }

# as UID CMD...: CMD as that uid, gid and only the pbtrace group, no caps.
as() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --groups="$GID" --inh-caps=-all "$@"
}

# fields EVENT: its tracefs format as member_nl FIELDs (name:off:size:kind).
fields() {
	awk -F'\t' '/^\tfield:/ {
		decl = $2; sub(/^field:/, "", decl); sub(/;$/, "", decl)
		off = $3; sub(/^offset:/, "", off); sub(/;$/, "", off)
		size = $4; sub(/^size:/, "", size); sub(/;$/, "", size)
		n = split(decl, w, " "); name = w[n]; sub(/\[.*/, "", name)
		str = decl ~ /char/
		if (decl ~ /^__data_loc/) kind = str ? 3 : 4
		else if (decl ~ /^__rel_loc/) kind = str ? 5 : 6
		else if (decl ~ /\[/) kind = str ? 2 : 8
		else if (size == 1 || size == 2 || size == 4 || size == 8) kind = 1
		else kind = 8
		printf "%s:%d:%d:%d\n", name, off, size, kind
	}' "$T/events/$1/format"
}

evid() { cat "$T/events/$1/id" 2>/dev/null; }

# new WHO NAME EVENT [PROTO [FIELD...]]: NEW_SESSION as WHO (root or a
# uid) with EVENT's kernel layout unless FIELDs are given.
new() {
	local who=$1 name=$2 ev=$3 proto=${4:-65536}
	shift 3
	[ $# -gt 0 ] && shift
	local f=("$@")
	[ ${#f[@]} -eq 0 ] && mapfile -t f < <(fields "$ev")
	if [ "$who" = root ]; then
		"$nl" new "$name" "$ev" "$(evid "$ev")" "$proto" "${f[@]}"
	else
		as "$who" "$nl" new "$name" "$ev" "$(evid "$ev")" "$proto" "${f[@]}"
	fi
}

sid() { sed -n 's/^id \([0-9]*\)$/\1/p' "$tmp/out"; }

if [ ! -x "$nl" ] || [ ! -r $T/events/signal/signal_generate/format ]; then
	echo "1..0 # SKIP needs $nl (make -C selftests/pbtrace) and tracefs"
	exit 0
fi
echo "$GID" >$param/group
note "member uid $M, group $GID; tracefs at $T"

# -- perf decides: raw tracepoint data CPU-wide needs paranoid -1 --
# perf reads the event's format from tracefs: let the group read it
# (its directories are 0750, the root 0700), so perf's verdict is the
# kernel's, not tracefs's mode.
old_mode=$(stat -c %a $T)
mount -o remount,mode=750,gid="$GID" $T
mkdir "$tmp/m" && chown $M "$tmp/m"
ev=syscalls/sys_enter_openat
[ -r "$T/events/$ev/id" ] || ev=signal/signal_generate
perf_ok=$(command -v perf)
for level in 2 1 0 -1; do
	echo "$level" >$paranoid
	if [ "$level" = -1 ]; then want=0; else want=1; fi
	new $M "p$level" "$ev" >"$tmp/out" 2>&1
	rc=$?
	if [ "$want" = 0 ] && [ "$rc" = 0 ]; then
		ok "paranoid $level: a member may record $ev"
		as $M "$nl" destroy "$(sid)" >/dev/null
	elif [ "$want" = 1 ] && [ "$rc" = 1 -o "$rc" = 13 ] &&
	     grep -q "$(fmt_or "$ev: id [0-9]* refused by perf" "$ID_LIT")" "$tmp/out"; then
		ok "paranoid $level: $ev refused, as perf says ($(cat "$tmp/out"))"
	else
		not_ok "paranoid $level: member's $ev (exit $rc, want ${want/1/EPERM})"
		sed 's/^/#   /' "$tmp/out"
	fi
	if [ -z "$perf_ok" ]; then
		ok "# SKIP paranoid $level: no perf (linux-perf) to compare with"
		continue
	fi
	# no synthesis of every task's maps: slow under TCG, and not the point
	as $M perf record -q -a --synth=no --no-buildid -e "${ev/\//:}" \
		-o "$tmp/m/perf.data" -- true \
		>"$tmp/perf.out" 2>&1
	prc=$?
	rm -f "$tmp/m/perf.data"
	if [ $((prc != 0)) = "$want" ]; then
		ok "paranoid $level: perf record -a -e ${ev/\//:} as the member agrees (exit $prc)"
	else
		not_ok "paranoid $level: perf record as the member exits $prc"
		sed 's/^/#   /' "$tmp/perf.out" | head -5
	fi
done

# From here perf would allow the member: only pbtrace's own rules refuse.
echo -1 >$paranoid

# expect_refused NAME PATTERN CMD...: exit non-zero, message matches.
expect_refused() {
	local name=$1 pat=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" != 0 ] && grep -Eq -- "$pat" "$tmp/out"; then
		ok "$name: $(cat "$tmp/out")"
	else
		not_ok "$name (exit $rc): no /$pat/ in:"
		sed 's/^/#   /' "$tmp/out"
		[ "$rc" = 0 ] && "$nl" destroy "$(sid)" >/dev/null
	fi
}

# -- refused whatever the sysctl: the kernel log, ftrace, dynamic events --
expect_refused "printk/console refused to a member" \
	"$(fmt_or "^err 1 printk/console: id [0-9]+ is the kernel log \(printk\): root only" "^err 1 $ID_LIT")" \
	new $M m printk/console
expect_refused "ftrace/function refused" \
	"$(fmt_or "^err [0-9]+ ftrace/function: id [0-9]+ (is an ftrace/ event|is no tracepoint here)" "^err [0-9]+ $ID_LIT")" \
	new $M m ftrace/function

echo 'p:kprobes/pbt_kp do_sys_openat2' >>$T/kprobe_events
expect_refused "a kprobe event refused to a member" \
	"$(fmt_or "^err 1 kprobes/pbt_kp: id [0-9]+ is a dynamic event: root only" "^err 1 $ID_LIT")" \
	new $M m kprobes/pbt_kp
# A kprobe in a static event's group: the kernel's flags tell, not the name.
echo 'p:sched/pbt_fake do_sys_openat2' >>$T/kprobe_events
expect_refused "a kprobe named as a sched/ event refused too" \
	"$(fmt_or "^err 1 sched/pbt_fake: id [0-9]+ is a dynamic event: root only" "^err 1 $ID_LIT")" \
	new $M m sched/pbt_fake
if echo 'p:uprobes/pbt_up /bin/true:0x0' >>$T/uprobe_events 2>/dev/null; then
	expect_refused "a uprobe event refused to a member" \
		"$(fmt_or "^err 1 uprobes/pbt_up: id [0-9]+ is a dynamic event: root only" "^err 1 $ID_LIT")" \
		new $M m uprobes/pbt_up
else
	ok "# SKIP no uprobe events in this kernel"
fi
if echo 'e:eprobes/pbt_ep sched/sched_switch' >>$T/dynamic_events 2>/dev/null; then
	expect_refused "an eprobe event refused to a member" \
		"$(fmt_or "^err 1 eprobes/pbt_ep: id [0-9]+ is a dynamic event: root only" "^err 1 $ID_LIT")" \
		new $M m eprobes/pbt_ep
else
	ok "# SKIP no eprobe events in this kernel"
fi
if echo 'pbt_syn u64 x' >>$T/synthetic_events 2>/dev/null; then
	# perf cannot attach to synthetic events at all (ENODEV)
	expect_refused "a synthetic event refused to a member" \
		"$(fmt_or "^err [0-9]+ synthetic/pbt_syn: id [0-9]+ (is a dynamic event: root only|cannot be attached to by perf)" "^err [0-9]+ $ID_LIT")" \
		new $M m synthetic/pbt_syn
else
	ok "# SKIP no synthetic events in this kernel"
fi
check "root may still record its kprobe event" \
	eval "new root rkp kprobes/pbt_kp >'$tmp/out' 2>&1 && '$nl' destroy \$(sid) >/dev/null"

# -- the layout must be the kernel's: no bytes of the record by another name --
sg=signal/signal_generate
expect_refused "a BYTES field at offset 0 covering the record refused" \
	"$(fmt_or "^err 1 $sg: id [0-9]+ field blob is not the kernel's" "^err 1 $ID_LIT")" \
	new $M m $sg 65536 blob:0:40:8
expect_refused "a kernel field's name at another offset refused" \
	"$(fmt_or "^err 1 $sg: id [0-9]+ field sig is not the kernel's" "^err 1 $ID_LIT")" \
	new $M m $sg 65536 sig:0:4:1
expect_refused "a __data_loc read as an int refused" \
	"$(fmt_or "field filename is not the kernel's" "^err 1 $ID_LIT")" \
	new $M m sched/sched_process_exec 65536 \
	"$(fields sched/sched_process_exec | sed -n 's/^\(filename:[0-9]*:4\):3$/\1:1/p')"
expect 0 "the kernel's own layout of $sg is a member's to record" new $M ok $sg
as $M "$nl" destroy "$(sid)" >/dev/null
check "root's layout is root's business (a BYTES field at 0 accepted)" \
	eval "new root rb $sg 65536 blob:0:40:8 >'$tmp/out' 2>&1 && '$nl' destroy \$(sid) >/dev/null"

# -- proto ids: protobuf's range for all, generic for a member --
expect_refused "proto id 0 refused" "^err 34 integer out of range" new $M m $sg 0
expect_refused "proto id 2^29 (wraps the tag) refused, to root too" \
	"^err 34 integer out of range" new root m $sg 536870912
expect_refused "a member's proto id below 65536 (posing as Perfetto's own) refused" \
	"^err 1 a member's tracepoint is written as a generic event: proto_id >= 65536" \
	new $M m $sg 4
expect 0 "proto id 2^29 - 1 accepted" new $M top $sg 536870911
as $M "$nl" destroy "$(sid)" >/dev/null

# -- START checks again, as the creator, whoever sends it --
new $M late $sg >"$tmp/out" 2>&1
late=$(sid)
check "a member's session created while perf allows it" test -n "$late"
echo 2 >$paranoid
expect_refused "perf's refusal at START once paranoid is 2" \
	"$(fmt_or "^err 1 start: $sg: id [0-9]+ refused by perf" "^err 1 start: $START_LIT")" as $M "$nl" start "$late"
expect_refused "root's START of the member's session is refused too (the creator's credentials)" \
	"$(fmt_or "^err 1 start: $sg: id [0-9]+ refused by perf" "^err 1 start: $START_LIT")" "$nl" start "$late"
echo -1 >$paranoid
expect 0 "and it starts once perf allows it again" as $M "$nl" start "$late"
as $M "$nl" destroy "$late" >/dev/null

echo 'p:kprobes/pbt_a do_sys_openat2' >>$T/kprobe_events
a_id=$(evid kprobes/pbt_a)
new root gone kprobes/pbt_a >"$tmp/out" 2>&1
gone=$(sid)
check "root's session on kprobes/pbt_a (id $a_id)" test -n "$gone"
echo '-:kprobes/pbt_a' >>$T/kprobe_events
echo 'p:kprobes/pbt_b do_sys_openat2' >>$T/kprobe_events
note "pbt_a's id $a_id, pbt_b's now $(evid kprobes/pbt_b)"
expect_refused "START after the id was freed (and maybe given to pbt_b) refuses it" \
	"$(fmt_or "^err 22 start: kprobes/pbt_a: id $a_id (is another tracepoint's|is no tracepoint here)" "^err 22 start: $START_LIT")" \
	"$nl" start "$gone"
"$nl" destroy "$gone" >/dev/null

# -- another user's session is one that does not exist --
new root rootsess $sg >"$tmp/out" 2>&1
r=$(sid)
new $M2 m2sess $sg >"$tmp/out" 2>&1
m2=$(sid)
missing=4000000000
for op in start stop get watermark cpustats destroy; do
	as $M "$nl" $op "$missing" >"$tmp/none" 2>&1
	for s in "$r" "$m2"; do
		as $M "$nl" $op "$s" >"$tmp/other" 2>&1
		# a dump's start (cpustats) has its errno only, no message
		if cmp -s "$tmp/none" "$tmp/other" &&
		   grep -Eq "^err 2 (no session with this id|$)" "$tmp/other"; then
			ok "$op on another user's session $s answers as a missing one"
		else
			not_ok "$op on session $s: '$(cat "$tmp/other")', missing: '$(cat "$tmp/none")'"
		fi
	done
done
as $M "$nl" set "$missing" $sg "$(evid $sg)" 65536 >"$tmp/none" 2>&1
as $M "$nl" set "$r" $sg "$(evid $sg)" 65536 >"$tmp/other" 2>&1
check "set on root's session answers as a missing one" cmp -s "$tmp/none" "$tmp/other"
check "root's session is still there" "$nl" get "$r"
"$nl" destroy "$r" >/dev/null
"$nl" destroy "$m2" >/dev/null

echo "1..$N"
exit $FAILED
