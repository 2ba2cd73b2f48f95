#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check a pbtrace recording against what its workload did.

Reads protoc's text decode of the file (done with Perfetto's own schema by
dataplane_test.sh) and the key=value lines dp_record printed, and prints one
"PASS name" or "FAIL name: why" line per check.

  dp_check.py workload DECODED INFO
  dp_check.py exact DECODED INFO ring|discard
"""
import sys

NR_READ, NR_WRITE, NR_GETPPID = 0, 1, 110


def parse_text(path):
    """protoc text format -> nested dicts; every field is a list."""
    root = {}
    stack = [root]
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.endswith('{'):
                node = {}
                stack[-1].setdefault(line[:-1].strip(), []).append(node)
                stack.append(node)
            elif line == '}':
                stack.pop()
            else:
                key, _, val = line.partition(':')
                val = val.strip()
                if val.startswith('"'):
                    val = val[1:-1]
                else:
                    val = int(val) if val.lstrip('-').isdigit() else val
                stack[-1].setdefault(key.strip(), []).append(val)
    if len(stack) != 1:
        raise ValueError('unbalanced braces in decode')
    return root


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def events(root):
    """(packet index, cpu, event dict, kind, fields) in file order."""
    out = []
    for i, pkt in enumerate(root.get('packet', [])):
        for bundle in pkt.get('ftrace_events', []):
            cpu = one(bundle, 'cpu')
            for ev in bundle.get('event', []):
                kinds = [k for k in ev if k not in ('timestamp', 'pid')]
                kind = kinds[0] if kinds else None
                out.append((i, cpu, ev, kind, ev[kind][0] if kind else {}))
    return out


def read_info(path):
    info = {}
    with open(path) as f:
        for line in f:
            key, sep, val = line.strip().partition('=')
            if sep:
                info.setdefault(key, []).append(val)
    return info


def iv(info, key):
    return int(info[key][0])


class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, name, ok, why=''):
        if ok:
            print('PASS ' + name)
        else:
            self.failed += 1
            print('FAIL %s: %s' % (name, why))


def check_common(c, root, evs, info):
    pkts = root.get('packet', [])
    c.check('file holds the chunks read', len(pkts) == iv(info, 'chunks_in_file'),
            '%d packets, %d chunks' % (len(pkts), iv(info, 'chunks_in_file')))
    bad = [i for i, p in enumerate(pkts)
           if not p.get('ftrace_events') or one(p['ftrace_events'][0], 'cpu') is None]
    c.check('every packet is a bundle with cpu set', not bad, 'packets %s' % bad[:5])
    base = iv(info, 'seq_base')
    bad = [i for i, p in enumerate(pkts) if p.get('ftrace_events') and
           one(p, 'trusted_packet_sequence_id') != base + one(p['ftrace_events'][0], 'cpu')]
    c.check('trusted_packet_sequence_id is base + cpu', not bad, 'packets %s' % bad[:5])
    c.check('events in file match the chunks\' event counts',
            len(evs) == iv(info, 'events_in_chunks'),
            '%d decoded, %d per chunk table' % (len(evs), iv(info, 'events_in_chunks')))
    last, bad = {}, []
    for _, cpu, ev, _, _ in evs:
        ts = one(ev, 'timestamp')
        if ts is None or ts < last.get(cpu, 0):
            bad.append((cpu, ts, last.get(cpu)))
        last[cpu] = ts if ts is not None else last.get(cpu, 0)
    c.check('per-CPU timestamps never go backwards', not bad, str(bad[:3]))
    c.check('poll: POLLIN before drain, POLLHUP after',
            info['poll_before_drain'][0] == 'in' and info['poll_after_drain'][0] == 'hup',
            '%s / %s' % (info['poll_before_drain'][0], info['poll_after_drain'][0]))


def count(evs, kind, pid, nr):
    return sum(1 for _, _, ev, k, f in evs
               if k == kind and one(ev, 'pid') == pid and one(f, 'id') == nr)


def check_workload(c, root, evs, info):
    pid, k, m = iv(info, 'pid'), iv(info, 'k'), iv(info, 'm')
    lost = iv(info, 'lost')
    c.check('no event lost in a large buffer', lost == 0, '%d lost' % lost)
    c.check('written == events in file', iv(info, 'written') == len(evs),
            '%d written, %d in file' % (iv(info, 'written'), len(evs)))
    for kind in ('sys_enter', 'sys_exit'):
        n = count(evs, kind, pid, NR_GETPPID)
        c.check('exactly K %s getppid for the workload pid' % kind, n == k,
                '%d, expected %d' % (n, k))
    exits = [f for _, _, ev, kd, f in evs if kd == 'sys_exit' and
             one(ev, 'pid') == pid and one(f, 'id') == NR_GETPPID]
    c.check('getppid returns the parent pid', exits and
            all(one(f, 'ret') == iv(info, 'ppid') for f in exits), 'ret mismatch')
    children = {int(x) for x in info.get('child', [])}
    threads = {iv(info, 'ping_tid'), iv(info, 'pong_tid')}
    forked = {one(f, 'child_pid') for _, _, _, kd, f in evs
              if kd == 'sched_process_fork' and one(f, 'parent_pid') == pid}
    c.check('forks: right parent and child pids (N children + 2 threads)',
            forked == children | threads and len(children) == iv(info, 'n'),
            'forked %s, expected %s' % (sorted(forked), sorted(children | threads)))
    for name, tid in (('ping', iv(info, 'ping_tid')), ('pong', iv(info, 'pong_tid'))):
        w = count(evs, 'sys_enter', tid, NR_WRITE)
        r = count(evs, 'sys_enter', tid, NR_READ)
        c.check('%s thread: M pipe writes and M reads' % name, w == m and r == m,
                '%d writes, %d reads, expected %d' % (w, r, m))
    # Per CPU, each switch starts from the task the previous one switched to.
    prev, bad, nsw = {}, [], 0
    for _, cpu, ev, kd, f in evs:
        if kd != 'sched_switch':
            continue
        nsw += 1
        if cpu in prev and one(f, 'prev_pid') != prev[cpu]:
            bad.append((cpu, prev[cpu], one(f, 'prev_pid')))
        if one(ev, 'pid') != one(f, 'prev_pid'):
            bad.append(('pid', one(ev, 'pid'), one(f, 'prev_pid')))
        prev[cpu] = one(f, 'next_pid')
    c.check('sched_switch prev/next consistent per CPU', nsw > 0 and not bad,
            '%d switches, breaks %s' % (nsw, bad[:3]))
    ran = {one(f, 'next_pid') for _, _, _, kd, f in evs if kd == 'sched_switch'}
    c.check('both ping-pong threads were switched in', threads <= ran,
            'missing %s' % (threads - ran))


def check_exact(c, root, evs, info, policy):
    child, emitted = iv(info, 'child'), iv(info, 'emitted')
    mine = [e for e in evs if one(e[2], 'pid') == child]
    c.check('pid filter: only the child\'s events', len(mine) == len(evs),
            '%d of %d are the child\'s' % (len(mine), len(evs)))
    lost = iv(info, 'lost')
    c.check('emitted == in file + lost, exactly',
            len(mine) + lost == emitted,
            '%d in file + %d lost != %d emitted' % (len(mine), lost, emitted))
    c.check('in file == written - overwritten',
            len(evs) == iv(info, 'written') - iv(info, 'lost_overwritten'),
            '%d in file, %d written, %d overwritten' %
            (len(evs), iv(info, 'written'), iv(info, 'lost_overwritten')))
    c.check('some events were lost (the buffer is small)', lost > 0,
            'nothing lost')
    first = mine[0] if mine else None
    last = mine[-1] if mine else None
    first_is_oldest = first and first[3] == 'sys_exit' and one(first[4], 'id') == NR_READ
    last_is_newest = last and last[3] == 'sys_enter' and one(last[4], 'id') == NR_READ
    if policy == 'ring':
        c.check('losses are overwritten chunks only',
                iv(info, 'chunks_overwritten') > 0 and
                iv(info, 'lost_overwritten') == lost, 'counters %s' % info)
        c.check('keeps the newest (last event is the parking read)',
                last_is_newest, 'last %s' % (last,))
        c.check('the oldest is gone', not first_is_oldest, 'first %s' % (first,))
        flagged = [p for p in root.get('packet', [])
                   if one(p, 'previous_packet_dropped') == 1 and
                   one(p['ftrace_events'][0], 'lost_events') == 'true']
        c.check('a chunk after the loss flags it', flagged,
                'no packet with previous_packet_dropped and lost_events')
    else:
        c.check('losses are refused events only',
                iv(info, 'lost_full') == lost and iv(info, 'chunks_overwritten') == 0,
                'counters %s' % info)
        c.check('keeps the oldest (first event is the first read\'s exit)',
                first_is_oldest, 'first %s' % (first,))
        c.check('the newest is gone', not last_is_newest, 'last %s' % (last,))


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    mode, decoded, infofile = sys.argv[1:4]
    root = parse_text(decoded)
    info = read_info(infofile)
    evs = events(root)
    c = Checks()
    check_common(c, root, evs, info)
    if mode == 'workload':
        check_workload(c, root, evs, info)
    else:
        check_exact(c, root, evs, info, sys.argv[4])
    print('DONE')
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
