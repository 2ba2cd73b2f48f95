#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A fleet's file without a fleet, for timing trace_processor natively
(docs/benchmarks.md, "A fleet"):

  fleet_synth.py IN.pftrace N OUT [--chunks 7] [--events 200] [--shift S]
                 [--seq unique|reuse] [--sync yes|no] [--stats yes|no]
                 [--sysinfo yes|no]

IN is a real two-machine recording pbtrace wrote (the fixture
user/tests/fixtures/traces/machines.pftrace): its host packets are copied,
and its machine 1's (system_info, remote_clock_sync, chunks, trace_stats,
as the endpoint and traced write them) N times, as machines 1..N: each
copy's machine_id, trusted_packet_sequence_id (2^25 + id * 8192 + cpu, or
with --seq reuse machine 1's for all) and machine_name (gID) rewritten,
its first C chunks kept, each bundle cut to its first E events (0: all)
and every timestamp moved by (id - 1) * S seconds (relay_fleet's machines
take turns). The --sync/--stats/--sysinfo no variants drop that packet,
to see what each costs. Byte-level: nothing but those fields changes."""
import sys, argparse


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return r, i


def enc(v):
    out = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c); return bytes(out)


def fields(b):
    i = 0; out = []
    while i < len(b):
        key, j = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, k = varint(b, j); out.append((f, wt, v, b[i:k])); i = k
        elif wt == 2:
            n, k = varint(b, j); out.append((f, wt, b[k:k + n], b[i:k + n])); i = k + n
        elif wt == 1:
            out.append((f, wt, b[j:j + 8], b[i:j + 8])); i = j + 8
        elif wt == 5:
            out.append((f, wt, b[j:j + 4], b[i:j + 4])); i = j + 4
        else:
            raise ValueError(wt)
    return out


def fv(f, v):
    return enc(f << 3) + enc(v)


def fl(f, data):
    return enc(f << 3 | 2) + enc(len(data)) + data


def packed_take(data, n):
    i = 0; k = 0
    while i < len(data) and k < n:
        _, i = varint(data, i); k += 1
    return data[:i]


def trunc_cs(cs, n):
    out = b''
    for f, wt, v, raw in fields(cs):
        if wt == 2 and f != 5:
            out += fl(f, packed_take(v, n))
        else:
            out += raw
    return out


def shift_packed(data, d):
    v, i = varint(data, 0)
    return enc(v + d) + data[i:]


def shift_cs(cs, d):
    out = b''
    for f, wt, v, raw in fields(cs):
        if f in (1, 7) and wt == 2 and v:
            out += fl(f, shift_packed(v, d))
        else:
            out += raw
    return out


def shift_msg(b, d, tsf):
    out = b''
    for f, wt, v, raw in fields(b):
        if wt == 0 and f in tsf:
            out += fv(f, v + d)
        else:
            out += raw
    return out


def shift_bundle(b, d):
    out = b''
    for f, wt, v, raw in fields(b):
        if f == 2:
            out += fl(2, shift_msg(v, d, (1,)))
        elif f == 4:
            out += fl(4, shift_cs(v, d))
        elif f in (9, 10) and wt == 0:
            out += fv(f, v + d)
        else:
            out += raw
    return out


def shift_snap(b, d):
    out = b''
    for f, wt, v, raw in fields(b):
        if f == 1:
            out += fl(1, shift_msg(v, d, (2,)))
        else:
            out += raw
    return out


def shift_sync(b, d):
    out = b''
    for f, wt, v, raw in fields(b):
        if f == 1:
            sc = b''
            for f2, wt2, v2, r2 in fields(v):
                sc += fl(f2, shift_snap(v2, d)) if f2 in (2, 3) else r2
            out += fl(1, sc)
        else:
            out += raw
    return out


def trunc_bundle(b, n):
    out = b''; ev = 0
    for f, wt, v, raw in fields(b):
        if f == 2:
            ev += 1
            if ev > n:
                continue
            out += raw
        elif f == 4:
            out += fl(4, trunc_cs(v, n))
        else:
            out += raw
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('inp'); ap.add_argument('n', type=int); ap.add_argument('out')
    ap.add_argument('--chunks', type=int, default=7)
    ap.add_argument('--events', type=int, default=200)
    ap.add_argument('--seq', default='unique')
    ap.add_argument('--sync', default='yes')
    ap.add_argument('--stats', default='yes')
    ap.add_argument('--sysinfo', default='yes')
    ap.add_argument('--shift', type=float, default=0.0, help='s per machine')
    a = ap.parse_args()
    data = open(a.inp, 'rb').read()
    pkts = [v for f, wt, v, raw in fields(data) if f == 1]
    host, guest = [], []
    for p in pkts:
        fs = fields(p)
        mid = [v for f, wt, v, raw in fs if f == 98]
        (guest if mid else host).append(fs)
    out = open(a.out, 'wb')
    for fs in host:
        out.write(fl(1, b''.join(r for f, wt, v, r in fs)))
    base = (1 << 25)
    for m in range(1, a.n + 1):
        chunks = 0
        d = int(a.shift * 1e9 * (m - 1))
        for fs in guest:
            kinds = set(f for f, wt, v, r in fs)
            if 1 in kinds:
                chunks += 1
                if chunks > a.chunks:
                    continue
            if 107 in kinds and a.sync != 'yes':
                continue
            if 35 in kinds and a.stats != 'yes':
                continue
            if 45 in kinds and a.sysinfo != 'yes':
                continue
            b = b''
            for f, wt, v, r in fs:
                if f == 98:
                    b += fv(98, m)
                elif f == 10 and v >= base:
                    cpu = (v - base) % 8192
                    if a.seq == 'unique':
                        b += fv(10, base + m * 8192 + cpu)
                    else:
                        b += fv(10, base + 8192 + cpu)
                elif f == 45:
                    si = b''
                    for f2, wt2, v2, r2 in fields(v):
                        if f2 == 17:
                            si += fl(17, b'g%d' % m)
                        else:
                            si += r2
                    b += fl(45, si)
                elif f == 1:
                    bb = trunc_bundle(v, a.events) if a.events else v
                    b += fl(1, shift_bundle(bb, d) if d else bb)
                elif f == 107 and d:
                    b += fl(107, shift_sync(v, d))
                else:
                    b += r
            out.write(fl(1, b))
    out.close()


main()
