#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold a live watermark recording (wm_record race) against its chunks.

  wm_check.py DECODED LOG

DECODED is protoc's text decode (Perfetto's schema) of the chunks in the
order GET_CHUNK handed them out, one Trace.packet per chunk (no stack
samples: each chunk is one FtraceEventBundle); LOG is wm_record's. The
events' timestamps are protoc's; what is checked is the watermark's
promise:

  * mapping: for every watermark (W, S) the reader saw, no chunk with a
    seq at or above S holds an event stamped before W;
  * read: for every read watermark R told after k chunks were written
    and put back, no chunk taken after those k holds an event before R;
  * and that this was tested: watermarks advanced many times during the
    run (not only at the end), across both CPUs, while CPU 1 went offline
    and back; the last ones say "everything" (~0).

Prints "PASS name" / "FAIL name: why" lines, figures as comments, DONE.
"""
import bisect
import sys

ALL = (1 << 64) - 1


def packets(path):
    """Per Trace.packet: (cpu, [event timestamps]) from protoc's text."""
    out = []
    cpu, ts, depth = None, [], 0
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.endswith('{'):
                depth += 1
                if depth == 1:
                    cpu, ts = None, []
                continue
            if s == '}':
                depth -= 1
                if depth == 0:
                    out.append((cpu, ts))
                continue
            key, _, val = s.partition(':')
            if depth == 2 and key == 'cpu':
                cpu = int(val)
            elif depth == 3 and key == 'timestamp':
                ts.append(int(val))
    return out


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(len(vals) * p / 100))] if vals else 0


def main():
    pk = packets(sys.argv[1])
    chunks, wms, reads, hot = [], [], [], []
    for line in open(sys.argv[2]):
        f = line.split()
        if f[0] == 'C':
            chunks.append((int(f[1]), int(f[2])))
        elif f[0] == 'W':
            wms.append(tuple(int(x) for x in f[1:5]))
        elif f[0] == 'R':
            reads.append(tuple(int(x) for x in f[1:5]))
        elif f[0] == 'H':
            hot.append((f[1], int(f[2])))
    ok = True

    def check(name, cond, why=''):
        nonlocal ok
        print(('PASS ' + name) if cond else ('FAIL %s: %s' % (name, why)))
        ok = ok and cond

    check('one decoded packet per chunk taken', len(pk) == len(chunks),
          '%d packets, %d chunks' % (len(pk), len(chunks)))
    if len(pk) != len(chunks):
        print('DONE')
        return
    low = [min(t) if t else ALL for _, t in pk]
    seqs = [s for s, _ in chunks]
    events = sum(len(t) for _, t in pk)
    cpus = {c for c, t in pk if t}
    print('# %d chunks, %d events, CPUs %s, %d watermarks, %d reads' %
          (len(pk), events, sorted(cpus), len(wms), len(reads)))

    # mapping: chunks at or above S, lowest first, per watermark
    bad = []
    order = sorted(range(len(seqs)), key=lambda i: seqs[i])
    suffix_min = [ALL] * (len(order) + 1)
    for j in range(len(order) - 1, -1, -1):
        suffix_min[j] = min(suffix_min[j + 1], low[order[j]])
    sorted_seqs = [seqs[i] for i in order]
    for k, w, s, t in wms:
        j = bisect.bisect_left(sorted_seqs, s)
        if suffix_min[j] < w:
            bad.append((w, s, suffix_min[j]))
    check('mapping watermark: no chunk at or above its seq holds an event before it',
          not bad, '%d of %d watermarks broken, first: W=%d S=%d, an event at %d'
          % ((len(bad), len(wms)) + (bad[0] if bad else (0, 0, 0))))

    # read watermark: chunks taken after the k that were put back
    after_min = [ALL] * (len(low) + 1)
    for i in range(len(low) - 1, -1, -1):
        after_min[i] = min(after_min[i + 1], low[i])
    bad = [(k, r, after_min[k]) for k, r, _, _ in reads if after_min[k] < r]
    check('read watermark: no chunk read later holds an event before it',
          not bad, '%d of %d broken, first after %d chunks: R=%d, an event at %d'
          % ((len(bad), len(reads)) + (bad[0] if bad else (0, 0, 0))))

    live_w = [(w, t) for _, w, _, t in wms if w != ALL and w]
    live_r = [(r, t) for _, r, _, t in reads if r != ALL and r]
    check('watermarks advanced while the session ran (at least 20 times)',
          len(live_w) >= 20, 'only %d' % len(live_w))
    check('the read watermark advanced while it ran (at least 10 distinct)',
          len({r for r, _ in live_r}) >= 10, 'only %d' % len({r for r, _ in live_r}))
    check('chunks of both CPUs', len(cpus) >= 2, 'CPUs %s' % sorted(cpus))
    if hot:
        check('CPU 1 went offline and back during it',
              [h[0] for h in hot] == ['offline', 'online'] and
              all(h[1] == 0 for h in hot), str(hot))
    else:
        print('SKIP CPU 1 went offline and back during it (one CPU)')
    check('after the stop the watermarks say everything',
          bool(wms) and wms[-1][1] == ALL and bool(reads) and
          reads[-1][1] == ALL, 'last W %s, last R %s' %
          (wms[-1][1] if wms else None, reads[-1][1] if reads else None))
    if live_w:
        lag = [(t - w) / 1e6 for w, t in live_w]
        print('# mapping watermark behind the clock when seen: p50 %.1f ms, p99 %.1f ms, max %.1f ms'
              % (pct(lag, 50), pct(lag, 99), max(lag)))
    if live_r:
        lag = [(t - r) / 1e6 for r, t in live_r]
        print('# read watermark behind the clock when asked: p50 %.1f ms, p99 %.1f ms, max %.1f ms'
              % (pct(lag, 50), pct(lag, 99), max(lag)))
    print('DONE')


if __name__ == '__main__':
    main()
