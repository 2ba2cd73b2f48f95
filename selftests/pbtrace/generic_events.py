#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generic ftrace events out of protoc's decode of a trace (Perfetto's
schema does not know them, so protoc prints them as unknown fields by
number: `65536 { 1: 10 4: "comm" }`). Reads the decode on stdin, prints
one line per event: `FIELD_ID num=value ...` (strings unquoted), and per
FtraceEventBundle descriptor `descriptor FIELD_ID GROUP`.

    protoc --decode=perfetto.protos.Trace ... < f | generic_events.py
"""
import re
import sys

BASE = 65536


def main():
    stack = []          # names of the open messages
    cur = None          # [field_id, {num: value}] of the open generic event
    desc = None
    for raw in sys.stdin:
        line = raw.strip()
        m = re.match(r'^(\w+) \{$', line)
        if m:
            name = m.group(1)
            stack.append(name)
            if name.isdigit() and int(name) >= BASE and stack[-2:-1] == ['event']:
                cur = [int(name), []]
            elif name == 'generic_event_descriptors':
                desc = {}
            continue
        if line == '}':
            name = stack.pop() if stack else ''
            if cur and name == str(cur[0]):
                print(cur[0], ' '.join('%s=%s' % kv for kv in cur[1]))
                cur = None
            elif name == 'generic_event_descriptors' and desc is not None:
                print('descriptor', desc.get('field_id'), desc.get('group_name'))
                desc = None
            continue
        m = re.match(r'^(\w+): (.*)$', line)
        if not m:
            continue
        key, val = m.group(1), m.group(2)
        if val.startswith('"') and val.endswith('"'):
            val = val[1:-1]
        if cur and stack[-1] == str(cur[0]):
            cur[1].append((key, val))
        elif desc is not None and stack[-1] == 'generic_event_descriptors':
            desc[key] = val


main()
