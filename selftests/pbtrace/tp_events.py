# SPDX-License-Identifier: GPL-2.0
"""Every event kind through trace_processor, for dp_check.py's "all" mode.

Each of the 22 kinds lands in ftrace_event (trace_processor's raw table)
with its fields as args; those the importer understands land in the table
a user queries as well (src/trace_processor/importers/ftrace/
ftrace_parser.cc): sched_switch in sched (end_state from prev_state),
sys_enter/sys_exit as sys_<nr> slices on thread tracks with args[0..5] and
ret, irq_handler_* and softirq_* as slices on the per-CPU "Irq Cpu N" /
"SoftIrq Cpu N" tracks, cpu_idle and cpu_frequency as per-CPU counters,
task_newtask as processes, task_rename/sched_process_free in thread.
Block requests have no table of their own there (block_rq_* are raw only),
so their fields are checked in ftrace_event against what dd did.

check() compares all of it with protoc's decode, event for event.
"""
import collections
import os

# trace_processor's names for softirq vectors (types/softirq_action.h).
SOFTIRQ_NAMES = ['HI', 'TIMER', 'NET_TX', 'NET_RX', 'BLOCK', 'BLOCK_IOPOLL',
                 'TASKLET', 'SCHED', 'HRTIMER', 'RCU']
# prev_state letters as trace_processor prints them for 6.1 (task_state.cc).
STATES = [(1, 'S'), (2, 'D'), (4, 'T'), (8, 't'), (16, 'X'), (32, 'Z'),
          (64, 'P'), (128, 'I')]
CLONE_THREAD = 0x10000
LOOP_MAJOR = 7
U64 = 1 << 64

SYS = "s.name like 'sys\\_%' escape '\\'"
# Run for every trace, by tp_check.py.
SCHED_SQL = {
    'sw': "select s.ts, s.cpu, t.tid, ifnull(s.end_state, '') || '|' || s.dur "
             "from sched s join thread t using(utid)",
}
# Tags apart from tp_check.COMMON_SQL's: the parts run in one query.
SQL = {
    'ev': "select e.id, e.name, a.key, coalesce(a.int_value, a.string_value, "
          "a.real_value) from ftrace_event e left join args a using(arg_set_id)",
    'evmeta': "select e.id, e.ts, e.cpu, t.tid from ftrace_event e "
              "left join thread t using(utid)",
    'sysl': "select s.ts, t.tid, s.name, s.dur from slice s join thread_track tt "
           "on s.track_id = tt.id join thread t using(utid) where " + SYS,
    'sysargs': "select s.ts, t.tid, a.key, a.int_value from slice s join "
               "thread_track tt on s.track_id = tt.id join thread t using(utid) "
               "join args a on a.arg_set_id = s.arg_set_id where " + SYS,
    'irqs': "select s.ts, s.dur, s.name, extract_arg(t.dimension_arg_set_id, "
            "'cpu') || '|' || ifnull(extract_arg(s.arg_set_id, 'ret'), '') "
            "from slice s join track t on s.track_id = t.id "
            "where t.type in ('cpu_irq', 'cpu_softirq')",
    'ctrs': "select c.ts, extract_arg(t.dimension_arg_set_id, 'cpu'), c.value, "
            "t.type from counter c join track t on c.track_id = t.id "
            "where t.type in ('cpu_idle', 'cpu_frequency')",
    'procs': "select p.pid, pp.pid, p.name, null from process p "
             "left join process pp on p.parent_upid = pp.upid",
    'threads': "select tid, name, end_ts, null from thread",
}


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def norm(v):
    """A field value as both readers can agree on: text, uint64 wrapped."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v % U64) if isinstance(v, int) else str(v)


def state_text(v):
    letters = '|'.join(ch for bit, ch in STATES if v & 255 & bit)
    return (letters or 'R') + ('+' if v & 256 else '')


def diff_text(a, b):
    ca, cb = collections.Counter(a), collections.Counter(b)
    return 'decode only %s; tp only %s' % (list((ca - cb).elements())[:2],
                                           list((cb - ca).elements())[:2])


def same(c, name, want, got):
    c.check(name, collections.Counter(want) == collections.Counter(got),
            diff_text(want, got))


def idle_name(kv):
    """Sorted fields, the idle task's prev_comm as trace_processor keeps it:
    for a compact_sched switch it takes prev_comm from its own thread of
    pid 0, which it names "swapper", not the kernel's "swapper/N"."""
    d = dict(kv)
    if str(d.get('prev_pid')) == '0' and str(d.get('prev_comm', '')).startswith('swapper/'):
        d['prev_comm'] = 'swapper'
    return tuple(sorted(d.items()))


def raw_fields(c, res, evs):
    """Every event, every field, in ftrace_event and its args."""
    meta = {r[0]: r[1:] for r in res['evmeta']}
    fields = collections.defaultdict(list)
    names = {}
    for eid, name, key, val in res['ev']:
        names[eid] = name
        # The raw table keeps one value of a repeated field (sys_enter's
        # args); the slices below hold all six.
        if key is not None and key != 'args':
            fields[eid].append((key, norm(val)))
    got = [(meta[e][0], meta[e][1], meta[e][2], names[e], idle_name(fields[e]))
           for e in names]
    want = []
    for _, cpu, ev, kind, f in evs:
        kv = [(k, norm(v[0])) for k, v in f.items() if k != 'args']
        want.append((one(ev, 'timestamp'), cpu, one(ev, 'pid'), kind, idle_name(kv)))
    same(c, 'tp: ftrace_event has every event with the same ts, cpu, pid and fields',
         want, got)
    return {e: (names[e], dict(fields[e])) for e in names}


def pairs(evs, begin, end, key):
    """(begin event, its end event or None): the next end with the same key,
    in time order (the file holds each CPU's chunks apart)."""
    out, open_ = [], {}
    for _, cpu, ev, kind, f in sorted(evs, key=lambda e: one(e[2], 'timestamp')):
        k = key(cpu, ev, f)
        if kind == begin:
            open_[k] = len(out)
            out.append([(cpu, ev, f), None])
        elif kind == end and k in open_:
            out[open_.pop(k)][1] = (cpu, ev, f)
    return out


def dur(b, e):
    return one(e[1], 'timestamp') - one(b[1], 'timestamp') if e else -1


def check_sched(c, res, evs, versioned):
    """sched rows against the switches; end_state against prev_state.

    versioned: the file names its kernel (system_info). Without it
    trace_processor reads prev_state as 4.4 did (task_state.cc), where
    0x80 and 0x100 meant other things, so only the states both layouts
    share are compared then."""
    sw = [(one(ev, 'timestamp'), cpu, one(f, 'next_pid'), one(f, 'prev_state'))
          for _, cpu, ev, kind, f in evs if kind == 'sched_switch']
    if not sw:
        return
    same(c, 'tp: sched has one row per sched_switch (ts, cpu, next_pid)',
         [s[:3] for s in sw], [r[:3] for r in res['sw']])
    ended = {(ts, cpu): st for ts, cpu, _, st in sw}
    want, got = [], []
    for ts, cpu, _, state_dur in res['sw']:
        state, d = state_dur.rsplit('|', 1)
        end = ts + int(d)
        raw = ended.get((end, cpu))
        if int(d) < 0 or (not versioned and (raw is None or raw & ~0x3f)):
            continue
        got.append((end, cpu, state))
        want.append((end, cpu, '?' if raw is None else state_text(raw)))
    how = '' if versioned else ', those below 0x40: the file names no kernel'
    c.check('tp: sched end_state is the next switch\'s prev_state as 6.1 '
            'prints it (%d rows%s)' % (len(got), how), want == got,
            diff_text(want, got))


def syscall_slices(evs, pids):
    """The slices trace_processor makes of sys_enter/sys_exit, per thread:
    an enter opens one, an exit closes the innermost open one. An exit with
    a number it cannot name closes nothing (syscall_tracker.h): the kernel
    reports rt_sigreturn's exit as nr -1, since the restored registers say
    "no syscall" (orig_ax = -1); without system_info naming the arch,
    trace_processor cannot know rt_sigreturn never returns, so that slice
    stays open and later ones nest in it."""
    out, stack = [], collections.defaultdict(list)
    for _, _, ev, kind, f in sorted(evs, key=lambda e: one(e[2], 'timestamp')):
        pid, ts = one(ev, 'pid'), one(ev, 'timestamp')
        if pid not in pids:
            continue
        if kind == 'sys_enter':
            args = tuple(norm(a) for a in f.get('args', []))
            stack[pid].append(len(out))
            out.append([ts, pid, 'sys_%d' % one(f, 'id'), -1, args, None])
        elif kind == 'sys_exit' and one(f, 'id', 0) >= 0 and stack[pid]:
            s = out[stack[pid].pop()]
            s[3], s[5] = ts - s[0], norm(one(f, 'ret', 0))
    return [tuple(s) for s in out]


def check_syscalls(c, res, evs, pids):
    want = syscall_slices(evs, pids)
    sargs = collections.defaultdict(dict)
    for ts, tid, key, val in res['sysargs']:
        sargs[(ts, tid)][key] = norm(val)
    got = []
    for ts, tid, name, d in res['sysl']:
        if tid in pids:
            a = sargs[(ts, tid)]
            # As many args as the sys_enter carried (the syscall's arity).
            n = sum(1 for k in a if k.startswith('args['))
            got.append((ts, tid, name, d, tuple(a.get('args[%d]' % i) for i in range(n)),
                        a.get('ret')))
    same(c, 'tp: %d sys_<nr> slices of the workload, each with its args, '
         'duration and ret' % len(got), want, got)


def check_irqs(c, res, evs):
    want = []
    for b, e in pairs(evs, 'irq_handler_entry', 'irq_handler_exit',
                      lambda cpu, ev, f: cpu):
        ret = '' if not e else 'handled' if one(e[2], 'ret') == 1 else 'unhandled'
        want.append((one(b[1], 'timestamp'), dur(b, e), 'IRQ (%s)' % one(b[2], 'name'),
                     '%d|%s' % (b[0], ret)))
    for b, e in pairs(evs, 'softirq_entry', 'softirq_exit', lambda cpu, ev, f: cpu):
        want.append((one(b[1], 'timestamp'), dur(b, e),
                     SOFTIRQ_NAMES[one(b[2], 'vec', 0)], '%d|' % b[0]))
    got = [tuple(r) for r in res['irqs']]
    same(c, 'tp: %d irq and softirq slices on the per-CPU tracks, named, timed '
         'and with ret as the events say' % len(got), want, got)


def check_counters(c, res, evs):
    for kind in ('cpu_idle', 'cpu_frequency'):
        want = [(one(ev, 'timestamp'), one(f, 'cpu_id', 0), one(f, 'state', 0))
                for _, _, ev, kd, f in evs if kd == kind]
        got = [(r[0], r[1], int(r[2])) for r in res['ctrs'] if r[3] == kind]
        if not want and kind == 'cpu_frequency' and \
                not os.path.isdir('/sys/devices/system/cpu/cpu0/cpufreq'):
            c.skip('tp: cpu_frequency as a per-CPU counter',
                   'no cpufreq driver in this guest (QEMU gives no P-states), so '
                   'the kernel never calls trace_cpu_frequency: power_test.sh '
                   'boots one that has them')
            continue
        same(c, 'tp: %d %s values on per-CPU counter tracks (ts, cpu, state)'
             % (len(got), kind), want, got)
        c.check('tp: %s was recorded' % kind, want, 'no %s event' % kind)


def check_block(c, raw):
    """dd bs=4k count=16 oflag=direct on a fresh loop device: 16 writes of
    8 sectors at 0, 8, ... 120, each issued and completed without error."""
    want = [str(8 * i) for i in range(16)]
    for kind, extra in (('block_rq_issue', ('bytes', '4096')),
                        ('block_rq_complete', ('error', '0'))):
        rq = [f for name, f in raw.values() if name == kind and
              int(f.get('dev', 0)) >> 20 == LOOP_MAJOR]
        sectors = sorted((f.get('sector') for f in rq), key=int)
        good = all(f.get('nr_sector') == '8' and 'W' in f.get('rwbs', '') and
                   f.get(extra[0]) == extra[1] for f in rq)
        c.check('tp: %s on the loop device: sectors 0..120, 8 sectors, W, %s=%s'
                % (kind, extra[0], extra[1]), sectors == want and good,
                'sectors %s, fields %s' % (sectors, rq[:2]))


def check_tasks(c, res, evs, pids, raw):
    procs = {r[0]: r[1] for r in res['procs']}
    want, got = [], []
    for _, _, ev, kind, f in evs:
        child = one(f, 'pid')
        if kind != 'task_newtask' or child not in pids or \
                one(f, 'clone_flags', 0) & CLONE_THREAD:
            continue
        forker = one(ev, 'pid')
        want.append((child, forker if forker in pids else None))
        got.append((child, procs.get(child, 'missing')))
    c.check('tp: each fork of the workload is a process, its parent the forker '
            '(%d)' % len(want), want and want == got, diff_text(want, got))
    threads = {r[0]: r[1:] for r in res['threads']}
    exits = [(one(f, 'pid'), one(f, 'comm')) for _, _, _, kd, f in evs
             if kd == 'sched_process_exit' and one(f, 'pid') in pids]
    c.check('tp: thread names are the comm the workload\'s tasks exited with (%d)'
            % len(exits), exits and all(threads.get(p, ('',))[0] == n for p, n in exits),
            '%s vs %s' % (exits, [threads.get(p) for p, _ in exits]))
    frees = [(one(f, 'pid'), one(ev, 'timestamp')) for _, _, ev, kd, f in evs
             if kd == 'sched_process_free']
    c.check('tp: sched_process_free ends the thread at its timestamp (%d)' % len(frees),
            all(threads.get(p, (None, None))[1] == ts for p, ts in frees),
            '%s vs %s' % (frees[:3], [threads.get(p) for p, _ in frees[:3]]))
    renamed = [f for name, f in raw.values() if name == 'task_rename' and
               f.get('newcomm') == 'dp-renamed' and f.get('oldcomm') == 'dp_record']
    c.check('tp: task_rename dp_record -> dp-renamed (the prctl) in ftrace_event',
            len(renamed) == 1, '%d such renames' % len(renamed))


def check(c, res, evs, pids):
    raw = raw_fields(c, res, evs)
    check_syscalls(c, res, evs, pids)
    check_irqs(c, res, evs)
    check_counters(c, res, evs)
    check_block(c, raw)
    check_tasks(c, res, evs, pids, raw)
