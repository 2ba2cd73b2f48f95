# SPDX-License-Identifier: GPL-2.0
#
# Perfetto's real trace_processor as the second reader of every trace a
# test writes (the first is protoc with Perfetto's schema). Source it. It
# is not part of the project: it is found at PBTRACE_TP, else next to the
# clone in ../shared/trace_processor/. Where it is absent, tp_available
# fails and TP_WHY says why, so a test prints "ok N - ... # SKIP $TP_WHY".
#
#   tp_available                  the binary is there and runs
#   tp_query FILE SQL             the rows, one a line, columns joined by
#                                 '|', no header, quotes dropped
#   tp_value FILE SQL             the first column of the first row
#   tp_bad_stats FILE [NAME...]   "name[idx]=value" for every stats row of
#                                 severity error or data_loss with value > 0,
#                                 except the NAMEs the test made on purpose
#   tp_machines FILE              "raw_id|cpus|threads|sched slices", one
#                                 line per row of the machine table
#   tp_offsets FILE RAW_ID        the BOOTTIME offsets (that machine minus
#                                 trace time) trace_processor applied to
#                                 the machine, from its clock_snapshot table
#   tp_check_machines FILE N [NAME...]
#                                 TAP (tap.sh's ok/not_ok): trace_processor
#                                 has N machines, each with CPUs, threads and
#                                 sched slices, and tp_bad_stats is empty;
#                                 "# SKIP" lines where it is absent
#   tp_file OK NOK TAG FILE [--lost N]
#                                 tp_check.py's comparison of trace_processor's
#                                 tables with protoc's decode of FILE (in
#                                 FILE.txt), one TAP line per check through
#                                 the caller's OK and NOK functions; one
#                                 SKIP line with TP_WHY when it is absent
#
# tp_query fails (status 1, trace_processor's error on stderr) when the
# trace does not load or the SQL is wrong: a test never mistakes that for
# an empty answer.

_tp_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TP_SHELL=${PBTRACE_TP:-$(cd "$_tp_here/../../.." && pwd)/shared/trace_processor/trace_processor_shell}
TP_WHY=

tp_available() {
	if [[ ! -e $TP_SHELL ]]; then
		TP_WHY="no trace_processor_shell at $TP_SHELL (set PBTRACE_TP)"
		return 1
	fi
	if ! "$TP_SHELL" --version >/dev/null 2>&1; then
		TP_WHY="$TP_SHELL does not run (libprotobuf32, libre2-9 missing? run tools/deps)"
		return 1
	fi
}

# CSV from the shell: a header line, then rows; strings are quoted.
tp_query() {
	local file=$1 sql=$2 out
	out=$("$TP_SHELL" query "$file" "$sql" 2>"${TMPDIR:-/tmp}/tp.err.$$") || {
		echo "trace_processor failed on $file: $(tail -n 3 "${TMPDIR:-/tmp}/tp.err.$$")" >&2
		rm -f "${TMPDIR:-/tmp}/tp.err.$$"
		return 1
	}
	rm -f "${TMPDIR:-/tmp}/tp.err.$$"
	python3 -c 'import csv, sys
rows = csv.reader(sys.stdin)
next(rows, None)
for r in rows:
    if r:
        print("|".join(r))' <<<"$out"
}

tp_value() {
	local rows
	rows=$(tp_query "$1" "$2") || return 1
	rows=${rows%%$'\n'*}
	echo "${rows%%|*}"
}

tp_bad_stats() {
	local file=$1 rows name allowed
	shift
	rows=$(tp_query "$file" "select name, ifnull(idx, ''), value from stats
		where value > 0 and severity in ('error', 'data_loss') order by name") || return 1
	while IFS='|' read -r name idx value; do
		[[ -n $name ]] || continue
		for allowed in "$@"; do
			[[ $name == "$allowed" ]] && continue 2
		done
		echo "$name${idx:+[$idx]}=$value"
	done <<<"$rows"
}

# The WITH clause of a query that counts per machine: pm_cpu, pm_thread,
# pm_sched and pm_event, each (machine_id, n), machine_id the machine
# table's id. Each table is read once and grouped; sched and ftrace_event
# by ucpu first, then the few rows of that joined to cpu. Not a subquery
# per machine ("(select count(*) from sched ... where c.machine_id =
# m.id)"): that reads all of sched once per machine, machines x events,
# minutes at a thousand machines (docs/benchmarks.md, "A fleet").
tp_per_machine() {
	echo "with pm_cpu as (select machine_id, count(*) as n from cpu group by machine_id),
		pm_thread as (select machine_id, count(*) as n from thread group by machine_id),
		pm_sched as (select c.machine_id, sum(x.n) as n
			from (select ucpu, count(*) as n from sched group by ucpu) x
			join cpu c using (ucpu) group by c.machine_id),
		pm_event as (select c.machine_id, sum(x.n) as n
			from (select ucpu, count(*) as n from ftrace_event group by ucpu) x
			join cpu c using (ucpu) group by c.machine_id)"
}

# A machine's rows: raw_id is the file's machine_id (0 the host), the
# counts are of what trace_processor kept of it.
tp_machines() {
	tp_query "$1" "$(tp_per_machine)
		select m.raw_id, ifnull(c.n, 0), ifnull(t.n, 0), ifnull(s.n, 0)
		from machine m left join pm_cpu c on c.machine_id = m.id
			left join pm_thread t on t.machine_id = m.id
			left join pm_sched s on s.machine_id = m.id
		order by m.raw_id"
}

# Each edge trace_processor put into its clock graph for a machine is a
# clock_snapshot row: its BOOTTIME value against the trace time it maps to.
tp_offsets() {
	tp_query "$1" "select distinct cs.clock_value - cs.ts from clock_snapshot cs
		join machine m on cs.machine_id = m.id
		where m.raw_id = $2 and cs.clock_name = 'BOOTTIME' order by cs.snapshot_id"
}

# "0|2|75|1734 1|2|27|2148": N rows, none with a zero count.
_tp_machines_ok() {
	local want=$1 rows=$2 n=0 id cpus threads sched
	while IFS='|' read -r id cpus threads sched; do
		[[ -n $id ]] || continue
		((cpus > 0 && threads > 0 && sched > 0)) || return 1
		((++n))
	done <<<"$rows"
	((n == want))
}

tp_check_machines() {
	local file=$1 want=$2 rows bad
	shift 2
	if ! tp_available; then
		ok "trace_processor: $want machine(s) with CPUs, threads and sched # SKIP $TP_WHY"
		ok "trace_processor: no error or data_loss stats # SKIP $TP_WHY"
		return 0
	fi
	rows=$(tp_machines "$file") || rows=
	echo "# trace_processor machines (raw_id|cpus|threads|sched): ${rows//$'\n'/ }"
	check "trace_processor: $want machine(s), each with CPUs, threads and sched slices" \
		_tp_machines_ok "$want" "$rows"
	bad=$(tp_bad_stats "$file" "$@") || bad="trace_processor failed"
	bad=${bad//$'\n'/ }
	check "trace_processor: no error or data_loss stats${bad:+ ($bad)}" test -z "$bad"
}

# PASS/FAIL/SKIP lines of a checker (stdin) as TAP through OK and NOK.
tp_tap() {
	local ok=$1 nok=$2 tag=$3 line done=0
	while IFS= read -r line; do
		case $line in
		PASS\ *) "$ok" "$tag: ${line#PASS }" ;;
		FAIL\ *) "$nok" "$tag: ${line#FAIL }" ;;
		SKIP\ *) "$ok" "$tag: ${line#SKIP } # SKIP" ;;
		DONE) done=1 ;;
		*) echo "# $line" ;;
		esac
	done
	[ $done = 1 ] || "$nok" "$tag: the checker did not finish (see above)"
}

tp_file() {
	local ok=$1 nok=$2 tag=$3 file=$4 out
	shift 4
	if ! tp_available; then
		"$ok" "$tag: trace_processor reads it as the decode does # SKIP $TP_WHY"
		return 0
	fi
	out=${TMPDIR:-/tmp}/tp.check.$$
	DP_TP=$TP_SHELL PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$_tp_here/tp_check.py" \
		traced "$file" "$file.txt" --release "$(uname -r)" "$@" >"$out" 2>&1
	tp_tap "$ok" "$nok" "$tag" <"$out"
	rm -f "$out"
}
