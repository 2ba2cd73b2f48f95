# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
#
# Helpers of multimachine_test.sh (kept apart so another multi-machine test
# can share them): TAP counters, traced, protoc decode with Perfetto's
# schema, and mm_check.py's verdicts as TAP. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
U=${PBTRACE_USER_BUILD:-$TOP/user/build}
NET=$TOP/selftests/pbtrace/build/mm_net
CHECK=$TOP/selftests/pbtrace/mm_check.py
SCHEMA=${PBTRACE_SCHEMA_DIR:-$TOP/../shared/perfetto}
P=/sys/module/pbtrace/parameters
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
T0=$SECONDS

note() { echo "# $((SECONDS - T0))s: $*"; }
finish() {
	echo "1..$N"
	exit $FAILED
}
stat_of() { sed -n "s/^$2 //p" "$P/$1"; }
# tracectl, bounded: a hang is a failure, not a stuck guest.
tctl() { timeout 60 "$U/tracectl" "$@"; }

W=$(mktemp -d /tmp/multimachine.XXXXXX)

TRACED=
start_traced() {
	"$U/traced" 2>"$W/traced.log" &
	TRACED=$!
	wait_for 300 grep -q ready "$W/traced.log"
}
stop_traced() {
	[[ -n $TRACED ]] || return 0
	kill -TERM "$TRACED" 2>/dev/null
	wait "$TRACED"
}

# Perfetto's schema, compiled on first use: parsing the .proto text is
# most of what protoc costs per call under TCG.
decode() {
	[[ -s $W/schema.pb ]] ||
		protoc -I "$SCHEMA" -o "$W/schema.pb" perfetto_trace.proto 2>"$W/protoc.err" ||
		{ sed 's/^/# protoc: /' "$W/protoc.err"; return 1; }
	protoc --descriptor_set_in="$W/schema.pb" --decode=perfetto.protos.Trace \
		perfetto_trace.proto <"$1" >"$1.txt" 2>"$1.err" ||
		{ sed 's/^/# protoc: /' "$1.err" | head -n 5; return 1; }
}

# mm_check.py MODE DECODED ARGS: its PASS/FAIL lines as TAP, notes as
# comments, a run that did not reach DONE as one failure. Read from a file:
# a pipe would run the loop in a subshell and lose the counters.
analyse() {
	local line done=0
	/usr/bin/python3 "$CHECK" "$@" >"$W/check.out" 2>&1
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "${line#PASS }" ;;
		FAIL\ *) not_ok "${line#FAIL }" ;;
		DONE) done=1 ;;
		*) echo "# $line" ;;
		esac
	done <"$W/check.out"
	((done)) || not_ok "mm_check.py $1 did not finish (see above)"
	[[ -n ${KEEP:-} && -d $KEEP ]] && cat "$W/check.out" >>"$KEEP/check.txt"
	return 0
}
