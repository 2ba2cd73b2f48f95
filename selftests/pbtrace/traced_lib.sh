# SPDX-License-Identifier: GPL-2.0
#
# Shared by the guest tests that run traced and tracectl (traced_test.sh,
# config_fields_test.sh): start and stop traced, wait for a session's
# file, decode it with Perfetto's schema and pick blocks out of the text;
# tp_file (tp.sh) then has trace_processor read it too.
# The caller sets U (user build dir), W (scratch dir), LOG (traced's log)
# and TRACED= and compiles the schema into $W/schema.pb (traced_begin does
# that, and the rest of a test's start, for tests that source tap.sh).

note() { echo "# $*"; }

# trace_processor, the second reader: tp_file (tp.sh) after decode.
. "$(dirname "${BASH_SOURCE[0]}")/tp.sh"

decode() {
	protoc --descriptor_set_in="$W/schema.pb" --decode=perfetto.protos.Trace \
		perfetto_trace.proto <"$1" >"$1.txt" 2>"$1.err"
}

# Lines of the packets' NAME blocks (protoc text output, two-space indents).
section() { awk -v n="$1" '$0 == "  " n " {" {f=1; next} /^  }/ {f=0} f' "$2"; }
count() { grep -c -- "$1" "$2"; }

# start_traced [PREFIX...]: traced in the background (under PREFIX, e.g.
# valgrind), until it says it is ready.
start_traced() {
	: >"$LOG"
	"$@" "$U/traced" 2>>"$LOG" &
	TRACED=$!
	local i
	for i in $(seq 300); do
		grep -q "ready" "$LOG" && return 0
		kill -0 "$TRACED" 2>/dev/null || break
		sleep 0.1
	done
	note "traced did not start:"; sed 's/^/#   /' "$LOG"
	return 1
}

# SIGTERM is a clean exit for traced; returns its status.
stop_traced() {
	[ -n "$TRACED" ] || return 0
	kill -TERM "$TRACED" 2>/dev/null
	wait "$TRACED"
	local rc=$?
	TRACED=
	return $rc
}

# wait_done NAME [TRIES]: until traced logged the end of session NAME (it
# closed the file), TRIES times 0.1 s (default 300).
wait_done() {
	local name=$1 limit=${2:-300} i
	for i in $(seq "$limit"); do
		grep -q "($name): finished" "$LOG" && return 0
		sleep 0.1
	done
	note "session $name did not finish; traced log:"; sed 's/^/#   /' "$LOG"
	return 1
}

# tracectl, bounded: a hang is a failure, not a stuck guest.
tctl() { timeout "${TCTL_TIMEOUT:-60}" "$U/tracectl" "$@"; }

# run_groups "ALL" "ONLY" NOT_OK: each group of ALL that ONLY names, as
# test_GROUP, with traced started first if it is not running (a failure to
# start is reported with the caller's NOT_OK function); traced stopped at
# the end.
run_groups() {
	local t t0
	for t in $1; do
		case " $2 " in *" $t "*) ;; *) continue ;; esac
		if [ -z "$TRACED" ] && ! start_traced; then
			"$3" "$t: traced starts"
			continue
		fi
		note "--- $t"
		t0=$SECONDS
		"test_$t"
		note "$t took $((SECONDS - t0)) s"
	done
	stop_traced
}

# traced_begin PROG...: a test's start. Skip unless tracectl, each PROG and
# Perfetto's schema (in $SCHEMA) are there; compile the schema, start
# traced, and stop it and remove $W when the test exits.
traced_begin() {
	local p
	for p in "$U/tracectl" "$@"; do
		[[ -x $p ]] || { echo "1..0 # SKIP needs $p (make user, make -C selftests/pbtrace)"; exit 0; }
	done
	[[ -r $SCHEMA/perfetto_trace.proto ]] || {
		echo "1..0 # SKIP needs Perfetto's schema in $SCHEMA"; exit 0; }
	trap 'stop_traced; rm -rf "$W"' EXIT
	protoc -I "$SCHEMA" -o "$W/schema.pb" perfetto_trace.proto || {
		not_ok "protoc compiles Perfetto's schema"; echo "1..$N"; exit 1; }
	start_traced || { not_ok "traced starts"; echo "1..$N"; exit 1; }
}
