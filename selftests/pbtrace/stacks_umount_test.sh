#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --append nmi_watchdog=panic --append watchdog_thresh=5
#
# No path lookup in probe context (issue 22, 1; docs/stacks.md). umount
# holds mount_lock for write (lock_mount_hash) while it frees the
# mountpoint, and that kfree fires kmem:kfree in the unmounting task. A
# user-stack sample that called d_path() there spun on mount_lock with
# interrupts off, for a writer that was the same CPU: a hard lockup. Now
# the sample names a file's mapping by inode and device and traced asks
# for the path afterwards (PBTRACE_IOC_MAPPING_PATH).
#
# For root's session, then a member's (pbtrace group, group_test.sh's
# way): record kmem/kfree --stacks while a loop mounts and unmounts a
# tmpfs 3 times in unshare -Urm (unshare -m in tools/vm's chroot). The guest runs with the soft-lockup detector
# panicking (and the hard-lockup one, where the guest has a PMU for it:
# TCG has none, see the notes) and tools/vm fails on an RCU stall, which
# the other CPU reports for a CPU spinning with interrupts off. Then
# trace_processor: kfree samples inside umount's kernel path, their user
# frames in libc's mapping by its real path, named by ModuleSymbols
# (umount2: traced opened that path), every mapping path an existing
# file, and no mapping left with its "[inode ... dev ...]" name.
# Prints TAP.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
W=$(mktemp -d /tmp/stacks_umount.XXXXXX)
LOG=$W/traced.log
TRACED=
PARAM=/sys/module/pbtrace/parameters
CYCLES=3
MEMBER=4211
. "$HERE/tap.sh"
. "$HERE/traced_lib.sh"

N=0
GID=$(getent group pbtrace | cut -d: -f3)
group_mounted=
old_group=$(cat $PARAM/group 2>/dev/null)

traced_begin
cleanup() {
	stop_traced
	[ -n "$old_group" ] && echo "$old_group" >$PARAM/group
	[ -n "$group_mounted" ] && umount /etc/group
	rm -rf "$W"
}
trap cleanup EXIT

eq() {
	if [[ $1 == "$2" ]]; then
		ok "$3"
	else
		not_ok "$3 (got '$1', want '$2')"
	fi
}

# What the guest's lockup detectors are: said, not asserted (TCG has no
# PMU, so no perf NMI watchdog; the soft-lockup detector and RCU's stall
# detector work everywhere).
for k in watchdog nmi_watchdog soft_watchdog watchdog_thresh softlockup_panic hardlockup_panic; do
	note "kernel.$k = $(cat /proc/sys/kernel/$k 2>/dev/null || echo absent)"
done
dmesg | grep -iE "NMI watchdog|hardlockup|watchdog:" | head -3 | sed 's/^/# dmesg: /'
[ "$(cat /proc/sys/kernel/soft_watchdog 2>/dev/null)" = 1 ] &&
	[ "$(cat /proc/sys/kernel/softlockup_panic 2>/dev/null)" = 1 ]
eq "$?" 0 "the soft-lockup detector is on and panics"

UMOUNT=$(readlink -f "$(command -v umount)")
LIBC=$(readlink -f "$(ldd "$UMOUNT" | awk '/libc\.so/ { print $3 }')")
note "umount is $UMOUNT, its libc $LIBC"

# cycles: mount and unmount a tmpfs CYCLES times in a new mount
# namespace, in a new user namespace too where the kernel allows it (not
# in tools/vm's guest: it chroots into the host's root, and unshare(2)
# refuses CLONE_NEWUSER to a chrooted caller); prints how many umounts
# succeeded.
UNSHARE="unshare -Urm"
unshare -Urm true 2>/dev/null || UNSHARE="unshare -m"
note "the loop runs in '$UNSHARE'"
cycles() {
	$UNSHARE sh -c '
		d=$(mktemp -d) || exit 1
		n=0
		for i in $(seq '"$CYCLES"'); do
			mount -t tmpfs none "$d" || break
			umount "$d" || break
			n=$((n + 1))
		done
		echo "$n"'
}

# run WHO OUT [PREFIX...]: a session of kmem/kfree with stacks, started
# and stopped by tracectl under PREFIX (as a member), and the loop in it.
run() {
	local who=$1 out=$2 n
	shift 2
	"$@" "$U/tracectl" start -n "um$who" -e kmem/kfree --stacks -b 4096 \
		-o "$out" >"$W/start.log" 2>&1 || {
		not_ok "$who: tracectl start -e kmem/kfree --stacks"
		sed 's/^/#   /' "$W/start.log"
		return 1
	}
	n=$(cycles)
	eq "$n" "$CYCLES" "$who's session: $CYCLES tmpfs mounts and umounts while kfree is sampled with stacks, no lockup"
	"$@" "$U/tracectl" stop -n "um$who" --wait >"$W/stop.log" 2>&1 || {
		not_ok "$who: tracectl stop --wait"
		sed 's/^/#   /' "$W/stop.log"
		return 1
	}
	ok "$who: the session stopped and traced wrote its file"
}

# gt0 VALUE NAME: a count above 0.
gt0() {
	if [[ $1 =~ ^[0-9]+$ && $1 -gt 0 ]]; then
		ok "$2 ($1)"
	else
		not_ok "$2 (got '$1')"
	fi
}

# check WHO FILE: trace_processor reads it.
check_trace() {
	local who=$1 f=$2 n names
	if ! tp_available; then
		ok "$who: trace_processor checks # SKIP $TP_WHY"
		return
	fi
	# Samples whose callstack passes through umount's kernel path.
	tp_query "$f" "
with recursive up(sample, cs) as (
  select ps.id, ps.callsite_id from perf_sample ps
  union all
  select up.sample, c.parent_id from up join stack_profile_callsite c on c.id = up.cs
  where c.parent_id is not null
), um as (
  select distinct up.sample, f.name as fname, '/' || ltrim(m.name, '/') as mname, s.name as sym
  from up join stack_profile_callsite c on c.id = up.cs
  join stack_profile_frame f on f.id = c.frame_id
  join stack_profile_mapping m on m.id = f.mapping
  left join stack_profile_symbol s on s.symbol_set_id = f.symbol_set_id
), k as (
  select distinct sample from um where fname in ('path_umount', 'do_umount', '__x64_sys_umount')
)
select (select count(*) from k),
  (select count(distinct sample) from um where sample in (select sample from k) and (mname = '$UMOUNT' or mname like '%$UMOUNT')),
  (select count(distinct sample) from um where sample in (select sample from k) and mname = '$LIBC' and sym like '%umount%'),
  (select count(*) from stack_profile_mapping where name like '%[inode %'),
  (select group_concat(n, ' ') from (select distinct '/' || ltrim(name, '/') as n from stack_profile_mapping where name != '/kernel' and name not like '%[%'))
" >"$W/tp.out" 2>"$W/tp.err"
	IFS='|' read -ra r <"$W/tp.out"
	[[ -s $W/tp.err ]] && sed 's/^/# tp: /' "$W/tp.err"
	# Debian's umount has no frame pointers: the walk seldom reaches it.
	note "$who: ${r[0]:-?} samples in umount, ${r[1]:-?} with a frame in $UMOUNT, ${r[2]:-?} in $LIBC's umount2, ${r[3]:-?} mappings unresolved"
	gt0 "${r[0]:-}" "$who, trace_processor: kfree samples inside umount (do_umount / path_umount)"
	if [ "$who" = root ]; then
		gt0 "${r[2]:-}" "$who, trace_processor: of them, samples with a user frame in mapping $LIBC (its path, resolved after the process exited) named umount2 by ModuleSymbols"
	else
		# The loop is root's (mount needs it): a member's samples of
		# another user's task keep their kernel frames only, and say so
		# (docs/security.md, "What a member sees").
		eq "${r[2]:-x}" 0 "$who, trace_processor: root's loop's samples have no user frame in $LIBC (another user's task)"
		n=$(tp_value "$f" "select count(*) from perf_sample where unwind_error is not null")
		gt0 "$n" "$who, trace_processor: the samples left without user frames carry an unwind_error"
	fi
	eq "${r[3]:-x}" 0 "$who, trace_processor: no mapping kept its [inode ... dev ...] name"
	names=${r[4]:-}
	n=0
	for m in $names; do
		# A file mapped only in the loop's mount namespace is named from
		# that namespace's root (docs/stacks.md): in tools/vm's guest, the
		# host's root is /newroot there.
		[[ -e $m || -e /${m#/*/} ]] || { note "mapping $m does not exist"; n=$((n + 1)); }
	done
	# A member's file may hold no user mapping at all (see above).
	[[ ( -n $names || $who != root ) && $n == 0 ]]
	eq "$?" 0 "$who: every user mapping's path is a file that exists ($(echo "$names" | wc -w) of them)"
	n=$(tp_value "$f" "select count(*) from stats where name like 'stackprofile%' and value > 0")
	eq "$n" 0 "$who, trace_processor: no stackprofile_* error in stats"
}

note "--- root"
if run root "$W/root.pftrace"; then
	check_trace root "$W/root.pftrace"
fi

note "--- member (uid $MEMBER, group pbtrace)"
if [ -z "$GID" ]; then
	GID=4242
	cp /etc/group "$W/etc-group"
	echo "pbtrace:x:$GID:" >>"$W/etc-group"
	mount --bind "$W/etc-group" /etc/group && group_mounted=1
fi
echo "$GID" >$PARAM/group
mkdir "$W/m"
chown $MEMBER:$MEMBER "$W/m"
chmod 755 "$W"
# The member's tracectl reads tracefs, which is root's: it gets a copy of
# kfree's format and id, bind-mounted in a mount namespace of its own
# (what a member can do in unshare -Urm, issue 22, 2). And perf's policy
# allows what the member asks for (for when the kernel applies it).
T=/sys/kernel/tracing
mkdir -p "$W/tracing/events/kmem/kfree"
cp $T/available_events "$W/tracing/"
cp $T/events/kmem/kfree/format $T/events/kmem/kfree/id "$W/tracing/events/kmem/kfree/"
chmod -R a+rX "$W/tracing"
old_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
echo -1 >/proc/sys/kernel/perf_event_paranoid
# member_ns CMD...: CMD as the member, with that copy as its tracefs.
member_ns() {
	unshare -m sh -c 'mount --bind "$0" '"$T"' && exec "$@"' "$W/tracing" \
		setpriv --reuid=$MEMBER --regid=$MEMBER --groups="$GID" --inh-caps=-all "$@"
}
if run member "$W/m/member.pftrace" member_ns; then
	check_trace member "$W/m/member.pftrace"
fi
echo "$old_paranoid" >/proc/sys/kernel/perf_event_paranoid

echo "1..$N"
[ "${FAILED:-0}" = 0 ]
