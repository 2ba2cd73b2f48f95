# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers the shell tests share; source it. N counts the lines printed,
# FAILED turns 1 at the first failure; a test ends with
#   echo "1..$N"; exit $FAILED
N=0
FAILED=0

ok() { echo "ok $((++N)) - $*"; }
not_ok() { echo "not ok $((++N)) - $*"; FAILED=1; }

# check NAME COMMAND...: one TAP line; returns the command's status.
check() {
	local name=$1
	shift
	if "$@"; then
		ok "$name"
		return 0
	fi
	not_ok "$name"
	return 1
}

# wait_for TRIES COMMAND...: run COMMAND until it succeeds, at most TRIES
# times WAIT_STEP seconds apart (default 0.1), then once more for its
# status. It runs again each time: pass state reads through eval '...'.
wait_for() {
	local n=$1
	shift
	while ((n-- > 0)); do
		"$@" && return 0
		sleep "${WAIT_STEP:-0.1}"
	done
	"$@"
}

# expect CODE NAME CMD...: CMD exits with CODE; its output in $tmp/out
# (the test sets tmp).
expect() {
	local want=$1 name=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then
		ok "$name (exit $rc)"
	else
		not_ok "$name (exit $rc, want $want)"
		sed 's/^/#   /' "$tmp/out"
	fi
}

# says PATTERN NAME: the last expect's output matches PATTERN.
says() {
	if grep -Eq -- "$1" "$tmp/out"; then
		ok "$2"
	else
		not_ok "$2: no /$1/ in:"
		sed 's/^/#   /' "$tmp/out"
	fi
}

# A helper's TAP output (file $2), its lines renumbered as ours, prefixed $1.
retap() {
	local line
	while read -r line; do
		case $line in
		"ok "*) ok "$1: ${line#ok * - }" ;;
		"not ok "*) not_ok "$1: ${line#not ok * - }" ;;
		"1.."*) ;;
		*) echo "# $line" ;;
		esac
	done < "$2"
}

# ep_machines: the endpoint's machine table, "machines: N (...)" then a
# "machine ID name=... online=... hint=..." line each (tracectl machines,
# PBTRACE_CMD_GET_MACHINES: the table left endpoint_stats, one page).
ep_machines() {
	local top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	"${PBTRACE_USER_BUILD:-$top/user/build}/tracectl" machines 2>/dev/null
}

# fmt_or FORMATTED LITERAL: the extack text a test can expect. From 6.2
# the module formats it (NL_SET_ERR_MSG_FMT); before, a call site sends
# its literal, which names no values (kmod/compat.h).
# PBTRACE_EXTACK_FMT=1 expects the formatted text anyway (an old module).
fmt_or() {
	local r
	[ "${PBTRACE_EXTACK_FMT:-}" = 1 ] && { echo "$1"; return; }
	r=$(uname -r)
	r=${r%%-*}
	if [ "${r%%.*}" -gt 6 ] || { [ "${r%%.*}" = 6 ] && [ "$(echo "$r" | cut -d. -f2)" -ge 2 ]; }; then
		echo "$1"
	else
		echo "$2"
	fi
}
