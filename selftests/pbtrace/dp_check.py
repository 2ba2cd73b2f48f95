#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check a pbtrace recording against what its workload did.

Reads protoc's text decode of the file (done with Perfetto's own schema by
dataplane_test.sh) and the key=value lines dp_record printed, and prints one
"PASS name" or "FAIL name: why" line per check.

  dp_check.py workload DECODED INFO
  dp_check.py exact DECODED INFO ring|discard
  dp_check.py all DECODED INFO FTRACE_TRACE_FILE
  dp_check.py hotplug DECODED INFO
  dp_check.py recurse DECODED INFO
  dp_check.py stream DECODED INFO
  dp_check.py two DECODED_A DECODED_B INFO

Then the recording (DECODED with .pftrace for .txt) goes through Perfetto's
trace_processor too (tp_check.py, tp_events.py for "all"), when tp.sh found
it (DP_TP); its tables must say what the decode and the workload say.
"""
import os
import re
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


def compact_events(cs):
    """A bundle's compact_sched as (ts, kind, fields) with what it leaves
    out (prev task, waker) still to infer: Perfetto's semantics, deltas
    from 0 per bundle and per kind, comms from intern_table."""
    table = cs.get('intern_table', [])
    out = []
    for kind, cols in (('sched_switch', ('prev_state', 'next_pid', 'next_prio',
                                         'next_comm_index')),
                       ('sched_waking', ('pid', 'target_cpu', 'prio',
                                         'comm_index'))):
        pre = 'switch_' if kind == 'sched_switch' else 'waking_'
        ts = 0
        rows = zip(cs.get(pre + 'timestamp', []),
                   *[cs.get(pre + c, []) for c in cols])
        for row in rows:
            ts += row[0]
            f = {c: [v] for c, v in zip(cols, row[1:])}
            comm = f.pop(cols[-1])[0]
            f['next_comm' if kind == 'sched_switch' else 'comm'] = [table[comm]]
            out.append((ts, kind, f))
    return out


def generic_fields(g):
    """A GenericFtraceEvent as trace_processor reads it (its
    ParseLegacyGenericFtrace): the event named by event_name, each field an
    arg named by its name holding whichever value it has."""
    f = {}
    for fld in g.get('field', []):
        for key in ('str_value', 'int_value', 'uint_value'):
            if key in fld:
                f[one(fld, 'name')] = fld[key]
    return one(g, 'event_name'), f


def events(root):
    """(packet index, cpu, event dict, kind, fields) in file order, with
    compact_sched expanded into the full events it stands for (the prev
    task and waker from the CPU's previous sched_switch), and generic
    events as their own kind (event_name) with their named fields."""
    out = []
    last = {}           # cpu -> fields of its last sched_switch
    for i, pkt in enumerate(root.get('packet', [])):
        for bundle in pkt.get('ftrace_events', []):
            cpu = one(bundle, 'cpu')
            evs = []
            for ev in bundle.get('event', []):
                kinds = [k for k in ev if k not in ('timestamp', 'pid')]
                kind = kinds[0] if kinds else None
                evs.append((one(ev, 'timestamp', 0), ev, kind))
            for cs in bundle.get('compact_sched', []):
                for ts, kind, f in compact_events(cs):
                    evs.append((ts, {'timestamp': [ts], kind: [f],
                                     'compact': [1]}, kind))
            evs.sort(key=lambda e: e[0])
            for _, ev, kind in evs:
                f = ev[kind][0] if kind else {}
                if kind == 'generic':
                    kind, f = generic_fields(f)
                if 'compact' in ev:
                    del ev['compact']
                    prev = last.get(cpu, {})
                    pid = one(prev, 'next_pid', 0)
                    ev['pid'] = [pid]
                    if kind == 'sched_switch':
                        f['prev_pid'] = [pid]
                        f['prev_comm'] = prev.get('next_comm', [''])
                        f['prev_prio'] = prev.get('next_prio', [0])
                if kind == 'sched_switch':
                    last[cpu] = f
                out.append((i, cpu, ev, kind, f))
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

    def skip(self, name, why):
        print('SKIP %s: %s' % (name, why))

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
    left = iv(info, 'chunks_after_stop')
    c.check('poll: POLLIN while sealed chunks wait, POLLHUP once drained',
            info['poll_before_drain'][0] == ('in' if left else 'hup') and
            info['poll_after_drain'][0] == 'hup',
            '%s / %s with %d chunks left at stop' % (
                info['poll_before_drain'][0], info['poll_after_drain'][0], left))


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


# prev_state letters as the kernel's sched_switch event prints them (6.1).
STATE_LETTERS = [(1, 'S'), (2, 'D'), (4, 'T'), (8, 't'), (16, 'X'),
                 (32, 'Z'), (64, 'P'), (128, 'I')]
REPORT_MAX = 256


def state_text(v):
    letters = '|'.join(ch for bit, ch in STATE_LETTERS if v & (REPORT_MAX - 1) & bit)
    return (letters or 'R') + ('+' if v & REPORT_MAX else '')


FTRACE_LINE = re.compile(
    r'^\s*(.*)-(\d+)\s+(?:\(.*?\)\s+)?\[(\d+)\]\s+(?:\S+\s+)?([\d.]+): (\w+): (.*)$')

# From 6.11 ("block: Add ioprio to block_rq tracepoint") ftrace prints
# the request's I/O priority as class,hint,level before the last field.
# Perfetto's block_rq messages have no such field, so ours cannot carry it.
BLOCK_IOPRIO = re.compile(r' (?:none|rt|be|idle|invalid),\d+,\d+ (?=\[[^]]*\]$)')


def ftrace_text(name, pid, rest):
    """ftrace's text as 6.1 prints it, whatever kernel printed it."""
    if name.startswith('block_rq'):
        return BLOCK_IOPRIO.sub(' ', rest)
    # 6.14 ("tracing: Remove pid in task_rename tracing output") to its
    # revert in 7.0 printed no pid=; the renamed task is the one tracing.
    if name == 'task_rename' and not rest.startswith('pid='):
        return 'pid=%d %s' % (pid, rest)
    # 6.16 ("sched/tracepoints: Move and extend the sched_process_exit()
    # tracepoint") appends group_dead, which Perfetto's message lacks.
    if name == 'sched_process_exit':
        return re.sub(r' group_dead=(?:true|false)$', '', rest)
    return rest


def ftrace_events(path):
    """(pid, cpu, name, rest) from tracefs' trace file."""
    out, overrun = [], False
    with open(path) as f:
        for line in f:
            m = re.match(r'# entries-in-buffer/entries-written: (\d+)/(\d+)', line)
            if m and m.group(1) != m.group(2):
                overrun = True
            m = FTRACE_LINE.match(line)
            if m:
                out.append((int(m.group(2)), int(m.group(3)), m.group(5), m.group(6)))
    return out, overrun


def kv(rest):
    return dict(x.split('=', 1) for x in rest.split() if '=' in x)


def tree(evs, root_pid):
    """root_pid and every task it forked, transitively (from our forks)."""
    pids, changed = {root_pid}, True
    while changed:
        changed = False
        for _, _, _, kd, f in evs:
            if kd == 'sched_process_fork' and one(f, 'parent_pid') in pids and \
                    one(f, 'child_pid') not in pids:
                pids.add(one(f, 'child_pid'))
                changed = True
    return pids


def ours_as_ftrace(evs, pids):
    """Our events rendered as the tuples ftrace prints, for the pid set."""
    out = []
    for _, cpu, ev, kd, f in evs:
        pid = one(ev, 'pid')
        g = lambda k, d=0: one(f, k, d)
        if kd == 'sched_process_fork' and pid in pids:
            out.append(('sched_process_fork', pid, 'comm=%s pid=%d child_comm=%s child_pid=%d' % (
                g('parent_comm', ''), g('parent_pid'), g('child_comm', ''), g('child_pid'))))
        elif kd == 'sched_process_exec' and pid in pids:
            out.append(('sched_process_exec', pid, 'filename=%s pid=%d old_pid=%d' % (
                g('filename', ''), g('pid'), g('old_pid'))))
        elif kd == 'task_rename' and pid in pids:
            out.append(('task_rename', pid, 'pid=%d oldcomm=%s newcomm=%s oom_score_adj=%d' % (
                g('pid'), g('oldcomm', ''), g('newcomm', ''), g('oom_score_adj'))))
        elif kd == 'sched_process_exit' and pid in pids:
            out.append(('sched_process_exit', pid, 'comm=%s pid=%d prio=%d' % (
                g('comm', ''), g('pid'), g('prio'))))
        elif kd == 'sys_enter' and pid in pids:
            args = f.get('args', [])
            out.append(('sys_enter', pid, 'NR %d (%s)' % (
                g('id'), ', '.join('%x' % a for a in args))))
        elif kd == 'sys_exit' and pid in pids:
            out.append(('sys_exit', pid, 'NR %d = %d' % (g('id'), g('ret'))))
        elif kd == 'sched_switch' and (g('prev_pid') in pids or g('next_pid') in pids):
            out.append(('sched_switch', pid,
                        'prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> '
                        'next_comm=%s next_pid=%d next_prio=%d' % (
                            g('prev_comm', ''), g('prev_pid'), g('prev_prio'),
                            state_text(g('prev_state')), g('next_comm', ''),
                            g('next_pid'), g('next_prio'))))
        elif kd == 'block_rq_issue' and g('dev') >> 20 == 7:
            out.append(('block_rq_issue', None, '%d,%d %s %d () %d + %d [%s]' % (
                g('dev') >> 20, g('dev') & 0xfffff, g('rwbs', ''), g('bytes'),
                g('sector'), g('nr_sector'), g('comm', ''))))
        elif kd == 'block_rq_complete' and g('dev') >> 20 == 7:
            out.append(('block_rq_complete', None, '%d,%d %s () %d + %d [%d]' % (
                g('dev') >> 20, g('dev') & 0xfffff, g('rwbs', ''), g('sector'),
                g('nr_sector'), g('error'))))
    return out


def trim_args(ours, theirs):
    """ftrace's raw_syscalls sys_enter prints all six registers; ours holds
    the syscall's own arguments only (gen/pbtrace_arity.h; their count is
    checked against the kernel's syscall metadata in record_stream_test).
    Compare our arguments with as many of ftrace's, the same per NR."""
    arity = {}
    for kind, _, text in ours:
        if kind == 'sys_enter':
            nr, args = text.split(' (', 1)
            arity[nr] = len([a for a in args.rstrip(')').split(', ') if a])
    out = []
    for kind, pid, text in theirs:
        if kind == 'sys_enter':
            nr, args = text.split(' (', 1)
            if nr in arity:
                args = [a for a in args.rstrip(')').split(', ') if a][:arity[nr]]
                text = '%s (%s)' % (nr, ', '.join(args))
        out.append((kind, pid, text))
    return out


def check_ftrace(c, evs, info, ftrace_path):
    """Same events, same fields as the kernel's own ftrace in the same run."""
    fevs, overrun = ftrace_events(ftrace_path)
    c.check('ftrace lost nothing (comparison is valid)', not overrun and fevs,
            'ftrace overran or recorded nothing')
    pids = tree(evs, iv(info, 'child'))
    ours = ours_as_ftrace(evs, pids)
    kinds = {k for k, _, _ in ours}
    theirs = []
    for pid, _, name, rest in fevs:
        if name not in kinds:
            continue
        rest = ftrace_text(name, pid, rest)
        if name.startswith('block_rq'):
            if rest.startswith('7,'):
                theirs.append((name, None, rest))
        elif name == 'sched_switch':
            d = kv(rest)
            if int(d['prev_pid']) in pids or int(d['next_pid']) in pids:
                theirs.append((name, pid, rest))
        elif pid in pids:
            theirs.append((name, pid, rest))
    theirs = trim_args(ours, theirs)
    for kind in sorted(kinds):
        a = sorted(x for x in ours if x[0] == kind)
        b = sorted(x for x in theirs if x[0] == kind)
        diff = [x for x in a if x not in b][:2] + [x for x in b if x not in a][:2]
        c.check('%s: same %d events and fields as ftrace' % (kind, len(a)), a == b,
                'ours %d, ftrace %d, e.g. %s' % (len(a), len(b), diff))
    for kind in ('sched_process_exec', 'task_rename', 'sys_enter', 'sched_switch',
                 'sched_process_fork', 'block_rq_issue', 'block_rq_complete'):
        c.check('%s recorded' % kind, kind in kinds, 'none in the file')


def check_all(c, root, evs, info, decoded):
    with open(decoded) as f:
        unknown = [l.strip() for l in f if re.match(r'^\s*\d+:', l)]
    c.check('every field is known to Perfetto\'s schema', not unknown, str(unknown[:3]))
    names = [e.split()[0] for e in info.get('event', [])]
    avail = [e.split()[0] for e in info.get('event', []) if e.endswith(' available')]
    c.check('the module lists all 22 events', len(names) == 22, '%d listed' % len(names))
    c.check('all but cpu_frequency are available here (6.1)',
            set(names) - set(avail) <= {'power/cpu_frequency'},
            'unavailable: %s' % sorted(set(names) - set(avail)))
    seen = {kd for _, _, _, kd, _ in evs}
    # Not every run migrates or frees a task; cpu_frequency needs a cpufreq
    # driver, which only power_test.sh's guest has.
    optional = {'sched_migrate_task', 'sched_process_free'}
    if not os.path.isdir('/sys/devices/system/cpu/cpu0/cpufreq'):
        optional.add('cpu_frequency')
    want = {n.split('/')[1] for n in avail} - optional
    c.check('every available event was recorded (%d kinds)' % len(seen), want <= seen,
            'missing %s' % sorted(want - seen))
    c.check('no event lost', iv(info, 'lost') == 0, '%d lost' % iv(info, 'lost'))


def check_stream(c, root, evs, info):
    emitted, lost = iv(info, 'emitted'), iv(info, 'lost')
    c.check('emitted == in file + lost, exactly', len(evs) + lost == emitted,
            '%d in file + %d lost != %d emitted' % (len(evs), lost, emitted))
    c.check('in file == written - overwritten',
            len(evs) == iv(info, 'written') - iv(info, 'lost_overwritten'),
            '%d in file, %d written, %d overwritten' %
            (len(evs), iv(info, 'written'), iv(info, 'lost_overwritten')))
    # Whether the reader got to run during the workload is up to the host's
    # scheduling of the vCPUs: not a product failure when it did not.
    if iv(info, 'chunks_in_file') > 2:
        c.check('the reader drained while the writer ran', True)
    else:
        c.skip('the reader drained while the writer ran',
               'only %d chunks: the reader never ran (host too busy)' %
               iv(info, 'chunks_in_file'))


def check_two(c, dec_a, dec_b, infofile):
    with open(infofile) as f:
        text = f.read()
    head, _, tail = text.partition('---\n')
    ia, ib = {}, {}
    for d, part in ((ia, head), (ib, tail)):
        for line in part.splitlines():
            key, sep, val = line.partition('=')
            if sep:
                d.setdefault(key, []).append(val)
    k, child = iv(ia, 'k'), iv(ia, 'child')
    ea, eb = events(parse_text(dec_a)), events(parse_text(dec_b))
    c.check('session A: all 2K+4 syscall events, nothing lost',
            len(ea) == 2 * k + 4 and iv(ia, 'lost') == 0,
            '%d events, %d lost' % (len(ea), iv(ia, 'lost')))
    c.check('session B: only its K+2 sys_exit events, nothing lost',
            len(eb) == k + 2 and all(kd == 'sys_exit' for _, _, _, kd, _ in eb) and
            iv(ib, 'lost') == 0, '%d events' % len(eb))
    key = lambda e: (one(e[2], 'timestamp'), one(e[2], 'pid'), one(e[4], 'id'), one(e[4], 'ret'))
    exits_a = [key(e) for e in ea if e[3] == 'sys_exit']
    c.check('B holds exactly A\'s sys_exit events (same timestamps)',
            exits_a == [key(e) for e in eb], 'differ')
    c.check('the sessions have different sequence ids',
            ia['seq_base'] != ib['seq_base'], 'both %s' % ia['seq_base'])
    c.check('only the child was traced', all(one(e[2], 'pid') == child for e in ea + eb),
            'other pids present')


def check_recurse(c, root, evs, info):
    """fault_recurse=1: every event re-entered once; all re-entries lost."""
    emitted = iv(info, 'emitted')
    c.check('every real event is in the file', len(evs) == emitted,
            '%d in file, %d emitted' % (len(evs), emitted))
    c.check('every re-entry counted in lost_nmi, nothing else lost',
            iv(info, 'lost_nmi') == emitted and iv(info, 'lost') == emitted,
            'lost_nmi %d, lost %d, expected %d' % (iv(info, 'lost_nmi'), iv(info, 'lost'), emitted))
    pkts = root.get('packet', [])
    flagged = [p for p in pkts[1:] if one(p, 'previous_packet_dropped') == 1 and
               one(p['ftrace_events'][0], 'lost_events') == 'true']
    c.check('chunks after the loss flag it', len(pkts) < 2 or len(flagged) == len(pkts) - 1,
            '%d of %d later chunks flagged' % (len(flagged), len(pkts) - 1))


def check_hotplug(c, root, evs, info):
    child, emitted = iv(info, 'child'), iv(info, 'emitted')
    lost = iv(info, 'lost')
    c.check('emitted == in file + lost, exactly', len(evs) + lost == emitted,
            '%d in file + %d lost != %d emitted' % (len(evs), lost, emitted))
    c.check('nothing lost across offline/online', lost == 0, '%d lost' % lost)
    on1 = sum(1 for _, cpu, _, _, _ in evs if cpu == 1)
    c.check('the offlined CPU\'s events are in the file', on1 >= emitted - 4,
            '%d events from cpu 1' % on1)
    c.check('going offline sealed its chunk (readable before stop)',
            iv(info, 'offline_sealed') >= 1 and info['offline_poll'][0] == 'in',
            'sealed %s, poll %s' % (info['offline_sealed'][0], info['offline_poll'][0]))
    c.check('stats say the CPU is offline', iv(info, 'offline_online_field') == 0,
            'online=%s' % info['offline_online_field'][0])


# ---- trace_processor: the same file through Perfetto's own importer ----

def trace_of(decoded):
    """The recording a decode was made from: X.txt is protoc's text of X.pftrace."""
    return decoded[:-len('.txt')] + '.pftrace'


def tp_workload(c, res, info):
    """The workload's known counts, as slices, processes and threads."""
    pid, ppid, k, m = iv(info, 'pid'), iv(info, 'ppid'), iv(info, 'k'), iv(info, 'm')
    calls = {(r[0], r[1]): (int(r[2]), int(r[3] or 0)) for r in res['calls']}
    n, right = calls.get((pid, 'sys_%d' % NR_GETPPID), (0, 0))
    c.check('tp: K sys_%d (getppid) slices on the workload thread, each ret == ppid'
            % NR_GETPPID, n == k and right == k,
            '%d slices, %d with ret %d; expected %d' % (n, right, ppid, k))
    for name in ('ping', 'pong'):
        tid = iv(info, name + '_tid')
        w = calls.get((tid, 'sys_%d' % NR_WRITE), (0, 0))[0]
        r = calls.get((tid, 'sys_%d' % NR_READ), (0, 0))[0]
        c.check('tp: %s thread has M write and M read slices' % name, w == m and r == m,
                '%d writes, %d reads, expected %d' % (w, r, m))
    children = {int(x) for x in info.get('child', [])}
    procs = {r[0] for r in res['proc']}
    c.check('tp: the N forked children are processes (task_newtask)',
            children <= procs, 'missing %s' % sorted(children - procs))
    threads = {iv(info, 'ping_tid'), iv(info, 'pong_tid')}
    tids = {r[0] for r in res['thread']}
    c.check('tp: the two threads are in the thread table', threads <= tids,
            'missing %s' % sorted(threads - tids))


WORKLOAD_SQL = {
    'calls': "select tid, s.name, count(*), sum(extract_arg(s.arg_set_id, 'ret') = "
             "%d) from slice s join thread_track tt on s.track_id = tt.id "
             "join thread using(utid) group by 1, 2",
}


def tp_checks(c, mode, decoded, root, evs, info):
    import tp_check
    lost = iv(info, 'lost') if mode in ('exact', 'stream', 'recurse', 'hotplug') else None
    extra = {}
    if mode == 'workload':
        extra = {'calls': WORKLOAD_SQL['calls'] % iv(info, 'ppid')}
    elif mode == 'all':
        import tp_events
        extra = tp_events.SQL
    # Where a lost event leaves its flag: on the CPU's next chunk, which a
    # full DISCARD buffer never writes; a reader racing the writer
    # (stream, hotplug) may or may not have left one.
    flag = True if mode == 'recurse' else \
        (sys.argv[4] == 'ring') if mode == 'exact' else None
    res = tp_check.check_file(c, trace_of(decoded), root, evs, lost, extra=extra,
                              flagged_if_lost=flag)
    if res is None:
        return
    if mode == 'workload':
        tp_workload(c, res, info)
    elif mode == 'all':
        tp_events.check(c, res, evs, tree(evs, iv(info, 'child')))


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    mode, decoded, infofile = sys.argv[1:4]
    if mode == 'two':
        c = Checks()
        check_two(c, decoded, infofile, sys.argv[4])
        import tp_check
        for label, dec in (('A', decoded), ('B', infofile)):
            root = parse_text(dec)
            tp_check.check_file(tp_check.Labelled(c, label), trace_of(dec),
                                root, events(root))
        print('DONE')
        return 1 if c.failed else 0
    root = parse_text(decoded)
    info = read_info(infofile)
    evs = events(root)
    c = Checks()
    check_common(c, root, evs, info)
    if mode == 'workload':
        check_workload(c, root, evs, info)
    elif mode == 'stream':
        check_stream(c, root, evs, info)
    elif mode == 'recurse':
        check_recurse(c, root, evs, info)
    elif mode == 'hotplug':
        check_hotplug(c, root, evs, info)
    elif mode == 'all':
        check_all(c, root, evs, info, decoded)
        check_ftrace(c, evs, info, sys.argv[4])
    else:
        check_exact(c, root, evs, info, sys.argv[4])
    tp_checks(c, mode, decoded, root, evs, info)
    print('DONE')
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
