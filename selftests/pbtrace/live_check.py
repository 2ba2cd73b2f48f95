#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A live tracer's lines against what live_work did (live_trace_test.sh).

  live_check.py NAME LINES WORKLOG ROUNDS [--assert]

LINES: line_stamp's output of the tracer ("boottime_ns line"); WORKLOG:
live_work's ("fd boottime_ns", the time each close returned). A line of
close(10000 + k) is the k-th call: thread a's and b's alternate, each
made after the other's returned, on two CPUs.

With --assert (tracectl trace): every call has exactly one line, and the
lines come in the calls' order (their real-time order, across CPUs).
Without (perf trace): the same, said as figures only. Both: how long
after the call returned its line arrived, p50/p99/max, as a "FIG" line.
Prints "PASS name" / "FAIL name: why" / "# ..." lines, then DONE.
"""
import re
import sys

FD_BASE = 10000
CLOSE = re.compile(r'close\(fd: (\d+)')


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(len(vals) * p / 100))] if vals else 0


def main():
    name, lines, worklog, rounds = sys.argv[1:5]
    strict = '--assert' in sys.argv[5:]
    n = 2 * int(rounds)
    ret = {}
    for line in open(worklog):
        fd, t = line.split()
        ret[int(fd)] = int(t)
    seen = []
    arrive = {}
    for line in open(lines, errors='replace'):
        t, _, text = line.partition(' ')
        m = CLOSE.search(text)
        if not m:
            continue
        fd = int(m.group(1))
        if FD_BASE <= fd < FD_BASE + n:
            seen.append(fd)
            arrive.setdefault(fd, int(t))
    want = list(range(FD_BASE, FD_BASE + n))
    missing = sorted(set(want) - set(seen))
    dups = len(seen) - len(set(seen))
    complete = not missing and not dups and len(ret) == n
    ordered = seen == want
    first_bad = next((i for i, (a, b) in enumerate(zip(seen, want)) if a != b), None)
    lat = [(arrive[fd] - ret[fd]) / 1e6 for fd in arrive if fd in ret]
    why_c = '%d of %d calls without a line, %d twice, %d in the log' % (
        len(missing), n, dups, len(ret))
    why_o = 'line %s is close(%s), the call order says close(%s)' % (
        first_bad, seen[first_bad] if first_bad is not None else '-',
        want[first_bad] if first_bad is not None and first_bad < n else '-')
    if strict:
        print(('PASS ' if complete else 'FAIL ') +
              '%s: a line for each of the %d calls, once%s' %
              (name, n, '' if complete else ': ' + why_c))
        print(('PASS ' if ordered else 'FAIL ') +
              '%s: lines in the calls\' order across both CPUs%s' %
              (name, '' if ordered else ': ' + why_o))
    else:
        print('# %s: %d of %d calls have a line, %s' %
              (name, len(set(seen)), n,
               'in the calls\' order' if ordered else 'not in order (' + why_o + ')'))
    if lat:
        print('FIG %s lines=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f' %
              (name, len(lat), pct(lat, 50), pct(lat, 99), max(lat)))
    print('DONE')


if __name__ == '__main__':
    main()
