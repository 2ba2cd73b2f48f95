#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check syscall_args_test.sh's recordings against what sysargs did.

  sysargs_check.py follow DECODE INFO TREE_OUT SPIN_PID K TP_ROWS
  sysargs_check.py strings DECODE INFO STRINGS_OUT TP_ROWS

DECODE is protoc's text decode with Perfetto's schema, INFO dp_record's
key=value output, TREE_OUT / STRINGS_OUT what sysargs printed, TP_ROWS
trace_processor's "ts|tid|filename" rows of ftrace_event sys_enter_openat
(or "SKIP reason"). Prints PASS/FAIL/SKIP lines.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_check import Checks, events, one, parse_text, tree  # noqa: E402


class C(Checks):
    def ck(self, ok, name, why=''):
        self.check(name, ok, why)

    def done(self):
        print('DONE')
        return 1 if self.failed else 0


def kv_file(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, sep, v = line.rstrip('\n').partition('=')
            if sep:
                out[k] = v
    return out


def generics(evs):
    """(ts, pid) -> {field name: value} of every sys_enter_* generic."""
    out = {}
    for _, _, ev, kind, f in evs:
        if not kind or not kind.startswith('sys_enter_'):
            continue
        fields = {k: v[0] for k, v in f.items()}
        fields['@event'] = kind
        out[(one(ev, 'timestamp'), one(ev, 'pid'))] = fields
    return out


def enters(evs, nr=None):
    return [(one(ev, 'timestamp'), one(ev, 'pid'), one(f, 'id'))
            for _, _, ev, kind, f in evs
            if kind == 'sys_enter' and (nr is None or one(f, 'id') == nr)]


def tp_rows(path):
    with open(path) as f:
        text = f.read()
    if text.startswith('SKIP'):
        return None, text[5:].strip()
    rows = set()
    for line in text.splitlines():
        parts = line.split('|')
        if len(parts) == 3:
            rows.add((int(parts[0]), int(parts[1]), parts[2]))
    return rows, None


def check_tp(c, gen, path):
    rows, why = tp_rows(path)
    if rows is None:
        c.skip('trace_processor: ftrace_event sys_enter_openat rows', why)
        return
    ours = {(ts, pid, str(f['filename'])) for (ts, pid), f in gen.items()
            if f['@event'] == 'sys_enter_openat' and 'filename' in f}
    c.ck(rows == ours,
            'trace_processor: ftrace_event sys_enter_openat with its filename '
            'arg, row for row as decoded (%d rows, %d decoded)' % (len(rows), len(ours)),
            'only in trace_processor: %s; only decoded: %s' %
            (sorted(rows - ours)[:3], sorted(ours - rows)[:3]))


def check_follow(c, evs, info, tree_out, spin_pid, k, tp_path):
    root = int(info['root_pid'])
    tasks, nr = [], {}
    with open(tree_out) as f:
        for line in f:
            if line.startswith('task '):
                tasks.append(int(line.split()[1]))
            elif '=' in line:
                key, _, v = line.strip().partition('=')
                nr[key] = int(v)
    family = tree(evs, root)
    seen = {one(ev, 'pid') for _, _, ev, _, _ in evs}
    c.ck(len(tasks) > 1 and set(tasks) <= family,
            'the %d tasks sysargs started (threads, children, '
            'grandchildren) are all forks of the command in the file' % len(tasks),
            'not in the fork tree: %s' % sorted(set(tasks) - family))
    c.ck(seen <= family,
            'every event is of the command or a task it forked '
            '(%d threads)' % len(seen), 'others: %s' % sorted(seen - family))
    c.ck(spin_pid not in seen,
            'a process outside the tree (getppid in a loop all along) '
            'left out', 'its pid %d is in the file' % spin_pid)
    gp = enters(evs, nr['nr_getppid'])
    per = {t: 0 for t in tasks}
    for _, pid, _ in gp:
        if pid in per:
            per[pid] += 1
    bad = {t: n for t, n in per.items() if n != k}
    c.ck(not bad, 'each task has exactly %d getppid enters' % k,
            'counts off: %s' % dict(list(bad.items())[:5]))
    gen = generics(evs)
    opens = {(ts, pid) for ts, pid, _ in enters(evs, nr['nr_openat'])}
    missing = []
    for t in tasks:
        want = '/nonexistent/pbt-%d' % t
        hits = [key for key, f in gen.items()
                if key[1] == t and f.get('filename') == want]
        if len(hits) != 1 or hits[0] not in opens:
            missing.append(t)
    c.ck(not missing,
            'each task\'s openat has its path in a sys_enter_openat '
            'generic event at the sys_enter\'s timestamp and pid',
            'missing or unpaired for tids %s' % missing[:5])
    check_tp(c, gen, tp_path)


def check_strings(c, evs, info, out, tp_path):
    want = kv_file(out)
    pid = int(want['pid'])
    gen = [f for (ts, p), f in sorted(gen_items(evs)) if p == pid and
           f['@event'] == 'sys_enter_openat']
    by_path = {f.get('filename'): f for f in gen}
    exact = want['exact']
    c.ck(len(exact) == 256 and exact in by_path and
            'filename_truncated' not in by_path[exact],
            'a 256-byte path whole, not marked truncated',
            'got %s' % [str(f.get('filename'))[:20] for f in gen])
    cut = want['long'][:256]
    c.ck(cut in by_path and by_path[cut].get('filename_truncated') == 1,
            'a 300-byte path cut at 256 bytes, marked '
            'filename_truncated = 1', 'fields: %s' % by_path.get(cut))
    fault = int(want['fault_ptr'])
    c.ck(fault in by_path and want.get('fault_ret') == '-1',
            'an unreadable pointer written as its value (%d), the '
            'call itself failing (ret %s)' % (fault, want.get('fault_ret')),
            'no field with uint_value %d' % fault)
    for tag in ('cross', 'edge'):
        c.ck(want[tag] in by_path,
                'a path %s read whole' %
                ('across a page boundary' if tag == 'cross' else
                 'ending at an unmapped page'), 'missing %s' % want[tag])
    check_tp(c, dict(gen_items(evs)), tp_path)


def gen_items(evs):
    return generics(evs).items()


def main():
    mode, decode, info = sys.argv[1:4]
    c = C()
    evs = events(parse_text(decode))
    info = kv_file(info)
    if mode == 'follow':
        check_follow(c, evs, info, sys.argv[4], int(sys.argv[5]),
                     int(sys.argv[6]), sys.argv[7])
    else:
        check_strings(c, evs, info, sys.argv[4], sys.argv[5])
    return c.done()


if __name__ == '__main__':
    sys.exit(main())
