#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --guests 3 --vsock --no-module
#
# Many hosts, one timeline: tracectl merge of two hosts' files, judged by
# Perfetto's trace_processor. Three kernels at once on the test network:
#
#   guest 1 (10.0.2.1)  a host: pbtrace.ko with a TCP endpoint, traced
#                       (its name the nodename, pbtrace-vm1), tracectl;
#   guest 2 (10.0.2.2)  its relayed machine: relay_name=guest2, no daemon;
#   guest 3 (10.0.2.3)  a host of its own: pbtrace.ko, traced
#                       --machine-name lone3; the module also relays this
#                       kernel to itself over vsock loopback
#                       (relay_name=lone3-self).
#
# Hosts' wall clocks agree in real life through NTP; here guest 3 steps
# its CLOCK_REALTIME to guest 1's first (mm_net tsync: the window 100 UDP
# rounds allow, its middle), as NTP would. Guest 1 records itself and
# guest 2 (trace_all_machines); guest 3 records itself alone (lone,
# -m host) and, at the same time, itself and lone3-self (loneall, -A);
# meanwhile guest 3 sends N UDP datagrams to guest 2, which echoes each
# (mm_net ping/echo). Guest 1 then merges
#
#   three.tar  its file and lone: 3 machines (pbtrace-vm1, guest2, lone3);
#   four.tar   loneall, named first, and its file: 4 machines; loneall's
#              BOOTTIME is the timeline and guest 2 is split out of guest
#              1's file, placed by the manifest at the offset of guest 1's
#              remote_clock_sync (trace_processor would tie that sync to
#              the timeline's machine);
#
# and trace_processor must open each as those machines, each on 2 CPUs of
# its own with as many sched slices and events as in its own file opened
# alone, no error or data_loss stats, and on its own timestamps every
# datagram received strictly after it was sent, N of N each way, between
# guest 2 and each of guest 3's machines: guest 3 meets guest 2 only
# through REALTIME (its clock snapshots, guest 1's) and the relay's clock
# sync.
#
#   tools/vm --guests 3 --vsock --no-module --cmd2 selftests/pbtrace/merge_test.sh \
#       --cmd3 selftests/pbtrace/merge_test.sh -- selftests/pbtrace/merge_test.sh
set -u

if [[ -z ${PBTRACE_VM:-} ]]; then
	echo "1..0 # SKIP needs three guests: tools/vm --guests 3 (see the header)"
	exit 0
fi
. "$(dirname "${BASH_SOURCE[0]}")/multimachine_lib.sh"
KEEP=$TOP/out/merge
KEY=7c1e2d3b4a59687786950a1b2c3d4e5f60718293a4b5c6d7e8f90112233445a6
HOST_IP=10.0.2.1
RELAYED_IP=10.0.2.2
LONE_IP=10.0.2.3
EP_PORT=20131		# guest 1's endpoint
SELF_PORT=20151		# guest 3's, over vsock loopback
P_READY=20140		# 1 -> 2: endpoint listening
P_TIME=20141		# 1 -> 3: the wall clock server runs
P_GO=20142		# 1 -> 2: session 1 runs
P_GO3=20143		# 2 -> 3: guest 2 records and echoes: send
P_UDP=20144		# the UDP echo, 3 -> 2 -> 3
P_TSERVE=20145		# guest 1's wall clock
P_DONE2=20146		# 2 -> 1: echo done, its pid
P_DONE3=20147		# 3 -> 1: pings done, the file written, the ping's pid
P_END=20148		# 1 -> 2: all done, unload
ROUNDS=50
GAP_MS=20
SYNC_ROUNDS=100
CHECK_ROUNDS=20

field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

rmmod pbtrace 2>/dev/null

# ---- guest 2: guest 1's relayed machine --------------------------------------
guest2() {
	local msg echo_job
	msg=$("$NET" wait $P_READY 200)
	check "guest 2: guest 1's endpoint is up ($msg)" test "$msg" = ready || finish
	check "guest 2: insmod pbtrace.ko relay=tcp:$HOST_IP:$EP_PORT relay_name=guest2" \
		insmod "$KO" relay=tcp:$HOST_IP:$EP_PORT relay_key=$KEY relay_name=guest2 || finish
	check "guest 2: relay connected" \
		wait_for 300 eval '[ "$(stat_of relay_stats connected)" = 1 ]' || finish
	msg=$("$NET" wait $P_GO 200)
	check "guest 2: guest 1 started its session ($msg)" test "$msg" = go || finish
	check "guest 2: the relay records for it" \
		wait_for 100 eval '[ "$(stat_of relay_stats sessions)" -ge 1 ]'
	"$NET" echo $P_UDP $ROUNDS 200 >"$W/echo.out" &
	echo_job=$!
	wait_for 50 grep -q '^pid=' "$W/echo.out"
	check "guest 2: told guest 3 to send" "$NET" tell $LONE_IP $P_GO3 200 go
	wait $echo_job
	check "guest 2: echoed $ROUNDS datagrams from guest 3" grep -qx "echoed=$ROUNDS" "$W/echo.out"
	check "guest 2: told guest 1 it is done" "$NET" tell $HOST_IP $P_DONE2 60 \
		"done echo_pid=$(sed -n 's/^pid=//p' "$W/echo.out")"
	msg=$("$NET" wait $P_END 200)
	check "guest 2: guest 1 is done ($msg)" test "$msg" = end
	check "guest 2: rmmod with the relay connected" rmmod pbtrace
}

# The width of the window the endpoint's clock sync for machine 1 came
# from (kmod/endpoint.c logs it): that machine is placed within half of it.
sync_window() {
	dmesg | sed -n 's/.*machine 1 clock sync from [0-9]* rounds: .* window \([0-9]*\) ns.*/\1/p' | tail -n1
}

# How far guest 3's wall clock may be from guest 1's during the sessions:
# half the window it was stepped by, or what the rounds after allow.
wall_bound() {
	local lo hi l2 h2 b
	lo=$(sed -n 's/^window_lo_ns=//p' "$W/tsync.out")
	hi=$(sed -n 's/^window_hi_ns=//p' "$W/tsync.out")
	l2=$(sed -n 's/^window_lo_ns=//p' "$W/tcheck.out")
	h2=$(sed -n 's/^window_hi_ns=//p' "$W/tcheck.out")
	b=$(((hi - lo + 1) / 2))
	((-l2 > b)) && b=$((-l2))
	((h2 > b)) && b=$h2
	echo "wall_bound=$b"
}

# ---- guest 3: a host of its own ----------------------------------------------
# Two sessions at once: "lone" records this machine alone (-m host), the
# issue's third file; "loneall" (-A) also the relay of this kernel to
# itself, a file with a relayed machine of its own.
guest3() {
	local msg f
	msg=$("$NET" wait $P_TIME 200)
	check "guest 3: guest 1's wall clock serves ($msg)" test "$msg" = time || finish
	"$NET" tsync $HOST_IP $P_TSERVE $SYNC_ROUNDS 5 set >"$W/tsync.out" 2>&1
	check "guest 3: CLOCK_REALTIME stepped to guest 1's ($SYNC_ROUNDS rounds: $(tr '\n' ' ' <"$W/tsync.out"))" \
		grep -q '^stepped_ns=' "$W/tsync.out" || finish
	check "guest 3: insmod pbtrace.ko endpoint=vsock:$SELF_PORT relay=vsock:1:$SELF_PORT relay_name=lone3-self" \
		insmod "$KO" endpoint=vsock:$SELF_PORT relay=vsock:1:$SELF_PORT relay_name=lone3-self || finish
	check "guest 3: its relay connected to itself" \
		wait_for 300 eval 'ep_machines | grep -q "^machine [0-9]* name=lone3-self "' || finish
	check "guest 3: traced --machine-name lone3 starts" start_traced --machine-name lone3 ||
		sed 's/^/# traced: /' "$W/traced.log"
	for f in lone loneall; do
		tctl start -n $f $([[ $f == lone ]] && echo -m host || echo -A) \
			-e sched/sched_switch -e raw_syscalls/sys_enter -e raw_syscalls/sys_exit \
			-b 4096 -o "$W/$f.pftrace" >"$W/start.out" 2>&1
		check "guest 3: session $f starts" test $? = 0 || sed 's/^/# /' "$W/start.out"
	done
	check "guest 3: the relay records for loneall" \
		wait_for 100 eval '[ "$(stat_of relay_stats sessions)" -ge 1 ]'
	msg=$("$NET" wait $P_GO3 200)
	check "guest 3: guest 2 records and echoes ($msg)" test "$msg" = go || finish
	"$NET" ping $RELAYED_IP $P_UDP $ROUNDS $GAP_MS >"$W/ping.out"
	check "guest 3: $ROUNDS UDP rounds to guest 2 and back" \
		test "$(sed -n 's/^rounds=//p' "$W/ping.out")" = $ROUNDS
	sed 's/^/# ping: /' "$W/ping.out"
	sleep 1.5	# a ping round and the relay's last chunks
	for f in lone loneall; do
		tctl stop -n $f --wait >"$W/stop.out" 2>&1
		check "guest 3: session $f stops and traced finishes the file" test $? = 0 ||
			sed 's/^/# /' "$W/stop.out"
	done
	# The wall clocks after the sessions: the same rounds, nothing set.
	"$NET" tsync $HOST_IP $P_TSERVE $CHECK_ROUNDS 5 >"$W/tcheck.out" 2>&1
	check "guest 3: the wall clocks still agree after the sessions (guest 1 minus guest 3: $(tr '\n' ' ' <"$W/tcheck.out"))" \
		eval '(( $(sed -n "s/^window_lo_ns=//p" "$W/tcheck.out") <= 0 &&
			 $(sed -n "s/^window_hi_ns=//p" "$W/tcheck.out") >= 0 ))'
	check "guest 3: traced exits cleanly" stop_traced
	check "guest 3: its files go to guest 1 (the shared out/)" \
		cp "$W/lone.pftrace" "$W/loneall.pftrace" "$KEEP/"
	check "guest 3: told guest 1 it is done" "$NET" tell $HOST_IP $P_DONE3 60 \
		"done ping_pid=$(sed -n 's/^pid=//p' "$W/ping.out") $(wall_bound) self_window=$(sync_window)"
	check "guest 3: rmmod" rmmod pbtrace
}

# ---- guest 1: the host with a relayed machine, and the merge -------------------
write_config() {
	cat >"$W/multi.pbtx" <<-EOF
	unique_session_name: "multi"
	buffers { size_kb: 4096 fill_policy: RING_BUFFER }
	data_sources { config { name: "linux.ftrace" target_buffer: 0
	  ftrace_config { ftrace_events: "sched/sched_switch"
	    ftrace_events: "raw_syscalls/sys_enter" ftrace_events: "raw_syscalls/sys_exit" } } }
	trace_all_machines: true
	flush_period_ms: 1000
	EOF
}

# "name|cpus|sched|events" per machine of FILE, by name.
machines_of() {
	tp_query "$1" "select 'm', m.name,
		(select count(*) from cpu c where c.machine_id = m.id),
		(select count(*) from sched s join cpu c using (ucpu) where c.machine_id = m.id),
		(select count(*) from ftrace_event e join cpu c using (ucpu) where c.machine_id = m.id)
		from machine m order by m.name" | cut -d'|' -f2-
}

# The merged archive in one trace_processor run: its machines, then the
# echo's pairs ("c|from->to|pairs|at or before|min|max", the i-th sendto
# of one side with the i-th recvfrom that got data on the other).
merged_rows() {
	tp_query "$1" "with ev as (
		select e.ts, e.name, t.tid, m.name as mach,
			extract_arg(e.arg_set_id, 'id') as nr,
			extract_arg(e.arg_set_id, 'ret') as ret
		from ftrace_event e join thread t using (utid)
		join machine m on t.machine_id = m.id
		where e.name in ('sys_enter', 'sys_exit')),
	calls as (
		select ts, mach, tid, nr, row_number() over (
			partition by mach, tid, name, nr order by ts) as i
		from ev where (name = 'sys_enter' and nr = 44)
			or (name = 'sys_exit' and nr = 45 and ret > 0)),
	send as (select * from calls where nr = 44),
	recv as (select * from calls where nr = 45)
	select 'm', m.name,
		(select count(*) from cpu c where c.machine_id = m.id),
		(select count(*) from sched s join cpu c using (ucpu) where c.machine_id = m.id),
		(select count(*) from ftrace_event e join cpu c using (ucpu) where c.machine_id = m.id),
		null
	from machine m
	union all
	select 'c', s.mach || '->' || r.mach, count(*), sum(r.ts <= s.ts),
		min(r.ts - s.ts), max(r.ts - s.ts)
	from send s join recv r on r.i = s.i
	where (s.mach glob 'lone3*' and s.tid = $2 and r.mach = 'guest2' and r.tid = $3)
		or (s.mach = 'guest2' and s.tid = $3 and r.mach glob 'lone3*' and r.tid = $2)
	group by 2
	union all
	select 's', m.name, count(*), max(d) - min(d), null, null from (
		select b.machine_id, r.clock_value - b.clock_value as d
		from clock_snapshot b join clock_snapshot r
			on r.snapshot_id = b.snapshot_id and r.machine_id = b.machine_id
		where b.clock_name = 'BOOTTIME' and r.clock_name = 'REALTIME') x
	join machine m on x.machine_id = m.id group by m.name
	order by 1, 2"
}

# check_merged TAR PING ECHO MACHINES DIRECTIONS FILE...: trace_processor
# on the merged TAR against each FILE opened alone.
check_merged() {
	local tar=$1 ping=$2 echo=$3 machines=$4 dirs=$5 rows alone want got dir pairs strict lo hi bad f u
	shift 5
	if ! tp_available; then
		ok "trace_processor: $machines apart, causality held # SKIP $TP_WHY"
		return 0
	fi
	alone=$(for f in "$@"; do machines_of "$f"; done | sort)
	echo "# each file alone (name|cpus|sched|events): ${alone//$'\n'/ }"
	rows=$(merged_rows "$tar" "$ping" "$echo") || rows=
	got=$(sed -n 's/^m|//p' <<<"$rows" | cut -d'|' -f1-4 | sort)
	echo "# merged (name|cpus|sched|events): ${got//$'\n'/ }"
	check "trace_processor: the merge is the machines $machines" \
		test "$(cut -d'|' -f1 <<<"$got" | sort | tr '\n' ' ')" = "$machines "
	check "trace_processor: each machine on 2 CPUs of its own, with the sched slices and events of its own file" \
		eval 'test "$got" = "$alone" && ! grep -qv "^[^|]*|2|[1-9][0-9]*|[1-9][0-9]*$" <<<"$got"'
	bad=$(tp_bad_stats "$tar") || bad="trace_processor failed"
	check "trace_processor: no error or data_loss stats${bad:+ (${bad//$'\n'/ })}" test -z "$bad"
	want=
	for dir in $dirs; do want+="${want:+ }${dir%%:*}|$ROUNDS|ok"; done
	got=
	while IFS='|' read -r dir pairs strict lo hi; do
		u=$(tr ' ' '\n' <<<"$dirs" | sed -n "s/^$dir://p")
		echo "# trace_processor $dir: $strict of $pairs receives at or before their send; receive - send $lo .. $hi ns (the clocks allow -${u:-?} ns)"
		got+="${got:+ }$dir|$pairs|$( ((${u:-0} > 0 && lo > -u)) && echo ok || echo "$lo")"
	done < <(sed -n 's/^c|//p' <<<"$rows")
	check "trace_processor: every datagram received after it was sent, within the clocks' uncertainty, $ROUNDS of $ROUNDS each way ($got)" \
		test "$got" = "$want"
	echo "# REALTIME - BOOTTIME over each machine's snapshots (machine|snapshots|max - min ns): $(sed -n 's/^s|//p' <<<"$rows" | cut -d'|' -f1-3 | tr '\n' ' ')"
	echo "# trace_processor's offsets to the timeline (machine|BOOTTIME - trace time, ns): $(tp_query "$tar" \
		"select distinct m.name, cs.clock_value - cs.ts from clock_snapshot cs join machine m
		 on cs.machine_id = m.id where cs.clock_name = 'BOOTTIME' order by m.name" | tr '\n' ' ')"
}

# merge NAME MEMBERS FILE...: tracectl merge -o NAME.tar FILE..., the
# archive's members as GNU tar lists them.
merge() {
	local name=$1 members=$2 t0=$SECONDS
	shift 2
	tctl merge -o "$W/$name.tar" "$@" >"$W/merge.out" 2>&1
	check "tracectl merge -o $name.tar ${*##*/}: exit 0 ($((SECONDS - t0)) s)" test $? = 0
	sed 's/^/# merge: /' "$W/merge.out"
	cp "$W/$name.tar" "$KEEP/"
	check "$name.tar: $members" test "$(tar -tf "$W/$name.tar" | tr '\n' ' ')" = "$members "
	tar -xOf "$W/$name.tar" perfetto_manifest.json | sed 's/^/# manifest: /'
}

guest1() {
	local msg2 msg3 serve_job ping echo
	mkdir -p "$KEEP" 2>/dev/null && rm -f "$KEEP"/*
	check "guest 1: insmod pbtrace.ko endpoint=tcp:$HOST_IP:$EP_PORT" \
		insmod "$KO" endpoint=tcp:$HOST_IP:$EP_PORT relay_key=$KEY || finish
	check "guest 1: traced starts (its machine name: the nodename, $(uname -n))" start_traced ||
		sed 's/^/# traced: /' "$W/traced.log"
	"$NET" tserve $P_TSERVE $((SYNC_ROUNDS + CHECK_ROUNDS)) 250 >"$W/tserve.out" 2>&1 &
	serve_job=$!
	check "guest 1: told guest 3 its wall clock serves" "$NET" tell $LONE_IP $P_TIME 200 time
	check "guest 1: told guest 2 the endpoint is up" "$NET" tell $RELAYED_IP $P_READY 200 ready
	check "guest 1: guest2 connected" \
		wait_for 600 eval 'ep_machines | grep -q "^machine [0-9]* name=guest2 "' || finish
	write_config
	tctl start -c "$W/multi.pbtx" -o "$W/multi.pftrace" >"$W/start.out" 2>&1
	check "guest 1: session 1 (trace_all_machines) starts" test $? = 0 || sed 's/^/# /' "$W/start.out"
	check "guest 1: told guest 2 to record" "$NET" tell $RELAYED_IP $P_GO 60 go || finish
	msg2=$("$NET" wait $P_DONE2 250)
	msg3=$("$NET" wait $P_DONE3 250)
	check "guest 1: guest 2 echoed ($msg2), guest 3 sent and wrote its files ($msg3)" \
		test "${msg2%% *} ${msg3%% *}" = "done done" || finish
	sleep 1.5	# a ping round and the last chunks of guest 2
	tctl stop -n multi --wait >"$W/stop.out" 2>&1
	check "guest 1: session 1 stops and traced finishes the file" test $? = 0 ||
		sed 's/^/# /' "$W/stop.out"
	wait $serve_job
	ping=$(field ping_pid "$msg3")
	echo=$(field echo_pid "$msg2")
	# What the clocks allow: every receive must come after its send less
	# the uncertainty of the placements between the two machines.
	local wall relay self u u_self
	wall=$(field wall_bound "$msg3")
	relay=$(sync_window)
	self=$(field self_window "$msg3")
	u=$((wall + (relay + 1) / 2))
	u_self=$((u + (self + 1) / 2))
	note "uncertainty: wall clocks $wall ns, guest 2's clock sync window $relay ns, lone3-self's $self ns: $u ns between lone3 and guest2, $u_self ns between lone3-self and guest2"
	check "guest 1: the clocks' uncertainties are known (wall $wall, relay $relay, self $self)" \
		test -n "$wall" -a -n "$relay" -a -n "$self"
	cp "$W/multi.pftrace" "$KEEP/"
	# The issue's case: a host with its relayed machine, a host alone.
	merge three "perfetto_manifest.json 000-multi.pftrace 001-lone.pftrace" \
		"$W/multi.pftrace" "$KEEP/lone.pftrace"
	check_merged "$W/three.tar" "$ping" "$echo" "guest2 lone3 pbtrace-vm1" \
		"guest2->lone3:$u lone3->guest2:$u" "$W/multi.pftrace" "$KEEP/lone.pftrace"
	# Both with a relayed machine, guest 3's named first: its BOOTTIME is
	# the timeline, guest 2 is split out of guest 1's file.
	merge four "perfetto_manifest.json 000-loneall.pftrace 001-multi.pftrace 002-multi.machine1.pftrace" \
		"$KEEP/loneall.pftrace" "$W/multi.pftrace"
	check_merged "$W/four.tar" "$ping" "$echo" "guest2 lone3 lone3-self pbtrace-vm1" \
		"guest2->lone3:$u guest2->lone3-self:$u_self lone3->guest2:$u lone3-self->guest2:$u_self" \
		"$W/multi.pftrace" "$KEEP/loneall.pftrace"
	echo "ping_pid=$ping echo_pid=$echo" >"$KEEP/info.txt"
	check "guest 1: told guest 2 all is done" "$NET" tell $RELAYED_IP $P_END 60 end
	check "guest 1: traced exits cleanly" stop_traced
	check "guest 1: rmmod with a relay connected" rmmod pbtrace
	grep -E 'error|fail|refus' "$W/traced.log" | sed 's/^/# traced: /' | head -n 20
}

case $PBTRACE_VM in
2) guest2 ;;
3) guest3 ;;
*) guest1 ;;
esac
note "done"
finish
