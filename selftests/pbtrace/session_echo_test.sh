#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a session records, echoed (issue 23): GET_SESSION_TRACEPOINTS hands
# back each tracepoint by name with its filter and stacks exactly as
# given, and tracectl status lists them. Referees: the command line this
# test passed (names, filters byte for byte, stacks), and tracefs for the
# names a glob stands for (events/GROUP/*/format). Run in a guest with
# pbtrace.ko loaded:
#   tools/vm -- selftests/pbtrace/session_echo_test.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${PBTRACE_USER_BUILD:-$top/user/build}
tracectl=$bin/tracectl
traced=$bin/traced
tmp=$(mktemp -d /tmp/session_echo.XXXXXX)
. "$here/tap.sh"
traced_pid=
tfs=/sys/kernel/tracing

cleanup() {
	"$tracectl" stop -n echo >/dev/null 2>&1
	"$tracectl" stop -n echo2 >/dev/null 2>&1
	[ -n "$traced_pid" ] && kill "$traced_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$tracectl" ] || [ ! -x "$traced" ] || [ ! -d "$tfs/events/kmem" ]; then
	echo "1..0 # SKIP needs $tracectl, $traced (make user) and $tfs/events/kmem"
	exit 0
fi

"$traced" >"$tmp/traced.log" 2>&1 &
traced_pid=$!
WAIT_STEP=0.1 wait_for 50 grep -q ready "$tmp/traced.log" ||
	{ echo "Bail out! traced did not come up"; sed 's/^/#   /' "$tmp/traced.log"; exit 1; }

f1='sig == 10 && comm != "bash"'
f2="((prev_pid >= 42 && next_pid == 0) || prev_comm ~ 'kworker*')"
expect 0 "start with filters and a glob" \
	"$tracectl" start -n echo -o "$tmp/e.pftrace" \
	-e signal/signal_generate --filter "$f1" \
	-e sched/sched_switch --filter "$f2" \
	-e 'kmem/*'
# --stacks is the command line's, for every -e: a session of its own
expect 0 "start with stacks" "$tracectl" start -n echo2 -o "$tmp/e2.pftrace" \
	-e signal/signal_generate --filter "$f1" --stacks=kernel \
	-e sock/inet_sock_set_state
expect 0 "status" "$tracectl" status
cp "$tmp/out" "$tmp/status"
grep '^    tracepoint ' "$tmp/status" | sed 's/^    tracepoint //' >"$tmp/tps"

# line WANT NAME: exactly this line among the tracepoints
line() {
	if grep -qxF -- "$1" "$tmp/tps"; then
		ok "$2: $1"
	else
		not_ok "$2: no line '$1' in:"
		sed 's/^/#   /' "$tmp/status"
	fi
}
line "signal/signal_generate filter '$f1'" "a filter, as given"
line "signal/signal_generate filter '$f1' stacks kernel" \
	"the other session's: a filter and kernel stacks, as given"
line "sock/inet_sock_set_state stacks kernel" "stacks without a filter"
line "sched/sched_switch filter '$f2'" "a filter with ( || ~ and quotes, as given"

# The glob: every kmem tracepoint tracefs has, each once, either as a
# tracepoint by name or as one of pbtrace's own events.
(cd "$tfs/events" && ls -d kmem/*/ | sed 's,/$,,') | sort >"$tmp/want"
{
	grep '^kmem/' "$tmp/tps" | awk '{print $1}'
	grep -o ' kmem/[a-z_0-9]*' "$tmp/status" | tr -d ' '
} | sort -u >"$tmp/got"
n=$(grep -c '^kmem/' "$tmp/tps")
if cmp -s "$tmp/want" "$tmp/got"; then
	ok "kmem/*: the $(wc -l <"$tmp/want") tracepoints tracefs has ($n by name)"
else
	not_ok "kmem/*: status differs from tracefs (< tracefs, > status):"
	diff "$tmp/want" "$tmp/got" | sed 's/^/#   /'
fi
# session echo's lines: up to the next session's line
sed -n '/^echo  /,/^echo2 /p' "$tmp/status" | grep '^    tracepoint ' |
	awk '{print $2}' >"$tmp/tps1"
dups=$(sort "$tmp/tps1" | uniq -d | wc -l)
if [ "$dups" = 0 ] && [ -s "$tmp/tps1" ]; then
	ok "each tracepoint listed once"
else
	not_ok "$dups listed twice"
fi
says "; $(wc -l <"$tmp/tps1") tracepoints" "the buffer line counts them"

expect 0 "stop --wait" "$tracectl" stop -n echo --wait
expect 0 "stop echo2 --wait" "$tracectl" stop -n echo2 --wait
echo "1..$N"
exit "$FAILED"
