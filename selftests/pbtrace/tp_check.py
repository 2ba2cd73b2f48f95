#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""trace_processor as the second reader of a trace (the first is protoc).

Perfetto's trace_processor_shell is found by tp.sh (PBTRACE_TP, else
../shared/trace_processor/) and handed over in the environment: DP_TP is
its path, or empty with the reason in DP_TP_WHY. dp_check.py uses the
classes here for the data-plane recordings; the command line is for the
files traced writes:

  tp_check.py traced TRACE DECODED [--lost N [--flagged yes|no]] [--release R]

compares trace_processor's tables with protoc's decode DECODED of TRACE
and prints PASS/FAIL/SKIP lines, then DONE. --lost N: the kernel counted
N lost events (the test made them); trace_processor must report exactly
those; --flagged: whether bundles must carry lost_events (default: as the
decode says). --release R: the machine table must name kernel release R.

Each TraceProcessor.query() is one trace_processor run (about 2 s in a
TCG guest, 0.05 s on the host), so checks gather their SQL into one.
"""
import csv
import io
import os
import subprocess
import sys

import tp_events

# Stats trace_processor raises for losses the kernel counted; a test that
# made losses on purpose allows exactly these.
LOSS_STATS = ('ftrace_cpu_has_data_loss', 'ftrace_cpu_dropped_events_delta',
              'traced_buf_trace_writer_packet_loss')


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def tp_shell():
    """(path, None) or (None, why): what tp.sh found."""
    path = os.environ.get('DP_TP', '')
    if path:
        return path, None
    return None, os.environ.get('DP_TP_WHY') or 'DP_TP not set (source tp.sh)'


def _cell(v):
    if v == '[NULL]':
        return None
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


class TraceProcessor:
    def __init__(self, shell, trace):
        self.shell, self.trace = shell, trace

    def query(self, sql):
        """Rows (tuples) of one SQL statement; raises on any error."""
        p = subprocess.run([self.shell, 'query', self.trace, sql],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120)
        if p.returncode:
            raise RuntimeError('trace_processor: %s' %
                               p.stderr.strip().splitlines()[-3:])
        rows = list(csv.reader(io.StringIO(p.stdout)))
        return [tuple(_cell(v) for v in r) for r in rows[1:] if r]

    def tagged(self, parts):
        """{tag: rows} for {tag: SQL of exactly 4 columns}, in one run."""
        sql = ' union all '.join(
            "select '%s', * from (%s)" % (tag, q) for tag, q in parts.items())
        out = {tag: [] for tag in parts}
        for r in self.query(sql):
            out[r[0]].append(r[1:])
        return out


# What every trace is checked for: stats, and the events of each kind as
# the decode counts them, in the raw table and in the table a user queries.
COMMON_SQL = {
    'stat': "select name, ifnull(idx, -1), value, severity from stats "
            "where value > 0 and severity in ('error', 'data_loss')",
    'lossinfo': "select name, ifnull(idx, -1), value, null from stats "
                "where name in ('ftrace_cpu_overrun_delta', "
                "'ftrace_cpu_dropped_events_delta', 'ftrace_cpu_has_data_loss')",
    'raw': "select name, count(*), null, null from ftrace_event group by name",
    'sched': "select count(*), null, null, null from sched",
    'sys': "select count(*), null, null, null from slice s join thread_track t "
           "on s.track_id = t.id where s.name like 'sys\\_%' escape '\\'",
    'irq': "select t.type, count(*), null, null from slice s join track t "
           "on s.track_id = t.id where t.type in ('cpu_irq', 'cpu_softirq') "
           "group by t.type",
    'ctr': "select t.type, count(*), null, null from counter c join track t "
           "on c.track_id = t.id where t.type in ('cpu_idle', 'cpu_frequency') "
           "group by t.type",
}


def kind_counts(evs):
    n = {}
    for _, _, _, kd, _ in evs:
        n[kd] = n.get(kd, 0) + 1
    return n


def lost_cpus(root):
    """CPUs whose bundles say events were lost, as protoc decodes them."""
    cpus = set()
    for pkt in root.get('packet', []):
        for b in pkt.get('ftrace_events', []):
            if one(b, 'lost_events') == 'true':
                cpus.add(one(b, 'cpu'))
    return cpus


def switch_gaps(evs):
    """Per CPU, switches whose prev_pid is not the previous one's next_pid:
    a pid filter keeps only switches to or from its threads (as the
    kernel's set_event_pid does), so the CPU's story has gaps."""
    last, gaps = {}, 0
    for _, cpu, ev, kind, f in sorted(evs, key=lambda e: one(e[2], 'timestamp')):
        if kind != 'sched_switch':
            continue
        if cpu in last and one(f, 'prev_pid') != last[cpu]:
            gaps += 1
        last[cpu] = one(f, 'next_pid')
    return gaps


def expected_stats(root, evs):
    """{(stat, idx): value} of the error stats the file itself calls for,
    by trace_processor's own rules: sched_switch gaps (ftrace_sched_event_
    tracker.cc), and write_into_file without flush_period_ms or with a
    DISCARD buffer (ProtoTraceReader::OnEventsFullyExtracted, which
    exempts only a tracing_service_version "Perfetto v54" or later)."""
    want = {}
    gaps = switch_gaps(evs)
    if gaps:
        want[('mismatched_sched_switch_tids', -1)] = gaps
    cfgs = [one(p, 'trace_config') for p in root.get('packet', []) if 'trace_config' in p]
    cfg = cfgs[0] if cfgs else {}
    if one(cfg, 'write_into_file') == 'true':
        if not one(cfg, 'flush_period_ms'):
            want[('config_write_into_file_no_flush', -1)] = 1
        for i, b in enumerate(cfg.get('buffers', [])):
            if one(b, 'fill_policy') == 'DISCARD':
                want[('config_write_into_file_discard', i)] = 1
    return want


def check_common(c, res, root, evs, lost=None, flagged_if_lost=True):
    """Stats, and each kind's count in trace_processor against the decode.

    lost: None if the test made no loss; else the kernel's count, which
    must be what trace_processor reports: its per-CPU ftrace_stats deltas
    when the file has them (traced writes them), and the per-CPU flag of
    the bundles (lost_events), which must be up exactly where the decode
    has it, and somewhere iff events were lost, unless flagged_if_lost is
    False (a DISCARD buffer writes no chunk after its loss to carry the
    flag: nothing may be flagged) or None (the test cannot tell)."""
    allowed = LOSS_STATS if lost else ()
    want = expected_stats(root, evs)
    bad = ['%s[%s]=%s' % r[:3] for r in res['stat']
           if r[0] not in allowed and (r[0], r[1]) not in want]
    c.check('tp: no error or data_loss stats but those the decode predicts',
            not bad, ', '.join(bad))
    got = {(r[0], r[1]): int(r[2]) for r in res['stat']}
    for (name, idx), n in sorted(want.items()):
        c.check('tp: %s%s = %d, as the decode predicts' % (
            name, '' if idx < 0 else '[%d]' % idx, n),
            got.get((name, idx), 0) == n, 'tp says %s' % got.get((name, idx), 0))
    if lost is not None:
        info = {}
        for name, idx, val in (r[:3] for r in res['lossinfo']):
            info.setdefault(name, {})[idx] = int(val)
        flagged = set(info.get('ftrace_cpu_has_data_loss', {}))
        want = {True: lost > 0, False: False, None: bool(flagged)}[flagged_if_lost]
        c.check('tp: CPUs flagged with data loss are those the decode says (%s)'
                % (sorted(flagged) or 'none'),
                flagged == lost_cpus(root) and bool(flagged) == want,
                'tp %s, decode %s, kernel lost %d' % (
                    sorted(flagged), sorted(lost_cpus(root)), lost))
        deltas = info.get('ftrace_cpu_dropped_events_delta', {}), \
            info.get('ftrace_cpu_overrun_delta', {})
        # traced writes per-CPU ftrace_stats at start and end; a file of
        # chunks only (dp_record's) has nothing but the flags.
        if any('ftrace_stats' in p for p in root.get('packet', [])):
            tp_lost = sum(sum(d.values()) for d in deltas)
            c.check('tp: dropped + overrun events == the kernel\'s %d lost' % lost,
                    tp_lost == lost, 'tp says %d' % tp_lost)
    want = kind_counts(evs)
    got = {r[0]: int(r[1]) for r in res['raw']}
    diff = {k: (want.get(k, 0), got.get(k, 0)) for k in set(want) | set(got)
            if want.get(k, 0) != got.get(k, 0)}
    c.check('tp: ftrace_event holds the %d decoded events, kind for kind' % len(evs),
            not diff, 'decode vs tp: %s' % diff)
    n = lambda k: want.get(k, 0)
    single = lambda tag: int(res[tag][0][0]) if res[tag] else 0
    by = lambda tag: {r[0]: int(r[1]) for r in res[tag]}
    irq, ctr = by('irq'), by('ctr')
    for name, tp_n, kind in (
            ('sched rows', single('sched'), 'sched_switch'),
            ('sys_* slices', single('sys'), 'sys_enter'),
            ('irq slices', irq.get('cpu_irq', 0), 'irq_handler_entry'),
            ('softirq slices', irq.get('cpu_softirq', 0), 'softirq_entry'),
            ('cpu_idle counter values', ctr.get('cpu_idle', 0), 'cpu_idle'),
            ('cpu_frequency counter values', ctr.get('cpu_frequency', 0),
             'cpu_frequency')):
        if n(kind) or tp_n:
            c.check('tp: %d %s, one per %s' % (tp_n, name, kind), tp_n == n(kind),
                    '%d decoded' % n(kind))


MACHINE_SQL = {
    'machine': "select sysname, release, num_cpus, null from machine",
    'cpu': "select ifnull(machine_id, 0), cpu, null, null from cpu",
    'proc': "select pid, name, null, null from process",
    'thread': "select tid, name, null, null from thread",
}


def check_machine(c, res, root, release=None):
    """machine and cpu rows, and the process tree, against the decode."""
    infos = [one(p, 'system_info') for p in root.get('packet', []) if 'system_info' in p]
    if not infos:
        c.check('tp: a trace without system_info has one machine row',
                len(res['machine']) == 1, '%d rows' % len(res['machine']))
        return
    si = infos[0]
    uts = one(si, 'utsname', {})
    want = (one(uts, 'sysname'), one(uts, 'release'), one(si, 'num_cpus'))
    got = res['machine'][0][:3] if len(res['machine']) == 1 else None
    c.check('tp: one machine row, %s %s with %s CPUs as system_info says' % want,
            got == want and (release is None or want[1] == release),
            'tp %s, release expected %s' % (res['machine'], release))
    # trace_processor lists the CPUs it saw data from.
    cpus = {(r[0], r[1]) for r in res['cpu']}
    seen = {(0, one(b, 'cpu')) for p in root.get('packet', [])
            for b in p.get('ftrace_events', [])}
    c.check('tp: cpu has the %d CPUs with events, of the %s system_info counts'
            % (len(seen), want[2]), seen <= cpus and
            cpus <= {(0, i) for i in range(want[2] or 0)},
            'tp %s, decode %s' % (sorted(cpus), sorted(seen)))
    pids, tids = set(), set()
    for p in root.get('packet', []):
        for tree in p.get('process_tree', []):
            pids |= {one(x, 'pid') for x in tree.get('processes', [])}
            tids |= {one(x, 'tid') for x in tree.get('threads', [])}
    tp_pids = {r[0] for r in res['proc']}
    tp_tids = {r[0] for r in res['thread']}
    c.check('tp: the %d processes and %d threads of process_tree are in its tables'
            % (len(pids), len(tids)), pids <= tp_pids and tids <= tp_tids,
            'missing processes %s, threads %s' % (
                sorted(pids - tp_pids)[:5], sorted(tids - tp_tids)[:5]))


class Labelled:
    """Checks whose names start with a label (two files in one test)."""
    def __init__(self, c, label):
        self.c, self.label = c, label

    def check(self, name, ok, why=''):
        self.c.check(name.replace('tp: ', 'tp %s: ' % self.label, 1), ok, why)

    def skip(self, name, why):
        self.c.skip(name.replace('tp: ', 'tp %s: ' % self.label, 1), why)


def check_file(c, trace, root, evs, lost=None, release=None, extra=None,
               flagged_if_lost=True):
    """The common and machine checks in one trace_processor run; extra SQL
    parts are run along and their rows returned (None when skipped)."""
    shell, why = tp_shell()
    if not shell:
        c.skip('tp: trace_processor checks', why)
        return None
    parts = dict(COMMON_SQL, **MACHINE_SQL, **tp_events.SCHED_SQL)
    parts.update(extra or {})
    try:
        res = TraceProcessor(shell, trace).tagged(parts)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        c.check('tp: trace_processor loads the trace', False, str(e))
        return None
    c.check('tp: trace_processor loads the trace', True)
    check_common(c, res, root, evs, lost, flagged_if_lost)
    versioned = any('system_info' in p for p in root.get('packet', []))
    tp_events.check_sched(c, res, evs, versioned)
    check_machine(c, res, root, release)
    return res


def main():
    import dp_check
    args = sys.argv[1:]
    if len(args) < 3 or args[0] != 'traced':
        print(__doc__)
        return 2
    trace, decoded = args[1], args[2]
    opts = dict(zip(args[3::2], args[4::2]))
    root = dp_check.parse_text(decoded)
    c = dp_check.Checks()
    lost = int(opts['--lost']) if '--lost' in opts else None
    flagged = {'yes': True, 'no': False}.get(opts.get('--flagged'))
    check_file(c, trace, root, dp_check.events(root), lost, opts.get('--release'),
               flagged_if_lost=flagged)
    print('DONE')
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
