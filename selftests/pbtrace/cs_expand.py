#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two recordings event for event, one with compact_sched.

Reads protoc's text decode (Perfetto's schema) of two traces recorded at
the same time by two sessions with the same events, expands every
FtraceEventBundle.compact_sched as trace_processor does
(ftrace_tokenizer.cc, ftrace_sched_event_tracker.cc), written here from
Perfetto's documented semantics and not from pbtrace's encoder:

  * each column of a kind has one entry per event; timestamps are deltas
    from the previous event of that kind in the bundle, the first from 0;
  * comms are indexes into the bundle's intern_table;
  * a compact switch's prev_pid, prev_comm and prev_prio are the next_*
    of the CPU's previous sched_switch (in time order); a compact waking's
    waker (FtraceEvent.pid) is that switch's next_pid.

Every event becomes one canonical tuple; full sched_switch and
sched_waking events become the same tuples, so both traces compare equal
over the window both sessions were recording, per CPU.

  cs_expand.py COMPACT.txt FULL.txt   prints "PASS ..." / "FAIL ..." lines
                                      and "window LO HI" (ns)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# protoc's text format read into nested dicts: the reader every test shares.
from dp_check import one, parse_text  # noqa: E402


def canon(d):
    """A message as a hashable, order-insensitive value."""
    return tuple(sorted((k, tuple(canon(x) if isinstance(x, dict) else x
                                  for x in v)) for k, v in d.items()))


def events(path, stats):
    """{cpu: [(ts, kind, fields...)]} in time order, compact expanded."""
    raw = {}
    for pkt in parse_text(path).get('packet', []):
        for b in pkt.get('ftrace_events', []):
            cpu = int(one(b, 'cpu'))
            out = raw.setdefault(cpu, [])
            for ev in b.get('event', []):
                ts, pid = int(one(ev, 'timestamp')), int(one(ev, 'pid', 0))
                if 'sched_switch' in ev:
                    s = ev['sched_switch'][0]
                    out.append((ts, 'switch', 'full', int(one(s, 'prev_pid')),
                                one(s, 'prev_comm', ''), int(one(s, 'prev_prio')),
                                int(one(s, 'prev_state', 0)),
                                int(one(s, 'next_pid')), one(s, 'next_comm', ''),
                                int(one(s, 'next_prio'))))
                    stats['full_switch'] += 1
                elif 'sched_waking' in ev:
                    w = ev['sched_waking'][0]
                    out.append((ts, 'waking', 'full', pid, one(w, 'comm', ''),
                                int(one(w, 'pid')), int(one(w, 'prio')),
                                int(one(w, 'target_cpu'))))
                    stats['full_waking'] += 1
                else:
                    rest = {k: v for k, v in ev.items()
                            if k not in ('timestamp', 'pid')}
                    out.append((ts, 'other', pid, canon(rest)))
            for cs in b.get('compact_sched', []):
                expand(cs, out, stats)
    res = {}
    for cpu, evs in raw.items():
        evs.sort(key=lambda e: e[0])
        res[cpu] = infer(evs, stats)
    return res


def expand(cs, out, stats):
    table = cs.get('intern_table', [])
    col = lambda k: [int(x) for x in cs.get(k, [])]
    sw = [col('switch_' + k) for k in
          ('timestamp', 'prev_state', 'next_pid', 'next_prio', 'next_comm_index')]
    wk = [col('waking_' + k) for k in
          ('timestamp', 'pid', 'target_cpu', 'prio', 'comm_index')]
    for cols, name in ((sw, 'switch'), (wk, 'waking')):
        if len({len(c) for c in cols}) > 1:
            stats['errors'].append('%s columns of different lengths' % name)
    ts = 0
    for d, state, pid, prio, comm in zip(*sw):
        ts += d
        out.append((ts, 'switch', 'compact', state, pid, table[comm], prio))
        stats['compact_switch'] += 1
    ts = 0
    for d, pid, tcpu, prio, comm in zip(*wk):
        ts += d
        out.append((ts, 'waking', 'compact', table[comm], pid, prio, tcpu))
        stats['compact_waking'] += 1


def infer(evs, stats):
    """Fill in what compact events leave out from the CPU's last switch."""
    last = None         # (next_pid, next_comm, next_prio) of the last switch
    res = []
    for e in evs:
        if e[1] == 'switch' and e[2] == 'full':
            ts, _, _, ppid, pcomm, pprio, state, npid, ncomm, nprio = e
            last = (npid, ncomm, nprio)
        elif e[1] == 'switch':
            ts, _, _, state, npid, ncomm, nprio = e
            if last is None:
                stats['errors'].append('compact switch at %d before any switch' % ts)
                continue
            ppid, pcomm, pprio = last
            last = (npid, ncomm, nprio)
        elif e[1] == 'waking' and e[2] == 'full':
            res.append(('waking',) + (e[0],) + e[3:])
            continue
        elif e[1] == 'waking':
            ts, _, _, comm, pid, prio, tcpu = e
            if last is None:
                stats['errors'].append('compact waking at %d before any switch' % ts)
                continue
            res.append(('waking', ts, last[0], comm, pid, prio, tcpu))
            continue
        else:
            res.append(('other',) + (e[0],) + e[2:])
            continue
        res.append(('switch', ts, ppid, pcomm, pprio, state, npid, ncomm, nprio))
    return res


def main():
    sa = {'full_switch': 0, 'full_waking': 0, 'compact_switch': 0,
          'compact_waking': 0, 'errors': []}
    sb = dict(sa, errors=[])
    a, b = events(sys.argv[1], sa), events(sys.argv[2], sb)
    allts = lambda t: [e[1] for evs in t.values() for e in evs]
    lo = max(min(allts(a)), min(allts(b)))
    hi = min(max(allts(a)), max(allts(b)))
    print('window %d %d' % (lo, hi))
    print('# compact trace: %s' % {k: v for k, v in sa.items() if k != 'errors'})
    print('# full trace: %s' % {k: v for k, v in sb.items() if k != 'errors'})
    for name, st in (('compact', sa), ('full', sb)):
        print('%s %s trace expands without errors%s' % (
            'FAIL' if st['errors'] else 'PASS', name,
            ': ' + '; '.join(st['errors'][:5]) if st['errors'] else ''))
    print('%s the compact trace holds compact switches and wakings (%d, %d)' % (
        'PASS' if sa['compact_switch'] and sa['compact_waking'] else 'FAIL',
        sa['compact_switch'], sa['compact_waking']))
    print('%s the full trace holds no compact_sched' % (
        'FAIL' if sb['compact_switch'] + sb['compact_waking'] else 'PASS'))
    n = 0
    bad = []
    for cpu in sorted(set(a) | set(b)):
        win = lambda evs: [e for e in evs if lo <= e[1] <= hi]
        ea, eb = win(a.get(cpu, [])), win(b.get(cpu, []))
        n += len(ea)
        if ea != eb:
            i = next((i for i, (x, y) in enumerate(zip(ea, eb)) if x != y),
                     min(len(ea), len(eb)))
            bad.append('cpu %d: %d vs %d events, first difference #%d: %s / %s' % (
                cpu, len(ea), len(eb), i, ea[i] if i < len(ea) else '-',
                eb[i] if i < len(eb) else '-'))
    kinds = lambda t: sum(1 for evs in t.values() for e in evs
                          if lo <= e[1] <= hi and e[0] != 'other')
    print('%s both traces hold the same %d events in the window, %d of them sched_switch/sched_waking%s' % (
        'FAIL' if bad or not n else 'PASS', n, kinds(a),
        ': ' + '; '.join(bad) if bad else ''))


main()
