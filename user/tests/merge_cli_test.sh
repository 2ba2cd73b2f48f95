#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tracectl merge on the host (TAP, run by 'make -C user test'; no module,
# no guest). Synthetic hosts' files as traced writes them (merge_synth.py,
# encoded by protoc with Perfetto's schema), merged, then judged by
# readers that are not ours: GNU tar (the members, in the order
# trace_processor must read them), Python's json (the manifest), protoc
# with Perfetto's schema (the split members), and Perfetto's
# trace_processor (every machine of every file apart, each on its own
# CPUs, every event where the true timeline puts it, no error stats).
# Every machine switches tasks at the same true instants, whenever it
# booted; the hosts' wall clocks agree, the relayed machines' do not.
# Then every bad input: one clear line, the exit status, and nothing
# written (an older OUT kept, no temporary file left).

USER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$USER_DIR/../selftests/pbtrace/tap.sh"
. "$USER_DIR/../selftests/pbtrace/tp.sh"
[[ ${SAN:-} == 1 ]] && B=$USER_DIR/build-san || B=$USER_DIR/build
T=$B/tracectl
SYNTH=$USER_DIR/tests/merge_synth.py
SCHEMA=${PBTRACE_SCHEMA_DIR:-$USER_DIR/../../shared/perfetto}
W=$(mktemp -d /tmp/merge_cli_test.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

if [[ ! -f $SCHEMA/perfetto_trace.proto ]] || ! command -v protoc >/dev/null; then
	echo "1..0 # SKIP no protoc or no Perfetto schema in $SCHEMA (PBTRACE_SCHEMA_DIR)"
	exit 0
fi
protoc -I "$SCHEMA" -o schema.pb perfetto_trace.proto || exit 1
decode() { protoc --descriptor_set_in=schema.pb --decode=perfetto.protos.Trace perfetto_trace.proto; }

for c in hostA hostB alone sameboot clash noreal nosync noname reboot; do
	/usr/bin/python3 "$SYNTH" $c >$c.txt &&
		protoc --descriptor_set_in=schema.pb --encode=perfetto.protos.Trace \
			perfetto_trace.proto <$c.txt >$c.pftrace || { echo "Bail out! synth $c"; exit 1; }
done

# ---- three hosts, two of them with relayed machines --------------------------
# hostB's file comes first with relayed machines: its BOOTTIME is the
# timeline and its machines stay in it; hostA's webA is split out.
"$T" merge -o m.tar alone.pftrace hostB.pftrace hostA.pftrace >out 2>err
check "merge of three hosts' files (two with relayed machines): exit 0, nothing on stderr" \
	eval 'test $? = 0 && ! test -s err'
sed 's/^/# /' out err
tar -tf m.tar >members 2>&1
check "GNU tar: the manifest, then hostB's file first, the other hosts, the split machine last" \
	diff -u - members <<'EOF'
perfetto_manifest.json
000-hostB.pftrace
001-alone.pftrace
002-hostA.pftrace
003-hostA.machine1.pftrace
EOF
check "the timeline's file and the alone host's are in it byte for byte" \
	eval 'tar -xOf m.tar 000-hostB.pftrace | cmp - hostB.pftrace &&
	      tar -xOf m.tar 001-alone.pftrace | cmp - alone.pftrace'
tar -xOf m.tar perfetto_manifest.json >manifest.json
check "the manifest is JSON: version 1, hostB's BOOTTIME the trace time, hostB's machines by id, webA placed against hostA" \
	/usr/bin/python3 -c 'import json, sys
m = json.load(open("manifest.json"))["perfetto_manifest"]
f = {e["path"]: e for e in m["files"]}
ok = (m["version"] == 1 and m["trace_time"] == {"clock": "BOOTTIME", "file": "000-hostB.pftrace", "machine": "hostB"}
      and f["000-hostB.pftrace"]["machines"] == [{"id": 0, "name": "hostB"}, {"id": 1, "name": "webB"}, {"id": 3, "name": "dbB"}]
      and f["001-alone.pftrace"]["machine"] == {"name": "hostC"}
      and f["002-hostA.pftrace"]["machine"] == {"name": "hostA"}
      and f["003-hostA.machine1.pftrace"]["machine"] == {"name": "webA"}
      and f["003-hostA.machine1.pftrace"]["clocks"] == {"clock": "BOOTTIME",
          "sync_to": {"file": "002-hostA.pftrace", "clock": "BOOTTIME"}, "offset_ns": 63 * 10**9})
sys.exit(0 if ok else print(json.dumps(m, indent=1)) or 1)'
tar -xOf m.tar 002-hostA.pftrace | decode >hostA.part.txt
tar -xOf m.tar 003-hostA.machine1.pftrace | decode >webA.part.txt
check "protoc: hostA's part holds no relayed packet, the split machine's no machine_id nor remote_clock_sync" \
	eval '! grep -q "machine_id\|remote_clock_sync" hostA.part.txt webA.part.txt'
check "protoc: the split machine's part has its system_info, its events and its trace_stats" \
	eval 'grep -q "machine_name: \"webA\"" webA.part.txt &&
	      test "$(grep -c sched_switch webA.part.txt)" = 10 && grep -q trace_stats webA.part.txt'

read -r first gap n < <(/usr/bin/python3 "$SYNTH" expect hostB)
last=$((first + (n - 1) * gap))
if tp_available; then
	rows=$(tp_query m.tar "select m.name, count(distinct c.ucpu), min(e.ts), max(e.ts), count(*)
		from ftrace_event e join cpu c using (ucpu) join machine m on c.machine_id = m.id
		group by m.name order by m.name") || rows=
	echo "# trace_processor: name|cpus|first|last|events: ${rows//$'\n'/ }"
	want=
	for m in dbB hostA hostB hostC webA webB; do want+="$m|1|$first|$last|$n"$'\n'; done
	check "trace_processor: 6 machines, each with its $n events at the true instants on hostB's timeline ($first .. $last ns)" \
		test "$rows"$'\n' = "$want"
	check "trace_processor: 6 machine rows, 6 CPUs, none shared" test \
		"$(tp_query m.tar "select (select count(*) from machine), (select count(*) from cpu),
			(select count(distinct machine_id) from cpu)")" = "6|6|6"
	bad=$(tp_bad_stats m.tar) || bad="trace_processor failed"
	check "trace_processor: no error or data_loss stats${bad:+ (${bad//$'\n'/ })}" test -z "$bad"
	# Why webA is split out: with both files whole, trace_processor ties
	# every remote_clock_sync to the timeline machine (for the record).
	cat >naive.json <<-'EOF'
	{"perfetto_manifest": {"version": 1,
	 "trace_time": {"clock": "BOOTTIME", "file": "hostB.pftrace", "machine": "hostB"},
	 "files": [{"path": "hostB.pftrace", "machines": [{"id": 0, "name": "hostB"}, {"id": 1, "name": "webB"}, {"id": 3, "name": "dbB"}]},
	           {"path": "hostA.pftrace", "machines": [{"id": 0, "name": "hostA"}, {"id": 1, "name": "webA"}]}]}}
	EOF
	if "$TP_SHELL" util merge --no-validate -o naive.tar --manifest naive.json hostB.pftrace hostA.pftrace >/dev/null 2>&1; then
		off=$(tp_query naive.tar "select m.name || ' at ' || min(e.ts) from ftrace_event e
			join cpu c using (ucpu) join machine m on c.machine_id = m.id
			group by m.name having min(e.ts) <> $first order by m.name")
		echo "# both files whole (trace_processor's util merge): machines off their true instant $first ns: ${off//$'\n'/, }"
	fi
else
	ok "trace_processor: every machine apart and in place # SKIP $TP_WHY"
fi

# ---- records whose length takes more bytes than it needs -----------------------
# The kernel writes a packet's length as a padded varint (kmod/core/pb.h):
# hostA's file so, split out again, must merge the same.
/usr/bin/python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
out, i = bytearray(), 0
def varint(d, i):
    v = s = 0
    while True:
        b = d[i]; i += 1; v |= (b & 0x7f) << s; s += 7
        if b < 0x80:
            return v, i
while i < len(d):
    assert d[i] == 0x0a
    n, j = varint(d, i + 1)
    out += bytes([0x0a] + [(n >> (7 * k) & 0x7f) | 0x80 for k in range(4)] + [n >> 28]) + d[j:j + n]
    i = j + n
open(sys.argv[2], "wb").write(out)' hostA.pftrace padded.pftrace
"$T" merge -o p.tar hostB.pftrace padded.pftrace >out 2>&1
check "a file whose records have padded lengths, split: exit 0" test $? = 0 || sed 's/^/# /' out
check "its host's part keeps its padded records (larger, the same decode), the split machine's part is the plain file's" \
	eval 'tar -xOf p.tar 002-padded.machine1.pftrace | cmp - <(tar -xOf m.tar 003-hostA.machine1.pftrace) &&
	      tar -xOf p.tar 001-padded.pftrace | decode | cmp - hostA.part.txt &&
	      (( $(tar -xOf p.tar 001-padded.pftrace | wc -c) > $(tar -xOf m.tar 002-hostA.pftrace | wc -c) ))'
if tp_available; then
	read -r first gap n < <(/usr/bin/python3 "$SYNTH" expect hostB)
	check "trace_processor: every machine of the padded file at its true instant" test \
		"$(tp_query p.tar "select count(distinct m.name), min(e.ts), max(e.ts) from ftrace_event e
			join cpu c using (ucpu) join machine m on c.machine_id = m.id")" = "5|$first|$((first + (n - 1) * gap))"
fi

# ---- one file with a relayed machine that rebooted ---------------------------
"$T" merge -o r.tar reboot.pftrace alone.pftrace >out 2>&1
check "merge of a file with one guest's two boots: exit 0" test $? = 0
tar -xOf r.tar perfetto_manifest.json >r.json
check "the second boot keeps a name of its own (else trace_processor makes one machine of both)" \
	/usr/bin/python3 -c 'import json
m = json.load(open("r.json"))["perfetto_manifest"]
assert m["files"][0]["machines"] == [{"id": 0, "name": "hostR"}, {"id": 1, "name": "webR"}, {"id": 2, "name": "webR (machine 2)"}], m'
if tp_available; then
	read -r first gap n < <(/usr/bin/python3 "$SYNTH" expect hostR)
	check "trace_processor: 4 machines, the two boots apart, every first event at $first ns" test \
		"$(tp_query r.tar "select count(*), count(distinct c.machine_id), min(e.ts), max(e.ts)
			from (select machine_id, min(e.ts) as ts from ftrace_event e join cpu c using (ucpu) group by machine_id) e
			join cpu c on c.machine_id = e.machine_id")" = "4|4|$first|$first"
fi

# ---- a file from an older traced: no machine_name, no boot id ---------------
"$T" merge -o n.tar hostA.pftrace noname.pftrace >out 2>err
check "a file that names no machine: merged as its file's name, with a warning (exit $?)" \
	eval 'grep -q "noname.pftrace names no machine.*calling it .noname." err &&
	      tar -xOf n.tar perfetto_manifest.json | grep -q "\"machine\": {\"name\": \"noname\"}"'

# ---- bad inputs ---------------------------------------------------------------
echo keep >kept.tar
# refused CODE ARGS... :: WANT: exit CODE, one line on stderr with WANT,
# kept.tar untouched, no temporary file left
refused() {
	local code=$1 args=() want rc
	shift
	while [[ $1 != :: ]]; do args+=("$1"); shift; done
	want=$2
	"$T" merge "${args[@]}" >out 2>err
	rc=$?
	if [[ $rc == "$code" && $(wc -l <err) == 1 ]] && grep -qF -- "$want" err &&
		[[ $(cat kept.tar) == keep ]] && ! ls kept.tar.* >/dev/null 2>&1; then
		ok "merge ${args[*]}: exit $code, one line: $want"
	else
		not_ok "merge ${args[*]}: exit $code, one line: $want (exit $rc)"
		sed 's/^/#   /' err
	fi
}
head -c 300 hostA.pftrace >cut.pftrace
: >empty.pftrace
printf 'PK\003\004 not a trace' >zip.pftrace
cp m.tar nested.pftrace
refused 1 -o kept.tar hostA.pftrace sameboot.pftrace :: "are from the same boot of one machine (boot id 0a0a0a0a"
refused 1 -o kept.tar hostA.pftrace clash.pftrace :: "machine 'webA' is in both hostA.pftrace and clash.pftrace"
refused 1 -o kept.tar hostA.pftrace hostA.pftrace :: "are the same file: name it once"
refused 1 -o kept.tar hostA.pftrace noreal.pftrace :: "noreal.pftrace has no clock_snapshot with BOOTTIME and REALTIME"
refused 1 -o kept.tar hostA.pftrace nosync.pftrace :: "relayed machine 1 ('webF') has events but no usable remote_clock_sync"
refused 1 -o kept.tar hostA.pftrace cut.pftrace :: "cut.pftrace is truncated: its record at byte"
refused 1 -o kept.tar hostA.pftrace empty.pftrace :: "empty.pftrace is empty, not a trace file"
refused 1 -o kept.tar hostA.pftrace zip.pftrace :: "zip.pftrace is not a Perfetto trace"
refused 1 -o kept.tar hostA.pftrace nested.pftrace :: "nested.pftrace is not a Perfetto trace"
refused 1 -o kept.tar hostA.pftrace /nonexistent.pftrace :: "cannot read /nonexistent.pftrace: No such file"
refused 1 -o kept.tar hostA.pftrace "$W" :: "is a directory, not a trace file"
refused 7 -o /nonexistent/x.tar hostA.pftrace alone.pftrace :: "cannot write /nonexistent/x.tar"
refused 7 -o "$W" hostA.pftrace alone.pftrace :: "is a directory; pick a file name"
refused 7 -o hostA.pftrace hostA.pftrace alone.pftrace :: "is hostA.pftrace, one of the files to merge"
refused 1 -o kept.tar :: "merge wants one or more trace files"
refused 1 hostA.pftrace :: "merge wants -o OUT.tar"
long=$(printf 'x%.0s' {1..97}).pftrace
cp alone.pftrace "$long"
refused 1 -o kept.tar hostA.pftrace "$long" :: "the name is too long for a TAR member"
# A full disk: the archive is not there, nor a piece of it.
if [[ -w /dev/full ]] && ln -s /dev/full full.tar 2>/dev/null; then
	refused 7 -o full.tar hostA.pftrace alone.pftrace :: "is not a regular file; pick a file name"
fi

echo "1..$N"
exit $FAILED
