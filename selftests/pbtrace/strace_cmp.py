#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Compare tracectl's call lines with strace's, argument by argument.

  strace_cmp.py STRACE_FILE TRACECTL_LINES TID [ALSO_NEEDED...]

STRACE_FILE is one process's strace -ff -e verbose=all output (PREFIX.PID:
its pid is in its name), TRACECTL_LINES
the output of tracectl report (or trace) of the same command, TID that
process in it. The k-th call of each syscall in one is paired with the k-th
in the other: both saw the command from its execve on, so they saw the same
calls (a different number of some call is reported, and fails).

An argument is compared when strace prints it as a value: strace's
structures, arrays and buffers read from memory ({..}, [..], "data" where
tracectl has the pointer) are not what tracectl decodes, and are skipped.
strace leaves some arguments out by design where it prints fewer (futex's
by its op, prctl's by its option, the stack of rt_sigreturn) and names
clone's; those are paired by name or by position as far as strace goes.
Everything else must be the same text: numbers, flags, enums, signals,
modes, NULL and addresses (both runs are under setarch -R, so the same
addresses), strings. Pids differ from run to run: strace's pid of the
process and of the children its clones returned are read as tracectl's.

Prints a table (syscall, argument, calls compared, an example), then
PASS/FAIL lines for tap.sh's tp_tap, one for the words and one per
ALSO_NEEDED "syscall:arg" that must have been compared at least once, the
differences as "#" lines, and DONE.
"""
import re
import sys

# strace prints fewer arguments than the syscall has, on purpose.
FEWER = {'futex', 'prctl', 'rt_sigreturn', 'arch_prctl', 'exit_group'}
# clone's arguments by strace's names and tracectl's.
CLONE = {'child_stack': 'newsp', 'flags': 'clone_flags',
         'parent_tid': 'parent_tidptr', 'child_tidptr': 'child_tidptr',
         'tls': 'tls'}


def split_args(text):
    """Top-level ", "-separated items, quotes and brackets kept whole."""
    out, depth, cur, q, i = [], 0, '', False, 0
    while i < len(text):
        c = text[i]
        if q:
            cur += c
            if c == '\\' and i + 1 < len(text):
                cur += text[i + 1]
                i += 1
            elif c == '"':
                q = False
        elif c == '"':
            q = True
            cur += c
        elif c in '([{':
            depth += 1
            cur += c
        elif c in ')]}':
            depth -= 1
            cur += c
        elif c == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
        else:
            cur += c
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out


def call_parts(line):
    """(name, args text, what follows) of 'name(args) = ...', the args up
    to the ')' that closes the name's '('."""
    m = re.match(r'([a-z_0-9]+)\(', line)
    if not m:
        return None
    depth, q, i = 0, False, m.end() - 1
    while i < len(line):
        c = line[i]
        if q:
            if c == '\\':
                i += 1
            elif c == '"':
                q = False
        elif c == '"':
            q = True
        elif c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth == 0:
                return m.group(1), line[m.end():i], line[i + 1:]
        i += 1
    return None


def strace_calls(path):
    calls = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith(('---', '+++', '<...')) or 'unfinished ...>' in line:
                continue
            p = call_parts(line)
            if p:
                calls.setdefault(p[0], []).append((split_args(p[1]), ret(p[2])))
    return calls


def ret(text):
    """The number after ' = ', or None."""
    m = re.match(r'\s*= (-?\d+)', text)
    return int(m.group(1)) if m else None


LINE = re.compile(r'^\s*[\d.]+ \([^)]*\): \S+/(\d+) (.*)$')


def tracectl_calls(path, tid):
    calls = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.rstrip('\n'))
            if not m or int(m.group(1)) != tid or m.group(2).startswith('...'):
                continue
            p = call_parts(m.group(2))
            if not p:
                continue
            args = []
            for a in split_args(p[1]):
                k, _, v = a.partition(': ')
                args.append((k, v))
            calls.setdefault(p[0], []).append((args, ret(p[2])))
    return calls


def pid_map(spid, tid, st, tc):
    """strace's pids -> tracectl's: the process's own, then its children
    as the k-th clone (fork, vfork) of each returned them."""
    m = {spid: tid}
    for name in ('clone', 'clone3', 'fork', 'vfork'):
        for (_, a), (_, b) in zip(st.get(name, []), tc.get(name, [])):
            if a and b and a > 0 and b > 0:
                m[a] = b
    return m


def repid(text, pids):
    """A pid of strace's run as the same process's pid in tracectl's (a
    decimal: 0600 is a mode)."""
    if re.fullmatch(r'-?[1-9]\d*', text) and abs(int(text)) in pids:
        return str(pids[abs(int(text))] * (-1 if text.startswith('-') else 1))
    return text


def comparable(theirs, ours):
    """strace prints a value here, not memory read behind a pointer."""
    if theirs[:1] in ('{', '['):
        return False
    if theirs.startswith('"') and not ours.startswith('"'):
        return False
    return True


def pairs(name, theirs, ours):
    """(argument name, strace's text, ours) to compare for one call."""
    if name == 'clone':
        by = dict(ours)
        for a in theirs:
            k, _, v = a.partition('=')
            if CLONE.get(k) in by:
                yield CLONE[k], v, by[CLONE[k]]
        return
    n = min(len(theirs), len(ours))
    if len(theirs) != len(ours) and name not in FEWER:
        yield '(arguments shown)', str(len(theirs)), str(len(ours))
    for i in range(n):
        yield ours[i][0], theirs[i], ours[i][1]


def main():
    sfile, tfile, tid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    needed = sys.argv[4:]
    st, tc = strace_calls(sfile), tracectl_calls(tfile, tid)
    m = re.search(r'\.(\d+)$', sfile)
    pids = pid_map(int(m.group(1)) if m else -1, tid, st, tc)
    stats, bad, counts = {}, [], []
    for name in sorted(set(st) | set(tc)):
        a, b = st.get(name, []), tc.get(name, [])
        if len(a) != len(b):
            counts.append('%s: %d calls in strace, %d in tracectl' % (name, len(a), len(b)))
        for (theirs, _), (ours, _) in zip(a, b):
            for arg, x, y in pairs(name, theirs, ours):
                if not comparable(x, y):
                    continue
                x = repid(x, pids)
                s = stats.setdefault((name, arg), [0, 0, x])
                if len(x) > len(s[2]):
                    s[2] = x
                s[0] += 1
                if x != y:
                    s[1] += 1
                    bad.append('%s %s: strace %s, tracectl %s' % (name, arg, x, y))
    print('%-18s %-16s %6s %6s  %s' % ('syscall', 'argument', 'calls', 'differ', 'strace printed (one of them)'))
    for (name, arg), (n, d, ex) in sorted(stats.items()):
        print('%-18s %-16s %6d %6d  %s' % (name, arg, n, d, ex[:60]))
    total = sum(s[0] for s in stats.values())
    print('%s the words of %d arguments (%d calls, %d syscalls) are strace\'s' %
          ('PASS' if not bad and not counts else 'FAIL', total,
           sum(len(v) for v in tc.values()), len(tc)))
    for line in (counts + bad)[:40]:
        print('#   ' + line)
    for need in needed:
        name, _, arg = need.partition(':')
        n = stats.get((name, arg), [0])[0]
        print('%s %s\'s %s compared (%d times)' % ('PASS' if n else 'FAIL', name, arg, n))
    print('DONE')
    return 0


if __name__ == '__main__':
    sys.exit(main())
