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
