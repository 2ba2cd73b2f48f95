#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each caller gets its own extack message (TAP). Before 6.2 a formatted
# message went through one buffer of the module's, and genl_rcv_msg()
# drops genl_mutex before netlink_rcv_skb() copies the message into the
# ack, so a second caller's handler could rewrite it first: one caller
# received another's text. Now 6.1 sends each call site's literal
# (kmod/compat.h). Three callers send different bad NEW_SESSIONs over raw
# netlink (member_nl repeat) at once, in tight loops: two fail at the same
# call site (a field no layout may have) with different names, one at
# another (an id that is no tracepoint). Every ack must hold the message
# for its own request: the formatted one from 6.2, the site's before.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
NL=$HERE/build/member_nl
COUNT=${PBTRACE_RACE_N:-4000}
. "$HERE/tap.sh"

if [ ! -x "$NL" ]; then
	echo "1..0 # SKIP $NL missing: make -C selftests/pbtrace"
	exit 0
fi
lsmod | grep -q '^pbtrace ' || insmod "$KO" ||
	{ echo "Bail out! cannot insmod $KO"; exit 1; }
tmp=$(mktemp -d /tmp/extack_race.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

FIELD_LIT="a tracepoint's fields cannot be encoded"
ID_LIT="a tracepoint's id is not it, or it is refused"
want_a=$(fmt_or "racea/one: field 0 (x): an int of size other than 1, 2, 4 or 8" "$FIELD_LIT")
want_b=$(fmt_or "raceb/two: field 0 (yy): an int of size other than 1, 2, 4 or 8" "$FIELD_LIT")
want_c=$(fmt_or "racec/three: id 2147483647 is no tracepoint here" "$ID_LIT")
echo "# kernel $(uname -r), $COUNT requests each; expecting:"
printf '#   %s\n' "$want_a" "$want_b" "$want_c"

"$NL" repeat "$COUNT" "$want_a" new ra racea/one 1 65536 x:8:3:1 >"$tmp/a" 2>&1 &
pa=$!
"$NL" repeat "$COUNT" "$want_b" new rb raceb/two 1 65536 yy:8:3:1 >"$tmp/b" 2>&1 &
pb=$!
# The id check runs in a kworker: fewer of these, in the same time.
"$NL" repeat $((COUNT / 4)) "$want_c" new rc racec/three 2147483647 65536 >"$tmp/c" 2>&1 &
pc=$!
for p in a b c; do
	eval "wait \$p$p"
	rc=$?
	check "caller $p: every ack held its own message ($(cat "$tmp/$p"))" \
		test "$rc" = 0
done
echo "1..$N"
exit $FAILED
