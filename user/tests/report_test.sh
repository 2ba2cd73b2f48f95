#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tracectl report on a file far larger than what it holds (TAP, run by
# 'make -C user test'): tools/bench/tracegen makes REPORT_TEST_MB (default
# 96) MiB from a real 2-CPU trace (tests/fixtures/traces/mcpu.pftrace)
# by repeating its chunks later in time. Every copy holds the seed's
# calls, so the summary must count exactly copies x the seed's getppid
# calls, with nothing said on stderr (no event came too late, no packet
# unreadable), and report's peak RSS must stay under REPORT_TEST_RSS_MB
# (default 48): the file is read in pieces, the events paired as every
# CPU passes them. (Read whole, as report did before, this file took
# more than 1 GiB.) About 10 s under the sanitizers.

USER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOP=$(cd "$USER_DIR/.." && pwd)
. "$TOP/selftests/pbtrace/tap.sh"
[[ ${SAN:-} == 1 ]] && B=$USER_DIR/build-san || B=$USER_DIR/build
T=$B/tracectl
SEED=$USER_DIR/tests/fixtures/traces/mcpu.pftrace
MB=${REPORT_TEST_MB:-96}
RSS_MB=${REPORT_TEST_RSS_MB:-48}
W=$(mktemp -d /tmp/report_test.XXXXXX)
trap 'rm -rf "$W"' EXIT

make -s -C "$TOP/tools/bench" "$TOP/tools/build/bench/tracegen" >/dev/null
COPIES=$("$TOP/tools/build/bench/tracegen" "$SEED" "$W/big.pftrace" "$MB" 2>/dev/null)
check "tracegen made $MB MiB from the seed ($COPIES copies of its chunks)" \
	test -n "$COPIES" -a "$(stat -c %s "$W/big.pftrace" 2>/dev/null || echo 0)" -ge $((MB << 20))

getppid() {	# the all-threads table's getppid calls
	awk '/All threads, per syscall/ { f = 1 } f && $1 == "getppid" { n += $2 } END { print n + 0 }' "$1"
}
"$T" report --summary-only "$SEED" >"$W/seed.out" 2>&1
ONE=$(getppid "$W/seed.out")

# peak RSS of the report, from the kernel's count for the child
# (ASan's quarantine kept small: it would hold freed blocks otherwise)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4 python3 - "$T" "$W/big.pftrace" \
	"$W/big.out" "$W/big.err" >"$W/rss" <<'PY'
import resource, subprocess, sys
t, f, out, err = sys.argv[1:]
rc = subprocess.call([t, "report", "--summary-only", f],
                     stdout=open(out, "w"), stderr=open(err, "w"))
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
read -r RC RSS <"$W/rss"
ALL=$(getppid "$W/big.out")
check "report of $MB MiB: exit 0, nothing said on stderr (exit $RC)" \
	eval 'test "$RC" = 0 && ! test -s "$W/big.err"'
sed 's/^/#   /' "$W/big.err" | head -n 5
check "report of $MB MiB: $COPIES x $ONE getppid calls, as many as the copies hold ($ALL)" \
	test "$ONE" -gt 0 -a "$ALL" = $((COPIES * ONE))
check "report of $MB MiB: peak RSS ${RSS} MiB, under $RSS_MB MiB" \
	test "${RSS:-999999}" -lt "$RSS_MB"

echo "1..$N"
exit $FAILED
