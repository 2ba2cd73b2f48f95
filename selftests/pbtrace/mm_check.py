#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check a multi-machine pbtrace recording (multimachine_test.sh).

Reads protoc's text decode of the file (Perfetto's own schema) one packet
at a time and prints one "PASS name", "FAIL name: why" or "# note" line per
check, then "DONE"; multimachine_lib.sh turns them into TAP.

  mm_check.py all DECODED key=value...     the trace_all_machines session
  mm_check.py hostonly DECODED             the machine_name_filter "host" one

Keys for "all": name, sysname, release, machine (the guest's identity as
it reported it), n (UDP rounds), ping_pid (the sender on the guest),
echo_pid (the echo server on the host), udp_rtt_ns (the sender's median).

Clock offsets are computed from the RemoteClockSync packets exactly as
trace_processor does (ProtoTraceReader::CalculateClockOffsets): the
synced_clocks of one packet are (client, host) snapshot pairs; each
adjacent pair (ping, update) less than 30 s apart gives two estimates,
(c1 + c2) / 2 - h1 and c2 - (h1 + h2) / 2, and the packet's offset is their
average (client minus host, so host time = client time - offset).
trace_processor parses RemoteClockSync packets and converts ftrace event
times as it tokenizes, in file order, and each RemoteClockSync replaces
the machine's offset: so a guest event here gets the offset of the last
RemoteClockSync of its machine before its packet in the file, and none
(0) before the first one. pbtrace writes one per machine and session,
ahead of the machine's first chunk (docs/multi-machine.md).
"""
import statistics
import sys

BOOTTIME = 6
NR_SENDTO, NR_RECVFROM = 44, 45
SEQ_ID_REMOTE_BASE, MAX_CPUS_REMOTE = 1 << 25, 8192
SYNC_INTERVAL_NS = 30 * 1000000000


def packets(path):
    """Each top-level packet of a protoc text decode as nested dicts of lists."""
    stack = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if stack is None:
                if line == 'packet {':
                    stack = [{}]
                elif line:
                    raise ValueError('unexpected top-level line %r' % line)
                continue
            if line.endswith('{'):
                node = {}
                stack[-1].setdefault(line[:-1].strip(), []).append(node)
                stack.append(node)
            elif line == '}':
                done = stack.pop()
                if not stack:
                    yield done
                    stack = None
            elif line:
                key, _, val = line.partition(':')
                val = val.strip()
                if val.startswith('"'):
                    val = val[1:-1]
                elif val.lstrip('-').isdigit():
                    val = int(val)
                stack[-1].setdefault(key.strip(), []).append(val)
    if stack is not None:
        raise ValueError('decode ends inside a packet')


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def clocks(snapshot):
    return {one(c, 'clock_id'): one(c, 'timestamp') for c in snapshot.get('clocks', [])}


def tdiv(a, b):
    """C++ integer division (truncates toward zero), as trace_processor's."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def tp_offset(sync):
    """trace_processor's BOOTTIME offset (client - host) of one RemoteClockSync."""
    snaps = []
    for sc in sync.get('synced_clocks', []):
        host = clocks(one(sc, 'host_clocks', {}))
        client = clocks(one(sc, 'client_clocks', {}))
        snaps.append((host.get(BOOTTIME, 0), client.get(BOOTTIME, 0)))
    raw = []
    for i in range(1, len(snaps)):
        (h1, c1), (h2, c2) = snaps[i - 1], snaps[i]
        if c2 - c1 >= SYNC_INTERVAL_NS:
            continue
        if not (h1 and c1 and h2 and c2):
            continue
        raw.append(tdiv(c1 + c2, 2) - h1)
        raw.append(c2 - tdiv(h1 + h2, 2))
    if not raw:
        return None
    return tdiv(sum(raw), len(raw))


def ntp_round(sync):
    """(t1, m, m, t4, t4 - t1, ntp offset) of a one-round RemoteClockSync, or
    None when it is not one round as pbtrace writes it.

    pbtrace writes a round as (client t1, host m), (client t4, host
    m + (t4 - t1)), (t1 + t4) / 2 - m the offset it settled on: the middle
    of the window all rounds since the machine joined allow, each
    t1 - t2 < offset < t4 - t3 (kmod/relay/clock.c). That window lies inside
    this round's, so the true offset lies in (t1 - m, t4 - m): the returned
    tuple has the shape (t1, t2, t3, t4, rtt, ntp) with t2 = t3 = m and
    the whole round t4 - t1 as the RTT, which bounds the offset no tighter
    than the stamps allow and never wrongly.
    """
    s = sync.get('synced_clocks', [])
    if len(s) != 2:
        return None
    t1 = clocks(one(s[0], 'client_clocks', {})).get(BOOTTIME)
    h1 = clocks(one(s[0], 'host_clocks', {})).get(BOOTTIME)
    t4 = clocks(one(s[1], 'client_clocks', {})).get(BOOTTIME)
    h2 = clocks(one(s[1], 'host_clocks', {})).get(BOOTTIME)
    if None in (t1, h1, t4, h2) or h2 - h1 != t4 - t1:
        return None
    return t1, h1, h1, t4, t4 - t1, (t1 + t4) / 2 - h1


class Trace:
    """What the checks need, gathered in one pass over the decode."""

    def __init__(self, path):
        self.machines = {}        # machine_id (None = host) -> packet count
        self.events = {}          # machine_id -> event count
        self.kinds = {}           # machine_id -> set of event kinds
        self.bad_seq = []         # relayed bundles with a foreign sequence id
        self.sysinfo = {}         # machine_id -> [system_info]
        self.syncs = {}           # machine_id -> [remote_clock_sync]
        self.snapshots = {}       # machine_id -> clock_snapshot count
        self.stats = {}           # machine_id -> [trace_stats]
        self.span = {}            # machine_id -> [first, last] on the host timeline
        self.first_slack = {}     # machine_id -> offset uncertainty of its first
        self.sys = {}             # (machine_id, pid) -> [(ts, kind, id, ret, host ts)]
        self.offset = {}          # machine_id -> offset of its latest RemoteClockSync
        self.slack = {}           # machine_id -> that round's t4 - t1
        self.unsynced = {}        # machine_id -> events before its first one
        self.bundles = {}         # machine_id -> ftrace_events packets
        for p in packets(path):
            self.add(p)

    def add(self, p):
        m = one(p, 'machine_id')
        self.machines[m] = self.machines.get(m, 0) + 1
        for key, table in (('system_info', self.sysinfo),
                           ('remote_clock_sync', self.syncs),
                           ('trace_stats', self.stats)):
            if key in p:
                table.setdefault(m, []).append(p[key][0])
        if 'remote_clock_sync' in p:
            off = tp_offset(p['remote_clock_sync'][0])
            r = ntp_round(p['remote_clock_sync'][0])
            if off is not None and r is not None:
                self.offset[m] = off
                self.slack[m] = r[3] - r[0]
        if 'clock_snapshot' in p:
            self.snapshots[m] = self.snapshots.get(m, 0) + 1
        if 'ftrace_events' in p:
            self.bundles[m] = self.bundles.get(m, 0) + 1
        for bundle in p.get('ftrace_events', []):
            self.add_bundle(m, p, bundle)

    def add_bundle(self, m, p, bundle):
        cpu = one(bundle, 'cpu')
        if m is not None and one(p, 'trusted_packet_sequence_id') != \
                SEQ_ID_REMOTE_BASE + m * MAX_CPUS_REMOTE + (cpu or 0):
            self.bad_seq.append((m, cpu, one(p, 'trusted_packet_sequence_id')))
        kinds = self.kinds.setdefault(m, set())
        span = self.span.setdefault(m, [None, None])
        off, slack = self.offset.get(m, 0), self.slack.get(m, 0)
        # compact_sched: one entry of a kind's timestamp column per event,
        # deltas from 0 per bundle (Perfetto's semantics).
        evs = list(bundle.get('event', []))
        for cs in bundle.get('compact_sched', []):
            for kind, col in (('sched_switch', 'switch_timestamp'),
                              ('sched_waking', 'waking_timestamp')):
                ts = 0
                for d in cs.get(col, []):
                    ts += int(d)
                    evs.append({'timestamp': [ts], kind: [{}]})
        for ev in evs:
            self.events[m] = self.events.get(m, 0) + 1
            if m is not None and m not in self.offset:
                self.unsynced[m] = self.unsynced.get(m, 0) + 1
            ts = one(ev, 'timestamp')
            kind = next((k for k in ev if k not in ('timestamp', 'pid')), None)
            kinds.add(kind)
            if ts is not None:
                hts = ts - off
                if span[0] is None or hts < span[0]:
                    self.first_slack[m] = slack
                span[0] = hts if span[0] is None else min(span[0], hts)
                span[1] = hts if span[1] is None else max(span[1], hts)
            if kind in ('sys_enter', 'sys_exit'):
                f = ev[kind][0]
                self.sys.setdefault((m, one(ev, 'pid')), []).append(
                    (ts, kind, one(f, 'id'), one(f, 'ret'), ts - off, slack))


class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, name, ok, why=''):
        if ok:
            print('PASS ' + name)
        else:
            self.failed += 1
            print('FAIL %s: %s' % (name, why))

    @staticmethod
    def note(text):
        print('# ' + text)


def guest_of(t):
    ids = [m for m in t.machines if m is not None]
    return ids[0] if len(ids) == 1 else None


def check_machines(c, t):
    ids = sorted(m for m in t.machines if m is not None)
    c.note('packets per machine: %s' % ', '.join(
        '%s=%d' % ('host' if m is None else 'machine %d' % m, n)
        for m, n in sorted(t.machines.items(), key=lambda x: x[0] or 0)))
    c.check('two machines: host packets without machine_id, guest packets with one id',
            None in t.machines and len(ids) == 1, 'machine ids %s, host packets %d' % (
                ids, t.machines.get(None, 0)))
    c.check('the guest\'s machine_id is non-zero', ids and ids[0] != 0, str(ids))


def check_identity(c, t, m, want):
    infos = t.sysinfo.get(m, [])
    c.check('one system_info stamped with the guest\'s machine_id', len(infos) == 1,
            '%d found' % len(infos))
    if not infos:
        return
    si = infos[0]
    uts = one(si, 'utsname', {})
    got = {'name': one(si, 'machine_name'), 'sysname': one(uts, 'sysname'),
           'release': one(uts, 'release'), 'machine': one(uts, 'machine')}
    for key in ('name', 'sysname', 'release', 'machine'):
        c.check('guest system_info %s is %r' % (key, want.get(key)),
                got[key] == want.get(key), 'got %r' % got[key])
    c.check('guest system_info num_cpus > 0', (one(si, 'num_cpus') or 0) > 0,
            str(one(si, 'num_cpus')))


def check_events(c, t, m):
    for who, mid in (('host', None), ('guest', m)):
        kinds = t.kinds.get(mid, set())
        c.note('%s: %d events, kinds %s' % (who, t.events.get(mid, 0), sorted(kinds - {None})))
        c.check('%s events: sched_switch, sys_enter and sys_exit' % who,
                {'sched_switch', 'sys_enter', 'sys_exit'} <= kinds,
                'kinds %s' % sorted(kinds - {None}))
    c.check('guest bundles carry sequence id REMOTE_BASE + machine * 8192 + cpu',
            not t.bad_seq and m in t.kinds, 'bad: %s' % t.bad_seq[:4])
    # trace_processor makes the BOOTTIME of any clock_snapshot the trace
    # clock, a guest's too, and the host's events then have no path to it.
    c.check('no clock_snapshot stamped with the guest\'s machine_id',
            not t.snapshots.get(m), '%d' % t.snapshots.get(m, 0))


def sync_table(c, t, m):
    """[(first client BOOTTIME, tp offset, round)] of the guest, in time order."""
    syncs = t.syncs.get(m, [])
    # Each one is an offset step in trace_processor, and a step back in
    # time re-sorts the guest's events around it: one for the session.
    c.check('one RemoteClockSync for the guest', len(syncs) == 1, '%d' % len(syncs))
    table, bad = [], []
    for s in syncs:
        r, off = ntp_round(s), tp_offset(s)
        if r is None or off is None or not r[0] < r[3]:
            bad.append(s)
            continue
        table.append((r[0], off, r))
    # Host stamps m and m + (t4 - t1) are what make trace_processor's formula
    # give the round's NTP midpoint itself, not a quarter round trip more.
    c.check('every RemoteClockSync is one ordered round paired as client t1 / host m, '
            'client t4 / host m + (t4 - t1)', syncs and not bad,
            '%d of %d malformed' % (len(bad), len(syncs)))
    table.sort(key=lambda x: x[0])
    if table:
        offs = [x[1] for x in table]
        rtts = [x[2][4] for x in table]
        best = min(table, key=lambda x: x[2][4])
        c.note('clock sync: %d rounds, t4 - t1 min %d / median %d / max %d ns' % (
            len(table), min(rtts), statistics.median(rtts), max(rtts)))
        c.note('offset (guest - host BOOTTIME, trace_processor): first %d, last %d, '
               'spread %d ns; at min RTT %d ns; NTP midpoint at min RTT %d ns' % (
                   offs[0], offs[-1], max(offs) - min(offs), best[1], best[2][5]))
    return table


def calls(t, m, pid, kind, nr):
    """(own clock, host timeline, offset uncertainty) of pid's kind(nr)
    events, in order; recvfrom exits only if data came."""
    return [(ts, hts, sl) for ts, k, i, ret, hts, sl in sorted(t.sys.get((m, pid), []))
            if k == kind and i == nr and (kind == 'sys_enter' or (ret or 0) > 0)]


def check_causality(c, t, m, table, info):
    n = int(info['n'])
    ping, echo = int(info['ping_pid']), int(info['echo_pid'])
    g_send = calls(t, m, ping, 'sys_enter', NR_SENDTO)
    g_recv = calls(t, m, ping, 'sys_exit', NR_RECVFROM)
    h_recv = calls(t, None, echo, 'sys_exit', NR_RECVFROM)
    h_send = calls(t, None, echo, 'sys_enter', NR_SENDTO)
    counts = (len(g_send), len(h_recv), len(h_send), len(g_recv))
    c.check('N sendto/recvfrom of each side in the trace (guest send, host recv, '
            'host send, guest recv)', counts == (n,) * 4, '%s, N = %d' % (counts, n))
    if not table or min(counts) == 0 or len(set(counts)) != 1:
        c.check('causality: every receive later than its send', False,
                'not checked: needs the clock syncs and N matched syscalls')
        return
    # Index 1 is the time on the host's timeline (the host's own: equal),
    # index 2 the uncertainty of the offset that put it there: the whole
    # round (t4 - t1) of the RemoteClockSync in effect. A round's NTP
    # estimate, which is what trace_processor computes from pbtrace's
    # pairing, is good to half its RTT, so t4 - t1 bounds the error of
    # every offset the file makes trace_processor use, twice over.
    up = [hr[1] - gs[1] for gs, hr in zip(g_send, h_recv)]
    down = [gr[1] - hs[1] for hs, gr in zip(h_send, g_recv)]
    slack_up = [gs[2] for gs in g_send]
    slack_down = [gr[2] for gr in g_recv]
    rtt = [gr[0] - gs[0] for gs, gr in zip(g_send, g_recv)]
    c.note('UDP one-way delays on the host timeline: guest->host min %d / median %d ns, '
           'host->guest min %d / median %d ns; RTT (guest clock) median %d ns; '
           'offset uncertainty (t4 - t1 in effect) median %d ns' % (
               min(up), statistics.median(up), min(down), statistics.median(down),
               statistics.median(rtt), statistics.median(slack_up + slack_down)))
    strict = [sum(1 for d in up if d <= 0), sum(1 for d in down if d <= 0)]
    c.note('strictly backwards with trace_processor\'s offsets (no uncertainty allowed): '
           'guest->host %d, host->guest %d of %d' % (strict[0], strict[1], n))
    bad_up = [(i, d, slack_up[i]) for i, d in enumerate(up) if d <= -slack_up[i]]
    bad_down = [(i, d, slack_down[i]) for i, d in enumerate(down) if d <= -slack_down[i]]
    c.check('causality: each host recvfrom returns after the guest\'s sendto, within '
            'the offset\'s uncertainty (%d rounds)' % n, not bad_up,
            '%d rounds backwards (round, ns, uncertainty), first %s' % (len(bad_up), bad_up[:3]))
    c.check('causality: each guest recvfrom returns after the host\'s sendto, within '
            'the offset\'s uncertainty (%d rounds)' % n, not bad_down,
            '%d rounds backwards (round, ns, uncertainty), first %s' % (
                len(bad_down), bad_down[:3]))
    # The round trip seen by the guest alone needs no offset; the one-way
    # delays the offsets imply must each fit inside it, to the same
    # uncertainty.
    bad = [i for i in range(n) if not (up[i] < rtt[i] + slack_up[i] and
                                       down[i] < rtt[i] + slack_down[i])]
    c.check('one-way delays each shorter than their round trip, within the uncertainty',
            not bad, '%d rounds (up, down, rtt): %s' % (
                len(bad), [(up[i], down[i], rtt[i]) for i in bad[:3]]))
    # Every message bounds the true offset (guest - host): a datagram
    # the guest sent at gs and the host got at hr says offset > gs - hr,
    # one the host sent at hs and the guest got at gr says offset < gr - hs;
    # a ping round says t1 - m < offset < t4 - m in the same way (m lies
    # between the host's receive and reply). All of
    # them must agree: if the intersection is empty, a recorded clock stamp
    # is wrong. Only ping rounds within 10 s of the echo take part, so that
    # two guests' clocks running at slightly different rates (a TSC
    # calibrated under TCG) cannot empty it over a long session.
    lo = max(gs[0] - hr[0] for gs, hr in zip(g_send, h_recv))
    hi = min(gr[0] - hs[0] for gr, hs in zip(g_recv, h_send))
    near = [r for _, _, r in table
            if g_send[0][0] - 10**10 <= r[0] <= g_recv[-1][0] + 10**10] or \
        [r for _, _, r in table]
    plo = max(r[0] - r[1] for r in near)
    phi = min(r[3] - r[2] for r in near)
    used = sorted({gs[0] - gs[1] for gs in g_send + g_recv})
    best = min(table, key=lambda x: x[2][4])
    c.note('offset (guest - host) every echo round allows: %d .. %d ns; every ping '
           'round: %d .. %d ns; trace_processor\'s offsets in use for these events: '
           '%s ns; NTP midpoint of the lowest-RTT ping round (RTT %d ns): %d ns' % (
               lo, hi, plo, phi, used[:6], best[2][4], best[2][5]))
    c.check('the %d echo rounds and %d ping rounds agree: some offset satisfies all'
            % (n, len(near)), max(lo, plo) <= min(hi, phi),
            'echo %d .. %d, pings %d .. %d' % (lo, hi, plo, phi))
    span = best[2][3] - best[2][0]
    c.check('trace_processor\'s offset of the lowest-RTT round is within its t4 - t1 '
            'of the echo window', lo - span <= best[1] <= hi + span,
            '%d not in %d .. %d +- %d' % (best[1], lo, hi, span))


def check_timeline(c, t, m):
    """The guest records from CONTROL start to CONTROL stop, which the host
    sends after its own probes are on and after they are off: on the host's
    timeline its first event must follow the host's first. Its last may
    follow the host's last by the stop's trip (seconds under TCG, never
    more than 5): a missing or wrong offset moves them by the guests'
    difference in boot time."""
    hs, gs = t.span.get(None), t.span.get(m)
    c.check('every guest event follows a RemoteClockSync of its machine in the file '
            '(trace_processor has no offset for it before)', not t.unsynced.get(m),
            '%d events before the first' % t.unsynced.get(m, 0))
    if not (hs and gs and None not in hs + gs):
        c.check('guest events on the host timeline', False, 'no events')
        return
    c.note('host events %d..%d, guest events on the host timeline %d..%d' % (
        hs[0], hs[1], gs[0], gs[1]))
    slack = t.first_slack.get(m, 0)
    c.check('the guest\'s first event comes after the host\'s first (CONTROL start), '
            'within its offset\'s uncertainty', gs[0] > hs[0] - slack,
            'guest first %d, host first %d, uncertainty %d' % (gs[0], hs[0], slack))
    c.check('the guest\'s last event is within 5 s of the host\'s last (CONTROL stop)',
            hs[1] - 5 * 10**9 < gs[1] < hs[1] + 5 * 10**9,
            'guest last %d, host last %d' % (gs[1], hs[1]))


def check_all(path, info):
    c = Checks()
    t = Trace(path)
    check_machines(c, t)
    m = guest_of(t)
    if m is None:
        c.check('guest data present', False, 'no relayed machine: later checks skipped')
        return c.failed
    check_identity(c, t, m, info)
    check_events(c, t, m)
    table = sync_table(c, t, m)
    check_causality(c, t, m, table, info)
    check_timeline(c, t, m)
    check_stats(c, t, m)
    return c.failed


def check_stats(c, t, m):
    """traced writes one trace_stats per machine (docs/traced.md): its
    chunks_written must be the machine's chunks in this very file (one
    ftrace_events packet each), and nothing was lost on this quiet run."""
    stats = t.stats.get(m, [])
    c.check('one trace_stats stamped with the guest\'s machine_id', len(stats) == 1,
            '%d found' % len(stats))
    if len(stats) != 1:
        return
    buf = one(stats[0], 'buffer_stats', {})
    c.note('guest trace_stats: %s, producers_connected %s, producers_seen %s' % (
        {k: one(buf, k) for k in buf}, one(stats[0], 'producers_connected'),
        one(stats[0], 'producers_seen')))
    c.check('its chunks_written is the guest\'s chunk count in the file',
            one(buf, 'chunks_written') == t.bundles.get(m, 0),
            'chunks_written %s, %d ftrace_events packets' % (
                one(buf, 'chunks_written'), t.bundles.get(m, 0)))
    lost = (one(buf, 'chunks_discarded') or 0) + (one(buf, 'trace_writer_packet_loss') or 0)
    c.check('no guest chunk dropped or lost on the way', lost == 0,
            'chunks_discarded + trace_writer_packet_loss = %d' % lost)


def check_hostonly(path):
    c = Checks()
    t = Trace(path)
    ids = sorted(m for m in t.machines if m is not None)
    c.check('machine_name_filter "host": no packet carries a machine_id', not ids,
            'machine ids %s' % ids)
    c.check('machine_name_filter "host": no RemoteClockSync', not t.syncs,
            '%d' % sum(len(v) for v in t.syncs.values()))
    kinds = t.kinds.get(None, set())
    c.check('machine_name_filter "host": the host\'s sched and syscall events are there',
            {'sched_switch', 'sys_enter'} <= kinds, 'kinds %s' % sorted(kinds - {None}))
    return c.failed


def main(argv):
    if len(argv) >= 3 and argv[1] == 'all':
        info = dict(a.split('=', 1) for a in argv[3:])
        failed = check_all(argv[2], info)
    elif len(argv) == 3 and argv[1] == 'hostonly':
        failed = check_hostonly(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    # The caller counts a run without this line as a failure: a crash
    # after some PASS lines must not pass.
    print('DONE')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
