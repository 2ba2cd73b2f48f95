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
printf '\x12\x02\xff\xff\x0a\x00' >"$W/junk.pftrace"
refused report "$W/junk.pftrace" :: "is not a valid trace from byte 0"

# a record whose packet breaks the format, then bytes that are no record:
# both said, with where; exit 1
printf '\x0a\x02\xff\xff\x12\x00' >"$W/junk2.pftrace"
"$T" report "$W/junk2.pftrace" >"$W/out" 2>"$W/err"
rc=$?
check "report of an unreadable packet then junk: exit 1, both said where (exit $rc)" \
	eval 'test "$rc" = 1 && grep -q "1 packet could not be read.*the first, at byte 0, breaks at byte 2 (TracePacket: a field)" "$W/err" &&
		grep -q "is not a valid trace from byte 4 on" "$W/err"'
sed 's/^/#   /' "$W/err"

# A real trace with one chunk broken inside (a byte of an event's length
# made larger than its bundle): that chunk's events are left out and said,
# every other call is shown, exit 1.
FIX=$USER_DIR/tests/fixtures/traces
"$T" report -s "$FIX/mcpu.pftrace" >"$W/good.out" 2>&1
python3 - "$FIX/mcpu.pftrace" "$W/broken.pftrace" <<'PY' >"$W/broken.at"
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
# the 10th record: a kernel chunk (0a, 4-byte length, packet)
off, n = 0, 0
while True:
    assert d[off] == 0x0a
    ln, sh, i = 0, 0, off + 1
    while True:
        ln |= (d[i] & 0x7f) << sh; sh += 7; i += 1
        if d[i - 1] < 0x80: break
    n += 1
    if n == 10: break
    off = i + ln
ev = d.index(b'\x12', i + 20)	# an event's tag inside the bundle
d[ev + 1] = 0x7f		# its length now runs past the chunk
open(sys.argv[2], 'wb').write(d)
print(off)
PY
"$T" report -s "$W/broken.pftrace" >"$W/broken.out" 2>"$W/broken.err"
rc=$?
at=$(cat "$W/broken.at")
check "report of a trace with one broken chunk: exit 1, the chunk's byte said (exit $rc, byte $at)" \
	eval 'test "$rc" = 1 && grep -q "1 packet could not be read and its events are left out: the first, at byte $at, breaks at byte [0-9]* (" "$W/broken.err"'
sed 's/^/#   /' "$W/broken.err"
check "...and the other chunks' calls are shown ($(grep -c ' = ' "$W/broken.out") of $(grep -c ' = ' "$W/good.out") lines)" \
	eval 'test $(grep -c " = " "$W/broken.out") -gt $(( $(grep -c " = " "$W/good.out") * 9 / 10 ))'

# progress: on a terminal, the bytes read of the file's size; when not on
# one, nothing
script -qec "$T report --summary-only $FIX/mcpu.pftrace >/dev/null" /dev/null >"$W/tty.out" 2>&1
check "report on a terminal shows its progress: 'indexing/reading N of 0.3 MiB'" \
	grep -Eq "report: .*mcpu.pftrace: (indexing|reading) [0-9.]+ of 0.3 MiB" "$W/tty.out"
"$T" report --summary-only "$FIX/mcpu.pftrace" >/dev/null 2>"$W/notty.err"
check "report not on a terminal: no progress (stderr empty)" test ! -s "$W/notty.err"
script -qec "$T report $FIX/mcpu.pftrace" /dev/null >"$W/tty2.out" 2>&1
check "report printing its lines to the terminal: no progress between them" \
	eval '! grep -Eq "(indexing|reading) [0-9.]+ of" "$W/tty2.out"'

# a packet cut short at the end: a warning, the rest shown, exit 0
printf '\x0a\x05\x01\x02' >"$W/cut.pftrace"
"$T" report "$W/cut.pftrace" >"$W/out" 2>"$W/err"
rc=$?
check "report of a file cut inside a packet: exit 0 and says where (exit $rc)" \
	eval 'test "$rc" = 0 && grep -q "ends inside a packet at byte 0" "$W/err"'

echo "1..$N"
exit $FAILED
