#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tracing without root (docs/security.md): members of the module's group=
# gid start, stop and read their own sessions through tracectl and root's
# traced, and get a valid trace owned by them; a non-member is refused
# with a message naming the group; a member cannot touch another user's
# session, ask for relayed machines or more than group_max_kb, nor make
# traced (root) write a file the member could not write itself. Run in a
# guest with pbtrace.ko loaded, as root:
#   tools/vm -- selftests/pbtrace/group_test.sh
# Users are uids with no passwd entry (setpriv); the group is pbtrace, the
# installed one or one a bind-mounted /etc/group adds (/etc is read-only).
# Prints TAP.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
schema=${PBTRACE_SCHEMA_DIR:-$top/../shared/perfetto}
bin=${PBTRACE_USER_BUILD:-$top/user/build}
tracectl=$bin/tracectl
traced=$bin/traced
cmd=$here/build/session_cmd
param=/sys/module/pbtrace/parameters
# The group: the installed pbtrace group (make install, DKMS), else gid
# 4242, named pbtrace in a bind-mounted copy of /etc/group.
GID=$(getent group pbtrace | cut -d: -f3)
M1=4201 M2=4202 OUT=4203	# two members and an outsider
. "$here/tap.sh"
. "$here/tp.sh"

W=$(mktemp -d /tmp/group.XXXXXX)
traced_pid=
group_mounted=
old_group=$(cat $param/group 2>/dev/null)

cleanup() {
	[ -n "$traced_pid" ] && kill "$traced_pid" 2>/dev/null && wait "$traced_pid" 2>/dev/null
	"$tracectl" stop -n rootsess >/dev/null 2>&1
	[ -n "$old_group" ] && echo "$old_group" >$param/group
	[ -n "$group_mounted" ] && umount /etc/group
	rm -rf "$W"
}
trap cleanup EXIT

note() { echo "# $*"; }

# as UID [GROUPS] -- CMD...: CMD as that uid (gid = uid) with no capability.
as() {
	local uid=$1 groups=$2
	shift 3
	if [ -n "$groups" ]; then
		setpriv --reuid="$uid" --regid="$uid" --groups="$groups" --inh-caps=-all "$@"
	else
		setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all "$@"
	fi
}

# expect CODE NAME CMD...: CMD exits with CODE; its output in $W/out.
expect() {
	local want=$1 name=$2 rc
	shift 2
	"$@" >"$W/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then
		ok "$name (exit $rc)"
	else
		not_ok "$name (exit $rc, want $want)"
		sed 's/^/#   /' "$W/out"
	fi
}

# says PATTERN NAME: the last command's output matches PATTERN.
says() {
	if grep -Eq -- "$1" "$W/out"; then
		ok "$2"
	else
		not_ok "$2: no /$1/ in:"
		sed 's/^/#   /' "$W/out"
	fi
}

start_traced() {
	"$traced" >"$W/traced.log" 2>&1 &
	traced_pid=$!
	wait_for 100 grep -q ready "$W/traced.log" && return 0
	note "traced did not come up:"
	sed 's/^/#   /' "$W/traced.log"
	return 1
}

# gone ID: the kernel has no session ID any more (traced destroyed it).
gone() { "$cmd" get "$1" 2>&1 | grep -q "No such file"; }

if [ ! -x "$tracectl" ] || [ ! -x "$traced" ] || [ ! -x "$cmd" ] ||
   [ ! -r "$schema/perfetto_trace.proto" ]; then
	echo "1..0 # SKIP needs $tracectl, $traced (make user), $cmd (make -C selftests/pbtrace) and $schema"
	exit 0
fi

# The scratch tree: one directory per user, one only root may write, and
# a file of root's that a member must not be able to overwrite.
chmod 755 "$W"
mkdir "$W/m1" "$W/m2" "$W/root"
chown $M1:$M1 "$W/m1"
chown $M2:$M2 "$W/m2"
echo "root's own data" >"$W/root/precious"
chmod 644 "$W/root/precious"
ln -s "$W/root/precious" "$W/m1/link"
if [ -z "$GID" ]; then
	GID=4242
	cp /etc/group "$W/etc-group"
	echo "pbtrace:x:$GID:" >>"$W/etc-group"
	mount --bind "$W/etc-group" /etc/group && group_mounted=1
fi
note "group pbtrace is gid $GID"
start_traced || { not_ok "traced starts"; echo "1..$N"; exit 1; }

# -- no group= set: nobody but root --
echo -1 >$param/group 2>/dev/null
expect 4 "group= unset: a member is refused" as $M1 $GID -- \
	"$tracectl" start -n m1 -e sched/sched_switch -o "$W/m1/t.pftrace"
says "run as root" "the refusal says what to do"

# -- group= set --
check "group= can be set at run time" eval "echo $GID >$param/group"
expect 4 "a non-member is refused" as $OUT "" -- \
	"$tracectl" start -n out -e sched/sched_switch -o /tmp/out.pftrace
says "group 'pbtrace' \(gid $GID\)" "the refusal names the group"
says "usermod -aG pbtrace" "the refusal says how to join"

expect 0 "root starts a session" "$tracectl" start -n rootsess \
	-e sched/sched_switch -b 1024 -o "$W/root/root.pftrace"
root_id=$(sed -n 's/.*(id \([0-9]*\)).*/\1/p' "$W/out")

expect 0 "a member starts a session" as $M1 $GID -- \
	"$tracectl" start -n m1 -e sched/sched_switch -e sched/sched_waking \
	-e sched/sched_process_fork -b 2048 -o "$W/m1/t.pftrace"
m1_id=$(sed -n 's/.*(id \([0-9]*\)).*/\1/p' "$W/out")
expect 0 "the member sees its session" as $M1 $GID -- "$tracectl" status
says "^m1 +id $m1_id +started" "status shows the member's session started"
if grep -q rootsess "$W/out"; then
	not_ok "the member does not see root's session"
else
	ok "the member does not see root's session"
fi

# -- what a member may not do --
# Another user's session is answered as a missing one (ENOENT): a member
# learns neither which ids are live nor whose they are.
expect 2 "a member cannot stop root's session" as $M1 $GID -- "$cmd" stop "$root_id"
says "no session with this id" "the refusal is the one for a missing session"
if grep -q "uid 0" "$W/out"; then
	not_ok "the refusal does not name the owner"
else
	ok "the refusal does not name the owner"
fi
expect 2 "a member cannot destroy root's session" as $M1 $GID -- "$cmd" destroy "$root_id"
expect 2 "another member cannot stop the member's session" as $M2 $GID -- "$cmd" stop "$m1_id"
says "no session with this id" "the refusal is the one for a missing session"
expect 2 "another member cannot read the member's session" as $M2 $GID -- "$cmd" get "$m1_id"
expect 4 "a member cannot record relayed machines" as $M2 $GID -- \
	"$tracectl" start -n m2m -e sched/sched_switch -m web1 -o "$W/m2/m.pftrace"
says "relayed machines .* need CAP_SYS_ADMIN" "the refusal says why"
expect 1 "a member cannot take more than group_max_kb" as $M2 $GID -- \
	"$tracectl" start -n m2big -e sched/sched_switch -b 131072 -o "$W/m2/big.pftrace"
says "group_max_kb" "the refusal names the limit"
# A tracepoint pbtrace.ko has no encoder for needs its tracefs layout, and
# tracefs is root's (0700): refused before the kernel is asked.
expect 4 "a member cannot record a tracepoint without a native encoder" as $M2 $GID -- \
	"$tracectl" start -n m2tp -e signal/signal_generate -o "$W/m2/tp.pftrace"
says "signal_generate/format: Permission denied: tracefs is root's; run as root" \
	"the refusal says tracefs is root's"

# traced writes as the session's owner: a path the member cannot write
# fails, even past tracectl's own check (session_cmd asks the kernel
# directly), and root's file is untouched.
id=$(as $M1 $GID -- "$cmd" new m1bad "$W/root/x.pftrace" 2>"$W/out")
check "the kernel takes a member's session into root's directory" test -n "$id"
check "traced ends it" wait_for 100 gone "${id:-0}"
check "traced wrote nothing there" test ! -e "$W/root/x.pftrace"
grep "m1bad" "$W/traced.log" >"$W/out"
says "as its owner \(uid $M1, gid $M1\): Permission denied" "traced says as whom it could not open it"
id=$(as $M1 $GID -- "$cmd" new m1link "$W/m1/link" 2>"$W/out")
check "the kernel takes a member's session into a symlink to root's file" test -n "$id"
check "traced ends that one too" wait_for 100 gone "${id:-0}"
check "root's file is untouched" grep -qx "root's own data" "$W/root/precious"

# -- the member stops its session and reads the trace --
as $M1 $GID -- sh -c 'for i in $(seq 50); do /bin/true; done'
expect 0 "the member stops its session and waits for the file" as $M1 $GID -- \
	"$tracectl" stop -n m1 --wait
says "traced finished the file" "stop --wait says the file is finished"
f=$W/m1/t.pftrace
check "the trace file is the member's" test "$(stat -c %u:%g "$f" 2>/dev/null)" = "$M1:$M1"
if protoc -I "$schema" --decode=perfetto.protos.Trace perfetto_trace.proto \
	<"$f" >"$f.txt" 2>"$W/decode.err" && grep -q 'sched_switch {' "$f.txt"; then
	ok "Perfetto's schema decodes the member's trace, with sched_switch"
	tp_file ok not_ok "member trace" "$f"
else
	not_ok "Perfetto's schema decodes the member's trace, with sched_switch"
	sed 's/^/#   /' "$W/decode.err"
fi

expect 0 "the member records for a second" as $M1 $GID -- \
	"$tracectl" record -t 1s -n m1rec -e sched/sched_switch -b 1024 -o "$W/m1/rec.pftrace"
says "sched_switch" "record's summary counts the member's events"
check "the recorded file is the member's" test "$(stat -c %u "$W/m1/rec.pftrace" 2>/dev/null)" = "$M1"

# After all that, traced is root again: root's file in a directory only
# its owner (M2, mode 0700) may enter needs CAP_DAC_OVERRIDE back.
chmod 700 "$W/m2"
expect 0 "root still records into another user's private directory" \
	"$tracectl" record -t 1s -n rootrec -e sched/sched_switch -b 1024 -o "$W/m2/root.pftrace"
check "that file is root's" test "$(stat -c %u "$W/m2/root.pftrace" 2>/dev/null)" = 0

expect 0 "root stops its own session" "$tracectl" stop -n rootsess --wait
echo "1..$N"
exit $FAILED
