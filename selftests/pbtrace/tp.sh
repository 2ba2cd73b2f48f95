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
