#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""orphan_test.sh's checks: no FtraceEventBundle carries a descriptor
without an event of its kind, nor an event without its descriptor
(docs/generic-events.md: a chunk describes its own events), judged on
protoc's decode with Perfetto's schema; and how often the case the fix is
about happened: a chunk that ended at an event of a kind it did not hold
yet, with room left for that kind's descriptor but not for both (the
event took the room, did not fit, gave it back: try_event()'s put_desc();
without it, the chunk kept that descriptor, an orphan).
That count is read off the file's bytes: each chunk is one Trace.packet
record of `used` bytes, and the next chunk of its CPU starts with the
event that did not fit. Prints PASS/FAIL lines, then DONE.

    orphan_check.py SCHEMA_DIR FILE.pftrace FILE.txt DP_INFO CHUNK_KB ROUNDS NAME...
"""
import codecs
import re
import subprocess
import sys

BASE = 65536


def say(good, what):
    print(('PASS ' if good else 'FAIL ') + what)


def describe(schema, raws):
    """Each descriptor's event name and field count, by protoc's decode of
    them all as one FileDescriptorProto's message_type list (Perfetto's
    copy of descriptor.proto, in its schema): one protoc run."""
    blob = b''.join(b'\x22' + varint_bytes(len(r)) + r for r in raws)
    out = subprocess.run(['protoc', '-I', schema, '--decode=perfetto.protos.FileDescriptorProto',
                          'perfetto_trace.proto'], input=blob,
                         capture_output=True, check=True).stdout.decode()
    res, depth = [], 0
    for line in out.splitlines():
        if depth == 0 and line == 'message_type {':
            res.append([None, 0])
        elif depth == 1 and line.startswith('  name: '):
            res[-1][0] = line[len('  name: '):].strip('"')
        elif depth == 1 and line == '  field {':
            res[-1][1] += 1
        depth += line.endswith('{') - (line.strip() == '}')
    if len(res) != len(raws):
        raise ValueError('protoc decoded %d of %d descriptors' % (len(res), len(raws)))
    return dict(zip(raws, map(tuple, res)))


def varint_bytes(v):
    o = b''
    while v >= 0x80:
        o += bytes([v & 0x7f | 0x80])
        v >>= 7
    return o + bytes([v])


def protoc_bundles(txt):
    """Per packet with ftrace_events: event ids, descriptors {id: the
    DescriptorProto's bytes}, field entries per event id, duplicate
    descriptor ids."""
    out = []
    stack = []
    cur = None
    for raw in open(txt):
        line = raw.strip()
        m = re.match(r'^(\w+) \{$', line)
        if m:
            name = m.group(1)
            stack.append(name)
            if stack == ['packet', 'ftrace_events']:
                cur = {'ev': [], 'desc': {}, 'fe': {}, 'dup': []}
                out.append(cur)
            elif (cur is not None and name.isdigit() and int(name) >= BASE
                  and stack[:-1] == ['packet', 'ftrace_events', 'event']):
                cur['ev'].append(int(name))
                cur['fe'].setdefault(int(name), 0)
            elif stack == ['packet', 'ftrace_events', 'generic_event_descriptors']:
                d = {'id': None, 'bytes': None}
                cur['cur_desc'] = d
            continue
        if line == '}':
            name = stack.pop() if stack else ''
            if stack == ['packet', 'ftrace_events'] and name == 'generic_event_descriptors':
                d = cur.pop('cur_desc')
                if d['id'] in cur['desc']:
                    cur['dup'].append(d['id'])
                cur['desc'][d['id']] = d['bytes']
            continue
        m = re.match(r'^(\w+): (.*)$', line)
        if not m or cur is None:
            continue
        key, val = m.group(1), m.group(2)
        if stack == ['packet', 'ftrace_events', 'generic_event_descriptors'] and key == 'field_id':
            cur['cur_desc']['id'] = int(val)
        elif (stack == ['packet', 'ftrace_events', 'generic_event_descriptors']
              and key == 'event_descriptor'):
            cur['cur_desc']['bytes'] = codecs.escape_decode(val[1:-1].encode('latin-1'))[0]
        elif (len(stack) == 4 and stack[:3] == ['packet', 'ftrace_events', 'event']
              and stack[3].isdigit() and int(stack[3]) >= BASE):
            cur['fe'][int(stack[3])] += 1
    return out


# -- the file's bytes: framing only (tags and lengths) ---------------------

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b, i, end):
    while i < end:
        start = i
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
            yield num, v, start, i
        elif wt == 2:
            n, i = varint(b, i)
            yield num, (i, i + n), start, i + n
            i += n
        elif wt == 1:
            yield num, None, start, i + 8
            i += 8
        elif wt == 5:
            yield num, None, start, i + 4
            i += 4
        else:
            raise ValueError('wire type %d at %d' % (wt, start))


def raw_chunks(path):
    """Per top-level record: size, cpu, events [(ts, kind, size)], and
    {kind: descriptor room}."""
    b = open(path, 'rb').read()
    out = []
    for num, v, start, end in fields(b, 0, len(b)):
        if num != 1 or v is None:
            continue
        c = {'size': end - start, 'cpu': None, 'ev': [], 'need': {}}
        for pn, pv, _, _ in fields(b, v[0], v[1]):
            if pn != 1 or not isinstance(pv, tuple):
                continue
            for bn, bv, bs, be in fields(b, pv[0], pv[1]):
                if bn == 1:
                    c['cpu'] = bv
                elif bn == 2:
                    ts, kind = None, None
                    for en, ev, _, _ in fields(b, bv[0], bv[1]):
                        if en == 1:
                            ts = ev
                        elif en >= BASE:
                            kind = en
                    c['ev'].append((ts, kind, be - bs))
                elif bn == 11:
                    for dn, dv, _, _ in fields(b, bv[0], bv[1]):
                        if dn == 1:
                            c['need'][dv] = be - bs
        out.append(c)
    return out


def main():
    schema, path, txt, info, chunk_kb, rounds = sys.argv[1:7]
    names = sys.argv[7:]
    chunk = int(chunk_kb) * 1024
    rounds = int(rounds)
    kv = {}
    for line in open(info):
        k, _, v = line.strip().partition('=')
        kv[k] = v

    pb = protoc_bundles(txt)
    orphans, undescribed, dups = [], [], []
    kind_name, nfields = {}, {}
    raws = list(dict.fromkeys(r for p in pb for r in p['desc'].values()))
    seen = describe(schema, raws)
    for p in pb:
        for d, raw in p['desc'].items():
            if d in kind_name and kind_name[d] != seen[raw][0]:
                print('# field %d is %s and %s' % (d, kind_name[d], seen[raw][0]))
                dups.append((-1, d))
            kind_name[d], nfields[d] = seen[raw]
    for i, p in enumerate(pb):
        evs = set(p['ev'])
        for d in p['desc']:
            if d not in evs:
                orphans.append((i, kind_name[d]))
        for e in sorted(evs):
            if e not in p['desc']:
                undescribed.append((i, e))
        dups += [(i, d) for d in p['dup']]
    print('# %d bundles, %d descriptors, %d events (protoc)' % (
        len(pb), sum(len(p['desc']) for p in pb), sum(len(p['ev']) for p in pb)))
    for i, n in orphans[:5]:
        print('# bundle %d carries %s\'s descriptor and none of its events' % (i, n))
    say(not orphans, 'no bundle carries a descriptor without an event of its kind '
        '(%d orphan descriptors in %d bundles)' % (len(orphans), len({o[0] for o in orphans})))
    for i, e in undescribed[:5]:
        print('# bundle %d has events of field %d and not its descriptor' % (i, e))
    say(not undescribed and pb, 'every generic event has its descriptor in its own bundle '
        '(%d kinds without)' % len(undescribed))
    say(not dups, 'no descriptor twice in one bundle, one name per field id (%d)' % len(dups))

    # what each kind is, and how many of it
    count, entries = {}, {}
    for p in pb:
        for e in p['ev']:
            count[e] = count.get(e, 0) + 1
        for e, n in p['fe'].items():
            entries[e] = entries.get(e, 0) + n
    by_name = {kind_name.get(k): n for k, n in count.items()}
    want = ['sys_%s_%s' % (d, n) for n in names for d in ('enter', 'exit')]
    wrong = ['%s=%s' % (w, by_name.get(w, 0)) for w in want if by_name.get(w, 0) != rounds]
    say(not wrong and len(by_name) == len(want),
        'each of the %d tracepoints has the workload\'s %d events in the decode%s' % (
            len(want), rounds, (': ' + ' '.join(wrong[:6])) if wrong else ''))

    # the bytes agree with protoc, then the count of the case
    rc = raw_chunks(path)
    same = len(rc) == len(pb) and all(
        [e[1] for e in c['ev']] == p['ev'] and set(c['need']) == set(p['desc'])
        for c, p in zip(rc, pb))
    say(same and str(len(rc)) == kv.get('chunks_in_file'),
        'the file is %s chunks, one bundle each, as protoc decodes them (%d records)' % (
            kv.get('chunks_in_file'), len(rc)))
    need = {}
    for c in rc:
        need.update(c['need'])
    per_cpu = {}
    for c in rc:
        if c['ev']:
            per_cpu.setdefault(c['cpu'], []).append(c)
    taken_back = kept = no_room = repeat = odd = 0
    for cs in per_cpu.values():
        cs.sort(key=lambda c: c['ev'][0][0])
        for c, n in zip(cs, cs[1:]):
            _, k, size = n['ev'][0]
            free = chunk - c['size']
            if k in {e[1] for e in c['ev']}:
                repeat += 1
                ok = free < size
            elif k in c['need']:
                kept += 1       # took the room and sealed it: an orphan
                ok = free < size
            elif free >= need[k]:
                taken_back += 1
                ok = free - need[k] < size
            else:
                no_room += 1
                ok = True
            odd += not ok
    ends = taken_back + kept + no_room + repeat
    print('# %d chunk ends: %d at an event of a kind the chunk held, %d at a new kind '
          'with no room for its descriptor, %d at a new kind whose descriptor room it '
          'took and gave back, %d that kept it' % (ends, repeat, no_room, taken_back, kept))
    sizes = [e[2] for c in rc for e in c['ev']]
    print('# (a chunk of %d bytes; chunks of %d..%d, events of %d..%d)' % (
        chunk, min(c['size'] for c in rc), max(c['size'] for c in rc),
        min(sizes), max(sizes)))
    say(odd == 0 and ends == len(rc) - len(per_cpu),
        'every chunk but the last of its CPU ended at the next chunk\'s first event, '
        'which did not fit (%d did fit)' % odd)
    say(taken_back + kept >= 10,
        'the case was exercised: %d chunks ended at a first event of its kind that took '
        'its descriptor room and did not fit' % (taken_back + kept))
    for k in sorted(kind_name):
        print('# %s: field %d, %d fields, descriptor %d bytes' % (
            kind_name[k], k, nfields.get(k, 0), need.get(k, 0)))
    # for the shell: trace_processor's counts to compare with
    with open(txt + '.kinds', 'w') as f:
        for k in sorted(count):
            f.write('%s|%d|%d\n' % (kind_name.get(k), count[k], entries.get(k, 0)))
    print('DONE')


main()
