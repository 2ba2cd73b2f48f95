#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Synthetic two-machine traces for mm_check_test.sh, in protobuf text
format (Trace): protoc --encode with Perfetto's schema turns them into the
bytes a real recording has, so mm_check.py is tested on the same decode
path it reads real files with.

  mm_synth.py CASE > trace.txt

A guest whose BOOTTIME is OFFSET ahead of the host's records 20 UDP
rounds (sendto 44 / recvfrom 45, guest pid 77, host echo pid 55), with a
ping round every second (one-way 100 us, host turnaround 10 us) and the
guest's chunk after the one RemoteClockSync (the session's first round),
as pbtrace writes them. CASE breaks one thing:

  good       nothing: every check must pass
  clock      the ping rounds' guest stamps are 2 ms off: the offset the
             file gives disagrees with what the datagrams allow
  biased     the rounds paired as (t1, t2), (t4, t3): trace_processor's
             offset is not the NTP midpoint
  nosync     no RemoteClockSync before the guest's events
  steps      a RemoteClockSync for every ping round: offset steps
  guestclock a clock_snapshot stamped with the guest's machine_id
  identity   the guest's system_info names another machine
  leak       for the hostonly check: a guest packet in the file
"""
import sys

OFFSET = 3 * 10**9
M = 1
SEQ = (1 << 25) + M * 8192


def snap(ts):
    return 'clocks { clock_id: 6 timestamp: %d }' % ts


def packet(body):
    return 'packet {\n%s\n}\n' % body


def event(ts, pid, kind, body):
    return 'event { timestamp: %d pid: %d %s { %s } }' % (ts, pid, kind, body)


def sysinfo(name, machine_id=None):
    mid = 'machine_id: %d ' % machine_id if machine_id else ''
    return packet('%ssystem_info { utsname { sysname: "Linux" release: "6.1.0" '
                  'machine: "x86_64" } num_cpus: 2 machine_name: "%s" }' % (mid, name))


def sync(k, err, biased=False):
    """One ping round as pbtrace writes it: (t1, m), (t4, m + (t4 - t1)).
    biased: the pairing pbtrace used before, (t1, t2), (t4, t3), which
    trace_processor reads a quarter round trip off."""
    t2 = 10**10 + k * 10**9
    t1 = t2 - 100000 + OFFSET + err
    t3 = t2 + 10000
    t4 = t3 + 100000 + OFFSET + err
    m = (t2 + t3) // 2
    h1, h2 = (t2, t3) if biased else (m, m + (t4 - t1))
    return packet('machine_id: %d remote_clock_sync { synced_clocks { client_clocks { %s } '
                  'host_clocks { %s } } synced_clocks { client_clocks { %s } host_clocks '
                  '{ %s } } }' % (M, snap(t1), snap(h1), snap(t4), snap(h2)))


def rounds():
    host, guest = [], []
    for i in range(20):
        gs = 10**10 + 5 * 10**8 + i * 10**8   # on the host's clock
        hr = gs + 200000
        hs = hr + 50000
        gr = hs + 200000
        guest += [event(gs + OFFSET, 77, 'sys_enter', 'id: 44'),
                  event(gr + OFFSET, 77, 'sys_exit', 'id: 45 ret: 64')]
        host += [event(hr, 55, 'sys_exit', 'id: 45 ret: 64'),
                 event(hs, 55, 'sys_enter', 'id: 44')]
    host.insert(0, event(10**10, 1, 'sched_switch', 'prev_pid: 1'))
    host.append(event(10**10 + 4 * 10**9, 1, 'sched_switch', 'prev_pid: 1'))
    guest.insert(0, event(10**10 + OFFSET + 10**8, 1, 'sched_switch', 'prev_pid: 1'))
    return host, guest


def trace(case):
    host, guest = rounds()
    err = 2000000 if case == 'clock' else 0
    out = [sysinfo('host-machine'),
           packet('trusted_packet_sequence_id: 1 clock_snapshot { %s '
                  'clocks { clock_id: 3 timestamp: %d } }' % (snap(10**10), 10**10))]
    out.append(packet('trusted_packet_sequence_id: 1 ftrace_events { cpu: 0 %s }'
                      % ' '.join(host)))
    if case == 'leak':
        out.append(packet('machine_id: %d trusted_packet_sequence_id: %d ftrace_events '
                          '{ cpu: 0 %s }' % (M, SEQ, guest[0])))
        return ''.join(out)
    out.append(sysinfo('other' if case == 'identity' else 'guest2', M))
    if case == 'guestclock':
        out.append(packet('machine_id: %d clock_snapshot { %s }' % (M, snap(OFFSET))))
    syncs = [sync(k, err, case == 'biased') for k in range(5 if case == 'steps' else 1)]
    chunk = packet('machine_id: %d trusted_packet_sequence_id: %d ftrace_events '
                   '{ cpu: 1 %s }' % (M, SEQ + 1, ' '.join(guest)))
    if case == 'nosync':
        out += [chunk] + syncs
    else:
        out += syncs[:1] + [chunk] + syncs[1:]
    out.append(packet('machine_id: %d trace_stats { buffer_stats { chunks_written: 1 '
                      'chunks_discarded: 0 trace_writer_packet_loss: 0 } }' % M))
    return ''.join(out)


if __name__ == '__main__':
    if len(sys.argv) != 2 or sys.argv[1] not in ('good', 'clock', 'biased', 'nosync', 'steps',
                                                 'guestclock', 'identity', 'leak'):
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.stdout.write(trace(sys.argv[1]))
