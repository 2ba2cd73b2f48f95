#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Data-plane tests, part 2 (part 1: dataplane_test.sh): two sessions at
# once, CPU hotplug, every event field for field against ftrace, events
# too large for a chunk, reader death, privileges, unload with a started
# session. Run in a guest with pbtrace.ko loaded. Prints TAP.
set -u
. "$(dirname "$0")/dataplane_lib.sh"

preflight

section two
# Two sessions on the same events, each gets what it asked for.
if "$rec" two "$tmp/a.pftrace" "$tmp/b.pftrace" 300 > "$tmp/two.info" 2> "$tmp/two.err"; then
	if decode "$tmp/a.pftrace" "$tmp/a.txt" && decode "$tmp/b.pftrace" "$tmp/b.txt"; then
		ok "two sessions: both files decode with Perfetto's schema"
		/usr/bin/python3 "$here/dp_check.py" two "$tmp/a.txt" "$tmp/b.txt" \
			"$tmp/two.info" > "$tmp/two.check" 2>&1
		tap_checks "two sessions" < "$tmp/two.check"
	else
		not_ok "two sessions: protoc cannot decode: $(head -c 300 "$tmp"/[ab].txt.err)"
	fi
else
	not_ok "two sessions: dp_record failed: $(cat "$tmp/two.err")"
fi

section hotplug
# A CPU going offline mid-session keeps its data, readable at once.
if [ ! -w /sys/devices/system/cpu/cpu1/online ]; then
	not_ok "hotplug: cpu1 cannot go offline here (need 2 CPUs)"
else
	REC=(hotplug "$tmp/hotplug.pftrace" 200)
	record_check hotplug hotplug
fi

section recurse
# A probe re-entered from inside the writer (fault injection) is dropped
# and counted in lost_nmi, exactly; the real events are all there.
param=/sys/module/pbtrace/parameters/fault_recurse
if [ -w "$param" ]; then
	echo 1 > "$param"
	REC=(exact "$tmp/recurse.pftrace" ring 300)
	DP_SIZE_KB=1024 record_check recurse recurse
	echo 0 > "$param"
else
	not_ok "recurse: $param missing"
fi

section all
# Every event; field for field against the kernel's own ftrace, same run.
all_events "all events"

section toolarge
# An event that cannot fit an empty chunk is counted, not written: exec of
# a path longer than a 4 KiB chunk.
long=$tmp
while [ ${#long} -lt 3800 ]; do long=$long/$(printf '%0250d' 0); done
long=$long/$(printf '%0*d' $((4080 - ${#long} - 1)) 0)
if mkdir -p "${long%/*}" && cp /bin/true "$long" &&
	DP_CHUNK_KB=4 "$rec" run "$tmp/big.pftrace" sched/sched_process_exec \
		"/bin/true; $long" > "$tmp/big.info" 2> "$tmp/big.err" &&
	decode "$tmp/big.pftrace" "$tmp/big.txt"; then
	# Every exec of the guest is recorded (the runner's heartbeat may
	# exec too): the short one must be there, the long one must not.
	n_true=$(grep -c 'filename: "/bin/true"' "$tmp/big.txt")
	n_long=$(grep -c "filename: \"$long\"" "$tmp/big.txt")
	[ "$(sed -n 's/^lost_too_large=//p' "$tmp/big.info")" = 1 ] && [ "$n_true" = 1 ] && [ "$n_long" = 0 ]
	result $? "an event larger than a chunk counts in lost_too_large ($(grep lost_too_large "$tmp/big.info"), /bin/true's exec kept $n_true, the long one's $n_long)"
else
	not_ok "too large: setup or record failed: $(cat "$tmp/big.err")"
fi

section reattach
# Readers die and come back; bad requests are refused with a reason.
if "$rec" reattach > "$tmp/ra" 2> "$tmp/ra.err"; then
	grep -q '^reget=same$' "$tmp/ra"
	result $? "a chunk held by a reader that closed comes back unread"
	grep -q '^put_unheld=refused$' "$tmp/ra" && grep -q '^put_twice=refused$' "$tmp/ra"
	result $? "PUT_CHUNK of a chunk this fd does not hold is refused"
	grep -q '^put_held=accepted$' "$tmp/ra"
	result $? "PUT_CHUNK of a held chunk works"
	grep -q '^open_missing=no such session' "$tmp/ra"
	result $? "attach to a missing session says so ($(grep open_missing "$tmp/ra"))"
	grep -q '^open_bad_buffer=session .* has no buffer 3' "$tmp/ra"
	result $? "attach to a missing buffer says so ($(grep open_bad_buffer "$tmp/ra"))"
else
	not_ok "reattach: dp_record failed: $(cat "$tmp/ra.err")"
fi

# Only CAP_SYS_ADMIN (or CAP_PERFMON) may read trace data.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$rec" open 2>&1)
case $out in "open=permission denied: need CAP_SYS_ADMIN"*) r=0 ;; *) r=1 ;; esac
result $r "an unprivileged user cannot open /dev/pbtrace (${out#open=})"
out=$(setpriv --bounding-set=-sys_admin,-perfmon "$rec" open 2>&1)
case $out in "open=permission denied: need CAP_SYS_ADMIN"*) r=0 ;; *) r=1 ;; esac
result $r "root without CAP_SYS_ADMIN/CAP_PERFMON cannot open it (${out#open=})"

# Last: unloading with a started session stops it cleanly (tools/vm fails
# the run on any WARNING), then the module comes back for later tests.
if [ -n "${DP_NO_UNLOAD:-}" ]; then
	echo "# unload test skipped (DP_NO_UNLOAD)"
elif "$rec" leave > "$tmp/leave" 2>&1 && rmmod pbtrace; then
	ok "rmmod with a started session"
	out=$("$rec" open 2>&1)
	case $out in "open=pbtrace module not loaded"*) r=0 ;; *) r=1 ;; esac
	result $r "without the module the reader says so (${out#open=})"
	ko=${PBTRACE_KO:-$top/pbtrace.ko}
	if [ -e "$ko" ]; then insmod "$ko"; else modprobe pbtrace; fi
	result $? "module loads again after that"
else
	not_ok "rmmod with a started session: $(cat "$tmp/leave")"
fi


plan
