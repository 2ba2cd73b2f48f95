#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Any tracepoint (docs/generic-events.md): a recording against ftrace.

Reads the file dp_record tp wrote, byte by byte (its own protobuf wire
reader: the generic events' fields are described only by the
GenericEventDescriptors in the file, which it applies itself), and
compares the events with what the kernel's own ftrace counted for the same
tracepoints at the same time (hist triggers: counts per tuple of field
values, read from tracefs's events/G/N/hist). Prints "PASS name" or
"FAIL name: why" per check.

  generic_check.py FILE INFO DECODED WORK HISTDIR [TPDIR]

INFO: dp_record's key=value lines (tp.N=G/N id=... proto_id=...);
DECODED: protoc --decode of FILE with Perfetto's schema (the envelope's
referee); WORK: the workload's facts (key=value); HISTDIR: G:N.hist files;
TPDIR: trace_processor's answers (tp_counts, tp_sig), absent: SKIP.
"""
import collections
import os
import re
import sys

TYPE_INT64, TYPE_UINT64, TYPE_INT32, TYPE_BOOL = 3, 4, 5, 8
TYPE_STRING, TYPE_BYTES, TYPE_UINT32, TYPE_SINT64 = 9, 12, 13, 18
TCP_SYN_SENT = 2


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(number, wire type, value) of one message; value int or bytes."""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                raise ValueError('length past the end')
            i += n
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], 'little')
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], 'little')
            i += 4
        else:
            raise ValueError('wire type %d' % wt)
        yield num, wt, v


def descriptor(ged):
    """GenericEventDescriptor -> (field_id, group, name, {number: (name, type, label)})."""
    fid = group = name = None
    flds = {}
    for num, _, v in fields(ged):
        if num == 1:
            fid = v
        elif num == 3:
            group = v.decode()
        elif num == 2:
            for dn, _, dv in fields(v):
                if dn == 1:
                    name = dv.decode()
                elif dn == 2:
                    f = dict((n, x) for n, _, x in fields(dv))
                    flds[f[3]] = (f[1].decode(), f.get(5), f.get(4, 1))
    return fid, group, name, flds


def value(t, v):
    if t in (TYPE_INT64, TYPE_INT32) and v >= 1 << 63:
        return v - (1 << 64)
    if t == TYPE_SINT64:
        return (v >> 1) ^ -(v & 1)
    if t == TYPE_STRING:
        return v.decode(errors='replace')
    return v


def apply(desc, body):
    """An event's message under its descriptor: {field name: value or [values]}."""
    out = {}
    for num, _, v in fields(body):
        name, t, label = desc[num]
        v = value(t, v)
        if label == 3:
            out.setdefault(name, []).append(v)
        else:
            out[name] = v
    return out


class Trace:
    """Every event of the file, generic ones decoded by their bundle's descriptors."""

    def __init__(self, path):
        self.events = []        # (field_id, ts, pid, decoded or raw bytes)
        self.undescribed = 0    # generic events whose bundle lacks the descriptor
        self.descs = {}
        self.bundles = 0
        with open(path, 'rb') as f:
            data = f.read()
        for num, _, packet in fields(data):
            if num != 1:
                continue
            for pn, _, bundle in fields(packet):
                if pn == 1:
                    self.bundle(bundle)

    def bundle(self, b):
        self.bundles += 1
        local = {}
        evs = []
        for num, _, v in fields(b):
            if num == 11:
                fid, group, name, flds = descriptor(v)
                local[fid] = flds
                self.descs[fid] = (group, name, flds)
            elif num == 2:
                evs.append(v)
        for e in evs:
            ts = pid = None
            for num, _, v in fields(e):
                if num == 1:
                    ts = v
                elif num == 2:
                    pid = v
                elif num >= 65536:
                    if num not in local:
                        self.undescribed += 1
                        continue
                    self.events.append((num, ts, pid, apply(local[num], v)))
                elif num > 2 and num != 5:
                    self.events.append((num, ts, pid, v))


def kv_file(path):
    d = {}
    with open(path) as f:
        for line in f:
            k, sep, v = line.strip().partition('=')
            if sep:
                d[k] = v
    return d


def hist(path):
    """ftrace's hist: {(value, ...): hitcount}, values as the keys listed."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r'^\{(.*)\}\s+hitcount:\s*(\d+)', line)
            if not m:
                continue
            keys = []
            for part in re.finditer(r'(\w+):\s*(.*?)\s*(?=,\s*\w+:|$)', m.group(1)):
                v = part.group(2).strip()
                keys.append(int(v) if re.fullmatch(r'-?\d+', v) else v)
            out[tuple(keys)] = out.get(tuple(keys), 0) + int(m.group(2))
    return out


class Checks:
    def __init__(self):
        self.failed = False

    def check(self, name, ok, why=''):
        print('PASS %s' % name if ok else 'FAIL %s: %s' % (name, why))
        self.failed |= not ok

    def skip(self, name, why):
        print('SKIP %s: %s' % (name, why))


def tps_of(info):
    """proto_id -> "group/name" from dp_record's tp.N lines."""
    out = {}
    for k, v in info.items():
        if k.startswith('tp.'):
            name = v.split()[0]
            m = re.search(r'proto_id=(\d+)', v)
            out[int(m.group(1))] = name
    return out


def by_name(trace, tps):
    evs = collections.defaultdict(list)
    for fid, ts, pid, d in trace.events:
        evs[tps.get(fid, str(fid))].append((ts, pid, d))
    return evs


def check_envelope(c, trace, info, decoded):
    with open(decoded) as f:
        text = f.read()
    n_protoc = len(re.findall(r'^\s*event \{$', text, re.M))
    written = int(info['written'])
    c.check('protoc decodes the file with Perfetto\'s schema: %d events, ours %d, kernel wrote %d'
            % (n_protoc, len(trace.events), written),
            n_protoc == written == len(trace.events) + trace.undescribed and written > 0,
            'counts differ')
    c.check('every generic event is described in its own bundle (%d bundles)' % trace.bundles,
            trace.undescribed == 0, '%d without' % trace.undescribed)
    c.check('nothing lost (lost=%s)' % info['lost'], info['lost'] == '0', 'losses')


def same_hist(c, what, ours, theirs):
    ok = ours == theirs and ours
    c.check('%s: %d events, each value tuple counted as ftrace hist counts it'
            % (what, sum(ours.values())), ok,
            'ours %s ftrace %s' % (sorted(ours.items())[:8], sorted(theirs.items())[:8]))


def check_signal(c, evs, work, hdir):
    pid, n = int(work['sleep_pid']), int(work['kills'])
    ours = collections.Counter((d['sig'], d['pid'], d['comm']) for _, _, d in
                               evs['signal/signal_generate'] if d['pid'] == pid)
    theirs = dict((k, v) for k, v in hist(os.path.join(hdir, 'signal:signal_generate.hist')).items()
                  if k[1] == pid)
    same_hist(c, 'signal_generate to the sleeper (sig, pid, comm)', dict(ours), theirs)
    conts = sum(v for k, v in ours.items() if k[0] == 18)
    c.check('signal_generate: the workload\'s %d SIGCONT to pid %d, %d in the file' % (n, pid, conts),
            conts == n, 'count')


def check_exec(c, evs, work, hdir, name='sched/sched_process_exec'):
    k = int(work['execs'])
    ours = collections.Counter((d['filename'], d['pid']) for _, _, d in evs[name]
                               if d['filename'] == '/bin/true')
    theirs = dict((key, v) for key, v in
                  hist(os.path.join(hdir, 'sched:sched_process_exec.hist')).items()
                  if key[0] == '/bin/true')
    same_hist(c, 'sched_process_exec (__data_loc filename, pid)', dict(ours), theirs)
    c.check('sched_process_exec: the workload\'s %d execs of /bin/true' % k,
            sum(ours.values()) == k, 'count %d' % sum(ours.values()))


def check_sock(c, evs, work, hdir):
    port, m = int(work['port']), int(work['connects'])
    ours = collections.Counter((d['sport'], d['dport'], d['newstate']) for _, _, d in
                               evs['sock/inet_sock_set_state']
                               if port in (d['sport'], d['dport']))
    theirs = dict((k, v) for k, v in hist(os.path.join(hdir, 'sock:inet_sock_set_state.hist')).items()
                  if port in (k[0], k[1]))
    same_hist(c, 'inet_sock_set_state on port %d (sport, dport, newstate)' % port, dict(ours), theirs)
    syn = sum(v for k, v in ours.items() if k[1] == port and k[2] == TCP_SYN_SENT)
    c.check('inet_sock_set_state: the workload\'s %d connects, each one SYN_SENT' % m,
            syn == m, '%d' % syn)
    addrs = set(tuple(d['saddr']) for _, _, d in evs['sock/inet_sock_set_state']
                if port in (d['sport'], d['dport']))
    c.check('inet_sock_set_state: saddr (u8[4], repeated) is 127.0.0.1: %s' % sorted(addrs),
            addrs == {(127, 0, 0, 1)}, 'addresses')


def check_workqueue(c, evs, hdir):
    # WORK_CPU_UNBOUND's -1, however hist prints it
    ours = collections.Counter((d['workqueue'], d['cpu'] & 0xffffffff) for _, _, d in
                               evs['workqueue/workqueue_queue_work'])
    theirs = collections.Counter()
    for (wq, cpu), n in hist(os.path.join(hdir, 'workqueue:workqueue_queue_work.hist')).items():
        theirs[(wq, cpu & 0xffffffff)] += n
    # ftrace's window holds ours: every tuple of ours, no more often.
    extra = dict((k, v) for k, v in ours.items() if theirs.get(k, 0) < v)
    c.check('workqueue_queue_work (__data_loc workqueue, cpu): %d events, every tuple within ftrace\'s counts'
            % sum(ours.values()), ours and not extra,
            'beyond ftrace: %s; ftrace: %s' % (extra, sorted(theirs.items())[:12]))


def check_ipi(c, evs, work):
    name = 'ipi/ipi_send_cpumask'
    if name not in evs:
        c.skip('ipi_send_cpumask (__bitmask)', 'not in this kernel or not hit')
        return
    ncpu = int(work['nr_cpu_ids'])
    bad = [d for _, _, d in evs[name]
           if len(d['cpumask']) % 8 or not int.from_bytes(d['cpumask'], 'little') or
           int.from_bytes(d['cpumask'], 'little') >> ncpu]
    c.check('ipi_send_cpumask: %d cpumasks (__data_loc bitmask as bytes), each of CPUs below %d'
            % (len(evs[name]), ncpu), not bad, '%s' % bad[:3])


def check_tp(c, evs, work, tpdir):
    if not tpdir or not os.path.exists(os.path.join(tpdir, 'tp_counts')):
        c.skip('trace_processor', open(os.path.join(tpdir, 'why')).read().strip()
               if tpdir and os.path.exists(os.path.join(tpdir, 'why')) else 'absent')
        return
    theirs = {}
    with open(os.path.join(tpdir, 'tp_counts')) as f:
        for line in f:
            name, _, n = line.strip().partition('|')
            theirs[name] = int(n)
    ours = dict((k.split('/')[1], len(v)) for k, v in evs.items())
    c.check('trace_processor ftrace_event counts per name equal ours: %s' % sorted(ours.items()),
            ours == theirs, 'tp %s' % sorted(theirs.items()))
    with open(os.path.join(tpdir, 'tp_sig')) as f:
        n = int(f.read().strip() or 0)
    want = sum(1 for _, _, d in evs['signal/signal_generate']
               if d['sig'] == 18 and d['pid'] == int(work['sleep_pid']))
    c.check('trace_processor args: %d signal_generate with sig=18 pid=%s' % (n, work['sleep_pid']),
            n == want, 'ours %d' % want)


def main():
    path, infof, decoded, workf, hdir = sys.argv[1:6]
    tpdir = sys.argv[6] if len(sys.argv) > 6 else None
    c = Checks()
    info, work = kv_file(infof), kv_file(workf)
    trace = Trace(path)
    tps = tps_of(info)
    evs = by_name(trace, tps)
    check_envelope(c, trace, info, decoded)
    for fid, (group, name, flds) in sorted(trace.descs.items()):
        print('# descriptor %d %s/%s: %s' % (fid, group, name,
              ' '.join('%d:%s' % (k, v[0]) for k, v in sorted(flds.items()))))
    check_signal(c, evs, work, hdir)
    check_exec(c, evs, work, hdir)
    check_sock(c, evs, work, hdir)
    check_workqueue(c, evs, hdir)
    check_ipi(c, evs, work)
    check_tp(c, evs, work, tpdir)
    print('DONE')
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
