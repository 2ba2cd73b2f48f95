#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Data-plane tests, part 1: run in a guest with pbtrace.ko loaded, e.g.
#   tools/vm -- selftests/pbtrace/dataplane_test.sh
# Records through the real path (genl session + /dev/pbtrace reader, by
# build/dp_record), decodes with protoc against Perfetto's own schema and
# compares with what the workload did (dp_check.py). Prints TAP.
# Part 2 (dataplane2_test.sh): sessions, hotplug, ftrace, unload.
set -u
. "$(dirname "$0")/dataplane_lib.sh"

# Workload sizes: N forks, K getppid, M pipe round trips; K_EXACT and
# K_STREAM getppid calls into a buffer far too small for them.
N=${DP_FORKS:-10}
K=${DP_GETPPID:-500}
M=${DP_PINGPONG:-100}
K_EXACT=${DP_EXACT:-1000}
K_STREAM=${DP_STREAM:-1000}

preflight

# The device: a char device only root may open.
mode=$(stat -c %a /dev/pbtrace 2>/dev/null)
[ "$mode" = 600 ] && [ -c /dev/pbtrace ]
result $? "/dev/pbtrace is a char device with mode 0600 (is: ${mode:-missing})"

# The mapping is read-only and stays so.
if "$rec" mmap > "$tmp/mmap" 2> "$tmp/mmap.err"; then
	grep -q '^mmap_write=mapped' "$tmp/mmap"
	result $((!$?)) "mmap with PROT_WRITE fails ($(grep mmap_write "$tmp/mmap"))"
	grep -q '^mprotect_write=allowed' "$tmp/mmap"
	result $((!$?)) "mprotect to PROT_WRITE fails ($(grep mprotect_write "$tmp/mmap"))"
	grep -q '^mmap_too_big=mapped' "$tmp/mmap"
	result $((!$?)) "mmap larger than the buffer fails"
else
	not_ok "dp_record mmap: $(cat "$tmp/mmap.err")"
fi

section workload
# A known workload: N forks, K getppid, M pinned pipe round trips.
REC=(workload "$tmp/workload.pftrace" "$N" "$K" "$M")
record_check workload workload

section exact
# Exact loss accounting for both fill policies, drained after stop.
for policy in ring discard; do
	REC=(exact "$tmp/$policy.pftrace" "$policy" "$K_EXACT")
	record_check "$policy" exact "$policy"
done

section stream
# The same with a reader draining while the writer overwrites or refuses.
for policy in ring discard; do
	REC=(stream "$tmp/stream-$policy.pftrace" "$policy" "$K_STREAM")
	record_check "stream-$policy" stream
done

plan
