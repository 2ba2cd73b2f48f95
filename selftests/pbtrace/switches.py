#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""switches.py DECODED: "prev_pid next_pid" of every sched_switch in a
protoc text decode, full events and compact_sched entries alike (the
compact ones expanded by dp_check.events, as trace_processor does: the
prev task is the CPU's previous switch's next), in file order."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dp_check  # noqa: E402

for _, _, _, kind, f in dp_check.events(dp_check.parse_text(sys.argv[1])):
    if kind == 'sched_switch':
        print(dp_check.one(f, 'prev_pid'), dp_check.one(f, 'next_pid'))
