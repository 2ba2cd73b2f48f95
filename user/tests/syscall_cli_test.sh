#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tracectl trace and report's bad input, on the host (TAP, run by 'make -C
# user test'; no module needed: every case is refused before netlink):
# one clear line each, naming what was wrong, exit 1; and report of a
# file that is no trace, of a file cut inside a packet, of a missing file.

USER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$USER_DIR/../selftests/pbtrace/tap.sh"
[[ ${SAN:-} == 1 ]] && B=$USER_DIR/build-san || B=$USER_DIR/build
T=$B/tracectl
W=$(mktemp -d /tmp/syscall_cli_test.XXXXXX)
trap 'rm -rf "$W"' EXIT

# refused ARGS... :: WANT: exit 1 and exactly one line on stderr with WANT
refused() {
	local args=() want rc
	while [[ $1 != :: ]]; do args+=("$1"); shift; done
	want=$2
	"$T" "${args[@]}" >"$W/out" 2>"$W/err"
	rc=$?
	if [[ $rc == 1 && $(wc -l <"$W/err") == 1 ]] && grep -qF -- "$want" "$W/err"; then
		ok "tracectl ${args[*]}: exit 1, one line: $want"
	else
		not_ok "tracectl ${args[*]}: exit 1, one line: $want (exit $rc)"
		sed 's/^/#   /' "$W/err"
	fi
}

refused trace :: "trace what?"
refused trace -p 1 -- true :: "-p and -- CMD exclude each other"
refused trace -a -e nosuchcall :: "unknown syscall 'nosuchcall'"
refused trace -a --duration soon :: "--duration wants milliseconds"
refused trace -a -t never :: "-t wants a duration"
refused trace -a -p 0 :: "-p wants a process or thread id"
refused report -e '!' x.pftrace :: "-e wants syscall names"
refused report --duration -1 x.pftrace :: "--duration wants milliseconds"
refused report :: "report wants one trace file"
refused report /nonexistent.pftrace :: "cannot open /nonexistent.pftrace"
printf '\x0a\x02\xff\xff\x12\x00' >"$W/junk.pftrace"
refused report "$W/junk.pftrace" :: "is not a valid trace from byte 0"

# a packet cut short at the end: a warning, the rest shown, exit 0
printf '\x0a\x05\x01\x02' >"$W/cut.pftrace"
"$T" report "$W/cut.pftrace" >"$W/out" 2>"$W/err"
rc=$?
check "report of a file cut inside a packet: exit 0 and says where (exit $rc)" \
	eval 'test "$rc" = 0 && grep -q "ends inside a packet at byte 0" "$W/err"'

echo "1..$N"
exit $FAILED
