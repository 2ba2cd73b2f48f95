#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tracectl trace against strace, the referee (issue 20): the same calls and
# the same words. In a guest with pbtrace.ko loaded, prints TAP.
#
# - names: every syscall's arguments, as the view's table names them (made
#   from the 6.1 source's SYSCALL_DEFINEs), are the fields of the running
#   kernel's own syscalls/sys_enter_* tracepoint, arch-defined ones (mmap,
#   arch_prctl, clone, rt_sigreturn...) included; and every syscall the
#   kernel implements has its names.
# - counts: find, tar, a shell pipeline and python3, each found in PATH
#   after entries that do not have it (the launcher's own execve attempts
#   would count there), under 'strace -f -c' and 'tracectl trace
#   --summary-only': the same calls and errors per syscall, every syscall,
#   but for those whose number depends on timing (TIMING).
# - words: sysdecode (a call for every decoder: mmap's prot and flags,
#   clone's flags, open's flags and mode, signals, fcntl commands, socket
#   families, ioctl requests, ...), find and python3 under 'strace -ff -e
#   verbose=all -e abbrev=none' and tracectl, both under setarch -R and the
#   same environment (so the same addresses): every argument strace prints
#   as a value has tracectl's text (strace_cmp.py; its table is printed).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
DECODE=$HERE/build/sysdecode
W=$(mktemp -d /tmp/syscall_strace.XXXXXX)
LOG=$W/traced.log
TRACED=
. "$HERE/tap.sh"
. "$HERE/traced_lib.sh"
export PYTHONDONTWRITEBYTECODE=1

# Whose count depends on when things happen, not on what was asked:
# futex (contention), wait4 and rt_sigreturn (a child's exit before or
# after the wait, a SIGCHLD or not), restart_syscall and sched_yield.
TIMING="futex wait4 rt_sigreturn restart_syscall sched_yield"
# Every run gets this environment and address layout, so that strace's
# run and tracectl's make the same calls with the same pointers. The
# first PATH entries lack every program: found in the fourth, as in the
# issue.
RUN=(env -i "PATH=$W/none1:$W/none2:$W/none3:/usr/bin:/bin" HOME=/root LANG=C setarch -R)

command -v strace >/dev/null || { echo "1..0 # SKIP needs strace (tools/deps installs it)"; exit 0; }
command -v setarch >/dev/null || { echo "1..0 # SKIP needs setarch (util-linux)"; exit 0; }
traced_begin "$DECODE"
mkdir -p "$W/doc" "$W/d"

# -- names: the table against the kernel's own tracepoints ---------------
TP=/sys/kernel/tracing/events/syscalls
if [[ -d $TP ]]; then
	# one awk over every format: "sys_enter_NAME field field ..."
	awk 'FNR == 1 { if (name) print name, f; name = FILENAME; sub(/\/format$/, "", name);
			sub(/.*\//, "", name); f = "" }
	     /field:/ && !/common_|__syscall_nr/ { x = $0; sub(/;.*/, "", x); sub(/.*[ *]/, "", x); f = f " " x }
	     END { if (name) print name, f }' "$TP"/sys_enter_*/format >"$W/formats"
	python3 - "$TOP/user/tracectl/syscall_defines.txt" "$U/syscall_args.h" "$W/formats" >"$W/names" <<'EOF'
import re, sys
defs = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if not l.startswith('#')]
table = {}
for l in open(sys.argv[2]):
    m = re.match(r'\s*\{ "(\w+)", (\d+), \{(.*)\} \},', l)
    if m:
        table[m.group(1)] = re.findall(r'\{ "(\w+)", \'\w\' \}', m.group(3))
kernel = {}
for l in open(sys.argv[3]):
    w = l.split()
    kernel[w[0]] = w[1:]
same = differ = unnamed = absent = 0
for name, entry, where, args in defs:
    if args == 'not implemented':
        continue
    if name not in table or any(re.fullmatch(r'arg\d', a) and a not in args for a in table[name]):
        unnamed += 1
        print('UNNAMED %s' % name)
    tp = 'sys_enter_' + entry[4:]
    if tp not in kernel:
        absent += 1
        continue
    if table.get(name) == kernel[tp]:
        same += 1
    else:
        differ += 1
        print('DIFFER %s: table %s, kernel %s' % (name, table.get(name), kernel[tp]))
print('COUNTS %d %d %d %d' % (same, differ, unnamed, absent))
EOF
	read -r _ same differ unnamed absent < <(grep '^COUNTS' "$W/names")
	check "every implemented syscall has all its arguments named (${unnamed:-?} without)" \
		test "${unnamed:-x}" = 0 || grep UNNAMED "$W/names" | head | sed 's/^/#   /'
	for s in mmap arch_prctl clone rt_sigreturn socket; do
		grep -q "^$s	" "$TOP/user/tracectl/syscall_defines.txt" || not_ok "$s is in syscall_defines.txt"
	done
	if [[ ${same:-0} -gt 300 && ${differ:-x} = 0 ]]; then
		ok "arguments named as $(uname -r)'s sys_enter_* tracepoints name them ($same syscalls, $absent without a tracepoint here)"
	else
		not_ok "arguments named as $(uname -r)'s sys_enter_* tracepoints name them ($same same, ${differ:-?} differ)"
		grep DIFFER "$W/names" | head -n 10 | sed 's/^/#   /'
	fi
else
	ok "names against the kernel's tracepoints # SKIP no $TP"
fi

# -- counts: strace -f -c against trace --summary-only -------------------
# "name calls errors" per syscall, from strace -c (errors blank when 0)
# and from tracectl's all-threads table.
strace_counts() {
	awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
		print $NF, $4, (NF == 6 ? $5 : 0) }' "$1" | sort
}
tracectl_counts() {
	awk '/All threads, per syscall/ { f = 1; next } f && /^ *---/ { g = 1; next }
		f && g && NF == 5 { print $1, $2, $3 } f && g && NF != 5 { f = g = 0 }' "$1" | sort
}
untimed() { grep -vE "^($(echo "$TIMING" | tr ' ' '|')) " "$1"; }

# counts TAG CMD...: one TAP line; the trace is kept as $W/TAG.pftrace.
counts() {
	local tag=$1 t0=$SECONDS
	shift
	# the command's output goes to a file in both runs: glibc asks
	# isatty (TCGETS) of a character device like /dev/null, not of a file
	(cd "$W/d" && "${RUN[@]}" strace -f -c -o "$W/$tag.strace" "$@" >"$W/$tag.sout" 2>"$W/$tag.serr")
	(cd "$W/d" && "${RUN[@]}" "$U/tracectl" trace --summary-only -o "$W/$tag.pftrace" -- "$@" \
		>"$W/$tag.out" 2>"$W/$tag.err")
	strace_counts "$W/$tag.strace" >"$W/$tag.want"
	tracectl_counts "$W/$tag.out" >"$W/$tag.got"
	local n=$(wc -l <"$W/$tag.want") calls=$(awk '{ n += $2 } END { print n + 0 }' "$W/$tag.want")
	if [[ $n -gt 5 ]] && diff <(untimed "$W/$tag.want") <(untimed "$W/$tag.got") >"$W/$tag.diff"; then
		ok "$tag: calls and errors of all $n syscalls ($calls calls) as strace -f -c counts them"
	else
		not_ok "$tag: calls and errors of all $n syscalls ($calls calls) as strace -f -c counts them (- strace, + tracectl)"
		sed 's/^/#   /' "$W/$tag.diff" | head -n 20
		sed 's/^/#   /' "$W/$tag.serr" "$W/$tag.err" | head -n 5
	fi
	diff "$W/$tag.want" "$W/$tag.got" | grep -E "^[<>] ($(echo "$TIMING" | tr ' ' '|')) " |
		sed 's/^/#   timing-dependent, not compared: /'
	note "$tag: $((SECONDS - t0)) s for both runs"
}
cp -r /usr/share/doc/bash /usr/share/doc/tar "$W/doc/" 2>/dev/null
counts find find "$W/doc"
counts tar tar -cf "$W/d/x.tar" -C "$W" doc
counts pipeline sh -c 'seq 300 | grep 7 | wc -l'
counts python3 python3 -c 'import json; print(json.dumps({"a": [1, 2]}))'
check "the launcher's execve: find's, once, of the path found in PATH" \
	grep -q '^execve 1 0$' "$W/find.got"

# -- words: strace -ff -e verbose=all against the call lines -------------
# words TAG TRACE CMD...: strace_cmp.py's table and TAP lines for CMD's
# process (the one that execs), NEEDED the arguments it must have seen.
words() {
	local tag=$1 trace=$2 sfile tid t0=$SECONDS
	shift 2
	rm -f "$W/$tag.st".*
	(cd "$W/d" && "${RUN[@]}" strace -ff -s 256 -e verbose=all -e abbrev=none \
		-o "$W/$tag.st" "$@" >"$W/$tag.sout" 2>"$W/$tag.serr")
	sfile=$(grep -l '^execve(' "$W/$tag.st".* | head -n 1)
	tctl report "$trace" >"$W/$tag.lines" 2>"$W/$tag.rerr"
	tid=$(sed -n 's|^ *[0-9.]* ([^)]*): [^ ]*/\([0-9]*\) execve(.*) = 0$|\1|p' "$W/$tag.lines" | head -n 1)
	if [[ -z $sfile || -z $tid ]]; then
		not_ok "$tag: strace's and tracectl's lines (no execve in ${sfile:-strace's}${tid:+ or tracectl's})"
		return
	fi
	python3 "$HERE/strace_cmp.py" "$sfile" "$W/$tag.lines" "$tid" $NEEDED >"$W/$tag.cmp" 2>&1
	note "$tag: the arguments compared with strace's (calls of each, how many differ, one value):"
	grep -vE '^(PASS|FAIL|DONE|#)' "$W/$tag.cmp" | sed 's/^/#   /'
	tp_tap ok not_ok "$tag" < <(grep -E '^(PASS|FAIL|DONE)' "$W/$tag.cmp")
	grep '^#' "$W/$tag.cmp"
	note "$tag: $((SECONDS - t0)) s for strace's run and the comparison"
}
mkdir -p "$W/dd"
(cd "$W/d" && "${RUN[@]}" "$U/tracectl" trace -o "$W/sysdecode.pftrace" -- "$DECODE" "$W/dd" \
	>"$W/sysdecode.out" 2>"$W/sysdecode.err")
rm -rf "$W/dd"; mkdir -p "$W/dd"	# the same files again for strace's run
NEEDED="mmap:prot mmap:flags mprotect:prot clone:clone_flags openat:flags openat:mode
	kill:sig tgkill:sig rt_sigaction:sig fcntl:cmd fcntl:arg socket:family socket:type
	socket:protocol ioctl:cmd wait4:options lseek:whence access:mode arch_prctl:option
	prlimit64:resource futex:op statx:flags statx:mask mknodat:mode umask:mask"
words sysdecode "$W/sysdecode.pftrace" "$DECODE" "$W/dd"
NEEDED="openat:flags newfstatat:flag getdents64:fd"
words find "$W/find.pftrace" find "$W/doc"
NEEDED="mmap:prot rt_sigaction:sig ioctl:cmd"
words python3 "$W/python3.pftrace" python3 -c 'import json; print(json.dumps({"a": [1, 2]}))'

echo "1..$N"
exit $FAILED
