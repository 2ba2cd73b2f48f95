#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The analysis of multimachine_test.sh must fail what is wrong, not only
# pass what is right: mm_synth.py writes two-machine traces with one thing
# broken at a time, protoc encodes them with Perfetto's schema and decodes
# them back (the path real recordings take), and mm_check.py must pass the
# good one and name each fault. Needs no module; runs anywhere with
# python3 and protoc (tools/check runs it in its main guest).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$HERE/../../../shared/perfetto}
W=$(mktemp -d /tmp/mm_check_test.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
INFO=(n=20 ping_pid=77 echo_pid=55 name=guest2 sysname=Linux release=6.1.0 machine=x86_64)

protoc -I "$SCHEMA" -o "$W/schema.pb" perfetto_trace.proto || {
	not_ok "protoc compiles Perfetto's schema from $SCHEMA"
	echo "1..$N"
	exit 1
}
# CASE MODE: mm_check.py's output for that synthetic trace in $W/CASE.out.
run() {
	/usr/bin/python3 "$HERE/mm_synth.py" "$1" >"$W/$1.txt" &&
		protoc --descriptor_set_in="$W/schema.pb" --encode=perfetto.protos.Trace \
			perfetto_trace.proto <"$W/$1.txt" >"$W/$1.pb" &&
		protoc --descriptor_set_in="$W/schema.pb" --decode=perfetto.protos.Trace \
			perfetto_trace.proto <"$W/$1.pb" >"$W/$1.dec" || return 1
	if [[ $2 = all ]]; then
		/usr/bin/python3 "$HERE/mm_check.py" all "$W/$1.dec" "${INFO[@]}"
	else
		/usr/bin/python3 "$HERE/mm_check.py" hostonly "$W/$1.dec"
	fi >"$W/$1.out" 2>&1
	grep -qx DONE "$W/$1.out"
}
# expect CASE MODE PATTERN...: each pattern must be a FAIL line.
expect_fail() {
	local c=$1 mode=$2 p miss=0
	shift 2
	run "$c" "$mode" || { not_ok "$c: mm_check.py ran to the end"; return; }
	for p; do
		grep -q "^FAIL .*$p" "$W/$c.out" || { miss=1; echo "# $c: no FAIL for '$p'"; }
	done
	if ((miss)); then
		sed 's/^/#   /' "$W/$c.out"
		not_ok "$c: mm_check.py names the fault"
	else
		ok "$c: mm_check.py names the fault ($(grep -c '^FAIL' "$W/$c.out") FAIL lines)"
	fi
}

if run good all && ! grep -q '^FAIL' "$W/good.out"; then
	ok "good: every check passes ($(grep -c '^PASS' "$W/good.out") PASS lines)"
else
	sed 's/^/#   /' "$W/good.out"
	not_ok "good: every check passes"
fi
expect_fail clock all "causality" "agree: some offset satisfies all" \
	"trace_processor's offset of the lowest-RTT round"
expect_fail biased all "one ordered round"
expect_fail nosync all "follows a RemoteClockSync"
expect_fail steps all "one RemoteClockSync for the guest"
expect_fail guestclock all "no clock_snapshot stamped with the guest's machine_id"
expect_fail identity all "guest system_info name is 'guest2'"
expect_fail leak hostonly "no packet carries a machine_id"
echo "1..$N"
exit $FAILED
