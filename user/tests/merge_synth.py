#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Synthetic hosts' files for merge_cli_test.sh, as traced writes them, in
protobuf text format: protoc --encode with Perfetto's schema makes them
real .pftrace bytes (the caller runs it).

  merge_synth.py CASE > CASE.txt
  merge_synth.py expect HOST     the trace time of every machine's first
                                 event on HOST's BOOTTIME, the gap between
                                 events and their number

Every machine, whenever it booted, switches tasks at the same true
instants (wall time W0 + 1 s + i * 50 ms, i < 10), so trace_processor must
put every machine's events at the same times. The hosts' wall clocks
agree (NTP); the relayed machines' do not (a guest's REALTIME is 0.7 s
off), so only their remote_clock_sync places them. CASE:

  hostA       host "hostA" and relayed machine 1 "webA"
  hostB       host "hostB", relayed machines 1 "webB" and 3 "dbB"
  alone       host "hostC", nothing relayed
  sameboot    host "hostD" with hostA's boot id
  clash       host "webA": a name hostA's file has
  noreal      host "hostE" whose clock_snapshots hold no REALTIME
  nosync      host "hostF", relayed machine 1 "webF" with events and no
              remote_clock_sync
  noname      host without machine_name nor boot id (an older traced)
  reboot      host "hostR", relayed machines 1 and 2 both "webR": one
              guest rebooted during the session, a new machine id
"""
import sys

W0 = 1_700_000_000 * 10**9
S = 10**9
# Where each machine's BOOTTIME started, in wall time; a relayed
# machine's REALTIME error.
BOOT = {'hostA': W0 - 100 * S, 'webA': W0 - 37 * S, 'hostB': W0 - 250 * S,
        'webB': W0 - 11 * S, 'dbB': W0 - 400 * S, 'hostC': W0 - 999 * S,
        'hostD': W0 - 5 * S, 'hostE': W0 - 6 * S, 'hostF': W0 - 7 * S,
        'webF': W0 - 8 * S, 'noname': W0 - 9 * S, 'hostR': W0 - 12 * S,
        'webR': W0 - 3 * S, 'webR2': W0 - 2 * S}
RERR = {'webA': 700_000_000, 'webB': -400_000_000, 'dbB': 123_456_789, 'webF': 5}
BOOT_ID = {'hostA': '0a0a0a0a-1111-4111-8111-000000000001',
           'hostB': '0b0b0b0b-2222-4222-8222-000000000002',
           'hostC': '0c0c0c0c-3333-4333-8333-000000000003',
           'hostE': '0e0e0e0e-5555-4555-8555-000000000005',
           'hostF': '0f0f0f0f-6666-4666-8666-000000000006'}
BOOT_ID['hostD'] = BOOT_ID['hostA']
BOOT_ID['hostR'] = '0d0d0d0d-7777-4777-8777-000000000007'
TRACED_SEQ = 1 << 24
EVENTS = 10
GAP = 50 * 10**6


def boot(m, t):
    return t - BOOT[m]


def real(m, t):
    return t + RERR.get(m, 0)


def clocks(m, t, realtime=True):
    c = ('clocks { clock_id: 6 timestamp: %d } clocks { clock_id: 3 timestamp: %d }'
         % (boot(m, t), boot(m, t)))
    if realtime:
        c += ' clocks { clock_id: 1 timestamp: %d }' % real(m, t)
    return c


def packet(body):
    return 'packet {\n  %s\n}\n' % body


def traced(m, t, body):
    return packet('timestamp: %d trusted_packet_sequence_id: %d %s'
                  % (boot(m, t), TRACED_SEQ + 1, body))


def uts(name):
    return ('utsname { sysname: "Linux" release: "6.1.0-57-amd64" machine: "x86_64" } '
            'num_cpus: 2%s' % (' machine_name: "%s"' % name if name else ''))


def switches(m, pid):
    ev = []
    for i in range(EVENTS):
        a, b = (pid, 0) if i % 2 == 0 else (0, pid)
        ev.append('event { timestamp: %d pid: %d sched_switch { prev_comm: "%s" prev_pid: %d '
                  'prev_prio: 120 prev_state: %d next_comm: "%s" next_pid: %d next_prio: 120 } }'
                  % (boot(m, W0 + S + i * GAP), a, 'w' if a else 'swapper/0', a,
                     1 if a else 0, 'w' if b else 'swapper/0', b))
    return ' '.join(ev)


def relayed(host, mid, m, sync=True, name=None):
    """What the endpoint queues for a relayed machine: system_info, one
    remote_clock_sync (pbtrace's pairing: client t1, t4 against host m,
    m + (t4 - t1), m the middle of the host's receive and reply), a chunk,
    and at the end traced's trace_stats for it."""
    out = [packet('machine_id: %d system_info { %s }' % (mid, uts(name or m)))]
    if sync:
        t1 = W0 + S // 2
        t4 = t1 + 2 * 10**6
        mid_t = (t1 + t4) // 2
        out.append(packet(
            'machine_id: %d remote_clock_sync { synced_clocks { client_clocks { %s } '
            'host_clocks { %s } } synced_clocks { client_clocks { %s } host_clocks { %s } } }'
            % (mid, clocks(m, t1), clocks(host, mid_t), clocks(m, t4),
               clocks(host, mid_t + (t4 - t1)))))
    out.append(packet('machine_id: %d trusted_packet_sequence_id: %d ftrace_events { cpu: 0 %s }'
                      % (mid, (1 << 25) + mid * 8192 + 1, switches(m, 300 + mid))))
    return out, packet('machine_id: %d timestamp: %d trusted_packet_sequence_id: %d trace_stats '
                       '{ buffer_stats { chunks_written: 1 } }'
                       % (mid, boot(host, W0 + 2 * S), TRACED_SEQ + 1))


def host_file(h, name, guests=(), realtime=True, boot_id=None):
    out = [traced(h, W0, 'first_packet_on_sequence: true trace_config { buffers { size_kb: 1024 } }'),
           traced(h, W0, 'system_info { %s }' % uts(name))]
    if boot_id:
        out.append(traced(h, W0, 'trace_attributes { attribute { key: "pbtrace.boot_id" '
                                 'string_value: "%s" } }' % boot_id))
    for k in range(3):
        t = W0 + k * S
        out.append(traced(h, t, 'clock_snapshot { %s primary_trace_clock: 6 }'
                                % clocks(h, t, realtime)))
    out.append(packet('trusted_packet_sequence_id: 1 ftrace_events { cpu: 0 %s }' % switches(h, 100)))
    stats = []
    for g in guests:
        recs, st = relayed(h, *g)
        out += recs
        stats.append(st)
    return ''.join(out + stats)


CASES = {
    'hostA': lambda: host_file('hostA', 'hostA', [(1, 'webA', True)], boot_id=BOOT_ID['hostA']),
    'hostB': lambda: host_file('hostB', 'hostB', [(1, 'webB', True), (3, 'dbB', True)],
                               boot_id=BOOT_ID['hostB']),
    'alone': lambda: host_file('hostC', 'hostC', boot_id=BOOT_ID['hostC']),
    'sameboot': lambda: host_file('hostD', 'hostD', boot_id=BOOT_ID['hostD']),
    'clash': lambda: host_file('hostD', 'webA'),
    'noreal': lambda: host_file('hostE', 'hostE', realtime=False, boot_id=BOOT_ID['hostE']),
    'nosync': lambda: host_file('hostF', 'hostF', [(1, 'webF', False)], boot_id=BOOT_ID['hostF']),
    'noname': lambda: host_file('noname', None),
    'reboot': lambda: host_file('hostR', 'hostR', [(1, 'webR', True), (2, 'webR2', True, 'webR')],
                                boot_id=BOOT_ID['hostR']),
}

if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'expect':
        print(W0 + S - BOOT[sys.argv[2]], GAP, EVENTS)
    elif len(sys.argv) == 2 and sys.argv[1] in CASES:
        sys.stdout.write(CASES[sys.argv[1]]())
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
