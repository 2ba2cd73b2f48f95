#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Other users' strings and user stacks are not a member's (issue 22, 5;
# docs/security.md, "What a member sees"). Root and a member (uid 4212,
# pbtrace group, perf_event_paranoid -1 so perf lets it sample) each
# record openat's strings (raw_syscalls with the openat filter) and
# --stacks on syscalls:sys_enter_openat, at the same time, while root's
# program and the member's each open a path of their own 5 times (strace
# is the referee of what was opened). Then trace_processor, and protoc
# with Perfetto's schema:
# - the member's file has its own path 5 times and no byte of root's;
#   root's opens are there as sys_enter_openat with filename_omitted = 1;
#   the member's samples have user frames, root's samples only kernel
#   frames and unwind_error set;
# - root's file has both paths and both programs' user frames.
# Prints TAP.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
W=$(mktemp -d /tmp/member_privacy.XXXXXX)
LOG=$W/traced.log
TRACED=
PARAM=/sys/module/pbtrace/parameters
MEMBER=4212
OPENS=5
. "$HERE/tap.sh"
. "$HERE/traced_lib.sh"

N=0
GID=$(getent group pbtrace | cut -d: -f3)
group_mounted=
old_group=$(cat $PARAM/group 2>/dev/null)
old_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)

traced_begin
cleanup() {
	stop_traced
	echo "$old_paranoid" >/proc/sys/kernel/perf_event_paranoid
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

gt0() {
	if [[ $1 =~ ^[0-9]+$ && $1 -gt 0 ]]; then
		ok "$2 ($1)"
	else
		not_ok "$2 (got '$1')"
	fi
}

if [ -z "$GID" ]; then
	GID=4242
	cp /etc/group "$W/etc-group"
	echo "pbtrace:x:$GID:" >>"$W/etc-group"
	mount --bind "$W/etc-group" /etc/group && group_mounted=1
fi
echo "$GID" >$PARAM/group
echo -1 >/proc/sys/kernel/perf_event_paranoid
chmod 755 "$W"
mkdir "$W/m"
chown $MEMBER:$MEMBER "$W/m"

# Paths no one else opens: root's, and the member's.
ROOT_PATH=$W/root-secret-$RANDOM$RANDOM
MEM_PATH=$W/m/member-own-$RANDOM$RANDOM
ROOT_TAG=${ROOT_PATH##*/}
MEM_TAG=${MEM_PATH##*/}

# The member's tracectl reads tracefs, which is root's: a copy of the
# formats and ids it needs, bind-mounted in a mount namespace of its own
# (as stacks_umount_test.sh does).
T=/sys/kernel/tracing
[ -r $T/events/syscalls/sys_enter_openat/id ] || T=/sys/kernel/debug/tracing
for e in syscalls/sys_enter_openat raw_syscalls/sys_enter raw_syscalls/sys_exit; do
	mkdir -p "$W/tracing/events/$e"
	cp $T/events/$e/format $T/events/$e/id "$W/tracing/events/$e/"
done
cp $T/available_events "$W/tracing/"
chmod -R a+rX "$W/tracing"
as_member() {
	setpriv --reuid=$MEMBER --regid=$MEMBER --groups="$GID" --inh-caps=-all "$@"
}
member_ns() {
	unshare -m sh -c 'mount --bind "$0" '"$T"' && exec "$@"' "$W/tracing" \
		setpriv --reuid=$MEMBER --regid=$MEMBER --groups="$GID" --inh-caps=-all "$@"
}

cat >"$W/c.pbtx" <<EOF
buffers { size_kb: 4096 }
data_sources { config { name: "linux.ftrace" target_buffer: 0
  ftrace_config { syscall_events: "sys_openat" } } }
data_sources { config { name: "linux.perf" target_buffer: 0
  perf_event_config { timebase { period: 1 tracepoint { name: "syscalls:sys_enter_openat" } }
    callstack_sampling { kernel_frames: true } } } }
EOF
chmod 644 "$W/c.pbtx"

# opener PATH LOG: open PATH $OPENS times (ENOENT), under strace when it
# is there (its log LOG.I). The path is in the environment, not in argv:
# the process tree traced writes when it sees the session start is every
# process's command line, as /proc shows it to any user (docs/security.md),
# and on a loaded machine that can be after the opens began.
STRACE=$(command -v strace)
opener() {
	local i=0
	while [ $i -lt "$OPENS" ]; do
		P=$1 ${STRACE:+$STRACE -qq -e trace=openat -o "$2.$i"} \
			bash -c ': <"$P"' 2>/dev/null
		i=$((i + 1))
	done
}

tctl start -c "$W/c.pbtx" -o "$W/root.pftrace" -n prroot >"$W/rs.log" 2>&1
eq "$?" 0 "root's session starts ($(tail -n 1 "$W/rs.log"))"
member_ns "$U/tracectl" start -c "$W/c.pbtx" -o "$W/m/member.pftrace" -n prmem \
	>"$W/ms.log" 2>&1
eq "$?" 0 "the member's session starts ($(tail -n 1 "$W/ms.log"))"

opener "$ROOT_PATH" "$W/root.st"
as_member bash -c "$(declare -f opener); OPENS=$OPENS STRACE=$STRACE; opener '$MEM_PATH' '$W/m/mem.st'"

if [ -n "$STRACE" ]; then
	n=$(cat "$W"/root.st.* 2>/dev/null | grep -c "\"$ROOT_PATH\"")
	eq "$n" "$OPENS" "strace: root's program opened its path $OPENS times"
	n=$(cat "$W"/m/mem.st.* 2>/dev/null | grep -c "\"$MEM_PATH\"")
	eq "$n" "$OPENS" "strace: the member's program opened its path $OPENS times"
else
	ok "strace: referee of the opens # SKIP no strace in the guest"
fi

member_ns "$U/tracectl" stop -n prmem --wait >"$W/mstop.log" 2>&1
eq "$?" 0 "the member's session stops ($(tail -n 1 "$W/mstop.log"))"
tctl stop -n prroot --wait >"$W/rstop.log" 2>&1
eq "$?" 0 "root's session stops ($(tail -n 1 "$W/rstop.log"))"

# paths FILE TAG: sys_enter_openat events whose filename holds TAG.
paths() {
	tp_value "$1" "select count(*) from ftrace_event e join args a using (arg_set_id)
		where e.name = 'sys_enter_openat' and a.key = 'filename'
		and a.display_value like '%$2%'"
}

# tids FILE TAG: the tasks whose openat's filename holds TAG, comma-joined.
tids() {
	tp_value "$1" "select group_concat(distinct t.tid) from ftrace_event e
		join thread t using (utid) join args a using (arg_set_id)
		where e.name = 'sys_enter_openat' and a.key = 'filename'
		and a.display_value like '%$2%'"
}

# omitted FILE PIDS: root's opens written as filename_omitted = 1.
omitted() {
	tp_value "$1" "select count(*) from ftrace_event e join thread t using (utid)
		join args a using (arg_set_id)
		where e.name = 'sys_enter_openat' and a.key = 'filename_omitted'
		and a.int_value = 1 and t.tid in ($2)"
}

# samples FILE PIDS: "samples|with a user frame|with unwind_error" of PIDS.
samples() {
	tp_query "$1" "
with recursive up(sample, cs) as (
  select ps.id, ps.callsite_id from perf_sample ps join thread t using (utid)
  where t.tid in ($2)
  union all
  select up.sample, c.parent_id from up join stack_profile_callsite c on c.id = up.cs
  where c.parent_id is not null
), user as (
  select distinct up.sample from up join stack_profile_callsite c on c.id = up.cs
  join stack_profile_frame f on f.id = c.frame_id
  join stack_profile_mapping m on m.id = f.mapping
  where m.name not in ('/kernel', 'kernel')
)
select (select count(*) from perf_sample ps join thread t using (utid) where t.tid in ($2)),
  (select count(*) from user),
  (select count(*) from perf_sample ps join thread t using (utid)
   where t.tid in ($2) and ps.unwind_error is not null)"
}

check_files() {
	local r m
	if ! tp_available; then
		ok "trace_processor checks # SKIP $TP_WHY"
		return
	fi
	decode "$W/m/member.pftrace"
	decode "$W/root.pftrace"
	# Which tasks opened which path: root's file has both (checked below).
	RPIDS=$(tids "$W/root.pftrace" "$ROOT_TAG")
	MPIDS=$(tids "$W/root.pftrace" "$MEM_TAG")
	note "root's openers: ${RPIDS:=-1}; the member's: ${MPIDS:=-1}"
	note "--- the member's file"
	eq "$(paths "$W/m/member.pftrace" "$MEM_TAG")" "$OPENS" \
		"member, trace_processor: its own path in filename $OPENS times"
	eq "$(paths "$W/m/member.pftrace" "$ROOT_TAG")" 0 \
		"member, trace_processor: root's path in no filename"
	eq "$(grep -c "$ROOT_TAG" "$W/m/member.pftrace.txt")" 0 \
		"member, protoc: root's path nowhere in the decoded file"
	eq "$(grep -ac "$ROOT_TAG" "$W/m/member.pftrace")" 0 \
		"member: root's path in no byte of the file"
	# Every openat of root's openers (ld.so's and locale's too), as root's
	# file has them with their paths.
	n=$(tp_value "$W/root.pftrace" "select count(*) from ftrace_event e
		join thread t using (utid) join args a using (arg_set_id)
		where e.name = 'sys_enter_openat' and a.key = 'filename'
		and t.tid in ($RPIDS)")
	[[ $n -ge $OPENS ]] || n="at least $OPENS"
	eq "$(omitted "$W/m/member.pftrace" "$RPIDS")" "$n" \
		"member, trace_processor: each of root's openers' openats is there, filename_omitted = 1"
	eq "$(omitted "$W/m/member.pftrace" "$MPIDS")" 0 \
		"member, trace_processor: none of its own opens omitted"
	IFS='|' read -ra m < <(samples "$W/m/member.pftrace" "$MPIDS")
	note "member's file, member's openers: ${m[*]:-?} (samples|user|unwind_error)"
	gt0 "${m[1]:-}" "member, trace_processor: its own samples have user frames"
	eq "${m[2]:-x}" 0 "member, trace_processor: its own samples have no unwind_error"
	IFS='|' read -ra r < <(samples "$W/m/member.pftrace" "$RPIDS")
	note "member's file, root's openers: ${r[*]:-?}"
	gt0 "${r[0]:-}" "member, trace_processor: root's opens sampled (kernel frames)"
	eq "${r[1]:-x}" 0 "member, trace_processor: no user frame of root's program"
	eq "${r[2]:-x}" "${r[0]:-y}" "member, trace_processor: each of root's samples has unwind_error"
	gt0 "$(grep -c "unwind_error: UNWIND_ERROR_PTRACE_CALL" "$W/m/member.pftrace.txt")" \
		"member, protoc: unwind_error UNWIND_ERROR_PTRACE_CALL on the samples left without user frames"

	note "--- root's file"
	eq "$(paths "$W/root.pftrace" "$ROOT_TAG")" "$OPENS" \
		"root, trace_processor: root's path $OPENS times"
	eq "$(paths "$W/root.pftrace" "$MEM_TAG")" "$OPENS" \
		"root, trace_processor: the member's path $OPENS times"
	eq "$(grep -c "filename_omitted\|unwind_error" "$W/root.pftrace.txt")" 0 \
		"root, protoc: nothing omitted"
	IFS='|' read -ra r < <(samples "$W/root.pftrace" "$RPIDS")
	IFS='|' read -ra m < <(samples "$W/root.pftrace" "$MPIDS")
	note "root's file: root's openers ${r[*]:-?}, the member's ${m[*]:-?}"
	gt0 "${r[1]:-}" "root, trace_processor: root's samples have user frames"
	gt0 "${m[1]:-}" "root, trace_processor: the member's samples have user frames"
	for f in "$W/m/member.pftrace" "$W/root.pftrace"; do
		eq "$(grep -cE 'str: "0x[0-9a-f]+' "$f.txt")" 0 \
			"${f##*/}, protoc: no interned name is a raw address"
	done
}
check_files

echo "1..$N"
[ "${FAILED:-0}" = 0 ]
